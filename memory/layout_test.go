package memory

import (
	"fmt"
	"math"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
)

// Every layout must map distinct logical elements to distinct aligned offsets
// inside its footprint.
func TestLayoutBijection(t *testing.T) {
	for _, kind := range []LayoutKind{ND, DN, NZ, ZZ, ZN} {
		for _, dt := range []asm.DType{asm.I8, asm.F16, asm.F32} {
			for _, fr := range []int{512, 1024} {
				for _, sh := range [][2]int{{16, 32}, {48, 40}, {5, 7}, {1, 1}} {
					l := Layout2D{Kind: kind, Rows: sh[0], Cols: sh[1], DType: dt, Fractal: fr}
					if err := l.Validate(); err != nil {
						t.Fatalf("%+v: %v", l, err)
					}
					seen := map[int64]bool{}
					fp := l.Footprint()
					for r := 0; r < l.Rows; r++ {
						for c := 0; c < l.Cols; c++ {
							o := l.Offset(r, c)
							if o < 0 || o+int64(dt.Size()) > fp || o%int64(dt.Size()) != 0 || seen[o] {
								t.Fatalf("%+v: (%d,%d) → %d (footprint %d, seen %v)", l, r, c, o, fp, seen[o])
							}
							seen[o] = true
						}
					}
				}
			}
		}
	}
}

func TestLayoutOffsets(t *testing.T) {
	tests := []struct {
		l    Layout2D
		r, c int
		want int64
	}{
		{Layout2D{Kind: ND, Rows: 4, Cols: 8, DType: asm.F16}, 1, 2, 20},
		{Layout2D{Kind: ND, Rows: 4, Cols: 8, DType: asm.F16, Stride: 16}, 1, 2, 36},
		{Layout2D{Kind: DN, Rows: 4, Cols: 8, DType: asm.F32}, 1, 2, 36},
		// NZ f16 32×32: 16×16 boxes stored column of boxes first.
		{Layout2D{Kind: NZ, Rows: 32, Cols: 32, DType: asm.F16}, 1, 0, 32},
		{Layout2D{Kind: NZ, Rows: 32, Cols: 32, DType: asm.F16}, 16, 0, 512},
		{Layout2D{Kind: NZ, Rows: 32, Cols: 32, DType: asm.F16}, 0, 16, 1024},
		{Layout2D{Kind: ZZ, Rows: 32, Cols: 32, DType: asm.F16}, 0, 16, 512},
		{Layout2D{Kind: ZZ, Rows: 32, Cols: 32, DType: asm.F16}, 16, 0, 1024},
		{Layout2D{Kind: ZN, Rows: 32, Cols: 32, DType: asm.F16}, 1, 0, 2},
		{Layout2D{Kind: ZN, Rows: 32, Cols: 32, DType: asm.F16}, 0, 1, 32},
		// f32 512 B boxes are 16×8; the 1024 B accumulator box is 16×16.
		{Layout2D{Kind: NZ, Rows: 16, Cols: 16, DType: asm.F32}, 0, 8, 512},
		{Layout2D{Kind: NZ, Rows: 16, Cols: 16, DType: asm.F32, Fractal: 1024}, 0, 8, 32},
		{Layout2D{Kind: NZ, Rows: 32, Cols: 32, DType: asm.I8}, 0, 31, 31},
	}
	for _, tc := range tests {
		if got := tc.l.Offset(tc.r, tc.c); got != tc.want {
			t.Errorf("%v %v [%d,%d] f%d: Offset(%d,%d) = %d, want %d", tc.l.Kind, tc.l.DType, tc.l.Rows, tc.l.Cols, tc.l.Fractal, tc.r, tc.c, got, tc.want)
		}
	}
}

func TestTileLayout(t *testing.T) {
	tests := []struct {
		b, s string
		want LayoutKind
	}{
		{"row", "none", ND}, {"col", "none", DN}, {"row", "row", ZZ}, {"col", "row", NZ}, {"row", "col", ZN}, {"", "", ND},
	}
	for _, tc := range tests {
		ti := &asm.TileInfo{Rows: 16, Cols: 16, DType: asm.F16, BLayout: tc.b, SLayout: tc.s, Fractal: 512}
		if got := TileLayout(ti).Kind; got != tc.want {
			t.Errorf("blayout=%s slayout=%s: %v, want %v", tc.b, tc.s, got, tc.want)
		}
	}
	g := GMLayout(&asm.TensorInfo{DType: asm.F16, Shape: []int64{2, 3, 8}})
	if g.Rows != 6 || g.Cols != 8 || g.Kind != ND {
		t.Errorf("GMLayout folds outer dims: %+v", g)
	}
}

