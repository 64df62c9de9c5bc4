package hazard

import (
	"fmt"
	"math/bits"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
)

// A core-local access by its operand's tile element (accMemo).
//
// A K loop's core-local accesses repeat exactly: each operand of an op
// names a tile element (a double-buffered L0A, L0B, L0C or UB tile, a
// whole L1 tile), and every time the op runs on that element it touches
// the same bytes (docs/performance.md, round 28 of lint: at M=1024, 329 026
// of the 330 115 hits in the sets of the 8-rank allgather_gemm were the
// same bytes and cell as that core's previous access of the tile element).
// access pays about 270 instructions before it reaches such a cell's
// check: the bounds check, hitLocal's dispatch, the hash, the set's ways
// and hitSet's entry. hitMemo looks the access up by its tile element
// instead, in a small table per core, and when the entry is the same
// access (buffer, bytes, rows and pitch, tile and element) goes straight to
// the check: the bounds check found nothing for it before and would find
// nothing now (its verdict is a function of those fields, the tile's
// addresses and size never change), and the cell is still the one for
// those bytes while it still spans exactly them (the sets' argument: a cell
// is only ever in its own buffer's lists, and every change to them changes
// the bounds of the cells it drops or cuts; cellCache.reset clears the
// table with the rest of the cache).

// accMemo is one entry: the access (buffer, bytes, rows and pitch, tile
// and element) and its cells, as a cellSlot holds them: c the one cell of
// a byte range (w 0), or the one cell of a 2-D view that spanned columns
// [c0, c0+w) (w > 0), or, for a run of cells of a 2-D view (w < 0), the
// slot whose run holds them, at index c0. One cache line.
type accMemo struct {
	tile   *asm.TileInfo
	c      *cell
	lo, hi int64
	key    shadowKey
	rows   int32
	pitch  int32
	elem   int32
	c0, w  int32
}

// memoWays is the entries a core has: half by tile element (the element's
// whole byte ranges and runs, one per element), half for the column
// windows of 2-D views, four per element (an L1 tile read in column
// windows or bands).
const memoWays = 32

// memoBase is where agent a's core's entries start, -1 for an agent of no
// core.
func (d *Detector) memoBase(a int32) int {
	return int(d.aloc[a]>>4)*memoWays - memoWays // core index + 1
}

// memoWay is the way of tile element (t, elem) in the first half.
func memoWay(t *asm.TileInfo, elem int32) int {
	return (2*t.Index + int(elem)) & (memoWays/2 - 1)
}

// windowWay is the way of a window [lo, hi) of tile element (t, elem) in
// the second half: the window's number in its element, by its width. Only
// a placement (an entry names its access whole): an element's windows are
// as wide as each other, and in the shipped programs a power of two wide.
func windowWay(t *asm.TileInfo, elem int32, lo, hi int64) int {
	k := int(lo>>bits.TrailingZeros64(uint64(hi-lo))) & 3
	return memoWays/2 + (4*(2*t.Index+int(elem))+k)&(memoWays/2-1)
}

// memoWayOf is the entry acc (through tile t) maps to among the core's
// entries from b: in the windows' half when window.
func (d *Detector) memoWayOf(b int, t *asm.TileInfo, acc *machine.Access, window bool) *accMemo {
	if window {
		return &d.cells.memo[b+windowWay(t, acc.Elem, acc.Lo, acc.Hi)]
	}
	return &d.cells.memo[b+memoWay(t, acc.Elem)]
}

// same reports whether e was filled by an access of the same bytes of the
// same buffer as acc, through the same tile element: what hitLocal looked
// up and checkBounds checked.
func (e *accMemo) same(acc *machine.Access) bool {
	return e.tile == acc.Tile && e.lo == acc.Lo && e.hi == acc.Hi && int64(e.rows) == acc.Rows &&
		int64(e.pitch) == acc.Pitch && e.elem == acc.Elem && e.key.space == acc.Space &&
		e.key.rank == acc.Rank && e.key.core == acc.Core
}

