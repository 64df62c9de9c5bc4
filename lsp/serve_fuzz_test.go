package lsp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"
)

// FuzzServe feeds any byte stream to a session, as a broken or hostile
// client would: Serve must return (an error for a stream it cannot frame),
// never panic, and everything it wrote must be whole LSP messages. Seeds are
// real sessions over shipped programs with one message damaged.
func FuzzServe(f *testing.F) {
	msg := func(v any) string {
		b, _ := json.Marshal(v)
		return frame(string(b))
	}
	open := func(uri, text string) string {
		return msg(map[string]any{"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": map[string]any{
			"textDocument": map[string]any{"uri": uri, "languageId": "pto", "version": 1, "text": text}}})
	}
	at := func(id int, method, uri string, line, char int) string {
		return msg(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": map[string]any{
			"textDocument": map[string]any{"uri": uri}, "position": map[string]int{"line": line, "character": char},
			"range":   map[string]any{"start": map[string]int{"line": 0, "character": 0}, "end": map[string]int{"line": line, "character": char}},
			"newName": "z", "context": map[string]any{"includeDeclaration": true, "diagnostics": []any{}}}})
	}
	change := func(uri string, line, char int, text string) string {
		return msg(map[string]any{"jsonrpc": "2.0", "method": "textDocument/didChange", "params": map[string]any{
			"textDocument": map[string]any{"uri": uri, "version": 2},
			"contentChanges": []any{map[string]any{"range": map[string]any{
				"start": map[string]int{"line": line, "character": char}, "end": map[string]int{"line": line + 1, "character": 0}}, "text": text}}}})
	}
	initialize := msg(map[string]any{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": map[string]any{}}) +
		msg(map[string]any{"jsonrpc": "2.0", "method": "initialized", "params": map[string]any{}})
	for _, rel := range []string{"hazards/war.pto", "vec_add/vec_add.pto"} {
		b, err := os.ReadFile(filepath.Join("..", "programs", rel))
		if err != nil {
			f.Fatal(err)
		}
		uri := "file:///fuzz/" + filepath.Base(rel)
		s := initialize + open(uri, string(b)) + change(uri, 3, 2, "tadd %") + at(1, "textDocument/hover", uri, 30, 6) +
			at(2, "textDocument/completion", uri, 31, 8) + at(3, "textDocument/rename", uri, 28, 10) +
			at(4, "textDocument/semanticTokens/full", uri, 0, 0) + at(5, "textDocument/inlayHint", uri, 40, 0)
		f.Add([]byte(s))
		f.Add([]byte(strings.Replace(s, `"method"`, `"method":1,"x"`, 2)))
		f.Add([]byte(s[:len(s)/2]))
	}
	f.Add([]byte(frame("\x00") + frame("[]") + initialize))
	f.Fuzz(func(t *testing.T, in []byte) {
		// Every write goes through the connection's stream, and Serve
		// returns only after the last (a publication holds the server's
		// lock, which Serve takes to stop the documents): out is whole.
		var out bytes.Buffer
		rw := stream(bytes.NewReader(in), &out)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		s := New(Options{Debounce: time.Millisecond, MaxFileSize: 64 << 10})
		s.Serve(ctx, rw)
		r := bufio.NewReader(&out)
		for {
			var m json.RawMessage
			err := (jsonrpc2.VSCodeObjectCodec{}).ReadObject(r, &m)
			if err == io.EOF {
				return
			}
			if err != nil {
				t.Fatalf("the server wrote a broken message: %v", err)
			}
		}
	})
}
