package machine

import (
	"math"
	"strings"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/memory"
)

func seq(r, c int) float64 { return float64(r*100 + c) }

func TestLoadWindows(t *testing.T) {
	for _, tc := range []struct {
		name   string
		layout asm.Layout
		tile   layout
		loc    asm.Loc
	}{
		{"nd to vec", asm.LayoutND, lND, asm.LocVec},
		{"dn to vec", asm.LayoutDN, lND, asm.LocVec},
		{"nz to vec", asm.LayoutNZ, lND, asm.LocVec},
		{"nd to mat nz", asm.LayoutND, lNZ, asm.LocMat},
		{"nd to mat zz", asm.LayoutND, lZZ, asm.LocMat},
		{"nd to dn tile", asm.LayoutND, lDN, asm.LocVec},
		{"nz to mat nz", asm.LayoutNZ, lNZ, asm.LocMat},
	} {
		t.Run(tc.name, func(t *testing.T) {
			A := mkTensor("A", asm.F32, tc.layout, 48, 40)
			gbuf := newGMBuf(A)
			setGM(t, A, gbuf, seq)
			// A 32×16 f32 tile (two 16×8 boxes per column band) with valid [20, 13].
			tile := newTileOp(mkTile(tc.loc, asm.F32, 32, 16, 20, 13, tc.tile), 128)
			if err := Execute(mkOp(t, "tload"), []Operand{tile, gmOp(t, A, gbuf, 17, 9)}, nil); err != nil {
				t.Fatal(err)
			}
			got := getTile(t, tile, 20, 13)
			for r := range got {
				for c := range got[r] {
					if got[r][c] != seq(17+r, 9+c) {
						t.Fatalf("(%d, %d) = %v, want %v", r, c, got[r][c], seq(17+r, 9+c))
					}
				}
			}
			v := viewOf(t, tile)
			if !tile.Buf.IsPoisoned(v.addr(20, 0), 4) || !tile.Buf.IsPoisoned(v.addr(0, 13), 4) {
				t.Error("load wrote outside the valid region")
			}
			// And back out to a fresh ND tensor, at an offset.
			C := mkTensor("C", asm.F32, asm.LayoutND, 24, 16)
			cbuf := newGMBuf(C)
			if err := Execute(mkOp(t, "tstore"), []Operand{gmOp(t, C, cbuf, 2, 1), tile}, nil); err != nil {
				t.Fatal(err)
			}
			if got := getGM(t, C, cbuf, 2+19, 1+12); got != seq(17+19, 9+12) {
				t.Errorf("stored corner %v", got)
			}
			if off, _ := GMOffset(C, []int64{2, 0}); !cbuf.IsPoisoned(off, 4) {
				t.Error("store wrote left of its window")
			}
		})
	}
}

// An NZ mat tile stores 16×8 f32 boxes column band by column band.
func TestNZTileAddressing(t *testing.T) {
	tile := newTileOp(mkTile(asm.LocMat, asm.F32, 32, 16, 32, 16, lNZ), 0)
	v := viewOf(t, tile)
	for _, tc := range []struct{ r, c, want int }{
		{0, 0, 0}, {0, 7, 7}, {1, 0, 8}, {16, 0, 128}, {0, 8, 256}, {17, 9, 256 + 128 + 8 + 1},
	} {
		if got := v.addr(tc.r, tc.c); got != int64(tc.want*4) {
			t.Errorf("(%d, %d) at byte %d, want %d", tc.r, tc.c, got, tc.want*4)
		}
	}
}

func TestTransferFaults(t *testing.T) {
	A := mkTensor("A", asm.F16, asm.LayoutND, 8, 32)
	gbuf := newGMBuf(A)
	vec := newTileOp(mkTile(asm.LocVec, asm.F16, 4, 16, 4, 16, lND), 0)
	f32t := newTileOp(mkTile(asm.LocVec, asm.F32, 4, 16, 4, 16, lND), 0)
	bad := gmOp(t, A, gbuf, 0, 0)
	bad.RowStride = 128
	for _, tc := range []struct {
		name string
		op   string
		args []Operand
		err  string
	}{
		{"rows past the end", "tload", []Operand{vec, gmOp(t, A, gbuf, 6, 0)}, "outside"},
		{"cols past the end", "tload", []Operand{vec, gmOp(t, A, gbuf, 0, 20)}, "outside"},
		{"dtype", "tload", []Operand{f32t, gmOp(t, A, gbuf, 0, 0)}, "does not convert"},
		{"vec store converts", "tstore", []Operand{gmOp(t, A, gbuf, 0, 0), f32t}, "cannot convert"},
		{"row stride", "tload", []Operand{vec, bad}, "row stride"},
		{"not a window", "tload", []Operand{vec, vec}, "GM"},
		{"misaligned", "tload", []Operand{vec, {Kind: asm.ArgGM, Buf: gbuf, GM: A, Off: 3}}, "element offset"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Execute(mkOp(t, tc.op), tc.args, nil)
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("error %v, want %q", err, tc.err)
			}
		})
	}
}

