// Package debug is the stepping debugger behind `ptoasm step`: it drives a
// machine one engine step at a time, stops at breakpoints (source lines and
// labels, flags, signal changes, writes to a range, a cycle) and shows what
// every core, pipe and queue is doing, the values in tiles and GM, flags,
// signals, the hazard detector's vector clocks and its findings so far.
//
// The machine is deterministic, so stepping back is a replay: a fresh machine
// re-runs from the start to an earlier stop.
//
// Positions are counted in events. An event is one of: an instruction issued
// by a scalar into a pipe's queue (issue); an instruction beginning on a pipe
// (start); an instruction finishing on a pipe (done); a set_flag firing or a
// wait_flag being satisfied (set, wait); a barrier completing; an FFTS set or
// wait; a TNOTIFY, a satisfied TWAIT or TTEST, a syncall; and a scalar
// instruction such as ld or st. Stalls, host writes, run and kernel ends are
// shown but not counted. One engine step may produce several events (a pipe
// finishes one op and starts the next in the same wake-up); the debugger
// stops between engine steps, so a motion can pass a few more events than
// asked for, and every event it passed in its last engine step is printed.
package debug

import (
	"errors"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
	"github.com/ptoasm/ptoasm/machine/hazard"
)

// Options configure a Debugger.
type Options struct {
	// Machine configures each machine the debugger builds (Observers are
	// replaced by the debugger's own).
	Machine machine.Options
}

// kind is the debugger's event kind.
type kind uint8

const (
	kIssue kind = iota
	kStart
	kDone
	kSet
	kWait
	kBarrier
	kCrossSet
	kCrossWait
	kNotify
	kSignal
	kSyncAll
	kScalar // a scalar instruction with a memory effect (ld, st)
	// Not counted:
	kStall
	kKernelEnd
	kRunStart
	kRunEnd
	kDeadlock
)

var kindNames = [...]string{kIssue: "issue", kStart: "start", kDone: "done", kSet: "set", kWait: "wait", kBarrier: "barrier",
	kCrossSet: "ffts-set", kCrossWait: "ffts-wait", kNotify: "notify", kSignal: "twait", kSyncAll: "syncall", kScalar: "scalar",
	kStall: "stall", kKernelEnd: "kernel-end", kRunStart: "run-start", kRunEnd: "run-end", kDeadlock: "deadlock"}

func (k kind) counted() bool { return k < kStall }

const maxIter = 8

// event is a debugger event: a compact copy of what it needs to print and
// to match breakpoints.
type event struct {
	n          int64 // event number, 1-based; 0 for uncounted events
	kind       kind
	start, end int64
	agent      machine.Agent
	target     asm.Pipe
	op         *asm.COp
	iter       [maxIter]int64
	niter      int8
	flag       machine.Flag
	step       string
	value      int64
	word       string
	reason     string
}

func (e *event) iterSlice() []int64 { return e.iter[:e.niter] }

// Debugger is one debugging session.
type Debugger struct {
	obj *asm.Object
	opt Options

	m   *machine.Machine
	det *hazard.Detector

	count  int64   // events so far
	steps  int64   // engine steps so far
	hist   []int64 // event count after each engine step (for back)
	done   bool
	err    error
	ended  bool // Run's end-of-program checks were reported
	cycle  int64
	replay bool

	// events of the engine step in progress
	cur    []event
	recent []event // the last few counted events of the current motion
	passed int64   // counted events passed by the current motion

	bps    []*breakpoint
	nextBP int
	hits   []hit

	curRank, curCore int

	// moving is set while a motion (step, next, continue, ...) runs;
	// interrupt asks it to stop (Interrupt, from another goroutine).
	moving, interrupt atomic.Bool
}

// Interrupt stops the motion under way (a long `continue`) at its next
// engine step, which then reports where it stopped and returns to the
// prompt: Ctrl-C in `ptoasm step`. It reports false when no motion runs.
// Safe to call from any goroutine.
func (d *Debugger) Interrupt() bool {
	if !d.moving.Load() {
		return false
	}
	d.interrupt.Store(true)
	return true
}

