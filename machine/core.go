package machine

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/memory"
	"github.com/ptoasm/ptoasm/pipes"
)

// scalarState says what a core's scalar unit is doing.
type scalarState uint8

const (
	scIdle      scalarState = iota // no kernel
	scRunning                      // runnable (a wake-up is scheduled or it is running)
	scQueueFull                    // waiting for a slot in waitPipe's queue
	scDrain                        // pipe_barrier ALL: waiting for every pipe to drain
	scFlag                         // wait_flag with dst S
	scCross                        // ffts_wait on crossID
	scSyncAll                      // arrived at syncall, waiting for the others
	scSignal                       // twait spinning
	scAsync                        // wait_async
	scEnd                          // kernel body done, waiting for the pipes to drain
	scDone                         // finished
)

// core is one AIC, AIV or unified core of one rank.
type core struct {
	// forceWait says the scalar waits at a TTEST a TestForcer forced,
	// and unforced that the run would deadlock there, so it fails.
	forceWait, unforced bool
	// The scalar's and the pipes' hot fields come first, packed into a few
	// cache lines: with 24 or more cores interleaved, a core's state is
	// mostly out of L1 by the time its next event comes.
	m *Machine
	// scalar: the kernel's flat code, the next instruction, the active loops
	code  []inst
	pc    int
	micro []micro
	mi    int
	t     int64 // scalar local time; may run ahead of Machine.now
	// ticks counts the scalar steps tick charged (each Machine.scalarOp
	// cycles): kept beside t, where tick writes anyway, and added to
	// scalarBusy and scalarOps when they are reported (scalarStats).
	ticks int64
	state scalarState
	kind  asm.CoreKind
	// iterMoved says iter changed since the scalar last logged it to the
	// observers that keep its log (noteIter), iterLogs counts the entries
	// logged; in the padding before gen.
	iterMoved bool
	iterLogs  uint8
	gen       uint32 // which kernel start this is, machine-wide (entry.argsGen)
	// waitPipe and flags follow state: a pipe's wake-up reads the three
	// (pipeChanged, the flag ops), and on 8 ranks each line it touches is a
	// cache miss (issue 22, round 12).
	waitPipe *pipeState
	flags    pipes.FlagBits
	pipes    [asm.NumPipes]*pipeState // after flags: fireFlag kicks the pipe a flag releases
	env      asm.Env
	iter     []int64
	plan     []opPlan // issue plan of each kernel op, by COp.ID
	order    int      // global agent order: (rank, core)
	stall0   int64    // when the current stall began
	waitOp   *asm.COp
	// units holds the L0C unit flags (unitflag.go), by the acc tile's offset.
	units map[int64]*unitHold
	// stats
	scalarBusy int64
	scalarOps  int64
	// issued numbers the ops the scalar has issued, a composite and each of
	// its steps included (counted only while observers listen):
	// Event.Issue and Event.Issued.
	issued int64
	wake   waker

	rank *rankState
	idx  int
	name string
	// vid and vname name the block the core runs to observers (Event.Agent,
	// Access.Core, Peers): the core itself (idx, name) for a launch that
	// fits and for the first wave of one that does not, a virtual core per
	// block after it (Machine.CoreName). So the hazard detector sees each
	// block as agents of its own, whichever physical core ran it.
	vid    int
	vname  string
	kernel *asm.KernelInfo
	strm   *stream
	bufs   [asm.NumSpaces]*memory.Buffer
	plist  []*pipeState // the core's pipes in pipe order
	cross  pipes.CrossCounters

	loops    []loopState
	crossID  int
	flagWait Flag
	// twait
	sig     sigWait
	sigRank int
	syncGen int64
	// syncDrained: the syncall being issued has drained the pipes and waits
	// for the clock to reach its arrival (core.syncAll).
	syncDrained bool
	// copies: the async transfers this core issued that no wait_async has
	// covered yet, in issue order (waitAsync drops those a wait covered).
	// asyncDone is the completion the stalled wait_async waits for.
	copies    []asyncCopy
	asyncDone int64

	scratch *ExecScratch
	// remote_visibility = dsb: completed remote writes not yet visible, and
	// the regions of the write being executed.
	visPending []pendingStore
	visNew     []pendingStore

	// fifo progress by tensor index
	fifoPush []int64
	fifoPop  []int64
	fifoDir  []int8
	// bind holds the tile bindings tassign, tsubview and treshape made, by
	// TileInfo.Index (sem_view.go); a block starts with none.
	bind [][]int64
	// fifoCur is, by tensor index, the slot index a talloc or tpop.slot
	// made current (what `@F[i, j]` names in a tload or tstore), -1 for none.
	fifoCur []int64

	ran, halted bool // halted: stopped at a fault while other cores go on (Machine.halt)
	// charged says the core's own state is taken out of the memory budget.
	charged bool
	// slot is the wave slot the core belongs to while its stream has blocks
	// left to dispatch (blocks beyond cores); nil otherwise.
	slot *waveSlot

	// strAt is, during a stretch of this core (stretch.go), each agent's
	// wake-up by pipe (the scalar's at PipeS), noWake for none. (An agent
	// whose next wake-up must run in the global order is waker.held.)
	strAt strTimes

	// flagAt is when each flag was set, for the set→wait hand-off latency.
	// It is large and touched only by flag hand-offs, so it comes last, away
	// from the scalar's hot fields.
	flagAt [asm.NumPipes][asm.NumPipes][asm.NumEventIDs]int64
}

