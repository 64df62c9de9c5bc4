package memory

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
)

// newSparse makes a sparse GM buffer of size bytes under a budget of max,
// skipping where the OS gives no sparse buffers (they are dense there).
func newSparse(t *testing.T, size, max int64) (*Buffer, *Budget) {
	t.Helper()
	bud := &Budget{Max: max}
	b, ok := NewGMBuffer("GM @A[rank=0]", size, 4, bud)
	if !ok {
		t.Fatalf("NewGMBuffer(%d) refused under %d", size, max)
	}
	if !b.Sparse() {
		t.Skip("no sparse buffers on this OS")
	}
	return b, bud
}

// TestSparseTouch: a sparse buffer charges a page when it is first read or
// written, holds its background there (poison, zero or a fill), and hands
// its pages back when the whole buffer is reset.
func TestSparseTouch(t *testing.T) {
	const size = 1 << 30
	b, bud := newSparse(t, size, 8<<20)
	base := bud.Used() // the page bitmap
	b.Poison(0, size)
	if bud.Used() != base {
		t.Fatalf("poisoning the whole buffer charged %d bytes", bud.Used()-base)
	}
	v, err := b.LoadBits(asm.F32, 700<<20)
	if err != nil || v != 0x7FFFFFFF {
		t.Fatalf("poisoned f32 reads %#x, %v; want the poison pattern", v, err)
	}
	if got := bud.Used() - base; got != PageSize {
		t.Fatalf("one read charged %d bytes, want one page (%d)", got, PageSize)
	}
	if !b.IsPoisoned(700<<20, 4) {
		t.Fatal("the read element is not poisoned")
	}
	if err := b.Fill(asm.F32, 0, size/4, 1.5); err != nil {
		t.Fatal(err)
	}
	if bud.Used() != base {
		t.Fatalf("a whole fill kept %d bytes of pages", bud.Used()-base)
	}
	if f, err := b.LoadF(asm.F32, 123<<20); err != nil || f != 1.5 {
		t.Fatalf("filled element reads %g, %v", f, err)
	}
	if err := b.Zero(0, size); err != nil {
		t.Fatal(err)
	}
	if err := b.StoreF(asm.F32, 4, 2); err != nil {
		t.Fatal(err)
	}
	if f, _ := b.LoadF(asm.F32, 0); f != 0 {
		t.Fatalf("zeroed element reads %g", f)
	}
	// A window of a wide matrix touches the pages of its rows only.
	before := bud.Used()
	l := Layout2D{Kind: ND, DType: asm.F32, Rows: 1 << 12, Cols: 1 << 16} // 256 KiB rows
	if err := b.TouchWindow(0, l, 8, 16, 16, 16); err != nil {
		t.Fatal(err)
	}
	if got := bud.Used() - before; got != 16*PageSize {
		t.Fatalf("a 16-row window charged %d bytes, want 16 pages", got)
	}
	// Past the budget: a *PageError naming the buffer.
	err = b.Touch(512<<20, 64<<20)
	var pe *PageError
	if !errors.As(err, &pe) || pe.Buf != b || !strings.Contains(err.Error(), "GM @A[rank=0]: touching its pages") {
		t.Fatalf("touching 64 MiB under an 8 MiB budget: %v", err)
	}
	if bud.Used() > bud.Max {
		t.Fatalf("budget overdrawn: %d of %d", bud.Used(), bud.Max)
	}
}

// TestSparseCopy2D: a tile loaded from and stored to a sparse tensor moves
// the same bytes and poison as with a dense one.
func TestSparseCopy2D(t *testing.T) {
	const size = 16 << 20
	sp, _ := newSparse(t, size, 64<<20)
	dn := NewBuffer(asm.GM, "dense", size, 4, false)
	gl := Layout2D{Kind: ND, DType: asm.F32, Rows: 1 << 10, Cols: 1 << 12}
	tl := Layout2D{Kind: ND, DType: asm.F32, Rows: 16, Cols: 256}
	for _, g := range []*Buffer{sp, dn} {
		g.Poison(0, size)
		if err := FillRandom(g, gl.Offset(40, 0), asm.F32, 1<<12, 7, -1, 1, false); err != nil {
			t.Fatal(err)
		}
	}
	tiles := [2]*Buffer{}
	for i, g := range []*Buffer{sp, dn} {
		tiles[i] = NewBuffer(asm.UB, "UB", tl.Footprint(), 4, true)
		if err := Copy2D(tiles[i], 0, tl, 0, 0, g, 0, gl, 32, 8, 16, 256, RoundRint); err != nil {
			t.Fatal(err)
		}
		if err := Copy2D(g, 0, gl, 900, 100, tiles[i], 0, tl, 0, 0, 16, 256, RoundRint); err != nil {
			t.Fatal(err)
		}
	}
	if string(tiles[0].Data) != string(tiles[1].Data) {
		t.Fatal("tiles loaded from sparse and dense tensors differ")
	}
	if got, want := tiles[0].PoisonedRanges(), tiles[1].PoisonedRanges(); len(got) != len(want) {
		t.Fatalf("poison %v, want %v", got, want)
	}
	lo, hi := gl.Offset(900, 0), gl.Offset(916, 0)
	if string(sp.Data[lo:hi]) != string(dn.Data[lo:hi]) {
		t.Fatal("stores into sparse and dense tensors differ")
	}
}

