package machine

import (
	"math"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/memory"
	"github.com/ptoasm/ptoasm/pipes"
)

type microKind uint8

const (
	mEntry     microKind = iota // push e onto pipe's queue
	mDrain                      // pipe_barrier ALL on the scalar
	mCrossWait                  // ffts_wait e.id on the scalar
	mSetS                       // set_flag e.flag from the scalar
	mWaitS                      // wait_flag e.flag on the scalar
	mIndexed                    // mgather/mscatter's scalar walk (sem_img.go)
)

// micro is one step a composite instruction (tput, tget, tpush, tpop, tnotify)
// expands into; the scalar issues them in order like ordinary instructions.
type micro struct {
	kind microKind
	pipe asm.Pipe
	e    entry
}

// addMicro appends a step, reusing the slot's slices.
func (c *core) addMicro(kind microKind, p asm.Pipe) *micro {
	if len(c.micro) < cap(c.micro) {
		c.micro = c.micro[:len(c.micro)+1]
	} else {
		c.micro = append(c.micro, micro{})
	}
	mc := &c.micro[len(c.micro)-1]
	mc.kind, mc.pipe = kind, p
	mc.e.reset(enExec, nil, 0, nil)
	return mc
}

// micros issues the steps of a composite op, if one is under way, before
// the scalar's next instruction: each takes one unit of runScalar's budget,
// as an instruction does, and the same tests (out of budget, then a fault),
// so runScalar tests for steps only where they can start (on entry and
// after the general issue) instead of before every instruction. budget is
// runScalar's before the first step; micros returns it after the last, or
// 0 when the scalar stopped (blocked, faulted, or asleep out of budget).
func (c *core) micros(budget int) int {
	if c.mi < len(c.micro) {
		return c.microSteps(budget)
	}
	return budget
}

func (c *core) microSteps(budget int) int {
	for c.mi < len(c.micro) {
		if budget--; budget <= 0 {
			c.sleep()
			return 0
		}
		if c.m.err != nil || !c.issueMicro() {
			return 0
		}
		c.state = scRunning
	}
	return budget
}

// issueMicro issues the next step; false when the scalar blocked (the step is
// retried when it resumes).
func (c *core) issueMicro() bool {
	mc := &c.micro[c.mi]
	switch mc.kind {
	case mDrain:
		if !c.drainAll(mc.e.op) {
			return false
		}
	case mCrossWait:
		if !c.crossWait(mc.e.op, int(mc.e.id)) {
			return false
		}
	case mSetS:
		if !c.scalarSetFlag(mc.e.op, mc.e.flag) {
			return false
		}
	case mWaitS:
		if !c.scalarWaitFlag(mc.e.op, mc.e.flag) {
			return false
		}
	case mIndexed:
		if !c.indexedScalar(mc) {
			return false
		}
	case mEntry:
		ps := c.pipes[mc.pipe]
		if ps == nil {
			c.m.fail(c.faultK(FaultUnsupported, mc.e.op, mc.pipe, "this %s core has no %s pipe", c.kind, mc.pipe))
			return false
		}
		if ps.q.Full() {
			c.blockQueue(ps, mc.e.op)
			return false
		}
		e := ps.q.PushSlot()
		copyEntry(e, &mc.e)
		e.ready = c.t
		c.noteIter(e, c.issued+1)
		// A composite's steps are covered by the one EvIssue of the composite,
		// but each is numbered: the scalar may have synchronised between
		// the composite's issue and this step's (tpop waits, then loads).
		if c.m.emitting {
			c.issued++
			e.seq = c.issued
			if e.kind == enFFTSSet {
				c.emitSetIssue(e, mc.pipe)
			}
		} else if e.kind == enSetFlag || e.kind == enWaitFlag {
			c.flagSeq(e)
		}
		ps.kick(e.ready)
		c.tick()
	}
	c.mi++
	if c.mi == len(c.micro) {
		c.micro, c.mi = c.micro[:0], 0
	}
	return true
}

// copyEntry copies src into the queue slot dst, keeping dst's slices and
// re-pointing a private chunk tile at dst's own copy.
func copyEntry(dst, src *entry) {
	args, spill := dst.args[:0], dst.iterSpill
	*dst = *src
	dst.iterSpill = spill
	dst.argsOf = nil // its operands are overwritten
	dst.args = append(args, src.args...)
	dst.niter = 0
	for i := range dst.args {
		if src.args[i].Tile == &src.tile {
			dst.args[i].Tile = &dst.tile
		}
	}
}

func (c *core) blockQueue(ps *pipeState, op *asm.COp) {
	c.state = scQueueFull
	c.waitPipe = ps
	c.beginStall(op)
}

// entryIter is the iteration vector an entry of the scalar's own keeps:
// only events carry it, so without observers it is not copied
// (allgather_gemm's compute loop is 7 deep, and the copy was the engine's
// most frequent cache miss on 8 ranks), nor when they keep the scalar's
// log (noteIter).
func (c *core) entryIter() []int64 {
	if m := c.m; m.emitting && !m.iterLog {
		return c.iter
	}
	return nil
}

// noteIter gives the op to be numbered n, in queue slot e, the scalar's
// iteration vector while observers listen: a copy in the slot, or, when
// they keep the scalar's log (Machine.iterLog), none, and a log entry when
// the vector moved since the last one (in allgather_gemm's compute loop,
// one issue in seven).
func (c *core) noteIter(e *entry, n int64) {
	if c.iterMoved || !c.m.iterLog { // small enough to inline
		c.logIter(e, n)
	}
}

// logIter is noteIter's work: without the log, the slot's copy; with it,
// the observers that keep it (IterLogger) are told the vector for the ops
// numbered from n on, and at every eighth entry the lowest number of an op
// still in one of the core's queues (slot e, being filled, aside): every
// op numbered below it has had its events, which pipes send before they
// pop the entry. The others say 0, nothing: the observer keeps a few more
// entries, and a log entry costs a look at every pipe's queue less.
func (c *core) logIter(e *entry, n int64) {
	if m := c.m; !m.iterLog {
		if m.emitting {
			e.copyIter(c.iter)
		}
		return
	}
	c.iterMoved = false
	low := int64(0)
	if c.iterLogs++; c.iterLogs%8 == 0 {
		low = n
		for _, p := range c.plist {
			if h := p.q.Head(); h != nil && h != e && h.seq < low {
				low = h.seq
			}
		}
	}
	a := Agent{Rank: int32(c.rank.id), Core: int32(c.vid), Pipe: asm.PipeS}
	for _, o := range c.m.iterObs {
		o.ObserveIter(a, n, low, c.iter)
	}
}

// pushed finishes an issue: report it, wake the pipe and charge the scalar.
func (c *core) pushed(ps *pipeState, e *entry) {
	if c.m.emitting {
		c.issued++
		e.seq = c.issued
		if m := c.m; m.plainIssues {
			c.emitIssue(e.op, ps.p, false)
		}
		if e.kind == enFFTSSet {
			c.emitSetIssue(e, ps.p)
		}
	} else if x := e.xop; e.kind == enExec && x != nil && x.Unit != asm.UnitNone {
		// Numbered without observers too, as flags are (flagSeq): a
		// deadlock report tells a unit wait's own hand-off from the next
		// round's by it (rootFirst).
		c.issued++
		e.seq = c.issued
	}
	ps.kick(e.ready)
	c.tick()
}

// emitIssue reports that the scalar issued op into pipe p's queue at its own
// time: everything the scalar observed so far happens before the op.
func (c *core) emitIssue(op *asm.COp, p asm.Pipe, composite bool) {
	m := c.m
	built := false
	for i, o := range m.opt.Observers {
		if m.skip[i][EvIssue] || !composite && m.compOnly[i] {
			continue
		}
		if !built {
			e := m.event(EvIssue, c, asm.PipeS, op)
			e.Target = p
			e.Cycle, e.Start, e.End = c.t, c.t, c.t
			e.Issue = c.issued
			built = true
		}
		o.Observe(&m.ev)
	}
}

