package machine

import (
	"fmt"
	"math"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/memory"
)

// Vector ops. Every elementwise op is d[r, c] = f(a[r, c], b') over d's valid
// region, where b' is a tile element, a scalar immediate, or a broadcast row or
// column element (the row/col expand forms). The domain is chosen once per op:
//   - bitwise ops (tand tor txor tnot) act on the raw bits, whatever the dtype;
//   - when every operand is an integer dtype, int64 arithmetic, wrapping on store
//     (integer division by zero and negative shifts are faults);
//   - otherwise float64 from the decoded inputs, rounded once to d's dtype.
//
// Scalar immediates take the dtype of the source tile first, as the hardware's
// typed scalar register does: tlrelu on f16 uses f16(0.1), not 0.1.

type vop uint8

const (
	vAdd vop = iota
	vSub
	vMul
	vDiv
	vMax
	vMin
	vAnd
	vOr
	vXor
	vShl
	vShr
	vLrelu // x > 0 ? x : x*b (tlrelu, tprelu)
	vCopy  // b itself (expands, texpands)
	// unary: b is unused
	vExp
	vLog
	vSqrt
	vRsqrt
	vRecip
	vAbs
	vNeg
	vRelu
	vNot
	// binary, added with the pto-isa set (sem_more.go; tpow, trem and
	// tfmod follow their a2a3 f32 chains in sem_rem.go)
	vSubRelu // max(x - y, 0)
	vExpDif  // exp(x - y)
	vProd    // reductions only
)

func (o vop) bitwise() bool { return o == vAnd || o == vOr || o == vXor || o == vNot }

// srcKind says how an elementwise source maps d's (r, c).
type srcKind uint8

const (
	srcNone   srcKind = iota
	srcTile           // (r, c)
	srcRow            // (r, 0): a per-row value broadcast along the row
	srcCol            // (0, c)
	srcScalar         // an immediate
)

type esrc struct {
	kind srcKind
	v    view
	dt   asm.DType
	f    float64
	i    int64
	bits uint64
}

func (s *esrc) pos(r, c int) (int, int) {
	switch s.kind {
	case srcRow:
		return r, 0
	case srcCol:
		return 0, c
	}
	return r, c
}

func (s *esrc) F(r, c int) float64 {
	if s.kind == srcScalar {
		return s.f
	}
	r, c = s.pos(r, c)
	return s.v.f(r, c)
}

func (s *esrc) I(r, c int) int64 {
	if s.kind == srcScalar {
		return s.i
	}
	r, c = s.pos(r, c)
	return s.v.i(r, c)
}

func (s *esrc) Bits(r, c int) uint64 {
	if s.kind == srcScalar {
		return s.bits
	}
	r, c = s.pos(r, c)
	return s.v.bits(r, c)
}

// tileSrc makes a source from tile operand o that must cover d's region in the
// way kind says.
func tileSrc(o *Operand, what string, kind srcKind, d *view) (esrc, error) {
	v, err := tileView(o, what)
	if err != nil {
		return esrc{}, err
	}
	needR, needC := d.rows, d.cols
	switch kind {
	case srcRow:
		needC = 1
	case srcCol:
		needR = 1
	}
	if v.rows < needR || v.cols < needC {
		return esrc{}, fmt.Errorf("%s %%%s: valid region [%d, %d] does not cover [%d, %d]", what, o.Tile.Name, v.rows, v.cols, needR, needC)
	}
	return esrc{kind: kind, v: v, dt: v.dt}, nil
}

// secondSrc is the b operand of a binary op: an immediate of dtype dt when
// kind is srcScalar, else a tile of that kind.
func secondSrc(o *Operand, kind srcKind, dt asm.DType, d *view) (esrc, error) {
	if kind == srcScalar {
		return scalarSrc(o, dt)
	}
	return tileSrc(o, "b", kind, d)
}

func srcKindOf(scalar bool) srcKind {
	if scalar {
		return srcScalar
	}
	return srcTile
}

