package machine_test

import (
	"flag"
	"fmt"
	"math"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
	"github.com/ptoasm/ptoasm/pipes"
)

// The calibration report (issue 22): every measured kernel-level anchor in the
// repository, predicted by a timing-only run with the default profile, next to
// its measurement, the error and the pipe that bounds it. It is generated, not
// typed:
//
//	go test ./machine -run TestCalibrationReport -calib -timeout 30m
//
// writes docs/calibration.md (about a minute: the 8-rank anchors take seconds
// each). Without -calib the test is skipped; TestCalibrationAnchors pins the
// cheap anchors in a band on every `go test`.
var (
	calib    = flag.Bool("calib", false, "run every calibration anchor and write docs/calibration.md")
	calibSet = flag.String("calibset", "", "with -calib: key=value,... profile changes to try; prints the report instead of writing it")
)

// calibProfile is the profile the anchors run with: the default, changed by -calibset.
func calibProfile(t testing.TB) *pipes.Profile {
	prof := pipes.DefaultProfile()
	if *calibSet == "" {
		return prof
	}
	prof = prof.Clone()
	for _, kv := range strings.Split(*calibSet, ",") {
		k, v, _ := strings.Cut(kv, "=")
		if err := prof.Set(strings.TrimSpace(k), strings.TrimSpace(v)); err != nil {
			t.Fatalf("-calibset: %v", err)
		}
	}
	return prof
}

// anchor is one measured number the model should reproduce.
type anchor struct {
	name   string
	group  string // allgather_gemm, tget_bw, gemm_performance
	source string
	// heldOut anchors were not looked at when a profile value was fitted.
	heldOut bool
	// fit names what a fitted anchor was used for (the report's last column).
	fit string
	// measured is in µs.
	measured float64
	path     string
	defs     []asm.Define
	// run is the named run whose time is compared ("" = the whole launch).
	run string
	// deviceTimer: the measurement is a timer the kernel reads itself
	// (tget_bw's SYS_CNT), so it excludes the kernel's start-up.
	deviceTimer bool
	// hostTimed: the measurement is a host clock around the launch and
	// aclrtSynchronizeStream (gemm_ar's compute-only benchmark), so it is
	// the kernel's own time plus host.launch_overhead, which holds the
	// launch, the start-up and the stream synchronisation.
	hostTimed bool
	// bytes moved, for transfer anchors.
	bytes int64
	// shape facts for the trend checks.
	ranks   int
	m, k, n int64
}

// allgatherAnchor is one row of pto-isa's measured table
// (kernels/manual/a2a3/allgather_gemm README, "实测性能": A3 910B1, aclrtEvent,
// 3 warm-ups and 10 timed runs), compared with the pipelined run.
func allgatherAnchor(ranks int, m, k, n int64, ms float64, heldOut bool) anchor {
	d := func(name string, v int64) asm.Define { return asm.Define{Name: name, Value: fmt.Sprint(v)} }
	return anchor{
		name:     fmt.Sprintf("allgather_gemm %d ranks %d×%d×%d", ranks, m, k, n),
		group:    "allgather_gemm",
		source:   "pto-isa kernels/manual/a2a3/allgather_gemm README (programs/allgather_gemm/README.md)",
		heldOut:  heldOut,
		fit:      "fit (link.stream_overhead)",
		measured: ms * 1000,
		path:     "../programs/allgather_gemm/allgather_gemm.pto",
		defs: []asm.Define{d("RANKS", int64(ranks)), d("M", m), d("K", k), d("N", n), d("BASE_M", 128),
			d("COMPUTE_BLOCKS", 24), d("COMM_BLOCKS", 48), {Name: "MODE", Value: "pipelined"}},
		run:   "pipelined",
		ranks: ranks, m: m, k: k, n: n,
	}
}