func (m *Machine) coreAt(r, idx int, kind asm.CoreKind) *core {
	rs := m.ranks[r]
	c := rs.cores[idx]
	if c == nil {
		c = &core{m: m, rank: rs, idx: idx, name: m.CoreName(r, idx), order: r*(m.nAIC+m.nAIV) + idx}
		c.vid, c.vname = idx, c.name
		c.scratch = NewExecScratch()
		c.scratch.Env = &c.env
		c.wake.hidx = -1
		c.wake.scalar = c
		rs.cores[idx] = c
	}
	c.kind = kind
	c.plist = c.plist[:0]
	for p := asm.PipeS + 1; p < asm.PipeALL; p++ {
		if !kind.HasPipe(p) {
			c.pipes[p] = nil
			continue
		}
		if c.pipes[p] == nil {
			depth := int(m.prof.QueueDepth[p])
			if depth < 1 {
				depth = 16
			}
			c.pipes[p] = &pipeState{c: c, m: m, p: p, wkey: int32(c.order*int(asm.NumPipes) + int(p)), q: *pipes.NewRing[entry](depth)}
			c.pipes[p].wake.w.hidx = -1
			c.pipes[p].wake.w.pipe = c.pipes[p]
		}
		c.plist = append(c.plist, c.pipes[p])
	}
	c.setVirtual(c.vid, c.vname) // for the pipes just made
	return c
}

// setVirtual names the block the core runs to observers (vid, vname), and
// tells its pipes (pipeEvent).
func (c *core) setVirtual(vid int, name string) {
	c.vid, c.vname = vid, name
	c.iterMoved = true // the log is per block (noteIter)
	for _, p := range c.plist {
		p.rank, p.vid = uint16(c.rank.id), int32(vid)
		if c.rank.id > math.MaxUint16 || vid > math.MaxInt32 {
			p.vid = -1 // too wide: pipeEvent asks the core
		}
	}
}

// start prepares the core to run kernel k as block b (sub is the AIV subblock).
func (c *core) start(k *asm.KernelInfo, s *stream, block, sub, blockNum int, at int64) error {
	m := c.m
	c.kernel, c.strm = k, s
	m.starts++
	c.gen = m.starts
	c.plan = m.opPlans(k)
	c.env = coreEnv(len(k.Regs), asm.Env{Rank: int64(c.rank.id), NRanks: int64(m.nranks),
		Block: int64(block), SubBlock: int64(sub), BlockNum: int64(blockNum)})
	c.code, c.pc = m.kernelCode(k), 0
	c.loops = c.loops[:0]
	c.iter, c.iterMoved = c.iter[:0], true
	c.t = at
	c.state = scRunning
	c.micro, c.mi, c.halted = c.micro[:0], 0, false
	c.flags.Reset()
	clear(c.units)
	c.cross.Reset()
	c.asyncDone = 0
	c.copies = c.copies[:0]
	c.syncDrained = false
	c.ran = true
	if !c.charged {
		// The core's state and its pipes' queues, tens of KiB: a launch of
		// 4096 ranks x 72 cores is gigabytes before any buffer.
		size := int64(unsafe.Sizeof(core{}) + unsafe.Sizeof(ExecScratch{}))
		for _, p := range c.plist {
			size += int64(unsafe.Sizeof(pipeState{})) + int64(p.q.Cap())*int64(unsafe.Sizeof(entry{}))
		}
		if err := m.mem.take(size, s.plan.span.Pos, func() string {
			return fmt.Sprintf("the state of core %s (%s, one of %d ranks x %d cores)", c.name, asm.FormatBytes(size), m.nranks, m.nAIC+m.nAIV)
		}); err != nil {
			return err
		}
		c.charged = true
	}
	n := len(m.obj.Tensors)
	c.fifoPush = resize(c.fifoPush, n)
	c.fifoPop = resize(c.fifoPop, n)
	if cap(c.fifoDir) < n {
		c.fifoDir = make([]int8, n)
	}
	c.fifoDir = c.fifoDir[:n]
	clear(c.fifoDir)
	c.bind = c.bind[:0]
	c.fifoCur = resize(c.fifoCur, n)
	for i := range c.fifoCur {
		c.fifoCur[i] = -1
	}
	for _, p := range c.plist {
		p.reset()
	}
	for _, t := range k.Tiles {
		s := t.Space
		if s == asm.SpaceInvalid || s == asm.GM || (m.opt.TimingOnly && !m.slice.hasSpace(k, s)) {
			continue
		}
		if c.bufs[s] == nil {
			size := m.prof.Mem[s]
			if size <= 0 {
				size = memory.Capacity(s)
			}
			if err := m.mem.take(size, t.Decl.Span.Pos, func() string {
				return fmt.Sprintf("the %s of %s (%s, one of %d ranks x %d cores)", s, c.name, asm.FormatBytes(size), m.nranks, m.nAIC+m.nAIV)
			}); err != nil {
				return err
			}
			c.bufs[s] = memory.NewBuffer(s, fmt.Sprintf("%s %s", c.name, s), size, 0, true)
		} else {
			// Local buffers hold nothing a new kernel may rely on.
			c.bufs[s].Poison(0, c.bufs[s].Size())
		}
	}
	return nil
}

func resize(s []int64, n int) []int64 {
	if cap(s) < n {
		return make([]int64, n)
	}
	s = s[:n]
	clear(s)
	return s
}

// fault builds a Fault for op on this core, classifying it by its message;
// the engine's own call sites use faultK with an explicit kind.
func (c *core) fault(op *asm.COp, p asm.Pipe, format string, args ...any) *Fault {
	f := c.faultK(FaultUnclassified, op, p, format, args...)
	f.Kind = classifyFault(f.Msg)
	return f
}

