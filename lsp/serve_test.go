package lsp

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/ptoasm/ptoasm/lsp/lsptest"
)

// TestPublishBeforeServeResumes: the first document's diagnostics reach the
// client even when Serve's own goroutine is slow to run after the
// connection starts reading (a loaded CI host once lost them this way: the
// analysis of a small file finished before the server knew its connection).
func TestPublishBeforeServeResumes(t *testing.T) {
	cl := lsptest.Start(t, func(ctx context.Context, rw io.ReadWriteCloser) error {
		s := New(Options{Debounce: time.Millisecond})
		s.afterConnect = func() { time.Sleep(2 * time.Second) }
		return s.Serve(ctx, rw)
	})
	const uri = "file:///tmp/late.pto"
	if err := cl.Open(uri, "kernel k : aiv {\n    tfrob\n}\n"); err != nil {
		t.Fatal(err)
	}
	// Well inside the two seconds Serve sleeps.
	p, err := cl.WaitDiagnostics(uri, time.Second, lsptest.Version(1))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Diagnostics) == 0 {
		t.Error("no diagnostic for an unknown instruction")
	}
}