// tgetAnchor is one device-side point of pto-isa's tget_bandwidth README
// ("Measured Performance": "Device Avg Cycles", SYS_CNT ticks around the timed
// loop, 50 MHz, i.e. 20 ns a tick), compared with the program's "timed" run
// (after a warm-up run, as the kernel times its loop after warm-up
// iterations). The 4 KB and 4 MB points fitted link.latency (TGET) and
// sdma.*, link.stream_bw (TGET_ASYNC); the middle sizes are held out. The
// README's host-timed GB/s carry launch and stream-sync time that is not the
// kernel's; programs/tget_bw/README.md lists them for context.
func tgetAnchor(bytes int64, async bool, ticks float64, heldOut bool) anchor {
	a := 0
	name, fit := "TGET", "fit (link.latency)"
	if async {
		a, name, fit = 1, "TGET_ASYNC", "fit (sdma.*, link.stream_bw)"
	}
	return anchor{
		name:     fmt.Sprintf("tget_bw %s %d KiB (device)", name, bytes>>10),
		group:    "tget_bw",
		heldOut:  heldOut,
		fit:      fit,
		source:   "pto-isa kernels/manual/a2a3/tget_bandwidth README (programs/tget_bw/README.md)",
		measured: ticks * sysCntTickUS,
		path:     "../programs/tget_bw/tget_bw.pto",
		defs: []asm.Define{{Name: "BYTES", Value: fmt.Sprint(bytes)},
			{Name: "ASYNC", Value: fmt.Sprint(a)}},
		run:         "timed",
		deviceTimer: true,
		bytes:       bytes,
	}
}

// deviceSpan is what a timer read inside the kernel sees of run rs: its span
// less the kernel's start-up (kernel.start), which passes before the kernel's
// first instruction reads the counter.
func deviceSpan(prof *pipes.Profile, rs machine.RunStat) int64 {
	return rs.End - rs.Start - prof.KernelStart
}

// sysCntTickUS is one tick of the A2/A3 system counter in µs: 50 MHz (pto-isa
// kernels/automode/a2a3/flash_atten/main.cpp, g_sys_cnt_multiple = 20 ns,
// "Default A2/A3").
const sysCntTickUS = 0.02

// gemmPerfAnchor is one row of pto-isa's gemm_performance README ("Measured
// Performance (Reference)": A3, 24 cores, m = k = n, fp16 in, fp32 out), run
// with the kernel's 4 x 6 core grid and its base tiles. The rows were held out
// until they chose between sourced values: dma.gm_l1.bw (CANN-ini's 110 B/cycle
// over the 128 assumed from the AIV's fit), l2.usable and l2.miss_latency
// (docs/profile.md 'L2'), and their profiler TSTORE ratios fitted
// dma.l0c_gm.bw, so they count as fitted now.
func gemmPerfAnchor(s int64, ms float64) anchor {
	d := func(name string, v int64) asm.Define { return asm.Define{Name: name, Value: fmt.Sprint(v)} }
	return anchor{
		name:     fmt.Sprintf("gemm_performance %d³", s),
		group:    "gemm_performance",
		source:   "pto-isa kernels/manual/a2a3/gemm_performance README (programs/gemm_performance/README.md)",
		fit:      "fit (dma.gm_l1.bw, l2.*: chosen by them; dma.l0c_gm.bw: its TSTORE ratio)",
		measured: ms * 1000,
		path:     "../programs/gemm_performance/gemm_performance.pto",
		defs:     []asm.Define{d("M", s), d("K", s), d("N", s)},
		ranks:    1, m: s, k: s, n: s,
	}
}

// conv2dAnchor is one row of pto-isa's conv2d_forward README ("Measured
// Performance (Reference)": A3, 24 cores, fp16 in and out, f32 in L0C;
// X = [4, c1, hin, win, 16], K = [c1·9, n/16, 16, 16]), run with the kernel's
// grid (one image of the batch of 4 per block row, 6 blocks along the output
// channels) and base tiles. Held out: no profile value was fitted or chosen
// with these rows (docs/profile.md "Held-out kernels").
func conv2dAnchor(c1, hin, win, n int64, ms float64) anchor {
	d := func(name string, v int64) asm.Define { return asm.Define{Name: name, Value: fmt.Sprint(v)} }
	const batch = 4
	return anchor{
		name:     fmt.Sprintf("conv2d_forward X=[%d,%d,%d,%d,16] N=%d", batch, c1, hin, win, n),
		group:    "conv2d_forward",
		source:   "pto-isa kernels/manual/a2a3/conv2d_forward README (programs/conv2d_forward/README.md)",
		heldOut:  true,
		measured: ms * 1000,
		path:     "../programs/conv2d_forward/conv2d_forward.pto",
		defs: []asm.Define{d("BATCH", batch), d("N_GRID", 6), d("C1", c1), d("HIN", hin), d("WIN", win),
			d("N", n)},
		// The implicit GEMM: m = pixels (stride 1, padding 1), k = c1·9·16.
		ranks: 1, m: batch * hin * win, k: c1 * 9 * 16, n: n,
	}
}

