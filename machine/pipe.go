package machine

import (
	"fmt"
	"math/bits"
	"unsafe"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/pipes"
)

type entryKind uint8

const (
	enExec     entryKind = iota // an instruction (or a composite op's step) with a data effect
	enSetFlag                   // set_flag: fires when it reaches the head
	enWaitFlag                  // wait_flag: blocks the head until set, then clears
	enBarrier                   // pipe_barrier(P): flushes P's pending tail
	enFFTSSet                   // ffts_set: cross-core counters
)

// effect is what an exec entry does to memory at completion.
type effect uint8

const (
	exExecute effect = iota // Execute(xop, args)
	exLoad                  // LoadTile(args[0], args[1])
	exStore                 // StoreTile(args[0], args[1], atomic)
	exNone
	exIndexed // Execute(xop, args): mgather/mscatter's row DMAs (sem_img.go)
)

// maxArgs bounds an instruction's operands (tmatmul.bias has 4, tsel 4).
const maxArgs = 8

// entry is one queued instruction. Entries live in the pipe's ring and are
// reused in place: args and iter keep their capacity between uses.
//
// A queue slot is cold by the time its pipe gets to it (the other cores ran
// in between), so the fields every issue writes and every pipe reads come
// first, in 128 bytes, and the entry is padded to a whole number of lines
// (entrySize). The ring's array is a heap object over 512 bytes with
// pointers, so Go puts an 8-byte malloc header before it: every entry starts
// 8 bytes into a line and its first 128 bytes touch three lines. Aligning
// them (a 56-byte lead pad) cut GEMM24's L1 misses by 2% and changed nothing
// measurable in wall time (issue 9, round 6), so the entry stays as it is.
// The rest (FFTS ids, GM window facts, a comm chunk's tile, a register
// snapshot) is touched only by the ops that use it.
type entry struct {
	entryData
	_ [entryPad]byte
}

// entryData is an entry's fields.
type entryData struct {
	// The first 56 bytes are what a set_flag or wait_flag, and an
	// instruction that skips its operands (resolveLean), touch: the scalar
	// writes them at issue and the pipe reads them at begin and complete.
	// With the ring's 8-byte malloc header they share one cache line, so a
	// queued flag costs one line instead of two (issue 22, round 12).
	kind    entryKind
	eff     effect
	atomic  bool
	hasEnv  bool
	hasStep bool     // step is set (reset leaves the string itself alone)
	lean    leanKind // resolve skipped while observed: the operands are the plan's and ldyn (leanOperands)
	remote  int16    // rank of a remote GM operand, -1 for none (ranks ≤ 4096)
	flag    Flag
	ready   int64
	op      *asm.COp // the user's instruction (positions, events)
	xop     *asm.COp // what Execute runs (a synthetic tload/tstore for comm steps)
	// plan is the issuing op's plan for an ordinary instruction (nil for the
	// steps of composite instructions): the cost memo lives there.
	plan *opPlan
	// seq is the op's issue number (core.issued): every op's while
	// observers listen, every queued flag's otherwise (flagSeq).
	seq int64
	// argsOf and argsGen say which op (and which kernel start of the core)
	// args was last resolved for; reset keeps them (see core.resolve).
	argsGen uint32
	argsOf  *asm.COp
	// The rest is touched by the instructions that resolve their operands.
	args []Operand
	step string
	// cold: per operand, the access, and for a GM window its owner rank and
	// shape (rows, cols).
	access [maxArgs]asm.Access
	// The loop iteration vector (iterVec), kept only while observers
	// listen and do not keep the scalar's log instead (core.noteIter;
	// otherwise it stays empty and reset leaves it): its first niter elements of iterBuf, or iterSpill when niter is
	// negative. iterBuf holds nests up to 7 deep (allgather_gemm's compute
	// kernel) in the slot, instead of a heap array of its own that cost a
	// cache miss per issue; with niter it fills one cache line, and no
	// slice header on another line points into it (an observed pipe event
	// read that header's line for nothing else). A copied entry's vector
	// is its own.
	niter   int8
	iterBuf [7]int64
	// ldyn is, for a lean entry, the value of each of its plan's dynamic
	// operands (opPlan.dyn, in order): a tile array's element index, a
	// register operand's value. Beside iterBuf, which an observed issue
	// writes anyway, so the operands cost no line of their own.
	ldyn [maxLeanDyn]int32
	// ffts_set's id and mode (set by every push of one).
	id      int32
	mode    int32
	argRank [maxArgs]int32
	winR    [maxArgs]int32
	winC    [maxArgs]int32
	// tile is a private copy for a partial comm chunk (its valid shape shrunk).
	tile asm.TileInfo
	// env snapshots the registers at issue for ops whose attributes are
	// register expressions (#init=(%k == 0)): the scalar has moved on by the
	// time the op completes.
	env asm.Env
	// regs snapshots the core's IMG2COL/fixpipe registers at issue for the
	// instructions that read them (sem_img.go's issueRegs).
	regs *cubeRegs
	// iterSpill is the slot's own array for nests deeper than iterBuf
	// holds, reused so that no issue allocates (TestRunAllocs).
	iterSpill []int64
}

// entrySize is the entry's size rounded up to whole cache lines.
const (
	entrySize = (unsafe.Sizeof(entryData{}) + 63) &^ 63
	entryPad  = entrySize - unsafe.Sizeof(entryData{})
)

// reset starts a fresh entry: its hot fields, no operands, no step, the
// iteration vector iter.
func (e *entry) reset(kind entryKind, op *asm.COp, ready int64, iter []int64) {
	e.resetHot(kind, op, ready)
	e.step = ""
	e.args = e.args[:0]
	e.copyIter(iter)
}

