// Package trace records what the machine did and writes it for people: a
// Chrome trace-event JSON file that Perfetto (ui.perfetto.dev) opens, with a
// lane per pipe, a slice per instruction, arrows from each synchronisation
// release to the wait it satisfied and labelled stall slices; a
// self-contained HTML timeline; and a plain text trace.
//
// A Recorder is a machine.Observer. It keeps compact fixed-size records in
// growing slices (no allocation per event once they have grown), pairs
// releases with acquires as the events arrive, and can drop events outside a
// rank, core or cycle window at record time so that large runs stay small.
package trace

import (
	"fmt"
	"strings"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
)

// Filter selects events. The zero Filter selects everything.
type Filter struct {
	// Ranks lists the ranks to keep; empty keeps every rank.
	Ranks []int
	// Cores lists core names to keep, with or without the rank prefix
	// ("aic0", "r1.aiv3", "sdma"); empty keeps every core.
	Cores []string
	// Pipes lists the pipes to keep (asm.PipeS for the scalar unit); empty
	// keeps every pipe. SDMA and host events have no pipe and are kept only
	// when Pipes is empty.
	Pipes []asm.Pipe
	// From and To bound the cycle window [From, To): an event is kept when its
	// interval meets the window. To <= 0 leaves the window open on the right.
	From, To int64
	// Issues keeps the scalar's issue events (one per instruction, on the S
	// lane of the text trace); they double the size of a trace, so they are
	// left out unless asked for.
	Issues bool
}

func (f *Filter) empty() bool {
	return len(f.Ranks) == 0 && len(f.Cores) == 0 && len(f.Pipes) == 0 && f.From <= 0 && f.To <= 0 && f.Issues
}

func (f *Filter) window(start, end int64) bool {
	if f.To > 0 && start >= f.To {
		return false
	}
	return end >= f.From
}

func (f *Filter) pipe(p asm.Pipe) bool {
	if len(f.Pipes) == 0 {
		return true
	}
	for _, q := range f.Pipes {
		if q == p {
			return true
		}
	}
	return false
}

// place reports whether the filter keeps core `name` (full name, "r0.aic3")
// of rank `rank`.
func (f *Filter) place(rank int, name string) bool {
	if len(f.Ranks) > 0 {
		ok := false
		for _, r := range f.Ranks {
			ok = ok || r == rank
		}
		if !ok {
			return false
		}
	}
	if len(f.Cores) == 0 {
		return true
	}
	_, short, _ := strings.Cut(name, ".")
	for _, c := range f.Cores {
		if c == name || c == short {
			return true
		}
	}
	return false
}

// Options configure a Recorder.
type Options struct {
	// CoreName names core `core` of rank `rank` ("r0.aic3"); pass
	// Machine.CoreName. Nil names cores "r0.c3".
	CoreName func(rank, core int) string
	// Filter drops events at record time.
	Filter Filter
}

// Kinds of record beyond machine.EventKind values: none today, but records
// store the kind as machine.EventKind so text and JSON agree on names.

// record is one kept event. It holds indices instead of pointers and strings
// so that the slice of records is compact and cheap to grow.
type record struct {
	start, end int64
	rank, core int32 // core -1: rank-level (SDMA, host)
	op         int32 // index into Recorder.ops; -1 none
	str        int32 // index into Recorder.strs (step, reason, run name); -1 none
	iterOff    int32 // into Recorder.iters
	iterLen    int16
	pipe       asm.Pipe
	kind       machine.EventKind
	flag       machine.Flag
	id         int32 // FFTS id, signal value, …
	bytes      int64
}

// flow is one release → acquire arrow between two records.
type flow struct {
	from, to int32
	kind     uint8 // flowFlag, flowCross, flowSignal
}

const (
	flowFlag uint8 = iota
	flowCross
	flowSignal
)

var flowNames = [...]string{"flag", "ffts", "signal"}

// opInfo is what the writers need of an instruction, computed once per op.
type opInfo struct {
	op       *asm.COp
	name     string
	text     string // "tload %a, @A[0, 0]"
	file     string
	line     int
	flops    int64
	isSync   bool
	family   string
	execPipe asm.Pipe
}

type flagKey struct {
	rank, core int32
	flag       machine.Flag
}

