package hazard

import (
	"fmt"
	"slices"

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
// is the one the page's own lookup finds (and each cached 2-D access's
// band and cells the shadow's), that each signal word an agent
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

func (d *Detector) checkSelfRaced(rd, w *rec, told, kept bool) {
	shortcuts++
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

// gridCache is cellCache for 2-D shadows (GM tensors, local buffers read in
// column windows): for a recent access, the bands and cells it covered. A K
// loop reads the same windows of the same L1 tiles and GM blocks over and
// over, and each read otherwise cut its rectangle out of the shadow (rects,
// the band search, the column search) again.
//
// An entry needs no invalidation, as a cellCache entry: a band that splits
// changes its rows, cells of a band are only ever in its own list, and the
// entry holds its shadow, which a new launch or a new tensor base replaces
// (the entry holding the old one keeps it from being reused).
type gridCache struct {
	slots []gridSlot
}

// gridCells is how many cells an entry holds: keepSplits, so a write
// through an entry never merges them.
const gridCells = keepSplits

// gridSlot is one entry: an access (its buffer's shadow and its geometry),
// its rectangle, and the cells covering it, band by band, each with its band.
type gridSlot struct {
	s                   *shadow2D
	tensor              *asm.TensorInfo
	lo, hi, rows, pitch int64
	r0, r1, c0, c1      int64
	n                   int
	cells               [gridCells]bandCell
}

type bandCell struct {
	b *band
	c *cell
}

// gridCacheBits sizes the cache: 2^14 slots of 168 bytes. The 192 AICs of
// the 8-rank allgather_gemm each read a few dozen windows of their L1
// tiles; at 2^12 slots most lookups found another access's entry.
const gridCacheBits = 14

// slot returns the entry acc of shadow s hashes to.
func (gc *gridCache) slot(s *shadow2D, acc *machine.Access) *gridSlot {
	if gc.slots == nil {
		gc.slots = make([]gridSlot, 1<<gridCacheBits)
	}
	k := keyOf(acc)
	h := uint64(acc.Lo)*0x9E3779B97F4A7C15 ^ uint64(acc.Hi)*0xC2B2AE3D27D4EB4F ^ uint64(acc.Rows)*0xD6E8FEB86659FD93 ^
		(uint64(uint32(k.rank))<<32|uint64(uint32(k.core)))*0x165667B19E3779F9 ^ uint64(k.space)
	return &gc.slots[h>>(64-gridCacheBits)]
}

func (gc *gridCache) reset() { clear(gc.slots) }

// holds reports whether the entry is acc's and its bands and cells still
// cover acc's rectangle exactly: bands meeting from r0 to r1, and in each
// band cells meeting from c0 to c1.
func (e *gridSlot) holds(s *shadow2D, acc *machine.Access) bool {
	if e.s != s || e.n == 0 || e.lo != acc.Lo || e.hi != acc.Hi || e.rows != acc.Rows || e.pitch != acc.Pitch || e.tensor != acc.Tensor {
		return false
	}
	var b *band
	col := e.c1
	for _, bc := range e.cells[:e.n] {
		if bc.b != b {
			// A new band: the last one's cells ended at c1, and it
			// starts where the last one ended.
			if col != e.c1 || b == nil && bc.b.lo != e.r0 || b != nil && bc.b.lo != b.hi {
				return false
			}
			b, col = bc.b, e.c0
		}
		if bc.c.lo != col {
			return false
		}
		col = bc.c.hi
	}
	return col == e.c1 && b.hi == e.r1
}

// fill files acc's rectangle q, which bands [i, j) of s cover exactly, with
// their cells covering its columns, if there are few enough (span makes
// them cover it exactly).
func (e *gridSlot) fill(s *shadow2D, acc *machine.Access, i, j int, q rect) {
	*e = gridSlot{s: s, tensor: acc.Tensor, lo: acc.Lo, hi: acc.Hi, rows: acc.Rows, pitch: acc.Pitch,
		r0: q.r0, r1: q.r1, c0: q.c0, c1: q.c1}
	for _, b := range s.bands[i:j] {
		ci, cj := b.cols.span(q.c0, q.c1)
		if cj <= ci || e.n+cj-ci > gridCells {
			e.n = 0
			return
		}
		for _, c := range b.cols.cells[ci:cj] {
			e.cells[e.n] = bandCell{b, c}
			e.n++
		}
	}
}

func (d *Detector) checkGridSlot(acc *machine.Access, s *shadow2D, e *gridSlot) {
	shortcuts++
	q := s.rects(acc, nil)
	if len(q) != 1 {
		panic(fmt.Sprintf("hazard: a cached 2-D access of %s covers %d rectangles", acc.Space, len(q)))
	}
	var want []bandCell
	i, j := s.span(q[0].r0, q[0].r1)
	for _, b := range s.bands[i:j] {
		ci, cj := b.cols.span(q[0].c0, q[0].c1)
		for _, c := range b.cols.cells[ci:cj] {
			want = append(want, bandCell{b, c})
		}
	}
	if !slices.Equal(want, e.cells[:e.n]) {
		panic(fmt.Sprintf("hazard: the cells cached for a 2-D access of %s [%d, %d) x %d are not the shadow's", acc.Space, acc.Lo, acc.Hi, acc.Rows))
	}
}
