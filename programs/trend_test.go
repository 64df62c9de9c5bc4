package programs_test

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
	"github.com/ptoasm/ptoasm/pipes"
	"github.com/ptoasm/ptoasm/programs"
)

// The trend checks (docs/profile.md, "Trends") hold the timing model to the
// directions a kernel author compares by: a bigger problem, one more
// barrier, a faster path in the profile, more blocks for the same work, more
// buffers. Each is metamorphic: two runs of a shipped program that differ in
// one thing, and the direction the cycle counts must move. By default (and
// with -short) a subset runs, in well under 30 s; PTOASM_TRENDS=full runs
// every program at the grids docs/profile.md lists (about 20 s).

// trendFull reports whether the full grids run.
func trendFull() bool { return os.Getenv("PTOASM_TRENDS") == "full" }

// trendCase is one timing-only run: a program (its short name), its -D
// defines (NAME=VALUE) and the run whose span is measured ("" for the
// whole launch).
type trendCase struct {
	prog string
	defs []string
	run  string
}

func (c trendCase) String() string {
	s := c.prog
	if len(c.defs) > 0 {
		s += " -D " + strings.Join(c.defs, " -D ")
	}
	return s
}

// with returns c with more defines.
func (c trendCase) with(defs ...string) trendCase {
	c.defs = append(append([]string(nil), c.defs...), defs...)
	return c
}

// trendCycles runs c under prof (nil: the default profile) with the files
// fe reads, and returns the cycles of its measured run.
func trendCycles(t *testing.T, fe asm.Frontend, c trendCase, prof *pipes.Profile) int64 {
	t.Helper()
	path, ok := programs.Find(c.prog)
	if !ok {
		t.Fatalf("no program %s", c.prog)
	}
	var defs []asm.Define
	for _, d := range c.defs {
		n, v, _ := strings.Cut(d, "=")
		defs = append(defs, asm.Define{Name: n, Value: v})
	}
	obj, errs := asm.Assemble(fe, path, defs)
	if errs.HasErrors() || obj == nil {
		t.Fatalf("%s: %v", c, errs)
	}
	m, err := machine.New(obj, machine.Options{Profile: prof, TimingOnly: true})
	if err != nil {
		t.Fatalf("%s: %v", c, err)
	}
	res, err := m.Run()
	if err != nil {
		t.Fatalf("%s: %v", c, err)
	}
	if c.run == "" {
		return res.Cycles
	}
	for i := len(res.Runs) - 1; i >= 0; i-- {
		if r := res.Runs[i]; r.Name == c.run {
			return r.End - r.Start
		}
	}
	t.Fatalf("%s: no run named %s", c, c.run)
	return 0
}

// sizeSeries is one problem dimension swept on one program.
type sizeSeries struct {
	c    trendCase
	name string   // the constant swept
	vals []string // in increasing order of work
	// linear: every value doubles the last, and past the start-up each
	// doubling must about double the added cycles.
	linear bool
	short  bool // in the -short subset
}

// agCase is allgather_gemm as pto-isa measures it (docs/calibration.md),
// at 4 ranks, timed on its pipelined run.
var agCase = trendCase{prog: "allgather_gemm", run: "pipelined",
	defs: []string{"RANKS=4", "BASE_M=128", "COMPUTE_BLOCKS=24", "COMM_BLOCKS=48", "MODE=pipelined"}}

// conv2dCase is conv2d_forward on a whole die (24 blocks).
var conv2dCase = trendCase{prog: "conv2d_forward", defs: []string{"BATCH=4", "N_GRID=6", "WIN=64"}}

