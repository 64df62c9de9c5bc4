package programs_test

import (
	"cmp"
	"fmt"
	"hash/fnv"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
	"github.com/ptoasm/ptoasm/pipes"
	"github.com/ptoasm/ptoasm/programs"
)

// The trend search (docs/profile.md, "Trends", T8) is the fixed trend
// tables' open-ended sibling: over every shipped program at its `// test:`
// sizes, and a seeded sample of the PTOAS corpus (timing-only), it varies
// one thing at a time and checks only the direction the cycle count moves:
//
//   - every profile cost (a latency, head, slope, tail or fixed charge) ×2
//     and ×8 never makes a run faster, and every bandwidth ×2 and ×8 never
//     makes it slower;
//   - every problem-size constant (sizeNames) doubled, the work split kept,
//     never makes it faster;
//   - a `pipe_barrier ALL` after an instruction line, or one queue slot
//     fewer on a pipe, never makes it faster.
//
// By default a seeded subset of the variants runs (well under 20 s);
// PTOASM_TRENDS=search runs every variant of every program and 48 corpus
// kernels. PTOASM_TRENDS_SEED picks another subset, PTOASM_TRENDS_ONLY (a
// regular expression) the subjects. An inversion beyond
// searchNoise fails unless searchMovers lists it with its reason.

// searchNoise is how far against its trend a variant may move a run: a
// first-come-first-served port (L2, HBM, a link) or an in-order issue
// queue meets its requests in another order when one of them moves, and
// list scheduling can then end later with less work (Graham's anomalies;
// the hardware's ports and queues are first-come-first-served too). The
// largest such move the search finds outside searchMovers, on the shipped
// programs and the corpus sample, is under it (docs/profile.md, T8).
const searchNoise = 0.01

// searchMovers are the inversions beyond searchNoise that are real
// scheduling effects, by "program: variant" or a prefix of it, each with
// its reason (docs/profile.md, "Trends", T8). The list only shrinks: in
// full mode an entry that no longer inverts beyond searchNoise fails too.
var searchMovers = map[string]string{
	// TWAIT polls every twait.poll_interval (265) cycles: each hand-off
	// waits for the next poll after its signal, so moving any earlier
	// event by a few cycles can move a hand-off to the poll before.
	// A chain of NB × TPB turns, each such a hand-off, gains up to one
	// interval a turn; a spin loop on the device has the same phase.
	"hazards/ticket_signal_turns: scalar.op ":                         "TWAIT poll phase over a chain of 15 turns",
	"hazards/remote_pull_between_publishes: scalar.op ":               "TWAIT poll phase (ready and ack words, each round)",
	"hazards/remote_pull_between_publishes_fixed: scalar.op ":         "TWAIT poll phase (ready and ack words, each round)",
	"hazards/remote_pull_between_publishes_fixed: l2.miss_latency ×2": "TWAIT poll phase (ready and ack words, each round)",
	"hazards/poll_chunks: scalar.op ":                                 "the consumer's poll loop (a load and a test per trip) meets each chunk's flag at another trip",
	// A racing read (the kernel's RAW) issued before the store it races
	// misses in the L2; a barrier that holds it until that store has
	// started turns it into a hit on the lines the store allocates (the
	// L2 is write-allocate, machine/l2.go). The kernel is wrong by
	// design: its read has no order against the write.
	"hazards/dn_window_raw: pipe_barrier ALL after hazards/dn_window_raw.pto:2":   "racing read made an L2 hit by the write it races",
	"hazards/nd_window_raw: pipe_barrier ALL after hazards/nd_window_raw.pto:2":   "racing read made an L2 hit by the write it races",
	"hazards/ptoas/issue706: pipe_barrier ALL after hazards/ptoas/issue706.pto:2": "racing read (TPUT's load of @S) made an L2 hit by the tstore it races",
	// A barrier (no noise allowed) that moves a poll's phase: with
	// twait.poll_interval=1 (splitkv, sdma_land_scale) or
	// scalar.gm_load=1 (poll_chunks' ttest loop) it costs a cycle.
	"hazards/splitkv_flag_words_fixed: pipe_barrier ":   "TWAIT poll phase (the combine's arrival words)",
	"hazards/counter_eq_overshoot_fixed: pipe_barrier ": "TWAIT poll phase (the leader's round words)",
	"hazards/sdma_land_scale: pipe_barrier ":            "TWAIT poll phase (the consumer's chunk signal)",
	"hazards/sdma_land_scale_two_ifs: pipe_barrier ":    "TWAIT poll phase (the consumer's chunk signal)",
	"hazards/poll_chunks: pipe_barrier ":                "the consumer's ttest loop meets a chunk's count at another trip",
}

