package report

import (
	"fmt"

	"github.com/ptoasm/ptoasm/machine"
	"io"
	"path/filepath"
	"sort"
	"text/tabwriter"
)

// Rows the default text report shows of its long tables; --detail shows
// them all.
const (
	shownGroups   = 12
	shownLinks    = 16
	shownHotspots = 12
)

// WriteText writes the human report. detail adds the per-core pipe table
// and lists every core group, link and hotspot.
func (r *Report) WriteText(w io.Writer, detail bool) {
	if r.Partial != "" {
		fmt.Fprintf(w, "partial report: %s\n\n", r.Partial)
	}
	fmt.Fprintf(w, "cycles   %d\n", r.Cycles)
	fmt.Fprintf(w, "time     %.3f us\n", r.TimeUS)
	if r.FLOPs > 0 {
		fmt.Fprintf(w, "flops    %d, all ranks and runs (%.3f TFLOPS aggregate over the launch)\n", r.FLOPs, r.TFLOPS)
	}
	if len(r.Runs) > 1 {
		machine.FprintRuns(w, r.Runs)
	}
	r.Modes.WriteText(w)
	if len(r.PipeSummary) > 0 {
		fmt.Fprintln(w, "\npipes (over every core of a kind; util: mean, least-most):")
		tw := table(w)
		fmt.Fprintln(tw, "kind\tpipe\tcores\tbusy\tinstr\tutil\trange\t")
		for _, p := range r.PipeSummary {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%.1f%%\t%.1f-%.1f%%\t\n", p.CoreKind, p.Pipe, p.Cores, p.BusyCycles, p.Instructions,
				100*p.MeanUtil, 100*p.MinUtil, 100*p.MaxUtil)
		}
		tw.Flush()
	}
	if len(r.CoreGroups) > 1 || (detail && len(r.CoreGroups) > 0) {
		fmt.Fprintln(w, "\ncores (cores that ran the same instructions collapsed; busy per core: mean, least-most):")
		tw := table(w)
		fmt.Fprintln(tw, "cores\tpipe\tbusy\trange\tinstr\tutil\t")
		n := len(r.CoreGroups)
		if !detail {
			n = min(n, shownGroups)
		}
		for _, g := range r.CoreGroups[:n] {
			for i, p := range g.Pipes {
				label := ""
				if i == 0 {
					label = g.Label
				}
				rng := ""
				if p.MinBusy != p.MaxBusy {
					rng = fmt.Sprintf("%d-%d", p.MinBusy, p.MaxBusy)
				}
				fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%d\t%.1f%%\t\n", label, p.Pipe, p.BusyCycles, rng, p.Instructions, 100*p.Utilisation)
			}
		}
		tw.Flush()
		if n < len(r.CoreGroups) {
			fmt.Fprintf(w, "  ... %d more groups (--detail lists them)\n", len(r.CoreGroups)-n)
		}
	}
	if detail {
		machine.FprintPipes(w, "pipes of every core", r.Pipes)
	}
	if len(r.Bandwidth) > 0 {
		fmt.Fprintln(w, "\nbandwidth (GB/s over the whole run; per transfer: while one was under way):")
		tw := table(w)
		fmt.Fprintln(tw, "path\tbytes\ttransfers\tGB/s\tper transfer\t")
		for _, b := range r.Bandwidth {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%.2f\t%.2f\t\n", b.Path, b.Bytes, b.Transfers, b.GBps, b.GBpsTransfer)
		}
		tw.Flush()
	} else {
		machine.FprintBytes(w, r.Bytes)
	}
	if !r.Stats {
		fmt.Fprintln(w, "\n(bandwidth, links, bus bandwidth, hotspots and roofline: run with --stats=on)")
	}
	if len(r.Links) > 0 {
		r.writeLinks(w, detail)
	}
	if len(r.Collectives) > 0 {
		fmt.Fprintln(w, "\nbus bandwidth (nccl-tests convention: the busiest rank's link bytes / time):")
		tw := table(w)
		fmt.Fprintln(tw, "collective\tsite\tranks\tinstances\tbytes\ttime_us\talg GB/s\tbus GB/s\t")
		for _, c := range r.Collectives {
			alg := "-"
			if c.Factor > 0 {
				alg = fmt.Sprintf("%.2f", c.AlgGBps)
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%.3f\t%s\t%.2f\t\n", c.Kind, c.Site, c.Ranks, c.Instances, c.Bytes, c.TimeUS, alg, c.BusGBps)
		}
		tw.Flush()
	}
	if len(r.Hotspots) > 0 {
		fmt.Fprintln(w, "\nhotspots (source lines by busy + stall cycles, summed over cores):")
		tw := table(w)
		fmt.Fprintln(tw, "line\top\tpipe\tinstr\tbusy\tstall\treason\t")
		n := len(r.Hotspots)
		if !detail {
			n = min(n, shownHotspots)
		}
		for _, h := range r.Hotspots[:n] {
			fmt.Fprintf(tw, "%s:%d\t%s\t%s\t%d\t%d\t%d\t%s\t\n", filepath.Base(h.File), h.Line, h.Op, h.Pipe, h.Instructions,
				h.BusyCycles, h.StallCycles, h.StallReason)
		}
		tw.Flush()
		if n < len(r.Hotspots) {
			fmt.Fprintf(w, "  ... %d more lines (--detail lists them)\n", len(r.Hotspots)-n)
		}
	}
	if len(r.Kernels) > 0 && r.FLOPs > 0 {
		fmt.Fprintln(w, "\nkernels (roofline: FLOPs per GM byte against the cube and GM roofs of the cores and ranks they ran on):")
		tw := table(w)
		fmt.Fprintln(tw, "kernel\tcores\tflops\tGM bytes\tflops/byte\tTFLOPS\tpeak TFLOPS\tGM GB/s roof\t")
		for _, k := range r.Kernels {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%.2f\t%.3f\t%.1f\t%.0f\t\n", k.Name, k.Cores, k.FLOPs, k.GMBytes, k.Intensity, k.TFLOPS, k.PeakTFLOPS, k.PeakGBps)
		}
		tw.Flush()
	}
	if len(r.checks) > 0 {
		machine.FprintChecks(w, r.checks)
	} else if r.Partial != "" {
		fmt.Fprintln(w, "\nchecks: not run (the run did not end)")
	}
	for _, f := range r.Faults {
		fmt.Fprintf(w, "fault: %s\n", f)
	}
}

