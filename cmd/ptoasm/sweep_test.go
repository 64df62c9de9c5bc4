package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ptoasm/ptoasm/internal/golden"
	"github.com/ptoasm/ptoasm/machine/sweep"
)

// The small grid most tests use: two profile values by two shapes of gemm_db.
var sweepArgs = []string{"sweep", "gemm_db", "--set", "dma.gm_l1.bw=64,128", "-D", "K=256,512"}

func args(base []string, more ...string) []string {
	return append(append([]string(nil), base...), more...)
}

// Through the CLI: --set axes come before -D axes whatever the flag order,
// each family in command-line order (machine/sweep tests the grid itself).
func TestSweepGridOrder(t *testing.T) {
	code, out, errOut := runCLI("sweep", "gemm_db", "-D", "K=256,512", "--set", "dma.gm_l1.bw=64,128",
		"--set", "dma.gm_ub.bw=128", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rep sweep.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if want := []string{"dma.gm_l1.bw", "dma.gm_ub.bw", "K"}; !cmp.Equal(rep.Grid, want) {
		t.Errorf("grid %q, want %q", rep.Grid, want)
	}
	var got []string
	for i, p := range rep.Points {
		if p.Index != i {
			t.Errorf("point %d has index %d", i, p.Index)
		}
		got = append(got, p.Params.Text())
	}
	want := []string{
		"dma.gm_l1.bw=64 dma.gm_ub.bw=128 K=256", "dma.gm_l1.bw=64 dma.gm_ub.bw=128 K=512",
		"dma.gm_l1.bw=128 dma.gm_ub.bw=128 K=256", "dma.gm_l1.bw=128 dma.gm_ub.bw=128 K=512",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("CLI points (-want +got):\n%s", d)
	}
	// params keeps grid order in the JSON text, not encoding/json's sorted map order.
	if i, j := strings.Index(out, `"dma.gm_ub.bw": "128"`), strings.Index(out, `"K": "256"`); i < 0 || j < 0 || i > j {
		t.Errorf("params not in grid order:\n%s", out)
	}
	// The points really differ: a faster GM->L1 path is faster, a longer K is longer.
	c := func(k int) int64 { return rep.Points[k].Cycles }
	if !(c(0) > c(2) && c(1) > c(3) && c(1) > c(0) && c(3) > c(2)) {
		t.Errorf("cycles do not follow the grid: %d %d %d %d", c(0), c(1), c(2), c(3))
	}
}

// The output is the same bytes whatever the number of workers.
func TestSweepDeterministic(t *testing.T) {
	for _, format := range []string{"text", "json"} {
		t.Run(format, func(t *testing.T) {
			var outs []string
			for _, jobs := range []string{"1", "4", "0"} {
				code, out, errOut := runCLI(args(sweepArgs, "--format", format, "--jobs", jobs)...)
				if code != 0 {
					t.Fatalf("--jobs %s: exit %d: %s", jobs, code, errOut)
				}
				outs = append(outs, out)
			}
			for i := 1; i < len(outs); i++ {
				if outs[i] != outs[0] {
					t.Errorf("output %d differs from --jobs 1:\n%s\n---\n%s", i, outs[0], outs[i])
				}
			}
			if format == "text" {
				golden.Check(t, "testdata/sweep_gemm_db.golden", []byte(outs[0]))
			}
		})
	}
}

// The jobs of a sweep share one --max-memory. A point that needs more than
// its share (vec_add at ROWS=4096 needs 28 MiB; two jobs get 20 MiB each of
// 40) runs again alone with the whole budget, so every point still runs and
// the output is the same as with one job; a point over the whole budget
// fails alike whatever --jobs is.
func TestSweepSharedBudget(t *testing.T) {
	for _, tc := range []struct {
		budget string
		ok     bool
	}{{"40MiB", true}, {"24MiB", false}} {
		var outs []string
		for _, jobs := range []string{"1", "2"} {
			code, out, errOut := runCLI("sweep", "vec_add", "-D", "ROWS=1024,4096", "--max-memory", tc.budget, "--jobs", jobs, "--format", "json")
			if want := map[bool]int{true: 0, false: 1}[tc.ok]; code != want {
				t.Fatalf("--max-memory %s --jobs %s: exit %d, want %d: %s", tc.budget, jobs, code, want, errOut)
			}
			outs = append(outs, out)
		}
		if outs[1] != outs[0] {
			t.Errorf("--max-memory %s: --jobs 2 differs from --jobs 1:\n%s\n---\n%s", tc.budget, outs[0], outs[1])
		}
		var rep sweep.Report
		if err := json.Unmarshal([]byte(outs[0]), &rep); err != nil {
			t.Fatal(err)
		}
		if len(rep.Points) != 2 || (rep.Points[1].Error == "") != tc.ok ||
			!tc.ok && !strings.Contains(rep.Points[1].Error, "--max-memory") {
			t.Errorf("--max-memory %s: points %+v", tc.budget, rep.Points)
		}
	}
}

// shardFiles runs every shard of n into dir and returns the file names.
func shardFiles(t *testing.T, dir string, base []string, n int) []string {
	t.Helper()
	var files []string
	for i := range n {
		code, out, errOut := runCLI(args(base, "--shard", fmt.Sprintf("%d/%d", i, n), "--jobs", "2")...)
		if code != 0 && code != 1 {
			t.Fatalf("shard %d/%d: exit %d: %s", i, n, code, errOut)
		}
		var rep sweep.Report
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("shard %d/%d is not JSON: %v", i, n, err)
		}
		if want := fmt.Sprintf("%d/%d", i, n); rep.Shard != want {
			t.Errorf("shard tag %q, want %q", rep.Shard, want)
		}
		for _, p := range rep.Points {
			if p.Index%n != i {
				t.Errorf("shard %d/%d holds point %d", i, n, p.Index)
			}
		}
		f := filepath.Join(dir, fmt.Sprintf("shard-%d-of-%d.json", i, n))
		if err := os.WriteFile(f, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return files
}

// Merging every shard gives the unsharded output byte for byte, in both
// formats, whatever the shard count (more shards than points included) and the
// order of the files.
func TestSweepShardMerge(t *testing.T) {
	bases := map[string][]string{
		"gemm_db":  sweepArgs,
		"failing":  {"sweep", "testdata/sweep_deadlock.pto", "-D", "STALL=0,1,NOPE"},
		"no axes":  {"sweep", "vec_add", "--timing-only"},
		"3 values": {"sweep", "gemm_db", "--set", "dma.gm_l1.bw=64,128,256", "-D", "K=256"},
	}
	for _, name := range []string{"gemm_db", "failing", "no axes", "3 values"} {
		base := bases[name]
		for _, format := range []string{"text", "json"} {
			wantCode, want, _ := runCLI(args(base, "--format", format)...)
			for _, n := range []int{1, 2, 3, 5} {
				t.Run(fmt.Sprintf("%s/%s/%d", name, format, n), func(t *testing.T) {
					files := shardFiles(t, t.TempDir(), base, n)
					// Reverse the files: merge must not depend on their order.
					rev := make([]string, len(files))
					for i, f := range files {
						rev[len(files)-1-i] = f
					}
					code, got, errOut := runCLI(append([]string{"sweep", "merge", "--format", format}, rev...)...)
					if code != wantCode {
						t.Errorf("merge exit %d, unsharded exit %d (%s)", code, wantCode, errOut)
					}
					if got != want {
						t.Errorf("merge differs from the unsharded run:\n--- unsharded\n%s\n--- merged\n%s", want, got)
					}
				})
			}
		}
	}
}

func TestSweepMergeErrors(t *testing.T) {
	dir := t.TempDir()
	files := shardFiles(t, dir, sweepArgs, 2)
	other := shardFiles(t, t.TempDir(), []string{"sweep", "gemm_db", "--set", "dma.gm_l1.bw=64,256", "-D", "K=256,512"}, 2)
	otherGrid := shardFiles(t, t.TempDir(), []string{"sweep", "gemm_db", "--set", "dma.gm_ub.bw=64,128", "-D", "K=256,512"}, 2)
	timing := shardFiles(t, t.TempDir(), args(sweepArgs, "--timing-only"), 2)

	// edit rewrites a shard through a function of its decoded report.
	edit := func(name string, f func(r *sweep.Report)) string {
		b, err := os.ReadFile(files[0])
		if err != nil {
			t.Fatal(err)
		}
		var r sweep.Report
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		f(&r)
		out, err := json.Marshal(&r)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, out, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name  string
		files []string
		want  string
	}{
		{"missing shard", files[:1], "2 of 4 points missing (a shard left out?): #1, #3"},
		{"duplicate file", []string{files[0], files[0], files[1]}, "point #0 appears twice"},
		{"duplicate point", []string{files[0], edit("dup.json", func(r *sweep.Report) { r.Shard = "" }), files[1]},
			"point #0 is also in"},
		{"different values", []string{files[0], other[1]}, "not the same sweep as " + files[0] + ": dma.gm_l1.bw values 64,128 vs 64,256"},
		{"different grid", []string{files[0], otherGrid[1]}, "grid dma.gm_l1.bw,K vs dma.gm_ub.bw,K"},
		{"different mode", []string{files[0], timing[1]}, "timing_only false vs true"},
		{"point outside grid", []string{edit("out.json", func(r *sweep.Report) { r.Shard = ""; r.Points[0].Index = 9 })},
			"point #9 is outside the grid of 4 points"},
		{"point in wrong shard", []string{edit("wrong.json", func(r *sweep.Report) { r.Points[0].Index = 1 })},
			"point #1 does not belong to shard 0/2"},
		{"tampered params", []string{edit("params.json", func(r *sweep.Report) { r.Points[0].Params[1].Value = "999" })},
			"point #0 has parameters dma.gm_l1.bw=64 K=999, the grid says dma.gm_l1.bw=64 K=256"},
		{"bad total", []string{edit("total.json", func(r *sweep.Report) { r.Total = 5 })}, "total 5 does not match the grid"},
		{"bad shard tag", []string{edit("tag.json", func(r *sweep.Report) { r.Shard = "2/2" })}, "--shard 2/2: want I/N"},
		{"negative cycles", []string{edit("neg.json", func(r *sweep.Report) { r.Points[0].Cycles = -5 })}, "point #0: negative cycle count -5"},
		{"negative time", []string{edit("negt.json", func(r *sweep.Report) { r.Points[0].TimeUS = -1 })}, "point #0: time_us -1 and tflops"},
		{"backwards run", []string{edit("run.json", func(r *sweep.Report) { r.Points[0].Runs[0].End = r.Points[0].Runs[0].Start - 1 })},
			"is not a span of time"},
		{"partial shard", []string{edit("partial.json", func(r *sweep.Report) {
			r.Points = r.Points[:1]
			r.Partial = "interrupted (Ctrl-C) after 1 of 2 points"
		}), files[1]}, "partial.json: a partial shard (interrupted (Ctrl-C) after 1 of 2 points): run it again to the end"},
		{"not JSON", []string{write("junk.json", "cycles 12\n")}, "not a sweep report"},
		{"run report", []string{write("runreport.json", `{"cycles": 1, "runs": []}`)}, "not a sweep report"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(append([]string{"sweep", "merge"}, tc.files...)...)
			if code != 2 {
				t.Errorf("exit %d, want 2", code)
			}
			if out != "" {
				t.Errorf("stdout not empty:\n%s", out)
			}
			if !strings.Contains(errOut, tc.want) {
				t.Errorf("stderr %q does not contain %q", errOut, tc.want)
			}
		})
	}
}

// A point that deadlocks, fails a check or has a bad value is a row with its
// error; the others still run, and the sweep exits 1.
func TestSweepFailingPoints(t *testing.T) {
	code, out, errOut := runCLI("sweep", "testdata/sweep_deadlock.pto", "-D", "STALL=0,1,NOPE", "--format", "json")
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	if want := "ptoasm sweep: 2 of 3 points failed\n"; errOut != want {
		t.Errorf("stderr %q, want %q", errOut, want)
	}
	var rep sweep.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	wants := []struct {
		ok  bool
		err string
	}{
		{true, ""},
		{false, "deadlock"},
		{false, "-D STALL: undefined: NOPE"},
	}
	if len(rep.Points) != len(wants) {
		t.Fatalf("%d points, want %d", len(rep.Points), len(wants))
	}
	for i, w := range wants {
		p := rep.Points[i]
		if p.OK != w.ok || !strings.Contains(p.Error, w.err) || (w.err == "") != (p.Error == "") {
			t.Errorf("point %d: ok=%v error=%q; want ok=%v error containing %q", i, p.OK, p.Error, w.ok, w.err)
		}
		if !p.OK && p.Cycles != 0 {
			t.Errorf("point %d failed to run but reports %d cycles", i, p.Cycles)
		}
	}
	if rep.Points[0].Cycles <= 0 {
		t.Errorf("the passing point has no cycles")
	}

	// The text table pins the row format of failures.
	code, out, errOut = runCLI("sweep", "testdata/sweep_deadlock.pto", "-D", "STALL=0,1,NOPE", "--set", "dma.gm_ub.bw=128,x")
	golden.Check(t, "testdata/sweep_failing.golden", fmt.Appendf(nil, "exit %d\n-- stdout --\n%s-- stderr --\n%s", code, out, errOut))

	// A failed output check keeps the point's timing.
	code, out, _ = runCLI("sweep", "gemm_db", "-D", "K=256,300", "--format", "json")
	if code != 1 {
		t.Errorf("failed check: exit %d, want 1", code)
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if p := rep.Points[1]; p.OK || !strings.HasPrefix(p.Error, "check @C failed") || p.Cycles <= 0 {
		t.Errorf("K=300: ok=%v error=%q cycles=%d; want a failed check with its cycles", p.OK, p.Error, p.Cycles)
	}
}

// Programs with named mode runs get per-run columns, speed-up and overlap.
func TestSweepModes(t *testing.T) {
	code, out, errOut := runCLI("sweep", "allgather_gemm", "--timing-only", "-D", "MODE=all,pipelined")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	golden.Check(t, "testdata/sweep_allgather_modes.golden", []byte(out))
	code, out, _ = runCLI("sweep", "allgather_gemm", "--timing-only", "-D", "MODE=all,pipelined", "--format", "json")
	var rep sweep.Report
	if err := json.Unmarshal([]byte(out), &rep); code != 0 || err != nil {
		t.Fatalf("exit %d, %v", code, err)
	}
	all, piped := rep.Points[0], rep.Points[1]
	if all.Speedup == nil || all.Overlap == nil || *all.Speedup <= 1 {
		t.Errorf("MODE=all: speedup %v overlap %v; want a speed-up above 1", all.Speedup, all.Overlap)
	}
	if piped.Speedup != nil || len(piped.Runs) == 0 {
		t.Errorf("MODE=pipelined: speedup %v with %d runs; want no speed-up (no sequential pair)", piped.Speedup, len(piped.Runs))
	}
}

func TestSweepUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no file", []string{"sweep"}, `expected "<file>"`},
		{"unknown program", []string{"sweep", "nope_program"}, "no such file"},
		{"unknown key", []string{"sweep", "gemm_db", "--set", "nope=1,2"}, `--set nope=1,2: unknown profile key "nope"`},
		{"no equals", []string{"sweep", "gemm_db", "-D", "K"}, "-D K: want NAME=V1,V2,..."},
		{"empty value", []string{"sweep", "gemm_db", "-D", "K=256,"}, "empty value"},
		{"duplicate axis", []string{"sweep", "gemm_db", "-D", "K=256", "-D", "K=512"}, "K is already an axis"},
		{"bad shard", []string{"sweep", "gemm_db", "--shard", "2/2"}, "--shard 2/2: want I/N with 0 <= I < N"},
		{"bad shard form", []string{"sweep", "gemm_db", "--shard", "1"}, "want I/N"},
		{"huge grid", []string{"sweep", "gemm_db", "-D", "K=" + strings.Repeat("1,", 1100) + "1", "-D", "M=" + strings.Repeat("1,", 1100) + "1"},
			"more than 1048576 points"},
		{"merge nothing", []string{"sweep", "merge"}, `expected "<files> ..."`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(tc.args...)
			if code != 2 || out != "" || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2, no stdout, stderr containing %q", code, out, errOut, tc.want)
			}
		})
	}
}
