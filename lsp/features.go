package lsp

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/tliron/glsp"
	protocol "github.com/tliron/glsp/protocol_3_16"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/parser/mlir"
)

// hit is the innermost node under the cursor, with what encloses it.
type hit struct {
	node   asm.Node
	instr  *asm.Instr  // the instruction it is in, if any
	kernel *asm.Kernel // the kernel it is in, if any
	file   *asm.File
}

// visitor walks a file's syntax tree; fn sees every node with its context.
type visitor struct {
	fn     func(n asm.Node, instr *asm.Instr, k *asm.Kernel)
	instr  *asm.Instr
	kernel *asm.Kernel
}

func (v *visitor) file(f *asm.File) {
	for _, d := range f.Decls {
		v.decl(d)
	}
}

func (v *visitor) decl(d asm.Decl) {
	v.fn(d, nil, nil)
	switch d := d.(type) {
	case *asm.Const:
		v.expr(d.Val)
	case *asm.Tensor:
		v.exprs(d.Shape...)
		v.attrs(d.Attrs)
		if d.Init != nil {
			v.attrs(d.Init.Args)
			v.expr(d.Init.X)
		}
	case *asm.Kernel:
		v.kernel = d
		v.stmts(d.Body)
		v.kernel = nil
	case *asm.Launch:
		v.attrs(d.Attrs)
		v.launch(d.Body)
	case *asm.Expect:
		if d.Target != nil {
			v.expr(d.Target)
		}
		v.exprs(d.Golden, d.Tol, d.RTol, d.ATol, d.Count, d.Cycles)
		v.exprs(d.Sites...)
	}
}

func (v *visitor) launch(ss []asm.LaunchStmt) {
	for _, s := range ss {
		v.fn(s, nil, nil)
		switch s := s.(type) {
		case *asm.Run:
			for _, st := range s.Streams {
				v.expr(st.Blocks)
			}
		case *asm.Reset:
			if s.Target != nil {
				v.expr(s.Target)
			}
			if s.Init != nil {
				v.attrs(s.Init.Args)
				v.expr(s.Init.X)
			}
		case *asm.LaunchIf:
			v.expr(s.Cond)
			v.launch(s.Then)
			v.launch(s.Else)
		}
	}
}

func (v *visitor) stmts(ss []asm.Stmt) {
	for _, s := range ss {
		v.fn(s, nil, v.kernel)
		switch s := s.(type) {
		case *asm.TileDecl:
			v.exprs(s.Count, s.Rows, s.Cols, s.VRows, s.VCols, s.Addr, s.Step)
			v.attrs(s.Attrs)
		case *asm.Let:
			v.expr(s.X)
		case *asm.For:
			v.exprs(s.From, s.To, s.Step)
			v.stmts(s.Body)
		case *asm.If:
			v.expr(s.Cond)
			v.stmts(s.Then)
			v.stmts(s.Else)
		case *asm.While:
			v.expr(s.Cond)
			v.stmts(s.Body)
		case *asm.Instr:
			v.instr = s
			v.exprs(s.Operands()...)
			v.attrs(s.Attrs)
			v.instr = nil
		}
	}
}

func (v *visitor) attrs(as []*asm.Attr) {
	for _, a := range as {
		v.expr(a.Val)
	}
}

func (v *visitor) exprs(es ...asm.Expr) {
	for _, e := range es {
		v.expr(e)
	}
}

func (v *visitor) expr(e asm.Expr) {
	if e == nil {
		return
	}
	switch x := e.(type) {
	case *asm.Ref:
		if x == nil {
			return
		}
	case *asm.GMRef:
		if x == nil {
			return
		}
	}
	v.fn(e, v.instr, v.kernel)
	switch x := e.(type) {
	case *asm.Unary:
		v.expr(x.X)
	case *asm.Binary:
		v.exprs(x.X, x.Y)
	case *asm.Paren:
		v.expr(x.X)
	case *asm.Call:
		v.exprs(x.Args...)
	case *asm.KeyVal:
		v.expr(x.Val)
	case *asm.Ref:
		v.expr(x.Index)
	case *asm.GMRef:
		v.expr(x.Rank)
		v.exprs(x.Index...)
	}
}

