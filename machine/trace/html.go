package trace

import (
	"bufio"
	"fmt"
	"html"
	"io"
	"math"
	"sort"
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
	// MaxLanes caps the lanes drawn (default 160); the rest are listed as
	// left out, so use a record-time Filter to look at them.
	MaxLanes int
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
	laneH      = 16
	laneGap    = 3
	labelW     = 130
	axisH      = 28
)

// rectCap bounds the rectangles drawn per lane whatever the plot width, so
// that a file stays a few megabytes even for long runs.
const rectCap = 4000

// WriteHTML writes one self-contained HTML page (inline CSS, SVG and a little
// JavaScript; no network) with a timeline: a lane per core×pipe, a rectangle
// per instruction coloured by pipe (sync ops dark, stalls pale red), a
// tooltip per rectangle, red marks for the markers, wheel zoom and drag pan.
// Slices narrower than a pixel are merged with their neighbours on the lane
// into one rectangle that says how many ops it holds, so the page size grows
// with lanes × width, not with the number of instructions.
func (r *Recorder) WriteHTML(w io.Writer, opt HTMLOptions) error {
	if opt.Width <= 0 {
		opt.Width = 1200
	}
	if opt.MaxLanes <= 0 {
		opt.MaxLanes = 160
	}
	if opt.Title == "" {
		opt.Title = "ptoasm timeline"
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	order := r.order()

	// Lanes and the time range of what is drawn.
	laneIx := map[lane]int{}
	var lanes []lane
	t0, t1 := int64(math.MaxInt64), int64(0)
	for _, i := range order {
		rec := &r.recs[i]
		if !sliced(rec.kind) || !r.match(&opt.Filter, rec) {
			continue
		}
		l := lane{rec.rank, rec.core, rec.pipe}
		if _, ok := laneIx[l]; !ok {
			laneIx[l] = 0
			lanes = append(lanes, l)
		}
		t0, t1 = min(t0, rec.start), max(t1, rec.end)
	}
	sort.Slice(lanes, func(i, j int) bool { return laneLess(lanes[i], lanes[j]) })
	omitted := 0
	if len(lanes) > opt.MaxLanes {
		omitted = len(lanes) - opt.MaxLanes
		lanes = lanes[:opt.MaxLanes]
	}
	for k := range laneIx {
		laneIx[k] = -1
	}
	for i, l := range lanes {
		laneIx[l] = i
	}
	if t0 > t1 {
		t0, t1 = 0, 1
	}
	if t1 == t0 {
		t1 = t0 + 1
	}
	W := float64(opt.Width)
	scale := W / float64(t1-t0)
	x := func(c int64) float64 { return float64(c-t0) * scale }
	laneY := func(i int) float64 { return float64(axisH + i*(laneH+laneGap)) }
	H := axisH + len(lanes)*(laneH+laneGap) + 10

	fmt.Fprintf(bw, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>%s</title>\n", html.EscapeString(opt.Title))
	bw.WriteString(htmlStyle)
	fmt.Fprintf(bw, "</head><body>\n<h1>%s</h1>\n", html.EscapeString(opt.Title))
	fmt.Fprintf(bw, "<p class=\"meta\">cycles %d–%d", t0, t1)
	if opt.ClockHz > 0 {
		fmt.Fprintf(bw, " (%.3f µs at %.4g GHz)", float64(t1-t0)/opt.ClockHz*1e6, opt.ClockHz/1e9)
	}
	fmt.Fprintf(bw, " · %d lanes", len(lanes))
	if omitted > 0 {
		fmt.Fprintf(bw, " (%d more lanes left out: filter by rank or core)", omitted)
	}
	bw.WriteString(" · wheel: zoom, drag: pan, double-click: reset</p>\n")
	bw.WriteString(legend())

	fmt.Fprintf(bw, "<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"tl\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"monospace\" font-size=\"11\">\n",
		labelW+opt.Width+10, H, labelW+opt.Width+10, H)
	// Lane backgrounds and labels.
	for i, l := range lanes {
		y := laneY(i)
		cls := "lane"
		if i > 0 && (lanes[i-1].rank != l.rank || lanes[i-1].core != l.core) {
			fmt.Fprintf(bw, "<line x1=\"0\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#999\"/>\n", labelW+opt.Width, y-1.5, y-1.5)
		}
		fmt.Fprintf(bw, "<rect class=\"%s\" x=\"%d\" y=\"%.1f\" width=\"%d\" height=\"%d\" fill=\"#f7f7f7\"/>\n", cls, labelW, y, opt.Width, laneH)
		fmt.Fprintf(bw, "<text x=\"4\" y=\"%.1f\">%s %s</text>\n", y+laneH-4,
			html.EscapeString(r.coreName(l.rank, l.core)), html.EscapeString(laneName(l.core, l.pipe)))
	}
	// Axis labels; the tick lines are drawn inside the zoomed plot, and the
	// script moves the labels with them.
	step := niceStep(float64(t1-t0) / 8)
	var ticks []float64
	for c := math.Ceil(float64(t0)/step) * step; c <= float64(t1); c += step {
		ticks = append(ticks, c)
		fmt.Fprintf(bw, "<text class=\"tk\" data-c=\"%d\" x=\"%.1f\" y=\"%d\" fill=\"#555\">%d</text>\n", int64(c), labelW+x(int64(c))+2, axisH-10, int64(c))
	}

	// Slices, merged below a pixel, clipped to the plot.
	fmt.Fprintf(bw, "<svg x=\"%d\" y=\"0\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" preserveAspectRatio=\"none\" id=\"plot\" data-t0=\"%d\" data-scale=\"%g\" data-left=\"%d\">\n<g id=\"zoom\">\n",
		labelW, opt.Width, H, opt.Width, H, t0, scale, labelW)
	for _, c := range ticks {
		xx := x(int64(c))
		fmt.Fprintf(bw, "<line x1=\"%.2f\" x2=\"%.2f\" y1=\"%d\" y2=\"%d\" stroke=\"#ddd\" vector-effect=\"non-scaling-stroke\"/>\n", xx, xx, axisH-6, H-10)
	}
	type pending struct {
		x0, x1     float64
		n          int
		first      int32
		c0, c1     int64
		color      string
		drawn      int
		stall      bool
		lastSyncPx int
	}
	pend := make([]pending, len(lanes))
	for i := range pend {
		pend[i].first = -1
		pend[i].lastSyncPx = -1
	}
	flush := func(li int) {
		p := &pend[li]
		if p.first < 0 {
			return
		}
		if p.drawn < rectCap {
			y := laneY(li)
			h := float64(laneH)
			if p.stall {
				y, h = y+laneH*0.25, laneH*0.5
			}
			fmt.Fprintf(bw, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" fill=\"%s\"><title>", p.x0, y, max(p.x1-p.x0, 0.8), h, p.color)
			if p.n == 1 {
				bw.WriteString(html.EscapeString(r.tooltip(p.first, opt.ClockHz)))
			} else {
				fmt.Fprintf(bw, "%d ops, cycles %d–%d (zoom in, or filter with --from/--to)", p.n, p.c0, p.c1)
			}
			bw.WriteString("</title></rect>\n")
			p.drawn++
		}
		p.first = -1
	}
	for _, i := range order {
		rec := &r.recs[i]
		if !sliced(rec.kind) || !r.match(&opt.Filter, rec) {
			continue
		}
		li, ok := laneIx[lane{rec.rank, rec.core, rec.pipe}]
		if !ok || li < 0 {
			continue
		}
		x0, x1 := x(rec.start), x(rec.end)
		if rec.end == rec.start || isSyncKind(rec.kind) {
			// Instantaneous sync events: a thin dark tick at the top of the
			// lane, at most one per pixel.
			px := int(x0)
			p := &pend[li]
			if px != p.lastSyncPx {
				p.lastSyncPx = px
				fmt.Fprintf(bw, "<rect x=\"%.2f\" y=\"%.1f\" width=\"1\" height=\"%d\" fill=\"%s\"><title>%s</title></rect>\n",
					x0, laneY(li), laneH/3, syncColor, html.EscapeString(r.tooltip(i, opt.ClockHz)))
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
		p := &pend[li]
		if p.first >= 0 && p.stall == stall && x0-p.x1 < 1 && (x1-x0 < 1 || p.x1-p.x0 < 1) && x1-p.x0 < 2 {
			// Both are tiny and touch: merge.
			p.x1 = max(p.x1, x1)
			p.c1 = max(p.c1, rec.end)
			p.n++
			continue
		}
		flush(li)
		*p = pending{x0: x0, x1: x1, n: 1, first: i, c0: rec.start, c1: rec.end, color: color, drawn: p.drawn,
			stall: stall, lastSyncPx: p.lastSyncPx}
	}
	for li := range pend {
		flush(li)
	}

	// Findings: a red mark on each lane that ran an op at the finding's line.
	marks := r.markerSites(opt.Markers, laneIx, &opt.Filter)
	for _, m := range marks {
		xx := x(r.recs[m.rec].start)
		y := laneY(m.lane)
		fmt.Fprintf(bw, "<g class=\"finding\"><rect x=\"%.2f\" y=\"%.1f\" width=\"3\" height=\"%d\" fill=\"#e00000\"/>"+
			"<rect x=\"%.2f\" y=\"%.1f\" width=\"9\" height=\"5\" fill=\"#e00000\"/><title>%s</title></g>\n",
			xx-1, y-2, laneH+4, xx-4, y-3, html.EscapeString(m.text))
	}
	bw.WriteString("</g>\n</svg>\n</svg>\n")

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
	for i := range r.recs {
		rec := &r.recs[i]
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
	rec := &r.recs[i]
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

// niceStep rounds a tick interval to 1, 2 or 5 times a power of ten.
func niceStep(v float64) float64 {
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
	b.WriteString("<span style=\"background:#e00000\"></span>finding</p>\n")
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
// viewBox, so rectangles stay crisp and labels stay put.
const htmlScript = `<script>
(function () {
  var plot = document.getElementById("plot");
  if (!plot) return;
  var vb = plot.viewBox.baseVal, W = vb.width, x0 = 0, w = W, drag = null;
  var t0 = +plot.dataset.t0, sc = +plot.dataset.scale, left = +plot.dataset.left;
  var tks = document.querySelectorAll("text.tk");
  function apply() {
    plot.setAttribute("viewBox", x0 + " 0 " + w + " " + vb.height);
    for (var i = 0; i < tks.length; i++) {
      var px = ((+tks[i].dataset.c - t0) * sc - x0) * W / w;
      tks[i].setAttribute("x", left + px + 2);
      tks[i].style.display = px < 0 || px > W - 20 ? "none" : "";
    }
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
