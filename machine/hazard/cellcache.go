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
// A local buffer in its 2-D view (Detector.toGrid: an L1 tile read in
// column windows) is cached the same way when an access lands on exactly
// one cell of one band: the window's own cell, found without the shadow,
// its band search and the band's cell search, each a cache miss of its own
// (an L1 window took about ten misses where a byte-range tile took four).
//
// An entry needs no invalidation: a cell is only ever in its own page's
// list (or its band's), and every change to the list (split, merge, fill)
// changes the lo or hi of the cells it drops or cuts (a merged cell is
// zeroed before it is recycled), so a cell still spanning [lo, hi) is
// still the one for it. A band's rows never change under its cells: a band
// split gives both halves new cells and zeroes the old ones
// (shadow2D.split). Dropping a whole buffer (a launch boundary) resets the
// cache.
type cellCache struct {
	slots []cellSlot
	// runs holds, beside the slot of the same index, the cells of an
	// entry over several cells of a 2-D view (cellSlot.w < 0); nil until
	// the first.
	runs []gridRun
	// sets holds the entries of contiguous ranges on one cell (an L0
	// tile, a UB tile, a GM range), the commonest, apart from the slots
	// (cellSet).
	sets []cellSet
	// hit is the entry a set hit is visited through (Detector.hitSet),
	// so that the event's next access of the same bytes finds it
	// (Detector.hit) as it finds a slot; visited is the entry of the
	// last hit, a slot or hit.
	hit     cellSlot
	visited *cellSlot
	// memo holds each core's last access of each tile element
	// (accmemo.go), by the core's index; empty until the first.
	memo []accMemo
	// h is the hash index took last: a contiguous access looks in the
	// sets right after its slot's number is taken (hitCached), and the
	// two hash alike.
	h uint64
	// gm holds the GM chunk indexes by tensor number (gmindex.go);
	// gmEntries counts their entries, against gmIndexBudget, and gmHits
	// and gmMisses their lookups.
	gm               []gmTensorIx
	gmEntries        int
	gmHits, gmMisses int
}

// cellSlot is one entry, one cache line: the access (buffer, bytes, and
// for a strided one its rows and pitch) and the cell, or for a range across
// a page boundary the cell on each side (c2 nil for one page). A byte-range
// entry (w 0) is valid while the cells still span the range; a 2-D entry
// while its cell still spans columns [c0, c0+w) of its band; an entry over
// several cells of a 2-D view (w = -n, c its first cell) while each of the
// n cells in the runs entry of the same index still spans its columns
// (gridRun).
type cellSlot struct {
	key    shadowKey
	rows   int32 // NumRows
	lo, hi int64
	pitch  int64 // 0 unless rows > 1
	c, c2  *cell
	c0, w  int32
}

// matches reports whether the slot was filled by an access of the same
// bytes of the same buffer as acc.
func (s *cellSlot) matches(k shadowKey, acc *machine.Access, rows, pitch int64) bool {
	return s.key == k && s.lo == acc.Lo && s.hi == acc.Hi && int64(s.rows) == rows && s.pitch == pitch
}

// valid reports whether the slot's cells are still exactly the access's.
// A cell never spans a page boundary, so c and c2 meeting means they meet
// at one.
func (s *cellSlot) valid() bool {
	switch {
	case s.c == nil || s.w < 0:
		return false // a run is gridRun.valid's
	case s.w > 0:
		return s.c.lo == int64(s.c0) && s.c.hi == int64(s.c0)+int64(s.w)
	case s.c.lo != s.lo:
		return false
	case s.c2 == nil:
		return s.c.hi == s.hi
	}
	return s.c.hi == s.c2.lo && s.c2.hi == s.hi
}

// cellCacheBits sizes the cache: 2^15 slots of 64 bytes (2 MiB; the runs
// beside them, 4 MiB, are made at the first run). The slots are direct
// mapped, and on the 8-rank allgather_gemm two busy accesses sharing a
// slot evict each other every round of the cores, each miss a lookup
// through the shadow: 2^15 against 2^14 took 0.09 M (1.2%) fewer
// last-level misses at M=1024 in a 512 KiB model (docs/performance.md,
// round 11 of lint); 2^13 against 2^14 more (round 6).
const cellCacheBits = 15

// keyOf names the buffer acc touches: GM is per rank, the rest per core.
func keyOf(acc *machine.Access) shadowKey {
	k := shadowKey{space: acc.Space, rank: acc.Rank, core: acc.Core}
	if acc.Space == asm.GM {
		k.core = -1
	}
	return k
}

// gmKey files a row-major GM tensor's 2-D cells under the tensor (core
// -2 less its index), apart from the rank's byte ranges (core -1) and any
// other tensor's: two declarations may alias one range.
func gmKey(acc *machine.Access) shadowKey {
	return shadowKey{space: asm.GM, rank: acc.Rank, core: -2 - int32(acc.Tensor.Index)}
}

