package machine

import (
	"errors"
	"math"

	"github.com/ptoasm/ptoasm/asm"
)

// Stretches: a core's own agents in a local order (issue 22, round 22).
//
// Most wake-ups touch nothing outside their core: a pipe completing a
// set_flag, wait_flag or a cube, vector or L1→L0 op and beginning the
// next, a scalar issuing into its own queues. Such an event commutes with
// every other core's events, which cannot reach this core's pipes, queues
// or flags (they reach a core only by waking a scalar that waits on
// something outside it: an FFTS set, a GM write, an SDMA completion, a
// syncall). So after a global event of core C that is local, C's next
// events run at once, in C's own (cycle, agent, seq) order, ahead of the
// global clock, for as long as each is local and C's earliest pending
// wake-up is one the stretch holds: their wake-ups stay in the
// scheduler's pend list instead of its queues, and go there when the
// stretch ends. What reaches outside the core (a GM transfer's booking of
// the GM port, L2 and links, a completion that writes GM or sets FFTS, a
// scalar op that syncs with the clock, a kernel's end) stops the stretch
// and takes its place in the global order.
//
// What makes it exact:
//   - each event of a stretch is C's earliest, so C's events keep their
//     order, and one C's scalar resumes is queued at its own time (the
//     rule TestResumeAheadIsLocal shows gives the model's results);
//   - a stretch starts only while C's scalar waits for nothing outside the
//     core (scRunning, scQueueFull, scDrain, scFlag) and C is no wave
//     slot's; the scalar cannot start such a wait inside one (its
//     syncTime fails there, and so does every op but exec and flag issues,
//     and the kernel's end: the scalar sleeps and runs it in global order);
//   - the cycle guards: no event past MaxCycles runs in a stretch, nor one
//     the idle guard might stop; an exec begun ahead of the clock is work
//     in flight for the idle guard only once the clock is past it
//     (aheadWE), so a guard trips no later than it would have;
//   - a run that ends in an error (a fault, a limit, a deadlock) is run
//     again from the start without stretches (Run), so its partial report
//     is the model's; the wall-clock limit and a cancel are not repeated.
//
// Nothing runs in stretches while an observer listens that does not take
// them (StretchObserver: the hazard detector does, and then an op with a
// GM operand completes in the global order too, and Run's repeat after an
// error is the observer's only run), in a run the debugger stepped, with
// tprint going to a writer, or with a zero-cycle flag cost (a begin would
// complete at once and begin what follows unchecked). TestStretchIsExact
// runs every shipped program with and without them, and
// programs.TestStretchesKeepFindings lints every one with and without.

// strHorizon bounds how far a stretch runs ahead of the clock: its
// wake-ups then still fall in the wheel when it ends.
const strHorizon = wheelSize / 2

// strProbe is how many stretches make a window that strPays judges, and
// strMinEvents the events a stretch must run on average to pay for its
// start and end (taking its core's wake-ups out of the schedule and
// putting them back: about as much as the global order spends on 3-4
// events). A window that falls short pauses stretches for strPauseCycles
// simulated cycles. The 8-rank allgather_gemm's stretches run 1.9 events
// each in its first 4096 and 16 over its first 16384; at 384 ranks
// ring_final's polling cores run about 3, and stretches without a pause
// made its timing-only run 31% dearer. The choice changes no output: a
// run with stretches, without, or with them paused and resumed anywhere
// between two gives the same results (TestStretchIsExact).
const (
	strProbe       = 1 << 12
	strMinEvents   = 4
	strPauseCycles = 1 << 16
)

// strPays ends a window of strProbeAt stretches: when they ran too few
// events to pay for themselves, stretches pause for strPauseN cycles.
func (m *Machine) strPays() {
	if m.strEv < m.strProbeAt*m.strMinEv {
		m.strPause = m.now + m.strPauseN
		m.strPauses++
	}
	m.strN, m.strEv = 0, 0
}

// Stretched says whether the run used stretches and whether Run repeated
// it without them (it ended in an error): for tests that compare a run
// with and without them (Options.NoStretches).
func (m *Machine) Stretched() (ran, reran bool) { return m.strRan, m.reran }

// errRerun marks a run to be repeated without stretches.
func rerunnable(err error) bool {
	if err == ErrCancelled {
		return false
	}
	var le *LimitError
	if errors.As(err, &le) && (le.Kind == LimitTime || le.Kind == LimitMemory) {
		return false // a second run would meet the same wall
	}
	var be *BudgetError
	if errors.As(err, &be) && be.AfterRun {
		return false // the run ended: only a check did not fit, and would not again
	}
	return true
}

