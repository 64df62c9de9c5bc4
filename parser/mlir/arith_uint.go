package mlir

import (
	"math"
	"math/bits"
	"strconv"
	"strings"

	"github.com/ptoasm/ptoasm/asm"
)

// The arith ops whose result depends on reading the operands as unsigned or
// on rounding toward -inf. PTO-AS expressions are signed int64 (a shift
// right is arithmetic, / and % truncate), so each op lowers to a formula of
// them that gives the MLIR op's value on the operand type's width, folded
// when both operands are known and evaluated by the machine otherwise (one
// formula for both, so a constant and a register give the same answer). A
// value of width w < 64 is kept as its signed (sign-extended) reading, as
// the signed ops see it; an operand written as an unsigned literal (0xFFFFFFFF
// : i32) reads the same.
var uintOps = map[string]bool{"shrui": true, "divui": true, "remui": true, "ceildivui": true,
	"floordivsi": true, "maxui": true, "minui": true}

// intWidth is the bit width of the integer type ts (index is 64, as on the
// device); 0 for anything else.
func intWidth(ts []Tok) int {
	if len(ts) != 1 {
		return 0
	}
	s := ts[0].Text
	if s == "index" {
		return 64
	}
	if w, err := strconv.Atoi(strings.TrimPrefix(s, "i")); err == nil && strings.HasPrefix(s, "i") && w >= 1 && w <= 64 {
		return w
	}
	return 0
}

// minI64 is math.MinInt64 spelled so that printed PTO-AS reads it back
// (-9223372036854775808 would be the negation of a literal out of range).
func minI64(sp asm.Span) *val {
	return &val{kind: vScalar, static: true, known: true, v: math.MinInt64,
		x: &asm.Binary{Span: sp, Op: "-", X: num(sp, -math.MaxInt64), Y: num(sp, 1)}}
}

// uintArith lowers arith.<name> a, b on w-bit integers.
func uintArith(sp asm.Span, name string, w int, a, b *val) *val {
	if a.known && b.known {
		if v, ok := uintFold(name, w, a.v, b.v); ok {
			return lit(sp, v)
		}
	}
	bin := func(o string, x, y *val) *val { return binVal(sp, o, x, y) }
	n := func(v int64) *val { return lit(sp, v) }
	if name == "floordivsi" {
		// The truncated quotient, one less when a remainder is left and
		// its sign is not b's (negating a would wrap at -2^63).
		r := bin("%", a, b)
		return bin("-", bin("/", a, b), bin("&&", bin("!=", r, n(0)), bin("!=", bin("<", r, n(0)), bin("<", b, n(0)))))
	}
	if w < 64 {
		// Below 64 bits the unsigned reading u fits a non-negative int64,
		// where the signed ops are the unsigned ones; the result is read
		// back signed: (t ^ s) - s with s = 2^(w-1) (not for i1, 0 or 1).
		mask := n(int64(1)<<w - 1)
		ua, ub := bin("&", a, mask), bin("&", b, mask)
		var t *val
		switch name {
		case "shrui":
			t = bin(">>", ua, b)
		case "divui":
			t = bin("/", ua, ub)
		case "remui":
			t = bin("%", ua, ub)
		case "ceildivui":
			t = callVal(sp, "ceildiv", ua, ub)
		case "maxui":
			t = callVal(sp, "max", ua, ub)
		case "minui":
			t = callVal(sp, "min", ua, ub)
		}
		if w == 1 {
			return t
		}
		s := n(int64(1) << (w - 1))
		return bin("-", bin("^", t, s), s)
	}
	// 64 bits: flipping the sign bit maps unsigned order to signed order.
	flip := func(x *val) *val { return bin("^", x, minI64(sp)) }
	sel := func(c, x, y *val) *val { // c is 0 or 1
		return bin("+", bin("*", c, x), bin("*", bin("-", n(1), c), y))
	}
	geu := func(x, y *val) *val { return bin(">=", flip(x), flip(y)) }
	switch name {
	case "shrui":
		if b.known {
			if b.v == 0 {
				return a
			}
			// The arithmetic shift's copies of the sign bit cleared.
			return bin("&", bin(">>", a, b), n(math.MaxInt64>>(b.v-1)))
		}
		// As above, and for a count of 0 the sign bit put back.
		low := bin("&", bin(">>", a, b), bin(">>", n(math.MaxInt64), callVal(sp, "max", bin("-", b, n(1)), n(0))))
		return bin("+", low, bin("*", bin("&", a, minI64(sp)), bin("==", b, n(0))))
	case "maxui":
		return flip(callVal(sp, "max", flip(a), flip(b)))
	case "minui":
		return flip(callVal(sp, "min", flip(a), flip(b)))
	}
	// Unsigned 64-bit division from signed (Hacker's Delight 9-3, the
	// machine's int64 arithmetic wraps as the device's does): a divisor at
	// or above 2^63 goes at most once; otherwise halve the dividend (a
	// logical shift), divide, double, and correct by one.
	half := bin("&", bin(">>", a, n(1)), n(math.MaxInt64))
	q0 := bin("<<", bin("/", half, b), n(1))
	r0 := bin("-", a, bin("*", q0, b))
	q := sel(bin("<", b, n(0)), geu(a, b), bin("+", q0, geu(r0, b)))
	switch name {
	case "divui":
		return q
	case "remui":
		return bin("-", a, bin("*", q, b))
	}
	// ceildivui: the quotient, plus one when a remainder is left.
	return bin("+", q, bin("!=", bin("-", a, bin("*", q, b)), n(0)))
}