// resetHot writes only the hot fields, for the queue's own pushes (push,
// issuePlannedExec): a slot's args, step and iter stay as they were, so a
// flag touches one line. Nothing reads a flag's args, step only when
// hasStep says so, and iter is set by the caller while observers listen
// (core.noteIter) and empty in every slot otherwise.
func (e *entry) resetHot(kind entryKind, op *asm.COp, ready int64) {
	e.kind, e.eff, e.op, e.xop, e.ready = kind, exExecute, op, op, ready
	e.flag, e.atomic, e.remote, e.hasEnv, e.hasStep, e.lean = Flag{}, false, -1, false, false, leanNone
	e.plan = nil
}

// copyIter copies iter into the slot's own array (core.noteIter).
func (e *entry) copyIter(iter []int64) {
	if len(iter) <= len(e.iterBuf) {
		// Loop nests are shallow: a plain copy beats memmove's call.
		e.niter = int8(len(iter))
		//lint:ignore S1001 the loop is deliberate (see above)
		for i, v := range iter {
			e.iterBuf[i] = v
		}
	} else {
		e.iterSpill = append(e.iterSpill[:0], iter...)
		e.niter = -1
	}
}

// iterVec is the entry's loop iteration vector (copyIter): empty while
// observers keep the scalar's log instead (Machine.iterLog).
func (e *entry) iterVec() []int64 {
	if e.niter >= 0 {
		return e.iterBuf[:e.niter]
	}
	return e.iterSpill
}

// iterVecUnless is iterVec, or nil without reading the slot when the
// observers keep the scalar's log instead (noteIter): the vector's line
// then stays cold from issue to completion.
func (e *entry) iterVecUnless(logged bool) []int64 {
	if logged {
		return nil
	}
	return e.iterVec()
}

// stepName is the composite step the entry is, "" for none.
func (e *entry) stepName() string {
	if e.hasStep {
		return e.step
	}
	return ""
}

// pipeState is one pipe of one core: its queue and the op in flight.
//
// Its fields fill exactly three cache lines (192 bytes, TestPipeStateSize):
// a pipe's wake-up touches most of them, and Go allocates a 192-byte object
// on a 64-byte boundary, where the 208 bytes it had spread over four or
// five lines (issue 22, round 12). Line 0: the core, the queue, the flags;
// line 1: the waker; line 2: the op in flight and the statistics.
type pipeState struct {
	c       *core
	q       pipes.Ring[entry] // by value: one pointer less between a pipe and its queue
	m       *Machine          // c.m, without a trip to the core's first line
	wkey    int32             // the waker's agent key, c.order*NumPipes + p (the core's line stays cold; keys < 2^24)
	p       asm.Pipe
	busy    bool
	waiting bool // the head is a wait_flag whose flag is not set
	stalled bool // the head wait_flag has been blocked since stall0

	wake pipeWake

	start   int64
	end     int64
	lastEnd int64 // when the previous op finished; an op starting then hides its head
	ran     bool  // an op has run: before it, every op starts on an empty pipe
	// drained is set by an op that ends with an internal barrier
	// (asm.VBarrier): the next op starts on an empty pipe and pays its
	// head, as it would after a pipe_barrier entry. (Two bools, not a
	// count, keep pipeState at three cache lines: TestHotLayout.)
	drained bool
	// rank and vid are the core's Event.Agent (core.rank.id, core.vid),
	// in the line a completion touches anyway, so that the pipe's own
	// events leave the core's lines cold (pipeEvent); vid is -1 when they
	// do not fit (setVirtual).
	rank uint16
	vid  int32

	tail   int64 // pending vector tail, paid by the next flag or barrier on this pipe
	stall0 int64

	busyCycles int64
	instrs     int64
}

// pipeWake holds a pipe's waker (LastStarted compares against p.wake.w).
type pipeWake struct{ w waker }

func (p *pipeState) reset() {
	p.q.Reset()
	p.busy, p.waiting, p.stalled = false, false, false
	p.tail = 0
	p.m.cancel(&p.wake.w)
}

func (p *pipeState) idle() bool { return !p.busy && p.q.Empty() }

func (p *pipeState) key() int { return int(p.wkey) }

// kick makes sure an idle pipe looks at its queue; called after a push or when
// a flag it may wait for is set.
func (p *pipeState) kick(at int64) {
	// Most kicks find the pipe busy: this test inlines at the call sites.
	if !p.busy {
		p.kickIdle(at)
	}
}

// kickIdle is kick for a pipe that is not busy.
func (p *pipeState) kickIdle(at int64) {
	// Already due no later: one wake-up looks at the whole queue.
	if w := &p.wake.w; w.armed && w.at <= at && w.at >= p.m.now {
		return
	}
	p.m.schedule(&p.wake.w, at, p.key())
}

// warmSink keeps warm's loads from being optimised away: it is written,
// never read, on purpose.
//
//lint:ignore U1000 a write-only sink is what keeps the loads
var warmSink int64

// warm loads the head entry's first line, which run reads first: the
// scheduler calls it for every pipe of a busy cycle before running any, so
// that their cache misses overlap. It changes nothing; the caller folds
// what it read into warmSink (once per cycle, not once per pipe).
func (p *pipeState) warm() int64 {
	if e := p.q.Head(); e != nil {
		return e.ready
	}
	return 0
}

// run is the pipe's wake-up: complete the op in flight, then start what can start.
func (p *pipeState) run() {
	m := p.m
	now := m.now
	if p.busy {
		if now < p.end {
			m.schedule(&p.wake.w, p.end, p.key())
			return
		}
		if m.str != nil && !doneLocal(p.q.Head()) {
			p.strPark() // in a stretch (stretch.go)
			return
		}
		p.complete()
		if m.err != nil {
			return
		}
	}
	for !p.busy {
		e := p.q.Head()
		if e == nil {
			p.c.pipeChanged(p)
			return
		}
		if e.ready > now {
			m.schedule(&p.wake.w, e.ready, p.key())
			return
		}
		if !p.begin(e) {
			return
		}
		if m.err != nil {
			return
		}
	}
}

