package report

import (
	"bufio"
	"fmt"
	"html"
	"io"
	"math"
	"path/filepath"
	"sort"
)

// HTMLOptions configure WriteHTML.
type HTMLOptions struct {
	Title string
}

// pageStyle is the report pages' CSS: no scripts, fonts or images from
// anywhere, so a page opens offline and in a mail attachment.
const pageStyle = `<style>
body { font: 13px sans-serif; margin: 16px; color: #222; max-width: 1100px; }
h1 { font-size: 18px; margin: 0 0 6px; }
h2 { font-size: 15px; margin: 20px 0 6px; border-bottom: 1px solid #ddd; }
.meta { color: #555; }
.partial { background: #fff3cd; border: 1px solid #e0c060; padding: 6px; }
table { border-collapse: collapse; margin: 4px 0; }
th, td { padding: 2px 8px; text-align: right; border-bottom: 1px solid #eee; }
th { background: #f2f2f2; }
td.l, th.l { text-align: left; }
.fail { color: #b00000; font-weight: bold; }
.charts { display: flex; flex-wrap: wrap; gap: 12px; }
svg.chart { border: 1px solid #ddd; background: #fff; }
</style>
`

// htmlTable writes a table; cells of the first column are left-aligned.
func htmlTable(w io.Writer, id string, head []string, rows [][]string) {
	fmt.Fprintf(w, "<table id=\"%s\">\n<tr>", id)
	for i, h := range head {
		cls := ""
		if i == 0 {
			cls = " class=\"l\""
		}
		fmt.Fprintf(w, "<th%s>%s</th>", cls, html.EscapeString(h))
	}
	fmt.Fprintln(w, "</tr>")
	for _, r := range rows {
		fmt.Fprint(w, "<tr>")
		for i, c := range r {
			cls := ""
			if i == 0 {
				cls = " class=\"l\""
			}
			fmt.Fprintf(w, "<td%s>%s</td>", cls, html.EscapeString(c))
		}
		fmt.Fprintln(w, "</tr>")
	}
	fmt.Fprintln(w, "</table>")
}

func pageHead(w io.Writer, title string) {
	fmt.Fprintf(w, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>%s</title>\n%s</head><body>\n<h1>%s</h1>\n",
		html.EscapeString(title), pageStyle, html.EscapeString(title))
}

