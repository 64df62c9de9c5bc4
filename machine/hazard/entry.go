package hazard

import (
	"fmt"
	"math"

	"unsafe"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
)

// A memo entry as its core's hand-off state (entryState).
//
// A memo hit in one of handoff's two states read and wrote the cell's
// three lines (its header, last write and first read), each cold by the
// core's next event: the machine interleaves every core's events, and a
// core's entries and cells are evicted between two of its own
// (docs/performance.md, round 34 of lint). An entry whose cell is in a
// state the hand-offs keep to (no other reads, no other writes, no
// uninitialised reads, written in this run generation, a data cell) owns
// the cell: it holds the last write's and first read's agent and epoch,
// the few flags the hand-offs test, and pointers to their records, which
// are in the core's arena (the exec's record, one copy per op instance
// and not per access). A hit in a hand-off state then reads and writes
// the entry alone. The cell is made whole (its records, hasR and firstW
// written back, its own lists put back) by whatever reaches it otherwise:
// every path to a cell's state goes through visitCell, accessCell, a
// split or collapse (copyTo, imap.collapse), a host write or the
// reads-from fingerprint, and each calls makeWhole; an owned cell's lists
// are its entry's mark, whose owner names the entry. The entry lets go
// when it is refilled, when its core's arena is full, at a run boundary,
// when the cache is reset and when the findings are read. Under
// checkShortcuts every hit the entry takes also runs the general path on
// a whole copy of the cell (checkOwn).

// entryState is the hand-off state an entry holds while it owns its cell
// (own): the second line of accMemo. The entry's mark, the lists its
// cell has while it owns it, is cellCache.marks' at the entry's index.
type entryState struct {
	// wRec and r0Rec are the records of the cell's last write and first
	// read (in the core's arena), nil while the cell's own are current.
	wRec, r0Rec *rec
	wAgent      int32
	wEpoch      uint32
	r0Agent     int32
	r0Epoch     uint32
	own         bool
	hasR        bool
	firstW      bool
	r0Raced     bool
	// hasS marks a shadowed write the cell keeps beside its last (its
	// only other write, history.go): the record at sBase (an earlier last
	// write's) with lag sLag, by the last write's agent at sEpoch, shadowed
	// until issue number sOver (rec.overwrite).
	hasS bool
	// lost marks an entry whose cell another path reached while it
	// owned it (a producer's run, another entry): it owns it no more
	// until it is refilled, or the two would hand the cell back and
	// forth, each time made whole and adopted again.
	lost   bool
	sLag   uint16
	sEpoch uint32
	sOver  int64
	sBase  *rec
}

// arenaRecs is how many records a core's arena holds before its entries
// let go of their cells.
const arenaRecs = 256

// makeWhole gives c back its state when a memo entry owns it.
func (c *cell) makeWhole() {
	if l := c.lists; l != nil && l.owner != nil {
		l.owner.release()
		l.owner.lost = true
	}
}

// release makes e's cell whole when e owns it, and leaves e owning none.
func (e *accMemo) release() {
	if !e.own {
		return
	}
	c := e.c
	s := e.shadowRec() // before c.w: sBase may be it
	if e.wRec != nil {
		c.w = *e.wRec
	}
	if e.r0Rec != nil {
		c.read0 = *e.r0Rec
	}
	c.hasR, c.firstW = e.hasR, e.firstW
	c.lists = c.lists.saved
	if c.lists != nil {
		c.lists.adds = c.lists.adds[:0]
	}
	if e.hasS {
		c.setAdds(append(c.adds(), s))
	}
	e.own, e.hasS, e.wRec, e.r0Rec, e.sBase = false, false, nil, nil, nil
}

// shadowRec is the shadowed write e holds (hasS): shadowOf's record.
func (e *accMemo) shadowRec() rec {
	if !e.hasS {
		return rec{}
	}
	s := *e.sBase
	s.raced, s.lag = true, e.sLag
	return s
}

// markOf is entry e's mark, made on first use.
func (cc *cellCache) markOf(e *accMemo) *cellLists {
	i := int((uintptr(unsafe.Pointer(e)) - uintptr(unsafe.Pointer(&cc.memo[0]))) / unsafe.Sizeof(accMemo{}))
	if len(cc.marks) < len(cc.memo) {
		cc.marks = append(cc.marks, make([]*cellLists, len(cc.memo)-len(cc.marks))...)
	}
	if cc.marks[i] == nil {
		cc.marks[i] = &cellLists{}
	}
	return cc.marks[i]
}

// lastWrite is the record of the last write of the cell e owns.
func (e *accMemo) lastWrite() *rec {
	if e.wRec != nil {
		return e.wRec
	}
	return &e.c.w
}

// wholeAll makes every owned cell whole and empties the arenas.
func (cc *cellCache) wholeAll() {
	for i := range cc.memo {
		cc.memo[i].release()
	}
	for i := range cc.arena {
		cc.arena[i] = cc.arena[i][:0]
	}
}

// wholeCore makes the cells core ci's entries own whole.
func (cc *cellCache) wholeCore(ci int) {
	for i := range cc.memo[ci*memoWays : (ci+1)*memoWays] {
		cc.memo[ci*memoWays+i].release()
	}
}

