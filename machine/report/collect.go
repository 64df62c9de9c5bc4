// Package report turns a run into what a kernel author reads: a per-pipe
// summary with identical cores collapsed, bandwidth per DMA path and per
// link, bus bandwidth of collectives, a hotspot table per source line, the
// speed-up block of mode runs, and the same figures as versioned JSON
// (docs/run-report.schema.json), CSV tables and a self-contained HTML page
// with charts.
//
// A Collector is a machine.Observer that gathers, during the run, what the
// machine's Result does not keep: busy and stall cycles per source line,
// bytes and transfer time per path and per link, collective instances,
// per-kernel work and a utilisation timeline. It keeps fixed-size state
// (per source line, path, link and time bin), never per event.
package report

import (
	"sort"
	"strconv"
	"strings"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
)

// Collector observes a run for a Report.
type Collector struct {
	obj    *asm.Object
	ops    map[*asm.COp]*opStat
	lastOp *asm.COp // the cache of the last lookup in ops
	lastSt *opStat
	kernOf map[*asm.COp]int // op → index into obj.Kernels
	lines  []lineStat
	paths  map[pathKey]*xferStat
	links  map[[2]int32]*xferStat
	runs   []runStat
	colls  map[collKey]*collStat
	kerns  []kernStat
	// lastCore is, per kernel, the core of its last event: kernStat.cores
	// is written only when it changes.
	lastCore [][2]int32
	tl       timeline
}

// opStat is what the collector looks up once per op: its source line and
// kernel, and its FLOPs.
type opStat struct {
	line   int32 // into lines
	kernel int32 // into obj.Kernels; -1 none
	flops  int64
}

// pathKey is a transfer's path: spaces, and whether it is SDMA's or
// crosses ranks.
type pathKey struct {
	src, dst     asm.Space
	sdma, remote bool
}

func (k pathKey) String() string {
	s := k.src.String() + "->" + k.dst.String()
	if k.sdma {
		s = "SDMA " + s
	} else if k.remote {
		s += " remote"
	}
	return s
}

type lineStat struct {
	file   string
	line   int
	text   string                 // the instruction's mnemonic
	home   string                 // the pipe it belongs to, for a line that never ran (a wait)
	pipes  [asm.NumPipes + 1]bool // pipes that ran it (NumPipes: SDMA)
	instrs int64
	busy   int64
	stall  map[string]int64 // reason → cycles
}

type xferStat struct {
	bytes, busy, count int64
}

// runStat is one run's link traffic, per rank, bytes out and in.
type runStat struct {
	name       string
	start, end int64
	out, in    map[int32]int64
}

type collKey struct {
	op   *asm.COp
	run  int
	iter string
}

type collStat struct {
	start, end int64
	ranks      map[int32]bool
	out, in    map[int32]int64
}

type kernStat struct {
	flops, gmBytes int64
	// per run: first and last cycle any of its instructions ran
	spans [][2]int64
	cores map[[2]int32]bool
}

// NewCollector makes a collector for obj's run.
func NewCollector(obj *asm.Object) *Collector {
	c := &Collector{obj: obj, ops: map[*asm.COp]*opStat{}, kernOf: map[*asm.COp]int{},
		paths: map[pathKey]*xferStat{}, links: map[[2]int32]*xferStat{}, colls: map[collKey]*collStat{}}
	c.kerns = make([]kernStat, len(obj.Kernels))
	for ki, k := range obj.Kernels {
		c.kerns[ki] = kernStat{cores: map[[2]int32]bool{}}
		for _, op := range k.Ops {
			c.kernOf[op] = ki
		}
	}
	c.lastCore = make([][2]int32, len(obj.Kernels))
	for i := range c.lastCore {
		c.lastCore[i] = [2]int32{-1, -1}
	}
	c.tl.init()
	return c
}

// WantsKind implements machine.KindFilter.
func (c *Collector) WantsKind(k machine.EventKind) bool {
	switch k {
	case machine.EvExec, machine.EvStall, machine.EvRunStart, machine.EvRunEnd:
		return true
	}
	return false
}

