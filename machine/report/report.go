package report

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
	"github.com/ptoasm/ptoasm/pipes"
)

// SchemaVersion is the version of the run report's JSON shape
// (docs/run-report.schema.json). It goes up by one whenever a field is
// removed or changes meaning; added fields do not change it.
const SchemaVersion = 2

// SchemaURL names the JSON Schema the report follows.
const SchemaURL = "https://github.com/ptoasm/ptoasm/blob/main/docs/run-report.schema.json"

// Report is everything `ptoasm run` reports, in the JSON shape of
// docs/run-report.schema.json.
type Report struct {
	Schema        string `json:"$schema"`
	SchemaVersion int    `json:"schema_version"`
	Program       string `json:"program"`
	// Partial says why the run stopped before its end (Ctrl-C, a run
	// guard, a deadlock or fault); the figures cover the run up to there
	// and the checks did not run.
	Partial      string  `json:"partial,omitempty"`
	Cycles       int64   `json:"cycles"`
	TimeUS       float64 `json:"time_us"`
	ClockHz      float64 `json:"clock_hz"`
	FLOPs        int64   `json:"flops"`
	TFLOPS       float64 `json:"tflops"`
	Instructions int64   `json:"instructions"`
	// Stats says the run was observed for the tables beyond the machine's
	// result (bandwidth, links, collectives, hotspots, kernels,
	// utilisation); without it they are empty (run --stats).
	Stats bool `json:"stats"`

	Runs        []machine.RunStat  `json:"runs"`
	Modes       *Modes             `json:"modes,omitempty"`
	PipeSummary []PipeSummary      `json:"pipe_summary"`
	CoreGroups  []CoreGroup        `json:"core_groups"`
	Pipes       []machine.PipeStat `json:"pipes"` // every core's pipes (--detail)
	Bytes       []machine.PathStat `json:"bytes"`
	Bandwidth   []Bandwidth        `json:"bandwidth"`
	Links       []Link             `json:"links"`
	Collectives []Collective       `json:"collectives"`
	Hotspots    []Hotspot          `json:"hotspots"`
	Kernels     []Kernel           `json:"kernels"`
	Utilisation Utilisation        `json:"utilisation"`
	Checks      []Check            `json:"checks"`
	Faults      []string           `json:"faults,omitempty"`
	Findings    json.RawMessage    `json:"findings"`

	checks []machine.Check // for the text, which machine.FprintChecks writes
}

// PipeSummary is one pipe over every core of one kind that ran it.
type PipeSummary struct {
	CoreKind     string  `json:"core_kind"` // aic, aiv, unified
	Pipe         string  `json:"pipe"`
	Cores        int     `json:"cores"`
	BusyCycles   int64   `json:"busy_cycles"` // summed over the cores
	Instructions int64   `json:"instructions"`
	MeanUtil     float64 `json:"mean_utilisation"`
	MinUtil      float64 `json:"min_utilisation"`
	MaxUtil      float64 `json:"max_utilisation"`
}

// CoreGroup is a set of cores of one kind whose every pipe ran the same
// instructions (counts per pipe): one row per pipe stands for all of them,
// with the busy cycles' mean and range (timing can differ between cores
// doing the same work: shared GM port, links).
type CoreGroup struct {
	Cores []string    `json:"cores"`
	Label string      `json:"label"` // "r0-7.aic0-23 (192 cores)"
	Pipes []GroupPipe `json:"pipes"`
}

// GroupPipe is one pipe of a core group: per core, the instructions and the
// busy cycles (mean, least, most) and the mean utilisation.
type GroupPipe struct {
	Pipe         string  `json:"pipe"`
	Instructions int64   `json:"instructions"`
	BusyCycles   int64   `json:"busy_cycles"`
	MinBusy      int64   `json:"min_busy_cycles"`
	MaxBusy      int64   `json:"max_busy_cycles"`
	Utilisation  float64 `json:"utilisation"`
}

