package parser

import (
	"unicode/utf8"

	"github.com/alecthomas/participle/v2/lexer"
)

// The fast path: a hand-written recursive-descent parser for the grammar in
// grammar.go, building the very same grammar trees participle builds, with
// the same Pos and EndPos. participle spends about a microsecond and a dozen
// allocations per token on reflection and backtracking; this parser decides
// every choice from the next one or two tokens and allocates only the nodes.
//
// It is deliberately partial. Whenever the input leaves the well-trodden
// path — a syntax error, or a choice participle would make by backtracking
// (a keyword used as a label, say) — it gives up, and the caller runs
// participle on the same tokens. So for any input either this parser
// succeeds with participle's tree, or participle decides; diagnostics and
// error recovery are participle's alone. TestFastMatchesParticiple and
// FuzzFastParse hold it to that: wherever the fast parser succeeds,
// participle succeeds with an identical tree.
//
// The rules that make its successes participle's: every optional part is
// entered exactly when its first token (or, for `name =`, `label:` and
// `%r =`, its first two tokens) matches, as participle's greedy groups do;
// a part once entered must complete; alternatives are picked by the token
// that the earlier alternatives would reject outright.

// bailout is the panic value that abandons the fast parse.
type bailout struct{}

// maxIterations mirrors participle.MaxIterations: a repetition matching that
// many times is an error there, so here it is a bail-out.
const maxIterations = 1000000

// maxDepth bounds the nesting of expressions and blocks, so a pathological
// input cannot exhaust the stack; deeper input goes to participle.
const maxDepth = 200

type fastParser struct {
	src   string
	file  string
	toks  []token // from tokenizeFast: no whitespace, ending in EOF
	i     int     // index of the next token
	last  int     // index of the last token consumed
	depth int
	a     fastAllocs
}

// fastAllocs holds a slab per frequent node type and node list.
type fastAllocs struct {
	comment   slab[comment]
	keyVal    slab[keyVal]
	arg       slab[arg]
	stmtLine  slab[stmtLine]
	stmt      slab[stmt]
	instr     slab[instr]
	resReg    slab[resReg]
	mnemonic  slab[mnemonic]
	attr      slab[attr]
	expr      slab[expr]
	binOp     slab[binOp]
	unary     slab[unary]
	unOp      slab[unOp]
	primary   slab[primary]
	regRef    slab[regRef]
	call      slab[call]
	gmRef     slab[gmRef]
	bracket   slab[bracket]
	typeRef   slab[typeRef]
	typeParam slab[typeParam]
	letStmt   slab[letStmt]

	exprs  slab[*expr]
	binOps slab[*binOp]
	unOps  slab[*unOp]
	args   slab[*arg]
}

// fastParse parses toks (from tokenizeFast(src)) as a whole file, or reports
// false.
func fastParse(filename, src string, toks []token) (f *file, ok bool) {
	defer func() {
		if r := recover(); r != nil {
			if _, is := r.(bailout); !is {
				panic(r)
			}
			f, ok = nil, false
		}
	}()
	p := &fastParser{src: src, file: filename, toks: toks, last: -1}
	f = &file{}
	for !p.peek().eof() {
		if len(f.Lines) >= maxIterations {
			p.bail()
		}
		f.Lines = append(f.Lines, p.topLine())
	}
	return f, true
}

func (p *fastParser) bail() { panic(bailout{}) }

func (p *fastParser) peek() *token { return &p.toks[p.i] }

// peek2 is the token after peek.
func (p *fastParser) peek2() *token {
	if p.toks[p.i].eof() {
		return &p.toks[p.i]
	}
	return &p.toks[p.i+1]
}

func (p *fastParser) val(t *token) string { return p.src[t.off:t.end] }

func (p *fastParser) is(v string) bool {
	t := &p.toks[p.i]
	return p.src[t.off:t.end] == v
}

