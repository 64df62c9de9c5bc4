package asm

import (
	"bufio"
	"io"
	"strconv"
	"strings"
)

// Fprint writes f in the canonical form of `ptoasm fmt`: four spaces per block
// level, one space after commas and around binary operators, attributes as
// `#key=value`, and a blank line between top-level declarations of different
// kinds (and wherever the author left one). The author's choices that carry
// meaning or taste are kept: result vs destination-first form, the `pto.`
// prefix, number spellings, parentheses and comments. Printing is idempotent
// and the output parses back to the same tree.
func Fprint(w io.Writer, f *File) error {
	p := &printer{w: bufio.NewWriter(w)}
	p.file(f)
	return p.w.Flush()
}

// FprintExpr writes one expression as Fprint would.
func FprintExpr(w io.Writer, e Expr) {
	p := &printer{w: bufio.NewWriter(w)}
	p.expr(e)
	_ = p.w.Flush()
}

// ExprString returns e as Fprint would write it.
func ExprString(e Expr) string {
	var sb strings.Builder
	FprintExpr(&sb, e)
	return sb.String()
}

type printer struct {
	w      *bufio.Writer
	indent int
}

func (p *printer) str(s string) { _, _ = p.w.WriteString(s) }

func (p *printer) tabs() {
	for i := 0; i < p.indent; i++ {
		p.str("    ")
	}
}

func (p *printer) nl() { _ = p.w.WriteByte('\n') }

// comments prints whole-line comments at the current indentation.
func (p *printer) comments(cs []*Comment) {
	for _, c := range cs {
		if c.Text == "" {
			p.nl()
			continue
		}
		p.tabs()
		p.str(c.Text)
		p.nl()
	}
}

func (p *printer) after(c *Comment) {
	if c != nil {
		p.str(" ")
		p.str(c.Text)
	}
}

// open finishes a block's opening line: `{`, its comment, newline.
func (p *printer) open(c *Comment) {
	p.str("{")
	p.after(c)
	p.nl()
}

// closeBrace prints the comments before a closing brace and the brace itself,
// without a newline (an else or a trailing comment may follow).
func (p *printer) closeBrace(cs []*Comment) {
	p.indent++
	p.comments(cs)
	p.indent--
	p.tabs()
	p.str("}")
}

func declKind(d Decl) int {
	switch d.(type) {
	case *Const:
		return 1
	case *Include:
		return 2
	case *Tensor:
		return 3
	case *Expect:
		return 4
	}
	return 0 // kernels and launches stand alone
}

func (p *printer) file(f *File) {
	docs := make([]*Comments, len(f.Decls))
	for i, d := range f.Decls {
		docs[i] = d.Doc()
	}
	codes := make([]string, len(f.Decls))
	for i, d := range f.Decls {
		if declKind(d) != 0 {
			codes[i] = p.render(func(q *printer) { q.decl(d) })
		}
	}
	widths := alignComments(codes, docs)
	for i, d := range f.Decls {
		doc := docs[i]
		if i > 0 {
			k, prev := declKind(d), declKind(f.Decls[i-1])
			if doc.Blank || k == 0 || k != prev {
				p.nl()
			}
		}
		p.comments(doc.Before)
		if codes[i] != "" {
			p.str(codes[i])
			p.afterAligned(doc.After, len(codes[i]), widths[i])
		} else {
			p.decl(d)
			p.after(doc.After)
		}
		p.nl()
	}
	p.comments(f.Trailing)
}

// render prints one node on its own into a string, at indentation zero.
func (p *printer) render(fn func(q *printer)) string {
	var sb strings.Builder
	q := &printer{w: bufio.NewWriter(&sb)}
	fn(q)
	_ = q.w.Flush()
	return sb.String()
}

// alignComments returns, for each one-line node, the column its trailing
// comment starts at: runs of consecutive one-line nodes that all carry a
// trailing comment (no blank line or comment line between them) share one
// column, as gofmt aligns them. Multi-line nodes have code "".
func alignComments(codes []string, docs []*Comments) []int {
	widths := make([]int, len(codes))
	for i := 0; i < len(codes); {
		if codes[i] == "" || docs[i].After == nil {
			i++
			continue
		}
		j, w := i, 0
		for j < len(codes) && codes[j] != "" && docs[j].After != nil &&
			(j == i || (!docs[j].Blank && len(docs[j].Before) == 0)) {
			w = max(w, len(codes[j]))
			j++
		}
		for k := i; k < j; k++ {
			widths[k] = w
		}
		i = j
	}
	return widths
}