var sizeSeriesList = []sizeSeries{
	{c: trendCase{prog: "gemm_db"}, name: "K", vals: []string{"256", "512", "1024", "2048", "4096"}, linear: true, short: true},
	{c: trendCase{prog: "gemm_db"}, name: "N", vals: []string{"128", "256"}},
	{c: trendCase{prog: "gemm_performance", defs: []string{"M=3072", "N=3072"}}, name: "K", vals: []string{"768", "1536", "3072", "6144"}, linear: true},
	{c: trendCase{prog: "gemm_performance", defs: []string{"K=3072", "N=3072"}}, name: "M", vals: []string{"512", "1024", "2048", "4096"}, linear: true},
	{c: trendCase{prog: "gemm_performance", defs: []string{"M=3072", "K=3072"}}, name: "N", vals: []string{"1536", "3072", "6144"}},
	{c: trendCase{prog: "gemm_unit"}, name: "N", vals: []string{"256", "512", "1024", "2048"}, linear: true, short: true},
	{c: trendCase{prog: "gemm_unit"}, name: "K", vals: []string{"256", "512"}},
	{c: trendCase{prog: "gemm_bands"}, name: "BLOCKS", vals: []string{"24", "48", "72", "96"}},
	{c: trendCase{prog: "gemm_ar_compute", run: "timed", defs: []string{"K=6144", "N=1536", "BLOCKS=24"}}, name: "M", vals: []string{"1536", "3072", "6144"}},
	{c: trendCase{prog: "gemm_ar_compute", run: "timed", defs: []string{"M=5504", "N=1536", "BLOCKS=24"}}, name: "K", vals: []string{"1536", "3072", "6144"}},
	{c: trendCase{prog: "softmax"}, name: "ROWS", vals: []string{"1024", "2048", "4096", "8192"}, linear: true, short: true},
	{c: trendCase{prog: "softmax"}, name: "COLS", vals: []string{"256", "512"}},
	{c: trendCase{prog: "vec_add"}, name: "ROWS", vals: []string{"1024", "2048", "4096", "8192", "16384"}, linear: true, short: true},
	{c: trendCase{prog: "vec_add"}, name: "COLS", vals: []string{"256", "512"}},
	{c: trendCase{prog: "topk"}, name: "ROWS", vals: []string{"480", "960", "1920", "3840"}, linear: true},
	{c: trendCase{prog: "fa_softmax"}, name: "NT", vals: []string{"2", "4", "8", "16", "32"}, linear: true, short: true},
	{c: trendCase{prog: "fa_softmax"}, name: "R", vals: []string{"16", "32", "64"}},
	{c: trendCase{prog: "vec_ring"}, name: "ROWS", vals: []string{"100", "200", "400", "800", "1600"}, linear: true, short: true},
	{c: trendCase{prog: "conv"}, name: "COUT", vals: []string{"16", "32", "64", "128"}, short: true},
	{c: trendCase{prog: "conv"}, name: "H", vals: []string{"8", "16", "32", "64"}},
	{c: conv2dCase.with("C1=16", "HIN=12"), name: "N", vals: []string{"1536", "3072", "6144"}},
	{c: conv2dCase.with("HIN=12", "N=3072"), name: "C1", vals: []string{"8", "16", "32", "64"}, linear: true},
	{c: conv2dCase.with("C1=16", "N=3072"), name: "HIN", vals: []string{"6", "12", "24", "48"}, linear: true},
	{c: trendCase{prog: "tget_bw", run: "timed"}, name: "BYTES", vals: []string{"4096", "16384", "65536", "262144", "1048576"}, short: true},
	{c: trendCase{prog: "tget_bw", run: "timed", defs: []string{"ASYNC=1"}}, name: "BYTES", vals: []string{"4096", "16384", "65536", "262144", "1048576"}, short: true},
	{c: agCase.with("K=4096", "N=4096"), name: "M", vals: []string{"2048", "4096", "8192", "16384"}, linear: true},
	{c: agCase.with("M=4096", "N=4096"), name: "K", vals: []string{"1024", "2048", "4096", "8192"}, linear: true},
	{c: agCase.with("M=4096", "K=4096"), name: "N", vals: []string{"1024", "2048", "4096", "8192"}},
	{c: trendCase{prog: "allgather_matmul_ring/ring"}, name: "K", vals: []string{"256", "512", "1024"}, short: true},
	{c: trendCase{prog: "allgather_matmul_ring/ring"}, name: "MS", vals: []string{"64", "128"}},
	{c: trendCase{prog: "allgather_matmul_ring/ring"}, name: "RANKS", vals: []string{"2", "4", "8"}},
	{c: trendCase{prog: "allreduce_ring/ring_final"}, name: "RANKS", vals: []string{"2", "4", "8"}, short: true},
	{c: trendCase{prog: "allreduce_ring/ring_final"}, name: "CHUNK", vals: []string{"64", "128", "256", "1024"}},
	{c: trendCase{prog: "allreduce_ring/mesh"}, name: "CHUNK", vals: []string{"64", "128", "256", "1024"}},
	{c: trendCase{prog: "ffn_grid/unified_fixed"}, name: "T", vals: []string{"16", "32", "64"}},
	{c: trendCase{prog: "ffn_grid/mixed"}, name: "T", vals: []string{"16", "32", "64"}},
}

