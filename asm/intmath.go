package asm

import (
	"math"
	"strconv"
)

// Integer arithmetic on values a program chooses (loop bounds, shapes),
// which must neither overflow nor wrap into a plausible value.

// ForTrips is how many trips a for loop from from to to by step (> 0)
// makes, counted without int64 overflow: `for %i = 0 to 2^63-1 step 2^62`
// makes two, where (to - from + step - 1) / step wraps to a negative count.
func ForTrips(from, to, step int64) uint64 {
	if from >= to {
		return 0
	}
	d := uint64(to) - uint64(from) // exact: 0 < to - from < 2^64
	return (d-1)/uint64(step) + 1
}

// ForNext is the loop variable's value after the trip with v (< to), and
// whether another trip runs with it. The variable never wraps: a value past
// 2^63-1 lies past to, so the loop ends there (v += step wrapped to a
// negative value below to, and the loop never ended), and the variable keeps
// 2^63-1 after the loop, where it would otherwise hold v + step (the first
// value not below to).
func ForNext(v, to, step int64) (int64, bool) {
	if v > math.MaxInt64-step {
		return math.MaxInt64, false
	}
	return v + step, v+step < to
}

// DimProduct is the number of elements of a shape: -1 when a dimension is
// not static (0 or less: MLIR's ?), saturating at 2^63-1 instead of wrapping
// (a memref<3074457345618258603x6x16xf16> wrapped to a tile of 2 rows, and
// two dynamic dimensions multiplied to a tile of 1).
func DimProduct(dims []int64) int64 {
	p := int64(1)
	for _, d := range dims {
		switch {
		case d <= 0:
			return -1
		case p > math.MaxInt64/d:
			p = math.MaxInt64
		default:
			p *= d
		}
	}
	return p
}

// FoldBinop is x op y folded at assembly time, where a value is what the
// program means and a wrapped one would be read as plausible (`-D
// ROWS=(1<<62)*4` was 0): msg is non-empty when the exact result does not
// fit int64 (+, -, *, a left shift, MinInt64 / -1), for a shift count
// outside 0..63 and for a division by zero. A run's register arithmetic
// stays EvalBinop's, which wraps as the hardware's scalar unit does.
func FoldBinop(op string, x, y int64) (v int64, msg string) {
	switch op {
	case "+":
		v = x + y
		if (y > 0 && v < x) || (y < 0 && v > x) {
			return 0, overflowMsg(x, op, y)
		}
		return v, ""
	case "-":
		v = x - y
		if (y > 0 && v > x) || (y < 0 && v < x) {
			return 0, overflowMsg(x, op, y)
		}
		return v, ""
	case "*":
		if x == 0 || y == 0 {
			return 0, ""
		}
		v = x * y
		if v/y != x || (x == -1 && y == math.MinInt64) || (y == -1 && x == math.MinInt64) {
			return 0, overflowMsg(x, op, y)
		}
		return v, ""
	case "/":
		if x == math.MinInt64 && y == -1 {
			return 0, overflowMsg(x, op, y)
		}
	case "<<", ">>":
		if y < 0 || y > 63 {
			return 0, "shift count " + i64toa(y) + " out of range: counts are 0 to 63"
		}
		if op == "<<" && (x<<uint(y))>>uint(y) != x {
			return 0, overflowMsg(x, op, y)
		}
	}
	v, ok := binop(op, x, y)
	if !ok {
		return 0, "division by zero"
	}
	return v, ""
}

// FoldNeg is -x folded at assembly time; msg is non-empty for -MinInt64.
func FoldNeg(x int64) (int64, string) {
	if x == math.MinInt64 {
		return 0, "integer overflow: -(" + i64toa(x) + ") does not fit in int64"
	}
	return -x, ""
}

func overflowMsg(x int64, op string, y int64) string {
	return "integer overflow: " + i64toa(x) + " " + op + " " + i64toa(y) + " does not fit in int64"
}

func i64toa(v int64) string { return strconv.FormatInt(v, 10) }

// FoldCall is fn(xs...) (min, max, abs, ceildiv, align) folded at assembly time, with FoldBinop's overflow
// checks: abs(-2^63), ceildiv(-2^63, -1) and an align past 2^63-1.
func FoldCall(fn string, xs []int64) (int64, string) {
	switch fn {
	case "abs":
		if xs[0] == math.MinInt64 {
			return 0, "integer overflow: abs(" + i64toa(xs[0]) + ") does not fit in int64"
		}
	case "ceildiv", "align":
		if xs[1] == 0 {
			return 0, fn + ": division by zero"
		}
		if xs[0] == math.MinInt64 && xs[1] == -1 {
			return 0, "integer overflow: " + fn + "(" + i64toa(xs[0]) + ", -1) does not fit in int64"
		}
		if fn == "align" {
			q, _ := callFn("ceildiv", xs)
			v, msg := FoldBinop("*", q, xs[1])
			if msg != "" {
				return 0, "integer overflow: align(" + i64toa(xs[0]) + ", " + i64toa(xs[1]) + ") does not fit in int64"
			}
			return v, ""
		}
	}
	v, ok := callFn(fn, xs)
	if !ok {
		return 0, fn + ": division by zero"
	}
	return v, ""
}
