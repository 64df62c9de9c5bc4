package hazard

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/internal/golden"
	"github.com/ptoasm/ptoasm/internal/sarifcheck"
	"github.com/ptoasm/ptoasm/machine"
	"github.com/ptoasm/ptoasm/parser"
)

// reportFindings is a mix: a WAR with a count and iterations, an unpaired
// set (one site) and a same-pipe note.
func reportFindings() []Finding {
	s := newSim(Options{})
	ffn(s, false, false)
	p := &prog{}
	set := p.op("set_flag", 12, S)
	s.set(0, 0, MTE1, M, 2, set)
	s.ev(machine.Event{Kind: machine.EvKernelEnd, Agent: ag(0, 0, S)})
	samePipe(s, MTE2, false)
	return s.d.Findings()
}

var reportSrc = asm.Sources{"t.pto": []byte(strings.Repeat("    nop\n", 5) +
	"    tallgather %chunk[(%j+1) & 1], @win[0]\n" + strings.Repeat("    nop\n", 2) +
	"    tmov %a, %chunk[%j & 1]\n" + strings.Repeat("    nop\n", 2) +
	"    set_flag MTE1, M, 2\n" + strings.Repeat("    nop\n", 10))}

func TestWriteText(t *testing.T) {
	var b bytes.Buffer
	WriteText(&b, reportFindings(), reportSrc)
	golden.Check(t, "testdata/report.txt", b.Bytes())
}

func TestWriteJSON(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJSON(&b, reportFindings()); err != nil {
		t.Fatal(err)
	}
	var v struct {
		Findings []map[string]any `json:"findings"`
	}
	if err := json.Unmarshal(b.Bytes(), &v); err != nil {
		t.Fatal(err)
	}
	for _, f := range v.Findings {
		for _, k := range []string{"kind", "severity", "message", "first", "range", "count"} {
			if _, ok := f[k]; !ok {
				t.Errorf("finding lacks %q: %v", k, f)
			}
		}
	}
	golden.Check(t, "testdata/report.json", b.Bytes())
}

func TestWriteSARIF(t *testing.T) {
	var b bytes.Buffer
	tool := SARIFTool{Name: "ptoasm", Version: "1.0.0", Main: "t.pto"}
	if err := WriteSARIF(&b, reportFindings(), nil, tool); err != nil {
		t.Fatal(err)
	}
	if err := sarifcheck.Validate(b.Bytes()); err != nil {
		t.Errorf("the log of findings is not valid SARIF for code scanning:\n%v", err)
	}
	golden.Check(t, "testdata/report.sarif", b.Bytes())
	// An empty report is still a valid log with an empty results array.
	b.Reset()
	if err := WriteSARIF(&b, nil, nil, tool); err != nil || !strings.Contains(b.String(), `"results": []`) {
		t.Errorf("empty: %v %s", err, b.String())
	}
	if err := sarifcheck.Validate(b.Bytes()); err != nil {
		t.Errorf("the empty log: %v", err)
	}
}

