package hazard

import (
	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
)

// shadow2D is the shadow state of one row-major (ND) or column-major (DN,
// rows of the shadow are then its columns) GM tensor on one rank,
// or of a local buffer read in column windows (Detector.toGrid), kept in
// rows × byte columns: row bands, each with a cell list over the columns. A
// window narrower than the rows is then one rectangle — a tile-sized access
// touches a band or two and a cell or two, whatever its row count — where a
// byte-range map needs a cell per row.
type shadow2D struct {
	base, pitch, rows int64
	bands             []*band
	// rs holds each band's rows [lo, hi), in step with bands: span's
	// search then reads one contiguous array, not a band per probe (each
	// probe was a cache miss on a tensor of many bands, imap.bs likewise).
	rs   [][2]int64
	hint int // the band span returned last
	// cached says the cell cache may hold cells of this view
	// (Detector.fillGrid), so a band split must not keep a cell under new
	// rows.
	cached bool
	// init says whether every byte is initialised (initAll), or not
	// (initSome), or nobody looked since the last write (initUnknown). A
	// tensor only the host writes (a GEMM's inputs) is read once per tile
	// and K step, and each read walked its bands for unwritten bytes
	// (initialised).
	init initState
}

type initState uint8

const (
	initUnknown initState = iota
	initAll
	initSome
)

// initialised reports whether every byte of the shadow is initialised, so
// no read of it finds unwritten bytes.
func (s *shadow2D) initialised() bool {
	if s.init == initUnknown {
		s.init = initAll
		if _, _, found := s.unwritten(rect{0, s.rows, 0, s.pitch}); found {
			s.init = initSome
		}
	}
	return s.init == initAll
}

// wrote notes a write to the shadow: a poisoning host write may leave bytes
// uninitialised, and any write may complete what was not.
func (s *shadow2D) wrote(poison bool) {
	if poison || s.init == initSome {
		s.init = initUnknown
	}
}

// band is rows [lo, hi) of a tensor; cols holds its cells (byte columns).
type band struct {
	lo, hi int64
	cols   imap
}

// geo turns a cell's columns back into GM bytes for reports: the bounding
// range of the band's rows. The zero geo is the identity (byte-range maps).
type geo struct {
	base, pitch, r0, r1 int64
}

func (g geo) bytes(lo, hi int64) (int64, int64) {
	if g.pitch == 0 {
		return lo, hi
	}
	return g.base + g.r0*g.pitch + lo, g.base + (g.r1-1)*g.pitch + hi
}

// rect is rows [r0, r1) × byte columns [c0, c1) of a tensor.
type rect struct{ r0, r1, c0, c1 int64 }

// newGMShadow returns the 2-D shadow for tensor t at base, or nil when t is
// not a plain row- or column-major tensor (signals, fifos and fractal
// layouts stay in byte ranges).
func newGMShadow(t *asm.TensorInfo, base int64) *shadow2D {
	if t == nil || t.Class == asm.TensorSignal || t.Class == asm.TensorFIFO || len(t.Shape) < 2 {
		return nil
	}
	var pitch int64
	switch t.Layout {
	case asm.LayoutND:
		pitch = t.Shape[len(t.Shape)-1] * int64(t.DType.Size())
	case asm.LayoutDN:
		// Column-major: the machine reports a DN window as a run per
		// column, a column's bytes apart, so the shadow's "rows" are the
		// tensor's columns (stacked matrices follow one another).
		pitch = t.Shape[len(t.Shape)-2] * int64(t.DType.Size())
	default:
		return nil
	}
	if pitch <= 0 || t.Bytes%pitch != 0 {
		return nil
	}
	return &shadow2D{base: base, pitch: pitch, rows: t.Bytes / pitch}
}

// rects appends the rectangles holding acc's bytes, clipped to the tensor
// (bytes outside it are an out-of-bounds finding, reported separately).
func (s *shadow2D) rects(acc *machine.Access, out []rect) []rect {
	w := acc.Hi - acc.Lo
	if acc.Rows > 1 && acc.Pitch == s.pitch {
		off := acc.Lo - s.base
		if off >= 0 && off%s.pitch+w <= s.pitch {
			r0 := off / s.pitch
			c0 := off % s.pitch
			return s.clip(out, rect{r0, r0 + acc.Rows, c0, c0 + w})
		}
	}
	// Any other stride, run by run, stopping past the tensor's end, so a
	// bogus row count costs no more than the tensor's bytes.
	for k := range acc.NumRows() {
		lo, hi := acc.Run(k)
		if lo-s.base >= s.rows*s.pitch {
			break
		}
		out = s.linear(out, lo-s.base, hi-s.base)
	}
	return out
}

