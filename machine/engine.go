package machine

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"
	"time"
	"unsafe"

	"github.com/ptoasm/ptoasm/asm"
)

// fail records the first error; the run stops at the next step.
func (m *Machine) fail(err error) {
	if m.err == nil {
		m.err = err
		if f, ok := err.(*Fault); ok {
			m.res.Faults = append(m.res.Faults, f.Error())
		}
	}
}

// Run executes the whole launch section and returns the result. The error is a
// *DeadlockError, a *Fault, a *LimitError or a setup error; Result is filled as
// far as the run got either way.
func (m *Machine) Run() (*Result, error) {
	// Stretches (stretch.go) in a run from the start only: one that ends
	// in an error is run again without them, which a run the debugger
	// stepped cannot be.
	m.strOK = !m.hostDone && !m.noStr && !m.opt.NoStretches && (!m.emitting || m.strObs) && m.opt.Print == nil &&
		m.prof.Sync.SetFlag > 0 && m.prof.Sync.WaitFlag > 0 && m.prof.Sync.Barrier > 0 && m.prof.Sync.FFTSSet > 0
	if m.strProbeAt == 0 {
		m.strProbeAt, m.strMinEv, m.strPauseN = strProbe, strMinEvents, strPauseCycles
	}
	r, err := m.run()
	if err != nil && m.strRan && rerunnable(err) {
		if nm, nerr := New(m.obj, m.opt); nerr == nil {
			// Observers (StretchObserver) saw the run with stretches up
			// to its error: they take the repeat as the only run.
			for _, o := range m.opt.Observers {
				o.(StretchObserver).Restart()
			}
			nm.noStr, nm.ahead, nm.l2Fresh = true, m.ahead, m.l2Fresh
			m.reran = true
			return nm.Run()
		}
	}
	return r, err
}

// run is Run's work.
func (m *Machine) run() (*Result, error) {
	defer m.flushObservers()
	if m.opt.MaxTime > 0 || m.opt.Cancel != nil || m.opt.Progress != nil || m.opt.MaxHeap > 0 {
		if m.opt.MaxTime > 0 {
			m.deadline = time.Now().Add(m.opt.MaxTime)
		}
		m.guardN = wallEvery
	}
	for {
		m.events()
		done, err := m.Step()
		if err != nil {
			if m.strRan && rerunnable(err) {
				// Run repeats the run without stretches: a core that ran
				// ahead of the clock is no state to halt cores in.
				return m.result(), err
			}
			if m.halt(err) {
				continue
			}
			err = m.faultsOr(err)
			r := m.result()
			return r, err
		}
		if done {
			break
		}
	}
	r := m.result()
	if err := m.checks(r); err != nil {
		return r, err
	}
	return r, nil
}

// halt takes a fault that stopped the run at one core's issue or pipe and,
// when the core is known, stops only that core and lets the run go on: the
// core issues nothing more, its pipes run what it had issued, and every
// other core runs until it ends or blocks. Which faults a run reports, and
// which accesses the detector sees before them, then follow each core's own
// path, not which core's fault came first in time (two cores that each
// fault reported whichever was faster; the loads issued before a fault
// reached the detector or not as their latency allowed). It returns false
// when the run must stop as before: not a fault, or one of no core of the
// run, or the run's end is already being reported.
func (m *Machine) halt(err error) bool {
	f, ok := err.(*Fault)
	if !ok || m.haltDone || f.CoreName == "" {
		return false
	}
	var c *core
	for _, x := range m.active {
		if x.rank.id == f.Rank && x.vid == f.Core && x.state != scIdle {
			c = x
			break
		}
	}
	if c == nil || c.halted || c.state == scDone {
		return false
	}
	m.halted = append(m.halted, f)
	c.halted = true
	m.strOK = false // the rest of the run in the global order (stretch.go)
	// The kernel body ends here: the last instruction is iHalt
	// (compileBody), which waits for the pipes to drain and finishes the
	// core without a kernel end (finish).
	c.code, c.pc = c.code[len(c.code)-1:], 0
	c.micro, c.mi = c.micro[:0], 0
	m.err = nil
	if c.state != scEnd {
		c.state = scRunning
		if !c.wake.armed {
			c.t = max(c.t, m.now)
			c.sleep()
		}
	}
	return true
}