// Tolerances. A scheduling anomaly (first-come-first-served ports, issue
// order across cores) may move a run by a little against the trend; more
// than this is a model defect to explain.
const (
	trendNoise = 0.005 // a size, block or buffer step
	// linearLo/Hi bound the ratio of successive increments of a linear
	// series (2 when each step doubles the work).
	linearLo, linearHi = 1.6, 2.4
)

// sweep runs c with constant name at each of vals and returns the cycles.
func sweep(t *testing.T, c trendCase, name string, vals []string) []int64 {
	t.Helper()
	cs := make([]int64, len(vals))
	for i, v := range vals {
		cs[i] = trendCycles(t, embedFrontend, c.with(name+"="+v), nil)
	}
	t.Logf("%s: %s = %v: %v", c, name, vals, cs)
	return cs
}

// runSeries sweeps constant name of c over vals in a subtest of its own and
// hands the cycle counts to check; a series outside the -short subset runs
// only under PTOASM_TRENDS=full. The size and block series share it.
func runSeries(t *testing.T, c trendCase, name string, vals []string, short bool, check func(t *testing.T, cs []int64)) {
	if !trendFull() && !short {
		return
	}
	t.Run(c.prog+"/"+name, func(t *testing.T) { check(t, sweep(t, c, name, vals)) })
}

// TestTrendSizes: cycles grow (weakly) with every problem dimension, and
// past the start-up doubling the work about doubles the added time.
func TestTrendSizes(t *testing.T) {
	for _, s := range sizeSeriesList {
		runSeries(t, s.c, s.name, s.vals, s.short, func(t *testing.T, cs []int64) {
			for i := 1; i < len(cs); i++ {
				if float64(cs[i]) < float64(cs[i-1])*(1-trendNoise) {
					t.Errorf("%s: %s %s → %s: %d → %d cycles, more work in less time",
						s.c, s.name, s.vals[i-1], s.vals[i], cs[i-1], cs[i])
				}
			}
			if s.linear {
				checkLinear(t, s, cs)
			}
		})
	}
}

// checkLinear holds a doubling series to (c[i+1]−c[i]) / (c[i]−c[i−1]) ≈ 2.
func checkLinear(t *testing.T, s sizeSeries, cs []int64) {
	t.Helper()
	for i := 2; i < len(cs); i++ {
		a, b := cs[i-1]-cs[i-2], cs[i]-cs[i-1]
		if a <= 0 {
			continue // reported as a decrease, or flat start-up
		}
		if r := float64(b) / float64(a); r < linearLo || r > linearHi {
			t.Errorf("%s: %s %s → %s → %s: increments %d, %d (ratio %.2f), want about 2",
				s.c, s.name, s.vals[i-2], s.vals[i-1], s.vals[i], a, b, r)
		}
	}
}

// blockSeries sweeps the number of blocks over a fixed amount of work.
type blockSeries struct {
	c      trendCase
	name   string // the constant swept
	vals   []string
	weak   bool // the work grows with the blocks (each block the same)
	spread float64
	short  bool
}

var blockSeriesList = []blockSeries{
	// Strong scaling: fixed work, more blocks on idle cores never slower.
	{c: trendCase{prog: "softmax", defs: []string{"ROWS=6144"}}, name: "BLOCKS", vals: []string{"1", "2", "4", "8", "16", "32", "48"}, short: true},
	{c: trendCase{prog: "vec_add", defs: []string{"ROWS=6144"}}, name: "BLOCKS", vals: []string{"1", "2", "4", "8", "16", "32", "48"}, short: true},
	{c: trendCase{prog: "topk", defs: []string{"ROWS=2304"}}, name: "BLOCKS", vals: []string{"6", "12", "24", "48"}},
	{c: trendCase{prog: "gemm_ar_compute", run: "timed", defs: []string{"M=1536", "K=1536", "N=1536"}}, name: "BLOCKS", vals: []string{"1", "2", "4", "8", "12", "24"}},
	{c: trendCase{prog: "vec_ring", defs: []string{"ROWS=1600"}}, name: "BLOCKS", vals: []string{"1", "2", "4", "10", "20"}, short: true},
	// More receive slots (buffers) for the same work never slower.
	{c: trendCase{prog: "vec_ring", defs: []string{"ROWS=1600"}}, name: "SLOTS", vals: []string{"1", "2", "3", "4"}, short: true},
	{c: trendCase{prog: "allgather_matmul_ring/ring"}, name: "NBUF", vals: []string{"1", "2"}, short: true},
	{c: trendCase{prog: "ffn_grid/mixed"}, name: "SLOTS", vals: []string{"1", "2", "4", "8"}},
	// Weak scaling of a compute-bound kernel: every AIC its own rows of C
	// (B shared through the L2), up to a whole die: about flat.
	{c: trendCase{prog: "gemm_db", defs: []string{"K=4096"}}, name: "BLOCKS", vals: []string{"1", "2", "4", "8", "16", "24"}, weak: true, spread: 0.03, short: true},
}