func (p *printer) afterAligned(c *Comment, n, width int) {
	if c == nil {
		return
	}
	p.str(strings.Repeat(" ", width-n+1))
	p.str(c.Text)
}

func (p *printer) decl(d Decl) {
	switch d := d.(type) {
	case *Const:
		p.str("const ")
		p.str(d.Name)
		p.str(" = ")
		p.expr(d.Val)
	case *Include:
		p.str("include ")
		p.str(strconv.Quote(d.Path))
	case *Tensor:
		p.tensor(d)
	case *Kernel:
		p.str("kernel ")
		p.str(d.Name)
		p.str(" : ")
		p.str(d.Kind)
		p.str(" ")
		p.open(d.Open)
		p.stmts(d.Body)
		p.closeBrace(d.Close)
	case *Launch:
		p.str("launch")
		for _, a := range d.Attrs {
			p.str(" ")
			p.keyVal(a)
		}
		p.str(" ")
		p.open(d.Open)
		p.launchStmts(d.Body)
		p.closeBrace(d.Close)
	case *Expect:
		p.expect(d)
	}
}

func (p *printer) keyVal(a *Attr) {
	p.str(a.Key)
	if a.Val != nil {
		p.str("=")
		p.expr(a.Val)
	}
}

func (p *printer) tensor(t *Tensor) {
	p.str(t.Class.String())
	p.str(" ")
	p.str(t.Name)
	p.str(" : ")
	if t.DType != "" {
		p.str(t.DType)
		p.str(" ")
	}
	p.str("[")
	p.exprList(t.Shape)
	p.str("]")
	if t.Layout != "" {
		p.str(" ")
		p.str(t.Layout)
	}
	for _, a := range t.Attrs {
		p.str(" ")
		p.keyVal(a)
	}
	if t.Init != nil {
		p.str(" = ")
		p.init(t.Init)
	}
}

func (p *printer) init(in *Init) {
	p.str(in.Kind)
	switch in.Kind {
	case "fill", "expr":
		p.str("(")
		if in.X != nil {
			p.expr(in.X)
		}
		p.str(")")
	case "file":
		p.str("(")
		p.str(strconv.Quote(in.File))
		p.str(")")
	case "random":
		p.str("(")
		for i, a := range in.Args {
			if i > 0 {
				p.str(", ")
			}
			p.keyVal(a)
		}
		p.str(")")
	}
}

func (p *printer) stmts(ss []Stmt) {
	p.indent++
	docs := make([]*Comments, len(ss))
	codes := make([]string, len(ss))
	for i, s := range ss {
		docs[i] = s.Doc()
		switch s.(type) {
		case *For, *While, *If:
		default:
			codes[i] = p.render(func(q *printer) { q.stmt(s) })
		}
	}
	widths := alignComments(codes, docs)
	for i, s := range ss {
		doc := docs[i]
		if i > 0 && doc.Blank {
			p.nl()
		}
		p.comments(doc.Before)
		if in, ok := s.(*Instr); ok && in.Label != "" && p.indent > 1 {
			// Labels inside loops and branches stand out one level, as in
			// Go; at kernel level they stay in line with the body.
			p.indent--
			p.tabs()
			p.indent++
		} else {
			p.tabs()
		}
		if codes[i] != "" {
			p.str(codes[i])
			p.afterAligned(doc.After, len(codes[i]), widths[i])
		} else {
			p.stmt(s)
			p.after(doc.After)
		}
		p.nl()
	}
	p.indent--
}

