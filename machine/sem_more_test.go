package machine

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/memory"
)

// The pto-isa instructions of sem_more.go against references computed here
// another way: elementwise by formula per element, sorts by insertion sort,
// merges by sorting the union.

var nan = math.NaN()

func TestMoreElementwise(t *testing.T) {
	a := T(asm.F32, grid(-7, 7, 2, nan), grid(0, -8, 2.5, 1))
	b := T(asm.F32, grid(3, -3, 0, 2), grid(0, 3, -1, nan))
	// Reference by formula: tfmod = a - trunc(a/b)·b (trem and tpow:
	// sem_rem_test.go).
	fmodRef := func(x, y float64) float64 {
		if y == 0 {
			return nan
		}
		return x - math.Trunc(x/y)*y
	}
	ref := func(f func(x, y float64) float64, xs, ys [][]float64, dt asm.DType) [][]float64 {
		out := make([][]float64, len(xs))
		for r := range xs {
			for c := range xs[r] {
				out[r] = append(out[r], memory.Round(dt, f(xs[r][c], ys[r][c]), memory.RoundRint))
			}
		}
		return out
	}
	av, bv := [][]float64{{-7, 7, 2, nan}, {0, -8, 2.5, 1}}, [][]float64{{3, -3, 0, 2}, {0, 3, -1, nan}}
	for _, tc := range []vcase{
		{name: "fmod f32", op: "tfmod", dst: asm.F32, ins: []in{a, b}, want: ref(fmodRef, av, bv, asm.F32)},
		{name: "subrelu f32", op: "tsubrelu", dst: asm.F32, ins: []in{a, b}, want: [][]float64{{0, 10, 2, nan}, {0, 0, 3.5, nan}}},
		{name: "subrelu f16", op: "tsubrelu", dst: asm.F16, ins: []in{T(asm.F16, grid(5, 1)), T(asm.F16, grid(2, 9))}, want: [][]float64{{3, 0}}},
		{name: "ands i16", op: "tands", dst: asm.I16, ins: []in{T(asm.I16, grid(0x0ff0, -1)), I(0x00ff)}, want: [][]float64{{0x00f0, 0x00ff}}},
		{name: "ors i16", op: "tors", dst: asm.I16, ins: []in{T(asm.I16, grid(0x0ff0, 0)), I(0x000f)}, want: [][]float64{{0x0fff, 0x000f}}},
		{name: "xors i32", op: "txors", dst: asm.I32, ins: []in{T(asm.I32, grid(5, -1)), I(3)}, want: [][]float64{{6, -4}}},
		{name: "shls i32", op: "tshls", dst: asm.I32, ins: []in{T(asm.I32, grid(1, 3, 1<<30)), I(2)}, want: [][]float64{{4, 12, 0}}},
		{name: "shrs i16 arithmetic", op: "tshrs", dst: asm.I16, ins: []in{T(asm.I16, grid(-8, 64)), I(2)}, want: [][]float64{{-2, 16}}},
		{name: "fmods f32", op: "tfmods", dst: asm.F32, ins: []in{T(asm.F32, grid(-7, 7.5)), F(-2)}, want: [][]float64{{-1, 1.5}}},
		{name: "rowexpandexpdif", op: "trowexpandexpdif", dst: asm.F32, ins: []in{T(asm.F32, grid(1, 2), grid(3, 0)), T(asm.F32, grid(1), grid(3))},
			want: [][]float64{{1, f32(math.E)}, {1, f32(math.Exp(-3))}}},
		{name: "colexpandexpdif f16", op: "tcolexpandexpdif", dst: asm.F16, ins: []in{T(asm.F16, grid(1, 2), grid(3, 0)), T(asm.F16, grid(1, 2))},
			want: [][]float64{{1, 1}, {f16(math.Exp(2)), f16(math.Exp(-2))}}},
		{name: "expdif int", op: "trowexpandexpdif", dst: asm.I32, ins: []in{T(asm.I32, grid(1)), T(asm.I32, grid(1))}, want: [][]float64{{0}}, err: "integer"},
		{name: "rowprod f32", op: "trowprod", dst: asm.F32, ins: []in{T(asm.F32, grid(1, 2, 3), grid(-1, 0.5, 4))}, want: [][]float64{{6}, {-2}}},
		{name: "colprod i16 wraps", op: "tcolprod", dst: asm.I16, ins: []in{T(asm.I16, grid(256, 3), grid(256, -2))}, want: [][]float64{{0, -6}}},
		// f16 product rounds once: 3·(1+2^-10)·(1+2^-10) in float64, then to f16.
		{name: "rowprod f16 rounds once", op: "trowprod", dst: asm.F16, ins: []in{T(asm.F16, grid(3, 1+pow2(-10), 1+pow2(-10)))},
			want: [][]float64{{f16(3 * (1 + pow2(-10)) * (1 + pow2(-10)))}}},
	} {
		t.Run(tc.name, func(t *testing.T) { runVec(t, tc) })
	}
}

