package parser

import (
	"strconv"
	"strings"

	"github.com/alecthomas/participle/v2/lexer"
	"github.com/ptoasm/ptoasm/asm"
)

// lowerer turns grammar trees into asm nodes. It converts participle's
// positions (rune columns) into asm's byte columns from the offset, in one place.
type lowerer struct {
	file       string
	lineStarts []int
	errs       *asm.ErrorList
	a          lowerAllocs
	// inExpr counts the expressions being lowered around the current one:
	// only an outermost expression has its depth checked (exprDepth).
	inExpr int
}

// lowerAllocs slab-allocates the commonest output nodes (see slab).
type lowerAllocs struct {
	num    slab[asm.Num]
	ref    slab[asm.Ref]
	name   slab[asm.Name]
	binary slab[asm.Binary]
	gMRef  slab[asm.GMRef]
	instr  slab[asm.Instr]
	unary  slab[asm.Unary]
	paren  slab[asm.Paren]
	attr   slab[asm.Attr]
	exprs  slab[asm.Expr]
}

// put stores v in a slab and returns its address.
func put[T any](s *slab[T], v T) *T {
	p := s.new()
	*p = v
	return p
}

func newLowerer(file string, src []byte, errs *asm.ErrorList) *lowerer {
	starts := make([]int, 1, len(src)/24+1)
	for i, c := range src {
		if c == '\n' {
			starts = append(starts, i+1)
		}
	}
	return &lowerer{file: file, lineStarts: starts, errs: errs}
}

func (l *lowerer) pos(p lexer.Position) asm.Pos {
	line := p.Line
	if line < 1 {
		line = 1
	}
	col := 1
	if line-1 < len(l.lineStarts) {
		col = p.Offset - l.lineStarts[line-1] + 1
	}
	if col < 1 {
		col = 1
	}
	return asm.Pos{File: l.file, Offset: p.Offset, Line: line, Col: col}
}

func (l *lowerer) span(p, end lexer.Position) asm.Span {
	return asm.Span{Pos: l.pos(p), End: l.pos(end)}
}

func (l *lowerer) errorf(sp asm.Span, format string, args ...any) {
	l.errs.Add(sp, format, args...)
}

func (l *lowerer) comment(c *comment) *asm.Comment {
	if c == nil {
		return nil
	}
	return &asm.Comment{Span: l.span(c.Pos, c.EndPos), Text: strings.TrimRight(c.Text, "\r")}
}

// entry is one source line after lowering: a node, a comment, or both.
type entry struct {
	node    interface{ Doc() *asm.Comments }
	span    asm.Span
	comment *asm.Comment
}

// attach distributes comments and blank lines over a block's entries:
// comment-only lines go into the next node's Before (or into close at the end
// of the block), a comment on a node's line into its After. prevLine is the
// line of the opening brace, or 0 at file level.
func attach(entries []entry, prevLine int) (nodes []entry, close []*asm.Comment) {
	var pending []*asm.Comment
	blank := false
	gap := func(line int) bool { return prevLine > 0 && line > prevLine+1 }
	for _, e := range entries {
		if e.node == nil {
			if e.comment == nil {
				continue
			}
			if len(pending) == 0 {
				blank = gap(e.comment.Pos.Line)
			} else if gap(e.comment.Pos.Line) {
				pending = append(pending, &asm.Comment{})
			}
			pending = append(pending, e.comment)
			prevLine = e.comment.Pos.Line
			continue
		}
		d := e.node.Doc()
		if len(pending) == 0 {
			blank = gap(e.span.Pos.Line)
		} else if gap(e.span.Pos.Line) {
			// A comment group set apart from the node, like a file header.
			pending = append(pending, &asm.Comment{})
		}
		d.Before, d.Blank = pending, blank
		pending, blank = nil, false
		if e.comment != nil {
			d.After = e.comment
		}
		prevLine = e.span.End.Line
		nodes = append(nodes, e)
	}
	if blank && len(pending) > 0 {
		pending = append([]*asm.Comment{{}}, pending...)
	}
	return nodes, pending
}