// faultsOr is the error a run that halted cores at faults returns: the
// fault of the least core (rank, then block), with the others in Others,
// whatever stopped the run at last (the end of every core, a core blocked
// on a halted one, a guard: consequences of the faults). Otherwise err.
func (m *Machine) faultsOr(err error) error {
	if len(m.halted) == 0 {
		return err
	}
	m.haltDone = true
	if f, ok := err.(*Fault); ok && !slices.Contains(m.halted, f) {
		m.halted = append(m.halted, f) // a fault no halt took (a halted core's pipe)
	}
	fs := slices.Clone(m.halted)
	slices.SortStableFunc(fs, func(a, b *Fault) int {
		if a.Rank != b.Rank {
			return cmp.Compare(a.Rank, b.Rank)
		}
		return cmp.Compare(a.Core, b.Core)
	})
	m.res.Faults = m.res.Faults[:0]
	for _, f := range fs {
		m.res.Faults = append(m.res.Faults, f.Error())
	}
	first := *fs[0]
	first.Others = fs[1:]
	return &first
}

func (m *Machine) flushObservers() {
	for _, o := range m.opt.Observers {
		if f, ok := o.(Flusher); ok {
			f.Flush()
		}
	}
}

// events processes wake-ups while a run is under way, as Step would one at
// a time, and returns when the run needs Step's other work (its end, a
// deadlock, an error or the cycle limit).
//
// cur is set before each event and cleared once, when events returns, not
// after every event: between two events nothing reads it (issue 22, round
// 18). The hot calls keep their lines within the function, by which
// default.pgo names them.
func (m *Machine) events() {
	if m.err != nil || m.finished || !m.hostDone || !m.running {
		return
	}
	m.batch = true
	// The guard countdown and the cycle limits live in registers: each was
	// a load (and the countdown a store) per event (issue 22, round 14).
	guard, maxCycles, maxIdle := m.guardN, m.opt.MaxCycles, m.opt.MaxIdleCycles
	defer func() { m.batch, m.cur = false, nil }()
	for m.err == nil {
		w := m.next()
		if w == nil {
			break
		}
		// overLimit, split by agent: only a scalar can spin idle.
		if w.at > maxCycles {
			m.err = m.limitError(LimitCycles, w.at)
			break // Step reports it
		}
		// The switch is w.run inlined: one call less per event. A pipe
		// notes its instruction in flight (workEnd) itself, in begin.
		if p := w.pipe; p != nil {
			m.now = w.at
			w.armed = false
			m.cur, m.str = w, m.strOf(w)
			p.run()
		} else {
			if w.scalar != nil && w.at-m.workEnd > maxIdle && m.foldIdle(w.at) {
				m.err = m.limitError(LimitIdle, w.at)
				break
			}
			m.now = w.at
			w.armed = false
			m.cur, m.str = w, m.strOf(w)
			if c := w.scalar; c != nil {
				c.runScalar()
			} else {
				w.fn()
			}
		}
		// (cur stays set: see above)
		if c := m.inline; c != nil {
			m.inline = nil
			if m.err != nil {
				c.sleep() // as resume would have: the run stops here
			} else {
				m.runInline(c)
			}
		}
		if c := m.str; c != nil {
			guard -= m.stretch(c) // its events count for the guards' checks too
		}
		if guard--; guard <= 0 {
			stop := m.overTime()
			guard = m.guardN
			m.checkSeq()
			if stop {
				break
			}
		}
	}
	m.guardN = guard
}

// overLimit reports (and records as the run's error) that w would take the
// run past a cycle guard: MaxCycles, or MaxIdleCycles for a scalar waking
// with nothing in flight it could be waiting for. Only a scalar can spin:
// an idle pipe or a pipe blocked in wait_flag has no wake-up.
func (m *Machine) overLimit(w *waker) bool {
	if w.at > m.opt.MaxCycles {
		m.err = m.limitError(LimitCycles, w.at)
		return true
	}
	if w.scalar != nil && w.at-m.workEnd > m.opt.MaxIdleCycles && m.foldIdle(w.at) {
		m.err = m.limitError(LimitIdle, w.at)
		return true
	}
	return false
}

// wallEvery is how many events pass between two looks at the wall clock: a
// few hundred microseconds of an ordinary run, under a tenth of a second of
// a scalar-only loop (each of its events runs scalarBudget statements).
const wallEvery = 1 << 12

// overTime checks Cancel, MaxTime and MaxHeap; guardN counts events down to the
// next check.
func (m *Machine) overTime() bool {
	m.guardN = wallEvery
	select {
	case <-m.opt.Cancel: // a nil Cancel never fires
		m.err = ErrCancelled
		return true
	default:
	}
	if m.opt.Progress != nil {
		m.reportProgress()
	}
	if m.opt.MaxTime <= 0 || time.Now().Before(m.deadline) {
		return m.overHeap()
	}
	m.err = m.limitError(LimitTime, m.now)
	return true
}