// TestTrendBlocks: more blocks or buffers for the same work never slow a
// kernel, and a compute-bound kernel's blocks on idle cores leave its time
// about flat.
func TestTrendBlocks(t *testing.T) {
	for _, s := range blockSeriesList {
		runSeries(t, s.c, s.name, s.vals, s.short, func(t *testing.T, cs []int64) {
			for i := 1; i < len(cs); i++ {
				if s.weak {
					if d := float64(cs[i])/float64(cs[0]) - 1; d < -s.spread || d > s.spread {
						t.Errorf("%s: %s %s → %s: %d → %d cycles, weak scaling off by %.1f%%",
							s.c, s.name, s.vals[0], s.vals[i], cs[0], cs[i], 100*d)
					}
					continue
				}
				if float64(cs[i]) > float64(cs[i-1])*(1+trendNoise) {
					t.Errorf("%s: %s %s → %s: %d → %d cycles, more resources and slower",
						s.c, s.name, s.vals[i-1], s.vals[i], cs[i-1], cs[i])
				}
			}
		})
	}
}

// trendPrograms are the real programs at sizes that run in well under a
// second each; the barrier and profile checks run on every one.
var trendPrograms = []struct {
	c     trendCase
	short bool
}{
	{c: trendCase{prog: "gemm_db", defs: []string{"K=2048"}}, short: true},
	{c: trendCase{prog: "gemm_performance"}},
	{c: trendCase{prog: "gemm_bands"}},
	{c: trendCase{prog: "gemm_unit"}},
	{c: trendCase{prog: "gemm_ar_compute", run: "timed"}},
	{c: trendCase{prog: "allgather_gemm", run: "pipelined", defs: []string{"MODE=pipelined"}}},
	{c: trendCase{prog: "allgather_matmul_ring/ring"}},
	{c: trendCase{prog: "allreduce_ring/ring_final"}},
	{c: trendCase{prog: "allreduce_ring/mesh"}},
	{c: trendCase{prog: "softmax"}, short: true},
	{c: trendCase{prog: "fa_softmax"}, short: true},
	{c: trendCase{prog: "topk", defs: []string{"ROWS=480"}}},
	{c: trendCase{prog: "vec_add"}, short: true},
	{c: trendCase{prog: "vec_ring"}, short: true},
	{c: trendCase{prog: "conv"}},
	{c: trendCase{prog: "conv2d_forward"}},
	{c: trendCase{prog: "ffn_grid/unified_fixed"}},
	{c: trendCase{prog: "ffn_grid/mixed"}},
	{c: trendCase{prog: "tget_bw", run: "timed", defs: []string{"BYTES=65536"}}, short: true},
	{c: trendCase{prog: "tget_bw", run: "timed", defs: []string{"BYTES=65536", "ASYNC=1"}}},
}

// barrierLine matches a line that issues one instruction into a pipe (an
// optional label, then a tile op, a flag op or an FFTS/dsb op); tile
// declarations are not instructions.
var barrierLine = regexp.MustCompile(`^(\s*)(?:[A-Za-z_]\w*:\s*)?(?:t(?:[a-z0-9_.]*)|set_flag|wait_flag|ffts_set|ffts_wait|dsb)\b`)