// faultK builds a Fault of a given kind for op on this core.
func (c *core) faultK(kind FaultKind, op *asm.COp, p asm.Pipe, format string, args ...any) *Fault {
	return &Fault{Kind: kind, Cycle: max(c.m.now, c.t), Rank: c.rank.id, Core: c.vid, CoreName: c.vname, Pipe: p, Op: op,
		Msg: fmt.Sprintf(format, args...)}
}

// scalarBudget bounds how many statements a scalar runs per wake-up, so a long
// loop without instructions still lets time (and MaxCycles) advance.
const scalarBudget = 4096

func (c *core) scalarOp() int64 { return c.m.scalarOp }

// runScalar interprets the kernel's flat code until the scalar blocks, yields
// or ends. Each instruction of the flat code is one step of the budget, as one
// statement (or one loop or block end) was for the statement-tree walk it
// replaces, so the scalar yields at the same points.
func (c *core) runScalar() {
	m := c.m
	if c.t < m.now {
		c.t = m.now
	}
	code, budget := c.code, scalarBudget+1
	// The steps of a composite op the scalar blocked in come first.
	if budget = c.micros(budget); budget == 0 || m.err != nil && budget > 1 {
		return
	}
	for budget--; budget > 0; budget-- {
		// m.err is tested on entry and after the cases that can fail (the
		// pure ones, lets, tests and jumps, cannot), when budget is left:
		// out of budget, the scalar sleeps first, as it did. pc is valid.
		in := codeAt(code, c.pc)
		switch in.kind {
		case iOp:
			if !c.issuePlanned(in.op, in.plan) {
				return
			}
			c.state = scRunning
			c.pc++
			if budget = c.micros(budget); budget == 0 || m.err != nil && budget > 1 {
				return
			}
		case iFlagQ, iFlagQObs:
			// issueFlag's queued set_flag or wait_flag, once the plan has
			// met this kind of core: straight into the pipe's queue. Anything
			// else (an event id out of range, a first run) takes issueFlag.
			// Observed (iFlagQObs), the slot also keeps the iteration
			// vector, as pushFlag's does.
			pl := in.plan
			id := pl.id.eval(&c.env)
			ps := c.pipes[in.pipe]
			switch {
			case uint64(id) >= asm.NumEventIDs || pl.kind != c.kind: // the kind says ps exists (kindUnmet)
				if !c.issueFlag(in.op, pl) || m.err != nil && budget > 1 {
					return
				}
			case ps.q.Full():
				c.blockQueue(ps, in.op)
				return
			default:
				e := ps.q.PushSlot()
				e.resetHot(in.ek, in.op, c.t)
				e.flag = Flag{Src: pl.src, Dst: pl.dst, ID: int32(id)}
				if in.kind == iFlagQObs {
					c.noteIter(e, c.issued+1)
				}
				c.issued++ // flagSeq
				e.seq = c.issued
				ps.kick(e.ready)
				c.tick()
			}
			c.state = scRunning
			budget = c.next(in, budget)
		case iExecLean:
			// issuePlannedExec of an op that skips resolve (resolveLean),
			// unobserved (else iExecLeanObs), once its cost memos are filled:
			// the slot needs only its hot fields and the plan. An element of
			// a tile array out of range takes issuePlannedExec (it reports).
			pl := in.plan
			ps := c.pipes[in.pipe]
			if ps != nil && ps.q.Full() {
				// what issuePlannedExec does first
				c.blockQueue(ps, in.op)
				return
			}
			slow := ps == nil || !pl.leanReady(in.pipe)
			for k := 0; k < len(pl.tileIdx) && !slow; k++ {
				if x := &pl.tileIdx[k]; uint64(x.x.eval(&c.env)) >= x.n {
					slow = true
				}
			}
			if slow {
				if !c.issuePlannedExec(in.op, pl) || m.err != nil && budget > 1 {
					return
				}
			} else {
				e := ps.q.PushSlot()
				e.resetHot(enExec, in.op, c.t)
				e.plan = pl
				ps.kick(e.ready)
				c.tick()
			}
			c.state = scRunning
			budget = c.next(in, budget)
		case iLet:
			c.env.Regs[in.slot] = in.fx.eval(&c.env)
			c.tick()
			budget = c.next(in, budget)
		case iFor:
			s := in.stmt.(*asm.CFor)
			from, to, step := s.From.Eval(&c.env), s.To.Eval(&c.env), s.Step.Eval(&c.env)
			if s.Step.Fn == nil && !s.Step.Const && step == 0 {
				step = 1
			}
			c.tick()
			if step <= 0 {
				m.fail(c.faultK(FaultBadOperand, nil, asm.PipeS, "%s: for loop step %d is not positive", stmtPos(s.For), step))
				return
			}
			if from >= to {
				c.pc = in.jump
				continue
			}
			c.env.Regs[s.Slot] = from
			c.iter, c.iterMoved = append(c.iter, 0), true
			c.loops = append(c.loops, loopState{to: to, step: step, trips: int64(min(asm.ForTrips(from, to, step), math.MaxInt64))})
			c.pc++
		case iForNext:
			l := &c.loops[len(c.loops)-1]
			next, more := asm.ForNext(c.env.Regs[in.slot], l.to, l.step)
			c.env.Regs[in.slot] = next // after the loop too: the first value not below to
			c.tick()
			if more {
				c.pc = in.jump
				c.iter[len(c.iter)-1], c.iterMoved = c.iter[len(c.iter)-1]+1, true
				continue
			}
			c.iter, c.iterMoved = c.iter[:len(c.iter)-1], true
			c.loops = c.loops[:len(c.loops)-1]
			c.pc++
		case iWhile:
			c.tick()
			if t, ok := in.fx.tested(&c.env); !t && (ok || in.fx.eval(&c.env) == 0) {
				c.pc = in.jump
				continue
			}
			c.iter, c.iterMoved = append(c.iter, 0), true
			c.loops = append(c.loops, loopState{})
			c.pc++
		case iWhileNext:
			c.tick()
			if t, ok := in.fx.tested(&c.env); t || !ok && in.fx.eval(&c.env) != 0 {
				c.pc = in.jump
				c.iter[len(c.iter)-1], c.iterMoved = c.iter[len(c.iter)-1]+1, true
				continue
			}
			c.iter, c.iterMoved = c.iter[:len(c.iter)-1], true
			c.loops = c.loops[:len(c.loops)-1]
			c.pc++
		case iIf:
			c.tick()
			if t, ok := in.fx.tested(&c.env); t || !ok && in.fx.eval(&c.env) != 0 {
				c.pc = in.alt
			} else {
				c.pc = in.jump
			}
		case iJump:
			c.pc = in.jump
		case iBreak:
			c.tick()
			if in.slot > 0 {
				c.iter, c.iterMoved = c.iter[:len(c.iter)-1], true
				c.loops = c.loops[:len(c.loops)-1]
			}
			c.pc = in.jump
		case iHalt:
			c.endKernel()
			return
		case iExecLeanObs:
			// iExecLean observed (no plain issues): the slot also gets its iteration vector (noteIter,
			// written out: runScalar is too big for it to be inlined), its dynamic operands' values
			// (leanOperands) and issue number; issuePlannedExec before the cost memos are filled.
			pl := in.plan
			ps := c.pipes[in.pipe]
			if ps == nil || !pl.leanReady(in.pipe) {
				if !c.issuePlannedExec(in.op, pl) || m.err != nil && budget > 1 {
					return
				}
			} else {
				if ps.q.Full() {
					c.blockQueue(ps, in.op)
					return
				}
				e := ps.q.PushSlot()
				e.resetHot(enExec, in.op, c.t)
				if c.iterMoved || !m.iterLog {
					c.logIter(e, c.issued+1)
				}
				if !c.leanOperands(pl, e) && !c.resolve(in.op, pl, e) || m.err != nil && budget > 1 {
					return
				}
				e.plan = pl
				c.issued++ // pushed's, for an op with no unit flag and no plain issue
				e.seq = c.issued
				ps.kick(e.ready)
				c.tick()
			}
			c.state = scRunning
			budget = c.next(in, budget)
		case iLd:
			// issue's ld of an element of the core's own rank (scalarGM),
			// unobserved: the offset from the plan's indices, once the
			// scalar's time has met the clock. An index outside the tensor
			// takes the general issue, which reports it.
			if !c.syncTime() {
				return
			} else if off, ok := c.ldOffset(in.ld); !ok {
				if !c.issuePlanned(in.op, in.plan) || m.err != nil && budget > 1 {
					return
				}
			} else if !c.ldAt(in.op, &c.rank.gm[in.ld.t.Index], c.rank.id, off) {
				return
			}
			c.state = scRunning
			budget = c.next(in, budget)
		default:
			m.fail(c.faultK(FaultInternal, nil, asm.PipeS, "unknown statement %T", in.stmt))
			return
		}
	}
	// Out of budget: come back at the scalar's own time.
	c.sleep()
}