// A file that does not assemble still gets a log: its diagnostics are the
// results, so code scanning shows them.
func TestWriteSARIFDiagnostics(t *testing.T) {
	src := []byte("const N = 4\nkernel k : aiv {\n    tadd %x, \n}\nexpect @Q == rowsums(@Q)\n")
	_, errs := parser.ParseFile("bad.pto", src)
	if !errs.HasErrors() {
		t.Fatal("the fixture parses")
	}
	errs = append(errs, &asm.Diagnostic{
		Span: asm.Span{Pos: asm.Pos{File: "bad.pto", Line: 5, Col: 14}}, Severity: asm.SevError, Msg: "unknown golden function rowsums",
		Notes: []*asm.Diagnostic{{Span: asm.Span{Pos: asm.Pos{File: "bad.pto", Line: 5, Col: 8}}, Severity: asm.SevNote, Msg: "in this check"}},
	})
	var b bytes.Buffer
	if err := WriteSARIF(&b, nil, errs, SARIFTool{Name: "ptoasm", Version: "dev", Main: "bad.pto"}); err != nil {
		t.Fatal(err)
	}
	if err := sarifcheck.Validate(b.Bytes()); err != nil {
		t.Errorf("the log of a syntax error is not valid SARIF for code scanning:\n%v", err)
	}
	var log struct {
		Runs []struct {
			Results []struct {
				RuleID  string `json:"ruleId"`
				Level   string `json:"level"`
				Message struct{ Text string }
			}
		}
	}
	if err := json.Unmarshal(b.Bytes(), &log); err != nil {
		t.Fatal(err)
	}
	rs := log.Runs[0].Results
	if len(rs) != len(errs) {
		t.Fatalf("%d results for %d diagnostics", len(rs), len(errs))
	}
	for i, r := range rs {
		if r.RuleID != "assembly" || r.Level != "error" || r.Message.Text != errs[i].Msg {
			t.Errorf("result %d: %+v, want the diagnostic %q", i, r, errs[i].Msg)
		}
	}
}

// TestSARIFHelpAnchors: each rule's helpUri points at a heading that exists.
func TestSARIFHelpAnchors(t *testing.T) {
	anchors := map[string]bool{}
	for _, doc := range []string{"hazards.md", "language.md"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "docs", doc))
		if err != nil {
			t.Fatal(err)
		}
		anchors[doc] = true
		for _, line := range strings.Split(string(b), "\n") {
			if h, ok := strings.CutPrefix(line, "#"); ok {
				anchors[doc+"#"+githubSlug(strings.TrimLeft(h, "# "))] = true
			}
		}
	}
	for kind, d := range ruleDocs {
		if !anchors[d.doc] {
			t.Errorf("%s: %s names no heading of docs/", kind, d.doc)
		}
	}
}

// githubSlug is GitHub's heading anchor: lower case, punctuation other than
// '-' and '_' dropped, spaces to '-'.
func githubSlug(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(h)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Same input, same bytes.
func TestDeterministic(t *testing.T) {
	var a, b bytes.Buffer
	WriteText(&a, reportFindings(), reportSrc)
	WriteText(&b, reportFindings(), reportSrc)
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("two runs differ")
	}
}

// TestCountUnit: a count says what it counts. A same-pipe race's accesses
// are of one agent, so its count is of pipes, not pipe pairs (both
// printed "pipe pairs" before session 27).
func TestCountUnit(t *testing.T) {
	v := func(core string) Site {
		return Site{File: "t.pto", Line: 6, Col: 5, Op: "tadds", Pipe: "V", Core: core}
	}
	tests := []struct {
		name string
		f    Finding
		want string
	}{
		{"same pipe", Finding{Kind: KindWAW, Message: "same-pipe WAW", First: v("r0.aiv0"), Second: v("r0.aiv0"), Count: 2}, "same-pipe WAW [2 pipes]"},
		{"two cores", Finding{Kind: KindRAW, Message: "RAW race", First: v("r0.aiv0"), Second: v("r0.aiv1"), Count: 4}, "RAW race [4 pipe pairs]"},
		{"two pipes", Finding{Kind: KindWAR, Message: "WAR race", First: v("r0.aiv0"), Second: Site{File: "t.pto", Line: 9, Op: "tstore", Pipe: "MTE3", Core: "r0.aiv0"}, Count: 3}, "WAR race [3 pipe pairs]"},
		{"not a race", Finding{Kind: KindDoubleSet, Message: "double set", First: v("r0.aiv0"), Count: 3}, "double set [3 hazards]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			WriteText(&b, []Finding{tc.f}, reportSrc)
			if !strings.Contains(b.String(), tc.want) {
				t.Errorf("got\n%s\nwant a line with %q", b.String(), tc.want)
			}
		})
	}
}