func (p *printer) stmt(s Stmt) {
	switch s := s.(type) {
	case *TileDecl:
		p.tile(s)
	case *Let:
		p.str("let %")
		p.str(s.Reg)
		p.str(" = ")
		p.expr(s.X)
	case *For:
		p.str("for %")
		p.str(s.Var)
		p.str(" = ")
		p.expr(s.From)
		p.str(" to ")
		p.expr(s.To)
		if s.Step != nil {
			p.str(" step ")
			p.expr(s.Step)
		}
		p.str(" ")
		p.open(s.Open)
		p.stmts(s.Body)
		p.closeBrace(s.Close)
	case *While:
		p.str("while ")
		p.expr(s.Cond)
		p.str(" ")
		p.open(s.Open)
		p.stmts(s.Body)
		p.closeBrace(s.Close)
	case *If:
		p.ifStmt(s)
	case *Break:
		p.str("break")
	case *Instr:
		p.instr(s)
	}
}

func (p *printer) ifStmt(s *If) {
	p.str("if ")
	p.expr(s.Cond)
	p.str(" ")
	p.open(s.Open)
	p.stmts(s.Then)
	p.closeBrace(s.Close)
	if s.Elif && len(s.Else) == 1 {
		if in, ok := s.Else[0].(*If); ok {
			p.str(" else ")
			p.ifStmt(in)
			return
		}
	}
	if len(s.Else) > 0 || len(s.ElseClose) > 0 {
		p.str(" else {\n")
		p.stmts(s.Else)
		p.closeBrace(s.ElseClose)
	}
}

func (p *printer) tile(t *TileDecl) {
	p.str("tile %")
	p.str(t.Name)
	if t.Count != nil {
		p.str("[")
		p.expr(t.Count)
		p.str("]")
	}
	p.str(" : ")
	p.str(t.Loc)
	p.str(" ")
	p.str(t.DType)
	p.str(" [")
	p.expr(t.Rows)
	p.str(", ")
	p.expr(t.Cols)
	p.str("]")
	if t.VRows != nil || t.VCols != nil {
		p.str(" valid [")
		p.expr(t.VRows)
		p.str(", ")
		p.expr(t.VCols)
		p.str("]")
	}
	if len(t.Attrs) > 0 {
		p.str(" layout(")
		for i, a := range t.Attrs {
			if i > 0 {
				p.str(", ")
			}
			p.keyVal(a)
		}
		p.str(")")
	}
	if t.Addr != nil {
		p.str(" @ ")
		p.expr(t.Addr)
		if t.Step != nil {
			p.str(" step ")
			p.expr(t.Step)
		}
	}
}

func (p *printer) instr(in *Instr) {
	if in.Label != "" {
		p.str(in.Label)
		p.str(": ")
	}
	if in.Result != nil {
		p.expr(in.Result)
		p.str(" = ")
	}
	if in.Prefix {
		p.str("pto.")
	}
	p.str(in.Op)
	if len(in.Args) > 0 {
		p.str(" ")
		p.exprList(in.Args)
	}
	if in.Type != nil && len(in.Type.Types) > 0 {
		p.str(" : ")
		for i, t := range in.Type.Types {
			if i > 0 {
				p.str(", ")
			}
			p.str("!pto.")
			p.str(t.Kind)
			p.str("<")
			for j, tp := range t.Params {
				if j > 0 {
					p.str(", ")
				}
				if tp.Key != "" {
					p.str(tp.Key)
					p.str("=")
				}
				p.str(tp.Val)
			}
			p.str(">")
		}
	}
	for _, a := range in.Attrs {
		p.str(" #")
		p.keyVal(a)
	}
}

func (p *printer) launchStmts(ss []LaunchStmt) {
	p.indent++
	for i, s := range ss {
		doc := s.Doc()
		if i > 0 && doc.Blank {
			p.nl()
		}
		p.comments(doc.Before)
		p.tabs()
		p.launchStmt(s)
		p.after(doc.After)
		p.nl()
	}
	p.indent--
}

func (p *printer) launchStmt(s LaunchStmt) {
	switch s := s.(type) {
	case *Run:
		p.str("run")
		if s.Name != "" {
			p.str(" ")
			p.str(strconv.Quote(s.Name))
		}
		for i, st := range s.Streams {
			if i > 0 {
				p.str(",")
			}
			p.str(" ")
			p.str(strings.Join(st.Kernels, " + "))
			if st.Blocks != nil {
				p.str(" blocks=")
				p.expr(st.Blocks)
			}
		}
	case *Reset:
		p.str("reset ")
		p.expr(s.Target)
		p.str(" = ")
		p.init(s.Init)
	case *LaunchIf:
		p.launchIf(s)
	}
}