// runInline runs the scalar that resume left in m.inline, exactly as if it
// had been scheduled at now: unless a wake-up queued since comes first, it
// is the next event.
func (m *Machine) runInline(c *core) {
	w := &c.wake
	if w.armed {
		return // scheduled since (no path does): that wake-up runs it
	}
	key := c.order*int(asm.NumPipes) + int(asm.PipeS)
	if !m.comesNext(key) {
		c.sleep()
		return
	}
	// The idle guard, as overLimit applies it to a scheduled scalar: a
	// scalar its own pipe keeps resuming (a set_flag/wait_flag loop) never
	// goes through the queue.
	if m.now-m.workEnd > m.opt.MaxIdleCycles && m.foldIdle(m.now) {
		m.err = m.limitError(LimitIdle, m.now)
		return
	}
	m.runNow(w, key)
	c.runScalar()
}

// run is w's wake-up.
func (w *waker) run() {
	switch {
	case w.pipe != nil:
		w.pipe.run()
	case w.scalar != nil:
		w.scalar.runScalar()
	default:
		w.fn()
	}
}

// Step processes one event (or one host step of the launch section). It
// returns done when the launch section has finished.
func (m *Machine) Step() (done bool, err error) {
	if m.err != nil {
		return true, m.err
	}
	if m.finished {
		return true, nil
	}
	if !m.hostDone {
		m.hostDone = true
		m.emitInitialWrites()
	}
	if !m.running {
		if m.stepIdx >= len(m.steps) {
			m.finished = true
			return true, nil
		}
		st := &m.steps[m.stepIdx]
		m.stepIdx++
		if st.reset != nil {
			m.doReset(st)
		} else {
			m.startRun(st)
		}
		return m.err != nil, m.err
	}
	m.checkSeq()
	if w := m.next(); w != nil {
		if m.overLimit(w) {
			return true, m.err
		}
		m.now = w.at
		w.armed = false
		m.cur = w
		w.run()
		m.cur = nil
		if m.err != nil {
			return true, m.err
		}
		return false, nil
	}
	// The last event may have run in a stretch, ahead of the clock.
	m.now = max(m.now, m.strT)
	if len(m.halted) > 0 {
		// Cores stopped at faults: the others have gone as far as they
		// can (to their end, or blocked on a halted core, which is no
		// deadlock of their own), and the run ends here (Run).
		m.err = m.halted[0]
		return true, m.err
	}
	if m.live > 0 && m.unforce() {
		return false, nil
	}
	if m.live > 0 {
		m.err = m.deadlock()
		return true, m.err
	}
	// Every core of the run is done.
	m.endRun()
	return false, nil
}

func (m *Machine) limitError(kind LimitKind, at int64) error {
	e := &LimitError{Kind: kind, Cycle: at, MaxCycles: m.opt.MaxCycles, MaxIdleCycles: m.opt.MaxIdleCycles,
		MaxTime: m.opt.MaxTime, IdleSince: m.workEnd}
	for _, c := range m.active {
		if c.state != scDone {
			e.Waiting = append(e.Waiting, fmt.Sprintf("%s: %s", c.vname, c.describeWait()))
		}
	}
	return e
}

// stream is one stream of the current run.
type stream struct {
	plan  *streamPlan
	cores []*core // every core of the stream on every rank
	// per rank: mode-0 arrivals [kind][id], syncall arrivals
	mode0   [][2][asm.NumFFTSIDs]int
	nAICs   int
	nAIVs   int
	syncall []int
	// syncallGen counts completed syncall rounds per rank.
	syncallGen []int64
	// block-level mode 1/2 arrivals, per rank and block: [id]
	blockArr [][]blockArrivals
	// next is, per rank, the next block to dispatch onto a freed wave slot
	// when the stream has more blocks than free cores.
	next []int
	// wave is the blocks of the first wave when the stream has more blocks
	// than free cores (the same on every rank, which all place the same
	// streams on the same cores), 0 when it has a core for every block. A
	// stream that runs in waves refuses a mode-0 FFTS set (waveMode0).
	wave int
}

// waveSlot is the cores that run one stream's blocks one after another on one
// rank when the stream has more blocks than free cores (a launch of hundreds
// of blocks on 24 cores): one AIC or AIV, or an AIC with its two AIVs. When
// the last of them finishes a block, the slot takes the stream's next block
// and starts it block.start cycles later, as the runtime hands a freed core
// the next block; which block lands on which core thus follows the timing.
type waveSlot struct {
	m     *Machine
	s     *stream
	rank  int
	n     int // cores in use: 1, or 3 (AIC + two AIVs)
	cores [3]*core
	kerns [3]*asm.KernelInfo
	live  int   // cores still running the current block
	end   int64 // when the last of them finished
	block int   // the block the slot starts next
	w     waker
}

