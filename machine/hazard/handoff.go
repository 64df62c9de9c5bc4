package hazard

import (
	"fmt"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
)

// A core-local tile handed from one pipe to another (handoff).
//
// Most checks of a core-local cell meet one of two states (docs/
// performance.md, round 16 of lint: 479 000 of 676 000 cell visits of the
// 8-rank allgather_gemm lint at M=1024): a producer pipe's write of a tile
// whose last write is its own and whose one read is the consumer's, ordered
// before it by their flag; and the consumer's read of a tile whose last
// write is the producer's, ordered before it, with at most the shadowed
// writes that write left (history.go). For both the general path
// (accessCell) reports, notes and moves nothing, and what it leaves in the
// cell is plain: the read joins as the cell's first read, the shadowed
// writes the watermark has passed leave; the write becomes the last, its
// own previous write kept shadowed when the watermark says so, and the read
// leaves. handoff tells those states from the cell's header and records,
// with the orderings told from the accessing agent's core-mate components
// (hb's case for another pipe of its core) instead of the clock's calls,
// and makes just that change; under checkShortcuts the general path runs
// too and checkHandoff compares the two.

// visitCell is accessCell for a cell the cache found: by handoff when it
// takes the access. (The cache's hits call it on the lines that called
// accessCell, so default.pgo's call sites keep their lines.)
func (d *Detector) visitCell(r *rec, acc *machine.Access, c *cell, g geo, uninitLo, uninitHi *int64) {
	if !d.handoff(r, acc, c, g) {
		d.accessCell(r, acc, c, g, uninitLo, uninitHi)
	}
}

// handoff does accessCell on core-local cell c (geo g) for access r of acc
// when the cell is in one of the two states above, and reports whether it
// did. A read takes it when nothing read c since its last write, which was
// not the launch's first and is ordered before r, and every other write c
// keeps is a shadowed one ordered before r (so that offerShadowed has
// nothing to say). A plain write takes it when no ghost waits and c keeps
// no uninitialised read nor other write, its last write is r's agent's
// own, ordered before r by r's lag, and its one read is another agent's,
// ordered before r and not kept raced.
func (d *Detector) handoff(r *rec, acc *machine.Access, c *cell, g geo) bool {
	if acc.Space == asm.GM || len(c.reads) != 0 || !c.hasW {
		return false
	}
	if !acc.Write {
		if c.hasR || !c.written || c.firstW {
			return false
		}
		la, lc := d.aloc[r.agent], &d.agents[r.agent].lc
		if !d.before(&c.w, la, lc) {
			return false
		}
		if c.lists != nil {
			for x, adds := 0, c.lists.adds; x < len(adds); x++ {
				if w := &adds[x]; !w.shadowed() || !d.before(w, la, lc) {
					return false
				}
			}
		}
	} else {
		if acc.Atomic || !c.hasR || len(d.ghosts) > 0 || c.hasUninit() || c.hasAdds() {
			return false
		}
		if c.w.agent != r.agent || c.read0.agent == r.agent || c.read0.raced {
			return false
		}
		la, lc := d.aloc[r.agent], &d.agents[r.agent].lc
		if v, told := selfOrdered(&c.w, r); !told || !v || !d.before(&c.read0, la, lc) {
			return false
		}
		if c.hasSReads() && !d.beforeSReads(c, r, la, lc) {
			return false
		}
	}
	if checkShortcuts && !d.handingCopy {
		d.checkHandoff(r, acc, c, g)
		return true
	}
	// accessCell's change to c: a read joins as the first read, and the
	// shadowed writes the core's watermark has passed leave; a write
	// becomes the last, its agent's previous write kept shadowed while an
	// op issued before it is still to land (shadows), and the read leaves.
	// It is written here, not called: default.pgo inlines handoff into
	// visitCell, and a call here was not inlined there (round 27 of lint).
	if !acc.Write {
		if c.hasAdds() {
			adds, n := c.lists.adds, 0
			low := d.landed(r, acc)
			for x := range adds {
				if needShadowed(&adds[x], low) {
					adds[n] = adds[x]
					n++
				}
			}
			if n < len(adds) {
				c.setAdds(adds[:n])
			}
		}
		c.read0, c.hasR = *r, true
		return true
	}
	// Every write still here past r (cellLists.kept): none dropped from
	// adds, w shadowed.
	kept := c.written && c.firstW
	if c.lists != nil {
		kept = c.written && (c.firstW || c.lists.kept) && len(c.lists.adds) == 0
		c.lists.adds = c.lists.adds[:0]
	}
	low := d.landed(r, acc)
	unlanded := low >= 0 && low < issueOf(r.serial)-1 // (d.unlanded)
	if unlanded && d.shadowPair(&c.w, r) {            // shadows
		c.setAdds(append(c.adds(), shadowOf(&c.w, r)))
		c.lists.kept = kept
	} else if c.lists != nil {
		c.lists.kept = false
	}
	// The read leaves, kept shadowed when readShadows says so (read0 is
	// of r's core: before told it); the shadowed reads the watermark has
	// passed leave (meetSReads).
	if c.hasSReads() {
		l, n := c.lists.sreads, 0
		for x := range l {
			if needShadowed(&l[x], low) {
				l[n] = l[x]
				n++
			}
		}
		c.lists.sreads = l[:n]
	}
	if unlanded && sameCoreShadows(&c.read0, r) {
		c.addSRead(shadowOf(&c.read0, r))
	}
	c.firstW = !c.written
	c.w, c.written = *r, true
	c.hasR = false
	return true
}