// The fixpipe rounds the f32 accumulator to the GM dtype on the way out.
func TestStoreAccRounds(t *testing.T) {
	acc := newTileOp(mkTile(asm.LocAcc, asm.F32, 16, 16, 2, 3, lAcc), 0)
	tie := 1 + pow2(-11)
	setTile(t, acc, [][]float64{{tie, 1 + 3*pow2(-11), 70000}, {-tie, 1e-8, 0.1}})
	for _, tc := range []struct {
		dt   asm.DType
		want [][]float64
	}{
		{asm.F16, [][]float64{{1, 1 + 2*pow2(-10), math.Inf(1)}, {-1, f16(1e-8), f16(0.1)}}},
		{asm.BF16, [][]float64{{1, 1, bf16(70000)}, {-1, bf16(f32(1e-8)), bf16(f32(0.1))}}},
		{asm.F32, [][]float64{{tie, 1 + 3*pow2(-11), 70000}, {-tie, f32(1e-8), f32(0.1)}}},
	} {
		C := mkTensor("C", tc.dt, asm.LayoutND, 4, 16)
		cbuf := newGMBuf(C)
		if err := Execute(mkOp(t, "tstore"), []Operand{gmOp(t, C, cbuf, 1, 2), acc}, nil); err != nil {
			t.Fatal(err)
		}
		for r := range tc.want {
			for c := range tc.want[r] {
				if got := getGM(t, C, cbuf, int64(1+r), int64(2+c)); !same(got, tc.want[r][c]) {
					t.Errorf("%v (%d, %d) = %v, want %v", tc.dt, r, c, got, tc.want[r][c])
				}
			}
		}
	}
}

func TestStoreAtomicAdd(t *testing.T) {
	for _, tc := range []struct {
		name       string
		gm, tile   asm.DType
		loc        asm.Loc
		old, delta float64
		want       float64
	}{
		{"f32", asm.F32, asm.F32, asm.LocVec, 1.5, 2.25, 3.75},
		{"f16 tie", asm.F16, asm.F16, asm.LocVec, 2048, 1, 2048},
		{"f16 from acc", asm.F16, asm.F32, asm.LocAcc, 1, pow2(-11), 1},
		{"i32 wraps", asm.I32, asm.I32, asm.LocVec, math.MaxInt32, 1, math.MinInt32},
	} {
		t.Run(tc.name, func(t *testing.T) {
			G := mkTensor("G", tc.gm, asm.LayoutND, 2, 16)
			gbuf := newGMBuf(G)
			setGM(t, G, gbuf, func(r, c int) float64 { return tc.old })
			l := lND
			if tc.loc == asm.LocAcc {
				l = lAcc
			}
			tile := newTileOp(mkTile(tc.loc, tc.tile, 16, 16, 1, 2, l), 0)
			setTile(t, tile, [][]float64{{tc.delta, tc.delta}})
			op := mkOp(t, "tstore", word("atomic", "add"))
			if err := Execute(op, []Operand{gmOp(t, G, gbuf, 1, 3), tile}, nil); err != nil {
				t.Fatal(err)
			}
			if got := getGM(t, G, gbuf, 1, 4); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
			if got := getGM(t, G, gbuf, 1, 5); got != tc.old {
				t.Errorf("neighbour changed to %v", got)
			}
			// Twice accumulates twice.
			if err := Execute(op, []Operand{gmOp(t, G, gbuf, 1, 3), tile}, nil); err != nil {
				t.Fatal(err)
			}
			if tc.name == "f32" {
				if got := getGM(t, G, gbuf, 1, 3); got != 6 {
					t.Errorf("second add: %v", got)
				}
			}
		})
	}
}