// next consumes the next token and returns its value.
func (p *fastParser) next() string {
	t := &p.toks[p.i]
	if t.eof() {
		p.bail()
	}
	p.last = p.i
	p.i++
	return p.src[t.off:t.end]
}

// pos is where a node starting now starts (participle: the next token).
func (p *fastParser) pos() lexer.Position { return p.toks[p.i].pos(p.file) }

// end is where a node that ends now ends. participle takes the position of
// the raw token after the node's last, which with whitespace kept is the
// byte after it: no node ends just before a token tokenize drops (those
// follow only an open bracket, a comma or similar punctuation).
func (p *fastParser) end() lexer.Position {
	t := &p.toks[p.last]
	e := t.pos(p.file)
	v := p.src[t.off:t.end]
	if t.typ == tEOL {
		e.Advance(v)
		return e
	}
	e.Offset = t.end
	n := len(v)
	for i := 0; i < len(v); i++ {
		if v[i] >= utf8.RuneSelf {
			n = utf8.RuneCountInString(v)
			break
		}
	}
	e.Column += n
	return e
}

// want consumes a token of type typ and returns its value.
func (p *fastParser) want(typ lexer.TokenType) string {
	if p.toks[p.i].typ != typ {
		p.bail()
	}
	return p.next()
}

// lit consumes a token with value v (a grammar literal matches by value).
func (p *fastParser) lit(v string) {
	if !p.is(v) {
		p.bail()
	}
	p.next()
}

// accept consumes a token with value v if it is next.
func (p *fastParser) accept(v string) bool {
	if p.is(v) && !p.toks[p.i].eof() {
		p.next()
		return true
	}
	return false
}

func (p *fastParser) enter() {
	p.depth++
	if p.depth > maxDepth {
		p.bail()
	}
}

func (p *fastParser) leave() { p.depth-- }

// keyFollows reports whether the next tokens are `name =`.
func (p *fastParser) keyFollows() bool {
	return p.peek().typ == tIdent && p.val(p.peek2()) == "="
}

func (p *fastParser) comment() *comment {
	c := p.a.comment.new()
	c.Pos = p.pos()
	c.Text = p.want(tComment)
	c.EndPos = p.end()
	return c
}

func (p *fastParser) topLine() *topLine {
	tl := &topLine{}
	switch p.peek().typ {
	case tComment:
		tl.Comment = p.comment()
	case tEOL:
	default:
		tl.Decl = p.decl()
		if p.peek().typ == tComment {
			tl.Comment = p.comment()
		}
	}
	p.want(tEOL)
	return tl
}

func (p *fastParser) decl() *decl {
	d := &decl{}
	switch p.val(p.peek()) {
	case "const":
		c := &constDecl{Pos: p.pos()}
		p.next()
		c.Name = p.want(tIdent)
		p.lit("=")
		c.Val = p.expr()
		c.EndPos = p.end()
		d.Const = c
	case "include":
		c := &includeDecl{Pos: p.pos()}
		p.next()
		c.Path = p.want(tString)
		c.EndPos = p.end()
		d.Include = c
	case "gm", "window", "signal", "fifo":
		d.Tensor = p.tensor()
	case "kernel":
		d.Kernel = p.kernel()
	case "launch":
		d.Launch = p.launch()
	case "expect":
		d.Expect = p.expect()
	default:
		p.bail()
	}
	return d
}

func (p *fastParser) tensor() *tensorDecl {
	t := &tensorDecl{Pos: p.pos()}
	t.Class = p.next()
	t.Name = p.want(tIdent)
	p.lit(":")
	if p.peek().typ == tIdent {
		t.DType = p.next()
	}
	p.lit("[")
	t.Shape = append(t.Shape, p.expr())
	for p.accept(",") {
		t.Shape = append(t.Shape, p.expr())
	}
	p.lit("]")
	switch p.val(p.peek()) {
	case "nd", "dn", "nz":
		t.Layout = p.next()
	}
	for p.keyFollows() {
		t.Attrs = append(t.Attrs, p.keyVal())
	}
	if p.accept("=") {
		t.Init = p.initSpec()
	}
	t.EndPos = p.end()
	return t
}

