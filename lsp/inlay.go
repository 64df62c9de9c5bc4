package lsp

import (
	"encoding/json"
	"fmt"

	protocol "github.com/tliron/glsp/protocol_3_16"

	"github.com/ptoasm/ptoasm/asm"
)

// Inlay hints are LSP 3.17, and no Go module the proxy serves has its types:
// glsp v0.2.2 (the newest) stops at 3.16, and go.lsp.dev/protocol v0.12.0
// (the newest) has no InlayHint type either. So the one request and its capability are declared here, field for
// field as the 3.17 specification has them, and handle() dispatches the
// method before glsp's handler; everything else stays glsp's.

const methodInlayHint = "textDocument/inlayHint"

// inlayHintParams is the 3.17 InlayHintParams (without the progress token).
type inlayHintParams struct {
	TextDocument protocol.TextDocumentIdentifier `json:"textDocument"`
	Range        protocol.Range                  `json:"range"`
}

// inlayHint is the 3.17 InlayHint with a string label.
type inlayHint struct {
	Position    protocol.Position `json:"position"`
	Label       string            `json:"label"`
	Kind        int               `json:"kind,omitempty"` // 1 type, 2 parameter
	Tooltip     string            `json:"tooltip,omitempty"`
	PaddingLeft bool              `json:"paddingLeft,omitempty"`
}

const inlayHintKindType = 1

// serverCapabilities adds 3.17's inlayHintProvider to glsp's capabilities
// (encoding/json promotes the embedded struct's fields).
type serverCapabilities struct {
	protocol.ServerCapabilities
	InlayHintProvider bool `json:"inlayHintProvider"`
}

func (s *Server) inlayHintRequest(raw *json.RawMessage) (any, error) {
	var p inlayHintParams
	if raw == nil {
		return nil, fmt.Errorf("%s: no params", methodInlayHint)
	}
	if err := json.Unmarshal(*raw, &p); err != nil {
		return nil, err
	}
	return s.inlayHints(p), nil
}

// inlayHints shows, at the end of each instruction in the range, the pipe
// whose queue it occupies (asm.COp.ExecPipe: a routed move's by its
// operands, set_flag's its source pipe, wait_flag's its destination), from
// the latest analysis that assembled; none while the text does not.
func (s *Server) inlayHints(p inlayHintParams) []inlayHint {
	out := []inlayHint{}
	r := s.latest(p.TextDocument.URI)
	if r == nil || r.obj == nil || r.file == nil {
		return out
	}
	pipes := map[*asm.Instr][]asm.Pipe{}
	var order []*asm.Instr
	for _, k := range r.obj.Kernels {
		for _, op := range k.Ops {
			in := op.Instr
			if in == nil || in.Span.Pos.File != r.file.Name {
				continue
			}
			pp := op.ExecPipe()
			if _, ok := pipes[in]; !ok {
				order = append(order, in)
			}
			if !containsPipe(pipes[in], pp) {
				pipes[in] = append(pipes[in], pp)
			}
		}
	}
	for _, in := range order {
		pos := position(in.Span.End)
		if before(pos, p.Range.Start) || before(p.Range.End, pos) {
			continue
		}
		label := ""
		for i, pp := range pipes[in] {
			if i > 0 {
				label += "|"
			}
			label += pp.String()
		}
		out = append(out, inlayHint{
			Position: pos, Label: label, Kind: inlayHintKindType, PaddingLeft: true,
			Tooltip: "the pipe whose queue " + in.Op + " occupies",
		})
	}
	return out
}

func containsPipe(ps []asm.Pipe, p asm.Pipe) bool {
	for _, q := range ps {
		if q == p {
			return true
		}
	}
	return false
}
