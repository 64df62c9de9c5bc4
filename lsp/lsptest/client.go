// Package lsptest is an in-process LSP client for tests: it speaks JSON-RPC
// over a pipe to a server as an editor would, and keeps the diagnostics the
// server publishes.
package lsptest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"
	protocol "github.com/tliron/glsp/protocol_3_16"
)

// File reads the file at path (relative to the test's directory) and names
// it by its file: URI, as an editor does, so its includes resolve beside it.
func File(t testing.TB, path string) (uri, text string) {
	t.Helper()
	p, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return "file://" + filepath.ToSlash(p), string(b)
}

// Client is the editor's end of a session.
type Client struct {
	conn *jsonrpc2.Conn

	mu      sync.Mutex
	changed chan struct{} // closed and replaced whenever diagnostics arrive
	diags   map[string][]protocol.PublishDiagnosticsParams
}

// Start runs serve on one end of a pipe and returns a client on the other,
// initialized; the session ends when the test does.
func Start(t testing.TB, serve func(ctx context.Context, rw io.ReadWriteCloser) error) *Client {
	t.Helper()
	srv, cli := net.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		serve(ctx, srv)
	}()
	c := &Client{changed: make(chan struct{}), diags: map[string][]protocol.PublishDiagnosticsParams{}}
	c.conn = jsonrpc2.NewConn(ctx, jsonrpc2.NewBufferedStream(cli, jsonrpc2.VSCodeObjectCodec{}), jsonrpc2.HandlerWithError(c.handle))
	t.Cleanup(func() {
		c.conn.Close()
		cancel()
		<-done
	})
	var res protocol.InitializeResult
	if err := c.Call("initialize", protocol.InitializeParams{}, &res); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	if err := c.conn.Notify(ctx, "initialized", protocol.InitializedParams{}); err != nil {
		t.Fatalf("initialized: %v", err)
	}
	return c
}

func (c *Client) handle(_ context.Context, _ *jsonrpc2.Conn, req *jsonrpc2.Request) (any, error) {
	if req.Method != "textDocument/publishDiagnostics" || req.Params == nil {
		return nil, nil
	}
	var p protocol.PublishDiagnosticsParams
	if err := json.Unmarshal(*req.Params, &p); err != nil {
		return nil, err
	}
	// glsp's IntegerOrString.UnmarshalJSON has a value receiver and decodes
	// nothing; the codes are read here instead.
	var codes struct {
		Diagnostics []struct {
			Code any `json:"code"`
		} `json:"diagnostics"`
	}
	if err := json.Unmarshal(*req.Params, &codes); err == nil && len(codes.Diagnostics) == len(p.Diagnostics) {
		for i, d := range codes.Diagnostics {
			if d.Code != nil {
				p.Diagnostics[i].Code = &protocol.IntegerOrString{Value: d.Code}
			}
		}
	}
	c.mu.Lock()
	c.diags[p.URI] = append(c.diags[p.URI], p)
	close(c.changed)
	c.changed = make(chan struct{})
	c.mu.Unlock()
	return nil, nil
}

// Call sends a request and decodes its result into result.
func (c *Client) Call(method string, params, result any) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return c.conn.Call(ctx, method, params, result)
}

// Notify sends a notification.
func (c *Client) Notify(method string, params any) error {
	return c.conn.Notify(context.Background(), method, params)
}

// Open opens uri with text as version 1.
func (c *Client) Open(uri, text string) error {
	return c.Notify("textDocument/didOpen", protocol.DidOpenTextDocumentParams{
		TextDocument: protocol.TextDocumentItem{URI: uri, LanguageID: "pto", Version: 1, Text: text},
	})
}

// Change replaces uri's text, as version.
func (c *Client) Change(uri string, version int32, text string) error {
	return c.Notify("textDocument/didChange", protocol.DidChangeTextDocumentParams{
		TextDocument:   protocol.VersionedTextDocumentIdentifier{TextDocumentIdentifier: protocol.TextDocumentIdentifier{URI: uri}, Version: version},
		ContentChanges: []any{protocol.TextDocumentContentChangeEventWhole{Text: text}},
	})
}