// Bandwidth is one data path: bytes moved, the transfers' summed duration,
// and two rates: over the whole run (what the path sustained) and while a
// transfer was under way (what one engine achieved).
type Bandwidth struct {
	Path         string  `json:"path"`
	Bytes        int64   `json:"bytes"`
	Transfers    int64   `json:"transfers"`
	BusyCycles   int64   `json:"busy_cycles"`
	GBps         float64 `json:"gbps"`
	GBpsTransfer float64 `json:"gbps_per_transfer"`
}

// Link is the traffic from one rank's memory to another's.
type Link struct {
	From         int     `json:"from"`
	To           int     `json:"to"`
	Bytes        int64   `json:"bytes"`
	Transfers    int64   `json:"transfers"`
	BusyCycles   int64   `json:"busy_cycles"`
	GBps         float64 `json:"gbps"`
	GBpsTransfer float64 `json:"gbps_per_transfer"`
}

// Collective is the bus bandwidth of one collective: a collective
// instruction's instances at one site, or a run that moved data between
// ranks (kind "run"). BusGBps follows nccl-tests: the bytes the busiest
// rank put on or took off the links per second, which for the
// bandwidth-optimal algorithms equals algbw × the collective's factor.
type Collective struct {
	Kind      string  `json:"kind"` // tbroadcast, treduce, tgather.comm, tscatter.comm, run
	Site      string  `json:"site"` // file:line, or the run's name
	Instances int     `json:"instances"`
	Ranks     int     `json:"ranks"`
	Bytes     int64   `json:"bytes"`   // the busiest rank's link bytes, per instance
	TimeUS    float64 `json:"time_us"` // mean per instance
	AlgGBps   float64 `json:"alg_gbps,omitempty"`
	BusGBps   float64 `json:"bus_gbps"`
	Factor    float64 `json:"factor,omitempty"`
}

// Hotspot is one source line: what its instructions kept their pipes busy
// for, and what they waited for.
type Hotspot struct {
	File         string           `json:"file"`
	Line         int              `json:"line"`
	Op           string           `json:"op"`
	Pipe         string           `json:"pipe"`
	Instructions int64            `json:"instructions"`
	BusyCycles   int64            `json:"busy_cycles"`
	StallCycles  int64            `json:"stall_cycles"`
	StallReason  string           `json:"stall_reason,omitempty"` // the largest
	Stalls       map[string]int64 `json:"stalls,omitempty"`
}

// Kernel is one kernel's roofline point.
type Kernel struct {
	Name       string  `json:"name"`
	Kind       string  `json:"kind"`
	Cores      int     `json:"cores"`
	FLOPs      int64   `json:"flops"`
	GMBytes    int64   `json:"gm_bytes"`
	TimeUS     float64 `json:"time_us"`
	Intensity  float64 `json:"intensity"` // FLOPs per GM byte
	TFLOPS     float64 `json:"tflops"`
	PeakTFLOPS float64 `json:"peak_tflops"` // compute roof of its cores
	PeakGBps   float64 `json:"peak_gbps"`   // GM roof of its ranks
}

// Utilisation is pipe utilisation over time: Bins equal slices of the run,
// each pipe's busy cycles in a bin over (bin width × its pipes).
type Utilisation struct {
	BinCycles int64                `json:"bin_cycles"`
	Pipes     map[string][]float64 `json:"pipes"`
}

// Modes is the speed-up block of a program with mode runs.
type Modes struct {
	ComputeOnlyUS *float64 `json:"compute_only_us,omitempty"`
	SeqCommUS     *float64 `json:"seq_comm_us,omitempty"`
	SeqComputeUS  *float64 `json:"seq_compute_us,omitempty"`
	SequentialUS  *float64 `json:"sequential_us,omitempty"`
	PipelinedUS   *float64 `json:"pipelined_us,omitempty"`
	FLOPs         int64    `json:"flops_per_rank,omitempty"`
	SpeedUp       *float64 `json:"speed_up,omitempty"`
	OverlapEff    *float64 `json:"overlap_efficiency,omitempty"`
}

