package hazard

import (
	"math"
	"runtime"

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
	batchIter   = 4 * batchEvents // allgather_gemm's compute loop is 7 deep
	batchWhole  = batchEvents / 8
	// batchesEager are made when the goroutine starts: one fills while one
	// is replayed and one waits. More, up to batchesInFlight, are made only
	// when the machine finds none free: where the two goroutines run at
	// nearly the same speed (a linted 8-rank allgather_gemm) the slack
	// absorbs their bursts: 2.47 → 2.26 s with 64-byte items, 2.29 → 2.26 s
	// with today's. Made up front (or all on demand, none up front), they
	// cost GEMM24's lint, which the detector keeps up with, 5–10%.
	batchesEager    = 3
	batchesInFlight = 8
)

// serialPrefix events are observed in place before the goroutine starts:
// most programs end sooner, and a goroutine and its batches would cost them
// more than they save. A variable so tests can send every event through the
// goroutine.
var serialPrefix = 1 << 10

// batch is a run of copied events. The arenas are preallocated and never
// grow, so the copies' slices stay valid until the batch is recycled.
type batch struct {
	// Recs is the batch in order (items). Execs and flag sets and waits,
	// nearly every event the detector takes, travel compact: the fields it
	// reads, a 32-byte item with their slices in the arenas (Acc: compact
	// items' accesses, in order; Defs: their deferred accesses, a lean
	// op's plan and dynamic operands, 32 bytes, instead of its two to four
	// 64-byte accesses). The rest are whole copies in ev. The machine
	// writes a core pipe's events into it itself while it is the batch
	// being filled (machine.PipeRecorder, front.sink).
	machine.PipeBuf
	// iter holds their iteration vectors as the detector keeps them
	// (rec.setIter): the outermost maxIter levels, saturated to int32. A
	// flag event is an item and its vector, which at int64 was two thirds
	// of the bytes the two goroutines passed for it.
	iter []int32
	// iter64 is the current compact item's vector widened back for its
	// Event (event), on the detector's side.
	iter64 [maxIter]int64
	// notes holds the IterLogger calls (ObserveIter), in order, their
	// vectors in iter.
	notes []iterNote
	// vals holds a notify's or signal wait's Value and Want (tagSync
	// items, in order), vnext the next to read; sync is the Event such an
	// item becomes on the detector's side (syncEvent).
	vals  []int64
	vnext int
	sync  machine.Event
	// Whole copies' slices have arenas of their own, so that a compact
	// item's slices start where the previous compact item's end.
	ev    []machine.Event
	wacc  []machine.Access
	witer []int64
	peers []int32
	flags []machine.Flag
}

// item is one event of a batch: compact, or an index into ev. It is half
// a cache line: the machine writes it on one CPU and the detector reads it
// on the other, so every line it spans moves between them, and on a linted
// 8-rank allgather_gemm writing 64-byte items was 8% of the machine's
// goroutine. Its accesses and iteration vector follow the previous compact
// item's in Acc and iter (NAcc, NIter), its deferred accesses are the next
// of Defs (Deferred); Issued is Event.Issued. An event whose numbers do
// not fit the narrow fields travels whole: Tag tagWhole, Issue its index
// in ev. Tag tagNote is the next of notes, its vector in iter.
type item = machine.PipeRecord

// Item tags (item.Tag); the machine writes tagCompact. tagSync is a
// compact scalar or pipe barrier, notify or signal wait (travelsSync):
// Src holds its Target, ID its Word (syncWords), and a notify's or wait's
// Value and Want are the next two of vals. A ring's barriers, notifies and
// waits were a fifth of its events and, whole, 300-byte copies: at 128
// ranks the copies alone were 50 M instructions of the machine's
// goroutine (docs/performance.md, lint round 24).
// The machine writes tagSync itself for a scalar's pipe_barrier ALL
// (machine.RecSync), with no vector: Detector.barrier reads none.
const (
	tagCompact = iota
	tagWhole
	tagNote
	tagSync = machine.RecSync
)

// syncWords are the Words a tagSync item can carry, by its ID.
var syncWords = [...]string{"", "set", "add"}