func (l *lowerer) file_(f *file) *asm.File {
	out := &asm.File{Name: l.file}
	entries := make([]entry, 0, len(f.Lines))
	for _, ln := range f.Lines {
		if ln == nil {
			continue
		}
		e := entry{comment: l.comment(ln.Comment)}
		if ln.Decl != nil {
			if d := l.decl(ln.Decl); d != nil {
				e.node, e.span = d, d.NodeSpan()
			}
		}
		entries = append(entries, e)
	}
	nodes, trailing := attach(entries, 0)
	out.Decls = make([]asm.Decl, len(nodes))
	for i, n := range nodes {
		out.Decls[i] = n.node.(asm.Decl)
	}
	out.Trailing = trailing
	return out
}

func (l *lowerer) decl(d *decl) asm.Decl {
	switch {
	case d.Const != nil:
		c := d.Const
		return &asm.Const{Span: l.span(c.Pos, c.EndPos), Name: c.Name, Val: l.expr(c.Val)}
	case d.Include != nil:
		c := d.Include
		sp := l.span(c.Pos, c.EndPos)
		return &asm.Include{Span: sp, Path: l.unquote(c.Path, sp)}
	case d.Tensor != nil:
		return l.tensor(d.Tensor)
	case d.Kernel != nil:
		return l.kernel(d.Kernel)
	case d.Launch != nil:
		return l.launch(d.Launch)
	case d.Expect != nil:
		return l.expect(d.Expect)
	}
	return nil
}

var tensorClasses = map[string]asm.TensorClass{
	"gm": asm.TensorGM, "window": asm.TensorWindow, "signal": asm.TensorSignal, "fifo": asm.TensorFIFO,
}

func (l *lowerer) tensor(t *tensorDecl) *asm.Tensor {
	out := &asm.Tensor{
		Span:   l.span(t.Pos, t.EndPos),
		Class:  tensorClasses[t.Class],
		Name:   t.Name,
		DType:  t.DType,
		Shape:  l.exprs(t.Shape),
		Layout: t.Layout,
		Attrs:  l.keyVals(t.Attrs),
	}
	if t.Init != nil {
		out.Init = l.init(t.Init)
	}
	return out
}

func (l *lowerer) keyVals(kvs []*keyVal) []*asm.Attr {
	if len(kvs) == 0 {
		return nil
	}
	out := make([]*asm.Attr, len(kvs))
	for i, kv := range kvs {
		out[i] = put(&l.a.attr, asm.Attr{Span: l.span(kv.Pos, kv.EndPos), Key: kv.Key, Val: l.expr(kv.Val)})
	}
	return out
}

func (l *lowerer) init(in *initSpec) *asm.Init {
	sp := l.span(in.Pos, in.EndPos)
	out := &asm.Init{Span: sp, Kind: in.Kind}
	one := func() *arg {
		if !in.Call || len(in.Args) != 1 {
			l.errorf(sp, "%s(...) takes exactly one argument", in.Kind)
			return nil
		}
		a := in.Args[0]
		if a.Key != "" {
			l.errorf(l.span(a.Pos, a.EndPos), "%s(...) takes no named arguments", in.Kind)
		}
		return a
	}
	switch in.Kind {
	case "zero", "poison":
		if in.Call {
			l.errorf(sp, "%s takes no arguments", in.Kind)
		}
	case "fill", "expr":
		if a := one(); a != nil {
			out.X = l.expr(a.Val)
		}
	case "file":
		if a := one(); a != nil {
			x := l.expr(a.Val)
			if s, ok := x.(*asm.Str); ok {
				out.File = s.Val
			} else {
				l.errorf(x.NodeSpan(), `file(...) takes a quoted path: file("x.npy")`)
			}
		}
	case "random":
		if !in.Call {
			l.errorf(sp, "random needs arguments: random(seed=S, lo=L, hi=H)")
		}
		for _, a := range in.Args {
			asp := l.span(a.Pos, a.EndPos)
			if a.Key != "" {
				out.Args = append(out.Args, put(&l.a.attr, asm.Attr{Span: asp, Key: a.Key, Val: l.expr(a.Val)}))
				continue
			}
			if n, ok := l.expr(a.Val).(*asm.Name); ok {
				out.Args = append(out.Args, put(&l.a.attr, asm.Attr{Span: asp, Key: n.Name}))
				continue
			}
			l.errorf(asp, "random(...) takes key=value arguments or the word int")
		}
	default:
		l.errorf(sp, "unknown initialiser %q (want zero, poison, fill, random, file or expr)", in.Kind)
	}
	return out
}