// fillLogical writes v(r, c) at every logical element of l.
func fillLogical(t *testing.T, b *Buffer, base int64, l Layout2D, v func(r, c int) float64) {
	t.Helper()
	for r := 0; r < l.Rows; r++ {
		for c := 0; c < l.Cols; c++ {
			if err := b.StoreF(l.DType, base+l.Offset(r, c), v(r, c)); err != nil {
				t.Fatal(err)
			}
		}
	}
	b.Written(base, l.Footprint())
}

// A value written at logical (r, c) must come back at (r, c) through any chain
// of layouts.
func TestCopy2DRoundTrip(t *testing.T) {
	val := func(r, c int) float64 { return float64(r*64+c) / 4 }
	for _, mid := range []LayoutKind{ND, DN, NZ, ZZ, ZN} {
		for _, dt := range []asm.DType{asm.F16, asm.F32, asm.I32} {
			gl := Layout2D{Kind: ND, Rows: 40, Cols: 48, DType: dt}
			src := NewBuffer(asm.GM, "GM @A", gl.Footprint(), dt.Size(), true)
			fillLogical(t, src, 0, gl, val)
			tl := Layout2D{Kind: mid, Rows: 32, Cols: 32, DType: dt}
			tile := NewBuffer(asm.L1, "", 4096+tl.Footprint(), 0, true)
			if err := Copy2D(tile, 4096, tl, 0, 0, src, 0, gl, 5, 7, 32, 32, RoundRint); err != nil {
				t.Fatal(err)
			}
			out := NewBuffer(asm.GM, "", gl.Footprint(), dt.Size(), true)
			if err := Copy2D(out, 0, gl, 8, 16, tile, 4096, tl, 0, 0, 32, 32, RoundRint); err != nil {
				t.Fatal(err)
			}
			for r := 0; r < 32; r++ {
				for c := 0; c < 32; c++ {
					got, _ := out.LoadF(dt, gl.Offset(8+r, 16+c))
					want := Round(dt, val(5+r, 7+c), RoundRint)
					if got != want {
						t.Fatalf("%v via %v: (%d,%d) = %v, want %v", dt, mid, r, c, got, want)
					}
				}
			}
			if out.IsPoisoned(gl.Offset(8, 16), 32*int64(dt.Size())) || !out.IsPoisoned(0, 8*48) {
				t.Errorf("%v via %v: written/poisoned ranges wrong: %v", dt, mid, out.PoisonedRanges()[:2])
			}
		}
	}
}

func TestCopy2DConvert(t *testing.T) {
	tests := []struct {
		from, to asm.DType
		mode     RoundMode
		in, want float64
	}{
		{asm.F32, asm.F16, RoundRint, 1 + 0x1p-11, 1},
		{asm.F32, asm.F16, RoundRint, 1e6, math.Inf(1)},
		{asm.F32, asm.F16, RoundCeil, 1 + 0x1p-11, 1 + 0x1p-10},
		{asm.F32, asm.BF16, RoundRint, 1 + 3*0x1p-8, 1 + 0x1p-6},
		{asm.F16, asm.F32, RoundRint, 0.1, float64(DecodeF16(EncodeF16(0.1, RoundRint)))},
		{asm.BF16, asm.F32, RoundRint, -3, -3},
		{asm.F32, asm.I8, RoundTrunc, -7.9, -7},
		{asm.F32, asm.I8, RoundRint, 1000, 127},
		{asm.I32, asm.F16, RoundRint, 2049, 2048},
		{asm.F32, asm.F32, RoundRint, 0.1, float64(float32(0.1))},
	}
	for _, tc := range tests {
		sl := Layout2D{Kind: ND, Rows: 3, Cols: 5, DType: tc.from}
		dl := Layout2D{Kind: NZ, Rows: 16, Cols: 32, DType: tc.to}
		src := NewBuffer(asm.L0C, "", sl.Footprint(), 0, false)
		fillLogical(t, src, 0, sl, func(int, int) float64 { return tc.in })
		dst := NewBuffer(asm.GM, "", dl.Footprint(), 0, true)
		if err := Copy2D(dst, 0, dl, 1, 2, src, 0, sl, 0, 0, 3, 5, tc.mode); err != nil {
			t.Fatal(err)
		}
		for r := 1; r < 4; r++ {
			for c := 2; c < 7; c++ {
				if got, _ := dst.LoadF(tc.to, dl.Offset(r, c)); got != tc.want {
					t.Errorf("%v→%v %v of %v: (%d,%d) = %v, want %v", tc.from, tc.to, tc.mode, tc.in, r, c, got, tc.want)
				}
			}
		}
	}
}

