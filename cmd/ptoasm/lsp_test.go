package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	protocol "github.com/tliron/glsp/protocol_3_16"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/lsp"
	"github.com/ptoasm/ptoasm/lsp/lsptest"
	"github.com/ptoasm/ptoasm/machine"
)

// startLSP runs `ptoasm lsp` (the subcommand, as an editor starts it) in
// process on a pipe and returns a client speaking to it.
func startLSP(t testing.TB) *lsptest.Client {
	return lsptest.Start(t, func(ctx context.Context, rw io.ReadWriteCloser) error {
		go func() { <-ctx.Done(); rw.Close() }()
		if code := realMainIO([]string{"lsp", "--debounce=1ms"}, rw, rw, io.Discard); code != 0 {
			return fmt.Errorf("ptoasm lsp exited %d", code)
		}
		return nil
	})
}

// programURI reads a file named relative to the repository's root and
// names it by its file: URI, so its includes resolve beside it.
func programURI(t testing.TB, rel string) (uri, text string) {
	return lsptest.File(t, filepath.Join("..", "..", rel))
}

// TestLSPLint: the editor sees what `ptoasm lint` prints, with the second
// site as related information; a fixed program gets no diagnostics.
func TestLSPLint(t *testing.T) {
	for _, c := range []struct {
		rel         string
		edit        func(string) string // applied before opening; nil: as shipped
		kind        string              // the failing finding's kind; "" none
		line, col   int                 // its 1-based site
		altLine     int                 // another line the site may be on (0: none)
		relatedLine int                 // the second site's 1-based line
	}{
		{rel: "programs/ffn_grid/unified_as_shipped.pto", kind: "WAR", line: 124, col: 5, relatedLine: 118},
		{rel: "programs/hazards/war.pto", kind: "WAR", line: 25, col: 5, relatedLine: 27},
		{rel: "programs/hazards/war.pto", edit: func(s string) string {
			// The fix the program's comment gives.
			return strings.Replace(s, "    // missing: set_flag V, MTE2, 0; wait_flag V, MTE2, 0\n",
				"    set_flag V, MTE2, 0\n    wait_flag V, MTE2, 0\n", 1)
		}},
		{rel: "programs/allgather_gemm/allgather_gemm.pto"},
		{rel: "cmd/ptoasm/testdata/dn_mlir.pto"},
		{rel: "cmd/ptoasm/testdata/dn_mlir.pto", edit: func(s string) string {
			// PTOAS MLIR without the V -> MTE3 pair: the store races the
			// scaling, found at the MLIR source's lines.
			var keep []string
			for _, l := range strings.Split(s, "\n") {
				if !strings.Contains(l, "<PIPE_V>, <PIPE_MTE3>") {
					keep = append(keep, l)
				}
			}
			return strings.Join(keep, "\n")
			// Both the tload (15) and the tmuls (18) write the tile the store
			// reads unordered; which one the detector names follows the run's
			// order (the L2 miss latency made the tload the later one).
		}, kind: "RAW", line: 18, altLine: 15, col: 5, relatedLine: 19},
	} {
		t.Run(c.rel, func(t *testing.T) {
			uri, text := programURI(t, c.rel)
			if c.edit != nil {
				text = c.edit(text)
			}
			cl := startLSP(t)
			if err := cl.Open(uri, text); err != nil {
				t.Fatal(err)
			}
			p, err := cl.WaitDiagnostics(uri, 60*time.Second, lsptest.Version(1))
			if err != nil {
				t.Fatal(err)
			}
			var failing []protocol.Diagnostic
			for _, d := range p.Diagnostics {
				if d.Severity != nil && *d.Severity <= protocol.DiagnosticSeverityWarning {
					failing = append(failing, d)
				}
			}
			if c.kind == "" {
				if len(failing) != 0 {
					t.Fatalf("want no failing diagnostics, got %v", failing)
				}
				return
			}
			for _, d := range failing {
				line := int(d.Range.Start.Line) + 1
				if d.Code == nil || d.Code.Value != c.kind || (line != c.line && line != c.altLine) || int(d.Range.Start.Character) != c.col-1 {
					continue
				}
				if len(d.RelatedInformation) != 1 || int(d.RelatedInformation[0].Location.Range.Start.Line) != c.relatedLine-1 {
					t.Fatalf("related information %v, want line %d", d.RelatedInformation, c.relatedLine)
				}
				if d.RelatedInformation[0].Location.URI != uri {
					t.Errorf("related URI %s, want %s", d.RelatedInformation[0].Location.URI, uri)
				}
				return
			}
			t.Fatalf("no %s diagnostic at %d:%d in %v", c.kind, c.line, c.col, p.Diagnostics)
		})
	}
}

