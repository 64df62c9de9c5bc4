package sweep

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ptoasm/ptoasm/machine"
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

// FuzzMerge: any bytes given to sweep merge as a shard, beside a real one,
// give a report or an error, never a panic; a report has every point of its
// grid once, each where the grid puts it. Seeds are a sweep's two shards.
func FuzzMerge(f *testing.F) {
	values := [][]string{{"100", "200", "300"}, {"1", "2"}}
	grid := []string{"dma.gm_ub.bw", "K"}
	shards := make([]Report, 2)
	for i := range shards {
		shards[i] = Report{File: "vec_add", Profile: "a2a3", Grid: grid, Values: values, Total: 6, Shard: fmt.Sprintf("%d/2", i)}
	}
	for k := range 6 {
		us := float64(1000+k) / 1000 // at 1 GHz
		p := Point{Index: k, Params: PointParams(grid, values, k), Cycles: int64(1000 + k), TimeUS: us, OK: true,
			Runs: []machine.RunStat{{Name: "r", Start: 0, End: int64(1000 + k), TimeUS: us}}}
		shards[k%2].Points = append(shards[k%2].Points, p)
	}
	var files [2][]byte
	for i := range shards {
		b, err := json.Marshal(&shards[i])
		if err != nil {
			f.Fatal(err)
		}
		files[i] = b
	}
	if _, err := Merge([]string{"0", "1"}, func(name string) ([]byte, error) { return files[name[0]-'0'], nil }); err != nil {
		f.Fatalf("the seed shards do not merge: %v", err)
	}
	f.Add(files[1])
	f.Add(bytes.Replace(files[1], []byte(`"index":1`), []byte(`"index":5`), 1))
	f.Add(bytes.Replace(files[1], []byte(`"total":6`), []byte(`"total":1048576`), 1))
	f.Fuzz(func(t *testing.T, second []byte) {
		read := func(name string) ([]byte, error) {
			if name == "0" {
				return files[0], nil
			}
			return second, nil
		}
		r, err := Merge([]string{"0", "1"}, read)
		if err != nil {
			return
		}
		if len(r.Points) != r.Total {
			t.Fatalf("%d points of %d", len(r.Points), r.Total)
		}
		for k, p := range r.Points {
			if p.Index != k || !slices.Equal(p.Params, PointParams(r.Grid, r.Values, k)) {
				t.Fatalf("point %d is #%d with %s", k, p.Index, p.Params.Text())
			}
		}
	})
}

// TestMergeClocks: a point's time_us (and each run's) must be its cycles at
// the sweep's one clock, or at its clock_hz where the grid sets it; a
// damaged shard's figures were merged and printed as they were.
func TestMergeClocks(t *testing.T) {
	mk := func(grid []string, values [][]string, edit func(p *Point)) []byte {
		r := Report{File: "vec_add", Profile: "a2a3", Grid: grid, Values: values, Total: 2}
		for k := range 2 {
			hz := 1.85e9
			ps := PointParams(grid, values, k)
			if len(grid) > 0 && grid[0] == "clock_hz" {
				fmt.Sscan(ps[0].Value, &hz)
			}
			c := int64(1000 * (k + 1))
			us := float64(c) / hz * 1e6
			p := Point{Index: k, Params: ps, Cycles: c, TimeUS: us, OK: true,
				Runs: []machine.RunStat{{Name: "r", Start: 10, End: 10 + c, TimeUS: us}}}
			if k == 1 && edit != nil {
				edit(&p)
			}
			r.Points = append(r.Points, p)
		}
		b, err := json.Marshal(&r)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	bw := []string{"dma.gm_ub.bw"}
	bwv := [][]string{{"100", "200"}}
	clk := []string{"clock_hz"}
	clkv := [][]string{{"1e9", "2e9"}}
	for _, tc := range []struct {
		name string
		src  []byte
		want string // "" merges
	}{
		{"consistent", mk(bw, bwv, nil), ""},
		{"a clock_hz axis", mk(clk, clkv, nil), ""},
		{"not run", mk(bw, bwv, func(p *Point) { p.Cycles, p.TimeUS, p.Runs, p.OK, p.Error = 0, 0, nil, false, "deadlock" }), ""},
		{"time_us 1e308", mk(bw, bwv, func(p *Point) { p.TimeUS = 1e308 }),
			"s: point #1: 2000 cycles in 1e+308 us is a clock of 2e-299 Hz, outside clock_hz's 1e+06 to 1e+12"},
		{"time_us of another clock", mk(bw, bwv, func(p *Point) { p.TimeUS *= 1.01 }),
			"s: point #1: time_us 1.091891891891892 is not its 2000 cycles at point #0's clock (1.85e+09 Hz: 1.08108 us)"},
		{"time_us not its clock_hz", mk(clk, clkv, func(p *Point) { p.TimeUS *= 2 }),
			"s: point #1: time_us 2 is not its 2000 cycles at clock_hz=2e9 (2e+09 Hz: 1 us)"},
		{"a run's time", mk(bw, bwv, func(p *Point) { p.Runs[0].TimeUS = 5 }),
			`s: point #1: run "r" from 10 to 2010 takes 5 us, not 1.08108 us at 1.85e+09 Hz`},
		{"time without cycles", mk(bw, bwv, func(p *Point) { p.Cycles = 0 }), "s: point #1: 0 cycles in 1.0810810810810811 us"},
	} {
		_, err := Merge([]string{"s"}, func(string) ([]byte, error) { return tc.src, nil })
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