func (l *lowerer) kernel(k *kernelDecl) *asm.Kernel {
	out := &asm.Kernel{Name: k.Head.Name}
	end := k.Head.EndPos
	if k.Head.Kind != nil {
		out.Kind = k.Head.Kind.Name
		out.KindSpan = l.span(k.Head.Kind.Pos, k.Head.Kind.EndPos)
	}
	if k.Body != nil {
		end = k.Body.EndPos
		out.Body, out.Close, out.Open = l.block(k.Body)
	}
	out.Span = l.span(k.Head.Pos, end)
	return out
}

// block lowers a statement block into its statements, the comments before its
// closing brace and the comment after its opening brace.
func (l *lowerer) block(b *block) (stmts []asm.Stmt, close []*asm.Comment, open *asm.Comment) {
	if b.Inline != nil {
		if s := l.stmt(b.Inline); s != nil {
			stmts = []asm.Stmt{s}
		}
		return stmts, nil, nil
	}
	entries := make([]entry, 0, len(b.Lines))
	for _, ln := range b.Lines {
		if ln == nil {
			continue
		}
		e := entry{comment: l.comment(ln.Comment)}
		if ln.Stmt != nil {
			if s := l.stmt(ln.Stmt); s != nil {
				e.node, e.span = s, s.NodeSpan()
			}
		}
		entries = append(entries, e)
	}
	nodes, close := attach(entries, b.Pos.Line)
	stmts = make([]asm.Stmt, len(nodes))
	for i, n := range nodes {
		stmts[i] = n.node.(asm.Stmt)
	}
	return stmts, close, l.comment(b.Open)
}

func (l *lowerer) stmt(s *stmt) asm.Stmt {
	switch {
	case s.Tile != nil:
		return l.tile(s.Tile)
	case s.Let != nil:
		t := s.Let
		return &asm.Let{Span: l.span(t.Pos, t.EndPos), Reg: unsigil(t.Reg), X: l.expr(t.X)}
	case s.For != nil:
		h := s.For.Head
		out := &asm.For{Var: unsigil(h.Var), From: l.expr(h.From), To: l.expr(h.To), Step: l.expr(h.Step)}
		end := h.EndPos
		if s.For.Body != nil {
			end = s.For.Body.EndPos
			out.Body, out.Close, out.Open = l.block(s.For.Body)
		}
		out.Span = l.span(h.Pos, end)
		return out
	case s.While != nil:
		h := s.While.Head
		out := &asm.While{Cond: l.expr(h.Cond)}
		end := h.EndPos
		if s.While.Body != nil {
			end = s.While.Body.EndPos
			out.Body, out.Close, out.Open = l.block(s.While.Body)
		}
		out.Span = l.span(h.Pos, end)
		return out
	case s.If != nil:
		return l.ifStmt(s.If)
	case s.Break != nil:
		return &asm.Break{Span: l.span(s.Break.Pos, s.Break.EndPos)}
	case s.Instr != nil:
		return l.instr(s.Instr)
	}
	return nil
}

