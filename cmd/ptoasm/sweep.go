package main

// ptoasm sweep: run one program over a grid of profile parameters and
// constants, and compare the points in one table (docs/sweep.md).
//
// Output must not depend on how many cores ran the grid or in which order the
// points finished: every point is computed into its slot by index, and the
// table and the JSON are written only from those slots. The text table is
// always rendered from exactly what the JSON carries, so `sweep merge` of shard
// files prints the same bytes as the unsharded run.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
	"github.com/ptoasm/ptoasm/pipes"
)

// maxSweepPoints bounds the grid: beyond it a typo (an extra value list) would
// queue hours of work before printing anything.
const maxSweepPoints = 1 << 20

type sweepCmd struct {
	Grid  sweepGridCmd  `cmd:"" default:"withargs" help:"Run FILE at every point of the grid (the word grid may be left out: ptoasm sweep FILE --set ...)."`
	Merge sweepMergeCmd `cmd:"" help:"Join the JSON of sweep shards into the unsharded table (or JSON)."`
}

type sweepGridCmd struct {
	File          string   `arg:"" help:"Program file (- for standard input), or the short name of a program in programs/."`
	Set           []string `sep:"none" placeholder:"KEY=V1,V2,..." help:"Sweep one profile parameter over a list of values (repeatable; each is one axis of the grid)."`
	Define        []string `sep:"none" short:"D" name:"define" placeholder:"NAME=V1,V2,..." help:"Sweep one constant over a list of values (repeatable; each is one axis). Commas inside parentheses do not split."`
	Profile       string   `help:"Base timing profile file (default: the embedded a2a3 profile)." type:"existingfile"`
	TimingOnly    bool     `help:"Skip data: time each point without computing values; output checks are skipped."`
	MaxCycles     int64    `default:"0" help:"Stop a point with an error after this many cycles (0: the machine's default guard)."`
	MaxIdleCycles int64    `default:"0" placeholder:"N" help:"Stop a point with an error after N cycles in which no pipe ran an instruction and nothing wrote GM (0: the default, 2^24; --max-idle-cycles=-1: no limit)."`
	Jobs          int      `default:"0" help:"Points run in parallel (0: one per CPU). The output does not depend on it."`
	Format        string   `enum:"text,json" default:"text" placeholder:"text|json" help:"Report format: ${enum} (a shard always writes JSON)."`
	Shard         string   `placeholder:"I/N" help:"Run only the points whose index modulo N is I (0 <= I < N) and write JSON for sweep merge."`
	Report        string   `placeholder:"OUT.html" help:"Write an HTML page with the metric best chooses by against each swept parameter."`

	stdin *stdinSrc // the program when File is "-", read once for every point
}

type sweepMergeCmd struct {
	Files  []string `arg:"" type:"existingfile" help:"Shard JSON files written by ptoasm sweep --shard."`
	Format string   `enum:"text,json" default:"text" placeholder:"text|json" help:"Report format: ${enum}."`
	Report string   `placeholder:"OUT.html" help:"Write an HTML page with the metric best chooses by against each swept parameter."`
}

// sweepAxis is one dimension of the grid: a profile key (--set) or a constant (-D).
type sweepAxis struct {
	name   string
	define bool
	values []string
}

// sweepParam is one coordinate of a point.
type sweepParam struct {
	Name, Value string
}

// sweepParams is a point's coordinates in grid order. It is a JSON object whose
// keys keep that order, so the report reads like the table and stays byte-stable.
type sweepParams []sweepParam

func (ps sweepParams) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, p := range ps {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(p.Name)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(p.Value)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func (ps *sweepParams) UnmarshalJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return errors.New("params: want an object")
	}
	out := sweepParams{}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return err
		}
		v, err := dec.Token()
		if err != nil {
			return err
		}
		ks, ok1 := k.(string)
		vs, ok2 := v.(string)
		if !ok1 || !ok2 {
			return errors.New("params: want string values")
		}
		out = append(out, sweepParam{ks, vs})
	}
	*ps = out
	return nil
}

