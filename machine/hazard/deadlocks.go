package hazard

import (
	"fmt"
	"strings"

	"github.com/ptoasm/ptoasm/machine"
)

// ---- deadlocks and machine errors ----------------------------------------

func (d *Detector) deadlock(bl []machine.Blocked, names []string) {
	if len(bl) == 0 {
		return
	}
	d.eqBlocked(bl)
	d.eqCountBlocked(bl)
	d.eqCountEnd()
	var recs []rec
	var parts []string
	for i, b := range bl {
		a := d.agent(b.Agent)
		r := rec{agent: a, gen: d.gen, op: b.Op}
		recs = append(recs, r)
		who := d.coreName(&d.agents[a])
		if i < len(names) && names[i] != "" {
			who = names[i]
		}
		at := ""
		if p := opPos(b.Op); p.IsValid() {
			at = " at " + p.String()
		}
		root := ""
		if b.Root && len(bl) > 1 {
			root = "root: "
		}
		parts = append(parts, fmt.Sprintf("%s%s %s%s: %s", root, who, pipeName(&d.agents[a]), at, b.Reason))
	}
	msg := "nothing can move: " + strings.Join(parts, "; ")
	hint := "every wait needs a producer that is not itself waiting: add the missing set_flag/ffts_set/tnotify on every path before the wait, or break the cycle"
	for _, b := range bl {
		if strings.Contains(b.Reason, "wait_flag") {
			hint = "a wait_flag whose set_flag never runs on this path: add the set on every path before the wait (prime it before a loop whose first iteration waits), or remove the wait"
			break
		}
	}
	if strings.HasPrefix(bl[0].Reason, "#unit:") {
		// The root is an L0C unit-flag wait (machine/unitflag.go).
		hint = "a #unit hand-off in the wrong order: issue the FIX read with #unit=final after the tmatmul #unit=final of the same acc tile, and the next mad with #unit after that read"
	}
	// The machine lists the root wait first, so it is the finding's site; the
	// second site is the first agent blocked behind it that has a position (a
	// scalar waiting at kernel end has none, and a "?" site says nothing).
	for i := 1; i < len(recs); i++ {
		if opPos(recs[i].op).IsValid() {
			d.pair(KindDeadlock, SevError, &recs[0], &recs[i], msg, hint)
			return
		}
	}
	d.single(KindDeadlock, SevError, &recs[0], msg, hint)
}

// NoteError turns an error a machine run returned into findings: a deadlock
// (when no EvDeadlock was observed) or a runtime fault, classified by its
// message as bad-event-id, out-of-bounds or fault (a double set is no fault:
// the machine counts it and the detector decides it from ordering). Other errors
// are ignored and the caller reports them.
func (d *Detector) NoteError(err error) {
	d.drain()
	d.notes = d.notes[:0]
	switch x := err.(type) {
	case *machine.DeadlockError:
		for _, f := range d.findings {
			if f.Kind == KindDeadlock {
				return
			}
		}
		d.deadlock(x.Blocked, x.Names)
	case *machine.Fault:
		// Each core's first fault: a fault stops only its core (machine.Run).
		d.fault(x)
		for _, o := range x.Others {
			d.fault(o)
		}
	}
	d.flushNotes()
}

// fault records a runtime fault, classified by its message.
func (d *Detector) fault(x *machine.Fault) {
	a := d.agent(machine.Agent{Rank: int32(x.Rank), Core: int32(x.Core), Pipe: x.Pipe})
	r := rec{agent: a, gen: d.gen, op: x.Op}
	kind := KindFault
	m := strings.ToLower(x.Msg)
	switch {
	case strings.Contains(m, "event id") || strings.Contains(m, "flag id"):
		kind = KindBadEventID
	case strings.Contains(m, "out of bounds") || strings.Contains(m, "out-of-bounds") || strings.Contains(m, "outside"):
		kind = KindOutOfBounds
	}
	d.single(kind, SevError, &r, x.Msg, "")
}
