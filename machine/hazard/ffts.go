package hazard

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
	"github.com/ptoasm/ptoasm/pipes"
)

// FFTS counters left raised when a run ends: the cross-core analogue of an
// intra-core flag still set at kernel end (unpaired-set). A counter outlives
// the kernel on its core, so the next kernel's first `ffts_wait` of that id
// passes on this kernel's set.
//
// The check runs when the run ends, not at each core's kernel end: another
// core can still raise a core's counter after that core finished (an AIC's
// mode-2 set reaches AIVs that are done), so a counter's value at its own
// core's end depends on timing. Once every core of the run has finished it is
// the sets minus the waits on that counter, which the program alone decides.

// crossInc is one pending increment of an FFTS counter: the set that made it
// (for a reduction, the arrival latest in source order, setAfter), its mode,
// and whether it is a fifo's free credit (isCredit).
type crossInc struct {
	set    rec
	mode   int32
	credit bool
}

// pendingSet is one arrival of a mode-0/1/2 reduction that has not fired:
// the core that set (machine.Agent.Core), the set's release and its
// increment.
type pendingSet struct {
	core int32
	rel  vclock
	inc  crossInc
}

// setAfter reports whether set a comes after b in source order (position,
// then rank, then core): the order that names a reduction's increment, so the
// name does not depend on which core's set happened to arrive last.
func (d *Detector) setAfter(a, b *rec) bool {
	pa, pb := opPos(a.op), opPos(b.op)
	if c := cmp.Or(cmp.Compare(pa.File, pb.File), cmp.Compare(pa.Line, pb.Line), cmp.Compare(pa.Col, pb.Col)); c != 0 {
		return c > 0
	}
	aa, ab := &d.agents[a.agent], &d.agents[b.agent]
	return cmp.Or(cmp.Compare(aa.rank, ab.rank), cmp.Compare(aa.core, ab.core)) > 0
}

// noteArrival keeps set inc of e's core, whose release is rel, as an
// arrival of reduction k that did not fire (the machine raised no counter).
func (d *Detector) noteArrival(k accKey, e *machine.Event, rel vclock, inc crossInc) {
	if d.pending == nil {
		d.pending = map[accKey][]pendingSet{}
	}
	d.pending[k] = append(d.pending[k], pendingSet{core: e.Agent.Core, rel: rel, inc: inc})
}

// takeArrivals joins into rel, the release of set e that fired reduction k,
// the arrivals the machine's reduction consumed, and returns the
// increment that names it: the set latest in source order (setAfter) among
// them, a fifo's credit when any was one (an AIV that takes part in a fifo's
// handshake with a plain ffts_set, as mixed_sub0's second AIV does, completes
// that credit). Mode 0 counts arrivals, whichever core made them, so a fire
// takes every one pending. Modes 1 and 2 fire once both AIVs have a set
// pending and take the oldest of each (machine.aivArrivals): the firing AIV
// had none, so the fire takes the other AIV's oldest, and a second set an AIV
// made before its partner's first stays for the next fire. Joining every
// arrival there ordered the AIC after sets that only raise its next count.
// An AIC's mode-2 set raises its AIVs' counters (its peers) and completes
// no reduction: it takes none of their arrivals.
func (d *Detector) takeArrivals(k accKey, e *machine.Event, rel *vclock, inc crossInc) crossInc {
	q := d.pending[k]
	kept := q[:0]
	var took []int32 // cores whose oldest arrival is taken (modes 1, 2)
	credit := inc.credit
	for _, p := range q {
		if k.mode != 0 && (p.core == e.Agent.Core || slices.Contains(took, p.core) ||
			k.mode == 2 && slices.Contains(e.Peers, p.core)) {
			kept = append(kept, p)
			continue
		}
		took = append(took, p.core)
		join(rel, &p.rel)
		d.putBuf(p.rel)
		credit = credit || p.inc.credit
		if d.setAfter(&p.inc.set, &inc.set) {
			inc = p.inc
		}
	}
	clear(q[len(kept):])
	if len(kept) == 0 {
		delete(d.pending, k)
	} else {
		d.pending[k] = kept
	}
	inc.credit = credit
	return inc
}

