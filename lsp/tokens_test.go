package lsp_test

import (
	"fmt"
	"testing"

	protocol "github.com/tliron/glsp/protocol_3_16"
)

func TestSemanticTokens(t *testing.T) {
	cl, uri, text := opened(t, "hazards/war.pto")
	var res protocol.SemanticTokens
	if err := cl.Call("textDocument/semanticTokens/full", protocol.SemanticTokensParams{TextDocument: protocol.TextDocumentIdentifier{URI: uri}}, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Data)%5 != 0 {
		t.Fatalf("%d numbers, not quintuples", len(res.Data))
	}
	types := []string{"keyword", "function", "variable", "property", "enumMember", "number", "string", "comment", "event", "enum"}
	got := map[string]string{} // "line:col:len" -> type
	line, col := 0, 0
	for i := 0; i < len(res.Data); i += 5 {
		if dl := int(res.Data[i]); dl > 0 {
			line, col = line+dl, int(res.Data[i+1])
		} else {
			col += int(res.Data[i+1])
		}
		got[fmt.Sprintf("%d:%d:%d", line, col, res.Data[i+2])] = types[res.Data[i+3]]
	}
	for _, c := range []struct {
		tok  string
		n    int
		size int
		want string
	}{
		{"kernel k", 0, 6, "keyword"},
		{"const R", 0, 5, "keyword"},
		{"16", 0, 2, "number"},
		{"tadds %y", 0, 5, "function"},
		{"%x : vec", 0, 2, "variable"},
		{"%x, 1.0", 0, 2, "variable"},
		{"@X2[0", 0, 3, "property"},
		{"MTE2, V", 0, 4, "enum"},
		{"use: tadds", 0, 3, "event"},
		{"// missing: set_flag", 0, len("// missing: set_flag V, MTE2, 0; wait_flag V, MTE2, 0"), "comment"},
	} {
		p := at(t, text, c.tok, c.n)
		key := fmt.Sprintf("%d:%d:%d", p.Line, p.Character, c.size)
		if got[key] != c.want {
			t.Errorf("%q at %s: token %q, want %q", c.tok, key, got[key], c.want)
		}
	}
}
