package lsp

import (
	"bytes"
	"fmt"
	"regexp"

	"github.com/tliron/glsp"
	protocol "github.com/tliron/glsp/protocol_3_16"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/parser/mlir"
)

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// rename renames a tile (in its kernel) or a constant (in every file of
// the program). Every edit is checked against the text it replaces; a
// rename that cannot be done exactly is refused, never half done.
func (s *Server) rename(_ *glsp.Context, p *protocol.RenameParams) (*protocol.WorkspaceEdit, error) {
	r := s.latest(p.TextDocument.URI)
	d := s.docFor(p.TextDocument.URI)
	if r == nil || r.file == nil || r.obj == nil || d == nil {
		return nil, fmt.Errorf("rename needs a program that assembles")
	}
	if mlir.IsMLIR(r.text) {
		return nil, fmt.Errorf("rename is for PTO-AS files; PTOAS MLIR names are SSA values")
	}
	if !identRE.MatchString(p.NewName) {
		return nil, fmt.Errorf("%q is not a name", p.NewName)
	}
	h := at(r.file, offsetOf(r.text, p.Position))
	if h == nil {
		return nil, fmt.Errorf("nothing to rename here")
	}
	texts := map[string][]byte{r.file.Name: r.text}
	for name, b := range r.obj.Sources {
		if _, ok := texts[name]; !ok {
			texts[name] = b
		}
	}
	type site struct {
		file string
		lo   int
	}
	var sites []site
	var old string
	// find adds the first occurrence of word at or after span sp's start.
	find := func(sp asm.Span, word string) bool {
		t := texts[sp.Pos.File]
		lo, hi := sp.Pos.Offset, sp.End.Offset
		if t == nil || lo < 0 || hi > len(t) || lo > hi {
			return false
		}
		i := bytes.Index(t[lo:hi], []byte(word))
		if i < 0 {
			return false
		}
		sites = append(sites, site{sp.Pos.File, lo + i + len(word) - len(old)})
		return true
	}
	ok := true
	switch n := h.node.(type) {
	case *asm.Ref, *asm.TileDecl:
		if ref, isRef := n.(*asm.Ref); isRef {
			old = ref.Name
		} else {
			old = n.(*asm.TileDecl).Name
		}
		if tileOf(r.obj, h.kernel, old) == nil {
			return nil, fmt.Errorf("%%%s is a register; rename renames tiles and constants", old)
		}
		if declIn(h.kernel, p.NewName) != nil {
			return nil, fmt.Errorf("%%%s is already declared in kernel %s", p.NewName, h.kernel.Name)
		}
		v := &visitor{fn: func(n asm.Node, _ *asm.Instr, k *asm.Kernel) {
			if k != h.kernel {
				return
			}
			switch n := n.(type) {
			case *asm.Ref:
				if n.Name == old {
					ok = find(n.Span, "%"+old) && ok
				}
			case *asm.TileDecl:
				if n.Name == old {
					ok = find(n.Span, "%"+old) && ok
				}
			}
		}}
		v.kernel = h.kernel
		v.stmts(h.kernel.Body)
	case *asm.Name, *asm.Const:
		if nm, isName := n.(*asm.Name); isName {
			old = nm.Name
		} else {
			old = n.(*asm.Const).Name
		}
		if _, isConst := r.obj.Const(old); !isConst {
			return nil, fmt.Errorf("%s is not a constant", old)
		}
		if _, taken := r.obj.Const(p.NewName); taken {
			return nil, fmt.Errorf("constant %s already exists", p.NewName)
		}
		// Expectation sites name labels, not constants.
		labels := map[asm.Expr]bool{}
		for _, f := range r.obj.Files {
			for _, dcl := range f.Decls {
				if e, isExpect := dcl.(*asm.Expect); isExpect {
					for _, st := range e.Sites {
						labels[st] = true
					}
				}
			}
		}
		for _, f := range r.obj.Files {
			v := &visitor{fn: func(n asm.Node, _ *asm.Instr, _ *asm.Kernel) {
				switch n := n.(type) {
				case *asm.Name:
					if n.Name == old && !labels[n] {
						ok = find(n.Span, old) && ok
					}
				case *asm.Const:
					if n.Name == old {
						ok = find(n.Span, "const "+old) && ok
					}
				}
			}}
			v.file(f)
		}
	default:
		return nil, fmt.Errorf("rename renames tiles and constants")
	}
	if !ok || len(sites) == 0 {
		return nil, fmt.Errorf("cannot rename %s exactly: a use is not spelled out in the source", old)
	}
	edit := &protocol.WorkspaceEdit{Changes: map[protocol.DocumentUri][]protocol.TextEdit{}}
	for _, st := range sites {
		t := texts[st.file]
		uri := s.uriFor(d, st.file)
		edit.Changes[uri] = append(edit.Changes[uri], protocol.TextEdit{
			Range:   protocol.Range{Start: offsetPosition(t, st.lo), End: offsetPosition(t, st.lo+len(old))},
			NewText: p.NewName,
		})
	}
	return edit, nil
}
