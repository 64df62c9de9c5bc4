package asm

import "math"

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