// sweepPoint is one point's outcome. Metrics are zero when the point did not
// run to the end (Error says why); a failed check keeps its metrics.
type sweepPoint struct {
	Index  int               `json:"index"`
	Params sweepParams       `json:"params"`
	Cycles int64             `json:"cycles"`
	TimeUS float64           `json:"time_us"`
	TFLOPS float64           `json:"tflops"`
	Runs   []machine.RunStat `json:"runs"`
	// Speedup and Overlap are the mode report's figures (report.go), present
	// when the program has the sequential pair and the pipelined run.
	Speedup *float64 `json:"speedup,omitempty"`
	Overlap *float64 `json:"overlap_eff,omitempty"`
	OK      bool     `json:"ok"`
	// Skipped: the point's output checks did not run (--timing-only), so
	// ok says only that nothing failed.
	Skipped bool `json:"skipped,omitempty"`
	// overBudget: the point stopped on --max-memory while sharing it with
	// the other jobs; it is run again alone with the whole budget.
	overBudget bool
	Error      string `json:"error,omitempty"`
}

// sweepReport is the JSON of a sweep, a shard or a merge. Everything that
// decides what a point computes is in the header, so merge can refuse shards of
// different sweeps.
type sweepReport struct {
	File       string     `json:"file"`
	Profile    string     `json:"profile"`
	TimingOnly bool       `json:"timing_only"`
	Grid       []string   `json:"grid"`
	Values     [][]string `json:"values"`
	Total      int        `json:"total"`
	Shard      string     `json:"shard,omitempty"`
	// Partial says why the report lacks points (Ctrl-C stopped the sweep);
	// points then holds only the points that ran to the end. Absent in a
	// whole report, so readers of the older shape see no change; sweep
	// merge refuses a partial shard.
	Partial string       `json:"partial,omitempty"`
	Points  []sweepPoint `json:"points"`
}

// splitList splits a value list at commas outside parentheses and brackets,
// so a define value such as min(K,512) stays one value.
func splitList(s string) ([]string, error) {
	var out []string
	depth, start := 0, 0
	add := func(v string) error {
		v = strings.TrimSpace(v)
		if v == "" {
			return fmt.Errorf("empty value in list %q", s)
		}
		out = append(out, v)
		return nil
	}
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(', '[':
			depth++
		case ')', ']':
			depth--
		case ',':
			if depth == 0 {
				if err := add(s[start:i]); err != nil {
					return nil, err
				}
				start = i + 1
			}
		}
	}
	if depth != 0 {
		return nil, fmt.Errorf("unbalanced parentheses in %q", s)
	}
	if err := add(s[start:]); err != nil {
		return nil, err
	}
	return out, nil
}