func newBatch() *batch {
	return &batch{
		PipeBuf: machine.PipeBuf{
			Recs: make([]item, 0, batchEvents),
			Defs: make([]machine.Deferred, 0, batchEvents),
			Acc:  make([]machine.Access, 0, batchAccess),
		},
		iter:  make([]int32, 0, batchIter),
		notes: make([]iterNote, 0, batchEvents/2),
		vals:  make([]int64, 0, batchEvents/2),
		ev:    make([]machine.Event, 0, batchWhole),
		wacc:  make([]machine.Access, 0, 2*batchWhole),
		witer: make([]int64, 0, 4*batchWhole),
		peers: make([]int32, 0, batchWhole),
		flags: make([]machine.Flag, 0, batchWhole),
	}
}

// reset empties the batch for reuse. It does not clear the old contents:
// that would write every line the machine's goroutine writes next from the
// other core, and the references it holds (ops, infos) live as long as the
// program anyway; drain clears the batches it keeps.
func (b *batch) reset() {
	b.Recs = b.Recs[:0]
	b.Acc, b.iter, b.Defs, b.notes = b.Acc[:0], b.iter[:0], b.Defs[:0], b.notes[:0]
	b.vals, b.vnext = b.vals[:0], 0
	b.ev, b.wacc, b.witer, b.peers, b.flags = b.ev[:0], b.wacc[:0], b.witer[:0], b.peers[:0], b.flags[:0]
}

