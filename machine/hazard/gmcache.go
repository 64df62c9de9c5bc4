package hazard

import (
	"fmt"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
)

// The GM side of the cell cache at many ranks. A 384-rank ring makes about
// 1.2 M cacheable GM accesses, 736 000 of which miss the sets (a chunk is
// reused a whole round of the ring later, after every other rank's chunks
// went through the 12 288 entries). Each probe of the 2 MiB of slots is a
// cache miss of its own, so a miss paid up to three (the tensor's slot, the
// set, the rank's slot) before the page's own lookup. Two of them cannot
// hit, by where entries are filed (cellCache.fill, fillGrid):
//
//   - noGMGrid: a tensor's entries (gmKey) are filed only by access2d on a
//     tensor's 2-D view, and there is none before Detector.gm2dAny.
//   - oneGMPage: a rank's byte ranges (keyOf, core -1) on one page are
//     filed in the sets, never in a slot: a slot holds a pair of cells on
//     two pages, or a cell of a 2-D view, and GM byte ranges have no view
//     (Detector.toGrid is for local buffers).
//
// checkShortcuts checks both against the slot each skips.

// oneGMPage reports whether the entry of an access of key with rows runs
// is one the slots never hold: a contiguous range of a rank's GM bytes on
// one page.
func oneGMPage(key shadowKey, acc *machine.Access, rows int64) bool {
	shift := pageShiftOf(asm.GM)
	return key.space == asm.GM && key.core == -1 && rows == 1 && acc.Lo>>shift == (acc.Hi-1)>>shift
}

// checkNoSlot panics if slot, the one the access of key hashes to and
// hitCached skipped (oneGMPage), holds the access's cells after all.
func (d *Detector) checkNoSlot(acc *machine.Access, key shadowKey, slot *cellSlot, rows, pitch int64) {
	shortcuts++
	if slot.matches(key, acc, rows, pitch) && slot.valid() {
		panic(fmt.Sprintf("hazard: a slot holds the GM range [%d, %d) of rank %d on one page, which only the sets should", acc.Lo, acc.Hi, acc.Rank))
	}
}

// checkNoGMGrid panics if a GM read skipped its tensor's slot (noGMGrid)
// while that slot holds the read's cells.
func (d *Detector) checkNoGMGrid(acc *machine.Access) {
	shortcuts++
	key := gmKey(acc)
	rows, pitch := shape(acc)
	i := d.cells.index(key, acc.Lo, acc.Hi, rows, pitch)
	if s := &d.cells.slots[i]; s.matches(key, acc, rows, pitch) && (s.valid() || s.w < 0) {
		panic(fmt.Sprintf("hazard: tensor %s's slot holds [%d, %d) with no 2-D GM view", acc.Tensor.Name, acc.Lo, acc.Hi))
	}
}
