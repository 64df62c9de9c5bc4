package machine

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
)

// The a2a3 paths of tpow, trem and trems (sem_rem.go) and the fixes to
// tpartargmax/min, tpairreducesum, tdequant and tadddeqrelu, against
// references written here with Go's float32 and int32 arithmetic (each
// step an explicit float32 conversion, so nothing is fused) and against
// values worked out by hand for the edge cases.

// sat32 is a saturating f32 → i32 with NaN → 0, rounded by round.
func sat32(x float32, round func(float64) float64) int32 {
	switch f := round(float64(x)); {
	case f != f:
		return 0
	case f >= 1<<31:
		return math.MaxInt32
	case f < -(1 << 31):
		return math.MinInt32
	default:
		return int32(f)
	}
}

// remRefF32 is TRem.hpp's RemF32Instr in float32.
func remRefF32(a, b float32) float32 {
	q := float32(math.Floor(float64(float32(a / b))))
	r := a - float32(q*b)
	if float32(r*b) < 0 {
		return float32(r + b)
	}
	return r
}

// remRefI32 is RemInt32Instr (scalar: RemSInt32Instr) in int32 and
// float32; it returns dst and what a and b hold afterwards (b as raw bits).
func remRefI32(a, b int32, scalar bool) (d, aAfter int32, bAfter uint32) {
	af, bf := float32(a), float32(b)
	q := sat32(float32(af/bf), math.Floor)
	a2 := sat32(af, math.RoundToEven)
	b2 := b
	if !scalar {
		b2 = sat32(bf, math.RoundToEven)
	}
	r := a2 - q*b2 // int32 wraps
	rf := float32(r)
	x := rf
	if float32(rf*bf) < 0 {
		x = float32(rf + bf)
	}
	return sat32(x, math.Trunc), a2, math.Float32bits(bf)
}