// gemmARAnchor is the "Compute-only" figure of pto-isa's gemm_ar README
// ("Measured Performance (Reference)": 8-card Ascend 910B, M = 5416, K = 6144,
// N = 1408 padded to 5504 × 1536, 258 tiles on 24 compute blocks; every rank
// runs the GEMM kernel alone, host-timed around launch and stream sync after
// warm-up launches), compared with the program's "timed" run after its
// warm-up run. Held out: no profile value was fitted or chosen with it.
func gemmARAnchor(us float64) anchor {
	d := func(name string, v int64) asm.Define { return asm.Define{Name: name, Value: fmt.Sprint(v)} }
	return anchor{
		name:      "gemm_ar_compute 5504×6144×1536 (host-timed)",
		group:     "gemm_ar_compute",
		source:    "pto-isa kernels/manual/a2a3/gemm_ar README (programs/gemm_ar_compute/README.md)",
		heldOut:   true,
		measured:  us,
		path:      "../programs/gemm_ar_compute/gemm_ar_compute.pto",
		defs:      []asm.Define{d("M", 5504), d("K", 6144), d("N", 1536), d("BLOCKS", 24)},
		run:       "timed",
		hostTimed: true,
		ranks:     1, m: 5504, k: 6144, n: 1536,
	}
}

// topkAnchor is a row of pto-isa's automode topk README ("Measured
// Performance": task_duration on A3, 48 AIVs, f32, 1024 of 1280 columns,
// k = 1000), the program with ROWS rows. No value was fitted to it; the
// 4800-row figure was looked at when vmrgsort4's charge was read from
// pto-isa's cost model (docs/profile.md "Merge sort"), which kept the
// source's reading.
func topkAnchor(rows int64, us float64) anchor {
	return anchor{
		name:     fmt.Sprintf("topk [%d, 1024] f32, k = 1000", rows),
		group:    "topk",
		source:   "pto-isa kernels/automode/a2a3/topk README (programs/topk/README.md)",
		heldOut:  true,
		measured: us,
		path:     "../programs/topk/topk.pto",
		defs:     []asm.Define{{Name: "ROWS", Value: fmt.Sprint(rows)}},
	}
}

