package lsp

import (
	"context"
	"io"
	"strings"
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

// TestServeBrokenStream: a stream that is not LSP's framing ends the session
// with an error naming what was wrong, within bounded memory, and a client
// that just goes away ends it cleanly. A 300 MB header line was read whole
// (600 MB) and ended in exit 0; a Content-Length of 4 GiB was accepted.
func TestServeBrokenStream(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"end of stream", "", ""},
		{"header line without an end", strings.Repeat("a", 1<<20), "a header line longer than 4096 bytes"},
		{"huge Content-Length", "Content-Length: 4294967295\r\n\r\n{}", "a message of 4294967295 bytes, larger than the 64MiB limit on messages (64 x --max-file-size)"},
		{"Content-Length past int64", "Content-Length: 99999999999999999999\r\n\r\n{}", `Content-Length "99999999999999999999" is not a byte count`},
		{"no Content-Length", "Content-Type: x\r\n\r\n{}", "a message without a Content-Length header"},
		{"not a header", "hello\r\n\r\n", `header line "hello" is not NAME: VALUE`},
		{"many headers", strings.Repeat("X: 1\r\n", 100), "more than 16 header lines in a message"},
		{"cut body", "Content-Length: 100\r\n\r\n{", "unexpected EOF"},
		{"body not JSON", "Content-Length: 2\r\n\r\n\x00\x00", "invalid character"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rw := struct {
				io.Reader
				io.Writer
				io.Closer
			}{strings.NewReader(tc.in), io.Discard, io.NopCloser(nil)}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			err := New(Options{}).Serve(ctx, rw)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("error %v at the end of the stream", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), "lsp: reading the client's messages: "+tc.want)):
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}
