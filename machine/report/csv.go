package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

// Tables lists the tables WriteCSV writes, by name.
var Tables = []string{"summary", "cores", "pipes", "bandwidth", "links", "collectives", "hotspots", "kernels", "runs", "checks", "utilisation"}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

func ftoa(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// WriteCSV writes one table of the report as CSV with a header row (RFC
// 4180, what spreadsheets and pandas.read_csv read).
func (r *Report) WriteCSV(w io.Writer, name string) error {
	var rows [][]string
	add := func(cells ...string) { rows = append(rows, cells) }
	switch name {
	case "summary":
		add("core_kind", "pipe", "cores", "busy_cycles", "instructions", "mean_utilisation", "min_utilisation", "max_utilisation")
		for _, p := range r.PipeSummary {
			add(p.CoreKind, p.Pipe, itoa(int64(p.Cores)), itoa(p.BusyCycles), itoa(p.Instructions), ftoa(p.MeanUtil), ftoa(p.MinUtil), ftoa(p.MaxUtil))
		}
	case "cores":
		add("group", "cores", "pipe", "instructions", "busy_cycles", "min_busy_cycles", "max_busy_cycles", "utilisation")
		for _, g := range r.CoreGroups {
			for _, p := range g.Pipes {
				add(g.Label, strings.Join(g.Cores, " "), p.Pipe, itoa(p.Instructions), itoa(p.BusyCycles), itoa(p.MinBusy), itoa(p.MaxBusy), ftoa(p.Utilisation))
			}
		}
	case "pipes":
		add("rank", "core", "pipe", "busy_cycles", "instructions", "utilisation")
		for _, p := range r.Pipes {
			add(itoa(int64(p.Rank)), p.Core, p.Pipe, itoa(p.BusyCycles), itoa(p.Instructions), ftoa(p.Utilisation))
		}
	case "bandwidth":
		add("path", "bytes", "transfers", "busy_cycles", "gbps", "gbps_per_transfer")
		for _, b := range r.Bandwidth {
			add(b.Path, itoa(b.Bytes), itoa(b.Transfers), itoa(b.BusyCycles), ftoa(b.GBps), ftoa(b.GBpsTransfer))
		}
	case "links":
		add("from", "to", "bytes", "transfers", "busy_cycles", "gbps", "gbps_per_transfer")
		for _, l := range r.Links {
			add(itoa(int64(l.From)), itoa(int64(l.To)), itoa(l.Bytes), itoa(l.Transfers), itoa(l.BusyCycles), ftoa(l.GBps), ftoa(l.GBpsTransfer))
		}
	case "collectives":
		add("kind", "site", "ranks", "instances", "bytes", "time_us", "alg_gbps", "bus_gbps", "factor")
		for _, c := range r.Collectives {
			add(c.Kind, c.Site, itoa(int64(c.Ranks)), itoa(int64(c.Instances)), itoa(c.Bytes), ftoa(c.TimeUS), ftoa(c.AlgGBps), ftoa(c.BusGBps), ftoa(c.Factor))
		}
	case "hotspots":
		add("file", "line", "op", "pipe", "instructions", "busy_cycles", "stall_cycles", "stall_reason")
		for _, h := range r.Hotspots {
			add(h.File, itoa(int64(h.Line)), h.Op, h.Pipe, itoa(h.Instructions), itoa(h.BusyCycles), itoa(h.StallCycles), h.StallReason)
		}
	case "kernels":
		add("name", "kind", "cores", "flops", "gm_bytes", "time_us", "intensity", "tflops", "peak_tflops", "peak_gbps")
		for _, k := range r.Kernels {
			add(k.Name, k.Kind, itoa(int64(k.Cores)), itoa(k.FLOPs), itoa(k.GMBytes), ftoa(k.TimeUS), ftoa(k.Intensity), ftoa(k.TFLOPS), ftoa(k.PeakTFLOPS), ftoa(k.PeakGBps))
		}
	case "runs":
		add("name", "start", "end", "time_us")
		for _, run := range r.Runs {
			add(run.Name, itoa(run.Start), itoa(run.End), ftoa(run.TimeUS))
		}
	case "checks":
		add("name", "status", "max_abs_err", "message", "warning")
		for _, c := range r.Checks {
			st, e := "ok", ""
			switch {
			case c.Skipped:
				st = "skip"
			case !c.OK:
				st = "fail"
			}
			if c.MaxAbsErr != nil {
				e = ftoa(*c.MaxAbsErr)
			}
			add(c.Name, st, e, c.Msg, c.Warning)
		}
	case "utilisation":
		pipes := make([]string, 0, len(r.Utilisation.Pipes))
		for p := range r.Utilisation.Pipes {
			pipes = append(pipes, p)
		}
		sort.Strings(pipes)
		add(append([]string{"cycle"}, pipes...)...)
		n := 0
		for _, p := range pipes {
			n = max(n, len(r.Utilisation.Pipes[p]))
		}
		for i := 0; i < n; i++ {
			row := []string{itoa(int64(i) * r.Utilisation.BinCycles)}
			for _, p := range pipes {
				row = append(row, ftoa(r.Utilisation.Pipes[p][i]))
			}
			add(row...)
		}
	default:
		return fmt.Errorf("--table %s: want one of %s", name, strings.Join(Tables, ", "))
	}
	cw := csv.NewWriter(w)
	if err := cw.WriteAll(rows); err != nil {
		return err
	}
	return cw.Error()
}