// noteIncrements records inc as the set behind one increment of every
// peer's counter (mode 2: an AIC set raises both AIVs' counters, the second
// AIV set the AIC's).
func (d *Detector) noteIncrements(e *machine.Event, inc crossInc) {
	if d.crossIncs == nil {
		d.crossIncs = map[crossKey][]crossInc{}
	}
	for _, peer := range e.Peers {
		ck := crossKey{rank: e.Agent.Rank, core: peer, id: e.ID}
		d.crossIncs[ck] = append(d.crossIncs[ck], inc)
	}
}

// FFTS counters are 4 bits (pipes.CrossMax): the (n+15)-th increment of a
// counter overflows it unless the wait that consumed the n-th came first.
// Whether a run's producer got that far ahead is timing; whether it can is
// ordering, and that is what is reported, as double-set is for the one-bit
// event flags: an increment whose set (for a reduction, the join of its
// arrivals: the counter rises when the last arrives) is not ordered after
// the wait 15 increments back. The machine counts past 15 instead of
// failing (it used to fault, and stop the core, only when this run's
// producer was 16 ahead: hazards/c2v_gm_ffts_no_credit_wait at N = 32
// faulted on one AIV or the other, and the AIC's counter overflowed or not,
// with the FFTS latency).

// crossCount is one FFTS counter's increments and satisfied waits in this
// run, with the points of its last CrossMax + 1 waits (enough: a wait
// consumes an increment that came before it, so the wait an increment needs
// is never more than CrossMax waits back).
type crossCount struct {
	incs, waits int
	ring        [pipes.CrossMax + 1]crossPoint
}

// crossPoint is a point of an agent's history: what happens after it holds
// at least epoch in the agent's component.
type crossPoint struct {
	agent int32
	epoch uint32
}

// countOf returns counter ck's count, made on first use.
func (d *Detector) countOf(ck crossKey) *crossCount { return made(&d.crossCnt, ck) }

// noteCrossWaitPoint records that counter ck's next wait passed on the core
// of scalar s, which issues nothing until it does: the scalar's next epoch is
// the wait's point (an event of its own, so that a set issued before the wait
// is not taken for one after it).
func (d *Detector) noteCrossWaitPoint(ck crossKey, s int32) {
	ag := &d.agents[s]
	ag.n++
	d.raiseOwn(s)
	cnt := d.countOf(ck)
	cnt.ring[cnt.waits%len(cnt.ring)] = crossPoint{agent: s, epoch: ag.n}
	cnt.waits++
}

// checkOverflow counts an increment of counter ck by a set whose release is
// rel, named at inc, and reports it when it can overflow the counter.
func (d *Detector) checkOverflow(ck crossKey, rel *vclock, inc *crossInc) {
	cnt := d.countOf(ck)
	cnt.incs++
	need := cnt.incs - pipes.CrossMax // the wait that must come first, 1-based
	if need <= 0 {
		return
	}
	if cnt.waits >= need {
		if w := cnt.ring[(need-1)%len(cnt.ring)]; get(*rel, d.pos(w.agent)) >= w.epoch {
			return
		}
	}
	core := d.coreName(&agentState{rank: ck.rank, core: ck.core})
	msg := fmt.Sprintf("ffts_set of flag %d can raise the counter of %s past %d: nothing orders it after the ffts_wait that consumed the increment %d before it, so the setter can run that far ahead of the waiter and the 4-bit counter overflows (an error on A2/A3)",
		ck.id, core, pipes.CrossMax, pipes.CrossMax)
	hint := fmt.Sprintf("hold the setter back: have %s hand back a credit after each wait (`ffts_set` on another id) and `ffts_wait` for it before setting again, so at most %d sets are ever pending", core, pipes.CrossMax)
	d.single(KindDoubleSet, SevError, &inc.set, msg, hint)
}

// noteCrossWait consumes the oldest pending increment of counter ck, as the
// machine's satisfied ffts_wait did.
func (d *Detector) noteCrossWait(ck crossKey) {
	if q := d.crossIncs[ck]; len(q) > 0 {
		d.crossIncs[ck] = q[1:]
	}
}