// Flat code: a kernel's statement tree compiled once into a list of
// instructions with jump targets, so the scalar needs no frame stack.
const (
	iBad       uint8 = iota
	iOp              // issue op
	iLet             // Regs[slot] = x
	iFor             // enter a for loop (stmt); jump: past its iForNext
	iForNext         // end of a for body: step Regs[slot]; jump: body start
	iWhile           // enter a while loop on x; jump: past its iWhileNext
	iWhileNext       // end of a while body: test x; jump: body start
	iIf              // test x: alt when true, jump when false
	iJump            // end of a then or else block: jump past the if
	iBreak           // leave the innermost loop (slot 1) or, outside one, the top-level statement (slot 0)
	iHalt            // end of the kernel body
	// iOp's common cases, chosen by kernelCode from the op's plan:
	iFlagQ    // a set_flag or wait_flag into pipe's queue (entry kind ek)
	iExecLean // an op whose plan is lean (planLean), into pipe's queue
	// the same while observers listen (inst.fast):
	iFlagQObs
	iExecLeanObs
	iLd // an ld of the core's own rank, unobserved (ld)
)

type inst struct {
	kind uint8
	slot int
	jump int
	alt  int // iIf: where a true test goes
	x    asm.CExpr
	fx   fexpr // x, precomputed (kernelCode)
	op   *asm.COp
	plan *opPlan   // iOp: op's plan (nil when it has none)
	pipe asm.Pipe  // iFlagQ, iExecLean (and their Obs kinds): the queue
	ek   entryKind // iFlagQ, iFlagQObs: set or wait
	ld   *ldPlan   // iLd
	stmt asm.CStmt // the statement it starts (nil for block ends): positions, the debugger's next statement
	// skip is how many jumps and constant tests (if MUTANT != h4) follow
	// the instruction where it falls through, skipTo where they lead,
	// skipTicks how many of them are tests (a step each) and skipCycles
	// their cycles: the issues and lets that end in pc++ take them in one
	// go (next). 0 when none follow.
	skip, skipTicks uint8
	skipTo          int
	skipCycles      int64
}

// maxSkip bounds a run of jumps and constant tests taken at once.
const maxSkip = 16

// next moves the scalar past instruction in, which falls through, and
// past the jumps and constant tests after it when the budget has room for
// them all, as the loop would have run them one by one: each takes a
// step of the budget, a test also a tick. Otherwise the loop runs them.
// It returns the budget left.
func (c *core) next(in *inst, budget int) int {
	if in.skip != 0 && budget > int(in.skip) {
		c.pc = in.skipTo
		c.t += in.skipCycles
		c.ticks += int64(in.skipTicks)
		return budget - int(in.skip)
	}
	c.pc++
	return budget
}

