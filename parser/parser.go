// Package parser reads PTO-AS source (docs/language.md) into the syntax tree of
// package asm. The grammar is written for participle and is the specification
// (Grammar, docs/grammar.ebnf); the lexer filtering and the line-by-line error
// recovery are ours, so one bad line costs one diagnostic and the rest of the
// file is still checked. A hand-written scanner (scan.go) and recursive-descent
// parser (fast.go) build participle's trees for well-formed files about two
// orders of magnitude faster; anything they are unsure of goes to participle,
// so trees and diagnostics are participle's either way.
//
// Names are stored without their sigils: `%a1` is Ref{Name: "a1"} and a tile
// declared as `tile %a1` has Name "a1"; `@A` is GMRef{Name: "A"}, matching
// `gm A`. A `pto.` prefix is split off the mnemonic into Instr.Prefix.
package parser

import (
	"errors"
	"fmt"
	"strings"

	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"
	"github.com/ptoasm/ptoasm/asm"
)

var parserOptions = []participle.Option{
	participle.Lexer(lexDef),
	participle.Elide("Whitespace"),
	participle.UseLookahead(2),
}

// fileParser is the whole-file parser; its String() is the published grammar.
// The production parsers share its lexer and options; the recovery path uses
// them one line at a time.
var (
	fileParser       = participle.MustBuild[file](parserOptions...)
	topLineParser    = mustProduction[topLine]()
	stmtLineParser   = mustProduction[stmtLine]()
	launchLineParser = mustProduction[launchLine]()
	kernelHeadParser = mustProduction[kernelHead]()
	launchHeadParser = mustProduction[launchHead]()
	forHeadParser    = mustProduction[forHead]()
	whileHeadParser  = mustProduction[whileHead]()
	ifHeadParser     = mustProduction[ifHead]()
	exprParser       = mustProduction[expr]()
	constParser      = mustProduction[constDecl]()
	includeParser    = mustProduction[includeDecl]()
	tensorParser     = mustProduction[tensorDecl]()
	expectParser     = mustProduction[expectDecl]()
	tileParser       = mustProduction[tileStmt]()
	letParser        = mustProduction[letStmt]()
	breakParser      = mustProduction[breakStmt]()
	instrParser      = mustProduction[instr]()
	runParser        = mustProduction[runStmt]()
	resetParser      = mustProduction[resetStmt]()
)

// lineParse parses the code of one line (no comment, no EOL) with production p.
// Parsing with the specific production rather than the line production keeps
// participle's error at the token where the line went wrong: a failed
// alternative of a union is otherwise reported at the start of the line.
func lineParse[T any](r *recoverer, p *participle.Parser[T], sh shape, context string) *T {
	code := rawSpan(sh.raw, sh.code[0], sh.code[len(sh.code)-1])
	if r.lint(code, context) {
		return nil
	}
	v, err := parseTokens(p, code)
	if err != nil {
		r.syntaxError(err, code, context)
		return nil
	}
	return v
}

func mustProduction[P any]() *participle.Parser[P] {
	p, err := participle.ParserForProduction[P](fileParser)
	if err != nil {
		panic(err)
	}
	return p
}

// Grammar returns the EBNF of the PTO-AS grammar (docs/grammar.ebnf).
func Grammar() string { return fileParser.String() }

// ParseFile parses one source file. It always returns a File, partial when
// there are errors, and every syntax error in the file, each at its line and
// column.
func ParseFile(filename string, src []byte) (*asm.File, asm.ErrorList) {
	src = Normalize(src)
	var errs asm.ErrorList
	l := newLowerer(filename, src, &errs)
	f, eof := parseFile(l, filename, src)
	f.Span = asm.Span{
		Pos: asm.Pos{File: filename, Line: 1, Col: 1},
		End: l.pos(eof),
	}
	errs.RemoveMultiples()
	return f, errs
}

