package programs_test

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	pathpkg "path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
	"github.com/ptoasm/ptoasm/machine/hazard"
	"github.com/ptoasm/ptoasm/pipes"
	"github.com/ptoasm/ptoasm/programs"
)

// The wide sweep (TestFindingsIgnoreTimingSweep) looks for verdicts that
// move with timing where timingPerturbations does not reach: many profile
// parameters changed at once, by factors from 0.02 to 50, at several sizes of
// every program. It is long, so it runs whole only when asked:
//
//	PTOASM_SWEEP=N        N random profiles per program and size (unset: two,
//	                      on the programs of sweepSlice; skipped with -short)
//	PTOASM_SWEEP_SEED=S   the seed (default 1); a failure names its profile
//	                      as --set flags, so it reproduces on the command line
//	PTOASM_SWEEP_RUN=RE   only programs whose name matches RE
//	PTOASM_SWEEP_SIZES=K  at most K sizes per program besides its own (default 6)
//	PTOASM_SWEEP_CORPUS=1 the PTOAS corpus too (corpus/)
//
// Every draw is a function of the seed, the program and the size, so a run
// over a subset gives the same profiles to that subset.

// sweepSlice names the programs TestFindingsIgnoreTimingSweep covers when
// PTOASM_SWEEP is not set: where the sweep found verdicts that moved
// (docs/hazards.md, "What each verdict depends on"), and their twins.
var sweepSlice = regexp.MustCompile(`^(hazards/(fault_each_core|read_before_racing_writes|same_site_waw|dn_block_swap|nz_block_swap)|allgather_gemm/mutant_h4)`)

// sweepFixed are the parameters a sweep leaves alone: they change what the
// kernel is (core counts, memory sizes and alignment, which move addresses
// and bounds), add happens-before edges (twait's periodic pipe_barrier ALL),
// or are limits, not speeds; and the per-unit skew (jitter.*), which
// TestFindingsIgnoreSkew draws itself (left out here, the sweep's draws
// for a seed are the ones they were before it existed).
var sweepFixed = []string{"aic_per_rank", "aiv_per_rank", "mem.", "twait.barrier_every", "twait.max_polls", "jitter."}

// sweepGroups are the parameter groups a correlated draw moves together.
var sweepGroups = []string{"dma.", "gm.bw", "l2.", "cube.", "vec.", "sync.", "scalar.", "twait.", "link.", "sdma.", "host.", "block.", "kernel.", "queue.", "clock_hz"}

// sweepChange is one parameter a random profile sets.
type sweepChange struct{ key, value string }