// TestMoreFused: read-modify-write ops start from a dst with values.
func TestMoreFused(t *testing.T) {
	e := pow2(-9)
	for _, tc := range []struct {
		name      string
		op        string
		dt, srcDT asm.DType
		dst, a    [][]float64
		b         in
		want      [][]float64
	}{
		// The f16 result is rounded once: (1+2^-9)² - (1+2^-8) = 2^-18, which
		// rounding the product to f16 first would make 0.
		{"fusedmuladd f16 rounds once", "tfusedmuladd", asm.F16, asm.F16, [][]float64{{1 + e, 2}}, [][]float64{{1 + e, 3}},
			T(asm.F16, grid(-(1+2*e), 1)), [][]float64{{pow2(-18), 7}}},
		{"fusedmuladdrelu", "tfusedmuladdrelu", asm.F32, asm.F32, [][]float64{{2, 2, nan}}, [][]float64{{-3, 3, 1}},
			T(asm.F32, grid(1, 1, 1)), [][]float64{{0, 7, nan}}},
		{"muladddst i32 wraps", "tmuladddst", asm.I32, asm.I32, [][]float64{{1, 5}}, [][]float64{{1 << 16, -2}},
			T(asm.I32, grid(1<<15, 3)), [][]float64{{-2147483647, -1}}},
		{"axpy f32", "taxpy", asm.F32, asm.F32, [][]float64{{1, -1}}, [][]float64{{2, 4}}, F(0.5), [][]float64{{2, 1}}},
		// f16 source into an f32 accumulator: 2^-11 survives in f32.
		{"axpy f16 into f32", "taxpy", asm.F32, asm.F16, [][]float64{{1, 0}}, [][]float64{{pow2(-10), 65504}}, F(0.5),
			[][]float64{{1 + pow2(-11), 32752}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := T(tc.dt, tc.dst...).operand(t)
			args := []Operand{d, T(tc.srcDT, tc.a...).operand(t), tc.b.operand(t)}
			if err := Execute(mkOp(t, tc.op), args, nil); err != nil {
				t.Fatal(err)
			}
			checkGrid(t, tc.op, getTile(t, d, len(tc.want), len(tc.want[0])), tc.want)
		})
	}
}