// New builds a debugger for obj and runs the machine up to the start of the
// first run, so that every core of it is placed.
func New(obj *asm.Object, opt Options) (*Debugger, error) {
	d := &Debugger{obj: obj, opt: opt, nextBP: 1}
	if err := d.reset(); err != nil {
		return nil, err
	}
	// The first engine step applies the host's initial writes and places the
	// cores of the first run.
	d.replay = true
	d.stepEngine()
	d.replay = false
	if cs := d.m.Cores(); len(cs) > 0 {
		d.curRank, d.curCore = cs[0].Rank, cs[0].Core
	}
	return d, nil
}

// reset builds a fresh machine and detector at cycle 0.
func (d *Debugger) reset() error {
	var m *machine.Machine
	det := hazard.New(hazard.Options{CoreName: func(r, c int) string { return m.CoreName(r, c) },
		Placement: func(run, r, c int) (machine.Placement, bool) { return m.Placement(run, r, c) }, Serial: true})
	opt := d.opt.Machine
	opt.Observers = []machine.Observer{det, (*observer)(d)}
	m, err := machine.New(d.obj, opt)
	if err != nil {
		return err
	}
	d.m, d.det = m, det
	d.count, d.steps, d.hist = 0, 0, d.hist[:0]
	d.done, d.err, d.ended, d.cycle = false, nil, false, 0
	return nil
}

// Machine is the machine being debugged (it changes after `back`).
func (d *Debugger) Machine() *machine.Machine { return d.m }

type observer Debugger

func (o *observer) Observe(e *machine.Event) { (*Debugger)(o).observe(e) }

func (d *Debugger) observe(e *machine.Event) {
	var k kind
	switch e.Kind {
	case machine.EvIssue:
		k = kIssue
	case machine.EvExec:
		k = kDone
		if e.Agent.Pipe == asm.PipeS {
			k = kScalar
		}
	case machine.EvFlagSet:
		k = kSet
	case machine.EvFlagWait:
		k = kWait
	case machine.EvBarrier:
		k = kBarrier
	case machine.EvCrossSet:
		k = kCrossSet
	case machine.EvCrossWait:
		k = kCrossWait
	case machine.EvNotify:
		k = kNotify
	case machine.EvSignalWait:
		k = kSignal
	case machine.EvSyncAll:
		k = kSyncAll
	case machine.EvStall:
		k = kStall
	case machine.EvKernelEnd:
		k = kKernelEnd
	case machine.EvRunStart:
		k = kRunStart
	case machine.EvRunEnd:
		k = kRunEnd
	case machine.EvDeadlock:
		k = kDeadlock
	default:
		return
	}
	ev := event{kind: k, start: e.Start, end: e.End, agent: e.Agent, target: e.Target, op: e.Op, flag: e.Flag,
		step: e.Step, value: e.Value, word: e.Word, reason: e.Reason}
	if k == kRunStart || k == kRunEnd {
		ev.word = e.RunName
	}
	ev.niter = int8(copy(ev.iter[:], e.Iter))
	d.add(&ev, e.Accesses)
}

// add numbers an event, checks breakpoints against it and keeps it for
// printing.
func (d *Debugger) add(ev *event, acc []machine.Access) {
	if ev.kind.counted() {
		d.count++
		ev.n = d.count
		d.passed++
	}
	if !d.replay {
		d.checkEvent(ev, acc)
	}
	d.cur = append(d.cur, *ev)
}

// heapEvery is how many engine steps pass between two looks at the heap
// (machine.Options.MaxHeap), as often as Run looks.
const heapEvery = 1 << 12

// stepEngine runs one engine step and collects its events in d.cur.
func (d *Debugger) stepEngine() {
	d.cur = d.cur[:0]
	if d.done {
		return
	}
	if d.steps%heapEvery == 0 {
		d.m.HeapExceeded() // a stop is what Step returns next
	}
	done, err := d.m.Step()
	if st, ok := d.m.LastStarted(); ok {
		ev := event{kind: kStart, start: st.Start, end: st.End, agent: st.Agent, op: st.Op, step: st.Step}
		ev.niter = int8(copy(ev.iter[:], st.Iter))
		d.add(&ev, st.Accesses)
	}
	d.steps++
	d.hist = append(d.hist, d.count)
	d.cycle = max(d.cycle, d.m.Now())
	if err != nil {
		d.done, d.err = true, err
		d.det.NoteError(err)
	} else if done {
		d.done = true
	}
	if !d.replay {
		d.checkSignals()
	}
	for i := range d.cur {
		if d.cur[i].kind.counted() || d.cur[i].kind >= kKernelEnd {
			d.recent = append(d.recent, d.cur[i])
		}
	}
	if len(d.recent) > 4*maxShown {
		d.recent = append(d.recent[:0], d.recent[len(d.recent)-maxShown:]...)
	}
}