// Check is one expectation's outcome (max_abs_err null when not finite).
type Check struct {
	Name      string   `json:"name"`
	OK        bool     `json:"ok"`
	MaxAbsErr *float64 `json:"max_abs_err"`
	Msg       string   `json:"message,omitempty"`
	Skipped   bool     `json:"skipped,omitempty"`
	Warning   string   `json:"warning,omitempty"`
}

// Input is what Build needs.
type Input struct {
	Program   string
	Result    *machine.Result
	Collector *Collector // may be nil: no per-line, path or link tables
	Profile   *pipes.Profile
	Ranks     int
	Modes     *Modes
	// Partial: why the run stopped early ("" when it ended).
	Partial string
	// Findings in lint's JSON shape.
	Findings json.RawMessage
}

// Build assembles the report.
func Build(in Input) *Report {
	res := in.Result
	r := &Report{Schema: SchemaURL, SchemaVersion: SchemaVersion, Program: in.Program, Partial: in.Partial,
		Cycles: res.Cycles, TimeUS: res.TimeUS, ClockHz: in.Profile.ClockHz, FLOPs: res.FLOPs, TFLOPS: res.TFLOPS,
		Instructions: res.Instructions, Runs: res.Runs, Bytes: res.Bytes, Faults: res.Faults, Modes: in.Modes,
		Findings: in.Findings}
	if r.Runs == nil {
		r.Runs = []machine.RunStat{}
	}
	if r.Bytes == nil {
		r.Bytes = []machine.PathStat{}
	}
	if len(r.Findings) == 0 {
		r.Findings = json.RawMessage("[]")
	}
	r.Pipes = res.Pipes
	if r.Pipes == nil {
		r.Pipes = []machine.PipeStat{}
	}
	r.PipeSummary = summarise(res.Pipes)
	r.CoreGroups = groupCores(res.Pipes)
	r.Checks, r.checks = []Check{}, res.Checks
	for _, c := range res.Checks {
		jc := Check{Name: c.Name, OK: c.OK, Msg: c.Msg, Skipped: c.Skipped, Warning: c.Warning}
		if v := c.MaxAbsErr; !math.IsInf(v, 0) && !math.IsNaN(v) {
			jc.MaxAbsErr = &v
		}
		r.Checks = append(r.Checks, jc)
	}
	r.Bandwidth, r.Links, r.Collectives, r.Hotspots, r.Kernels = []Bandwidth{}, []Link{}, []Collective{}, []Hotspot{}, []Kernel{}
	r.Utilisation.Pipes = map[string][]float64{}
	if c := in.Collector; c != nil {
		r.Stats = true
		r.fromCollector(c, in)
	}
	return r
}

// gbps is bytes over cycles at the clock, in GB/s (10^9 bytes a second).
func gbps(bytes, cycles int64, clockHz float64) float64 {
	if cycles <= 0 || clockHz <= 0 {
		return 0
	}
	return float64(bytes) / (float64(cycles) / clockHz) / 1e9
}

