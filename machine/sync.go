package machine

import (
	"fmt"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/memory"
	"github.com/ptoasm/ptoasm/pipes"
)

// crossWait is ffts_wait: the whole core's scalar waits until the counter is
// positive, then decrements it.
func (c *core) crossWait(op *asm.COp, id int) bool {
	m := c.m
	if !c.syncTime() {
		return false
	}
	if !c.cross.TryDec(id) {
		c.stallIn(scCross, op)
		c.crossID = id
		return false
	}
	c.leave(scCross, "ffts_wait")
	if m.emitting {
		e := m.event(EvCrossWait, c, asm.PipeS, op)
		e.ID = int32(id)
		m.emit()
	}
	d := max(m.prof.Sync.FFTSWait, 1)
	c.t += d
	c.scalarBusy += d
	return true
}

// waveMode0 is the fault of a mode-0 ffts_set in a launch that runs in waves.
// Mode 0 counts a set from every core of the type in the launch, then raises
// the counter of every one of them; with more blocks than cores the blocks
// of a later wave have no core yet, so the release would reach whichever
// blocks hold the cores when the last set arrives (timing), and a first-wave
// block that waits for it deadlocks. CANN does not define it either: its
// block-to-block sync (SyncAll, NotifyNextBlock/WaitPreBlock) requires the
// launch's blockDim to be at most the cores that run it, or the runtime's
// multi-round scheduling hangs (machine-facts §2.3). The
// fault comes at issue, before any count moves: for a kernel with one
// mode-0 set, the same site whatever the timing.
func (c *core) waveMode0(op *asm.COp, p asm.Pipe) *Fault {
	s := c.strm
	what := "AIC"
	if c.kind == asm.CoreAIV {
		what = "AIV"
	}
	return c.faultK(FaultSync, op, p, "ffts mode 0 synchronises every %s of the launch, but blocks=%d runs in waves, %d blocks at a time per rank: "+
		"a later wave's blocks have no core until an earlier block ends, so the sync cannot take them all "+
		"(CANN requires blockDim at most the cores for cross-core sync); launch at most the cores and loop over the work, or sync within a block (mode 1 or 2)",
		what, s.plan.blocks, s.wave)
}

// bump increments core x's FFTS counter id. It counts past 15 (pipes.CrossMax):
// a run that faulted when this timing's producer got 16 sets ahead gave a
// fault or none, and stopped the core or not, as the latencies fell; the
// detector reports every set that can overflow the counter, by ordering.
func (c *core) bump(e *entry, p asm.Pipe, x *core, id int, peers *[]int32) bool {
	m := c.m
	x.cross.Inc(id)
	*peers = append(*peers, int32(x.vid))
	if x.state == scCross && x.crossID == id {
		x.t = max(x.t, m.now+m.prof.Sync.FFTSLatency)
		x.sleep()
	}
	return true
}

// aivArrivals counts, per AIV of a block and FFTS id, the mode-1 or mode-2
// sets that have not yet completed a reduction.
type aivArrivals [2][asm.NumFFTSIDs]uint32

// arrive counts a set of flag id by AIV sub and reports whether it completes
// a reduction. One fires once both AIVs have a set pending ("mode 2: once
// both AIVs have set, the AIC's wait proceeds"; mode 1 alike: CANN
// CrossCoreSetFlag) and takes one set of each, so an AIV that sets twice
// before its partner sets once completes nothing: its second set waits for
// the partner's second. Counting any two arrivals let one AIV two tiles ahead
// release the AIC while its partner still read the slot the AIC refilled.
func (a *aivArrivals) arrive(sub, id int) bool {
	a[sub][id]++
	if a[0][id] == 0 || a[1][id] == 0 {
		return false
	}
	a[0][id]--
	a[1][id]--
	return true
}

