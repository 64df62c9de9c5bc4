package sweep

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSplitList(t *testing.T) {
	tests := []struct {
		in      string
		want    []string
		wantErr string
	}{
		{"64", []string{"64"}, ""},
		{"64,128, 256", []string{"64", "128", "256"}, ""},
		{"min(K,512),K*2", []string{"min(K,512)", "K*2"}, ""},
		{"a[1,2],b", []string{"a[1,2]", "b"}, ""},
		{"", nil, "empty value"},
		{"1,,2", nil, "empty value"},
		{"1,", nil, "empty value"},
		{"min(1,2", nil, "unbalanced"},
		{"1)", nil, "unbalanced"},
	}
	for _, tc := range tests {
		got, err := SplitList(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("SplitList(%q) error %v, want %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil || !cmp.Equal(got, tc.want) {
			t.Errorf("SplitList(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

// The first axis is outermost, the last varies fastest.
func TestGridOrder(t *testing.T) {
	tests := []struct {
		name   string
		grid   []string
		values [][]string
		want   []string // paramText of each point in index order
	}{
		{"no axes", nil, nil, []string{""}},
		{"one axis", []string{"a"}, [][]string{{"1", "2", "3"}}, []string{"a=1", "a=2", "a=3"}},
		{"two axes", []string{"a", "b"}, [][]string{{"1", "2"}, {"x", "y", "z"}},
			[]string{"a=1 b=x", "a=1 b=y", "a=1 b=z", "a=2 b=x", "a=2 b=y", "a=2 b=z"}},
		{"three axes", []string{"a", "b", "c"}, [][]string{{"1", "2"}, {"x"}, {"p", "q"}},
			[]string{"a=1 b=x c=p", "a=1 b=x c=q", "a=2 b=x c=p", "a=2 b=x c=q"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n, err := GridSize(tc.values)
			if err != nil || n != len(tc.want) {
				t.Fatalf("gridSize = %d, %v; want %d", n, err, len(tc.want))
			}
			var got []string
			for k := range n {
				got = append(got, PointParams(tc.grid, tc.values, k).Text())
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("points (-want +got):\n%s", d)
			}
		})
	}
}

// TestBestPointsLikeWithLike: "best" compares points by TFLOPS (a per-work
// metric) when every point has FLOPs, and otherwise by time only among
// points that do the same work (the same -D values).
func TestBestPointsLikeWithLike(t *testing.T) {
	isDefine := func(axis string) bool { return axis == "N" }
	pt := func(i int, n, bw string, us, tflops float64) Point {
		return Point{Index: i, OK: true, TimeUS: us, TFLOPS: tflops,
			Params: Params{{"N", n}, {"link.bw", bw}}}
	}
	tests := []struct {
		name string
		pts  []Point
		want []int
		why  string
	}{
		{"per-work metric across sizes", []Point{pt(0, "1", "8", 1, 2), pt(1, "2", "8", 3, 3)}, []int{1}, "highest TFLOPS"},
		// Without FLOPs the small N is faster but does less: each N gets
		// its own best, never the small one over the large.
		{"time within the same work", []Point{pt(0, "1", "8", 2, 0), pt(1, "1", "16", 1, 0), pt(2, "2", "8", 5, 0), pt(3, "2", "16", 4, 0)},
			[]int{1, 3}, "lowest time among points with the same -D values"},
		{"nothing comparable", []Point{pt(0, "1", "8", 2, 0), pt(1, "2", "8", 1, 0)}, nil, "lowest time among points with the same -D values"},
		{"every point failed", []Point{{Index: 0}}, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, why := Best(tt.pts, isDefine)
			if !slices.Equal(got, tt.want) || why != tt.why {
				t.Errorf("got %v (%q), want %v (%q)", got, why, tt.want, tt.why)
			}
		})
	}
}