// emitSetIssue reports the issue of FFTS set e into pipe p's queue, with
// its id and mode and Word WordFFTSSet, to the observers that take EvIssue
// of composites only (IssueFilter; the others have the set's EvIssue from
// pushed, as of every op, unmarked). Those cannot tell a set's place in its
// core's issue order from the set's own event, sent when the pipe reaches
// it, after later ops of other pipes may have run: the hazard detector
// pairs a kernel's k-th set of an id with the other kernel's k-th wait by
// issue order (docs/hazards.md, "Intended order across kernels").
func (c *core) emitSetIssue(se *entry, p asm.Pipe) {
	m := c.m
	built := false
	for i, o := range m.opt.Observers {
		if m.skip[i][EvIssue] || !m.compOnly[i] {
			continue
		}
		if !built {
			e := m.event(EvIssue, c, asm.PipeS, se.op)
			e.Target = p
			e.Cycle, e.Start, e.End = c.t, c.t, c.t
			e.Issue = c.issued
			e.ID, e.Mode, e.Word = se.id, se.mode, WordFFTSSet
			built = true
		}
		o.Observe(&m.ev)
	}
}

// composite reports a composite instruction once, when the scalar expanded
// it into steps (or handed it to SDMA).
func (c *core) composite(op *asm.COp, ok bool) bool {
	if ok && c.m.emitting {
		// An SDMA copy (async) carries this number; the steps, issued next
		// (issueMicro), get their own.
		c.issued++
		c.emitIssue(op, op.Pipe, true)
	}
	return ok
}

// push reserves a queue slot on pipe p for op; nil when the scalar blocked or
// faulted.
func (c *core) push(op *asm.COp, p asm.Pipe, kind entryKind) *entry {
	ps := c.pipes[p]
	if p <= asm.PipeS || p >= asm.PipeALL || ps == nil {
		c.m.fail(c.faultK(FaultUnsupported, op, p, "this %s core has no %s pipe", c.kind, p))
		return nil
	}
	if ps.q.Full() {
		c.blockQueue(ps, op)
		return nil
	}
	e := ps.q.PushSlot()
	c.resetSlot(e, kind, op)
	return e
}

// resetSlot starts queue slot e for op: its hot fields, and its iteration
// vector while observers listen (without them every slot's stays empty).
// A slot keeps its last operands (resolve overwrites them, or
// resolveLean leaves them unread).
func (c *core) resetSlot(e *entry, kind entryKind, op *asm.COp) {
	e.resetHot(kind, op, c.t)
	if c.m.emitting {
		c.noteIter(e, c.issued+1)
	}
}

// issuePlanned issues op, whose plan the flat code holds (nil for none):
// the common classes go straight to their issue.
func (c *core) issuePlanned(op *asm.COp, pl *opPlan) bool {
	if c.m.str != nil && (pl == nil || pl.class != ocExec && pl.class != ocFlag) {
		return c.strPark() // the general issue may touch anything
	}
	if pl != nil {
		switch pl.class {
		case ocExec:
			return c.issuePlannedExec(op, pl)
		case ocFlag:
			return c.issueFlag(op, pl)
		}
	}
	return c.issue(op)
}

// issuePlannedExec issues an ordinary instruction. A full queue blocks
// before any operand is decoded, so the common retry-later costs no more.
func (c *core) issuePlannedExec(op *asm.COp, pl *opPlan) bool {
	if p := op.Pipe; p > asm.PipeS && p < asm.PipeALL {
		if ps := c.pipes[p]; ps != nil {
			if ps.q.Full() {
				c.blockQueue(ps, op)
				return false
			}
			// push's checks are done: fill the slot directly.
			e := ps.q.PushSlot()
			c.resetSlot(e, enExec, op)
			if !c.resolveLean(pl, ps, e) && !c.resolve(op, pl, e) {
				return false
			}
			e.plan = pl
			c.pushed(ps, e)
			return true
		}
	}
	return c.issueExec(op, pl)
}

// issue issues one instruction. It returns false when the scalar blocked (the
// instruction is retried when it resumes) or the machine failed.
func (c *core) issue(op *asm.COp) bool {
	m := c.m
	if op.Info == nil {
		m.fail(c.faultK(FaultInternal, op, asm.PipeS, "instruction has no ISA entry"))
		return false
	}
	// The common classes skip the opcode switch.
	// pl.op confirms the plan is this op's without loading the kernel's op
	// table (one cold line less per issue).
	if id := op.ID; id >= 0 && id < len(c.plan) && c.plan[id].op == op {
		switch pl := &c.plan[id]; pl.class {
		case ocExec:
			return c.issuePlannedExec(op, pl)
		case ocFlag:
			return c.issueFlag(op, pl)
		}
	}
	switch op.Info.Op {
	case asm.OpSetFlag, asm.OpWaitFlag:
		var pl opPlan
		planFlag(op, &pl, 0, nil)
		return c.issueFlag(op, &pl)
	case asm.OpPipeBarrier:
		p := argPipe(op, 0)
		switch {
		case p == asm.PipeALL:
			return c.drainAll(op)
		case p == asm.PipeS:
			m.fail(c.faultK(FaultUnsupported, op, p, "pipe_barrier S is a hardware error: the scalar is ordered already"))
			return false
		}
		e := c.push(op, p, enBarrier)
		if e == nil {
			return false
		}
		c.pushed(c.pipes[p], e)
		return true
	case asm.OpDsb:
		if len(c.visPending) > 0 && !c.syncTime() {
			return false // publishing touches other ranks' memory
		}
		d := max(m.prof.Sync.DSB, 1)
		c.t += d
		c.scalarBusy += d
		c.flushRemote()
		return true
	case asm.OpFftsSet:
		p := argPipe(op, 0)
		id := argInt(c, op, 1)
		if id < 0 || id >= asm.NumFFTSIDs {
			m.fail(c.faultK(FaultBadEventID, op, p, "ffts id %d outside 0..%d", id, asm.NumFFTSIDs-1))
			return false
		}
		mode := int64(0)
		if a, ok := op.Attr("mode"); ok {
			mode = a.Val.Eval(&c.env)
		}
		if mode < 0 || mode > 2 {
			m.fail(c.faultK(FaultBadOperand, op, p, "ffts mode %d outside 0..2", mode))
			return false
		}
		if mode == 0 && c.strm != nil && c.strm.wave > 0 {
			m.fail(c.waveMode0(op, p))
			return false
		}
		e := c.push(op, p, enFFTSSet)
		if e == nil {
			return false
		}
		e.id, e.mode = int32(id), int32(mode)
		c.pushed(c.pipes[p], e)
		return true
	case asm.OpFftsWait:
		id := argInt(c, op, 0)
		if id < 0 || id >= asm.NumFFTSIDs {
			m.fail(c.faultK(FaultBadEventID, op, asm.PipeS, "ffts id %d outside 0..%d", id, asm.NumFFTSIDs-1))
			return false
		}
		return c.crossWait(op, int(id))
	case asm.OpSyncall:
		return c.syncAll(op)
	case asm.OpLd, asm.OpSt:
		return c.scalarGM(op)
	case asm.OpTnotify:
		return c.notify(op)
	case asm.OpTwait, asm.OpTtest:
		return c.signalWait(op)
	case asm.OpTput, asm.OpTget:
		return c.composite(op, c.expandPut(op))
	case asm.OpTpush, asm.OpTpop:
		return c.composite(op, c.expandFifo(op))
	case asm.OpTputAsync, asm.OpTgetAsync, asm.OpTprefetchAsync:
		return c.composite(op, c.async(op))
	case asm.OpWaitAsync:
		return c.waitAsync(op)
	case asm.OpTprint:
		return c.tprint(op)
	case asm.OpMgather, asm.OpMscatter:
		return c.composite(op, c.indexedGM(op))
	case asm.OpSetfmatrix, asm.OpSetImg2colPadding, asm.OpSetImg2colRpt, asm.OpSetQuantScalar, asm.OpSetQuantVector:
		return c.setRegs(op)
	case asm.OpTimg2col, asm.OpTstoreQ, asm.OpTmovQ:
		return c.issueRegs(op)
	case asm.OpTassign, asm.OpTsubview, asm.OpTreshape:
		return c.bindView(op)
	case asm.OpTalloc, asm.OpTfree, asm.OpTpushSlot, asm.OpTpopSlot:
		return c.composite(op, c.fifoSlot(op))
	case asm.OpTbroadcast, asm.OpTgatherComm, asm.OpTscatterComm, asm.OpTreduce:
		return c.composite(op, c.expandCollective(op))
	}
	// An op outside the kernel's plans (none in practice): planned afresh,
	// without the operand list (reuse needs it, so resolve skips reuse).
	var pl opPlan
	planOp(op, &pl, 0, nil)
	pl.data = c.m.dataOp(op)
	return c.issueExec(op, &pl)
}