// fireCross applies an ffts_set that reached the head of pipe p.
func (c *core) fireCross(e *entry, p asm.Pipe) {
	m := c.m
	s := c.strm
	r := c.rank.id
	id := int(e.id)
	peers := m.ev.Peers[:0]
	block := int(c.env.Block)
	var ba *blockArrivals
	if s != nil && block < len(s.blockArr[r]) {
		ba = &s.blockArr[r][block]
	}
	isAIV := c.kind == asm.CoreAIV
	switch e.mode {
	case 0:
		k, want := 0, s.nAICs
		if isAIV {
			k, want = 1, s.nAIVs
		}
		s.mode0[r][k][id]++
		if s.mode0[r][k][id] >= want {
			s.mode0[r][k][id] = 0
			for _, x := range s.cores {
				if x.rank.id == r && (x.kind == asm.CoreAIV) == isAIV {
					if !c.bump(e, p, x, id, &peers) {
						return
					}
				}
			}
		}
	case 1:
		if !isAIV || ba == nil || ba.aivs[1] == nil {
			m.fail(c.faultK(FaultSync, e.op, p, "ffts mode 1 synchronises the two AIVs of a block: it needs an AIV of a mixed launch"))
			return
		}
		if ba.m1.arrive(int(c.env.SubBlock), id) {
			for _, x := range ba.aivs {
				if !c.bump(e, p, x, id, &peers) {
					return
				}
			}
		}
	case 2:
		if ba == nil || ba.aic == nil || ba.aivs[0] == nil || ba.aivs[1] == nil {
			m.fail(c.faultK(FaultSync, e.op, p, "ffts mode 2 pairs an AIC with its two AIVs: it needs a mixed launch (aic + aiv kernels)"))
			return
		}
		if !isAIV {
			for _, x := range ba.aivs {
				if !c.bump(e, p, x, id, &peers) {
					return
				}
			}
		} else {
			if ba.m2.arrive(int(c.env.SubBlock), id) {
				if !c.bump(e, p, ba.aic, id, &peers) {
					return
				}
			}
		}
	}
	if m.emitting {
		ev := m.event(EvCrossSet, c, p, e.op)
		ev.ID, ev.Mode = int32(id), e.mode
		ev.Issue = e.seq
		ev.Group = -1
		if e.mode != 0 {
			ev.Group = int32(block)
		}
		ev.Peers = peers
		ev.Iter = e.iterVec()
		m.emit()
	} else {
		m.ev.Peers = peers[:0]
	}
}

// syncAll drains the core, then waits until every core of the stream on this
// rank has arrived (pto-isa's hard SYNCALL: pipe_barrier ALL, then an FFTS
// set and wait over every participant).
//
// It runs in three phases across wake-ups: the drain, the arrival (at the
// drain's end, which lies ahead of the clock by the barrier's cost, so the
// scalar first sleeps until then) and the wait for the others. syncDrained
// records that the drain is done: without it each wake-up before the arrival
// would drain again and push the scalar's time past the clock again, for ever.
func (c *core) syncAll(op *asm.COp) bool {
	m := c.m
	if c.state != scSyncAll {
		if !c.syncDrained {
			if !c.drainAll(op) {
				return false
			}
			c.syncDrained = true
		}
		if !c.syncTime() {
			return false
		}
		c.syncDrained = false
		s := c.strm
		r := c.rank.id
		// Every core of every block: with more blocks than cores the
		// blocks still waiting for a core never arrive, and the first
		// wave deadlocks here, as a grid barrier does on the hardware.
		want := s.nAICs + s.nAIVs
		c.syncGen = s.syncallGen[r]
		s.syncall[r]++
		if s.syncall[r] < want {
			c.state = scSyncAll
			c.beginStall(op)
			return false
		}
		// Last arrival: release everyone.
		s.syncall[r] = 0
		s.syncallGen[r]++
		for _, x := range s.cores {
			if x != c && x.rank.id == r && x.state == scSyncAll {
				x.resume()
			}
		}
	} else {
		if c.strm.syncallGen[c.rank.id] == c.syncGen {
			return false // spurious
		}
		c.endStall("syncall")
	}
	c.state = scRunning
	if m.emitting {
		m.event(EvSyncAll, c, asm.PipeS, op)
		m.emit()
	}
	c.tick()
	return true
}

// gmElem resolves a one-element (or count-element) GM operand of a scalar op.
func (c *core) gmElem(op *asm.COp, i int, count int64) (*gmObj, int, int64, bool) {
	a := &op.Args[i]
	if a.Kind != asm.ArgGM || a.GM == nil {
		c.m.fail(c.faultK(FaultBadOperand, op, asm.PipeS, "operand %d is not a GM reference", i))
		return nil, 0, 0, false
	}
	r, ok := c.gmRank(op, a)
	if !ok {
		return nil, 0, 0, false
	}
	var fx []fexpr
	if id := op.ID; id >= 0 && id < len(c.plan) && c.plan[id].op == op && i < len(c.plan[id].gmIdx) {
		fx = c.plan[id].gmIdx[i]
	}
	off, ok := c.gmWindowX(op, a, r, 1, count, 0, 0, fx)
	if !ok {
		return nil, 0, 0, false
	}
	return &c.m.ranks[r].gm[a.GM.Index], r, off, true
}

