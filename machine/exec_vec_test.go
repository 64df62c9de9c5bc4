package machine

import (
	"math"
	"strings"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
)

// in is one source operand of a vector test: a tile of dt holding vals, or an
// immediate.
type in struct {
	dt   asm.DType
	vals [][]float64
	imm  *Operand
}

func T(dt asm.DType, rows ...[]float64) in { return in{dt: dt, vals: rows} }
func F(x float64) in                       { o := fimm(x); return in{imm: &o} }
func I(x int64) in                         { o := intImm(x); return in{imm: &o} }

// padCols rounds cols up to a 32-byte row, as vec tiles need.
func padCols(dt asm.DType, cols int) int {
	per := 32 / dt.Size()
	return (cols + per - 1) / per * per
}

func (x in) operand(t *testing.T) Operand {
	if x.imm != nil {
		return *x.imm
	}
	r, c := len(x.vals), len(x.vals[0])
	o := newTileOp(mkTile(asm.LocVec, x.dt, r, padCols(x.dt, c), r, c, lND), 32)
	setTile(t, o, x.vals)
	return o
}

type vcase struct {
	name  string
	op    string
	attrs []asm.CAttr
	dst   asm.DType
	want  [][]float64 // also fixes dst's valid region
	ins   []in
	err   string
}

