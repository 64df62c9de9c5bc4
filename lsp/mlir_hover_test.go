package lsp_test

import (
	"strings"
	"testing"

	protocol "github.com/tliron/glsp/protocol_3_16"

	"github.com/ptoasm/ptoasm/lsp"
)

// TestMLIRQueries: hover and definition work on PTOAS MLIR text, through the
// spans its lowering keeps.
func TestMLIRQueries(t *testing.T) {
	uri, text := program(t, "../cmd/ptoasm/testdata/dn_mlir.pto")
	cl := start(t, lsp.Options{Lint: staticLint})
	if err := cl.Open(uri, text); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.WaitDiagnostics(uri, wait, func(protocol.PublishDiagnosticsParams) bool { return true }); err != nil {
		t.Fatal(err)
	}
	var toks protocol.SemanticTokens
	if err := cl.Call("textDocument/semanticTokens/full", protocol.SemanticTokensParams{TextDocument: protocol.TextDocumentIdentifier{URI: uri}}, &toks); err != nil {
		t.Fatal(err)
	}
	// Each of the 8 ops of the kernel is a function token over its name.
	functions := 0
	for i := 3; i < len(toks.Data); i += 5 {
		if toks.Data[i] == 1 {
			functions++
		}
	}
	if len(toks.Data)%5 != 0 || functions != strings.Count(text, "    pto.") {
		t.Errorf("semantic tokens: %d numbers, %d functions, want %d", len(toks.Data), functions, strings.Count(text, "    pto."))
	}
	for _, c := range []struct{ tok, want string }{
		{"pto.tmuls", "**tmuls**"},
		{"pto.tload", "pipe: MTE2"},
	} {
		var h *protocol.Hover
		err := cl.Call("textDocument/hover", protocol.HoverParams{TextDocumentPositionParams: protocol.TextDocumentPositionParams{
			TextDocument: protocol.TextDocumentIdentifier{URI: uri}, Position: at(t, text, c.tok, 0)}}, &h)
		if err != nil {
			t.Fatal(err)
		}
		if h == nil {
			t.Errorf("%s: no hover", c.tok)
			continue
		}
		if mc, _ := h.Contents.(protocol.MarkupContent); !strings.Contains(mc.Value, c.want) {
			t.Errorf("%s: hover lacks %q:\n%s", c.tok, c.want, mc.Value)
		}
	}
}