// done is called when one of the slot's cores finished its block.
func (sl *waveSlot) done(end int64) {
	sl.live--
	sl.end = max(sl.end, end)
	if sl.live > 0 {
		return
	}
	s, r := sl.s, sl.rank
	if s.next[r] >= s.plan.blocks {
		for _, c := range sl.cores[:sl.n] {
			c.slot = nil
		}
		return
	}
	sl.block = s.next[r]
	s.next[r]++
	// Started from an event of its own: the core that just finished may be
	// inside one of its pipes' or its scalar's wake-up.
	sl.m.schedule(&sl.w, sl.end+sl.m.prof.BlockStart, sl.cores[0].order*int(asm.NumPipes)+int(asm.PipeS))
}

// start runs the slot's next block on its cores.
func (sl *waveSlot) start() {
	m, s, b := sl.m, sl.s, sl.block
	ba := &s.blockArr[sl.rank][b]
	for i, c := range sl.cores[:sl.n] {
		sub, pos := 0, vpAIC
		switch {
		case sl.n == 3:
			pos = vpMixedAIC + i
			if c.kind == asm.CoreAIV {
				sub = i - 1
				ba.aivs[sub] = c
			} else {
				ba.aic = c
			}
		case c.kind == asm.CoreAIV:
			pos = vpAIV
			ba.aivs[0] = c
		default:
			ba.aic = c
		}
		if err := c.start(sl.kerns[i], s, b, sub, s.plan.blocks, m.now); err != nil {
			m.fail(err)
			return
		}
		// The block is a core of its own to observers, with no edge from
		// the block the core ran before: which blocks share a core follows
		// the timing, and a race between two of them must not hide behind
		// it (docs/hazards.md, "Blocks beyond cores").
		vid := m.virtualCore(b, pos)
		c.setVirtual(vid, m.CoreName(sl.rank, vid))
		if err := m.chargeVirtual(c); err != nil {
			m.fail(err)
			return
		}
		m.live++
	}
	sl.live = sl.n
	sl.end = 0
	for _, c := range sl.cores[:sl.n] {
		c.sleep()
	}
}

// observerPairBytes is what an observer keeps per pair of agents: the hazard
// detector's vector clocks have a component per agent of the run in every
// agent's clock, its flag channels' and its issue log's, about 8 bytes per
// pair together (measured: 2.0 GB retained linting vec_add with 4096 blocks,
// 16 400 agents).
const observerPairBytes = 8

// chargeVirtual charges the memory budget for what observers keep about
// virtual core c, the first time they hear of it: its agents are new to
// them, and the detector's state grows with the square of the agents, so
// blocks=65536 beyond the cores is refused (--max-memory) rather than left
// to the out-of-memory killer. Nothing is charged without observers.
func (m *Machine) chargeVirtual(c *core) error {
	if !m.emitting {
		return nil
	}
	key := int64(c.rank.id)<<32 | int64(c.vid)
	if _, ok := m.vseen[key]; ok {
		return nil
	}
	if m.vseen == nil {
		m.vseen = map[int64]struct{}{}
	}
	m.vseen[key] = struct{}{}
	n := int64(1 + len(c.plist))
	m.vagents += n
	all := m.vagents + int64(m.nranks)*int64(m.nAIC+m.nAIV)*int64(asm.NumPipes)
	return m.mem.take(mulCap(observerPairBytes*n, all), c.strm.plan.span.Pos, func() string {
		return fmt.Sprintf("the observers' state for blocks=%d beyond the cores (%d agents so far at %s; the hazard detector keeps a clock component per pair of agents)",
			c.strm.plan.blocks, all, c.vname)
	})
}

type blockArrivals struct {
	m1   aivArrivals // mode 1: AIV arrivals
	m2   aivArrivals // mode 2: AIV→AIC arrivals
	aivs [2]*core
	aic  *core
}

