package lsp

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/ptoasm/ptoasm/lsp/lsptest"
)

// TestPublishBeforeServeResumes: the first document's diagnostics reach the
// client while Serve's own goroutine has not run since the connection
// started reading (a loaded CI host once lost them this way: the analysis
// of a small file finished before the server knew its connection). Serve is
// held until the diagnostics arrive, so the test does not depend on load.
func TestPublishBeforeServeResumes(t *testing.T) {
	release := make(chan struct{})
	cl := lsptest.Start(t, func(ctx context.Context, rw io.ReadWriteCloser) error {
		s := New(Options{Debounce: time.Millisecond})
		s.afterConnect = func() {
			select {
			case <-release:
			case <-ctx.Done():
			}
		}
		return s.Serve(ctx, rw)
	})
	defer close(release)
	const uri = "file:///tmp/late.pto"
	if err := cl.Open(uri, "kernel k : aiv {\n    tfrob\n}\n"); err != nil {
		t.Fatal(err)
	}
	p, err := cl.WaitDiagnostics(uri, 30*time.Second, lsptest.Version(1))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Diagnostics) == 0 {
		t.Error("no diagnostic for an unknown instruction")
	}
}