// axes builds the grid: --set axes in command-line order, then -D axes. The
// first axis is outermost (varies slowest), the last varies fastest.
func (c *sweepGridCmd) axes(base *pipes.Profile) ([]sweepAxis, error) {
	var out []sweepAxis
	seen := map[string]bool{}
	add := func(flag, kv string, define bool) error {
		name, list, ok := strings.Cut(kv, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			//lint:ignore ST1005 the message ends with the syntax it asks for, ellipsis included
			return fmt.Errorf("%s %s: want NAME=V1,V2,...", flag, kv)
		}
		vals, err := splitList(list)
		if err != nil {
			return fmt.Errorf("%s %s: %v", flag, kv, err)
		}
		if seen[name] {
			return fmt.Errorf("%s %s: %s is already an axis of the grid", flag, kv, name)
		}
		seen[name] = true
		if !define {
			// An unknown key is a usage error for the whole grid; a bad value
			// fails only its own points.
			if _, known := base.Get(name); !known {
				return fmt.Errorf("%s %s: %w", flag, kv, base.Clone().Set(name, vals[0]))
			}
		}
		out = append(out, sweepAxis{name: name, define: define, values: vals})
		return nil
	}
	for _, kv := range c.Set {
		if err := add("--set", kv, false); err != nil {
			return nil, err
		}
	}
	for _, kv := range c.Define {
		if err := add("-D", kv, true); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// gridSize is the number of points, or an error when it passes maxSweepPoints.
func gridSize(values [][]string) (int, error) {
	n := 1
	for _, v := range values {
		if len(v) == 0 {
			return 0, errors.New("an axis has no values")
		}
		n *= len(v)
		if n > maxSweepPoints {
			return 0, fmt.Errorf("the grid has more than %d points", maxSweepPoints)
		}
	}
	return n, nil
}

// pointParams returns point idx's coordinates: mixed radix, last axis fastest.
func pointParams(grid []string, values [][]string, idx int) sweepParams {
	ps := make(sweepParams, len(grid))
	for a := len(grid) - 1; a >= 0; a-- {
		n := len(values[a])
		ps[a] = sweepParam{grid[a], values[a][idx%n]}
		idx /= n
	}
	return ps
}

// parseShard reads I/N (0-based I, as SLURM_ARRAY_TASK_ID and JOB_COMPLETION_INDEX are).
func parseShard(s string) (i, n int, err error) {
	a, b, ok := strings.Cut(s, "/")
	if ok {
		i, err = strconv.Atoi(strings.TrimSpace(a))
		if err == nil {
			n, err = strconv.Atoi(strings.TrimSpace(b))
		}
	}
	if !ok || err != nil || n < 1 || i < 0 || i >= n {
		return 0, 0, fmt.Errorf("--shard %s: want I/N with 0 <= I < N", s)
	}
	return i, n, nil
}

func (c *sweepGridCmd) Run(e *env) error {
	if _, err := resolve(e, c.File); err != nil {
		return err
	}
	// Every point assembles the program again; a program on standard
	// input was read once by resolve and is shared.
	c.stdin = e.stdin
	base, err := profileFlags{Profile: c.Profile}.load(e.lim)
	if err != nil {
		return err
	}
	axes, err := c.axes(base)
	if err != nil {
		return err
	}
	rep := sweepReport{File: c.File, Profile: base.Name, TimingOnly: c.TimingOnly,
		Grid: make([]string, len(axes)), Values: make([][]string, len(axes))}
	for i, a := range axes {
		rep.Grid[i], rep.Values[i] = a.name, a.values
	}
	if rep.Total, err = gridSize(rep.Values); err != nil {
		return err
	}
	shardI, shardN := 0, 1
	if c.Shard != "" {
		if shardI, shardN, err = parseShard(c.Shard); err != nil {
			return err
		}
		rep.Shard = fmt.Sprintf("%d/%d", shardI, shardN)
	}
	var idxs []int
	for k := shardI; k < rep.Total; k += shardN {
		idxs = append(idxs, k)
	}
	rep.Points = make([]sweepPoint, len(idxs))
	jobs := c.Jobs
	if jobs <= 0 {
		jobs = runtime.NumCPU()
	}
	jobs = max(min(jobs, len(idxs)), 1)
	// The jobs share one --max-memory: each gets its part while they run
	// together. A point that passes its part runs again alone with the whole
	// budget, so what a point reports does not depend on --jobs (the budget
	// changes no cycle count, only whether a run fits).
	shared := e.lim
	if jobs > 1 {
		total := shared.maxMemory
		if total <= 0 {
			total = machine.DefaultMaxMemory
		}
		shared.maxMemory = max(total/int64(jobs), 1)
	}
	// Ctrl-C stops handing out points and cancels the running ones; the
	// report then has the points that ran to the end (done), marked partial.
	ui := startInterruptUI()
	done := make([]bool, len(idxs))
	var finished atomic.Int64
	if w, ok := terminal(e.stderr); ok {
		ui.startProgress(w, func(elapsed time.Duration) (string, float64) {
			return sweepProgressText(int(finished.Load()), len(idxs), elapsed)
		})
	}
	run := func(slot int, lim limits) {
		pt, cancelled := c.point(base, axes, rep.Grid, rep.Values, idxs[slot], lim, ui.cancel)
		if !cancelled {
			rep.Points[slot], done[slot] = pt, true
		}
	}
	next := make(chan int)
	var wg sync.WaitGroup
	for range jobs {
		wg.Go(func() {
			for slot := range next {
				run(slot, shared)
				finished.Add(1)
			}
		})
	}
dispatch:
	for slot := range idxs {
		select {
		case next <- slot:
		case <-ui.cancel:
			break dispatch
		}
	}
	close(next)
	wg.Wait()
	for slot := range idxs {
		if jobs > 1 && done[slot] && rep.Points[slot].overBudget {
			done[slot] = false
			run(slot, e.lim)
		}
	}
	// A Ctrl-C that came after the last point ended cut nothing short.
	interrupted := ui.stop() && slices.Contains(done, false)
	if interrupted {
		kept := rep.Points[:0]
		for slot, p := range rep.Points {
			if done[slot] {
				kept = append(kept, p)
			}
		}
		rep.Points = kept
		rep.Partial = fmt.Sprintf("interrupted (Ctrl-C) after %d of %d points", len(kept), len(idxs))
	}
	if c.Report != "" {
		if err := writeSweepReport(c.Report, &rep); err != nil {
			return err
		}
	}
	err = writeSweep(e, &rep, c.Format == "json" || c.Shard != "")
	if interrupted {
		return interruptedError(e, -1)
	}
	return err
}

// sweepProgressText is the sweep's progress line: points done, their rate
// and the ETA at that rate.
func sweepProgressText(done, total int, elapsed time.Duration) (string, float64) {
	f := float64(done) / float64(max(total, 1))
	s := fmt.Sprintf("points %d/%d", done, total)
	if sec := elapsed.Seconds(); sec > 0 {
		s += fmt.Sprintf(", %.2f points/s", float64(done)/sec)
	}
	if done == 0 {
		f = 0 // no point has ended: no rate to extrapolate
	}
	return s + etaText(f, elapsed), f
}

// point assembles and runs one point in its own machine. It never panics out:
// a panic in the engine becomes the point's error, so one bad point cannot take
// down a sweep of thousands. cancelled: cancel was closed before the point
// ran to the end, so it has no outcome.
func (c *sweepGridCmd) point(base *pipes.Profile, axes []sweepAxis, grid []string, values [][]string, idx int, lim limits, cancel <-chan struct{}) (pt sweepPoint, cancelled bool) {
	pt = sweepPoint{Index: idx, Params: pointParams(grid, values, idx), Runs: []machine.RunStat{}}
	defer func() {
		if r := recover(); r != nil {
			pt = sweepPoint{Index: idx, Params: pt.Params, Runs: []machine.RunStat{},
				Error: fmt.Sprintf("internal error: %v", r)}
			cancelled = false
		}
	}()
	select {
	case <-cancel:
		return pt, true // handed out as Ctrl-C came
	default:
	}
	prof := base.Clone()
	var defs defineFlags
	for a, p := range pt.Params {
		if axes[a].define {
			defs.Define = append(defs.Define, p.Name+"="+p.Value)
		} else if err := prof.Set(p.Name, p.Value); err != nil {
			pt.Error = err.Error()
			return pt, false
		}
	}
	// Diagnostics go to a buffer of this point's own: points run concurrently.
	var diag bytes.Buffer
	obj, _, err := assemble(&env{stdout: io.Discard, stderr: &diag, stdin: c.stdin, lim: lim}, c.File, defs)
	if err != nil {
		var ee exitError
		if errors.As(err, &ee) {
			pt.Error = firstLine(diag.String())
		} else {
			pt.Error = err.Error()
		}
		if pt.Error == "" {
			pt.Error = "assembly failed"
		}
		return pt, false
	}
	var be *machine.BudgetError
	m, err := machine.New(obj, machine.Options{Profile: prof, TimingOnly: c.TimingOnly, MaxCycles: c.MaxCycles, MaxIdleCycles: c.MaxIdleCycles, MaxMemory: lim.maxMemory, Cancel: cancel})
	if err != nil {
		pt.Error, pt.overBudget = err.Error(), errors.As(err, &be)
		return pt, false
	}
	res, err := m.Run()
	if isCancelled(err) {
		return pt, true
	}
	if err != nil {
		pt.Error, pt.overBudget = err.Error(), errors.As(err, &be)
		return pt, false
	}
	if res == nil {
		pt.Error = "the machine returned no result"
		return pt, false
	}
	pt.Cycles, pt.TimeUS, pt.TFLOPS = res.Cycles, res.TimeUS, res.TFLOPS
	if res.Runs != nil {
		pt.Runs = res.Runs
	}
	if mt, ok := findModes(res.Runs); ok && mt.hasComm && mt.hasCompute && mt.hasPiped && mt.pipelined > 0 {
		s := (mt.comm + mt.compute) / mt.pipelined
		pt.Speedup = &s
		if m := min(mt.comm, mt.compute); m > 0 {
			o := (mt.comm + mt.compute - mt.pipelined) / m
			pt.Overlap = &o
		}
	}
	pt.OK = true
	pt.Skipped = len(res.Checks) > 0
	for _, ck := range res.Checks {
		pt.Skipped = pt.Skipped && ck.Skipped
		if !ck.OK {
			pt.OK = false
			pt.Error = "check " + ck.Name + " failed"
			if ck.Msg != "" {
				pt.Error += ": " + ck.Msg
			}
			return pt, false
		}
	}
	if len(res.Faults) > 0 {
		pt.OK = false
		pt.Error = "fault: " + res.Faults[0]
	}
	return pt, false
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// writeSweep prints the report and returns exit 1 when a point failed.
func writeSweep(e *env, rep *sweepReport, asJSON bool) error {
	if asJSON {
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return err
		}
		e.stdout.Write(append(b, '\n'))
	} else {
		writeSweepTable(e.stdout, rep)
	}
	failed := 0
	for _, p := range rep.Points {
		if !p.OK {
			failed++
		}
	}
	if failed > 0 {
		fmt.Fprintf(e.stderr, "ptoasm sweep: %d of %d points failed\n", failed, len(rep.Points))
		return exitError{1}
	}
	return nil
}

// modeColumns are the named runs of the mode report (report.go), in its order.
var modeColumns = []string{"compute_only", "seq_comm", "seq_compute", "pipelined"}

// runColumns picks the per-run columns: the mode runs when any point has them
// (host preparation runs are left out, as in the mode report), else every run
// name when a point has more than one run, else none.
func runColumns(pts []sweepPoint) []string {
	var modes, all []string
	multi := false
	for _, p := range pts {
		multi = multi || len(p.Runs) > 1
		for _, r := range p.Runs {
			if slices.Contains(modeColumns, r.Name) && !slices.Contains(modes, r.Name) {
				modes = append(modes, r.Name)
			}
			if !slices.Contains(all, r.Name) {
				all = append(all, r.Name)
			}
		}
	}
	if len(modes) > 0 {
		slices.SortFunc(modes, func(a, b string) int {
			return slices.Index(modeColumns, a) - slices.Index(modeColumns, b)
		})
		return modes
	}
	if multi {
		return all
	}
	return nil
}

// bestPoints picks the best passing points, comparing like with like.
// When every passing point does floating-point work, TFLOPS is a per-work
// metric and one point wins: the highest TFLOPS. Otherwise only time is
// left, and time compares points of the same work only: the points that
// share their -D values (profile axes change how fast, not what is
// computed) each give their fastest, one per combination of -D values that
// has two or more passing points. Ties go to the lower index. why says how
// they were chosen ("" when no point passed).
func bestPoints(pts []sweepPoint, isDefine func(axis string) bool) (best []int, why string) {
	byFlops, passed := true, false
	for _, p := range pts {
		if p.OK {
			passed = true
			byFlops = byFlops && p.TFLOPS > 0
		}
	}
	if !passed {
		return nil, ""
	}
	if byFlops {
		b := -1
		for i, p := range pts {
			if p.OK && (b < 0 || p.TFLOPS > pts[b].TFLOPS) {
				b = i
			}
		}
		return []int{b}, "highest TFLOPS"
	}
	groups := map[string][]int{}
	var order []string
	for i, p := range pts {
		if !p.OK {
			continue
		}
		var key strings.Builder
		for _, v := range p.Params {
			if isDefine(v.Name) {
				fmt.Fprintf(&key, "%s=%s ", v.Name, v.Value)
			}
		}
		k := key.String()
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], i)
	}
	for _, k := range order {
		g := groups[k]
		if len(g) < 2 && len(order) > 1 {
			continue // nothing of the same work to compare it with
		}
		b := g[0]
		for _, i := range g[1:] {
			if pts[i].TimeUS < pts[b].TimeUS {
				b = i
			}
		}
		best = append(best, b)
	}
	if len(order) > 1 {
		return best, "lowest time among points with the same -D values"
	}
	return best, "lowest time"
}

