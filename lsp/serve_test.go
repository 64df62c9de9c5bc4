package lsp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"
	protocol "github.com/tliron/glsp/protocol_3_16"

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

// stream is a session's connection: the client's bytes from r, the
// server's to w; closing it does nothing.
func stream(r io.Reader, w io.Writer) io.ReadWriteCloser {
	return struct {
		io.Reader
		io.Writer
		io.Closer
	}{r, w, io.NopCloser(nil)}
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
	} {
		t.Run(tc.name, func(t *testing.T) {
			rw := stream(strings.NewReader(tc.in), io.Discard)
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

// frame is body in LSP's Content-Length framing.
func frame(body string) string {
	return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body)
}

// TestServeRejectsBadMessages: a body that is not a JSON-RPC message, inside
// intact framing, is answered with JSON-RPC's error for it (with the
// message's id when it has one) and the session goes on: the request after
// it is served. Each of these ended the session (exit 2, the editor's
// diagnostics gone) when one bad message from a plugin was enough.
func TestServeRejectsBadMessages(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		code       int64
		id         string // the reply's id, as JSON
	}{
		{"NUL bytes", "\x00\x00", jsonrpc2.CodeParseError, "null"},
		{"cut JSON", `{"jsonrpc":"2.0","id":2,"method":`, jsonrpc2.CodeParseError, "null"},
		{"invalid UTF-8", "\xff\xfe", jsonrpc2.CodeParseError, "null"},
		{"a number", "5", jsonrpc2.CodeInvalidRequest, "null"},
		{"null", "null", jsonrpc2.CodeInvalidRequest, "null"},
		{"an empty object", "{}", jsonrpc2.CodeInvalidRequest, "null"},
		{"an empty batch", "[]", jsonrpc2.CodeInvalidRequest, "null"},
		{"a batch of numbers", "[1,2,3]", jsonrpc2.CodeInvalidRequest, "null"},
		{"method a number", `{"jsonrpc":"2.0","id":7,"method":5}`, jsonrpc2.CodeInvalidRequest, "7"},
		{"string id", `{"jsonrpc":"2.0","id":"s","method":true}`, jsonrpc2.CodeInvalidRequest, `"s"`},
		{"id an object", `{"jsonrpc":"2.0","id":{"a":1},"method":"initialize"}`, jsonrpc2.CodeInvalidRequest, "null"},
		{"both request and response", `{"jsonrpc":"2.0","id":3,"method":"x","result":1}`, jsonrpc2.CodeInvalidRequest, "3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := frame(tc.body) + frame(`{"jsonrpc":"2.0","id":9,"method":"initialize","params":{}}`)
			var out bytes.Buffer
			rw := stream(strings.NewReader(in), &out)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := New(Options{}).Serve(ctx, rw); err != nil {
				t.Fatalf("the session ended: %v", err)
			}
			r := bufio.NewReader(&out)
			var reject struct {
				ID    json.RawMessage `json:"id"`
				Error *jsonrpc2.Error `json:"error"`
			}
			if err := (jsonrpc2.VSCodeObjectCodec{}).ReadObject(r, &reject); err != nil {
				t.Fatalf("no reply to the bad message: %v", err)
			}
			if reject.Error == nil || reject.Error.Code != tc.code || string(reject.ID) != tc.id {
				t.Fatalf("reply id %s error %+v, want id %s code %d", reject.ID, reject.Error, tc.id, tc.code)
			}
			var next jsonrpc2.Response
			if err := (jsonrpc2.VSCodeObjectCodec{}).ReadObject(r, &next); err != nil || next.ID.Num != 9 || next.Error != nil || next.Result == nil {
				t.Fatalf("the request after it: %+v, %v", next, err)
			}
		})
	}
}

