package hazard

import (
	"fmt"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
)

// ---- signals --------------------------------------------------------------

func (d *Detector) notify(e *machine.Event) {
	if len(e.Accesses) == 0 {
		return
	}
	a := d.agent(e.Agent)
	d.enter(a)
	serial, _ := d.takeIssueOf(a, e, false)
	ag := &d.agents[a]
	ag.n++
	if ag.kind == akScalar {
		d.raiseOwn(a)
	}
	r := d.mkrec(a, e, serial)
	acc := e.Accesses[0]
	acc.Write = true
	acc.Atomic = e.Word == "add"
	if acc.Hi <= acc.Lo {
		return
	}
	d.checkBounds(&r, &acc)
	r.write, r.atomic = true, acc.Atomic
	if len(d.eqRunTensors) > 0 {
		d.eqTouch(&r, &acc, true, e.Want)
	}
	if len(d.failed) > 0 && r.atomic {
		d.testNotify(&r, &acc, e.Value) // a plain set is signalAccess's
	}
	if d.histGen == 0 {
		d.histGen = d.gen // staleCheck's, which signalAccess does not read
	}
	if acc.NumRows() <= 1 {
		// One run: signalAccess's span visits exactly the words the loop
		// below would span again (it splits at lo and hi, and merges
		// nothing), so each word's history is written as it is visited
		// (histNote), in one lookup of the word instead of two.
		d.note = histNote{on: true, val: e.Value}
		d.signalAccess(&r, &acc, true)
		d.note = histNote{}
		if checkShortcuts {
			d.checkNoteHist(&r, &acc)
		}
		d.eqNotify(&r, &acc, e.Value)
		d.eqCountWrite(&r, &acc, e.Value)
		return
	}
	d.signalAccess(&r, &acc, true)
	d.eachSigCell(d.shadowFor(&acc), acc.Lo, acc.Hi, sigWrite, false, func(c *cell) { d.wroteHist(c, &r, e.Value) })
	d.eqNotify(&r, &acc, e.Value)
	d.eqCountWrite(&r, &acc, e.Value)
}

// histNote, while on, has signalAccess write the history of each word a
// notify visits (notify); val is the notify's value.
type histNote struct {
	on  bool
	val int64
}

// wroteHist records notify r, of value val, in word c's history: its last
// write, and this run's sum of atomic adds.
func (d *Detector) wroteHist(c *cell, r *rec, val int64) {
	h := d.sigHistOf(c)
	h.wrote(r)
	if h.runGen != d.gen {
		h.runAdd, h.runGen = 0, d.gen
	}
	if r.atomic {
		h.runAdd += val
	}
}

func (d *Detector) signalWait(e *machine.Event) {
	a := d.agent(e.Agent)
	d.enter(a)
	serial, _ := d.takeIssueOf(a, e, false)
	r := d.mkrec(a, e, serial)
	d.countWait(a)
	for i := range e.Accesses {
		acc := e.Accesses[i]
		if acc.Hi <= acc.Lo {
			continue
		}
		d.waitAcc = uint32(i)
		acc.Write = false
		d.checkBounds(&r, &acc)
		d.staleCheck(&r, &acc, e)
		if e.Op != nil && e.Op.Info != nil && e.Op.Info.Op == asm.OpTwait {
			d.eqCountWaitOn(&r, &acc, e) // before it acquires (eqcount.go)
		}
		d.wait = waitFor(e, &acc)
		d.signalAccess(&r, &acc, false)
		d.wait = waitCmp{}
		d.noteReadsFrom(&r, &acc)
		d.eqWaitOn(&r, &acc, e)
	}
}