func (r *Report) fromCollector(c *Collector, in Input) {
	hz := r.ClockHz
	names := map[string]*xferStat{}
	for k, p := range c.paths {
		names[k.String()] = p
	}
	for _, name := range sortedKeys(names) {
		p := names[name]
		r.Bandwidth = append(r.Bandwidth, Bandwidth{Path: name, Bytes: p.bytes, Transfers: p.count, BusyCycles: p.busy,
			GBps: gbps(p.bytes, r.Cycles, hz), GBpsTransfer: gbps(p.bytes, p.busy, hz)})
	}
	for k, l := range c.links {
		r.Links = append(r.Links, Link{From: int(k[0]), To: int(k[1]), Bytes: l.bytes, Transfers: l.count, BusyCycles: l.busy,
			GBps: gbps(l.bytes, r.Cycles, hz), GBpsTransfer: gbps(l.bytes, l.busy, hz)})
	}
	sort.Slice(r.Links, func(i, j int) bool {
		a, b := r.Links[i], r.Links[j]
		return a.From < b.From || (a.From == b.From && a.To < b.To)
	})
	r.Collectives = collectives(c, hz)
	r.Hotspots = hotspots(c)
	r.Kernels = kernels(c, in)
	r.Utilisation.BinCycles = c.tl.width
	count := map[string]int{}
	for _, p := range in.Result.Pipes {
		if p.Instructions > 0 || p.BusyCycles > 0 {
			count[p.Pipe]++
		}
	}
	nbins := int(min(int64(timelineBins), (r.Cycles+c.tl.width-1)/max(c.tl.width, 1)))
	for pi, b := range c.tl.bins {
		if b == nil {
			continue
		}
		pipe := pipeName(asm.Pipe(pi))
		n := count[pipe]
		if pipe == "SDMA" || n == 0 {
			n = 1 // SDMA engines are not cores' pipes: busy copies per bin
		}
		u := make([]float64, nbins)
		for i := range u {
			u[i] = round4(float64(b[i]) / float64(c.tl.width*int64(n)))
		}
		r.Utilisation.Pipes[pipe] = u
	}
}

func round4(v float64) float64 { return math.Round(v*1e4) / 1e4 }

// busiest is the largest of a rank's bytes out and in.
func busiest(out, in map[int32]int64) int64 {
	var b int64
	for _, v := range out {
		b = max(b, v)
	}
	for _, v := range in {
		b = max(b, v)
	}
	return b
}

func collectives(c *Collector, hz float64) []Collective {
	out := []Collective{}
	type site struct {
		name string
		file string
		line int
	}
	type agg struct {
		n      int
		ranks  int
		bytes  int64
		cycles int64
	}
	sites := map[site]*agg{}
	var order []site
	for k, cs := range c.colls {
		s := site{name: k.op.Info.Name}
		if k.op.Instr != nil {
			s.file, s.line = k.op.Instr.Pos.File, k.op.Instr.Pos.Line
		}
		a := sites[s]
		if a == nil {
			a = &agg{}
			sites[s] = a
			order = append(order, s)
		}
		a.n++
		a.ranks = max(a.ranks, len(cs.ranks))
		a.bytes += busiest(cs.out, cs.in)
		a.cycles += cs.end - cs.start
	}
	sort.Slice(order, func(i, j int) bool {
		a, b := order[i], order[j]
		return a.file < b.file || (a.file == b.file && a.line < b.line)
	})
	for _, s := range order {
		a := sites[s]
		bus := gbps(a.bytes, a.cycles, hz)
		f := factorOf(s.name, a.ranks)
		col := Collective{Kind: s.name, Site: fmt.Sprintf("%s:%d", s.file, s.line), Instances: a.n, Ranks: a.ranks,
			Bytes: a.bytes / int64(a.n), TimeUS: float64(a.cycles) / float64(a.n) / hz * 1e6, BusGBps: bus, Factor: f}
		if f > 0 {
			col.AlgGBps = bus / f
		}
		out = append(out, col)
	}
	for _, run := range c.runs {
		b := busiest(run.out, run.in)
		if b == 0 || run.end <= run.start {
			continue
		}
		ranks := map[int32]bool{}
		for k := range run.out {
			ranks[k] = true
		}
		for k := range run.in {
			ranks[k] = true
		}
		out = append(out, Collective{Kind: "run", Site: run.name, Instances: 1, Ranks: len(ranks), Bytes: b,
			TimeUS: float64(run.end-run.start) / hz * 1e6, BusGBps: gbps(b, run.end-run.start, hz)})
	}
	return out
}