// WriteHTML writes the report as one self-contained page (inline CSS and
// SVG, no script, nothing fetched): the figures of the text report, pipe
// utilisation over time and each kernel's roofline point as charts, then
// the tables.
func (r *Report) WriteHTML(out io.Writer, opt HTMLOptions) error {
	w := bufio.NewWriter(out)
	if opt.Title == "" {
		opt.Title = "ptoasm run " + filepath.Base(r.Program)
	}
	pageHead(w, opt.Title)
	if r.Partial != "" {
		fmt.Fprintf(w, "<p class=\"partial\">Partial report: %s.</p>\n", html.EscapeString(r.Partial))
	}
	fmt.Fprintf(w, "<p class=\"meta\">%s · %d cycles · %.3f µs at %.4g GHz", html.EscapeString(r.Program), r.Cycles, r.TimeUS, r.ClockHz/1e9)
	if r.FLOPs > 0 {
		fmt.Fprintf(w, " · %d FLOPs · %.3f TFLOPS aggregate", r.FLOPs, r.TFLOPS)
	}
	fmt.Fprintf(w, " · schema version %d</p>\n", r.SchemaVersion)
	if m := r.Modes; m != nil {
		fmt.Fprintln(w, "<h2>Modes</h2>")
		var rows [][]string
		add := func(name string, v *float64, unit string) {
			if v != nil {
				rows = append(rows, []string{name, fmt.Sprintf("%.3f%s", *v, unit)})
			}
		}
		add("compute-only", m.ComputeOnlyUS, " µs")
		add("sequential (comm + compute)", m.SequentialUS, " µs")
		add("pipelined", m.PipelinedUS, " µs")
		add("speed-up (sequential / pipelined)", m.SpeedUp, "×")
		if m.OverlapEff != nil {
			rows = append(rows, []string{"overlap efficiency", fmt.Sprintf("%.1f%%", 100**m.OverlapEff)})
		}
		htmlTable(w, "modes", []string{"mode", "value"}, rows)
	}

	fmt.Fprintln(w, "<div class=\"charts\">")
	if len(r.Utilisation.Pipes) > 0 {
		r.utilisationChart().WriteSVG(w)
	}
	if c := r.rooflineChart(); c != nil {
		c.WriteSVG(w)
	}
	fmt.Fprintln(w, "</div>")
	if !r.Stats {
		fmt.Fprintln(w, "<p class=\"meta\">Run with --stats=on for utilisation over time, the roofline, bandwidth, links and hotspots.</p>")
	}

	fmt.Fprintln(w, "<h2>Pipes over every core of a kind</h2>")
	var rows [][]string
	for _, p := range r.PipeSummary {
		rows = append(rows, []string{p.CoreKind + " " + p.Pipe, fmt.Sprint(p.Cores), fmt.Sprint(p.BusyCycles), fmt.Sprint(p.Instructions),
			fmt.Sprintf("%.1f%%", 100*p.MeanUtil), fmt.Sprintf("%.1f–%.1f%%", 100*p.MinUtil, 100*p.MaxUtil)})
	}
	htmlTable(w, "summary", []string{"pipe", "cores", "busy", "instr", "util", "range"}, rows)
	if len(r.CoreGroups) > 1 {
		fmt.Fprintln(w, "<h2>Core groups (cores that ran the same instructions)</h2>")
		rows = nil
		for _, g := range r.CoreGroups[:min(len(r.CoreGroups), 40)] {
			for _, p := range g.Pipes {
				rows = append(rows, []string{g.Label, p.Pipe, fmt.Sprint(p.BusyCycles), fmt.Sprintf("%d–%d", p.MinBusy, p.MaxBusy),
					fmt.Sprint(p.Instructions), fmt.Sprintf("%.1f%%", 100*p.Utilisation)})
			}
		}
		htmlTable(w, "cores", []string{"cores", "pipe", "busy", "range", "instr", "util"}, rows)
	}
	if len(r.Bandwidth) > 0 {
		fmt.Fprintln(w, "<h2>Bandwidth per path</h2>")
		rows = nil
		for _, b := range r.Bandwidth {
			rows = append(rows, []string{b.Path, fmt.Sprint(b.Bytes), fmt.Sprint(b.Transfers), fmt.Sprintf("%.2f", b.GBps), fmt.Sprintf("%.2f", b.GBpsTransfer)})
		}
		htmlTable(w, "bandwidth", []string{"path", "bytes", "transfers", "GB/s (run)", "GB/s (per transfer)"}, rows)
	}
	if len(r.Links) > 0 {
		fmt.Fprintln(w, "<h2>Links</h2>")
		rows = nil
		for _, l := range r.Links {
			rows = append(rows, []string{fmt.Sprintf("r%d → r%d", l.From, l.To), fmt.Sprint(l.Bytes), fmt.Sprint(l.Transfers),
				fmt.Sprintf("%.2f", l.GBps), fmt.Sprintf("%.2f", l.GBpsTransfer)})
		}
		htmlTable(w, "links", []string{"link", "bytes", "transfers", "GB/s (run)", "GB/s (per transfer)"}, rows)
	}
	if len(r.Collectives) > 0 {
		fmt.Fprintln(w, "<h2>Bus bandwidth (nccl-tests convention)</h2>")
		rows = nil
		for _, c := range r.Collectives {
			alg := "–"
			if c.Factor > 0 {
				alg = fmt.Sprintf("%.2f", c.AlgGBps)
			}
			rows = append(rows, []string{c.Kind + " " + c.Site, fmt.Sprint(c.Ranks), fmt.Sprint(c.Instances), fmt.Sprint(c.Bytes),
				fmt.Sprintf("%.3f", c.TimeUS), alg, fmt.Sprintf("%.2f", c.BusGBps)})
		}
		htmlTable(w, "collectives", []string{"collective", "ranks", "instances", "bytes", "µs", "alg GB/s", "bus GB/s"}, rows)
	}
	if len(r.Hotspots) > 0 {
		fmt.Fprintln(w, "<h2>Hotspots (source lines)</h2>")
		rows = nil
		for _, h := range r.Hotspots[:min(len(r.Hotspots), 30)] {
			rows = append(rows, []string{fmt.Sprintf("%s:%d", filepath.Base(h.File), h.Line), h.Op, h.Pipe, fmt.Sprint(h.Instructions),
				fmt.Sprint(h.BusyCycles), fmt.Sprint(h.StallCycles), h.StallReason})
		}
		htmlTable(w, "hotspots", []string{"line", "op", "pipe", "instr", "busy", "stall", "reason"}, rows)
	}
	if len(r.Kernels) > 0 {
		fmt.Fprintln(w, "<h2>Kernels</h2>")
		rows = nil
		for _, k := range r.Kernels {
			rows = append(rows, []string{k.Name, k.Kind, fmt.Sprint(k.Cores), fmt.Sprint(k.FLOPs), fmt.Sprint(k.GMBytes),
				fmt.Sprintf("%.2f", k.Intensity), fmt.Sprintf("%.3f", k.TFLOPS), fmt.Sprintf("%.1f", k.PeakTFLOPS), fmt.Sprintf("%.0f", k.PeakGBps)})
		}
		htmlTable(w, "kernels", []string{"kernel", "kind", "cores", "FLOPs", "GM bytes", "FLOPs/byte", "TFLOPS", "peak TFLOPS", "GM GB/s roof"}, rows)
	}
	if len(r.Checks) > 0 {
		fmt.Fprintln(w, "<h2>Checks</h2>")
		fmt.Fprintln(w, "<ul>")
		for _, c := range r.Checks {
			st, cls := "ok", ""
			switch {
			case c.Skipped:
				st = "skip"
			case !c.OK:
				st, cls = "FAIL", " class=\"fail\""
			}
			fmt.Fprintf(w, "<li%s>%s %s %s</li>\n", cls, st, html.EscapeString(c.Name), html.EscapeString(c.Msg))
		}
		fmt.Fprintln(w, "</ul>")
	}
	fmt.Fprintln(w, "</body></html>")
	return w.Flush()
}