// constTest says whether in is an if whose condition is a constant, and
// its value.
func (in *inst) constTest() (v, ok bool) {
	if in.kind != iIf {
		return false, false
	}
	if in.x.Fn == nil {
		return in.x.Val != 0, true
	}
	if n := in.fx.node; in.fx.slot < 0 && n != nil && n.op == fnConst {
		return n.val != 0, true
	}
	return false, false
}

// skips fills each instruction's skip fields (next): the jumps and
// constant tests from its fall-through on, scalarOp cycles a test.
func skips(code []inst, scalarOp int64) {
	for i := range code {
		in := &code[i]
		j := i + 1
		for in.skip < maxSkip && j < len(code) {
			p := &code[j]
			if p.kind == iJump {
				j = p.jump
			} else if v, ok := p.constTest(); ok {
				in.skipTicks++
				if j = p.jump; v {
					j = p.alt
				}
			} else {
				break
			}
			in.skip++
		}
		in.skipTo = j
		in.skipCycles = int64(in.skipTicks) * scalarOp
	}
}

// codeAt is &code[pc] without the bounds check: compileBody's jump targets
// are all inside the code, which ends in iHalt, so runScalar's pc is always
// valid (the check was two of the dispatch's 17 instructions).
func codeAt(code []inst, pc int) *inst {
	return (*inst)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(code)), uintptr(pc)*unsafe.Sizeof(inst{})))
}

// loopState is an active for loop's limit and step, evaluated on entry,
// and its trip count (0 for a while loop), for Progress.
type loopState struct{ to, step, trips int64 }

// compileBody compiles a kernel body; the last instruction is iHalt.
func compileBody(body []asm.CStmt) []inst {
	var code []inst
	// breaks collects the iBreak instructions to patch with the exit of the
	// innermost loop (inLoop) or, outside any loop, of the top-level statement.
	var emit func(body []asm.CStmt, breaks *[]int, inLoop, top bool)
	emit = func(body []asm.CStmt, breaks *[]int, inLoop, top bool) {
		for _, st := range body {
			var own []int
			if top {
				breaks = &own
			}
			switch s := st.(type) {
			case *asm.COp:
				code = append(code, inst{kind: iOp, op: s, stmt: s})
			case *asm.CLet:
				code = append(code, inst{kind: iLet, slot: s.Slot, x: s.X, stmt: s})
			case *asm.CFor:
				at := len(code)
				code = append(code, inst{kind: iFor, slot: s.Slot, stmt: s})
				var bs []int
				emit(s.Body, &bs, true, false)
				code = append(code, inst{kind: iForNext, slot: s.Slot, jump: at + 1})
				code[at].jump = len(code)
				patch(code, bs, len(code))
			case *asm.CWhile:
				at := len(code)
				code = append(code, inst{kind: iWhile, x: s.Cond, stmt: s})
				var bs []int
				emit(s.Body, &bs, true, false)
				code = append(code, inst{kind: iWhileNext, x: s.Cond, jump: at + 1})
				code[at].jump = len(code)
				patch(code, bs, len(code))
			case *asm.CIf:
				// An empty branch goes straight past the if; a non-empty one
				// ends in a block end (one budget step, as its frame's end was).
				at := len(code)
				code = append(code, inst{kind: iIf, x: s.Cond, stmt: s})
				thenEnd, elseAt := -1, -1
				if len(s.Then) > 0 {
					code[at].alt = len(code)
					emit(s.Then, breaks, inLoop, false)
					thenEnd = len(code)
					code = append(code, inst{kind: iJump})
				}
				if len(s.Else) > 0 {
					elseAt = len(code)
					emit(s.Else, breaks, inLoop, false)
					code = append(code, inst{kind: iJump, jump: len(code) + 1})
				}
				end := len(code)
				if thenEnd >= 0 {
					code[thenEnd].jump = end
				} else {
					code[at].alt = end
				}
				code[at].jump = end
				if elseAt >= 0 {
					code[at].jump = elseAt
				}
			case *asm.CBreak:
				slot := 0
				if inLoop {
					slot = 1
				}
				*breaks = append(*breaks, len(code))
				code = append(code, inst{kind: iBreak, slot: slot, stmt: s})
			default:
				code = append(code, inst{kind: iBad, stmt: st})
			}
			if top {
				patch(code, own, len(code))
			}
		}
	}
	emit(body, nil, false, true)
	// The end of the body is one step (its frame's end), then the halt.
	code = append(code, inst{kind: iJump, jump: len(code) + 1}, inst{kind: iHalt})
	return code
}

func patch(code []inst, at []int, to int) {
	for _, i := range at {
		code[i].jump = to
	}
}

// kernelCode compiles kernel k once per machine.
func (m *Machine) kernelCode(k *asm.KernelInfo) []inst {
	if code, ok := m.codes[k]; ok {
		return code
	}
	code := compileBody(k.Body)
	// The plans are per kernel as the code is: link them in once.
	plans := m.opPlans(k)
	sc := newExprScope(m.obj, k)
	for i := range code {
		code[i].fx = compileExpr(code[i].x, len(k.Regs), sc)
		if op := code[i].op; op != nil && op.ID >= 0 && op.ID < len(plans) && plans[op.ID].op == op {
			code[i].plan = &plans[op.ID]
			code[i].fast(m)
		}
	}
	skips(code, m.scalarOp)
	if m.codes == nil {
		m.codes = make(map[*asm.KernelInfo][]inst)
	}
	m.codes[k] = code
	return code
}