func (p *fastParser) keyVal() *keyVal {
	kv := p.a.keyVal.new()
	kv.Pos = p.pos()
	kv.Key = p.want(tIdent)
	p.lit("=")
	kv.Val = p.expr()
	kv.EndPos = p.end()
	return kv
}

func (p *fastParser) initSpec() *initSpec {
	in := &initSpec{Pos: p.pos()}
	in.Kind = p.want(tIdent)
	if p.accept("(") {
		in.Call = true
		in.Args = p.args(")")
		p.lit(")")
	}
	in.EndPos = p.end()
	return in
}

// args parses `( arg ( ',' arg )* )?` up to the closing token.
func (p *fastParser) args(close string) []*arg {
	if p.is(close) {
		return nil
	}
	return p.argList()
}

// argList parses `arg ( ',' arg )*`. Lists are gathered on the stack and
// copied into a slab, so a short list costs no allocation of its own.
func (p *fastParser) argList() []*arg {
	var buf [8]*arg
	out := append(buf[:0], p.arg())
	for p.accept(",") {
		out = append(out, p.arg())
	}
	return p.a.args.copy(out)
}

func (p *fastParser) arg() *arg {
	a := p.a.arg.new()
	a.Pos = p.pos()
	if p.keyFollows() {
		a.Key = p.next()
		p.next()
	}
	a.Val = p.expr()
	a.EndPos = p.end()
	return a
}

func (p *fastParser) kernel() *kernelDecl {
	h := &kernelHead{Pos: p.pos()}
	p.next()
	h.Name = p.want(tIdent)
	p.lit(":")
	k := &kindName{Pos: p.pos()}
	k.Name = p.want(tIdent)
	k.EndPos = p.end()
	h.Kind = k
	h.EndPos = p.end()
	return &kernelDecl{Head: h, Body: p.block()}
}

func (p *fastParser) block() *block {
	p.enter()
	b := &block{Pos: p.pos()}
	p.lit("{")
	switch p.peek().typ {
	case tComment, tEOL:
		if p.peek().typ == tComment {
			b.Open = p.comment()
		}
		p.want(tEOL)
		for !p.is("}") && !p.peek().eof() {
			if len(b.Lines) >= maxIterations {
				p.bail()
			}
			b.Lines = append(b.Lines, p.stmtLine())
		}
	default:
		b.Inline = p.stmt()
	}
	p.lit("}")
	b.EndPos = p.end()
	p.leave()
	return b
}

func (p *fastParser) stmtLine() *stmtLine {
	sl := p.a.stmtLine.new()
	switch p.peek().typ {
	case tComment:
		sl.Comment = p.comment()
	case tEOL:
	default:
		sl.Stmt = p.stmt()
		if p.peek().typ == tComment {
			sl.Comment = p.comment()
		}
	}
	p.want(tEOL)
	return sl
}

func (p *fastParser) stmt() *stmt {
	s := p.a.stmt.new()
	switch p.val(p.peek()) {
	case "tile":
		s.Tile = p.tile()
	case "let":
		l := p.a.letStmt.new()
		l.Pos = p.pos()
		p.next()
		l.Reg = p.want(tReg)
		p.lit("=")
		l.X = p.expr()
		l.EndPos = p.end()
		s.Let = l
	case "for":
		h := &forHead{Pos: p.pos()}
		p.next()
		h.Var = p.want(tReg)
		p.lit("=")
		h.From = p.expr()
		p.lit("to")
		h.To = p.expr()
		if p.accept("step") {
			h.Step = p.expr()
		}
		h.EndPos = p.end()
		s.For = &forStmt{Head: h, Body: p.block()}
	case "while":
		h := &whileHead{Pos: p.pos()}
		p.next()
		h.Cond = p.expr()
		h.EndPos = p.end()
		s.While = &whileStmt{Head: h, Body: p.block()}
	case "if":
		s.If = p.ifStmt()
	case "break":
		b := &breakStmt{Pos: p.pos()}
		p.next()
		b.Break = true
		b.EndPos = p.end()
		s.Break = b
	default:
		s.Instr = p.instr()
	}
	return s
}