// utilisationChart is each pipe's utilisation per time bin.
func (r *Report) utilisationChart() *Chart {
	c := &Chart{ID: "utilisation", Title: "Pipe utilisation over time", XLabel: "cycle (µs below)", YLabel: "utilisation %",
		FixedY: true, YMin: 0, YMax: 100}
	if r.ClockHz > 0 {
		hz := r.ClockHz
		c.X2 = func(x float64) string { return fmtNum(x/hz*1e6) + " µs" }
	}
	names := make([]string, 0, len(r.Utilisation.Pipes))
	for p := range r.Utilisation.Pipes {
		names = append(names, p)
	}
	sort.Slice(names, func(i, j int) bool { return pipeOrder(names[i]) < pipeOrder(names[j]) })
	for _, p := range names {
		u := r.Utilisation.Pipes[p]
		s := Series{Name: p, Color: pipeColour(p), Line: true}
		for i, v := range u {
			s.X = append(s.X, float64(int64(i)*r.Utilisation.BinCycles))
			s.Y = append(s.Y, 100*v)
		}
		c.Series = append(c.Series, s)
	}
	return c
}

func pipeOrder(p string) int {
	for i, n := range []string{"S", "MTE2", "MTE1", "M", "FIX", "V", "MTE3", "SDMA"} {
		if n == p {
			return i
		}
	}
	return 99
}

// pipeColour is the trace timeline's colour of a pipe.
func pipeColour(p string) string {
	switch p {
	case "S":
		return "#9e9e9e"
	case "V":
		return "#2ca02c"
	case "M":
		return "#d62728"
	case "MTE1":
		return "#6baed6"
	case "MTE2":
		return "#1f77b4"
	case "MTE3":
		return "#17becf"
	case "FIX":
		return "#9467bd"
	}
	return "#8c564b"
}

// rooflineChart plots each kernel with FLOPs at (FLOPs per GM byte,
// TFLOPS) under its roofs: min(peak TFLOPS, GM GB/s × intensity); nil when
// no kernel did floating-point work.
func (r *Report) rooflineChart() *Chart {
	c := &Chart{ID: "roofline", Title: "Roofline", XLabel: "FLOPs per GM byte", YLabel: "TFLOPS", LogX: true, LogY: true}
	for i, k := range r.Kernels {
		if k.FLOPs <= 0 || k.GMBytes <= 0 || k.TFLOPS <= 0 {
			continue
		}
		col := palette[i%len(palette)]
		roof := Series{Name: k.Name + " roof", Color: col, Line: true, Dashed: true}
		for e := -1.0; e <= 4; e += 0.05 {
			x := math.Pow(10, e)
			y := k.PeakGBps * x / 1e3
			if k.PeakTFLOPS > 0 {
				y = min(y, k.PeakTFLOPS)
			}
			roof.X, roof.Y = append(roof.X, x), append(roof.Y, y)
		}
		c.Series = append(c.Series, roof,
			Series{Name: k.Name, Color: col, X: []float64{k.Intensity}, Y: []float64{k.TFLOPS}, Labels: []string{k.Name}})
	}
	if len(c.Series) == 0 {
		return nil
	}
	return c
}