// uintFold is arith.<name> on known w-bit operands; ok is false where MLIR
// has no value (division by zero, a shift count not below w).
func uintFold(name string, w int, x, y int64) (int64, bool) {
	mask := uint64(math.MaxUint64)
	if w < 64 {
		mask = 1<<w - 1
	}
	ux, uy := uint64(x)&mask, uint64(y)&mask
	var r uint64
	switch name {
	case "floordivsi":
		if y == 0 || (x == math.MinInt64 && y == -1) {
			return 0, false
		}
		q := x / y
		if (x%y != 0) && ((x < 0) != (y < 0)) {
			q--
		}
		return q, true
	case "shrui":
		if y < 0 || y >= int64(w) {
			return 0, false
		}
		r = ux >> uint(y)
	case "divui", "remui", "ceildivui":
		if uy == 0 {
			return 0, false
		}
		q, rem := bits.Div64(0, ux, uy)
		switch name {
		case "divui":
			r = q
		case "remui":
			r = rem
		default:
			r = q
			if rem != 0 {
				r++
			}
		}
	case "maxui":
		r = max(ux, uy)
	case "minui":
		r = min(ux, uy)
	}
	if w < 64 && w > 1 && r&(1<<(w-1)) != 0 {
		return int64(r | ^mask), true // sign-extend
	}
	return int64(r), true
}

// unsignedOrder maps w-bit a and b to values whose signed order is their
// unsigned one: the unsigned readings below 64 bits, the sign bit flipped
// at 64 (arith.cmpi ult, ule, ugt, uge).
func unsignedOrder(sp asm.Span, w int, a, b *val) (*val, *val) {
	if a.known && b.known {
		x, y := uint64(a.v), uint64(b.v)
		if w < 64 {
			x, y = x&(1<<w-1), y&(1<<w-1)
		}
		// Same order as x, y: both below 2^63, or both flipped.
		return lit(sp, int64(x^1<<63)), lit(sp, int64(y^1<<63))
	}
	if w < 64 {
		mask := lit(sp, int64(1)<<w-1)
		return binVal(sp, "&", a, mask), binVal(sp, "&", b, mask)
	}
	return binVal(sp, "^", a, minI64(sp)), binVal(sp, "^", b, minI64(sp))
}