// linear appends the rectangles of tensor bytes [lo, hi): a partial first
// row, whole middle rows, a partial last row.
func (s *shadow2D) linear(out []rect, lo, hi int64) []rect {
	lo, hi = max(lo, 0), min(hi, s.rows*s.pitch)
	if lo >= hi {
		return out
	}
	r0, c0 := lo/s.pitch, lo%s.pitch
	r1, c1 := (hi-1)/s.pitch, (hi-1)%s.pitch+1
	if r0 == r1 {
		return append(out, rect{r0, r0 + 1, c0, c1})
	}
	if c0 > 0 {
		out = append(out, rect{r0, r0 + 1, c0, s.pitch})
		r0++
	}
	if c1 < s.pitch {
		if r0 < r1 {
			out = append(out, rect{r0, r1, 0, s.pitch})
		}
		return append(out, rect{r1, r1 + 1, 0, c1})
	}
	return append(out, rect{r0, r1 + 1, 0, s.pitch})
}

func (s *shadow2D) clip(out []rect, r rect) []rect {
	r.r0, r.r1 = max(r.r0, 0), min(r.r1, s.rows)
	if r.r0 >= r.r1 || r.c0 >= r.c1 {
		return out
	}
	return append(out, r)
}

// span makes bands cover rows [lo, hi) exactly, splitting at both ends
// (a split band's cells are copied) and filling gaps with empty bands, and
// returns the band index range [i, j).
func (s *shadow2D) span(lo, hi int64) (int, int) {
	// Most accesses cover exactly the band the last one did (a tile's
	// rows): check it before searching.
	if h := s.hint; h < len(s.rs) && s.rs[h] == [2]int64{lo, hi} {
		return h, h + 1
	}
	i := s.search(lo)
	if i < len(s.rs) && s.rs[i] == [2]int64{lo, hi} {
		s.hint = i
		return i, i + 1
	}
	pos, idx := lo, i
	for pos < hi {
		if idx < len(s.rs) && s.rs[idx][0] <= pos {
			if s.rs[idx][0] < pos {
				s.split(idx, pos)
				idx++
				i = idx
			}
			if s.rs[idx][1] > hi {
				s.split(idx, hi)
			}
			pos = s.rs[idx][1]
			idx++
			continue
		}
		end := hi
		if idx < len(s.rs) && s.rs[idx][0] < hi {
			end = s.rs[idx][0]
		}
		s.insert(idx, &band{lo: pos, hi: end})
		pos = end
		idx++
	}
	return i, idx
}

// search returns the first band ending after row lo.
func (s *shadow2D) search(lo int64) int {
	i, j := 0, len(s.rs)
	for i < j {
		h := int(uint(i+j) >> 1)
		if s.rs[h][1] > lo {
			j = h
		} else {
			i = h + 1
		}
	}
	return i
}

func (s *shadow2D) split(k int, x int64) {
	b := s.bands[k]
	right := &band{lo: x, hi: b.hi}
	right.cols.cells = make([]*cell, 0, len(b.cols.cells))
	for i, c := range b.cols.cells {
		n := &cell{}
		c.copyTo(n)
		right.cols.cells = append(right.cols.cells, n)
		if s.cached {
			// The cell cache knows a 2-D cell by its columns alone
			// (cellSlot.valid): the left half gets new cells too, and
			// the old ones match no entry.
			l := &cell{}
			c.copyTo(l)
			b.cols.cells[i] = l
			c.lo, c.hi = 0, 0
		}
	}
	right.cols.bs = append([][2]int64(nil), b.cols.bs...)
	b.hi = x
	s.rs[k][1] = x
	s.insert(k+1, right)
}

func (s *shadow2D) insert(k int, b *band) {
	s.bands = append(s.bands, nil)
	copy(s.bands[k+1:], s.bands[k:])
	s.bands[k] = b
	s.rs = append(s.rs, [2]int64{})
	copy(s.rs[k+1:], s.rs[k:])
	s.rs[k] = [2]int64{b.lo, b.hi}
}

// unwritten is imap.unwritten over a rectangle, without splitting: a read
// of a tensor only the host writes records nothing.
func (s *shadow2D) unwritten(r rect) (lo, hi int64, found bool) {
	note := func(g geo, a, b int64) {
		x, y := g.bytes(a, b)
		if !found {
			lo, found = x, true
		}
		hi = y
	}
	i := s.search(r.r0)
	pos := r.r0
	for ; i < len(s.bands) && pos < r.r1; i++ {
		b := s.bands[i]
		if b.lo >= r.r1 {
			break
		}
		if b.lo > pos {
			note(geo{s.base, s.pitch, pos, b.lo}, r.c0, r.c1)
		}
		if a, z, ok := b.cols.unwritten(r.c0, r.c1); ok {
			note(geo{s.base, s.pitch, max(b.lo, pos), min(b.hi, r.r1)}, a, z)
		}
		pos = b.hi
	}
	if pos < r.r1 {
		note(geo{s.base, s.pitch, pos, r.r1}, r.c0, r.c1)
	}
	return lo, hi, found
}