func (p *fastParser) ifHead() *ifHead {
	h := &ifHead{Pos: p.pos()}
	p.lit("if")
	h.Cond = p.expr()
	h.EndPos = p.end()
	return h
}

func (p *fastParser) ifStmt() *ifStmt {
	p.enter()
	s := &ifStmt{Head: p.ifHead(), Body: p.block()}
	if p.accept("else") {
		if p.is("if") {
			s.ElseIf = p.ifStmt()
		} else {
			s.Else = p.block()
		}
	}
	p.leave()
	return s
}

func (p *fastParser) tile() *tileStmt {
	t := &tileStmt{Pos: p.pos()}
	p.next()
	t.Name = p.want(tReg)
	if p.accept("[") {
		t.Count = p.expr()
		p.lit("]")
	}
	p.lit(":")
	t.Loc = p.want(tIdent)
	t.DType = p.want(tIdent)
	p.lit("[")
	t.Rows = p.expr()
	p.lit(",")
	t.Cols = p.expr()
	p.lit("]")
	if p.accept("valid") {
		p.lit("[")
		t.VRows = p.expr()
		p.lit(",")
		t.VCols = p.expr()
		p.lit("]")
	}
	if p.accept("layout") {
		t.Layout = true
		p.lit("(")
		if !p.is(")") {
			t.Attrs = append(t.Attrs, p.keyVal())
			for p.accept(",") {
				t.Attrs = append(t.Attrs, p.keyVal())
			}
		}
		p.lit(")")
	}
	addr := true
	switch {
	case p.peek().typ == tGlobal:
		g := &gAddr{Pos: p.pos()}
		g.Name = p.next()
		g.Ops = p.binOps()
		g.EndPos = p.end()
		t.GAddr = g
	case p.accept("@"):
		t.Addr = p.expr()
	default:
		addr = false
	}
	if addr && p.accept("step") {
		t.Step = p.expr()
	}
	t.EndPos = p.end()
	return t
}

func (p *fastParser) instr() *instr {
	in := p.a.instr.new()
	in.Pos = p.pos()
	if p.peek().typ == tIdent && p.val(p.peek2()) == ":" {
		in.Label = p.next()
		p.next()
	}
	if p.peek().typ == tReg && p.val(p.peek2()) == "=" {
		r := p.a.resReg.new()
		r.Pos = p.pos()
		r.Name = p.next()
		r.EndPos = p.end()
		in.Result = r
		p.next()
	}
	m := p.a.mnemonic.new()
	m.Pos = p.pos()
	m.Name = p.want(tIdent)
	m.EndPos = p.end()
	in.Op = m
	if p.exprStarts() {
		in.Args = p.exprList()
	}
	if p.accept(":") {
		in.Types = append(in.Types, p.typeRef())
		for p.accept(",") {
			in.Types = append(in.Types, p.typeRef())
		}
	}
	for p.is("#") {
		a := p.a.attr.new()
		a.Pos = p.pos()
		p.next()
		a.Key = p.want(tIdent)
		if p.accept("=") {
			a.Val = p.expr()
		}
		a.EndPos = p.end()
		in.Attrs = append(in.Attrs, a)
	}
	in.EndPos = p.end()
	return in
}

func (p *fastParser) typeRef() *typeRef {
	t := p.a.typeRef.new()
	t.Pos = p.pos()
	t.Kind = p.want(tType)
	p.lit("<")
	if !p.is(">") {
		t.Params = append(t.Params, p.typeParam())
		for p.accept(",") {
			t.Params = append(t.Params, p.typeParam())
		}
	}
	p.lit(">")
	t.EndPos = p.end()
	return t
}

