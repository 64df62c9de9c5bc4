package trace

import (
	"sort"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
)

// Counters: queue depth per pipe and live bytes per local buffer, per core.
//
// Both are kept as deltas (+n at one cycle, -n at a later one) while the run
// is recorded and turned into step functions when a trace is written: events
// arrive in engine order, not in time order (a scalar issues ahead of its
// pipes), so only a sort at the end gives the value at each cycle.

// delta changes one series of a core's counter at cycle t: lane is the pipe
// (queue depth) or the space (live bytes).
type delta struct {
	t          int64
	rank, core int32
	lane       uint8
	d          int64
}

type bufKey struct {
	rank, core int32
	space      asm.Space
}

// liveSeg is a byte range of a buffer holding one value: written by an op
// that ran wstart..wend, last read by an op ending at rend (-1: not read).
type liveSeg struct {
	lo, hi             int64
	wstart, wend, rend int64
}

// bufState is one buffer's current values, sorted by lo, disjoint.
type bufState struct {
	segs []liveSeg
	tmp  []liveSeg
}

// compKey is one dynamic composite instruction's issue, by core and op.
type compKey struct {
	rank, core, op int32
}

// counterState is the Recorder's part that builds counters.
type counterState struct {
	qd   []delta
	od   []delta
	bufs map[bufKey]*bufState
	// compIssue is when the scalar issued a composite op (tput, collectives):
	// the engine reports one issue for all of its steps.
	compIssue map[compKey]int64
	composite []bool // by op index: issued as a composite (target S)
	lastBuf   *bufState
	lastKey   bufKey
}

func (cs *counterState) init() {
	cs.bufs = map[bufKey]*bufState{}
	cs.compIssue = map[compKey]int64{}
}

func (r *Recorder) isComposite(op int32) bool {
	return op >= 0 && int(op) < len(r.cs.composite) && r.cs.composite[op]
}

// count feeds the counters from one event. It sees every event of the kept
// places, whatever the time window: the value at the window's start depends
// on what came before it.
func (r *Recorder) count(e *machine.Event) {
	a := e.Agent
	if e.Kind == machine.EvRunEnd {
		r.flushBuffers()
		return
	}
	if e.Kind == machine.EvExec {
		r.occupancy(e)
	}
	if a.Core < 0 || (r.filter && !r.kept(a.Rank, a.Core)) {
		return
	}
	cs := &r.cs
	switch e.Kind {
	case machine.EvIssue:
		op := r.opIndex(e.Op)
		if e.Target == asm.PipeS || e.Target == asm.PipeInvalid {
			// A composite: its steps reach their pipes' queues one by one
			// without events of their own.
			for len(cs.composite) <= int(op) {
				cs.composite = append(cs.composite, false)
			}
			if op >= 0 {
				cs.composite[op] = true
				cs.compIssue[compKey{a.Rank, a.Core, op}] = e.Start
			}
			return
		}
		cs.qd = append(cs.qd, delta{t: e.Start, rank: a.Rank, core: a.Core, lane: uint8(e.Target), d: 1})
	case machine.EvExec, machine.EvFlagSet, machine.EvFlagWait, machine.EvBarrier, machine.EvCrossSet:
		if a.Pipe <= asm.PipeS || a.Pipe >= asm.PipeALL {
			break // the scalar's own work and SDMA have no pipe queue
		}
		// Each queue entry ends with exactly one of these on its pipe: an
		// exec or barrier at its end, a set_flag when it fires, a
		// wait_flag when it is satisfied (the few cycles the wait itself
		// takes are not reported).
		end := e.End
		if e.Kind == machine.EvFlagWait {
			end = e.Start
		}
		if op := r.opIndex(e.Op); r.isComposite(op) {
			in := e.Start
			if t, ok := cs.compIssue[compKey{a.Rank, a.Core, op}]; ok && t < in {
				in = t
			}
			cs.qd = append(cs.qd, delta{t: in, rank: a.Rank, core: a.Core, lane: uint8(a.Pipe), d: 1})
		}
		cs.qd = append(cs.qd, delta{t: end, rank: a.Rank, core: a.Core, lane: uint8(a.Pipe), d: -1})
	}
}