// TestDocumentOverTheLimit: the text of a document over MaxFileSize is not
// held; range edits of it are not applied (a client that ignores our full
// sync made each 100-byte edit copy and scan the whole text: 21 edits of a
// 50 MB document took 7 s), formatting refuses it naming the limit (it
// parsed 50 MB per request), and the editor's next whole text is analysed
// again.
func TestDocumentOverTheLimit(t *testing.T) {
	const uri = "file:///tmp/big.pto"
	var srv *Server
	cl := lsptest.Start(t, func(ctx context.Context, rw io.ReadWriteCloser) error {
		srv = New(Options{Debounce: time.Millisecond, MaxFileSize: 1024})
		return srv.Serve(ctx, rw)
	})
	small := "kernel k : aiv {\n    tfrob\n}\n"
	big := small + "// " + strings.Repeat("x", 2048) + "\n"
	if err := cl.Open(uri, big); err != nil {
		t.Fatal(err)
	}
	p, err := cl.WaitDiagnostics(uri, 30*time.Second, lsptest.Version(1))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Diagnostics) != 1 || !strings.Contains(p.Diagnostics[0].Message, "larger than the 1KiB limit on input files (--max-file-size): not analysed") {
		t.Fatalf("diagnostics %+v", p.Diagnostics)
	}
	if d := srv.docFor(uri); d == nil || d.text != nil {
		t.Fatal("the text over the limit is held")
	}
	edit := protocol.DidChangeTextDocumentParams{
		TextDocument: protocol.VersionedTextDocumentIdentifier{TextDocumentIdentifier: protocol.TextDocumentIdentifier{URI: uri}, Version: 2},
		ContentChanges: []any{protocol.TextDocumentContentChangeEvent{
			Range: &protocol.Range{Start: protocol.Position{Line: 3}, End: protocol.Position{Line: 4}}, Text: "",
		}},
	}
	if err := cl.Notify("textDocument/didChange", edit); err != nil {
		t.Fatal(err)
	}
	if p, err = cl.WaitDiagnostics(uri, 30*time.Second, lsptest.Version(2)); err != nil {
		t.Fatal(err)
	}
	if len(p.Diagnostics) != 1 || !strings.Contains(p.Diagnostics[0].Message, "not analysed") {
		t.Fatalf("after a range edit: %+v", p.Diagnostics)
	}
	var edits []protocol.TextEdit
	err = cl.Call("textDocument/formatting", protocol.DocumentFormattingParams{TextDocument: protocol.TextDocumentIdentifier{URI: uri}}, &edits)
	if err == nil || !strings.Contains(err.Error(), "larger than the 1KiB limit on input files (--max-file-size)") {
		t.Fatalf("formatting: %v, want the limit named", err)
	}
	if err := cl.Change(uri, 3, small); err != nil {
		t.Fatal(err)
	}
	if p, err = cl.WaitDiagnostics(uri, 30*time.Second, lsptest.Version(3)); err != nil {
		t.Fatal(err)
	}
	if len(p.Diagnostics) == 0 || strings.Contains(p.Diagnostics[0].Message, "not analysed") {
		t.Fatalf("the whole text under the limit is not analysed: %+v", p.Diagnostics)
	}
}

// TestApplyRange: range edits (which a client that ignores our full sync
// sends) past the end, reversed, at absurd positions or growing the text
// past the limit are clamped or noted, never a panic.
func TestApplyRange(t *testing.T) {
	pos := func(l, c uint32) protocol.Position { return protocol.Position{Line: l, Character: c} }
	const max = uint32(1<<32 - 1)
	for _, tc := range []struct {
		name, text string
		start, end protocol.Position
		insert     string
		want       string
		tooLarge   int64
	}{
		{"inside a line", "ab\ncd\n", pos(1, 0), pos(1, 1), "X", "ab\nXd\n", 0},
		{"past the end of a line", "ab\ncd\n", pos(0, 50), pos(1, 0), "", "abcd\n", 0},
		{"past the last line", "ab\ncd", pos(7, 0), pos(9, 3), "!", "ab\ncd!", 0},
		{"reversed", "ab\ncd\n", pos(1, 1), pos(0, 1), "", "ad\n", 0},
		{"largest position", "ab\n", pos(max, max), pos(0, 0), "", "", 0},
		{"empty text", "", pos(3, 3), pos(4, 4), "x", "x", 0},
		{"past the limit", "ab\n", pos(0, 0), pos(0, 0), strings.Repeat("y", 30), "", 33},
		{"growing", "ab\ncd\nef\n", pos(1, 0), pos(1, 1), "XYZ", "ab\nXYZd\nef\n", 0},
		{"shrinking", "ab\ncdcdcd\nef\n", pos(1, 0), pos(1, 5), "", "ab\nd\nef\n", 0},
	} {
		// In place (a text of this message's own, with room) or not, the
		// same text.
		for _, own := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s own=%v", tc.name, own), func(t *testing.T) {
				s := New(Options{MaxFileSize: 32})
				d := &document{text: append(make([]byte, 0, 64), tc.text...)}
				before := d.text
				s.applyRange(d, protocol.Range{Start: tc.start, End: tc.end}, tc.insert, own)
				if string(d.text) != tc.want || d.tooLarge != tc.tooLarge {
					t.Errorf("text %q tooLarge %d, want %q %d", d.text, d.tooLarge, tc.want, tc.tooLarge)
				}
				if !own && string(before) != tc.text {
					t.Errorf("the text an analysis may hold became %q", before)
				}
			})
		}
	}
}

