package hazard

import (
	"runtime"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
)

// The detector can run beside the machine on a second core: Observe copies
// each event into a batch and hands full batches to a goroutine that does
// the happens-before work, so a run with the detector takes about as long
// as the slower of the two halves rather than their sum (issue 9). The
// goroutine sees the same events in the same order as a serial detector,
// so findings are identical; every method that reads the detector's state
// first waits for it to drain.

const (
	batchEvents = 2048
	// Arenas sized for the common event (one or two accesses, a shallow
	// loop nest) and few whole copies: a batch that fills one early is
	// handed over early. Small batches keep a short run's setup cheap.
	batchAccess = 2 * batchEvents
	batchIter   = 2 * batchEvents
	batchWhole  = batchEvents / 8
	// batchesInFlight bounds how far the machine may run ahead; three lets
	// one batch fill while one is processed and one waits.
	batchesInFlight = 3
)

// serialPrefix events are observed in place before the goroutine starts:
// most programs end sooner, and a goroutine and its batches would cost them
// more than they save. A variable so tests can send every event through the
// goroutine.
var serialPrefix = 1 << 10

// batch is a run of copied events. The arenas are preallocated and never
// grow, so the copies' slices stay valid until the batch is recycled.
type batch struct {
	// items is the batch in order. Execs and flag sets and waits, nearly
	// every event the detector takes, travel compact: the fields it reads,
	// with their slices in the arenas, a quarter of a whole event's bytes.
	// The rest are whole copies in ev.
	items []item
	ev    []machine.Event
	acc   []machine.Access
	iter  []int64
	peers []int32
	flags []machine.Flag
}

// item is one event of a batch: compact, or an index into ev. It is one
// cache line (64 bytes): the machine writes it on one CPU and the detector
// reads it on the other, so every line it spans moves between them.
type item struct {
	op    *asm.COp
	agent machine.Agent
	kind  machine.EventKind
	flag  machine.Flag
	// acc0 and nacc place the accesses in acc; nacc < 0 marks a whole copy,
	// ev[acc0].
	acc0, nacc int32
	iter0      int32
	niter      int32
	issue      int64
	issued     int64
}

func newBatch() *batch {
	return &batch{
		items: make([]item, 0, batchEvents),
		ev:    make([]machine.Event, 0, batchWhole),
		acc:   make([]machine.Access, 0, batchAccess),
		iter:  make([]int64, 0, batchIter),
		peers: make([]int32, 0, batchWhole),
		flags: make([]machine.Flag, 0, batchWhole),
	}
}

// reset empties the batch for reuse. It does not clear the old contents:
// that would write every line the machine's goroutine writes next from the
// other core, and the references it holds (ops, infos) live as long as the
// program anyway; drain clears the batches it keeps.
func (b *batch) reset() {
	b.items = b.items[:0]
	b.ev, b.acc, b.iter, b.peers, b.flags = b.ev[:0], b.acc[:0], b.iter[:0], b.peers[:0], b.flags[:0]
}

// fits reports whether e's copy fits the batch's remaining room.
func (b *batch) fits(e *machine.Event) bool {
	return len(b.items) < cap(b.items) && len(b.ev) < cap(b.ev) &&
		len(b.acc)+len(e.Accesses) <= cap(b.acc) &&
		len(b.iter)+len(e.Iter) <= cap(b.iter) &&
		len(b.peers)+len(e.Peers) <= cap(b.peers) &&
		len(b.flags)+len(e.Flags) <= cap(b.flags)
}

// arena appends src to *a and returns the copy; a copy that could never fit
// an empty batch gets its own slice.
func arena[T any](a *[]T, src []T) []T {
	if len(src) == 0 {
		return nil
	}
	if len(*a)+len(src) > cap(*a) {
		return append([]T(nil), src...)
	}
	n := len(*a)
	*a = append(*a, src...)
	return (*a)[n:len(*a):len(*a)]
}

// add copies e into the batch.
func (b *batch) add(e *machine.Event) {
	switch e.Kind {
	case machine.EvExec, machine.EvFlagSet, machine.EvFlagWait:
		if e.Step == "" && e.Agent.Core >= 0 && len(e.Accesses) <= cap(b.acc) && len(e.Iter) <= cap(b.iter) {
			b.items = append(b.items, item{op: e.Op, agent: e.Agent, kind: e.Kind, flag: e.Flag,
				acc0: int32(len(b.acc)), nacc: int32(len(e.Accesses)),
				iter0: int32(len(b.iter)), niter: int32(len(e.Iter)),
				issue: e.Issue, issued: e.Issued})
			b.acc = append(b.acc, e.Accesses...)
			b.iter = append(b.iter, e.Iter...)
			return
		}
	}
	b.items = append(b.items, item{kind: e.Kind, acc0: int32(len(b.ev)), nacc: -1})
	b.ev = append(b.ev, *e)
	c := &b.ev[len(b.ev)-1]
	c.Accesses = arena(&b.acc, e.Accesses)
	c.Iter = arena(&b.iter, e.Iter)
	c.Peers = arena(&b.peers, e.Peers)
	c.Flags = arena(&b.flags, e.Flags)
	if e.Blocked != nil {
		c.Blocked = append([]machine.Blocked(nil), e.Blocked...)
	}
}