// scalarSrc makes an immediate of dtype dt from an ArgFloat or integer operand.
func scalarSrc(o *Operand, dt asm.DType) (esrc, error) {
	s := esrc{kind: srcScalar, dt: dt}
	var x float64
	switch o.Kind {
	case asm.ArgFloat:
		x = o.F
	case asm.ArgScalar, asm.ArgReg:
		x = float64(o.Int)
		s.i = o.Int
	default:
		return s, fmt.Errorf("expected a scalar operand")
	}
	if dt.IsFloat() {
		s.f = memory.Round(dt, x, memory.RoundRint)
	} else {
		if o.Kind == asm.ArgFloat {
			if x != math.Trunc(x) || math.IsInf(x, 0) || math.IsNaN(x) {
				return s, fmt.Errorf("scalar %v is not an integer for a %v tile", x, dt)
			}
			s.i = memory.FloatToInt(asm.I64, x, memory.RoundTrunc)
		}
		s.f = float64(s.i)
	}
	if dt.IsFloat() {
		s.bits = memory.Encode(dt, s.f, memory.RoundRint)
	} else {
		s.bits = memory.EncodeInt(dt, s.i)
	}
	return s, nil
}

func vecBinary(args []Operand, o vop, kind srcKind) error {
	d, a, b, err := binSrcs(args, 3, kind)
	if err != nil {
		return err
	}
	return ewise(&d, &a, &b, o)
}

// vecScalarDiv is tsdivs, dst = s / a (args dst, s, a). pto-isa's SDivOp
// first fills dst with the scalar (vector_dup), then divides dst by src, so
// in place (dst is a) every element is s / s: the source is gone before
// vdiv reads it (TDivS.hpp at 3186c381; DivSOp guards its in-place case
// with a vmuls, SDivOp does not).
func vecScalarDiv(args []Operand) error {
	if err := need(args, 3); err != nil {
		return err
	}
	re := [3]Operand{args[0], args[2], args[1]}
	d, a, s, err := binSrcs(re[:], 3, srcScalar)
	if err != nil {
		return err
	}
	if args[0].Tile != nil && args[2].Tile != nil && args[0].Buf == args[2].Buf && args[0].Off == args[2].Off {
		a = s
	}
	return ewise(&d, &s, &a, vDiv)
}

// binSrcs checks that args has n operands and opens dst, a (a tile
// covering dst) and b (a tile or an immediate, by kind): the start of every
// binary op.
func binSrcs(args []Operand, n int, kind srcKind) (d view, a, b esrc, err error) {
	if err = need(args, n); err != nil {
		return
	}
	if d, err = tileView(&args[0], "dst"); err != nil {
		return
	}
	if a, err = tileSrc(&args[1], "a", srcTile, &d); err != nil {
		return
	}
	b, err = secondSrc(&args[2], kind, a.dt, &d)
	return
}

func vecUnary(args []Operand, o vop) error {
	if err := need(args, 2); err != nil {
		return err
	}
	d, err := tileView(&args[0], "dst")
	if err != nil {
		return err
	}
	a, err := tileSrc(&args[1], "a", srcTile, &d)
	if err != nil {
		return err
	}
	return ewise(&d, &a, nil, o)
}

func vecFill(args []Operand) error {
	if err := need(args, 2); err != nil {
		return err
	}
	d, err := tileView(&args[0], "dst")
	if err != nil {
		return err
	}
	s, err := scalarSrc(&args[1], d.dt)
	if err != nil {
		return err
	}
	for r := 0; r < d.rows; r++ {
		for c := 0; c < d.cols; c++ {
			d.setBits(r, c, s.bits)
		}
	}
	d.written()
	return nil
}

func vecExpand(args []Operand, kind srcKind) error {
	if err := need(args, 2); err != nil {
		return err
	}
	d, err := tileView(&args[0], "dst")
	if err != nil {
		return err
	}
	a, err := tileSrc(&args[1], "a", kind, &d)
	if err != nil {
		return err
	}
	return ewise(&d, &a, nil, vCopy)
}