func (l *lowerer) ifStmt(s *ifStmt) *asm.If {
	out := &asm.If{Cond: l.expr(s.Head.Cond)}
	end := s.Head.EndPos
	if s.Body != nil {
		end = s.Body.EndPos
		out.Then, out.Close, out.Open = l.block(s.Body)
	}
	switch {
	case s.ElseIf != nil:
		in := l.ifStmt(s.ElseIf)
		out.Else, out.Elif = []asm.Stmt{in}, true
		// The chain ends where its last branch ends, which in has already
		// found: walking the chain again at every link made a long
		// else-if chain quadratic.
		out.Span = asm.Span{Pos: l.pos(s.Head.Pos), End: in.Span.End}
		return out
	case s.Else != nil:
		var open *asm.Comment
		out.Else, out.ElseClose, open = l.block(s.Else)
		// fmt has no place for a comment after `else {`: it becomes the first
		// comment of the else block.
		out.Else, out.ElseClose = moveOpen(open, out.Else, out.ElseClose)
		end = s.Else.EndPos
	}
	out.Span = l.span(s.Head.Pos, end)
	return out
}

func moveOpen(open *asm.Comment, body []asm.Stmt, close []*asm.Comment) ([]asm.Stmt, []*asm.Comment) {
	if open == nil {
		return body, close
	}
	if len(body) == 0 {
		return body, append([]*asm.Comment{open}, close...)
	}
	d := body[0].Doc()
	d.Before = append([]*asm.Comment{open}, d.Before...)
	return body, close
}

func (l *lowerer) tile(t *tileStmt) *asm.TileDecl {
	out := &asm.TileDecl{
		Span:  l.span(t.Pos, t.EndPos),
		Name:  unsigil(t.Name),
		Count: l.expr(t.Count),
		Loc:   t.Loc,
		DType: t.DType,
		Rows:  l.expr(t.Rows),
		Cols:  l.expr(t.Cols),
		VRows: l.expr(t.VRows),
		VCols: l.expr(t.VCols),
		Attrs: l.keyVals(t.Attrs),
		Step:  l.expr(t.Step),
	}
	switch {
	case t.GAddr != nil:
		g := t.GAddr
		first := put(&l.a.name, asm.Name{Span: l.span(g.Pos, tokEnd(lexer.Token{Pos: g.Pos, Value: g.Name})), Name: unsigil(g.Name)})
		out.Addr = l.climbFrom(first, g.Ops)
	case t.Addr != nil:
		out.Addr = l.expr(t.Addr)
	}
	return out
}

func (l *lowerer) instr(in *instr) *asm.Instr {
	out := put(&l.a.instr, asm.Instr{Span: l.span(in.Pos, in.EndPos), Label: in.Label})
	if in.Result != nil {
		out.Result = put(&l.a.ref, asm.Ref{Span: l.span(in.Result.Pos, in.Result.EndPos), Name: unsigil(in.Result.Name)})
	}
	op := in.Op.Name
	if rest, ok := strings.CutPrefix(op, "pto."); ok {
		op, out.Prefix = rest, true
	}
	out.Op = op
	out.OpSpan = l.span(in.Op.Pos, in.Op.EndPos)
	out.Args = l.exprs(in.Args)
	if len(in.Types) > 0 {
		ta := &asm.TypeAnn{}
		for _, t := range in.Types {
			ty := &asm.Type{Span: l.span(t.Pos, t.EndPos), Kind: strings.TrimPrefix(t.Kind, "!pto.")}
			for _, p := range t.Params {
				ty.Params = append(ty.Params, asm.TypeParam{Key: p.Key, Val: p.Val})
			}
			ta.Types = append(ta.Types, ty)
		}
		ta.Span = asm.Span{Pos: ta.Types[0].Pos, End: ta.Types[len(ta.Types)-1].End}
		out.Type = ta
	}
	for _, a := range in.Attrs {
		out.Attrs = append(out.Attrs, put(&l.a.attr, asm.Attr{Span: l.span(a.Pos, a.EndPos), Key: a.Key, Val: l.expr(a.Val)}))
	}
	return out
}

func (l *lowerer) launch(d *launchDecl) *asm.Launch {
	out := &asm.Launch{Attrs: l.keyVals(d.Head.Attrs)}
	end := d.Head.EndPos
	if d.Body != nil {
		end = d.Body.EndPos
		out.Body, out.Close, out.Open = l.launchBlock(d.Body)
	}
	out.Span = l.span(d.Head.Pos, end)
	return out
}