// Op classes for issue's fast path, per kernel op (asm.COp.ID).
const (
	ocOther uint8 = iota // dispatched by opcode
	ocExec               // an ordinary instruction for its pipe's queue
	ocFlag               // set_flag / wait_flag
)

// specialOps are the instructions issue's opcode switch handles itself.
var specialOps = func() (t [asm.NumOpcodes]bool) {
	for _, o := range []asm.Opcode{
		asm.OpSetFlag, asm.OpWaitFlag, asm.OpPipeBarrier, asm.OpDsb, asm.OpFftsSet, asm.OpFftsWait,
		asm.OpSyncall, asm.OpLd, asm.OpSt, asm.OpTnotify, asm.OpTwait, asm.OpTtest, asm.OpTput, asm.OpTget,
		asm.OpTpush, asm.OpTpop, asm.OpTputAsync, asm.OpTgetAsync, asm.OpWaitAsync, asm.OpTbroadcast,
		asm.OpTgatherComm, asm.OpTscatterComm, asm.OpTreduce, asm.OpTprefetchAsync, asm.OpTprint,
		asm.OpMgather, asm.OpMscatter, asm.OpSetfmatrix, asm.OpSetImg2colPadding, asm.OpSetImg2colRpt,
		asm.OpSetQuantScalar, asm.OpSetQuantVector, asm.OpTimg2col, asm.OpTstoreQ, asm.OpTmovQ,
		asm.OpTassign, asm.OpTsubview, asm.OpTreshape, asm.OpTalloc, asm.OpTfree, asm.OpTpushSlot, asm.OpTpopSlot,
	} {
		t[o] = true
	}
	return t
}()

// opPlan is what issue decides about a kernel op once, before any core runs
// it: its class and, for ordinary instructions, the operand facts resolve
// would otherwise recompute on every dynamic instance.
type opPlan struct {
	class uint8
	op    *asm.COp // the op planned (issue's check that an ID indexes this kernel's plan)
	// ocExec: the window shape of GM operands (the first tile operand's valid
	// shape, 1×1 without one), each operand's access, attribute facts.
	rows, cols int64
	access     [maxArgs]asm.Access
	tooMany    bool
	atomic     bool
	envAttr    bool  // an attribute is a register expression: snapshot the registers
	initAttr   int   // index of the #init attribute, -1 for none
	initX      fexpr // its value, precomputed
	flops      int64
	gmWrites   uint8 // bit i: operand i is a GM window the op writes
	// static has bit i set when operand i resolves the same on every
	// instance (a plain tile, a constant, a word): a queue slot that last
	// held this op on this core keeps it (see resolve).
	static uint8
	// dyn lists the other operands in order, with what resolve needs to
	// refresh them on a reused slot, so that it reads the plan instead of
	// the op's large Arg structs.
	dyn []dynArg
	// kernel says the plan is one of its kernel's (opPlans), planned once:
	// only those have dyn and tmpl.
	kernel bool
	// gmIdx, for the other ops (ocOther), is each GM operand's index
	// expressions precomputed, by operand (gmElem).
	gmIdx [][]fexpr
	// tmpl is the operands a queue slot starts from when it last held
	// another op (operandTemplate); resolve then fills in dyn.
	tmpl []Operand
	// data says the op's data effect runs (Machine.dataOp), looked up once
	// instead of in the control slice's map at every completion.
	data bool
	// strDone says an instance's completion touches nothing outside its
	// core (no data effect, no GM write, no unit flag), so its pipe's
	// wake-up may run in a stretch (stretch.go).
	strDone bool
	// win memoises, for an op reading or writing a tile window (textract,
	// tinsert), the last few windows seen and their byte ranges (access.go):
	// an op cycles through a handful (a K loop's column windows), so
	// observed runs skip the machine-wide map's hash.
	win *winMemo
	// accT is the template of an observed op's accesses (acctmpl.go).
	accT *accTmpl
	// ocFlag: the pipes, set_flag or wait_flag, and the core kind both pipes
	// were last found on (kindUnmet until checked).
	src, dst asm.Pipe
	set      bool
	kind     asm.CoreKind
	// the event id operand, copied here so issue reads no operand of the op
	id    fexpr
	hasID bool
	// varShape says a tile operand's valid region reads registers: the
	// GM window, FLOPs and cost are the instance's (sem_view.go).
	varShape bool
	// cost memo of an ocExec op whose duration is a function of its static
	// operands, by queueEmpty (see pipeState.cost).
	memo [2]costMemo
	// dynCost says the duration depends on a register operand (a
	// tmrgsort's blocklen from a register), so it is not memoised.
	dynCost bool
	// lean says an instance may skip resolve once the cost memo is filled
	// (planLean, resolveLean).
	lean bool
	// tileIdx is, for a lean op, the element index of each tile array
	// operand (dynTile) and the array's length, which the scalar's
	// iExecLean checks.
	tileIdx []tileIndex
	// leanArgs is a copy of tmpl that observed lean instances' accesses
	// are listed from (Machine.leanArgs), and leanMemo the last few lists.
	leanArgs []Operand
	leanMemo leanMemo
	// leanID numbers the machine's lean plans, for an AccessLister's memos.
	leanID int32
	// l2 is, beside the DMA cost memo (memo[0]), the GM operand's L2
	// rectangle but its offset (gmPortsMemo). Last, and padded so that the
	// plan grows by a whole line: a kernel's plans are one array, and the
	// fields the scalar's issue reads keep the lines they had.
	l2 l2Rect
	// leanDyn is dyn as leanOperands reads it when it can (planLeanDyn),
	// in the 24 bytes that padded the plan.
	leanDyn []leanDynArg
}

// leanDynArg is a lean plan's dynamic operand affine in one register
// (fexpr.slot >= 0): its value is Regs[slot]*mul+add, and fits when
// uint64(value-lo) <= span (a tile array's element index in range, any
// other value an int32), the two tests leanOperands makes of dyn.
type leanDynArg struct {
	slot     int
	mul, add int64
	lo       int64
	span     uint64
}

// planLeanDyn is pl.leanDyn: nil unless pl is lean with at most
// maxLeanDyn dynamic operands, each affine in one register, whose tile
// arrays have from 1 to MaxInt32+1 elements (leanDynSlow handles the rest).
func planLeanDyn(pl *opPlan) []leanDynArg {
	if !pl.lean || len(pl.dyn) == 0 || len(pl.dyn) > maxLeanDyn {
		return nil
	}
	out := make([]leanDynArg, len(pl.dyn))
	for k := range pl.dyn {
		d := &pl.dyn[k]
		if d.x.slot < 0 {
			return nil
		}
		a := leanDynArg{slot: d.x.slot, mul: d.x.mul, add: d.x.add, lo: math.MinInt32, span: math.MaxUint32}
		if d.kind == dynTile {
			if n := len(d.addr); n == 0 || n-1 > math.MaxInt32 {
				return nil
			}
			a.lo, a.span = 0, uint64(len(d.addr)-1)
		}
		out[k] = a
	}
	return out
}