func (c *core) hops(r int) int { return c.m.prof.Hops(c.rank.id, r, c.m.nranks) }

// scalarGM is ld / st through the data cache.
func (c *core) scalarGM(op *asm.COp) bool {
	m := c.m
	if !c.syncTime() {
		return false
	}
	if op.Info.Op == asm.OpLd {
		o, r, off, ok := c.gmElem(op, 1, 1)
		return ok && c.ldAt(op, o, r, off)
	}
	o, r, off, ok := c.gmElem(op, 0, 1)
	if !ok {
		return false
	}
	v := argInt(c, op, 1)
	if o.buf != nil {
		if err := storeInt(o.buf, o.info.DType, off, v); err != nil {
			m.fail(c.execErr(op, asm.PipeS, err))
			return false
		}
	}
	c.scalarAccess(op, o, r, off, true, false, EvExec, v)
	c.charge(m.prof.ScalarCycles(pipes.ScalarGMStore, c.hops(r)))
	m.gmWritten(r)
	return true
}

// ldAt is ld op's load of the element at off of o on rank r, once the
// scalar's time has met the clock.
func (c *core) ldAt(op *asm.COp, o *gmObj, r int, off int64) bool {
	m := c.m
	var v int64
	if o.buf != nil {
		var err error
		v, err = loadInt(o.buf, o.info.DType, off)
		if err != nil {
			m.fail(c.execErr(op, asm.PipeS, err))
			return false
		}
	}
	c.env.Regs[op.Args[0].Slot] = v
	c.scalarAccess(op, o, r, off, false, false, EvExec, 0)
	c.charge(m.prof.ScalarCycles(pipes.ScalarGMLoad, c.hops(r)))
	return true
}

func (c *core) charge(d int64) {
	d = max(d, 1)
	if j := c.m.jit; j != nil {
		d = j.scale(c.order, jitScalar, d)
	}
	c.t += d
	c.scalarBusy += d
	c.scalarOps++
}

func loadInt(b *memory.Buffer, dt asm.DType, off int64) (int64, error) {
	if dt.IsFloat() {
		f, err := b.LoadF(dt, off)
		return int64(f), err
	}
	return b.LoadI(dt, off)
}

func storeInt(b *memory.Buffer, dt asm.DType, off int64, v int64) error {
	sz := int64(dt.Size())
	var err error
	if dt.IsFloat() {
		err = b.StoreF(dt, off, float64(v))
	} else {
		err = b.StoreI(dt, off, v)
	}
	if err == nil {
		b.Written(off, sz)
	}
	return err
}

// scalarAccess reports a scalar GM access as an event of kind.
func (c *core) scalarAccess(op *asm.COp, o *gmObj, r int, off int64, write, atomic bool, kind EventKind, v int64) {
	m := c.m
	if !m.emitting {
		return
	}
	e := m.event(kind, c, asm.PipeS, op)
	e.Start, e.End, e.Cycle = c.t, c.t, c.t
	sz := int64(o.info.DType.Size())
	e.Accesses = append(e.Accesses, Access{Space: asm.GM, Rank: int32(r), Core: -1, Lo: o.base + off,
		Hi: o.base + off + sz, Write: write, Atomic: atomic, Tensor: o.info})
	e.Value = v
	m.emit()
}