// ewise computes d = o(a, b) elementwise (b is nil for unary ops and copies).
func ewise(d *view, a, b *esrc, o vop) error {
	intDom := !d.dt.IsFloat() && !a.dt.IsFloat() && (b == nil || !b.dt.IsFloat())
	switch {
	case o.bitwise():
		if d.es != a.v.es || (b != nil && b.kind != srcScalar && b.v.es != d.es) {
			return fmt.Errorf("bitwise op on elements of different sizes")
		}
		for r := 0; r < d.rows; r++ {
			for c := 0; c < d.cols; c++ {
				x := a.Bits(r, c)
				switch o {
				case vNot:
					x = ^x
				case vAnd:
					x &= b.Bits(r, c)
				case vOr:
					x |= b.Bits(r, c)
				case vXor:
					x ^= b.Bits(r, c)
				}
				d.setBits(r, c, x)
			}
		}
	case o == vCopy && a.dt == d.dt:
		for r := 0; r < d.rows; r++ {
			for c := 0; c < d.cols; c++ {
				d.setBits(r, c, a.Bits(r, c))
			}
		}
	case intDom:
		switch o {
		case vExp, vLog, vSqrt, vRsqrt, vRecip, vExpDif:
			return fmt.Errorf("unsupported for integer dtype %v", d.dt)
		}
		for r := 0; r < d.rows; r++ {
			for c := 0; c < d.cols; c++ {
				var y int64
				if b != nil {
					y = b.I(r, c)
				}
				x, err := intOp(o, a.I(r, c), y)
				if err != nil {
					return fmt.Errorf("element (%d, %d): %v", r, c, err)
				}
				d.setI(r, c, x)
			}
		}
	default:
		if o == vShl || o == vShr {
			return fmt.Errorf("shifts need integer dtypes, got %v", d.dt)
		}
		for r := 0; r < d.rows; r++ {
			for c := 0; c < d.cols; c++ {
				var y float64
				if b != nil {
					y = b.F(r, c)
				}
				d.setF(r, c, floatOp(o, a.F(r, c), y), memory.RoundRint)
			}
		}
	}
	d.written()
	return nil
}

func floatOp(o vop, x, y float64) float64 {
	switch o {
	case vAdd:
		return x + y
	case vSub:
		return x - y
	case vMul:
		return x * y
	case vDiv:
		return x / y
	case vMax:
		return math.Max(x, y)
	case vMin:
		return math.Min(x, y)
	case vLrelu:
		if x > 0 || x != x {
			return x
		}
		return x * y
	case vCopy:
		return x
	case vExp:
		return math.Exp(x)
	case vLog:
		return math.Log(x)
	case vSqrt:
		return math.Sqrt(x)
	case vRsqrt:
		return 1 / math.Sqrt(x)
	case vRecip:
		return 1 / x
	case vAbs:
		return math.Abs(x)
	case vNeg:
		return -x
	case vRelu:
		if x > 0 || x != x {
			return x
		}
		return 0
	case vSubRelu:
		return floatOp(vRelu, x-y, 0)
	case vExpDif:
		return math.Exp(x - y)
	}
	return math.NaN()
}

func intOp(o vop, x, y int64) (int64, error) {
	switch o {
	case vAdd:
		return x + y, nil
	case vSub:
		return x - y, nil
	case vMul:
		return x * y, nil
	case vDiv:
		if y == 0 {
			return 0, fmt.Errorf("integer division by zero")
		}
		if y == -1 {
			return -x, nil // MinInt64 / -1 wraps instead of trapping
		}
		return x / y, nil
	case vMax:
		return max(x, y), nil
	case vMin:
		return min(x, y), nil
	case vShl, vShr:
		if y < 0 {
			return 0, fmt.Errorf("negative shift %d", y)
		}
		if y > 63 {
			y = 63
			if o == vShl {
				return 0, nil
			}
		}
		if o == vShl {
			return x << uint(y), nil
		}
		return x >> uint(y), nil
	case vLrelu:
		if x > 0 {
			return x, nil
		}
		return x * y, nil
	case vCopy:
		return x, nil
	case vAbs:
		if x < 0 {
			return -x, nil
		}
		return x, nil
	case vNeg:
		return -x, nil
	case vRelu:
		return max(x, 0), nil
	case vSubRelu:
		return max(x-y, 0), nil
	}
	return 0, fmt.Errorf("unsupported integer op")
}

