package sweep

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/ptoasm/ptoasm/machine"
	"github.com/ptoasm/ptoasm/machine/report"
)

// modeColumns are the named runs of the mode report (report.FindModes), in its order.
var modeColumns = []string{"compute_only", "seq_comm", "seq_compute", "pipelined"}

// runColumns picks the per-run columns: the mode runs when any point has them
// (host preparation runs are left out, as in the mode report), else every run
// name when a point has more than one run, else none.
func runColumns(pts []Point) []string {
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

// Best picks the best passing points, comparing like with like.
// When every passing point does floating-point work, TFLOPS is a per-work
// metric and one point wins: the highest TFLOPS. Otherwise only time is
// left, and time compares points of the same work only: the points that
// share their -D values (profile axes change how fast, not what is
// computed) each give their fastest, one per combination of -D values that
// has two or more passing points. Ties go to the lower index. why says how
// they were chosen ("" when no point passed).
func Best(pts []Point, isDefine func(axis string) bool) (best []int, why string) {
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

// WriteTable prints the report as the comparison table: one row per point,
// then the best points and the count of failures.
func WriteTable(w io.Writer, rep *Report) {
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
	best, why := Best(rep.Points, isDefine)
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
	if failed := rep.Failed(); failed > 0 {
		fmt.Fprintf(w, "failed: %d of %d points\n", failed, len(rep.Points))
	}
}

// Page is the sweep's HTML page (report.WriteSweepHTML): the metric Best
// chooses by (TFLOPS, or time) against each swept parameter.
func Page(rep *Report, title string) *report.SweepPage {
	best, why := Best(rep.Points, isDefine)
	page := &report.SweepPage{Title: title, Axes: rep.Grid, Metric: "time (µs)"}
	if why == "highest TFLOPS" {
		page.Metric = "TFLOPS"
	}
	isBest := map[int]bool{}
	for _, b := range best {
		isBest[b] = true
	}
	for i, p := range rep.Points {
		pp := report.SweepPagePoint{Index: p.Index, OK: p.OK, Best: isBest[i], Metric: p.TimeUS}
		if page.Metric == "TFLOPS" {
			pp.Metric = p.TFLOPS
		}
		for _, v := range p.Params {
			pp.Values = append(pp.Values, v.Value)
		}
		page.Points = append(page.Points, pp)
	}
	return page
}