// randomProfile draws a timing-only profile: each draw picks a style
// (independent factors on a random share of the parameters, one factor per
// group, or every parameter at an extreme) and returns the changes it made.
// Queue depths are drawn from 1 to 64 entries: they bound how far the
// scalar runs ahead, which is timing for races (a full queue is no
// happens-before edge the detector uses) but decides where a flag deadlock
// stops.
func randomProfile(rng *rand.Rand, queues bool) (*pipes.Profile, []sweepChange) {
	prof := pipes.DefaultProfile()
	var changes []sweepChange
	style := rng.IntN(3)
	groupFactor := map[string]float64{}
	factor := func() float64 {
		switch r := rng.Float64(); {
		case r < 0.15:
			return 0.02
		case r < 0.3:
			return 50
		default:
			return math.Exp(math.Log(0.02) + rng.Float64()*(math.Log(50)-math.Log(0.02)))
		}
	}
	for _, k := range prof.Keys() {
		if hasAny(k, sweepFixed, strings.HasPrefix) {
			continue
		}
		cur, _ := prof.Get(k)
		var v string
		switch k {
		case "link.topology":
			if rng.IntN(3) == 0 {
				v = []string{"mesh", "ring", "switch"}[rng.IntN(3)]
			}
		case "remote_visibility":
			if rng.IntN(4) == 0 {
				v = []string{"completion", "dsb"}[rng.IntN(2)]
			}
		default:
			if strings.HasPrefix(k, "queue.") {
				if queues && rng.IntN(2) == 0 {
					v = strconv.Itoa(1 << rng.IntN(7))
				}
				break
			}
			f, err := strconv.ParseFloat(cur, 64)
			if err != nil {
				continue
			}
			var x float64
			switch style {
			case 0: // independent factors on about a third of the parameters
				if rng.IntN(3) != 0 {
					continue
				}
				x = factor()
			case 1: // one factor per group
				g := k
				if i := slices.IndexFunc(sweepGroups, func(p string) bool { return strings.HasPrefix(k, p) }); i >= 0 {
					g = sweepGroups[i]
				}
				if _, ok := groupFactor[g]; !ok {
					groupFactor[g] = factor()
					if rng.IntN(3) == 0 {
						groupFactor[g] = 1
					}
				}
				x = groupFactor[g]
			default: // every parameter at an extreme
				x = []float64{0.02, 1, 50}[rng.IntN(3)]
			}
			if strings.HasSuffix(k, "latency") && rng.IntN(10) == 0 {
				x = 0
			}
			if x == 1 {
				continue
			}
			nv := f * x
			if strings.Contains(cur, ".") || strings.Contains(cur, "e") {
				v = strconv.FormatFloat(nv, 'g', 6, 64)
			} else {
				v = strconv.FormatInt(int64(math.Round(nv)), 10)
			}
		}
		if v == "" || v == cur {
			continue
		}
		if err := prof.Set(k, v); err != nil {
			continue // out of the parameter's range: keep the default
		}
		changes = append(changes, sweepChange{k, v})
	}
	return prof, changes
}

func (c sweepChange) String() string { return "--set " + c.key + "=" + c.value }

func sweepFlags(cs []sweepChange) string {
	s := make([]string, len(cs))
	for i, c := range cs {
		s[i] = c.String()
	}
	return strings.Join(s, " ")
}

// sweepSeed mixes the sweep's seed with a name, so each program and size
// draws its own profiles whatever else the run covers.
func sweepSeed(seed uint64, name string) *rand.Rand {
	h := uint64(1469598103934665603)
	for _, c := range []byte(name) {
		h = (h ^ uint64(c)) * 1099511628211
	}
	return rand.New(rand.NewPCG(seed, h))
}

var constLine = regexp.MustCompile(`^const ([A-Z][A-Z0-9_]*) = ([0-9]+)\s*(//.*)?$`)
var includeLine = regexp.MustCompile(`^include "([^"]+)"`)

// sweepConsts lists the integer constants of a program's main file and the
// files it includes, with their values: the sizes a sweep varies.
func sweepConsts(p string) map[string]int {
	out := map[string]int{}
	programLines(p, func(l string) {
		if m := constLine.FindStringSubmatch(l); m != nil {
			if v, err := strconv.Atoi(m[2]); err == nil {
				out[m[1]] = v
			}
		}
	})
	return out
}

// programLines calls each for every line of the embedded program file p
// and of the files it includes, each file once (an include line is passed
// on too, after its file's lines).
func programLines(p string, each func(line string)) {
	seen := map[string]bool{}
	var read func(string)
	read = func(p string) {
		if seen[p] {
			return
		}
		seen[p] = true
		src, err := fs.ReadFile(programs.FS, p)
		if err != nil {
			return
		}
		for _, l := range strings.Split(string(src), "\n") {
			if m := includeLine.FindStringSubmatch(l); m != nil {
				read(pathpkg.Join(pathpkg.Dir(p), m[1]))
			}
			each(l)
		}
	}
	read(p)
}