// Normalize makes what editors save readable to the lexer without moving a
// byte: a leading UTF-8 byte-order mark becomes three spaces, and a carriage
// return that ends a line on its own (old Mac line ends) becomes a newline;
// CRLF stays. Offsets and columns stay those of the original text, so the
// CLI normalizes what it reads too and diagnostics quote the right line. src
// is returned as is when there is nothing to change.
func Normalize(src []byte) []byte {
	bom := len(src) >= 3 && src[0] == 0xEF && src[1] == 0xBB && src[2] == 0xBF
	lone := false
	for i, c := range src {
		if c == '\r' && (i+1 == len(src) || src[i+1] != '\n') {
			lone = true
			break
		}
	}
	if !bom && !lone {
		return src
	}
	out := append([]byte(nil), src...)
	if bom {
		out[0], out[1], out[2] = ' ', ' ', ' '
	}
	for i, c := range out {
		if c == '\r' && (i+1 == len(out) || out[i+1] != '\n') {
			out[i] = '\n'
		}
	}
	return out
}

// parseFile tries the fast parser (fast.go), then participle on the whole
// file, then participle line by line to report every error. It also returns
// the position of the end of the file.
func parseFile(l *lowerer, filename string, src []byte) (*asm.File, lexer.Position) {
	s := string(src)
	fast, deep := tokenizeFast(s)
	eofTok := fast[len(fast)-1]
	if deep >= 0 {
		tooDeep(l, fast[deep].pos(filename), s[fast[deep].off:fast[deep].end])
		return l.file_(&file{}), eofTok.pos(filename)
	}
	if tree, ok := fastParse(filename, s, fast); ok {
		return l.file_(tree), eofTok.pos(filename)
	}
	toks, _ := tokenize(filename, src)
	eof := toks[len(toks)-1].Pos
	if tree, err := parseTokens(fileParser, toks); err == nil {
		return l.file_(tree), eof
	}
	return parseRecover(l, toks), eof
}

// ParseExpr parses a lone expression, such as the value of `-D NAME=expr`.
func ParseExpr(src string) (asm.Expr, error) {
	var errs asm.ErrorList
	all, deep := tokenize("", []byte(src))
	if deep >= 0 {
		l := newLowerer("", []byte(src), &errs)
		tooDeep(l, all[deep].Pos, all[deep].Value)
		return nil, errs
	}
	toks := all[:0:0]
	for _, t := range all {
		if t.Type != tEOL {
			toks = append(toks, t)
		}
	}
	r := &recoverer{l: newLowerer("", []byte(src), &errs)}
	tree, err := parseTokens(exprParser, toks[:len(toks)-1])
	if err != nil {
		r.syntaxError(err, toks, "expression")
		return nil, errs
	}
	x := r.l.expr(tree)
	if err := errs.Err(); err != nil {
		return nil, err
	}
	return x, nil
}

// tooDeep reports the token at p, with value v, that nests deeper than
// maxNesting. Nothing of the file is parsed: no parser can be trusted with it.
func tooDeep(l *lowerer, p lexer.Position, v string) {
	end := p
	end.Advance(v)
	l.errorf(l.span(p, end), "nesting too deep: %q opens level %d of brackets, braces and else-if links (at most %d)", v, maxNesting+1, maxNesting)
}

// parseTokens runs p over toks (which may or may not end in EOF).
func parseTokens[T any](p *participle.Parser[T], toks []lexer.Token) (*T, error) {
	var eof lexer.Position
	if n := len(toks); n > 0 {
		eof = tokEnd(toks[n-1])
		if toks[n-1].EOF() {
			toks = toks[:n-1]
		}
	}
	pl, err := lexer.Upgrade(&sliceLexer{toks: toks, eof: eof}, tWhitespace)
	if err != nil {
		return nil, err
	}
	return p.ParseFromLexer(pl)
}

// recoverer re-parses a file that failed as a whole, one logical line at a
// time, so that every bad line is reported. It tracks the block structure
// itself (a line ending in `{` opens a block, a line starting with `}` closes
// one) and builds the same grammar trees the whole-file parse would.
type recoverer struct {
	l     *lowerer
	lines [][]lexer.Token
	i     int
	// errLines remembers lines that already have an error: one per line.
	errLines map[int]bool
}