type crossKey struct {
	rank, core, id int32
}

type sigKey struct {
	rank int32
	addr int64
}

// sigState lists the notifies written to one signal element; cursors say how
// far each waiting core has already acquired.
type sigState struct {
	notifies []int32 // record indices, -1 for a notify outside the filter
	cursors  []sigCursor
}

type sigCursor struct {
	rank, core int32
	pos        int
}

type placeKey struct{ rank, core int32 }

// recStore holds the records in chunks of a fixed size rather than one
// slice: a run that is traced until the memory budget stops it (a loop
// that never ends) had most of the budget in one slice, and the append
// that grew it needed that much again at once, past any limit the heap
// guard could see coming (machine.Options.MaxHeap). Chunks grow the
// store a megabyte at a time.
type recStore struct {
	chunks [][]record
	n      int
}

const recChunk = 1 << 14 // records of a chunk (1 MiB)

func (s *recStore) at(i int) *record { return &s.chunks[i/recChunk][i%recChunk] }

func (s *recStore) add(rec record) {
	if s.n%recChunk == 0 {
		s.chunks = append(s.chunks, make([]record, 0, recChunk))
	}
	c := &s.chunks[len(s.chunks)-1]
	*c = append(*c, rec)
	s.n++
}

// Recorder records a run. The zero value is not usable; call New.
type Recorder struct {
	opt   Options
	recs  recStore
	flows []flow
	ops   []opInfo
	opIdx map[*asm.COp]int32
	strs  []string
	strIx map[string]int32
	iters []int64

	issues bool // keep EvIssue records

	names  map[placeKey]string
	keep   map[placeKey]bool
	filter bool

	// Pairing state: it sees every event, kept or not, so that a filter never
	// pairs a wait with the wrong release.
	flagSet   map[flagKey]int32
	crossSets map[crossKey][]int32
	signals   map[sigKey]*sigState

	cs counterState // queue depth and buffer occupancy

	lastStall int32 // index of the last stall record, for de-duplication
	dropped   int64
	maxCycle  int64
}

// New returns an empty Recorder.
func New(opt Options) *Recorder {
	r := &Recorder{
		opt:       opt,
		opIdx:     map[*asm.COp]int32{},
		strIx:     map[string]int32{},
		names:     map[placeKey]string{},
		keep:      map[placeKey]bool{},
		filter:    !opt.Filter.empty(),
		issues:    opt.Filter.Issues,
		flagSet:   map[flagKey]int32{},
		crossSets: map[crossKey][]int32{},
		signals:   map[sigKey]*sigState{},
		lastStall: -1,
	}
	r.cs.init()
	return r
}

// Len is the number of records kept.
func (r *Recorder) Len() int { return r.recs.n }

// Dropped is the number of events the record-time filter left out.
func (r *Recorder) Dropped() int64 { return r.dropped }

// coreName names a place; core -1 is the rank's SDMA/host lane.
func (r *Recorder) coreName(rank, core int32) string {
	k := placeKey{rank, core}
	if n, ok := r.names[k]; ok {
		return n
	}
	var n string
	switch {
	case core < 0:
		n = fmt.Sprintf("r%d.sdma", rank)
	case r.opt.CoreName != nil:
		n = r.opt.CoreName(int(rank), int(core))
	default:
		n = fmt.Sprintf("r%d.c%d", rank, core)
	}
	r.names[k] = n
	return n
}

func (r *Recorder) kept(rank, core int32) bool {
	k := placeKey{rank, core}
	if v, ok := r.keep[k]; ok {
		return v
	}
	v := r.opt.Filter.place(int(rank), r.coreName(rank, core))
	r.keep[k] = v
	return v
}

func (r *Recorder) intern(s string) int32 {
	if s == "" {
		return -1
	}
	if i, ok := r.strIx[s]; ok {
		return i
	}
	i := int32(len(r.strs))
	r.strs = append(r.strs, s)
	r.strIx[s] = i
	return i
}

func (r *Recorder) str(i int32) string {
	if i < 0 {
		return ""
	}
	return r.strs[i]
}