func (l *lowerer) launchBlock(b *launchBlock) (stmts []asm.LaunchStmt, close []*asm.Comment, open *asm.Comment) {
	if b.Inline != nil {
		if s := l.launchStmt(b.Inline); s != nil {
			stmts = []asm.LaunchStmt{s}
		}
		return stmts, nil, nil
	}
	entries := make([]entry, 0, len(b.Lines))
	for _, ln := range b.Lines {
		if ln == nil {
			continue
		}
		e := entry{comment: l.comment(ln.Comment)}
		if ln.Stmt != nil {
			if s := l.launchStmt(ln.Stmt); s != nil {
				e.node, e.span = s, s.NodeSpan()
			}
		}
		entries = append(entries, e)
	}
	nodes, close := attach(entries, b.Pos.Line)
	stmts = make([]asm.LaunchStmt, len(nodes))
	for i, n := range nodes {
		stmts[i] = n.node.(asm.LaunchStmt)
	}
	return stmts, close, l.comment(b.Open)
}

func (l *lowerer) launchStmt(s *launchStmt) asm.LaunchStmt {
	switch {
	case s.Run != nil:
		r := s.Run
		sp := l.span(r.Pos, r.EndPos)
		out := &asm.Run{Span: sp}
		if r.Name != "" {
			out.Name = l.unquote(r.Name, sp)
		}
		for _, st := range r.Streams {
			out.Streams = append(out.Streams, &asm.Stream{Span: l.span(st.Pos, st.EndPos), Kernels: st.Kernels, Blocks: l.expr(st.Blocks)})
		}
		return out
	case s.Reset != nil:
		r := s.Reset
		return &asm.Reset{Span: l.span(r.Pos, r.EndPos), Target: l.gmRef(r.Target), Init: l.init(r.Init)}
	case s.If != nil:
		return l.launchIf(s.If)
	}
	return nil
}

func (l *lowerer) launchIf(s *launchIf) *asm.LaunchIf {
	out := &asm.LaunchIf{Cond: l.expr(s.Head.Cond)}
	end := s.Head.EndPos
	if s.Body != nil {
		end = s.Body.EndPos
		out.Then, out.Close, out.Open = l.launchBlock(s.Body)
	}
	switch {
	case s.ElseIf != nil:
		in := l.launchIf(s.ElseIf)
		out.Else, out.Elif = []asm.LaunchStmt{in}, true
		end = lexer.Position{Filename: in.End.File, Offset: in.End.Offset, Line: in.End.Line}
	case s.Else != nil:
		var open *asm.Comment
		out.Else, out.ElseClose, open = l.launchBlock(s.Else)
		if open != nil {
			if len(out.Else) == 0 {
				out.ElseClose = append([]*asm.Comment{open}, out.ElseClose...)
			} else {
				d := out.Else[0].Doc()
				d.Before = append([]*asm.Comment{open}, d.Before...)
			}
		}
		end = s.Else.EndPos
	}
	out.Span = l.span(s.Head.Pos, end)
	return out
}

func (l *lowerer) expect(e *expectDecl) *asm.Expect {
	out := &asm.Expect{Span: l.span(e.Pos, e.EndPos)}
	switch {
	case e.Finding != nil:
		out.Kind = "finding"
		out.Finding = e.Finding.Kind
		out.Sites = l.exprs(e.Finding.Sites)
		out.Count = l.expr(e.Finding.Count)
	case e.Cycles != nil:
		out.Kind = "cycles"
		out.Cycles = l.expr(e.Cycles)
	case e.Output != nil:
		out.Kind = "output"
		out.Target = l.gmRef(e.Output.Target)
		out.Golden = l.expr(e.Output.Golden)
		out.Tol = l.expr(e.Output.Tol)
		out.RTol = l.expr(e.Output.RTol)
		out.ATol = l.expr(e.Output.ATol)
	}
	return out
}

func (l *lowerer) unquote(s string, sp asm.Span) string {
	v, err := strconv.Unquote(s)
	if err != nil {
		l.errorf(sp, "malformed string %s", s)
		return strings.Trim(s, `"`)
	}
	return v
}