// vecCvt converts dtypes with #rnd (default rint). Float → int saturates and NaN
// gives 0; int → int saturates too (memory.Round's choice).
func vecCvt(op *asm.COp, args []Operand) error {
	if err := need(args, 2); err != nil {
		return err
	}
	mode, err := roundMode(op)
	if err != nil {
		return err
	}
	d, err := tileView(&args[0], "dst")
	if err != nil {
		return err
	}
	a, err := tileSrc(&args[1], "a", srcTile, &d)
	if err != nil {
		return err
	}
	mode = cvtRound(a.dt, d.dt, attrWord(op, "rnd", "rint"), mode)
	for r := 0; r < d.rows; r++ {
		for c := 0; c < d.cols; c++ {
			switch {
			case a.dt == asm.F32 && d.dt == asm.F32:
				// vconv_f322f32{r,a,f,c,z}: to an integral value
				// (GenCastCallFp32ToFp32), not a copy.
				d.setF(r, c, roundIntegral(a.F(r, c), mode), memory.RoundRint)
			case a.dt == d.dt:
				d.setBits(r, c, a.Bits(r, c))
			case cvtWraps(a.dt, d.dt) && a.dt.IsFloat():
				// Round, saturate into int64, keep the low bits:
				// NaN gives 0, +inf all ones, -inf 0.
				d.setBits(r, c, memory.EncodeInt(d.dt, memory.FloatToInt(asm.I64, a.F(r, c), mode)))
			case cvtWraps(a.dt, d.dt):
				d.setBits(r, c, memory.EncodeInt(d.dt, a.I(r, c)))
			case !a.dt.IsFloat() && !d.dt.IsFloat():
				d.setBits(r, c, satInt(d.dt, a.I(r, c)))
			default:
				d.setF(r, c, a.F(r, c), mode)
			}
		}
	}
	d.written()
	return nil
}

// cvtWraps reports whether tcvt from src to dst wraps rather than
// saturates. pto-isa's TCVT without a saturation argument (the form tcvt
// is) turns saturation off for the narrowing pairs, f16 → u8/i8/i16,
// f32 → i16, i64 → i32 and i32 → i16 (TCvt.hpp:1216-1227 kIsNarrowingCvt,
// 1315-1323; CTRL bit 59 set by ApplySatMode, 1039-1053), and saturation off
// converts to int64 and keeps the low N bits (TCvt.hpp:73-75, 1116-1118):
// f16 300 → i8 44, i32 40000 → i16 -25536. The infinities are taken to
// saturate into int64 first, +inf giving all ones (-1, or 255 as u8) and
// -inf 0, as the header's non-saturating f16 paths do through int32
// (GenCastCallFp16ToInt8_NonSatTorch, 515-558) and as the a2a3 tcvt test's
// golden_truncated expects for the default form
// (tests/npu/a2a3/src/st/testcase/tcvt/gen_data.py, main.cpp:356-363);
// NaN gives 0. Every other pair saturates (SaturationMode::ON), and a float
// destination follows IEEE (A2/A3's default Inf/NaN overflow mode).
func cvtWraps(src, dst asm.DType) bool {
	switch {
	case src == asm.F16:
		return dst == asm.U8 || dst == asm.I8 || dst == asm.I16
	case src == asm.F32, src == asm.I32:
		return dst == asm.I16
	case src == asm.I64:
		return dst == asm.I32
	}
	return false
}

