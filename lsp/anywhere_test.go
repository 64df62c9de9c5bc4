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
					if err := cl.AskAt(uri, protocol.Position{Line: protocol.UInteger(l), Character: protocol.UInteger(c)}); err != nil {
						t.Fatal(err)
					}
				}
			}
			if err := cl.AskWhole(uri, len(lines)); err != nil {
				t.Fatal(err)
			}
		})
	}
}