// begin starts the head entry at now; zero-length entries complete at once.
// It returns false when the head must wait (a wait_flag not yet set).
func (p *pipeState) begin(e *entry) bool {
	c, m := p.c, p.m
	now := m.now
	var d int64
	switch e.kind {
	case enWaitFlag:
		f := e.flag
		if !c.flags.Test(f.Src, f.Dst, int(f.ID)) {
			p.stallFrom(now)
			p.waiting = true
			return false
		}
		// A flag is never set after now, so without a hand-off latency
		// there is nothing to wait for (and flagAt's line stays cold).
		if h := m.prof.Sync.FlagHandoff; h != 0 && c.flagAt[f.Src][f.Dst][f.ID]+h > now {
			at := c.flagAt[f.Src][f.Dst][f.ID] + h
			p.stallFrom(now)
			m.schedule(&p.wake.w, at, p.key())
			return false
		}
		if !p.stalled {
			p.waiting = false // resume's common case, without the call
		} else if ev := p.resume(e, now); ev != nil {
			ev.Reason = flagReason(f)
			ev.Flag = f
			m.emit()
		}
		c.flags.Clear(f.Src, f.Dst, int(f.ID))
		if m.emitting && !m.pipeFast(EvFlagWait, p, e, m.now, m.now, f) {
			ev := m.pipeEvent(EvFlagWait, p, e.op)
			ev.Flag = f
			ev.Iter = e.iterVec()
			ev.Issue = e.seq
			m.emit()
		}
		d = m.prof.Sync.WaitFlag
	case enSetFlag:
		d = p.flushTail(now) + m.prof.Sync.SetFlag
	case enBarrier:
		d = p.flushTail(now) + m.prof.Sync.Barrier
	case enFFTSSet:
		d = p.flushTail(now) + m.prof.Sync.FFTSSet
	case enExec:
		if m.str != nil && !p.beginLocal(e) {
			p.strPark() // in a stretch (stretch.go)
			return false
		}
		if x := e.xop; x != nil && x.Unit != asm.UnitNone {
			var ok bool
			if d, ok = p.unitBegin(e, now); !ok {
				return false
			}
			if ev := p.resume(e, now); ev != nil {
				ev.Reason = "#unit (L0C unit flag)"
				m.emit()
			}
		} else {
			d = p.cost(e, now)
		}
		if m.err != nil {
			return false
		}
	}
	p.start, p.end = now, now+p.syncJit(e, d)
	p.busy = true
	if d > 0 {
		// An instruction in flight is work a spinning scalar may wait for
		// (the idle guard); flag and barrier entries move no data, or a
		// loop of set_flag and wait_flag would never be idle.
		if e.kind == enExec && p.end > m.workEnd {
			m.workEnd = p.end
		}
		m.schedule(&p.wake.w, p.end, p.key())
		return true
	}
	p.complete()
	return true
}

// flushTail returns what is left at now of the pipe's pending vector tail
// and clears it: a flag or barrier waits for the last op's results, which
// are out tail cycles after that op ended (lastEnd), so a pipe that sat
// idle past them (a wait_flag stall, an empty queue) pays only the rest, as
// pipe_barrier ALL waits for lastEnd+tail (drainAll). Charging the whole
// tail again after a stall made an added pipe_barrier ALL, which drains it
// early, faster than none (hazards/correlated_conditions, the trend search,
// docs/profile.md "Trends"); pto-isa's cost model has no waits, so it
// charges the tail whole (FlushPendingTail, include/pto/costmodel/trace.hpp
// at 3186c381) and cannot tell.
func (p *pipeState) flushTail(now int64) int64 {
	d := max(p.lastEnd+p.tail-now, 0)
	p.tail = 0
	return d
}

// resume ends the head's wait at now. When the head had stalled and stalls
// are observed it returns the EvStall event, filled but for its reason, for
// the caller to complete and emit.
func (p *pipeState) resume(e *entry, now int64) *Event {
	m := p.m
	p.waiting = false
	if !p.stalled {
		return nil
	}
	p.stalled = false
	if !m.stalls || now <= p.stall0 {
		return nil
	}
	ev := m.event(EvStall, p.c, p.p, e.op)
	ev.Start, ev.End, ev.Cycle = p.stall0, now, p.stall0
	ev.Iter = e.iterVec()
	return ev
}

// stallFrom notes that the head cannot start from now on.
func (p *pipeState) stallFrom(now int64) {
	if !p.stalled {
		p.stalled, p.stall0 = true, now
	}
}

// contention reports that e, started at start, moved no data until free
// because other transfers held a shared resource (a link, a rank's GM port);
// the wait is inside the op's duration, so it shows as a stall slice under
// the op's own.
func (p *pipeState) contention(e *entry, start, free int64, why string) {
	ev := p.m.event(EvStall, p.c, p.p, e.op)
	ev.Start, ev.End = start, free
	ev.Reason = why
	p.m.emit()
}

func flagReason(f Flag) string {
	if s := flagReasonOf(f); s != "" {
		return s
	}
	return fmt.Sprintf("wait_flag %s->%s #%d", f.Src, f.Dst, f.ID)
}