// at finds the innermost node of f whose span holds byte offset off.
func at(f *asm.File, off int) *hit {
	if f == nil {
		return nil
	}
	var best *hit
	size := -1
	v := &visitor{fn: func(n asm.Node, in *asm.Instr, k *asm.Kernel) {
		sp := n.NodeSpan()
		if sp.Pos.File != f.Name && sp.Pos.File != "" {
			return
		}
		lo, hi := sp.Pos.Offset, sp.End.Offset
		if off < lo || off >= hi {
			return
		}
		if size < 0 || hi-lo <= size {
			best, size = &hit{node: n, instr: in, kernel: k, file: f}, hi-lo
		}
	}}
	v.file(f)
	return best
}

func (s *Server) hover(_ *glsp.Context, p *protocol.HoverParams) (*protocol.Hover, error) {
	r := s.latest(p.TextDocument.URI)
	if r == nil || r.file == nil {
		return nil, nil
	}
	off := offsetOf(r.text, p.Position)
	h := at(r.file, off)
	if h == nil {
		return nil, nil
	}
	var md string
	sp := h.node.NodeSpan()
	if in := h.instr; in != nil && off >= in.OpSpan.Pos.Offset && off < in.OpSpan.End.Offset {
		// The mnemonic wins over an operand a lowering placed on it
		// (PTOAS MLIR constants carry their use's position).
		h = &hit{node: in, kernel: h.kernel, file: h.file}
	}
	switch n := h.node.(type) {
	case *asm.Instr:
		if off < n.OpSpan.Pos.Offset || off >= n.OpSpan.End.Offset {
			return nil, nil
		}
		op, k := copOf(r.obj, n)
		md = instrHover(n, op) + flagPairs(op, k)
		sp = n.OpSpan
	case *asm.Ref:
		if t := tileOf(r.obj, h.kernel, n.Name); t != nil {
			md = tileHover(t)
		} else {
			md = fmt.Sprintf("`%%%s`: scalar register", n.Name)
		}
	case *asm.TileDecl:
		if t := tileOf(r.obj, h.kernel, n.Name); t != nil {
			md = tileHover(t)
		}
	case *asm.GMRef:
		if r.obj != nil {
			if t := r.obj.Tensor(n.Name); t != nil {
				md = tensorHover(t)
			}
		}
	case *asm.Tensor:
		if r.obj != nil {
			if t := r.obj.Tensor(n.Name); t != nil {
				md = tensorHover(t)
			}
		}
	case *asm.Name:
		if r.obj != nil {
			if v, ok := r.obj.Const(n.Name); ok {
				md = fmt.Sprintf("`%s` = %d (%#x)", n.Name, v, v)
			}
		}
	}
	if md == "" {
		return nil, nil
	}
	rg := spanRange(sp)
	return &protocol.Hover{
		Contents: protocol.MarkupContent{Kind: protocol.MarkupKindMarkdown, Value: md},
		Range:    &rg,
	}, nil
}

// copOf finds the decoded instruction of in and its kernel.
func copOf(obj *asm.Object, in *asm.Instr) (*asm.COp, *asm.KernelInfo) {
	if obj == nil {
		return nil, nil
	}
	for _, k := range obj.Kernels {
		for _, op := range k.Ops {
			if op.Instr == in {
				return op, k
			}
		}
	}
	return nil, nil
}