// cvtRound is the rounding pto-isa's TCvt.hpp (3186c381) applies to a src
// → dst conversion asked for with #rnd=word (mode, its reading). The pairs
// with a switch on the mode (GenCastCallFp32ToFp16 and the other
// GenCastCall* helpers) take RINT, ROUND, FLOOR, CEIL and TRUNC, f32 → f16
// ODD too, and send any other (NONE; ODD elsewhere) to their default
// instruction: toward zero (vconv_*z) from a float to an integer, to nearest
// even (vconv_*r, or the unsuffixed vconv_s162f16 and vconv_s322f32, taken
// to round as the r form) otherwise. The special cases
// (GenCastCallSpecialCases: f16/bf16 → f32, i8/u8 → f16, i16 → f32, the
// integer pairs, i32 → f16 through vconv_deq) take no mode; the one that
// can round, i32 → f16, is taken to round to nearest even.
func cvtRound(src, dst asm.DType, word string, mode memory.RoundMode) memory.RoundMode {
	toInt := src.IsFloat() && !dst.IsFloat()
	switch {
	case src == asm.F32 && dst == asm.F16:
		if word == "none" {
			return memory.RoundRint
		}
		return mode
	case toInt, src == asm.F32 && (dst == asm.F32 || dst == asm.BF16), src == asm.I16 && dst == asm.F16,
		(src == asm.I32 || src == asm.I64) && dst == asm.F32:
		switch {
		case word != "none" && mode != memory.RoundOdd:
			return mode
		case toInt:
			return memory.RoundTrunc
		}
	}
	return memory.RoundRint
}

// roundIntegral rounds v to an integral value by mode (cvtRound's modes;
// NaN and the infinities stay).
func roundIntegral(v float64, mode memory.RoundMode) float64 {
	switch mode {
	case memory.RoundRound:
		return math.Round(v)
	case memory.RoundFloor:
		return math.Floor(v)
	case memory.RoundCeil:
		return math.Ceil(v)
	case memory.RoundTrunc:
		return math.Trunc(v)
	}
	return math.RoundToEven(v)
}

// satInt saturates v to integer dtype dt and returns its bits.
func satInt(dt asm.DType, v int64) uint64 {
	switch dt {
	case asm.I64:
		return uint64(v)
	case asm.U64:
		return uint64(max(v, 0))
	}
	return memory.EncodeInt(dt, memory.FloatToInt(dt, float64(v), memory.RoundTrunc))
}

// vecReduce: row reductions write d[r, 0] over a's valid columns; column
// reductions write d[0, c] over a's valid rows. Float sums accumulate in float64
// and round once (the hardware's reduction tree in f32/f16 may differ in the last
// bit); integer sums wrap. The optional tmp operand is not needed here.
func vecReduce(args []Operand, kind vop, rows bool) error {
	vs, err := views(args, "dst", "a")
	if err != nil {
		return err
	}
	d, a := vs[0], vs[1]
	outer, inner := d.rows, a.cols
	if rows {
		if a.rows < d.rows {
			return fmt.Errorf("a has %d valid rows, dst %d", a.rows, d.rows)
		}
		d.cols = min(d.cols, 1)
	} else {
		if a.cols < d.cols {
			return fmt.Errorf("a has %d valid cols, dst %d", a.cols, d.cols)
		}
		outer, inner = d.cols, a.rows
		d.rows = min(d.rows, 1)
	}
	if d.rows == 0 || d.cols == 0 {
		return nil
	}
	if inner == 0 {
		return fmt.Errorf("empty reduction")
	}
	at := func(o, i int) (int, int) {
		if rows {
			return o, i
		}
		return i, o
	}
	intDom := !d.dt.IsFloat() && !a.dt.IsFloat()
	for o := 0; o < outer; o++ {
		dr, dc := o, 0
		if !rows {
			dr, dc = 0, o
		}
		if intDom {
			acc := a.i(at(o, 0))
			for i := 1; i < inner; i++ {
				x := a.i(at(o, i))
				switch kind {
				case vAdd:
					acc += x
				case vProd:
					acc *= x
				case vMax:
					acc = max(acc, x)
				default:
					acc = min(acc, x)
				}
			}
			d.setI(dr, dc, acc)
			continue
		}
		acc := a.f(at(o, 0))
		for i := 1; i < inner; i++ {
			x := a.f(at(o, i))
			switch kind {
			case vAdd:
				acc += x
			case vProd:
				acc *= x
			case vMax:
				acc = math.Max(acc, x)
			default:
				acc = math.Min(acc, x)
			}
		}
		d.setF(dr, dc, acc, memory.RoundRint)
	}
	d.written()
	return nil
}