// beforeSReads reports whether write r of agent a (la, lc as before's)
// meets no shadowed read of cell c it must race (meetSReads): each is
// ordered before r, or r was issued after its overwrite.
func (d *Detector) beforeSReads(c *cell, r *rec, la uint32, lc *pipeVals) bool {
	for x, l := 0, c.lists.sreads; x < len(l); x++ {
		if sr := &l[x]; issueOf(r.serial) < sr.overwrite() && !d.before(sr, la, lc) {
			return false
		}
	}
	return true
}

// before reports whether prev is ordered before an access of agent a as
// hb tells it for an agent of a's core in the current run generation: a's
// component of prev's agent, in a's lc (lc, with la = aloc[a]), covers
// prev. False is no verdict (another core, an earlier run, the host): the
// caller takes the general path then.
func (d *Detector) before(prev *rec, la uint32, lc *pipeVals) bool {
	if uint(prev.agent) >= uint(len(d.aloc)) || prev.gen != d.gen || prev.agent == d.host || la < 1<<4 {
		return false
	}
	li := d.aloc[prev.agent]
	return li>>4 == la>>4 && lc[li&15] >= prev.epoch
}

// handoffs counts the accesses checkHandoff compared.
var handoffs int

// checkHandoff runs handoff, unchecked, on a copy of cell c, then the
// general path on c itself, and panics unless handoff takes the copy, both
// leave the same state and the general path queued no note, moved nothing
// and found nothing uninitialised, and unless each ordering before told is
// the clock's.
func (d *Detector) checkHandoff(r *rec, acc *machine.Access, c *cell, g geo) {
	shortcuts++
	handoffs++
	told := []*rec{&c.w}
	if c.hasR {
		told = append(told, &c.read0)
	}
	for x, adds := 0, c.adds(); x < len(adds); x++ {
		told = append(told, &adds[x])
	}
	for _, p := range told {
		if d.before(p, d.aloc[r.agent], &d.agents[r.agent].lc) && !d.hbOrSame(p, r) {
			panic(fmt.Sprintf("hazard: agent %d's access at epoch %d against agent %d's at %d: before says ordered, the clock not", r.agent, r.epoch, p.agent, p.epoch))
		}
	}
	cp := &cell{lo: c.lo, hi: c.hi, written: c.written, hasW: c.hasW, firstW: c.firstW, hasR: c.hasR,
		w: c.w, read0: c.read0, reads: append([]rec(nil), c.reads...)}
	cp.setAdds(append([]rec(nil), c.adds()...))
	cp.setSReads(append([]rec(nil), c.sreads()...))
	notes, moved := len(d.notes), len(d.moved)
	d.handingCopy = true
	took := d.handoff(r, acc, cp, g)
	d.handingCopy = false
	if !took {
		panic(fmt.Sprintf("hazard: agent %d's handoff %s at epoch %d: not taken on the cell's copy", r.agent, verb(acc), r.epoch))
	}
	lo, hi := int64(-1), int64(-1)
	d.accessCell(r, acc, c, g, &lo, &hi)
	if len(d.notes) != notes || len(d.moved) != moved || lo >= 0 {
		panic(fmt.Sprintf("hazard: agent %d's handoff %s at epoch %d: the general path noted %d races, moved %d, uninitialised [%d, %d)", r.agent, verb(acc), r.epoch, len(d.notes)-notes, len(d.moved)-moved, lo, hi))
	}
	fast, slow := stateOf(cp), stateOf(c)
	if fmt.Sprint(fast) != fmt.Sprint(slow) {
		panic(fmt.Sprintf("hazard: agent %d's handoff %s at epoch %d:\nhandoff    %+v\naccessCell %+v", r.agent, verb(acc), r.epoch, fast, slow))
	}
}