// tileIndex is a tile array operand's element index and element count.
type tileIndex struct {
	x fexpr
	n uint64
}

// dynArg is a non-static operand of a planned op.
type dynArg struct {
	i    int
	kind uint8   // dynTile, dynScalar or dynFull
	x    fexpr   // dynTile: the element index; dynScalar: the value
	addr []int64 // dynTile: the tile array's element offsets
	// idx is a GM window's index expressions (dynFull GM operands; nil
	// for others), precomputed as x is.
	idx []fexpr
	// gm, when not nil, places the GM window without resolveArg
	// (gmPlan.place).
	gm *gmPlan
}

// gmPlan is what placing a window of a tensor of the issuing core's own
// rank (no rank=, not a FIFO, an index per dimension) needs beyond its
// index expressions, so that resolveArg's work on an instance is the
// indices, their bounds and the offset (gmWindowX and GMOffset, with the
// tensor's facts computed once).
type gmPlan struct {
	t          *asm.TensorInfo
	nd         bool
	l          memory.Layout2D // not ND: the layout of the last two dimensions
	foot       int64           // and its footprint (GMOffset)
	last       int64           // the last dimension
	rowsAvail  int64           // ND: the rows of the tensor's [rows, last] view
	esz        int64
	rowStride  int64
	rows, cols int64 // the window (opPlan.rows, cols)
	winR, winC int32
}

// newGMPlan is a's gmPlan, nil when resolveArg must place it.
func newGMPlan(a *asm.Arg, rows, cols int64) *gmPlan {
	t := a.GM
	n := len(t.Shape)
	if t.Class == asm.TensorFIFO || a.HasRank || n < 2 || n > 8 || len(a.Idx) != n ||
		rows > math.MaxInt32 || cols > math.MaxInt32 || rows < math.MinInt32 || cols < math.MinInt32 {
		return nil
	}
	g := &gmPlan{t: t, nd: t.Layout == asm.LayoutND, last: t.Shape[n-1], esz: int64(t.DType.Size()),
		rows: rows, cols: cols, winR: int32(rows), winC: int32(cols)}
	g.rowStride = lastDim(t) * g.esz
	if g.nd {
		if g.last <= 0 {
			return nil
		}
		g.rowsAvail = t.Elems() / g.last
	} else {
		g.l = memory.GMLayout(t)
		g.foot = g.l.Footprint()
	}
	return g
}

// place fills o with d's window, as resolveArg would, and reports false
// (resolveArg then reports it) when an index or the window's far corner is
// outside the tensor.
func (c *core) place(d *dynArg, o *Operand, e *entry) bool {
	g := d.gm
	t := g.t
	n := len(d.idx)
	var outer int64 // the leading dimensions, folded
	for j := range n - 2 {
		v := d.idx[j].eval(&c.env)
		if uint64(v) >= uint64(t.Shape[j]) {
			return false
		}
		outer = outer*t.Shape[j] + v
	}
	row, col := d.idx[n-2].eval(&c.env), d.idx[n-1].eval(&c.env)
	if uint64(row) >= uint64(t.Shape[n-2]) || uint64(col) >= uint64(g.last) || col+g.cols > g.last {
		return false
	}
	var off int64
	if g.nd {
		row += outer * t.Shape[n-2]
		if row+g.rows > g.rowsAvail {
			return false
		}
		off = (row*g.last + col) * g.esz
	} else {
		if row+g.rows > t.Shape[n-2] {
			return false
		}
		off = outer*g.foot + g.l.Offset(int(row), int(col))
	}
	r := c.rank
	*o = Operand{Kind: asm.ArgGM, GM: t, Off: off, Buf: r.gm[t.Index].buf, RowStride: g.rowStride}
	e.argRank[d.i] = int32(r.id)
	e.winR[d.i], e.winC[d.i] = g.winR, g.winC
	return true
}

const (
	dynFull   uint8 = iota // resolved afresh (GM windows, anything else)
	dynTile                // an element of a tile array: its offset
	dynScalar              // a register expression: its value
)

type costMemo struct {
	ok      bool
	d       int64 // M, V: the duration
	tail    int64 // V: the vector tail
	setTail bool
	// DMA pipes: the transfer's static shape, its path, the local duration
	// (d) and the GM port occupancy.
	src, dst asm.Space
	bytes    int64
	rows     int
	path     pipes.DMAPath
	pathOK   bool
	gm       bool
	gmArg    int8 // the GM operand (gmArg), -1 for none
	port     int64
}

// kindUnmet is a flag plan's kind before it has met a core: equal to no
// core's, CoreInvalid included. issueFlag sets the kind of a core that
// has both of the flag's pipes, so a plan whose kind is the core's says
// the core's queue for it exists (runScalar's iFlagQ tests only that).
const kindUnmet asm.CoreKind = 255

// planFlag fills pl for a set_flag or wait_flag.
func planFlag(op *asm.COp, pl *opPlan, nregs int, sc *exprScope) {
	pl.class = ocFlag
	pl.src, pl.dst = argPipe(op, 0), argPipe(op, 1)
	pl.set = op.Info.Op == asm.OpSetFlag
	pl.kind = kindUnmet
	if len(op.Args) > 2 {
		pl.id, pl.hasID = compileExpr(op.Args[2].Val, nregs, sc), true
	}
}

// planOp fills pl's operand facts for op, of a kernel with nregs registers.
func planOp(op *asm.COp, pl *opPlan, nregs int, sc *exprScope) {
	pl.rows, pl.cols, pl.initAttr = 1, 1, -1
	for i := range op.Args {
		if op.Args[i].Kind == asm.ArgTile && op.Args[i].Tile != nil {
			pl.rows, pl.cols = int64(op.Args[i].Tile.VRows), int64(op.Args[i].Tile.VCols)
			break
		}
	}
	if len(op.Args) > maxArgs {
		pl.tooMany = true
		return
	}
	for i := range op.Args {
		acc := asm.AccRead
		if op.Info != nil {
			if specs := op.Info.Operands; len(specs) > 0 {
				var dt asm.DType
				if t := op.Args[i].Tile; op.Args[i].Kind == asm.ArgTile && t != nil {
					dt = t.DType
				}
				acc = specs[min(i, len(specs)-1)].AccessFor(dt)
			}
		}
		pl.access[i] = acc
		switch a := &op.Args[i]; a.Kind {
		case asm.ArgTile:
			if a.Tile != nil && !a.Tile.IsArray && !a.Tile.Variable() {
				pl.static |= 1 << i
			}
			// A valid region from registers sizes the op per instance.
			if a.Tile != nil && a.Tile.DynValid() {
				pl.varShape = true
			}
			// TDIVS in place costs differently (sameTile): an array
			// element or a rebound tile may or may not be its source.
			if a.Tile != nil && (a.Tile.IsArray || a.Tile.Variable()) && op.Info != nil && op.Info.Fold == asm.FoldDivS {
				pl.dynCost = true
			}
		case asm.ArgScalar:
			if a.Val.Fn == nil {
				pl.static |= 1 << i
			} else if op.Cost == asm.CostVMrgSort4 {
				pl.dynCost = true
			}
		case asm.ArgGM:
		default:
			pl.static |= 1 << i
		}
		// #init only ever narrows a written operand to write-only.
		if op.Args[i].Kind == asm.ArgGM && acc&asm.AccWrite != 0 {
			pl.gmWrites |= 1 << i
		}
	}
	for i := range op.Args {
		if pl.static&(1<<i) != 0 || !pl.kernel {
			continue
		}
		a := &op.Args[i]
		d := dynArg{i: i, kind: dynFull}
		switch {
		case a.Kind == asm.ArgTile && a.Tile != nil && a.Tile.Variable():
			// resolved afresh: a view (sem_view.go)
		case a.Kind == asm.ArgTile && a.Tile != nil:
			d.kind, d.x, d.addr = dynTile, compileExpr(a.TileIdx, nregs, sc), a.Tile.Addr
		case a.Kind == asm.ArgScalar:
			d.kind, d.x = dynScalar, compileExpr(a.Val, nregs, sc)
		case a.Kind == asm.ArgGM && a.GM != nil:
			d.idx = make([]fexpr, len(a.Idx))
			for j, x := range a.Idx {
				d.idx[j] = compileExpr(x, nregs, sc)
			}
			d.gm = newGMPlan(a, pl.rows, pl.cols)
		}
		pl.dyn = append(pl.dyn, d)
	}
	if pl.kernel {
		pl.tmpl = operandTemplate(op)
	}
	var args [maxArgs]Operand
	for i := range op.Args {
		args[i] = Operand{Kind: op.Args[i].Kind, Tile: op.Args[i].Tile}
	}
	// Flops reads only the tile operands' shapes, which are static.
	pl.flops = Flops(op, args[:len(op.Args)])
	for i, a := range op.Attrs {
		if a.Key == "atomic" && a.Word == "add" {
			pl.atomic = true
		}
		if a.Val.Fn != nil {
			pl.envAttr = true
		}
		if a.Key == "init" && pl.initAttr < 0 {
			pl.initAttr = i
			pl.initX = compileExpr(a.Val, nregs, sc)
		}
	}
}