func TestRemDevice(t *testing.T) {
	rng := rand.New(rand.NewPCG(24, 1))
	type remCase struct {
		name  string
		op    string
		dt    asm.DType
		a, b  []float64 // b: one value for trems
		wantD []float64 // hand-worked; nil: the reference alone
		wantA []float64 // a afterwards (i32), hand-worked
	}
	var bigA, bigB []float64
	for range 24 {
		bigA = append(bigA, float64(int32(rng.Uint32())))
		bigB = append(bigB, float64(int32(rng.Uint32())>>uint(rng.IntN(31))))
	}
	cases := []remCase{
		// Above 2^24 a is rounded through f32: 16777217 → 16777216, so
		// the device gives 0 where a % 2 is 1, and 16777219 → 16777220
		// gives 0 where a % 10 is 9. MinInt32 / -1 saturates the
		// quotient: -1, not 0. By zero: a (rounded) back.
		{name: "i32 above 2^24", op: "trem", dt: asm.I32,
			a:     grid(16777217, 16777219, -7, 7, math.MinInt32, 2147483647, 5, -16777217),
			b:     grid(2, 10, 3, -3, -1, 2, 0, 3),
			wantD: grid(0, 0, 2, -2, -1, 1, 5, 2), wantA: grid(16777216, 16777220, -7, 7, math.MinInt32, 2147483647, 5, -16777216)},
		{name: "i32 random", op: "trem", dt: asm.I32, a: bigA, b: bigB},
		{name: "f32", op: "trem", dt: asm.F32, a: grid(-7, 7, 5.5, 1, nan, 1e30, math.Copysign(0, -1), 3), b: grid(3, -3, 2, 0, 2, 3, 2, math.Inf(1)),
			wantD: []float64{2, -2, 1.5, nan, nan, float64(remRefF32(1e30, 3)), 0, nan}},
		{name: "rems i32", op: "trems", dt: asm.I32, a: grid(16777217, -7, 7, 100000007), b: grid(2),
			wantD: grid(0, 1, 1, 0), wantA: grid(16777216, -7, 7, 100000008)},
		{name: "rems i32 negative", op: "trems", dt: asm.I32, a: grid(-7, 7, 0), b: grid(-3), wantD: grid(-1, -2, 0)},
		{name: "rems f32", op: "trems", dt: asm.F32, a: grid(-7, 7.5, nan, 0.5), b: grid(-2), wantD: []float64{-1, -0.5, nan, -1.5}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n := len(tc.a)
			scalar := tc.op == "trems"
			d := newTileOp(mkTile(asm.LocVec, tc.dt, 1, padCols(tc.dt, n), 1, n, lND), 0)
			a := T(tc.dt, tc.a).operand(t)
			var b Operand
			if scalar {
				b = fimm(tc.b[0])
			} else {
				b = T(tc.dt, tc.b).operand(t)
			}
			// Room for TRem's 256-byte mask at dst's row stride.
			tmp := newTileOp(mkTile(asm.LocVec, tc.dt, 1, padCols(tc.dt, n)+64, 1, padCols(tc.dt, n)+64, lND), 0)
			if err := Execute(mkOp(t, tc.op), []Operand{d, a, b, tmp}, nil); err != nil {
				t.Fatal(err)
			}
			var wantD, wantA, wantB []float64
			for i := range n {
				bi := tc.b[min(i, len(tc.b)-1)]
				if tc.dt == asm.F32 {
					wantD = append(wantD, float64(remRefF32(float32(tc.a[i]), float32(bi))))
					continue
				}
				dv, av, bv := remRefI32(int32(tc.a[i]), int32(bi), scalar)
				wantD, wantA, wantB = append(wantD, float64(dv)), append(wantA, float64(av)), append(wantB, float64(int32(bv)))
			}
			checkGrid(t, tc.op+" ref", getTile(t, d, 1, n), [][]float64{wantD})
			if tc.wantD != nil {
				checkGrid(t, tc.op+" by hand", getTile(t, d, 1, n), [][]float64{tc.wantD})
			}
			if tc.dt != asm.I32 {
				checkGrid(t, tc.op+" a untouched", getTile(t, a, 1, n), [][]float64{roundF32(tc.a)})
				return
			}
			// The in-place conversions: a rounded through f32, b left as
			// f32 bits (trem only).
			checkGrid(t, tc.op+" a after", getTile(t, a, 1, n), [][]float64{wantA})
			if tc.wantA != nil {
				checkGrid(t, tc.op+" a after by hand", getTile(t, a, 1, n), [][]float64{tc.wantA})
			}
			if !scalar {
				checkGrid(t, tc.op+" b after", getTile(t, b, 1, n), [][]float64{wantB})
			}
		})
	}
	// The tmp trem needs: its mask at dst's row stride, 256 bytes.
	d := newTileOp(mkTile(asm.LocVec, asm.F32, 1, 8, 1, 8, lND), 0)
	small := newTileOp(mkTile(asm.LocVec, asm.F32, 1, 16, 1, 16, lND), 0)
	x := T(asm.F32, grid(1, 2, 3, 4, 5, 6, 7, 8))
	if err := Execute(mkOp(t, "trem"), []Operand{d, x.operand(t), x.operand(t), small}, nil); err == nil {
		t.Error("trem with a tmp too small for its mask: no error")
	}
	if err := Execute(mkOp(t, "trem"), []Operand{d, x.operand(t), x.operand(t)}, nil); err == nil {
		t.Error("trem without tmp: no error")
	}
	h := T(asm.F16, grid(1, 2))
	if err := Execute(mkOp(t, "trem"), []Operand{newTileOp(mkTile(asm.LocVec, asm.F16, 1, 16, 1, 2, lND), 0), h.operand(t), h.operand(t), small}, nil); err == nil {
		t.Error("trem f16: no error (a2a3 TREM is f32 and i32 only)")
	}
}

// ulps is how many f32 steps apart x and y are (0 for two NaNs).
func ulps(x, y float64) float64 {
	if x != x || y != y {
		if x != x && y != y {
			return 0
		}
		return math.Inf(1)
	}
	if x == y {
		return 0
	}
	return math.Abs(float64(int64(math.Float32bits(float32(x))) - int64(math.Float32bits(float32(y)))))
}

