package trace

import (
	"bufio"
	"bytes"
	"encoding/json"
	"encoding/xml"
	"image"
	"math"
	"os"

	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/internal/golden"
	"github.com/ptoasm/ptoasm/internal/headless"
	"github.com/ptoasm/ptoasm/machine"
	"github.com/ptoasm/ptoasm/pipes"
	"github.com/ptoasm/ptoasm/programs"
)

type chromeEvent struct {
	Ph   string          `json:"ph"`
	Pid  int             `json:"pid"`
	Tid  int             `json:"tid"`
	Name string          `json:"name"`
	Cat  string          `json:"cat"`
	Ts   *float64        `json:"ts"`
	Dur  *float64        `json:"dur"`
	ID   int             `json:"id"`
	Bp   string          `json:"bp"`
	Args json.RawMessage `json:"args"`
}

type chromeFile struct {
	TraceEvents []chromeEvent  `json:"traceEvents"`
	OtherData   map[string]any `json:"otherData"`
}

func chromeBytes(t *testing.T, name string, defines ...asm.Define) ([]byte, *Recorder) {
	t.Helper()
	rec, m := runProgram(t, name, Options{}, defines...)
	var b bytes.Buffer
	if err := rec.WriteChrome(&b, m.Profile().ClockHz); err != nil {
		t.Fatal(err)
	}
	return b.Bytes(), rec
}

// TestChromeStructure checks what Perfetto relies on: valid JSON, named
// processes and threads, paired flows bound to slices, and proper nesting.
func TestChromeStructure(t *testing.T) {
	for _, tc := range []struct {
		prog      string
		flowKinds []string // flow names that must appear
		lanes     []string // thread names that must appear
		ranks     int
		defs      []asm.Define
	}{
		{"gemm_db", []string{"flag"}, []string{"S", "MTE2", "MTE1", "M", "FIX"}, 1, nil},
		{"ffn_grid/unified_fixed", []string{"flag", "signal"}, []string{"S", "MTE2", "MTE1", "M", "FIX", "V", "MTE3"}, 1, nil},
		// One comm block (one stream over the link) so the compute waits
		// for chunks and the run has signal flows; with the default two the
		// data arrives before it is needed.
		{"allgather_gemm", []string{"flag", "signal"}, []string{"S", "MTE2", "MTE1", "M", "FIX", "MTE3"}, 2, []asm.Define{{Name: "COMM_BLOCKS", Value: "1"}}},
		{"softmax", []string{"flag"}, []string{"S", "MTE2", "V", "MTE3"}, 1, nil},
	} {
		t.Run(tc.prog, func(t *testing.T) {
			b, _ := chromeBytes(t, tc.prog, tc.defs...)
			var f chromeFile
			if err := json.Unmarshal(b, &f); err != nil {
				t.Fatalf("invalid JSON: %v", err)
			}
			if len(f.TraceEvents) == 0 {
				t.Fatal("no events")
			}
			procs := map[int]string{}
			threads := map[[2]int]string{}
			for _, e := range f.TraceEvents {
				if e.Ph != "M" {
					continue
				}
				var a struct{ Name string }
				_ = json.Unmarshal(e.Args, &a)
				switch e.Name {
				case "process_name":
					procs[e.Pid] = a.Name
				case "thread_name":
					threads[[2]int{e.Pid, e.Tid}] = a.Name
				}
			}
			// Times as Perfetto stores them: int64 ns, start and duration
			// converted separately (llround of µs×1000; older versions
			// truncate, so both are checked).
			type slice struct{ ts, end int64 }
			perThread := map[[3]int][]slice{}
			starts, ends := map[int]int{}, map[int]int{}
			flowNames := map[string]bool{}
			nX := 0
			for _, e := range f.TraceEvents {
				switch e.Ph {
				case "X":
					nX++
					key := [2]int{e.Pid, e.Tid}
					if procs[e.Pid] == "" || threads[key] == "" {
						t.Fatalf("slice %q on unnamed lane pid %d tid %d", e.Name, e.Pid, e.Tid)
					}
					if e.Ts == nil || e.Dur == nil || *e.Dur < 0 || e.Name == "" {
						t.Fatalf("bad slice %+v", e)
					}
					for c, ns := range []func(float64) int64{perfettoNs, truncNs} {
						k3 := [3]int{e.Pid, e.Tid, c}
						perThread[k3] = append(perThread[k3], slice{ns(*e.Ts), ns(*e.Ts) + ns(*e.Dur)})
					}
				case "s":
					starts[e.ID]++
					flowNames[e.Name] = true
				case "f":
					ends[e.ID]++
					if e.Bp != "e" {
						t.Errorf("flow end %d not bound to its enclosing slice", e.ID)
					}
				}
			}
			if nX == 0 {
				t.Fatal("no slices")
			}
			for id, n := range starts {
				if n != 1 || ends[id] != 1 {
					t.Errorf("flow %d: %d starts, %d ends", id, n, ends[id])
				}
			}
			for id := range ends {
				if starts[id] == 0 {
					t.Errorf("flow %d ends without a start", id)
				}
			}
			for _, k := range tc.flowKinds {
				if !flowNames[k] {
					t.Errorf("no %q flows (have %v)", k, flowNames)
				}
			}
			names := map[string]bool{}
			for _, n := range threads {
				names[n] = true
			}
			for _, l := range tc.lanes {
				if !names[l] {
					t.Errorf("no %s lane", l)
				}
			}
			rankSeen := map[string]bool{}
			for _, p := range procs {
				r, _, ok := strings.Cut(p, ".")
				if !ok || !strings.HasPrefix(r, "r") {
					t.Errorf("process name %q, want rN.<core>", p)
				}
				rankSeen[r] = true
			}
			if len(rankSeen) != tc.ranks {
				t.Errorf("processes of %d ranks, want %d", len(rankSeen), tc.ranks)
			}
			// Slices on one thread nest or are disjoint, in whole ns: none
			// overlaps another partly, which Perfetto would drop.
			for k3, ss := range perThread {
				key := [2]int{k3[0], k3[1]}
				sort.SliceStable(ss, func(i, j int) bool {
					if ss[i].ts != ss[j].ts {
						return ss[i].ts < ss[j].ts
					}
					return ss[i].end > ss[j].end
				})
				var stack []int64
				for _, s := range ss {
					for len(stack) > 0 && stack[len(stack)-1] <= s.ts {
						stack = stack[:len(stack)-1]
					}
					if len(stack) > 0 && s.end > stack[len(stack)-1] {
						t.Fatalf("%s %s: slice [%v,%v] overlaps its parent ending at %v", procs[key[0]], threads[key], s.ts, s.end, stack[len(stack)-1])
					}
					stack = append(stack, s.end)
				}
			}
		})
	}
}

