package trace

import (
	"bufio"
	"fmt"
	"html"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
)

// Marker is a finding to show on the timeline: the lanes that ran an
// instruction at File:Line get a red mark at its first slice. The trace
// package does not import the hazard detector; callers convert findings.
type Marker struct {
	File     string
	Line     int
	Severity string // error, warning, note
	Message  string
}

// HTMLOptions configure WriteHTML.
type HTMLOptions struct {
	Title string
	// ClockHz converts cycles to time in the axis and tooltips; <= 0 shows cycles only.
	ClockHz float64
	Markers []Marker
	// Width is the width of the plot in pixels (default 1200).
	Width int
	// MaxRects bounds the rectangles drawn on all lanes together (default
	// 200,000, under 30 MB): half for instructions, half for lanes drawn
	// per pixel column (see WriteHTML).
	MaxRects int
	// Filter selects what is drawn (the zero Filter draws everything kept).
	Filter Filter
}

var pipeColor = [asm.NumPipes + 1]string{
	asm.PipeInvalid: "#8c564b", asm.PipeS: "#9e9e9e", asm.PipeV: "#2ca02c", asm.PipeM: "#d62728",
	asm.PipeMTE1: "#6baed6", asm.PipeMTE2: "#1f77b4", asm.PipeMTE3: "#17becf", asm.PipeFIX: "#9467bd",
	asm.PipeALL: "#555555", asm.NumPipes: "#555555",
}

const (
	syncColor  = "#333333"
	stallColor = "#f2a7a7"
	// Findings are yellow diamonds outlined in black: no pipe is yellow,
	// and red is the cube's (M) colour.
	findingFill   = "#ffd400"
	findingStroke = "#000000"
	laneH         = 16
	laneGap       = 3
	labelW        = 150
	axisH         = 50
)

// rectCap bounds the rectangles drawn per lane whatever the plot width.
const rectCap = 4000

// htmlLane is one lane of the page: a pipe of a core (level 2), a core
// with its pipes folded in (level 1) or a rank with its cores (level 0).
type htmlLane struct {
	level  int
	parent int // index of the enclosing lane; -1 for a rank
	rank   int32
	core   int32
	pipe   asm.Pipe
	label  string
	kids   []int // child lanes
	pipes  []int // level 0, 1: the pipe lanes it folds in
	nrec   int   // level 2: slices drawn on it
	marked bool  // a finding is marked on it
}