// TestMessageLimit: a session under the largest --max-file-size serves its
// messages: 64 x 2^62 wrapped to a limit of 0, so it refused the first
// ("larger than the 0B limit on messages").
func TestMessageLimit(t *testing.T) {
	in := frame(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`)
	rw := stream(strings.NewReader(in), io.Discard)
	if err := New(Options{MaxFileSize: 1 << 62}).Serve(context.Background(), rw); err != nil {
		t.Errorf("--max-file-size 2^62: %v", err)
	}
}

// TestKickAfterPublished: a timer that fires after an analysis already took
// and published its edit's text starts nothing: it did, and 10^5 rapid
// edits published 22 versions twice. A newer edit is analysed.
func TestKickAfterPublished(t *testing.T) {
	s := New(Options{})
	for _, tc := range []struct {
		gen, published int
		want           bool // an analysis starts
	}{
		{5, 5, false},
		{6, 5, true},
	} {
		d := &document{uri: "file:///k.pto", path: "/k.pto", text: []byte("kernel k : aiv {\n}\n"), gen: tc.gen, published: tc.published}
		s.kick(d)
		s.mu.Lock()
		started := d.running
		d.stop() // the analysis, if any, drops its result
		s.mu.Unlock()
		if started != tc.want {
			t.Errorf("gen %d, published %d: analysis started %v, want %v", tc.gen, tc.published, started, tc.want)
		}
	}
}

// TestRangeEditsInOneMessage: a message of many range edits, applied in
// place after its first, gives the text they give one at a time, and the
// text before the message (which an analysis may be reading) is untouched.
func TestRangeEditsInOneMessage(t *testing.T) {
	const uri = "file:///tmp/edits.pto"
	var srv *Server
	cl := lsptest.Start(t, func(ctx context.Context, rw io.ReadWriteCloser) error {
		srv = New(Options{Debounce: time.Hour})
		return srv.Serve(ctx, rw)
	})
	text := "line0\nline1\nline2\n"
	if err := cl.Open(uri, text); err != nil {
		t.Fatal(err)
	}
	var hover *protocol.Hover // a request: the open is handled once it answers
	if err := cl.Call("textDocument/hover", protocol.HoverParams{TextDocumentPositionParams: protocol.TextDocumentPositionParams{TextDocument: protocol.TextDocumentIdentifier{URI: uri}}}, &hover); err != nil {
		t.Fatal(err)
	}
	before := srv.docFor(uri).text
	r := func(l0, c0, l1, c1 uint32) *protocol.Range {
		return &protocol.Range{Start: protocol.Position{Line: l0, Character: c0}, End: protocol.Position{Line: l1, Character: c1}}
	}
	changes := []any{
		protocol.TextDocumentContentChangeEvent{Range: r(0, 0, 0, 4), Text: "LINE"},
		protocol.TextDocumentContentChangeEvent{Range: r(1, 0, 2, 0), Text: ""},
		protocol.TextDocumentContentChangeEvent{Range: r(0, 5, 0, 5), Text: " and more and more"},
		protocol.TextDocumentContentChangeEvent{Range: r(9, 0, 9, 0), Text: "end\n"},
		protocol.TextDocumentContentChangeEvent{Range: r(0, 0, 0, 0), Text: "// "},
	}
	err := cl.Notify("textDocument/didChange", protocol.DidChangeTextDocumentParams{
		TextDocument:   protocol.VersionedTextDocumentIdentifier{TextDocumentIdentifier: protocol.TextDocumentIdentifier{URI: uri}, Version: 2},
		ContentChanges: changes,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := cl.Call("textDocument/hover", protocol.HoverParams{TextDocumentPositionParams: protocol.TextDocumentPositionParams{TextDocument: protocol.TextDocumentIdentifier{URI: uri}}}, &hover); err != nil {
		t.Fatal(err)
	}
	srv.mu.Lock()
	got := string(srv.docs[uri].text)
	srv.mu.Unlock()
	if want := "// LINE0 and more and more\nline2\nend\n"; got != want {
		t.Errorf("text %q, want %q", got, want)
	}
	if string(before) != text {
		t.Errorf("the text before the message became %q", before)
	}
}
