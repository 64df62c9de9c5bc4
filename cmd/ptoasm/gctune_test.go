package main

import "testing"

// TestGCPace checks the collector's pace against its rule: baseGOGC when
// nothing survives, baseGOGC/(1-s) when a fraction s of what was allocated
// since the last collection survived, at most twice the pace before, and
// never above maxGOGC.
func TestGCPace(t *testing.T) {
	const mb = 1 << 20
	for _, tc := range []struct {
		name                      string
		live, prevLive, allocated uint64
		prev, want                int
	}{
		{"first collection, nothing allocated", 4 * mb, 0, 0, baseGOGC, baseGOGC},
		{"the heap shrank", 10 * mb, 20 * mb, 40 * mb, 800, baseGOGC},
		{"nothing survived", 20 * mb, 20 * mb, 40 * mb, 800, baseGOGC},
		{"half survived", 40 * mb, 20 * mb, 40 * mb, baseGOGC, 2 * baseGOGC},
		{"three fifths survived (the 384-rank ring)", 345 * mb, 195 * mb, 250 * mb, 400, baseGOGC * 5 / 2},
		{"three fifths survived, from the base pace", 345 * mb, 195 * mb, 250 * mb, baseGOGC, 2 * baseGOGC},
		{"all survived", 60 * mb, 20 * mb, 40 * mb, maxGOGC, maxGOGC},
		{"all survived, from the base pace", 60 * mb, 20 * mb, 40 * mb, baseGOGC, 2 * baseGOGC},
		{"nearly all survived", 20*mb + 999_999, 20 * mb, 1_000_000, maxGOGC, maxGOGC},
	} {
		if got := gcPace(tc.live, tc.prevLive, tc.allocated, tc.prev); got != tc.want {
			t.Errorf("%s: gcPace(%d, %d, %d, %d) = %d, want %d", tc.name, tc.live, tc.prevLive, tc.allocated, tc.prev, got, tc.want)
		}
	}
}
