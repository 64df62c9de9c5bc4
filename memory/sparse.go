package memory

import (
	"encoding/binary"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/ptoasm/ptoasm/asm"
)

// PageSize is the unit in which a sparse buffer's storage is committed and
// charged to its Budget: large enough that a tile's rows touch few pages, small
// enough that one tile of a huge tensor costs kilobytes, not megabytes.
const PageSize = 64 << 10

// SparseMin is the smallest buffer NewGMBuffer makes sparse: below it the
// bookkeeping is not worth it, and the buffer is charged whole.
const SparseMin = 4 * PageSize

// Budget is the memory a run may take, shared by all its buffers (and the
// other storage a machine charges). Sparse buffers take pages from it as they
// are first touched, possibly from several goroutines.
type Budget struct {
	Max  int64
	used atomic.Int64
}

// Take charges n bytes, or reports false (charging nothing) if they do not fit.
func (b *Budget) Take(n int64) bool {
	for {
		u := b.used.Load()
		if n < 0 || n > b.Max-u {
			return false
		}
		if b.used.CompareAndSwap(u, u+n) {
			return true
		}
	}
}

// Release returns n bytes taken earlier.
func (b *Budget) Release(n int64) { b.used.Add(-n) }

// Used is what is taken.
func (b *Budget) Used() int64 { return b.used.Load() }

// PageError is a sparse buffer's first touch of a page that would pass its
// budget. The machine names the tensor and the instruction.
type PageError struct {
	Buf       *Buffer
	Need, Max int64 // the budget's use with the page, and its limit
}

func (e *PageError) Error() string {
	return fmt.Sprintf("%s: touching its pages brings the run to %s, over the memory budget of %s",
		e.Buf.label(), asm.FormatBytes(e.Need), asm.FormatBytes(e.Max))
}

// sparse is the page state of a buffer whose Data is reserved address space
// (see mapPages): a page is committed, filled with the background pattern and
// charged when it is first read or written.
type sparse struct {
	mu      sync.Mutex
	budget  *Budget
	touched []uint64 // one bit per page
	left    int64    // pages not yet touched
	full    atomic.Bool
	// bg is the 8-byte pattern an untouched page holds (zero, the poison
	// pattern, a fill value); it is phased on absolute offsets, as pages are.
	bg uint64
	// decommit hands every committed page back to the OS.
	decommit func()
}

// NewGMBuffer makes the storage of a GM tensor. One of at least SparseMin
// bytes is sparse where the OS lets the process reserve address space without
// committing it: it costs only the pages the run touches. Otherwise the
// buffer is dense and its whole size is taken from budget now; ok is false
// when that does not fit (nothing is allocated).
func NewGMBuffer(name string, size int64, elemSize int, budget *Budget) (b *Buffer, ok bool) {
	if size >= SparseMin {
		if data, decommit := mapPages(size); data != nil {
			npages := (size + PageSize - 1) / PageSize
			bitmap := (npages + 63) / 64 * 8
			if !budget.Take(bitmap) {
				unmapPages(data)
				return nil, false
			}
			b = &Buffer{Space: asm.GM, Name: name, Data: data, ElemSize: elemSize,
				sp: &sparse{budget: budget, touched: make([]uint64, (npages+63)/64), left: npages, decommit: decommit}}
			unmapWhenUnreachable(b, data)
			return b, true
		}
	}
	if !budget.Take(size) {
		return nil, false
	}
	return NewBuffer(asm.GM, name, size, elemSize, false), true
}

// Sparse reports whether the buffer commits storage page by page.
func (b *Buffer) Sparse() bool { return b.sp != nil }

// Touch makes [off, off+n) (clipped to the buffer) readable and writable
// through Data: on a sparse buffer it commits the pages not touched before,
// filled with the background, and charges them, or returns a *PageError. Every
// access to Data must be preceded by it; the Buffer's own methods and
// Copy2D do this. A dense or fully touched buffer returns at once.
func (b *Buffer) Touch(off, n int64) error {
	if b.sp == nil || b.sp.full.Load() {
		return nil
	}
	lo, hi := b.clip(off, n)
	if lo >= hi {
		return nil
	}
	return b.touchPages(lo/PageSize, (hi-1)/PageSize, 0, 0)
}

// TouchOverwrite is Touch for a caller that writes every byte of [off,
// off+n) before anything reads them (an init, a copy of a whole tensor): a
// page that lies wholly inside is committed and charged without the
// background fill, which the caller would overwrite (poisoning the pages
// of an 8-rank allgather_gemm's inits was 12% of its data run). The bytes
// are the same as after Touch once the caller has written them; a page the
// range only partly covers is filled as by Touch.
func (b *Buffer) TouchOverwrite(off, n int64) error {
	if b.sp == nil || b.sp.full.Load() {
		return nil
	}
	lo, hi := b.clip(off, n)
	if lo >= hi {
		return nil
	}
	return b.touchPages(lo/PageSize, (hi-1)/PageSize, lo, hi)
}