// typeParam is `( name '=' )? token+`, the tokens up to `,`, `>` or the end
// of the line, concatenated as participle concatenates string captures.
func (p *fastParser) typeParam() *typeParam {
	tp := p.a.typeParam.new()
	if p.keyFollows() {
		tp.Key = p.next()
		p.next()
	}
	n := 0
	for {
		t := p.peek()
		if t.eof() || t.typ == tEOL || p.is(",") || p.is(">") {
			break
		}
		if n == 0 {
			tp.Val = p.next()
		} else {
			tp.Val += p.next()
		}
		n++
	}
	if n == 0 {
		p.bail()
	}
	return tp
}

func (p *fastParser) launch() *launchDecl {
	h := &launchHead{Pos: p.pos()}
	p.next()
	for p.keyFollows() {
		h.Attrs = append(h.Attrs, p.keyVal())
	}
	h.EndPos = p.end()
	return &launchDecl{Head: h, Body: p.launchBlock()}
}

func (p *fastParser) launchBlock() *launchBlock {
	p.enter()
	b := &launchBlock{Pos: p.pos()}
	p.lit("{")
	switch p.peek().typ {
	case tComment, tEOL:
		if p.peek().typ == tComment {
			b.Open = p.comment()
		}
		p.want(tEOL)
		for !p.is("}") && !p.peek().eof() {
			if len(b.Lines) >= maxIterations {
				p.bail()
			}
			ll := &launchLine{}
			switch p.peek().typ {
			case tComment:
				ll.Comment = p.comment()
			case tEOL:
			default:
				ll.Stmt = p.launchStmt()
				if p.peek().typ == tComment {
					ll.Comment = p.comment()
				}
			}
			p.want(tEOL)
			b.Lines = append(b.Lines, ll)
		}
	default:
		b.Inline = p.launchStmt()
	}
	p.lit("}")
	b.EndPos = p.end()
	p.leave()
	return b
}

func (p *fastParser) launchStmt() *launchStmt {
	s := &launchStmt{}
	switch p.val(p.peek()) {
	case "run":
		r := &runStmt{Pos: p.pos()}
		p.next()
		if p.peek().typ == tString {
			r.Name = p.next()
		}
		r.Streams = append(r.Streams, p.stream())
		for p.accept(",") {
			r.Streams = append(r.Streams, p.stream())
		}
		r.EndPos = p.end()
		s.Run = r
	case "reset":
		r := &resetStmt{Pos: p.pos()}
		p.next()
		r.Target = p.gmRef()
		p.lit("=")
		r.Init = p.initSpec()
		r.EndPos = p.end()
		s.Reset = r
	case "if":
		s.If = p.launchIf()
	default:
		p.bail()
	}
	return s
}

func (p *fastParser) stream() *stream {
	st := &stream{Pos: p.pos()}
	st.Kernels = append(st.Kernels, p.want(tIdent))
	for p.is("+") && p.peek2().typ == tIdent {
		p.next()
		st.Kernels = append(st.Kernels, p.next())
	}
	if p.accept("blocks") {
		p.lit("=")
		st.Blocks = p.expr()
	}
	st.EndPos = p.end()
	return st
}

func (p *fastParser) launchIf() *launchIf {
	p.enter()
	s := &launchIf{Head: p.ifHead(), Body: p.launchBlock()}
	if p.accept("else") {
		if p.is("if") {
			s.ElseIf = p.launchIf()
		} else {
			s.Else = p.launchBlock()
		}
	}
	p.leave()
	return s
}