// notify is TNOTIFY: a scalar store or atomic add of an int32 to a (possibly
// remote) signal, then pipe_barrier ALL (TNotify.hpp: the barrier comes after
// the store, so it does not fence earlier MTE3 stores).
func (c *core) notify(op *asm.COp) bool {
	m := c.m
	if !c.syncTime() {
		return false
	}
	o, r, off, ok := c.gmElem(op, 0, 1)
	if !ok {
		return false
	}
	v := argInt(c, op, 1)
	add := false
	if a, ok := op.Attr("op"); ok && a.Word == "add" {
		add = true
	}
	var was int64 // the word's value before the notify (Event.Want)
	if o.buf != nil {
		nv := v
		if add || m.emitting {
			old, err := loadInt(o.buf, o.info.DType, off)
			if err != nil {
				m.fail(c.execErr(op, asm.PipeS, err))
				return false
			}
			was = old
			if add {
				nv = int64(int32(old + v))
			}
		}
		if err := storeInt(o.buf, o.info.DType, off, nv); err != nil {
			m.fail(c.execErr(op, asm.PipeS, err))
			return false
		}
	}
	if m.emitting {
		e := m.event(EvNotify, c, asm.PipeS, op)
		e.Word = "set"
		if add {
			e.Word = "add"
		}
		e.Value, e.Want = v, was
		sz := int64(o.info.DType.Size())
		e.Accesses = append(e.Accesses, Access{Space: asm.GM, Rank: int32(r), Core: -1, Lo: o.base + off,
			Hi: o.base + off + sz, Write: true, Atomic: add, Tensor: o.info})
		m.emit()
	}
	k := pipes.ScalarGMStore
	if add {
		k = pipes.ScalarAtomic
	}
	c.charge(m.prof.ScalarCycles(k, c.hops(r)) + 2*m.prof.Scalar.Dcci + m.prof.Sync.DSB)
	// The DSB inside TNOTIFY publishes this core's completed remote stores.
	c.flushRemote()
	m.gmWritten(r)
	// The trailing BAR ALL.
	mc := c.addMicro(mDrain, asm.PipeALL)
	mc.e.op = op
	return true
}

// sigWait is the state of a TWAIT spin.
type sigWait struct {
	since int64 // first poll
	polls int64
}

// signalWait is TWAIT (spin until satisfied) and TTEST (one pass).
func (c *core) signalWait(op *asm.COp) bool {
	m := c.m
	if !c.syncTime() {
		return false
	}
	test := op.Info.Op == asm.OpTtest
	ai, vi := 0, 1
	if test {
		ai, vi = 1, 2
	}
	count := int64(1)
	if a, ok := op.Attr("count"); ok {
		count = a.Val.Eval(&c.env)
	}
	if count < 1 {
		m.fail(c.faultK(FaultBadOperand, op, asm.PipeS, "#count=%d: want at least 1", count))
		return false
	}
	o, r, off, ok := c.gmElem(op, ai, count)
	if !ok {
		return false
	}
	want := argInt(c, op, vi)
	cmp := SignalCmp(op)
	sat, cur, err := c.checkSignal(o, off, count, cmp, want)
	if err != nil {
		m.fail(c.execErr(op, asm.PipeS, err))
		return false
	}
	if c.state != scSignal {
		c.sig = sigWait{since: c.t}
	}
	c.sig.polls++
	poll := m.prof.ScalarCycles(pipes.ScalarGMLoad, c.hops(r)) * count
	if test {
		if !sat && m.forcer != nil && !c.unforced && m.forcer.ForceTest(c.testAgent(), m.runID, m.tests[c.testAgent()]) {
			// Another timing could pass it (TestForcer): the test polls
			// as a twait does until its word passes, the timing on
			// which it reads the adds it can read.
			c.forceWait = true
			c.stallIn(scSignal, op)
			c.sigRank = r
			rs := m.ranks[r]
			rs.watchers = append(rs.watchers, c)
			return false
		}
		if m.forcer != nil {
			m.tests[c.testAgent()]++
		}
		c.forceWait, c.unforced = false, false
		c.env.Regs[op.Args[0].Slot] = b2i(sat)
		if sat {
			c.leave(scSignal, "ttest")
			c.signalEvent(op, o, r, off, count, cur, want)
		} else if m.wantTests {
			c.signalEventKind(EvSignalTest, op, o, r, off, count, cur, want)
		}
		c.charge(poll)
		return true
	}
	if !sat {
		c.stallIn(scSignal, op)
		c.sigRank = r
		rs := m.ranks[r]
		rs.watchers = append(rs.watchers, c)
		return false
	}
	c.leave(scSignal, "twait")
	c.signalEvent(op, o, r, off, count, cur, want)
	c.charge(poll)
	return true
}

// testAgent is the agent of this core's scalar (TestForcer's key).
func (c *core) testAgent() Agent {
	return Agent{Rank: int32(c.rank.id), Core: int32(c.vid), Pipe: asm.PipeS}
}

func (c *core) signalEvent(op *asm.COp, o *gmObj, r int, off, count, cur, want int64) {
	c.signalEventKind(EvSignalWait, op, o, r, off, count, cur, want)
}