// vecCmp writes 1 where a cmp b holds and 0 elsewhere, in the mask's own dtype,
// one mask element per position (the hardware packs bits; nothing here reads a
// mask except tsel, which tests each element for non-zero).
func vecCmp(op *asm.COp, args []Operand, scalar bool) error {
	if err := need(args, 3); err != nil {
		return err
	}
	cmp := attrWord(op, "cmp", "eq")
	d, err := tileView(&args[0], "mask")
	if err != nil {
		return err
	}
	a, err := tileSrc(&args[1], "a", srcTile, &d)
	if err != nil {
		return err
	}
	b, err := secondSrc(&args[2], srcKindOf(scalar), a.dt, &d)
	if err != nil {
		return err
	}
	intDom := !a.dt.IsFloat() && !b.dt.IsFloat()
	one, zero := memory.EncodeInt(d.dt, 1), memory.EncodeInt(d.dt, 0)
	for r := 0; r < d.rows; r++ {
		for c := 0; c < d.cols; c++ {
			var lt, eq bool
			unordered := false
			if intDom {
				x, y := a.I(r, c), b.I(r, c)
				lt, eq = x < y, x == y
			} else {
				x, y := a.F(r, c), b.F(r, c)
				lt, eq = x < y, x == y
				unordered = x != x || y != y
			}
			var t bool
			switch cmp {
			case "eq":
				t = eq
			case "ne":
				t = !eq
			case "lt":
				t = lt
			case "le":
				t = lt || eq
			case "gt":
				t = !lt && !eq && !unordered
			case "ge":
				t = !lt && !unordered
			default:
				return fmt.Errorf("unknown comparison #cmp=%s", cmp)
			}
			if t {
				d.setBits(r, c, one)
			} else {
				d.setBits(r, c, zero)
			}
		}
	}
	d.written()
	return nil
}

// vecSel: d = mask != 0 ? a : b (tsel) or a : scalar (tsels).
func vecSel(args []Operand, scalar bool) error {
	if err := need(args, 4); err != nil {
		return err
	}
	d, err := tileView(&args[0], "dst")
	if err != nil {
		return err
	}
	m, err := tileSrc(&args[1], "mask", srcTile, &d)
	if err != nil {
		return err
	}
	a, err := tileSrc(&args[2], "a", srcTile, &d)
	if err != nil {
		return err
	}
	b, err := secondSrc(&args[3], srcKindOf(scalar), d.dt, &d)
	if err != nil {
		return err
	}
	for r := 0; r < d.rows; r++ {
		for c := 0; c < d.cols; c++ {
			set := false
			if m.dt.IsFloat() {
				set = m.F(r, c) != 0
			} else {
				set = m.Bits(r, c) != 0
			}
			s := &b
			if set {
				s = &a
			}
			if s.dt == d.dt {
				d.setBits(r, c, s.Bits(r, c))
			} else if !s.dt.IsFloat() && !d.dt.IsFloat() {
				d.setI(r, c, s.I(r, c))
			} else {
				d.setF(r, c, s.F(r, c), memory.RoundRint)
			}
		}
	}
	d.written()
	return nil
}