// sweepExtraSizes are sizes every sweep covers, besides the drawn ones:
// allgather_gemm's modes and rank counts, the ring at several rank counts.
var sweepExtraSizes = map[string][][]asm.Define{
	"allgather_gemm": {
		{{Name: "MODE", Value: "compute_only"}},
		{{Name: "MODE", Value: "sequential"}},
		{{Name: "MODE", Value: "pipelined"}},
		{{Name: "MODE", Value: "pipelined"}, {Name: "RANKS", Value: "4"}},
		{{Name: "MODE", Value: "pipelined"}, {Name: "RANKS", Value: "8"}, {Name: "M", Value: "512"}},
		{{Name: "MODE", Value: "pipelined"}, {Name: "COMM_BLOCKS", Value: "4"}, {Name: "COMPUTE_BLOCKS", Value: "4"}, {Name: "BASE_M", Value: "32"}},
	},
	"allreduce_ring/ring_final": {
		{{Name: "RANKS", Value: "2"}}, {{Name: "RANKS", Value: "3"}}, {{Name: "RANKS", Value: "5"}}, {{Name: "RANKS", Value: "8"}},
	},
	"allreduce_ring/mesh":          {{{Name: "RANKS", Value: "3"}}, {{Name: "RANKS", Value: "8"}}},
	"allreduce_ring/ring_skeleton": {{{Name: "RANKS", Value: "2"}}, {{Name: "RANKS", Value: "8"}}},
	"allgather_matmul_ring/ring":   {{{Name: "RANKS", Value: "2"}}, {{Name: "RANKS", Value: "8"}}},
}

// drawSizes picks up to k sizes of a program: each changes one integer
// constant of value 1 to 64 (to 1, half, one more, or double), a loop
// count or a rank count in the usual program.
func drawSizes(rng *rand.Rand, consts map[string]int, k int) [][]asm.Define {
	var cands [][]asm.Define
	names := make([]string, 0, len(consts))
	for n := range consts {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		v := consts[n]
		if v < 1 || v > 64 {
			continue
		}
		for _, w := range []int{1, v / 2, v + 1, 2 * v} {
			if w >= 1 && w != v && w <= 128 {
				cands = append(cands, []asm.Define{{Name: n, Value: strconv.Itoa(w)}})
			}
		}
	}
	rng.Shuffle(len(cands), func(i, j int) { cands[i], cands[j] = cands[j], cands[i] })
	return cands[:min(k, len(cands))]
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return v
	}
	return def
}

// sweepLint is lintWith with a CPU budget: a profile that makes a polling
// loop spin for too long is skipped, not waited for.
func sweepLint(obj *asm.Object, prof *pipes.Profile, limit time.Duration) ([]hazard.Finding, string, bool, error) {
	var res *machine.Result
	limited := false
	det, err := hazard.Settle(hazard.Options{}, func(ho hazard.Options) (*hazard.Detector, error) {
		var m *machine.Machine
		ho.CoreName = func(rank, core int) string { return m.CoreName(rank, core) }
		det := hazard.New(ho)
		m, err := machine.New(obj, machine.Options{Observers: []machine.Observer{det}, TimingOnly: true, Profile: prof, MaxTime: limit})
		if err != nil {
			return nil, err
		}
		res, err = m.Run()
		if err != nil {
			if _, limited = errors.AsType[*machine.LimitError](err); limited {
				return nil, nil
			}
			det.NoteError(err)
		}
		return det, nil
	})
	if err != nil {
		return nil, "", false, err
	}
	if limited {
		return nil, "", false, nil
	}
	fs := det.Findings()
	if slices.ContainsFunc(fs, func(f hazard.Finding) bool { return f.Kind == hazard.KindKeptLimit }) {
		// The lint says itself that it dropped kept GM accesses a later
		// access was not ordered after (--max-kept): races may be missed,
		// so it is a limit reached, not a verdict to compare
		// (gm_store_late_past_olds at a drawn ROUNDS=12 past the 16 kept,
		// in session 21; since session 22 the dropped accesses are kept in
		// runs, and the note comes only past the runs' bound).
		return nil, "", false, nil
	}
	return hazard.Merge(fs, hazard.CheckObject(obj)), path(res, det), true, nil
}

// sweepCount counts what a sweep covered: cases (program or kernel and
// size), lints and runs skipped at a limit.
var sweepCount struct{ cases, lints, limited, readsFrom atomic.Int64 }