// flagPairs lists, for a set_flag or wait_flag, the instructions of its
// kernel on the other end of the same flag: same source and destination
// pipes, and the same event id when both ids are constants. It reads the
// program, not a run: which of them consumes a given set at run time
// depends on control flow (ptoasm lint checks that).
func flagPairs(op *asm.COp, k *asm.KernelInfo) string {
	if op == nil || k == nil || len(op.Args) < 3 {
		return ""
	}
	var other asm.Opcode
	switch op.Info.Op {
	case asm.OpSetFlag:
		other = asm.OpWaitFlag
	case asm.OpWaitFlag:
		other = asm.OpSetFlag
	default:
		return ""
	}
	src, dst, ev := op.Args[0], op.Args[1], op.Args[2]
	if src.Kind != asm.ArgPipe || dst.Kind != asm.ArgPipe || ev.Kind != asm.ArgScalar {
		return ""
	}
	var lines []string
	for _, o := range k.Ops {
		if o.Info.Op != other || len(o.Args) < 3 || o.Args[0].Pipe != src.Pipe || o.Args[1].Pipe != dst.Pipe {
			continue
		}
		oev := o.Args[2].Val
		switch {
		case ev.Val.Fn == nil && oev.Fn == nil && ev.Val.Val != oev.Val:
			continue
		case ev.Val.Fn == nil && oev.Fn == nil:
			lines = append(lines, fmt.Sprintf("line %d", o.Instr.Span.Pos.Line))
		default:
			lines = append(lines, fmt.Sprintf("line %d (event id computed at run time)", o.Instr.Span.Pos.Line))
		}
	}
	if len(lines) == 0 {
		return fmt.Sprintf("\nNo %s %s, %s with this event id in kernel %s.\n", other, src.Pipe, dst.Pipe, k.Name)
	}
	return fmt.Sprintf("\nThe same flag's %s in kernel %s: %s.\n", other, k.Name, strings.Join(lines, ", "))
}

// tileOf finds the tile named name in kernel k.
func tileOf(obj *asm.Object, k *asm.Kernel, name string) *asm.TileInfo {
	if obj == nil || k == nil {
		return nil
	}
	for _, ki := range obj.Kernels {
		if ki.Decl != k {
			continue
		}
		for _, t := range ki.Tiles {
			if t.Name == name {
				return t
			}
		}
	}
	return nil
}

// instrHover describes an instruction from the ISA table, and its decoded
// form (the pipe its operands route it to) when the program assembled.
func instrHover(in *asm.Instr, op *asm.COp) string {
	info := asm.LookupOp(in.Op)
	if op != nil {
		info = op.Info
	}
	if info == nil {
		return fmt.Sprintf("`%s`: not an instruction (ptoasm ops lists them)", in.Op)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "**%s** (%s)", info.Name, info.Family)
	if len(info.Aliases) > 0 {
		fmt.Fprintf(&b, ", also `%s`", strings.Join(info.Aliases, "`, `"))
	}
	b.WriteString("\n\n")
	if op != nil {
		fmt.Fprintf(&b, "- pipe: %s (table: %s)\n", op.ExecPipe(), info.RouteString())
	} else {
		fmt.Fprintf(&b, "- pipe: %s\n", info.RouteString())
	}
	ops := make([]string, len(info.Operands))
	for i, o := range info.Operands {
		ops[i] = o.String()
	}
	fmt.Fprintf(&b, "- operands: `%s`\n", strings.Join(ops, ", "))
	if len(info.Attrs) > 0 {
		fmt.Fprintf(&b, "- attributes: `#%s`\n", strings.Join(info.Attrs, "`, `#"))
	}
	if len(info.Cores) > 0 {
		cs := make([]string, len(info.Cores))
		for i, c := range info.Cores {
			cs[i] = c.String()
		}
		fmt.Fprintf(&b, "- cores: %s\n", strings.Join(cs, ", "))
	}
	fmt.Fprintf(&b, "- cost: `%s`\n", info.Cost)
	if info.Doc != "" {
		fmt.Fprintf(&b, "\n%s\n", info.Doc)
	}
	return b.String()
}