func (m *Machine) startRun(st *launchStep) {
	m.running = true
	m.runStart = m.now
	// The kernel's start-up is not idling: the guard counts from its end.
	m.workEnd = m.now + m.prof.KernelStart
	if m.jit != nil {
		m.workEnd += m.jit.start // a core starting late is not idling
	}
	m.active = m.active[:0]
	m.streams = m.streams[:0]
	m.live = 0
	var places *runPlaces
	if m.emitting {
		// Observers learn where each core ran (Placement) by the run's
		// number; a step run again places its streams alike.
		if st.places == nil {
			st.places = newRunPlaces(m.nAIC + m.nAIV)
			places = st.places
		}
		e := m.event(EvRunStart, nil, asm.PipeInvalid, nil)
		e.RunName, e.Kernels = st.name, st.kernels
		e.ID = int32(len(m.runPlaces))
		m.runID = e.ID
		clear(m.tests)
		m.runPlaces = append(m.runPlaces, st.places)
		m.emit()
	}
	for r := 0; r < m.nranks; r++ {
		usedAIC := make([]bool, m.nAIC)
		usedAIV := make([]bool, m.nAIV)
		for si := range st.streams {
			sp := &st.streams[si]
			var s *stream
			if r == 0 {
				s = &stream{plan: sp, mode0: make([][2][asm.NumFFTSIDs]int, m.nranks), syncall: make([]int, m.nranks),
					syncallGen: make([]int64, m.nranks), blockArr: make([][]blockArrivals, m.nranks),
					next: make([]int, m.nranks)}
				m.streams = append(m.streams, s)
			} else {
				s = m.streams[si]
			}
			if sp.blocks > m.nAIC+m.nAIV {
				// Blocks beyond cores: blocks=65536 on thousands of ranks
				// is gigabytes of arrival records.
				size := int64(sp.blocks) * int64(unsafe.Sizeof(blockArrivals{}))
				if err := m.mem.take(size, sp.span.Pos, func() string {
					return fmt.Sprintf("the block records of blocks=%d (%s per rank, %d ranks)", sp.blocks, asm.FormatBytes(size), m.nranks)
				}); err != nil {
					m.fail(err)
					return
				}
			}
			s.blockArr[r] = make([]blockArrivals, sp.blocks)
			if err := m.placeStream(r, s, usedAIC, usedAIV); err != nil {
				m.fail(err)
				return
			}
			if r == 0 && places != nil {
				places.note(s, si)
			}
		}
	}
	sort.Slice(m.active, func(i, j int) bool { return m.active[i].order < m.active[j].order })
	// Latest agent first: nowq is sorted by descending order, so each
	// wake-up lands at its end at once; in ascending order each one scanned
	// the whole queue, quadratic in the cores (4096 ranks x 48 blocks took
	// minutes to start). The agent, not the sequence number, orders them.
	for i := len(m.active) - 1; i >= 0; i-- {
		m.active[i].sleep()
	}
	if len(m.active) == 0 {
		m.fail(&LaunchError{Pos: st.run.Pos, Msg: fmt.Sprintf("run %q starts no cores", st.name)})
	}
}

// placeStream picks disjoint cores for one stream on rank r. A stream with
// more blocks than free cores of its kind starts as many blocks as there are
// free cores (the first wave) and dispatches the rest onto the cores as they
// finish (waveSlot).
func (m *Machine) placeStream(r int, s *stream, usedAIC, usedAIV []bool) error {
	sp := s.plan
	tooMany := func(what string, have int) error {
		return &LaunchError{Pos: sp.span.Pos, Msg: fmt.Sprintf("blocks=%d needs at least one free %s but %d are free on rank %d (profile: %d AIC + %d AIV per rank)",
			sp.blocks, what, have, r, m.nAIC, m.nAIV)}
	}
	add := func(c *core, k *asm.KernelInfo, b, sub int) error {
		c.slot = nil
		c.setVirtual(c.idx, c.name)
		// The first wave starts kernel.start after the launch.
		at := m.now + m.prof.KernelStart
		if m.jit != nil {
			at += m.jit.startDelay(r, c.order)
		}
		if err := c.start(k, s, b, sub, sp.blocks, at); err != nil {
			return err
		}
		m.active = append(m.active, c)
		s.cores = append(s.cores, c)
		m.live++
		return nil
	}
	b := 0
	switch {
	case sp.aic != nil && sp.aiv != nil:
		for a := 0; a < m.nAIC && b < sp.blocks; a++ {
			if usedAIC[a] || 2*a+1 >= m.nAIV || usedAIV[2*a] || usedAIV[2*a+1] {
				continue
			}
			usedAIC[a], usedAIV[2*a], usedAIV[2*a+1] = true, true, true
			ba := &s.blockArr[r][b]
			ba.aic = m.coreAt(r, a, asm.CoreAIC)
			if err := add(ba.aic, sp.aic, b, 0); err != nil {
				return err
			}
			for sub := 0; sub < 2; sub++ {
				ba.aivs[sub] = m.coreAt(r, m.nAIC+2*a+sub, asm.CoreAIV)
				if err := add(ba.aivs[sub], sp.aiv, b, sub); err != nil {
					return err
				}
			}
			b++
		}
		if b == 0 {
			return tooMany("AIC+2 AIV block", b)
		}
		if r == 0 {
			s.nAICs, s.nAIVs = sp.blocks, 2*sp.blocks
		}
	case sp.aic != nil || sp.uni != nil:
		k, kind := sp.aic, asm.CoreAIC
		if k == nil {
			k, kind = sp.uni, asm.CoreUnified
		}
		for a := 0; a < m.nAIC && b < sp.blocks; a++ {
			if usedAIC[a] {
				continue
			}
			usedAIC[a] = true
			c := m.coreAt(r, a, kind)
			s.blockArr[r][b].aic = c
			if err := add(c, k, b, 0); err != nil {
				return err
			}
			b++
		}
		if b == 0 {
			return tooMany("AIC", b)
		}
		if r == 0 {
			s.nAICs = sp.blocks
		}
	case sp.aiv != nil:
		for a := 0; a < m.nAIV && b < sp.blocks; a++ {
			if usedAIV[a] {
				continue
			}
			usedAIV[a] = true
			c := m.coreAt(r, m.nAIC+a, asm.CoreAIV)
			s.blockArr[r][b].aivs[0] = c
			if err := add(c, sp.aiv, b, 0); err != nil {
				return err
			}
			b++
		}
		if b == 0 {
			return tooMany("AIV", b)
		}
		if r == 0 {
			s.nAIVs = sp.blocks
		}
	}
	s.next[r] = b
	if b == sp.blocks {
		return nil
	}
	s.wave = b
	// Blocks beyond cores: every block placed is a wave slot.
	for i := 0; i < b; i++ {
		ba := &s.blockArr[r][i]
		sl := &waveSlot{m: m, s: s, rank: r}
		if ba.aic != nil {
			sl.cores[sl.n], sl.kerns[sl.n] = ba.aic, ba.aic.kernel
			sl.n++
		}
		for _, c := range ba.aivs {
			if c != nil {
				sl.cores[sl.n], sl.kerns[sl.n] = c, c.kernel
				sl.n++
			}
		}
		sl.live = sl.n
		sl.w.hidx, sl.w.fn = -1, sl.start
		for _, c := range sl.cores[:sl.n] {
			c.slot = sl
		}
		m.waves = true
	}
	return nil
}