func writeSweepTable(w io.Writer, rep *sweepReport) {
	fmt.Fprintf(w, "sweep %s: %d points", rep.File, rep.Total)
	if len(rep.Grid) > 0 {
		fmt.Fprintf(w, " over %s", strings.Join(rep.Grid, " x "))
	}
	fmt.Fprintf(w, " (profile %s", rep.Profile)
	if rep.TimingOnly {
		fmt.Fprint(w, ", timing-only")
	}
	fmt.Fprintln(w, ")")
	if rep.Shard != "" {
		fmt.Fprintf(w, "shard %s: %d points\n", rep.Shard, len(rep.Points))
	}
	if rep.Partial != "" {
		fmt.Fprintf(w, "partial report: %s\n", rep.Partial)
	}
	fmt.Fprintln(w)

	runCols := runColumns(rep.Points)
	hasSpeedup, hasOverlap := false, false
	for _, p := range rep.Points {
		hasSpeedup = hasSpeedup || p.Speedup != nil
		hasOverlap = hasOverlap || p.Overlap != nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "#\t")
	for _, g := range rep.Grid {
		fmt.Fprint(tw, g+"\t")
	}
	fmt.Fprint(tw, "cycles\ttime_us\tTFLOPS\t")
	for _, r := range runCols {
		fmt.Fprint(tw, r+"\t")
	}
	if hasSpeedup {
		fmt.Fprint(tw, "speedup\t")
	}
	if hasOverlap {
		fmt.Fprint(tw, "overlap\t")
	}
	fmt.Fprintln(tw, "  checks")
	for _, p := range rep.Points {
		fmt.Fprintf(tw, "%d\t", p.Index)
		for _, v := range p.Params {
			fmt.Fprint(tw, v.Value+"\t")
		}
		ran := p.Error == "" || p.Cycles > 0
		if ran {
			fmt.Fprintf(tw, "%d\t%.3f\t%.3f\t", p.Cycles, p.TimeUS, p.TFLOPS)
		} else {
			fmt.Fprint(tw, "-\t-\t-\t")
		}
		for _, name := range runCols {
			i := slices.IndexFunc(p.Runs, func(r machine.RunStat) bool { return r.Name == name })
			if i < 0 {
				fmt.Fprint(tw, "-\t")
			} else {
				fmt.Fprintf(tw, "%.3f\t", p.Runs[i].TimeUS)
			}
		}
		if hasSpeedup {
			if p.Speedup != nil {
				fmt.Fprintf(tw, "%.3fx\t", *p.Speedup)
			} else {
				fmt.Fprint(tw, "-\t")
			}
		}
		if hasOverlap {
			if p.Overlap != nil {
				fmt.Fprintf(tw, "%.1f%%\t", 100**p.Overlap)
			} else {
				fmt.Fprint(tw, "-\t")
			}
		}
		switch {
		case p.OK && p.Skipped:
			fmt.Fprintln(tw, "  skip")
		case p.OK:
			fmt.Fprintln(tw, "  ok")
		default:
			fmt.Fprintln(tw, "  FAIL: "+firstLine(p.Error))
		}
	}
	tw.Flush()
	if len(runCols) > 0 {
		fmt.Fprintln(w, "\n(run columns: time_us of each named run; speedup = (seq_comm + seq_compute) / pipelined; overlap = (seq_comm + seq_compute - pipelined) / min(seq_comm, seq_compute))")
	}
	fmt.Fprintln(w)
	// An axis is a -D axis when it is no profile key.
	isDefine := func(axis string) bool {
		_, known := pipes.DefaultProfile().Get(axis)
		return !known
	}
	best, why := bestPoints(rep.Points, isDefine)
	switch {
	case best == nil && why == "":
		fmt.Fprintln(w, "best: none (every point failed)")
	case best == nil:
		fmt.Fprintln(w, "best: none (the points do different work, -D, and without FLOPs there is no per-work metric to compare them by)")
	}
	for _, b := range best {
		p := rep.Points[b]
		fmt.Fprintf(w, "best (%s): #%d", why, p.Index)
		for _, v := range p.Params {
			fmt.Fprintf(w, " %s=%s", v.Name, v.Value)
		}
		fmt.Fprintf(w, ": %d cycles, %.3f us, %.3f TFLOPS\n", p.Cycles, p.TimeUS, p.TFLOPS)
	}
	failed := 0
	for _, p := range rep.Points {
		if !p.OK {
			failed++
		}
	}
	if failed > 0 {
		fmt.Fprintf(w, "failed: %d of %d points\n", failed, len(rep.Points))
	}
}