// op returns op's record, nil for no op.
func (c *Collector) op(op *asm.COp) *opStat {
	if op == nil {
		return nil
	}
	if op == c.lastOp {
		return c.lastSt
	}
	st, ok := c.ops[op]
	if !ok {
		st = &opStat{kernel: -1}
		if ki, ok := c.kernOf[op]; ok {
			st.kernel = int32(ki)
		}
		if op.Info != nil && (op.Info.Family == asm.FamCube || op.Info.Family == asm.FamVector) {
			st.flops = machine.StaticFlops(op)
		}
		ls := lineStat{text: "?"}
		if op.Instr != nil {
			ls.file, ls.line = op.Instr.Pos.File, op.Instr.Pos.Line
		}
		if op.Info != nil {
			ls.text = op.Info.Name
		}
		ls.home = op.ExecPipe().String()
		st.line = -1
		// Ops of one line (an include expanded twice) share it.
		for j := range c.lines {
			if c.lines[j].file == ls.file && c.lines[j].line == ls.line {
				st.line = int32(j)
				break
			}
		}
		if st.line < 0 {
			c.lines = append(c.lines, ls)
			st.line = int32(len(c.lines) - 1)
		}
		c.ops[op] = st
	}
	c.lastOp, c.lastSt = op, st
	return st
}

// Observe implements machine.Observer.
func (c *Collector) Observe(e *machine.Event) {
	switch e.Kind {
	case machine.EvRunStart:
		c.runs = append(c.runs, runStat{name: e.RunName, start: e.Cycle, out: map[int32]int64{}, in: map[int32]int64{}})
	case machine.EvRunEnd:
		if n := len(c.runs); n > 0 {
			c.runs[n-1].end = e.Cycle
		}
	case machine.EvStall:
		d := e.End - e.Start
		if d <= 0 {
			return
		}
		if st := c.op(e.Op); st != nil {
			ls := &c.lines[st.line]
			if ls.stall == nil {
				ls.stall = map[string]int64{}
			}
			ls.stall[stallReason(e.Reason)] += d
		}
	case machine.EvExec:
		c.exec(e)
	}
}

// stallReason drops the flag id and pipes from a wait_flag reason, so the
// stalls of one line add up under one name.
func stallReason(r string) string {
	if f, _, ok := strings.Cut(r, " "); ok && (f == "wait_flag" || f == "twait" || f == "ffts_wait") {
		return f
	}
	return r
}

