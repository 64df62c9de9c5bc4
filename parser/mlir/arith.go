package mlir

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ptoasm/ptoasm/asm"
)

var fmtSprintf = fmt.Sprintf

// Scalars. An SSA integer lowers to an expression over constants, loop
// variables and builtins, inlined at each use (SSA values never change). Large
// expressions are bound once: to a `let` register when they depend on the
// kernel's state, to a `const` when they use only constants.

const (
	maxInlineDyn    = 12
	maxInlineStatic = 24
)

func lit(sp asm.Span, v int64) *val {
	return &val{kind: vScalar, x: num(sp, v), static: true, known: true, v: v}
}

func nodes(x asm.Expr) int {
	switch x := x.(type) {
	case *asm.Binary:
		return 1 + nodes(x.X) + nodes(x.Y)
	case *asm.Unary:
		return 1 + nodes(x.X)
	case *asm.Paren:
		return nodes(x.X)
	case *asm.Call:
		n := 1
		for _, a := range x.Args {
			n += nodes(a)
		}
		return n
	}
	return 1
}

func isLit(v *val) bool {
	_, ok := v.x.(*asm.Num)
	return ok && v.known && !v.isF
}

func paren(x asm.Expr) asm.Expr {
	switch x.(type) {
	case *asm.Binary:
		return &asm.Paren{Span: x.NodeSpan(), X: x}
	}
	return x
}

// binVal builds a op b with Go precedence made explicit by parentheses.
func binVal(sp asm.Span, o string, a, b *val) *val {
	out := &val{kind: vScalar, static: a.static && b.static}
	if a.known && b.known {
		if v, ok := evalBin(o, a.v, b.v); ok {
			out.known, out.v = true, v
		}
	}
	if isLit(a) && isLit(b) && out.known {
		out.x = num(sp, out.v)
		return out
	}
	// Identities keep index arithmetic readable (x*1, x+0 from get_subblock_*).
	switch {
	case (o == "*" || o == "/") && isLit(b) && b.v == 1,
		(o == "+" || o == "-" || o == "|" || o == "^" || o == "<<" || o == ">>") && isLit(b) && b.v == 0:
		out.x = a.x
		return out
	case (o == "*" && isLit(a) && a.v == 1) || ((o == "+" || o == "|" || o == "^") && isLit(a) && a.v == 0):
		out.x = b.x
		return out
	}
	out.x = &asm.Binary{Span: sp, Op: o, X: paren(a.x), Y: paren(b.x)}
	return out
}

func callVal(sp asm.Span, fn string, a, b *val) *val {
	out := &val{kind: vScalar, static: a.static && b.static}
	if a.known && b.known {
		if v, ok := evalBin(fn, a.v, b.v); ok {
			out.known, out.v = true, v
		}
	}
	if isLit(a) && isLit(b) && out.known {
		out.x = num(sp, out.v)
		return out
	}
	out.x = &asm.Call{Span: sp, Fn: fn, Args: []asm.Expr{a.x, b.x}}
	return out
}

func mulVal(a, b *val) *val {
	sp := a.x.NodeSpan()
	if isLit(a) && a.v == 1 {
		return b
	}
	if isLit(b) && b.v == 1 {
		return a
	}
	return binVal(sp, "*", a, b)
}

func addVal(a, b *val) *val {
	if isLit(a) && a.v == 0 {
		return b
	}
	if isLit(b) && b.v == 0 {
		return a
	}
	return binVal(a.x.NodeSpan(), "+", a, b)
}

// evalBin folds a op b as the assembler does (asm.FoldBinop): ok is false for
// a division by zero and for a result that does not fit int64, so that the
// value stays an expression and the assembler reports it at the op (a
// wrapped fold became a plausible literal).
func evalBin(o string, a, b int64) (int64, bool) {
	var v int64
	var msg string
	switch o {
	case "min", "max", "ceildiv":
		v, msg = asm.FoldCall(o, []int64{a, b})
	default:
		if _, known := asm.EvalBinop(o, a, b); !known {
			return 0, false
		}
		v, msg = asm.FoldBinop(o, a, b)
	}
	return v, msg == ""
}