func hotspots(c *Collector) []Hotspot {
	out := []Hotspot{}
	for _, ls := range c.lines {
		var pipes []string
		for p, ran := range ls.pipes {
			if ran {
				pipes = append(pipes, pipeName(asm.Pipe(p)))
			}
		}
		if pipes == nil {
			pipes = []string{ls.home}
		}
		h := Hotspot{File: ls.file, Line: ls.line, Op: ls.text, Pipe: strings.Join(pipes, ","), Instructions: ls.instrs, BusyCycles: ls.busy}
		var top int64
		for _, reason := range sortedKeys(ls.stall) {
			v := ls.stall[reason]
			h.StallCycles += v
			if v > top {
				top, h.StallReason = v, reason
			}
		}
		if len(ls.stall) > 0 {
			h.Stalls = ls.stall
		}
		if h.BusyCycles == 0 && h.StallCycles == 0 {
			continue
		}
		out = append(out, h)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if ta, tb := a.BusyCycles+a.StallCycles, b.BusyCycles+b.StallCycles; ta != tb {
			return ta > tb
		}
		return a.File < b.File || (a.File == b.File && a.Line < b.Line)
	})
	return out
}

// peakFLOPsPerCycle is one cube's fp16 matmul rate: the 16×k×16 fractal of
// the profile's cube formula (pipes.Profile.MatmulCycles) without its head.
func peakFLOPsPerCycle(p *pipes.Profile) float64 {
	kg := int(p.Cube.KGranuleBytes / 2)
	c := p.MatmulCycles(16, kg, 16, asm.F16, false)
	if c <= 0 {
		return 0
	}
	return float64(2*16*kg*16) / float64(c)
}

func kernels(c *Collector, in Input) []Kernel {
	out := []Kernel{}
	hz := in.Profile.ClockHz
	for ki, k := range c.obj.Kernels {
		ks := &c.kerns[ki]
		if len(ks.cores) == 0 {
			continue
		}
		var cycles int64
		for _, sp := range ks.spans {
			if sp[0] >= 0 {
				cycles += sp[1] - sp[0]
			}
		}
		ranks := map[int32]bool{}
		aics := 0
		for rc := range ks.cores {
			ranks[rc[0]] = true
			aics++
		}
		kn := Kernel{Name: k.Name, Kind: k.Kind.String(), Cores: len(ks.cores), FLOPs: ks.flops, GMBytes: ks.gmBytes,
			TimeUS: float64(cycles) / hz * 1e6}
		if ks.gmBytes > 0 {
			kn.Intensity = float64(ks.flops) / float64(ks.gmBytes)
		}
		if cycles > 0 {
			kn.TFLOPS = float64(ks.flops) / (float64(cycles) / hz) / 1e12
		}
		if k.Kind.HasPipe(asm.PipeM) {
			kn.PeakTFLOPS = peakFLOPsPerCycle(in.Profile) * float64(aics) * hz / 1e12
		}
		kn.PeakGBps = in.Profile.GMBW * float64(len(ranks)) * hz / 1e9
		out = append(out, kn)
	}
	return out
}

// summarise is the per-pipe summary across cores, by core kind.
func summarise(ps []machine.PipeStat) []PipeSummary {
	type key struct{ kind, pipe string }
	idx := map[key]int{}
	var out []PipeSummary
	for _, p := range ps {
		if p.Instructions == 0 && p.BusyCycles == 0 {
			continue
		}
		k := key{coreKind(p.Core), p.Pipe}
		i, ok := idx[k]
		if !ok {
			i = len(out)
			idx[k] = i
			out = append(out, PipeSummary{CoreKind: k.kind, Pipe: k.pipe, MinUtil: math.Inf(1)})
		}
		s := &out[i]
		s.Cores++
		s.BusyCycles += p.BusyCycles
		s.Instructions += p.Instructions
		s.MeanUtil += p.Utilisation
		s.MinUtil = min(s.MinUtil, p.Utilisation)
		s.MaxUtil = max(s.MaxUtil, p.Utilisation)
	}
	for i := range out {
		out[i].MeanUtil = round4(out[i].MeanUtil / float64(out[i].Cores))
		out[i].MinUtil, out[i].MaxUtil = round4(out[i].MinUtil), round4(out[i].MaxUtil)
	}
	if out == nil {
		out = []PipeSummary{}
	}
	return out
}

// coreKind is the kind part of a core name: "r3.aiv17" → "aiv".
func coreKind(name string) string {
	_, c, ok := strings.Cut(name, ".")
	if !ok {
		c = name
	}
	return strings.TrimRight(c, "0123456789")
}