// complete finishes the op in flight at p.end: data effect, event, pop.
func (p *pipeState) complete() {
	c, m := p.c, p.m
	e := p.q.Head()
	p.busy = false
	switch e.kind {
	case enExec:
		p.busyCycles += p.end - p.start
		p.instrs++
		p.ran = true
		p.lastEnd = p.end
		c.execDone(p, e)
		if e.xop != nil && e.xop.Unit != asm.UnitNone {
			p.unitDone(e)
		}
	case enSetFlag:
		p.busyCycles += p.end - p.start
		c.fireFlag(m, e, p, p.end)
	case enBarrier:
		p.busyCycles += p.end - p.start
		if m.emitting {
			ev := m.pipeEvent(EvBarrier, p, e.op)
			ev.Target = p.p
			ev.Start, ev.End = p.start, p.end
			ev.Iter = e.iterVec()
			ev.Issue = e.seq
			m.emit()
		}
	case enFFTSSet:
		p.busyCycles += p.end - p.start
		c.fireCross(e, p.p)
	case enWaitFlag:
		p.busyCycles += p.end - p.start
	}
	p.q.Pop()
	c.pipeChanged(p)
}

// execDone applies an exec entry's data effect and reports it.
func (c *core) execDone(p *pipeState, e *entry) {
	m := p.m // not c.m: the core's first line stays cold
	if pl := e.plan; pl != nil && pl.data || pl == nil && m.dataOp(e.op) {
		deferred := m.prof.RemoteVisibility == pipes.VisibleAtDSB && e.remote >= 0 && c.hideRemote(e)
		var err error
		switch e.eff {
		case exExecute, exIndexed:
			c.scratch.Env = &c.env
			c.scratch.img.op = e.regs
			if e.hasEnv {
				c.scratch.Env = &e.env
			}
			err = Execute(e.xop, e.args, c.scratch)
		case exLoad:
			err = LoadTile(&e.args[0], &e.args[1])
		case exStore:
			err = StoreTile(&e.args[0], &e.args[1], e.atomic)
		}
		if err != nil {
			m.fail(c.execErr(e.op, p.p, err))
			return
		}
		if deferred {
			c.stashRemote()
		}
	}
	pl := e.plan
	if pl != nil && !pl.varShape {
		m.flops += pl.flops
	} else if e.eff == exExecute {
		m.flops += Flops(e.xop, e.args)
	}
	if m.emitting && !m.pipeFast(EvExec, p, e, p.start, p.end, Flag{}) {
		ev := m.pipeEvent(EvExec, p, e.op)
		ev.Start, ev.End, ev.Cycle = p.start, p.end, p.start
		ev.Issue = e.seq
		ev.Step = e.stepName()
		ev.Iter = e.iterVec()
		// A lean op's accesses may be deferred (Event.Deferred). Four
		// lines, as before: default.pgo's inlining in the caller is keyed
		// by each call's line within the function.
		ev.Accesses = c.execAccesses(m, e, ev.Agent, ev.Accesses[:0], &ev.Deferred)
		m.emit()
	}
	if e.eff == exIndexed && e.op.Info.Op == asm.OpMscatter && m.dataOp(e.op) {
		m.gmWritten(int(e.argRank[0]))
	}
	// A GM write may satisfy a spinning twait on the written rank.
	if pl != nil {
		for b := pl.gmWrites; b != 0; b &= b - 1 {
			i := bits.TrailingZeros8(b)
			if !c.hidden(e, i) {
				m.gmWritten(int(e.argRank[i]))
			}
		}
		return
	}
	for i := range e.args {
		if c.hidden(e, i) {
			continue // lands at the writer's next dsb
		}
		if e.args[i].Kind == asm.ArgGM && e.access[i]&asm.AccWrite != 0 {
			m.gmWritten(int(e.argRank[i]))
		}
	}
}

// execAccesses appends to acc what an exec event of e lists of its
// accesses as agent ag, and sets *def for a lean op: its plan and ldyn say
// what the accesses are, so observers that list them themselves
// (AccessDeferrer) get just that, the others the list too.
func (c *core) execAccesses(m *Machine, e *entry, ag Agent, acc []Access, def *Deferred) []Access {
	lean := e.lean != leanNone && e.eff != exIndexed
	if lean {
		*def = Deferred{plan: e.plan, dyn: e.ldyn, kind: e.lean}
		if m.deferAcc {
			return acc
		}
	}
	acc = c.accessesAs(m, ag.Rank, ag.Core, e, acc)
	if e.eff == exIndexed {
		acc = c.indexedSpans(e, acc, e.plan == nil && m.dataOp(e.op))
	}
	return acc
}

// duration is the duration of an exec entry starting at start (cost),
// slowed by the pipe's jitter factor when the profile asks for one, for the
// unit flags' hand-off (unitBegin), which must see the duration the pipe is
// busy for; begin slows the other entries itself (syncJit).
func (p *pipeState) duration(e *entry, start int64) int64 {
	d := p.cost(e, start)
	if p.m.jit != nil {
		d = p.jitScale(d)
	}
	return d
}

// syncJit is d, the cycles of entry e, under the machine's jitter (d when
// off, and for an op with a unit flag, whose unitBegin took duration's).
// A call on begin's own line, and begin takes an op's cost as it did
// without the jitter: an added line or call there would move begin's calls
// after it off the lines default.pgo knows them by, and the inliner's
// choices with them (1.2% more instructions in a timing-only run).
func (p *pipeState) syncJit(e *entry, d int64) int64 {
	if p.m.jit == nil {
		return d // small enough to inline: one test when off
	}
	return p.jitEntry(e, d)
}