// hitMemo does access's work on acc when its core's entry for acc's tile
// element and address is acc's own and its cells are still exactly acc's,
// and reports whether it did. A hit leaves no entry for the event's next
// access (Detector.hit): that access's own entry serves it. acc's rows may
// be unclamped (access): an entry never holds more than maxRuns.
func (d *Detector) hitMemo(r *rec, acc *machine.Access) bool {
	t := acc.Tile
	if t == nil || acc.Tensor != nil || acc.ReadOnly {
		return false
	}
	b := d.memoBase(r.agent)
	if b < 0 || b >= len(d.cells.memo) {
		return false
	}
	// A strided access is most likely a column window, anything else a
	// whole element or a run: the likelier way first, each a line.
	strided := acc.Rows > 1 && acc.Pitch > 0
	e := d.memoWayOf(b, t, acc, strided)
	if !e.same(acc) {
		if e = d.memoWayOf(b, t, acc, !strided); !e.same(acc) {
			return false
		}
	}
	if e.w < 0 {
		return d.hitMemoRun(r, acc, e)
	}
	c, g := e.c, geo{}
	if e.w == 0 {
		if c.lo != acc.Lo || c.hi != acc.Hi {
			return false
		}
	} else {
		if c.lo != int64(e.c0) || c.hi != int64(e.c0)+int64(e.w) {
			return false
		}
		lo, hi := acc.Bounds()
		g = exactGeo(c, lo, hi)
	}
	r.write, r.atomic = acc.Write, acc.Atomic && acc.Write
	d.hit = nil
	if checkShortcuts {
		d.checkMemo(r, acc, e)
	}
	uninitLo, uninitHi := int64(-1), int64(-1)
	d.visitCell(r, acc, c, g, &uninitLo, &uninitHi)
	d.noteUninit(r, acc, uninitLo, uninitHi)
	return true
}

// hitMemoRun is hitMemo for an entry of a run of cells: hitLocal's look
// at the slot the run lives beside, then hitRun.
func (d *Detector) hitMemoRun(r *rec, acc *machine.Access, e *accMemo) bool {
	si := int(e.c0)
	slot := &d.cells.slots[si]
	rows, pitch := shape(acc)
	if slot.w >= 0 || !slot.matches(e.key, acc, rows, pitch) {
		return false
	}
	if sm := d.shadowFor(acc); sm.grid == nil {
		return false
	}
	r.write, r.atomic = acc.Write, acc.Atomic && acc.Write
	if checkShortcuts {
		d.checkMemo(r, acc, e)
	}
	if !d.hitRun(r, acc, &d.cells.runs[si], int(-slot.w)) {
		return false
	}
	d.hit = nil
	return true
}

// remember files acc's entry after hitLocal found its cells in slot (for
// a run, at index si), when checkBounds found acc within its tile
// (inBounds). Entries are not made for byte ranges across a page
// boundary (two cells), nor for shapes past an entry's int32 fields.
func (d *Detector) remember(r *rec, acc *machine.Access, slot *cellSlot, si int, inBounds bool) {
	t := acc.Tile
	if !inBounds || t == nil || slot.c2 != nil || int64(int32(acc.Rows)) != acc.Rows || int64(int32(acc.Pitch)) != acc.Pitch {
		return
	}
	b := d.memoBase(r.agent)
	if b < 0 {
		return
	}
	if b >= len(d.cells.memo) {
		// Every core known so far: they are made in a burst at the
		// first events, and a core's entries are 2 KiB.
		d.cells.memo = append(d.cells.memo, make([]accMemo, max(b, len(d.cores)*memoWays-memoWays)+memoWays-len(d.cells.memo))...)
	}
	// One entry an access: the other half's, from when the access
	// landed on other cells, would hide this one from a look there first.
	i, o := d.memoWayOf(b, t, acc, false), d.memoWayOf(b, t, acc, true)
	if slot.w > 0 {
		i, o = o, i
	}
	if o.same(acc) {
		*o = accMemo{}
	}
	e := accMemo{tile: t, c: slot.c, lo: acc.Lo, hi: acc.Hi, key: slot.key,
		rows: int32(acc.Rows), pitch: int32(acc.Pitch), elem: acc.Elem, c0: slot.c0, w: slot.w}
	if slot.w < 0 {
		e.c, e.c0 = nil, int32(si)
	}
	*i = e
}

// memoHits counts the hits checkMemo compared.
var memoHits int

// checkMemo panics unless the general path would have taken acc to the
// cells of e: the bounds check finds nothing, hitLocal's dispatch would
// take acc to the cache under e's key, and e's cell is the page's
// (checkCachedCell; a run's cells are checkCachedRun's, in hitRun).
func (d *Detector) checkMemo(r *rec, acc *machine.Access, e *accMemo) {
	shortcuts++
	memoHits++
	notes := len(d.notes)
	d.checkBounds(r, acc)
	if len(d.notes) != notes {
		panic(fmt.Sprintf("hazard: hitMemo skipped the bounds check of %s [%d, %d), which reports it", acc.Space, acc.Lo, acc.Hi))
	}
	rows, pitch := shape(acc)
	d.checkLocal(acc, e.key, rows, pitch)
	switch {
	case e.w == 0 && rows != 1:
		panic(fmt.Sprintf("hazard: hitMemo took a strided access of %s [%d, %d) to one cell", acc.Space, acc.Lo, acc.Hi))
	case e.w >= 0:
		d.checkCachedCell(acc, &cellSlot{key: e.key, rows: int32(rows), lo: acc.Lo, hi: acc.Hi, pitch: pitch, c: e.c, c0: e.c0, w: e.w})
	}
}
