package lsp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	protocol "github.com/tliron/glsp/protocol_3_16"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/lsp"
	"github.com/ptoasm/ptoasm/lsp/lsptest"
	"github.com/ptoasm/ptoasm/machine/hazard"
	"github.com/ptoasm/ptoasm/parser"
)

const wait = 20 * time.Second

// staticLint is the linter's static pass: enough to see findings become
// diagnostics without running the machine (cmd/ptoasm tests the full lint).
func staticLint(_ context.Context, obj *asm.Object) ([]hazard.Finding, error) {
	return hazard.CheckObject(obj), nil
}

func start(t *testing.T, opt lsp.Options) *lsptest.Client {
	if opt.Debounce == 0 {
		opt.Debounce = time.Millisecond
	}
	return lsptest.Start(t, func(ctx context.Context, rw io.ReadWriteCloser) error {
		return lsp.New(opt).Serve(ctx, rw)
	})
}

// program reads a shipped program and names it by its file: URI, so its
// includes resolve beside it.
func program(t *testing.T, rel string) (uri, text string) {
	return lsptest.File(t, filepath.Join("..", "programs", rel))
}

// expectedKind is the first `expect finding KIND` of a program.
func expectedKind(t *testing.T, text string) string {
	m := regexp.MustCompile(`(?m)^expect finding ([\w-]+)`).FindStringSubmatch(text)
	if m == nil {
		t.Fatal("program has no expect finding")
	}
	return m[1]
}

func TestDiagnostics(t *testing.T) {
	unpairedURI, unpaired := program(t, "hazards/unpaired_set.pto")
	warURI, war := program(t, "hazards/war.pto")
	for _, c := range []struct {
		name, uri, text string
		// want: line (0-based), source and a fragment of each diagnostic's
		// message, in order; none means a clean file.
		want []struct {
			line   int
			source string
			msg    string
		}
		code    string // the finding kind of the first diagnostic, if a lint finding
		related bool   // the first diagnostic has related information
	}{
		{name: "syntax error", uri: "file:///tmp/a.pto", text: "const N = 4\nkernel k : aiv {\n    tload %x,\n}\n",
			want: []struct {
				line   int
				source string
				msg    string
			}{{2, "ptoasm", "expected operand"}}},
		{name: "unknown instruction", uri: "file:///tmp/b.pto", text: "kernel k : aiv {\n    tile %x : vec f32 [16, 16]\n    tfrob %x\n}\nlaunch ranks=1 {\n    run k blocks=1\n}\n",
			want: []struct {
				line   int
				source string
				msg    string
			}{{2, "ptoasm", "tfrob"}}},
		{name: "mlir error", uri: "file:///tmp/c.pto", text: "module {\n  func.func @k() {\n    pto.frob %x\n  }\n}\n",
			want: []struct {
				line   int
				source string
				msg    string
			}{{2, "ptoasm", "unsupported operation pto.frob"}}},
		{name: "static finding", uri: unpairedURI, text: unpaired, code: expectedKind(t, unpaired),
			want: []struct {
				line   int
				source string
				msg    string
			}{{lineOf(unpaired, "free: set_flag"), "ptoasm lint", "hint: "}}},
		{name: "clean under the static pass", uri: warURI, text: war},
		{name: "larger than the file limit", uri: warURI, text: war + strings.Repeat("// padding\n", 200),
			want: []struct {
				line   int
				source string
				msg    string
			}{{0, "ptoasm", "(--max-file-size)"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cl := start(t, lsp.Options{Lint: staticLint, MaxFileSize: int64(len(war) + 100)})
			if err := cl.Open(c.uri, c.text); err != nil {
				t.Fatal(err)
			}
			p, err := cl.WaitDiagnostics(c.uri, wait, lsptest.Version(1))
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Diagnostics) != len(c.want) {
				t.Fatalf("got %d diagnostics, want %d: %s", len(p.Diagnostics), len(c.want), dump(p.Diagnostics))
			}
			for i, w := range c.want {
				d := p.Diagnostics[i]
				if int(d.Range.Start.Line) != w.line || d.Source == nil || *d.Source != w.source || !strings.Contains(d.Message, w.msg) {
					t.Errorf("diagnostic %d = %s, want line %d source %s message with %q", i, dump(d), w.line, w.source, w.msg)
				}
			}
			if c.code != "" {
				d := p.Diagnostics[0]
				if d.Code == nil || d.Code.Value != c.code {
					t.Errorf("code = %s, want %s", dump(d.Code), c.code)
				}
				if d.Data == nil {
					t.Errorf("no hint in Data for a code action: %s", dump(d))
				}
			}
		})
	}
}

func lineOf(text, frag string) int {
	for i, l := range strings.Split(text, "\n") {
		if strings.Contains(l, frag) {
			return i
		}
	}
	return -1
}