// SweepPage is what a sweep's HTML page shows: each point's coordinates
// (one value per axis, in axis order) and the metric "best" chose by.
type SweepPage struct {
	Title  string
	Axes   []string
	Metric string // "TFLOPS" or "time (µs)"
	Points []SweepPagePoint
}

// SweepPagePoint is one point of a sweep; failed points have OK false.
type SweepPagePoint struct {
	Index  int
	Values []string
	Metric float64
	OK     bool
	Best   bool
}

// WriteSweepHTML writes a sweep as one self-contained page: for each swept
// parameter, the metric against it, one line per combination of the other
// parameters; then the points.
func WriteSweepHTML(out io.Writer, p *SweepPage) error {
	w := bufio.NewWriter(out)
	pageHead(w, p.Title)
	fmt.Fprintf(w, "<p class=\"meta\">%d points over %s · metric: %s</p>\n<div class=\"charts\">\n", len(p.Points),
		html.EscapeString(joinX(p.Axes)), html.EscapeString(p.Metric))
	for a, axis := range p.Axes {
		sweepChart(p, a, axis).WriteSVG(w)
	}
	fmt.Fprintln(w, "</div>\n<h2>Points</h2>")
	var rows [][]string
	for _, pt := range p.Points {
		v := "failed"
		if pt.OK {
			v = fmt.Sprintf("%.4g", pt.Metric)
		}
		if pt.Best {
			v += " (best)"
		}
		rows = append(rows, append(append([]string{fmt.Sprint(pt.Index)}, pt.Values...), v))
	}
	htmlTable(w, "points", append(append([]string{"#"}, p.Axes...), p.Metric), rows)
	fmt.Fprintln(w, "</body></html>")
	return w.Flush()
}

func joinX(s []string) string {
	out := ""
	for i, v := range s {
		if i > 0 {
			out += " × "
		}
		out += v
	}
	return out
}

// sweepChart is the metric against axis a: numeric values on a numeric
// axis (log when they span more than a factor of 16), others as
// categories in grid order.
func sweepChart(p *SweepPage, a int, axis string) *Chart {
	c := &Chart{ID: "sweep-" + fmt.Sprint(a), Title: p.Metric + " against " + axis, XLabel: axis, YLabel: p.Metric}
	var order []string
	pos := map[string]float64{}
	numeric := true
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, pt := range p.Points {
		v := pt.Values[a]
		if _, ok := pos[v]; ok {
			continue
		}
		order = append(order, v)
		var f float64
		if _, err := fmt.Sscanf(v, "%g", &f); err != nil || fmt.Sprint(f) != v && fmt.Sprintf("%g", f) != v {
			numeric = false
		}
		pos[v] = f
		lo, hi = min(lo, f), max(hi, f)
	}
	if !numeric {
		for i, v := range order {
			pos[v] = float64(i)
			c.XTicks = append(c.XTicks, Tick{At: float64(i), Label: v})
		}
	} else {
		c.LogX = lo > 0 && hi/lo > 16
		for _, v := range order {
			c.XTicks = append(c.XTicks, Tick{At: pos[v], Label: v})
		}
	}
	series := map[string]*Series{}
	var keys []string
	for _, pt := range p.Points {
		if !pt.OK {
			continue
		}
		key := ""
		for b, v := range pt.Values {
			if b != a {
				key += p.Axes[b] + "=" + v + " "
			}
		}
		s := series[key]
		if s == nil {
			name := key
			if name == "" {
				name = p.Metric
			}
			s = &Series{Name: name, Line: true}
			series[key] = s
			keys = append(keys, key)
		}
		s.X = append(s.X, pos[pt.Values[a]])
		s.Y = append(s.Y, pt.Metric)
	}
	for i, k := range keys {
		s := series[k]
		if i >= len(palette) {
			s.Name, s.Color = "", "#cccccc" // beyond the palette: unlabelled grey
		}
		c.Series = append(c.Series, *s)
	}
	return c
}