// touchPages commits pages [p0, p1], filling each with the background
// unless it lies within [wlo, whi), which the caller overwrites.
func (b *Buffer) touchPages(p0, p1, wlo, whi int64) error {
	s := b.sp
	s.mu.Lock()
	defer s.mu.Unlock()
	for p := p0; p <= p1; p++ {
		w, bit := p/64, uint64(1)<<(p%64)
		if s.touched[w]&bit != 0 {
			continue
		}
		lo := p * PageSize
		hi := min(lo+PageSize, int64(len(b.Data)))
		if !s.budget.Take(hi - lo) {
			return &PageError{Buf: b, Need: s.budget.Used() + hi - lo, Max: s.budget.Max}
		}
		if lo < wlo || hi > whi {
			fillWord(b.Data[lo:hi], s.bg)
		}
		s.touched[w] |= bit
		s.left--
	}
	if s.left == 0 {
		s.full.Store(true)
	}
	return nil
}

// TouchWindow touches the bytes of a rows×cols window at logical (r0, c0) of
// the matrix l at base: run by run along the rows (or down the columns of a
// column-major layout), so a tile of a huge tensor commits the pages of its
// own rows, not every page between its first and last element. Callers hoist
// it out of their element loops.
func (b *Buffer) TouchWindow(base int64, l Layout2D, r0, c0, rows, cols int) error {
	return b.touchWindow(base, l, r0, c0, rows, cols, false)
}

// TouchWindowOverwrite is TouchWindow for a caller that writes every
// element of the window before anything reads it (Copy2D's destination):
// the pages wholly inside one contiguous run of the window's bytes (a run
// of whole rows of a row-major matrix, a column of a column-major one) are
// committed without the background fill, as by TouchOverwrite.
func (b *Buffer) TouchWindowOverwrite(base int64, l Layout2D, r0, c0, rows, cols int) error {
	return b.touchWindow(base, l, r0, c0, rows, cols, true)
}

func (b *Buffer) touchWindow(base int64, l Layout2D, r0, c0, rows, cols int, over bool) error {
	if b.sp == nil || b.sp.full.Load() || rows <= 0 || cols <= 0 {
		return nil
	}
	es := int64(l.DType.Size())
	lo, hi := base+l.Offset(r0, c0), base+l.Offset(r0+rows-1, c0+cols-1)+es
	touch := b.Touch
	if over {
		if hi-lo == int64(rows)*int64(cols)*es {
			// As many bytes as elements: the window is one run (whole
			// rows of a row-major matrix), all of it written.
			return b.TouchOverwrite(lo, hi-lo)
		}
		touch = b.TouchOverwrite // each run below is written whole
	}
	if hi-lo <= 2*PageSize {
		// Every layout's offset grows with the row and the column, so the
		// window lies in [lo, hi); a small span is touched in one go.
		return b.Touch(lo, hi-lo)
	}
	if l.colRun(r0) > 1 && l.run(c0) <= 1 {
		for j := 0; j < cols; j++ {
			c := base + l.colPart(c0+j)
			for i := 0; i < rows; {
				n := min(rows-i, l.colRun(r0+i))
				if err := touch(c+l.rowPart(r0+i), int64(n)*es); err != nil {
					return err
				}
				i += n
			}
		}
		return nil
	}
	for i := 0; i < rows; i++ {
		r := base + l.rowPart(r0+i)
		for j := 0; j < cols; {
			n := min(cols-j, l.run(c0+j))
			if err := touch(r+l.colPart(c0+j), int64(n)*es); err != nil {
				return err
			}
			j += n
		}
	}
	return nil
}

// setBackground makes a sparse buffer hold the pattern bg everywhere,
// returning every touched page to the OS and the budget, when [off, off+n)
// is the whole buffer; it reports false (doing nothing) otherwise, and the
// caller writes the range itself.
func (b *Buffer) setBackground(off, n int64, bg uint64) bool {
	s := b.sp
	if s == nil || off != 0 || n != int64(len(b.Data)) {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	npages := (n + PageSize - 1) / PageSize
	if s.left != npages {
		s.decommit()
		for p := range npages {
			if s.touched[p/64]&(1<<(p%64)) != 0 {
				s.budget.Release(min((p+1)*PageSize, n) - p*PageSize)
			}
		}
		clear(s.touched)
		s.left = npages
		s.full.Store(false)
	}
	s.bg = bg
	return true
}

// fillWord fills d (whose start is 8-byte aligned in its buffer) with the
// little-endian pattern w.
func fillWord(d []byte, w uint64) {
	if len(d) == 0 {
		return
	}
	var p [8]byte
	binary.LittleEndian.PutUint64(p[:], w)
	copy(d, p[:])
	replicate(d, 8)
}

// patternWord is the 8-byte word of a period-size pattern whose first
// element is v.
func patternWord(v uint64, size int) uint64 {
	switch size {
	case 1:
		v &= 0xFF
		v |= v << 8
		fallthrough
	case 2:
		v &= 0xFFFF
		v |= v << 16
		fallthrough
	case 4:
		v &= 0xFFFFFFFF
		v |= v << 32
	}
	return v
}
