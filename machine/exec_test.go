package machine

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/memory"
)

// Helpers shared by the exec_*_test.go files: tiles and GM tensors built by
// hand, filled and read back by logical (r, c).

// layout names a tile's (BLayout, SLayout, Fractal).
type layout struct {
	b, s string
	f    int
}

var (
	lND   = layout{"row", "none", 0}
	lDN   = layout{"col", "none", 0}
	lNZ   = layout{"col", "row", 512}
	lZZ   = layout{"row", "row", 512}
	lZN   = layout{"row", "col", 512}
	lAcc  = layout{"col", "row", 1024}
	tileN int
)

func mkTile(loc asm.Loc, dt asm.DType, rows, cols, vr, vc int, l layout) *asm.TileInfo {
	tileN++
	return &asm.TileInfo{
		Name: fmt.Sprintf("t%d", tileN), Loc: loc, Space: loc.Space(), DType: dt,
		Rows: rows, Cols: cols, VRows: vr, VCols: vc, BLayout: l.b, SLayout: l.s, Fractal: l.f,
		Count: 1, Addr: []int64{0}, Bytes: int64(rows * cols * dt.Size()),
	}
}

// newTileOp places t at off in a fresh poisoned buffer of its location's space.
func newTileOp(t *asm.TileInfo, off int64) Operand {
	size := off + memory.TileLayout(t).Footprint() + 64
	buf := memory.NewBuffer(t.Loc.Space(), t.Loc.String(), size, t.DType.Size(), true)
	return Operand{Kind: asm.ArgTile, Buf: buf, Off: off, Tile: t}
}

// tileIn places t at off of an existing buffer.
func tileIn(t *asm.TileInfo, buf *memory.Buffer, off int64) Operand {
	return Operand{Kind: asm.ArgTile, Buf: buf, Off: off, Tile: t}
}

func viewOf(t testing.TB, o Operand) view {
	t.Helper()
	l := memory.TileLayout(o.Tile)
	v, err := newView(o.Buf, o.Off, l, 0, 0, o.Tile.Rows, o.Tile.Cols)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// setTile writes vals (row-major, rows of equal length) at logical (0, 0) of the
// tile's storage, marking them written.
func setTile(t testing.TB, o Operand, vals [][]float64) {
	t.Helper()
	v := viewOf(t, o)
	for r, row := range vals {
		for c, x := range row {
			if v.dt.IsFloat() {
				v.setF(r, c, x, memory.RoundRint)
			} else {
				v.setI(r, c, int64(x))
			}
			v.buf.Written(v.addr(r, c), v.es)
		}
	}
}

// getTile reads rows×cols logical elements.
func getTile(t testing.TB, o Operand, rows, cols int) [][]float64 {
	t.Helper()
	v := viewOf(t, o)
	out := make([][]float64, rows)
	for r := range out {
		out[r] = make([]float64, cols)
		for c := range out[r] {
			out[r][c] = v.f(r, c)
		}
	}
	return out
}

func mkTensor(name string, dt asm.DType, lay asm.Layout, shape ...int64) *asm.TensorInfo {
	t := &asm.TensorInfo{Name: name, DType: dt, Shape: shape, Layout: lay}
	t.Bytes = t.Elems() * int64(dt.Size())
	return t
}

func newGMBuf(t *asm.TensorInfo) *memory.Buffer {
	return memory.NewBuffer(asm.GM, "GM @"+t.Name, memory.TensorBytes(t), t.DType.Size(), true)
}

// gmOp is the window of t starting at idx.
func gmOp(tb testing.TB, t *asm.TensorInfo, buf *memory.Buffer, idx ...int64) Operand {
	tb.Helper()
	off, err := GMOffset(t, idx)
	if err != nil {
		tb.Fatal(err)
	}
	es := int64(t.DType.Size())
	return Operand{Kind: asm.ArgGM, Buf: buf, Off: off, GM: t, RowStride: t.Shape[len(t.Shape)-1] * es}
}

// setGM writes a 2-D tensor from a row-major generator.
func setGM(tb testing.TB, t *asm.TensorInfo, buf *memory.Buffer, f func(r, c int) float64) {
	tb.Helper()
	R, C := t.Shape[0], t.Shape[1]
	for r := int64(0); r < R; r++ {
		for c := int64(0); c < C; c++ {
			off, err := GMOffset(t, []int64{r, c})
			if err != nil {
				tb.Fatal(err)
			}
			if err := buf.StoreF(t.DType, off, f(int(r), int(c))); err != nil {
				tb.Fatal(err)
			}
			buf.Written(off, int64(t.DType.Size()))
		}
	}
}

func getGM(tb testing.TB, t *asm.TensorInfo, buf *memory.Buffer, r, c int64) float64 {
	tb.Helper()
	off, err := GMOffset(t, []int64{r, c})
	if err != nil {
		tb.Fatal(err)
	}
	v, err := buf.LoadF(t.DType, off)
	if err != nil {
		tb.Fatal(err)
	}
	return v
}

func mkOp(tb testing.TB, name string, attrs ...asm.CAttr) *asm.COp {
	tb.Helper()
	info := asm.LookupOp(name)
	if info == nil {
		tb.Fatalf("no ISA entry for %s", name)
	}
	noteExecuted(info.Op)
	return &asm.COp{Info: info, Attrs: attrs}
}

func word(k, w string) asm.CAttr { return asm.CAttr{Key: k, Word: w, IsWord: true} }

func fimm(x float64) Operand      { return Operand{Kind: asm.ArgFloat, F: x} }
func intImm(x int64) Operand      { return Operand{Kind: asm.ArgScalar, Int: x} }
func same(a, b float64) bool      { return a == b || (a != a && b != b) }
func f16(x float64) float64       { return memory.Round(asm.F16, x, memory.RoundRint) }
func f32(x float64) float64       { return float64(float32(x)) }
func bf16(x float64) float64      { return memory.Round(asm.BF16, x, memory.RoundRint) }
func pow2(e int) float64          { return math.Ldexp(1, e) }
func grid(v ...float64) []float64 { return v }

func checkGrid(t *testing.T, what string, got, want [][]float64) {
	t.Helper()
	for r := range want {
		for c := range want[r] {
			if !same(got[r][c], want[r][c]) {
				t.Errorf("%s: (%d, %d) = %v, want %v", what, r, c, got[r][c], want[r][c])
			}
		}
	}
}

func TestExecuteRejectsBadInput(t *testing.T) {
	if err := Execute(nil, nil, nil); err == nil {
		t.Error("nil op: no error")
	}
	op := mkOp(t, "tadd")
	if err := Execute(op, nil, nil); err == nil || !strings.Contains(err.Error(), "operands") {
		t.Errorf("missing operands: %v", err)
	}
	// A tile operand without a buffer is a fault, not a panic.
	ti := mkTile(asm.LocVec, asm.F32, 2, 8, 2, 8, lND)
	args := []Operand{{Kind: asm.ArgTile, Tile: ti}, {Kind: asm.ArgTile, Tile: ti}, {Kind: asm.ArgTile, Tile: ti}}
	if err := Execute(op, args, nil); err == nil {
		t.Error("nil buffer: no error")
	}
	// A tile that does not fit its buffer.
	small := memory.NewBuffer(asm.UB, "UB", 16, 4, false)
	args = []Operand{tileIn(ti, small, 0), tileIn(ti, small, 0), tileIn(ti, small, 0)}
	if err := Execute(op, args, nil); err == nil {
		t.Error("tile outside its buffer: no error")
	}
	// Sync ops have no data effect.
	if err := Execute(mkOp(t, "set_flag"), []Operand{{Kind: asm.ArgPipe}, {Kind: asm.ArgPipe}, intImm(0)}, nil); err != nil {
		t.Errorf("set_flag: %v", err)
	}
}

func TestGMOffset(t *testing.T) {
	nd := mkTensor("A", asm.F16, asm.LayoutND, 2, 3, 4)
	dn := mkTensor("B", asm.F32, asm.LayoutDN, 8, 4)
	nz := mkTensor("C", asm.F16, asm.LayoutNZ, 32, 32)
	for _, tc := range []struct {
		t    *asm.TensorInfo
		idx  []int64
		want int64
		err  string
	}{
		{nd, []int64{1, 2, 3}, (12 + 8 + 3) * 2, ""},
		{nd, []int64{0, 3, 0}, 0, "outside"},
		{nd, []int64{0, 0}, 0, "dimensions"},
		{dn, []int64{3, 2}, (2*8 + 3) * 4, ""},
		// NZ f16: 16×16 boxes, column of boxes first: (17, 18) is box (1, 1) = #3, inner (1, 2).
		{nz, []int64{17, 18}, (3*256 + 1*16 + 2) * 2, ""},
	} {
		got, err := GMOffset(tc.t, tc.idx)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s%v: err %v, want %q", tc.t.Name, tc.idx, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s%v = %d, %v; want %d", tc.t.Name, tc.idx, got, err, tc.want)
		}
	}
}