// moverFor returns the searchMovers entry key k falls under, "" for none.
func moverFor(k string) string {
	for _, e := range slices.Sorted(mapKeys(searchMovers)) {
		if strings.HasPrefix(k, e) {
			return e
		}
	}
	return ""
}

// sizeNames are the constants that measure the problem (rows, columns,
// bytes, tiles, rounds of the same work); doubling one is more work on the
// same split. Tile shapes (TR, BM, BK …), block and rank counts, slots and
// delays (SLOW …) are not sizes: a bigger tile or another split is a
// different schedule, not more work.
var sizeNames = map[string]bool{
	"M": true, "N": true, "K": true, "ROWS": true, "COLS": true, "BYTES": true,
	"NT": true, "T": true, "R": true, "C": true, "D": true, "KT": true,
	"ROUNDS": true, "TILES": true, "CHUNK": true, "CHUNKS": true, "H": true,
	"W": true, "HIN": true, "WIN": true, "C1": true, "COUT": true, "BATCH": true,
	"VOCAB": true, "S": true, "MS": true, "NI": true, "NJ": true, "PASSES": true,
}

// searchTrendFull reports whether every variant runs (PTOASM_TRENDS=search:
// not with PTOASM_TRENDS=full, whose fixed grids take 20 s where the full
// search takes minutes).
func searchTrendFull() bool { return os.Getenv("PTOASM_TRENDS") == "search" }

// searchSeed is the subset's seed (PTOASM_TRENDS_SEED, default 22).
func searchSeed(t *testing.T) uint64 {
	s := os.Getenv("PTOASM_TRENDS_SEED")
	if s == "" {
		return 22
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		t.Fatalf("PTOASM_TRENDS_SEED=%q: %v", s, err)
	}
	return n
}

// searchSubject is one kernel the search varies: how to read it, its path
// and the defines it runs with.
type searchSubject struct {
	name   string
	fe     asm.Frontend
	path   string
	defs   []asm.Define
	corpus bool // an MLIR kernel of one fixed shape: no sizes, no barrier lines
}

// variant is one change to a subject and the direction it must move the
// cycle count: up (more cost, less resource) or down (more bandwidth).
type variant struct {
	desc string
	up   bool // the run must not get faster (else: not slower)
	prof map[string]string
	defs []asm.Define // replace or add these defines
	at   *barrierSite // a pipe_barrier ALL after this line
	// class is what the variant changes (profile, size, barrier): the
	// default subset draws from each, and a barrier has no noise.
	class string
}

// noise is how far against its trend v may move a run before it fails:
// searchNoise, but none for an added barrier. A barrier only adds waits;
// the two ways one still saves time, a poll that meets its signal a
// period earlier and a racing read turned into an L2 hit, are listed in
// searchMovers program by program.
func (v *variant) noise() float64 {
	if v.class == "barrier" {
		return 0
	}
	return searchNoise
}

// searchRun runs s with v applied (nil: as it is) and returns the cycles.
func searchRun(s searchSubject, v *variant) (int64, error) {
	fe, defs := s.fe, s.defs
	prof := pipes.DefaultProfile()
	if v != nil {
		if len(v.prof) > 0 {
			prof = pipes.DefaultProfile()
			for _, k := range slices.Sorted(mapKeys(v.prof)) {
				if err := prof.Set(k, v.prof[k]); err != nil {
					return 0, err
				}
			}
		}
		for _, d := range v.defs {
			defs = slices.DeleteFunc(slices.Clone(defs), func(e asm.Define) bool { return e.Name == d.Name })
			defs = append(defs, d)
		}
		if v.at != nil {
			fe = withBarriers(fe, map[string]map[int]bool{v.at.file: {v.at.line: true}})
		}
	}
	obj, errs := asm.Assemble(fe, s.path, defs)
	if errs.HasErrors() || obj == nil {
		return 0, fmt.Errorf("assemble: %v", errs)
	}
	m, err := machine.New(obj, machine.Options{Profile: prof, TimingOnly: true})
	if err != nil {
		return 0, err
	}
	res, err := m.Run()
	if err != nil {
		return 0, err
	}
	return res.Cycles, nil
}

