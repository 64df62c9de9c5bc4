package programs_test

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
	"github.com/ptoasm/ptoasm/machine/hazard"
	"github.com/ptoasm/ptoasm/pipes"
	"github.com/ptoasm/ptoasm/programs"
)

// perturbation is a timing-only change to the default profile: it moves when
// things run, never what they compute, so a happens-before detector must give
// the same errors and warnings under it.
type perturbation struct {
	name string
	// keys selects the profile parameters it changes (a key matches when it
	// has one of these prefixes and one of the suffixes; "" matches any).
	prefixes, suffixes []string
	// scale multiplies a parameter's value; set, when not empty, replaces it.
	scale float64
	set   string
}

// timingPerturbations is the one list every program is linted under
// (TestFindingsIgnoreTiming); new programs are covered without a change here.
// Each stretches or squeezes one part of the machine far past anything a real
// part does, so that accesses a missing edge leaves unordered swap order in
// time under some entry of the list.
var timingPerturbations = []perturbation{
	{name: "dma latency x2", prefixes: []string{"dma."}, suffixes: []string{".latency"}, scale: 2},
	{name: "dma latency 0", prefixes: []string{"dma."}, suffixes: []string{".latency"}, set: "0"},
	{name: "dma bandwidth x0.05", prefixes: []string{"dma.", "gm.bw"}, suffixes: []string{".bw", "gm.bw"}, scale: 0.05},
	{name: "cube head 20000", prefixes: []string{"cube.head"}, set: "20000"},
	{name: "vector heads 20000", prefixes: []string{"vec."}, suffixes: []string{".head"}, set: "20000"},
	{name: "flag hand-off 10", prefixes: []string{"sync.flag_handoff"}, set: "10"},
	{name: "flag hand-off 1000", prefixes: []string{"sync.flag_handoff"}, set: "1000"},
	{name: "slow scalar GM access", prefixes: []string{"scalar.gm_", "scalar.atomic"}, set: "20000"},
	{name: "slow links", prefixes: []string{"link.latency", "link.bw", "link.stream_bw"}, scale: 50},
	{name: "slow SDMA", prefixes: []string{"sdma.latency"}, set: "50000"},
	{name: "slow FFTS", prefixes: []string{"sync.ffts_latency"}, set: "5000"},
	{name: "slow scalar", prefixes: []string{"scalar.op"}, set: "40"},
	// Which blocks share a core (blocks beyond cores) follows the timing.
	{name: "slow block dispatch", prefixes: []string{"block.start"}, set: "100000"},
	// Which of two plain stores of one ready count ffn_grid/mixed_3x3's
	// pops read moves under it: a value of the run (path).
	{name: "slow L2", prefixes: []string{"l2.bw"}, set: "50"},
}