// fast turns an iOp into iFlagQ or iExecLean when its plan allows: the
// issues the scalar makes most, which its loop then makes itself. While
// observers listen they are iFlagQObs and iExecLeanObs, which also keep
// what the op's events need (the iteration vector, the issue number, a
// lean op's dynamic operands); an observer that wants every op's EvIssue
// (IssueFilter) keeps the general issue, which reports it.
func (in *inst) fast(m *Machine) {
	pl, op := in.plan, in.op
	if in.kind != iOp || op.Unit != asm.UnitNone || m.plainIssues {
		return // a unit flag is numbered at issue (pushed)
	}
	flagQ, lean := iFlagQ, iExecLean
	if m.emitting {
		flagQ, lean = iFlagQObs, iExecLeanObs
	}
	switch {
	case pl.class == ocFlag && pl.set && pl.src > asm.PipeS && pl.src < asm.PipeALL:
		in.kind, in.pipe, in.ek = flagQ, pl.src, enSetFlag
	case pl.class == ocFlag && !pl.set && pl.dst > asm.PipeS && pl.dst < asm.PipeALL:
		in.kind, in.pipe, in.ek = flagQ, pl.dst, enWaitFlag
	case pl.class == ocExec && pl.lean && op.Pipe > asm.PipeS && op.Pipe < asm.PipeALL:
		in.kind, in.pipe = lean, op.Pipe
	case pl.class == ocOther && op.Info.Op == asm.OpLd && !m.emitting:
		if in.ld = newLdPlan(op, pl); in.ld != nil {
			in.kind = iLd
		}
	}
}

// ldPlan is what iLd needs of an ld whose element is on the issuing core's
// own rank (no rank=, not a FIFO) with an index per dimension, in a tensor
// addressed row-major (ND, or one dimension): the signal polls of
// allgather_gemm's compute loop (63 k on the quarter run), which the
// general issue took through issue, scalarGM, gmElem and gmWindowX.
type ldPlan struct {
	t   *asm.TensorInfo
	idx []fexpr // the plan's (opPlan.gmIdx)
}

func newLdPlan(op *asm.COp, pl *opPlan) *ldPlan {
	if len(op.Args) != 2 || len(pl.gmIdx) != 2 {
		return nil
	}
	a := &op.Args[1]
	if a.Kind != asm.ArgGM || a.GM == nil || a.HasRank || a.GM.Class == asm.TensorFIFO {
		return nil
	}
	t := a.GM
	n := len(t.Shape)
	if n == 0 || len(a.Idx) != n || len(pl.gmIdx[1]) != n || n >= 2 && t.Layout != asm.LayoutND {
		return nil
	}
	return &ldPlan{t: t, idx: pl.gmIdx[1]}
}

// ldOffset is GMOffset of the ld's element, false when an index is outside
// the tensor. Inside it, the one-element window's far corner is too, which
// gmWindowX checks besides.
func (c *core) ldOffset(ld *ldPlan) (int64, bool) {
	var lin int64
	for j := range ld.idx {
		v, d := ld.idx[j].eval(&c.env), ld.t.Shape[j]
		if v < 0 || v >= d {
			return 0, false
		}
		lin = lin*d + v
	}
	return lin * int64(ld.t.DType.Size()), true
}

// nextStmt is the statement the scalar runs next (nil at a block end or the
// end of the kernel).
func (c *core) nextStmt() asm.CStmt {
	if c.pc < len(c.code) {
		return c.code[c.pc].stmt
	}
	return nil
}

func stmtPos(n asm.Node) asm.Pos {
	if n == nil {
		return asm.Pos{}
	}
	return n.NodeSpan().Pos
}

// tick charges one scalar instruction: a statement the scalar executes
// itself (let, a loop's step and test, if, a wait or set on S) or the issue
// of an op into a pipe's queue. Each counts as a simulated instruction, as it
// would in the kernel's scalar code.
func (c *core) tick() {
	c.t += c.scalarOp()
	c.ticks++
}

// scalarStats is the scalar's busy cycles and instructions: tick's steps
// and the other charges.
func (c *core) scalarStats() (busy, ops int64) {
	return c.scalarBusy + c.ticks*c.scalarOp(), c.scalarOps + c.ticks
}

// sleep schedules the scalar to continue at its own time.
func (c *core) sleep() {
	c.m.schedule(&c.wake, c.t, c.order*int(asm.NumPipes)+int(asm.PipeS))
}

// syncTime makes the scalar's local time and the global clock agree before it
// touches shared state. It returns false when the scalar must sleep first.
func (c *core) syncTime() bool {
	if c.t > c.m.now || c.m.str != nil {
		if c.m.str != nil {
			return c.strPark() // see stretch.go
		}
		c.sleep()
		return false
	}
	c.t = c.m.now
	return true
}

// endKernel waits for every pipe to drain, then finishes the core.
func (c *core) endKernel() {
	if c.state == scDone {
		return // a halted core woken again by something it waited for (Machine.halt)
	}
	if c.m.str != nil {
		c.strPark() // finishing reaches the machine (coreDone)
		return
	}
	if !c.drained() {
		c.state = scEnd
		return
	}
	c.finish()
}

func (c *core) drained() bool {
	for _, p := range c.plist {
		if !p.idle() {
			return false
		}
	}
	return true
}

