package hazard

import "github.com/ptoasm/ptoasm/machine"

// A wait on a word one agent adds to repeatedly (a cumulative counter: a
// ring's per-round Ready count, a generation) is ordered only after the
// adds it needed, not after every add that happened to land before it
// polled. `twait @Ready[0], %r #cmp=ge` in round r needs the notifier's
// first r adds; its (r+1)-th add, if it landed already, is not something
// the program waited for, and on a slower notifier the wait passes without
// it. Joining the whole word made the verdict follow the timing: a wait on
// the previous round's count hid the RAW with the round's put whenever the
// notify of the round came first (hazards/ring_slots_wrong_round, whose
// ranks run in lock step so the notify always came first).
//
// So while one agent's releases make up a word's clock (cell.sigFrom), the
// detector keeps that agent's earlier releases of the word, with the sum of
// the run's adds after each, and a satisfied single-word wait acquires the
// earliest release whose value already met the compare, in the
// notifier's own order (one scalar's adds land in program order: TNOTIFY
// ends with BAR ALL). Several notifiers of one word, or a plain store
// among them, keep the join of everything (Detector.signalCell), as do
// waits over several words.

// maxPrefix bounds the releases kept per word: a wait that needs an older
// one than the oldest kept is ordered after the oldest kept, which orders
// more than the program does (a missed race, never a false one).
const maxPrefix = 8

// sigPrefix is the earlier releases of the one agent whose latest release
// is a word's clock, oldest first, kept under that latest release's
// record number (cell.sigAt, unique in the detector's life): a cell split
// in two shares its history with its twin, and a word that changed its
// clock since is never found under the old number.
type sigPrefix struct {
	from int32  // the notifier, agent+1 (cell.sigFrom)
	gen  uint32 // the run generation the releases belong to
	rels []prefixRel
	// dropped says rels lost its oldest (maxPrefix): the value before
	// the first add is no longer known to be what it was.
	dropped bool
}

// prefixRel is one earlier release: the word's clock and relLoc as the
// agent's add left them, and the run's sum of adds to the word after it
// (sigHist.runAdd), so that the value the word had then is the value a
// wait read minus the adds that came after.
type prefixRel struct {
	cum    int64
	clock  vclock
	loc    pipeVals
	hasLoc bool
}

// waitCmp is the satisfied single-word wait whose word signalAccess visits
// (Detector.signalWait): its compare, the value it compared with, and the
// value it read.
type waitCmp struct {
	on          bool
	cmp         string
	want, value int64
}

// keepPrefix is called when agent a's add is about to replace a's earlier
// release as word c's clock: it moves the word's history, with that
// release appended, to the side (d.movedPrefix) for keptPrefix to file
// under the new release's number.
func (d *Detector) keepPrefix(c *cell) {
	var p *sigPrefix
	if len(d.prefixes) > 0 {
		if p = d.prefixes[c.sigAt]; p != nil {
			delete(d.prefixes, c.sigAt)
			if p.from != c.sigFrom || p.gen != d.gen {
				p = nil
			}
		}
	}
	if p == nil {
		p = &sigPrefix{from: c.sigFrom, gen: d.gen}
	}
	var ent prefixRel
	if h := c.hist; h != nil {
		if h.runGen == d.gen {
			ent.cum = h.runAdd
		}
		if h.hasLoc {
			ent.loc, ent.hasLoc = h.relLoc, true
		}
	}
	// A root table of its own: sharing the word's would take the word's
	// (and so, at the replacing copy, the notifier's) ownership of its
	// root, and the notifier's next raise would copy it.
	ent.clock.g, ent.clock.mine = make([]*vgroup, 0, len(c.sig.g)), true
	ent.clock.copyFrom(&c.sig)
	if len(p.rels) == maxPrefix {
		copy(p.rels, p.rels[1:])
		p.rels = p.rels[:maxPrefix-1]
		p.dropped = true
	}
	p.rels = append(p.rels, ent)
	d.movedPrefix = p
}

// keptPrefix files the history keepPrefix set aside under word c's new
// release number.
func (d *Detector) keptPrefix(c *cell) {
	if d.movedPrefix == nil {
		return
	}
	if d.prefixes == nil {
		d.prefixes = make(map[uint64]*sigPrefix)
	}
	d.prefixes[c.sigAt] = d.movedPrefix
	d.movedPrefix = nil
}

// dropPrefix forgets word c's history: its clock stops being one agent's
// releases (another agent's add, a plain store, a new run).
func (d *Detector) dropPrefix(c *cell) {
	if len(d.prefixes) > 0 && c.sigFrom != 0 {
		delete(d.prefixes, c.sigAt)
	}
}

// prefixFor tells what of word c the wait being visited needed: nothing
// (none: the value before the notifier's first add of the run already met
// the compare), an earlier release (ent), or the latest (nil, false: the
// whole word is joined, as it is whenever the detector cannot tell).
func (d *Detector) prefixFor(c *cell) (ent *prefixRel, none bool) {
	w := &d.wait
	h := c.hist
	if !w.on || c.sigFrom == 0 || h == nil || h.runGen != d.gen {
		return nil, false
	}
	var p *sigPrefix
	if len(d.prefixes) > 0 {
		if p = d.prefixes[c.sigAt]; p != nil && (p.from != c.sigFrom || p.gen != d.gen) {
			p = nil
		}
	}
	// The value before the run's first add: every add of the run is the
	// notifier's (another agent's would have made sigFrom 0) unless a plain
	// store of the run came between, and runAdd sums them all.
	if (p == nil || !p.dropped) && !(c.hasW && c.w.gen == d.gen && c.w.agent != d.host) &&
		machine.CompareSignal(w.cmp, w.value-h.runAdd, w.want) {
		return nil, true
	}
	if p == nil {
		return nil, false
	}
	for i := range p.rels {
		if machine.CompareSignal(w.cmp, w.value-(h.runAdd-p.rels[i].cum), w.want) {
			return &p.rels[i], false
		}
	}
	return nil, false
}

// acquirePrefix joins the earlier release ent of word c's notifier into
// agent a (acquireSig for one that is no longer the word's clock).
func (d *Detector) acquirePrefix(a int32, c *cell, ent *prefixRel) {
	d.acquire(a, &ent.clock)
	if ent.hasLoc {
		d.acquireLoc(a, d.coreOf(c.sigFrom-1), &ent.loc)
	}
}