// coreDone is called when a core's kernel finished (pipes drained) at end.
func (m *Machine) coreDone(c *core, end int64) {
	m.live--
	if c.slot != nil {
		c.slot.done(end)
	}
	if end > m.now {
		// Keep the clock monotone: the run ends when the last core's last pipe does.
		m.runEndAt = max(m.runEndAt, end)
	}
}

func (m *Machine) endRun() {
	st := &m.steps[m.stepIdx-1]
	end := max(m.now, m.runEndAt)
	for _, c := range m.active {
		end = max(end, c.t)
	}
	m.now = end
	m.runEndAt = 0
	m.res.Runs = append(m.res.Runs, RunStat{Name: st.name, Start: m.runStart, End: end,
		TimeUS: m.prof.Seconds(end-m.runStart) * 1e6})
	if m.emitting {
		e := m.event(EvRunEnd, nil, asm.PipeInvalid, nil)
		e.RunName = st.name
		m.emit()
	}
	for _, c := range m.active {
		c.state = scIdle
	}
	m.running = false
	for _, rs := range m.ranks {
		rs.watchers = rs.watchers[:0]
	}
}

func (m *Machine) doReset(st *launchStep) {
	defer func() { m.exprInit = exprInitCache{} }() // the launch then writes the ranks
	for r := 0; r < m.nranks; r++ {
		if st.rank >= 0 && st.rank != r {
			continue
		}
		// initTensor skips tensors without a buffer, so in a timing-only run
		// only signals are reset: they stay real because control flow
		// depends on them (a poll of a flag left over from the last run).
		if err := m.initTensor(st.tensor, r, st.reset.Init); err != nil {
			m.fail(err)
			return
		}
		if m.emitting {
			word := "init"
			if st.reset.Init != nil && st.reset.Init.Kind == "poison" {
				word = "poison"
			}
			m.emitHostWrite(st.tensor, r, &m.ranks[r].gm[st.tensor.Index], word)
		}
	}
}

// event prepares the shared Event for kind on core c's pipe p.
func (m *Machine) event(kind EventKind, c *core, p asm.Pipe, op *asm.COp) *Event {
	e := m.blankEvent(kind, op)
	if c != nil {
		e.Agent = Agent{Rank: int32(c.rank.id), Core: int32(c.vid), Pipe: p}
		e.Iter = c.iter
		if p == asm.PipeS {
			e.Issued = c.issued
		}
	} else {
		e.Agent = Agent{Core: -1}
	}
	return e
}

// blankEvent is the shared Event emptied for kind and op, with no agent.
func (m *Machine) blankEvent(kind EventKind, op *asm.COp) *Event {
	e := &m.ev
	// Field by field: a composite-literal store of the whole struct went
	// through a temporary and a typed copy, a fifth of an observed run.
	e.Kind, e.Cycle, e.Start, e.End = kind, m.now, m.now, m.now
	e.Target, e.Op, e.Iter, e.Step = 0, op, nil, ""
	e.Accesses, e.Peers, e.Flags, e.Words = e.Accesses[:0], e.Peers[:0], e.Flags[:0], e.Words[:0]
	e.Flag, e.ID, e.Mode, e.Group, e.Value, e.Want = Flag{}, 0, 0, 0, 0, 0
	e.Issue, e.Issued, e.IssueCore = 0, 0, 0
	e.Deferred.plan = nil
	// Kernels goes with RunName: EvRunStart sets both, and a run's name
	// is never empty (planLaunch names it after its kernels).
	if e.Word != "" || e.Reason != "" || e.Blocked != nil || e.RunName != "" {
		e.Word, e.Reason, e.Blocked, e.RunName, e.Kernels = "", "", nil, "", nil
	}
	return e
}