// BenchmarkLSPDiagnostics is the time from an edit of allgather_gemm to its
// diagnostics (assembly, the timing-only run with the detector, the static
// pass), through the CLI's lint, with no debounce.
func BenchmarkLSPDiagnostics(b *testing.B) {
	uri, text := programURI(b, "programs/allgather_gemm/allgather_gemm.pto")
	mopt := machine.Options{}
	opt := lspOptions(&env{lim: limits{maxMemory: 768 << 20, maxFileSize: 1 << 20}}, mopt, time.Nanosecond)
	cl := lsptest.Start(b, func(ctx context.Context, rw io.ReadWriteCloser) error {
		return lsp.New(opt).Serve(ctx, rw)
	})
	if err := cl.Open(uri, text); err != nil {
		b.Fatal(err)
	}
	if _, err := cl.WaitDiagnostics(uri, time.Minute, lsptest.Version(1)); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		v := int32(i + 2)
		if err := cl.Change(uri, v, text+strings.Repeat("\n", i%2)); err != nil {
			b.Fatal(err)
		}
		if _, err := cl.WaitDiagnostics(uri, time.Minute, lsptest.Version(v)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(time.Since(start).Microseconds())/1000/float64(b.N), "ms/diagnostics")
}

// TestLSPSubprocess starts `ptoasm lsp` as a process and speaks to it like an
// editor: the race of ffn_grid's shipped kernel, a hover and a jump to a
// tile's declaration, then shutdown and exit.
func TestLSPSubprocess(t *testing.T) {
	exited := make(chan error, 1)
	cl := lsptest.Start(t, func(ctx context.Context, rw io.ReadWriteCloser) error {
		cmd := exec.CommandContext(ctx, os.Args[0], "lsp")
		cmd.Env = append(os.Environ(), "PTOASM_TEST_MAIN=1")
		cmd.Stdout = rw
		// Our own copy to stdin, so Wait returns when the process ends
		// rather than when the client closes its end.
		in, err := cmd.StdinPipe()
		if err == nil {
			err = cmd.Start()
		}
		if err != nil {
			exited <- err
			return err
		}
		go io.Copy(in, rw)
		err = cmd.Wait()
		exited <- err
		return err
	})
	uri, text := programURI(t, "programs/ffn_grid/unified_as_shipped.pto")
	if err := cl.Open(uri, text); err != nil {
		t.Fatal(err)
	}
	p, err := cl.WaitDiagnostics(uri, time.Minute, lsptest.Version(1))
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, d := range p.Diagnostics {
		if d.Code != nil && d.Code.Value == "WAR" && d.Range.Start.Line == 123 && d.Range.Start.Character == 4 &&
			len(d.RelatedInformation) == 1 && d.RelatedInformation[0].Location.Range.Start.Line == 117 {
			found = true
		}
	}
	if !found {
		t.Errorf("no WAR at 124:5 with related information at 118: %v", p.Diagnostics)
	}
	pos := func(frag string, in int) protocol.TextDocumentPositionParams {
		line := strings.Index(text, frag)
		if line < 0 {
			t.Fatalf("%q not in the program", frag)
		}
		off := line + in
		return protocol.TextDocumentPositionParams{
			TextDocument: protocol.TextDocumentIdentifier{URI: uri},
			Position: protocol.Position{
				Line:      protocol.UInteger(strings.Count(text[:off], "\n")),
				Character: protocol.UInteger(off - strings.LastIndex(text[:off], "\n") - 1),
			},
		}
	}
	var h *protocol.Hover
	if err := cl.Call("textDocument/hover", protocol.HoverParams{TextDocumentPositionParams: pos("tmatmul.acc %cDown", 0)}, &h); err != nil {
		t.Fatal(err)
	}
	if mc, _ := h.Contents.(protocol.MarkupContent); h == nil || !strings.Contains(mc.Value, "**tmatmul.acc**") || !strings.Contains(mc.Value, "pipe: M") {
		t.Errorf("hover on tmatmul.acc: %+v", h)
	}
	// A flag whose event id the loop computes: its waits are listed as
	// candidates, not as the one that consumes it.
	h = nil
	if err := cl.Call("textDocument/hover", protocol.HoverParams{TextDocumentPositionParams: pos("set_flag MTE2, MTE1, %nb", 0)}, &h); err != nil {
		t.Fatal(err)
	}
	if mc, _ := h.Contents.(protocol.MarkupContent); h == nil || !strings.Contains(mc.Value, "wait_flag in kernel") || !strings.Contains(mc.Value, "(event id computed at run time)") {
		t.Errorf("hover on set_flag: %+v", h)
	}
	var loc *protocol.Location
	if err := cl.Call("textDocument/definition", protocol.DefinitionParams{TextDocumentPositionParams: pos("consume: tmov %aDown, %hiddenChunkMat", len("consume: tmov %aDown, "))}, &loc); err != nil {
		t.Fatal(err)
	}
	if want := strings.Count(text[:strings.Index(text, "tile %hiddenChunkMat")], "\n"); loc == nil || int(loc.Range.Start.Line) != want {
		t.Errorf("definition of %%hiddenChunkMat at %+v, want line %d", loc, want+1)
	}
	if err := cl.Call("shutdown", nil, nil); err != nil {
		t.Fatal(err)
	}
	cl.Notify("exit", nil)
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("ptoasm lsp: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Error("ptoasm lsp did not exit after exit")
	}
}