func parseRecover(l *lowerer, toks []lexer.Token) *asm.File {
	r := &recoverer{l: l, errLines: map[int]bool{}}
	start := 0
	for i, t := range toks {
		if t.Type == tEOL {
			r.lines = append(r.lines, toks[start:i+1])
			start = i + 1
		}
	}
	f := &file{}
	for r.i < len(r.lines) {
		if tl := r.topLine(); tl != nil {
			f.Lines = append(f.Lines, tl)
		}
	}
	return l.file_(f)
}

// sig returns the line without whitespace, and the index of a trailing comment
// (or len) and of the EOL.
func sig(line []lexer.Token) []lexer.Token {
	out := make([]lexer.Token, 0, len(line))
	for _, t := range line {
		if t.Type != tWhitespace {
			out = append(out, t)
		}
	}
	return out
}

// shape describes a significant-token line: code tokens, trailing comment.
type shape struct {
	raw     []lexer.Token // the whole line, whitespace included
	code    []lexer.Token // without whitespace, comment and EOL
	comment *comment
	eol     lexer.Token
}

func shapeOf(line []lexer.Token) shape {
	s := sig(line)
	sh := shape{raw: line}
	if n := len(s); n > 0 && s[n-1].Type == tEOL {
		sh.eol = s[n-1]
		s = s[:n-1]
	}
	if n := len(s); n > 0 && s[n-1].Type == tComment {
		c := s[n-1]
		sh.comment = &comment{Pos: c.Pos, EndPos: tokEnd(c), Text: c.Value}
		s = s[:n-1]
	}
	sh.code = s
	return sh
}

func isPunct(t lexer.Token, v string) bool { return t.Type == tPunct && t.Value == v }

// blockHead reports whether a line opens a block that continues on the next
// lines: it starts with one of keywords and its last code token is `{`, or it
// has no `{` at all (a forgotten brace: the body still follows).
func blockHead(sh shape, keywords ...string) (kw string, ok bool) {
	if len(sh.code) == 0 {
		return "", false
	}
	first := sh.code[0].Value
	found := false
	for _, k := range keywords {
		if first == k && sh.code[0].Type != tString {
			found = true
		}
	}
	if !found {
		return "", false
	}
	last := sh.code[len(sh.code)-1]
	if isPunct(last, "{") {
		return first, true
	}
	for _, t := range sh.code {
		if isPunct(t, "{") {
			return "", false // a one-line block: the line production handles it
		}
	}
	return first, true
}

var topKeywords = map[string]bool{
	"const": true, "include": true, "gm": true, "window": true, "signal": true, "fifo": true,
	"kernel": true, "launch": true, "expect": true,
}

func (r *recoverer) next() []lexer.Token {
	line := r.lines[r.i]
	r.i++
	return line
}

func (r *recoverer) topLine() *topLine {
	line := r.next()
	sh := shapeOf(line)
	if len(sh.code) == 0 {
		return &topLine{Comment: sh.comment}
	}
	first := sh.code[0]
	if kw, ok := blockHead(sh, "kernel", "launch"); ok {
		head, open := r.head(sh)
		d := &decl{}
		switch kw {
		case "kernel":
			h, err := parseTokens(kernelHeadParser, head)
			if err != nil {
				r.syntaxError(err, head, "kernel")
			}
			if h == nil {
				h = &kernelHead{}
			}
			if h.Pos.Line == 0 {
				h.Pos, h.EndPos = first.Pos, tokEnd(head[len(head)-1])
			}
			b, tail := r.block(open, sh.comment)
			d.Kernel = &kernelDecl{Head: h, Body: b}
			return &topLine{Decl: d, Comment: r.plainTail(tail)}
		default:
			h, err := parseTokens(launchHeadParser, head)
			if err != nil {
				r.syntaxError(err, head, "launch")
			}
			if h == nil {
				h = &launchHead{}
			}
			if h.Pos.Line == 0 {
				h.Pos, h.EndPos = first.Pos, tokEnd(head[len(head)-1])
			}
			b, tail := r.launchBlock(open, sh.comment)
			d.Launch = &launchDecl{Head: h, Body: b}
			return &topLine{Decl: d, Comment: r.plainTail(tail)}
		}
	}
	if isPunct(first, "}") {
		r.errorAt(first, "unexpected } at top level: no block is open")
		return nil
	}
	if first.Type == tComment || !topKeywords[first.Value] {
		r.errorAt(first, "unexpected %s at top level: expected const, include, gm, window, signal, fifo, kernel, launch or expect", describe(first))
		return nil
	}
	if hasBrace(sh) {
		tl, err := parseTokens(topLineParser, line)
		if err != nil {
			r.syntaxError(err, line, "declaration")
			return nil
		}
		return tl
	}
	d := &decl{}
	switch first.Value {
	case "const":
		d.Const = lineParse(r, constParser, sh, "declaration")
	case "include":
		d.Include = lineParse(r, includeParser, sh, "declaration")
	case "expect":
		d.Expect = lineParse(r, expectParser, sh, "declaration")
	default:
		d.Tensor = lineParse(r, tensorParser, sh, "declaration")
	}
	if d.Const == nil && d.Include == nil && d.Expect == nil && d.Tensor == nil {
		return nil
	}
	return &topLine{Decl: d, Comment: sh.comment}
}