func runVec(t *testing.T, tc vcase) {
	t.Helper()
	rows, cols := len(tc.want), 1
	if rows > 0 {
		cols = len(tc.want[0])
	} else {
		rows = 1
	}
	// The destination has one spare row and spare columns that must stay poisoned.
	dt := mkTile(asm.LocVec, tc.dst, rows+1, padCols(tc.dst, cols+1), rows, cols, lND)
	d := newTileOp(dt, 64)
	args := []Operand{d}
	for _, x := range tc.ins {
		args = append(args, x.operand(t))
	}
	op := mkOp(t, tc.op, tc.attrs...)
	if tc.err == "" {
		legalDTypes(t, op.Info, tc)
	}
	err := Execute(op, args, NewExecScratch())
	if tc.err != "" {
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Fatalf("error %v, want %q", err, tc.err)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	checkGrid(t, tc.op, getTile(t, d, rows, cols), tc.want)
	v := viewOf(t, d)
	if a := v.addr(rows, 0); !d.Buf.IsPoisoned(a, v.es) {
		t.Errorf("element (%d, 0) outside the valid region was written", rows)
	}
	if a := v.addr(0, cols); !d.Buf.IsPoisoned(a, v.es) {
		t.Errorf("element (0, %d) outside the valid region was written", cols)
	}
	if a := v.addr(rows-1, cols-1); d.Buf.IsPoisoned(a, v.es) {
		t.Errorf("last valid element still poisoned")
	}
}

// legalDTypes fails a case whose element types the assembler refuses for
// the op (asm.OpInfo.DTypes, pto-isa's a2a3 static_asserts): the machine
// would be tested on a program no kernel can contain.
func legalDTypes(t *testing.T, info *asm.OpInfo, tc vcase) {
	t.Helper()
	if info.DTypes == nil {
		return
	}
	dts := []asm.DType{tc.dst}
	for _, x := range tc.ins {
		if x.imm == nil {
			dts = append(dts, x.dt)
		}
	}
	for _, r := range info.DTypes {
		ok := true
		for i, dt := range dts {
			ok = ok && r.Allows(i, dt)
		}
		if ok {
			return
		}
	}
	t.Fatalf("%s with element types %v: the assembler refuses the combination (docs/isa.md \"Element types\")", tc.op, dts)
}

func TestVectorBinary(t *testing.T) {
	one := 1.0
	ulp := pow2(-10) // f16 spacing at 1
	for _, tc := range []vcase{
		// fp16 ties round to even: 1 + ulp/2 → 1; (1 + ulp) + ulp/2 → 1 + 2ulp.
		{name: "f16 ties", op: "tadd", dst: asm.F16,
			ins:  []in{T(asm.F16, grid(one, one+ulp, 2048)), T(asm.F16, grid(ulp/2, ulp/2, 1))},
			want: [][]float64{{1, 1 + 2*ulp, 2048}}},
		{name: "f32 sub", op: "tsub", dst: asm.F32,
			ins:  []in{T(asm.F32, grid(1, 2), grid(3, 4)), T(asm.F32, grid(0.5, 4), grid(-1, 0.25))},
			want: [][]float64{{0.5, -2}, {4, 3.75}}},
		{name: "f32 mul", op: "tmul", dst: asm.F32,
			ins:  []in{T(asm.F32, grid(0.1, -4)), T(asm.F32, grid(3, 1e38))},
			want: [][]float64{{f32(f32(0.1) * 3), math.Inf(-1)}}},
		{name: "f16 div", op: "tdiv", dst: asm.F16,
			ins:  []in{T(asm.F16, grid(1, 1, -1)), T(asm.F16, grid(3, 0, 0))},
			want: [][]float64{{f16(1.0 / 3), math.Inf(1), math.Inf(-1)}}},
		{name: "max min", op: "tmax", dst: asm.F32,
			ins:  []in{T(asm.F32, grid(1, -2)), T(asm.F32, grid(0, -1))},
			want: [][]float64{{1, -1}}},
		{name: "min", op: "tmin", dst: asm.I32,
			ins:  []in{T(asm.I32, grid(1, -2)), T(asm.I32, grid(0, -1))},
			want: [][]float64{{0, -2}}},
		// Integers wrap.
		{name: "i16 overflow", op: "tadd", dst: asm.I16,
			ins:  []in{T(asm.I16, grid(32767, -32768)), T(asm.I16, grid(1, -1))},
			want: [][]float64{{-32768, 32767}}},
		{name: "i16 mul wraps", op: "tmul", dst: asm.I16,
			ins:  []in{T(asm.I16, grid(256, -32768)), T(asm.I16, grid(256, -1))},
			want: [][]float64{{0, -32768}}},
		{name: "i32 add wraps", op: "tadd", dst: asm.I32,
			ins:  []in{T(asm.I32, grid(2147483647, -2147483648)), T(asm.I32, grid(1, -1))},
			want: [][]float64{{-2147483648, 2147483647}}},
		// tdiv is f16/f32 only (TDiv.hpp:58): an integer division is
		// refused by the assembler; the machine still refuses a 0 divisor.
		{name: "int div by zero", op: "tdiv", dst: asm.I32,
			ins: []in{T(asm.I32, grid(7)), T(asm.I32, grid(0))}, want: [][]float64{{0}}, err: "division by zero"},
		{name: "bitwise", op: "txor", dst: asm.U16,
			ins:  []in{T(asm.U16, grid(0xFF00, 0x0F0F)), T(asm.U16, grid(0x0FF0, 0xFFFF))},
			want: [][]float64{{0xF0F0, 0xF0F0}}},
		{name: "and", op: "tand", dst: asm.U16,
			ins:  []in{T(asm.U16, grid(0xFF00)), T(asm.U16, grid(0x0FF0))},
			want: [][]float64{{0x0F00}}},
		{name: "or on f16 bits", op: "tor", dst: asm.F16,
			ins:  []in{T(asm.F16, grid(1)), T(asm.F16, grid(math.Copysign(0, -1)))}, // sets the sign bit
			want: [][]float64{{-1}}},
		{name: "shl", op: "tshl", dst: asm.I32,
			ins:  []in{T(asm.I32, grid(3, -1)), T(asm.I32, grid(4, 31))},
			want: [][]float64{{48, math.MinInt32}}},
		{name: "shr", op: "tshr", dst: asm.U8,
			ins:  []in{T(asm.U8, grid(0x80)), T(asm.U8, grid(7))},
			want: [][]float64{{1}}},
		{name: "shift on float", op: "tshl", dst: asm.F32,
			ins: []in{T(asm.F32, grid(1)), T(asm.F32, grid(1))}, want: [][]float64{{0}}, err: "integer"},
		{name: "partial valid source", op: "tadd", dst: asm.F32,
			ins:  []in{T(asm.F32, grid(1, 2)), T(asm.F32, grid(1))},
			want: [][]float64{{2, 4}}, err: "does not cover"},
	} {
		t.Run(tc.name, func(t *testing.T) { runVec(t, tc) })
	}
}

func TestVectorScalarAndUnary(t *testing.T) {
	for _, tc := range []vcase{
		{name: "adds", op: "tadds", dst: asm.F32, ins: []in{T(asm.F32, grid(1, -1)), F(0.5)}, want: [][]float64{{1.5, -0.5}}},
		{name: "subs", op: "tsubs", dst: asm.F32, ins: []in{T(asm.F32, grid(1)), F(0.25)}, want: [][]float64{{0.75}}},
		{name: "muls i32 int imm", op: "tmuls", dst: asm.I32, ins: []in{T(asm.I32, grid(3, -4)), I(5)}, want: [][]float64{{15, -20}}},
		{name: "muls i32 float imm", op: "tmuls", dst: asm.I32, ins: []in{T(asm.I32, grid(3)), F(0.5)}, want: [][]float64{{0}}, err: "not an integer"},
		{name: "divs", op: "tdivs", dst: asm.F32, ins: []in{T(asm.F32, grid(1)), F(4)}, want: [][]float64{{0.25}}},
		{name: "scalar over tile", op: "tsdivs", dst: asm.F32, ins: []in{F(2), T(asm.F32, grid(4, -0.5))}, want: [][]float64{{0.5, -4}}},
		{name: "scalar over i32 tile", op: "tsdivs", dst: asm.I32, ins: []in{I(7), T(asm.I32, grid(2, -7))}, want: [][]float64{{3, -1}}},
		{name: "scalar over zero", op: "tsdivs", dst: asm.I32, ins: []in{I(7), T(asm.I32, grid(0))}, want: [][]float64{{0}}, err: "division by zero"},
		{name: "maxs", op: "tmaxs", dst: asm.F16, ins: []in{T(asm.F16, grid(-1, 2)), F(0)}, want: [][]float64{{0, 2}}},
		{name: "mins", op: "tmins", dst: asm.F16, ins: []in{T(asm.F16, grid(-1, 2)), F(0)}, want: [][]float64{{-1, 0}}},
		{name: "expands", op: "texpands", dst: asm.BF16, ins: []in{F(0.1)}, want: [][]float64{{bf16(0.1), bf16(0.1)}, {bf16(0.1), bf16(0.1)}}},
		// -3 · f16(0.1) = -0.2999267578125 is a tie between two f16 values;
		// to even gives -0.2998046875 (exact 0.1 would round to -0.300048828125).
		{name: "lrelu f16", op: "tlrelu", dst: asm.F16, ins: []in{T(asm.F16, grid(-3, 2, 0)), F(0.1)},
			want: [][]float64{{-0.2998046875, 2, 0}}},
		{name: "lrelu f32", op: "tlrelu", dst: asm.F32, ins: []in{T(asm.F32, grid(-2, 5)), F(0.1)},
			want: [][]float64{{f32(-2 * f32(0.1)), 5}}},
		{name: "prelu", op: "tprelu", dst: asm.F32, ins: []in{T(asm.F32, grid(-2, 5, -1)), T(asm.F32, grid(0.5, 0.5, -3))},
			want: [][]float64{{-1, 5, 3}}},
		{name: "exp", op: "texp", dst: asm.F32, ins: []in{T(asm.F32, grid(0, 1))}, want: [][]float64{{1, f32(math.E)}}},
		{name: "exp f16", op: "texp", dst: asm.F16, ins: []in{T(asm.F16, grid(1))}, want: [][]float64{{f16(math.E)}}},
		{name: "log", op: "tlog", dst: asm.F32, ins: []in{T(asm.F32, grid(1, 0, -1))}, want: [][]float64{{0, math.Inf(-1), math.NaN()}}},
		{name: "sqrt", op: "tsqrt", dst: asm.F32, ins: []in{T(asm.F32, grid(4, 2))}, want: [][]float64{{2, f32(math.Sqrt2)}}},
		{name: "rsqrt", op: "trsqrt", dst: asm.F32, ins: []in{T(asm.F32, grid(4))}, want: [][]float64{{0.5}}},
		{name: "recip", op: "trecip", dst: asm.F16, ins: []in{T(asm.F16, grid(4, 3))}, want: [][]float64{{0.25, f16(1.0 / 3)}}},
		{name: "abs neg", op: "tabs", dst: asm.F16, ins: []in{T(asm.F16, grid(-5, -65504))}, want: [][]float64{{5, 65504}}},
		{name: "neg", op: "tneg", dst: asm.F32, ins: []in{T(asm.F32, grid(-5, 0))}, want: [][]float64{{5, math.Copysign(0, -1)}}},
		{name: "relu", op: "trelu", dst: asm.F16, ins: []in{T(asm.F16, grid(-5, 3))}, want: [][]float64{{0, 3}}},
		{name: "relu int", op: "trelu", dst: asm.I32, ins: []in{T(asm.I32, grid(-5, 3))}, want: [][]float64{{0, 3}}},
		{name: "not", op: "tnot", dst: asm.U8, ins: []in{T(asm.U8, grid(0x0F))}, want: [][]float64{{0xF0}}},
		{name: "exp int", op: "texp", dst: asm.I32, ins: []in{T(asm.I32, grid(1))}, want: [][]float64{{0}}, err: "integer"},
		{name: "slope", op: "tlrelu", dst: asm.F16, ins: []in{T(asm.F16, grid(1)), F(0)}, want: [][]float64{{1}}},
	} {
		t.Run(tc.name, func(t *testing.T) { runVec(t, tc) })
	}
}

func TestVectorCvt(t *testing.T) {
	tie := 1 + pow2(-11) // halfway between f16 1 and 1+2^-10
	up := 1 + pow2(-10)
	rnd := func(m string) []asm.CAttr { return []asm.CAttr{word("rnd", m)} }
	for _, tc := range []vcase{
		{name: "default rint", op: "tcvt", dst: asm.F16, ins: []in{T(asm.F32, grid(tie, -tie))}, want: [][]float64{{1, -1}}},
		{name: "rint", op: "tcvt", attrs: rnd("rint"), dst: asm.F16, ins: []in{T(asm.F32, grid(tie, -tie))}, want: [][]float64{{1, -1}}},
		{name: "round", op: "tcvt", attrs: rnd("round"), dst: asm.F16, ins: []in{T(asm.F32, grid(tie, -tie))}, want: [][]float64{{up, -up}}},
		{name: "floor", op: "tcvt", attrs: rnd("floor"), dst: asm.F16, ins: []in{T(asm.F32, grid(tie, -tie))}, want: [][]float64{{1, -up}}},
		{name: "ceil", op: "tcvt", attrs: rnd("ceil"), dst: asm.F16, ins: []in{T(asm.F32, grid(tie, -tie))}, want: [][]float64{{up, -1}}},
		{name: "trunc", op: "tcvt", attrs: rnd("trunc"), dst: asm.F16, ins: []in{T(asm.F32, grid(tie, -tie))}, want: [][]float64{{1, -1}}},
		{name: "rz", op: "tcvt", attrs: rnd("rz"), dst: asm.F16, ins: []in{T(asm.F32, grid(tie, -tie))}, want: [][]float64{{1, -1}}},
		{name: "f16 overflow", op: "tcvt", dst: asm.F16, ins: []in{T(asm.F32, grid(70000))}, want: [][]float64{{math.Inf(1)}}},
		{name: "to bf16", op: "tcvt", dst: asm.BF16, ins: []in{T(asm.F32, grid(1+pow2(-8), 1+3*pow2(-8)))}, want: [][]float64{{1, 1 + pow2(-6)}}},
		{name: "f16 to f32", op: "tcvt", dst: asm.F32, ins: []in{T(asm.F16, grid(up))}, want: [][]float64{{up}}},
		{name: "f32 to i32 rint", op: "tcvt", dst: asm.I32, ins: []in{T(asm.F32, grid(2.5, -2.5, 3.5))}, want: [][]float64{{2, -2, 4}}},
		{name: "f32 to i32 round", op: "tcvt", attrs: rnd("round"), dst: asm.I32, ins: []in{T(asm.F32, grid(2.5, -2.5))}, want: [][]float64{{3, -3}}},
		// f32 → i8 and i32 → i8 have no A2/A3 instruction (GenCastCall):
		// the legal narrowing pairs, in range (past it: TestVectorCvtEdges).
		{name: "f32 to i16 trunc", op: "tcvt", attrs: rnd("trunc"), dst: asm.I16, ins: []in{T(asm.F32, grid(300.7, -300.7, 5.2))}, want: [][]float64{{300, -300, 5}}},
		{name: "f16 to i8 trunc", op: "tcvt", attrs: rnd("trunc"), dst: asm.I8, ins: []in{T(asm.F16, grid(100.5, -100.5, 5.25))}, want: [][]float64{{100, -100, 5}}},
		{name: "i16 to f16 floor", op: "tcvt", attrs: rnd("floor"), dst: asm.F16, ins: []in{T(asm.I16, grid(2049, -2049, 5))}, want: [][]float64{{2048, -2050, 5}}},
		{name: "i32 to f16", op: "tcvt", dst: asm.F16, ins: []in{T(asm.I32, grid(2049, 2051))}, want: [][]float64{{2048, 2052}}},
		// TCvt.hpp's defaults (session 24): NONE, and ODD but for f32 →
		// f16, take a pair's default instruction, toward zero into an
		// integer; the special cases take no mode.
		{name: "f32 to i32 none truncates", op: "tcvt", attrs: rnd("none"), dst: asm.I32, ins: []in{T(asm.F32, grid(2.7, -2.7))}, want: [][]float64{{2, -2}}},
		{name: "f16 to i16 odd truncates", op: "tcvt", attrs: rnd("odd"), dst: asm.I16, ins: []in{T(asm.F16, grid(2.5, 3.5))}, want: [][]float64{{2, 3}}},
		{name: "f32 to f16 odd", op: "tcvt", attrs: rnd("odd"), dst: asm.F16, ins: []in{T(asm.F32, grid(tie))}, want: [][]float64{{up}}},
		{name: "f32 to f16 none", op: "tcvt", attrs: rnd("none"), dst: asm.F16, ins: []in{T(asm.F32, grid(tie))}, want: [][]float64{{1}}},
		{name: "f32 to f32 rounds to an integer", op: "tcvt", attrs: rnd("floor"), dst: asm.F32, ins: []in{T(asm.F32, grid(2.5, -1.5))}, want: [][]float64{{2, -2}}},
		{name: "f32 to f32 odd rounds to even", op: "tcvt", attrs: rnd("odd"), dst: asm.F32, ins: []in{T(asm.F32, grid(2.5, 1.5))}, want: [][]float64{{2, 2}}},
		{name: "i32 to f16 takes no mode", op: "tcvt", attrs: rnd("floor"), dst: asm.F16, ins: []in{T(asm.I32, grid(2051))}, want: [][]float64{{2052}}},
		{name: "bad mode", op: "tcvt", attrs: rnd("sideways"), dst: asm.F16, ins: []in{T(asm.F32, grid(1))}, want: [][]float64{{1}}, err: "rounding"},
	} {
		t.Run(tc.name, func(t *testing.T) { runVec(t, tc) })
	}
}

// TestVectorTMovBits: vec→vec tmov copies bytes (a2a3/TMov.hpp:83-88), so
// two element types of one size reinterpret the bits; of two sizes, none.
func TestVectorTMovBits(t *testing.T) {
	for _, tc := range []vcase{
		{name: "f32 to i32 copies bits", op: "tmov", dst: asm.I32,
			ins:  []in{T(asm.F32, grid(1, -2))},
			want: [][]float64{{1065353216, -1073741824}}},
		{name: "f32 to f16 refused", op: "tmov", dst: asm.F16,
			ins: []in{T(asm.F32, grid(1))}, want: [][]float64{{1}}, err: "cannot convert"},
	} {
		t.Run(tc.name, func(t *testing.T) { runVec(t, tc) })
	}
}

// TestVectorCvtEdges: what each pair does past its destination's range. The
// narrowing pairs (TCvt.hpp kIsNarrowingCvt: f16 → u8/i8/i16, f32 → i16,
// i64 → i32, i32 → i16) run with saturation off and keep the low bits of
// the rounded value saturated into int64 (NaN 0, +inf all ones, -inf 0);
// the others clamp; a float destination follows IEEE.
func TestVectorCvtEdges(t *testing.T) {
	inf, nan, negZero := math.Inf(1), math.NaN(), math.Copysign(0, -1)
	rnd := func(m string) []asm.CAttr { return []asm.CAttr{word("rnd", m)} }
	for _, tc := range []vcase{
		// f16 → i8: 127.5 rounds (to even) to 128, which wraps.
		{name: "f16 to i8 wraps", op: "tcvt", attrs: rnd("rint"), dst: asm.I8,
			ins:  []in{T(asm.F16, grid(300, -200, 127.5, 2.5, negZero, inf, -inf, nan))},
			want: [][]float64{{44, 56, -128, 2, 0, -1, 0, 0}}},
		{name: "f16 to u8 wraps", op: "tcvt", attrs: rnd("rint"), dst: asm.U8,
			ins:  []in{T(asm.F16, grid(-100, 300, 255.5, 0.5, negZero, inf, -inf, nan))},
			want: [][]float64{{156, 44, 0, 0, 0, 255, 0, 0}}},
		{name: "f16 to i16 wraps", op: "tcvt", attrs: rnd("round"), dst: asm.I16,
			ins:  []in{T(asm.F16, grid(40000, -40000, 32768, 2.5, -2.5, inf, -inf, nan))},
			want: [][]float64{{-25536, 25536, -32768, 3, -3, -1, 0, 0}}},
		// f32 → i16: past int64, the value saturates there first.
		{name: "f32 to i16 wraps", op: "tcvt", attrs: rnd("floor"), dst: asm.I16,
			ins:  []in{T(asm.F32, grid(32767.5, 32768.5, -32769.5, 1e10, 1e20, -1e20, inf, nan))},
			want: [][]float64{{32767, -32768, 32766, -7168, -1, 0, -1, 0}}},
		{name: "f32 to i16 none truncates then wraps", op: "tcvt", attrs: rnd("none"), dst: asm.I16,
			ins:  []in{T(asm.F32, grid(-32768.9, 65535.9))},
			want: [][]float64{{-32768, -1}}},
		{name: "i32 to i16 wraps", op: "tcvt", dst: asm.I16,
			ins:  []in{T(asm.I32, grid(40000, -40000, 32767, -32768, 65536))},
			want: [][]float64{{-25536, 25536, 32767, -32768, 0}}},
		{name: "i64 to i32 wraps", op: "tcvt", dst: asm.I32,
			ins:  []in{T(asm.I64, grid(3000000000, -3000000000, 2147483647, 4294967296))},
			want: [][]float64{{-1294967296, 1294967296, 2147483647, 0}}},
		// The saturating pairs clamp, NaN to 0.
		{name: "f32 to i32 saturates", op: "tcvt", dst: asm.I32,
			ins:  []in{T(asm.F32, grid(3e9, -3e9, inf, -inf, nan, negZero))},
			want: [][]float64{{2147483647, -2147483648, 2147483647, -2147483648, 0, 0}}},
		{name: "f16 to i32 saturates only past i32", op: "tcvt", dst: asm.I32,
			ins:  []in{T(asm.F16, grid(65504, -65504, inf, -inf, nan))},
			want: [][]float64{{65504, -65504, 2147483647, -2147483648, 0}}},
		{name: "bf16 to i32 saturates", op: "tcvt", attrs: rnd("trunc"), dst: asm.I32,
			ins:  []in{T(asm.BF16, grid(1e10, -1e10, nan))},
			want: [][]float64{{2147483647, -2147483648, 0}}},
		// A float destination: IEEE overflow to infinity, NaN and -0 kept.
		{name: "f32 to f16 overflows to inf", op: "tcvt", dst: asm.F16,
			ins:  []in{T(asm.F32, grid(70000, -70000, nan, negZero))},
			want: [][]float64{{inf, -inf, nan, negZero}}},
	} {
		t.Run(tc.name, func(t *testing.T) { runVec(t, tc) })
	}
}

func TestVectorReduceExpand(t *testing.T) {
	a := T(asm.F32, grid(1, 2, 3), grid(-4, 5, 6))
	for _, tc := range []vcase{
		{name: "rowsum", op: "trowsum", dst: asm.F32, ins: []in{a}, want: [][]float64{{6}, {7}}},
		{name: "rowmax", op: "trowmax", dst: asm.F32, ins: []in{a}, want: [][]float64{{3}, {6}}},
		{name: "rowmin", op: "trowmin", dst: asm.F32, ins: []in{a}, want: [][]float64{{1}, {-4}}},
		{name: "colsum", op: "tcolsum", dst: asm.F32, ins: []in{a}, want: [][]float64{{-3, 7, 9}}},
		{name: "colmax", op: "tcolmax", dst: asm.F32, ins: []in{a}, want: [][]float64{{1, 5, 6}}},
		{name: "colmin", op: "tcolmin", dst: asm.F32, ins: []in{a}, want: [][]float64{{-4, 2, 3}}},
		{name: "colsum i16 wraps", op: "tcolsum", dst: asm.I16, ins: []in{T(asm.I16, grid(32767), grid(1))}, want: [][]float64{{-32768}}},
		// f16 sum rounds once: 2048 + 1 + 1 = 2050 exactly, where pairwise f16 adds would lose both ones.
		{name: "rowsum f16 rounds once", op: "trowsum", dst: asm.F16, ins: []in{T(asm.F16, grid(2048, 1, 1))}, want: [][]float64{{2050}}},
		{name: "rowsum too few rows", op: "trowsum", dst: asm.F32, ins: []in{a}, want: [][]float64{{0}, {0}, {0}}, err: "valid rows"},
		{name: "rowexpand", op: "trowexpand", dst: asm.F32, ins: []in{T(asm.F32, grid(1), grid(2))}, want: [][]float64{{1, 1, 1}, {2, 2, 2}}},
		{name: "colexpand", op: "tcolexpand", dst: asm.F32, ins: []in{T(asm.F32, grid(1, 2, 3))}, want: [][]float64{{1, 2, 3}, {1, 2, 3}}},
		{name: "rowexpandmul", op: "trowexpandmul", dst: asm.F32, ins: []in{a, T(asm.F32, grid(2), grid(-1))}, want: [][]float64{{2, 4, 6}, {4, -5, -6}}},
		{name: "rowexpanddiv", op: "trowexpanddiv", dst: asm.F32, ins: []in{a, T(asm.F32, grid(2), grid(4))}, want: [][]float64{{0.5, 1, 1.5}, {-1, 1.25, 1.5}}},
		{name: "rowexpandsub", op: "trowexpandsub", dst: asm.F32, ins: []in{a, T(asm.F32, grid(1), grid(5))}, want: [][]float64{{0, 1, 2}, {-9, 0, 1}}},
		{name: "rowexpandmax", op: "trowexpandmax", dst: asm.F32, ins: []in{a, T(asm.F32, grid(2), grid(5))}, want: [][]float64{{2, 2, 3}, {5, 5, 6}}},
		{name: "colexpandadd", op: "tcolexpandadd", dst: asm.F32, ins: []in{a, T(asm.F32, grid(10, 20, 30))}, want: [][]float64{{11, 22, 33}, {6, 25, 36}}},
		{name: "colexpandmin", op: "tcolexpandmin", dst: asm.F32, ins: []in{a, T(asm.F32, grid(0, 3, 4))}, want: [][]float64{{0, 2, 3}, {-4, 3, 4}}},
		{name: "rowexpandadd", op: "trowexpandadd", dst: asm.F32, ins: []in{a, T(asm.F32, grid(1), grid(-5))}, want: [][]float64{{2, 3, 4}, {-9, 0, 1}}},
		{name: "rowexpandmin", op: "trowexpandmin", dst: asm.F32, ins: []in{a, T(asm.F32, grid(2), grid(5))}, want: [][]float64{{1, 2, 2}, {-4, 5, 5}}},
		{name: "colexpandsub", op: "tcolexpandsub", dst: asm.F32, ins: []in{a, T(asm.F32, grid(1, 2, 4))}, want: [][]float64{{0, 0, -1}, {-5, 3, 2}}},
		{name: "colexpandmul", op: "tcolexpandmul", dst: asm.F32, ins: []in{a, T(asm.F32, grid(2, -1, 0.5))}, want: [][]float64{{2, -2, 1.5}, {-8, -5, 3}}},
		{name: "colexpanddiv", op: "tcolexpanddiv", dst: asm.F32, ins: []in{a, T(asm.F32, grid(2, 4, 0))}, want: [][]float64{{0.5, 0.5, math.Inf(1)}, {-2, 1.25, math.Inf(1)}}},
		{name: "colexpandmax", op: "tcolexpandmax", dst: asm.F32, ins: []in{a, T(asm.F32, grid(0, 3, math.NaN()))}, want: [][]float64{{1, 3, math.NaN()}, {0, 5, math.NaN()}}},
		{name: "transpose", op: "ttrans", dst: asm.F32, ins: []in{a}, want: [][]float64{{1, -4}, {2, 5}, {3, 6}}},
	} {
		t.Run(tc.name, func(t *testing.T) { runVec(t, tc) })
	}
}

func TestVectorCmpSelGather(t *testing.T) {
	cmp := func(c string) []asm.CAttr { return []asm.CAttr{word("cmp", c)} }
	a := T(asm.F32, grid(1, 2, 3, math.NaN()))
	b := T(asm.F32, grid(2, 2, 2, 0))
	for _, tc := range []vcase{
		{name: "eq", op: "tcmp", attrs: cmp("eq"), dst: asm.U8, ins: []in{a, b}, want: [][]float64{{0, 1, 0, 0}}},
		{name: "ne", op: "tcmp", attrs: cmp("ne"), dst: asm.U8, ins: []in{a, b}, want: [][]float64{{1, 0, 1, 1}}},
		{name: "lt", op: "tcmp", attrs: cmp("lt"), dst: asm.U8, ins: []in{a, b}, want: [][]float64{{1, 0, 0, 0}}},
		{name: "le", op: "tcmp", attrs: cmp("le"), dst: asm.U8, ins: []in{a, b}, want: [][]float64{{1, 1, 0, 0}}},
		{name: "gt", op: "tcmp", attrs: cmp("gt"), dst: asm.U8, ins: []in{a, b}, want: [][]float64{{0, 0, 1, 0}}},
		{name: "ge", op: "tcmp", attrs: cmp("ge"), dst: asm.U8, ins: []in{a, b}, want: [][]float64{{0, 1, 1, 0}}},
		{name: "ge f32 mask", op: "tcmp", attrs: cmp("ge"), dst: asm.F32, ins: []in{a, b}, want: [][]float64{{0, 1, 1, 0}}},
		{name: "cmps int", op: "tcmps", attrs: cmp("lt"), dst: asm.U8, ins: []in{T(asm.I32, grid(-1, 0, 1)), I(0)}, want: [][]float64{{1, 0, 0}}},
		{name: "sel", op: "tsel", dst: asm.F16,
			ins:  []in{T(asm.U8, grid(1, 0, 7)), T(asm.F16, grid(1, 2, 3)), T(asm.F16, grid(-1, -2, -3))},
			want: [][]float64{{1, -2, 3}}},
		{name: "sels", op: "tsels", dst: asm.F32,
			ins:  []in{T(asm.U8, grid(1, 0)), T(asm.F32, grid(1, 2)), F(9)},
			want: [][]float64{{1, 9}}},
		{name: "gather", op: "tgather", dst: asm.F32,
			ins:  []in{T(asm.F32, grid(10, 11, 12)), T(asm.I32, grid(2, 0, 1, 2))},
			want: [][]float64{{12, 10, 11, 12}}},
		{name: "gather out of range", op: "tgather", dst: asm.F32,
			ins: []in{T(asm.F32, grid(10, 11, 12)), T(asm.I32, grid(99))}, want: [][]float64{{0}}, err: "outside"},
		{name: "gather float index", op: "tgather", dst: asm.F32,
			ins: []in{T(asm.F32, grid(10)), T(asm.F32, grid(0))}, want: [][]float64{{0}}, err: "integer"},
	} {
		t.Run(tc.name, func(t *testing.T) { runVec(t, tc) })
	}
}

// Gather indices address the source's storage row-major with its physical row
// pitch, not its valid region.
func TestGatherPhysicalPitch(t *testing.T) {
	src := newTileOp(mkTile(asm.LocVec, asm.F32, 2, 8, 2, 2, lND), 0)
	setTile(t, src, [][]float64{{0, 1, 2, 3, 4, 5, 6, 7}, {8, 9, 10, 11, 12, 13, 14, 15}})
	idx := newTileOp(mkTile(asm.LocVec, asm.I32, 1, 8, 1, 2, lND), 0)
	setTile(t, idx, [][]float64{{9, 15}})
	dst := newTileOp(mkTile(asm.LocVec, asm.F32, 1, 8, 1, 2, lND), 0)
	if err := Execute(mkOp(t, "tgather"), []Operand{dst, src, idx}, nil); err != nil {
		t.Fatal(err)
	}
	checkGrid(t, "gather", getTile(t, dst, 1, 2), [][]float64{{9, 15}})
}

func TestScatter(t *testing.T) {
	dst := newTileOp(mkTile(asm.LocVec, asm.F32, 2, 8, 2, 8, lND), 0)
	a := newTileOp(mkTile(asm.LocVec, asm.F32, 1, 8, 1, 3, lND), 0)
	setTile(t, a, [][]float64{{1, 2, 3}})
	idx := newTileOp(mkTile(asm.LocVec, asm.I32, 1, 8, 1, 3, lND), 0)
	setTile(t, idx, [][]float64{{8, 0, 15}})
	if err := Execute(mkOp(t, "tscatter"), []Operand{dst, a, idx}, nil); err != nil {
		t.Fatal(err)
	}
	got := getTile(t, dst, 2, 8)
	if got[1][0] != 1 || got[0][0] != 2 || got[1][7] != 3 {
		t.Errorf("scatter: %v", got)
	}
	v := viewOf(t, dst)
	if !dst.Buf.IsPoisoned(v.addr(0, 1), 4) || dst.Buf.IsPoisoned(v.addr(1, 7), 4) {
		t.Error("scatter marked the wrong elements written")
	}
}

// Vector ops address tiles through their layout: a DN (column-major) tile
// computes the same logical result.
func TestVectorColumnMajorTile(t *testing.T) {
	a := newTileOp(mkTile(asm.LocVec, asm.F32, 8, 8, 2, 3, lDN), 0)
	setTile(t, a, [][]float64{{1, 2, 3}, {4, 5, 6}})
	d := newTileOp(mkTile(asm.LocVec, asm.F32, 8, 8, 2, 3, lDN), 0)
	if err := Execute(mkOp(t, "tmuls"), []Operand{d, a, fimm(2)}, nil); err != nil {
		t.Fatal(err)
	}
	checkGrid(t, "dn", getTile(t, d, 2, 3), [][]float64{{2, 4, 6}, {8, 10, 12}})
	// Column-major storage: (1, 0) sits right after (0, 0).
	v := viewOf(t, d)
	if v.addr(1, 0) != v.addr(0, 0)+4 {
		t.Errorf("DN addressing: (1,0) at %d, (0,0) at %d", v.addr(1, 0), v.addr(0, 0))
	}
}

// The FFN cell's activation chain (kernels.md §2(c)): gate ← lrelu(gate, 0.1),
// hidden ← gate·up, hidden16 ← cvt(hidden, rint), with signed inputs so the
// negative slope matters.
func TestFFNActivationChain(t *testing.T) {
	gate := T(asm.F32, grid(-1.5, 0.75, -0.3, 2)).operand(t)
	up := T(asm.F32, grid(2, -1, 3, 0.5)).operand(t)
	hid := newTileOp(mkTile(asm.LocVec, asm.F32, 1, 8, 1, 4, lND), 0)
	h16 := newTileOp(mkTile(asm.LocVec, asm.F16, 1, 16, 1, 4, lND), 0)
	s := NewExecScratch()
	steps := []struct {
		op   *asm.COp
		args []Operand
	}{
		{mkOp(t, "tlrelu"), []Operand{gate, gate, fimm(0.1)}},
		{mkOp(t, "tmul"), []Operand{hid, gate, up}},
		{mkOp(t, "tcvt", word("rnd", "rint")), []Operand{h16, hid}},
	}
	for _, st := range steps {
		if err := Execute(st.op, st.args, s); err != nil {
			t.Fatal(err)
		}
	}
	var want []float64
	s01 := f32(0.1)
	for i, g := range []float64{-1.5, 0.75, -0.3, 2} {
		u := []float64{2, -1, 3, 0.5}[i]
		g = f32(g)
		if g <= 0 {
			g = f32(g * s01)
		}
		want = append(want, f16(f32(g*u)))
	}
	checkGrid(t, "hidden16", getTile(t, h16, 1, 4), [][]float64{want})
}
