package lsp_test

import (
	"encoding/json"
	"strings"
	"testing"

	protocol "github.com/tliron/glsp/protocol_3_16"
)

// TestInlayHints: the server says it serves inlay hints (LSP 3.17) and gives
// each instruction its pipe, as the decoded program routes it.
func TestInlayHints(t *testing.T) {
	cl, uri, text := opened(t, "ffn_grid/unified_as_shipped.pto")
	var init struct {
		Capabilities map[string]json.RawMessage `json:"capabilities"`
	}
	if err := cl.Call("initialize", protocol.InitializeParams{}, &init); err != nil {
		t.Fatal(err)
	}
	if string(init.Capabilities["inlayHintProvider"]) != "true" {
		t.Errorf("inlayHintProvider %s, want true", init.Capabilities["inlayHintProvider"])
	}
	lines := strings.Split(text, "\n")
	var hints []struct {
		Position    protocol.Position `json:"position"`
		Label       string            `json:"label"`
		Kind        int               `json:"kind"`
		PaddingLeft bool              `json:"paddingLeft"`
	}
	whole := protocol.Range{End: protocol.Position{Line: protocol.UInteger(len(lines))}}
	if err := cl.Call("textDocument/inlayHint", map[string]any{"textDocument": map[string]string{"uri": uri}, "range": whole}, &hints); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{} // the instruction's text -> its hint
	for _, h := range hints {
		l := lines[h.Position.Line]
		if int(h.Position.Character) > len(l) || h.Kind != 1 || !h.PaddingLeft {
			t.Fatalf("hint %+v on line %q", h, l)
		}
		got[strings.TrimSpace(l[:h.Position.Character])] = h.Label
	}
	for instr, pipe := range map[string]string{
		"mm: tmatmul.acc %cDown, %aDown, %bDown #init=(%j == 0)":                           "M",
		"consume: tmov %aDown, %hiddenChunkMat[%b]":                                        "MTE1", // routed: mat to left
		"tmov %downMat, %cDown":                                                            "FIX",  // routed: acc to mat
		"gather: tallgather %hiddenChunkMat[%nb], @Win[%row * COLS + %f / Fi, 0, %f % Fi]": "MTE2",
		"set_flag MTE2, MTE1, %nb":                                                         "MTE2", // a set waits in its source pipe
		"wait_flag MTE2, MTE1, %b":                                                         "MTE1", // a wait in its destination
		"tcvt %hiddenF16, %hiddenF32 #rnd=rint":                                            "V",
		"dsb":                                                                              "S",
	} {
		if got[instr] != pipe {
			t.Errorf("%s: hint %q, want %q", instr, got[instr], pipe)
		}
	}
	// A range gets only its own lines' hints.
	one := protocol.Range{Start: at(t, text, "mm: tmatmul.acc", 0)}
	one.End = protocol.Position{Line: one.Start.Line + 1}
	hints = nil
	if err := cl.Call("textDocument/inlayHint", map[string]any{"textDocument": map[string]string{"uri": uri}, "range": one}, &hints); err != nil {
		t.Fatal(err)
	}
	if len(hints) != 1 || hints[0].Label != "M" {
		t.Errorf("hints of one line: %+v", hints)
	}
}