// flatView addresses a tile's whole storage: gather/scatter indices are linear
// element numbers over its physical row-major extent (row pitch Cols), valid
// region or not.
func flatView(o *Operand, what string) (view, error) {
	if o.Kind != asm.ArgTile || o.Tile == nil {
		return view{}, fmt.Errorf("%s: expected a tile operand", what)
	}
	t := o.Tile
	v, err := newView(o.Buf, o.Off, memory.TileLayout(t), 0, 0, t.Rows, t.Cols)
	if err != nil {
		return v, fmt.Errorf("%s %%%s: %v", what, t.Name, err)
	}
	return v, nil
}

func (v *view) flatPos(i int64) (int, int, error) {
	if i < 0 || v.cols <= 0 || i >= int64(v.rows)*int64(v.cols) {
		return 0, 0, fmt.Errorf("index %d outside the tile's %d×%d elements", i, v.rows, v.cols)
	}
	return int(i / int64(v.cols)), int(i % int64(v.cols)), nil
}

// vecGather: d[r, c] = a's element number idx[r, c] (see flatView).
func vecGather(args []Operand) error { return vecIndexed(args, false) }

// vecScatter: dst's element number idx[r, c] = a[r, c] over a's valid region.
func vecScatter(args []Operand) error { return vecIndexed(args, true) }

// vecIndexed copies through an index tile: a gather indexes its source, a
// scatter its destination; the other side is walked over its valid region.
func vecIndexed(args []Operand, scatter bool) error {
	if err := need(args, 3); err != nil {
		return err
	}
	if args[0].Kind != asm.ArgTile {
		if scatter {
			return fmt.Errorf("the collective tscatter is the engine's")
		}
		return fmt.Errorf("the collective tgather is the engine's")
	}
	var d, a view
	var err error
	if scatter {
		d, err = flatView(&args[0], "dst")
	} else {
		d, err = tileView(&args[0], "dst")
	}
	if err != nil {
		return err
	}
	if scatter {
		a, err = tileView(&args[1], "a")
	} else {
		a, err = flatView(&args[1], "a")
	}
	if err != nil {
		return err
	}
	walk := &d // the side the index tile is shaped like
	if scatter {
		walk = &a
	}
	idx, err := tileSrc(&args[2], "idx", srcTile, walk)
	if err != nil {
		return err
	}
	if idx.dt.IsFloat() {
		return fmt.Errorf("index tile must be an integer dtype, not %v", idx.dt)
	}
	for r := 0; r < walk.rows; r++ {
		for c := 0; c < walk.cols; c++ {
			dr, dc, ar, ac := r, c, r, c
			if scatter {
				dr, dc, err = d.flatPos(idx.I(r, c))
			} else {
				ar, ac, err = a.flatPos(idx.I(r, c))
			}
			if err != nil {
				return fmt.Errorf("element (%d, %d): %v", r, c, err)
			}
			if a.dt == d.dt {
				d.setBits(dr, dc, a.bits(ar, ac))
			} else {
				d.setF(dr, dc, a.f(ar, ac), memory.RoundRint)
			}
			if scatter {
				d.buf.Written(d.addr(dr, dc), d.es)
			}
		}
	}
	if !scatter {
		d.written()
	}
	return nil
}

// vecTrans: d[r, c] = a[c, r].
func vecTrans(args []Operand) error {
	vs, err := views(args, "dst", "a")
	if err != nil {
		return err
	}
	d, a := vs[0], vs[1]
	if a.rows < d.cols || a.cols < d.rows {
		return fmt.Errorf("a's valid region [%d, %d] does not cover the transpose of [%d, %d]", a.rows, a.cols, d.rows, d.cols)
	}
	if a.dt != d.dt {
		return fmt.Errorf("dtype %v into %v", a.dt, d.dt)
	}
	for r := 0; r < d.rows; r++ {
		for c := 0; c < d.cols; c++ {
			d.setBits(r, c, a.bits(c, r))
		}
	}
	d.written()
	return nil
}