func (c *core) signalEventKind(kind EventKind, op *asm.COp, o *gmObj, r int, off, count, cur, want int64) {
	m := c.m
	if !m.emitting {
		return
	}
	e := m.event(kind, c, asm.PipeS, op)
	sz := int64(o.info.DType.Size())
	e.Accesses = append(e.Accesses, Access{Space: asm.GM, Rank: int32(r), Core: -1, Lo: o.base + off,
		Hi: o.base + off + count*sz, Tensor: o.info})
	e.Value, e.Want = cur, want
	if count > 1 && o.buf != nil {
		// checkSignal read each of them already: a failed load there
		// would have failed the wait.
		for k := range count {
			v, _ := loadInt(o.buf, o.info.DType, off+k*sz)
			e.Words = append(e.Words, v)
		}
	}
	m.emit()
}

// checkSignal compares count consecutive elements against want; cur is the
// first element that fails (or the last one read).
func (c *core) checkSignal(o *gmObj, off, count int64, cmp string, want int64) (bool, int64, error) {
	if o.buf == nil {
		return true, want, nil
	}
	sz := int64(o.info.DType.Size())
	var cur int64
	for k := int64(0); k < count; k++ {
		v, err := loadInt(o.buf, o.info.DType, off+k*sz)
		if err != nil {
			return false, 0, err
		}
		cur = v
		if !CompareSignal(cmp, v, want) {
			return false, v, nil
		}
	}
	return true, cur, nil
}

// SignalCmp is a twait or ttest's comparison (its #cmp, "eq" by default).
func SignalCmp(op *asm.COp) string {
	if a, ok := op.Attr("cmp"); ok && a.Word != "" {
		return a.Word
	}
	return "eq"
}

// CompareSignal reports whether a signal value v satisfies cmp against w:
// the machine's test for a waiter, and the detector's for a stale signal.
func CompareSignal(cmp string, v, w int64) bool {
	switch cmp {
	case "ne":
		return v != w
	case "gt":
		return v > w
	case "ge":
		return v >= w
	case "lt":
		return v < w
	case "le":
		return v <= w
	}
	return v == w
}

// gmWritten wakes the twait spinners of rank r at their next poll.
func (m *Machine) gmWritten(r int) {
	// A write is work a spinning scalar may be waiting for (the idle guard).
	m.workEnd = max(m.workEnd, m.now)
	rs := m.ranks[r]
	if len(rs.watchers) == 0 {
		return
	}
	for _, c := range rs.watchers {
		if c.state != scSignal {
			continue
		}
		k, at := m.nextPoll(c.sig.since, m.now)
		c.t = max(c.t, at)
		c.sig.polls = k
		c.sleep()
	}
	rs.watchers = rs.watchers[:0]
}

// nextPoll is the first poll of a TWAIT spin that began at since to happen
// at or after now, and when it happens. The library puts a
// pipe_barrier(PIPE_ALL) after every TWaitBarrierEvery polls (machine-facts
// §1.4), so poll j happens at since + j*poll + (j/every)*barrier.
func (m *Machine) nextPoll(since, now int64) (int64, int64) {
	poll := max(m.prof.TWaitPoll, 1)
	every := m.prof.TWaitBarrierEvery
	bar := m.prof.Sync.Barrier
	d := max(now-since, 0)
	if every <= 0 || bar <= 0 {
		k := (d + poll - 1) / poll
		return k, since + k*poll
	}
	period := every*poll + bar
	f, r := d/period, d%period
	var k int64
	if r <= (every-1)*poll {
		k = f*every + (r+poll-1)/poll
	} else {
		k = (f + 1) * every
	}
	return k, since + k*poll + (k/every)*bar
}

// pendingStore is a remote GM write that has completed but is not visible
// yet (remote_visibility = dsb): the destination keeps its old bytes until
// the writer's next dsb writes data back.
type pendingStore struct {
	buf    *memory.Buffer
	rank   int
	off    int64
	data   []byte
	poison [][2]int64 // poisoned sub-ranges of the new contents, relative to off
	old    []byte     // scratch: the bytes before the write
	oldPsn [][2]int64
}