func dump(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestOneAnalysisInFlight edits faster than the lint runs: there must never
// be two lint runs of the document at once, every publication must be for
// a newer version than the one before, and the last edit must be analysed.
func TestOneAnalysisInFlight(t *testing.T) {
	var mu sync.Mutex
	running, most, finished := 0, 0, 0
	slow := func(ctx context.Context, obj *asm.Object) ([]hazard.Finding, error) {
		mu.Lock()
		running++
		most = max(most, running)
		mu.Unlock()
		done := false
		select {
		case <-time.After(200 * time.Millisecond):
			done = true
		case <-ctx.Done():
		}
		mu.Lock()
		running--
		if done {
			finished++
		}
		mu.Unlock()
		return nil, nil
	}
	uri, text := program(t, "hazards/war.pto")
	cl := start(t, lsp.Options{Lint: slow, Debounce: 2 * time.Millisecond})
	if err := cl.Open(uri, text); err != nil {
		t.Fatal(err)
	}
	const edits = 20
	for v := int32(2); v <= edits; v++ {
		time.Sleep(5 * time.Millisecond)
		if err := cl.Change(uri, v, text+strings.Repeat("\n", int(v))); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := cl.WaitDiagnostics(uri, wait, lsptest.Version(edits)); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if most != 1 {
		t.Errorf("%d lint runs of one document at once, want 1", most)
	}
	if finished > edits/2 {
		t.Errorf("%d lint runs ran to the end for %d versions: newer edits did not cancel them", finished, edits)
	}
	prev := int32(0)
	for _, p := range cl.Published(uri) {
		if v := int32(*p.Version); v <= prev {
			t.Errorf("published version %d after %d", v, prev)
		} else {
			prev = v
		}
	}
}

// at is the position of the n-th occurrence (0-based) of tok in text.
func at(t *testing.T, text, tok string, n int) protocol.Position {
	t.Helper()
	off := -1
	for i := 0; i <= n; i++ {
		j := strings.Index(text[off+1:], tok)
		if j < 0 {
			t.Fatalf("%q: occurrence %d not found", tok, n)
		}
		off += 1 + j
	}
	line := strings.Count(text[:off], "\n")
	col := off - (strings.LastIndex(text[:off], "\n") + 1)
	return protocol.Position{Line: protocol.UInteger(line), Character: protocol.UInteger(col)}
}

// opened starts a server on a shipped program and waits for its analysis.
func opened(t *testing.T, rel string) (*lsptest.Client, string, string) {
	uri, text := program(t, rel)
	cl := start(t, lsp.Options{Lint: staticLint})
	if err := cl.Open(uri, text); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.WaitDiagnostics(uri, wait, lsptest.Version(1)); err != nil {
		t.Fatal(err)
	}
	return cl, uri, text
}

func TestHover(t *testing.T) {
	cl, uri, text := opened(t, "hazards/war.pto")
	for _, c := range []struct {
		name string
		tok  string
		n    int
		want []string // fragments of the hover text; none: no hover
	}{
		{"instruction", "tadds %y", 0, []string{"**tadds**", "pipe: V", "operands: `", "cost: `"}},
		{"routed instruction", "tload %x, @X2", 0, []string{"**tload**", "pipe: MTE2"}},
		{"tile use", "%x, 1.0", 0, []string{"**%x**: vec f32 [16, 64]", "address [0x"}},
		{"tile declaration", "tile %y", 0, []string{"**%y**: vec f32 [16, 64]"}},
		{"tensor", "@X2", 0, []string{"**@X2**: gm f32 [16, 64]", "4096 B"}},
		{"constant", "R, C] = random(seed=1", 0, []string{"`R` = 16"}},
		{"comment", "Cross-pipe", 0, nil},
		{"set_flag", "set_flag V, MTE3", 0, []string{"**set_flag**", "The same flag's wait_flag in kernel k: line " + fmt.Sprint(lineOf(text, "wait_flag V, MTE3")+1) + "."}},
		{"wait_flag", "wait_flag MTE2, V", 0, []string{"The same flag's set_flag in kernel k: line " + fmt.Sprint(lineOf(text, "set_flag MTE2, V")+1) + "."}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var h *protocol.Hover
			err := cl.Call("textDocument/hover", protocol.HoverParams{TextDocumentPositionParams: protocol.TextDocumentPositionParams{
				TextDocument: protocol.TextDocumentIdentifier{URI: uri}, Position: at(t, text, c.tok, c.n)}}, &h)
			if err != nil {
				t.Fatal(err)
			}
			if c.want == nil {
				if h != nil {
					t.Errorf("hover %s, want none", dump(h))
				}
				return
			}
			if h == nil {
				t.Fatal("no hover")
			}
			mc, _ := h.Contents.(protocol.MarkupContent)
			for _, w := range c.want {
				if !strings.Contains(mc.Value, w) {
					t.Errorf("hover lacks %q:\n%s", w, mc.Value)
				}
			}
		})
	}
}

func TestDefinition(t *testing.T) {
	cl, uri, text := opened(t, "hazards/war.pto")
	for _, c := range []struct {
		name, tok string
		n         int
		wantLine  string // a fragment of the line defined on; "" no definition
	}{
		{"tile", "%x, @X2", 0, "tile %x : vec"},
		{"tensor", "@X2", 0, "gm X2 :"},
		{"constant", "C] = random(seed=2", 0, "const C = 64"},
		{"label", "use, ld2", 0, "use: tadds"},
		{"label 2", "ld2\n", 0, "ld2: tload"},
		{"instruction", "tstore", 1, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			var loc *protocol.Location
			err := cl.Call("textDocument/definition", protocol.DefinitionParams{TextDocumentPositionParams: protocol.TextDocumentPositionParams{
				TextDocument: protocol.TextDocumentIdentifier{URI: uri}, Position: at(t, text, c.tok, c.n)}}, &loc)
			if err != nil {
				t.Fatal(err)
			}
			if c.wantLine == "" {
				if loc != nil {
					t.Errorf("definition %s, want none", dump(loc))
				}
				return
			}
			if loc == nil {
				t.Fatal("no definition")
			}
			if loc.URI != uri || int(loc.Range.Start.Line) != lineOf(text, c.wantLine) {
				t.Errorf("definition at %s, want line %d (%q)", dump(loc), lineOf(text, c.wantLine), c.wantLine)
			}
		})
	}
}