// pipeEvent is event for pipe p's own events (an op it ran, a flag it set
// or waited for, a barrier), which set their iteration vector from the
// entry: the agent comes from the pipe (pipeState.rank, vid), so a
// completion reads none of the core's lines for it (four on 8 ranks, each
// a cache miss per event).
func (m *Machine) pipeEvent(kind EventKind, p *pipeState, op *asm.COp) *Event {
	if p.vid < 0 {
		return m.event(kind, p.c, p.p, op)
	}
	e := m.blankEvent(kind, op)
	e.Agent = Agent{Rank: int32(p.rank), Core: p.vid, Pipe: p.p}
	return e
}

// pipeFast sends the PipeObserver, if there is one, the kind event of
// pipe p's entry e from start to end (f for a flag's), and reports whether
// it did; the event goes as an Event otherwise (a composite's step, a
// virtual core pipeEvent asks the core for, no pipe: the scalar's set).
// It is a call in one line at each site: default.pgo's inlining in
// begin and complete is keyed by each call's line within them.
//
// Nearly every event is a flag's or a lean exec's, which goes as a record
// and a deferred listing (pipeRecord through deferTo): pipeFast writes
// those itself and calls nothing on their way, so nothing is spilled
// around calls (the listing and ObservePipe); any other event, or one
// that does not fit, takes pipeSlow, the whole path, which does for it
// what it did before. A non-nil Buf is only ever the recorder's
// (Machine.sink), so pipeObs is not nil; a negative vid fails the
// narrowness test. begin and complete call it, not inlined (with the
// shipped default.pgo), so the record's stores stay out of timing-only's
// code: inlined in begin they cost it 2 to 4 M on the quarter run (lint
// round 14).
func (m *Machine) pipeFast(kind EventKind, p *pipeState, e *entry, start, end int64, f Flag) bool {
	b := m.sink.Buf
	if b == nil || p == nil || e.hasStep {
		return m.pipeSlow(kind, p, e, start, end, f)
	}
	n := len(b.Recs)
	if n == cap(b.Recs) || uint64(uint32(p.vid)>>16|uint32(f.ID)>>8)|uint64(e.seq)>>32 != 0 {
		return m.pipeSlow(kind, p, e, start, end, f)
	}
	pend := kind == EvExec
	if pend {
		nd := len(b.Defs)
		if e.lean == leanNone || e.eff == exIndexed || !m.deferAcc || nd == cap(b.Defs) {
			return m.pipeSlow(kind, p, e, start, end, f)
		}
		b.Defs = b.Defs[:nd+1]
		d := &b.Defs[nd]
		d.plan, d.dyn, d.kind = e.plan, e.ldyn, e.lean
	}
	b.Recs = b.Recs[:n+1]
	r := &b.Recs[n]
	// Field by field: the whole record is written, with no temporary.
	r.Op, r.Issue, r.Issued = e.op, uint32(e.seq), 0
	r.Rank, r.Core, r.Pipe, r.Kind = p.rank, uint16(p.vid), p.p, kind
	r.Src, r.Dst, r.ID = f.Src, f.Dst, uint8(f.ID)
	r.NAcc, r.NIter, r.Deferred, r.Tag = 0, 0, pend, 0
	return true
}

// pipeSlow is pipeFast for the events it does not record itself: a record with
// listed accesses (pipeRecord), else a PipeEvent, else nothing.
func (m *Machine) pipeSlow(kind EventKind, p *pipeState, e *entry, start, end int64, f Flag) bool {
	if m.pipeObs == nil || p == nil || p.vid < 0 || e.hasStep {
		return false
	}
	if b := m.sink.Buf; b != nil && m.pipeRecord(b, kind, p, e, f) {
		return true
	}
	pe := &m.pev
	pe.Kind, pe.Agent, pe.Op = kind, Agent{Rank: int32(p.rank), Core: p.vid, Pipe: p.p}, e.op
	pe.Start, pe.End, pe.Issue = start, end, e.seq
	pe.Iter = e.iterVecUnless(m.iterLog)
	pe.Flag, pe.Accesses, pe.Deferred.plan = f, pe.Accesses[:0], nil
	if kind == EvExec {
		pe.Accesses = p.c.execAccesses(m, e, pe.Agent, pe.Accesses, &pe.Deferred)
	}
	m.pipeObs.ObservePipe(pe)
	return true
}