func (r *Recorder) opIndex(op *asm.COp) int32 {
	if op == nil {
		return -1
	}
	if i, ok := r.opIdx[op]; ok {
		return i
	}
	oi := opInfo{op: op, name: "?", execPipe: op.Pipe}
	if op.Info != nil {
		oi.name = op.Info.Name
		oi.family = op.Info.Family.String()
		oi.isSync = op.Info.Family == asm.FamSync
		oi.execPipe = op.ExecPipe()
		oi.flops = machine.StaticFlops(op)
	}
	oi.text = oi.name
	if in := op.Instr; in != nil {
		oi.file, oi.line = in.Pos.File, in.Pos.Line
		var b strings.Builder
		b.WriteString(oi.name)
		for k, e := range in.Operands() {
			if k == 0 {
				b.WriteByte(' ')
			} else {
				b.WriteString(", ")
			}
			b.WriteString(asm.ExprString(e))
		}
		oi.text = b.String()
	}
	i := int32(len(r.ops))
	r.ops = append(r.ops, oi)
	r.opIdx[op] = i
	return i
}

// Observe implements machine.Observer.
func (r *Recorder) Observe(e *machine.Event) {
	a := e.Agent
	start, end := e.Start, e.End
	if end < start {
		end = start
	}
	r.maxCycle = max(r.maxCycle, end)
	r.count(e)
	keep := true
	if e.Kind == machine.EvIssue && !r.issues {
		keep = false
	} else if r.filter {
		f := &r.opt.Filter
		switch {
		case !f.window(start, end):
			keep = false
		case e.Kind == machine.EvRunStart || e.Kind == machine.EvRunEnd || e.Kind == machine.EvDeadlock:
			// Global markers survive place filters.
		case e.Kind == machine.EvHostWrite:
			keep = len(f.Pipes) == 0 && len(f.Cores) == 0 && r.rankKept(int(a.Rank))
		case a.Core < 0:
			keep = len(f.Pipes) == 0 && r.kept(a.Rank, a.Core)
		default:
			keep = f.pipe(a.Pipe) && r.kept(a.Rank, a.Core)
		}
	}
	idx := int32(-1)
	if keep {
		if e.Kind == machine.EvStall && r.lastStall >= 0 {
			// The engine may report the same blocked interval twice (once
			// when it ends, once when the blocked instruction retries).
			p := r.recs.at(int(r.lastStall))
			if p.rank == a.Rank && p.core == a.Core && p.pipe == a.Pipe && p.start == start && p.end == end {
				return
			}
		}
		idx = int32(r.recs.n)
		rec := record{start: start, end: end, rank: a.Rank, core: a.Core, pipe: a.Pipe, kind: e.Kind,
			op: r.opIndex(e.Op), str: -1, flag: e.Flag, id: e.ID}
		switch e.Kind {
		case machine.EvExec:
			rec.str = r.intern(e.Step)
			for i := range e.Accesses {
				if acc := &e.Accesses[i]; acc.Write {
					rec.bytes += acc.Bytes()
				}
			}
		case machine.EvHostWrite:
			if len(e.Accesses) > 0 && e.Accesses[0].Tensor != nil {
				rec.str = r.intern("@" + e.Accesses[0].Tensor.Name)
			}
		case machine.EvStall, machine.EvFlagSet:
			rec.str = r.intern(e.Reason)
		case machine.EvRunStart, machine.EvRunEnd:
			rec.str = r.intern(e.RunName)
		case machine.EvKernelEnd:
			if len(e.Flags) > 0 {
				var b strings.Builder
				b.WriteString("unconsumed flags:")
				for _, f := range e.Flags {
					fmt.Fprintf(&b, " %s->%s#%d", f.Src, f.Dst, f.ID)
				}
				rec.str = r.intern(b.String())
			}
		case machine.EvDeadlock:
			var b strings.Builder
			b.WriteString("deadlock:")
			for _, bl := range e.Blocked {
				fmt.Fprintf(&b, " %s %s: %s;", r.coreName(bl.Agent.Rank, bl.Agent.Core), bl.Agent.Pipe, bl.Reason)
			}
			rec.str = r.intern(strings.TrimSuffix(b.String(), ";"))
		case machine.EvCrossSet, machine.EvCrossWait:
			rec.id = e.ID
		case machine.EvNotify, machine.EvSignalWait:
			rec.id = int32(e.Value)
			rec.str = r.intern(e.Word)
		}
		if len(e.Iter) > 0 {
			rec.iterOff = int32(len(r.iters))
			rec.iterLen = int16(min(len(e.Iter), 1<<15-1))
			r.iters = append(r.iters, e.Iter[:rec.iterLen]...)
		}
		r.recs.add(rec)
		if e.Kind == machine.EvStall {
			r.lastStall = idx
		}
	} else {
		r.dropped++
	}
	r.pair(e, idx)
}