func TestMorePartial(t *testing.T) {
	big := T(asm.F32, grid(1, 5, 3), grid(4, nan, 6))
	small := T(asm.F32, grid(2, 5))
	for _, tc := range []vcase{
		{name: "partadd", op: "tpartadd", dst: asm.F32, ins: []in{big, small}, want: [][]float64{{3, 10, 3}, {4, nan, 6}}},
		{name: "partmax b larger", op: "tpartmax", dst: asm.F32, ins: []in{small, big}, want: [][]float64{{2, 5, 3}, {4, nan, 6}}},
		{name: "partmin", op: "tpartmin", dst: asm.F32, ins: []in{big, small}, want: [][]float64{{1, 5, 3}, {4, nan, 6}}},
		{name: "partmul i16", op: "tpartmul", dst: asm.I16, ins: []in{T(asm.I16, grid(300, 2)), T(asm.I16, grid(300))}, want: [][]float64{{90000 - 65536*1, 2}}},
		{name: "partadd no match", op: "tpartadd", dst: asm.F32, ins: []in{small, small}, want: [][]float64{{0, 0, 0}}, err: "neither"},
	} {
		t.Run(tc.name, func(t *testing.T) { runVec(t, tc) })
	}
	// Arg form: a wins ties (vcmp_ge, TestPartArgTies), a wins where only a
	// is valid.
	dv := T(asm.F32, grid(0, 0, 0)).operand(t)
	di := T(asm.I32, grid(0, 0, 0)).operand(t)
	args := []Operand{dv, di, T(asm.F32, grid(1, 5, 7)).operand(t), T(asm.F32, grid(2, 5)).operand(t),
		T(asm.I32, grid(10, 11, 12)).operand(t), T(asm.I32, grid(20, 21)).operand(t)}
	if err := Execute(mkOp(t, "tpartargmax"), args, nil); err != nil {
		t.Fatal(err)
	}
	checkGrid(t, "tpartargmax", getTile(t, dv, 1, 3), [][]float64{{2, 5, 7}})
	checkGrid(t, "tpartargmax idx", getTile(t, di, 1, 3), [][]float64{{20, 11, 12}})
	args[0], args[1] = T(asm.F32, grid(0, 0, 0)).operand(t), T(asm.I32, grid(0, 0, 0)).operand(t)
	if err := Execute(mkOp(t, "tpartargmin"), args, nil); err != nil {
		t.Fatal(err)
	}
	checkGrid(t, "tpartargmin idx", getTile(t, args[1], 1, 3), [][]float64{{10, 11, 12}})
}

// argRef is the index of the first max (min) of xs, skipping NaN.
func argRef(xs []float64, isMax bool) int {
	best := -1
	for i, x := range xs {
		if math.IsNaN(x) {
			continue
		}
		if best < 0 || (isMax && x > xs[best]) || (!isMax && x < xs[best]) {
			best = i
		}
	}
	return max(best, 0)
}