func (l *lowerer) exprs(es []*expr) []asm.Expr {
	if len(es) == 0 {
		return nil
	}
	var buf [8]asm.Expr
	out := buf[:0]
	for _, e := range es {
		out = append(out, l.expr(e))
	}
	return l.a.exprs.copy(out)
}

// expr lowers e; a nil e gives a nil asm.Expr so optional parts stay nil.
func (l *lowerer) expr(e *expr) asm.Expr {
	if e == nil || e.X == nil {
		return nil
	}
	if l.inExpr == 0 {
		if d := exprDepth(e); d > maxExprDepth {
			p := e.X.X.Pos
			if len(e.X.Ops) > 0 {
				p = e.X.Ops[0].Pos
			}
			sp := l.span(p, p)
			l.errorf(sp, "expression too deep: %d levels of operators, brackets and calls (at most %d)", d, maxExprDepth)
			// A literal stands in, so the error is not followed by others.
			return put(&l.a.num, asm.Num{Span: sp, Text: "0"})
		}
	}
	l.inExpr++
	x := l.climbFrom(l.unary(e.X), e.Ops)
	l.inExpr--
	return x
}

// maxExprDepth bounds the depth of an expression's tree. The lexer's
// maxNesting counts brackets only, but every operator is a level too: a
// chain `1 + 1 + …` is a left-deep tree one level per `+`, and `- - … 1` one
// per minus, and the assembler, the evaluator and the printer all recurse
// once per level; 700,000 minus signs overflowed the goroutine stack (a
// fatal error, not a panic). Real expressions are a few levels deep.
const maxExprDepth = 256

// exprDepth is an upper bound on the depth of e's lowered tree: one level
// per binary and unary operator, per bracket, call and index. It recurses
// only into brackets, so its own depth is bounded by maxNesting.
func exprDepth(e *expr) int {
	if e == nil || e.X == nil {
		return 0
	}
	d := unaryDepth(e.X)
	for _, op := range e.Ops {
		d = max(d, unaryDepth(op.Y))
	}
	return d + len(e.Ops)
}

func unaryDepth(u *unary) int {
	if u == nil || u.X == nil {
		return 0
	}
	p := u.X
	argsDepth := func(args []*arg) int {
		m := 0
		for _, a := range args {
			if a != nil {
				m = max(m, exprDepth(a.Val))
			}
		}
		return m
	}
	d := 0 // a leaf
	switch {
	case p.Reg != nil && p.Reg.Index != nil:
		d = 1 + exprDepth(p.Reg.Index)
	case p.GM != nil:
		for _, g := range p.GM.Groups {
			if g != nil {
				d = max(d, 1+argsDepth(g.Args))
			}
		}
	case p.Call != nil && p.Call.Call:
		d = 1 + argsDepth(p.Call.Args)
	case p.Paren != nil:
		d = 1 + exprDepth(p.Paren)
	}
	return d + len(u.Ops)
}

// climbFrom builds the tree of first (op operand)* by precedence climbing.
func (l *lowerer) climbFrom(first asm.Expr, ops []*binOp) asm.Expr {
	i := 0
	var climb func(lhs asm.Expr, min int) asm.Expr
	climb = func(lhs asm.Expr, min int) asm.Expr {
		for i < len(ops) && asm.BinaryPrec(ops[i].Op) >= min {
			op := ops[i]
			i++
			rhs := l.unary(op.Y)
			for i < len(ops) && asm.BinaryPrec(ops[i].Op) > asm.BinaryPrec(op.Op) {
				rhs = climb(rhs, asm.BinaryPrec(op.Op)+1)
			}
			lhs = put(&l.a.binary, asm.Binary{Span: asm.Span{Pos: lhs.NodeSpan().Pos, End: rhs.NodeSpan().End}, Op: op.Op, X: lhs, Y: rhs})
		}
		return lhs
	}
	return climb(first, 1)
}