func (r *Recorder) rankKept(rank int) bool {
	f := &r.opt.Filter
	if len(f.Ranks) == 0 {
		return true
	}
	for _, x := range f.Ranks {
		if x == rank {
			return true
		}
	}
	return false
}

// link adds an arrow when both ends were kept.
func (r *Recorder) link(from, to int32, kind uint8) {
	if from >= 0 && to >= 0 {
		r.flows = append(r.flows, flow{from: from, to: to, kind: kind})
	}
}

// pair matches releases with the acquires they satisfy. idx is the record
// of e, or -1 when the filter dropped it.
func (r *Recorder) pair(e *machine.Event, idx int32) {
	a := e.Agent
	switch e.Kind {
	case machine.EvFlagSet:
		// A flag is one bit: the next wait on it consumes this set (a double
		// set overwrites the pending one, as the hardware bit does).
		r.flagSet[flagKey{a.Rank, a.Core, e.Flag}] = idx
	case machine.EvFlagWait:
		k := flagKey{a.Rank, a.Core, e.Flag}
		if from, ok := r.flagSet[k]; ok {
			r.link(from, idx, flowFlag)
			delete(r.flagSet, k)
		}
	case machine.EvCrossSet:
		// Each peer's counter went up by one; its next wait on the id takes it.
		for _, p := range e.Peers {
			k := crossKey{a.Rank, p, e.ID}
			r.crossSets[k] = append(r.crossSets[k], idx)
		}
	case machine.EvCrossWait:
		k := crossKey{a.Rank, a.Core, e.ID}
		if q := r.crossSets[k]; len(q) > 0 {
			r.link(q[0], idx, flowCross)
			copy(q, q[1:])
			r.crossSets[k] = q[:len(q)-1]
		}
	case machine.EvNotify:
		if len(e.Accesses) == 0 {
			return
		}
		acc := &e.Accesses[0]
		k := sigKey{acc.Rank, acc.Lo}
		s := r.signals[k]
		if s == nil {
			s = &sigState{}
			r.signals[k] = s
		}
		if e.Word != "add" {
			// A plain store replaces the value: earlier notifies no longer
			// contribute to what a waiter will see.
			for i := range s.notifies {
				s.notifies[i] = -1
			}
		}
		s.notifies = append(s.notifies, idx)
	case machine.EvSignalWait:
		if len(e.Accesses) == 0 {
			return
		}
		acc := &e.Accesses[0]
		step := int64(4)
		if acc.Tensor != nil && acc.Tensor.DType.Size() > 0 {
			step = int64(acc.Tensor.DType.Size())
		}
		for addr := acc.Lo; addr < acc.Hi; addr += step {
			s := r.signals[sigKey{acc.Rank, addr}]
			if s == nil {
				continue
			}
			c := s.cursor(a.Rank, a.Core)
			for _, from := range s.notifies[c.pos:] {
				r.link(from, idx, flowSignal)
			}
			c.pos = len(s.notifies)
		}
	case machine.EvHostWrite:
		// A reset between runs starts every signal it covers afresh.
		for i := range e.Accesses {
			acc := &e.Accesses[i]
			for k, s := range r.signals { // order does not matter: each entry is reset independently
				if k.rank == acc.Rank && k.addr >= acc.Lo && k.addr < acc.Hi {
					s.notifies = s.notifies[:0]
					s.cursors = s.cursors[:0]
				}
			}
		}
	}
}

func (s *sigState) cursor(rank, core int32) *sigCursor {
	for i := range s.cursors {
		if c := &s.cursors[i]; c.rank == rank && c.core == core {
			return c
		}
	}
	s.cursors = append(s.cursors, sigCursor{rank: rank, core: core})
	return &s.cursors[len(s.cursors)-1]
}
