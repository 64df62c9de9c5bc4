package main

import (
	"bytes"
	"path/filepath"

	"github.com/ptoasm/ptoasm/machine/report"
	"github.com/ptoasm/ptoasm/pipes"
)

// writeSweepReport writes the sweep's HTML page to path: the metric best
// chooses by (TFLOPS, or time) against each swept parameter.
func writeSweepReport(path string, rep *sweepReport) error {
	isDefine := func(axis string) bool {
		_, known := pipes.DefaultProfile().Get(axis)
		return !known
	}
	best, why := bestPoints(rep.Points, isDefine)
	page := &report.SweepPage{Title: "ptoasm sweep " + filepath.Base(rep.File), Axes: rep.Grid, Metric: "time (µs)"}
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
	var buf bytes.Buffer
	if err := report.WriteSweepHTML(&buf, page); err != nil {
		return err
	}
	return writeFileAtomic(path, buf.Bytes())
}