func (p *fastParser) expect() *expectDecl {
	e := &expectDecl{Pos: p.pos()}
	p.next()
	switch {
	case p.is("finding"):
		p.next()
		f := &findingExp{Kind: p.want(tIdent)}
		for p.is("-") && p.peek2().typ == tIdent {
			p.next()
			f.Kind += "-" + p.next()
		}
		if p.accept("at") {
			f.Sites = append(f.Sites, p.expr())
			for p.accept(",") {
				f.Sites = append(f.Sites, p.expr())
			}
		}
		if p.accept("count") {
			f.Count = p.expr()
		}
		e.Finding = f
	case p.is("cycles"):
		p.next()
		e.Cycles = p.expr()
	default:
		o := &outputExp{Target: p.gmRef()}
		p.lit("==")
		o.Golden = p.expr()
		if p.accept("tol") {
			o.Tol = p.expr()
		}
		if p.accept("rtol") {
			o.RTol = p.expr()
		}
		if p.accept("atol") {
			o.ATol = p.expr()
		}
		e.Output = o
	}
	e.EndPos = p.end()
	return e
}

// exprList parses `expr ( ',' expr )*`.
func (p *fastParser) exprList() []*expr {
	var buf [8]*expr
	out := append(buf[:0], p.expr())
	for p.accept(",") {
		out = append(out, p.expr())
	}
	return p.a.exprs.copy(out)
}

// exprStarts reports whether the next token can begin an expression.
func (p *fastParser) exprStarts() bool {
	switch p.peek().typ {
	case tReg, tIdent, tInt, tGlobal, tFloat, tString:
		return true
	}
	switch p.val(p.peek()) {
	case "-", "!", "~", "(":
		return true
	}
	return false
}

func (p *fastParser) expr() *expr {
	p.enter()
	e := p.a.expr.new()
	e.X = p.unary()
	e.Ops = p.binOps()
	p.leave()
	return e
}

func (p *fastParser) binOps() []*binOp {
	if p.peek().typ != tOp {
		return nil
	}
	var buf [8]*binOp
	ops := buf[:0]
	for p.peek().typ == tOp {
		if len(ops) >= maxIterations {
			p.bail()
		}
		b := p.a.binOp.new()
		b.Op = p.next()
		b.Y = p.unary()
		ops = append(ops, b)
	}
	return p.a.binOps.copy(ops)
}

func (p *fastParser) unary() *unary {
	u := p.a.unary.new()
	var buf [4]*unOp
	ops := buf[:0]
	for {
		switch p.val(p.peek()) {
		case "-", "!", "~":
			if len(ops) >= maxIterations {
				p.bail()
			}
			o := p.a.unOp.new()
			o.Pos = p.pos()
			o.Op = p.next()
			ops = append(ops, o)
			continue
		}
		break
	}
	u.Ops = p.a.unOps.copy(ops)
	u.X = p.primary()
	return u
}

func (p *fastParser) primary() *primary {
	x := p.a.primary.new()
	x.Pos = p.pos()
	switch p.peek().typ {
	case tReg:
		r := p.a.regRef.new()
		r.Name = p.next()
		if p.accept("[") {
			r.Index = p.expr()
			p.lit("]")
		}
		x.Reg = r
	case tIdent:
		c := p.a.call.new()
		c.Name = p.next()
		if p.accept("(") {
			c.Call = true
			c.Args = p.args(")")
			p.lit(")")
		}
		x.Call = c
	case tInt:
		x.Int = p.next()
	case tGlobal:
		x.GM = p.gmRef()
	case tFloat:
		x.Float = p.next()
	case tString:
		x.Str = p.next()
	default:
		if !p.is("(") {
			p.bail()
		}
		p.next()
		x.Paren = p.expr()
		p.lit(")")
	}
	x.EndPos = p.end()
	return x
}

func (p *fastParser) gmRef() *gmRef {
	g := p.a.gmRef.new()
	g.Pos = p.pos()
	g.Name = p.want(tGlobal)
	for p.is("[") {
		b := p.a.bracket.new()
		b.Pos = p.pos()
		p.next()
		b.Args = p.argList()
		p.lit("]")
		b.EndPos = p.end()
		g.Groups = append(g.Groups, b)
	}
	g.EndPos = p.end()
	return g
}
