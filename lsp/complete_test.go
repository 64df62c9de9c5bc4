package lsp_test

import (
	"strings"
	"testing"

	protocol "github.com/tliron/glsp/protocol_3_16"

	"github.com/ptoasm/ptoasm/lsp/lsptest"
)

func TestCompletion(t *testing.T) {
	cl, uri, text := opened(t, "hazards/war.pto")
	// A line being typed: `tmat` where an instruction goes.
	edited := strings.Replace(text, "    tstore @Y2[0, 0], %x\n", "    tstore @Y2[0, 0], %x\n    tmat\n", 1)
	if err := cl.Change(uri, 2, edited); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.WaitDiagnostics(uri, wait, lsptest.Version(2)); err != nil {
		t.Fatal(err)
	}
	after := func(tok string, in int) protocol.Position {
		p := at(t, edited, tok, 0)
		p.Character += protocol.UInteger(in)
		return p
	}
	for _, c := range []struct {
		name   string
		pos    protocol.Position
		prefix string   // every item starts with it
		want   []string // among the items
		not    []string // not among them
	}{
		{"mnemonic", after("    tmat\n", 8), "tmat", []string{"tmatmul", "tmatmul.acc"}, []string{"tadds"}},
		{"mnemonic after a label", after("use: tadds", 7), "ta", []string{"tadds"}, []string{"x"}},
		{"tile", after("tadds %y", 7), "", []string{"x", "y"}, []string{"tadds", "X"}},
		{"tensor", after("@X2[0, 0]", 2), "X", []string{"X", "X2"}, []string{"Y"}},
		{"constant or pipe", after("[R, C] = zero", 1), "", []string{"R", "C", "MTE2", "V"}, []string{"tadds"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var items []protocol.CompletionItem
			if err := cl.Call("textDocument/completion", protocol.CompletionParams{TextDocumentPositionParams: protocol.TextDocumentPositionParams{
				TextDocument: protocol.TextDocumentIdentifier{URI: uri}, Position: c.pos}}, &items); err != nil {
				t.Fatal(err)
			}
			got := map[string]bool{}
			for _, it := range items {
				got[it.Label] = true
				if !strings.HasPrefix(it.Label, c.prefix) {
					t.Errorf("item %q does not start with %q", it.Label, c.prefix)
				}
			}
			for _, w := range c.want {
				if !got[w] {
					t.Errorf("no %q among %d items", w, len(items))
				}
			}
			for _, w := range c.not {
				if got[w] {
					t.Errorf("%q offered", w)
				}
			}
		})
	}
}

// codeCount counts tok in text outside // comments.
func codeCount(text, tok string) int {
	n := 0
	for _, l := range strings.Split(text, "\n") {
		l, _, _ = strings.Cut(l, "//")
		n += strings.Count(l, tok)
	}
	return n
}

func TestReferences(t *testing.T) {
	cl, uri, text := opened(t, "hazards/war.pto")
	for _, c := range []struct {
		name, tok string
		decl      bool
		want      int
	}{
		{"tile from a use", "%x, 1.0", true, codeCount(text, "%x")},
		{"tile without its declaration", "%x, 1.0", false, codeCount(text, "%x") - 1},
		{"tile from its declaration", "tile %y", true, codeCount(text, "%y")},
		{"tensor", "@X2", true, codeCount(text, "@X2") + 1},
		{"constant", "R, C] = random(seed=2", true, codeCount(text, "R, C]") + 1},
		{"label", "use, ld2", true, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			var locs []protocol.Location
			if err := cl.Call("textDocument/references", protocol.ReferenceParams{
				TextDocumentPositionParams: protocol.TextDocumentPositionParams{TextDocument: protocol.TextDocumentIdentifier{URI: uri}, Position: at(t, text, c.tok, 0)},
				Context:                    protocol.ReferenceContext{IncludeDeclaration: c.decl},
			}, &locs); err != nil {
				t.Fatal(err)
			}
			if len(locs) != c.want {
				t.Errorf("%d references, want %d: %s", len(locs), c.want, dump(locs))
			}
		})
	}
}
