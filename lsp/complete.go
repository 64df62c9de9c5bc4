package lsp

import (
	"sort"
	"strings"

	"github.com/tliron/glsp"
	protocol "github.com/tliron/glsp/protocol_3_16"

	"github.com/ptoasm/ptoasm/asm"
)

func isWordByte(c byte) bool {
	return c == '_' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// completion offers, by what precedes the word under the cursor: after `%`
// the enclosing kernel's tiles and registers, after `@` the tensors, as the
// first word of a statement the mnemonics of the ISA table, elsewhere the
// constants and pipe names. It reads the editor's current text, and the
// names of the latest analysis.
func (s *Server) completion(_ *glsp.Context, p *protocol.CompletionParams) (any, error) {
	d := s.docFor(p.TextDocument.URI)
	if d == nil {
		return nil, nil
	}
	s.mu.Lock()
	text, r := d.text, d.res
	s.mu.Unlock()
	off := offsetOf(text, p.Position)
	start := off
	for start > 0 && isWordByte(text[start-1]) {
		start--
	}
	prefix := string(text[start:off])
	lineStart := start
	for lineStart > 0 && text[lineStart-1] != '\n' {
		lineStart--
	}
	before := strings.TrimSpace(string(text[lineStart:start]))
	var items []protocol.CompletionItem
	add := func(label string, kind protocol.CompletionItemKind, detail string) {
		if strings.HasPrefix(label, prefix) {
			it := protocol.CompletionItem{Label: label, Kind: &kind}
			if detail != "" {
				it.Detail = &detail
			}
			items = append(items, it)
		}
	}
	switch {
	case start > 0 && text[start-1] == '%':
		// `%name`; modulo (`a % b`) has a space before its operand.
		if r != nil && r.names != nil {
			if k := kernelAt(r, off); k != nil {
				for _, t := range k.Tiles {
					add(t.Name, protocol.CompletionItemKindVariable, t.Loc.String()+" "+t.DType.String())
				}
				for _, reg := range k.Regs {
					add(reg, protocol.CompletionItemKindVariable, "register")
				}
			}
		}
	case start > 0 && text[start-1] == '@':
		if r != nil && r.names != nil {
			for _, t := range r.names.Tensors {
				add(t.Name, protocol.CompletionItemKindVariable, t.Class.String()+" "+t.DType.String())
			}
		}
	case before == "" || strings.HasSuffix(before, ":") && !strings.ContainsAny(before[:len(before)-1], " \t"):
		// The first word of a line, or the one after a label.
		for _, op := range asm.ISA {
			add(op.Name, protocol.CompletionItemKindFunction, op.RouteString()+" · "+op.Family.String())
			for _, a := range op.Aliases {
				add(a, protocol.CompletionItemKindFunction, "alias of "+op.Name)
			}
		}
	default:
		if r != nil && r.names != nil {
			for _, c := range r.names.Consts {
				add(c.Name, protocol.CompletionItemKindConstant, "")
			}
		}
		for p := asm.PipeS; p < asm.NumPipes; p++ {
			add(p.String(), protocol.CompletionItemKindEnumMember, "pipe")
		}
	}
	sort.SliceStable(items, func(i, j int) bool { return items[i].Label < items[j].Label })
	if items == nil {
		items = []protocol.CompletionItem{}
	}
	return items, nil
}

// kernelAt is the kernel of r.names the cursor is in: the kernel declared
// around offset off of the analysed text (which the editor's text may have
// moved on from), found by name.
func kernelAt(r *result, off int) *asm.KernelInfo {
	if r.file == nil {
		return nil
	}
	for _, d := range r.file.Decls {
		if k, ok := d.(*asm.Kernel); ok && off >= k.Span.Pos.Offset && off < k.Span.End.Offset {
			return r.names.Kernel(k.Name)
		}
	}
	return nil
}

// references lists the uses of the tile, register, tensor, constant or
// label under the cursor, across the program's files.
func (s *Server) references(_ *glsp.Context, p *protocol.ReferenceParams) ([]protocol.Location, error) {
	r := s.latest(p.TextDocument.URI)
	d := s.docFor(p.TextDocument.URI)
	if r == nil || r.file == nil || d == nil {
		return nil, nil
	}
	h := at(r.file, offsetOf(r.text, p.Position))
	if h == nil {
		return nil, nil
	}
	var match func(n asm.Node, k *asm.Kernel) bool
	switch n := h.node.(type) {
	case *asm.Ref, *asm.TileDecl:
		name := ""
		if ref, ok := n.(*asm.Ref); ok {
			name = ref.Name
		} else {
			name = n.(*asm.TileDecl).Name
		}
		kernel := h.kernel
		match = func(n asm.Node, k *asm.Kernel) bool {
			if k != kernel {
				return false
			}
			switch n := n.(type) {
			case *asm.Ref:
				return n.Name == name
			case *asm.TileDecl:
				return p.Context.IncludeDeclaration && n.Name == name
			}
			return false
		}
	case *asm.GMRef, *asm.Tensor:
		name := ""
		if g, ok := n.(*asm.GMRef); ok {
			name = g.Name
		} else {
			name = n.(*asm.Tensor).Name
		}
		match = func(n asm.Node, _ *asm.Kernel) bool {
			switch n := n.(type) {
			case *asm.GMRef:
				return n.Name == name
			case *asm.Tensor:
				return p.Context.IncludeDeclaration && n.Name == name
			}
			return false
		}
	case *asm.Name:
		name := n.Name
		match = func(n asm.Node, _ *asm.Kernel) bool {
			switch n := n.(type) {
			case *asm.Name:
				return n.Name == name
			case *asm.Const:
				return p.Context.IncludeDeclaration && n.Name == name
			case *asm.Instr:
				return p.Context.IncludeDeclaration && n.Label == name
			}
			return false
		}
	default:
		return nil, nil
	}
	out := []protocol.Location{}
	for _, f := range r.files() {
		v := &visitor{fn: func(n asm.Node, _ *asm.Instr, k *asm.Kernel) {
			if match(n, k) {
				out = append(out, protocol.Location{URI: s.uriFor(d, n.NodeSpan().Pos.File), Range: spanRange(n.NodeSpan())})
			}
		}}
		v.file(f)
	}
	return out, nil
}