// sweepCase lints obj under n random profiles drawn from rng and reports
// every one whose verdict differs from the default profile's.
func sweepCase(t *testing.T, obj *asm.Object, what string, rng *rand.Rand, n int) {
	const limit = 30 * time.Second
	base, basePath, ok, err := sweepLint(obj, nil, limit)
	if err != nil || !ok {
		t.Logf("%s: default profile: skipped (%v)", what, err)
		return
	}
	sweepCount.cases.Add(1)
	for i := 0; i < n; i++ {
		prof, changes := randomProfile(rng, true)
		fs, fsPath, ok, err := sweepLint(obj, prof, limit)
		sweepCount.lints.Add(1)
		if err != nil {
			t.Errorf("%s %s: %v", what, sweepFlags(changes), err)
			continue
		}
		if !ok {
			sweepCount.limited.Add(1)
			continue
		}
		b := base
		if slices.ContainsFunc(changes, func(c sweepChange) bool { return strings.HasPrefix(c.key, "queue.") }) {
			// Where a flag deadlock stops depends on how far the scalar
			// can run ahead (docs/hazards.md, "deadlock"): the root and the
			// wait behind it move with the depth, as on hardware.
			b, fs = withoutKind(b, hazard.KindDeadlock), withoutKind(fs, hazard.KindDeadlock)
		}
		b, fs = lostWakeup(b, fs)
		if moved := sameReport(b, fs, basePath, fsPath); moved != "" {
			t.Errorf("%s under %s %s", what, sweepFlags(changes), moved)
		}
		if otherStores(basePath, fsPath) {
			// The same instructions, but a wait read another plain store:
			// the named instances were not compared (path).
			sweepCount.readsFrom.Add(1)
			t.Logf("%s: a wait read another store under %s", what, sweepFlags(changes))
		}
	}
}

// otherStores reports whether two path fingerprints differ only in which
// plain stores the waits read (Detector.ReadsFrom).
func otherStores(a, b string) bool {
	fa, fb := strings.Fields(a), strings.Fields(b)
	return len(fa) > 1 && len(fb) > 1 && fa[1] != fb[1] && fa[0] == fb[0] && slices.Equal(fa[2:], fb[2:])
}

// lostWakeup drops from base and fs the deadlocks a timing makes of a
// wait some timing can leave spinning. Where base reports a reset that can
// erase a peer's add (reset-races-atomic), every deadlock: the waiter of
// the lost add is not named. A write that can overwrite the value a wait
// needs before it polls (wait-overwritten) is reported at the wait whether
// the run passed it or hung on it (since session 24), so only a deadlock
// that blocks a wait some wait-overwritten of its own report names is
// dropped: one that does not moved with the timing. Where a timing makes
// the lost wake-up happen the run hangs, as on hardware, and the
// deadlock's roots and which waits passed before it are that timing's.
func lostWakeup(base, fs []hazard.Finding) ([]hazard.Finding, []hazard.Finding) {
	if slices.ContainsFunc(base, func(f hazard.Finding) bool { return f.Kind == hazard.KindResetRacesAtomic }) {
		return withoutKind(base, hazard.KindDeadlock), withoutKind(fs, hazard.KindDeadlock)
	}
	return withoutOverwrittenHang(base), withoutOverwrittenHang(fs)
}

// blockedAt finds the sites a deadlock's message lists its blocked agents
// at ("r1.aiv0 S at k.pto:76:9: twait ...").
var blockedAt = regexp.MustCompile(` at (\S+):(\d+):(\d+): `)

// withoutOverwrittenHang is fs without the deadlocks that block the wait
// of one of its wait-overwritten findings.
func withoutOverwrittenHang(fs []hazard.Finding) []hazard.Finding {
	waits := map[string]bool{}
	for _, f := range fs {
		if f.Kind == hazard.KindWaitOverwritten {
			waits[fmt.Sprintf("%s:%d:%d", filepath.Base(f.First.File), f.First.Line, f.First.Col)] = true
		}
	}
	if len(waits) == 0 {
		return fs
	}
	return slices.DeleteFunc(slices.Clone(fs), func(f hazard.Finding) bool {
		if f.Kind != hazard.KindDeadlock {
			return false
		}
		for _, m := range blockedAt.FindAllStringSubmatch(f.Message, -1) {
			if waits[filepath.Base(m[1])+":"+m[2]+":"+m[3]] {
				return true
			}
		}
		return false
	})
}