// operandTemplate is op's operands as resolveArg fills them, but for what
// differs per core or per instance: a tile's buffer (the core's), a tile
// array's element, a register expression's value and GM windows, which
// resolve fills in. nil when an operand would fault (a tile without
// elements): resolveArg reports it.
func operandTemplate(op *asm.COp) []Operand {
	tmpl := make([]Operand, len(op.Args))
	for i := range op.Args {
		a, o := &op.Args[i], &tmpl[i]
		o.Kind = a.Kind
		switch a.Kind {
		case asm.ArgTile:
			if a.Tile == nil || len(a.Tile.Addr) == 0 {
				return nil
			}
			o.Tile, o.Off = a.Tile, a.Tile.Addr[0]
		case asm.ArgScalar:
			o.Int = a.Val.Val // static ones only: a register expression is dynScalar
		default:
			o.setImmediate(a)
		}
	}
	return tmpl
}

// setImmediate fills an operand that the instruction itself holds: a
// register number, a float, a word or a pipe.
func (o *Operand) setImmediate(a *asm.Arg) {
	switch a.Kind {
	case asm.ArgReg:
		o.Int = int64(a.Slot)
	case asm.ArgFloat:
		o.F = a.F
	case asm.ArgWord:
		o.Word = a.Word
	case asm.ArgPipe:
		o.Pipe = a.Pipe
	}
}

// gmOperand says an operand of op is a GM window (read or written).
func gmOperand(op *asm.COp) bool {
	for i := range op.Args {
		if op.Args[i].Kind == asm.ArgGM {
			return true
		}
	}
	return false
}

// opPlans plans every op of kernel k, once per kernel.
func (m *Machine) opPlans(k *asm.KernelInfo) []opPlan {
	if pl, ok := m.plans[k]; ok {
		return pl
	}
	pls := make([]opPlan, len(k.Ops))
	sc := newExprScope(m.obj, k)
	for i, op := range k.Ops {
		pl := &pls[i]
		pl.op = op
		switch {
		case op == nil || op.Info == nil:
		case op.Info.Op == asm.OpSetFlag || op.Info.Op == asm.OpWaitFlag:
			planFlag(op, pl, len(k.Regs), sc)
		case !specialOps[op.Info.Op]:
			pl.class = ocExec
			pl.kernel = true
			planOp(op, pl, len(k.Regs), sc)
			pl.data = m.dataOp(op)
			pl.strDone = !pl.data && pl.gmWrites == 0 && op.Unit == asm.UnitNone && op.Info.Op != asm.OpMgather && op.Info.Op != asm.OpMscatter &&
				!(m.emitting && gmOperand(op)) // observed: a GM read is ordered against other cores' writes (StretchObserver)
			pl.lean = planLean(op, pl)
			for _, d := range pl.dyn {
				if pl.lean && d.kind == dynTile {
					pl.tileIdx = append(pl.tileIdx, tileIndex{x: d.x, n: uint64(len(d.addr))})
				}
			}
			if pl.lean {
				pl.leanID, m.leanPlans = m.leanPlans, m.leanPlans+1
				pl.leanDyn = planLeanDyn(pl)
			}
		default:
			// The scalar's GM operands (ld, st, tnotify, twait: gmElem).
			for i := range op.Args {
				if a := &op.Args[i]; a.Kind == asm.ArgGM && len(a.Idx) > 0 {
					if pl.gmIdx == nil {
						pl.gmIdx = make([][]fexpr, len(op.Args))
					}
					pl.gmIdx[i] = make([]fexpr, len(a.Idx))
					for j, x := range a.Idx {
						pl.gmIdx[i][j] = compileExpr(x, len(k.Regs), sc)
					}
				}
			}
		}
	}
	if m.plans == nil {
		m.plans = make(map[*asm.KernelInfo][]opPlan)
	}
	m.plans[k] = pls
	return pls
}

// issueExec issues an ordinary instruction into its pipe's queue.
func (c *core) issueExec(op *asm.COp, pl *opPlan) bool {
	e := c.pushExec(op, pl)
	if e == nil {
		return false
	}
	c.pushed(c.pipes[op.Pipe], e)
	return true
}

// pushExec reserves op's queue entry and resolves its operands; nil when the
// scalar blocked or the machine failed. The caller finishes with pushed.
func (c *core) pushExec(op *asm.COp, pl *opPlan) *entry {
	m := c.m
	p := op.Pipe
	if p == asm.PipeInvalid || p == asm.PipeS || p == asm.PipeALL {
		m.fail(c.faultK(FaultUnsupported, op, p, "%s has no executing pipe for these operands", op.Info.Name))
		return nil
	}
	e := c.push(op, p, enExec)
	if e == nil || !c.resolve(op, pl, e) {
		return nil
	}
	e.plan = pl
	return e
}

func argPipe(op *asm.COp, i int) asm.Pipe {
	if i < len(op.Args) && op.Args[i].Kind == asm.ArgPipe {
		return op.Args[i].Pipe
	}
	return asm.PipeInvalid
}

func argInt(c *core, op *asm.COp, i int) int64 {
	if i < len(op.Args) {
		return op.Args[i].Val.Eval(&c.env)
	}
	return 0
}

// issueFlag issues a set_flag or wait_flag planned in pl.
func (c *core) issueFlag(op *asm.COp, pl *opPlan) bool {
	m := c.m
	src, dst, set := pl.src, pl.dst, pl.set
	id := int64(0) // argInt(c, op, 2), from the plan
	if pl.hasID {
		id = pl.id.eval(&c.env)
	}
	if id < 0 || id >= asm.NumEventIDs {
		m.fail(c.faultK(FaultBadEventID, op, src, "event id %d outside 0..%d (%s %s->%s)", id, asm.NumEventIDs-1, op.Info.Name, src, dst))
		return false
	}
	if pl.kind != c.kind || c.kind == asm.CoreInvalid {
		for _, p := range [2]asm.Pipe{src, dst} {
			if p == asm.PipeInvalid || p == asm.PipeALL || !c.kind.HasPipe(p) {
				m.fail(c.faultK(FaultUnsupported, op, p, "%s %s->%s: this %s core has no %s pipe", op.Info.Name, src, dst, c.kind, p))
				return false
			}
		}
		pl.kind = c.kind
	}
	f := Flag{Src: src, Dst: dst, ID: int32(id)}
	if set {
		if src == asm.PipeS {
			return c.scalarSetFlag(op, f)
		}
		return c.pushFlag(op, src, enSetFlag, f)
	}
	if dst == asm.PipeS {
		return c.scalarWaitFlag(op, f)
	}
	return c.pushFlag(op, dst, enWaitFlag, f)
}

