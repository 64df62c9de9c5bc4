package lsp

import (
	"fmt"

	"github.com/tliron/glsp"
	protocol "github.com/tliron/glsp/protocol_3_16"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine/hazard"
)

// flagFix is the quick fix of a race between two pipes of one core: a
// set_flag after the first access and a wait_flag before the second, on
// an event id the kernel does not use for that pair of pipes.
type flagFix struct {
	diag  protocol.Diagnostic
	title string
	edits []protocol.TextEdit
}

// raceFix builds the fix of f, when it is the simple case it is sure of:
// both accesses on one core, on two different pipes that can signal each
// other, in the same statement list (so each iteration of any enclosing
// loop sets before it waits, and no path skips one of the two), the first
// before the second, and every flag of that pipe pair in the kernel on a
// constant id. Anything else (a race across iterations, across cores or
// ranks, a flag id computed at run time) gets no fix: only the hint.
func raceFix(r *result, f *hazard.Finding) ([]protocol.TextEdit, string, bool) {
	if f.Kind != "RAW" && f.Kind != "WAR" && f.Kind != "WAW" || r.obj == nil || r.file == nil {
		return nil, "", false
	}
	a, b := f.First, f.Second
	if a.File != r.file.Name || b.File != r.file.Name || a.Core != b.Core || a.Rank != b.Rank {
		return nil, "", false
	}
	src, ok1 := asm.ParsePipe(a.Pipe)
	dst, ok2 := asm.ParsePipe(b.Pipe)
	if !ok1 || !ok2 || src == dst || src == asm.PipeS || dst == asm.PipeS || src == asm.PipeALL || dst == asm.PipeALL {
		return nil, "", false
	}
	ia, ka := instrAtSite(r.file, a)
	ib, kb := instrAtSite(r.file, b)
	if ia == nil || ib == nil || ka != kb || ia.Span.Pos.Offset >= ib.Span.Pos.Offset {
		return nil, "", false
	}
	if la, lb := listOf(ka.Body, ia), listOf(ka.Body, ib); la == nil || !sameList(la, lb) {
		return nil, "", false
	}
	k := r.obj.Kernel(ka.Name)
	if k == nil {
		return nil, "", false
	}
	var used uint32
	for _, o := range k.Ops {
		if o.Info.Op != asm.OpSetFlag && o.Info.Op != asm.OpWaitFlag || len(o.Args) < 3 || o.Args[0].Pipe != src || o.Args[1].Pipe != dst {
			continue
		}
		if o.Args[2].Val.Fn != nil {
			return nil, "", false
		}
		if v := o.Args[2].Val.Val; v >= 0 && v < 32 {
			used |= 1 << v
		}
	}
	id := -1
	for i := 0; i < 8; i++ {
		if used&(1<<i) == 0 {
			id = i
			break
		}
	}
	if id < 0 {
		return nil, "", false
	}
	text := r.text
	// The set goes on a line of its own after the first access's line, the
	// wait on a line of its own before the second's, indented like them.
	endA := ia.Span.End.Offset
	for endA < len(text) && text[endA] != '\n' {
		endA++
	}
	startB := ib.Span.Pos.Offset
	for startB > 0 && text[startB-1] != '\n' {
		startB--
	}
	set := fmt.Sprintf("set_flag %s, %s, %d", src, dst, id)
	wait := fmt.Sprintf("wait_flag %s, %s, %d", src, dst, id)
	edits := []protocol.TextEdit{
		{Range: protocol.Range{Start: offsetPosition(text, endA), End: offsetPosition(text, endA)}, NewText: "\n" + indentOf(text, ia.Span.Pos.Offset) + set},
		{Range: protocol.Range{Start: offsetPosition(text, startB), End: offsetPosition(text, startB)}, NewText: indentOf(text, ib.Span.Pos.Offset) + wait + "\n"},
	}
	return edits, fmt.Sprintf("Order the %s: `%s` after line %d, `%s` before line %d", f.Kind, set, a.Line, wait, b.Line), true
}

// indentOf is the white space that starts the line holding offset off.
func indentOf(text []byte, off int) string {
	start := off
	for start > 0 && text[start-1] != '\n' {
		start--
	}
	end := start
	for end < len(text) && (text[end] == ' ' || text[end] == '\t') {
		end++
	}
	return string(text[start:end])
}

// instrAtSite finds the instruction a finding's site names, and its kernel.
func instrAtSite(f *asm.File, st hazard.Site) (*asm.Instr, *asm.Kernel) {
	var in *asm.Instr
	var kern *asm.Kernel
	v := &visitor{fn: func(n asm.Node, _ *asm.Instr, k *asm.Kernel) {
		if i, ok := n.(*asm.Instr); ok && in == nil && i.Span.Pos.Line == st.Line && i.Span.Pos.Col == st.Col {
			in, kern = i, k
		}
	}}
	v.file(f)
	return in, kern
}

// listOf is the statement list that holds in directly.
func listOf(ss []asm.Stmt, in *asm.Instr) []asm.Stmt {
	for _, s := range ss {
		if s == asm.Stmt(in) {
			return ss
		}
		var subs [][]asm.Stmt
		switch s := s.(type) {
		case *asm.For:
			subs = [][]asm.Stmt{s.Body}
		case *asm.If:
			subs = [][]asm.Stmt{s.Then, s.Else}
		case *asm.While:
			subs = [][]asm.Stmt{s.Body}
		}
		for _, sub := range subs {
			if l := listOf(sub, in); l != nil {
				return l
			}
		}
	}
	return nil
}

func sameList(a, b []asm.Stmt) bool {
	return len(a) > 0 && len(b) > 0 && &a[0] == &b[0]
}

// codeAction offers the quick fixes of the lint findings under the range.
func (s *Server) codeAction(_ *glsp.Context, p *protocol.CodeActionParams) (any, error) {
	r := s.latest(p.TextDocument.URI)
	out := []protocol.CodeAction{}
	if r == nil {
		return out, nil
	}
	for _, fx := range r.fixes {
		if !overlaps(fx.diag.Range, p.Range) {
			continue
		}
		kind := protocol.CodeActionKindQuickFix
		out = append(out, protocol.CodeAction{
			Title:       fx.title,
			Kind:        &kind,
			Diagnostics: []protocol.Diagnostic{fx.diag},
			Edit:        &protocol.WorkspaceEdit{Changes: map[protocol.DocumentUri][]protocol.TextEdit{p.TextDocument.URI: fx.edits}},
		})
	}
	return out, nil
}

func before(a, b protocol.Position) bool {
	return a.Line < b.Line || a.Line == b.Line && a.Character < b.Character
}

func overlaps(a, b protocol.Range) bool {
	return !before(a.End, b.Start) && !before(b.End, a.Start)
}
