package mlir

import (
	"fmt"
	"strings"

	"github.com/ptoasm/ptoasm/asm"
)

// The structural parser. MLIR's op shape is generic,
//
//	[%r (, %r)* =] dialect.op <operand and attribute tokens> [{attr-dict}] [: types [-> types]] [region ...]
//
// so the parser does not know any op: it cuts the token stream into ops, keeps
// each op's tokens (balanced brackets included) and recurses into regions. The
// lowering checks every op against its table. Newlines are insignificant in
// MLIR, but printers (PTOAS, pto-dsl, hand-written tests) start every op on a
// new line; an op therefore ends at the end of a line when its brackets are
// balanced and the next line starts like an op (a value, a dotted name,
// `return`, a generic `"op"(`, a block label or `}`). A next line that starts
// with anything else (`iter_args(`, `outs(`, `->`) continues the op.

// Op is one operation.
type Op struct {
	Span asm.Span
	// Results are the defined values; Count is n in `%r:n = ...` (1 otherwise).
	Results []Result
	Name    string
	NameTok Tok
	// Generic is true for the quoted form `"pto.tmov"(...) <{...}> : (...) -> ()`.
	Generic bool
	// Toks are the tokens after the name, with one KRegion token where each
	// region sits.
	Toks    []Tok
	Regions []*Region
}

// Result is one `%name` or `%name:n` before the `=`.
type Result struct {
	Name  string
	Count int
	Span  asm.Span
}

// Region is `{ ... }`: blocks of ops. Most regions have one block whose label
// is elided.
type Region struct {
	Span   asm.Span
	Blocks []*BlockNode
}

// BlockNode is one block: an optional `^bb0(%a: T, ...):` header, then ops.
type BlockNode struct {
	Label string
	// Args are the block arguments with their type tokens.
	Args []Arg
	Ops  []*Op
}

// Arg is a block or function argument `%name : type`.
type Arg struct {
	Name string
	Type []Tok
	Span asm.Span
	// Attrs is the argument's attribute dictionary (`{...}` after the
	// type), nil without one.
	Attrs []Tok
}

// Module is a whole file: the top-level ops (a `module` op, or bare funcs).
type Module struct {
	Ops []*Op
}

type cutter struct {
	toks []Tok
	i    int
	errs asm.ErrorList
}

const maxDepth = 200

// Parse cuts src into ops. It returns every syntax error it finds with its
// position; the Module is still usable up to the first error.
func Parse(filename string, src []byte) (*Module, asm.ErrorList) {
	p := &cutter{toks: tokenize(filename, src)}
	if len(p.toks) == 0 {
		p.errs.Add(asm.Span{Pos: asm.Pos{File: filename}}, "cannot lex the file")
		return &Module{}, p.errs
	}
	for _, t := range p.toks {
		if t.Kind == KInvalid {
			p.errs.Add(t.Span, "invalid character %q", t.Text)
			return &Module{}, p.errs
		}
	}
	m := &Module{}
	for p.peek().Kind != KEOF && len(p.errs) == 0 {
		if p.peek().is("}") {
			p.errs.Add(p.peek().Span, "unexpected }")
			break
		}
		op := p.op(0)
		if op == nil {
			break
		}
		m.Ops = append(m.Ops, op)
	}
	return m, p.errs
}

func (p *cutter) peek() Tok { return p.toks[p.i] }
func (p *cutter) peekAt(k int) Tok {
	if p.i+k < len(p.toks) {
		return p.toks[p.i+k]
	}
	return p.toks[len(p.toks)-1]
}
func (p *cutter) next() Tok {
	t := p.toks[p.i]
	if t.Kind != KEOF {
		p.i++
	}
	return t
}

// startsOp reports whether the token at p.i+k can begin an operation.
func (p *cutter) startsOp(k int) bool {
	t := p.peekAt(k)
	switch t.Kind {
	case KValue, KBlock:
		return true
	case KString:
		return p.peekAt(k + 1).is("(")
	case KIdent:
		if strings.Contains(t.Text, ".") {
			return true
		}
		switch t.Text {
		case "return", "call", "module":
			return true
		}
	case KPunct:
		return t.Text == "}"
	case KEOF:
		return true
	}
	return false
}

