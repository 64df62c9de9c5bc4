package lsp

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/tliron/glsp"
	protocol "github.com/tliron/glsp/protocol_3_16"

	"github.com/ptoasm/ptoasm/asm"
)

func isWordByte(c byte) bool {
	return c == '_' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// completion offers, by what precedes the word under the cursor: in an
// instruction's operand, what that slot of the ISA table accepts (tiles of
// the locations it allows, registers, tensors, pipe names, constants, and
// for a flag's event id the ids of its pipe pair, free ones first for
// set_flag and the ones set for wait_flag); after `#` the instruction's
// attribute keys and after `#key=` their words; otherwise after `%` the
// enclosing kernel's tiles and registers, after `@` the tensors, as the
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
	var kern *asm.KernelInfo
	if r != nil && r.names != nil {
		kern = kernelAt(r, off)
	}
	tiles := func(locs []asm.Loc) {
		if kern == nil {
			return
		}
		seen := map[string]bool{}
		for _, t := range kern.Tiles {
			if seen[t.Name] || len(locs) > 0 && !slices.Contains(locs, t.Loc) {
				continue
			}
			seen[t.Name] = true
			add(t.Name, protocol.CompletionItemKindVariable, t.Loc.String()+" "+t.DType.String())
		}
	}
	regs := func() {
		if kern != nil {
			for _, reg := range kern.Regs {
				add(reg, protocol.CompletionItemKindVariable, "register")
			}
		}
	}
	tensors := func() {
		if r != nil && r.names != nil {
			for _, t := range r.names.Tensors {
				add(t.Name, protocol.CompletionItemKindVariable, t.Class.String()+" "+t.DType.String())
			}
		}
	}
	consts := func() {
		if r != nil && r.names != nil {
			for _, c := range r.names.Consts {
				add(c.Name, protocol.CompletionItemKindConstant, "")
			}
		}
	}
	pipes := func() {
		for p := asm.PipeS; p < asm.NumPipes; p++ {
			add(p.String(), protocol.CompletionItemKindEnumMember, "pipe")
		}
	}
	oc := operandAt(string(text[lineStart:start]))
	sigil := byte(0)
	if start > 0 {
		sigil = text[start-1]
	}
	switch {
	case oc.op != nil && oc.attr && oc.key == "":
		// `#` then the attribute's key.
		for _, k := range oc.op.Attrs {
			add(k, protocol.CompletionItemKindProperty, "attribute of "+oc.op.Name)
		}
	case oc.op != nil && oc.attr:
		for _, w := range oc.op.AttrWords(oc.key) {
			add(w, protocol.CompletionItemKindEnumMember, "#"+oc.key)
		}
	case oc.op != nil && oc.spec != nil:
		// An operand: what its slot of the ISA table accepts.
		for _, kind := range oc.spec.Kinds {
			switch kind {
			case asm.ArgTile:
				if sigil != '@' {
					tiles(oc.spec.Locs)
				}
			case asm.ArgReg:
				if sigil != '@' {
					regs()
				}
			case asm.ArgGM:
				if sigil != '%' {
					tensors()
				}
			case asm.ArgPipe:
				if sigil != '%' && sigil != '@' {
					pipes()
				}
			case asm.ArgScalar, asm.ArgFloat:
				switch {
				case sigil == '%':
					regs()
				case sigil != '@':
					consts()
					if oc.index == 2 && (oc.op.Name == "set_flag" || oc.op.Name == "wait_flag") {
						items = append(items, eventIDItems(kern, oc, prefix)...)
					}
				}
			}
		}
	case sigil == '%':
		// `%name`; modulo (`a % b`) has a space before its operand.
		tiles(nil)
		regs()
	case sigil == '@':
		tensors()
	case before == "" || strings.HasSuffix(before, ":") && !strings.ContainsAny(before[:len(before)-1], " \t"):
		// The first word of a line, or the one after a label.
		for _, op := range asm.ISA {
			add(op.Name, protocol.CompletionItemKindFunction, op.RouteString()+" · "+op.Family.String())
			for _, a := range op.Aliases {
				add(a, protocol.CompletionItemKindFunction, "alias of "+op.Name)
			}
		}
	default:
		consts()
		pipes()
	}
	sort.SliceStable(items, func(i, j int) bool { return sortKey(items[i]) < sortKey(items[j]) })
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

// operandCtx is where in an instruction the cursor is.
type operandCtx struct {
	op    *asm.OpInfo
	index int              // the operand's position, from 0
	spec  *asm.OperandSpec // its slot in the table; nil past the last
	args  []string         // the operands before it, as written
	attr  bool             // in an attribute: `#key` or `#key=value`
	key   string           // the attribute's key, once `=` follows it
}

// operandAt reads the line up to the word under the cursor: a statement
// (after an optional label, `%r = ` result and `pto.` prefix) whose first
// word is a mnemonic, then its operands; commas inside brackets and
// parentheses do not count.
func operandAt(line string) operandCtx {
	s := strings.TrimLeft(line, " \t")
	if w, rest, ok := strings.Cut(s, ":"); ok && isName(w) && (rest == "" || rest[0] == ' ' || rest[0] == '\t') {
		s = strings.TrimLeft(rest, " \t")
	}
	if strings.HasPrefix(s, "%") {
		if w, rest, ok := strings.Cut(s[1:], "="); ok && isName(strings.TrimSpace(w)) && !strings.HasPrefix(rest, "=") {
			s = strings.TrimLeft(rest, " \t")
		}
	}
	s = strings.TrimPrefix(s, "pto.")
	end := 0
	for end < len(s) && isWordByte(s[end]) {
		end++
	}
	if end == 0 || end == len(s) {
		return operandCtx{} // no mnemonic yet, or still typing it
	}
	op := asm.LookupOp(s[:end])
	if op == nil {
		return operandCtx{}
	}
	c := operandCtx{op: op}
	rest := s[end:]
	if i := strings.LastIndexByte(rest, '#'); i >= 0 {
		a := rest[i+1:]
		if k, _, ok := strings.Cut(a, "="); ok {
			c.attr, c.key = true, k
			return c
		}
		if !strings.ContainsAny(a, " \t,") {
			c.attr = true
			return c
		}
	}
	depth, from := 0, 0
	for i := 0; i < len(rest); i++ {
		switch rest[i] {
		case '[', '(':
			depth++
		case ']', ')':
			depth--
		case ',':
			if depth == 0 {
				c.args = append(c.args, strings.TrimSpace(rest[from:i]))
				from = i + 1
			}
		}
	}
	c.index = len(c.args)
	switch {
	case c.index < len(op.Operands):
		c.spec = &op.Operands[c.index]
	case len(op.Operands) > 0 && op.Operands[len(op.Operands)-1].Variadic:
		c.spec = &op.Operands[len(op.Operands)-1]
	}
	return c
}

func isName(w string) bool {
	if w == "" || w[0] >= '0' && w[0] <= '9' {
		return false
	}
	for i := 0; i < len(w); i++ {
		if w[i] == '.' || !isWordByte(w[i]) {
			return false
		}
	}
	return true
}

// eventIDItems are the event ids of a set_flag or wait_flag whose two pipes
// are written: for set_flag the ids k's flags of that pipe pair leave free
// first (a new flag), then the used ones; for wait_flag the ids its
// set_flags use first (a wait consumes a set), then the rest.
func eventIDItems(k *asm.KernelInfo, c operandCtx, prefix string) []protocol.CompletionItem {
	src, ok1 := asm.ParsePipe(c.args[0])
	dst, ok2 := asm.ParsePipe(c.args[1])
	if !ok1 || !ok2 {
		return nil
	}
	used, computed := eventIDsUsed(k, src, dst, asm.OpNone)
	set, _ := eventIDsUsed(k, src, dst, asm.OpSetFlag)
	var out []protocol.CompletionItem
	for id := 0; id < asm.NumEventIDs; id++ {
		label := fmt.Sprint(id)
		if !strings.HasPrefix(label, prefix) {
			continue
		}
		var detail string
		rank := 1
		switch {
		case c.op.Name == "wait_flag" && set&(1<<id) != 0:
			detail, rank = fmt.Sprintf("set by a set_flag %s, %s, %d in this kernel", src, dst, id), 0
		case c.op.Name == "wait_flag":
			detail = fmt.Sprintf("no set_flag %s, %s, %d in this kernel", src, dst, id)
		case used&(1<<id) == 0:
			detail, rank = fmt.Sprintf("free: no flag %s→%s uses it in this kernel", src, dst), 0
		default:
			detail = fmt.Sprintf("in use by %s→%s flags of this kernel", src, dst)
		}
		if computed {
			detail += " (some of its ids are computed at run time)"
		}
		kind := protocol.CompletionItemKindValue
		sortText := fmt.Sprintf("%d%d", rank, id)
		out = append(out, protocol.CompletionItem{Label: label, Kind: &kind, Detail: &detail, SortText: &sortText})
	}
	return out
}

// sortKey orders items by their SortText when they have one (event ids:
// the likely ones first), else by label.
func sortKey(it protocol.CompletionItem) string {
	if it.SortText != nil {
		return "0" + *it.SortText
	}
	return "1" + it.Label
}