// tileHover describes a placed tile as the listing does: location, address
// range of each element, shape and dtype.
func tileHover(t *asm.TileInfo) string {
	var b strings.Builder
	name := "%" + t.Name
	if t.IsArray {
		name = fmt.Sprintf("%%%s[%d]", t.Name, t.Count)
	}
	fmt.Fprintf(&b, "**%s**: %s %s [%d, %d]", name, t.Loc, t.DType, t.Rows, t.Cols)
	if t.DynValid() {
		b.WriteString(" valid from registers")
	} else if t.VRows != t.Rows || t.VCols != t.Cols {
		fmt.Fprintf(&b, " valid [%d, %d]", t.VRows, t.VCols)
	}
	b.WriteString("\n\n")
	fmt.Fprintf(&b, "- buffer: %s, %d B each\n", t.Space, t.Bytes)
	how := "placed by hand"
	if t.Auto {
		how = "placed by the assembler"
	}
	if t.Rebound {
		how += "; rebound at run time (tassign, tsubview, treshape)"
	}
	const show = 8
	for i, a := range t.Addr {
		if t.Unplaced {
			how = "no bytes until a tassign, tsubview or treshape binds it"
			break
		}
		if i == show {
			fmt.Fprintf(&b, "- … %d more\n", len(t.Addr)-show)
			break
		}
		el := ""
		if t.IsArray {
			el = fmt.Sprintf("[%d] ", i)
		}
		fmt.Fprintf(&b, "- %saddress [%#x, %#x)\n", el, a, a+t.Bytes)
	}
	fmt.Fprintf(&b, "- %s", how)
	if t.BLayout != "" {
		fmt.Fprintf(&b, "; blayout %s", t.BLayout)
	}
	if t.SLayout != "" && t.SLayout != "none" {
		fmt.Fprintf(&b, ", slayout %s", t.SLayout)
	}
	b.WriteString("\n")
	return b.String()
}

func tensorHover(t *asm.TensorInfo) string {
	dims := make([]string, len(t.Shape))
	for i, d := range t.Shape {
		dims[i] = fmt.Sprint(d)
	}
	return fmt.Sprintf("**@%s**: %s %s [%s], layout %s, %d B", t.Name, t.Class, t.DType, strings.Join(dims, ", "), t.Layout, t.Bytes)
}

// files is every file of the program: the latest assembly's, else the
// main file alone.
func (r *result) files() []*asm.File {
	if r.obj != nil {
		return r.obj.Files
	}
	if r.file != nil {
		return []*asm.File{r.file}
	}
	return nil
}

func (s *Server) definition(_ *glsp.Context, p *protocol.DefinitionParams) (any, error) {
	r := s.latest(p.TextDocument.URI)
	if r == nil || r.file == nil {
		return nil, nil
	}
	h := at(r.file, offsetOf(r.text, p.Position))
	if h == nil {
		return nil, nil
	}
	var target asm.Node
	switch n := h.node.(type) {
	case *asm.Ref:
		target = declIn(h.kernel, n.Name)
	case *asm.GMRef:
		target = findDecl(r.files(), func(d asm.Decl) bool {
			t, ok := d.(*asm.Tensor)
			return ok && t.Name == n.Name
		})
	case *asm.Name:
		target = findDecl(r.files(), func(d asm.Decl) bool {
			c, ok := d.(*asm.Const)
			return ok && c.Name == n.Name
		})
		if target == nil {
			target = findLabel(r.files(), n.Name)
		}
	}
	if target == nil {
		return nil, nil
	}
	sp := target.NodeSpan()
	d := s.docFor(p.TextDocument.URI)
	if d == nil {
		return nil, nil
	}
	return protocol.Location{URI: s.uriFor(d, sp.Pos.File), Range: spanRange(sp)}, nil
}

func (s *Server) docFor(uri string) *document {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.docs[uri]
}

// declIn finds what declares %name in kernel k: a tile, else the first
// let or loop that sets the register.
func declIn(k *asm.Kernel, name string) asm.Node {
	if k == nil {
		return nil
	}
	var tile, reg asm.Node
	v := &visitor{fn: func(n asm.Node, _ *asm.Instr, _ *asm.Kernel) {
		switch n := n.(type) {
		case *asm.TileDecl:
			if n.Name == name && tile == nil {
				tile = n
			}
		case *asm.Let:
			if n.Reg == name && reg == nil {
				reg = n
			}
		case *asm.For:
			if n.Var == name && reg == nil {
				reg = n
			}
		}
	}}
	v.kernel = k
	v.stmts(k.Body)
	if tile != nil {
		return tile
	}
	return reg
}

func findDecl(files []*asm.File, match func(asm.Decl) bool) asm.Node {
	for _, f := range files {
		for _, d := range f.Decls {
			if match(d) {
				return d
			}
		}
	}
	return nil
}