func TestCopy2DPoisonTravels(t *testing.T) {
	l := Layout2D{Kind: ND, Rows: 4, Cols: 8, DType: asm.F32}
	src := NewBuffer(asm.GM, "", l.Footprint(), 4, false)
	src.Poison(l.Offset(1, 2), 3*4) // (1,2)..(1,4)
	dl := Layout2D{Kind: ND, Rows: 4, Cols: 8, DType: asm.F16}
	dst := NewBuffer(asm.UB, "", dl.Footprint(), 0, true)
	if err := Copy2D(dst, 0, dl, 0, 0, src, 0, l, 0, 0, 4, 8, RoundRint); err != nil {
		t.Fatal(err)
	}
	got := dst.PoisonedRanges()
	want := [][2]int64{{dl.Offset(1, 2), dl.Offset(1, 5)}}
	if len(got) != 1 || got[0] != want[0] {
		t.Errorf("poisoned %v, want %v", got, want)
	}
	if v, _ := dst.LoadF(asm.F16, dl.Offset(1, 3)); !math.IsNaN(v) {
		t.Errorf("poisoned element reads %v", v)
	}
}

func TestCopy2DErrors(t *testing.T) {
	l := Layout2D{Kind: ND, Rows: 4, Cols: 8, DType: asm.F32}
	b := NewBuffer(asm.UB, "", l.Footprint(), 0, false)
	small := NewBuffer(asm.L0A, "", 16, 0, false)
	tests := []struct {
		name string
		run  func() error
	}{
		{"window outside src", func() error { return Copy2D(b, 0, l, 0, 0, b, 0, l, 2, 0, 3, 1, RoundRint) }},
		{"negative origin", func() error { return Copy2D(b, 0, l, -1, 0, b, 0, l, 0, 0, 1, 1, RoundRint) }},
		{"negative size", func() error { return Copy2D(b, 0, l, 0, 0, b, 0, l, 0, 0, -1, 1, RoundRint) }},
		{"footprint past buffer", func() error { return Copy2D(small, 0, l, 0, 0, b, 0, l, 0, 0, 1, 1, RoundRint) }},
		{"base past buffer", func() error { return Copy2D(b, 8, l, 0, 0, b, 0, l, 0, 0, 1, 1, RoundRint) }},
		{"bad dtype", func() error {
			return Copy2D(b, 0, Layout2D{Rows: 1, Cols: 1}, 0, 0, b, 0, l, 0, 0, 1, 1, RoundRint)
		}},
		{"stride too small", func() error {
			return Copy2D(b, 0, Layout2D{Kind: ND, Rows: 2, Cols: 4, Stride: 2, DType: asm.F32}, 0, 0, b, 0, l, 0, 0, 1, 1, RoundRint)
		}},
	}
	for _, tc := range tests {
		if err := tc.run(); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
}

// TestCopy2DColumnMajor: between column-major layouts (DN and ZN, the path
// that copies down the columns run by run), and between a column-major and
// a row-major one (element by element down the columns), every element lands at its logical place,
// converted, at window offsets that start inside a box and cross boxes, and
// a poisoned source element poisons exactly its destination.
func TestCopy2DColumnMajor(t *testing.T) {
	val := func(r, c int) float64 { return float64(r*64+c) / 4 }
	for _, tc := range []struct {
		from, to LayoutKind
		sdt, ddt asm.DType
	}{
		{DN, ZN, asm.F16, asm.F16},
		{DN, ZN, asm.F32, asm.F16},
		{ZN, DN, asm.F16, asm.F16},
		{DN, DN, asm.F32, asm.F32},
		{ZN, ZN, asm.F16, asm.F32},
		{DN, NZ, asm.F16, asm.F16},
		{DN, ZZ, asm.F32, asm.F16},
		{ND, ZN, asm.F16, asm.F16},
		{ZN, ND, asm.F32, asm.F32},
		{DN, NZ, asm.F32, asm.F32},
	} {
		// With no poison on either side, same-dtype copies take the
		// whole-element paths (scatterColumns).
		for _, clean := range []bool{false, true} {
			t.Run(fmt.Sprintf("%v %v to %v %v clean=%v", tc.from, tc.sdt, tc.to, tc.ddt, clean), func(t *testing.T) {
				sl := Layout2D{Kind: tc.from, Rows: 48, Cols: 40, DType: tc.sdt}
				src := NewBuffer(asm.GM, "GM @A", sl.Footprint(), tc.sdt.Size(), true)
				fillLogical(t, src, 0, sl, val)
				if !clean {
					src.Poison(sl.Offset(9, 4), int64(tc.sdt.Size()))
				}
				dl := Layout2D{Kind: tc.to, Rows: 64, Cols: 32, DType: tc.ddt}
				dst := NewBuffer(asm.L1, "", 256+dl.Footprint(), 0, !clean)
				const sr, sc, dr, dc, rows, cols = 5, 3, 11, 2, 37, 21
				if err := Copy2D(dst, 256, dl, dr, dc, src, 0, sl, sr, sc, rows, cols, RoundRint); err != nil {
					t.Fatal(err)
				}
				for r := range rows {
					for c := range cols {
						off := 256 + dl.Offset(dr+r, dc+c)
						poisoned := dst.IsPoisoned(off, int64(tc.ddt.Size()))
						if sr+r == 9 && sc+c == 4 && !clean {
							if !poisoned {
								t.Errorf("(%d, %d): the poisoned source element arrived clean", r, c)
							}
							continue
						}
						got, _ := dst.LoadF(tc.ddt, off)
						if want := Round(tc.ddt, Round(tc.sdt, val(sr+r, sc+c), RoundRint), RoundRint); got != want || poisoned {
							t.Fatalf("(%d, %d) = %v (poisoned %v), want %v", r, c, got, poisoned, want)
						}
					}
				}
				if !clean && !dst.IsPoisoned(256+dl.Offset(dr-1, dc), int64(tc.ddt.Size())) {
					t.Error("an element outside the window was written")
				}
			})
		}
	}
}

// TestCopy2DBlocks: windows of whole 16×16 blocks of 2-byte elements go
// through blockCopy's fixed-stride transposes and land where Offset says.
func TestCopy2DBlocks(t *testing.T) {
	val := func(r, c int) float64 { return float64(r*64+c) / 8 }
	for _, tc := range [][2]LayoutKind{{DN, NZ}, {NZ, ZN}, {ZN, NZ}, {DN, ZZ}, {ND, ZN}, {ZZ, DN}} {
		for _, dt := range []asm.DType{asm.F16, asm.BF16} {
			t.Run(fmt.Sprintf("%v to %v %v", tc[0], tc[1], dt), func(t *testing.T) {
				// 224×160 passes parallelCopy: two bands of rows.
				sl := Layout2D{Kind: tc[0], Rows: 256, Cols: 176, DType: dt}
				src := NewBuffer(asm.GM, "src", sl.Footprint(), 2, false)
				fillLogical(t, src, 0, sl, val)
				dl := Layout2D{Kind: tc[1], Rows: 224, Cols: 192, DType: dt}
				dst := NewBuffer(asm.L1, "dst", 64+dl.Footprint(), 2, false)
				// The register transpose (amd64) and the scalar loops.
				for _, useAsm := range []bool{haveTranspose8x8, false} {
					saved := haveTranspose8x8
					haveTranspose8x8 = useAsm
					clear(dst.Data)
					ok := blockCopy(dst, 64, dl, blkDR, blkDC, src, 0, sl, blkSR, blkSC, blkRows, blkCols, nil, false)
					haveTranspose8x8 = saved
					if !ok {
						t.Fatal("blockCopy declined a window of whole blocks")
					}
					checkBlocks(t, dst, dl, dt, val)
				}
			})
		}
	}
}

// TestCopy2DBlocks's window: source (16, 0) to destination (0, 16), 224×160.
const blkSR, blkSC, blkDR, blkDC, blkRows, blkCols = 16, 0, 0, 16, 224, 160

// checkBlocks checks TestCopy2DBlocks's destination window.
func checkBlocks(t *testing.T, dst *Buffer, dl Layout2D, dt asm.DType, val func(r, c int) float64) {
	t.Helper()
	for r := range blkRows {
		for c := range blkCols {
			got, _ := dst.LoadF(dt, 64+dl.Offset(blkDR+r, blkDC+c))
			if want := Round(dt, val(blkSR+r, blkSC+c), RoundRint); got != want {
				t.Fatalf("(%d, %d) = %v, want %v", r, c, got, want)
			}
		}
	}
}
