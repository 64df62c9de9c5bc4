package asm

import (
	"math"
	"testing"
)

// TestForTrips: a for loop's trips and its variable's steps near the ends
// of int64 neither overflow nor wrap (the variable once wrapped to a
// negative value below the bound and the loop never ended).
func TestForTrips(t *testing.T) {
	const maxI, minI = math.MaxInt64, math.MinInt64
	for _, tc := range []struct {
		from, to, step int64
		want           []int64 // the variable's values, when few
		trips          uint64
	}{
		{0, 10, 3, []int64{0, 3, 6, 9}, 4},
		{0, 9, 3, []int64{0, 3, 6}, 3},
		{5, 5, 1, nil, 0},
		{5, -5, 1, nil, 0},
		{0, maxI, 1 << 62, []int64{0, 1 << 62}, 2},
		{0, maxI, maxI, []int64{0}, 1},
		{maxI - 3, maxI, 1, []int64{maxI - 3, maxI - 2, maxI - 1}, 3},
		{minI, maxI, 1 << 62, []int64{minI, -1 << 62, 0, 1 << 62}, 4},
		{minI, maxI, maxI, []int64{minI, -1, maxI - 1}, 3},
		{minI, maxI, 1, nil, math.MaxUint64},
		{-1 << 62, 1 << 62, 1, nil, 1 << 63},
	} {
		if got := ForTrips(tc.from, tc.to, tc.step); got != tc.trips {
			t.Errorf("ForTrips(%d, %d, %d) = %d, want %d", tc.from, tc.to, tc.step, got, tc.trips)
		}
		if tc.want == nil && tc.trips > 0 {
			continue
		}
		var got []int64
		v, more := tc.from, tc.from < tc.to
		for ; more && len(got) <= len(tc.want); v, more = ForNext(v, tc.to, tc.step) {
			got = append(got, v)
		}
		// After the loop the variable holds the first value not below to,
		// or 2^63-1 where that would pass it.
		if len(got) > 0 && len(got) == len(tc.want) {
			last := got[len(got)-1]
			want := tc.want[len(tc.want)-1] + tc.step
			if last > math.MaxInt64-tc.step {
				want = math.MaxInt64
			}
			if v != want {
				t.Errorf("for %d to %d step %d: %d after the loop, want %d", tc.from, tc.to, tc.step, v, want)
			}
		}
		if len(got) != len(tc.want) {
			t.Errorf("for %d to %d step %d: values %v, want %v", tc.from, tc.to, tc.step, got, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("for %d to %d step %d: values %v, want %v", tc.from, tc.to, tc.step, got, tc.want)
				break
			}
		}
	}
}