// pushFlag queues a set_flag or wait_flag with flag f on pipe p: push,
// flagSeq and pushed in one, which look at the machine's emitting once
// instead of three times (a quarter of the scalar's issues are queued
// flags; issue 22, round 14). False when the scalar blocked or faulted.
func (c *core) pushFlag(op *asm.COp, p asm.Pipe, kind entryKind, f Flag) bool {
	ps := c.pipes[p]
	if p <= asm.PipeS || p >= asm.PipeALL || ps == nil {
		return c.push(op, p, kind) != nil // it faults
	}
	if ps.q.Full() {
		c.blockQueue(ps, op)
		return false
	}
	e := ps.q.PushSlot()
	e.resetHot(kind, op, c.t)
	e.flag = f
	// Numbered whether or not observers listen (flagSeq).
	c.issued++
	e.seq = c.issued
	if m := c.m; m.emitting {
		c.noteIter(e, e.seq)
		if m.plainIssues {
			c.emitIssue(op, p, false)
		}
	}
	ps.kick(e.ready)
	c.tick()
	return true
}

// scalarSetFlag is set_flag with source S: it fires at once, in program
// order.
func (c *core) scalarSetFlag(op *asm.COp, f Flag) bool {
	if !c.syncTime() {
		return false
	}
	var tmp entry
	// The scalar's own vector, by reference (iterVec).
	tmp.op, tmp.flag, tmp.iterSpill, tmp.niter = op, f, c.iter, -1
	c.fireFlag(c.m, &tmp, nil, c.t)
	c.tick()
	return c.m.err == nil
}

// scalarWaitFlag is wait_flag with destination S: the scalar stops until
// the flag is set (it is retried when fireFlag resumes it), then clears it.
func (c *core) scalarWaitFlag(op *asm.COp, f Flag) bool {
	m := c.m
	if !c.syncTime() {
		return false
	}
	if !c.flags.Test(f.Src, f.Dst, int(f.ID)) {
		c.stallIn(scFlag, op)
		c.flagWait = f
		return false
	}
	c.flags.Clear(f.Src, f.Dst, int(f.ID))
	c.leave(scFlag, "wait_flag")
	if m.emitting {
		e := m.event(EvFlagWait, c, asm.PipeS, op)
		e.Flag = f
		m.emit()
	}
	c.tick()
	return true
}

// flagSeq numbers a queued set_flag or wait_flag in issue order even when no
// observer listens (pushed numbers every op then): a deadlock report tells a
// wait's own set from the next round's by it (rootFirst).
func (c *core) flagSeq(e *entry) {
	if !c.m.emitting {
		c.issued++
		e.seq = c.issued
	}
}

// fireFlag sets a flag whose set_flag reached the head of pipe ps (nil for
// the scalar) at cycle at. m is c.m, passed in so that a pipe's completion
// leaves the core's first line cold.
func (c *core) fireFlag(m *Machine, e *entry, ps *pipeState, at int64) {
	f := e.flag
	double := !c.flags.Set(f.Src, f.Dst, int(f.ID))
	if m.flagTimes {
		c.flagAt[f.Src][f.Dst][f.ID] = at
	}
	if m.emitting && (double || !m.pipeFast(EvFlagSet, ps, e, at, at, f)) {
		var ev *Event
		if ps != nil {
			ev = m.pipeEvent(EvFlagSet, ps, e.op)
		} else {
			ev = m.event(EvFlagSet, c, asm.PipeS, e.op)
		}
		ev.Flag = f
		ev.Iter = e.iterVec()
		ev.Issue = e.seq
		ev.Start, ev.End, ev.Cycle = at, at, at
		if double {
			ev.Reason = "double set: the flag was still set (no wait_flag consumed the previous set)"
		}
		m.emit()
	}
	if double {
		// The flag already holds a set: the second is counted, not lost
		// (pipes.FlagBits), and the hazard detector reports the double set
		// from ordering. Nothing waits for a second set that the first has
		// not already woken.
		return
	}
	if f.Dst == asm.PipeS {
		if c.state == scFlag && c.flagWait == f {
			c.resume()
		}
		return
	}
	if ps := c.pipes[f.Dst]; ps != nil && ps.waiting {
		ps.kick(at)
	}
}

// drainAll is pipe_barrier ALL on the scalar: wait until every pipe is idle.
func (c *core) drainAll(op *asm.COp) bool {
	m := c.m
	if !c.drained() {
		c.stallIn(scDrain, op)
		return false
	}
	c.state = scRunning
	end := m.now
	for _, p := range c.plist {
		// The barrier waits for every pipe's last op to complete, its
		// pending tail included: pto-isa's pipe_barrier(PIPE_ALL) flushes
		// (charges) every pipe's tail, as pipe_barrier(PIPE_V) does V's
		// (FlushAllPendingTails, include/pto/costmodel/trace.hpp@3186c381).
		// Dropping it made an added barrier ALL faster than none.
		end = max(end, p.lastEnd+p.tail)
		p.tail = 0
	}
	c.t = max(c.t, end) + m.prof.Sync.Barrier
	if m.emitting && !m.barrierRecord(c, op) {
		e := m.event(EvBarrier, c, asm.PipeS, op)
		e.Target = asm.PipeALL
		e.Start, e.End, e.Cycle = c.t, c.t, c.t
		m.emit()
	}
	return true
}

// barrierRecord writes scalar c's pipe_barrier ALL (op) as a record
// (RecSync) into the PipeRecorder's buffer, if there is one with room and
// the numbers fit, and reports whether it did. A ring's barriers are half
// its scalar events: as Events, each emptied and filled the shared Event,
// went through Observe and was checked and copied into the batch, some 370
// instructions (docs/performance.md, lint round 24).
func (m *Machine) barrierRecord(c *core, op *asm.COp) bool {
	b := m.sink.Buf
	if b == nil {
		return false
	}
	n := len(b.Recs)
	if n == cap(b.Recs) || m.skip[0][EvBarrier] || uint64(c.vid|c.rank.id)>>16|uint64(c.issued)>>32 != 0 {
		return false
	}
	b.Recs = b.Recs[:n+1]
	r := &b.Recs[n]
	r.Op, r.Issue, r.Issued = op, 0, uint32(c.issued)
	r.Rank, r.Core, r.Pipe, r.Kind = uint16(c.rank.id), uint16(c.vid), asm.PipeS, EvBarrier
	r.Src, r.Dst, r.ID = asm.PipeALL, 0, 0
	r.NAcc, r.NIter, r.Deferred, r.Tag = 0, 0, false, RecSync
	return true
}

// resolveLean reports that an instance of pl's op needs no operands in its
// queue slot e, so resolve can be skipped: the op has no data effect, no GM
// operand and no unit flag, its duration is memoised (for every queue
// state the pipe can meet), and its tile array elements are in range (else
// resolve reports the fault). The slot keeps the operands (and argsOf) it
// last had, which nothing reads. A queue slot is out of cache by the time
// it is reused (576 cores interleave on 8 ranks), and the operands were
// most of the lines an issue wrote. While observers listen, what they
// need of the operands (their accesses) is the plan's template with the
// dynamic operands' values, which the slot keeps in a few words instead
// (leanOperands).
func (c *core) resolveLean(pl *opPlan, ps *pipeState, e *entry) bool {
	if !pl.lean {
		return false
	}
	// The memo the op will meet is not known until it begins (an M op
	// after a wait_flag always finds its queue idle), so both are filled
	// now from the plan's operands: a duration depends only on the static
	// shapes, which the template holds (tile arrays by their declaration).
	switch ps.p {
	case asm.PipeM, asm.PipeV:
		if !pl.memo[0].ok || !pl.memo[1].ok {
			e := pl.tmplEntry()
			for qi := range pl.memo {
				if !pl.memo[qi].ok {
					ps.vecMemo(&pl.memo[qi], e, qi == 1)
				}
			}
		}
	default:
		if !pl.memo[0].ok {
			ps.dmaMemo(&pl.memo[0], pl.tmplEntry())
		}
	}
	if c.m.emitting {
		return c.leanOperands(pl, e)
	}
	for k := range pl.dyn {
		if d := &pl.dyn[k]; d.kind == dynTile {
			if idx := d.x.eval(&c.env); idx < 0 || idx >= int64(len(d.addr)) {
				return false
			}
		}
	}
	return true
}