// cost is the duration of an exec entry starting at start, including the
// head when the pipe was idle, GM port sharing and link contention. The part
// that depends only on an ordinary instruction's static operands is
// memoised in its plan.
func (p *pipeState) cost(e *entry, start int64) int64 {
	queueEmpty := !p.ran || p.lastEnd < start || p.drained
	p.drained = false
	pl := e.plan
	qi := 0
	if queueEmpty {
		qi = 1
	}
	switch p.p {
	case asm.PipeM, asm.PipeV:
		if x := e.xop; p.p == asm.PipeV && x != nil && x.Info != nil && x.Info.VBar.Applies(x) {
			return p.barrierCost(e, pl, queueEmpty, qi, x.Info.VBar)
		}
		return p.vecCost(e, pl, queueEmpty, qi)
	}
	// #init can change an operand's access per instance, and with it the direction.
	if pl == nil || pl.initAttr >= 0 || pl.varShape {
		if e.eff == exIndexed {
			return p.indexedCost(e)
		}
		src, dst, bytes, rows := dmaShape(e)
		return p.dmaCost(e, start, src, dst, bytes, rows)
	}
	mm := &pl.memo[0]
	if !mm.ok {
		p.dmaMemo(mm, e)
	}
	if !mm.pathOK || e.remote >= 0 {
		return p.dmaCost(e, start, mm.src, mm.dst, mm.bytes, mm.rows)
	}
	// A local transfer: the memoised duration, then the rank's GM port.
	m := p.m
	m.bytes[mm.path] += mm.bytes
	d := mm.d
	if mm.gm {
		r := p.c.rank
		if r.l2 != nil {
			d = p.gmPortsMemo(e, r, pl, start, d)
		} else {
			r.portBusy = max(start, r.portBusy) + mm.port
			d = max(d+p.hbmReadLatency(mm.src), r.portBusy-start)
		}
	}
	return max(d, 1)
}

// dmaMemo fills a DMA op's cost memo from entry e's operands.
func (p *pipeState) dmaMemo(mm *costMemo, e *entry) {
	mm.src, mm.dst, mm.bytes, mm.rows = dmaShape(e)
	mm.path, mm.pathOK = pipes.DMAPathFor(mm.src, mm.dst)
	mm.d = p.m.prof.DMACycles(mm.path, mm.bytes, mm.rows)
	mm.port = ceilDiv(mm.bytes, p.m.prof.GMBW)
	mm.gm = mm.src == asm.GM || mm.dst == asm.GM
	mm.gmArg = int8(gmArg(e))
	mm.ok = true
}

// barrierCost is the duration of a vector op with an internal
// pipe_barrier(PIPE_V) (asm.VBarrier), which flushes the pipe's tail as a
// pipe_barrier op does, and leaves the pipe empty, so what follows it pays
// its head: a barrier after the op's last access pays the op's own tail and
// the next op's head; one before or in between the previous op's tail (the
// first part's short tail is inside its busy time) and this op's head; an
// op with both (vb.Tail) pays both. That is what the same op costs between
// manual pipe_barrier V entries (TestInternalBarrierCharge).
func (p *pipeState) barrierCost(e *entry, pl *opPlan, queueEmpty bool, qi int, vb *asm.VBarrier) int64 {
	bar := p.m.prof.Sync.Barrier
	var d int64
	if vb.Post != 0 {
		d = p.flushTail(p.m.now) + bar
		queueEmpty, qi = true, 1
	}
	d += p.vecCost(e, pl, queueEmpty, qi)
	if vb.Post == 0 || vb.Tail {
		d += p.tail + bar
		p.tail = 0
		p.drained = true
	}
	return d
}

// vecCost is a cube or vector entry's duration, memoised in its plan when
// it depends only on static operands.
func (p *pipeState) vecCost(e *entry, pl *opPlan, queueEmpty bool, qi int) int64 {
	if pl == nil || pl.dynCost || pl.varShape {
		return p.computeCost(e, queueEmpty)
	}
	mm := &pl.memo[qi]
	if !mm.ok {
		p.vecMemo(mm, e, queueEmpty)
	}
	if mm.setTail {
		p.tail = mm.tail
	}
	return mm.d
}

// vecMemo fills a cube or vector op's cost memo from entry e's operands.
func (p *pipeState) vecMemo(mm *costMemo, e *entry, queueEmpty bool) {
	t0 := p.tail
	p.tail = -1
	mm.d = p.computeCost(e, queueEmpty)
	mm.tail, mm.setTail = p.tail, p.tail != -1
	mm.ok = true
	p.tail = t0
}

// computeCost is the duration of a cube or vector entry.
func (p *pipeState) computeCost(e *entry, queueEmpty bool) int64 {
	c, m := p.c, p.m
	prof := m.prof
	if p.p == asm.PipeM {
		if len(e.args) >= 3 && e.args[1].Tile != nil && e.args[2].Tile != nil {
			a, b := e.args[1].Tile, e.args[2].Tile
			return prof.MatmulCycles(a.VRows, a.VCols, b.VCols, a.DType, queueEmpty)
		}
		return 1
	}
	if e.xop != nil && e.xop.Cost == asm.CostVMrgSort4 {
		return p.mergeCost(e, queueEmpty)
	}
	if x := e.xop; x != nil && x.Info != nil {
		switch x.Info.Fold {
		case asm.FoldDivS, asm.FoldPow, asm.FoldScalarFill:
			if busy, tail, ok := c.sequenceCost(e, queueEmpty); ok {
				p.tail = tail
				return max(busy, 1)
			}
		}
	}
	if x := e.xop; x != nil && x.Info != nil && x.Info.Fold != asm.FoldNone {
		if a := foldSource(e); a != nil {
			// A reduction run as a chain of barrier-separated instructions
			// over its source's rows.
			var busy, tail int64
			switch x.Info.Fold {
			case asm.FoldCols:
				busy, tail = prof.ColFoldCycles(x.Cost, a.DType, a.VRows, a.VCols)
			case asm.FoldRowBlocks:
				busy = prof.RowProdCycles(a.DType, a.VRows, a.VCols)
			case asm.FoldColArg:
				busy = prof.ColArgCycles(x.Cost, a.DType, a.VRows, a.VCols, withVal(x.Info.Op))
			case asm.FoldRowArg:
				busy, tail = prof.RowArgCycles(x.Cost, a.DType, a.VRows, a.VCols, withVal(x.Info.Op), queueEmpty)
			}
			p.tail = tail
			return max(busy, 1)
		}
	}
	t, dt := c.vecShape(e)
	if t == nil || e.xop == nil {
		return 1
	}
	// The assembler resolved the op's cost key (a move on V is the UB→UB copy);
	// pipes' TestEveryOpHasCost makes every V instruction's a vector intrinsic.
	var busy, tail int64
	if rowsIfDynCols(e) || mixedAxpy(e) {
		busy, tail = prof.VectorRowsCycles(e.xop.Cost, dt, t.VRows, t.VCols, queueEmpty)
	} else {
		busy, tail = prof.VectorCycles(e.xop.Cost, dt, t.VRows, t.VCols, t.Cols, queueEmpty)
	}
	p.tail = tail
	return max(busy, 1)
}