// bind keeps large expressions out of line: a let for dynamic values, a const
// for static ones.
func (k *kctx) bind(op *Op, v *val) *val {
	if v.kind != vScalar || v.isF || v.x == nil {
		return v
	}
	n := nodes(v.x)
	name, sp := k.result(op)
	switch {
	case !v.static && n > maxInlineDyn:
		r := k.reg(name)
		k.emit(&asm.Let{Span: op.Span, Reg: r, X: v.x})
		return &val{kind: vScalar, x: &asm.Ref{Span: sp, Name: r}, known: v.known, v: v.v}
	case v.static && n > maxInlineStatic:
		c := sanitize(k.name + "_" + name)
		for k.l.used[c] {
			c += "_"
		}
		k.l.constant(c, v.x, op.Span)
		return &val{kind: vScalar, x: &asm.Name{Span: sp, Name: c}, static: true, known: v.known, v: v.v}
	}
	return v
}

var cmpOps = map[string]string{"eq": "==", "ne": "!=", "slt": "<", "sle": "<=", "sgt": ">", "sge": ">=",
	"ult": "<", "ule": "<=", "ugt": ">", "uge": ">=", "oeq": "==", "one": "!=", "olt": "<", "ole": "<=", "ogt": ">", "oge": ">="}

// binOps and callOps are the ops PTO-AS's signed int64 operators and calls
// compute as MLIR does: / and % truncate like divsi and remsi, >> is shrsi's
// arithmetic shift, ceildiv rounds up for either sign. The unsigned ops and
// floordivsi are uintOps (arith_uint.go).
var binOps = map[string]string{"addi": "+", "subi": "-", "muli": "*", "divsi": "/",
	"remsi": "%", "andi": "&", "ori": "|", "xori": "^", "shli": "<<", "shrsi": ">>"}

var callOps = map[string]string{"minsi": "min", "maxsi": "max", "ceildivsi": "ceildiv"}