func mapKeys[K comparable, V any](m map[K]V) func(func(K) bool) {
	return func(yield func(K) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// costKey reports whether key k is a cost: a larger value only adds time.
func costKey(k string) bool {
	switch k {
	case "l2.miss_latency", "sdma.latency", "cube.head":
		return true
	}
	return less(k)
}

// bwKey reports whether key k is a bandwidth: a larger value only removes
// time.
func bwKey(k string) bool { return strings.HasSuffix(k, "bw") }

// profileVariants lists every cost ×2 and ×8 (a zero cost set to 2 and 8
// cycles), every bandwidth ×2 and ×8, and every queue one slot shorter.
func profileVariants() []variant {
	prof := pipes.DefaultProfile()
	var out []variant
	for _, k := range prof.Keys() {
		v, _ := prof.Get(k)
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			continue
		}
		num := likeValue(v)
		switch {
		case costKey(k):
			for _, m := range []float64{2, 8} {
				x := f * m
				if f == 0 {
					x = m
				}
				out = append(out, variant{desc: fmt.Sprintf("%s ×%g", k, m), up: true, prof: map[string]string{k: num(x)}, class: "profile"})
			}
		case bwKey(k):
			for _, m := range []float64{2, 8} {
				out = append(out, variant{desc: fmt.Sprintf("%s ×%g", k, m), prof: map[string]string{k: num(f * m)}, class: "profile"})
			}
		case strings.HasPrefix(k, "queue.") && f > 1:
			out = append(out, variant{desc: k + " −1", up: true, prof: map[string]string{k: num(f - 1)}, class: "profile"})
		}
	}
	return out
}

// sizeVariants lists each size constant of s's files (sweepConsts)
// doubled, from its `// test:` value where it has one.
func sizeVariants(s searchSubject) []variant {
	consts := sweepConsts(s.path)
	split := divisors(s.path)
	var out []variant
	for _, name := range slices.Sorted(mapKeys(consts)) {
		if !sizeNames[name] || split[name] {
			continue
		}
		n := int64(consts[name])
		for _, d := range s.defs {
			if d.Name == name {
				n, _ = strconv.ParseInt(d.Value, 10, 64)
			}
		}
		if n <= 0 {
			continue
		}
		out = append(out, variant{desc: fmt.Sprintf("%s %d → %d", name, n, 2*n), up: true,
			defs: []asm.Define{{Name: name, Value: strconv.FormatInt(2*n, 10)}}, class: "size"})
	}
	return out
}

// constExpr matches a constant's definition and captures its expression.
var constExpr = regexp.MustCompile(`^\s*const\s+\w+\s*=\s*([^/\n]*(?:/.*)?)$`)

// divisors lists the constants that divide in another constant's
// definition of s's files (tget_bw's ROWS = BYTES / (4 * COLS)): a
// width that splits a fixed amount of work, not a size of it.
func divisors(path string) map[string]bool {
	out := map[string]bool{}
	word := regexp.MustCompile(`[A-Za-z_]\w*`)
	programLines(path, func(l string) {
		l, _, _ = strings.Cut(l, "//")
		m := constExpr.FindStringSubmatch(l)
		if m == nil {
			return
		}
		if _, div, ok := strings.Cut(m[1], "/"); ok {
			for _, w := range word.FindAllString(div, -1) {
				out[w] = true
			}
		}
	})
	return out
}

// barrierVariants lists a pipe_barrier ALL after each instruction line of
// the files s reads.
func barrierVariants(t *testing.T, s searchSubject) []variant {
	var files []string
	fe := s.fe
	fe.ReadFile = func(name string) ([]byte, error) {
		if !slices.Contains(files, name) {
			files = append(files, name)
		}
		return s.fe.ReadFile(name)
	}
	if _, errs := asm.Assemble(fe, s.path, s.defs); errs.HasErrors() {
		return nil
	}
	var out []variant
	for _, f := range files {
		src, err := s.fe.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, l := range strings.Split(string(src), "\n") {
			if barrierLine.MatchString(l) && !strings.HasPrefix(strings.TrimSpace(l), "tile ") {
				out = append(out, variant{desc: fmt.Sprintf("pipe_barrier ALL after %s:%d", f, i+1), up: true,
					at: &barrierSite{f, i}, class: "barrier"})
			}
		}
	}
	return out
}

// searchSubjects lists every shipped program at its test sizes and, when
// the corpus is fetched, n of its kernels drawn with seed.
func searchSubjects(t *testing.T, n int, seed uint64) []searchSubject {
	var out []searchSubject
	for _, name := range programs.List() {
		path, _ := programs.Find(name)
		defs, err := testDefines(path)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, searchSubject{name: name, fe: embedFrontend, path: path, defs: defs})
	}
	dir := ""
	for _, d := range corpusDirs {
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			dir = d
		}
	}
	if dir == "" || n == 0 {
		return out
	}
	var files []string
	filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err == nil && !e.IsDir() && strings.HasSuffix(p, ".pto") {
			files = append(files, p)
		}
		return nil
	})
	slices.Sort(files)
	r := rand.New(rand.NewPCG(seed, 0x7e4d))
	r.Shuffle(len(files), func(i, j int) { files[i], files[j] = files[j], files[i] })
	fe := corpusFrontend()
	for _, f := range files[:min(n, len(files))] {
		out = append(out, searchSubject{name: "corpus:" + strings.TrimPrefix(f, dir+"/"), fe: fe, path: f, corpus: true})
	}
	return out
}