func TestStorePtoIsaOrder(t *testing.T) {
	C := mkTensor("C", asm.F32, asm.LayoutND, 2, 8)
	cbuf := newGMBuf(C)
	tile := newTileOp(mkTile(asm.LocVec, asm.F32, 1, 8, 1, 8, lND), 0)
	setTile(t, tile, [][]float64{{1, 2, 3, 4, 5, 6, 7, 8}})
	if err := Execute(mkOp(t, "tstore"), []Operand{tile, gmOp(t, C, cbuf, 1, 0)}, nil); err != nil {
		t.Fatal(err)
	}
	if got := getGM(t, C, cbuf, 1, 7); got != 8 {
		t.Errorf("got %v", got)
	}
}

func TestPoisonMovesWithData(t *testing.T) {
	A := mkTensor("A", asm.F32, asm.LayoutND, 4, 8)
	gbuf := newGMBuf(A)
	setGM(t, A, gbuf, seq)
	off, _ := GMOffset(A, []int64{1, 2})
	gbuf.Poison(off, 4)
	tile := newTileOp(mkTile(asm.LocVec, asm.F32, 4, 8, 4, 8, lND), 0)
	if err := Execute(mkOp(t, "tallgather"), []Operand{tile, gmOp(t, A, gbuf, 0, 0)}, nil); err != nil {
		t.Fatal(err)
	}
	v := viewOf(t, tile)
	if !tile.Buf.IsPoisoned(v.addr(1, 2), 4) || tile.Buf.IsPoisoned(v.addr(1, 1), 4) || tile.Buf.IsPoisoned(v.addr(3, 7), 4) {
		t.Errorf("poison after load: %v", tile.Buf.PoisonedRanges())
	}
	if got := getTile(t, tile, 2, 3)[1][2]; !math.IsNaN(got) {
		t.Errorf("poisoned element reads %v, want NaN", got)
	}
	// tprefetch has no data effect.
	other := newTileOp(mkTile(asm.LocVec, asm.F32, 4, 8, 4, 8, lND), 0)
	if err := Execute(mkOp(t, "tprefetch"), []Operand{other, gmOp(t, A, gbuf, 0, 0)}, nil); err != nil {
		t.Fatal(err)
	}
	if len(other.Buf.PoisonedRanges()) != 1 || other.Buf.PoisonedRanges()[0] != [2]int64{0, other.Buf.Size()} {
		t.Errorf("tprefetch wrote: %v", other.Buf.PoisonedRanges())
	}
}