// noWake is core.strAt's value for an agent with no wake-up.
const noWake = math.MaxInt64

// strOf says whether global event w starts a stretch: it returns w's core,
// with the machine in stretch mode (schedule keeps wake-ups out of the
// queues, and a resumed scalar is queued, not inline), or nil. An agent
// held (waker.held) runs this event in the global order.
func (m *Machine) strOf(w *waker) *core {
	if !m.strOK || w.at < m.strPause {
		// Inlined: a lint's events pay a test, not a call, and so do
		// the paused windows' (strPays; 97% of the 384-rank ring_final's
		// cycles, where the call cost 45 M instructions, round 25).
		return nil
	}
	return m.strStart(w)
}

// strStart is strOf for a run that may use stretches, past a pause.
func (m *Machine) strStart(w *waker) *core {
	if w.held {
		// In the waker's own line, which the event has just read: a
		// global event that runs held touches none of its core's lines
		// here (round 25).
		w.held = false
		return nil
	}
	var c *core
	if p := w.pipe; p != nil {
		c = p.c
		if !p.strLocal(w.at) {
			return nil
		}
	} else if c = w.scalar; c == nil {
		return nil
	} else {
		// A scalar's wake-up never starts a stretch: such stretches ran
		// 0.04-0.21 events each (cube scalars: 279k of 295k empty at the
		// 8-rank quarter run), too few to pay for their start and end.
		// Inside a pipe's stretch the scalar still runs (stretch). One
		// that could have started counts as an empty stretch toward the
		// window (strPays), so a run of many such (ring_final at 384
		// ranks) still pauses its pipes' short stretches.
		if c.strScalar(m.waves) {
			if m.strN++; m.strN == m.strProbeAt {
				m.strPays()
			}
		}
		return nil
	}
	// The agents' wake-ups by agent: the queued ones' now, pendAdd's
	// during the stretch. The scalar, then the pipes, written out: a loop
	// over agentWaker cost about 40 instructions an agent (round 25).
	a := &c.strAt
	a[asm.PipeS] = noWake
	if c.wake.armed {
		a[asm.PipeS] = c.wake.at
	}
	for i := asm.PipeS + 1; i < asm.PipeALL; i++ {
		a[i&7] = noWake
		if p := c.pipes[i]; p != nil && p.wake.w.armed {
			a[i&7] = p.wake.w.at
		}
	}
	m.batch = false
	m.strRan = true
	return c
}

// agentWaker is the waker of core c's agent i (the scalar for PipeS).
func (c *core) agentWaker(i asm.Pipe) *waker {
	if i == asm.PipeS {
		return &c.wake
	}
	return &c.pipes[i].wake.w
}

// strIdle says whether core c's state lets a stretch run: its scalar waits
// for nothing outside the core, and it belongs to no wave slot (which
// shares the scalar's agent key and starts the next block). waves is
// Machine.waves: without it no core has a slot, and the slot's line (far
// from state's) stays cold (round 25).
func (c *core) strIdle(waves bool) bool {
	switch c.state {
	case scRunning, scQueueFull, scDrain, scFlag:
		return !waves || c.slot == nil
	}
	return false
}

// strScalar says whether the scalar's run at its wake-up can be in a
// stretch: no composite op's steps are pending (they may touch anything).
func (c *core) strScalar(waves bool) bool {
	return c.state == scRunning && c.mi >= len(c.micro) && (!waves || c.slot == nil)
}

// strLocal says whether pipe p's wake-up at cycle now, a global event,
// touches nothing outside its core (strOf): the op in flight completes
// locally (doneLocal) and what begins after it, when ready, books nothing
// shared (beginLocal). A begin takes at least a cycle (strOK), so at most
// one entry begins. Inside a stretch the pipe checks the same where it
// acts (run, begin) and parks (strPark).
func (p *pipeState) strLocal(now int64) bool {
	if !p.c.strIdle(p.m.waves) {
		return false
	}
	i := 0
	if p.busy {
		if now < p.end {
			return true
		}
		if !doneLocal(p.q.Head()) {
			return false
		}
		i = 1
	}
	e := p.q.At(i)
	return e == nil || e.ready > now || p.beginLocal(e)
}

// doneLocal says whether completing e touches nothing outside its core: a
// flag or barrier entry, or an op whose plan says strDone (no data effect,
// no GM write, no unit flag); not an FFTS set (fireCross).
func doneLocal(e *entry) bool {
	return e.kind != enFFTSSet && (e.kind != enExec || e.plan != nil && e.plan.strDone)
}