// inversion is one variant that moved a run against its trend.
type inversion struct {
	key       string // "subject: variant"
	base, got int64
	rel       float64 // signed against the trend: > 0 is an inversion
	listedWhy string
	overNoise bool
}

// TestTrendSearch runs the metamorphic trend search.
func TestTrendSearch(t *testing.T) {
	full := searchTrendFull()
	seed := searchSeed(t)
	nCorpus, perSubject := 4, 2 // per class: profile, size, barrier
	if full {
		nCorpus, perSubject = 48, 0
	}
	subjects := searchSubjects(t, nCorpus, seed)
	profVars := profileVariants()
	start := time.Now()
	var invs []inversion
	runs := 0
	seen := map[string]bool{}     // searchMovers entries that inverted
	searched := map[string]bool{} // subjects run
	only := regexp.MustCompile(os.Getenv("PTOASM_TRENDS_ONLY"))
	for _, s := range subjects {
		if !only.MatchString(s.name) {
			continue
		}
		searched[s.name] = true
		base, err := searchRun(s, nil)
		if err != nil {
			first, _, _ := strings.Cut(err.Error(), "\n")
			t.Logf("%s: not searched: %s", s.name, first)
			continue
		}
		vars := slices.Clone(profVars)
		if !s.corpus {
			vars = append(vars, sizeVariants(s)...)
			vars = append(vars, barrierVariants(t, s)...)
		}
		if perSubject > 0 {
			vars = sampleVariants(vars, perSubject, seed, s.name)
		}
		t0, n0 := time.Now(), runs
		for i := range vars {
			v := &vars[i]
			got, err := searchRun(s, v)
			runs++
			if err != nil {
				continue // a doubled size that no longer fits, a limit: not a trend
			}
			rel := float64(got)/float64(base) - 1 // > 0: slower
			if v.up {
				rel = -rel // > 0: against the trend
			}
			if rel <= 0 {
				continue
			}
			key := s.name + ": " + v.desc
			why := ""
			if e := moverFor(key); e != "" {
				why = searchMovers[e]
				if rel > v.noise() {
					seen[e] = true
				}
			}
			invs = append(invs, inversion{key: key, base: base, got: got, rel: rel,
				listedWhy: why, overNoise: rel > v.noise()})
		}
		if testing.Verbose() {
			t.Logf("%s: %d cycles, %d variants, %v", s.name, base, runs-n0, time.Since(t0).Round(time.Millisecond))
		}
	}
	slices.SortFunc(invs, func(a, b inversion) int { return cmp.Compare(b.rel, a.rel) })
	for _, in := range invs {
		note := ""
		switch {
		case in.listedWhy != "":
			note = " (listed: " + in.listedWhy + ")"
		case in.overNoise:
			t.Errorf("%s: %d → %d cycles, %.2f%% against the trend", in.key, in.base, in.got, 100*in.rel)
			continue
		}
		t.Logf("%s: %d → %d cycles, %.3f%% against the trend%s", in.key, in.base, in.got, 100*in.rel, note)
	}
	if full {
		for _, k := range slices.Sorted(mapKeys(searchMovers)) {
			subject, _, _ := strings.Cut(k, ": ")
			if searched[subject] && !seen[k] {
				t.Errorf("searchMovers lists %q, which no longer inverts beyond its noise", k)
			}
		}
	}
	t.Logf("%d subjects, %d variant runs, %d inversions (%d beyond their noise), %v",
		len(subjects), runs, len(invs), countIf(invs, func(i inversion) bool { return i.overNoise }), time.Since(start).Round(time.Millisecond))
}

func countIf[T any](s []T, f func(T) bool) int {
	n := 0
	for _, x := range s {
		if f(x) {
			n++
		}
	}
	return n
}

// sampleVariants draws up to n variants of each class from vars, seeded
// by seed and the subject's name (so adding a program does not reshuffle
// the others), in their order.
func sampleVariants(vars []variant, n int, seed uint64, name string) []variant {
	h := fnv.New64a()
	h.Write([]byte(name))
	r := rand.New(rand.NewPCG(seed, h.Sum64()))
	var out []variant
	for _, class := range []string{"profile", "size", "barrier"} {
		var idx []int
		for i := range vars {
			if vars[i].class == class {
				idx = append(idx, i)
			}
		}
		r.Shuffle(len(idx), func(i, j int) { idx[i], idx[j] = idx[j], idx[i] })
		for _, i := range idx[:min(n, len(idx))] {
			out = append(out, vars[i])
		}
	}
	return out
}