// replay runs the detector over the batch's events, in order.
func (d *Detector) replay(b *batch) {
	e := &d.scratch
	for i := range b.items {
		it := &b.items[i]
		if it.nacc < 0 {
			d.observe(&b.ev[it.acc0])
			continue
		}
		// Only the fields add kept: the detector reads no others of these
		// kinds, and scratch serves nothing else.
		e.Kind, e.Op, e.Agent, e.Flag, e.Issue, e.Issued = it.kind, it.op, it.agent, it.flag, it.issue, it.issued
		e.Accesses = b.acc[it.acc0 : it.acc0+it.nacc : it.acc0+it.nacc]
		e.Iter = b.iter[it.iter0 : it.iter0+it.niter : it.iter0+it.niter]
		d.observe(e)
	}
	*e = machine.Event{}
}

// front is what Observe reads on the machine's goroutine for every event.
// It has cache lines of its own: beside the fields the detector's goroutine
// writes per event (scratch, notes), each read missed, on 4% of a GEMM24
// lint's samples.
type front struct {
	_ [64]byte
	// pipe is the goroutine the detector runs on beside the machine, if
	// started; events counts those observed in place before it.
	pipe   *pipeline
	events int
	inline bool // Serial or one CPU: never start the goroutine
	_      [64]byte
}

// pipeline is the hand-off between the machine's goroutine and the
// detector's. It exists from the first event after a drain until the next
// drain, so an idle detector holds no goroutine.
type pipeline struct {
	cur  *batch
	full chan *batch
	free chan *batch
	done chan struct{}
	// failed is a panic of the detector's goroutine, raised again by drain.
	failed any
}

// parallel reports whether Observe should hand events to a goroutine.
func (d *Detector) parallel() bool {
	return !d.opt.Serial && runtime.GOMAXPROCS(0) > 1
}

// push queues e for the detector's goroutine, starting it if needed.
func (d *Detector) push(e *machine.Event) {
	p := d.front.pipe
	if p == nil {
		p = d.startPipeline()
	}
	if !p.cur.fits(e) && len(p.cur.items) > 0 {
		p.full <- p.cur
		p.cur = <-p.free
	}
	p.cur.add(e)
}

func (d *Detector) startPipeline() *pipeline {
	p := &pipeline{
		full: make(chan *batch, batchesInFlight),
		free: make(chan *batch, batchesInFlight),
		done: make(chan struct{}),
	}
	// Reuse the last pipeline's batches: one run after another should not
	// allocate its arenas again.
	get := func() *batch {
		if n := len(d.spare); n > 0 {
			b := d.spare[n-1]
			d.spare = d.spare[:n-1]
			return b
		}
		return newBatch()
	}
	for range batchesInFlight - 1 {
		p.free <- get()
	}
	p.cur = get()
	d.front.pipe = p
	go func() {
		defer close(p.done)
		for b := range p.full {
			if p.failed == nil {
				p.replayCaught(d, b)
			}
			b.reset()
			p.free <- b
		}
	}()
	return p
}

// replayCaught is replay that keeps a panic for drain to raise on the
// caller's goroutine, as an inline detector would have; the batches that
// follow are consumed unread so the machine never blocks.
func (p *pipeline) replayCaught(d *Detector, b *batch) {
	defer func() {
		if r := recover(); r != nil {
			p.failed = r
		}
	}()
	d.replay(b)
}

// drain waits until every event observed so far has been processed and
// stops the goroutine; it is called before anything reads the state.
func (d *Detector) drain() {
	p := d.front.pipe
	if p == nil {
		return
	}
	if len(p.cur.items) > 0 {
		p.full <- p.cur
	} else {
		p.free <- p.cur
	}
	close(p.full)
	<-p.done
	close(p.free)
	for b := range p.free {
		clear(b.ev[:cap(b.ev)])
		clear(b.items[:cap(b.items)])
		d.spare = append(d.spare, b)
	}
	d.front.pipe = nil
	if p.failed != nil {
		panic(p.failed)
	}
}

// CompositeIssuesOnly implements machine.IssueFilter: an ordinary op's
// issue is told by the numbers on its events (Event.Issue, Event.Issued); a
// composite's keeps the entry its steps chain through.
func (d *Detector) CompositeIssuesOnly() bool { return true }

// Flush implements machine.Flusher: the machine calls it when Run returns,
// so the detector's goroutine ends with the run.
func (d *Detector) Flush() { d.drain() }