func (l *lowerer) unary(u *unary) asm.Expr {
	if u == nil || u.X == nil {
		return put(&l.a.name, asm.Name{Name: "_"})
	}
	x := l.primary(u.X)
	for i := len(u.Ops) - 1; i >= 0; i-- {
		op := u.Ops[i]
		x = put(&l.a.unary, asm.Unary{Span: asm.Span{Pos: l.pos(op.Pos), End: x.NodeSpan().End}, Op: op.Op, X: x})
	}
	return x
}

func (l *lowerer) primary(p *primary) asm.Expr {
	sp := l.span(p.Pos, p.EndPos)
	switch {
	case p.Float != "":
		f, err := strconv.ParseFloat(strings.ReplaceAll(p.Float, "_", ""), 64)
		if err != nil {
			l.errorf(sp, "malformed number %s", p.Float)
		}
		return put(&l.a.num, asm.Num{Span: sp, Text: p.Float, Float: f, IsFloat: true})
	case p.Int != "":
		return put(&l.a.num, asm.Num{Span: sp, Text: p.Int, Int: l.parseInt(p.Int, sp)})
	case p.Str != "":
		return &asm.Str{Span: sp, Val: l.unquote(p.Str, sp)}
	case p.Reg != nil:
		return put(&l.a.ref, asm.Ref{Span: sp, Name: unsigil(p.Reg.Name), Index: l.expr(p.Reg.Index)})
	case p.GM != nil:
		return l.gmRef(p.GM)
	case p.Call != nil:
		c := p.Call
		if !c.Call {
			return put(&l.a.name, asm.Name{Span: sp, Name: c.Name})
		}
		out := &asm.Call{Span: sp, Fn: c.Name, Args: make([]asm.Expr, 0, len(c.Args))}
		for _, a := range c.Args {
			out.Args = append(out.Args, l.arg(a))
		}
		return out
	case p.Paren != nil:
		return put(&l.a.paren, asm.Paren{Span: sp, X: l.expr(p.Paren)})
	}
	return put(&l.a.name, asm.Name{Span: sp, Name: "_"})
}

func (l *lowerer) arg(a *arg) asm.Expr {
	v := l.expr(a.Val)
	if a.Key == "" {
		return v
	}
	return &asm.KeyVal{Span: l.span(a.Pos, a.EndPos), Key: a.Key, Val: v}
}

func (l *lowerer) parseInt(text string, sp asm.Span) int64 {
	var v int64
	var err error
	if len(text) > 1 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X' || text[1] == 'b' || text[1] == 'B') {
		v, err = strconv.ParseInt(text, 0, 64)
	} else {
		// Base 10 even with a leading zero: PTO-AS has no octal.
		v, err = strconv.ParseInt(strings.ReplaceAll(text, "_", ""), 10, 64)
	}
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			l.errorf(sp, "integer %s overflows int64", text)
		} else {
			l.errorf(sp, "malformed integer %s", text)
		}
	}
	return v
}

// gmRef lowers `@name[rank=r][i, j]`: a leading group holding only rank=r is
// the rank; the next group is the element index.
func (l *lowerer) gmRef(g *gmRef) *asm.GMRef {
	out := put(&l.a.gMRef, asm.GMRef{Span: l.span(g.Pos, g.EndPos), Name: unsigil(g.Name)})
	groups := g.Groups
	if len(groups) > 0 && len(groups[0].Args) == 1 && groups[0].Args[0].Key == "rank" {
		out.Rank = l.expr(groups[0].Args[0].Val)
		groups = groups[1:]
	}
	if len(groups) > 1 {
		l.errorf(l.span(groups[1].Pos, groups[1].EndPos), "@%s: too many index groups (want @%s[rank=r][i, j])", out.Name, out.Name)
	}
	if len(groups) > 0 {
		for _, a := range groups[0].Args {
			if a.Key != "" {
				l.errorf(l.span(a.Pos, a.EndPos), "@%s: unexpected %s= in an index (rank= goes in its own brackets first)", out.Name, a.Key)
			}
			out.Index = append(out.Index, l.expr(a.Val))
		}
	}
	return out
}

// unsigil drops the %, @ of a name; a name missing after a syntax error stays "".
func unsigil(s string) string {
	if s == "" {
		return s
	}
	return s[1:]
}
