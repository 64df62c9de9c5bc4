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
			items := complete(t, cl, uri, c.pos)
			for _, it := range items {
				if !strings.HasPrefix(it.Label, c.prefix) {
					t.Errorf("item %q does not start with %q", it.Label, c.prefix)
				}
			}
			checkItems(t, items, c.want, c.not)
		})
	}
}

func complete(t *testing.T, cl *lsptest.Client, uri string, pos protocol.Position) []protocol.CompletionItem {
	t.Helper()
	var items []protocol.CompletionItem
	if err := cl.Call("textDocument/completion", protocol.CompletionParams{TextDocumentPositionParams: protocol.TextDocumentPositionParams{
		TextDocument: protocol.TextDocumentIdentifier{URI: uri}, Position: pos}}, &items); err != nil {
		t.Fatal(err)
	}
	return items
}

// checkItems wants each of want among items' labels and none of not.
func checkItems(t *testing.T, items []protocol.CompletionItem, want, not []string) {
	t.Helper()
	got := map[string]bool{}
	for _, it := range items {
		got[it.Label] = true
	}
	for _, w := range want {
		if !got[w] {
			t.Errorf("no %q among %d items", w, len(items))
		}
	}
	for _, w := range not {
		if got[w] {
			t.Errorf("%q offered", w)
		}
	}
}

// TestCompletionOperands: in an operand, what the ISA table's slot accepts;
// in an attribute, the instruction's keys and their words; for a flag's
// event id, the ids of its pipe pair in the order a kernel author wants them.
func TestCompletionOperands(t *testing.T) {
	cl, uri, text := opened(t, "ffn_grid/unified_as_shipped.pto")
	after := func(tok string) protocol.Position {
		p := at(t, text, tok, 0)
		p.Character += protocol.UInteger(len(tok))
		return p
	}
	for _, c := range []struct {
		name  string
		pos   protocol.Position
		first string   // the first item, if set
		want  []string // among the items
		not   []string // not among them
	}{
		{"acc tile of a matmul's destination", after("mm: tmatmul.acc %"), "", []string{"cDown"}, []string{"aDown", "bDown", "hiddenChunkMat", "j"}},
		{"left tile of a matmul's first source", after("mm: tmatmul.acc %cDown, %"), "", []string{"aDown"}, []string{"cDown", "bDown"}},
		{"right tile of its second", after("mm: tmatmul.acc %cDown, %aDown, %"), "", []string{"bDown"}, []string{"aDown", "cDown"}},
		{"tile without its sigil", after("mm: tmatmul.acc %cDown, %aDown, "), "", []string{"bDown"}, []string{"aDown", "MTE1", "CHUNKS"}},
		{"tensor of a store", after("tstore @"), "", []string{"GatePart", "Y", "Win"}, []string{"cT"}},
		{"pipe of a flag", after("    set_flag "), "", []string{"MTE1", "MTE2", "M", "V", "FIX"}, []string{"cT", "CHUNKS"}},
		{"pipe of a barrier", after("pipe_barrier "), "", []string{"ALL", "V"}, nil},
		{"free event id of a set_flag", after("    set_flag M, FIX, "), "1", []string{"0", "1", "7"}, []string{"8", "MTE1"}},
		{"set event id of a wait_flag", after("    wait_flag M, FIX, "), "0", []string{"0", "1"}, []string{"8"}},
		{"register of an event id", after("        set_flag MTE1, M, %"), "", []string{"b", "j"}, []string{"cT"}},
		{"attribute key", after("mm: tmatmul.acc %cDown, %aDown, %bDown #"), "", []string{"init"}, []string{"cmp", "rnd"}},
		{"attribute words", after("tcvt %hiddenF16, %hiddenF32 #rnd="), "", []string{"rint", "floor", "trunc"}, []string{"eq"}},
		{"comparison words", after("1 #cmp="), "", []string{"eq", "ge", "lt"}, []string{"rint"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			items := complete(t, cl, uri, c.pos)
			if c.first != "" && (len(items) == 0 || items[0].Label != c.first) {
				t.Errorf("first item %v, want %q", items, c.first)
			}
			checkItems(t, items, c.want, c.not)
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
