package hazard

import (
	"fmt"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
)

// cellCache remembers, for recently accessed byte ranges, the cell that
// covers exactly that range. An access of a tile a core touched before
// then goes straight to its cell instead of through the buffer's table,
// shadow, page, and the page's bounds and cell arrays: on 8 ranks those are
// cold on almost every access (576 cores take turns), and the lookup was
// about a sixth of the detector's time in a CPU profile.
//
// An entry needs no invalidation: a cell is only ever in its own page's
// list, and every change to the list (split, merge, fill) changes the lo or
// hi of the cells it drops or cuts (a merged cell is zeroed before it is
// recycled), so a cell still spanning [lo, hi) is still the one for it.
// Dropping a whole buffer (a launch boundary) resets the cache.
type cellCache struct {
	slots []cellSlot
}

// cellSlot is one entry: the buffer and the cell, or for a range across a
// page boundary the cell on each side (c2 nil for one page). The range is
// the cells'.
type cellSlot struct {
	key   shadowKey
	c, c2 *cell
}

// covers reports whether the slot's cells are still exactly [lo, hi). A
// cell never spans a page boundary, so c and c2 meeting means they meet
// at one.
func (s *cellSlot) covers(lo, hi int64) bool {
	switch {
	case s.c == nil || s.c.lo != lo:
		return false
	case s.c2 == nil:
		return s.c.hi == hi
	}
	return s.c.hi == s.c2.lo && s.c2.hi == hi
}

// cellCacheBits sizes the cache: 2^14 slots of 32 bytes (512 KiB); on the
// 8-rank allgather_gemm 76% of lookups hit, 85% since ranges across two
// pages (L0C tiles) are cached too.
const cellCacheBits = 14

// keyOf names the buffer acc touches: GM is per rank, the rest per core.
func keyOf(acc *machine.Access) shadowKey {
	k := shadowKey{space: acc.Space, rank: acc.Rank, core: acc.Core}
	if acc.Space == asm.GM {
		k.core = -1
	}
	return k
}

// slot returns the entry that range [lo, hi) of buffer k hashes to.
func (cc *cellCache) slot(k shadowKey, lo, hi int64) *cellSlot {
	if cc.slots == nil {
		cc.slots = make([]cellSlot, 1<<cellCacheBits)
	}
	h := uint64(lo)*0x9E3779B97F4A7C15 ^ uint64(hi)*0xC2B2AE3D27D4EB4F ^
		(uint64(uint32(k.rank))<<32|uint64(uint32(k.core)))*0x165667B19E3779F9 ^ uint64(k.space)
	return &cc.slots[h>>(64-cellCacheBits)]
}

func (cc *cellCache) reset() { clear(cc.slots) }

// checkShortcuts makes the detector verify, in tests, that each cached cell
// is the one the page's own lookup finds, that each signal word an agent
// skips joining would not change its clock, that each read-only tensor
// kept as initialised has no unwritten byte, and that each race of one
// agent with itself told from its accesses (selfRaced) is one noteRaced
// saw; shortcuts counts the checks.
var (
	checkShortcuts = false
	shortcuts      int
)

func (d *Detector) checkCachedCell(acc *machine.Access, slot *cellSlot) {
	shortcuts++
	sm := d.shadowFor(acc)
	for n, lo := 0, acc.Lo; lo < acc.Hi; n++ {
		m, hi := sm.page(lo, acc.Hi)
		want := slot.c
		if n > 0 {
			want = slot.c2
		}
		if i, j := m.span(lo, hi); j != i+1 || n > 1 || m.cells[i] != want {
			panic(fmt.Sprintf("hazard: the cell cached for %s [%d, %d) is not the page's (cells %d-%d)", acc.Space, lo, hi, i, j))
		}
		lo = hi
	}
}

func (d *Detector) checkJoinedSig(a int32, c *cell) {
	shortcuts++
	clk := d.agents[a].clock
	c.sig.each(func(i int32, v uint32) {
		if v > get(clk, i) {
			panic(fmt.Sprintf("hazard: agent %d skipped joining a signal word it lacks component %d of (%d > %d)", a, i, v, get(clk, i)))
		}
	})
}

// selfRaceChecks counts checkSelfRaced's comparisons.
var selfRaceChecks int

func (d *Detector) checkSelfRaced(rd, w *rec, told, kept bool) {
	shortcuts++
	selfRaceChecks++
	if told != kept {
		panic(fmt.Sprintf("hazard: agent %d's read at epoch %d and write at epoch %d: selfRaced says %v, noteRaced %v", rd.agent, rd.epoch, w.epoch, told, kept))
	}
}

func (d *Detector) checkInitialised(acc *machine.Access, s *shadow2D) {
	shortcuts++
	for _, q := range s.rects(acc, nil) {
		if lo, hi, found := s.unwritten(q); found {
			panic(fmt.Sprintf("hazard: a read of %s found [%d, %d) unwritten in a tensor kept as initialised", acc.Tensor.Name, lo, hi))
		}
	}
}