// WriteHTML writes one self-contained HTML page (inline CSS, SVG and a little
// JavaScript; no network) with a timeline of every rank, core and pipe:
//
//   - a lane per rank, a lane per core under it and a lane per pipe under
//     each core; a rank or core lane folds in what is under it (per pixel
//     column, the colour of the pipe busy most there, darker the more of
//     its pipes were busy) and its label expands or folds it. Small runs
//     open with every lane expanded, larger ones with ranks and cores;
//     the page's address ending in #all expands everything;
//   - on a pipe lane a rectangle per instruction coloured by pipe, sync
//     instructions as dark ticks, stalls as pale red half-height bars, a
//     tooltip per rectangle; slices narrower than a pixel merge with their
//     neighbours. Over MaxRects rectangles, a lane with more slices than
//     its share is drawn per pixel column too, so every lane is drawn
//     whatever the run's size;
//   - findings as yellow diamonds on the lanes of the ops at their sites
//     (and on the core and rank lanes above them), listed below;
//   - the runs of the launch section as labelled bands, and an axis in
//     cycles with the time in µs under it;
//   - mouse wheel zooms around the pointer, drag pans, double-click resets.
func (r *Recorder) WriteHTML(w io.Writer, opt HTMLOptions) error {
	if opt.Width <= 0 {
		opt.Width = 1200
	}
	if opt.MaxRects <= 0 {
		opt.MaxRects = 200_000
	}
	if opt.Title == "" {
		opt.Title = "ptoasm timeline"
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	order := r.order()

	// Pipe lanes, the time range, the runs.
	type runBand struct {
		name       string
		start, end int64
	}
	var runs []runBand
	pipeIx := map[lane]int{}
	var pipeLanes []lane
	t0, t1 := int64(math.MaxInt64), int64(0)
	recsOf := map[lane][]int32{}
	for _, i := range order {
		rec := r.recs.at(int(i))
		switch rec.kind {
		case machine.EvRunStart:
			runs = append(runs, runBand{name: r.str(rec.str), start: rec.start, end: -1})
		case machine.EvRunEnd:
			if n := len(runs); n > 0 && runs[n-1].end < 0 {
				runs[n-1].end = rec.start
			}
		}
		if !sliced(rec.kind) || !r.match(&opt.Filter, rec) {
			continue
		}
		l := lane{rec.rank, rec.core, rec.pipe}
		if _, ok := pipeIx[l]; !ok {
			pipeIx[l] = 0
			pipeLanes = append(pipeLanes, l)
		}
		recsOf[l] = append(recsOf[l], i)
		t0, t1 = min(t0, rec.start), max(t1, rec.end)
	}
	sort.Slice(pipeLanes, func(i, j int) bool { return laneLess(pipeLanes[i], pipeLanes[j]) })
	if t0 > t1 {
		t0, t1 = 0, 1
	}
	if t1 == t0 {
		t1 = t0 + 1
	}
	for i := range runs {
		if runs[i].end < 0 {
			runs[i].end = t1
		}
	}

	// The lane tree: rank, core, pipe.
	var lanes []htmlLane
	rankLane, coreLane := map[int32]int{}, map[placeKey]int{}
	for _, l := range pipeLanes {
		ri, ok := rankLane[l.rank]
		if !ok {
			ri = len(lanes)
			rankLane[l.rank] = ri
			lanes = append(lanes, htmlLane{level: 0, parent: -1, rank: l.rank, core: -2, label: fmt.Sprintf("r%d", l.rank)})
		}
		pk := placeKey{l.rank, l.core}
		ci, ok := coreLane[pk]
		if !ok {
			ci = len(lanes)
			coreLane[pk] = ci
			lanes = append(lanes, htmlLane{level: 1, parent: ri, rank: l.rank, core: l.core, label: r.coreName(l.rank, l.core)})
			lanes[ri].kids = append(lanes[ri].kids, ci)
		}
		pi := len(lanes)
		pipeIx[l] = pi
		lanes = append(lanes, htmlLane{level: 2, parent: ci, rank: l.rank, core: l.core, pipe: l.pipe,
			label: r.coreName(l.rank, l.core) + " " + laneName(l.core, l.pipe), nrec: len(recsOf[l])})
		lanes[ci].kids = append(lanes[ci].kids, pi)
		lanes[ci].pipes = append(lanes[ci].pipes, pi)
		lanes[ri].pipes = append(lanes[ri].pipes, pi)
	}
	// Small runs open fully expanded; larger ones show ranks and cores.
	openLevel := 2
	if len(pipeLanes) > 160 {
		openLevel = 1
	}

	// The initial layout (the script redoes it when a lane is expanded or
	// folded): a lane shows when every lane above it is open.
	laneY := make([]int, len(lanes))
	shown := 0
	for li := range lanes {
		laneY[li] = -1
		vis := true
		for p := lanes[li].parent; p >= 0; p = lanes[p].parent {
			vis = vis && lanes[p].level < openLevel
		}
		if vis {
			laneY[li] = axisH + shown*(laneH+laneGap)
			shown++
		}
	}
	H := axisH + shown*(laneH+laneGap) + 10
	place := func(li int) string {
		if laneY[li] < 0 {
			return ` style="display:none"`
		}
		return fmt.Sprintf(` transform="translate(0,%d)"`, laneY[li])
	}

	W := float64(opt.Width)
	scale := W / float64(t1-t0)
	x := func(c int64) float64 { return float64(c-t0) * scale }

	// Which pipe lanes are drawn per instruction: all when the slices fit
	// the budget, else those with no more than their share.
	total := 0
	for _, l := range lanes {
		total += l.nrec
	}
	share := opt.MaxRects / 2 / max(len(pipeLanes), 1) // half the budget: the folded lanes take the rest
	detailed := func(li int) bool { return total <= opt.MaxRects/2 || lanes[li].nrec <= share }

	// Per pixel column of each lane: busy cycles per pipe, and stall
	// cycles, for folded lanes and for pipe lanes drawn per column.
	cols := opt.Width
	type colStat struct {
		busy  [asm.NumPipes + 1]int64
		stall int64
	}
	colOf := map[int][]colStat{} // lane → columns; allocated on first use
	column := func(li int) []colStat {
		c := colOf[li]
		if c == nil {
			c = make([]colStat, cols)
			colOf[li] = c
		}
		return c
	}
	cyclesPerCol := float64(t1-t0) / float64(cols)
	addCols := func(li int, rec *record, stall bool) {
		c := column(li)
		pk := min(int(rec.pipe), int(asm.NumPipes))
		if rec.core < 0 {
			pk = int(asm.PipeInvalid) // SDMA
		}
		a := int(float64(rec.start-t0) / cyclesPerCol)
		b := int(float64(rec.end-t0) / cyclesPerCol)
		for k := max(a, 0); k <= min(b, cols-1); k++ {
			lo := max(float64(rec.start-t0), float64(k)*cyclesPerCol)
			hi := min(float64(rec.end-t0), float64(k+1)*cyclesPerCol)
			if hi <= lo {
				continue
			}
			if stall {
				c[k].stall += int64(math.Ceil(hi - lo))
			} else {
				c[k].busy[pk] += int64(math.Ceil(hi - lo))
			}
		}
	}
	for _, pl := range pipeLanes {
		li := pipeIx[pl]
		for _, i := range recsOf[pl] {
			rec := r.recs.at(int(i))
			if rec.end <= rec.start || isSyncKind(rec.kind) {
				continue
			}
			stall := rec.kind == machine.EvStall
			if !detailed(li) {
				addCols(li, rec, stall)
			}
			if !stall {
				addCols(lanes[li].parent, rec, false)
				addCols(lanes[lanes[li].parent].parent, rec, false)
			}
		}
	}

	// Lanes drawn per column share the other half of the budget: columns
	// are drawn in groups of g, g doubling until they fit.
	getCol := func(c colStat) ([asm.NumPipes + 1]int64, int64) { return c.busy, c.stall }
	g := 1
	for ; g < cols; g *= 2 {
		n := 0
		for li := range lanes {
			if lanes[li].level < 2 || !detailed(li) {
				n += writeColumns(nil, colOf[li], g, cyclesPerCol, t0, max(len(lanes[li].pipes), 1), lanes[li].level == 2, getCol)
			}
		}
		if n <= opt.MaxRects/2 {
			break
		}
	}

	fmt.Fprintf(bw, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>%s</title>\n", html.EscapeString(opt.Title))
	bw.WriteString(htmlStyle)
	fmt.Fprintf(bw, "</head><body>\n<h1>%s</h1>\n", html.EscapeString(opt.Title))
	fmt.Fprintf(bw, "<p class=\"meta\">cycles %d–%d", t0, t1)
	if opt.ClockHz > 0 {
		fmt.Fprintf(bw, " (%.3f µs at %.4g GHz)", float64(t1-t0)/opt.ClockHz*1e6, opt.ClockHz/1e9)
	}
	fmt.Fprintf(bw, " · %d ranks, %d cores, %d pipe lanes", len(rankLane), len(coreLane), len(pipeLanes))
	bw.WriteString(" · click a rank or core to expand or fold it · wheel: zoom, drag: pan, double-click: reset</p>\n")
	bw.WriteString(legend())

	svgW := labelW + opt.Width + 10
	fmt.Fprintf(bw, "<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"tl\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"monospace\" font-size=\"11\">\n",
		svgW, H, svgW, H)
	// Axis labels (cycles, then µs) and run names, drawn over the plot's
	// run bands; the script moves them with the zoom.
	var axis strings.Builder
	step := NiceStep(float64(t1-t0) / 8)
	var ticks []float64
	for c := math.Ceil(float64(t0)/step) * step; c <= float64(t1); c += step {
		ticks = append(ticks, c)
		fmt.Fprintf(&axis, "<text class=\"tk\" data-c=\"%d\" x=\"%.1f\" y=\"%d\" fill=\"#555\">%d</text>\n", int64(c), labelW+x(int64(c))+2, axisH-18, int64(c))
		if opt.ClockHz > 0 {
			fmt.Fprintf(&axis, "<text class=\"tk us\" data-c=\"%d\" x=\"%.1f\" y=\"%d\" fill=\"#888\">%s µs</text>\n", int64(c), labelW+x(int64(c))+2, axisH-6,
				strconv.FormatFloat(c/opt.ClockHz*1e6, 'g', 4, 64))
		}
	}
	fmt.Fprintf(&axis, "<text x=\"4\" y=\"%d\" fill=\"#555\">cycle</text>", axisH-18)
	if opt.ClockHz > 0 {
		fmt.Fprintf(&axis, "<text x=\"4\" y=\"%d\" fill=\"#888\">time</text>", axisH-6)
	}
	axis.WriteString("\n")
	for _, rb := range runs {
		fmt.Fprintf(&axis, "<text class=\"ph\" data-c=\"%d\" data-e=\"%d\" x=\"%.1f\" y=\"12\" font-weight=\"bold\" fill=\"#335\">%s</text>\n",
			rb.start, rb.end, labelW+x(rb.start)+2, html.EscapeString(rb.name))
	}
	// Lane labels: a rank or core label expands or folds its lanes.
	for li, l := range lanes {
		open := l.level < openLevel
		mark := ""
		if l.level < 2 {
			mark = "▸ "
			if open {
				mark = "▾ "
			}
		}
		bold := ""
		if l.level == 0 {
			bold = ` font-weight="bold"`
		}
		fmt.Fprintf(bw, "<g class=\"lbl\" data-lane=\"%d\" data-level=\"%d\" data-parent=\"%d\" data-open=\"%t\"%s><text x=\"%d\" y=\"%d\"%s>%s%s</text></g>\n",
			li, l.level, l.parent, open, place(li), 4+8*l.level, laneH-4, bold, mark, html.EscapeString(l.label))
	}

	// The plot, clipped and zoomed by its viewBox.
	fmt.Fprintf(bw, "<svg x=\"%d\" y=\"0\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" preserveAspectRatio=\"none\" id=\"plot\" data-t0=\"%d\" data-scale=\"%g\" data-left=\"%d\">\n<g id=\"zoom\">\n",
		labelW, opt.Width, H, opt.Width, H, t0, scale, labelW)
	for k, rb := range runs {
		if k%2 == 0 {
			fmt.Fprintf(bw, "<rect class=\"band\" x=\"%.2f\" y=\"0\" width=\"%.2f\" height=\"100%%\" fill=\"#eef2fb\"/>\n", x(rb.start), max(x(rb.end)-x(rb.start), 0.5))
		}
	}
	for _, c := range ticks {
		xx := x(int64(c))
		fmt.Fprintf(bw, "<line class=\"grid\" x1=\"%.2f\" x2=\"%.2f\" y1=\"%d\" y2=\"100%%\" stroke=\"#ddd\" vector-effect=\"non-scaling-stroke\"/>\n", xx, xx, axisH-4)
	}
	// Findings: the sites on pipe lanes, and the lanes above them.
	marks := r.markerSites(opt.Markers, pipeIx, &opt.Filter)
	marksOf := map[int][]markSite{}
	for _, m := range marks {
		marksOf[m.lane] = append(marksOf[m.lane], m)
		for p := lanes[m.lane].parent; p >= 0; p = lanes[p].parent {
			if !lanes[p].marked {
				lanes[p].marked = true
				marksOf[p] = append(marksOf[p], markSite{lane: p, rec: m.rec, text: m.text})
			}
		}
	}
	for li := range lanes {
		l := &lanes[li]
		fmt.Fprintf(bw, "<g class=\"ln\" data-lane=\"%d\"%s>", li, place(li))
		if l.level == 2 {
			fmt.Fprintf(bw, "<rect class=\"lane\" x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#f7f7f7\"/>\n", opt.Width, laneH)
		} else {
			fmt.Fprintf(bw, "<rect class=\"agg\" x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#eeeeee\"/>\n", opt.Width, laneH)
		}
		if l.level < 2 || !detailed(li) {
			writeColumns(bw, colOf[li], g, cyclesPerCol, t0, max(len(l.pipes), 1), l.level == 2, getCol)
		} else {
			r.writeSlices(bw, recsOf[lane{l.rank, l.core, l.pipe}], x, &opt)
		}
		for _, m := range marksOf[li] {
			xx := x(r.recs.at(int(m.rec)).start)
			cls := "finding"
			if l.level < 2 {
				cls = "finding-above"
			}
			fmt.Fprintf(bw, "<g class=\"%s\"><path d=\"M%.2f,-2 l6,%d l-6,%d l-6,%d z\" fill=\"%s\" stroke=\"%s\" vector-effect=\"non-scaling-stroke\"/><title>%s</title></g>",
				cls, xx, laneH/2+2, laneH/2+2, -(laneH/2 + 2), findingFill, findingStroke, html.EscapeString(m.text))
		}
		bw.WriteString("</g>\n")
	}
	bw.WriteString("</g>\n</svg>\n")
	bw.WriteString(axis.String())
	bw.WriteString("</svg>\n")

	if len(opt.Markers) > 0 {
		bw.WriteString("<h2>Findings</h2>\n<ul class=\"findings\">\n")
		for _, m := range opt.Markers {
			fmt.Fprintf(bw, "<li class=\"%s\"><b>%s:%d</b> %s: %s</li>\n", html.EscapeString(m.Severity),
				html.EscapeString(m.File), m.Line, html.EscapeString(m.Severity), html.EscapeString(m.Message))
		}
		bw.WriteString("</ul>\n")
	}
	bw.WriteString(htmlScript)
	bw.WriteString("</body></html>\n")
	return bw.Flush()
}

// writeColumns draws a lane per pixel column: each column in the colour of
// the pipe busy most there (a stall colour where only stalls were), its
// opacity in four steps by how much of the column's cycles the lane's n
// pipes were busy; equal neighbours merge into one rectangle with a
// tooltip. It returns the rectangles drawn.
//
// g columns are drawn as one (g > 1 when the page would exceed its
// rectangle budget); with w nil nothing is written, only counted.
func writeColumns[C any](w *bufio.Writer, cols []C, g int, cyclesPerCol float64, t0 int64, n int, stalls bool,
	get func(C) ([asm.NumPipes + 1]int64, int64)) int {
	if cols == nil {
		return 0
	}
	ng := (len(cols) + g - 1) / g
	cyclesPerCol *= float64(g)
	type look struct {
		pipe  int
		level int // 0: nothing
		stall bool
	}
	at := func(k int) look {
		var busy [asm.NumPipes + 1]int64
		var stall int64
		for c := k * g; c < min((k+1)*g, len(cols)); c++ {
			b, st := get(cols[c])
			for p := range busy {
				busy[p] += b[p]
			}
			stall += st
		}
		best, sum := -1, int64(0)
		for p, b := range busy {
			sum += b
			if b > 0 && (best < 0 || b > busy[best]) {
				best = p
			}
		}
		if best < 0 {
			if stalls && stall > 0 {
				return look{pipe: -1, level: 1, stall: true}
			}
			return look{}
		}
		f := float64(sum) / (cyclesPerCol * float64(n))
		return look{pipe: best, level: min(4, 1+int(f*4))}
	}
	drawn := 0
	for k := 0; k < ng; {
		lk := at(k)
		e := k + 1
		for e < ng && at(e) == lk {
			e++
		}
		if lk.level > 0 && w == nil {
			drawn++
		} else if lk.level > 0 {
			color, h, y := stallColor, float64(laneH)*0.5, float64(laneH)*0.25
			what := "stalled"
			if !lk.stall {
				color, h, y = pipeColor[min(lk.pipe, int(asm.NumPipes))], laneH, 0
				what = fmt.Sprintf("busy %d–%d%%, most on %s", (lk.level-1)*25, lk.level*25, laneName(0, asm.Pipe(lk.pipe)))
				if asm.Pipe(lk.pipe) == asm.PipeInvalid {
					what = fmt.Sprintf("busy %d–%d%%, most on SDMA", (lk.level-1)*25, lk.level*25)
				}
			}
			fmt.Fprintf(w, "<rect x=\"%d\" y=\"%.1f\" width=\"%d\" height=\"%.1f\" fill=\"%s\" fill-opacity=\"%.2f\"><title>cycles %d–%d: %s</title></rect>\n",
				k*g, y, (e-k)*g, h, color, 0.25*float64(lk.level), t0+int64(float64(k)*cyclesPerCol), t0+int64(float64(e)*cyclesPerCol), what)
			drawn++
		}
		k = e
	}
	return drawn
}

// writeSlices draws one pipe lane per instruction (merged below a pixel).
func (r *Recorder) writeSlices(bw *bufio.Writer, recs []int32, x func(int64) float64, opt *HTMLOptions) int {
	type pending struct {
		x0, x1     float64
		n          int
		first      int32
		c0, c1     int64
		color      string
		stall      bool
		lastSyncPx int
	}
	p := pending{first: -1, lastSyncPx: -1}
	drawn := 0
	flush := func() {
		if p.first < 0 {
			return
		}
		if drawn < rectCap {
			y, h := 0.0, float64(laneH)
			if p.stall {
				y, h = laneH*0.25, laneH*0.5
			}
			fmt.Fprintf(bw, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" fill=\"%s\"><title>", p.x0, y, max(p.x1-p.x0, 0.8), h, p.color)
			if p.n == 1 {
				bw.WriteString(html.EscapeString(r.tooltip(p.first, opt.ClockHz)))
			} else {
				fmt.Fprintf(bw, "%d ops, cycles %d–%d (zoom in, or filter with --from/--to)", p.n, p.c0, p.c1)
			}
			bw.WriteString("</title></rect>\n")
			drawn++
		}
		p.first = -1
	}
	for _, i := range recs {
		rec := r.recs.at(int(i))
		x0, x1 := x(rec.start), x(rec.end)
		if rec.end == rec.start || isSyncKind(rec.kind) {
			// Instantaneous sync events: a thin dark tick at the top of the
			// lane, at most one per pixel.
			px := int(x0)
			if px != p.lastSyncPx {
				p.lastSyncPx = px
				fmt.Fprintf(bw, "<rect x=\"%.2f\" y=\"0\" width=\"1\" height=\"%d\" fill=\"%s\"><title>%s</title></rect>\n",
					x0, laneH/3, syncColor, html.EscapeString(r.tooltip(i, opt.ClockHz)))
				drawn++
			}
			if rec.end == rec.start {
				continue
			}
		}
		color := pipeColor[min(int(rec.pipe), int(asm.NumPipes))]
		stall := rec.kind == machine.EvStall
		switch {
		case stall:
			color = stallColor
		case isSyncKind(rec.kind):
			color = syncColor
		}
		if p.first >= 0 && p.stall == stall && x0-p.x1 < 1 && (x1-x0 < 1 || p.x1-p.x0 < 1) && x1-p.x0 < 2 {
			// Both are tiny and touch: merge.
			p.x1 = max(p.x1, x1)
			p.c1 = max(p.c1, rec.end)
			p.n++
			continue
		}
		flush()
		p = pending{x0: x0, x1: x1, n: 1, first: i, c0: rec.start, c1: rec.end, color: color, stall: stall, lastSyncPx: p.lastSyncPx}
	}
	flush()
	return drawn
}

func isSyncKind(k machine.EventKind) bool {
	switch k {
	case machine.EvFlagSet, machine.EvFlagWait, machine.EvBarrier, machine.EvCrossSet, machine.EvCrossWait,
		machine.EvNotify, machine.EvSignalWait, machine.EvSyncAll, machine.EvKernelEnd:
		return true
	}
	return false
}

type markSite struct {
	lane int
	rec  int32
	text string
}

// markerSites finds, for each marker, the first slice of an op at its line
// on each drawn lane (at most 16 lanes per marker).
func (r *Recorder) markerSites(ms []Marker, laneIx map[lane]int, f *Filter) []markSite {
	if len(ms) == 0 {
		return nil
	}
	type fl struct {
		file string
		line int
	}
	want := map[fl][]int{} // → marker indices
	for k, m := range ms {
		key := fl{m.File, m.Line}
		want[key] = append(want[key], k)
	}
	type seenKey struct {
		marker, lane int
	}
	seen := map[seenKey]bool{}
	perMarker := make([]int, len(ms))
	var out []markSite
	for i := range r.recs.n {
		rec := r.recs.at(i)
		if rec.op < 0 || !sliced(rec.kind) || rec.kind == machine.EvStall || !r.match(f, rec) {
			continue
		}
		oi := &r.ops[rec.op]
		ks := want[fl{oi.file, oi.line}]
		if len(ks) == 0 {
			continue
		}
		li, ok := laneIx[lane{rec.rank, rec.core, rec.pipe}]
		if !ok || li < 0 {
			continue
		}
		for _, k := range ks {
			sk := seenKey{k, li}
			if seen[sk] || perMarker[k] >= 16 {
				continue
			}
			seen[sk] = true
			perMarker[k]++
			m := ms[k]
			out = append(out, markSite{lane: li, rec: int32(i), text: fmt.Sprintf("%s: %s:%d: %s", m.Severity, m.File, m.Line, m.Message)})
		}
	}
	return out
}

// tooltip describes one record for a hover.
func (r *Recorder) tooltip(i int32, clockHz float64) string {
	rec := r.recs.at(int(i))
	var b strings.Builder
	b.WriteString(r.sliceName(rec))
	fmt.Fprintf(&b, "\n%s %s  cycles %d–%d (%d)", r.coreName(rec.rank, rec.core), laneName(rec.core, rec.pipe), rec.start, rec.end, rec.end-rec.start)
	if clockHz > 0 {
		fmt.Fprintf(&b, " = %.4f µs", float64(rec.end-rec.start)/clockHz*1e6)
	}
	if rec.op >= 0 {
		b.WriteString("\n")
		b.WriteString(r.ops[rec.op].text)
		if s := r.src(rec); s != "" {
			b.WriteString("\n")
			b.WriteString(s)
		}
	}
	if rec.bytes > 0 {
		fmt.Fprintf(&b, "\n%d bytes", rec.bytes)
	}
	if rec.op >= 0 && rec.kind == machine.EvExec && r.ops[rec.op].flops > 0 {
		fmt.Fprintf(&b, "\n%d FLOPs", r.ops[rec.op].flops)
	}
	if rec.iterLen > 0 {
		fmt.Fprintf(&b, "\niteration %v", r.iter(rec))
	}
	return b.String()
}

// NiceStep rounds a tick interval to 1, 2 or 5 times a power of ten (at
// least 1).
func NiceStep(v float64) float64 {
	if v <= 1 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	switch f := v / p; {
	case f < 1.5:
		return p
	case f < 3.5:
		return 2 * p
	case f < 7.5:
		return 5 * p
	}
	return 10 * p
}

func legend() string {
	var b strings.Builder
	b.WriteString("<p class=\"legend\">")
	for _, p := range []asm.Pipe{asm.PipeS, asm.PipeMTE2, asm.PipeMTE1, asm.PipeM, asm.PipeFIX, asm.PipeV, asm.PipeMTE3} {
		fmt.Fprintf(&b, "<span style=\"background:%s\"></span>%s ", pipeColor[p], p)
	}
	fmt.Fprintf(&b, "<span style=\"background:%s\"></span>SDMA ", pipeColor[asm.PipeInvalid])
	fmt.Fprintf(&b, "<span style=\"background:%s\"></span>sync ", syncColor)
	fmt.Fprintf(&b, "<span style=\"background:%s\"></span>stall ", stallColor)
	fmt.Fprintf(&b, "<span style=\"background:%s;outline:1px solid %s\"></span>finding ", findingFill, findingStroke)
	b.WriteString("<span style=\"background:#eef2fb\"></span>run of the launch (name above)</p>\n")
	return b.String()
}

const htmlStyle = `<style>
body { font: 13px sans-serif; margin: 12px; color: #222; }
h1 { font-size: 16px; margin: 0 0 4px; }
h2 { font-size: 14px; }
.meta { color: #555; margin: 2px 0; }
.legend span { display: inline-block; width: 12px; height: 10px; margin: 0 3px 0 8px; vertical-align: middle; }
#zoom rect { stroke: #fff; stroke-width: 0.5px; stroke-opacity: 0.7; vector-effect: non-scaling-stroke; }
#zoom g.finding rect { stroke: none; }
svg#tl { border: 1px solid #ccc; background: #fff; cursor: grab; }
.findings li.error { color: #b00000; }
.findings li.warning { color: #a06000; }
</style>
`

// htmlScript zooms the plot horizontally by rewriting the inner SVG's
// viewBox, so rectangles stay crisp and labels stay put; moves the axis
// and run labels with it; and expands or folds rank and core lanes,
// laying the shown lanes out again.
var htmlScript = `<script>
(function () {
  var tl = document.getElementById("tl"), plot = document.getElementById("plot");
  if (!plot) return;
  var vb = plot.viewBox.baseVal, W = vb.width, x0 = 0, w = W, drag = null;
  var t0 = +plot.dataset.t0, sc = +plot.dataset.scale, left = +plot.dataset.left;
  var tks = document.querySelectorAll("text.tk, text.ph");
  var lbls = document.querySelectorAll("g.lbl"), lns = document.querySelectorAll("g.ln");
  var LH = ` + strconv.Itoa(laneH) + `, GAP = ` + strconv.Itoa(laneGap) + `, AX = ` + strconv.Itoa(axisH) + `;
  function apply() {
    plot.setAttribute("viewBox", x0 + " 0 " + w + " " + vb.height);
    for (var i = 0; i < tks.length; i++) {
      var px = ((+tks[i].dataset.c - t0) * sc - x0) * W / w;
      if (tks[i].classList.contains("ph") && px < 0) {
        var pe = ((+tks[i].dataset.e - t0) * sc - x0) * W / w;
        px = pe > 60 ? 0 : px; // a run that started left of the view keeps its name
      }
      tks[i].setAttribute("x", left + px + 2);
      var hide = px < 0 || px > W - 20;
      if (tks[i].classList.contains("ph")) {
        var room = ((+tks[i].dataset.e - t0) * sc - x0) * W / w - px;
        hide = hide || room < 7 * tks[i].textContent.length; // too short a run for its name
      }
      tks[i].style.display = hide ? "none" : "";
    }
  }
  function layout() {
    var open = [], y = AX;
    for (var i = 0; i < lbls.length; i++) {
      var g = lbls[i], p = +g.dataset.parent;
      open[i] = g.dataset.open === "true";
      var shown = p < 0 || (open[p] && lbls[p].style.display !== "none");
      var t = shown ? "translate(0," + y + ")" : "";
      g.style.display = lns[i].style.display = shown ? "" : "none";
      if (shown) {
        g.setAttribute("transform", t); lns[i].setAttribute("transform", t);
        y += LH + GAP;
      }
    }
    var h = y + 10;
    tl.setAttribute("height", h); tl.setAttribute("viewBox", "0 0 " + tl.viewBox.baseVal.width + " " + h);
    plot.setAttribute("height", h); vb.height = h; apply();
  }
  for (var i = 0; i < lbls.length; i++) {
    if (+lbls[i].dataset.level < 2) {
      lbls[i].style.cursor = "pointer";
      lbls[i].addEventListener("click", function () {
        var o = this.dataset.open !== "true", t = this.querySelector("text");
        this.dataset.open = o;
        t.textContent = (o ? "\u25be " : "\u25b8 ") + t.textContent.slice(2);
        layout();
      });
    }
  }
  apply();
  if (location.hash === "#all") {
    for (var i = 0; i < lbls.length; i++) {
      if (+lbls[i].dataset.level < 2) {
        lbls[i].dataset.open = "true";
        var t = lbls[i].querySelector("text");
        t.textContent = "\u25be " + t.textContent.slice(2);
      }
    }
    layout();
  }
  plot.addEventListener("wheel", function (e) {
    e.preventDefault();
    var r = plot.getBoundingClientRect(), f = (e.clientX - r.left) / r.width;
    var at = x0 + f * w, k = e.deltaY < 0 ? 0.8 : 1.25;
    w = Math.min(W, Math.max(W / 2000, w * k));
    x0 = Math.min(W - w, Math.max(0, at - f * w));
    apply();
  }, { passive: false });
  plot.addEventListener("mousedown", function (e) { drag = { x: e.clientX, x0: x0 }; });
  window.addEventListener("mouseup", function () { drag = null; });
  window.addEventListener("mousemove", function (e) {
    if (!drag) return;
    var r = plot.getBoundingClientRect();
    x0 = Math.min(W - w, Math.max(0, drag.x0 - (e.clientX - drag.x) / r.width * w));
    apply();
  });
  plot.addEventListener("dblclick", function () { x0 = 0; w = W; apply(); });
})();
</script>
`
