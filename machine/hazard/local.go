package hazard

import (
	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
)

// The accesses of a core's local tiles (a GEMM's K loop: the loads into
// L1, textract's column windows of L1 and its writes of L0A and L0B,
// mmad's reads and its accumulator's read and write, a vector op's UB
// tiles) are most of the detector's accesses, and nearly all of them hit
// the cache: the event's previous entry (an in-place op's write after its
// read, Detector.hit), the sets (hitSet), a slot (an L1 window), or a
// slot's run of cells (a whole L1 tile, hitRun). access reaches those
// hits through its general dispatch (the signal and GM cases, the page
// count, the shape taken three times, the shadow before the run);
// hitLocal takes the same hits first, with the same calls in the same
// order, and leaves everything else (a miss, a first access) to it.

// takeHit returns the entry the event's previous access hit (Detector.hit)
// and clears it: only an access that hits the cache sets it again.
func (d *Detector) takeHit() *cellSlot {
	prev := d.hit
	d.hit = nil
	return prev
}

// localAccess reports whether acc is an access hitLocal may take: of a
// core-local buffer, neither a tensor's nor read-only, so that access's
// general path caches it (cacheable) under its core's key.
func localAccess(acc *machine.Access) bool {
	return acc.Tensor == nil && acc.Space != asm.GM && !acc.ReadOnly && acc.Core >= -1
}

// hitLocal does access's work on acc when it hits the cache, and reports
// whether it did, leaving d.hit as access would. The order is access's:
// the event's previous entry prev, then hitCached (the sets, the slot),
// then the slot's run of cells in the buffer's 2-D view (access2d's
// hitRun). A miss changes nothing access reads (the cache's hash and the
// shadow memo are taken again), so access then takes its general path.
func (d *Detector) hitLocal(r *rec, acc *machine.Access, prev *cellSlot, inBounds bool) bool {
	if !localAccess(acc) {
		return false
	}
	key := shadowKey{space: acc.Space, rank: acc.Rank, core: acc.Core}
	rows, pitch := shape(acc)
	if checkShortcuts {
		d.checkLocal(acc, key, rows, pitch)
	}
	if prev != nil && prev.matches(key, acc, rows, pitch) {
		d.visitSlot(r, acc, prev, rows, pitch)
		d.hit = prev
		d.remember(r, acc, prev, -1, inBounds)
		return true
	}
	if inSets(key, rows) {
		// hitCached's first look, under the hash slot would take; a miss
		// (or a range across a page boundary, in a slot) is access's.
		d.cells.h = hashAccess(key, acc.Lo, acc.Hi, rows, pitch)
		if !d.hitSet(r, acc, key) {
			return false
		}
		d.hit = d.cells.visited
		d.remember(r, acc, d.hit, -1, inBounds)
		return true
	}
	// hitCached's look in the slot (the sets do not hold the entry, and
	// oneGMPage is GM's).
	slot, si := d.cells.slot(key, acc.Lo, acc.Hi, rows, pitch)
	if slot.matches(key, acc, rows, pitch) && slot.valid() {
		d.cells.visited = slot
		d.visitSlot(r, acc, slot, rows, pitch)
		d.hit = slot
		d.remember(r, acc, slot, -1, inBounds)
		return true
	}
	if slot.w >= 0 || !slot.matches(key, acc, rows, pitch) {
		return false // no entry, or one of a single cell no longer exact
	}
	// A run is only filled in a 2-D view (access2d), which access would
	// reach with this slot (no toGrid: the view is there).
	if sm := d.shadowFor(acc); sm.grid == nil || !d.hitRun(r, acc, &d.cells.runs[si], int(-slot.w)) {
		return false
	}
	d.remember(r, acc, slot, si, inBounds)
	return true
}

// localHits counts the accesses checkLocal compared.
var localHits int

// checkLocal panics unless access's general path would take acc to the
// cache under key, rows and pitch, as hitLocal does: not a signal word
// nor GM, the same key and shape, and cacheable.
func (d *Detector) checkLocal(acc *machine.Access, key shadowKey, rows, pitch int64) {
	shortcuts++
	localHits++
	r, p := shape(acc)
	switch {
	case isSignal(acc) || acc.Space == asm.GM:
		panic("hazard: hitLocal took a signal or GM access")
	case keyOf(acc) != key || r != rows || p != pitch:
		panic("hazard: hitLocal took an access under another key or shape than access's")
	case acc.ReadOnly && !acc.Write:
		panic("hazard: hitLocal took an access access does not cache")
	}
}