// fits reports whether e's copy fits the batch's remaining room.
func (b *batch) fits(e *machine.Event) bool {
	if len(b.Recs) == cap(b.Recs) {
		return false
	}
	if travelsCompact(e) {
		return len(b.Acc)+len(e.Accesses) <= cap(b.Acc) && len(b.iter)+min(len(e.Iter), maxIter) <= cap(b.iter)
	}
	return len(b.ev) < cap(b.ev) &&
		len(b.wacc)+len(e.Accesses) <= cap(b.wacc) &&
		len(b.witer)+len(e.Iter) <= cap(b.witer) &&
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

// addCompact copies e, which travelsCompact, as a compact item if it fits
// the batch's remaining room: as addPipe does, with Issued (which the
// scalar's flag sets have) added.
func (b *batch) addCompact(e *machine.Event) bool {
	pe := machine.PipeEvent{Kind: e.Kind, Agent: e.Agent, Op: e.Op, Issue: e.Issue, Iter: e.Iter,
		Flag: e.Flag, Accesses: e.Accesses, Deferred: e.Deferred}
	if !b.addPipe(&pe) {
		return false
	}
	b.Recs[len(b.Recs)-1].Issued = uint32(e.Issued)
	return true
}

// addPipe copies a pipe's event (Detector.ObservePipe) as a compact item
// if it fits the batch's remaining room and its numbers fit an item.
func (b *batch) addPipe(e *machine.PipeEvent) bool {
	ni, n := min(len(e.Iter), maxIter), len(b.iter)
	if len(b.Recs) == cap(b.Recs) || len(b.Acc)+len(e.Accesses) > cap(b.Acc) || n+ni > cap(b.iter) ||
		uint32(e.Agent.Rank)|uint32(e.Agent.Core) > math.MaxUint16 || uint32(e.Flag.ID) > math.MaxUint8 ||
		uint64(e.Issue) > math.MaxUint32 || len(e.Accesses) > math.MaxUint8 {
		return false
	}
	// Only execs defer, and a batch has room for a def per item.
	def := e.Deferred.Pending()
	b.Recs = append(b.Recs, item{Op: e.Op, Issue: uint32(e.Issue),
		Rank: uint16(e.Agent.Rank), Core: uint16(e.Agent.Core), Pipe: e.Agent.Pipe, Kind: e.Kind,
		Src: e.Flag.Src, Dst: e.Flag.Dst, ID: uint8(e.Flag.ID),
		NAcc: uint8(len(e.Accesses)), NIter: uint8(ni), Deferred: def})
	if def {
		b.Defs = append(b.Defs, e.Deferred)
	}
	if len(e.Accesses) > 0 { // a deferred exec has none: skip the copy's call
		b.Acc = append(b.Acc, e.Accesses...)
	}
	if ni > 0 { // none while the detector keeps the scalars' logs (iterlog.go)
		b.putIter(e.Iter)
	}
	return true
}

// putIter appends iteration vector it to iter as the detector keeps it
// (narrowIter: the outermost maxIter levels, saturated to int32); the
// caller has made room.
func (b *batch) putIter(it []int64) {
	ni, n := min(len(it), maxIter), len(b.iter)
	b.iter = b.iter[:n+ni]
	src := it[:ni]
	dst := b.iter[n:][:len(src)] // no bounds check in the loop
	// Narrow without a branch per level; out is nonzero when a value does
	// not fit int32 (rare), and the vector is then saturated.
	var out uint64
	for k, v := range src {
		dst[k] = int32(v)
		out |= uint64(v+1<<31) >> 32
	}
	if out != 0 {
		for k, v := range src {
			dst[k] = int32(max(min(v, math.MaxInt32), math.MinInt32))
		}
	}
}

// add copies e into the batch: compact if it can be, else whole (with its
// slices in the batch's arenas where they fit, else in their own).
func (b *batch) add(e *machine.Event) {
	if b.addItem(e) {
		return
	}
	b.Recs = append(b.Recs, item{Kind: e.Kind, Issue: uint32(len(b.ev)), Tag: tagWhole})
	b.ev = append(b.ev, *e)
	c := &b.ev[len(b.ev)-1]
	c.Accesses = arena(&b.wacc, e.Accesses)
	c.Iter = arena(&b.witer, e.Iter)
	c.Peers = arena(&b.peers, e.Peers)
	c.Flags = arena(&b.flags, e.Flags)
	if e.Blocked != nil {
		c.Blocked = append([]machine.Blocked(nil), e.Blocked...)
	}
	// A wait's words are a view of the machine's state (Event.Words):
	// each word's compare and stale check read them at replay. Rare
	// (a wait over several words), so a slice of their own.
	c.Words = nil
	if len(e.Words) > 0 {
		c.Words = append([]int64(nil), e.Words...)
	}
}

// addItem copies e as a compact item (addCompact, addSync) if it can
// travel as one and fits the batch's remaining room.
func (b *batch) addItem(e *machine.Event) bool {
	return travelsCompact(e) && b.addCompact(e) || travelsSync(e) && b.addSync(e)
}

// addSync copies e, which travelsSync, as a tagSync item if it fits the
// batch's remaining room: addPipe's item, with Issued, Target (in Src),
// Word (in ID) and, but for a barrier, Value and Want in vals. The item is
// written field by field, with no PipeEvent in between: a whole ring's
// barriers, notifies and waits go this way.
func (b *batch) addSync(e *machine.Event) bool {
	n, na, ni := len(b.Recs), len(e.Accesses), min(len(e.Iter), maxIter)
	if n == cap(b.Recs) || len(b.Acc)+na > cap(b.Acc) || len(b.iter)+ni > cap(b.iter) || len(b.vals)+2 > cap(b.vals) {
		return false
	}
	b.Recs = b.Recs[:n+1]
	it := &b.Recs[n]
	it.Op, it.Issue, it.Issued = e.Op, uint32(e.Issue), uint32(e.Issued)
	it.Rank, it.Core, it.Pipe, it.Kind = uint16(e.Agent.Rank), uint16(e.Agent.Core), e.Agent.Pipe, e.Kind
	it.Src, it.Dst, it.ID = e.Target, 0, syncWord(e.Word)
	it.NAcc, it.NIter, it.Deferred, it.Tag = uint8(na), uint8(ni), false, tagSync
	if na > 0 {
		b.Acc = append(b.Acc, e.Accesses...)
	}
	if ni > 0 {
		b.putIter(e.Iter)
	}
	if e.Kind != machine.EvBarrier {
		b.vals = append(b.vals, e.Value, e.Want)
	}
	return true
}

// syncWord is w's index in syncWords, or len(syncWords) for another word
// (a switch: a loop over syncWords called memequal per word).
func syncWord(w string) uint8 {
	switch w {
	case "":
		return 0
	case "set":
		return 1
	case "add":
		return 2
	}
	return uint8(len(syncWords))
}

// travelsSync reports whether e goes as a tagSync item: a barrier, notify
// or signal wait of a core (not a composite's step) whose numbers fit the
// narrow fields and which has nothing else the item does not keep (the
// detector reads no cycle). A barrier has no Value or Want, a notify or
// wait no Target, a wait no Words (a wait over several words travels
// whole: the item kept none of them, and each word's compare went
// unread in batches, which hid hazards/stale_words_grown's RAW and
// stale-signal there). (Ranges are tested as unsigned, negatives too.)
func travelsSync(e *machine.Event) bool {
	switch e.Kind {
	case machine.EvBarrier:
		if e.Value|e.Want != 0 {
			return false
		}
	case machine.EvNotify, machine.EvSignalWait:
		if e.Target != 0 {
			return false
		}
	default:
		return false
	}
	return uint32(e.Agent.Core)|uint32(e.Agent.Rank) <= math.MaxUint16 &&
		uint64(e.Issue)|uint64(e.Issued) <= math.MaxUint32 && len(e.Accesses) <= math.MaxUint8 &&
		len(e.Step)|len(e.Reason)|len(e.RunName)|len(e.Peers)|len(e.Flags)|len(e.Words) == 0 && e.Blocked == nil &&
		e.ID|e.Mode|e.Group|e.IssueCore == 0 && e.Flag == (machine.Flag{}) && !e.Deferred.Pending() &&
		syncWord(e.Word) < uint8(len(syncWords))
}

// travelsCompact reports whether e goes as a compact item: an exec or a
// flag set or wait of a core (not a composite's step) whose numbers fit
// the narrow fields.
func travelsCompact(e *machine.Event) bool {
	return (e.Kind == machine.EvExec || e.Kind == machine.EvFlagSet || e.Kind == machine.EvFlagWait) &&
		e.Step == "" && e.Agent.Core >= 0 && e.Agent.Core <= math.MaxUint16 &&
		e.Agent.Rank >= 0 && e.Agent.Rank <= math.MaxUint16 &&
		e.Flag.ID >= 0 && e.Flag.ID <= math.MaxUint8 &&
		len(e.Accesses) <= math.MaxUint8 &&
		e.Issue >= 0 && e.Issue <= math.MaxUint32 && e.Issued >= 0 && e.Issued <= math.MaxUint32 &&
		e.Value == 0 // a wait_async's covered copy travels whole
}

// replay runs the detector over the batch's events, in order.
func (d *Detector) replay(b *batch) {
	e, acc0, iter0, def0, note0 := d.replayScratch(b), 0, 0, 0, 0
	for i := range b.Recs {
		if it := &b.Recs[i]; it.Tag != tagNote {
			d.observe(b.event(it, e, &acc0, &iter0, &def0)) // line 4: default.pgo inlines event here
		} else {
			d.replayNote(b, it, &iter0, &note0)
		}
	}
	*e = machine.Event{}
}

// event is item it as an event: its whole copy, or scratch filled with the
// fields add kept (the detector reads no others of these kinds, and Iter
// only through rec.setIter, which keeps no more than the item did; scratch
// serves nothing else). acc0, iter0 and def0 are where the item's slices
// start in the compact arenas; event moves them past it.
func (b *batch) event(it *item, scratch *machine.Event, acc0, iter0, def0 *int) *machine.Event {
	if it.Tag != tagCompact {
		return b.other(it, acc0, iter0)
	}
	e := scratch
	e.Kind, e.Op, e.Issue, e.Issued = it.Kind, it.Op, int64(it.Issue), int64(it.Issued)
	e.Agent = machine.Agent{Rank: int32(it.Rank), Core: int32(it.Core), Pipe: it.Pipe}
	e.Flag = machine.Flag{Src: it.Src, Dst: it.Dst, ID: int32(it.ID)}
	// Most items have no accesses (flags, deferred execs) nor vector:
	// scratch's slices and Deferred are stored only when they change.
	if it.NAcc > 0 || len(e.Accesses) > 0 {
		a0 := *acc0
		a1 := a0 + int(it.NAcc)
		e.Accesses = b.Acc[a0:a1:a1]
		*acc0 = a1
	}
	if it.NIter > 0 { // none while the detector keeps the scalars' logs (iterlog.go)
		e.Iter = b.iterOf(it, iter0)
	} else if e.Iter != nil {
		e.Iter = nil
	}
	if it.Deferred {
		e.Deferred = b.Defs[*def0]
		*def0++
	} else if e.Deferred.Pending() {
		e.Deferred = machine.Deferred{}
	}
	return e
}

// iterOf is item it's vector, widened into iter64, which starts at
// *iter0 in iter; it moves *iter0 past it.
func (b *batch) iterOf(it *item, iter0 *int) []int64 {
	i0 := *iter0
	i1 := i0 + int(it.NIter)
	w := b.iter64[: i1-i0 : i1-i0]
	for k, v := range b.iter[i0:i1] {
		w[k] = int64(v)
	}
	*iter0 = i1
	return w
}

// other is event for an item that is not tagCompact: its whole copy, or
// a tagSync item as an Event of its own (sync, every field written),
// which leaves scratch's fields as they were for the next compact item.
func (b *batch) other(it *item, acc0, iter0 *int) *machine.Event {
	if it.Tag == tagWhole {
		return &b.ev[it.Issue]
	}
	// Field by field (a composite literal went through a temporary and a
	// typed copy, 200 instructions an item): sync has no other field set,
	// ever.
	e := &b.sync
	e.Kind, e.Op, e.Issue, e.Issued = it.Kind, it.Op, int64(it.Issue), int64(it.Issued)
	e.Agent = machine.Agent{Rank: int32(it.Rank), Core: int32(it.Core), Pipe: it.Pipe}
	e.Target, e.Word, e.Accesses, e.Iter, e.Value, e.Want = it.Src, syncWords[it.ID], nil, nil, 0, 0
	if it.NAcc > 0 {
		a0 := *acc0
		a1 := a0 + int(it.NAcc)
		e.Accesses = b.Acc[a0:a1:a1]
		*acc0 = a1
	}
	if it.NIter > 0 {
		e.Iter = b.iterOf(it, iter0)
	}
	if it.Kind != machine.EvBarrier {
		e.Value, e.Want = b.vals[b.vnext], b.vals[b.vnext+1]
		b.vnext += 2
	}
	return e
}

// regroup is nil but in tests, which set it to replay a batch in another
// linearisation of the same happens-before order (linearise_test.go); when
// it does, it empties b.Recs, which leaves replay nothing to do (the batch
// is reset next anyway).
var regroup func(d *Detector, b *batch)

// replayScratch is replay's scratch Event, after regroup had the batch if
// it is set. It is consulted once a batch, on replay's first line, so the
// lines default.pgo names in replay stay where they were and the loop is
// compiled as it was.
func (d *Detector) replayScratch(b *batch) *machine.Event {
	if regroup != nil {
		regroup(d, b)
	}
	return &d.scratch
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
	// batched says events go to local, replayed on the machine's
	// goroutine when it fills (one CPU, not Serial: pushLocal).
	batched bool
	local   *batch
	// ev is a PipeEvent made an Event (ObservePipe).
	ev machine.Event
	// sink points the machine at the batch being filled (cur or local;
	// nil while events are observed in place), which it then writes a
	// core pipe's events into itself (PipeRecords).
	sink machine.PipeSink
	_    [64]byte
}

// pipeline is the hand-off between the machine's goroutine and the
// detector's. It exists from the first event after a drain until the next
// drain, so an idle detector holds no goroutine.
type pipeline struct {
	cur  *batch
	full chan *batch
	free chan *batch
	done chan struct{}
	made int // batches this pipeline has taken (cur, full, free and the one replayed)
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
	if travelsCompact(e) && p.cur.addCompact(e) || travelsSync(e) && p.cur.addSync(e) {
		return
	}
	if !p.cur.fits(e) && len(p.cur.Recs) > 0 {
		p.handOff(d)
	}
	p.cur.add(e)
}

// handOff passes the batch being filled to the detector's goroutine and
// takes the next.
func (p *pipeline) handOff(d *Detector) {
	p.full <- p.cur
	p.cur = p.next(d)
	d.front.sink.Buf = &p.cur.PipeBuf
}

// PipeRecords implements machine.PipeRecorder: while the detector's
// goroutine runs (or, with one CPU, its local batch fills) the machine
// writes a core pipe's events into the batch itself; ObservePipe takes
// those that do not fit.
func (d *Detector) PipeRecords() *machine.PipeSink { return &d.front.sink }

// ObservePipe implements machine.PipeObserver: while the detector's
// goroutine runs (or, with one CPU, its local batch fills) the event goes
// straight into the batch; otherwise, or when it does not fit, it becomes
// an Event for Observe.
func (d *Detector) ObservePipe(pe *machine.PipeEvent) {
	f := &d.front
	if p := f.pipe; p != nil && p.cur.addPipe(pe) {
		return
	}
	if f.batched && f.local != nil && f.local.addPipe(pe) {
		return
	}
	pe.Event(&f.ev)
	d.Observe(&f.ev)
}

func (d *Detector) startPipeline() *pipeline {
	p := &pipeline{
		full: make(chan *batch, batchesInFlight),
		free: make(chan *batch, batchesInFlight),
		done: make(chan struct{}),
	}
	for range batchesEager - 1 {
		p.free <- d.batch()
	}
	p.cur = d.batch()
	p.made = batchesEager
	d.front.pipe = p
	d.front.sink.Buf = &p.cur.PipeBuf
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

// batch returns a spare batch, or a new one: one run after another should
// not allocate its arenas again.
func (d *Detector) batch() *batch {
	if n := len(d.spare); n > 0 {
		b := d.spare[n-1]
		d.spare = d.spare[:n-1]
		return b
	}
	return newBatch()
}

// next is the batch to fill after one was handed over: a free one, else a
// new one while fewer than batchesInFlight exist, else the first to come
// back. Batches are made only when the detector falls behind, so a short
// run keeps its setup small and a long one gets the slack it needs.
func (p *pipeline) next(d *Detector) *batch {
	select {
	case b := <-p.free:
		return b
	default:
	}
	if p.made < batchesInFlight {
		p.made++
		return d.batch()
	}
	return <-p.free
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

// pushLocal copies e into the local batch, and replays the batch on this
// goroutine when it is full. With one CPU (GOMAXPROCS=1) the detector runs
// beside the machine on the same core, and observing each event as it
// came interleaved the two halves' code event by event: the machine's
// event loop and the detector's checks do not both fit the instruction
// cache, and at M=4096 K=1024 on 8 ranks (cachegrind) the run took 33.6 M
// L1 instruction misses, against 3.9 M when each half runs a batch at a
// time (for 9% more instructions, the copies). In CPU time the 8-rank lint
// at M=4096 took 2.4–3.3 s against 3.1–4.1 s event by event.
func (d *Detector) pushLocal(e *machine.Event) {
	b := d.localBatch()
	if travelsCompact(e) && b.addCompact(e) || travelsSync(e) && b.addSync(e) {
		return
	}
	if !b.fits(e) && len(b.Recs) > 0 {
		d.replayLocal()
	}
	b.add(e)
}

// localBatch is the local batch, made if there is none.
func (d *Detector) localBatch() *batch {
	if b := d.front.local; b != nil { // inlined: this is every event's
		return b
	}
	return d.newLocal()
}

// newLocal makes the local batch. It is never inlined, so localBatch,
// which is every event's, stays small enough to be.
//
//go:noinline
func (d *Detector) newLocal() *batch {
	f := &d.front
	f.local = d.batch()
	f.sink.Buf = &f.local.PipeBuf
	return f.local
}

// replayLocal replays the local batch and empties it.
func (d *Detector) replayLocal() {
	f := &d.front
	b := f.local
	// A panic in replay leaves no half-replayed batch behind.
	f.local, f.sink.Buf = nil, nil
	d.replay(b)
	b.reset()
	f.local, f.sink.Buf = b, &b.PipeBuf
}

// drain waits until every event observed so far has been processed and
// stops the goroutine; it is called before anything reads the state.
func (d *Detector) drain() {
	if b := d.front.local; b != nil && len(b.Recs) > 0 {
		d.replayLocal() // and the local batch, empty, stays the one filled
	}
	p := d.front.pipe
	if p == nil {
		return
	}
	d.front.sink.Buf = nil
	if len(p.cur.Recs) > 0 {
		p.full <- p.cur
	} else {
		p.free <- p.cur
	}
	close(p.full)
	<-p.done
	close(p.free)
	for b := range p.free {
		clear(b.ev[:cap(b.ev)])
		clear(b.Recs[:cap(b.Recs)])
		b.sync = machine.Event{}
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

// DefersAccesses implements machine.AccessDeferrer: the detector's
// goroutine lists a lean op's accesses (Detector.lister, in exec), so the
// machine's neither lists nor copies them.
func (d *Detector) DefersAccesses() bool { return true }

// NoFlagTimes implements machine.FlagTimeFilter: the detector orders flags
// by their events, not by the cycles they were set at.
func (d *Detector) NoFlagTimes() bool { return true }

// Flush implements machine.Flusher: the machine calls it when Run returns,
// so the detector's goroutine ends with the run.
func (d *Detector) Flush() { d.drain() }

// TakesStretches implements machine.StretchObserver: the detector reads
// no cycle, and a core's local events (its pipes' and scalar's, on its own
// buffers, flags and issue log) touch only that core's state and the
// findings, whose instances and counts add up alike in any interleaving
// (docs/performance.md, lint round 17).
func (d *Detector) TakesStretches() bool { return true }

// Restart implements machine.StretchObserver: the run the machine repeats
// without stretches (it ended in an error) is the only one the detector
// reports on. Its options and spare batches stay.
func (d *Detector) Restart() {
	d.drain()
	opt, spare := d.opt, d.spare
	*d = *New(opt)
	d.spare = spare
}
