package hazard

import (
	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
)

// The contiguous accesses of a core's L0A, L0B, L0C and UB tiles (a GEMM's
// K loop: textract's writes, mmad's reads and its accumulator's read and
// write, a vector op's tiles) are most of the detector's accesses, and
// nearly all of them hit the cache: the event's previous entry (an
// in-place op's write after its read, Detector.hit) or the sets
// (hitSet). access reaches those hits through its general dispatch (the
// signal and GM cases, the page count, the slot the access hashes to,
// the shape taken three times); hitLocal takes the same two hits first,
// with the same calls in the same order, and leaves everything else
// (a miss, a range across a page boundary in a slot, L1's 2-D view) to it.

// takeHit returns the entry the event's previous access hit (Detector.hit)
// and clears it: only an access that hits the cache sets it again.
func (d *Detector) takeHit() *cellSlot {
	prev := d.hit
	d.hit = nil
	return prev
}

// localContiguous reports whether acc is an access hitLocal may take: a
// contiguous range of a core-local buffer filed in the sets (inSets: not
// L1), neither a tensor's nor read-only, so that access's general path
// would reach exactly prev's match and then hitCached's look in the sets.
func localContiguous(acc *machine.Access) bool {
	return acc.Tensor == nil && acc.Space != asm.GM && acc.Space != asm.L1 && acc.NumRows() == 1 &&
		!acc.ReadOnly && acc.Core >= -1
}

// hitLocal does access's work on acc when it hits the event's previous
// entry prev or the sets, and reports whether it did; prev stays in
// d.hit's place as access would leave it. On a miss nothing has changed
// but the cache's hash (cellCache.h), which access takes again.
func (d *Detector) hitLocal(r *rec, acc *machine.Access, prev *cellSlot) bool {
	if !localContiguous(acc) {
		return false
	}
	key := shadowKey{space: acc.Space, rank: acc.Rank, core: acc.Core}
	if prev != nil && prev.matches(key, acc, 1, 0) {
		if checkShortcuts {
			d.checkLocal(acc, key)
		}
		d.visitSlot(r, acc, prev, 1, 0)
		d.hit = prev
		return true
	}
	d.cells.h = hashAccess(key, acc.Lo, acc.Hi, 1, 0)
	if checkShortcuts {
		d.checkLocal(acc, key)
	}
	if !d.hitSet(r, acc, key) {
		return false
	}
	d.hit = d.cells.visited
	return true
}

// localHits counts the accesses checkLocal compared.
var localHits int

// checkLocal panics unless access's general path would have reached the
// hit hitLocal took for acc through key: not a signal word nor GM, the
// same key and shape, cacheable, and filed in the sets, so that it, too,
// would have tried the event's previous entry and then the sets under the
// hash hitLocal took (checkHitSet then checks the set's cell).
func (d *Detector) checkLocal(acc *machine.Access, key shadowKey) {
	shortcuts++
	localHits++
	rows, pitch := shape(acc)
	switch {
	case isSignal(acc) || acc.Space == asm.GM:
		panic("hazard: hitLocal took a signal or GM access")
	case keyOf(acc) != key || rows != 1 || pitch != 0:
		panic("hazard: hitLocal took an access under another key or shape than access's")
	case acc.ReadOnly && !acc.Write:
		panic("hazard: hitLocal took an access access does not cache")
	case !inSets(key, rows):
		panic("hazard: hitLocal looked in the sets for an access filed in the slots")
	case d.cells.h != hashAccess(keyOf(acc), acc.Lo, acc.Hi, rows, pitch):
		panic("hazard: hitLocal looked in the sets under another hash than access's")
	}
}
