package hazard

import (
	"fmt"

	"github.com/ptoasm/ptoasm/machine"
)

// ---- cross-core flags -----------------------------------------------------

func (d *Detector) crossSet(e *machine.Event) {
	a, serial, ok := d.syncEvent(e)
	if !ok {
		return
	}
	c := d.agents[a].coreIdx
	if e.ID < 0 || e.ID >= numCrossIDs {
		r := d.mkrec(a, e, serial)
		d.single(KindBadEventID, SevError, &r, fmt.Sprintf("ffts_set id %d: FFTS flag ids are 0-%d (11-14 are reserved for syncall)", e.ID, numCrossIDs-1), "use an id in 0-10")
		return
	}
	d.cores[c].crossUsed |= 1 << e.ID
	rel := d.release(a, d.getBuf())
	k := accKey{rank: e.Agent.Rank, id: e.ID, mode: e.Mode, group: e.Group}
	r := d.mkrec(a, e, serial)
	inc := crossInc{set: r, mode: e.Mode, credit: isCredit(&r)}
	if len(e.Peers) == 0 {
		// A contribution that did not complete a mode-0/1/2 reduction yet:
		// keep it for the set that does.
		d.noteArrival(k, e, rel, inc)
		return
	}
	inc = d.takeArrivals(k, e, &rel, inc)
	d.noteIncrements(e, inc)
	for i, peer := range e.Peers {
		ck := crossKey{rank: e.Agent.Rank, core: peer, id: e.ID}
		d.checkOverflow(ck, &rel, &inc)
		v := rel
		if i < len(e.Peers)-1 {
			v = d.getBuf()
			v.copyFrom(&rel)
		}
		d.cross[ck] = append(d.cross[ck], v)
	}
}

func (d *Detector) crossWait(e *machine.Event) {
	a, _, ok := d.syncEvent(e)
	if !ok {
		return
	}
	c := d.agents[a].coreIdx
	if e.ID >= 0 && e.ID < numCrossIDs {
		d.cores[c].crossUsed |= 1 << e.ID
	}
	d.waitPassed(c, e)
	ck := crossKey{rank: e.Agent.Rank, core: e.Agent.Core, id: e.ID}
	q := d.cross[ck]
	if len(q) == 0 {
		return
	}
	v := q[0]
	d.cross[ck] = q[1:]
	d.noteCrossWait(ck)
	d.acquire(a, &v)
	// On A2/A3 the wait stalls the whole core: the scalar issues nothing
	// until it passes.
	s := d.scalarOf(c)
	if s != a {
		d.enter(s)
		d.acquire(s, &v)
	}
	d.noteCrossWaitPoint(ck, s)
	d.putBuf(v)
}