// arith lowers an arith op to a scalar value (no statement unless bound).
func (k *kctx) arith(op *Op) {
	name := strings.TrimPrefix(op.Name, "arith.")
	ts := op.Toks
	_, sp := k.result(op)
	operands := func(n int) []*val {
		body, _, _ := cutTop(ts, ":")
		items := splitTop(body, ",")
		var out []*val
		for _, it := range items {
			if len(it) == 1 && it[0].Kind == KValue {
				out = append(out, k.use(it[0]))
			}
		}
		if len(out) != n {
			k.errf(op.Span, "arith.%s takes %d operands", name, n)
			return nil
		}
		return out
	}
	switch {
	case name == "constant":
		k.define(op, k.constant(op))
	case uintOps[name]:
		o := operands(2)
		if o == nil {
			return
		}
		w := intWidth(lastType(ts))
		if o[0].kind != vScalar || o[1].kind != vScalar || o[0].isF || o[1].isF || w == 0 {
			k.errf(op.Span, "%s: operands are not integers", op.Name)
			return
		}
		// MLIR gives these no value (poison or undefined behaviour).
		switch c := o[1]; {
		case c.known && name == "shrui" && (c.v < 0 || c.v >= int64(w)):
			k.errf(op.Span, "%s: shift count %d out of range: counts are 0 to %d", op.Name, c.v, w-1)
			return
		case c.known && name != "shrui" && name != "maxui" && name != "minui" && c.v == 0:
			k.errf(op.Span, "%s: division by zero", op.Name)
			return
		}
		k.define(op, k.bind(op, uintArith(sp, name, w, o[0], o[1])))
	case binOps[name] != "":
		if o := operands(2); o != nil {
			k.define(op, k.bind(op, k.scalarBin(op, binOps[name], o[0], o[1])))
		}
	case callOps[name] != "":
		if o := operands(2); o != nil {
			if o[0].kind != vScalar || o[1].kind != vScalar {
				k.errf(op.Span, "%s: operands are not integers", op.Name)
				return
			}
			k.checkFold(op, callOps[name], o[0], o[1])
			k.define(op, k.bind(op, callVal(sp, callOps[name], o[0], o[1])))
		}
	case name == "cmpi" || name == "cmpf":
		if len(ts) < 1 {
			k.errf(op.Span, "arith.%s needs a predicate", name)
			return
		}
		pred := ts[0].Text
		o, ok := cmpOps[pred]
		if !ok {
			k.errf(ts[0].Span, "unknown predicate %s", pred)
			return
		}
		rest := ts[1:]
		if len(rest) > 0 && rest[0].is(",") {
			rest = rest[1:]
		}
		body, _, _ := cutTop(rest, ":")
		var vs []*val
		for _, it := range splitTop(body, ",") {
			if len(it) == 1 && it[0].Kind == KValue {
				vs = append(vs, k.use(it[0]))
			}
		}
		if len(vs) != 2 {
			k.errf(op.Span, "arith.%s takes a predicate and 2 operands", name)
			return
		}
		if name == "cmpi" && pred[0] == 'u' {
			// Unsigned: compare the unsigned readings (arith_uint.go).
			w := intWidth(lastType(ts))
			if w == 0 || vs[0].kind != vScalar || vs[1].kind != vScalar {
				k.errf(op.Span, "%s: operands are not integers", op.Name)
				return
			}
			x, y := unsignedOrder(sp, w, vs[0], vs[1])
			k.define(op, k.bind(op, binVal(sp, o, x, y)))
			return
		}
		k.define(op, k.bind(op, k.scalarBin(op, o, vs[0], vs[1])))
	case name == "select":
		o := operands(3)
		if o == nil {
			return
		}
		c, a, b := o[0], o[1], o[2]
		if c.kind != vScalar {
			k.errf(op.Span, "arith.select: the condition is not an integer")
			return
		}
		if c.known && c.static {
			if c.v != 0 {
				k.define(op, a)
			} else {
				k.define(op, b)
			}
			return
		}
		if a.kind != vScalar || b.kind != vScalar || a.isF || b.isF {
			k.define(op, a) // tiles or floats: the first choice (documented)
			return
		}
		// c*a + (1-c)*b with c normalised to 0/1.
		cn := binVal(sp, "!=", c, lit(sp, 0))
		na := binVal(sp, "*", cn, a)
		nb := binVal(sp, "*", binVal(sp, "-", lit(sp, 1), cn), b)
		k.define(op, k.bind(op, binVal(sp, "+", na, nb)))
	case name == "index_cast" || name == "index_castui" || name == "extsi" || name == "extui" || name == "trunci" ||
		name == "bitcast" || name == "sitofp" || name == "uitofp" || name == "fptosi" || name == "fptoui" ||
		name == "extf" || name == "truncf":
		if len(ts) == 0 || ts[0].Kind != KValue {
			k.errf(op.Span, "arith.%s needs an operand", name)
			return
		}
		v := k.use(ts[0])
		if name == "sitofp" || name == "uitofp" {
			if v.known {
				k.define(op, &val{kind: vScalar, isF: true, f: float64(v.v), x: fnum(sp, float64(v.v)), static: true})
				return
			}
			k.define(op, &val{kind: vScalar, isF: true, f: DefaultFloatArg, x: fnum(sp, DefaultFloatArg), static: true})
			return
		}
		k.define(op, v)
	case name == "addf" || name == "subf" || name == "mulf" || name == "divf" || name == "maximumf" || name == "minimumf" ||
		name == "maxnumf" || name == "minnumf" || name == "negf":
		body, _, _ := cutTop(ts, ":")
		var vs []*val
		for _, it := range splitTop(body, ",") {
			if len(it) == 1 && it[0].Kind == KValue {
				vs = append(vs, k.use(it[0]))
			}
		}
		f := DefaultFloatArg
		if len(vs) >= 1 && vs[0].isF {
			f = vs[0].f
		}
		if len(vs) == 2 && vs[0].isF && vs[1].isF {
			a, b := vs[0].f, vs[1].f
			switch name {
			case "addf":
				f = a + b
			case "subf":
				f = a - b
			case "mulf":
				f = a * b
			case "divf":
				if b != 0 {
					f = a / b
				}
			case "maximumf", "maxnumf":
				f = max(a, b)
			default:
				f = min(a, b)
			}
		} else if name == "negf" {
			f = -f
		}
		f = finite(f)
		k.define(op, &val{kind: vScalar, isF: true, f: f, x: fnum(sp, f), static: true})
	default:
		k.errf(op.NameTok.Span, "unsupported operation %s", op.Name)
	}
}