// shape is the row count and pitch that, with Lo and Hi, say which bytes
// acc touches: (1, 0) for a contiguous range.
func shape(acc *machine.Access) (rows, pitch int64) {
	if rows = acc.NumRows(); rows > 1 {
		return rows, acc.Pitch
	}
	return 1, 0
}

// slot returns the entry that the access of [lo, hi) in rows runs pitch
// bytes apart, of buffer k, hashes to, and its number (that of its
// gridRun too).
func (cc *cellCache) slot(k shadowKey, lo, hi, rows, pitch int64) (*cellSlot, int) {
	i := cc.index(k, lo, hi, rows, pitch)
	return &cc.slots[i], i
}

// index is slot's number.
func (cc *cellCache) index(k shadowKey, lo, hi, rows, pitch int64) int {
	if cc.slots == nil {
		cc.slots = make([]cellSlot, 1<<cellCacheBits)
	}
	cc.h = hashAccess(k, lo, hi, rows, pitch)
	return int(cc.h >> (64 - cellCacheBits))
}

// hashAccess mixes an access's buffer and bytes; the top bits pick an entry.
func hashAccess(k shadowKey, lo, hi, rows, pitch int64) uint64 {
	return uint64(lo)*0x9E3779B97F4A7C15 ^ uint64(hi)*0xC2B2AE3D27D4EB4F ^
		(uint64(uint32(k.rank))<<32|uint64(uint32(k.core)))*0x165667B19E3779F9 ^ uint64(k.space) ^
		uint64(rows)*0x27D4EB2F165667C5 ^ uint64(pitch)
}

func (cc *cellCache) reset() {
	clear(cc.slots)
	clear(cc.runs)
	clear(cc.sets)
	clear(cc.memo)
	cc.hit, cc.visited = cellSlot{rows: 1}, nil
}

// fill files the cells of an access of a contiguous range of buffer k on
// one page (c) or across one page boundary (c and c2): one cell in the
// sets, a pair in slot, the slot the access hashes to.
func (cc *cellCache) fill(slot *cellSlot, k shadowKey, acc *machine.Access, c, c2 *cell) {
	if c2 == nil && inSets(k, 1) {
		set, t := cc.set(k, acc.Lo, acc.Hi)
		set.put(k, t, c)
		return
	}
	*slot = cellSlot{key: k, rows: 1, lo: acc.Lo, hi: acc.Hi, c: c, c2: c2}
}

// cellSet is one cache line of entries of contiguous ranges on one cell:
// up to setWays (buffer, cell) pairs, each with a byte of its range's hash.
// An entry is valid while its cell still spans exactly the access's bytes
// (a cell is only ever in its own buffer's lists, and every change to them
// changes the bounds of the cells it drops or cuts, as for a slot), so the
// cell's own bounds, on the line the access reads first anyway, check it:
// an entry is 21 bytes, not a 64-byte slot.
//
// The slots are direct mapped over 2 MiB (and their runs 4 MiB) so that
// the 2 600 entries the 8-rank allgather_gemm keeps live rarely collide,
// which puts each on a line and a 4 KiB page of its own: the slot's load
// was the costliest of an access (0.47 s of a 7 s lint profile at full
// size, twice the cell's first line). 2^12 sets of three ways are 256 KiB
// (64 pages) for 12 288 entries, with an overflowing set rare.
type cellSet struct {
	keys [setWays]shadowKey
	tags [setWays]uint8
	next uint8 // the way the next new entry takes when none is free
	cs   [setWays]*cell
}

// inSets reports whether the entry of a contiguous range on one cell of
// buffer k (rows 1) is filed in the sets rather than the slots: not for
// L1, whose buffers take a 2-D view at their first column window
// (Detector.toGrid), after which nearly every access of them is a slot's
// (a window, a whole tile's run), and a look in the sets first would miss,
// nor for a GM tensor's 2-D cells (gmKey).
func inSets(k shadowKey, rows int64) bool {
	return rows == 1 && k.core >= -1 && k.space != asm.L1
}

// setWays is the ways of a cellSet: three keys, tags and cells fill a line.
const setWays = 3

// cellSetBits sizes the sets: 2^12 of 64 bytes.
const cellSetBits = 12

// set returns the set that an access of [lo, hi) of buffer k hashes to,
// and its tag there.
func (cc *cellCache) set(k shadowKey, lo, hi int64) (*cellSet, uint8) {
	return cc.setOf(hashAccess(k, lo, hi, 1, 0))
}

