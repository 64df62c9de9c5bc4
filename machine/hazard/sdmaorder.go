package hazard

import (
	"cmp"
	"slices"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
)

// ---- SDMA copies in issue order ---------------------------------------------
//
// A wait_async on an event covers that copy and every copy its core issued
// before it, not later ones (the machine's core.waitAsync; pto-isa's
// SdmaWaitEvent polls each queue's done record up to the event's post id,
// sdma_async_detail_post.hpp at 3186c381). The copies of one core are one
// agent (sdmaAgent), whose epochs count its copies as the detector runs
// them, so a wait can join a prefix of them only if that prefix is a prefix
// of epochs: the detector runs a core's copies in issue order. A copy that
// lands while an earlier copy of its core is still in flight is held until
// that one has run. Holding it is a valid order of the run: only a wait
// covering it orders anything after it, and that wait covers the earlier
// copy too, so it comes after both have landed. Running them in landing
// order made the covered copies follow timing: a later copy that landed
// first was joined by a wait on an earlier one.

// sdmaOrder is one core's copies by issue number (Event.Issue).
type sdmaOrder struct {
	// fly holds the issue numbers of the copies issued (EvIssue) and not
	// run yet, in issue order (ascending); held the copies that landed
	// before the first of them, to run once it has, in issue order too.
	fly  []int64
	held []machine.Event
	// ran holds each copy run and no wait has covered: its issue number
	// and its epoch on the core's SDMA agent.
	ran []ranCopy
}

type ranCopy struct {
	issue int64
	epoch uint32
}

func isAsyncCopy(op *asm.COp) bool {
	if op == nil || op.Info == nil {
		return false
	}
	switch op.Info.Op {
	case asm.OpTputAsync, asm.OpTgetAsync, asm.OpTprefetchAsync:
		return true
	}
	return false
}

// sdmaOrderOf is core c's order, nil when it has none and create is false.
func (d *Detector) sdmaOrderOf(c int32, create bool) *sdmaOrder {
	if int(c) >= len(d.sdmaOrd) {
		if !create {
			return nil
		}
		d.sdmaOrd = append(d.sdmaOrd, make([]*sdmaOrder, int(c)+1-len(d.sdmaOrd))...)
	}
	if d.sdmaOrd[c] == nil && create {
		d.sdmaOrd[c] = &sdmaOrder{}
	}
	return d.sdmaOrd[c]
}

// copyIssued notes that core c issued an async copy with issue number n.
func (d *Detector) copyIssued(c int32, n int64) {
	o := d.sdmaOrderOf(c, true)
	o.fly = append(o.fly, n)
}

// holdCopy keeps SDMA copy e for later, and reports so, when an earlier
// copy of its core is still in flight. A copy without an issue number, or
// whose issue the detector did not see, runs as it comes.
func (d *Detector) holdCopy(e *machine.Event) bool {
	if e.Issue <= 0 {
		return false
	}
	o := d.sdmaOrderOf(d.core(e.Agent.Rank, e.IssueCore), false)
	if o == nil {
		return false
	}
	if i, ok := slices.BinarySearch(o.fly, e.Issue); !ok || i == 0 {
		return false
	}
	h := *e
	// The event is the machine's (or a batch's) and is reused: keep
	// copies of what the detector reads later.
	h.Accesses = slices.Clone(d.lister.Accesses(e))
	h.Deferred = machine.Deferred{}
	h.Iter = slices.Clone(e.Iter)
	h.Peers, h.Flags, h.Blocked = nil, nil, nil
	i, _ := slices.BinarySearchFunc(o.held, h.Issue, func(x machine.Event, n int64) int { return cmp.Compare(x.Issue, n) })
	o.held = slices.Insert(o.held, i, h)
	return true
}

// copyRan records that SDMA copy e has run, then runs the held copies
// that were waiting only for it, in issue order.
func (d *Detector) copyRan(e *machine.Event) {
	c := d.core(e.Agent.Rank, e.IssueCore)
	o := d.sdmaOrderOf(c, e.Issue > 0)
	if o == nil {
		return
	}
	d.noteRan(c, o, e.Issue)
	// held is in issue order, and fly's first is the earliest in flight.
	for len(o.held) > 0 && len(o.fly) > 0 && o.held[0].Issue == o.fly[0] {
		h := o.held[0]
		o.held = o.held[1:]
		d.execOp(&h)
		d.noteRan(c, o, h.Issue)
	}
}

// noteRan takes the copy of issue number n off core c's flight list and
// keeps its epoch for the waits.
func (d *Detector) noteRan(c int32, o *sdmaOrder, n int64) {
	if n <= 0 {
		return
	}
	if i, ok := slices.BinarySearch(o.fly, n); ok {
		o.fly = slices.Delete(o.fly, i, i+1)
	}
	if s := d.sdmaOf(c); s >= 0 {
		o.ran = append(o.ran, ranCopy{issue: n, epoch: d.agents[s].n})
	}
}

// runHeld runs every held copy, in issue order, whatever is still in
// flight: the run ended (or the findings are asked for) and the earlier
// copies will not land. Cores go in index order (deterministic).
func (d *Detector) runHeld() {
	for c, o := range d.sdmaOrd {
		if o == nil {
			continue
		}
		for len(o.held) > 0 {
			h := o.held[0]
			o.held = o.held[1:]
			d.execOp(&h)
			d.noteRan(int32(c), o, h.Issue)
		}
		o.held = nil
		o.fly = o.fly[:0]
	}
}

// resetCopies forgets every core's copies at a run boundary (runHeld ran
// the held ones).
func (d *Detector) resetCopies() {
	for _, o := range d.sdmaOrd {
		if o != nil {
			o.fly, o.held, o.ran = o.fly[:0], nil, o.ran[:0]
		}
	}
}

// waitCopies joins into scalar a the copies its wait_async e covers: its
// core's copies up to issue number e.Value (the newest copy the machine's
// wait covered; 0 when an earlier wait covered them all). When they
// include the newest copy run, that is the SDMA agent's whole release, as
// before; else the agent's component up to the newest covered copy's
// epoch: a copy's clock is otherwise its issue's, which the issuing
// scalar already holds.
func (d *Detector) waitCopies(a int32, e *machine.Event) {
	c := d.agents[a].coreIdx
	s := d.sdmaOf(c)
	if s < 0 || d.agents[s].gen != d.gen {
		return
	}
	var ep uint32
	o := d.sdmaOrderOf(c, false)
	if o == nil || len(o.ran) == 0 {
		if e.Value != 0 {
			// The covered copy has not run: it is held behind a copy of
			// the core still in flight that no wait of this block covers
			// (an earlier block's). Joining nothing can only report a
			// race the copy would have ordered, never hide one.
			return
		}
		ep = d.agents[s].n // no copy numbered: every copy run, as before
	} else {
		n := 0
		for n < len(o.ran) && o.ran[n].issue <= e.Value {
			ep = max(ep, o.ran[n].epoch)
			n++
		}
		o.ran = append(o.ran[:0], o.ran[n:]...)
	}
	switch {
	case ep == 0:
	case ep == d.agents[s].n:
		d.tmp = d.release(s, d.tmp)
		d.acquire(a, &d.tmp)
	default:
		d.raiseIn(a, s, ep)
	}
}