func findLabel(files []*asm.File, label string) asm.Node {
	var found asm.Node
	for _, f := range files {
		v := &visitor{fn: func(n asm.Node, _ *asm.Instr, _ *asm.Kernel) {
			if in, ok := n.(*asm.Instr); ok && in.Label == label && found == nil {
				found = in
			}
		}}
		v.file(f)
	}
	return found
}

func (s *Server) documentSymbol(_ *glsp.Context, p *protocol.DocumentSymbolParams) (any, error) {
	r := s.latest(p.TextDocument.URI)
	if r == nil || r.file == nil {
		return []protocol.DocumentSymbol{}, nil
	}
	out := []protocol.DocumentSymbol{}
	sym := func(name string, kind protocol.SymbolKind, n asm.Node, detail string) protocol.DocumentSymbol {
		rg := spanRange(n.NodeSpan())
		ds := protocol.DocumentSymbol{Name: name, Kind: kind, Range: rg, SelectionRange: rg}
		if detail != "" {
			ds.Detail = &detail
		}
		return ds
	}
	for _, d := range r.file.Decls {
		switch d := d.(type) {
		case *asm.Const:
			out = append(out, sym(d.Name, protocol.SymbolKindConstant, d, ""))
		case *asm.Tensor:
			out = append(out, sym("@"+d.Name, protocol.SymbolKindVariable, d, d.Class.String()+" "+d.DType))
		case *asm.Kernel:
			k := sym(d.Name, protocol.SymbolKindFunction, d, d.Kind)
			v := &visitor{fn: func(n asm.Node, _ *asm.Instr, _ *asm.Kernel) {
				switch n := n.(type) {
				case *asm.TileDecl:
					k.Children = append(k.Children, sym("%"+n.Name, protocol.SymbolKindField, n, n.Loc+" "+n.DType))
				case *asm.Instr:
					if n.Label != "" {
						k.Children = append(k.Children, sym(n.Label, protocol.SymbolKindKey, n, n.Op))
					}
				}
			}}
			v.kernel = d
			v.stmts(d.Body)
			out = append(out, k)
		case *asm.Launch:
			out = append(out, sym("launch", protocol.SymbolKindEvent, d, ""))
		}
	}
	return out, nil
}

// formatting replaces the document with its canonical form, printed by the
// printer of `ptoasm fmt`. A PTOAS MLIR file is left alone: its canonical
// form is a PTO-AS translation, which would replace the MLIR source.
func (s *Server) formatting(_ *glsp.Context, p *protocol.DocumentFormattingParams) ([]protocol.TextEdit, error) {
	d := s.docFor(p.TextDocument.URI)
	if d == nil {
		return nil, nil
	}
	s.mu.Lock()
	text, tooLarge := d.text, d.tooLarge
	s.mu.Unlock()
	if tooLarge > 0 {
		// The limit the analysis keeps, not a parse of 50 MB per request.
		return nil, &asm.FileLimitError{Path: d.path, Limit: s.opt.MaxFileSize, Flag: "--max-file-size"}
	}
	if mlir.IsMLIR(text) {
		return nil, nil
	}
	f, errs := s.opt.ParseFile(d.path, text)
	if errs.HasErrors() || f == nil {
		return nil, nil // the diagnostics say why
	}
	var out bytes.Buffer
	if err := asm.Fprint(&out, f); err != nil {
		return nil, err
	}
	if bytes.Equal(out.Bytes(), text) {
		return []protocol.TextEdit{}, nil
	}
	end := offsetPosition(text, len(text))
	return []protocol.TextEdit{{
		Range:   protocol.Range{Start: protocol.Position{}, End: end},
		NewText: out.String(),
	}}, nil
}

// offsetPosition converts a byte offset in text to an LSP position.
func offsetPosition(text []byte, off int) protocol.Position {
	line, col := 0, 0
	for _, c := range text[:off] {
		if c == '\n' {
			line, col = line+1, 0
		} else {
			col++
		}
	}
	return protocol.Position{Line: protocol.UInteger(line), Character: protocol.UInteger(col)}
}