// setOf is set for hash h (hashAccess).
func (cc *cellCache) setOf(h uint64) (*cellSet, uint8) {
	if cc.sets == nil {
		cc.sets = make([]cellSet, 1<<cellSetBits)
		cc.hit.rows = 1 // the hit entry's constant fields (hitSet)
	}
	return &cc.sets[h>>(64-cellSetBits)], uint8(h >> (56 - cellSetBits))
}

// find returns the cell that spans exactly [lo, hi) of buffer k, if the
// set holds it, else nil.
func (s *cellSet) find(k shadowKey, t uint8, lo, hi int64) *cell {
	for w := range setWays {
		if c := s.cs[w]; c != nil && s.tags[w] == t && s.keys[w] == k && c.lo == lo && c.hi == hi {
			return c
		}
	}
	return nil
}

// put files c, which spans exactly [lo, hi) of buffer k (tag t), in the
// set: in place of an entry of the same buffer and tag (most likely the
// same range, its cell replaced), else in a free way, else in turn.
func (s *cellSet) put(k shadowKey, t uint8, c *cell) {
	w := -1
	for i := range setWays {
		if s.cs[i] != nil && s.tags[i] == t && s.keys[i] == k {
			w = i
			break
		}
		if w < 0 && s.cs[i] == nil {
			w = i
		}
	}
	if w < 0 {
		w = int(s.next)
		s.next = uint8((w + 1) % setWays)
	}
	s.keys[w], s.tags[w], s.cs[w] = k, t, c
}

// maxRun bounds the cells of an entry over several cells of a 2-D view.
// The whole-tile loads of allgather_gemm's L1 tiles cover four (A: four
// column windows of one band; B: one cell in each of four bands). At most
// keepSplits, so the write the entry replays collapses no band's cells
// (accessCells), as the view's own path would not either.
const maxRun = min(4, keepSplits)

// gridRun is the cells of a cached access of a local buffer's 2-D view
// that covers several (Detector.access2d), in the order the view visits
// them (band by band, then by column), with what accessCell needs of each:
// the view's geometry and the cell's band rows. Two lines (128 bytes): on
// a miss the band search, each band and its two cell arrays were a cache
// miss of their own, about fourteen for the four bands of a B tile.
type gridRun struct {
	base, pitch int64
	cells       [maxRun]runCell
	_           [16]byte
}

// runCell is one cell of a gridRun: the cell, the columns [c0, c0+w) it
// spanned, and its band's rows [r0, r1).
type runCell struct {
	c             *cell
	c0, w, r0, r1 int32
}

// valid reports whether the n cells still span their columns. A cell never
// leaves its band and a band's rows never change under its cells (a band
// split gives both halves new cells when the view has cells cached,
// shadow2D.cached), so n cells that still span their columns still cover
// the access, each the one the view finds there, and no other cell can
// overlap them.
func (g *gridRun) valid(n int) bool {
	for k := range g.cells[:n] {
		if rc := &g.cells[k]; rc.c.lo != int64(rc.c0) || rc.c.hi != int64(rc.c0)+int64(rc.w) {
			return false
		}
	}
	return true
}

// exactGeo is a geo that maps cell c's columns to bytes [lo, hi): a 2-D
// cell hit through the cache is exactly the access's rectangle, whose bytes
// are the access's bounds, and accessCell reports them from its geo.
func exactGeo(c *cell, lo, hi int64) geo {
	if d := (hi - lo) - (c.hi - c.lo); d != 0 {
		return geo{base: lo - c.lo, pitch: d, r0: 0, r1: 2}
	}
	return geo{base: lo - c.lo, pitch: 1, r0: 0, r1: 1}
}

// checkShortcuts makes the detector verify, in tests, that each cached cell
// is the one the page's own lookup finds, that each signal word an agent
// skips joining would not change its clock, that each read-only tensor
// kept as initialised has no unwritten byte, and that each race of one
// agent with itself told from its accesses (selfRaced) is one noteRaced
// saw; shortcuts counts the checks.
var (
	checkShortcuts = false
	shortcuts      int
	// gridShortcuts counts the checks of 2-D cells hit through the cache.
	gridShortcuts int
)

