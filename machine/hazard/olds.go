package hazard

import (
	"math"
	"unsafe"

	"github.com/ptoasm/ptoasm/asm"
)

// The overwritten GM accesses a cell keeps (history.go, "GM writes
// overwritten in order"), stored small: a 384-rank ring lint keeps them
// for each of its 147 456 chunk ranges, four entries each, and the box of
// four pairs of 64-byte records (640 bytes a range) was 94 MB of the
// lint's heap, most of its cost being the first touch of that memory
// (docs/performance.md, round 36 of lint). Each record is kept once per
// cell (a ring step's overwrite replaces another rank's read and its own
// previous write at once, and that write was the previous step's
// replacing one: four entries name five records), and packed into 24
// bytes without a pointer (packedRec) when its iteration vector is at
// most two deep and its numbers fit, as nearly all do: a box of 240
// bytes where it was 640 (208 before the shadowed reads' slice joined the
// lists, below).

// gmOld is a GM access w that a later write by, ordered after it,
// replaced as the cell's last: the two records' places in its oldsList.
type gmOld struct {
	w, by uint8
}

// oldsInline is how many entries an oldsList holds inline: two rounds of
// a range written and read once a round, which is as deep as nearly every
// kernel's cells go. A cell that keeps more (an access of another core
// lagging several rounds of ordered overwrites, up to the detector's bound,
// maxKept) moves them all behind the list's pointer (oldsMore.ents).
const oldsInline = 4

// oldRecsInline is how many packed records an oldsList holds inline: the
// five of a cell overwritten twice in order, each time after another
// agent's read.
const oldRecsInline = oldsInline + 1

// oldsList is a cell's overwritten GM accesses: n entries, oldest first
// (ents, or more.ents once spilled), and the records they name, each once.
// Place i < oldRecsInline is recs[i] (nrec of them are taken), place
// oldRecsInline+j is more.recs[j]: a record that does not pack, or one
// past the inline places (behind a pointer, since it is rare: its slice
// header took the box to the next size class).
type oldsList struct {
	recs [oldRecsInline]packedRec
	ents [oldsInline]gmOld
	n    uint8
	nrec uint8
	// stale says an entry left since the records were last packed, so
	// that some may be named by none (packOldRecs).
	stale bool
	// gen is the run generation of every packed record.
	gen  uint32
	more *oldsMore
}

// oldsMore is the rare part of an oldsList: records kept whole, the
// entries once more than oldsInline, and what the bound dropped.
type oldsMore struct {
	recs []rec
	// ents holds every entry while spilled (more than oldsInline were
	// kept at once since the list was last cleared).
	ents    []gmOld
	spilled bool
	// runs summarise the accesses the bound (maxKept) dropped from the
	// cell, up to maxKept runs (dropRun, dropruns.go).
	runs []dropRun
	// evicted is, per agent and kind of access, the latest access dropped
	// past the runs' bound: an access that is not ordered after one of
	// them may have raced a dropped access (keptMissed).
	evicted []evictedOld
}

// evictedOld is the latest access of one agent and kind (read, write,
// atomic add) that the bound dropped from a cell; the earlier ones of
// the agent and kind are ordered before it (epochs only grow).
type evictedOld struct {
	agent         int32
	epoch, gen    uint32
	write, atomic bool
}

// oldsBox is a cell's lists with room for its overwritten GM accesses:
// one allocation.
type oldsBox struct {
	ls cellLists
	ol oldsList
}

// A packedRec is 24 bytes, and a box one size class of 240: 208 for the
// lists and the kept accesses, and 24 for the shadowed reads' slice
// (cellLists.sreads, which only local memory uses; a union of the two would
// give the 32 bytes back, 4.7 MB at 384 ranks).
var _ [24 - unsafe.Sizeof(packedRec{})]struct{}
var _ [240 - unsafe.Sizeof(oldsBox{})]struct{}

// The places an entry names fit its uint8: the inline ones, and in more
// at most 2*MaxKeptLimit named ones after packOldRecs and the two one
// keepOld adds.
var _ [256 - oldRecsInline - 2*MaxKeptLimit - 2]struct{}