// sequenceCost charges an op pto-isa lowers to an instruction sequence
// with barriers inside its calls, or to a scalar loop (asm.FoldDivS,
// FoldPow, FoldScalarFill; pipes/chain.go). ok is false when the entry has
// no tile to size it by.
func (c *core) sequenceCost(e *entry, queueEmpty bool) (busy, tail int64, ok bool) {
	prof := c.m.prof
	t, dt := c.vecShape(e)
	if t == nil {
		return 0, 0, false
	}
	s := c.binSShape(e, t)
	elems := int64(t.VRows) * int64(t.VCols)
	switch e.xop.Info.Fold {
	case asm.FoldDivS:
		if !dt.IsFloat() {
			// TDivs_naive: a UB load, the division and a UB store.
			return prof.ScalarLoopCycles(elems, 3, true), 0, true
		}
		// In place is dst = a; tsdivs's operand 1 is its scalar, so it is
		// never in place here, as SDivOp has no reciprocal form.
		busy, tail = prof.DivSCycles(dt, s, sameTile(e, 0, 1), queueEmpty)
		return busy, tail, true
	case asm.FoldPow:
		return prof.PowCycles(dt, s, e.xop.Info.Op == asm.OpTpow), 0, true
	case asm.FoldScalarFill:
		// TCI: the value and its UB store.
		return prof.ScalarLoopCycles(elems, 2, false), 0, true
	}
	return 0, 0, false
}

// binSShape is what TBinSInstr decides its lowering on (pipes.BinSShape):
// the declared rows of the largest tile operand, dst's declared columns, the
// valid region of t, and whether it runs flat: contiguous rows and no valid
// columns from registers (rowsIfDynCols).
func (c *core) binSShape(e *entry, t *asm.TileInfo) pipes.BinSShape {
	s := pipes.BinSShape{Cols: t.Cols, VRows: t.VRows, VCols: t.VCols}
	for i := range e.args {
		a := e.args[i].Tile
		if e.args[i].Kind != asm.ArgTile || a == nil {
			continue
		}
		s.Rows = max(s.Rows, a.Rows)
		if i == 0 {
			s.Cols = a.Cols
		}
	}
	s.Flat = (t.Cols <= t.VCols || t.VRows == 1) && !rowsIfDynCols(e)
	return s
}

// sameTile reports operands i and j naming the same tile in UB (an op in
// place). The plan does not memoise an op that asks this of a tile array or
// a rebound tile (issue.go).
func sameTile(e *entry, i, j int) bool {
	if i >= len(e.args) || j >= len(e.args) {
		return false
	}
	a, b := &e.args[i], &e.args[j]
	return a.Tile != nil && b.Tile != nil && a.Buf == b.Buf && a.Off == b.Off
}

// rowsIfDynCols reports a TBinSInstr op (asm.OpInfo.RowsIfDynCols) that
// pto-isa runs row by row: one of its tiles is declared with valid columns
// from registers and one has more than one row (TBinSOp.hpp:188-190 at
// 3186c381 takes the flat run only when every tile's valid columns are its
// columns at compile time, or every tile is one row). A resolved view's
// declaration is its Of.
func rowsIfDynCols(e *entry) bool {
	if e.xop.Info == nil || !e.xop.Info.RowsIfDynCols {
		return false
	}
	dynCols, rows := false, false
	for i := range e.args {
		t := e.args[i].Tile
		if e.args[i].Kind != asm.ArgTile || t == nil {
			continue
		}
		if t.Of != nil {
			t = t.Of
		}
		dynCols = dynCols || t.DynVCols != nil
		rows = rows || t.Rows > 1
	}
	return dynCols && rows
}

// mixedAxpy reports TAXPY of a 16-bit source into a 32-bit dst, which
// TAxpy.hpp runs row by row whatever the shape: AxpyCountMode one vaxpy per
// row, AxpyNormMode one per 64-element dst repeat covering the rows, each
// with ⌈cols/64⌉ repeats a row (3186c381); one dtype is TBinSInstr
// (rowsIfDynCols).
func mixedAxpy(e *entry) bool {
	if e.xop.Info == nil || e.xop.Info.Op != asm.OpTaxpy || len(e.args) < 2 {
		return false
	}
	d, a := e.args[0].Tile, e.args[1].Tile
	return d != nil && a != nil && d.DType != a.DType
}

// withVal reports an arg-reduction that also writes the values.
func withVal(op asm.Opcode) bool {
	switch op {
	case asm.OpTcolargmaxVal, asm.OpTcolargminVal, asm.OpTrowargmaxVal, asm.OpTrowargminVal:
		return true
	}
	return false
}

// foldSource is the tile a folding reduction reads: its operand named a.
func foldSource(e *entry) *asm.TileInfo {
	for i, o := range e.xop.Info.Operands {
		if o.Name == "a" && i < len(e.args) {
			return e.args[i].Tile
		}
	}
	return nil
}