// timingSizes holds, by program, more sizes TestFindingsIgnoreTiming lints
// it at besides its own (-D sets added to its `// test:` ones): loop counts
// at which an outcome once moved with timing.
var timingSizes = map[string][][]asm.Define{
	// Twice the rows: a cube with a ragged tile, another ragged tile and
	// a full one after it, whose store's race with the second ragged
	// tile's matmul moves to the full tile's. WAR stt, mmt counted that
	// cube's pair in some orders (2 or 1 pipe pairs under a per-unit
	// skew) until a pair whose races all moved stopped counting.
	"hazards/grouped_gemm_tail_no_reverse": {{{Name: "SC", Value: "2"}}},
	// WAW ld, sq came and went with the DMA latency at 2, 4 and 8
	// iterations, not at 16 (docs/hazards.md, "Which write a read's race
	// names"); 1 has no next load to race.
	"hazards/square_then_rescale": {
		{{Name: "N", Value: "1"}, {Name: "M", Value: "1"}},
		{{Name: "N", Value: "2"}, {Name: "M", Value: "2"}},
		{{Name: "N", Value: "4"}, {Name: "M", Value: "16"}},
		{{Name: "N", Value: "16"}, {Name: "M", Value: "16"}},
		// More rescales per trip than 16 shadowed writes held: the
		// WAW named trip 58 by default (docs/hazards.md, maxShadowed).
		{{Name: "N", Value: "64"}, {Name: "M", Value: "64"}},
	},
	// WAR st, sq came and went with the flag hand-off: whether the next
	// store had arrived when the next trowsum overwrote the squaring
	// (docs/hazards.md, "Writes overwritten in order"); 1 has no next
	// iteration to race.
	"hazards/store_before_scratch": {
		{{Name: "N", Value: "1"}},
		{{Name: "N", Value: "2"}},
		{{Name: "N", Value: "3"}},
		{{Name: "N", Value: "16"}},
	},
	// Which block's fault was reported, and whether the loads issued
	// before it reached the detector, came and went with the DMA latency
	// while a fault stopped the whole run (docs/hazards.md, "fault").
	// An FFTS counter overflowed (a fault that stopped the core) when this
	// run's producer got 16 sets ahead, on one AIV or the other and with
	// or without the AIC's own counter, as the FFTS latency fell; it is a
	// double-set by ordering now (docs/hazards.md, "FFTS counters").
	"hazards/c2v_gm_ffts_no_credit_wait": {
		{{Name: "N", Value: "32"}},
	},
	// AIV1's load was ordered after AIV0's SDMA copy whenever that copy
	// had landed before AIV1's own wait_async: clean unless AIV0 ran
	// late, while the detector had one SDMA agent per rank.
	"hazards/sdma_other_core": {
		{{Name: "SLOW0", Value: "0"}, {Name: "SLOW", Value: "0"}},
		{{Name: "SLOW0", Value: "16"}, {Name: "SLOW", Value: "0"}},
		{{Name: "SLOW0", Value: "40"}, {Name: "SLOW", Value: "3"}},
	},
	"hazards/sdma_other_core_fixed": {
		{{Name: "SLOW0", Value: "0"}, {Name: "SLOW", Value: "0"}},
		{{Name: "SLOW0", Value: "16"}, {Name: "SLOW", Value: "0"}},
	},
	// The staging buffer's WAR came with a RAW by source line beside it
	// under some timings while an SDMA record had no issuing core.
	"hazards/tput_async_src_reuse": {
		{{Name: "N", Value: "2"}},
		{{Name: "N", Value: "8"}},
	},
	"hazards/fault_each_core": {
		{{Name: "N", Value: "1"}},
		{{Name: "N", Value: "2"}},
	},
	// A wait on a word several ranks add to: with one rank late (its
	// arrival out when the wait passes) and with a peer a round ahead (its
	// next arrival in), docs/hazards.md "Counters several agents add to".
	"hazards/arrival_count_one_short": {
		{{Name: "SLOW", Value: "200"}},
	},
	"hazards/arrival_rounds": {
		{{Name: "SLOW", Value: "200"}},
		{{Name: "SLOW", Value: "200"}, {Name: "SLOWR", Value: "2"}},
	},
	// A read named by the step it starts at (firststep.go): the same RAW
	// with one race instance and with eight.
	"hazards/result_handoff_behind": {
		{{Name: "N", Value: "2"}},
		{{Name: "N", Value: "9"}},
	},
	// arrival_rounds_interleaved races on every timing (a peer a round
	// ahead, or not: its late arrival is a candidate either way); its twin
	// with the peers gated by a second count is clean with a rank slowed.
	"hazards/arrival_rounds_interleaved": {
		{{Name: "SLOW", Value: "50"}},
		{{Name: "SLOW", Value: "200"}, {Name: "SLOWR", Value: "2"}},
	},
	"hazards/arrival_rounds_interleaved_gated": {
		{{Name: "SLOW", Value: "50"}},
		{{Name: "SLOW", Value: "200"}, {Name: "SLOWR", Value: "2"}},
	},
	// The read lands before the first write at SLOW=0 and after its
	// ordered overwrite at 4 and more: the uninit-read stays at each
	// (docs/hazards.md, "uninit-read").
	"hazards/uninit_past_ordered_load": {
		{{Name: "SLOW", Value: "4"}},
		{{Name: "SLOW", Value: "16"}},
	},
	"hazards/uninit_past_ordered_load_fixed": {
		{{Name: "SLOW", Value: "16"}},
	},
	"hazards/uninit_past_ordered_store": {
		{{Name: "SLOW", Value: "4"}},
		{{Name: "SLOW", Value: "16"}},
	},
	"hazards/uninit_past_ordered_store_fixed": {
		{{Name: "SLOW", Value: "16"}},
	},
	// Which drain wait the run reports as a deadlock and which the static
	// pass reports follows the count's parity; at NMAX no trip breaks and
	// both are the static pass's. The sites must not move.
	"hazards/early_exit_after_wait": {
		{{Name: "NT", Value: "5"}},
		{{Name: "NT", Value: "8"}},
	},
	// A mode-2 reduction counted any two arrivals, so AIV0 two tiles ahead
	// of a slowed AIV1 released the AIC early: WAR and RAW with AIV1 slow,
	// clean in lock step (docs/hazards.md, "FFTS modes 1 and 2").
	"hazards/cvc_pipeline": {
		{{Name: "SLOW", Value: "0"}},
		{{Name: "SLOW", Value: "200"}},
	},
	"hazards/cvc_pipeline_one_aiv_credit": {
		{{Name: "SLOW", Value: "0"}},
	},
	// More ordered stores than a range keeps whole: the uninit-read was
	// lost when the load landed after a store had left into a run.
	"hazards/uninit_past_kept_bound": {
		{{Name: "SLOW", Value: "0"}},
		{{Name: "N", Value: "200"}, {Name: "SLOW", Value: "256"}},
	},
	// One signal word for every step of a butterfly, `==` waits: the
	// sets that can overwrite a value before its wait polls it
	// (wait-overwritten) at eight ranks, and none at two.
	"hazards/butterfly_eq_signal": {
		{{Name: "LOG", Value: "1"}},
		{{Name: "LOG", Value: "3"}},
	},
	// One follower: a timing that starts it late hangs its only waits,
	// and the pairs must still be reported (from the wait blocked at the
	// deadlock); at one phase there are none.
	"hazards/phase_word": {
		{{Name: "RANKS", Value: "2"}},
		{{Name: "NP", Value: "1"}},
	},
	// A wait over several arrival words joined each word whole: one
	// count short, the race showed only when the wait came before the
	// later sequence's adds (gone under slow scalar GM access).
	"hazards/splitkv_flag_words": {
		{{Name: "RANKS", Value: "3"}},
	},
	"hazards/splitkv_flag_words_fixed": {
		{{Name: "RANKS", Value: "3"}},
	},
}

