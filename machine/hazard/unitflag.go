package hazard

import (
	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
)

// The L0C unit flag (#unit; machine/unitflag.go has the semantics and
// sources) is a synchronisation between the cube and FIX of one core, per
// acc tile: a final mad publishes the tile, a FIX read with a unit flag
// acquires that publication (the hardware holds it until the fractals are
// written); a final FIX read releases the tile, and a mad with a unit flag
// acquires the release before it writes. So a mad and the store of its
// result need no M→FIX flag, and the next tile's mads no FIX→M flag, when
// both sides carry the flag; an op without it gets no edge, and the race the
// flag would have prevented is reported.
type unitKey struct {
	core int32
	off  int64 // the acc tile's L0C offset
}

// unitClocks are the last publication and the last release of one tile,
// in the run generation gen.
type unitClocks struct {
	gen      uint32
	pub, rel vclock
}

// unitOf finds e's unit-flag key: the L0C access of a unit-flagged op on M
// or FIX.
func (d *Detector) unitOf(a int32, e *machine.Event) (unitKey, bool) {
	if e.Op == nil || e.Op.Unit == asm.UnitNone || e.Step != "" {
		return unitKey{}, false
	}
	ag := &d.agents[a]
	if ag.kind != akPipe || ag.pipe != asm.PipeM && ag.pipe != asm.PipeFIX {
		return unitKey{}, false
	}
	for i := range e.Accesses {
		if acc := &e.Accesses[i]; acc.Space == asm.L0C {
			return unitKey{core: ag.coreIdx, off: acc.Lo}, true
		}
	}
	return unitKey{}, false
}

func (d *Detector) unitState(k unitKey) *unitClocks {
	u := made(&d.units, k)
	if u.gen != d.gen {
		u.gen, u.pub, u.rel = d.gen, vclock{}, vclock{}
	}
	return u
}

// unitAcquire joins, before e's accesses, what its unit flag waits for: a
// mad the last release of its tile, a FIX read the last publication.
func (d *Detector) unitAcquire(a int32, e *machine.Event) (unitKey, bool) {
	k, ok := d.unitOf(a, e)
	if !ok {
		return k, false
	}
	u := d.unitState(k)
	if d.agents[a].pipe == asm.PipeM {
		d.acquire(a, &u.rel)
	} else {
		d.acquire(a, &u.pub)
	}
	return k, true
}

// unitRelease publishes (a final mad) or releases (a final FIX read) the
// tile after e's accesses.
func (d *Detector) unitRelease(a int32, e *machine.Event, k unitKey) {
	if e.Op.Unit != asm.UnitFinal {
		return
	}
	u := d.unitState(k)
	if d.agents[a].pipe == asm.PipeM {
		u.pub = d.release(a, u.pub)
	} else {
		u.rel = d.release(a, u.rel)
	}
}