// groupCores collapses cores that ran the same instructions, in the order
// of each group's first core.
func groupCores(ps []machine.PipeStat) []CoreGroup {
	type coreRows struct {
		name string
		sig  string
		rows []machine.PipeStat
	}
	var cores []*coreRows
	byName := map[string]*coreRows{}
	for _, p := range ps {
		c := byName[p.Core]
		if c == nil {
			c = &coreRows{name: p.Core, sig: coreKind(p.Core) + "|"}
			byName[p.Core] = c
			cores = append(cores, c)
		}
		if p.Instructions == 0 && p.BusyCycles == 0 {
			continue
		}
		c.rows = append(c.rows, p)
		c.sig += fmt.Sprintf("%s:%d;", p.Pipe, p.Instructions)
	}
	groups := map[string]int{}
	out := []CoreGroup{}
	var sums [][]float64 // per group, per pipe: summed utilisation
	for _, c := range cores {
		i, ok := groups[c.sig]
		if !ok {
			i = len(out)
			groups[c.sig] = i
			g := CoreGroup{}
			for _, p := range c.rows {
				g.Pipes = append(g.Pipes, GroupPipe{Pipe: p.Pipe, Instructions: p.Instructions, MinBusy: math.MaxInt64})
			}
			out = append(out, g)
			sums = append(sums, make([]float64, len(c.rows)))
		}
		g := &out[i]
		g.Cores = append(g.Cores, c.name)
		for j, p := range c.rows {
			gp := &g.Pipes[j]
			gp.BusyCycles += p.BusyCycles
			gp.MinBusy, gp.MaxBusy = min(gp.MinBusy, p.BusyCycles), max(gp.MaxBusy, p.BusyCycles)
			sums[i][j] += p.Utilisation
		}
	}
	for i := range out {
		g := &out[i]
		n := int64(len(g.Cores))
		g.Label = CoreSetLabel(g.Cores)
		for j := range g.Pipes {
			g.Pipes[j].BusyCycles /= n
			g.Pipes[j].Utilisation = round4(sums[i][j] / float64(n))
		}
	}
	return out
}

// CoreSetLabel names a set of cores compactly: "r0.aic0", "r0-7.aic0-23
// (192 cores)" when the set is a full rank × index rectangle of one kind,
// else the first core and a count ("r0.aiv3 +46 more (47 cores)").
func CoreSetLabel(names []string) string {
	if len(names) == 1 {
		return names[0]
	}
	ranks, idxs := map[int]bool{}, map[int]bool{}
	kind := ""
	rect := true
	for _, n := range names {
		rs, c, ok := strings.Cut(n, ".")
		k := strings.TrimRight(c, "0123456789")
		var r, i int
		_, e1 := fmt.Sscanf(rs, "r%d", &r)
		_, e2 := fmt.Sscanf(c[len(k):], "%d", &i)
		if !ok || e1 != nil || e2 != nil || (kind != "" && k != kind) {
			rect = false
			break
		}
		kind = k
		ranks[r], idxs[i] = true, true
	}
	if rect && len(ranks)*len(idxs) == len(names) {
		if rr, ok := span(ranks); ok {
			if ii, ok := span(idxs); ok {
				return fmt.Sprintf("r%s.%s%s (%d cores)", rr, kind, ii, len(names))
			}
		}
	}
	return fmt.Sprintf("%s +%d more (%d cores)", names[0], len(names)-1, len(names))
}

// span writes a set of integers as "3" or "0-7" when it is contiguous.
func span(s map[int]bool) (string, bool) {
	lo, hi := math.MaxInt, math.MinInt
	for v := range s {
		lo, hi = min(lo, v), max(hi, v)
	}
	if hi-lo+1 != len(s) {
		return "", false
	}
	if lo == hi {
		return fmt.Sprint(lo), true
	}
	return fmt.Sprintf("%d-%d", lo, hi), true
}