// occupancy applies an op's buffer accesses in the order the machine applied
// their data: reads first (an accumulate reads the old value), then writes.
func (r *Recorder) occupancy(e *machine.Event) {
	for pass := 0; pass < 2; pass++ {
		for i := range e.Accesses {
			acc := &e.Accesses[i]
			if acc.Space == asm.GM || acc.Space == asm.SpaceInvalid || acc.Core < 0 || acc.Hi <= acc.Lo {
				continue
			}
			// An atomic update reads the old value too.
			if acc.Write != (pass == 1) && !(acc.Atomic && pass == 0) {
				continue
			}
			if r.filter && !r.kept(acc.Rank, acc.Core) {
				continue
			}
			b := r.buffer(bufKey{acc.Rank, acc.Core, acc.Space})
			// A column window of a tile is strided: a run per row.
			for k := range acc.NumRows() {
				lo, hi := acc.Run(k)
				if pass == 1 {
					r.write(b, bufKey{acc.Rank, acc.Core, acc.Space}, lo, hi, e.Start, e.End)
				} else {
					b.read(lo, hi, e.End)
				}
			}
		}
	}
}

func (r *Recorder) buffer(k bufKey) *bufState {
	cs := &r.cs
	if cs.lastBuf != nil && cs.lastKey == k {
		return cs.lastBuf
	}
	b := cs.bufs[k]
	if b == nil {
		b = &bufState{}
		cs.bufs[k] = b
	}
	cs.lastBuf, cs.lastKey = b, k
	return b
}

// read marks [lo, hi) as read by an op ending at end.
func (b *bufState) read(lo, hi, end int64) {
	i := sort.Search(len(b.segs), func(i int) bool { return b.segs[i].hi > lo })
	out := b.tmp[:0]
	out = append(out, b.segs[:i]...)
	for ; i < len(b.segs) && b.segs[i].lo < hi; i++ {
		s := b.segs[i]
		if end <= s.rend {
			out = append(out, s)
			continue
		}
		// Split off the parts outside the read: they keep their last read.
		if s.lo < lo {
			p := s
			p.hi = lo
			out = append(out, p)
			s.lo = lo
		}
		var tail liveSeg
		hasTail := s.hi > hi
		if hasTail {
			tail = s
			tail.lo = hi
			s.hi = hi
		}
		s.rend = end
		out = append(out, s)
		if hasTail {
			out = append(out, tail)
		}
	}
	out = append(out, b.segs[i:]...)
	b.segs, b.tmp = out, b.segs
}

// write replaces [lo, hi) with a new value written by an op running
// start..end, closing the live intervals of the values it overwrites.
func (r *Recorder) write(b *bufState, k bufKey, lo, hi, start, end int64) {
	i := sort.Search(len(b.segs), func(i int) bool { return b.segs[i].hi > lo })
	out := b.tmp[:0]
	out = append(out, b.segs[:i]...)
	for ; i < len(b.segs) && b.segs[i].lo < hi; i++ {
		s := b.segs[i]
		if s.lo < lo {
			p := s
			p.hi = lo
			out = append(out, p)
		}
		olo, ohi := max(s.lo, lo), min(s.hi, hi)
		// A byte counts once: an old value is live until the new write
		// starts even when its last read ends later (that is a WAR race).
		r.live(k, ohi-olo, s.wstart, max(s.wstart, min(s.liveEnd(), start)))
		if s.hi > hi {
			p := s
			p.lo = hi
			out = append(out, p)
		}
	}
	// Insert the new value in order among the kept pieces.
	j := len(out)
	for j > 0 && out[j-1].lo >= hi {
		j--
	}
	out = append(out, liveSeg{})
	copy(out[j+1:], out[j:])
	out[j] = liveSeg{lo: lo, hi: hi, wstart: start, wend: end, rend: -1}
	out = append(out, b.segs[i:]...)
	b.segs, b.tmp = out, b.segs
}