func TestFlopsBytes(t *testing.T) {
	a := newTileOp(mkTile(asm.LocLeft, asm.F16, 32, 64, 32, 64, lZZ), 0)
	b := newTileOp(mkTile(asm.LocRight, asm.F16, 64, 16, 64, 16, lZN), 0)
	c := newTileOp(mkTile(asm.LocAcc, asm.F32, 32, 16, 32, 16, lAcc), 0)
	if got := Flops(mkOp(t, "tmatmul"), []Operand{c, a, b}); got != 2*32*64*16 {
		t.Errorf("tmatmul flops %d", got)
	}
	v := newTileOp(mkTile(asm.LocVec, asm.F32, 8, 16, 4, 16, lND), 0)
	if got := Flops(mkOp(t, "tadd"), []Operand{v, v, v}); got != 64 {
		t.Errorf("tadd flops %d", got)
	}
	r := newTileOp(mkTile(asm.LocVec, asm.F32, 4, 8, 4, 1, lND), 0)
	if got := Flops(mkOp(t, "trowsum"), []Operand{r, v}); got != 64 {
		t.Errorf("trowsum flops %d", got)
	}
	gt := mkTensor("C", asm.F16, asm.LayoutND, 8, 16)
	g := gmOp(t, gt, newGMBuf(gt), 0, 0)
	if got := Bytes(mkOp(t, "tstore"), []Operand{g, v}); got != 4*16*2 {
		t.Errorf("tstore bytes %d", got)
	}
	if got := Bytes(mkOp(t, "tload"), []Operand{v, g}); got != 4*16*2 {
		t.Errorf("tload bytes %d", got)
	}
	if got := Bytes(mkOp(t, "tmov"), []Operand{a, a}); got != 32*64*2 {
		t.Errorf("tmov bytes %d", got)
	}
	if got := Bytes(mkOp(t, "tadd"), []Operand{v, v, v}); got != 0 {
		t.Errorf("tadd bytes %d", got)
	}
}