func TestMoves(t *testing.T) {
	// mat (NZ, f16) → left (ZZ) keeps logical positions.
	mat := newTileOp(mkTile(asm.LocMat, asm.F16, 32, 32, 32, 32, lNZ), 0)
	vals := make([][]float64, 32)
	for r := range vals {
		vals[r] = make([]float64, 32)
		for c := range vals[r] {
			vals[r][c] = float64(r*32 + c)
		}
	}
	setTile(t, mat, vals)
	left := newTileOp(mkTile(asm.LocLeft, asm.F16, 32, 32, 32, 32, lZZ), 0)
	if err := Execute(mkOp(t, "tmov"), []Operand{left, mat}, nil); err != nil {
		t.Fatal(err)
	}
	checkGrid(t, "m2l", getTile(t, left, 32, 32), vals)
	// The fixed-route spellings move the same data.
	for _, v := range []struct {
		op  string
		loc asm.Loc
		l   layout
	}{{"tmov.m2l", asm.LocLeft, lZZ}, {"tmov.m2r", asm.LocRight, lZN}} {
		d := newTileOp(mkTile(v.loc, asm.F16, 32, 32, 32, 32, v.l), 0)
		if err := Execute(mkOp(t, v.op), []Operand{d, mat}, nil); err != nil {
			t.Fatal(err)
		}
		checkGrid(t, v.op, getTile(t, d, 32, 32), vals)
	}
	for _, v := range []struct {
		op  string
		loc asm.Loc
	}{{"tmov.m2b", asm.LocBias}, {"tmov.m2s", asm.LocScaling}} {
		row := newTileOp(mkTile(asm.LocMat, asm.F16, 1, 32, 1, 32, lND), 0)
		setTile(t, row, vals[5:6])
		d := newTileOp(mkTile(v.loc, asm.F16, 1, 32, 1, 32, lND), 0)
		if err := Execute(mkOp(t, v.op), []Operand{d, row}, nil); err != nil {
			t.Fatal(err)
		}
		checkGrid(t, v.op, getTile(t, d, 1, 32), vals[5:6])
	}

	// textract mat → right: the dst-shaped window at (16, 8).
	right := newTileOp(mkTile(asm.LocRight, asm.F16, 16, 16, 16, 16, lZN), 0)
	if err := Execute(mkOp(t, "textract"), []Operand{right, mat, intImm(16), intImm(8)}, nil); err != nil {
		t.Fatal(err)
	}
	got := getTile(t, right, 16, 16)
	if got[0][0] != vals[16][8] || got[15][15] != vals[31][23] {
		t.Errorf("textract: (0,0)=%v (15,15)=%v", got[0][0], got[15][15])
	}
	if err := Execute(mkOp(t, "textract"), []Operand{right, mat, intImm(24), intImm(0)}, nil); err == nil {
		t.Error("textract past the source: no error")
	}

	// acc (f32) → mat (f16) through the fixpipe rounds.
	acc := newTileOp(mkTile(asm.LocAcc, asm.F32, 16, 16, 16, 16, lAcc), 0)
	av := make([][]float64, 16)
	for r := range av {
		av[r] = make([]float64, 16)
		for c := range av[r] {
			av[r][c] = 1 + float64(r*16+c)*pow2(-12)
		}
	}
	setTile(t, acc, av)
	m16 := newTileOp(mkTile(asm.LocMat, asm.F16, 16, 16, 16, 16, lNZ), 0)
	if err := Execute(mkOp(t, "tmov.a2m"), []Operand{m16, acc}, nil); err != nil {
		t.Fatal(err)
	}
	want := make([][]float64, 16)
	for r := range want {
		want[r] = make([]float64, 16)
		for c := range want[r] {
			want[r][c] = f16(av[r][c])
		}
	}
	checkGrid(t, "a2m", getTile(t, m16, 16, 16), want)

	// Non-fixpipe moves do not convert; a smaller source is a shape fault.
	v32 := newTileOp(mkTile(asm.LocVec, asm.F32, 2, 8, 2, 8, lND), 0)
	v16 := newTileOp(mkTile(asm.LocVec, asm.F16, 2, 16, 2, 16, lND), 0)
	if err := Execute(mkOp(t, "tmov.v2v"), []Operand{v16, v32}, nil); err == nil || !strings.Contains(err.Error(), "convert") {
		t.Errorf("v2v f32→f16: %v", err)
	}
}

// TestVecMoveValidRegions: a vec→vec tmov copies the smaller of the two
// valid regions (TMovToVec, include/pto/npu/a2a3/TMov.hpp:114-124 at
// 3186c381); a destination whose valid width is the whole row gets whole
// rows, the source's bytes past its valid columns included (poison, if
// never written). The machine faulted when the source's region was smaller.
func TestVecMoveValidRegions(t *testing.T) {
	for _, tc := range []struct {
		name           string
		dvr, dvc       int // the destination's valid region
		svr, svc       int // the source's
		want           [][]float64
		poisonR, poisC int // a destination element that must be poisoned after, or -1
	}{
		{"fewer source rows", 2, 16, 1, 16, [][]float64{{0, 1, 2, 3}, {-1, -1, -1, -1}}, -1, -1},
		{"narrower source, full-width destination", 2, 16, 2, 3, [][]float64{{0, 1, 2}, {16, 17, 18}}, 0, 5},
		{"narrower destination", 2, 3, 1, 16, [][]float64{{0, 1, 2}, {-1, -1, -1}}, -1, -1},
		{"same regions", 2, 16, 2, 16, [][]float64{{0, 1, 2, 3}, {16, 17, 18, 19}}, -1, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := newTileOp(mkTile(asm.LocVec, asm.F32, 2, 16, tc.svr, tc.svc, lND), 0)
			dst := newTileOp(mkTile(asm.LocVec, asm.F32, 2, 16, tc.dvr, tc.dvc, lND), 512)
			sv, dv := make([][]float64, tc.svr), make([][]float64, tc.dvr)
			for r := range sv {
				sv[r] = make([]float64, tc.svc)
				for c := range sv[r] {
					sv[r][c] = float64(r*16 + c)
				}
			}
			for r := range dv {
				dv[r] = make([]float64, tc.dvc)
				for c := range dv[r] {
					dv[r][c] = -1
				}
			}
			setTile(t, src, sv)
			setTile(t, dst, dv)
			if err := Execute(mkOp(t, "tmov"), []Operand{dst, src}, nil); err != nil {
				t.Fatal(err)
			}
			got := getTile(t, dst, len(tc.want), len(tc.want[0]))
			checkGrid(t, "tmov", got, tc.want)
			if tc.poisonR >= 0 {
				v := viewOf(t, dst)
				if !dst.Buf.IsPoisoned(v.addr(tc.poisonR, tc.poisC), v.es) {
					t.Errorf("dst (%d, %d): not poisoned; the source's never-written column was copied as data", tc.poisonR, tc.poisC)
				}
			}
		})
	}
}