// hidden reports whether operand i of e is a remote GM write whose
// visibility waits for a dsb.
func (c *core) hidden(e *entry, i int) bool {
	return c.m.prof.RemoteVisibility == pipes.VisibleAtDSB && e.args[i].Kind == asm.ArgGM &&
		e.access[i]&asm.AccWrite != 0 && !e.atomic && int(e.argRank[i]) != c.rank.id
}

// hideRemote prepares to defer e's remote GM writes: it records the regions
// and their current contents. It returns false when e writes no remote GM.
// Atomic adds land at completion: re-applying a sum later would lose the
// other writers' adds.
func (c *core) hideRemote(e *entry) bool {
	c.visNew = c.visNew[:0]
	for i := range e.args {
		if !c.hidden(e, i) || e.args[i].Buf == nil {
			continue
		}
		a := &e.args[i]
		esz := int64(a.GM.DType.Size())
		add := func(off, n int64) {
			if n <= 0 || off < 0 || off+n > a.Buf.Size() {
				return
			}
			c.visNew = append(c.visNew, pendingStore{})
			ps := &c.visNew[len(c.visNew)-1]
			ps.buf, ps.rank, ps.off = a.Buf, int(e.argRank[i]), off
			// Over the budget, the write that follows fails on the same
			// pages and stops the run.
			_ = a.Buf.Touch(off, n)
			ps.old = append(ps.old[:0], a.Buf.Data[off:off+n]...)
			ps.oldPsn = poisonIn(a.Buf, off, n, ps.oldPsn[:0])
		}
		ps, np := gmPieces(a, int64(e.winR[i]), int64(e.winC[i]))
		for _, p := range ps[:np] {
			if p.runs <= 1 || p.pitch == p.n {
				add(a.Off+p.off, max((p.runs-1)*p.pitch+p.n, esz))
				continue
			}
			for r := int64(0); r < p.runs; r++ {
				add(a.Off+p.off+r*p.pitch, p.n)
			}
		}
	}
	return len(c.visNew) > 0
}

// stashRemote moves the just-written bytes of the regions hideRemote
// recorded into the core's pending list and puts the old bytes back.
func (c *core) stashRemote() {
	for i := range c.visNew {
		ps := &c.visNew[i]
		n := int64(len(ps.old))
		ps.data = append(ps.data[:0], ps.buf.Data[ps.off:ps.off+n]...)
		ps.poison = poisonIn(ps.buf, ps.off, n, ps.poison[:0])
		copy(ps.buf.Data[ps.off:ps.off+n], ps.old)
		ps.buf.Written(ps.off, n)
		for _, r := range ps.oldPsn {
			ps.buf.Poison(ps.off+r[0], r[1]-r[0])
		}
		c.visPending = append(c.visPending, *ps)
		// The slices now belong to the pending entry.
		*ps = pendingStore{}
	}
	c.visNew = c.visNew[:0]
}

// flushRemote makes every pending remote write of this core visible: the
// effect of its dsb (or of the end of its kernel).
func (c *core) flushRemote() {
	if len(c.visPending) == 0 {
		return
	}
	m := c.m
	for i := range c.visPending {
		ps := &c.visPending[i]
		n := int64(len(ps.data))
		copy(ps.buf.Data[ps.off:ps.off+n], ps.data)
		ps.buf.Written(ps.off, n)
		for _, r := range ps.poison {
			ps.buf.Poison(ps.off+r[0], r[1]-r[0])
		}
	}
	for i := range c.visPending {
		m.gmWritten(c.visPending[i].rank)
		c.visPending[i] = pendingStore{}
	}
	c.visPending = c.visPending[:0]
}

// poisonIn appends the poisoned sub-ranges of [off, off+n), relative to off.
func poisonIn(b *memory.Buffer, off, n int64, out [][2]int64) [][2]int64 {
	if !b.IsPoisoned(off, n) {
		return out
	}
	for _, r := range b.PoisonedRanges() {
		lo, hi := max(r[0], off), min(r[1], off+n)
		if lo < hi {
			out = append(out, [2]int64{lo - off, hi - off})
		}
	}
	return out
}

