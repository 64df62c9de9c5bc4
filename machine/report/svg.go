package report

import (
	"fmt"
	"html"
	"io"
	"math"
	"strings"

	"github.com/ptoasm/ptoasm/machine/trace"
)

// Series is one line or set of points of a chart.
type Series struct {
	Name   string
	Color  string
	X, Y   []float64
	Labels []string // per point, shown beside it (roofline kernels)
	Line   bool     // join the points
	Dashed bool
}

// Chart is a small SVG chart: axes with ticks, one or more series, a
// legend. Log axes take positive values only (others are left out).
type Chart struct {
	ID             string // the svg element's id
	Title          string
	XLabel, YLabel string
	LogX, LogY     bool
	XTicks         []Tick // nil: computed
	YMin, YMax     float64
	FixedY         bool // use YMin, YMax as given
	Series         []Series
	// X2 adds a second axis label under the ticks: f(x) as text (µs
	// under cycles).
	X2 func(x float64) string
}

// Tick is one labelled position on an axis.
type Tick struct {
	At    float64
	Label string
}

const (
	chartW, chartH = 640, 300
	padL, padR     = 64, 150
	padT, padB     = 28, 52
)

// palette holds distinct colours for series.
var palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#17becf", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22"}

// WriteSVG writes the chart as an inline <svg>.
func (c *Chart) WriteSVG(w io.Writer) {
	tx := func(v float64) float64 { return v }
	ty := tx
	if c.LogX {
		tx = math.Log10
	}
	if c.LogY {
		ty = math.Log10
	}
	ok := func(x, y float64) bool {
		return !math.IsNaN(x) && !math.IsNaN(y) && !math.IsInf(x, 0) && !math.IsInf(y, 0) && (!c.LogX || x > 0) && (!c.LogY || y > 0)
	}
	x0, x1, y0, y1 := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, s := range c.Series {
		for i := range s.X {
			if !ok(s.X[i], s.Y[i]) {
				continue
			}
			x0, x1 = min(x0, tx(s.X[i])), max(x1, tx(s.X[i]))
			y0, y1 = min(y0, ty(s.Y[i])), max(y1, ty(s.Y[i]))
		}
	}
	for _, t := range c.XTicks {
		x0, x1 = min(x0, tx(t.At)), max(x1, tx(t.At))
	}
	if c.FixedY {
		y0, y1 = ty(c.YMin), ty(c.YMax)
	}
	if x0 > x1 {
		x0, x1 = 0, 1
	}
	if y0 > y1 {
		y0, y1 = 0, 1
	}
	if x1 == x0 {
		x0, x1 = x0-0.5, x1+0.5
	}
	if y1 == y0 {
		y0, y1 = y0-0.5, y1+0.5
	}
	if !c.FixedY && !c.LogY && y0 > 0 {
		y0 = 0 // linear value axes start at zero
	}
	pw, ph := float64(chartW-padL-padR), float64(chartH-padT-padB)
	px := func(v float64) float64 { return padL + (tx(v)-x0)/(x1-x0)*pw }
	py := func(v float64) float64 { return padT + ph - (ty(v)-y0)/(y1-y0)*ph }

	fmt.Fprintf(w, "<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"%s\" class=\"chart\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"11\">\n",
		html.EscapeString(c.ID), chartW, chartH, chartW, chartH)
	fmt.Fprintf(w, "<text x=\"%d\" y=\"16\" font-size=\"13\" font-weight=\"bold\">%s</text>\n", padL, html.EscapeString(c.Title))
	fmt.Fprintf(w, "<rect x=\"%d\" y=\"%d\" width=\"%.0f\" height=\"%.0f\" fill=\"#fafafa\" stroke=\"#bbb\"/>\n", padL, padT, pw, ph)
	// Ticks.
	xt := c.XTicks
	if xt == nil {
		xt = ticks(x0, x1, c.LogX)
	}
	for ti, t := range xt {
		if tx(t.At) < x0-1e-9 || tx(t.At) > x1+1e-9 {
			continue
		}
		x := px(t.At)
		// Second labels are longer: every other tick when crowded.
		x2 := c.X2 != nil && (len(xt) <= 5 || ti%2 == 0)
		fmt.Fprintf(w, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%.0f\" stroke=\"#e4e4e4\"/>", x, x, padT, padT+ph)
		fmt.Fprintf(w, "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">%s</text>", x, padT+ph+14, html.EscapeString(t.Label))
		if x2 {
			fmt.Fprintf(w, "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\" fill=\"#777\">%s</text>", x, padT+ph+27, html.EscapeString(c.X2(t.At)))
		}
		fmt.Fprintln(w)
	}
	for _, t := range ticks(y0, y1, c.LogY) {
		if ty(t.At) < y0-1e-9 || ty(t.At) > y1+1e-9 {
			continue
		}
		y := py(t.At)
		fmt.Fprintf(w, "<line x1=\"%d\" x2=\"%.0f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#e4e4e4\"/><text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
			padL, padL+pw, y, y, padL-4, y+4, html.EscapeString(t.Label))
	}
	fmt.Fprintf(w, "<text x=\"%.0f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n", padL+pw/2, chartH-6, html.EscapeString(c.XLabel))
	fmt.Fprintf(w, "<text transform=\"translate(14 %.0f) rotate(-90)\" text-anchor=\"middle\">%s</text>\n", padT+ph/2, html.EscapeString(c.YLabel))
	// Series, clipped to the plot.
	fmt.Fprintf(w, "<clipPath id=\"%s-clip\"><rect x=\"%d\" y=\"%d\" width=\"%.0f\" height=\"%.0f\"/></clipPath>\n<g clip-path=\"url(#%s-clip)\">\n",
		html.EscapeString(c.ID), padL, padT, pw, ph, html.EscapeString(c.ID))
	for si, s := range c.Series {
		col := s.Color
		if col == "" {
			col = palette[si%len(palette)]
		}
		cls := "series"
		if s.Line {
			var pts []string
			for i := range s.X {
				if ok(s.X[i], s.Y[i]) {
					pts = append(pts, fmt.Sprintf("%.1f,%.1f", px(s.X[i]), py(s.Y[i])))
				}
			}
			dash := ""
			if s.Dashed {
				dash = " stroke-dasharray=\"5 3\""
			}
			fmt.Fprintf(w, "<polyline class=\"%s\" data-name=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.8\"%s points=\"%s\"/>\n",
				cls, html.EscapeString(s.Name), col, dash, strings.Join(pts, " "))
		}
		if !s.Line || len(s.Labels) > 0 {
			for i := range s.X {
				if !ok(s.X[i], s.Y[i]) {
					continue
				}
				fmt.Fprintf(w, "<circle class=\"point\" cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\"><title>%s: %.4g, %.4g</title></circle>",
					px(s.X[i]), py(s.Y[i]), col, html.EscapeString(s.Name), s.X[i], s.Y[i])
				if i < len(s.Labels) && s.Labels[i] != "" {
					fmt.Fprintf(w, "<text class=\"plabel\" x=\"%.1f\" y=\"%.1f\">%s</text>", px(s.X[i])+6, py(s.Y[i])-6, html.EscapeString(s.Labels[i]))
				}
				fmt.Fprintln(w)
			}
		}
	}
	fmt.Fprintln(w, "</g>")
	// Legend.
	for si, s := range c.Series {
		col := s.Color
		if col == "" {
			col = palette[si%len(palette)]
		}
		y := padT + 6 + si*15
		fmt.Fprintf(w, "<rect x=\"%.0f\" y=\"%d\" width=\"12\" height=\"4\" fill=\"%s\"/><text class=\"legend\" x=\"%.0f\" y=\"%d\">%s</text>\n",
			padL+pw+10, y+2, col, padL+pw+26, y+7, html.EscapeString(s.Name))
	}
	fmt.Fprintln(w, "</svg>")
}

// ticks are about six round positions over [lo, hi] (log10 values when log).
func ticks(lo, hi float64, log bool) []Tick {
	var out []Tick
	if log {
		for e := math.Floor(lo); e <= math.Ceil(hi); e++ {
			v := math.Pow(10, e)
			out = append(out, Tick{At: v, Label: fmtNum(v)})
		}
		return out
	}
	step := niceStepF((hi - lo) / 6)
	for v := math.Ceil(lo/step) * step; v <= hi+step*1e-9; v += step {
		out = append(out, Tick{At: v, Label: fmtNum(v)})
	}
	return out
}

// fmtNum writes a tick value briefly: 1.5k, 2M, 0.25.
func fmtNum(v float64) string {
	a := math.Abs(v)
	switch {
	case a == 0:
		return "0"
	case a >= 1e9:
		return trimZeros(fmt.Sprintf("%.2f", v/1e9)) + "G"
	case a >= 1e6:
		return trimZeros(fmt.Sprintf("%.2f", v/1e6)) + "M"
	case a >= 1e4:
		return trimZeros(fmt.Sprintf("%.2f", v/1e3)) + "k"
	case a >= 1:
		return trimZeros(fmt.Sprintf("%.2f", v))
	}
	return fmt.Sprintf("%.3g", v)
}

func trimZeros(s string) string {
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// niceStepF is trace.NiceStep for spans under 1 too (utilisation, TFLOPS).
func niceStepF(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	return trace.NiceStep(v/p) * p
}