// Published returns every diagnostics notification received for uri so far.
func (c *Client) Published(uri string) []protocol.PublishDiagnosticsParams {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]protocol.PublishDiagnosticsParams(nil), c.diags[uri]...)
}

// WaitDiagnostics waits for a notification for uri that ok accepts (the
// earliest not yet seen is tried first) and returns it.
func (c *Client) WaitDiagnostics(uri string, timeout time.Duration, ok func(protocol.PublishDiagnosticsParams) bool) (protocol.PublishDiagnosticsParams, error) {
	deadline := time.After(timeout)
	seen := 0
	for {
		c.mu.Lock()
		ps := c.diags[uri]
		ch := c.changed
		c.mu.Unlock()
		for ; seen < len(ps); seen++ {
			if ok(ps[seen]) {
				return ps[seen], nil
			}
		}
		select {
		case <-ch:
		case <-deadline:
			return protocol.PublishDiagnosticsParams{}, fmt.Errorf("%s: no matching diagnostics in %s (%d received)", uri, timeout, seen)
		}
	}
}

// Version says a notification is for the given document version.
func Version(v int32) func(protocol.PublishDiagnosticsParams) bool {
	return func(p protocol.PublishDiagnosticsParams) bool {
		return p.Version != nil && int32(*p.Version) == v
	}
}

// query is one request and where its result goes.
type query struct {
	method        string
	params, reply any
}

// ask sends each query in turn; the first error names its method.
func (c *Client) ask(qs []query) error {
	for _, q := range qs {
		if err := c.Call(q.method, q.params, q.reply); err != nil {
			return fmt.Errorf("%s: %v", q.method, err)
		}
	}
	return nil
}

// AskAt sends what an editor asks as the cursor sits at pos of uri: hover,
// definition, references and completion. The first error names its method
// and position.
func (c *Client) AskAt(uri string, pos protocol.Position) error {
	pp := protocol.TextDocumentPositionParams{TextDocument: protocol.TextDocumentIdentifier{URI: uri}, Position: pos}
	var h *protocol.Hover
	var loc *protocol.Location
	var refs []protocol.Location
	var items []protocol.CompletionItem
	err := c.ask([]query{
		{"textDocument/hover", protocol.HoverParams{TextDocumentPositionParams: pp}, &h},
		{"textDocument/definition", protocol.DefinitionParams{TextDocumentPositionParams: pp}, &loc},
		{"textDocument/references", protocol.ReferenceParams{TextDocumentPositionParams: pp, Context: protocol.ReferenceContext{IncludeDeclaration: true}}, &refs},
		{"textDocument/completion", protocol.CompletionParams{TextDocumentPositionParams: pp}, &items},
	})
	if err != nil {
		return fmt.Errorf("at %d:%d: %v", pos.Line, pos.Character, err)
	}
	return nil
}

// AskWhole sends the whole-document requests an editor makes of uri, of
// lines lines: semantic tokens, symbols, inlay hints and code actions over
// the whole, and formatting.
func (c *Client) AskWhole(uri string, lines int) error {
	doc := protocol.TextDocumentIdentifier{URI: uri}
	whole := protocol.Range{End: protocol.Position{Line: protocol.UInteger(lines + 1)}}
	var toks protocol.SemanticTokens
	var syms []protocol.DocumentSymbol
	var hints []map[string]any
	var actions []protocol.CodeAction
	var edits []protocol.TextEdit
	return c.ask([]query{
		{"textDocument/semanticTokens/full", protocol.SemanticTokensParams{TextDocument: doc}, &toks},
		{"textDocument/documentSymbol", protocol.DocumentSymbolParams{TextDocument: doc}, &syms},
		{"textDocument/inlayHint", map[string]any{"textDocument": doc, "range": whole}, &hints},
		{"textDocument/codeAction", protocol.CodeActionParams{TextDocument: doc, Range: whole}, &actions},
		{"textDocument/formatting", protocol.DocumentFormattingParams{TextDocument: doc}, &edits},
	})
}