// async is TPUT_ASYNC / TGET_ASYNC: the SDMA engine moves a flat window
// off-core; the result register names the transfer. TPREFETCH_ASYNC is the
// same SDMA submission with one GM operand and no copy: a cache-maintenance
// op that brings the window's lines into its rank's L2.
func (c *core) async(op *asm.COp) bool {
	m := c.m
	if !c.syncTime() {
		return false
	}
	ngm := 2
	if op.Info.Op == asm.OpTprefetchAsync {
		ngm = 1
	}
	if len(op.Args) < 1+ngm {
		m.fail(c.faultK(FaultBadOperand, op, asm.PipeS, "%s needs an event register and %d GM operand(s)", op.Info.Name, ngm))
		return false
	}
	rows, cols := int64(1), int64(0)
	if a, ok := op.Attr("rows"); ok {
		rows = a.Val.Eval(&c.env)
	}
	if a, ok := op.Attr("cols"); ok {
		cols = a.Val.Eval(&c.env)
	}
	var e entry
	e.reset(enExec, op, c.t, c.entryIter())
	if m.emitting {
		// The copy's event comes at completion, when the scalar may be
		// trips further on: it carries the vector of its issue, which
		// the scalar's log (iterLog) does not give an unqueued op.
		e.copyIter(c.iter)
	}
	for i := 1; i <= ngm; i++ {
		a := &op.Args[i]
		if a.Kind != asm.ArgGM {
			m.fail(c.faultK(FaultBadOperand, op, asm.PipeS, "operand %d of %s must be a GM reference", i, op.Info.Name))
			return false
		}
		if cols == 0 {
			cols = lastDim(a.GM)
		}
	}
	for i := 1; i <= ngm; i++ {
		e.args = append(e.args, Operand{})
		e.access[i-1] = asm.AccRead
		if i == 1 && ngm == 2 {
			e.access[0] = asm.AccWrite
		}
		if !c.resolveArg(op, &op.Args[i], &e.args[i-1], &e, i-1, rows, cols, nil) {
			return false
		}
	}
	bytes := rows * cols * int64(op.Args[1].GM.DType.Size())
	hops := 0
	for i := 0; i < ngm; i++ {
		hops = max(hops, c.hops(int(e.argRank[i])))
	}
	d := m.prof.SDMACycles(bytes, hops)
	if ngm == 1 {
		d = c.prefetchL2(&e, bytes, d)
	}
	if j := m.jit; j != nil {
		d = j.scale(c.order, jitSDMA, d)
	}
	done := c.t + d
	m.sdma = append(m.sdma, done)
	id := int64(len(m.sdma))
	c.env.Regs[op.Args[0].Slot] = id
	c.copies = append(c.copies, asyncCopy{id: id, seq: c.issued + 1, done: done})
	m.bytes[pathSDMA] += bytes
	// The copy itself lands at completion, on its own agent.
	// composite() numbers the issue once this returns true.
	e.seq = c.issued + 1
	x := &sdmaOp{c: c, e: e, start: c.t, end: done}
	x.w.hidx, x.w.fn = -1, x.run
	m.schedule(&x.w, done, -1)
	// The copy is work in flight until done (the idle guard).
	m.workEnd = max(m.workEnd, done)
	c.charge(m.prof.Scalar.Op * 4)
	return true
}

// prefetchL2 books a TPREFETCH_ASYNC window on the L2 of the rank that owns
// it and returns the transfer's duration: at least the SDMA submission d, and
// as long as HBM takes to bring the missing lines in (the GM port is shared
// with the cores' loads, as gmPorts books it). The lines are valid from then
// on, so a TLOAD after wait_async hits them. A rank without an L2 model has
// nothing to warm: the CMO costs only its submission.
func (c *core) prefetchL2(e *entry, bytes, d int64) int64 {
	m := c.m
	r := m.ranks[int(e.argRank[0])]
	if r.l2 == nil {
		return d
	}
	a := &e.args[0]
	off, pitch, rows, rowBytes := gmRect(a, int64(e.winR[0]), int64(e.winC[0]))
	miss := max(bytes-r.l2.access(a.GM, off, pitch, rows, rowBytes), 0)
	if miss > 0 {
		hs := max(c.t, r.portBusy)
		r.portBusy = hs + ceilDiv(miss, m.prof.GMBW)
		d = max(d, r.portBusy-c.t+m.prof.L2.MissLatency*miss/max(bytes, 1))
		r.l2.stamp(c.t + d)
	}
	return d
}

type sdmaOp struct {
	w          waker
	c          *core
	e          entry
	start, end int64
}