func withoutKind(fs []hazard.Finding, kind string) []hazard.Finding {
	return slices.DeleteFunc(slices.Clone(fs), func(f hazard.Finding) bool { return f.Kind == kind })
}

// TestFindingsIgnoreTimingSweep is the wide, randomised, reproducible
// form of TestFindingsIgnoreTiming (the header above says how to run it).
func TestFindingsIgnoreTimingSweep(t *testing.T) {
	n := envInt("PTOASM_SWEEP", 0)
	var only *regexp.Regexp
	if n <= 0 {
		// The always-on slice: the programs where the sweep found a
		// mover, two draws each at their sizes.
		if testing.Short() {
			t.Skip("-short; PTOASM_SWEEP=N runs the wide sweep (N random profiles per program and size)")
		}
		n, only = 2, sweepSlice
	}
	seed := uint64(envInt("PTOASM_SWEEP_SEED", 1))
	maxSizes := envInt("PTOASM_SWEEP_SIZES", 6)
	start := time.Now()
	t.Cleanup(func() {
		t.Logf("sweep seed %d: %d cases (program or kernel x size), %d perturbed lints, %d stopped at a limit, %d read other stores on the same path, %.0f s",
			seed, sweepCount.cases.Load(), sweepCount.lints.Load(), sweepCount.limited.Load(), sweepCount.readsFrom.Load(), time.Since(start).Seconds())
	})
	if re := os.Getenv("PTOASM_SWEEP_RUN"); re != "" {
		only = regexp.MustCompile(re)
	}
	for _, name := range programs.List() {
		if only != nil && !only.MatchString(name) {
			continue
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p, defs, sizes, err := programSizes(name)
			if err != nil {
				t.Fatal(err)
			}
			sizes = append(sizes, sweepExtraSizes[name]...)
			sizes = append(sizes, drawSizes(sweepSeed(seed, name), sweepConsts(p), maxSizes)...)
			for _, more := range sizes {
				obj, errs := asm.Assemble(embedFrontend, p, append(slices.Clone(defs), more...))
				if errs.HasErrors() || obj == nil {
					continue // a drawn size the program's constraints reject
				}
				what := fmt.Sprintf("%s %v", name, more)
				sweepCase(t, obj, what, sweepSeed(seed, what), n)
			}
		})
	}
	if os.Getenv("PTOASM_SWEEP_CORPUS") == "" {
		return
	}
	eachCorpusKernel(t, func(name string) bool { return only == nil || only.MatchString(name) }, func(t *testing.T, rel string, obj *asm.Object) {
		sweepCase(t, obj, "corpus/"+rel, sweepSeed(seed, rel), n)
	})
}

// eachCorpusKernel runs f, as a parallel subtest named corpus/REL, on each
// kernel of the PTOAS corpus (corpusDirs) that keep takes by that name and
// that assembles to a launch; it logs when there is no corpus.
func eachCorpusKernel(t *testing.T, keep func(name string) bool, f func(t *testing.T, rel string, obj *asm.Object)) {
	dir := ""
	for _, d := range corpusDirs {
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			dir = d
		}
	}
	if dir == "" {
		t.Log("no corpus/")
		return
	}
	var files []string
	filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err == nil && !e.IsDir() && strings.HasSuffix(p, ".pto") {
			files = append(files, p)
		}
		return nil
	})
	fe := corpusFrontend()
	for _, file := range files {
		rel, _ := filepath.Rel(dir, file)
		if !keep("corpus/" + rel) {
			continue
		}
		obj, errs := asm.Assemble(fe, file, nil)
		if errs.HasErrors() || obj == nil || len(obj.Kernels) == 0 || obj.Launch == nil {
			continue
		}
		t.Run("corpus/"+rel, func(t *testing.T) {
			t.Parallel()
			f(t, rel, obj)
		})
	}
}
