package hazard

import (
	"fmt"
	"math/bits"
	"slices"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
)

// The GM chunk index: each GM tensor kept in byte ranges (no 2-D view) has
// an array of the cells its accesses landed on, by rank and offset from
// the rank's base (tensorAt, which every GM access reads for its bounds
// check anyway). A contiguous access on one page finds its cell
// there, checked by the cell's own bounds as the cell cache's sets check
// theirs, instead of through the sets and, on a miss, the rank's shadow
// table, page window, region, page list and bounds search.
//
// The sets could not hold a many-rank ring's chunks: a chunk is reused a
// whole ring round later, after every other rank's chunks went through the
// sets' 12 288 entries, so at 384 ranks 63% of the 1.18 M GM accesses of
// ring_final missed (50% at 128 ranks), each then paying about eight cold
// lines before its cell. The index holds every chunk of every rank for
// 8 bytes a chunk (2.4 MB at 384 ranks), so a chunk's access costs the
// index line and the cell.
//
// An entry needs no invalidation, for the sets' reason (cellCache): a cell
// is only ever in its own buffer's lists, every change to them changes the
// bounds of the cells it drops or cuts, and a cell still spanning exactly
// the access's bytes is the one the buffer's lookup finds for them. The
// rank's GM shadow is never dropped (runBoundary drops local buffers only),
// and a tensor with a 2-D view never reaches the index (access2d takes it).
// checkShortcuts checks every hit against the page's own lookup.
//
// The index is bounded: at most 1<<gmIndexBits entries a rank (a wide
// tensor gets coarser granules, so two accesses may share an entry and take
// turns: a miss, never a wrong cell) and gmIndexBudget in all; a tensor
// or rank past the budget keeps using the sets. An entry is per rank since
// a cell is per rank's buffer, and the entry's bounds check then also
// covers a tensor the host moved: a cell spanning the access's bytes of
// that rank's GM is the one for them whatever tensor it was found through.
//
// Beside the index, tensorAt.init marks a rank's copy of a tensor whose
// bytes are all initialised in the byte-range shadow: the host wrote it
// whole, not as poison, and no poison host write touched it since
// (gmHostWrite). Only a host poison write makes initialised bytes unwritten
// again, so a read of a tensor no instruction writes (Access.ReadOnly)
// then has nothing to find and skips the shadow (gmInitialised): the ring's
// loads of In, 147 000 at 384 ranks.

// gmTensorIx is the chunk index of one GM tensor on every rank: a rank's
// entries are a run of per in cells, rank by rank, so a chunk's entry is
// found from the tensor's index number (a line every rank shares) and the
// rank's base, which the bounds check has just read (tensorAt: the index
// is not kept there, whose rank rows every GM access and signal word reads,
// and which took twice the misses at 56 bytes an entry).
type gmTensorIx struct {
	// cells[rank*per+k] is the cell that the last indexed access of the
	// rank's copy starting in granule k (bytes [k<<shift, (k+1)<<shift)
	// of the tensor) landed on exactly; nil until the first. It holds the
	// ranks up to the highest one seen.
	cells []*cell
	bytes int64 // the tensor's size, from its first placement
	per   int   // entries a rank; 0 until the first access
	shift uint8
	// none marks a tensor the budget gave no index: not asked again.
	none bool
}

// gmIndexBits bounds one rank's index of a tensor: 2^14 entries, 128 KiB.
// gmIndexBudget bounds the entries of all indexes together: 2^20, 8 MiB
// (a 384-rank ring_final takes 295 000). Variables for the tests, which
// make granules coarse (entries shared) and the budget nil (no index).
var gmIndexBits, gmIndexBudget = 14, 1 << 20

// maxGMTensors bounds the tensor numbers that have an index (and an init
// mark): a junk event's huge number costs nothing.
const maxGMTensors = 1 << 10

// gmIndexChecks and gmInitChecks count the self-checks of index hits and
// of initialised read-only reads (checkShortcuts).
var gmIndexChecks, gmInitChecks int

// tensorIx returns the index of GM tensor t, nil for a number past
// maxGMTensors.
func (cc *cellCache) tensorIx(t *asm.TensorInfo) *gmTensorIx {
	if t.Index < 0 || t.Index >= maxGMTensors {
		return nil
	}
	if t.Index >= len(cc.gm) {
		cc.gm = append(cc.gm, make([]gmTensorIx, t.Index+1-len(cc.gm))...)
	}
	ix := &cc.gm[t.Index]
	if ix.bytes == 0 {
		ix.bytes = t.Bytes
	}
	return ix
}

