package hazard

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
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

// accArrivals is a mode-0/1/2 reduction that has not fired: the sets that
// arrived since it last fired, and the latest of them (setAfter).
type accArrivals struct {
	n    int
	last crossInc
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

// noteCrossSet records set r of FFTS flag e.ID, counting toward reduction k:
// an arrival when the reduction did not fire (no Peers), else one increment
// of every peer's counter (mode 2: an AIC set raises both AIVs' counters, the
// second AIV set the AIC's).
func (d *Detector) noteCrossSet(k accKey, r *rec, e *machine.Event) {
	if d.crossIncs == nil {
		d.crossIncs = map[crossKey][]crossInc{}
		d.accArr = map[accKey]accArrivals{}
	}
	inc := crossInc{set: *r, mode: e.Mode, credit: isCredit(r)}
	arr, ok := d.accArr[k]
	if ok {
		// A reduction that carries a fifo's credit is that credit, whoever
		// else's set completes it (an AIV that takes part in a fifo's
		// handshake with a plain ffts_set, as mixed_sub0's second AIV does).
		credit := inc.credit || arr.last.credit
		if d.setAfter(&arr.last.set, &inc.set) {
			inc = arr.last
		}
		inc.credit = credit
	}
	if len(e.Peers) == 0 {
		arr.last = inc
		arr.n++
		d.accArr[k] = arr
		return
	}
	delete(d.accArr, k)
	for _, peer := range e.Peers {
		ck := crossKey{rank: e.Agent.Rank, core: peer, id: e.ID}
		d.crossIncs[ck] = append(d.crossIncs[ck], inc)
	}
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
	for _, k := range slices.SortedFunc(maps.Keys(d.accArr), func(a, b accKey) int {
		return cmp.Or(cmp.Compare(a.rank, b.rank), cmp.Compare(a.id, b.id), cmp.Compare(a.mode, b.mode), cmp.Compare(a.group, b.group))
	}) {
		arr := d.accArr[k]
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
	clear(d.accArr)
}
