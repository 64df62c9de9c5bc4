package main

import (
	"slices"
	"testing"
)

// TestBestPointsLikeWithLike: "best" compares points by TFLOPS (a per-work
// metric) when every point has FLOPs, and otherwise by time only among
// points that do the same work (the same -D values).
func TestBestPointsLikeWithLike(t *testing.T) {
	isDefine := func(axis string) bool { return axis == "N" }
	pt := func(i int, n, bw string, us, tflops float64) sweepPoint {
		return sweepPoint{Index: i, OK: true, TimeUS: us, TFLOPS: tflops,
			Params: sweepParams{{"N", n}, {"link.bw", bw}}}
	}
	tests := []struct {
		name string
		pts  []sweepPoint
		want []int
		why  string
	}{
		{"per-work metric across sizes", []sweepPoint{pt(0, "1", "8", 1, 2), pt(1, "2", "8", 3, 3)}, []int{1}, "highest TFLOPS"},
		// Without FLOPs the small N is faster but does less: each N gets
		// its own best, never the small one over the large.
		{"time within the same work", []sweepPoint{pt(0, "1", "8", 2, 0), pt(1, "1", "16", 1, 0), pt(2, "2", "8", 5, 0), pt(3, "2", "16", 4, 0)},
			[]int{1, 3}, "lowest time among points with the same -D values"},
		{"nothing comparable", []sweepPoint{pt(0, "1", "8", 2, 0), pt(1, "2", "8", 1, 0)}, nil, "lowest time among points with the same -D values"},
		{"every point failed", []sweepPoint{{Index: 0}}, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, why := bestPoints(tt.pts, isDefine)
			if !slices.Equal(got, tt.want) || why != tt.why {
				t.Errorf("got %v (%q), want %v (%q)", got, why, tt.want, tt.why)
			}
		})
	}
}