func (c *sweepMergeCmd) Run(e *env) error {
	rep, err := mergeShards(c.Files, func(name string) ([]byte, error) {
		// Shards are JSON, cheap to decode, and grow with the grid.
		return asm.ReadFileLimit(name, 64*e.lim.maxFileSize, "64 x --max-file-size")
	})
	if err != nil {
		return err
	}
	if c.Report != "" {
		if err := writeSweepReport(c.Report, rep); err != nil {
			return err
		}
	}
	return writeSweep(e, rep, c.Format == "json")
}

// mergeShards joins shard reports into the unsharded one: same sweep header,
// every point of the grid exactly once, each where the grid puts it.
func mergeShards(files []string, read func(string) ([]byte, error)) (*sweepReport, error) {
	if len(files) == 0 {
		return nil, errors.New("sweep merge: no shard files")
	}
	var out *sweepReport
	var first string
	var from []string // from[k] is the file that brought point k
	for _, f := range files {
		b, err := read(f)
		if err != nil {
			return nil, err
		}
		var r sweepReport
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&r); err != nil {
			return nil, fmt.Errorf("%s: not a sweep report: %v", f, err)
		}
		if r.Partial != "" {
			return nil, fmt.Errorf("%s: a partial shard (%s): run it again to the end", f, r.Partial)
		}
		if len(r.Grid) != len(r.Values) {
			return nil, fmt.Errorf("%s: %d grid names but %d value lists", f, len(r.Grid), len(r.Values))
		}
		if n, err := gridSize(r.Values); err != nil || n != r.Total {
			return nil, fmt.Errorf("%s: total %d does not match the grid", f, r.Total)
		}
		shardI, shardN := 0, 1
		if r.Shard != "" {
			if shardI, shardN, err = parseShard(r.Shard); err != nil {
				return nil, fmt.Errorf("%s: %v", f, err)
			}
		}
		if out == nil {
			out = &sweepReport{File: r.File, Profile: r.Profile, TimingOnly: r.TimingOnly,
				Grid: r.Grid, Values: r.Values, Total: r.Total, Points: make([]sweepPoint, r.Total)}
			first = f
			from = make([]string, r.Total)
		} else if d := headerDiff(out, &r); d != "" {
			return nil, fmt.Errorf("%s: not the same sweep as %s: %s", f, first, d)
		}
		for _, p := range r.Points {
			switch {
			case p.Index < 0 || p.Index >= r.Total:
				return nil, fmt.Errorf("%s: point #%d is outside the grid of %d points", f, p.Index, r.Total)
			case p.Index%shardN != shardI:
				return nil, fmt.Errorf("%s: point #%d does not belong to shard %s", f, p.Index, r.Shard)
			case from[p.Index] == f:
				return nil, fmt.Errorf("%s: point #%d appears twice (the file given twice?)", f, p.Index)
			case from[p.Index] != "":
				return nil, fmt.Errorf("%s: point #%d is also in %s", f, p.Index, from[p.Index])
			}
			if want := pointParams(r.Grid, r.Values, p.Index); !slices.Equal(p.Params, want) {
				return nil, fmt.Errorf("%s: point #%d has parameters %s, the grid says %s", f, p.Index, paramText(p.Params), paramText(want))
			}
			if err := checkPoint(&p); err != nil {
				return nil, fmt.Errorf("%s: point #%d: %v", f, p.Index, err)
			}
			if p.Runs == nil {
				p.Runs = []machine.RunStat{}
			}
			out.Points[p.Index] = p
			from[p.Index] = f
		}
	}
	var missing []string
	for k, f := range from {
		if f == "" {
			missing = append(missing, "#"+strconv.Itoa(k))
		}
	}
	if n := len(missing); n > 0 {
		more := ""
		if n > 8 {
			more = fmt.Sprintf(" and %d more", n-8)
			missing = missing[:8]
		}
		return nil, fmt.Errorf("sweep merge: %d of %d points missing (a shard left out?): %s%s",
			n, out.Total, strings.Join(missing, ", "), more)
	}
	return out, nil
}

