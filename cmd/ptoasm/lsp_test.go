package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	protocol "github.com/tliron/glsp/protocol_3_16"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/lsp"
	"github.com/ptoasm/ptoasm/lsp/lsptest"
	"github.com/ptoasm/ptoasm/machine"
	"github.com/ptoasm/ptoasm/machine/hazard"
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
			// reads unordered; the tload is ordered before the tmuls, so the
			// race is the tmuls's, whichever order the run met them in.
		}, kind: "RAW", line: 18, col: 5, relatedLine: 19},
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
				if d.Code == nil || d.Code.Value != c.kind || line != c.line || int(d.Range.Start.Character) != c.col-1 {
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
// pass), through the CLI's lint and the default debounce: an edit after a
// pause is analysed at once. It also reports the most lint runs of the
// document in flight at once (must be 1).
func BenchmarkLSPDiagnostics(b *testing.B) {
	uri, text := programURI(b, "programs/allgather_gemm/allgather_gemm.pto")
	cl, most := startCounting(b, lsp.DefaultDebounce)
	openWait(b, cl, uri, text)
	var total time.Duration
	cpu0, cpuOK := processCPU()
	for i := 0; i < b.N; i++ {
		time.Sleep(lsp.DefaultDebounce) // a pause: the next edit is not part of a burst
		v := int32(i + 2)
		start := time.Now()
		if err := cl.Change(uri, v, text+strings.Repeat("\n", i%2)); err != nil {
			b.Fatal(err)
		}
		if _, err := cl.WaitDiagnostics(uri, time.Minute, lsptest.Version(v)); err != nil {
			b.Fatal(err)
		}
		total += time.Since(start)
	}
	b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "ms/diagnostics")
	if cpu1, ok := processCPU(); ok && cpuOK {
		// The CPU the whole process spent per edit (server, machine and
		// this client; the pauses cost none).
		b.ReportMetric(float64((cpu1-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms/diagnostics")
	}
	b.ReportMetric(float64(most()), "max-lints-in-flight")
	if most() > 1 {
		b.Errorf("%d lint runs of one document at once, want 1", most())
	}
}

// startCounting serves in process with the CLI's lint, counting the lint
// runs in flight at once; most reports the largest count seen.
func startCounting(tb testing.TB, debounce time.Duration) (cl *lsptest.Client, most func() int) {
	opt, most := countingLint(lspOptions(&env{lim: limits{maxMemory: 768 << 20, maxFileSize: 1 << 20}}, machine.Options{}, debounce))
	cl = lsptest.Start(tb, func(ctx context.Context, rw io.ReadWriteCloser) error {
		return lsp.New(opt).Serve(ctx, rw)
	})
	return cl, most
}

func countingLint(opt lsp.Options) (lsp.Options, func() int) {
	var mu sync.Mutex
	running, peak := 0, 0
	lint := opt.Lint
	opt.Lint = func(ctx context.Context, obj *asm.Object) ([]hazard.Finding, error) {
		mu.Lock()
		running++
		peak = max(peak, running)
		mu.Unlock()
		defer func() {
			mu.Lock()
			running--
			mu.Unlock()
		}()
		return lint(ctx, obj)
	}
	return opt, func() int {
		mu.Lock()
		defer mu.Unlock()
		return peak
	}
}

// TestLSPOneLintInFlight: with the CLI's real lint on allgather_gemm and
// edits arriving faster than one lint run, there is never more than one run
// of the document at once, and the last edit's diagnostics arrive.
func TestLSPOneLintInFlight(t *testing.T) {
	uri, text := programURI(t, "programs/allgather_gemm/allgather_gemm.pto")
	cl, most := startCounting(t, time.Millisecond)
	if err := cl.Open(uri, text); err != nil {
		t.Fatal(err)
	}
	const edits = 30
	for v := int32(2); v <= edits; v++ {
		// Some edits after a pause longer than the debounce (started at
		// once), some in bursts; all faster than a lint run.
		time.Sleep(time.Duration(v%3) * time.Millisecond)
		if err := cl.Change(uri, v, text+strings.Repeat("\n", int(v))); err != nil {
			t.Fatal(err)
		}
	}
	p, err := cl.WaitDiagnostics(uri, time.Minute, lsptest.Version(edits))
	if err != nil {
		t.Fatal(err)
	}
	if n := most(); n != 1 {
		t.Errorf("%d lint runs of one document at once, want 1", n)
	}
	for _, d := range p.Diagnostics {
		if d.Severity != nil && *d.Severity <= protocol.DiagnosticSeverityWarning {
			t.Errorf("allgather_gemm lints clean, got %s", d.Message)
		}
	}
}

// startLSPProcess starts this test binary as `ptoasm ARGS...` (the server
// an editor would start) and returns a client speaking to it over its
// standard input and output, and a channel that gets the process's exit.
func startLSPProcess(t *testing.T, args ...string) (*lsptest.Client, <-chan error) {
	exited := make(chan error, 1)
	cl := lsptest.Start(t, func(ctx context.Context, rw io.ReadWriteCloser) error {
		cmd := exec.CommandContext(ctx, os.Args[0], args...)
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
	return cl, exited
}

// openWait opens uri with text and returns its first diagnostics.
func openWait(tb testing.TB, cl *lsptest.Client, uri, text string) protocol.PublishDiagnosticsParams {
	tb.Helper()
	if err := cl.Open(uri, text); err != nil {
		tb.Fatal(err)
	}
	p, err := cl.WaitDiagnostics(uri, time.Minute, lsptest.Version(1))
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// exitLSP ends a session as an editor does, shutdown then exit, and wants
// the server process to end cleanly.
func exitLSP(t *testing.T, cl *lsptest.Client, exited <-chan error) {
	t.Helper()
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

// TestLSPSubprocess starts `ptoasm lsp` as a process and speaks to it like an
// editor: the race of ffn_grid's shipped kernel, a hover, a jump to a tile's
// declaration, completion of `tmat`, the race's quick fix applied and
// re-analysed without it, then shutdown and exit.
func TestLSPSubprocess(t *testing.T) {
	cl, exited := startLSPProcess(t, "lsp")
	uri, text := programURI(t, "programs/ffn_grid/unified_as_shipped.pto")
	p := openWait(t, cl, uri, text)
	var war *protocol.Diagnostic
	for i, d := range p.Diagnostics {
		if d.Code != nil && d.Code.Value == "WAR" && d.Range.Start.Line == 123 && d.Range.Start.Character == 4 &&
			len(d.RelatedInformation) == 1 && d.RelatedInformation[0].Location.Range.Start.Line == 117 {
			war = &p.Diagnostics[i]
		}
	}
	if war == nil {
		t.Fatalf("no WAR at 124:5 with related information at 118: %v", p.Diagnostics)
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
	var items []protocol.CompletionItem
	if err := cl.Call("textDocument/completion", protocol.CompletionParams{TextDocumentPositionParams: pos("tmatmul.acc %cDown", len("tmat"))}, &items); err != nil {
		t.Fatal(err)
	}
	if !hasLabel(items, "tmatmul") || !hasLabel(items, "tmatmul.acc") {
		t.Errorf("completion of tmat: %d items, want tmatmul and tmatmul.acc", len(items))
	}
	// The quick fix of the race; the next analysis has no diagnostic for it.
	_, p = applyCodeAction(t, cl, uri, text, *war)
	for _, d := range p.Diagnostics {
		if d.Message == war.Message || strings.Contains(d.Message, "%hiddenChunkMat") {
			t.Errorf("after the fix: %s at %v", d.Message, d.Range)
		}
	}
	exitLSP(t, cl, exited)
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
// with the real lint: the race is gone and nothing new appears. ffn_grid's
// WAR is across loop iterations (the double buffer's missing reverse flag);
// its fix orders it, and the kernel's other race (M2) stays.
func TestLSPCodeAction(t *testing.T) {
	noBreak := func(s string) string {
		return strings.Replace(s, "        if %i == 3 {\n            break\n        }\n", "", 1)
	}
	for _, c := range []struct {
		name  string
		rel   string
		edit  func(string) string // applied before opening; nil: as shipped
		kind  string
		line  int  // 1-based line of the finding
		fix   bool // a fix is offered
		clean bool // the fixed program has no errors or warnings left
	}{
		{"war", "programs/hazards/war.pto", nil, "WAR", 25, true, true},
		{"raw", "programs/hazards/raw.pto", nil, "RAW", 0, true, true},
		{"ffn_grid", "programs/ffn_grid/unified_as_shipped.pto", nil, "WAR", 124, true, false},
		// A loop that can break: no pre-set/drain can balance it.
		{"while with break", "cmd/ptoasm/testdata/race_break.pto", nil, "WAR", 22, false, false},
		{"while without break", "cmd/ptoasm/testdata/race_break.pto", noBreak, "WAR", 22, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			uri, text := programURI(t, c.rel)
			if c.edit != nil {
				text = c.edit(text)
			}
			cl := startLSP(t)
			p := openWait(t, cl, uri, text)
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
			if !c.fix {
				var actions []protocol.CodeAction
				if err := cl.Call("textDocument/codeAction", protocol.CodeActionParams{
					TextDocument: protocol.TextDocumentIdentifier{URI: uri}, Range: diag.Range,
					Context: protocol.CodeActionContext{Diagnostics: []protocol.Diagnostic{*diag}},
				}, &actions); err != nil || len(actions) != 0 {
					t.Fatalf("want no fix, got %+v (%v)", actions, err)
				}
				return
			}
			title, p := applyCodeAction(t, cl, uri, text, *diag)
			for _, d := range p.Diagnostics {
				if d.Message == diag.Message || c.clean && d.Severity != nil && *d.Severity <= protocol.DiagnosticSeverityWarning {
					t.Errorf("after %q: %s %v", title, d.Message, d.Range)
				}
			}
		})
	}
}

// applyCodeAction asks for the code actions of diag, wants exactly one
// quick fix, applies its edits to text as version 2 of the document, and
// returns its title and that version's diagnostics.
func applyCodeAction(t *testing.T, cl *lsptest.Client, uri, text string, diag protocol.Diagnostic) (string, protocol.PublishDiagnosticsParams) {
	t.Helper()
	var actions []protocol.CodeAction
	if err := cl.Call("textDocument/codeAction", protocol.CodeActionParams{
		TextDocument: protocol.TextDocumentIdentifier{URI: uri}, Range: diag.Range,
		Context: protocol.CodeActionContext{Diagnostics: []protocol.Diagnostic{diag}},
	}, &actions); err != nil {
		t.Fatal(err)
	}
	if len(actions) != 1 || actions[0].Edit == nil {
		t.Fatalf("want one fix, got %+v", actions)
	}
	fixed := lsp.ApplyEdits([]byte(text), actions[0].Edit.Changes[uri])
	if err := cl.Change(uri, 2, string(fixed)); err != nil {
		t.Fatal(err)
	}
	p, err := cl.WaitDiagnostics(uri, time.Minute, lsptest.Version(2))
	if err != nil {
		t.Fatal(err)
	}
	return actions[0].Title, p
}

func hasLabel(items []protocol.CompletionItem, label string) bool {
	for _, it := range items {
		if it.Label == label {
			return true
		}
	}
	return false
}

// TestLSPExitStatus: exit after shutdown ends `ptoasm lsp` with status 0,
// exit without it with status 1 (LSP 3.17, "exit"); it used to be 0 both
// ways.
func TestLSPExitStatus(t *testing.T) {
	for _, tc := range []struct {
		name     string
		shutdown bool
		want     int
	}{{"after shutdown", true, 0}, {"without shutdown", false, 1}} {
		t.Run(tc.name, func(t *testing.T) {
			cl, exited := startLSPProcess(t, "lsp")
			if tc.shutdown {
				if err := cl.Call("shutdown", nil, nil); err != nil {
					t.Fatal(err)
				}
			}
			cl.Notify("exit", nil)
			select {
			case err := <-exited:
				code := 0
				var ee *exec.ExitError
				if errors.As(err, &ee) {
					code = ee.ExitCode()
				} else if err != nil {
					t.Fatal(err)
				}
				if code != tc.want {
					t.Errorf("exit status %d, want %d", code, tc.want)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("ptoasm lsp did not exit after exit")
			}
		})
	}
}
