package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// TestLargeTraceBounded: the 8-rank allgather_gemm at 2048x2048x1024 on
// 24 AIC and 48 AIV blocks per rank (1.37 million slices, 613 MB as a full
// Perfetto trace) gives a trace, an HTML timeline and an HTML report each
// under 50 MB, the trace and the timeline with every lane present; in
// Chromium the timeline shows every rank's and every core's lane, and
// with #all every pipe lane.
func TestLargeTraceBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("an 8-rank run of 1.4 million slices")
	}
	dir := t.TempDir()
	tr, tl, rep := filepath.Join(dir, "t.json"), filepath.Join(dir, "t.html"), filepath.Join(dir, "r.html")
	code, _, errOut := runCLI("run", "allgather_gemm", "--timing-only", "-D", "RANKS=8", "-D", "M=2048", "-D", "N=2048", "-D", "K=1024",
		"-D", "COMPUTE_BLOCKS=24", "-D", "COMM_BLOCKS=48", "--trace", tr, "--html", tl, "--report", rep)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, f := range []string{tr, tl, rep} {
		st, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		if st.Size() >= 50<<20 {
			t.Errorf("%s is %d MB", filepath.Base(f), st.Size()>>20)
		}
	}
	// Every lane the trace names has slices.
	b, err := os.ReadFile(tr)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		TraceEvents []struct {
			Ph, Name string
			Pid, Tid int
			Args     map[string]any
		} `json:"traceEvents"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	named, used := map[[2]int]bool{}, map[[2]int]bool{}
	procs := map[string]bool{}
	for _, e := range doc.TraceEvents {
		k := [2]int{e.Pid, e.Tid}
		switch {
		case e.Ph == "M" && e.Name == "thread_name":
			named[k] = true
		case e.Ph == "M" && e.Name == "process_name":
			procs[fmt.Sprint(e.Args["name"])] = true
		case e.Ph == "X":
			used[k] = true
		}
	}
	for k := range named {
		if !used[k] {
			t.Errorf("trace lane %v has no slice", k)
		}
	}
	// 8 ranks x (24 AICs x 5 pipes + the AIVs' lanes), as the timeline.
	page, err := os.ReadFile(tl)
	if err != nil {
		t.Fatal(err)
	}
	pipeLanes := regexp.MustCompile(`<g class="lbl" data-lane="\d+" data-level="2"`).FindAll(page, -1)
	if len(pipeLanes) != len(named) {
		t.Errorf("timeline has %d pipe lanes, the trace %d", len(pipeLanes), len(named))
	}
	dom, _ := chromium(t, tl)
	hidden := regexp.MustCompile(`display:\s*none`)
	shownLabel := func(level int, name string) bool {
		re := regexp.MustCompile(`<g class="lbl" data-lane="\d+" data-level="` + fmt.Sprint(level) + `"[^>]*>(<text[^>]*>)[^<]*` + regexp.QuoteMeta(name) + `</text>`)
		m := re.FindString(dom)
		return m != "" && !hidden.MatchString(m)
	}
	for r := 0; r < 8; r++ {
		if !shownLabel(0, fmt.Sprintf(" r%d", r)) {
			t.Errorf("rank %d has no lane shown", r)
		}
		for _, core := range []string{"aic0", "aic23", "aiv0", "aiv47"} {
			if !shownLabel(1, fmt.Sprintf("r%d.%s", r, core)) && procs[fmt.Sprintf("r%d.%s", r, core)] {
				t.Errorf("r%d.%s has no lane shown", r, core)
			}
		}
	}
	// Pipe lanes start folded; #all opens them.
	if shownLabel(2, "r7.aic23 M") {
		t.Error("pipe lanes of a large run are not folded")
	}
	dom, _ = chromium(t, tl+"#all")
	if !shownLabel(2, "r7.aic23 M") || !shownLabel(2, "r0.aic0 MTE2") {
		t.Error("#all does not expand the pipe lanes")
	}
}