// checkPoint refuses figures no run produces (a shard edited by hand, or
// damaged): negative or non-finite cycles and times, runs that end before
// they start, an error on a point marked ok.
func checkPoint(p *sweepPoint) error {
	finite := func(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) && f >= 0 }
	switch {
	case p.Cycles < 0:
		return fmt.Errorf("negative cycle count %d", p.Cycles)
	case !finite(p.TimeUS) || !finite(p.TFLOPS):
		return fmt.Errorf("time_us %g and tflops %g must be finite and not negative", p.TimeUS, p.TFLOPS)
	case p.OK && p.Error != "":
		return errors.New("ok, yet with an error")
	case p.Speedup != nil && !finite(*p.Speedup), p.Overlap != nil && (math.IsNaN(*p.Overlap) || math.IsInf(*p.Overlap, 0)):
		return errors.New("speedup or overlap_eff is not a finite number")
	}
	for _, r := range p.Runs {
		if r.Start < 0 || r.End < r.Start || !finite(r.TimeUS) {
			return fmt.Errorf("run %q from %d to %d (%g us) is not a span of time", r.Name, r.Start, r.End, r.TimeUS)
		}
	}
	return nil
}

// headerDiff says how two reports' sweeps differ, or "" when they are the same sweep.
func headerDiff(a, b *sweepReport) string {
	switch {
	case a.File != b.File:
		return fmt.Sprintf("file %q vs %q", a.File, b.File)
	case a.Profile != b.Profile:
		return fmt.Sprintf("profile %q vs %q", a.Profile, b.Profile)
	case a.TimingOnly != b.TimingOnly:
		return fmt.Sprintf("timing_only %v vs %v", a.TimingOnly, b.TimingOnly)
	case !slices.Equal(a.Grid, b.Grid):
		return fmt.Sprintf("grid %s vs %s", strings.Join(a.Grid, ","), strings.Join(b.Grid, ","))
	}
	for i := range a.Values {
		if !slices.Equal(a.Values[i], b.Values[i]) {
			return fmt.Sprintf("%s values %s vs %s", a.Grid[i], strings.Join(a.Values[i], ","), strings.Join(b.Values[i], ","))
		}
	}
	return ""
}

func paramText(ps sweepParams) string {
	var s []string
	for _, p := range ps {
		s = append(s, p.Name+"="+p.Value)
	}
	return strings.Join(s, " ")
}