// gmEntry returns the entry of acc, a contiguous GM access on one page of
// a tensor kept in byte ranges, in its tensor's index, making, refining or
// growing the index on first need; nil when acc has none (its tensor's
// base is unknown, it strays outside the tensor, or the budget is spent).
func (d *Detector) gmEntry(acc *machine.Access) **cell {
	t := acc.Tensor
	if !dense(acc.Rank, t.Index) {
		return nil
	}
	at := d.tensorBase.ref(acc.Rank, t.Index)
	if at == nil || !at.ok {
		return nil
	}
	ix := d.cells.tensorIx(t)
	if ix == nil || acc.Lo < at.base || acc.Hi > at.base+ix.bytes {
		return nil
	}
	if n := acc.Hi - acc.Lo; ix.per == 0 || n>>ix.shift == 0 {
		// The first access, or one shorter than a granule: two of them
		// could share an entry, so make the granules as fine as it.
		if !d.cells.refine(ix, n) {
			return nil
		}
	}
	i := int(acc.Rank)*ix.per + int((acc.Lo-at.base)>>ix.shift)
	if i >= len(ix.cells) && !d.cells.grow(ix, int(acc.Rank), len(d.tensorBase.rows)) {
		return nil
	}
	return &ix.cells[i]
}

// refine gives ix granules no longer than n bytes, as far as its bound
// allows, and reports whether it has an index. A refined index starts
// empty (grow makes its ranks' entries): its cells are found again on
// their next access.
func (cc *cellCache) refine(ix *gmTensorIx, n int64) bool {
	if ix.none || ix.bytes <= 0 {
		return false
	}
	s := max(bits.Len64(uint64(n))-1, bits.Len64(uint64(ix.bytes-1))-gmIndexBits)
	if ix.per > 0 && s >= int(ix.shift) {
		return true // as fine as the bound lets it be
	}
	cc.gmEntries -= len(ix.cells)
	ix.cells, ix.shift, ix.per = nil, uint8(s), int((ix.bytes-1)>>s)+1
	return true
}

// grow gives ix entries for ranks up to rank, and reports whether the
// budget let it: a rank past it has no index, the others keep theirs.
// ranks is how many ranks the host placed tensors on (tensorBase): room
// for all of them is made at once when the budget would let them all
// have entries now (only the entries made count against it).
func (cc *cellCache) grow(ix *gmTensorIx, rank, ranks int) bool {
	k := (rank + 1) * ix.per
	if cc.gmEntries-len(ix.cells)+k > gmIndexBudget {
		ix.none = len(ix.cells) == 0
		return false
	}
	cc.gmEntries += k - len(ix.cells)
	ix.cells = append(reserveRanks(cc, ix, k, ranks), make([]*cell, k-len(ix.cells))...)
	return true
}

// reserveRanks returns ix.cells with room for ranks ranks' entries when it
// must grow to k entries and the budget would let them all in, else as it
// is. The ranks' first accesses come rank by rank (a ring's round), and
// append grew the index a quarter at a time past 256 entries: a 384-rank
// ring_final allocated 12.5 MB for indexes of 2.4 MB, copying each at
// every step. Only capacity changes; cc.gmEntries counts entries made.
func reserveRanks(cc *cellCache, ix *gmTensorIx, k, ranks int) []*cell {
	want := ranks * ix.per
	if cap(ix.cells) >= k || want <= k || cc.gmEntries-k+want > gmIndexBudget {
		return ix.cells
	}
	return slices.Grow(ix.cells, want-len(ix.cells))
}

// hitGM does access on c, the cell acc's index entry holds, when it still
// spans exactly acc's bytes, and reports whether it did.
func (d *Detector) hitGM(r *rec, acc *machine.Access, c *cell) bool {
	if c == nil || c.lo != acc.Lo || c.hi != acc.Hi {
		d.cells.gmMisses++
		return false
	}
	d.cells.gmHits++
	if checkShortcuts {
		gmIndexChecks++
		d.checkCachedCell(acc, &cellSlot{key: keyOf(acc), rows: 1, lo: acc.Lo, hi: acc.Hi, c: c})
	}
	uninitLo, uninitHi := int64(-1), int64(-1)
	d.visitCell(r, acc, c, geo{}, &uninitLo, &uninitHi)
	d.noteUninit(r, acc, uninitLo, uninitHi)
	return true
}