func hasBrace(sh shape) bool {
	for _, t := range sh.code {
		if isPunct(t, "{") || isPunct(t, "}") {
			return true
		}
	}
	return false
}

// head splits a block header line into the tokens before `{` and the `{`
// token itself (synthesised at the end of the line when it was forgotten).
func (r *recoverer) head(sh shape) (head []lexer.Token, open lexer.Token) {
	last := sh.code[len(sh.code)-1]
	if isPunct(last, "{") {
		return rawSpan(sh.raw, sh.code[0], sh.code[len(sh.code)-2]), last
	}
	r.errorAt(sh.eol, "expected { at the end of the %s line", sh.code[0].Value)
	return rawSpan(sh.raw, sh.code[0], last), lexer.Token{Type: tPunct, Value: "", Pos: sh.eol.Pos}
}

// rawSpan returns the tokens of raw from first to last inclusive, whitespace
// included, so that participle's end positions match the whole-file parse.
func rawSpan(raw []lexer.Token, first, last lexer.Token) []lexer.Token {
	i, j := 0, len(raw)
	for k, t := range raw {
		if t.Pos.Offset == first.Pos.Offset && t.Type != tWhitespace {
			i = k
		}
		if t.Pos.Offset == last.Pos.Offset && t.Type != tWhitespace {
			j = k + 1
		}
	}
	if j < i {
		j = i
	}
	// Keep the whitespace after last: the whole-file parse ends a node there.
	if j < len(raw) && raw[j].Type == tWhitespace {
		j++
	}
	return raw[i:j]
}

// closing is the rest of a `}` line: nothing, `else {`, or `else if cond {`.
type closing struct {
	brace   lexer.Token
	elseTok bool
	ifHead  []lexer.Token // non-nil for `else if`
	open    lexer.Token   // the `{` after else
	comment *comment
	ok      bool // a `}` was found (false: end of file or a new top-level block)
}

// plainTail returns the comment after a closing brace that may not be
// followed by else.
func (r *recoverer) plainTail(c closing) *comment {
	if c.elseTok {
		r.errorAt(c.brace, "else without if")
	}
	return c.comment
}

// body collects the lines of a block up to its closing brace, calling line for
// each inner line.
func (r *recoverer) body(open lexer.Token, line func([]lexer.Token)) closing {
	for r.i < len(r.lines) {
		ln := r.lines[r.i]
		sh := shapeOf(ln)
		if len(sh.code) > 0 {
			first := sh.code[0]
			if isPunct(first, "}") {
				r.i++
				return r.closeLine(sh)
			}
			if first.Value == "kernel" || first.Value == "launch" {
				if _, ok := blockHead(sh, "kernel", "launch"); ok {
					r.errorAt(open, "missing } for the block opened here")
					return closing{}
				}
			}
		}
		r.i++
		line(ln)
	}
	r.errorAt(open, "missing } for the block opened here")
	return closing{}
}