func (p *printer) launchIf(s *LaunchIf) {
	p.str("if ")
	p.expr(s.Cond)
	p.str(" ")
	p.open(s.Open)
	p.launchStmts(s.Then)
	p.closeBrace(s.Close)
	if s.Elif && len(s.Else) == 1 {
		if in, ok := s.Else[0].(*LaunchIf); ok {
			p.str(" else ")
			p.launchIf(in)
			return
		}
	}
	if len(s.Else) > 0 || len(s.ElseClose) > 0 {
		p.str(" else {\n")
		p.launchStmts(s.Else)
		p.closeBrace(s.ElseClose)
	}
}

func (p *printer) expect(e *Expect) {
	p.str("expect ")
	switch e.Kind {
	case "finding":
		p.str("finding ")
		p.str(e.Finding)
		if len(e.Sites) > 0 {
			p.str(" at ")
			p.exprList(e.Sites)
		}
		if e.Count != nil {
			p.str(" count ")
			p.expr(e.Count)
		}
	case "cycles":
		p.str("cycles ")
		p.expr(e.Cycles)
	default:
		p.expr(e.Target)
		p.str(" == ")
		p.expr(e.Golden)
		if e.Tol != nil {
			p.str(" tol ")
			p.expr(e.Tol)
		}
		if e.RTol != nil {
			p.str(" rtol ")
			p.expr(e.RTol)
		}
		if e.ATol != nil {
			p.str(" atol ")
			p.expr(e.ATol)
		}
	}
}

func (p *printer) exprList(es []Expr) {
	for i, e := range es {
		if i > 0 {
			p.str(", ")
		}
		p.expr(e)
	}
}

func (p *printer) expr(e Expr) {
	switch e := e.(type) {
	case nil:
	case *Num:
		if e.Text != "" {
			p.str(e.Text)
		} else if e.IsFloat {
			p.str(strconv.FormatFloat(e.Float, 'g', -1, 64))
		} else {
			p.str(strconv.FormatInt(e.Int, 10))
		}
	case *Str:
		p.str(strconv.Quote(e.Val))
	case *Name:
		p.str(e.Name)
	case *Ref:
		p.str("%")
		p.str(e.Name)
		if e.Index != nil {
			p.str("[")
			p.expr(e.Index)
			p.str("]")
		}
	case *GMRef:
		p.str("@")
		p.str(e.Name)
		if e.Rank != nil {
			p.str("[rank=")
			p.expr(e.Rank)
			p.str("]")
		}
		if e.Index != nil {
			p.str("[")
			p.exprList(e.Index)
			p.str("]")
		}
	case *Unary:
		p.str(e.Op)
		p.expr(e.X)
	case *Binary:
		p.operand(e.X, BinaryPrec(e.Op), false)
		p.str(" ")
		p.str(e.Op)
		p.str(" ")
		p.operand(e.Y, BinaryPrec(e.Op), true)
	case *Paren:
		p.str("(")
		p.expr(e.X)
		p.str(")")
	case *Call:
		p.str(e.Fn)
		p.str("(")
		p.exprList(e.Args)
		p.str(")")
	case *KeyVal:
		p.str(e.Key)
		p.str("=")
		p.expr(e.Val)
	}
}

// operand prints one side of a binary expression, adding parentheses only
// when a tree built by hand (not parsed) would otherwise print ambiguously.
func (p *printer) operand(x Expr, outer int, right bool) {
	if b, ok := x.(*Binary); ok {
		in := BinaryPrec(b.Op)
		if in < outer || (right && in == outer) {
			p.str("(")
			p.expr(x)
			p.str(")")
			return
		}
	}
	p.expr(x)
}

// BinaryPrec is the binding strength of a binary operator, as in Go (5 binds
// tightest); the parser and the printer share it so they cannot disagree.
func BinaryPrec(op string) int {
	switch op {
	case "*", "/", "%", "<<", ">>", "&":
		return 5
	case "+", "-", "|", "^":
		return 4
	case "==", "!=", "<", "<=", ">", ">=":
		return 3
	case "&&":
		return 2
	case "||":
		return 1
	}
	return 0
}