// placeTensor notes where the host wrote acc's tensor whole, for the
// bounds check; gmHostWrite then marks it initialised if it is.
func (d *Detector) placeTensor(acc *machine.Access) {
	*d.tensorBase.at(acc.Rank, acc.Tensor.Index) = tensorAt{base: acc.Lo, ok: true}
}

// gmHostWrite keeps the tensors' init marks (tensorAt.init) in step with a
// host write of bytes [acc.Lo, acc.Hi) of a rank's byte-range GM shadow: a
// write of a whole tensor not as poison marks it, a poison write unmarks
// every tensor of the rank it touches (each whose extent is unknown).
func (d *Detector) gmHostWrite(acc *machine.Access, poison bool) {
	if !poison {
		if t := acc.Tensor; t != nil && dense(acc.Rank, t.Index) {
			at := d.tensorBase.ref(acc.Rank, t.Index)
			if ix := d.cells.tensorIx(t); at != nil && at.ok && at.base == acc.Lo && ix != nil && acc.Hi-acc.Lo == ix.bytes {
				at.init = true
			}
		}
		return
	}
	unmark := func(i int, at *tensorAt) {
		if i < 0 || i >= len(d.cells.gm) || at.base < acc.Hi && acc.Lo < at.base+d.cells.gm[i].bytes {
			at.init = false
		}
	}
	if r := int(acc.Rank); r >= 0 && r < len(d.tensorBase.rows) {
		for i := range d.tensorBase.rows[r] {
			unmark(i, &d.tensorBase.rows[r][i])
		}
	}
	for k, at := range d.tensorBase.odd {
		if k[0] == int(acc.Rank) {
			unmark(-1, at)
		}
	}
}

// gmInitialised reports whether every byte acc reads lies in a tensor
// whose bytes are all initialised in the byte-range shadow (tensorAt.init):
// a read-only access then finds nothing unwritten, and records nothing.
func (d *Detector) gmInitialised(acc *machine.Access) bool {
	t := acc.Tensor
	at := d.tensorBase.ref(acc.Rank, t.Index)
	if at == nil || !at.init || t.Index < 0 || t.Index >= len(d.cells.gm) {
		return false
	}
	lo, hi := acc.Bounds()
	ok := lo >= at.base && hi <= at.base+d.cells.gm[t.Index].bytes
	if ok && checkShortcuts {
		d.checkGMInitialised(acc)
	}
	return ok
}

// checkGMInitialised panics if a byte of the read-only acc is unwritten in
// the byte-range shadow, which gmInitialised said none was.
func (d *Detector) checkGMInitialised(acc *machine.Access) {
	shortcuts++
	gmInitChecks++
	sm := d.shadowFor(acc)
	for k := range acc.NumRows() {
		lo, end := acc.Run(k)
		var uhi int64
		found := false
		if shift := pageShiftOf(asm.GM); lo >= 0 && (end-1)>>shift-lo>>shift >= maxRegionPages {
			_, uhi, found = sm.unwrittenWide(lo, end)
			lo = end // never page by page: it may span 512 GiB
		}
		for lo < end && !found {
			m, hi := sm.page(lo, end)
			_, uhi, found = m.unwritten(lo, hi)
			lo = hi
		}
		if found {
			panic(fmt.Sprintf("hazard: a read of %s found byte %d unwritten in a tensor kept as initialised", acc.Tensor.Name, uhi-1))
		}
	}
}

// gmEntryOf is gmEntry for an access the index may hold: a contiguous
// range on one page that the access records (not a read-only read), of a
// tensor kept in byte ranges (the caller's). Else nil.
func (d *Detector) gmEntryOf(acc *machine.Access) **cell {
	shift := pageShiftOf(asm.GM)
	if acc.ReadOnly && !acc.Write || acc.NumRows() > 1 || acc.Lo < 0 || acc.Lo>>shift != (acc.Hi-1)>>shift {
		return nil
	}
	return d.gmEntry(acc)
}