func TestInsert(t *testing.T) {
	dst := newTileOp(mkTile(asm.LocVec, asm.F16, 4, 32, 4, 32, lND), 0)
	src := newTileOp(mkTile(asm.LocVec, asm.F16, 2, 16, 2, 3, lND), 0)
	setTile(t, src, [][]float64{{1, 2, 3}, {4, 5, 6}})
	if err := Execute(mkOp(t, "tinsert"), []Operand{dst, src, intImm(1), intImm(8)}, nil); err != nil {
		t.Fatal(err)
	}
	got := getTile(t, dst, 4, 32)
	if got[1][8] != 1 || got[2][10] != 6 {
		t.Errorf("tinsert: (1,8)=%v (2,10)=%v", got[1][8], got[2][10])
	}
	v := viewOf(t, dst)
	if !dst.Buf.IsPoisoned(v.addr(1, 7), 2) || !dst.Buf.IsPoisoned(v.addr(1, 11), 2) || !dst.Buf.IsPoisoned(v.addr(0, 8), 2) {
		t.Error("tinsert wrote outside its window")
	}
	for _, at := range [][2]int64{{3, 0}, {0, 30}, {-1, 0}} {
		if err := Execute(mkOp(t, "tinsert"), []Operand{dst, src, intImm(at[0]), intImm(at[1])}, nil); err == nil {
			t.Errorf("tinsert at %v: no error", at)
		}
	}
}

// The engine's composite steps call LoadTile/StoreTile directly.
func TestLoadStoreTileDirect(t *testing.T) {
	W := mkTensor("W", asm.BF16, asm.LayoutND, 2, 16)
	wbuf := newGMBuf(W)
	setGM(t, W, wbuf, func(r, c int) float64 { return float64(r - c) })
	st := newTileOp(mkTile(asm.LocVec, asm.BF16, 2, 16, 2, 16, lND), 0)
	src := gmOp(t, W, wbuf, 0, 0)
	if err := LoadTile(&st, &src); err != nil {
		t.Fatal(err)
	}
	D := mkTensor("D", asm.BF16, asm.LayoutND, 2, 16)
	dbuf := newGMBuf(D)
	dst := gmOp(t, D, dbuf, 0, 0)
	if err := StoreTile(&dst, &st, false); err != nil {
		t.Fatal(err)
	}
	if !memoryEqual(wbuf, dbuf) {
		t.Error("round trip differs")
	}
}

func memoryEqual(a, b *memory.Buffer) bool { return string(a.Data) == string(b.Data) }

// The view's shift-based fractal addressing must agree with memory's layout
// for every element, including partial boxes and sub-windows.
func TestViewAddressingMatchesLayout(t *testing.T) {
	for _, dt := range []asm.DType{asm.F16, asm.F32, asm.I8, asm.BF16} {
		for _, l := range []layout{lND, lDN, lNZ, lZZ, lZN, lAcc} {
			ti := mkTile(asm.LocMat, dt, 40, 72, 40, 72, l)
			o := newTileOp(ti, 96)
			v := viewOf(t, o)
			ml := memory.TileLayout(ti)
			sub, err := v.sub(3, 5, 30, 60)
			if err != nil {
				t.Fatal(err)
			}
			for r := 0; r < 30; r++ {
				for c := 0; c < 60; {
					if got, want := sub.addr(r, c), 96+ml.Offset(r+3, c+5); got != want {
						t.Fatalf("%v %v (%d, %d): %d, want %d", dt, l, r, c, got, want)
					}
					n := sub.run(c)
					for k := 1; k < n; k++ {
						if sub.addr(r, c+k) != sub.addr(r, c)+int64(k)*sub.es {
							t.Fatalf("%v %v: run of %d from (%d, %d) is not contiguous", dt, l, n, r, c)
						}
					}
					c += max(n, 1)
				}
			}
		}
	}
}
