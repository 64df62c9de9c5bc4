package lsp_test

import (
	"strings"
	"testing"

	protocol "github.com/tliron/glsp/protocol_3_16"

	"github.com/ptoasm/ptoasm/lsp"
	"github.com/ptoasm/ptoasm/lsp/lsptest"
)

// TestQueriesAnywhere asks every query at every position of shipped
// programs (PTO-AS with includes, MLIR, one that does not assemble), and the
// whole-document ones (tokens, symbols, inlay hints, code actions): none may
// fail or end the session, wherever the cursor is.
func TestQueriesAnywhere(t *testing.T) {
	for _, rel := range []string{
		"hazards/war.pto",
		"allgather_gemm/allgather_gemm.pto",
		"../cmd/ptoasm/testdata/dn_mlir.pto",
		"hazards/unpaired_set.pto",
	} {
		t.Run(rel, func(t *testing.T) {
			uri, text := program(t, rel)
			cl := start(t, lsp.Options{Lint: staticLint})
			if strings.Contains(rel, "unpaired") {
				text = strings.Replace(text, "tload", "tlaod", 1) // does not assemble
			}
			if err := cl.Open(uri, text); err != nil {
				t.Fatal(err)
			}
			if _, err := cl.WaitDiagnostics(uri, wait, lsptest.Version(1)); err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(text, "\n")
			for l := 0; l <= len(lines); l++ {
				width := 0
				if l < len(lines) {
					width = len(lines[l])
				}
				for c := 0; c <= width+1; c++ {
					pp := protocol.TextDocumentPositionParams{TextDocument: protocol.TextDocumentIdentifier{URI: uri},
						Position: protocol.Position{Line: protocol.UInteger(l), Character: protocol.UInteger(c)}}
					var h *protocol.Hover
					var loc *protocol.Location
					var refs []protocol.Location
					var items []protocol.CompletionItem
					for _, q := range []struct {
						method string
						params any
						result any
					}{
						{"textDocument/hover", protocol.HoverParams{TextDocumentPositionParams: pp}, &h},
						{"textDocument/definition", protocol.DefinitionParams{TextDocumentPositionParams: pp}, &loc},
						{"textDocument/references", protocol.ReferenceParams{TextDocumentPositionParams: pp, Context: protocol.ReferenceContext{IncludeDeclaration: true}}, &refs},
						{"textDocument/completion", protocol.CompletionParams{TextDocumentPositionParams: pp}, &items},
					} {
						if err := cl.Call(q.method, q.params, q.result); err != nil {
							t.Fatalf("%s at %d:%d: %v", q.method, l, c, err)
						}
					}
				}
			}
			var toks protocol.SemanticTokens
			if err := cl.Call("textDocument/semanticTokens/full", protocol.SemanticTokensParams{TextDocument: protocol.TextDocumentIdentifier{URI: uri}}, &toks); err != nil {
				t.Fatal(err)
			}
			var syms []protocol.DocumentSymbol
			if err := cl.Call("textDocument/documentSymbol", protocol.DocumentSymbolParams{TextDocument: protocol.TextDocumentIdentifier{URI: uri}}, &syms); err != nil {
				t.Fatal(err)
			}
			whole := protocol.Range{End: protocol.Position{Line: protocol.UInteger(len(lines) + 1)}}
			var hints []map[string]any
			if err := cl.Call("textDocument/inlayHint", map[string]any{"textDocument": protocol.TextDocumentIdentifier{URI: uri}, "range": whole}, &hints); err != nil {
				t.Fatal(err)
			}
			var actions []protocol.CodeAction
			if err := cl.Call("textDocument/codeAction", protocol.CodeActionParams{TextDocument: protocol.TextDocumentIdentifier{URI: uri}, Range: whole}, &actions); err != nil {
				t.Fatal(err)
			}
		})
	}
}