// programSizes returns program name's path, its `// test:` defines and the
// sizes TestFindingsIgnoreTiming lints it at: its own (nil) and timingSizes'.
func programSizes(name string) (string, []asm.Define, [][]asm.Define, error) {
	path, _ := programs.Find(name)
	defs, err := testDefines(path)
	return path, defs, append([][]asm.Define{nil}, timingSizes[name]...), err
}

// apply returns the default profile with p applied; it fails when p matches
// no parameter, so a renamed key cannot turn an entry into a no-op.
func (p perturbation) apply() (*pipes.Profile, error) {
	prof := pipes.DefaultProfile()
	n := 0
	for _, k := range prof.Keys() {
		if !hasAny(k, p.prefixes, strings.HasPrefix) || !hasAny(k, p.suffixes, strings.HasSuffix) {
			continue
		}
		v := p.set
		if v == "" {
			cur, _ := prof.Get(k)
			f, err := strconv.ParseFloat(cur, 64)
			if err != nil {
				return nil, fmt.Errorf("%s: %s=%q is not a number", p.name, k, cur)
			}
			// Latencies scale up; a "slow link" scales bandwidths down.
			if strings.HasSuffix(k, "bw") && p.scale > 1 {
				f /= p.scale
			} else {
				f *= p.scale
			}
			if !strings.Contains(cur, ".") && !strings.HasSuffix(k, "bw") {
				v = strconv.FormatInt(int64(f), 10)
			} else {
				v = strconv.FormatFloat(f, 'g', -1, 64)
			}
		}
		if err := prof.Set(k, v); err != nil {
			return nil, fmt.Errorf("%s: %v", p.name, err)
		}
		n++
	}
	if n == 0 {
		return nil, fmt.Errorf("%s matches no profile parameter", p.name)
	}
	return prof, nil
}

func hasAny(s string, affixes []string, has func(s, affix string) bool) bool {
	if len(affixes) == 0 {
		return true
	}
	for _, a := range affixes {
		if has(s, a) {
			return true
		}
	}
	return false
}

// verdict is what must not move with timing whatever path the run takes:
// every finding, notes included, by kind, severity and both sites' source
// positions (not its count or the instance it names: a program whose
// control flow polls a peer's data may take another path, docs/hazards.md).
func verdict(fs []hazard.Finding) []string {
	var v []string
	for _, f := range fs {
		v = append(v, fmt.Sprintf("%s %s %s:%d:%d %s:%d:%d", f.Severity, f.Kind,
			f.First.File, f.First.Line, f.First.Col, f.Second.File, f.Second.Line, f.Second.Col))
	}
	slices.Sort(v)
	return slices.Compact(v)
}

