package hazard_test

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
	"github.com/ptoasm/ptoasm/machine/hazard"
	"github.com/ptoasm/ptoasm/pipes"
)

// TestBlocksBeyondCoresIgnoreSharing: which blocks of a launch with more
// blocks than cores share a physical core follows the timing; the findings
// must not. Under three profiles that land the second wave on different
// cores (checked: the last block each core ran differs), the detector
// reports the same RAW between block k and block 48 + k, all 48 of them,
// including the pairs that ran on one core one after the other.
func TestBlocksBeyondCoresIgnoreSharing(t *testing.T) {
	profiles := []struct {
		name string
		set  func(k string) string // the new value of key k, "" to keep it
	}{
		{"default", func(string) string { return "" }},
		{"slow dma", func(k string) string {
			if strings.HasPrefix(k, "dma.gm_") && strings.HasSuffix(k, ".bw") {
				return "4"
			}
			return ""
		}},
		{"slow vector heads", func(k string) string {
			if strings.HasPrefix(k, "vec.") && strings.HasSuffix(k, ".head") {
				return "20000"
			}
			return ""
		}},
	}
	obj, errs := asm.Assemble(fe, "testdata/waves_mapping.pto", nil)
	if errs.HasErrors() {
		t.Fatalf("assemble: %v", errs)
	}
	var reports, mappings []string
	for _, p := range profiles {
		prof := pipes.DefaultProfile()
		for _, k := range prof.Keys() {
			if v := p.set(k); v != "" {
				if err := prof.Set(k, v); err != nil {
					t.Fatal(err)
				}
			}
		}
		m, d := lintWaves(t, obj, prof)
		var b strings.Builder
		for _, f := range d.Findings() {
			fmt.Fprintf(&b, "%s %s:%d %s:%d count %d\n", f.Kind, f.First.File, f.First.Line, f.Second.File, f.Second.Line, f.Count)
		}
		reports = append(reports, b.String())
		var blocks []int64
		for c := 24; c < 24+48; c++ {
			v, ok := m.CoreAt(0, c)
			if !ok {
				t.Fatalf("%s: AIV %d ran nothing", p.name, c-24)
			}
			blocks = append(blocks, v.Block)
		}
		mappings = append(mappings, fmt.Sprint(blocks))
		t.Logf("%s: last block per AIV %v", p.name, blocks)
	}
	if want := "RAW testdata/waves_mapping.pto:31 testdata/waves_mapping.pto:33 count 48\n"; reports[0] != want {
		t.Errorf("default profile findings:\n%s\nwant:\n%s", reports[0], want)
	}
	for i := 1; i < len(profiles); i++ {
		if reports[i] != reports[0] {
			t.Errorf("%s findings differ from the default profile's:\n%s\nwant:\n%s", profiles[i].name, reports[i], reports[0])
		}
	}
	slices.Sort(mappings)
	if len(slices.Compact(mappings)) < 2 {
		t.Errorf("every profile put the second wave on the same cores (%s): the test shows nothing", mappings[0])
	}
}

// TestBlocksBeyondCoresPerBlockState: a block's flags and local memory are
// its own. 16 blocks on 8 AIVs each leave a set_flag pending at their end:
// 16 unpaired sets, one per block, not one per core. The second wave's
// blocks read a UB tile before writing it: an uninit-read in each of them,
// although the first wave wrote the same UB bytes of the same cores (a block
// starts with nothing in its local memory it may rely on). And the first
// wave's write of that tile races nothing in the second wave's blocks.
func TestBlocksBeyondCoresPerBlockState(t *testing.T) {
	src := `
gm X : f32 [16, 64] = zero
gm Y : f32 [16 * 16, 64] = zero

kernel k : aiv {
    tile %v : vec f32 [16, 64]
    if block_idx < 8 {
        tload %v, @X[0, 0]
        set_flag MTE2, MTE3, 0
        wait_flag MTE2, MTE3, 0
    }
get: tstore @Y[block_idx * 16, 0], %v
left: set_flag MTE3, MTE2, 1
}

launch ranks=1 {
    run k blocks=16
}
`
	path := t.TempDir() + "/t.pto"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	obj, errs := asm.Assemble(fe, path, nil)
	if errs.HasErrors() {
		t.Fatalf("assemble: %v", errs)
	}
	prof := pipes.DefaultProfile()
	if err := prof.Set("aiv_per_rank", "8"); err != nil {
		t.Fatal(err)
	}
	_, d := lintWaves(t, obj, prof)
	var got []string
	for _, f := range d.Findings() {
		if f.Severity != hazard.SevNote.String() {
			got = append(got, fmt.Sprintf("%s line %d count %d", f.Kind, f.First.Line, f.Count))
		}
	}
	want := []string{"uninit-read line 12 count 8", "unpaired-set line 13 count 16"}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("findings %q, want %q", got, want)
	}
}

// lintWaves runs obj timing-only under prof with a detector attached, as
// `ptoasm lint` does; the run must end.
func lintWaves(t *testing.T, obj *asm.Object, prof *pipes.Profile) (*machine.Machine, *hazard.Detector) {
	t.Helper()
	d := hazard.New(hazard.Options{})
	m, err := machine.New(obj, machine.Options{Profile: prof, TimingOnly: true, Observers: []machine.Observer{d}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Run(); err != nil {
		t.Fatal(err)
	}
	return m, d
}

// TestMode0WavesIgnoreTiming: a mode-0 FFTS set in a launch that runs in
// waves would release whichever blocks hold the cores when its last set
// arrives, which follows the timing; the machine refuses it instead, at each
// block's first such set (a fault stops its own core only). Under block.start
// 0, the default and 100000, and a profile that reorders the first wave's
// ends, the run reports the same sync fault at the same site, and lint the
// same two findings: the first wave's sets and the second wave's.
func TestMode0WavesIgnoreTiming(t *testing.T) {
	obj, errs := asm.Assemble(fe, "../../programs/hazards/ffts_mode0_waves.pto", nil)
	if errs.HasErrors() {
		t.Fatalf("assemble: %v", errs)
	}
	var got []string
	for _, set := range [][2]string{{"block.start", "0"}, {"block.start", "500"}, {"block.start", "100000"}, {"dma.gm_ub.bw", "4"}} {
		prof := pipes.DefaultProfile()
		if err := prof.Set(set[0], set[1]); err != nil {
			t.Fatal(err)
		}
		d := hazard.New(hazard.Options{})
		m, err := machine.New(obj, machine.Options{Profile: prof, TimingOnly: true, Observers: []machine.Observer{d}})
		if err != nil {
			t.Fatal(err)
		}
		_, err = m.Run()
		f, ok := err.(*machine.Fault)
		if !ok || f.Kind != machine.FaultSync || !strings.Contains(f.Msg, "blocks=96 runs in waves, 48 blocks at a time") {
			t.Fatalf("%s=%s: run error %v, want the mode-0 sync fault", set[0], set[1], err)
		}
		d.NoteError(err)
		var b strings.Builder
		fmt.Fprintf(&b, "fault at line %d:", f.Op.Instr.Pos.Line)
		for _, fd := range d.Findings() {
			fmt.Fprintf(&b, " %s %s line %d", fd.Severity, fd.Kind, fd.First.Line)
		}
		got = append(got, b.String())
	}
	if want := "fault at line 36: error fault line 36 error fault line 38"; got[0] != want {
		t.Errorf("block.start=0: %q, want %q", got[0], want)
	}
	for i := 1; i < len(got); i++ {
		if got[i] != got[0] {
			t.Errorf("profile %d: %q, want %q as under block.start=0", i, got[i], got[0])
		}
	}
}