// withBarriers is fe with `pipe_barrier ALL` inserted after the chosen
// lines (file → line numbers, 0-based) of the program's files.
func withBarriers(fe asm.Frontend, at map[string]map[int]bool) asm.Frontend {
	read := fe.ReadFile
	fe.ReadFile = func(name string) ([]byte, error) {
		src, err := read(name)
		if err != nil || at[name] == nil {
			return src, err
		}
		var b strings.Builder
		for i, l := range strings.Split(string(src), "\n") {
			if i > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(l)
			if at[name][i] {
				b.WriteString("\n" + barrierLine.FindStringSubmatch(l)[1] + "pipe_barrier ALL")
			}
		}
		return []byte(b.String()), nil
	}
	return fe
}

// barrierSite is one instruction line: a file the program reads and a
// 0-based line number.
type barrierSite struct {
	file string
	line int
}

// barrierSites lists every instruction line of the files program c reads
// (its own and its includes), in file order.
func barrierSites(t *testing.T, c trendCase) []barrierSite {
	t.Helper()
	var files []string
	fe := embedFrontend
	fe.ReadFile = func(name string) ([]byte, error) {
		if !slices.Contains(files, name) {
			files = append(files, name)
		}
		return embedFrontend.ReadFile(name)
	}
	trendCycles(t, fe, c, nil)
	var sites []barrierSite
	for _, f := range files {
		src, err := embedFrontend.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, l := range strings.Split(string(src), "\n") {
			if barrierLine.MatchString(l) && !strings.HasPrefix(strings.TrimSpace(l), "tile ") {
				sites = append(sites, barrierSite{f, i})
			}
		}
	}
	return sites
}

// TestTrendBarrier: a `pipe_barrier ALL` added after any one instruction,
// or after every one, never makes a kernel faster (machine-facts §2.2: it
// waits for every earlier instruction of every pipe, tails included).
func TestTrendBarrier(t *testing.T) {
	for _, p := range trendPrograms {
		if !trendFull() && !p.short {
			continue
		}
		t.Run(p.c.String(), func(t *testing.T) {
			base := trendCycles(t, embedFrontend, p.c, nil)
			sites := barrierSites(t, p.c)
			all := map[string]map[int]bool{}
			for _, st := range sites {
				if all[st.file] == nil {
					all[st.file] = map[int]bool{}
				}
				all[st.file][st.line] = true
				one := map[string]map[int]bool{st.file: {st.line: true}}
				if c := trendCycles(t, withBarriers(embedFrontend, one), p.c, nil); c < base {
					t.Errorf("%s: pipe_barrier ALL after %s:%d: %d cycles, %d without it",
						p.c, st.file, st.line+1, c, base)
				}
			}
			c := trendCycles(t, withBarriers(embedFrontend, all), p.c, nil)
			if c < base {
				t.Errorf("%s: pipe_barrier ALL after each of %d instructions: %d cycles, %d without", p.c, len(sites), c, base)
			}
			t.Logf("%s: %d cycles, %d with a barrier after each of %d instructions", p.c, base, c, len(sites))
		})
	}
}

// parityLet matches a `let` that picks a ping-pong buffer by parity
// (`let %b = %t & 1`); singleBuffered rewrites it to `& 0`, so every
// iteration uses buffer 0 with the same flags and instructions.
var parityLet = regexp.MustCompile(`(?m)^(\s*let %\w+ = .*)& 1\b`)

// singleBuffered is fe with every ping-pong of the program's files
// collapsed onto its first buffer.
func singleBuffered(fe asm.Frontend) asm.Frontend {
	read := fe.ReadFile
	fe.ReadFile = func(name string) ([]byte, error) {
		src, err := read(name)
		if err != nil {
			return src, err
		}
		return parityLet.ReplaceAll(src, []byte("${1}& 0")), nil
	}
	return fe
}

// TestTrendDoubleBuffer: a double-buffered kernel is faster than the same
// kernel with every buffer pair collapsed onto one buffer: the same
// instructions, but each load waits for the previous tile's last reader.
func TestTrendDoubleBuffer(t *testing.T) {
	for _, p := range []struct {
		c     trendCase
		short bool
	}{
		{c: trendCase{prog: "gemm_db", defs: []string{"K=2048"}}, short: true},
		{c: trendCase{prog: "gemm_unit"}},
		{c: trendCase{prog: "vec_add"}, short: true},
		{c: trendCase{prog: "softmax"}, short: true},
		{c: trendCase{prog: "conv"}},
		{c: trendCase{prog: "fa_softmax"}, short: true},
		{c: trendCase{prog: "ffn_grid/unified_fixed"}},
	} {
		if !trendFull() && !p.short {
			continue
		}
		t.Run(p.c.String(), func(t *testing.T) {
			double := trendCycles(t, embedFrontend, p.c, nil)
			single := trendCycles(t, singleBuffered(embedFrontend), p.c, nil)
			t.Logf("%s: %d cycles double-buffered, %d single", p.c, double, single)
			if single <= double {
				t.Errorf("%s: single-buffered %d cycles, double-buffered %d: want the double buffer faster", p.c, single, double)
			}
		})
	}
}