// leanReady says the cost memos resolveLean fills for an instance on
// pipe p are filled.
func (pl *opPlan) leanReady(p asm.Pipe) bool {
	return pl.memo[0].ok && (pl.memo[1].ok || p != asm.PipeM && p != asm.PipeV)
}

// leanKind says whether an entry skipped resolve while observers listen
// (entry.lean), and whether its #init attribute held at issue.
type leanKind uint8

const (
	leanNone leanKind = iota // args holds the operands (resolve)
	leanPlan                 // the plan's template and ldyn
	leanInit                 // the same, operand 0 only written (#init held: see resolve)
)

// maxLeanDyn bounds the dynamic operands a lean entry keeps (a textract's
// two tile elements and its window's row and column).
const maxLeanDyn = 4

// leanOperands keeps in e what its accesses need beyond the plan: each
// dynamic operand's value, and whether #init narrowed operand 0 to a write
// (as resolve would have). It reports false, for resolve to take over, when
// a value does not fit or a tile array element is out of range (resolve
// reports the fault).
func (c *core) leanOperands(pl *opPlan, e *entry) bool {
	if ld := pl.leanDyn; ld != nil {
		if !c.leanDynFast(ld, e) {
			return false
		}
	} else if !c.leanDynSlow(pl, e) {
		return false
	}
	e.lean = leanPlan
	if pl.initAttr >= 0 && len(pl.tmpl) > 0 && pl.access[0]&asm.AccWrite != 0 && pl.initX.eval(&c.env) != 0 {
		e.lean = leanInit
	}
	return true
}

// leanDynFast is leanDynSlow on the plan's leanDyn: one test per
// operand, on a small table (the plan's dyn is 160 bytes an operand).
// TestLeanDynFast holds the two to the same values and verdicts.
func (c *core) leanDynFast(ld []leanDynArg, e *entry) bool {
	regs := c.env.Regs
	for k := range ld {
		d := &ld[k]
		v := regs[d.slot]*d.mul + d.add
		if uint64(v-d.lo) > d.span {
			return false
		}
		e.ldyn[k&(maxLeanDyn-1)] = int32(v) // k < maxLeanDyn (planLeanDyn)
	}
	return true
}

// leanDynSlow is leanOperands' dynamic operands for a plan without
// leanDyn: each one's value into e.ldyn, or false.
func (c *core) leanDynSlow(pl *opPlan, e *entry) bool {
	if len(pl.dyn) > maxLeanDyn {
		return false
	}
	for k := range pl.dyn {
		d := &pl.dyn[k]
		v := d.x.eval(&c.env)
		switch {
		case d.kind == dynTile && (v < 0 || v >= int64(len(d.addr))):
			return false
		case v < math.MinInt32 || v > math.MaxInt32:
			return false
		}
		e.ldyn[k] = int32(v)
	}
	return true
}

// leanArgs is a lean instance's operands and their accesses, as resolve
// would have left them in args and access: the plan's template with the
// dynamic operands' values dyn, in the scratch copy *args of the template
// (only the dynamic operands' Off and Int change) and *acc. The machine
// keeps its scratch in the plan (Machine.accessesAs), an AccessLister its
// own.
func leanArgs(pl *opPlan, dyn *[maxLeanDyn]int32, kind leanKind, args *[]Operand, acc *[maxArgs]asm.Access) ([]Operand, *[maxArgs]asm.Access) {
	if *args == nil {
		*args = append([]Operand(nil), pl.tmpl...)
	}
	as := *args
	for k := range pl.dyn {
		d := &pl.dyn[k]
		switch o := &as[d.i]; d.kind {
		case dynTile:
			o.Off = d.addr[dyn[k]]
		case dynScalar:
			o.Int = int64(dyn[k])
		}
	}
	*acc = pl.access
	if kind == leanInit {
		acc[0] = asm.AccWrite
	}
	return as, acc
}

// tmplEntry is an entry holding the plan's operand template, to cost the
// op from (resolveLean).
func (pl *opPlan) tmplEntry() *entry {
	e := &entry{}
	e.kind, e.eff, e.op, e.xop, e.remote = enExec, exExecute, pl.op, pl.op, -1
	e.args, e.access, e.plan = pl.tmpl, pl.access, pl
	return e
}

// planLean says whether instances of op may skip resolve (resolveLean):
// what the pipe needs from it is in the plan.
func planLean(op *asm.COp, pl *opPlan) bool {
	if pl.data || !pl.kernel || pl.tooMany || pl.varShape || pl.dynCost || pl.tmpl == nil || pl.gmWrites != 0 ||
		pl.atomic || op.Unit != asm.UnitNone {
		return false
	}
	for i := range op.Args {
		if op.Args[i].Kind == asm.ArgGM {
			return false
		}
	}
	for k := range pl.dyn {
		if d := pl.dyn[k].kind; d != dynTile && d != dynScalar {
			return false
		}
	}
	// The DMA pipes cost an op with #init from its operands (pipeState.cost).
	return op.Pipe == asm.PipeM || op.Pipe == asm.PipeV || pl.initAttr < 0
}

// resolve decodes op's operands for this dynamic instance into e, the slot
// just pushed onto op's pipe. When they fault, the slot is taken back: the
// run goes on past a fault on the other cores (Machine.halt), and the
// faulting core's pipe must not run an op whose operands never resolved.
func (c *core) resolve(op *asm.COp, pl *opPlan, e *entry) bool {
	if c.resolveOps(op, pl, e) {
		return true
	}
	if ps := c.pipes[op.Pipe]; ps != nil && ps.q.Len() > 0 && ps.q.At(ps.q.Len()-1) == e {
		ps.q.Unpush()
	}
	return false
}

// resolveOps is resolve's decoding. GM windows are sized by the first tile
// operand (1×1 when there is none).
func (c *core) resolveOps(op *asm.COp, pl *opPlan, e *entry) bool {
	if pl.tooMany {
		c.m.fail(c.faultK(FaultBadOperand, op, op.Pipe, "too many operands"))
		return false
	}
	n := len(op.Args)
	if cap(e.args) < n {
		e.args = make([]Operand, n, max(n, 4))
		e.argsOf = nil
	}
	// A ring slot sees the same few ops over and over: when it last held
	// this op for this core, its static operands are still in place, and
	// skipping them keeps the slot's operand lines out of the cache.
	reuse := e.argsOf == op && e.argsGen == c.gen && pl.kernel
	e.args = e.args[:n]
	// The accesses are the op's own unless #init narrows them; a reused slot
	// still holds them, and leaving them keeps its third line cold.
	if !reuse || pl.initAttr >= 0 {
		e.access = pl.access
	}
	if !pl.varShape && !reuse && pl.tmpl != nil {
		// A slot that last held another op (a ring whose period is not the
		// loop's: 19 MTE1 entries per K tile on a 16-deep queue) starts
		// from the plan's operands and adds this core's buffers (one
		// operand at a time: copy's typedslicecopy costs 80 instructions).
		tm := pl.tmpl[:len(e.args)]
		for i := range e.args {
			o := &e.args[i]
			if *o = tm[i]; o.Kind == asm.ArgTile && o.Tile.Space < asm.NumSpaces {
				o.Buf = c.bufs[o.Tile.Space]
			}
		}
		reuse = true
	}
	if pl.varShape {
		if !c.resolveVar(op, e) {
			e.argsOf = nil
			return false
		}
	} else if reuse {
		// Only the element of a tile array or the value of a register
		// expression changes between instances; the rest is resolved afresh
		// (and so is an out-of-range element, to report it).
		for k := range pl.dyn {
			d := &pl.dyn[k]
			o := &e.args[d.i]
			switch d.kind {
			case dynTile:
				if idx := d.x.eval(&c.env); idx >= 0 && idx < int64(len(d.addr)) {
					o.Off = d.addr[idx]
					continue
				}
			case dynScalar:
				o.Int = d.x.eval(&c.env)
				continue
			default:
				if d.gm != nil && c.place(d, o, e) {
					continue
				}
			}
			if !c.resolveArg(op, &op.Args[d.i], o, e, d.i, pl.rows, pl.cols, d.idx) {
				e.argsOf = nil
				return false
			}
		}
	} else {
		for i := range op.Args {
			if !c.resolveArg(op, &op.Args[i], &e.args[i], e, i, pl.rows, pl.cols, nil) {
				e.argsOf = nil
				return false
			}
		}
	}
	e.argsOf, e.argsGen = op, c.gen
	e.atomic = pl.atomic
	// Only a data effect reads the registers at completion.
	if pl.envAttr && pl.data {
		e.hasEnv = true
		regs := append(e.env.Regs[:0], c.env.Regs...)
		e.env = c.env
		e.env.Regs = regs
	}
	// tmatmul.acc with a true #init starts from zero: it only writes its
	// accumulator, so the detector must not see a read of it.
	if pl.initAttr >= 0 && n > 0 && e.access[0]&asm.AccWrite != 0 && pl.initX.eval(&c.env) != 0 {
		e.access[0] = asm.AccWrite
	}
	return true
}