// mergeCost is a TMRGSORT's duration. The single-list form (dst, src,
// blocklen) is one vmrgsort4 call, one 4-way merge per group of 4·blocklen
// slots of each row; the list form (dst, tmp, src0..src3) is one merge of
// its lists' pairs into tmp, then (after the barrier inside TMrgSort.hpp) a
// UB→UB copy of dst's valid row, as pto-isa's MovUb2Ub does.
func (p *pipeState) mergeCost(e *entry, queueEmpty bool) int64 {
	prof := p.m.prof
	if len(e.args) == 3 && e.args[1].Tile != nil {
		src, group := e.args[1].Tile, 4*e.args[2].Int
		if group <= 0 {
			return 1
		}
		rowBytes := int64(src.VCols) * int64(src.DType.Size())
		merges := int64(src.VRows) * ((int64(src.VCols) + group - 1) / group)
		busy, tail := prof.MergeCycles(int64(src.VRows)*rowBytes, merges, queueEmpty)
		p.tail = tail
		return max(busy, 1)
	}
	var bytes int64
	for i := 2; i < len(e.args); i++ {
		if t := e.args[i].Tile; t != nil {
			bytes += int64(t.VCols) * int64(t.DType.Size())
		}
	}
	busy, _ := prof.MergeCycles(bytes, 1, queueEmpty)
	if d := e.args[0].Tile; d != nil {
		// The barrier drains vmrgsort4's tail before the copy starts.
		busy += prof.DMACycles(pipes.PathUBUB, int64(d.VCols)*int64(d.DType.Size()), 1)
	}
	p.tail = 0
	return max(busy, 1)
}

// dmaShape finds a DMA entry's two spaces, its bytes and its rows.
func dmaShape(e *entry) (src, dst asm.Space, bytes int64, rows int) {
	src, dst = asm.SpaceInvalid, asm.SpaceInvalid
	var tile *asm.TileInfo
	gmIdx := -1
	for i := range e.args {
		a := &e.args[i]
		var sp asm.Space
		switch a.Kind {
		case asm.ArgTile:
			if a.Tile == nil || a.Tile.Loc == asm.LocScaling && e.access[i]&asm.AccWrite == 0 {
				// A read scaling tile is a quantised move's parameters
				// (tmov.fp and the like), not what it moves.
				continue
			}
			sp = a.Tile.Space
			// A move carries the smaller of its two tiles: textract reads a
			// window of its source the size of its destination, tinsert the reverse.
			if tile == nil || a.Tile.VRows*a.Tile.VCols*a.Tile.DType.Size() < tile.VRows*tile.VCols*tile.DType.Size() {
				tile = a.Tile
			}
		case asm.ArgGM:
			sp = asm.GM
			gmIdx = i
		default:
			continue
		}
		if e.access[i]&asm.AccWrite != 0 && dst == asm.SpaceInvalid {
			dst = sp
		} else if e.access[i]&asm.AccRead != 0 && src == asm.SpaceInvalid {
			src = sp
		}
	}
	if x := e.xop; x != nil && x.Info != nil && x.Info.Op == asm.OpTimg2col && e.args[0].Tile != nil {
		// IMG2COL writes more than it reads (each map pixel lands in up to
		// kh·kw places): its load runs at the rate of what it writes.
		tile = e.args[0].Tile
	}
	rows = 1
	if gmIdx >= 0 {
		a := &e.args[gmIdx]
		rows = int(e.winR[gmIdx])
		bytes = int64(e.winR[gmIdx]) * int64(e.winC[gmIdx]) * int64(a.GM.DType.Size())
	} else if tile != nil {
		rows = tile.VRows
		bytes = int64(tile.VRows) * int64(tile.VCols) * int64(tile.DType.Size())
		if src == asm.L0C {
			bytes = int64(tile.VRows) * int64(tile.VCols) * 2
		}
	}
	return src, dst, bytes, rows
}

// dmaCost is the duration of a transfer of the given shape starting at start.
func (p *pipeState) dmaCost(e *entry, start int64, src, dst asm.Space, bytes int64, rows int) int64 {
	c, m := p.c, p.m
	prof := m.prof
	path, ok := pipes.DMAPathFor(src, dst)
	if !ok {
		// An op the table has no path for (tprefetch, fills): perf-sim's fallback.
		return 3 + 2*bytes/64
	}
	m.bytes[path] += bytes
	var d int64
	if e.remote >= 0 && int(e.remote) != c.rank.id {
		hops := prof.Hops(c.rank.id, int(e.remote), m.nranks)
		d = prof.RemoteDMACycles(path, bytes, rows, hops)
		// The link from the data's source to its destination is shared.
		from, to := int(e.remote), c.rank.id
		if dst == asm.GM {
			from, to = c.rank.id, int(e.remote)
			m.bytes[pathRemoteWrite] += bytes
		} else {
			m.bytes[pathRemoteRead] += bytes
		}
		begin, end := m.links.book(from, to, c.order, start, bytes)
		d = max(d, end-start)
		if begin > start && m.stalls {
			p.contention(e, start, begin, "link busy")
		}
	} else {
		d = prof.DMACycles(path, bytes, rows)
	}
	if src == asm.GM || dst == asm.GM {
		r := c.rank
		if e.remote >= 0 {
			r = m.ranks[e.remote]
		}
		if r.l2 != nil {
			return max(p.gmPorts(e, r, gmArg(e), start, bytes, d, m.stalls), 1)
		}
		ps := max(start, r.portBusy)
		r.portBusy = ps + ceilDiv(bytes, prof.GMBW)
		d = max(d+p.hbmReadLatency(src), r.portBusy-start)
		if ps > start && m.stalls {
			p.contention(e, start, ps, "GM port busy")
		}
	}
	return max(d, 1)
}

// hbmReadLatency is what a transfer from src pays beyond its dma.* time on
// a rank without an L2 (l2.size=0): a GM read misses with every byte, so it
// pays l2.miss_latency in full, as a read that misses the L2 does in l2Book
// (the dma.* latencies are L2 hits, docs/profile.md "L2"). Without it a
// cache made every cold read slower than no cache at all (TestTrendComm).
// Writes complete as they do with the L2: they pay no read latency.
func (p *pipeState) hbmReadLatency(src asm.Space) int64 {
	if src != asm.GM {
		return 0
	}
	return p.m.prof.L2.MissLatency
}