// profileChange is one change to the default profile that only adds
// resources: a faster path or a shorter latency.
type profileChange struct {
	desc string
	set  map[string]string
}

// fasterProfiles lists, for every bandwidth (and L2 size, queue depth,
// core count), the value ×2 and ×8, and for every latency, head, slope,
// tail and fixed cost, half and zero; the vector intrinsics change together
// (all heads, all slopes, all tails), since each program uses a few.
func fasterProfiles(t *testing.T) []profileChange {
	t.Helper()
	prof := pipes.DefaultProfile()
	var out []profileChange
	add := func(desc string, set map[string]string) { out = append(out, profileChange{desc, set}) }
	groups := map[string]map[string]string{}
	for _, k := range prof.Keys() {
		v, _ := prof.Get(k)
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			continue // an enum (topology, visibility)
		}
		num := likeValue(v)
		switch {
		case k == "l2.usable":
			add(k+"=1", map[string]string{k: "1"})
		case more(k):
			for _, m := range []float64{2, 8} {
				add(fmt.Sprintf("%s×%g", k, m), map[string]string{k: num(f * m)})
			}
		case strings.HasPrefix(k, "vec.v") || strings.HasPrefix(k, "vec.scatter"):
			suf := k[strings.LastIndexByte(k, '.'):]
			for _, d := range []float64{2, 0} {
				g := fmt.Sprintf("vec.*%s %s", suf, map[float64]string{2: "/2", 0: "=0"}[d])
				if groups[g] == nil {
					groups[g] = map[string]string{}
				}
				x := 0.0
				if d != 0 {
					x = float64(int64(f) / 2)
				}
				groups[g][k] = num(x)
			}
		case less(k) && f != 0:
			lo := "0"
			if strings.HasPrefix(k, "twait.") {
				lo = "1"
			}
			half := num(f / 2) // an integer's half truncates, as int64(f) / 2
			add(k+"/2", map[string]string{k: half})
			add(k+"="+lo, map[string]string{k: lo})
		}
	}
	for _, g := range []string{".head /2", ".head =0", ".slope /2", ".slope =0", ".tail /2", ".tail =0"} {
		add("vec.*"+g, groups["vec.*"+g])
	}
	return out
}

// more reports whether raising key k's value only adds resources.
func more(k string) bool {
	return strings.HasSuffix(k, "bw") || strings.HasPrefix(k, "queue.") ||
		k == "l2.size" || k == "aic_per_rank" || k == "aiv_per_rank"
}

// less reports whether lowering key k's value only removes time.
func less(k string) bool {
	for _, s := range []string{".latency", ".head", ".slope", ".tail"} {
		if strings.HasSuffix(k, s) {
			return true
		}
	}
	for _, p := range []string{"cube.repeat.", "sync.", "scalar."} {
		if strings.HasPrefix(k, p) {
			return true
		}
	}
	switch k {
	case "vec.count_floor", "twait.poll_interval", "link.stream_overhead", "block.start", "kernel.start":
		return true
	}
	return false
}

// profileNoise is how much a faster profile may slow a run: an earlier
// transfer can take a shared port (L2, HBM, a link) first and delay another
// core's, a first-come-first-served anomaly the hardware has too.
const profileNoise = 0.01