func (c *core) finish() {
	m := c.m
	end := max(c.t, m.now)
	for _, p := range c.plist {
		end = max(end, p.lastEnd)
	}
	c.t = end
	c.state = scDone
	if c.halted {
		// Stopped at a fault: its pipes have run what it issued, and
		// nothing else of the kernel happens (no kernel end, no leftover
		// flags to report).
		m.coreDone(c, end)
		return
	}
	// The runtime makes every write visible once the kernel has finished.
	c.flushRemote()
	if m.emitting {
		e := m.event(EvKernelEnd, c, asm.PipeS, nil)
		e.Cycle, e.Start, e.End = end, end, end
		c.flags.Each(func(src, dst asm.Pipe, id int) {
			for range c.flags.Count(src, dst, id) {
				e.Flags = append(e.Flags, Flag{Src: src, Dst: dst, ID: int32(id)})
			}
		})
		m.emit()
	}
	m.coreDone(c, end)
}

// pipeChanged is called whenever one of the core's pipes popped an entry or
// went idle, to wake a scalar waiting for queue space or a drain.
func (c *core) pipeChanged(p *pipeState) {
	switch c.state {
	case scQueueFull:
		if c.waitPipe == p && !p.q.Full() {
			c.endStall("queue full")
			// Runnable now: a second pop before the scalar runs must not
			// report the same stall again.
			c.state = scRunning
			c.resume()
		}
	case scDrain:
		if c.drained() {
			c.state = scRunning
			c.drainDone()
		}
	case scEnd:
		if c.drained() {
			c.finish()
		}
	}
}

// resume makes a blocked scalar runnable at the current cycle.
func (c *core) resume() {
	m := c.m
	c.t = max(c.t, m.now)
	// Woken by one of its own pipes, the scalar is usually the very next
	// event (its key is below its pipes'): events runs it straight after
	// the pipe, unless something queued for this cycle comes first
	// (runInline asks the scheduler). The cores of a rank run in lockstep,
	// so the current cycle's queue is rarely empty: a scalar due now may
	// still be next. One whose own time is ahead would have been scheduled
	// then, so it runs inline only in an otherwise empty cycle (m.ahead).
	if m.batch && m.inline == nil && (len(m.nowq) == 0 || c.t == m.now) && !c.wake.armed && m.cur != nil && m.cur.pipe != nil && m.cur.pipe.c == c {
		if m.ahead != aheadQueue || c.t == m.now {
			m.inline = c
			return
		}
	} else if m.ahead == aheadInline && m.inlineAhead(c) {
		m.inline = c
		return
	}
	c.sleep()
}

// inlineAhead says whether, under aheadInline, scalar c resumed ahead of
// the clock in a crowded cycle runs inline: as the model's rule would in an
// empty one, but not when it would trip a cycle guard at its own time,
// where the schedule checks it, so the guards stay exact.
func (m *Machine) inlineAhead(c *core) bool {
	if !m.batch || m.inline != nil || c.t == m.now || c.wake.armed || m.cur == nil || m.cur.pipe == nil || m.cur.pipe.c != c {
		return false
	}
	m.aheads++
	return c.t <= m.opt.MaxCycles && c.t-m.workEnd <= m.opt.MaxIdleCycles
}

// stallIn puts the scalar in wait state st at op. The stall starts on the
// first try only, so a wait retried on every wake-up keeps its start.
func (c *core) stallIn(st scalarState, op *asm.COp) {
	if c.state != st {
		c.beginStall(op)
	}
	c.state = st
	c.waitOp = op
}

// leave ends wait state st: a stall the scalar entered is reported with
// reason (a wait satisfied on its first try had none).
func (c *core) leave(st scalarState, reason string) {
	if c.state == st {
		c.endStall(reason)
	}
	c.state = scRunning
}

func (c *core) beginStall(op *asm.COp) {
	c.stall0 = max(c.t, c.m.now)
	c.waitOp = op
}

func (c *core) endStall(reason string) {
	// Stalls are reported only while observed: the test inlines at the
	// call sites (a blocked issue ends one on every resume).
	if c.m.stalls {
		c.reportStall(reason)
	}
}

// reportStall emits the scalar's stall that ends now, if it lasted.
func (c *core) reportStall(reason string) {
	m := c.m
	if m.now > c.stall0 {
		e := m.event(EvStall, c, asm.PipeS, c.waitOp)
		e.Start, e.End, e.Cycle = c.stall0, m.now, c.stall0
		e.Reason = reason
		m.emit()
	}
}

// drainDone finishes a pipe_barrier ALL.
// Blocked instructions are retried when the scalar resumes, so the barrier
// itself emits EvBarrier then.
func (c *core) drainDone() {
	c.endStall("pipe_barrier ALL")
	c.resume()
}

// fexpr is a register expression in a form the scalar evaluates without a
// call. The assembler compiles every expression to a tree of closures
// (asm.CExpr.Fn), one indirect call per node; the expressions a kernel's hot
// loop evaluates on every instruction (a tile-array element %s, a GM index
// %kt * BK1, a flag id) are mostly a constant or an affine form the assembler
// also records (asm.CExpr.Lin). One register times a constant plus a constant
// is Regs[slot]*mul + add here, a few inlined instructions; other affine
// forms go through one out-of-line call; anything else keeps the closure.
type fexpr struct {
	slot     int // -1: evalSlow
	mul, add int64
	// When slot is -1: the assembler's closure, else its affine form, else
	// its comparison form, else the constant add. They are out of line so
	// that fexpr, held in every flat instruction and plan operand, stays
	// small.
	fn   func(*asm.Env) int64
	lin  *asm.Affine
	cond *asm.Cond
	// node is the expression compiled from its source (fnode), taken
	// before the others.
	node *fnode
	// A comparison of a register with a constant (an if condition of a hot
	// loop: %kIter == 0) is also kept as a range test that truth and
	// evalSlow make without walking node (fnode.rangeOf): test is testIn or
	// testOut (0 for none), tslot the register.
	lo    int64
	span  uint64
	tslot int32
	test  uint8
}

const (
	testIn  uint8 = 1 + iota // 1 when uint64(Regs[tslot]-lo) <= span
	testOut                  // 1 when not
)