// TestOverwriteSkipsOnlyWrittenPages: the writers that commit a sparse
// buffer's pages without the background (TouchOverwrite: random and expr
// inits, a band of rows, a copy of the stored bytes, a window of whole
// rows) leave the same bytes as on a dense buffer, which is poisoned
// first: a page they cover only in part keeps its background around what
// they write. (It failed with touchPages skipping the fill of every page in
// the range, not only those wholly inside.)
func TestOverwriteSkipsOnlyWrittenPages(t *testing.T) {
	const rows, cols = 300, 1000 // f32: 1.14 MiB, rows of 4000 bytes across page boundaries
	shape := []int{rows, cols}
	size := int64(rows*cols*4 + 3*PageSize + 4)
	l := Layout2D{Kind: ND, Rows: rows, Cols: cols, DType: asm.F32}
	band := func(r0, r1 int) *Array {
		a := NewArray(r1-r0, cols)
		for i := range a.Data {
			a.Data[i] = float64(r0*cols + i)
		}
		return a
	}
	tests := []struct {
		name  string
		write func(b *Buffer, src *Buffer) error
	}{
		{"random", func(b, _ *Buffer) error { return FillRandom(b, PageSize+4, asm.F32, rows*cols, 1, -1, 1, false) }},
		{"expr", func(b, _ *Buffer) error {
			return FillFunc(b, 4, asm.F32, rows*cols/2, func(i int64) float64 { return float64(i) })
		}},
		{"rows by bands", func(b, _ *Buffer) error {
			for r0 := 0; r0 < rows; r0 += 37 {
				if err := StoreRows(b, 12, asm.F32, shape, asm.LayoutND, r0, band(r0, min(r0+37, rows)), RoundRint); err != nil {
					return err
				}
			}
			return nil
		}},
		{"rows, the last band alone", func(b, _ *Buffer) error {
			return StoreRows(b, 12, asm.F32, shape, asm.LayoutND, 200, band(200, rows), RoundRint)
		}},
		{"array", func(b, _ *Buffer) error {
			return StoreArray(b, 8, asm.F32, shape, asm.LayoutND, band(0, rows), RoundRint)
		}},
		{"copy of the stored bytes", func(b, src *Buffer) error { return CopyStored(b, src, 4, asm.F32, shape, asm.LayoutND) }},
		{"window of whole rows", func(b, src *Buffer) error {
			return Copy2D(b, 4, l, 17, 0, src, 4, l, 3, 0, 250, cols, RoundRint)
		}},
		{"window of part rows", func(b, src *Buffer) error {
			return Copy2D(b, 4, l, 17, 500, src, 4, l, 3, 0, 250, 400, RoundRint)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dense := NewBuffer(asm.GM, "dense", size, 4, true)
			sp, _ := newSparse(t, size, 1<<30)
			sp.Poison(0, size)
			src := NewBuffer(asm.GM, "src", size, 4, true)
			if err := FillRandom(src, 4, asm.F32, rows*cols, 9, -1, 1, false); err != nil {
				t.Fatal(err)
			}
			for _, b := range []*Buffer{dense, sp} {
				if err := tc.write(b, src); err != nil {
					t.Fatal(err)
				}
			}
			if err := sp.Touch(0, size); err != nil {
				t.Fatal(err)
			}
			for i := range dense.Data {
				if dense.Data[i] != sp.Data[i] {
					t.Fatalf("byte %d is %#x sparse, %#x dense", i, sp.Data[i], dense.Data[i])
				}
			}
			if !slices.Equal(dense.PoisonedRanges(), sp.PoisonedRanges()) {
				t.Errorf("poisoned ranges %v sparse, %v dense", sp.PoisonedRanges(), dense.PoisonedRanges())
			}
		})
	}
}