func (r *Report) writeLinks(w io.Writer, detail bool) {
	links := r.Links
	fmt.Fprintln(w, "\nlinks (bytes from one rank's memory to another's):")
	if !detail && len(links) > shownLinks {
		links = append([]Link(nil), links...)
		sort.SliceStable(links, func(i, j int) bool { return links[i].Bytes > links[j].Bytes })
		links = links[:shownLinks]
	}
	tw := table(w)
	fmt.Fprintln(tw, "from\tto\tbytes\ttransfers\tGB/s\tper transfer\t")
	for _, l := range links {
		fmt.Fprintf(tw, "r%d\tr%d\t%d\t%d\t%.2f\t%.2f\t\n", l.From, l.To, l.Bytes, l.Transfers, l.GBps, l.GBpsTransfer)
	}
	tw.Flush()
	if len(links) < len(r.Links) {
		fmt.Fprintf(w, "  ... %d more links (the busiest shown; --detail lists them)\n", len(r.Links)-len(links))
	}
}

func table(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
}

// ModeTimes are the times of a program's mode runs; a nil field is a mode
// the program did not run.
type ModeTimes struct {
	ComputeOnly, Comm, Compute, Pipelined *float64
	FLOPs                                 int64 // per rank and mode; 0: unknown
}

// FindModes picks a program's mode runs out of runs by name (see
// programs/allgather_gemm/README.md): compute_only, seq_comm and seq_compute
// (the sequential pair, kept only when both ran) and pipelined. The first run
// of a name counts, so a program that repeats a phase reports its first
// instance; other names (host preparation) are left out. ok says whether any
// mode was found. FLOPs is left for the caller, who knows the program.
func FindModes(runs []machine.RunStat) (t ModeTimes, ok bool) {
	var comm, compute *float64
	for _, r := range runs {
		v := r.TimeUS
		switch {
		case r.Name == "compute_only" && t.ComputeOnly == nil:
			t.ComputeOnly = &v
		case r.Name == "seq_comm" && comm == nil:
			comm = &v
		case r.Name == "seq_compute" && compute == nil:
			compute = &v
		case r.Name == "pipelined" && t.Pipelined == nil:
			t.Pipelined = &v
		}
	}
	if comm != nil && compute != nil {
		t.Comm, t.Compute = comm, compute
	}
	return t, t.ComputeOnly != nil || t.Comm != nil || t.Pipelined != nil
}

// NewModes builds the speed-up block from the mode times.
func NewModes(t ModeTimes) *Modes {
	m := &Modes{ComputeOnlyUS: t.ComputeOnly, SeqCommUS: t.Comm, SeqComputeUS: t.Compute, PipelinedUS: t.Pipelined, FLOPs: t.FLOPs}
	if t.Comm != nil && t.Compute != nil {
		s := *t.Comm + *t.Compute
		m.SequentialUS = &s
		if t.Pipelined != nil && *t.Pipelined > 0 {
			su := s / *t.Pipelined
			m.SpeedUp = &su
			if mn := min(*t.Comm, *t.Compute); mn > 0 {
				eff := (s - *t.Pipelined) / mn
				m.OverlapEff = &eff
			}
		}
	}
	return m
}

// WriteText prints the mode block (nothing for a nil block) the way pto-isa's allgather_gemm host
// program prints it.
func (m *Modes) WriteText(w io.Writer) {
	if m == nil {
		return
	}
	tflops := func(us float64) string {
		if m.FLOPs <= 0 || us <= 0 {
			return ""
		}
		return fmt.Sprintf("  %8.3f TFLOPS", float64(m.FLOPs)/(us*1e-6)/1e12)
	}
	fmt.Fprint(w, "\nmodes")
	if m.FLOPs > 0 {
		fmt.Fprintf(w, " (TFLOPS = FLOPS / time, per rank; FLOPS = %d)", m.FLOPs)
	}
	fmt.Fprintln(w, ":")
	if v := m.ComputeOnlyUS; v != nil {
		fmt.Fprintf(w, "  compute-only  %12.3f us%s\n", *v, tflops(*v))
	}
	if s := m.SequentialUS; s != nil {
		fmt.Fprintf(w, "  sequential    %12.3f us%s  (comm %.3f us + compute %.3f us)\n", *s, tflops(*s), *m.SeqCommUS, *m.SeqComputeUS)
	}
	if v := m.PipelinedUS; v != nil {
		fmt.Fprintf(w, "  pipelined     %12.3f us%s\n", *v, tflops(*v))
	}
	if v := m.SpeedUp; v != nil {
		fmt.Fprintf(w, "  speed-up      %12.3fx    (sequential / pipelined)\n", *v)
	}
	if v := m.OverlapEff; v != nil {
		fmt.Fprintf(w, "  overlap eff   %12.1f%%    ((comm + compute - pipelined) / min(comm, compute))\n", 100**v)
	}
}