func (d *Detector) checkCachedCell(acc *machine.Access, slot *cellSlot) {
	shortcuts++
	if slot.w > 0 {
		gridShortcuts++
		g := d.gmShadowFor(acc)
		if acc.Space != asm.GM {
			g = d.shadowFor(acc).grid
		}
		var rs []rect
		if g != nil {
			rs = g.rects(acc, nil)
		}
		if len(rs) != 1 {
			panic(fmt.Sprintf("hazard: the 2-D cell cached for %s [%d, %d) is not one rectangle of the view", acc.Space, acc.Lo, acc.Hi))
		}
		q := rs[0]
		i, j := g.span(q.r0, q.r1)
		ci, cj := g.bands[i].cols.span(q.c0, q.c1)
		if j != i+1 || cj != ci+1 || g.bands[i].cols.cells[ci] != slot.c {
			panic(fmt.Sprintf("hazard: the 2-D cell cached for %s [%d, %d) is not the view's (bands %d-%d, cells %d-%d)", acc.Space, acc.Lo, acc.Hi, i, j, ci, cj))
		}
		b := g.bands[i]
		blo, bhi := acc.Bounds()
		lo, hi := (geo{g.base, g.pitch, b.lo, b.hi}).bytes(slot.c.lo, slot.c.hi)
		elo, ehi := exactGeo(slot.c, blo, bhi).bytes(slot.c.lo, slot.c.hi)
		if lo != blo || hi != bhi || elo != blo || ehi != bhi {
			panic(fmt.Sprintf("hazard: the 2-D cell cached for %s [%d, %d) reports [%d, %d), the view [%d, %d)", acc.Space, blo, bhi, elo, ehi, lo, hi))
		}
		return
	}
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

// checkHitSet checks a hit in the sets: that it was looked up under acc's
// own hash (cellCache.h), that the hit entry is one of a contiguous range
// on one cell, and that the cell is the page's (checkCachedCell).
func (d *Detector) checkHitSet(acc *machine.Access, k shadowKey, e *cellSlot) {
	if d.cells.h != hashAccess(k, acc.Lo, acc.Hi, 1, 0) {
		panic(fmt.Sprintf("hazard: %s [%d, %d) looked up in the sets under another access's hash", acc.Space, acc.Lo, acc.Hi))
	}
	if e.rows != 1 || e.pitch != 0 || e.c2 != nil || e.c0 != 0 || e.w != 0 {
		panic(fmt.Sprintf("hazard: the entry of a hit in the sets for %s [%d, %d) is not one of a contiguous range on one cell", acc.Space, acc.Lo, acc.Hi))
	}
	d.checkCachedCell(acc, e)
}

// runShortcuts counts the checks of runs hit through the cache.
var runShortcuts int

// checkCachedRun panics unless the n cells of run are, in order and with
// their band rows, the cells the view's own lookup visits for acc.
func (d *Detector) checkCachedRun(acc *machine.Access, run *gridRun, n int) {
	shortcuts++
	runShortcuts++
	g := d.shadowFor(acc).grid
	var rs []rect
	if g != nil {
		rs = g.rects(acc, nil)
	}
	if len(rs) != 1 || g.base != run.base || g.pitch != run.pitch {
		panic(fmt.Sprintf("hazard: the cells cached for %s [%d, %d) are not one rectangle of the view", acc.Space, acc.Lo, acc.Hi))
	}
	q, k := rs[0], 0
	i, j := g.span(q.r0, q.r1)
	for _, b := range g.bands[i:j] {
		ci, cj := b.cols.span(q.c0, q.c1)
		for _, c := range b.cols.cells[ci:cj] {
			if k >= n || run.cells[k].c != c || int64(run.cells[k].r0) != b.lo || int64(run.cells[k].r1) != b.hi {
				panic(fmt.Sprintf("hazard: cell %d cached for %s [%d, %d) is not the view's", k, acc.Space, acc.Lo, acc.Hi))
			}
			k++
		}
	}
	if k != n {
		panic(fmt.Sprintf("hazard: %d cells cached for %s [%d, %d), the view has %d", n, acc.Space, acc.Lo, acc.Hi, k))
	}
}

func (d *Detector) checkJoinedSig(a int32, c *cell) {
	shortcuts++
	clk := d.exact(a)
	c.sig.each(func(i int32, v uint32) {
		if v > get(clk, i) {
			panic(fmt.Sprintf("hazard: agent %d skipped joining a signal word it lacks component %d of (%d > %d)", a, i, v, get(clk, i)))
		}
	})
	if h := c.hist; h != nil && h.hasLoc {
		cs := &d.cores[d.agents[c.sigFrom-1].coreIdx]
		for k, i := range cs.lpos[:cs.nlocals] {
			if v := h.relLoc[cs.slots[k]]; v > get(clk, i) {
				panic(fmt.Sprintf("hazard: agent %d skipped joining a signal word it lacks its notifier's component %d of (%d > %d)", a, i, v, get(clk, i)))
			}
		}
	}
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

// checkOrdered panics unless v, what ordered told from r's lag, is what
// the clock says.
func (d *Detector) checkOrdered(prev, r *rec, v bool) {
	shortcuts++
	if want := d.hbOrSame(prev, r); v != want {
		panic(fmt.Sprintf("hazard: agent %d's access at epoch %d (lag %d) against its epoch %d: ordered says %v, the clock %v", r.agent, r.epoch, r.lag, prev.epoch, v, want))
	}
}