// named is the instance each finding names, both sites in full
// (iterations, core, rank), with the hint and the count (a race's pipe
// pairs, every other kind's instances). On the same path it must not move
// with timing either. Not yet held: the buffer named when two tiles alias
// the bytes (the later access's operand names it); docs/hazards.md, "What
// each verdict depends on".
func named(fs []hazard.Finding) []string {
	var v []string
	for _, f := range fs {
		v = append(v, fmt.Sprintf("%s %s %+v -> %+v | %s [%d]", f.Severity, f.Kind, f.First, f.Second, f.Hint, f.Count))
	}
	slices.Sort(v)
	return v
}

// path fingerprints the path a run took: how many instructions every
// scalar and every pipe executed, and which plain store every satisfied
// signal wait read (Detector.ReadsFrom: a value of the run, which decides
// the edge the wait acquires; docs/hazards.md, "Which store a wait reads").
// Two runs with the same fingerprint took the same path, as far as lint can
// tell, so their findings must name the same instances.
func path(res *machine.Result, det *hazard.Detector) string {
	if res == nil {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d rf=%x", res.Instructions, det.ReadsFrom())
	for _, p := range res.Pipes {
		fmt.Fprintf(&b, " %d.%s.%s=%d", p.Rank, p.Core, p.Pipe, p.Instructions)
	}
	return b.String()
}

// sameReport compares a perturbed lint with the default one: the verdict
// always, and the instances named when both took the same path. It
// returns what moved, "" when nothing did.
func sameReport(base, got []hazard.Finding, basePath, gotPath string) string {
	if w, g := verdict(base), verdict(got); !slices.Equal(w, g) {
		return "the findings moved (- default, + perturbed):" + diffLines(w, g)
	}
	if basePath != gotPath {
		return ""
	}
	if w, g := named(base), named(got); !slices.Equal(w, g) {
		return "on the same path the named instances moved (- default, + perturbed):" + diffLines(w, g)
	}
	return ""
}

// diffLines lists the lines only w has (-) and those only g has (+).
func diffLines(w, g []string) string {
	var b strings.Builder
	for _, x := range w {
		if !slices.Contains(g, x) {
			b.WriteString("\n  - " + x)
		}
	}
	for _, x := range g {
		if !slices.Contains(w, x) {
			b.WriteString("\n  + " + x)
		}
	}
	return b.String()
}

// lintWith is `ptoasm lint` (timing-only run, detector, static pass) under
// prof, with the run's path fingerprint.
func lintWith(obj *asm.Object, prof *pipes.Profile) ([]hazard.Finding, string, error) {
	var res *machine.Result
	det, err := hazard.Settle(hazard.Options{}, func(ho hazard.Options) (*hazard.Detector, error) {
		var m *machine.Machine
		ho.CoreName = func(rank, core int) string { return m.CoreName(rank, core) }
		ho.Placement = func(run, rank, core int) (machine.Placement, bool) { return m.Placement(run, rank, core) }
		det := hazard.New(ho)
		m, err := machine.New(obj, machine.Options{Observers: []machine.Observer{det}, TimingOnly: true, Profile: prof})
		if err != nil {
			return nil, err
		}
		res, err = m.Run()
		if err != nil {
			det.NoteError(err)
		}
		return det, nil
	})
	if err != nil {
		return nil, "", err
	}
	return hazard.Merge(det.Findings(), hazard.CheckObject(obj)), path(res, det), nil
}

// TestFindingsIgnoreTiming lints every program under every entry of
// timingPerturbations and requires the default profile's findings, notes
// included, sites and all: the detector decides from happens-before edges, so no
// latency, bandwidth or hand-off time may add, drop or move a finding. Where
// the run took the same path (path), each finding must also name the same
// instance (named).
func TestFindingsIgnoreTiming(t *testing.T) {
	profs := make([]*pipes.Profile, len(timingPerturbations))
	for i, p := range timingPerturbations {
		prof, err := p.apply()
		if err != nil {
			t.Fatal(err)
		}
		profs[i] = prof
	}
	for name := range timingSizes {
		if _, ok := programs.Find(name); !ok {
			t.Errorf("timingSizes names %s, which is not a program", name)
		}
	}
	for _, name := range programs.List() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path, defs, sizes, err := programSizes(name)
			if err != nil {
				t.Fatal(err)
			}
			for _, more := range sizes {
				size := ""
				if more != nil {
					size = fmt.Sprintf(" at %v", more)
				}
				obj, errs := asm.Assemble(embedFrontend, path, append(slices.Clone(defs), more...))
				if errs.HasErrors() || obj == nil {
					t.Fatalf("assemble %s%s: %v", path, size, errs)
				}
				base, basePath, err := lintWith(obj, nil)
				if err != nil {
					t.Fatal(err)
				}
				for i, p := range timingPerturbations {
					fs, fsPath, err := lintWith(obj, profs[i])
					if err != nil {
						t.Errorf("%s%s: %v", p.name, size, err)
						continue
					}
					if moved := sameReport(base, fs, basePath, fsPath); moved != "" {
						t.Errorf("under %q%s %s", p.name, size, moved)
					}
				}
			}
		})
	}
}