func (x *fexpr) eval(env *asm.Env) int64 {
	if x.slot < 0 {
		return x.evalSlow(env)
	}
	// compileExpr checked slot against the kernel's registers, which every
	// core running it has. Read through reg, without the bounds check,
	// eval costs the inliner 88 against its budget of 80: with the shipped
	// profile the hot sites inline it anyway, and the quarter run took
	// 13 M instructions fewer, but without a profile none does, and it
	// took 134 M more (round 21).
	return env.Regs[x.slot]*x.mul + x.add
}

// reg is env.Regs[s] without the bounds check, for the slots compileExpr
// made: it checked them against the kernel's registers (slotsIn,
// builtinReg, exprScope.compile), and every core running the kernel has
// them all (coreEnv). The scalar's if, while and loop-end tests read one
// (tested).
func reg(env *asm.Env, s int) int64 {
	return *(*int64)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(env.Regs)), uintptr(s)*8))
}

// tested is eval(env) != 0 by a range test, for the scalar's if, while and
// loop-end tests, when compileExpr made one (constants, a register plus or
// minus a constant, comparisons of a register with a constant); ok is
// false for the other shapes, which take eval. It inlines, eval with it.
func (x *fexpr) tested(env *asm.Env) (t, ok bool) {
	if x.test == 0 {
		return false, false
	}
	return (uint64(reg(env, int(x.tslot))-x.lo) <= x.span) != (x.test == testOut), true
}

// evalSlow is eval's other cases, out of line so that eval inlines.
//
//go:noinline
func (x *fexpr) evalSlow(env *asm.Env) int64 {
	switch {
	case x.test != 0:
		return b2i((uint64(env.Regs[x.tslot]-x.lo) <= x.span) == (x.test == testIn))
	case x.node != nil:
		return x.node.eval(env)
	case x.fn != nil:
		return x.fn(env)
	case x.lin != nil:
		return x.lin.Eval(env)
	case x.cond != nil:
		return x.cond.Eval(env)
	}
	return x.add
}

// slotsIn reports whether every slot of l is one of nregs registers or a launch
// value.
func slotsIn(l *asm.Affine, nregs int) bool {
	for i := range l.N {
		if l.Slot[i] < -asm.NumBuiltins || l.Slot[i] >= nregs {
			return false
		}
	}
	return true
}

// builtinReg is the register index where a core running a kernel with nregs
// registers keeps the launch value of Affine slot s (asm.SlotRank ...): after
// the kernel's own registers, so block_idx * M evaluates like %kt * BK.
func builtinReg(s, nregs int) int { return nregs - 1 - s }

// coreEnv is a core's environment for a kernel with nregs registers and the
// launch values of id: zeroed registers, then the launch values, where
// compiled expressions read them like registers (builtinReg).
func coreEnv(nregs int, id asm.Env) asm.Env {
	id.Regs = make([]int64, nregs+asm.NumBuiltins)
	for s := -1; s >= -asm.NumBuiltins; s-- {
		id.Regs[builtinReg(s, nregs)] = id.Builtin(s)
	}
	return id
}

// compileExpr precomputes e for a kernel with nregs registers (a core's
// registers hold the launch values after them: core.start); sc, when not
// nil, is the kernel's scope for compiling e from its source.
func compileExpr(e asm.CExpr, nregs int, sc *exprScope) fexpr {
	if e.Fn == nil {
		// Regs[0]*0 + Val: eval's inlined path; truth's test of any value
		// of Regs[0] against the whole range.
		x := fexpr{slot: 0, add: e.Val, span: math.MaxUint64, test: testIn}
		if e.Val == 0 {
			x.test = testOut
		}
		return x
	}
	if l := e.Lin; l != nil && l.N == 1 && !l.Masked && slotsIn(l, nregs) {
		s := l.Slot[0]
		if s < 0 {
			s = builtinReg(s, nregs)
		}
		return affineExpr(s, l.Mul[0], l.Add)
	}
	if sc != nil && e.Src != nil {
		if n := sc.compile(e.Src); n != nil {
			x := fexpr{slot: -1, node: n}
			x.rangeTest()
			return x
		}
	}
	if c := e.Cond; c != nil {
		ok := true
		c.Affines(func(a *asm.Affine) { ok = ok && slotsIn(a, nregs) })
		if ok {
			return fexpr{slot: -1, cond: c}
		}
	}
	l := e.Lin
	if l == nil || !slotsIn(l, nregs) {
		return fexpr{slot: -1, fn: e.Fn} // out of range: the closure's bounds check applies
	}
	if l.N == 1 && !l.Masked {
		s := l.Slot[0]
		if s < 0 {
			s = builtinReg(s, nregs)
		}
		return affineExpr(s, l.Mul[0], l.Add)
	}
	return fexpr{slot: -1, lin: l}
}

// rangeTest adds the range test of x's node when it has one.
func (x *fexpr) rangeTest() {
	if slot, lo, span, out, ok := x.node.rangeOf(); ok {
		x.tslot, x.lo, x.span, x.test = int32(slot), lo, span, testIn
		if out {
			x.test = testOut
		}
	}
}

// affineExpr is Regs[s]*mul + add, with truth's range test when mul is 1
// or -1: the value is 0 exactly when Regs[s] is -add or add (the
// arithmetic wraps alike both ways).
func affineExpr(s int, mul, add int64) fexpr {
	x := fexpr{slot: s, mul: mul, add: add}
	switch mul {
	case 1:
		x.tslot, x.lo, x.test = int32(s), -add, testOut
	case -1:
		x.tslot, x.lo, x.test = int32(s), add, testOut
	}
	return x
}