// TestLSPLintCancel: a newer edit cancels the lint run in the machine, not
// only its result: a kernel that spins for ever comes back cancelled.
func TestLSPLintCancel(t *testing.T) {
	path := filepath.Join("testdata", "busy_forever.pto") // a vector loop that never ends
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	srcs := asm.Sources{}
	obj, errs := asm.Assemble(source{main: path, stdin: src}.frontend(srcs), path, nil)
	if errs.HasErrors() {
		t.Fatal(errs)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(20 * time.Millisecond); cancel() }()
	_, err = lintObject(ctx, obj, machine.Options{MaxCycles: 1 << 50, MaxIdleCycles: -1})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("lint = %v, want context.Canceled", err)
	}
}

// TestLSPCodeAction applies the quick fix of a race and lints the result
// with the real lint: the race is gone and nothing new appears. A race
// across loop iterations (ffn_grid's) gets no fix, only its hint.
func TestLSPCodeAction(t *testing.T) {
	for _, c := range []struct {
		rel  string
		kind string
		line int // 1-based line of the finding
		fix  bool
	}{
		{"programs/hazards/war.pto", "WAR", 25, true},
		{"programs/hazards/raw.pto", "RAW", 0, true},
		{"programs/ffn_grid/unified_as_shipped.pto", "WAR", 124, false},
	} {
		t.Run(c.rel, func(t *testing.T) {
			uri, text := programURI(t, c.rel)
			cl := startLSP(t)
			if err := cl.Open(uri, text); err != nil {
				t.Fatal(err)
			}
			p, err := cl.WaitDiagnostics(uri, time.Minute, lsptest.Version(1))
			if err != nil {
				t.Fatal(err)
			}
			var diag *protocol.Diagnostic
			for i, d := range p.Diagnostics {
				if d.Code != nil && d.Code.Value == c.kind && (c.line == 0 || int(d.Range.Start.Line) == c.line-1) {
					diag = &p.Diagnostics[i]
					break
				}
			}
			if diag == nil {
				t.Fatalf("no %s diagnostic: %v", c.kind, p.Diagnostics)
			}
			var actions []protocol.CodeAction
			if err := cl.Call("textDocument/codeAction", protocol.CodeActionParams{
				TextDocument: protocol.TextDocumentIdentifier{URI: uri}, Range: diag.Range,
				Context: protocol.CodeActionContext{Diagnostics: []protocol.Diagnostic{*diag}},
			}, &actions); err != nil {
				t.Fatal(err)
			}
			if !c.fix {
				if len(actions) != 0 {
					t.Fatalf("want no fix, got %+v", actions)
				}
				return
			}
			if len(actions) != 1 || actions[0].Edit == nil {
				t.Fatalf("want one fix, got %+v", actions)
			}
			fixed := applyEdits(text, actions[0].Edit.Changes[uri])
			if err := cl.Change(uri, 2, fixed); err != nil {
				t.Fatal(err)
			}
			p, err = cl.WaitDiagnostics(uri, time.Minute, lsptest.Version(2))
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range p.Diagnostics {
				if d.Severity != nil && *d.Severity <= protocol.DiagnosticSeverityWarning {
					t.Errorf("after %q: %s %v", actions[0].Title, d.Message, d.Range)
				}
			}
		})
	}
}

// applyEdits applies non-overlapping edits, last first, as an editor does.
func applyEdits(text string, edits []protocol.TextEdit) string {
	off := func(p protocol.Position) int {
		o := 0
		for l := 0; l < int(p.Line); l++ {
			o += strings.IndexByte(text[o:], '\n') + 1
		}
		return o + int(p.Character)
	}
	type span struct {
		lo, hi int
		s      string
	}
	var ss []span
	for _, e := range edits {
		ss = append(ss, span{off(e.Range.Start), off(e.Range.End), e.NewText})
	}
	sort.Slice(ss, func(i, j int) bool { return ss[i].lo > ss[j].lo })
	for _, s := range ss {
		text = text[:s.lo] + s.s + text[s.hi:]
	}
	return text
}