func (r *recoverer) closeLine(sh shape) closing {
	c := closing{brace: sh.code[0], comment: sh.comment, ok: true}
	rest := sh.code[1:]
	if len(rest) == 0 {
		return c
	}
	if rest[0].Value != "else" || rest[0].Type == tString {
		r.errorAt(rest[0], "unexpected %s after }", describe(rest[0]))
		return c
	}
	c.elseTok = true
	rest = rest[1:]
	if len(rest) == 0 || !isPunct(rest[len(rest)-1], "{") {
		r.errorAt(sh.eol, "expected { at the end of the else line")
		c.open = lexer.Token{Type: tPunct, Pos: sh.eol.Pos}
	} else {
		c.open = rest[len(rest)-1]
		rest = rest[:len(rest)-1]
	}
	if len(rest) > 0 {
		if rest[0].Value == "if" {
			c.ifHead = rawSpan(sh.raw, rest[0], rest[len(rest)-1])
		} else {
			r.errorAt(rest[0], "unexpected %s after else: expected { or if", describe(rest[0]))
		}
	}
	return c
}

func (r *recoverer) block(open lexer.Token, openComment *comment) (*block, closing) {
	b := &block{Pos: open.Pos, Open: openComment}
	c := r.body(open, func(ln []lexer.Token) {
		if sl := r.stmtLine(ln); sl != nil {
			b.Lines = append(b.Lines, sl)
		}
	})
	b.EndPos = tokEnd(c.brace)
	if !c.ok {
		b.EndPos = open.Pos
	}
	return b, c
}

func (r *recoverer) launchBlock(open lexer.Token, openComment *comment) (*launchBlock, closing) {
	b := &launchBlock{Pos: open.Pos, Open: openComment}
	c := r.body(open, func(ln []lexer.Token) {
		if sl := r.launchLine(ln); sl != nil {
			b.Lines = append(b.Lines, sl)
		}
	})
	b.EndPos = tokEnd(c.brace)
	if !c.ok {
		b.EndPos = open.Pos
	}
	return b, c
}

func (r *recoverer) stmtLine(line []lexer.Token) *stmtLine {
	sh := shapeOf(line)
	if len(sh.code) == 0 {
		return &stmtLine{Comment: sh.comment}
	}
	if kw, ok := blockHead(sh, "for", "while", "if"); ok {
		head, open := r.head(sh)
		s := &stmt{}
		var tail closing
		switch kw {
		case "for":
			h, err := parseTokens(forHeadParser, head)
			if err != nil {
				r.syntaxError(err, head, "for")
				h = &forHead{Pos: head[0].Pos, EndPos: tokEnd(head[len(head)-1])}
			}
			var b *block
			b, tail = r.block(open, sh.comment)
			s.For = &forStmt{Head: h, Body: b}
			return &stmtLine{Stmt: s, Comment: r.plainTail(tail)}
		case "while":
			h, err := parseTokens(whileHeadParser, head)
			if err != nil {
				r.syntaxError(err, head, "while")
				h = &whileHead{Pos: head[0].Pos, EndPos: tokEnd(head[len(head)-1])}
			}
			var b *block
			b, tail = r.block(open, sh.comment)
			s.While = &whileStmt{Head: h, Body: b}
			return &stmtLine{Stmt: s, Comment: r.plainTail(tail)}
		default:
			st, tail := r.ifChain(head, open, sh.comment)
			s.If = st
			return &stmtLine{Stmt: s, Comment: tail}
		}
	}
	if hasBrace(sh) {
		sl, err := parseTokens(stmtLineParser, line)
		if err != nil {
			r.syntaxError(err, line, "statement")
			return nil
		}
		return sl
	}
	s := &stmt{}
	switch sh.code[0].Value {
	case "tile":
		s.Tile = lineParse(r, tileParser, sh, "declaration")
	case "let":
		s.Let = lineParse(r, letParser, sh, "expression")
	case "break":
		s.Break = lineParse(r, breakParser, sh, "statement")
	default:
		s.Instr = lineParse(r, instrParser, sh, "statement")
	}
	if s.Tile == nil && s.Let == nil && s.Break == nil && s.Instr == nil {
		return nil
	}
	return &stmtLine{Stmt: s, Comment: sh.comment}
}

func (r *recoverer) ifHead(head []lexer.Token) *ifHead {
	h, err := parseTokens(ifHeadParser, head)
	if err != nil {
		r.syntaxError(err, head, "if")
		h = &ifHead{Pos: head[0].Pos, EndPos: tokEnd(head[len(head)-1])}
	}
	return h
}