// maxShown bounds how many passed events a motion prints.
const maxShown = 20

// motion runs engine steps until stop says so, a breakpoint hits or the
// program ends, then prints the events it passed and where it stopped.
func (d *Debugger) motion(w io.Writer, stop func() bool) {
	if d.done {
		d.finish(w)
		return
	}
	d.hits = d.hits[:0]
	d.recent = d.recent[:0]
	d.passed = 0
	d.interrupt.Store(false)
	d.moving.Store(true)
	interrupted := false
	for !d.done {
		if d.cycleBreak() {
			break
		}
		if d.interrupt.Load() {
			interrupted = true
			break
		}
		d.stepEngine()
		if len(d.hits) > 0 || stop() {
			break
		}
	}
	d.moving.Store(false)
	if interrupted {
		fmt.Fprintln(w, "interrupted")
	}
	d.report(w)
}

// report prints the events of the last motion and the stop reason.
func (d *Debugger) report(w io.Writer) {
	shown := d.recent
	if len(shown) > maxShown {
		shown = shown[len(shown)-maxShown:]
	}
	nShown := int64(0)
	for i := range shown {
		if shown[i].n > 0 {
			nShown++
		}
	}
	if d.passed > nShown {
		fmt.Fprintf(w, "  ... %d earlier events not shown\n", d.passed-nShown)
	}
	for i := range shown {
		d.writeEvent(w, &shown[i])
	}
	for _, h := range d.hits {
		fmt.Fprintf(w, "breakpoint %d: %s\n", h.bp.id, h.what)
		if h.bp.kind == bpLine || h.bp.kind == bpFlag {
			d.curRank, d.curCore = h.rank, h.core
		}
	}
	if d.done {
		d.finish(w)
		return
	}
	fmt.Fprintf(w, "stopped at cycle %d, event #%d\n", d.cycle, d.count)
}

// finish reports the end of the program once: its result checks, or the
// error that stopped it.
func (d *Debugger) finish(w io.Writer) {
	if d.ended {
		fmt.Fprintf(w, "the program has ended at cycle %d (event #%d); `back` steps back\n", d.cycle, d.count)
		return
	}
	d.ended = true
	if d.err != nil {
		msg := d.err.Error()
		if le := (*machine.LimitError)(nil); errors.As(d.err, &le) {
			msg = le.WithRaise() // which step flag raises the limit it hit
		}
		fmt.Fprintf(w, "the program stopped at cycle %d (event #%d): %s\n", d.cycle, d.count, msg)
		return
	}
	// Run on a finished machine only collects the result and runs the checks.
	res, err := d.m.Run()
	if res != nil {
		d.cycle = max(d.cycle, res.Cycles)
	}
	fmt.Fprintf(w, "the program finished at cycle %d after %d events", d.cycle, d.count)
	if err != nil {
		fmt.Fprintf(w, ": %v", err)
	} else if res != nil {
		for _, c := range res.Checks {
			if !c.OK {
				fmt.Fprintf(w, "; check %s failed", c.Name)
			}
		}
	}
	fmt.Fprintln(w)
	if n := len(d.det.Findings()); n > 0 {
		fmt.Fprintf(w, "%d findings: `findings` lists them\n", n)
	}
}

// back steps back by n events: a fresh machine replays the engine steps up
// to the last stop at or before event count-n.
func (d *Debugger) back(w io.Writer, n int64) error {
	target := d.count - n
	if target < 0 {
		target = 0
	}
	// The last engine step whose event count is at most target; step 1 (run
	// placement) is the earliest stop.
	k := int64(1)
	for i := len(d.hist) - 1; i >= 1; i-- {
		if d.hist[i] <= target {
			k = int64(i) + 1
			break
		}
	}
	if err := d.reset(); err != nil {
		return err
	}
	d.replay = true
	for d.steps < k && !d.done {
		d.stepEngine()
	}
	d.replay = false
	d.rearm()
	d.recent = d.recent[:0]
	fmt.Fprintf(w, "replayed %d engine steps from the start\n", d.steps)
	for i := range d.cur {
		d.writeEvent(w, &d.cur[i])
	}
	fmt.Fprintf(w, "stopped at cycle %d, event #%d\n", d.cycle, d.count)
	return nil
}