func (k *kctx) scalarBin(op *Op, o string, a, b *val) *val {
	_, sp := k.result(op)
	if a.kind != vScalar || b.kind != vScalar {
		k.errf(op.Span, "%s: operands are not integers", op.Name)
		return &val{}
	}
	k.checkFold(op, o, a, b)
	return binVal(sp, o, a, b)
}

// checkFold reports a fold of two known integers that does not fit int64 or
// shifts by a count outside 0..63: evalBin leaves it unknown, and an unknown
// value reads as a dynamic one downstream (a shape of 2^62*4+1 rows became a
// default-sized tensor), so the op itself is the error.
func (k *kctx) checkFold(op *Op, o string, a, b *val) {
	if !a.known || !b.known || a.isF || b.isF {
		return
	}
	var msg string
	switch o {
	case "min", "max", "ceildiv":
		_, msg = asm.FoldCall(o, []int64{a.v, b.v})
	default:
		_, msg = asm.FoldBinop(o, a.v, b.v)
	}
	if strings.HasPrefix(msg, "integer overflow") || strings.HasPrefix(msg, "shift count") {
		k.errf(op.Span, "%s: %s", op.Name, msg)
	}
}

// constant lowers arith.constant: integers, floats, booleans; dense vectors are
// opaque (only tmrgsort's `executed` uses them).
func (k *kctx) constant(op *Op) *val {
	ts := op.Toks
	_, sp := k.result(op)
	if len(ts) == 0 {
		k.errf(op.Span, "arith.constant needs a value")
		return &val{}
	}
	t := ts[0]
	ty := lastType(ts)
	isF := len(ty) == 1 && isFloatType(ty[0].Text)
	switch t.Kind {
	case KInt:
		v, err := strconv.ParseInt(t.Text, 10, 64)
		if err != nil {
			k.errf(t.Span, "integer %s out of range", t.Text)
			return &val{}
		}
		if isF {
			return &val{kind: vScalar, isF: true, f: float64(v), x: fnum(sp, float64(v)), static: true}
		}
		return lit(sp, v)
	case KHex:
		v, err := strconv.ParseUint(t.Text[2:], 16, 64)
		if err != nil {
			k.errf(t.Span, "number %s out of range", t.Text)
			return &val{}
		}
		if isF {
			f := hexFloat(v, ty[0].Text)
			return &val{kind: vScalar, isF: true, f: f, x: fnum(sp, f), static: true}
		}
		return lit(sp, int64(v))
	case KFloat:
		f, err := strconv.ParseFloat(t.Text, 64)
		if err != nil {
			k.errf(t.Span, "bad float %s", t.Text)
			return &val{}
		}
		f = finite(f)
		return &val{kind: vScalar, isF: true, f: f, x: fnum(sp, f), static: true}
	case KIdent:
		switch t.Text {
		case "true":
			return lit(sp, 1)
		case "false":
			return lit(sp, 0)
		case "dense":
			return &val{}
		}
	}
	k.errf(t.Span, "unsupported constant %s", t.Text)
	return &val{}
}

func hexFloat(bits uint64, ty string) float64 {
	switch ty {
	case "f32":
		return finite(float64(float32frombits(uint32(bits))))
	case "f64":
		return finite(float64frombits(bits))
	}
	return DefaultFloatArg
}