// TestDoubleSetNameIgnoresTiming: a slow L2 reorders the AICs of a rank,
// and allgather_gemm/mutant_h4's double-set error used to name the other
// AIC's instance: a channel's memo counted its later instances against the
// finding's severity, which another core's error could have raised first,
// so whether the channel's own first error instance was offered for the
// name followed timing (the wide sweep, TestFindingsIgnoreTimingSweep,
// found it). timingPerturbations has the slow L2 too, but compares named
// instances only on the same path, and mutant_h4's path moves with it: the
// double-set's instance must not move even so.
func TestDoubleSetNameIgnoresTiming(t *testing.T) {
	slowL2 := perturbation{name: "slow L2", prefixes: []string{"l2.bw"}, set: "50"}
	prof, err := slowL2.apply()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"allgather_gemm/mutant_h4"} {
		p, _ := programs.Find(name)
		obj, errs := asm.Assemble(embedFrontend, p, nil)
		if errs.HasErrors() || obj == nil {
			t.Fatalf("assemble %s: %v", name, errs)
		}
		// The run's path differs (the compute kernel polls the chunk
		// flags more or fewer times), but the sets and waits of the L0
		// channels follow the tiles alone, the same on both runs.
		base, _, err := lintWith(obj, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, _, err := lintWith(obj, prof)
		if err != nil {
			t.Fatal(err)
		}
		w, g := named(withKindOnly(base, hazard.KindDoubleSet)), named(withKindOnly(got, hazard.KindDoubleSet))
		if len(w) == 0 {
			t.Fatalf("%s: no double-set finding", name)
		}
		if !slices.Equal(w, g) {
			t.Errorf("%s under %q: the double-set findings name other instances (- default, + perturbed):%s", name, slowL2.name, diffLines(w, g))
		}
	}
}

func withKindOnly(fs []hazard.Finding, kind string) []hazard.Finding {
	return slices.DeleteFunc(slices.Clone(fs), func(f hazard.Finding) bool { return f.Kind != kind })
}

// TestManyNotifiersIgnoreLateRank lints arrival_count_one_short (an arrival
// count waited one short) at more ranks than a word's kept adders used to
// cover (16): past the cap the wait joins every landed add, so with every
// rank on time it linted clean and with one rank late it reported the RAW.
// Both timings must report the same race (docs/hazards.md, "Counters
// several agents add to").
func TestManyNotifiersIgnoreLateRank(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	p, _ := programs.Find("hazards/arrival_count_one_short")
	for _, ranks := range []string{"24", "40"} {
		var got [][]string
		for _, slow := range []string{"0", "200"} {
			defs := []asm.Define{{Name: "RANKS", Value: ranks}, {Name: "SLOW", Value: slow}}
			obj, errs := asm.Assemble(embedFrontend, p, defs)
			if errs.HasErrors() || obj == nil {
				t.Fatalf("assemble %s -D RANKS=%s: %v", p, ranks, errs)
			}
			fs, _, err := lintWith(obj, nil)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, verdict(fs))
		}
		if len(got[0]) == 0 || !slices.Equal(got[0], got[1]) {
			t.Errorf("RANKS=%s: the verdict moves with a late rank (- on time, + late):%s", ranks, diffLines(got[0], got[1]))
		}
	}
}