// isCredit reports whether set r is a fifo's free credit: a tpop returns
// one per slot it read and the tpush takes them back only once the ring has
// wrapped (TPipe, kernels.md §0.3), so the library's protocol itself ends
// every kernel with up to `slots` credits raised; the program cannot consume
// them, and reporting them would flag every fifo.
func isCredit(r *rec) bool {
	return r.op != nil && r.op.Info != nil && (r.op.Info.Op == asm.OpTpop || r.op.Info.Op == asm.OpTfree)
}

// crossLeftovers reports, when a run ends, every FFTS counter still raised
// and every reduction still waiting for arrivals, at the set that left it
// (the last pending increment's), counted per leftover increment or arrival.
func (d *Detector) crossLeftovers() {
	for _, ck := range slices.SortedFunc(maps.Keys(d.crossIncs), func(a, b crossKey) int {
		return cmp.Or(cmp.Compare(a.rank, b.rank), cmp.Compare(a.core, b.core), cmp.Compare(a.id, b.id))
	}) {
		var last *crossInc
		n := 0
		for i, inc := range d.crossIncs[ck] {
			if !inc.credit {
				n, last = n+1, &d.crossIncs[ck][i]
			}
		}
		if n == 0 {
			continue
		}
		core := d.coreName(&agentState{rank: ck.rank, core: ck.core})
		what := "set"
		if n > 1 {
			what = "sets"
		}
		msg := fmt.Sprintf("FFTS flag %d of %s is still raised when the run ends: its counter is %d (%d %s nobody waited for; the last by %s #mode=%d), and FFTS counters keep their value into the next kernel on that core, whose first `ffts_wait %d` then passes without a set",
			ck.id, core, n, n, what, d.site(&last.set).where(), last.mode, ck.id)
		hint := fmt.Sprintf("consume it before the kernel ends: `ffts_wait %d` on %s once per leftover set (the drain of credits primed before a loop), or remove the extra `ffts_set` (do not set on the last iteration)", ck.id, core)
		f := d.single(KindUnpairedSet, SevWarning, &last.set, msg, hint)
		f.Count += n - 1
	}
	for _, k := range slices.SortedFunc(maps.Keys(d.pending), func(a, b accKey) int {
		return cmp.Or(cmp.Compare(a.rank, b.rank), cmp.Compare(a.id, b.id), cmp.Compare(a.mode, b.mode), cmp.Compare(a.group, b.group))
	}) {
		arr := d.leftArrivals(d.pending[k])
		if arr.n == 0 || arr.last.credit {
			continue
		}
		who := map[int32]string{0: "every core of its type", 1: "both AIVs of the block", 2: "both AIVs of the block"}[k.mode]
		msg := fmt.Sprintf("mode-%d FFTS set of flag %d is left half done when the run ends: %d set(s) arrived (the last by %s) but the reduction fires only once %s has set, so the arrivals carry into the next kernel's sets of that flag",
			k.mode, k.id, arr.n, d.site(&arr.last.set).where(), who)
		hint := fmt.Sprintf("make %s set flag %d the same number of times, or remove the extra `ffts_set`", who, k.id)
		f := d.single(KindUnpairedSet, SevWarning, &arr.last.set, msg, hint)
		f.Count += arr.n - 1
	}
	clear(d.crossIncs)
	d.clearPending()
	clear(d.crossCnt)
}

// leftArrivals sums up a reduction's arrivals left when the run ends: how
// many, and the latest in source order, a credit when any was one.
func (d *Detector) leftArrivals(q []pendingSet) (arr struct {
	n    int
	last crossInc
}) {
	for i, p := range q {
		credit := arr.last.credit || p.inc.credit
		if i == 0 || d.setAfter(&p.inc.set, &arr.last.set) {
			arr.last = p.inc
		}
		arr.last.credit = credit
		arr.n++
	}
	return arr
}

// clearPending forgets every reduction's arrivals (a run boundary).
func (d *Detector) clearPending() {
	for k, q := range d.pending {
		for _, p := range q {
			d.putBuf(p.rel)
		}
		delete(d.pending, k)
	}
}