// calibrationAnchors lists every anchor. The tget_bw 4 KB and 4 MB points were
// used to fit link.latency, link.stream_bw and sdma.*, the allgather_gemm rows
// not held out to fit link.stream_overhead, the gemm_performance rows to choose
// dma.gm_l1.bw and the L2's usable share and miss latency (docs/profile.md).
// The held-out rows (three allgather_gemm rows, the tget_bw middle sizes,
// conv2d_forward, gemm_ar_compute and topk) were not looked at by any fit and
// must stay so.
// (docs/profile.md "Calibration report").
func calibrationAnchors() []anchor {
	return []anchor{
		allgatherAnchor(2, 2048, 2048, 1024, 0.297, false),
		allgatherAnchor(2, 4096, 4096, 2048, 1.098, true),
		allgatherAnchor(2, 4096, 4096, 4096, 1.231, false),
		allgatherAnchor(2, 8192, 4096, 4096, 2.519, false),
		allgatherAnchor(4, 4096, 4096, 4096, 0.986, true),
		allgatherAnchor(4, 8192, 4096, 4096, 1.648, false),
		allgatherAnchor(8, 8192, 4096, 4096, 1.439, false),
		allgatherAnchor(8, 16384, 4096, 4096, 2.585, true),
		tgetAnchor(4<<10, false, 36.28, false),
		tgetAnchor(16<<10, false, 149.98, true),
		tgetAnchor(64<<10, false, 579.62, true),
		tgetAnchor(256<<10, false, 2409.72, true),
		tgetAnchor(1<<20, false, 9317.93, true),
		tgetAnchor(4<<20, false, 37924.12, false),
		tgetAnchor(4<<10, true, 136.51, false),
		tgetAnchor(16<<10, true, 161.40, true),
		tgetAnchor(64<<10, true, 277.25, true),
		tgetAnchor(256<<10, true, 745.54, true),
		tgetAnchor(1<<20, true, 2624.24, true),
		tgetAnchor(4<<20, true, 10273.68, false),
		gemmPerfAnchor(1536, 0.0388),
		gemmPerfAnchor(3072, 0.2067),
		gemmPerfAnchor(6144, 1.5060),
		gemmPerfAnchor(7680, 3.1680),
		conv2dAnchor(8, 8, 48, 1536, 0.0322),
		conv2dAnchor(16, 12, 64, 3072, 0.1473),
		conv2dAnchor(24, 12, 96, 4608, 0.4709),
		conv2dAnchor(32, 16, 96, 6144, 1.0979),
		conv2dAnchor(40, 15, 128, 7680, 2.1312),
		gemmARAnchor(368.1),
		topkAnchor(2304, 161.375),
		topkAnchor(3456, 238.819),
		topkAnchor(4800, 324.106),
	}
}

// outcome is an anchor's prediction.
type outcome struct {
	a          anchor
	predicted  float64
	cycles     int64
	bottleneck string
	wall       time.Duration
}

func (o outcome) err() float64 { return (o.predicted - o.a.measured) / o.a.measured }

// tflops is the per-rank TFLOPS of a GEMM anchor (allgather_gemm, gemm_performance,
// conv2d_forward as its implicit GEMM) at time us.
func (a anchor) tflops(us float64) float64 {
	return 2 * float64(a.m*a.k*a.n) / (us * 1e-6) / 1e12
}

func runAnchor(t testing.TB, a anchor) outcome {
	t.Helper()
	prof := calibProfile(t)
	t0 := time.Now()
	r := runPath(t, a.path, machine.Options{Profile: prof, TimingOnly: true}, a.defs...)
	o := outcome{a: a, wall: time.Since(t0), cycles: r.Cycles}
	for _, f := range r.Faults {
		t.Errorf("%s: fault: %s", a.name, f)
	}
	span := r.Cycles
	if a.run != "" {
		found := false
		for _, rs := range r.Runs {
			if rs.Name == a.run {
				span, found = rs.End-rs.Start, true
				if a.deviceTimer {
					span = deviceSpan(prof, rs)
				}
				if a.hostTimed {
					span = deviceSpan(prof, rs) + prof.LaunchOverhead
				}
				break
			}
		}
		if !found {
			t.Fatalf("%s: no run named %q", a.name, a.run)
		}
	}
	o.cycles = span
	o.predicted = prof.Seconds(span) * 1e6
	o.bottleneck = bottleneck(r)
	return o
}