// pipeRecord writes pipeFast's event as a record into b, the
// PipeRecorder's buffer, if it has room and the numbers fit (p.rank is
// narrow already, p.vid not negative), and reports whether it did.
func (m *Machine) pipeRecord(b *PipeBuf, kind EventKind, p *pipeState, e *entry, f Flag) bool {
	n := len(b.Recs)
	if n == cap(b.Recs) || uint64(uint32(p.vid)>>16|uint32(f.ID)>>8)|uint64(e.seq)>>32 != 0 {
		return false
	}
	pend, nacc := kind == EvExec, 0
	if pend && !m.deferTo(b, e) {
		if pend, nacc = false, m.listTo(b, p, e); nacc < 0 {
			return false
		}
	}
	b.Recs = b.Recs[:n+1]
	r := &b.Recs[n]
	// Field by field: the whole record is written, with no temporary.
	r.Op, r.Issue, r.Issued = e.op, uint32(e.seq), 0
	r.Rank, r.Core, r.Pipe, r.Kind = p.rank, uint16(p.vid), p.p, kind
	r.Src, r.Dst, r.ID = f.Src, f.Dst, uint8(f.ID)
	r.NAcc, r.NIter, r.Deferred, r.Tag = uint8(nacc), 0, pend, 0
	return true
}

// deferTo appends to b's Defs lean exec entry e's deferred accesses
// (execAccesses) and reports whether it did: not when e lists accesses
// (not lean, an indexed op, an observer that does not defer).
func (m *Machine) deferTo(b *PipeBuf, e *entry) bool {
	nd := len(b.Defs)
	if e.lean == leanNone || e.eff == exIndexed || !m.deferAcc || nd == cap(b.Defs) {
		return false
	}
	b.Defs = b.Defs[:nd+1]
	d := &b.Defs[nd]
	d.plan, d.dyn, d.kind = e.plan, e.ldyn, e.lean
	return true
}

// listTo appends to b's Acc the accesses exec entry e lists (one that is
// not lean: execAccesses) and says how many, or -1, appending nothing,
// when they would be deferred or are too many for a record.
func (m *Machine) listTo(b *PipeBuf, p *pipeState, e *entry) int {
	if e.lean != leanNone && e.eff != exIndexed || !m.deferAcc {
		return -1 // deferTo found no room, or not every observer defers
	}
	a0 := len(b.Acc)
	if e.lean == leanNone && e.eff != exIndexed {
		// All execAccesses and accessesAs do for it (no Deferred: not
		// lean), without their two calls: a GM op's listing through its
		// template, 44 of a ring_final one's 390 instructions (lint round 26).
		b.Acc = m.tmplAccesses(int32(p.rank), p.vid, e, b.Acc)
	} else {
		b.Acc = p.c.execAccesses(m, e, Agent{Rank: int32(p.rank), Core: p.vid, Pipe: p.p}, b.Acc, &m.pev.Deferred)
	}
	n := len(b.Acc) - a0
	if n > math.MaxUint8 {
		b.Acc = b.Acc[:a0]
		return -1
	}
	return n
}

func (m *Machine) emit() {
	k := m.ev.Kind
	for i, o := range m.opt.Observers {
		if !m.skip[i][k] {
			o.Observe(&m.ev)
		}
	}
}

// emitInitialWrites tells observers the bounds and initial state of every GM
// object: Word "poison" for objects that start poisoned (reads before a write
// are uninitialised), "init" for every other initial contents or input.
func (m *Machine) emitInitialWrites() {
	if !m.emitting {
		return
	}
	for r, rs := range m.ranks {
		for _, t := range m.obj.Tensors {
			word := "init"
			if initOf(t).Kind == "poison" && !m.hasInput(t, r) {
				word = "poison"
			}
			m.emitHostWrite(t, r, &rs.gm[t.Index], word)
		}
	}
}

// hasInput reports whether an Input overrides t's contents on rank r.
func (m *Machine) hasInput(t *asm.TensorInfo, r int) bool {
	for _, in := range m.opt.Inputs {
		if in.Tensor == t.Name && (in.Rank < 0 || in.Rank == r) {
			return true
		}
	}
	return false
}

func (m *Machine) emitHostWrite(t *asm.TensorInfo, r int, o *gmObj, word string) {
	e := m.event(EvHostWrite, nil, asm.PipeInvalid, nil)
	e.Agent.Rank = int32(r)
	e.Word = word
	e.Accesses = append(e.Accesses[:0], Access{Space: asm.GM, Rank: int32(r), Core: -1, Lo: o.base,
		Hi: o.base + o.size, Write: true, Tensor: t})
	m.emit()
}
