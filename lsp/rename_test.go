package lsp_test

import (
	"regexp"
	"strings"
	"testing"

	protocol "github.com/tliron/glsp/protocol_3_16"

	"github.com/ptoasm/ptoasm/lsp"
	"github.com/ptoasm/ptoasm/lsp/lsptest"
)

// TestRename renames a tile and a constant of war.pto and checks that the
// renamed program assembles and has the renamed name where the old one was;
// a register, a taken name and a non-name are refused.
func TestRename(t *testing.T) {
	uri, text := program(t, "hazards/war.pto")
	for _, c := range []struct {
		name, tok, newName string
		old, new           string // the old and new spelling, %-prefixed for tiles
		err                bool
	}{
		{name: "tile from a use", tok: "%x, 1.0", newName: "src", old: "%x", new: "%src"},
		{name: "tile from its declaration", tok: "tile %y", newName: "dst", old: "%y", new: "%dst"},
		{name: "constant", tok: "R, C] = random(seed=2", newName: "ROWS", old: "R", new: "ROWS"},
		{name: "taken tile name", tok: "%x, 1.0", newName: "y", err: true},
		{name: "taken constant name", tok: "R, C] = random(seed=2", newName: "C", err: true},
		{name: "not a name", tok: "%x, 1.0", newName: "1x", err: true},
		{name: "tensor", tok: "@X2", newName: "Z", err: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			cl := start(t, lsp.Options{Lint: staticLint})
			if err := cl.Open(uri, text); err != nil {
				t.Fatal(err)
			}
			if _, err := cl.WaitDiagnostics(uri, wait, lsptest.Version(1)); err != nil {
				t.Fatal(err)
			}
			var we *protocol.WorkspaceEdit
			err := cl.Call("textDocument/rename", protocol.RenameParams{
				TextDocumentPositionParams: protocol.TextDocumentPositionParams{TextDocument: protocol.TextDocumentIdentifier{URI: uri}, Position: at(t, text, c.tok, 0)},
				NewName:                    c.newName,
			}, &we)
			if c.err {
				if err == nil {
					t.Fatalf("rename to %q: no error, edits %s", c.newName, dump(we))
				}
				return
			}
			if err != nil || we == nil {
				t.Fatalf("rename: %v", err)
			}
			got := apply(text, we.Changes[uri])
			if len(we.Changes) != 1 {
				t.Errorf("edits in %d files, want 1", len(we.Changes))
			}
			// Every code use of the old name became the new one.
			if n, m := wordCount(text, c.old), wordCount(got, c.new); n == 0 || m != n || wordCount(got, c.old) != 0 {
				t.Errorf("%d uses of %s, %d of %s after the rename, %d left:\n%s", n, c.old, m, c.new, wordCount(got, c.old), got)
			}
			// And it still assembles, with the same findings (none).
			if err := cl.Change(uri, 2, got); err != nil {
				t.Fatal(err)
			}
			p, err := cl.WaitDiagnostics(uri, wait, lsptest.Version(2))
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Diagnostics) != 0 {
				t.Errorf("renamed program: %s\n%s", dump(p.Diagnostics), got)
			}
		})
	}
}

// wordCount counts name as a whole word (a tile with its %) outside
// comments.
func wordCount(text, name string) int {
	pat := `(^|[^\w%@])` + regexp.QuoteMeta(name) + `\b`
	if strings.HasPrefix(name, "%") {
		pat = regexp.QuoteMeta(name) + `\b`
	}
	re := regexp.MustCompile(pat)
	n := 0
	for _, l := range strings.Split(text, "\n") {
		l, _, _ = strings.Cut(l, "//")
		n += len(re.FindAllStringIndex(l, -1))
	}
	return n
}
