package lsp

import (
	"sort"

	"github.com/tliron/glsp"
	protocol "github.com/tliron/glsp/protocol_3_16"

	"github.com/ptoasm/ptoasm/asm"
)

// The semantic token legend: highlighting from the parse tree, so an editor
// colours what the assembler sees: on top of editors/vscode's TextMate
// grammar, which knows words but not what the assembler resolved them to,
// and the only highlighting a client without that grammar gets.
var tokenTypes = []string{"keyword", "function", "variable", "property", "enumMember", "number", "string", "comment", "event", "enum"}

const (
	tokKeyword = iota
	tokFunction
	tokVariable
	tokProperty
	tokEnumMember
	tokNumber
	tokString
	tokComment
	tokEvent
	tokEnum
)

var tokenModifiers = []string{"declaration"}

const modDeclaration = 1

var keywords = map[string]bool{
	"const": true, "include": true, "gm": true, "window": true, "signal": true, "fifo": true,
	"kernel": true, "tile": true, "let": true, "for": true, "if": true, "while": true,
	"break": true, "launch": true, "run": true, "reset": true, "expect": true,
}

func semanticTokensOptions() protocol.SemanticTokensOptions {
	return protocol.SemanticTokensOptions{
		Legend: protocol.SemanticTokensLegend{TokenTypes: tokenTypes, TokenModifiers: tokenModifiers},
		Full:   true,
	}
}

type token struct {
	off, n   int
	typ, mod int
}

func (s *Server) semanticTokens(_ *glsp.Context, p *protocol.SemanticTokensParams) (*protocol.SemanticTokens, error) {
	r := s.latest(p.TextDocument.URI)
	out := &protocol.SemanticTokens{Data: []protocol.UInteger{}}
	if r == nil || r.file == nil {
		return out, nil
	}
	text := r.text
	var toks []token
	// word adds a token for exactly w at offset off, if the text has it
	// there: a lowering's synthesized nodes are not spelled in the source.
	word := func(off int, w string, typ, mod int) {
		if w == "" || off < 0 || off+len(w) > len(text) || string(text[off:off+len(w)]) != w {
			return
		}
		toks = append(toks, token{off, len(w), typ, mod})
	}
	firstWord := func(sp asm.Span) {
		i := sp.Pos.Offset
		j := i
		for j < len(text) && j < sp.End.Offset && (text[j] >= 'a' && text[j] <= 'z') {
			j++
		}
		if j > i && keywords[string(text[i:j])] {
			toks = append(toks, token{i, j - i, tokKeyword, 0})
		}
	}
	comments := func(cs ...*asm.Comment) {
		for _, c := range cs {
			if c != nil && c.Span.Pos.Line == c.Span.End.Line && c.Span.Pos.File == r.file.Name {
				toks = append(toks, token{c.Span.Pos.Offset, c.Span.End.Offset - c.Span.Pos.Offset, tokComment, 0})
			}
		}
	}
	comments(r.file.Trailing...)
	v := &visitor{fn: func(n asm.Node, _ *asm.Instr, _ *asm.Kernel) {
		sp := n.NodeSpan()
		if sp.Pos.File != r.file.Name {
			return
		}
		if dn, ok := n.(interface{ Doc() *asm.Comments }); ok {
			if c := dn.Doc(); c != nil {
				comments(c.Before...)
				comments(c.After, c.Open)
			}
		}
		switch n := n.(type) {
		case *asm.Kernel:
			firstWord(sp)
			comments(n.Close...)
		case *asm.For:
			firstWord(sp)
			comments(n.Close...)
		case *asm.While:
			firstWord(sp)
			comments(n.Close...)
		case *asm.If:
			firstWord(sp)
			comments(n.Close...)
			comments(n.ElseClose...)
		case *asm.Launch:
			firstWord(sp)
			comments(n.Close...)
		case *asm.TileDecl:
			firstWord(sp)
			for i := sp.Pos.Offset; i+1+len(n.Name) <= sp.End.Offset && i+1+len(n.Name) <= len(text); i++ {
				if text[i] == '%' && string(text[i+1:i+1+len(n.Name)]) == n.Name {
					word(i, "%"+n.Name, tokVariable, modDeclaration)
					break
				}
			}
		case *asm.Const, *asm.Tensor, *asm.Include, *asm.Let, *asm.Break, *asm.Expect, *asm.Run, *asm.Reset:
			firstWord(sp)
		case *asm.Instr:
			if n.Label != "" {
				word(sp.Pos.Offset, n.Label, tokEvent, modDeclaration)
			}
			if n.OpSpan.Pos.File == r.file.Name {
				toks = append(toks, token{n.OpSpan.Pos.Offset, n.OpSpan.End.Offset - n.OpSpan.Pos.Offset, tokFunction, 0})
			}
		case *asm.Ref:
			word(sp.Pos.Offset, "%"+n.Name, tokVariable, 0)
		case *asm.GMRef:
			word(sp.Pos.Offset, "@"+n.Name, tokProperty, 0)
		case *asm.Name:
			typ := tokEnumMember
			if _, ok := asm.ParsePipe(n.Name); ok {
				typ = tokEnum
			}
			word(sp.Pos.Offset, n.Name, typ, 0)
		case *asm.Num:
			word(sp.Pos.Offset, n.Text, tokNumber, 0)
		case *asm.Str:
			if sp.Pos.Line == sp.End.Line {
				toks = append(toks, token{sp.Pos.Offset, sp.End.Offset - sp.Pos.Offset, tokString, 0})
			}
		}
	}}
	v.file(r.file)
	sort.SliceStable(toks, func(i, j int) bool { return toks[i].off < toks[j].off })
	// Encode as LSP's relative quintuples, dropping overlaps (a token must
	// not contain another) and anything past the text.
	line, col, prevLine, prevCol, pos, end := 0, 0, 0, 0, 0, 0
	for _, t := range toks {
		if t.off < end || t.n <= 0 || t.off+t.n > len(text) {
			continue
		}
		for ; pos < t.off; pos++ {
			if text[pos] == '\n' {
				line, col = line+1, 0
			} else {
				col++
			}
		}
		dl, dc := line-prevLine, col
		if dl == 0 {
			dc = col - prevCol
		}
		out.Data = append(out.Data, protocol.UInteger(dl), protocol.UInteger(dc), protocol.UInteger(t.n), protocol.UInteger(t.typ), protocol.UInteger(t.mod))
		prevLine, prevCol, end = line, col, t.off+t.n
	}
	return out, nil
}