// bottleneck names the pipe with the highest mean utilisation over the cores
// of one kind that ran it ("aic MTE2 74%"), the scalar included: the pipe that
// bounds the run when the cores are busy, and a hint of the latency chain when
// no pipe is.
func bottleneck(r *machine.Result) string {
	type acc struct {
		sum float64
		n   int
	}
	by := map[string]*acc{}
	for _, p := range r.Pipes {
		// "r3.aic17" -> "aic": one figure per core kind over every rank.
		kind := p.Core
		if i := strings.IndexByte(kind, '.'); i >= 0 {
			kind = kind[i+1:]
		}
		kind = strings.TrimRight(kind, "0123456789")
		key := kind + " " + p.Pipe
		x := by[key]
		if x == nil {
			x = &acc{}
			by[key] = x
		}
		x.sum += p.Utilisation
		x.n++
	}
	keys := make([]string, 0, len(by))
	for k := range by {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	best, bestU := "-", -1.0
	for _, k := range keys {
		if u := by[k].sum / float64(by[k].n); u > bestU {
			best, bestU = k, u
		}
	}
	return fmt.Sprintf("%s %.0f%%", best, 100*bestU)
}

// mape is the mean absolute percentage error of os.
func mape(os []outcome) float64 {
	if len(os) == 0 {
		return math.NaN()
	}
	s := 0.0
	for _, o := range os {
		s += math.Abs(o.err())
	}
	return 100 * s / float64(len(os))
}

// calibrationReport formats the outcomes as the markdown of docs/calibration.md.
func calibrationReport(outs []outcome) string {
	var b strings.Builder
	b.WriteString("# Calibration report\n\n")
	b.WriteString("Generated by `go test ./machine -run TestCalibrationReport -calib -timeout 30m`; do not edit.\n")
	b.WriteString("Every anchor is a timing-only run of the program with the default profile\n")
	b.WriteString("(`pipes/profiles/a2a3.txt`); docs/profile.md says how the profile was fitted.\n")
	b.WriteString("tget_bw anchors are pto-isa's device-side averages (SYS_CNT ticks of 20 ns) against the\n")
	b.WriteString("program's `timed` run, which follows a warm-up run as the kernel's timed loop follows its warm-up,\n")
	b.WriteString("less the kernel's start-up (`kernel.start`), which a timer read inside the kernel does not see.\n")
	b.WriteString("gemm_ar_compute's figure is host-timed (launch to stream sync): its `timed` run less\n")
	b.WriteString("`kernel.start`, plus `host.launch_overhead`. conv2d_forward, gemm_ar_compute and topk are held\n")
	b.WriteString("out: no profile value was fitted or chosen with them (docs/profile.md \"Held-out kernels\").\n\n")
	b.WriteString("| anchor | predicted | measured | error | bottleneck (mean util.) | fit / held out |\n")
	b.WriteString("|---|---|---|---|---|---|\n")
	for _, o := range outs {
		ho := o.a.fit
		if o.a.heldOut {
			ho = "held out"
		}
		fmtv := "%.1f µs"
		if o.a.measured < 100 {
			fmtv = "%.2f µs"
		}
		fmt.Fprintf(&b, "| %s | "+fmtv+" | "+fmtv+" | %+.1f%% | %s | %s |\n", o.a.name,
			o.predicted, o.a.measured, 100*o.err(), o.bottleneck, ho)
	}
	// One row per program, in the order the anchors list them.
	var all, held, fitted []outcome
	var groups []string
	byGroup := map[string][]outcome{}
	for _, o := range outs {
		all = append(all, o)
		if o.a.heldOut {
			held = append(held, o)
		} else {
			fitted = append(fitted, o)
		}
		if _, ok := byGroup[o.a.group]; !ok {
			groups = append(groups, o.a.group)
		}
		byGroup[o.a.group] = append(byGroup[o.a.group], o)
	}
	b.WriteString("\n| set | anchors | MAPE |\n|---|---|---|\n")
	fmt.Fprintf(&b, "| all | %d | %.1f%% |\n", len(all), mape(all))
	for _, g := range groups {
		fmt.Fprintf(&b, "| %s | %d | %.1f%% |\n", g, len(byGroup[g]), mape(byGroup[g]))
	}
	fmt.Fprintf(&b, "| fitted on | %d | %.1f%% |\n", len(fitted), mape(fitted))
	fmt.Fprintf(&b, "| held out | %d | %.1f%% |\n", len(held), mape(held))

	b.WriteString("\n## Trends\n\n")
	for _, tr := range calibrationTrends(outs) {
		ok := "RIGHT"
		if !tr.ok {
			ok = "WRONG"
		}
		fmt.Fprintf(&b, "- %s: **%s**. %s\n", tr.name, ok, tr.detail)
	}
	return b.String()
}

type trend struct {
	name   string
	ok     bool
	detail string
}

// calibrationTrends checks the trends issue 22 names on the allgather_gemm
// anchors: more ranks are faster at 8192×4096×4096 (measured 2.52, 1.65,
// 1.44 ms) and at 8 ranks the larger M reaches more TFLOPS (191 → 213); the
// 7680³ drop of gemm_performance; and the held-out conv2d_forward rows'
// rising TFLOPS (169 → 319).
func calibrationTrends(outs []outcome) []trend {
	find := func(ranks int, m int64) *outcome {
		for i := range outs {
			o := &outs[i]
			if o.a.group == "allgather_gemm" && o.a.ranks == ranks && o.a.m == m && o.a.k == 4096 && o.a.n == 4096 {
				return o
			}
		}
		return nil
	}
	var trs []trend
	r2, r4, r8 := find(2, 8192), find(4, 8192), find(8, 8192)
	if r2 != nil && r4 != nil && r8 != nil {
		trs = append(trs, trend{
			name: "more ranks faster at 8192×4096×4096",
			ok:   r2.predicted > r4.predicted && r4.predicted > r8.predicted,
			detail: fmt.Sprintf("predicted 2/4/8 ranks %.3f / %.3f / %.3f ms; measured %.3f / %.3f / %.3f ms.",
				r2.predicted/1000, r4.predicted/1000, r8.predicted/1000, r2.a.measured/1000, r4.a.measured/1000, r8.a.measured/1000),
		})
	}
	s, l := find(8, 8192), find(8, 16384)
	if s != nil && l != nil {
		ts, tl := s.a.tflops(s.predicted), l.a.tflops(l.predicted)
		trs = append(trs, trend{
			name: "larger M, more TFLOPS at 8 ranks",
			ok:   tl > ts,
			detail: fmt.Sprintf("predicted 8192 → 16384: %.1f → %.1f TFLOPS; measured %.1f → %.1f.",
				ts, tl, s.a.tflops(s.a.measured), l.a.tflops(l.a.measured)),
		})
	}
	g6, g7 := findGemm(outs, 6144), findGemm(outs, 7680)
	if g6 != nil && g7 != nil {
		t6, t7 := g6.a.tflops(g6.predicted), g7.a.tflops(g7.predicted)
		trs = append(trs, trend{
			name: "7680³ drop (gemm_performance, fewer TFLOPS at 7680³ than at 6144³)",
			ok:   t7 < t6,
			detail: fmt.Sprintf("predicted 6144³ → 7680³: %.1f → %.1f TFLOPS; measured %.1f → %.1f.",
				t6, t7, g6.a.tflops(g6.a.measured), g7.a.tflops(g7.a.measured)),
		})
	}
	var conv []*outcome
	for i := range outs {
		if outs[i].a.group == "conv2d_forward" {
			conv = append(conv, &outs[i])
		}
	}
	if len(conv) > 1 {
		ok := true
		var pred, meas []string
		for i, o := range conv {
			if i > 0 && o.a.tflops(o.predicted) <= conv[i-1].a.tflops(conv[i-1].predicted) {
				ok = false
			}
			pred = append(pred, fmt.Sprintf("%.1f", o.a.tflops(o.predicted)))
			meas = append(meas, fmt.Sprintf("%.1f", o.a.tflops(o.a.measured)))
		}
		trs = append(trs, trend{
			name: "conv2d_forward, more TFLOPS at each larger shape",
			ok:   ok,
			detail: fmt.Sprintf("predicted %s TFLOPS; measured %s.",
				strings.Join(pred, " → "), strings.Join(meas, " → ")),
		})
	}
	return trs
}

func findGemm(outs []outcome, s int64) *outcome {
	for i := range outs {
		if o := &outs[i]; o.a.group == "gemm_performance" && o.a.m == s {
			return o
		}
	}
	return nil
}

// TestCalibrationReport regenerates docs/calibration.md (-calib).
func TestCalibrationReport(t *testing.T) {
	if !*calib {
		t.Skip("run with -calib to regenerate docs/calibration.md")
	}
	var outs []outcome
	for _, a := range calibrationAnchors() {
		o := runAnchor(t, a)
		t.Logf("%s: predicted %.2f, measured %.2f (%+.1f%%), %s, %.1f s", a.name, o.predicted, a.measured, 100*o.err(), o.bottleneck, o.wall.Seconds())
		outs = append(outs, o)
	}
	rep := calibrationReport(outs)
	if *calibSet != "" {
		t.Logf("-calibset %s: docs/calibration.md left alone\n%s", *calibSet, rep)
		return
	}
	if err := os.WriteFile("../docs/calibration.md", []byte(rep), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", rep)
}

// TestCalibrationAnchors pins the anchors that simulate in well under a
// second inside a band around their measurement, so a change that breaks the
// model's fidelity fails CI. The band is each anchor's error in
// docs/calibration.md plus a margin; tighten it when the model improves.
// (Every tget_bw anchor is also pinned by TestTGETBandwidth.)
func TestCalibrationAnchors(t *testing.T) {
	bands := map[string][2]float64{ // allowed error range, as a fraction of the measurement
		"allgather_gemm 2 ranks 2048×2048×1024":       {-0.31, -0.19},
		"allgather_gemm 2 ranks 4096×4096×4096":       {-0.09, 0.03},
		"allgather_gemm 4 ranks 4096×4096×4096":       {0.01, 0.12},  // held out
		"tget_bw TGET 64 KiB (device)":                {-0.03, 0.07}, // held out
		"tget_bw TGET_ASYNC 256 KiB (device)":         {-0.03, 0.07}, // held out
		"gemm_performance 1536³":                      {-0.25, -0.14},
		"gemm_performance 3072³":                      {-0.08, 0.03},
		"conv2d_forward X=[4,8,8,48,16] N=1536":       {-0.40, -0.27}, // held out
		"conv2d_forward X=[4,16,12,64,16] N=3072":     {-0.08, 0.04},  // held out
		"topk [4800, 1024] f32, k = 1000":             {-0.43, -0.31}, // held out
		"gemm_ar_compute 5504×6144×1536 (host-timed)": {-0.04, 0.08},  // held out
	}
	n := 0
	for _, a := range calibrationAnchors() {
		band, ok := bands[a.name]
		if !ok {
			continue
		}
		n++
		o := runAnchor(t, a)
		if e := o.err(); e < band[0] || e > band[1] {
			t.Errorf("%s: predicted %.1f, measured %.1f: error %+.1f%% outside [%+.0f%%, %+.0f%%] (docs/calibration.md)",
				a.name, o.predicted, a.measured, 100*e, 100*band[0], 100*band[1])
		}
	}
	if n != len(bands) {
		t.Fatalf("%d of %d banded anchors found in calibrationAnchors", n, len(bands))
	}
}

// TestL2CapacityDrop pins the mechanism behind gemm_performance's measured
// 7680³ drop (308 → 286 TFLOPS): at 7680³ the B panels a core tile row
// re-reads (118 MB of B plus A bands and C write-backs between two reads of a
// panel) no longer fit the usable share of the L2, so every row pays their
// fill; at 6144³ they do. With the whole L2 usable (l2.usable=1) both fit and
// the drop must vanish.
func TestL2CapacityDrop(t *testing.T) {
	if testing.Short() {
		t.Skip("two 6144³/7680³ runs per profile")
	}
	tflops := func(set string) (t6, t7 float64) {
		prof := pipes.DefaultProfile().Clone()
		if set != "" {
			k, v, _ := strings.Cut(set, "=")
			if err := prof.Set(k, v); err != nil {
				t.Fatal(err)
			}
		}
		for _, s := range []int64{6144, 7680} {
			a := gemmPerfAnchor(s, 1)
			r := runPath(t, a.path, machine.Options{Profile: prof, TimingOnly: true}, a.defs...)
			f := a.tflops(prof.Seconds(r.Cycles) * 1e6)
			if s == 6144 {
				t6 = f
			} else {
				t7 = f
			}
		}
		return t6, t7
	}
	if t6, t7 := tflops(""); !(t7 < 0.98*t6) {
		t.Errorf("default profile: %.1f TFLOPS at 6144³, %.1f at 7680³: no drop (measured 308 → 286)", t6, t7)
	}
	if t6, t7 := tflops("l2.usable=1"); t7 < 0.995*t6 {
		t.Errorf("l2.usable=1: %.1f TFLOPS at 6144³, %.1f at 7680³: a drop without the capacity limit", t6, t7)
	}
}