// ifChain parses `if cond {` … with its else branches; it returns the comment
// after the final closing brace.
func (r *recoverer) ifChain(head []lexer.Token, open lexer.Token, openComment *comment) (*ifStmt, *comment) {
	st := &ifStmt{Head: r.ifHead(head)}
	b, tail := r.block(open, openComment)
	st.Body = b
	if !tail.elseTok {
		return st, tail.comment
	}
	if tail.ifHead != nil {
		in, c := r.ifChain(tail.ifHead, tail.open, tail.comment)
		st.ElseIf = in
		return st, c
	}
	eb, tail2 := r.block(tail.open, tail.comment)
	st.Else = eb
	return st, r.plainTail(tail2)
}

func (r *recoverer) launchLine(line []lexer.Token) *launchLine {
	sh := shapeOf(line)
	if len(sh.code) == 0 {
		return &launchLine{Comment: sh.comment}
	}
	if _, ok := blockHead(sh, "if"); ok {
		head, open := r.head(sh)
		st, c := r.launchIfChain(head, open, sh.comment)
		return &launchLine{Stmt: &launchStmt{If: st}, Comment: c}
	}
	if hasBrace(sh) {
		ll, err := parseTokens(launchLineParser, line)
		if err != nil {
			r.syntaxError(err, line, "launch")
			return nil
		}
		return ll
	}
	s := &launchStmt{}
	switch sh.code[0].Value {
	case "run":
		s.Run = lineParse(r, runParser, sh, "launch")
	case "reset":
		s.Reset = lineParse(r, resetParser, sh, "launch")
	default:
		r.errorAt(sh.code[0], "unexpected %s in launch: expected run, reset or if", describe(sh.code[0]))
	}
	if s.Run == nil && s.Reset == nil {
		return nil
	}
	return &launchLine{Stmt: s, Comment: sh.comment}
}

// canStart reports whether t can begin an operand.
func canStart(t lexer.Token) bool {
	switch t.Type {
	case tPunct:
		switch t.Value {
		case "(", "!", "~", "@":
			return true
		}
		return false
	case tOp:
		return t.Value == "-"
	case tEOL, tComment, tInvalid:
		return false
	}
	return !t.EOF()
}

// lint finds the two commonest slips before participle does, because
// participle's backtracking reports them at the wrong token: a character that
// is not part of the language, and an operator or comma with nothing after it.
func (r *recoverer) lint(code []lexer.Token, context string) bool {
	for _, t := range code {
		if t.Type == tInvalid {
			r.syntaxError(&participle.UnexpectedTokenError{Unexpected: t}, code, context)
			return true
		}
	}
	what := "expression"
	if context == "statement" {
		what = "operand"
	}
	s := sig(code)
	inType := false
	for i, t := range s {
		if t.Type == lexDef.Symbols()["Type"] {
			inType = true
		}
		if inType {
			if isPunct(t, ">") {
				inType = false
			}
			continue
		}
		if (t.Type != tPunct && t.Type != tOp) || !(t.Value == "," || t.Value == "=" || binOps[t.Value]) {
			continue
		}
		if i+1 < len(s) && canStart(s[i+1]) {
			continue
		}
		var next lexer.Token
		if i+1 < len(s) {
			next = s[i+1]
		} else {
			next = lexer.Token{Type: tEOL, Value: "\n", Pos: tokEnd(t)}
		}
		if i == 0 {
			continue
		}
		r.errorAt(next, "expected %s after %q, found %s", what, t.Value, describe(next))
		return true
	}
	return false
}

func (r *recoverer) launchIfChain(head []lexer.Token, open lexer.Token, openComment *comment) (*launchIf, *comment) {
	st := &launchIf{Head: r.ifHead(head)}
	b, tail := r.launchBlock(open, openComment)
	st.Body = b
	if !tail.elseTok {
		return st, tail.comment
	}
	if tail.ifHead != nil {
		in, c := r.launchIfChain(tail.ifHead, tail.open, tail.comment)
		st.ElseIf = in
		return st, c
	}
	eb, tail2 := r.launchBlock(tail.open, tail.comment)
	st.Else = eb
	return st, r.plainTail(tail2)
}