// perfettoNs and truncNs are Perfetto's JSON importer's µs → ns: llround in
// current versions, truncation in older ones.
func perfettoNs(us float64) int64 { return int64(math.Round(us * 1000)) }
func truncNs(us float64) int64    { return int64(us * 1000) }

func TestChromeDeterministic(t *testing.T) {
	a, _ := chromeBytes(t, "ffn_grid/unified_fixed")
	b, _ := chromeBytes(t, "ffn_grid/unified_fixed")
	if !bytes.Equal(a, b) {
		t.Fatal("two runs gave different traces")
	}
}

// TestTimestampsExact: timestamps and durations are integer cycles (one
// trace µs each) and the clock is in the metadata.
func TestTimestampsExact(t *testing.T) {
	b, _ := chromeBytes(t, "softmax")
	var f struct {
		TraceEvents []struct {
			Ph  string          `json:"ph"`
			Ts  json.RawMessage `json:"ts"`
			Dur json.RawMessage `json:"dur"`
		} `json:"traceEvents"`
		OtherData       map[string]any `json:"otherData"`
		DisplayTimeUnit *string        `json:"displayTimeUnit"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	for _, e := range f.TraceEvents {
		for _, v := range []json.RawMessage{e.Ts, e.Dur} {
			if v != nil && strings.ContainsAny(string(v), ".eE") {
				t.Fatalf("%s event with a non-integer time %s", e.Ph, v)
			}
		}
	}
	if f.DisplayTimeUnit != nil {
		t.Errorf("displayTimeUnit %q: some importers read it as the unit of ts", *f.DisplayTimeUnit)
	}
	if hz, _ := f.OtherData["clock_hz"].(float64); hz != 1.85e9 {
		t.Errorf("otherData.clock_hz = %v", f.OtherData["clock_hz"])
	}
	if ns, _ := f.OtherData["ns_per_cycle"].(float64); math.Abs(ns-1e9/1.85e9) > 1e-12 {
		t.Errorf("otherData.ns_per_cycle = %v", f.OtherData["ns_per_cycle"])
	}
}

func TestJSONString(t *testing.T) {
	var b bytes.Buffer
	j := &jw{}
	j.w = bufio.NewWriter(&b)
	in := "a\"b\\c\n<x>&\x01\xff€"
	j.str(in)
	j.w.Flush()
	var out string
	if err := json.Unmarshal(b.Bytes(), &out); err != nil {
		t.Fatalf("%s: %v", b.String(), err)
	}
	if want := strings.ToValidUTF8(in, "\ufffd"); out != want {
		t.Errorf("round trip: got %q want %q", out, want)
	}
}

// TestTextGolden pins the text trace of a small program.
func TestTextGolden(t *testing.T) {
	rec, _ := runProgram(t, "vec_add", Options{})
	var b bytes.Buffer
	// The run's start and its first 1500 cycles after the kernel's start-up.
	if err := rec.WriteText(&b, Filter{Cores: []string{"aiv0"}, To: pipes.DefaultProfile().KernelStart + 1500}); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "testdata/vec_add.trace", b.Bytes())
}

// TestFilters checks that record-time and output filters keep exactly the
// selected events.
func TestFilters(t *testing.T) {
	all, _ := runProgram(t, "ffn_grid/unified_fixed", Options{})
	// A window a little into the run, past the kernel's start-up.
	ks := pipes.DefaultProfile().KernelStart
	f := Filter{Cores: []string{"aic1"}, From: ks + 1000, To: ks + 3000}
	some, _ := runProgram(t, "ffn_grid/unified_fixed", Options{Filter: f})
	if some.Len() == 0 || some.Len() >= all.Len() || some.Dropped() == 0 {
		t.Fatalf("filtered %d of %d records, dropped %d", some.Len(), all.Len(), some.Dropped())
	}
	for i := range some.recs.n {
		r := some.recs.at(i)
		if r.core >= 0 && some.coreName(r.rank, r.core) != "r0.aic1" {
			t.Errorf("kept an event of %s", some.coreName(r.rank, r.core))
		}
		if r.end < f.From || r.start >= f.To {
			t.Errorf("kept an event at %d-%d outside the window", r.start, r.end)
		}
	}
	// The output filter over the full recording gives the same lines.
	var a, b bytes.Buffer
	if err := all.WriteText(&a, f); err != nil {
		t.Fatal(err)
	}
	if err := some.WriteText(&b, Filter{}); err != nil {
		t.Fatal(err)
	}
	if a.String() != b.String() {
		t.Errorf("record-time and output filters disagree:\n%s\n---\n%s", a.String(), b.String())
	}
	var p bytes.Buffer
	if err := all.WriteText(&p, Filter{Pipes: []asm.Pipe{asm.PipeM}, Ranks: []int{0}}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(p.String()), "\n")[1:]
	if len(lines) == 0 {
		t.Fatal("no M events")
	}
	for _, l := range lines {
		if fs := strings.Fields(l); len(fs) > 3 && fs[2] != "-" && fs[3] != "M" {
			t.Errorf("pipe filter kept %q", l)
		}
	}
}

// svgDoc is the part of the page the tests look at.
type svgNode struct {
	XMLName xml.Name
	Attrs   []xml.Attr `xml:",any,attr"`
	Nodes   []svgNode  `xml:",any"`
}

func (n *svgNode) attr(k string) string {
	for _, a := range n.Attrs {
		if a.Name.Local == k {
			return a.Value
		}
	}
	return ""
}

func (n *svgNode) walk(fn func(*svgNode)) {
	fn(n)
	for i := range n.Nodes {
		n.Nodes[i].walk(fn)
	}
}

func htmlPage(t *testing.T, prog string, markers []Marker) []byte {
	t.Helper()
	rec, m := runProgram(t, prog, Options{})
	var b bytes.Buffer
	if err := rec.WriteHTML(&b, HTMLOptions{Title: prog, ClockHz: m.Profile().ClockHz, Markers: markers}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestHTMLStructure(t *testing.T) {
	page := htmlPage(t, "ffn_grid/unified_fixed", []Marker{{File: "ffn_grid/unified_fixed.pto", Line: 82, Severity: "error", Message: "RAW on %upF32 <test>"}})
	s := string(page)
	for _, bad := range []string{"http://", "https://", "<link", "src="} {
		if strings.Contains(strings.ReplaceAll(s, "http://www.w3.org/2000/svg", ""), bad) {
			t.Errorf("page is not self-contained: contains %q", bad)
		}
	}
	i, j := strings.Index(s, "<svg"), strings.LastIndex(s, "</svg>")
	if i < 0 || j < 0 {
		t.Fatal("no svg")
	}
	var root svgNode
	if err := xml.Unmarshal(page[i:j+len("</svg>")], &root); err != nil {
		t.Fatalf("svg is not well-formed: %v", err)
	}
	lanes, slices, findings := 0, 0, 0
	root.walk(func(n *svgNode) {
		switch {
		case n.XMLName.Local == "rect" && n.attr("class") == "lane":
			lanes++
		case n.XMLName.Local == "rect" && len(n.Nodes) > 0 && n.Nodes[0].XMLName.Local == "title":
			slices++
		case n.XMLName.Local == "g" && n.attr("class") == "finding":
			findings++
		}
	})
	// 4 unified cores × 7 pipes.
	if lanes != 28 || slices == 0 {
		t.Errorf("lanes %d (want 28), slices %d", lanes, slices)
	}
	if findings != 4 { // tmul runs on the V lane of each of the 4 cores
		t.Errorf("finding marks %d, want 4", findings)
	}
	if !strings.Contains(s, "RAW on %upF32 &lt;test&gt;") {
		t.Error("finding message missing or not escaped")
	}
}

// TestHTMLRendersInChromium opens the page in headless Chromium and checks
// that the lanes hold coloured pixels. CI installs chromium; elsewhere the
// test skips.
func TestHTMLRendersInChromium(t *testing.T) {
	page := filepath.Join(t.TempDir(), "t.html")
	if err := os.WriteFile(page, htmlPage(t, "gemm_db", nil), 0o644); err != nil {
		t.Fatal(err)
	}
	_, img := headless.Chromium(t, page, 1400, 900)
	// The plot starts at x = 12 (body margin) + 1 (border) + labelW; lanes
	// start below the title, legend and axis. Count saturated pixels there.
	if n := headless.Coloured(img, image.Rect(12+labelW, 100, 12+labelW+1200, 300)); n < 2000 {
		t.Errorf("only %d coloured pixels in the lane area", n)
	}
}

// TestAllgatherOverlap checks on the pipelined allgather+GEMM that
// communication and compute overlap: some MTE3 slice of an AIV core runs
// while some M slice of an AIC core does.
func TestAllgatherOverlap(t *testing.T) {
	if _, ok := programs.Find("allgather_gemm"); !ok {
		t.Skip("allgather_gemm not written yet")
	}
	rec, _ := runProgram(t, "allgather_gemm", Options{})
	type iv struct{ s, e int64 }
	var mte3, cube []iv
	for i := range rec.recs.n {
		r := rec.recs.at(i)
		if r.end <= r.start || r.core < 0 || r.kind != machine.EvExec {
			continue
		}
		name := rec.coreName(r.rank, r.core)
		switch {
		case r.pipe == asm.PipeMTE3 && strings.Contains(name, "aiv"):
			mte3 = append(mte3, iv{r.start, r.end})
		case r.pipe == asm.PipeM && strings.Contains(name, "aic"):
			cube = append(cube, iv{r.start, r.end})
		}
	}
	if len(mte3) == 0 || len(cube) == 0 {
		t.Fatalf("%d MTE3 slices on AIVs, %d M slices on AICs", len(mte3), len(cube))
	}
	for _, a := range mte3 {
		for _, c := range cube {
			if a.s < c.e && c.s < a.e {
				return
			}
		}
	}
	t.Error("no AIV MTE3 slice overlaps an AIC M slice: communication does not hide behind compute")
}
