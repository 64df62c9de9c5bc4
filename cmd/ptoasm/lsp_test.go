package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	protocol "github.com/tliron/glsp/protocol_3_16"

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

func programURI(t testing.TB, rel string) (uri, text string) {
	p, err := filepath.Abs(filepath.Join("..", "..", "programs", rel))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return "file://" + filepath.ToSlash(p), string(b)
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
		{rel: "ffn_grid/unified_as_shipped.pto", kind: "WAR", line: 124, col: 5, relatedLine: 118},
		{rel: "hazards/war.pto", kind: "WAR", line: 25, col: 5, relatedLine: 27},
		{rel: "hazards/war.pto", edit: func(s string) string {
			// The fix the program's comment gives.
			return strings.Replace(s, "    // missing: set_flag V, MTE2, 0; wait_flag V, MTE2, 0\n",
				"    set_flag V, MTE2, 0\n    wait_flag V, MTE2, 0\n", 1)
		}},
		{rel: "allgather_gemm/allgather_gemm.pto"},
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
				if d.Code == nil || d.Code.Value != c.kind || int(d.Range.Start.Line) != c.line-1 || int(d.Range.Start.Character) != c.col-1 {
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
	uri, text := programURI(b, "allgather_gemm/allgather_gemm.pto")
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
