package hazard

import "unsafe"

// Signal words are made in bulk. A ring's signal word is one cell split
// off its tensor's host-written cell at its first access (a notify or a
// wait, whichever the run brings first; a satisfied wait is one event, so
// polling makes no cell), then one history (sigHist) and one atomic add's
// list box (recBox) at its notify: three objects a word, 294 000 words at
// 384 ranks, 0.88 M of the lint's 2.36 M allocations, each with the
// allocator's per-object work and the clearing of fresh small-object
// spans (docs/performance.md, "Round 11 at many ranks"). sigSlab hands
// them out of arrays instead, which the words then share with their
// neighbours.
//
// Nothing else changes: a record from a slab is the zero value a new one
// was, and a cell is given to a page's free list, which newCell already
// takes from, so every cell, history and list holds what it held.

// sigSlab holds the records not yet handed out.
type sigSlab struct {
	cells slab[cell]
	hists slab[sigHist]
	boxes slab[recBox]
}

// slab hands out zero values of T from arrays of slabBytes.
type slab[T any] struct {
	free []T
}

// slabBytes sizes a slab's arrays: above 32 KiB, an array is a large
// object, which starts on a page. A smaller array of pointerful records
// starts 8 bytes into its object (the allocator's type header), which
// would put every cell across five cache lines instead of four
// (TestCellLayout) and every history across three instead of two.
const slabBytes = 64 << 10

// get returns a new zero T.
func (s *slab[T]) get() *T {
	if len(s.free) == 0 {
		var t T
		s.free = make([]T, max(slabBytes/int(unsafe.Sizeof(t)), 1))
	}
	p := &s.free[0]
	s.free = s.free[1:]
	return p
}

// hist returns a new, empty signal history.
func (s *sigSlab) hist() *sigHist { return s.hists.get() }

// addBox returns a new list box holding r alone (cell.putAdd's first).
func (s *sigSlab) addBox(r *rec) *[]rec {
	b := s.boxes.get()
	b.one[0] = *r
	b.l = b.one[:]
	return &b.l
}

// sigCellsPerSpan is the most cells one span of a signal access makes:
// one split at each end, or a gap filled between them.
const sigCellsPerSpan = 2

// roomFor gives page m's free list the new cells a span of a signal
// access may make, from the slab, so that newCell need not allocate them
// one by one. A cell left unused stays on the list for a later split.
func (s *sigSlab) roomFor(m *imap) {
	for len(m.free) < sigCellsPerSpan {
		m.free = append(m.free, s.cells.get())
	}
}

// putSigAdd records atomic add r in signal word c's other writes
// (cell.putAdd), the first one's list box from the slab.
func (d *Detector) putSigAdd(c *cell, r *rec) {
	if c.addp == nil {
		c.addp = d.sigSlab.addBox(r)
		return
	}
	c.putAdd(r)
}

// sigHistOf returns word c's history, made empty if it has none.
func (d *Detector) sigHistOf(c *cell) *sigHist {
	if c.hist == nil {
		c.hist = d.sigSlab.hist()
	}
	return c.hist
}