// keep files r in the arena of core ci, or finds it there as the last
// record filed (an op's accesses share their record), and returns where.
// A full arena first makes its core's cells whole, e's among them.
func (d *Detector) keep(r *rec, ci int) *rec {
	cc := &d.cells
	if ci >= len(cc.arena) {
		cc.arena = append(cc.arena, make([][]rec, ci+1-len(cc.arena))...)
	}
	ar := cc.arena[ci]
	if n := len(ar); n > 0 && sameRec(&ar[n-1], r) {
		if checkShortcuts && ar[n-1] != *r {
			panic(fmt.Sprintf("hazard: sameRec took %+v for %+v", ar[n-1], *r))
		}
		return &ar[n-1]
	}
	if len(ar) == cap(ar) {
		if ar == nil {
			ar = make([]rec, 0, arenaRecs)
		} else {
			cc.wholeCore(ci)
			ar = ar[:0]
		}
	}
	ar = append(ar, *r)
	cc.arena[ci] = ar
	return &ar[len(ar)-1]
}

// sameRec reports whether records a and b are equal, by the fields that
// tell two records of accesses apart: an op instance's (agent, epoch) in
// a run generation fixes the rest but for what each access sets (write,
// atomic, the lag a read may renew) and the marks of kept records; the
// serial, op and step besides, for records not of an exec. A whole
// compare was a call to memequal.
func sameRec(a, b *rec) bool {
	return a.agent == b.agent && a.epoch == b.epoch && a.gen == b.gen && a.serial == b.serial && a.op == b.op &&
		a.step == b.step && a.write == b.write && a.atomic == b.atomic && a.raced == b.raced && a.lag == b.lag
}

// adopt makes e the owner of its cell c after a hit visited c, when c is
// in a state the entry can hold, the visit was a hand-off (visitCell's
// handed: the cell is in the hand-off flow) and no other path took the
// cell from e before.
func (d *Detector) adopt(e *accMemo, c *cell, acc *machine.Access) {
	if !d.handed || e.own || e.lost || e.c != c || acc.Space == asm.GM || len(c.reads) != 0 || c.sigBox != nil || !c.written || !c.hasW ||
		c.w.gen != d.gen || c.hasR && c.read0.gen != d.gen {
		return
	}
	var sb *rec
	if l := c.lists; l != nil {
		if l.owner != nil || len(l.unin) != 0 || len(l.adds) > 1 {
			return
		}
		if len(l.adds) == 1 {
			if sb = &l.adds[0]; !sb.shadowed() || sb.agent != c.w.agent || sb.gen != d.gen {
				return
			}
		}
	}
	mark := d.cells.markOf(e)
	mark.owner, mark.saved, c.lists = e, c.lists, mark
	e.own, e.wRec, e.r0Rec = true, nil, nil
	if e.hasS = sb != nil; e.hasS {
		e.sBase, e.sLag, e.sEpoch, e.sOver = sb, sb.lag, sb.epoch, sb.overwrite()
	}
	e.wAgent, e.wEpoch, e.hasR, e.firstW = c.w.agent, c.w.epoch, c.hasR, c.firstW
	e.r0Agent, e.r0Epoch, e.r0Raced = c.read0.agent, c.read0.epoch, c.read0.raced
}

// handOwn is handoff on the state entry e holds for its cell: the same
// tests on the entry's fields (the cell's lists, reads and written flag
// are as adopt found them while e owns it, and its records are of this
// run generation), and the same change, made to the entry. It reports
// whether it took the access; when it did not, e may have let go.
func (d *Detector) handOwn(r *rec, acc *machine.Access, e *accMemo) bool {
	if acc.Space == asm.GM || r.gen != d.gen {
		return false
	}
	r.write, r.atomic = acc.Write, acc.Atomic && acc.Write
	la, lc := d.aloc[r.agent], &d.agents[r.agent].lc
	if !acc.Write {
		if e.hasR || e.firstW || !d.beforeAt(e.wAgent, e.wEpoch, la, lc) || e.hasS && !d.beforeAt(e.wAgent, e.sEpoch, la, lc) {
			return false
		}
	} else {
		if acc.Atomic || !e.hasR || e.hasS || len(d.ghosts) > 0 || e.wAgent != r.agent || e.r0Agent == r.agent || e.r0Raced {
			return false
		}
		// selfOrdered(&c.w, r), the gens being equal.
		if e.wEpoch >= r.epoch || r.lag == math.MaxUint16 || r.epoch-uint32(r.lag) < e.wEpoch ||
			!d.beforeAt(e.r0Agent, e.r0Epoch, la, lc) {
			return false
		}
	}
	p := d.keep(r, int(la>>4)-1)
	if !e.own {
		return false // the arena was full: the cell is whole again
	}
	d.hit = nil
	var cp *cell
	if checkShortcuts {
		d.checkMemo(r, acc, e)
		cp = d.checkOwnBefore(r, e)
	}
	if !acc.Write {
		// The shadowed write leaves once the core's watermark passed its
		// overwrite (needShadowed).
		if e.hasS {
			if low := d.landed(r, acc); low < 0 || low >= e.sOver-1 {
				e.hasS = false
			}
		}
		e.r0Rec, e.r0Agent, e.r0Epoch, e.r0Raced, e.hasR = p, r.agent, r.epoch, r.raced, true
	} else {
		// The last write stays shadowed while an op issued before r is
		// still to land (shadows).
		if w := e.lastWrite(); d.shadowPair(w, r) && d.unlanded(r, acc) {
			lag := uint16(min(issueOf(r.serial)-issueOf(w.serial), math.MaxUint16))
			e.hasS, e.sBase, e.sLag, e.sEpoch, e.sOver = true, w, lag, w.epoch, issueOf(w.serial)+int64(lag)
		}
		e.wRec, e.wAgent, e.wEpoch = p, r.agent, r.epoch
		e.firstW, e.hasR = false, false
	}
	if checkShortcuts {
		d.checkOwn(r, acc, e, cp)
	}
	return true
}