func (c *Collector) exec(e *machine.Event) {
	d := max(e.End-e.Start, 0)
	st := c.op(e.Op)
	pipe := e.Agent.Pipe
	if e.Agent.Core < 0 {
		pipe = asm.NumPipes // SDMA
	}
	if pipe != asm.PipeS {
		if st != nil {
			ls := &c.lines[st.line]
			ls.busy += d
			ls.instrs++
			ls.pipes[pipe] = true
		}
		c.tl.add(pipe, e.Start, e.End)
	}
	run := len(c.runs) - 1
	var k *kernStat
	if st != nil && st.kernel >= 0 && e.Agent.Core >= 0 {
		k = &c.kerns[st.kernel]
		if e.Step == "" {
			k.flops += st.flops
		}
		if run >= 0 {
			for len(k.spans) <= run {
				k.spans = append(k.spans, [2]int64{-1, -1})
			}
			sp := &k.spans[run]
			if sp[0] < 0 {
				*sp = [2]int64{e.Start, e.End}
			}
			sp[0], sp[1] = min(sp[0], e.Start), max(sp[1], e.End)
		}
		if ck := [2]int32{e.Agent.Rank, e.Agent.Core}; ck != c.lastCore[st.kernel] {
			c.lastCore[st.kernel] = ck
			k.cores[ck] = true
		}
	}
	// A transfer: what it read and where it wrote. Compute ops read and
	// write buffers too; only the DMA pipes and SDMA move data.
	switch pipe {
	case asm.PipeMTE1, asm.PipeMTE2, asm.PipeMTE3, asm.PipeFIX, asm.NumPipes:
	default:
		return
	}
	var src, dst *machine.Access
	for i := range e.Accesses {
		a := &e.Accesses[i]
		if a.Write && dst == nil {
			dst = a
		} else if !a.Write && src == nil {
			src = a
		}
	}
	if src == nil || dst == nil {
		return
	}
	bytes := dst.Bytes()
	owner := func(a *machine.Access) int32 {
		if a.Space == asm.GM {
			return a.Rank
		}
		return e.Agent.Rank
	}
	from, to := owner(src), owner(dst)
	pk := pathKey{src: src.Space, dst: dst.Space, sdma: pipe == asm.NumPipes, remote: from != to}
	p := c.paths[pk]
	if p == nil {
		p = &xferStat{}
		c.paths[pk] = p
	}
	p.bytes += bytes
	p.busy += d
	p.count++
	if k != nil && (src.Space == asm.GM || dst.Space == asm.GM) {
		k.gmBytes += bytes
	}
	if from == to {
		return
	}
	l := c.links[[2]int32{from, to}]
	if l == nil {
		l = &xferStat{}
		c.links[[2]int32{from, to}] = l
	}
	l.bytes += bytes
	l.busy += d
	l.count++
	if run >= 0 {
		r := &c.runs[run]
		r.out[from] += bytes
		r.in[to] += bytes
	}
	if e.Op != nil && e.Op.Info != nil && collectiveFactor(e.Op.Info.Name) > 0 {
		k := collKey{op: e.Op, run: run, iter: iterKey(e.Iter)}
		cs := c.colls[k]
		if cs == nil {
			cs = &collStat{start: e.Start, end: e.End, ranks: map[int32]bool{}, out: map[int32]int64{}, in: map[int32]int64{}}
			c.colls[k] = cs
		}
		cs.start, cs.end = min(cs.start, e.Start), max(cs.end, e.End)
		cs.ranks[from], cs.ranks[to] = true, true
		cs.out[from] += bytes
		cs.in[to] += bytes
	}
}

func iterKey(it []int64) string {
	var b strings.Builder
	for i, v := range it {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatInt(v, 10))
	}
	return b.String()
}

// collectiveFactor is nccl-tests' bus-bandwidth factor of a collective
// instruction as a function of the group size n, or 0 for other ops
// (docs/cli.md "Bus bandwidth"): busbw = algbw × factor.
func collectiveFactor(name string) int {
	switch name {
	case "tbroadcast":
		return factorOne
	case "treduce":
		return factorOne
	case "tgather.comm", "tscatter.comm":
		return factorNm1
	}
	return 0
}

const (
	factorOne = 1 + iota // broadcast, reduce: 1
	factorNm1            // allgather, gather, scatter: (n-1)/n
)

func factorOf(name string, n int) float64 {
	switch collectiveFactor(name) {
	case factorOne:
		return 1
	case factorNm1:
		if n > 0 {
			return float64(n-1) / float64(n)
		}
	}
	return 0
}

// timeline is busy cycles per pipe (asm.NumPipes: SDMA) in equal bins of
// the run; the bin width doubles (neighbours merged) when the run outgrows
// the bins, so its size is fixed whatever the run's length.
type timeline struct {
	width int64
	bins  [asm.NumPipes + 1][]int64
}

const timelineBins = 240

func (t *timeline) init() { t.width = 16 }

func (t *timeline) add(pipe asm.Pipe, s, e int64) {
	if e <= s {
		return
	}
	for e > t.width*timelineBins {
		t.width *= 2
		for _, b := range t.bins {
			if b == nil {
				continue
			}
			for i := 0; i < timelineBins/2; i++ {
				b[i] = b[2*i] + b[2*i+1]
			}
			clear(b[timelineBins/2:])
		}
	}
	b := t.bins[pipe]
	if b == nil {
		b = make([]int64, timelineBins)
		t.bins[pipe] = b
	}
	for i := s / t.width; i <= (e-1)/t.width; i++ {
		lo, hi := max(s, i*t.width), min(e, (i+1)*t.width)
		b[i] += hi - lo
	}
}

// pipeName names a timeline or hotspot pipe index.
func pipeName(p asm.Pipe) string {
	if p == asm.NumPipes {
		return "SDMA"
	}
	return p.String()
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