// TestDefinitionInclude jumps from a use to a declaration in an included file.
func TestDefinitionInclude(t *testing.T) {
	cl, uri, text := opened(t, "allgather_gemm/allgather_gemm.pto")
	var loc *protocol.Location
	err := cl.Call("textDocument/definition", protocol.DefinitionParams{TextDocumentPositionParams: protocol.TextDocumentPositionParams{
		TextDocument: protocol.TextDocumentIdentifier{URI: uri}, Position: at(t, text, "@C ==", 0)}}, &loc)
	if err != nil {
		t.Fatal(err)
	}
	if loc == nil || !strings.HasSuffix(loc.URI, "/allgather_gemm/common.pto") {
		t.Fatalf("definition of @C at %s, want common.pto", dump(loc))
	}
}

func TestDocumentSymbols(t *testing.T) {
	cl, uri, _ := opened(t, "hazards/war.pto")
	var syms []protocol.DocumentSymbol
	if err := cl.Call("textDocument/documentSymbol", protocol.DocumentSymbolParams{TextDocument: protocol.TextDocumentIdentifier{URI: uri}}, &syms); err != nil {
		t.Fatal(err)
	}
	var got []string
	var walk func([]protocol.DocumentSymbol, string)
	walk = func(ss []protocol.DocumentSymbol, in string) {
		for _, s := range ss {
			got = append(got, in+s.Name)
			walk(s.Children, in+s.Name+".")
		}
	}
	walk(syms, "")
	want := "R C @X @X2 @Y @Y2 k k.%x k.%y k.use k.ld2 launch"
	if g := strings.Join(got, " "); g != want {
		t.Errorf("symbols\n got %s\nwant %s", g, want)
	}
}

func TestFormatting(t *testing.T) {
	_, canon := program(t, "hazards/war.pto")
	messy := strings.ReplaceAll(canon, "    tload %x, @X[0, 0]", "  tload   %x ,@X[0,0]")
	mlirText := "module {\n  func.func @k() {\n    return\n  }\n}\n"
	for _, c := range []struct {
		name, text string
		want       *string // the formatted text; nil: no edit
	}{
		{"messy", messy, &canon},
		{"canonical", canon, &canon},
		{"mlir is left alone", mlirText, nil},
		{"syntax error", "kernel k : aiv {\n", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			cl := start(t, lsp.Options{})
			uri := "file:///tmp/f.pto"
			if err := cl.Open(uri, c.text); err != nil {
				t.Fatal(err)
			}
			var edits []protocol.TextEdit
			if err := cl.Call("textDocument/formatting", protocol.DocumentFormattingParams{TextDocument: protocol.TextDocumentIdentifier{URI: uri}}, &edits); err != nil {
				t.Fatal(err)
			}
			if c.want == nil {
				if len(edits) != 0 {
					t.Errorf("edits %s, want none", dump(edits))
				}
				return
			}
			got := apply(c.text, edits)
			if got != *c.want {
				t.Errorf("formatted:\n%s\nwant:\n%s", got, *c.want)
			}
			// The same printer as ptoasm fmt.
			f, errs := parser.ParseFile("f.pto", []byte(c.text))
			if errs.HasErrors() {
				t.Fatal(errs)
			}
			var b bytes.Buffer
			asm.Fprint(&b, f)
			if b.String() != got {
				t.Errorf("formatting differs from asm.Fprint")
			}
		})
	}
}

// apply applies whole-range and single edits as an editor would.
func apply(text string, edits []protocol.TextEdit) string {
	for i := len(edits) - 1; i >= 0; i-- {
		e := edits[i]
		lo, hi := offset(text, e.Range.Start), offset(text, e.Range.End)
		text = text[:lo] + e.NewText + text[hi:]
	}
	return text
}

func offset(text string, p protocol.Position) int {
	off := 0
	for l := 0; l < int(p.Line); l++ {
		off += strings.IndexByte(text[off:], '\n') + 1
	}
	return off + int(p.Character)
}