// staleCheck notes a satisfied wait whose condition holds on the part of the
// signal's value that earlier runs left: writes of an earlier run with no
// host write after them (kernels.md §3(d) R1). Signal memory survives a
// launch, so such a wait passes whatever this run's peers do, which makes the
// verdict independent of whether a peer's notify of this run happened to land
// first. A wait over several words (#count) compares each with the same
// operand, so each word is checked on the value it held (Event.Words, as
// waitFor reads them): an earlier word left stale while the last is fresh
// passes as surely (hazards/stale_words_grown; it was missed while only the
// last word, the one Event.Value reports, was checked). Where the machine
// reports no values per word, the last word is checked. The wait is checked
// against the value it compared with at run time (Event.Want), so a
// generation computed in a register (loaded from GM, or from a loop
// variable) that restarts every launch is caught like a constant one.
func (d *Detector) staleCheck(r *rec, acc *machine.Access, e *machine.Event) {
	if e.Op == nil || e.Op.Info == nil {
		return
	}
	// No word holds a write of an earlier run (sigHist.stale finds none),
	// and signalAccess looks up these very bytes next: a ring's wait
	// looked its word up twice. (The last word of a wider wait whose
	// words are not known is a span of its own, which may split a cell,
	// so that one stays.)
	none := (d.histGen == 0 || d.histGen == d.gen) && acc.NumRows() <= 1
	var sz int64
	if acc.Tensor != nil {
		sz = int64(acc.Tensor.DType.Size())
	}
	if none && acc.Hi-acc.Lo <= sz {
		return // one word: before waitFor, which a ring's every wait paid
	}
	w := waitFor(e, acc)
	lo := acc.Lo
	if w.words == nil && sz > 0 && acc.Hi-sz > lo {
		lo = acc.Hi - sz // only the last word's value is known
	}
	if none && lo == acc.Lo {
		return
	}
	cmp, want := machine.SignalCmp(e.Op), e.Want
	d.eachSigCell(d.shadowFor(acc), lo, acc.Hi, sigRead, false, func(c *cell) {
		if w.words == nil {
			d.staleCell(r, acc, c, cmp, want, e.Value)
			return
		}
		// Each word of the cell on its own value: a cell wider than a
		// word (words written together) shares one history.
		for k := max(c.lo, w.lo); k < min(c.hi, acc.Hi); k += w.size {
			if i := (k - w.lo) / w.size; i < int64(len(w.words)) && d.staleCell(r, acc, c, cmp, want, w.words[i]) {
				return
			}
		}
	})
}

// staleCell notes wait r stale on word c, whose value was value, and says
// whether it did.
func (d *Detector) staleCell(r *rec, acc *machine.Access, c *cell, cmp string, want, value int64) bool {
	if c.hasW && c.w.agent != d.host && c.w.gen == d.gen {
		return false // a plain store of this run set the value
	}
	src, current := c.hist.stale(d.gen)
	if src == nil {
		return false
	}
	left := value
	if current && c.hist.runGen == d.gen {
		left -= c.hist.runAdd
	}
	if !machine.CompareSignal(cmp, left, want) {
		return false
	}
	d.notes = append(d.notes, raceNote{kind: KindStaleSignal, prev: *src, cur: *r, acc: *acc, lo: c.lo, hi: c.hi})
	return true
}

// checkNoteHist panics unless every word of notify r's bytes, spanned
// again, recorded r as its last write in this run (histNote).
func (d *Detector) checkNoteHist(r *rec, acc *machine.Access) {
	shortcuts++
	d.eachSigCell(d.shadowFor(acc), acc.Lo, acc.Hi, sigRead, false, func(c *cell) {
		if h := c.hist; h == nil || !h.hasLast || h.last != *r || h.runGen != d.gen {
			panic(fmt.Sprintf("hazard: signal word [%d, %d) of rank %d lacks the history of the notify that wrote it", c.lo, c.hi, acc.Rank))
		}
	})
}

// coreOf is agent a's core index (agentState.coreIdx), read from the dense
// aloc rather than the agent's state: at a wait the notifier's state is
// otherwise untouched, and its line was a cache miss per wait at hundreds
// of ranks.
func (d *Detector) coreOf(a int32) int32 {
	c := int32(d.aloc[a]>>4) - 1
	if checkShortcuts {
		shortcuts++
		if c != d.agents[a].coreIdx {
			panic(fmt.Sprintf("hazard: agent %d's core is %d, its aloc says %d", a, d.agents[a].coreIdx, c))
		}
	}
	return c
}