func TestPowDevice(t *testing.T) {
	inf := math.Inf(1)
	// f32: math.Pow's magnitude with TPow.hpp's fix-ups, worked out per
	// row; the vln/vmul/vexp chain may be a few ulps off pow.
	for _, tc := range []struct {
		name       string
		a, b       float64
		want, wTmp float64
	}{
		{"odd integer exponent", -2, 3, -8, 8},
		{"even integer exponent", -2, 2, 4, 4},
		{"negative base fraction", -8, 1.0 / 3, nan, 2},
		{"zero exponent of NaN", nan, 0, 1, nan},
		{"one to NaN is NaN", 1, nan, nan, nan},
		{"zero base negative", 0, -1, inf, inf},
		{"zero base positive", 0, 2.5, 0, 0},
		{"minus one to inf", -1, inf, 1, nan},
		{"fraction", 4, 0.5, 2, 2},
		{"negative exponent", -0.5, 3, -0.125, 0.125},
		{"large even integer", -2, 1 << 25, inf, inf},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, form := range []string{"tpow", "tpows"} {
				d := newTileOp(mkTile(asm.LocVec, asm.F32, 1, 8, 1, 1, lND), 0)
				tmp := newTileOp(mkTile(asm.LocVec, asm.F32, 1, 8, 1, 1, lND), 0)
				b := T(asm.F32, grid(tc.b)).operand(t)
				if form == "tpows" {
					b = fimm(tc.b)
				}
				if err := Execute(mkOp(t, form), []Operand{d, T(asm.F32, grid(tc.a)).operand(t), b, tmp}, nil); err != nil {
					t.Fatal(err)
				}
				if got := getTile(t, d, 1, 1)[0][0]; ulps(got, tc.want) > 4 {
					t.Errorf("%s(%v, %v) = %v, want %v", form, tc.a, tc.b, got, tc.want)
				}
				if got := getTile(t, tmp, 1, 1)[0][0]; ulps(got, tc.wTmp) > 4 {
					t.Errorf("%s(%v, %v) tmp = %v, want %v", form, tc.a, tc.b, got, tc.wTmp)
				}
			}
		})
	}
	// Integers: TPowICore, in C int and stored into the dtype.
	for _, tc := range []vcase{
		{name: "i32", op: "tpow", dst: asm.I32, ins: []in{T(asm.I32, grid(3, 2, -1, 2, 7, 0, -3)), T(asm.I32, grid(4, 31, -3, -1, 0, -2, 3)), T(asm.I32, grid(0))},
			want: [][]float64{{81, -2147483648, -1, 0, 1, 0, -27}}},
		// u32: an exponent above 2^31 is negative as int: 0 (3^(2^31+1)
		// mod 2^32 is not); 0xffffffff is -1.
		{name: "u32", op: "tpow", dst: asm.U32, ins: []in{T(asm.U32, grid(3, 0xffffffff, 3)), T(asm.U32, grid(0x80000001, 3, 2)), T(asm.U32, grid(0))},
			want: [][]float64{{0, 0xffffffff, 9}}},
		{name: "i8 wraps", op: "tpow", dst: asm.I8, ins: []in{T(asm.I8, grid(3, -2)), T(asm.I8, grid(5, 7)), T(asm.I8, grid(0))}, want: [][]float64{{-13, -128}}},
		{name: "pows i16", op: "tpows", dst: asm.I16, ins: []in{T(asm.I16, grid(2, -3, 300)), I(3), T(asm.I16, grid(0))}, want: [][]float64{{8, -27, -832}}},
		{name: "f16 has no a2a3 path", op: "tpow", dst: asm.F16, ins: []in{T(asm.F16, grid(3)), T(asm.F16, grid(2)), T(asm.F16, grid(0))}, want: [][]float64{{9}}, err: "no f16 path"},
	} {
		t.Run(tc.name, func(t *testing.T) { runVec(t, tc) })
	}
}

// TestPartArgTies: vcmp_ge (vcmp_le) then vsel of a: a on a tie, b where
// either is NaN; per value dtype and index dtype.
func TestPartArgTies(t *testing.T) {
	av, bv := grid(1, 5, nan, 2, 3, math.Copysign(0, -1)), grid(1, 3, 4, nan, 7, 0)
	for _, dts := range [][2]asm.DType{{asm.F32, asm.I32}, {asm.F16, asm.I16}, {asm.F16, asm.I32}, {asm.F32, asm.U32}} {
		for _, isMax := range []bool{true, false} {
			op := map[bool]string{true: "tpartargmax", false: "tpartargmin"}[isMax]
			n := len(av)
			var wantV, wantI []float64
			for i := range n {
				x, y := av[i], bv[i]
				ordered := !math.IsNaN(x) && !math.IsNaN(y)
				takeA := ordered && (x == y || (isMax && x > y) || (!isMax && x < y))
				if takeA {
					wantV, wantI = append(wantV, x), append(wantI, float64(10+i))
				} else {
					wantV, wantI = append(wantV, y), append(wantI, float64(20+i))
				}
			}
			dv := newTileOp(mkTile(asm.LocVec, dts[0], 1, 16, 1, n, lND), 0)
			di := newTileOp(mkTile(asm.LocVec, dts[1], 1, 16, 1, n, lND), 0)
			ai, bi := make([]float64, n), make([]float64, n)
			for i := range n {
				ai[i], bi[i] = float64(10+i), float64(20+i)
			}
			args := []Operand{dv, di, T(dts[0], av).operand(t), T(dts[0], bv).operand(t), T(dts[1], ai).operand(t), T(dts[1], bi).operand(t)}
			if err := Execute(mkOp(t, op), args, nil); err != nil {
				t.Fatal(err)
			}
			what := op + " " + dts[0].String() + "/" + dts[1].String()
			checkGrid(t, what, getTile(t, dv, 1, n), [][]float64{wantV})
			checkGrid(t, what+" idx", getTile(t, di, 1, n), [][]float64{wantI})
		}
	}
}