// packedRec is a rec whose iteration vector is at most packedIter deep
// with levels that fit 16 bits, whose serial fits 32 bits and whose run
// generation is its list's (oldsList.gen), its op as a place in the
// detector's table of them (oldOps, 0 for nil) that fits 16. 24 bytes, no
// pointer.
type packedRec struct {
	serial uint32
	agent  int32
	epoch  uint32
	iter   [packedIter]int16
	op     uint16
	lag    uint16
	step   uint8
	gap    uint8
	bits   uint8 // niter, then the flags (packedWrite...) from bit 3
	_      uint8
}

// packedIter is how deep an iteration vector a packedRec holds.
const packedIter = 2

const (
	packedWrite = 1 << (iota + 3) // below: niter, at most maxIter
	packedAtomic
	packedRaced
)

var _ [8 - maxIter]struct{} // niter fits packedRec's three bits

// olds returns the entries of the cell's overwritten GM accesses, whose
// records oldRec gives. The list aliases the cell's.
func (c *cell) olds() []gmOld {
	if c.lists == nil || c.lists.olds == nil {
		return nil
	}
	return c.lists.olds.entries()
}

// entries returns l's entries, oldest first, aliasing l's.
func (l *oldsList) entries() []gmOld {
	if l.more != nil && l.more.spilled {
		return l.more.ents[:l.n]
	}
	return l.ents[:l.n]
}

// push adds entry e, moving the entries behind the pointer when the
// inline ones are full.
func (l *oldsList) push(e gmOld) {
	if l.n < oldsInline && (l.more == nil || !l.more.spilled) {
		l.ents[l.n] = e
		l.n++
		return
	}
	m := l.moreRoom()
	if !m.spilled {
		m.ents, m.spilled = append(m.ents[:0], l.ents[:l.n]...), true
	}
	m.ents = append(m.ents[:l.n], e)
	l.n++
}

// popOldest drops l's oldest entry.
func (l *oldsList) popOldest() {
	e := l.entries()
	copy(e, e[1:])
	l.n, l.stale = l.n-1, true
}

// setOldsLen keeps the first n entries of the cell's olds (meetOlds).
func (c *cell) setOldsLen(n int) {
	l := c.lists.olds
	if n < int(l.n) {
		l.n, l.stale = uint8(n), true
	}
}

// hasOlds reports whether the cell keeps an overwritten GM access, whole
// or in a run of dropped ones (or remembers one dropped past those).
func (c *cell) hasOlds() bool {
	if c.lists == nil || c.lists.olds == nil {
		return false
	}
	l := c.lists.olds
	return l.n > 0 || l.more != nil && (len(l.more.runs) > 0 || len(l.more.evicted) > 0)
}

// clearOlds drops the cell's overwritten GM accesses.
func (c *cell) clearOlds() {
	if c.lists != nil && c.lists.olds != nil {
		l := c.lists.olds
		l.n, l.nrec, l.stale = 0, 0, false
		if m := l.more; m != nil {
			m.recs, m.ents, m.spilled, m.evicted, m.runs = m.recs[:0], m.ents[:0], false, m.evicted[:0], m.runs[:0]
		}
	}
}

// copyOldsFrom gives c the overwritten GM accesses of o (copyTo).
func (c *cell) copyOldsFrom(o *cell) {
	if !o.hasOlds() {
		c.clearOlds()
		return
	}
	l := c.oldsRoom(nil)
	more := l.more
	*l = *o.lists.olds
	l.more = more
	if om := o.lists.olds.more; om != nil {
		m := l.moreRoom()
		m.recs = append(m.recs[:0], om.recs...)
		m.ents = append(m.ents[:0], om.ents...)
		m.evicted = append(m.evicted[:0], om.evicted...)
		m.runs = append(m.runs[:0], om.runs...)
		m.spilled = om.spilled
	} else if more != nil {
		more.recs, more.ents, more.spilled, more.evicted, more.runs = more.recs[:0], more.ents[:0], false, more.evicted[:0], more.runs[:0]
	}
}