func (x *sdmaOp) run() {
	c, m := x.c, x.c.m
	copies := x.e.op.Info.Op != asm.OpTprefetchAsync
	if copies && m.dataOp(x.e.op) {
		if err := copyGM(&x.e.args[0], &x.e.args[1], x.e.winR[0], x.e.winC[0]); err != nil {
			m.fail(c.execErr(x.e.op, asm.PipeInvalid, fmt.Errorf("sdma: %w", err)))
			return
		}
	}
	if m.emitting {
		ev := m.event(EvExec, c, asm.PipeInvalid, x.e.op)
		ev.Agent.Core = -1
		ev.Iter = x.e.iterVec()
		ev.Issue, ev.IssueCore = x.e.seq, int32(c.vid)
		ev.Start, ev.End, ev.Cycle = x.start, x.end, x.start
		ev.Step = "sdma"
		ev.Accesses = c.accesses(&x.e, ev.Accesses[:0])
		m.emit()
	}
	if copies {
		m.gmWritten(int(x.e.argRank[0]))
	}
	for _, w := range m.active {
		if w.state == scAsync && m.now >= w.asyncDone {
			w.endStall("wait_async")
			w.resume()
		}
	}
}

// copyGM copies a rows×cols window element by element between two GM
// tensors of the same dtype (SDMA does not convert).
func copyGM(dst, src *Operand, rows, cols int32) error {
	if dst.Buf == nil || src.Buf == nil {
		return nil
	}
	if dst.GM.DType != src.GM.DType {
		return fmt.Errorf("@%s is %v but @%s is %v: SDMA does not convert", dst.GM.Name, dst.GM.DType, src.GM.Name, src.GM.DType)
	}
	rb := int64(cols) * int64(src.GM.DType.Size())
	for r := int64(0); r < int64(rows); r++ {
		so, do := src.Off+r*src.RowStride, dst.Off+r*dst.RowStride
		if err := src.Buf.CheckRange(so, rb); err != nil {
			return err
		}
		if err := dst.Buf.CheckRange(do, rb); err != nil {
			return err
		}
		if err := src.Buf.Touch(so, rb); err != nil {
			return err
		}
		if err := dst.Buf.TouchOverwrite(do, rb); err != nil { // copied whole below
			return err
		}
		copy(dst.Buf.Data[do:do+rb], src.Buf.Data[so:so+rb])
		if src.Buf.IsPoisoned(so, rb) {
			dst.Buf.Poison(do, rb)
		} else {
			dst.Buf.Written(do, rb)
		}
	}
	return nil
}

// asyncCopy is one async transfer of a core: its event (the machine's
// number for it, which the result register holds), its issue number on the
// core (Event.Issue of its copy) and when it completes.
type asyncCopy struct {
	id, seq, done int64
}

// waitAsync waits until the async transfer the event names and every one
// this core issued before it are complete, not the core's later ones:
// pto-isa's AsyncEvent::Wait -> SdmaWaitEvent -> CheckPostDoneIds polls each
// queue's done record until it reaches the event's post id, and a queue's
// flag writes land in post order (include/pto/comm/async/sdma/
// sdma_async_detail_post.hpp at pto-isa 3186c381). Events are numbered in
// issue order, so the copies covered are this core's with an id up to the
// event's.
func (c *core) waitAsync(op *asm.COp) bool {
	m := c.m
	if !c.syncTime() {
		return false
	}
	id := argInt(c, op, 0)
	if id < 1 || id > int64(len(m.sdma)) {
		m.fail(c.faultK(FaultBadOperand, op, asm.PipeS, "wait_async %d: no such async transfer", id))
		return false
	}
	n, seq := 0, int64(0) // the covered copies: c.copies[:n], the newest seq
	c.asyncDone = 0
	for n < len(c.copies) && c.copies[n].id <= id {
		c.asyncDone = max(c.asyncDone, c.copies[n].done)
		seq = c.copies[n].seq
		n++
	}
	if m.now < c.asyncDone {
		c.stallIn(scAsync, op)
		return false
	}
	c.copies = append(c.copies[:0], c.copies[n:]...)
	c.state = scRunning
	if m.emitting {
		// The scalar's wait point: observers order the copies it covered
		// before what the scalar does next (the hazard detector joins
		// the core's SDMA agent up to the copy of issue number Value; 0
		// when an earlier wait covered them all).
		e := m.event(EvExec, c, asm.PipeS, op)
		e.Start, e.End, e.Cycle = c.t, c.t, c.t
		e.Value = seq
		m.emit()
	}
	c.tick()
	return true
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
