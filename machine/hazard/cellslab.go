package hazard

import "unsafe"

// cellSlab hands out shadow cells from chunks of cellChunk, one per
// detector (shadowMem.slab, imap.slab).
//
// A 384-rank ring lint makes about 560 000 cells, each then a 256-byte
// object of its own (192 bytes since their signal fields went to a box,
// cell.sigBox, and their two rare lists to one, cell.lists): the cells were half of the lint's heap allocations
// (imap.newCell), and each new span of them was one more span of small
// pointerful objects for the allocator to set up and the collector to
// sweep. A chunk is one allocation for cellChunk cells.
//
// A cell lives as long as its shadow (a collapsed cell goes to its list's
// free list, imap.free, and is reused there), so a chunk's cells die
// together with the detector. The one exception is a local buffer that
// moves to a grid (Detector.toGrid): its cells are dropped while chunks
// they share stay alive, at most once per buffer.
type cellSlab struct {
	chunk []cell // what is left of the current chunk
}

// cellChunk is how many cells a chunk holds: as many as fill 16 KiB, a
// size class of one span, after the chunk's lead. An object over 512
// bytes carries an 8-byte header (its type) and so starts 8 bytes into
// its slot; the lead pads the cells to the slot's next line, so that
// every cell is three whole lines (cell): 85 cells of 192 bytes, the
// header and the lead fill the 16 KiB exactly. (With 200-byte cells at
// the header, 81 to a chunk, a cell touched four lines; with 256-byte
// ones, 64 would have taken the next size class, 18 KiB. Chunks of 32
// cells, 8 200 bytes, took 9 472-byte objects: 17 MB more RSS at 384
// ranks.)
const cellChunk = (16<<10 - chunkLead - mallocHeader) / int(unsafe.Sizeof(cell{}))

// chunkLead is the room before a chunk's first cell: from the
// allocator's header to the slot's next line.
const chunkLead = 64 - mallocHeader

// mallocHeader is the Go runtime's header on an object over 512 bytes
// that holds pointers (runtime/mbitmap.go, mallocHeaderSize).
const mallocHeader = 8

// cellChunkArray is one chunk: its cells start on a line of the slot
// (TestCellChunkLayout).
type cellChunkArray struct {
	_     [chunkLead]byte
	cells [cellChunk]cell
}

// newCell returns a zero cell for [lo, hi), from s's chunk; from the heap
// when s is nil (a list made outside a detector's shadow).
func (s *cellSlab) newCell(lo, hi int64) *cell {
	if s == nil {
		return &cell{lo: lo, hi: hi}
	}
	if len(s.chunk) == 0 {
		a := new(cellChunkArray)
		// Its pages in one call, not a fault each (prefault): the
		// first is the allocator's header's, already there.
		prefault(unsafe.Pointer(a), unsafe.Sizeof(*a))
		s.chunk = a.cells[:]
	}
	c := &s.chunk[0]
	s.chunk = s.chunk[1:]
	c.lo, c.hi = lo, hi
	return c
}