// oldsRoom returns the cell's oldsList, making it (with the lists when
// the cell has none: one box, from boxes when not nil, else the heap).
//
// A box lives as long as its cell (a reused cell keeps its lists), so a
// box from a slab pins nothing the cell would not: keepOld takes them from
// the detector's slab (oldsBoxes), whose arrays are prefaulted, since a
// 384-rank ring lint makes about 140 000 of them, 33 MB of fresh pages.
func (c *cell) oldsRoom(boxes *slab[oldsBox]) *oldsList {
	if c.lists == nil {
		var b *oldsBox
		if boxes != nil {
			b = boxes.get()
		} else {
			b = &oldsBox{}
		}
		b.ls.olds = &b.ol
		c.lists = &b.ls
	} else if c.lists.olds == nil {
		c.lists.olds = new(oldsList)
	}
	return c.lists.olds
}

// oldRec is the record at place i of c's oldsList, unpacked into dst when
// it is packed.
func (d *Detector) oldRec(c *cell, i uint8, dst *rec) *rec {
	l := c.lists.olds
	if i >= oldRecsInline {
		return &l.more.recs[i-oldRecsInline]
	}
	p := &l.recs[i]
	*dst = rec{agent: p.agent, epoch: p.epoch, gen: l.gen, serial: int64(p.serial), op: d.oldOps[p.op],
		step: p.step, niter: p.bits & 7, write: p.bits&packedWrite != 0, atomic: p.bits&packedAtomic != 0,
		raced: p.bits&packedRaced != 0, gap: p.gap, lag: p.lag}
	for k, v := range p.iter {
		dst.iter[k] = int32(v)
	}
	return dst
}

// oldIdent is the instance (agent, epoch, run generation) of the record
// at place i of c's oldsList.
func (c *cell) oldIdent(i uint8) (int32, uint32, uint32) {
	l := c.lists.olds
	if i >= oldRecsInline {
		r := &l.more.recs[i-oldRecsInline]
		return r.agent, r.epoch, r.gen
	}
	p := &l.recs[i]
	return p.agent, p.epoch, l.gen
}

// oldWrite reports whether the record at place i of c's oldsList is a
// write.
func (c *cell) oldWrite(i uint8) bool {
	l := c.lists.olds
	if i >= oldRecsInline {
		return l.more.recs[i-oldRecsInline].write
	}
	return l.recs[i].bits&packedWrite != 0
}

// pack returns r packed for l, and false when it does not fit (packedRec).
func (d *Detector) pack(l *oldsList, r *rec) (packedRec, bool) {
	if !shallow(r) || r.serial < 0 || r.serial > math.MaxUint32 || l.nrec > 0 && r.gen != l.gen {
		return packedRec{}, false
	}
	op := d.oldOpIndex(r.op)
	if op > math.MaxUint16 {
		return packedRec{}, false
	}
	return packedRec{serial: uint32(r.serial), agent: r.agent, epoch: r.epoch, op: uint16(op),
		lag: r.lag, step: r.step, bits: packedBits(r), gap: r.gap,
		iter: [packedIter]int16{int16(r.iter[0]), int16(r.iter[1])}}, true
}

// shallow names the levels past packedIter (2) up to maxIter (7), which
// these hold to.
var (
	_ [maxIter - 7]struct{}
	_ [7 - maxIter]struct{}
	_ [packedIter - 2]struct{}
	_ [2 - packedIter]struct{}
)

// shallow reports whether r's iteration vector fits a packedRec: two
// levels, each of 16 bits.
func shallow(r *rec) bool {
	return r.iter[2]|r.iter[3]|r.iter[4]|r.iter[5]|r.iter[6] == 0 &&
		r.iter[0] == int32(int16(r.iter[0])) && r.iter[1] == int32(int16(r.iter[1]))
}

// oldOpIndex is op's place in the detector's table of kept records' ops,
// added on first sight; 0 stands for nil. A kept write and the one that
// replaced it are mostly of two ops, so a cache of a few answers before
// the map.
func (d *Detector) oldOpIndex(op *asm.COp) uint32 {
	if op == nil {
		return 0
	}
	// (By the op's number in its kernel: a kernel's ops do not collide
	// until it has more than the cache's slots, where their addresses,
	// a size class apart, did.)
	h := &d.oldOpCache[uint(op.ID)%(1<<oldOpCacheBits)]
	if h.op == op {
		return h.i
	}
	i, ok := d.oldOpIdx[op]
	if !ok {
		if d.oldOpIdx == nil {
			d.oldOpIdx = map[*asm.COp]uint32{}
			d.oldOps = []*asm.COp{nil}
		}
		i = uint32(len(d.oldOps))
		d.oldOps = append(d.oldOps, op)
		d.oldOpIdx[op] = i
	}
	h.op, h.i = op, i
	return i
}