// TestPairReduceSumOdd: columns k ≥ ⌊C/2⌋ of dst keep what they held.
func TestPairReduceSumOdd(t *testing.T) {
	for _, tc := range []struct {
		dt   asm.DType
		src  []float64
		want []float64 // 9 marks a column left as it was
	}{
		{asm.F32, grid(1, 2, 3, 4, 5), grid(3, 7, 9, 9, 9)},
		{asm.F32, grid(1, 2, 3, 4), grid(3, 7, 9, 9)},
		{asm.F32, grid(nan, 1, 2), grid(nan, 9, 9)},
		// f16 rounds the pair sum: 2048 + 1 is a tie, even 2048.
		{asm.F16, grid(2048, 1, 3), grid(2048, 9, 9)},
		{asm.F16, grid(1), grid(9)},
	} {
		n := len(tc.src)
		keep := make([]float64, n)
		for i := range keep {
			keep[i] = 9
		}
		d := T(tc.dt, keep).operand(t)
		if err := Execute(mkOp(t, "tpairreducesum"), []Operand{d, T(tc.dt, tc.src).operand(t)}, nil); err != nil {
			t.Fatal(err)
		}
		// Independent: sum the pairs in the dtype's own precision.
		want := append([]float64(nil), keep...)
		for k := 0; 2*k+1 < n; k++ {
			want[k] = f16(tc.src[2*k] + tc.src[2*k+1])
			if tc.dt == asm.F32 {
				want[k] = f32(tc.src[2*k] + tc.src[2*k+1])
			}
		}
		checkGrid(t, "tpairreducesum ref", getTile(t, d, 1, n), [][]float64{want})
		checkGrid(t, "tpairreducesum by hand", getTile(t, d, 1, n), [][]float64{tc.want})
	}
}

// TestDequantRowParams: one scale and offset per row, column 0, and the
// subtract and multiply rounded to f32 each: 1 - (-2^-24) is a tie that
// rounds to 1, so ·3 gives 3 where one rounding would give 3 + 2^-22.
func TestDequantRowParams(t *testing.T) {
	for _, tc := range []struct {
		name          string
		src           in
		scale, offset in
		want          [][]float64
	}{
		{"columns of scale ignored", T(asm.I8, grid(-128, 127), grid(3, 0)), T(asm.F32, grid(0.5, 7, 7), grid(2, 7, 7)), T(asm.F32, grid(1, 9, 9), grid(-1, 9, 9)),
			[][]float64{{-64.5, 63}, {8, 2}}},
		{"two roundings", T(asm.I16, grid(1, -32768)), T(asm.F32, grid(3)), T(asm.F32, grid(-pow2(-24))),
			[][]float64{{3, f32(f32(-32768+pow2(-24)) * 3)}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runVec(t, vcase{name: tc.name, op: "tdequant", dst: asm.F32, ins: []in{tc.src, tc.scale, tc.offset}, want: tc.want})
		})
	}
	runVec(t, vcase{name: "f16 dst", op: "tdequant", dst: asm.F16, ins: []in{T(asm.I8, grid(1)), T(asm.F32, grid(1)), T(asm.F32, grid(0))},
		want: [][]float64{{1}}, err: "f32"})
}

func roundF32(xs []float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = f32(x)
	}
	return out
}

// TestFmodDevice: tfmod and tfmods as TFmod.hpp's f32 chain: fmod(1e10, 3)
// is 0 (the quotient rounds to f32, its product back to 1e10), and b = ±inf
// gives NaN (0·inf), not a; only f32 has a path.
func TestFmodDevice(t *testing.T) {
	inf := math.Inf(1)
	ref := func(a, b float32) float64 { return float64(a - float32(float32(math.Trunc(float64(float32(a/b))))*b)) }
	a, b := grid(1e10, -7, 7.5, 1, nan, 5, -0.5), grid(3, 2, -2, 0, 1, inf, 0.25)
	hand := grid(0, -1, 1.5, nan, nan, nan, -0)
	var want []float64
	for i := range a {
		want = append(want, ref(float32(a[i]), float32(b[i])))
	}
	runVec(t, vcase{name: "ref", op: "tfmod", dst: asm.F32, ins: []in{T(asm.F32, a), T(asm.F32, b)}, want: [][]float64{want}})
	runVec(t, vcase{name: "by hand", op: "tfmod", dst: asm.F32, ins: []in{T(asm.F32, a), T(asm.F32, b)}, want: [][]float64{hand}})
	runVec(t, vcase{name: "fmods", op: "tfmods", dst: asm.F32, ins: []in{T(asm.F32, grid(1e10, -7, 7.5)), F(3)}, want: [][]float64{{0, -1, 1.5}}})
	runVec(t, vcase{name: "i16", op: "tfmod", dst: asm.I16, ins: []in{T(asm.I16, grid(7)), T(asm.I16, grid(3))}, want: [][]float64{{1}}, err: "f32 only"})
}