// beginLocal says whether beginning e on p books nothing shared: a sync
// entry, or a cube, vector or MTE1 op whose plan says strDone. A
// GM-facing pipe's ops book the GM port, the L2 or a link (cost).
func (p *pipeState) beginLocal(e *entry) bool {
	if e.kind != enExec {
		return true
	}
	if pl := e.plan; pl == nil || !pl.strDone {
		return false
	}
	switch p.p {
	case asm.PipeM, asm.PipeV, asm.PipeMTE1:
		return true
	}
	return false
}

// strTimes is a core's agents' wake-ups in a stretch, by pipe (core.strAt).
type strTimes [8]int64

// strPark is a pipe's wake-up in a stretch that met what reaches outside
// the core (run, begin): it is held for the global order at the current
// cycle, where the rest of the wake-up runs.
func (p *pipeState) strPark() {
	p.wake.w.held = true
	p.m.schedule(&p.wake.w, p.m.now, p.key())
}

// stretch runs core c's next events after the global event that started
// the stretch (strOf), while each is c's earliest and local, then puts the
// clock back and the wake-ups it left into the queues. It returns how many
// events it ran: events counts them toward its next look at the wall clock
// and the heap (overTime), which a linted loop racing with itself otherwise
// reached 40% later in cycles and heap (lint round 17).
func (m *Machine) stretch(c *core) int {
	g := m.now
	w0 := m.workEnd
	// The latest cycle a stretch may run: not past a cycle guard, nor where
	// the idle guard (with no work begun in the stretch) might stop the
	// run; the global order takes those.
	lim := min(m.opt.MaxCycles, g+strHorizon-1)
	if w0 <= math.MaxInt64-m.opt.MaxIdleCycles {
		lim = min(lim, w0+m.opt.MaxIdleCycles)
	}
	a := &c.strAt
	ev := m.strEv
	ev0 := ev
	for m.err == nil {
		// c's earliest wake-up, the agents in key order: a tie goes to the
		// lower key, as in the global order. Written out on purpose: a
		// call to a function of it cost 30 instructions an event, and a
		// loop over a[2:] took the quarter run from 2 471.9 M to 2 736.4 M
		// instructions (+10.7%, callgrind).
		at, i := a[1], asm.Pipe(1)
		if a[2] < at {
			at, i = a[2], 2
		}
		if a[3] < at {
			at, i = a[3], 3
		}
		if a[4] < at {
			at, i = a[4], 4
		}
		if a[5] < at {
			at, i = a[5], 5
		}
		if a[6] < at {
			at, i = a[6], 6
		}
		if a[7] < at {
			at, i = a[7], 7
		}
		if at > lim {
			break
		}
		w := c.agentWaker(i)
		if w.held {
			break
		}
		if i == asm.PipeS && c.mi < len(c.micro) {
			break // a composite op's steps may touch anything
		}
		if w.loc != locPend {
			m.unqueue(w) // queued before the stretch
		}
		w.loc, w.armed = locNone, false
		a[i&7] = noWake
		m.now = at
		ev++
		if i != asm.PipeS {
			w.pipe.run()
		} else {
			c.runScalar()
		}
	}
	m.strT = max(m.strT, m.now)
	m.strEv = ev
	if m.strN++; m.strN == m.strProbeAt {
		m.strPays()
	}
	if m.workEnd > w0 {
		// Work begun ahead of the clock counts for the idle guard once
		// the clock has passed the stretch (foldIdle).
		m.aheadWE = max(m.aheadWE, m.workEnd)
		m.aheadAt = max(m.aheadAt, m.now)
		m.workEnd = w0
	}
	m.now = g
	m.batch = true
	m.placePend()
	return int(ev - ev0)
}

// foldIdle is called where the idle guard would stop the run at cycle at:
// the work begun in stretches that the clock has passed counts (it began
// before at in the global order), and it reports whether the guard still
// stops the run.
func (m *Machine) foldIdle(at int64) bool {
	if at > m.aheadAt && m.aheadWE > m.workEnd {
		m.workEnd = m.aheadWE
	}
	return at-m.workEnd > m.opt.MaxIdleCycles
}

// strPark is a scalar's op that must run in the global order, met in a
// stretch: the scalar sleeps at its own time, held for the global order.
func (c *core) strPark() bool {
	c.wake.held = true
	c.sleep()
	return false
}