// oldOpCacheBits sizes Detector.oldOpCache: 1<<oldOpCacheBits slots.
const oldOpCacheBits = 4

// oldOpSlot is an entry of Detector.oldOpCache.
type oldOpSlot struct {
	op *asm.COp
	i  uint32
}

// packedIs reports whether p, of r's agent and epoch, is r packed
// (pack(r) == p, r packing), without packing r: a kept record is mostly met again (the previous
// overwrite, now w; this one, by for its second entry).
func (d *Detector) packedIs(l *oldsList, p *packedRec, r *rec) bool {
	return l.gen == r.gen && int64(p.serial) == r.serial && int32(p.iter[0]) == r.iter[0] && int32(p.iter[1]) == r.iter[1] &&
		p.lag == r.lag && p.step == r.step && p.gap == r.gap && p.bits == packedBits(r) &&
		d.oldOps[p.op] == r.op && shallow(r)
}

// packedBits is packedRec.bits for r.
func packedBits(r *rec) uint8 {
	f := r.niter
	if r.write {
		f |= packedWrite
	}
	if r.atomic {
		f |= packedAtomic
	}
	if r.raced {
		f |= packedRaced
	}
	return f
}

// oldPlace returns the place of record r in l, adding it unless an equal
// one is kept: the newest first, since that is the cell's previous
// overwrite (now w) or this one's (by, for its second entry).
func (d *Detector) oldPlace(l *oldsList, r *rec) uint8 {
	for i := int(l.nrec) - 1; i >= 0; i-- {
		if p := &l.recs[i]; p.agent == r.agent && p.epoch == r.epoch && d.packedIs(l, p, r) {
			return uint8(i)
		}
	}
	more := l.moreRecs()
	for i := range more {
		if more[i] == *r {
			return uint8(oldRecsInline + i)
		}
	}
	if p, ok := d.pack(l, r); ok && l.nrec < oldRecsInline {
		l.recs[l.nrec], l.gen = p, r.gen
		l.nrec++
		return l.nrec - 1
	}
	m := l.moreRoom()
	m.recs = append(m.recs, *r)
	return uint8(oldRecsInline + len(more))
}

// moreRecs returns l's records kept whole (more).
func (l *oldsList) moreRecs() []rec {
	if l.more == nil {
		return nil
	}
	return l.more.recs
}

// moreRoom returns l's rare part, made when l has none.
func (l *oldsList) moreRoom() *oldsMore {
	if l.more == nil {
		l.more = new(oldsMore)
	}
	return l.more
}

// packOldRecs drops the records no entry of l names any more (their
// entries left: the bound, a new run generation), keeping the others in
// order, when two more might not fit inline. While no entry has left,
// every record is named (a ring's chunk, overwritten twice, never packs).
func (l *oldsList) packOldRecs() {
	more := l.moreRecs()
	if !l.stale || int(l.nrec)+2 <= oldRecsInline && len(more) == 0 {
		return
	}
	l.stale = false
	var used [4]uint64 // by place
	for _, o := range l.entries() {
		used[o.w/64] |= 1 << (o.w % 64)
		used[o.by/64] |= 1 << (o.by % 64)
	}
	on := func(i int) bool { return used[i/64]&(1<<(i%64)) != 0 }
	var to [256]uint8
	n := uint8(0)
	for i := range l.nrec {
		if on(int(i)) {
			to[i] = n
			l.recs[n] = l.recs[i]
			n++
		}
	}
	l.nrec = n
	m := 0
	for i := range more {
		if on(oldRecsInline + i) {
			to[oldRecsInline+i] = uint8(oldRecsInline + m)
			more[m] = more[i]
			m++
		}
	}
	if l.more != nil {
		l.more.recs = more[:m]
	}
	ents := l.entries()
	for x := range ents {
		o := &ents[x]
		o.w, o.by = to[o.w], to[o.by]
	}
}