// beforeAt is before for a record of this run generation by agent a at
// epoch.
func (d *Detector) beforeAt(a int32, epoch uint32, la uint32, lc *pipeVals) bool {
	if uint(a) >= uint(len(d.aloc)) || a == d.host || la < 1<<4 {
		return false
	}
	li := d.aloc[a]
	return li>>4 == la>>4 && lc[li&15] >= epoch
}

// ownHits counts the hits checkOwn compared.
var ownHits int

// wholeCopy is e's cell as making it whole would leave it, in a new cell.
func (e *accMemo) wholeCopy() *cell {
	c := e.c
	cp := &cell{lo: c.lo, hi: c.hi, written: c.written, hasW: c.hasW, firstW: e.firstW, hasR: e.hasR, w: *e.lastWrite(), read0: c.read0}
	if e.r0Rec != nil {
		cp.read0 = *e.r0Rec
	}
	if e.hasS {
		cp.setAdds([]rec{e.shadowRec()})
	}
	return cp
}

// checkOwnBefore panics unless each ordering handOwn is about to rely on
// is the clock's, and returns the cell as it stands before the access.
func (d *Detector) checkOwnBefore(r *rec, e *accMemo) *cell {
	cp := e.wholeCopy()
	if cp.w.agent != e.wAgent || cp.w.epoch != e.wEpoch || cp.w.gen != d.gen || cp.hasR && (cp.read0.agent != e.r0Agent || cp.read0.epoch != e.r0Epoch || cp.read0.raced != e.r0Raced || cp.read0.gen != d.gen) {
		panic(fmt.Sprintf("hazard: agent %d's entry disagrees with its records: w %d@%d read0 %d@%d, records %+v %+v", r.agent, e.wAgent, e.wEpoch, e.r0Agent, e.r0Epoch, cp.w, cp.read0))
	}
	told := []*rec{&cp.w}
	if cp.hasR {
		told = append(told, &cp.read0)
	}
	for x, adds := 0, cp.adds(); x < len(adds); x++ {
		if adds[x].agent != e.wAgent || adds[x].epoch != e.sEpoch || adds[x].overwrite() != e.sOver {
			panic(fmt.Sprintf("hazard: agent %d's entry disagrees with its shadowed write: %d@%d until %d, record %+v", r.agent, e.wAgent, e.sEpoch, e.sOver, adds[x]))
		}
		told = append(told, &adds[x])
	}
	for _, p := range told {
		if d.before(p, d.aloc[r.agent], &d.agents[r.agent].lc) && !d.hbOrSame(p, r) {
			panic(fmt.Sprintf("hazard: agent %d's access at epoch %d against agent %d's at %d: before says ordered, the clock not", r.agent, r.epoch, p.agent, p.epoch))
		}
	}
	return cp
}

// checkOwn runs the general path on cp, e's cell as it stood before r's
// access, and panics unless it queued no note, moved nothing, found
// nothing uninitialised and left the state e holds now.
func (d *Detector) checkOwn(r *rec, acc *machine.Access, e *accMemo, cp *cell) {
	shortcuts++
	ownHits++
	g := geo{}
	if e.w > 0 {
		lo, hi := acc.Bounds()
		g = exactGeo(cp, lo, hi)
	}
	notes, moved := len(d.notes), len(d.moved)
	lo, hi := int64(-1), int64(-1)
	d.accessCell(r, acc, cp, g, &lo, &hi)
	if len(d.notes) != notes || len(d.moved) != moved || lo >= 0 {
		panic(fmt.Sprintf("hazard: agent %d's owned %s at epoch %d: the general path noted %d races, moved %d, uninitialised [%d, %d)", r.agent, verb(acc), r.epoch, len(d.notes)-notes, len(d.moved)-moved, lo, hi))
	}
	fast, slow := stateOf(e.wholeCopy()), stateOf(cp)
	if fmt.Sprint(fast) != fmt.Sprint(slow) {
		panic(fmt.Sprintf("hazard: agent %d's owned %s at epoch %d:\nentry      %+v\naccessCell %+v", r.agent, verb(acc), r.epoch, fast, slow))
	}
}