// gmPorts books a GM transfer of e on rank r's memory system with an L2 and
// returns its duration d, stretched when the die's L2 port or HBM port is
// behind. Every byte goes through the L2 port at l2.bw. A read's missing
// lines also take the HBM port at gm.bw and the transfer waits for them; a
// write allocates its lines in L2 and books their eventual write-back on the
// HBM port without waiting for it (write-back: the store completes in L2).
// report emits the waits as contention stalls, as dmaCost does for the
// transfers it costs (the memoised local path never has). gi is e's GM
// operand (gmArg).
func (p *pipeState) gmPorts(e *entry, r *rankState, gi int, start, bytes, d int64, report bool) int64 {
	if gi < 0 {
		return d
	}
	var l l2Rect
	l.set(e, gi)
	return p.l2Book(e, r, &l, e.args[gi].Off, start, bytes, d, report)
}

// l2Rect is a GM operand's L2 rectangle (gmRect) but its offset: the
// tensor, the pitch, the rows and their bytes, and whether the transfer
// writes.
type l2Rect struct {
	t                    *asm.TensorInfo
	pitch, rows, rowByte int64
	write                bool
}

// set fills l from e's GM operand gi.
func (l *l2Rect) set(e *entry, gi int) {
	a := &e.args[gi]
	_, l.pitch, l.rows, l.rowByte = gmRect(a, int64(e.winR[gi]), int64(e.winC[gi]))
	l.t, l.write = a.GM, e.access[gi]&asm.AccWrite != 0
}

// gmPortsMemo is gmPorts for the memoised DMA path (cost), which keeps the
// operand's rectangle in the op's plan (opPlan.l2): of the slot it reads
// only the operand's tensor and offset, where gmPorts reads its window (a
// line of the slot of its own), its access and the tensor's layout and
// shape, cache misses on the 8-rank run, where the L2's bookkeeping weighs
// three times its share of instructions in a CPU profile (issue 22, round
// 20). The rectangle is what every instance of the op shares, as the cost
// memo is (access and window are static on this path: cost takes it only
// without #init and variable shapes); a different tensor refills it.
func (p *pipeState) gmPortsMemo(e *entry, r *rankState, pl *opPlan, start, d int64) int64 {
	mm := &pl.memo[0]
	gi := int(mm.gmArg)
	if gi < 0 {
		return d
	}
	a := &e.args[gi]
	if a.GM != pl.l2.t || p.m.l2Fresh {
		pl.l2.set(e, gi)
	}
	return p.l2Book(e, r, &pl.l2, a.Off, start, mm.bytes, d, false)
}

// l2Book is gmPorts for rectangle l at byte off.
func (p *pipeState) l2Book(e *entry, r *rankState, l *l2Rect, off, start, bytes, d int64, report bool) int64 {
	m := p.m
	prof := m.prof
	write := l.write
	hit := r.l2.access(l.t, off, l.pitch, l.rows, l.rowByte)
	ls := max(start, r.l2Busy)
	r.l2Busy = ls + ceilDiv(bytes, prof.L2.BW)
	d = max(d, r.l2Busy-start)
	if ls > start && report {
		p.contention(e, start, ls, "L2 port busy")
	}
	miss := max(bytes-hit, 0)
	if write {
		miss = bytes
	}
	if !write && r.l2.pending > start {
		// Lines another read is still fetching: this one waits for them
		// (a hit under a miss), so readers of a shared tile all see its fill.
		d = max(d, r.l2.pending-start)
	}
	if miss > 0 {
		hs := max(start, r.portBusy)
		r.portBusy = hs + ceilDiv(miss, prof.GMBW)
		if !write {
			// A miss waits for HBM: perf-sim's extra miss latency, for the
			// share of the read that missed.
			d = max(d+prof.L2.MissLatency*miss/bytes, r.portBusy-start)
			if hs > start && report {
				p.contention(e, start, hs, "GM port busy")
			}
			r.l2.stamp(start + d)
		}
	}
	return d
}

// gmArg is the index of e's first GM operand, -1 for none. An op's operand
// kinds and tensors are its own (resolveArg takes them from the op), so the
// memoised DMA path keeps the index in the op's cost memo: the scan read the
// operands before it, a line of the slot's operand array that a tload (tile
// first) otherwise leaves cold.
func gmArg(e *entry) int {
	for i := range e.args {
		if e.args[i].Kind == asm.ArgGM && e.args[i].GM != nil {
			return i
		}
	}
	return -1
}

func ceilDiv(bytes int64, bw float64) int64 {
	if bytes <= 0 || !(bw > 0) {
		return 0
	}
	f := float64(bytes) / bw
	n := int64(f)
	if float64(n) < f {
		n++
	}
	return n
}

// vecShape picks the tile that sizes a vector op (the largest tile operand;
// for conversions the wider dtype) and the dtype to cost it with.
func (c *core) vecShape(e *entry) (*asm.TileInfo, asm.DType) {
	var best *asm.TileInfo
	dt := asm.DTInvalid
	for i := range e.args {
		t := e.args[i].Tile
		if e.args[i].Kind != asm.ArgTile || t == nil {
			continue
		}
		if best == nil || t.VRows*t.VCols > best.VRows*best.VCols {
			best = t
		}
		if dt == asm.DTInvalid || t.DType.Size() > dt.Size() {
			dt = t.DType
		}
	}
	if best != nil && e.xop != nil && e.xop.Info != nil && e.xop.Info.Op != asm.OpTcvt {
		dt = best.DType
	}
	return best, dt
}
