package lsp

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/tliron/glsp"
	protocol "github.com/tliron/glsp/protocol_3_16"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine/hazard"
	"github.com/ptoasm/ptoasm/parser/mlir"
)

// flagFix is the quick fix of a race between two pipes of one core: a
// set_flag after the first access and a wait_flag before the second, on
// an event id the kernel does not use for that pair of pipes.
type flagFix struct {
	diag  protocol.Diagnostic
	title string
	edits []protocol.TextEdit
}

// raceFix builds the fix of f: a set_flag after the first access and a
// wait_flag before the second, on an event id the kernel does not use for
// that pair of pipes, placed where every path runs each of them once:
//
//   - both accesses on one core, on two different pipes that can signal
//     each other, in one kernel of this file, with every flag of that pipe
//     pair in the kernel on a constant id (else no id is sure to be free);
//   - in the innermost statement list that holds both, the set goes after
//     the statement holding the first access and the wait before the one
//     holding the second, so a branch or a nested loop around either
//     access still sets and waits once per pass;
//   - when the second access does not come after the first in that list,
//     the race is across iterations of a loop around both (the double
//     buffer's reverse flag): in the innermost such loop's body, the wait
//     goes before the second's statement and the set after the first's, a
//     set before the loop says the resource starts free, and a wait after
//     it consumes the last iteration's set, as pto-isa's kernels write
//     their INIT/DRAIN flags. Each trip then waits for the previous trip's
//     set, which comes after its first access.
//
// Anything else (across cores or ranks, across launches, a computed flag
// id, a `break` where it could skip one end of the pair, an MLIR file) gets
// no fix: only the hint.
func raceFix(r *result, f *hazard.Finding) ([]protocol.TextEdit, string, bool) {
	if f.Kind != "RAW" && f.Kind != "WAR" && f.Kind != "WAW" || r.obj == nil || r.file == nil || mlir.IsMLIR(r.text) {
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
	if ia == nil || ib == nil || ka != kb {
		return nil, "", false
	}
	pa, pb := pathTo(ka.Body, nil, ia), pathTo(kb.Body, nil, ib)
	if pa == nil || pb == nil {
		return nil, "", false
	}
	// d: the deepest level whose statement list holds both accesses.
	d := 0
	for d+1 < len(pa) && d+1 < len(pb) && sameList(pa[d+1].list, pb[d+1].list) {
		d++
	}
	id, ok := freeEventID(r.obj.Kernel(ka.Name), src, dst)
	if !ok {
		return nil, "", false
	}
	text := r.text
	set := fmt.Sprintf("set_flag %s, %s, %d", src, dst, id)
	wait := fmt.Sprintf("wait_flag %s, %s, %d", src, dst, id)
	if pa[d].i < pb[d].i {
		if hasBreak(pa[d].list[pa[d].i : pb[d].i+1]) {
			return nil, "", false // a path may set and never wait
		}
		sa, sb := pa[d].stmt(), pb[d].stmt()
		edits := []protocol.TextEdit{
			insertAfter(text, sa, d+1, set),
			insertBefore(text, sb, d+1, wait),
		}
		return edits, fmt.Sprintf("Order the %s: `%s` after line %d, `%s` before line %d",
			f.Kind, set, sa.NodeSpan().End.Line, wait, sb.NodeSpan().Pos.Line), true
	}
	// Across iterations: the innermost loop whose body holds both.
	e := d
	for e > 0 && !isLoop(pa[e].owner) {
		e--
	}
	if e == 0 {
		return nil, "", false // no loop around both: a repeat across launches or blocks
	}
	loop := pa[e-1].stmt()
	if hasBreak(pa[e].list) {
		return nil, "", false // the last trip's set may never come for the drain
	}
	sa, sb := pa[e].stmt(), pb[e].stmt()
	edits := []protocol.TextEdit{
		insertBefore(text, loop, e, set),
		insertBefore(text, sb, e+1, wait),
		insertAfter(text, sa, e+1, set),
		insertAfter(text, loop, e, wait),
	}
	return edits, fmt.Sprintf("Order the %s across iterations: `%s` before the loop (line %d) and after line %d, `%s` before line %d and after the loop",
		f.Kind, set, loop.NodeSpan().Pos.Line, sa.NodeSpan().End.Line, wait, sb.NodeSpan().Pos.Line), true
}

// freeEventID is the lowest event id k's flags from src to dst do not use;
// false when one of them computes its id (any id may be in use) or all
// are taken.
func freeEventID(k *asm.KernelInfo, src, dst asm.Pipe) (int, bool) {
	used, computed := eventIDsUsed(k, src, dst, asm.OpNone)
	if k == nil || computed {
		return 0, false
	}
	for i := 0; i < asm.NumEventIDs; i++ {
		if used&(1<<i) == 0 {
			return i, true
		}
	}
	return 0, false
}

// eventIDsUsed is the set (bit i: id i) of constant event ids that k's
// flags from src to dst use, only its set_flags or wait_flags when op is
// one (asm.OpNone: both); computed says one of them computes its id at run time.
func eventIDsUsed(k *asm.KernelInfo, src, dst asm.Pipe, op asm.Opcode) (used uint32, computed bool) {
	if k == nil {
		return 0, false
	}
	for _, o := range k.Ops {
		if o.Info.Op != asm.OpSetFlag && o.Info.Op != asm.OpWaitFlag || op != asm.OpNone && o.Info.Op != op ||
			len(o.Args) < 3 || o.Args[0].Pipe != src || o.Args[1].Pipe != dst {
			continue
		}
		if o.Args[2].Val.Fn != nil {
			computed = true
			continue
		}
		if v := o.Args[2].Val.Val; v >= 0 && v < 32 {
			used |= 1 << v
		}
	}
	return used, computed
}

// step is one level of the path from a kernel's body down to an
// instruction: a statement list, the index of the statement in it that
// holds the instruction, and the statement that owns the list (nil for the
// kernel's body).
type step struct {
	list  []asm.Stmt
	i     int
	owner asm.Stmt
}

func (s step) stmt() asm.Stmt { return s.list[s.i] }

// pathTo is the path from ss (owned by owner) down to in, nil if in is not
// under ss.
func pathTo(ss []asm.Stmt, owner asm.Stmt, in *asm.Instr) []step {
	for i, s := range ss {
		if s == asm.Stmt(in) {
			return []step{{ss, i, owner}}
		}
		for _, sub := range subLists(s) {
			if p := pathTo(sub, s, in); p != nil {
				return append([]step{{ss, i, owner}}, p...)
			}
		}
	}
	return nil
}

func subLists(s asm.Stmt) [][]asm.Stmt {
	switch s := s.(type) {
	case *asm.For:
		return [][]asm.Stmt{s.Body}
	case *asm.If:
		return [][]asm.Stmt{s.Then, s.Else}
	case *asm.While:
		return [][]asm.Stmt{s.Body}
	}
	return nil
}

// hasBreak says whether a `break` is anywhere in ss (inner loops included:
// the check is only there to keep a fix off paths it cannot balance).
func hasBreak(ss []asm.Stmt) bool {
	for _, s := range ss {
		if _, ok := s.(*asm.Break); ok {
			return true
		}
		for _, sub := range subLists(s) {
			if hasBreak(sub) {
				return true
			}
		}
	}
	return false
}

func isLoop(s asm.Stmt) bool {
	switch s.(type) {
	case *asm.For, *asm.While:
		return true
	}
	return false
}

// indent is fmt's indentation of a statement at nesting level (the
// kernel's body is level 1).
func indent(level int) string { return strings.Repeat("    ", level) }

// insertBefore puts line on a line of its own before the line where s
// starts; insertAfter after the line where s ends. Both indent it as fmt
// indents a statement at level, so a file that was a fmt fixed point stays
// one.
func insertBefore(text []byte, s asm.Stmt, level int, line string) protocol.TextEdit {
	at := s.NodeSpan().Pos.Offset
	for at > 0 && text[at-1] != '\n' {
		at--
	}
	p := offsetPosition(text, at)
	return protocol.TextEdit{Range: protocol.Range{Start: p, End: p}, NewText: indent(level) + line + eol(text)}
}

func insertAfter(text []byte, s asm.Stmt, level int, line string) protocol.TextEdit {
	at := s.NodeSpan().End.Offset
	for at < len(text) && text[at] != '\n' && text[at] != '\r' {
		at++
	}
	p := offsetPosition(text, at)
	return protocol.TextEdit{Range: protocol.Range{Start: p, End: p}, NewText: eol(text) + indent(level) + line}
}

// eol is the text's line end: CRLF if it uses it, else LF, so an inserted
// line does not mix the two.
func eol(text []byte) string {
	if bytes.Contains(text, []byte("\r\n")) {
		return "\r\n"
	}
	return "\n"
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