// op parses one operation (its results, name, tokens and regions).
func (p *cutter) op(depth int) *Op {
	if depth > maxDepth {
		p.errs.Add(p.peek().Span, "regions nested too deeply")
		return nil
	}
	start := p.peek()
	op := &Op{}
	if start.Kind == KValue {
		for {
			v := p.next()
			if v.Kind != KValue {
				p.errs.Add(v.Span, "expected a result value, found %s", describe(v))
				return nil
			}
			r := Result{Name: v.Text, Count: 1, Span: v.Span}
			if p.peek().is(":") && p.peekAt(1).Kind == KInt {
				p.next()
				n := p.next()
				fmt.Sscan(n.Text, &r.Count)
				if r.Count < 1 || r.Count > 1<<16 {
					p.errs.Add(n.Span, "bad result count %s", n.Text)
					return nil
				}
			}
			op.Results = append(op.Results, r)
			if p.peek().is(",") {
				p.next()
				continue
			}
			break
		}
		if !p.peek().is("=") {
			p.errs.Add(p.peek().Span, "expected = after the results, found %s", describe(p.peek()))
			return nil
		}
		p.next()
	}
	name := p.next()
	switch {
	case name.Kind == KIdent:
		op.Name = name.Text
	case name.Kind == KString:
		op.Name = strings.Trim(name.Text, `"`)
		op.Generic = true
	default:
		p.errs.Add(name.Span, "expected an operation name, found %s", describe(name))
		return nil
	}
	op.NameTok = name
	line := name.Span.Pos.Line
	var stack []Tok // open brackets within the op
	last := name
	for {
		t := p.peek()
		if t.Kind == KEOF {
			if len(stack) > 0 {
				p.errs.Add(stack[len(stack)-1].Span, "%s is never closed", stack[len(stack)-1].Text)
				return nil
			}
			break
		}
		if len(stack) == 0 && t.Span.Pos.Line != line {
			// A new line at depth 0: continue only if it does not look like an op
			// and the previous line did not end the op by closing a region.
			if p.startsOp(0) && !continues(last) {
				break
			}
		}
		if len(stack) == 0 && t.is("}") {
			break // the enclosing region's end
		}
		if t.is("{") && p.isRegion() {
			r := p.region(depth + 1)
			if r == nil {
				return nil
			}
			op.Toks = append(op.Toks, Tok{Kind: KRegion, Span: r.Span, Region: len(op.Regions)})
			op.Regions = append(op.Regions, r)
			last = p.toks[p.i-1]
			line = last.Span.Pos.Line
			continue
		}
		p.next()
		switch t.Text {
		case "(", "[", "{", "<":
			if t.Kind == KPunct {
				stack = append(stack, t)
			}
		case ")", "]", "}", ">":
			if t.Kind == KPunct {
				if len(stack) == 0 || !matches(stack[len(stack)-1].Text, t.Text) {
					if len(stack) == 0 {
						p.errs.Add(t.Span, "unexpected %s", t.Text)
					} else {
						p.errs.Add(t.Span, "%s does not close %s", t.Text, stack[len(stack)-1].Text).
							Note(stack[len(stack)-1].Span, "opened here")
					}
					return nil
				}
				stack = stack[:len(stack)-1]
			}
		}
		op.Toks = append(op.Toks, t)
		last = t
		line = t.Span.Pos.Line
	}
	op.Span = asm.Span{Pos: start.Span.Pos, End: last.Span.End}
	return op
}

// continues reports whether an op whose last token is t must go on to the next
// line (a dangling separator).
func continues(t Tok) bool {
	if t.Kind == KArrow {
		return true
	}
	if t.Kind != KPunct {
		return false
	}
	switch t.Text {
	case ",", ":", "=", "(", "[", "<", "{":
		return true
	}
	return false
}