// resolveArg fills one operand; GM windows are bounds-checked for rows×cols.
// idx, when not nil, is the GM operand's index expressions precomputed
// (dynArg.idx).
func (c *core) resolveArg(op *asm.COp, a *asm.Arg, o *Operand, e *entry, i int, rows, cols int64, idx []fexpr) bool {
	m := c.m
	*o = Operand{Kind: a.Kind}
	switch a.Kind {
	case asm.ArgTile:
		t := a.Tile
		if t == nil {
			m.fail(c.faultK(FaultBadOperand, op, op.Pipe, "operand %d has no tile", i))
			return false
		}
		idx := int64(0)
		if t.IsArray {
			idx = a.TileIdx.Eval(&c.env)
		}
		if idx < 0 || idx >= int64(len(t.Addr)) {
			m.fail(c.faultK(FaultOutOfBounds, op, op.Pipe, "tile index %%%s[%d] outside 0..%d", t.Name, idx, len(t.Addr)-1))
			return false
		}
		o.Tile, o.Off = t, t.Addr[idx]
		if t.Variable() {
			v, addr, ok := c.tileView(op, a)
			if !ok {
				return false
			}
			o.Tile, o.Off = v, addr
		}
		if t.Space < asm.NumSpaces {
			o.Buf = c.bufs[t.Space]
		}
	case asm.ArgGM:
		if a.GM != nil && a.GM.Class == asm.TensorFIFO {
			return c.resolveSlot(op, a, o, e, i, rows, cols)
		}
		r, ok := c.gmRank(op, a)
		if !ok {
			return false
		}
		e.argRank[i] = int32(r)
		if r != c.rank.id {
			e.remote = int16(r)
		}
		off, ok := c.gmWindowX(op, a, r, rows, cols, 0, 0, idx)
		if !ok {
			return false
		}
		t := a.GM
		o.GM, o.Off = t, off
		o.Buf = m.ranks[r].gm[t.Index].buf
		o.RowStride = lastDim(t) * int64(t.DType.Size())
		e.winR[i], e.winC[i] = int32(rows), int32(cols)
	case asm.ArgScalar:
		o.Int = a.Val.Eval(&c.env)
	default:
		o.setImmediate(a)
	}
	return true
}

func lastDim(t *asm.TensorInfo) int64 {
	if len(t.Shape) == 0 {
		return 1
	}
	return t.Shape[len(t.Shape)-1]
}

// gmRank is the rank a GM operand addresses.
func (c *core) gmRank(op *asm.COp, a *asm.Arg) (int, bool) {
	m := c.m
	r := c.rank.id
	if a.HasRank {
		v := a.Rank.Eval(&c.env)
		if v < 0 || v >= int64(m.nranks) {
			m.fail(c.faultK(FaultOutOfBounds, op, op.Pipe, "@%s[rank=%d]: rank outside 0..%d", a.GM.Name, v, m.nranks-1))
			return 0, false
		}
		r = int(v)
		if r != c.rank.id && a.GM.Class == asm.TensorGM {
			m.fail(c.faultK(FaultPrivateGM, op, op.Pipe, "@%s is a private gm tensor: rank %d cannot be addressed from rank %d (declare it as a window)", a.GM.Name, r, c.rank.id))
			return 0, false
		}
	}
	return r, true
}

// gmWindow computes the byte offset of a rows×cols window whose first element
// is a's index plus (dr, dc) on the last two dimensions, and checks that the
// whole window lies inside the tensor.
func (c *core) gmWindow(op *asm.COp, a *asm.Arg, r int, rows, cols, dr, dc int64) (int64, bool) {
	return c.gmWindowX(op, a, r, rows, cols, dr, dc, nil)
}

// gmWindowX is gmWindow with a's index expressions precomputed in fx (nil:
// evaluate a.Idx).
func (c *core) gmWindowX(op *asm.COp, a *asm.Arg, r int, rows, cols, dr, dc int64, fx []fexpr) (int64, bool) {
	m := c.m
	t := a.GM
	var idxBuf [8]int64
	n := len(t.Shape)
	if n > len(idxBuf) {
		m.fail(c.faultK(FaultBadOperand, op, op.Pipe, "@%s has too many dimensions", t.Name))
		return 0, false
	}
	idx := idxBuf[:n]
	for d := range idx {
		idx[d] = 0
	}
	// Missing leading indices are zero; extra ones are an assembler matter.
	k := n - len(a.Idx)
	if fx != nil {
		for j := range fx {
			if k+j >= 0 && k+j < n {
				idx[k+j] = fx[j].eval(&c.env)
			}
		}
	} else {
		for j, x := range a.Idx {
			if k+j >= 0 && k+j < n {
				idx[k+j] = x.Eval(&c.env)
			}
		}
	}
	if n >= 2 {
		idx[n-2] += dr
		idx[n-1] += dc
	} else if n == 1 {
		idx[0] += dr*cols + dc
	}
	off, err := GMOffset(t, idx)
	if err != nil {
		m.fail(c.faultK(FaultOutOfBounds, op, op.Pipe, "GM window on rank %d: %v", r, err))
		return 0, false
	}
	// The window's far corner must be inside too.
	if n >= 2 {
		lr, lc := idx[n-2]+rows, idx[n-1]+cols
		rowsAvail := t.Shape[n-2]
		if t.Layout == asm.LayoutND {
			// ND folds outer dimensions into rows: a window may run on into them.
			var outer int64
			for d := 0; d < n-2; d++ {
				outer = outer*t.Shape[d] + idx[d]
			}
			lr += outer * t.Shape[n-2]
			rowsAvail = t.Elems() / t.Shape[n-1]
		}
		if lc > t.Shape[n-1] || lr > rowsAvail {
			// Format a copy: handing idx itself to fmt would move idxBuf to the heap on every call.
			m.fail(c.faultK(FaultOutOfBounds, op, op.Pipe, "GM window [%d x %d] at @%s%v on rank %d runs past the tensor's shape %v",
				rows, cols, t.Name, append([]int64(nil), idx...), r, t.Shape))
			return 0, false
		}
	} else if n == 1 && idx[0]+rows*cols > t.Shape[0] {
		m.fail(c.faultK(FaultOutOfBounds, op, op.Pipe, "GM window of %d elements at @%s[%d] on rank %d runs past %d elements",
			rows*cols, t.Name, idx[0], r, t.Shape[0]))
		return 0, false
	}
	return off, true
}