// TestTrendProfile: raising a bandwidth or lowering a latency in the
// profile never slows a program by more than a scheduling anomaly.
func TestTrendProfile(t *testing.T) {
	changes := fasterProfiles(t)
	t.Logf("%d profile changes", len(changes))
	for _, p := range trendPrograms {
		if !trendFull() && !p.short {
			continue
		}
		t.Run(p.c.String(), func(t *testing.T) {
			base := trendCycles(t, embedFrontend, p.c, nil)
			worst, worstDesc := 0.0, ""
			for _, ch := range changes {
				prof := pipes.DefaultProfile()
				for k, v := range ch.set {
					if err := prof.Set(k, v); err != nil {
						t.Fatalf("%s: %v", ch.desc, err)
					}
				}
				c := trendCycles(t, embedFrontend, p.c, prof)
				d := float64(c)/float64(base) - 1
				if d > worst {
					worst, worstDesc = d, ch.desc
				}
				if d > profileNoise {
					t.Errorf("%s: %s: %d cycles, %d with the default profile (+%.2f%%)", p.c, ch.desc, c, base, 100*d)
				}
			}
			if worstDesc != "" {
				t.Logf("%s: largest slow-down %+.2f%% (%s)", p.c, 100*worst, worstDesc)
			}
		})
	}
}

// TestTrendComm: remote transfers cost more over more hops, and the L2
// never makes a run slower than going to HBM for every byte.
func TestTrendComm(t *testing.T) {
	type pair struct {
		c    trendCase
		slow map[string]string // the profile change that removes a resource
		what string
		// strictlyMore: the change must cost time (transfers beyond a
		// neighbour, data read more than once), not only never save it.
		short, strictlyMore bool
	}
	ring := map[string]string{"link.topology": "ring"}
	noL2 := map[string]string{"l2.size": "0"}
	pairs := []pair{
		// On a ring the transfers between non-neighbours take several hops
		// (and share the links on the way): never faster than the mesh.
		{c: trendCase{prog: "allreduce_ring/mesh", defs: []string{"RANKS=8"}}, slow: ring, what: "ring topology", short: true, strictlyMore: true},
		{c: agCase.with("RANKS=8", "M=8192", "K=4096", "N=4096"), slow: ring, what: "ring topology", strictlyMore: true},
		{c: trendCase{prog: "allgather_gemm", run: "pipelined", defs: []string{"MODE=pipelined", "RANKS=8", "M=1024"}}, slow: ring, what: "ring topology", short: true, strictlyMore: true},
		// A neighbour ring on a ring topology takes one hop a step: the same.
		{c: trendCase{prog: "allreduce_ring/ring_final", defs: []string{"RANKS=8", "NEIGHBOR=1"}}, slow: ring, what: "ring topology"},
		// Re-reads served by the L2 are not slower than HBM reads.
		{c: trendCase{prog: "gemm_performance"}, slow: noL2, what: "no L2", short: true, strictlyMore: true},
		{c: trendCase{prog: "gemm_ar_compute", run: "timed"}, slow: noL2, what: "no L2", strictlyMore: true},
		{c: agCase.with("M=4096", "K=4096", "N=4096"), slow: noL2, what: "no L2", strictlyMore: true},
		{c: trendCase{prog: "tget_bw", run: "timed", defs: []string{"BYTES=65536"}}, slow: noL2, what: "no L2", short: true, strictlyMore: true},
		// Cold reads miss either way: no L2 is not faster (it was 19 %
		// faster on vec_add when the L2's miss latency vanished with it).
		{c: trendCase{prog: "vec_add"}, slow: noL2, what: "no L2", short: true},
		{c: trendCase{prog: "softmax"}, slow: noL2, what: "no L2", short: true},
		{c: trendCase{prog: "conv2d_forward"}, slow: noL2, what: "no L2"},
	}
	for _, p := range pairs {
		if !trendFull() && !p.short {
			continue
		}
		t.Run(p.what+"/"+p.c.String(), func(t *testing.T) {
			prof := pipes.DefaultProfile()
			for k, v := range p.slow {
				if err := prof.Set(k, v); err != nil {
					t.Fatal(err)
				}
			}
			base := trendCycles(t, embedFrontend, p.c, nil)
			slow := trendCycles(t, embedFrontend, p.c, prof)
			t.Logf("%s: %d cycles, %d with %s", p.c, base, slow, p.what)
			if float64(slow) < float64(base)*(1-trendNoise) || (p.strictlyMore && slow <= base) {
				t.Errorf("%s: %s: %d cycles, %d with the default profile", p.c, p.what, slow, base)
			}
		})
	}
}

// likeValue formats numbers the way the profile value v is written: an
// integer parameter stays an integer (a --set of 2.5 to one is refused).
func likeValue(v string) func(float64) string {
	if !strings.ContainsAny(v, ".e") {
		return func(x float64) string { return strconv.FormatInt(int64(x), 10) }
	}
	return func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
}