// liveEnd is when a value stops being live if nothing overwrites it: after
// its last read, or when its write ends if it is never read.
func (s *liveSeg) liveEnd() int64 { return max(s.wend, s.rend) }

func (r *Recorder) live(k bufKey, bytes, from, to int64) {
	if to <= from || bytes <= 0 {
		return
	}
	r.cs.od = append(r.cs.od,
		delta{t: from, rank: k.rank, core: k.core, lane: uint8(k.space), d: bytes},
		delta{t: to, rank: k.rank, core: k.core, lane: uint8(k.space), d: -bytes})
}

// flushBuffers ends every value at the end of a run: local buffers do not
// carry data from one run of the launch section to the next.
func (r *Recorder) flushBuffers() {
	keys := make([]bufKey, 0, len(r.cs.bufs))
	for k := range r.cs.bufs {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return bufLess(keys[i], keys[j]) })
	for _, k := range keys {
		b := r.cs.bufs[k]
		for _, s := range b.segs {
			r.live(k, s.hi-s.lo, s.wstart, s.liveEnd())
		}
		b.segs = b.segs[:0]
	}
}

func bufLess(a, b bufKey) bool {
	if a.rank != b.rank {
		return a.rank < b.rank
	}
	if a.core != b.core {
		return a.core < b.core
	}
	return a.space < b.space
}

// Counter is one sample of a counter track: from cycle T on, Values[i] is
// the value of the series Names[i].
type Counter struct {
	T      int64
	Values []int64
}

// CounterTrack is the step function of one counter of one core.
type CounterTrack struct {
	Rank, Core int32
	Place      string   // "r0.aic0"
	Name       string   // "queue depth", "live bytes"
	Series     []string // pipe or buffer names, in display order
	Samples    []Counter
}

// Counters returns the queue-depth and live-bytes tracks of every kept core,
// in rank, core order (queue depth first), restricted to f's pipes and its
// cycle window. A track has a sample only where a value changes, plus one at
// the window's start; values never go negative and queue depth ends at 0
// (entries still queued when the run stopped, say at a deadlock, leave the
// queue at the last recorded cycle).
func (r *Recorder) Counters(f Filter) []CounterTrack {
	var out []CounterTrack
	out = append(out, r.queueTracks(f)...)
	out = append(out, r.occupancyTracks(f)...)
	kept := out[:0]
	for _, tr := range out {
		if len(tr.Samples) > 0 { // a window before the core's first change
			kept = append(kept, tr)
		}
	}
	out = kept
	sort.SliceStable(out, func(i, j int) bool {
		a, b := &out[i], &out[j]
		if a.Rank != b.Rank {
			return a.Rank < b.Rank
		}
		if a.Core != b.Core {
			return a.Core < b.Core
		}
		return a.Name > b.Name // "queue depth" before "live bytes"
	})
	return out
}

func (r *Recorder) queueTracks(f Filter) []CounterTrack {
	ds := append([]delta(nil), r.cs.qd...)
	// Close what is still queued so every track returns to 0.
	bal := map[lane]int{}
	for _, d := range ds {
		bal[lane{d.rank, d.core, asm.Pipe(d.lane)}] += int(d.d)
	}
	open := make([]lane, 0, len(bal))
	for l, n := range bal {
		if n != 0 {
			open = append(open, l)
		}
	}
	sort.Slice(open, func(i, j int) bool { return laneLess(open[i], open[j]) })
	for _, l := range open {
		for n := bal[l]; n > 0; n-- {
			ds = append(ds, delta{t: r.maxCycle, rank: l.rank, core: l.core, lane: uint8(l.pipe), d: -1})
		}
	}
	return r.tracks(ds, f, "queue depth", int(asm.NumPipes),
		func(l int) bool { return f.pipe(asm.Pipe(l)) },
		func(l int) int { return pipeOrder(asm.Pipe(l)) },
		func(l int) string { return asm.Pipe(l).String() })
}