func (r *recoverer) errorAt(t lexer.Token, format string, args ...any) {
	if r.errLines != nil {
		if r.errLines[t.Pos.Line] {
			return
		}
		r.errLines[t.Pos.Line] = true
	}
	p := r.l.pos(t.Pos)
	r.l.errorf(asm.Span{Pos: p, End: r.l.pos(tokEnd(t))}, format, args...)
}

// describe names a token for a message: `","`, `end of line`, `"a.npy"`.
func describe(t lexer.Token) string {
	switch {
	case t.EOF():
		return "end of file"
	case t.Type == tEOL:
		if t.Value == ";" {
			return `";"`
		}
		return "end of line"
	case t.Type == tComment:
		return "comment"
	case t.Type == tString:
		return t.Value
	}
	return fmt.Sprintf("%q", t.Value)
}

var binOps = map[string]bool{
	"||": true, "&&": true, "==": true, "!=": true, "<=": true, ">=": true, "<": true, ">": true,
	"<<": true, ">>": true, "+": true, "-": true, "|": true, "^": true, "*": true, "/": true, "%": true, "&": true,
	"!": true, "~": true,
}

// syntaxError rewrites participle's error into a message about the token
// where the line went wrong and what was wanted there.
func (r *recoverer) syntaxError(err error, toks []lexer.Token, context string) {
	var ute *participle.UnexpectedTokenError
	var perr participle.Error
	if !errors.As(err, &ute) {
		if errors.As(err, &perr) {
			r.errorAt(lexer.Token{Pos: perr.Position()}, "%s", perr.Message())
			return
		}
		if len(toks) > 0 {
			r.errorAt(toks[0], "%v", err)
		}
		return
	}
	tok := ute.Unexpected
	var prev *lexer.Token
	for i := range toks {
		t := &toks[i]
		if t.Pos.Offset >= tok.Pos.Offset {
			break
		}
		if t.Type != tWhitespace {
			prev = t
		}
	}
	if tok.EOF() {
		// A head parsed without its `{`: point at the end of what was there.
		tok.Type = tEOL
		tok.Value = "\n"
	}
	what := "expression"
	if context == "statement" {
		what = "operand"
	}
	switch {
	case tok.Type == tInvalid && tok.Value == `"`:
		r.errorAt(tok, "unterminated string")
	case tok.Type == tInvalid:
		r.errorAt(tok, "invalid character %q", tok.Value)
	case prev != nil && prev.Type == tPunct && prev.Value == ",":
		r.errorAt(tok, "expected %s after \",\", found %s", what, describe(tok))
	case prev != nil && (prev.Type == tPunct || prev.Type == tOp) && (binOps[prev.Value] || prev.Value == "=" || prev.Value == "("):
		r.errorAt(tok, "expected %s after %q, found %s", what, prev.Value, describe(tok))
	default:
		msg := "unexpected " + describe(tok)
		if exp := expected(ute); exp != "" {
			msg += ", expected " + exp
		}
		r.errorAt(tok, "%s", msg)
	}
}

// expected turns participle's expectation (an EBNF fragment) into words when
// it is short enough to read.
func expected(ute *participle.UnexpectedTokenError) string {
	m := ute.Message()
	i := strings.Index(m, "(expected ")
	if i < 0 {
		return ""
	}
	exp := strings.TrimSuffix(m[i+len("(expected "):], ")")
	if len(exp) > 48 {
		return ""
	}
	// Of a sequence, only its first item is what was wanted here.
	if f := strings.Fields(exp); len(f) > 1 && strings.HasPrefix(f[0], `"`) && !strings.Contains(exp, "|") {
		exp = f[0]
	}
	switch exp {
	case "Primary", "Expr", "Unary":
		return "an expression"
	case "InitSpec":
		return "an initialiser"
	}
	r := strings.NewReplacer("<eol>", "end of line", "<ident>", "a name", "<reg>", "a %register",
		"<global>", "an @name", "<string>", "a string", "<int>", "an integer", "<float>", "a number",
		"<type>", "a !pto type", "<comment>", "a comment")
	return r.Replace(exp)
}