func TestMoreArgReduce(t *testing.T) {
	rows := [][]float64{{3, 7, 7, nan, -1}, {nan, nan, 2, 2, 0}, {-5, -5, -5, -5, -5}}
	cols := [][]float64{{1, 4}, {9, 4}, {9, -2}}
	for _, dt := range []asm.DType{asm.F32, asm.F16, asm.I32, asm.I16} {
		for _, isMax := range []bool{true, false} {
			src := rows
			if !dt.IsFloat() {
				src = [][]float64{{3, 7, 7, -9, -1}, {0, 5, 2, 2, 0}, {-5, -5, -5, -5, -5}}
			}
			name := map[bool]string{true: "trowargmax", false: "trowargmin"}[isMax]
			d := newTileOp(mkTile(asm.LocVec, asm.I32, len(src), 8, len(src), 1, lND), 0)
			if err := Execute(mkOp(t, name), []Operand{d, T(dt, src...).operand(t)}, nil); err != nil {
				t.Fatal(err)
			}
			want := make([][]float64, len(src))
			for r := range src {
				want[r] = []float64{float64(argRef(src[r], isMax))}
			}
			checkGrid(t, name+" "+dt.String(), getTile(t, d, len(src), 1), want)
			// Columns, with values.
			cname := strings.Replace(name, "row", "col", 1) + ".val"
			dv := newTileOp(mkTile(asm.LocVec, dt, 1, padCols(dt, 2), 1, 2, lND), 0)
			di := newTileOp(mkTile(asm.LocVec, asm.I32, 1, 8, 1, 2, lND), 0)
			if err := Execute(mkOp(t, cname), []Operand{dv, di, T(dt, cols...).operand(t)}, nil); err != nil {
				t.Fatal(err)
			}
			wi, wv := [][]float64{{0, 0}}, [][]float64{{0, 0}}
			for c := 0; c < 2; c++ {
				col := []float64{cols[0][c], cols[1][c], cols[2][c]}
				wi[0][c] = float64(argRef(col, isMax))
				wv[0][c] = col[argRef(col, isMax)]
			}
			checkGrid(t, cname+" "+dt.String(), getTile(t, di, 1, 2), wi)
			checkGrid(t, cname+" value "+dt.String(), getTile(t, dv, 1, 2), wv)
		}
	}
	// The other two spellings.
	for _, name := range []string{"trowargmax.val", "trowargmin.val", "tcolargmax", "tcolargmin"} {
		d := newTileOp(mkTile(asm.LocVec, asm.I32, 3, 8, 3, 2, lND), 0)
		args := []Operand{d, T(asm.F32, cols...).operand(t)}
		if strings.HasSuffix(name, ".val") {
			args = append([]Operand{newTileOp(mkTile(asm.LocVec, asm.F32, 3, 8, 3, 1, lND), 0)}, args...)
		}
		if err := Execute(mkOp(t, name), args, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := Execute(mkOp(t, "trowargmax"), []Operand{T(asm.F32, grid(0)).operand(t), T(asm.F32, grid(1, 2)).operand(t)}, nil); err == nil {
		t.Error("float index tile: no error")
	}
}

// sortRef sorts pairs descending by insertion sort, NaN first, stable.
func sortRef(ps []pair) []pair {
	out := append([]pair(nil), ps...)
	rank := func(p pair) float64 {
		if p.v != p.v {
			return math.Inf(1)
		}
		return p.v
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0; j-- {
			x, y := out[j-1], out[j]
			if rank(y) > rank(x) || (rank(y) == rank(x) && y.v != y.v && x.v == x.v) {
				out[j-1], out[j] = y, x
			} else {
				break
			}
		}
	}
	return out
}

func readPairs(t *testing.T, o Operand, row, n int) []pair {
	t.Helper()
	v := viewOf(t, o)
	slots, _ := pairSlots(v.dt)
	out := make([]pair, n)
	for k := range out {
		out[k] = getPair(&v, row, k, slots)
	}
	return out
}

func samePairs(t *testing.T, what string, got, want []pair) {
	t.Helper()
	for k := range want {
		if got[k].vb != want[k].vb || got[k].idx != want[k].idx {
			t.Fatalf("%s: pair %d = (%v, %d), want (%v, %d)", what, k, got[k].v, got[k].idx, want[k].v, want[k].idx)
		}
	}
}

func TestMoreSort32(t *testing.T) {
	g := rand.New(rand.NewPCG(1, 2))
	for _, dt := range []asm.DType{asm.F32, asm.F16} {
		slots, _ := pairSlots(dt)
		const R, C = 2, 40 // a full block and a padded tail
		vals := make([][]float64, R)
		for r := range vals {
			for c := 0; c < C; c++ {
				vals[r] = append(vals[r], float64(g.IntN(9)-4)) // many ties
			}
		}
		vals[1][3] = nan
		idx := [][]float64{make([]float64, C)}
		for c := range idx[0] {
			idx[0][c] = float64(100 + c)
		}
		src := T(dt, vals...).operand(t)
		d := newTileOp(mkTile(asm.LocVec, dt, R, 64*slots, R, 64*slots, lND), 0)
		if err := Execute(mkOp(t, "tsort32"), []Operand{d, src, T(asm.U32, idx...).operand(t)}, nil); err != nil {
			t.Fatal(err)
		}
		sv := viewOf(t, src)
		for r := 0; r < R; r++ {
			var want []pair
			for b := 0; b < 2; b++ {
				var blk []pair
				for k := 0; k < 32; k++ {
					c := b*32 + k
					if c < C {
						blk = append(blk, pair{v: vals[r][c], vb: sv.bits(r, c), idx: uint32(100 + c)})
					} else {
						blk = append(blk, pair{v: math.Inf(-1), vb: memory.Encode(dt, math.Inf(-1), memory.RoundRint)})
					}
				}
				want = append(want, sortRef(blk)...)
			}
			samePairs(t, "tsort32 "+dt.String(), readPairs(t, d, r, 64), want)
		}
		small := newTileOp(mkTile(asm.LocVec, dt, R, 32*slots, R, 32*slots, lND), 0)
		if err := Execute(mkOp(t, "tsort32"), []Operand{small, src, T(asm.U32, idx...).operand(t)}, nil); err == nil {
			t.Error("dst too small for the padded tail: no error")
		}
	}
}

// pairsTile makes a one-row tile of pairs.
func pairsTile(t *testing.T, dt asm.DType, ps []pair) Operand {
	slots, _ := pairSlots(dt)
	o := newTileOp(mkTile(asm.LocVec, dt, 1, len(ps)*slots, 1, len(ps)*slots, lND), 0)
	v := viewOf(t, o)
	for k, p := range ps {
		setPair(&v, 0, k, slots, p)
	}
	v.rows, v.cols = 1, len(ps)*slots
	v.written()
	return o
}

func sortedRun(g *rand.Rand, dt asm.DType, n int, base uint32) []pair {
	ps := make([]pair, n)
	for k := range ps {
		x := memory.Round(dt, float64(g.IntN(50))/4, memory.RoundRint)
		ps[k] = pair{v: x, vb: memory.Encode(dt, x, memory.RoundRint), idx: base + uint32(k)}
	}
	return sortRef(ps)
}

func TestMoreMrgSort(t *testing.T) {
	g := rand.New(rand.NewPCG(3, 4))
	for _, dt := range []asm.DType{asm.F32, asm.F16} {
		slots, _ := pairSlots(dt)
		// Single list: two groups of four runs of 64 elements each.
		const bl = 64
		per := bl / slots
		var all []pair
		var groups [][]pair
		for gi := 0; gi < 2; gi++ {
			var grp []pair
			for l := 0; l < 4; l++ {
				grp = append(grp, sortedRun(g, dt, per, uint32(1000*gi+100*l))...)
			}
			groups = append(groups, grp)
			all = append(all, grp...)
		}
		src := pairsTile(t, dt, all)
		d := newTileOp(mkTile(asm.LocVec, dt, 1, len(all)*slots, 1, len(all)*slots, lND), 0)
		if err := Execute(mkOp(t, "tmrgsort"), []Operand{d, src, intImm(bl)}, nil); err != nil {
			t.Fatal(err)
		}
		got := readPairs(t, d, 0, len(all))
		for gi, grp := range groups {
			samePairs(t, "tmrgsort "+dt.String(), got[gi*4*per:], sortRef(grp))
		}
		if err := Execute(mkOp(t, "tmrgsort"), []Operand{d, src, intImm(48)}, nil); err == nil {
			t.Error("blocklen 48: no error")
		}
		// Lists of different lengths.
		l0, l1, l2 := sortedRun(g, dt, 5, 0), sortedRun(g, dt, 9, 50), sortedRun(g, dt, 2, 90)
		d2 := newTileOp(mkTile(asm.LocVec, dt, 1, 16*slots, 1, 16*slots, lND), 0)
		tmp := newTileOp(mkTile(asm.LocVec, dt, 1, 16*slots, 1, 16*slots, lND), 0)
		args := []Operand{d2, tmp, pairsTile(t, dt, l0), pairsTile(t, dt, l1), pairsTile(t, dt, l2)}
		if err := Execute(mkOp(t, "tmrgsort.lists"), args, nil); err != nil {
			t.Fatal(err)
		}
		samePairs(t, "tmrgsort.lists "+dt.String(), readPairs(t, d2, 0, 16), sortRef(append(append(append([]pair(nil), l0...), l1...), l2...)))
	}
}

func TestMoreGenerate(t *testing.T) {
	desc := asm.CAttr{Key: "descending", Val: asm.CExpr{Const: true, Val: 1}}
	upper := asm.CAttr{Key: "upper", Val: asm.CExpr{Const: true, Val: 1}}
	for _, tc := range []vcase{
		{name: "ci i32", op: "tci", dst: asm.I32, ins: []in{I(5)}, want: [][]float64{{5, 6, 7, 8, 9, 10}}},
		{name: "ci descending i16", op: "tci", attrs: []asm.CAttr{desc}, dst: asm.I16, ins: []in{I(-32767)}, want: [][]float64{{-32767, -32768, 32767}}},
		{name: "ci f16", op: "tci", dst: asm.F16, ins: []in{I(2047)}, want: [][]float64{{2047, 2048, 2048, 2050}}},
		{name: "tri lower", op: "ttri", dst: asm.F32, ins: []in{I(0)}, want: [][]float64{{1, 0, 0}, {1, 1, 0}}},
		{name: "tri lower d=1", op: "ttri", dst: asm.I16, ins: []in{I(1)}, want: [][]float64{{1, 1, 0}, {1, 1, 1}}},
		{name: "tri upper d=-1", op: "ttri", attrs: []asm.CAttr{upper}, dst: asm.F16, ins: []in{I(-1)}, want: [][]float64{{1, 1, 1}, {1, 1, 1}, {0, 1, 1}}},
		{name: "fillpad zero", op: "tfillpad", dst: asm.F32, ins: []in{T(asm.F32, grid(1, 2))}, want: [][]float64{{1, 2, 0}, {0, 0, 0}}},
		{name: "fillpad max f16", op: "tfillpad", attrs: []asm.CAttr{word("pad", "max")}, dst: asm.F16, ins: []in{T(asm.F16, grid(1))}, want: [][]float64{{1, math.Inf(1)}}},
		{name: "fillpad min i16", op: "tfillpad", attrs: []asm.CAttr{word("pad", "min")}, dst: asm.I16, ins: []in{T(asm.I16, grid(1))}, want: [][]float64{{1, -32768}, {-32768, -32768}}},
		{name: "fillpad max u8", op: "tfillpad", attrs: []asm.CAttr{word("pad", "max")}, dst: asm.U8, ins: []in{T(asm.U8, grid(7))}, want: [][]float64{{7, 255}}},
		{name: "concat", op: "tconcat", dst: asm.F32, ins: []in{T(asm.F32, grid(1, 2), grid(3, 4)), T(asm.F32, grid(5), grid(6))}, want: [][]float64{{1, 2, 5}, {3, 4, 6}}},
		{name: "concat too wide", op: "tconcat", dst: asm.F32, ins: []in{T(asm.F32, grid(1, 2)), T(asm.F32, grid(5, 6))}, want: [][]float64{{0, 0, 0}}, err: "beside"},
	} {
		t.Run(tc.name, func(t *testing.T) { runVec(t, tc) })
	}
	// tgather.mask against a reference that selects by the pattern's bits.
	row := grid(0, 1, 2, 3, 4, 5, 6, 7, 8, 9)
	for _, p := range []string{"p0101", "p1010", "p0001", "p0010", "p0100", "p1000", "p1111"} {
		var want []float64
		for c, x := range row {
			if p[4-c%4] == '1' { // the pattern's bits, lowest (rightmost) first
				want = append(want, x)
			}
		}
		d := newTileOp(mkTile(asm.LocVec, asm.I32, 1, 16, 1, len(want), lND), 0)
		if err := Execute(mkOp(t, "tgather.mask", word("pattern", p)), []Operand{d, T(asm.I32, row).operand(t)}, nil); err != nil {
			t.Fatal(err)
		}
		checkGrid(t, "tgather.mask "+p, getTile(t, d, 1, len(want)), [][]float64{want})
	}
	// The index slot of f32 pairs lands bit for bit in a u32 tile.
	pairs := newTileOp(mkTile(asm.LocVec, asm.F32, 1, 8, 1, 4, lND), 0)
	pv := viewOf(t, pairs)
	setPair(&pv, 0, 0, 2, pair{vb: 0x3f800000, idx: 7})
	setPair(&pv, 0, 1, 2, pair{vb: 0x40000000, idx: 0xffffffff})
	pv.rows, pv.cols = 1, 4
	pv.written()
	ids := newTileOp(mkTile(asm.LocVec, asm.U32, 1, 8, 1, 2, lND), 0)
	if err := Execute(mkOp(t, "tgather.mask", word("pattern", "p1010")), []Operand{ids, pairs}, nil); err != nil {
		t.Fatal(err)
	}
	checkGrid(t, "tgather.mask indices", getTile(t, ids, 1, 2), [][]float64{{7, 0xffffffff}})
	if err := Execute(mkOp(t, "tgather.mask", word("pattern", "p1111")), []Operand{ids, pairs}, nil); err == nil {
		t.Error("dst narrower than the selection: no error")
	}
	// tgatherb: byte offsets into src's storage (row pitch 8 f32 = 32 bytes).
	src := T(asm.F32, grid(10, 11, 12, 13), grid(20, 21, 22, 23)).operand(t)
	d := T(asm.F32, grid(0, 0, 0)).operand(t)
	if err := Execute(mkOp(t, "tgatherb"), []Operand{d, src, T(asm.I32, grid(4, 32, 44)).operand(t)}, nil); err != nil {
		t.Fatal(err)
	}
	checkGrid(t, "tgatherb", getTile(t, d, 1, 3), [][]float64{{11, 20, 23}})
	for _, off := range []float64{2, -4, 64} {
		if err := Execute(mkOp(t, "tgatherb"), []Operand{d, src, T(asm.I32, grid(off, 0, 0)).operand(t)}, nil); err == nil {
			t.Errorf("offset %v: no error", off)
		}
	}
}

func TestMoreConvert(t *testing.T) {
	for _, tc := range []vcase{
		// Sums rounded once to f16 (2049 is a tie: even 2048), saturating at 65504, relu first.
		{name: "addreluconv f32→f16", op: "taddreluconv", dst: asm.F16, ins: []in{T(asm.F32, grid(2048, 60000, -3, nan)), T(asm.F32, grid(1, 60000, 1, 0))},
			want: [][]float64{{2048, 65504, 0, nan}}},
		{name: "addreluconv f16→i8", op: "taddreluconv", dst: asm.I8, ins: []in{T(asm.F16, grid(100, 1.25, 2, -9)), T(asm.F16, grid(100, 1.25, 0.5, 1))},
			want: [][]float64{{127, 2, 2, 0}}},
		{name: "addreluconv i16→i8", op: "taddreluconv", dst: asm.I8, ins: []in{T(asm.I16, grid(300, 5, -7)), T(asm.I16, grid(1, 6, 2))},
			want: [][]float64{{127, 11, 0}}},
	} {
		t.Run(tc.name, func(t *testing.T) { runVec(t, tc) })
	}
	// tadddeqrelu: reference by the same f32 steps written out in float32;
	// afterwards tmp holds zeros (the vector_dup of 0.0 for vmax), a the
	// f32 bits of the scaled sum and b those of its relu.
	a, b := grid(1<<30, 7, -20, 2147483647), grid(1<<30, 9, 4, 1)
	d := newTileOp(mkTile(asm.LocVec, asm.F16, 1, 16, 1, 4, lND), 0)
	tmp := newTileOp(mkTile(asm.LocVec, asm.I32, 1, 8, 1, 8, lND), 0)
	ao, bo := T(asm.I32, a).operand(t), T(asm.I32, b).operand(t)
	args := []Operand{d, ao, bo, fimm(0.1), tmp}
	if err := Execute(mkOp(t, "tadddeqrelu"), args, nil); err != nil {
		t.Fatal(err)
	}
	var want, zeros, aBits, bBits []float64
	for i := range a {
		s := int32(int64(a[i]) + int64(b[i]))
		x := float32(float32(float32(s)*float32(math.Ldexp(1, -17)))*float32(0.1)) * float32(math.Ldexp(1, 17))
		relu := float32(math.Max(float64(x), 0))
		want = append(want, math.Min(f16(float64(relu)), 65504))
		zeros = append(zeros, 0)
		aBits = append(aBits, float64(int32(math.Float32bits(x))))
		bBits = append(bBits, float64(int32(math.Float32bits(relu))))
	}
	checkGrid(t, "tadddeqrelu", getTile(t, d, 1, 4), [][]float64{want})
	checkGrid(t, "tadddeqrelu tmp", getTile(t, tmp, 1, 4), [][]float64{zeros})
	checkGrid(t, "tadddeqrelu a", getTile(t, ao, 1, 4), [][]float64{aBits})
	checkGrid(t, "tadddeqrelu b", getTile(t, bo, 1, 4), [][]float64{bBits})
	// tquant: symmetric i8 and asymmetric u8, with ties and saturation.
	for _, tc := range []struct {
		name   string
		dst    asm.DType
		x      []float64
		scale  float64
		offset []float64
		want   []float64
	}{
		{"sym", asm.I8, []float64{1.25, -1.25, 100, -0.75}, 2, nil, []float64{2, -2, 127, -2}},
		{"asym", asm.U8, []float64{1.25, -1.25, 100, 30}, 2, []float64{128}, []float64{130, 126, 255, 188}},
	} {
		dq := newTileOp(mkTile(asm.LocVec, tc.dst, 1, 32, 1, 4, lND), 0)
		src := T(asm.F32, tc.x).operand(t)
		tm := newTileOp(mkTile(asm.LocVec, asm.I32, 1, 8, 1, 4, lND), 0)
		args := []Operand{dq, src, T(asm.F32, grid(tc.scale)).operand(t), tm}
		if tc.offset != nil {
			args = append(args, T(asm.F32, tc.offset).operand(t))
		}
		if err := Execute(mkOp(t, "tquant"), args, nil); err != nil {
			t.Fatal(err)
		}
		checkGrid(t, "tquant "+tc.name, getTile(t, dq, 1, 4), [][]float64{tc.want})
	}
}

// TPRINT's text against lines written out by hand as C's printf gives them
// for pto-isa's default PrintFormat (%8.4f, %8d, %8u; nan and inf spelled
// as C spells them), over the valid region only.
func TestMorePrint(t *testing.T) {
	inf := math.Inf(1)
	tests := []struct {
		name         string
		dt           asm.DType
		rows, cols   int
		vrows, vcols int
		vals         [][]float64
		want         string // the lines after the header
		err          string
	}{
		{"f32 rounding", asm.F32, 1, 5, 1, 5, [][]float64{{-3, 0.00005, -0.00005, 2.71828, 123456.789}},
			" -3.0000   0.0000  -0.0000   2.7183 123456.7891\n", ""},
		{"f32 non-finite", asm.F32, 1, 3, 1, 3, [][]float64{{nan, inf, -inf}},
			"     nan      inf     -inf\n", ""},
		{"f16", asm.F16, 1, 16, 1, 2, [][]float64{{0.1, 65504}},
			"  0.1000 65504.0000\n", ""},
		{"i8 extremes", asm.I8, 1, 32, 1, 2, [][]float64{{-128, 127}},
			"    -128      127\n", ""},
		{"u32 above int32", asm.U32, 1, 8, 1, 2, [][]float64{{4294967295, 0}},
			"4294967295        0\n", ""},
		{"valid region", asm.I32, 2, 8, 2, 2, [][]float64{{1, -2, 99}, {3, 4, 99}},
			"       1       -2\n       3        4\n", ""},
		{"bf16 refused", asm.BF16, 1, 16, 1, 1, [][]float64{{1}}, "", "cannot print"},
	}
	names := map[asm.DType]string{asm.F32: "float32", asm.F16: "float16", asm.I8: "int8", asm.U32: "uint32", asm.I32: "int32"}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := newTileOp(mkTile(asm.LocVec, tc.dt, tc.rows, tc.cols, tc.vrows, tc.vcols, lND), 0)
			setTile(t, o, tc.vals)
			var b bytes.Buffer
			err := FprintTile(&b, &o)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := "=== [TPRINT Tile] Data Type: " + names[tc.dt] + ", TileType: Vec ===\n" +
				fmt.Sprintf("  Shape: [%d, %d], Valid Shape: [%d, %d]\n", tc.rows, tc.cols, tc.vrows, tc.vcols) + tc.want
			if got := b.String(); got != want {
				t.Errorf("got\n%s\nwant\n%s", got, want)
			}
		})
	}
}

// In a run, tprint waits for the pipes (it sees the tload's data without a
// barrier of the author's), goes to Options.Print, and prints nothing in a
// timing-only run.
func TestPrintRun(t *testing.T) {
	src := `gm A : i32 [1, 8] = expr(j * 3 - 4)
kernel k : aiv {
    tile %t : vec i32 [1, 8] @ 0x0
    tload %t, @A[0, 0]
    tprint %t
}
launch ranks=1 { run k blocks=1 }
`
	want := "=== [TPRINT Tile] Data Type: int32, TileType: Vec ===\n  Shape: [1, 8], Valid Shape: [1, 8]\n" +
		"      -4       -1        2        5        8       11       14       17\n"
	for _, timing := range []bool{false, true} {
		var b bytes.Buffer
		if _, _, err := runObj(t, assemble(t, src), Options{Print: &b, TimingOnly: timing}); err != nil {
			t.Fatal(err)
		}
		if timing && b.Len() != 0 {
			t.Errorf("timing-only run printed %q", b.String())
		}
		if !timing && b.String() != want {
			t.Errorf("got\n%s\nwant\n%s", b.String(), want)
		}
	}
}