func (r *Recorder) occupancyTracks(f Filter) []CounterTrack {
	ds := append([]delta(nil), r.cs.od...)
	// Values still held when the recording stopped mid-run.
	keys := make([]bufKey, 0, len(r.cs.bufs))
	for k := range r.cs.bufs {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return bufLess(keys[i], keys[j]) })
	for _, k := range keys {
		for _, s := range r.cs.bufs[k].segs {
			if to := s.liveEnd(); to > s.wstart {
				ds = append(ds, delta{t: s.wstart, rank: k.rank, core: k.core, lane: uint8(k.space), d: s.hi - s.lo},
					delta{t: to, rank: k.rank, core: k.core, lane: uint8(k.space), d: s.lo - s.hi})
			}
		}
	}
	return r.tracks(ds, f, "live bytes", int(asm.NumSpaces),
		func(int) bool { return true },
		func(l int) int { return l },
		func(l int) string { return asm.Space(l).String() })
}

// tracks turns deltas into one counter track per core, with a series per
// lane that keep accepts, in order; a core with no such lane has no track.
func (r *Recorder) tracks(ds []delta, f Filter, name string, nlanes int,
	keep func(int) bool, order func(int) int, label func(int) string) []CounterTrack {
	sort.Slice(ds, func(i, j int) bool {
		a, b := &ds[i], &ds[j]
		if a.rank != b.rank {
			return a.rank < b.rank
		}
		if a.core != b.core {
			return a.core < b.core
		}
		if a.t != b.t {
			return a.t < b.t
		}
		if a.lane != b.lane {
			return a.lane < b.lane
		}
		return a.d < b.d
	})
	var out []CounterTrack
	idx := make([]int, nlanes)
	for i := 0; i < len(ds); {
		j := i
		for j < len(ds) && ds[j].rank == ds[i].rank && ds[j].core == ds[i].core {
			j++
		}
		present := make([]bool, nlanes)
		for _, d := range ds[i:j] {
			if int(d.lane) < nlanes {
				present[d.lane] = true
			}
		}
		var lanes []int
		for l := range nlanes {
			idx[l] = -1
			if present[l] && keep(l) {
				lanes = append(lanes, l)
			}
		}
		sort.SliceStable(lanes, func(a, b int) bool { return order(lanes[a]) < order(lanes[b]) })
		var series []string
		for k, l := range lanes {
			idx[l] = k
			series = append(series, label(l))
		}
		if len(lanes) > 0 {
			tr := CounterTrack{Rank: ds[i].rank, Core: ds[i].core, Place: r.coreName(ds[i].rank, ds[i].core),
				Name: name, Series: series}
			tr.Samples = steps(len(lanes), f, j-i, func(k int) (int64, int, int64) {
				d := &ds[i+k]
				if int(d.lane) >= nlanes {
					return d.t, -1, d.d
				}
				return d.t, idx[d.lane], d.d
			})
			out = append(out, tr)
		}
		i = j
	}
	return out
}

// steps turns n time-sorted deltas (at(k) = cycle, series, delta; series -1
// ignored) into samples inside f's window: one at the window's start when it
// opens after the first change, then one per cycle whose values differ from
// the previous sample.
func steps(width int, f Filter, n int, at func(k int) (int64, int, int64)) []Counter {
	cur := make([]int64, width)
	var last []int64
	var out []Counter
	emit := func(t int64) {
		if last != nil && equalVals(last, cur) {
			return
		}
		last = append([]int64(nil), cur...)
		out = append(out, Counter{T: t, Values: last})
	}
	started := f.From <= 0
	for k := 0; k < n; {
		t, _, _ := at(k)
		if f.To > 0 && t >= f.To {
			break
		}
		if !started && t > f.From {
			emit(f.From) // the value the window opens with
			started = true
		}
		for ; k < n; k++ {
			t2, s, d := at(k)
			if t2 != t {
				break
			}
			if s >= 0 {
				cur[s] += d
			}
		}
		if started || t == f.From {
			emit(t)
			started = true
		}
	}
	if !started {
		emit(f.From)
	}
	return out
}

func equalVals(a, b []int64) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
