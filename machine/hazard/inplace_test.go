package hazard_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
	"github.com/ptoasm/ptoasm/machine/hazard"
	"github.com/ptoasm/ptoasm/pipes"
)

// TestInPlaceOperandWrites: the sources pto-isa's a2a3 code uses as scratch
// are writes the detector sees. An MTE3 store of b still reading it when
// the V op starts races the op only where the op writes b: trem and trems
// on i32 (in-place f32 conversions, TRem.hpp, TRemS.hpp), tadddeqrelu
// always (its relu lands in b, TAddDeqRelu.hpp); not trem on f32.
func TestInPlaceOperandWrites(t *testing.T) {
	const kernel = `const N = 64
gm X : %[1]s [1, N] = random(seed=2, lo=1, hi=8)
gm O : %[1]s [1, N]

kernel k : aiv {
    tile %%a : vec %[1]s [1, N]
    tile %%b : vec %[1]s [1, N]
    tile %%d : vec %[2]s [1, N]
    tile %%w : vec %[1]s [1, 128]
    tload %%a, @X[0, 0]
    tload %%b, @X[0, 0]
    set_flag MTE2, V, 0
    wait_flag MTE2, V, 0
    set_flag MTE2, MTE3, 0
    wait_flag MTE2, MTE3, 0
    tstore @O[0, 0], %%b
    %[3]s
}
launch ranks=1 {
    run k blocks=1
}
`
	for _, tc := range []struct {
		dt, dst, op string
		want        []string
	}{
		{"i32", "i32", "trem %d, %a, %b, %w", []string{hazard.KindWAR}},
		{"f32", "f32", "trem %d, %a, %b, %w", nil},
		{"i32", "i32", "trems %d, %b, 3, %w", []string{hazard.KindWAR}},
		{"f32", "f32", "trems %d, %b, 3.0, %w", nil},
		{"i32", "f16", "tadddeqrelu %d, %a, %b, 0.5, %w", []string{hazard.KindWAR}},
	} {
		t.Run(tc.dt+" "+tc.op, func(t *testing.T) {
			checkKinds(t, fmt.Sprintf(kernel, tc.dt, tc.dst, tc.op), tc.want)
		})
	}
}

// TestInPlaceFirstAccessReadsPoison: an op that reads and writes one tile
// reads it before it writes it, so as the first access to the tile it
// reads bytes nothing wrote, whichever operand comes first (the machine
// lists `tadds %b, %b` write first: its destination is operand 0). Such an
// op gave no uninit-read before filled (exec.go). A load meant to fill the
// tile that the op races is the race's, not an uninit-read, under every
// timing; one ordered before it fills the tile.
func TestInPlaceFirstAccessReadsPoison(t *testing.T) {
	const kernel = `const N = 64
gm X : f32 [1, N] = random(seed=2, lo=1, hi=8)
gm O : f32 [1, N]

kernel k : aiv {
    tile %%a : vec f32 [1, N]
    tile %%b : vec f32 [1, N]
    tload %%a, @X[0, 0]
    %[1]s
    set_flag MTE2, V, 0
    wait_flag MTE2, V, 0
    %[2]s
    set_flag V, MTE3, 0
    wait_flag V, MTE3, 0
    tstore @O[0, 0], %%b
}
launch ranks=1 {
    run k blocks=1
}
`
	uninit := []string{hazard.KindUninitRead}
	for _, op := range []string{
		"tadds %b, %b, 1.0", "tmuls %b, %b, 2.0", "tabs %b, %b", "texp %b, %b",
		"tadd %b, %b, %a", "tsub %b, %a, %b", "tmax %b, %b, %b",
		"taxpy %b, %a, 2.0", "tmuladddst %b, %a, %a", // dst rw: read first already
	} {
		t.Run(op, func(t *testing.T) {
			checkKinds(t, fmt.Sprintf(kernel, "", op), uninit)
			// Written first, in order: nothing read poison.
			checkKinds(t, fmt.Sprintf(kernel, "", "texpands %b, 0.0\n    pipe_barrier V\n    "+op), nil)
			checkKinds(t, fmt.Sprintf(kernel, "tload %b, @X[0, 0]", op), nil)
		})
	}
	// A load of %b the op is not ordered after (nor the store): the races,
	// never the uninit-read, whether the op lands first (default, a slow
	// load) or the load does (a slow vector unit).
	for _, set := range [][2]string{{}, {"dma.gm_ub.latency", "0"}, {"vec.vadds.head", "100000"}} {
		t.Run("racing load "+set[0], func(t *testing.T) {
			prof := pipes.DefaultProfile()
			if set[0] != "" {
				if err := prof.Set(set[0], set[1]); err != nil {
					t.Fatal(err)
				}
			}
			src := fmt.Sprintf(kernel, "", "tload %b, @X[0, 0]\n    tadds %b, %b, 1.0")
			checkKindsWith(t, src, prof, []string{hazard.KindRAW, hazard.KindRAW, hazard.KindWAW})
		})
	}
}

// checkKinds lints src timing-only and compares the kinds of its findings
// above note severity, in order, with want.
func checkKinds(t *testing.T, src string, want []string) {
	t.Helper()
	checkKindsWith(t, src, nil, want)
}

// checkKindsWith is checkKinds under profile prof (nil: the default).
func checkKindsWith(t *testing.T, src string, prof *pipes.Profile, want []string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "k.pto")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	obj, errs := asm.Assemble(fe, path, nil)
	if errs.HasErrors() {
		t.Fatalf("assemble: %v", errs)
	}
	d := runDetector(t, obj, machine.Options{TimingOnly: true, Profile: prof})
	var got []string
	for _, f := range d.Findings() {
		if f.Severity != hazard.SevNote.String() {
			got = append(got, f.Kind)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("findings %v, want %v\n%+v", got, want, d.Findings())
	}
}

// TestManyReadsOvertakeLoad: a load meant to fill a tile that more reads
// than maxUninit overtake (the shape of corpus Sync/nested_loop_confliect:
// ten unordered stores per load, a fast MTE3) is the RAW's, never an
// uninit-read, under any timing: the reads past the bound used to keep
// their uninit-reads when the load landed after them (putUninit).
func TestManyReadsOvertakeLoad(t *testing.T) {
	const src = `gm X : f32 [32, 32] = random(seed=1, lo=-1, hi=1)
gm Y : f32 [32, 32]

kernel k : aiv {
    tile %b : vec f32 [32, 32]
    for %i = 0 to 10 {
        tload %b, @X[0, 0]
        for %j = 0 to 10 {
            tstore @Y[0, 0], %b
        }
    }
}
launch ranks=1 {
    run k blocks=1
}
`
	want := []string{hazard.KindRAW, hazard.KindWAR, hazard.KindWAW}
	for _, set := range [][2]string{{}, {"dma.gm_ub.latency", "100000"}} {
		t.Run("slow load "+set[1], func(t *testing.T) {
			prof := pipes.DefaultProfile()
			if set[0] != "" {
				if err := prof.Set(set[0], set[1]); err != nil {
					t.Fatal(err)
				}
			}
			checkKindsWith(t, src, prof, want)
		})
	}
}