func matches(open, close string) bool {
	switch open {
	case "(":
		return close == ")"
	case "[":
		return close == "]"
	case "{":
		return close == "}"
	case "<":
		return close == ">"
	}
	return false
}

// isRegion decides whether the `{` at p.i opens a region or an attribute
// dictionary. Printers put a region's first op on a new line; a dictionary's
// first key stays on the brace's line. A value or block label after the brace
// also means a region (`{ %x = ...` written on one line), and `key =` after it
// a dictionary, even one spread over lines.
func (p *cutter) isRegion() bool {
	open, nx := p.peek(), p.peekAt(1)
	switch {
	case nx.Kind == KEOF:
		return false
	case nx.Kind == KValue || nx.Kind == KBlock:
		return true
	case (nx.Kind == KIdent || nx.Kind == KString) && p.peekAt(2).is("="):
		return false // `{name = ...` even when the dictionary spans lines
	}
	return nx.Span.Pos.Line != open.Span.Pos.Line
}

// region parses `{ [^bb(args):] ops ... }`.
func (p *cutter) region(depth int) *Region {
	open := p.next()
	r := &Region{}
	blk := &BlockNode{}
	r.Blocks = append(r.Blocks, blk)
	for {
		t := p.peek()
		switch {
		case t.Kind == KEOF:
			p.errs.Add(open.Span, "{ is never closed")
			return nil
		case t.is("}"):
			p.next()
			r.Span = asm.Span{Pos: open.Span.Pos, End: t.Span.End}
			return r
		case t.Kind == KBlock:
			b := p.blockHeader()
			if b == nil {
				return nil
			}
			if len(blk.Ops) == 0 && blk.Label == "" {
				r.Blocks[len(r.Blocks)-1] = b
			} else {
				r.Blocks = append(r.Blocks, b)
			}
			blk = b
		default:
			op := p.op(depth)
			if op == nil {
				return nil
			}
			blk.Ops = append(blk.Ops, op)
		}
	}
}

// blockHeader parses `^bb0(%a: T, %b: T):`.
func (p *cutter) blockHeader() *BlockNode {
	lbl := p.next()
	b := &BlockNode{Label: lbl.Text}
	if p.peek().is("(") {
		p.next()
		args, ok := p.argList(")")
		if !ok {
			return nil
		}
		b.Args = args
	}
	if !p.peek().is(":") {
		p.errs.Add(p.peek().Span, "expected : after block label %s, found %s", lbl.Text, describe(p.peek()))
		return nil
	}
	p.next()
	return b
}

// argList parses `%a: T, %b: T` up to close (consumed).
func (p *cutter) argList(close string) ([]Arg, bool) {
	var out []Arg
	if p.peek().is(close) {
		p.next()
		return nil, true
	}
	for {
		v := p.next()
		if v.Kind != KValue {
			p.errs.Add(v.Span, "expected an argument, found %s", describe(v))
			return nil, false
		}
		if !p.peek().is(":") {
			p.errs.Add(p.peek().Span, "expected : after %s, found %s", v.Text, describe(p.peek()))
			return nil, false
		}
		p.next()
		a := Arg{Name: v.Text, Span: v.Span}
		depth := 0
		for {
			t := p.peek()
			if t.Kind == KEOF {
				p.errs.Add(t.Span, "unterminated argument list")
				return nil, false
			}
			if depth == 0 && (t.is(",") || t.is(close)) {
				break
			}
			if t.Kind == KPunct {
				switch t.Text {
				case "(", "[", "<", "{":
					depth++
				case ")", "]", ">", "}":
					depth--
				}
			}
			a.Type = append(a.Type, p.next())
		}
		out = append(out, a)
		if p.next().is(close) {
			return out, true
		}
	}
}

func describe(t Tok) string {
	switch t.Kind {
	case KEOF:
		return "end of file"
	case KRegion:
		return "a region"
	}
	return fmt.Sprintf("%q", t.Text)
}
