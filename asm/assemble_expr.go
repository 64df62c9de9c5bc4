package asm

import (
	"errors"
	"fmt"
	"math"
)

// Integer expressions compile to closures over an Env. Constants fold at compile
// time, so a CExpr with Const set never calls anything. Division by zero and
// overflow in a folded expression are errors (FoldBinop); at run time a
// division by zero yields 0 and arithmetic wraps, because a simulated kernel
// must never crash the simulator (the machine may flag the value).

// scope says which names an expression may use.
type scope struct {
	// kern is nil outside kernels (constants, shapes, launch): no registers.
	kern *kernelScope
	// builtins allows rank, nranks, block_idx, block_num, subblock_idx.
	builtins bool
	// extra names with fixed meaning (tensor init index letters); compiled to 0.
	extra map[string]bool
	what  string // for messages: "constant", "launch", ...
}

// builtinFn is the closure reading launch value name, or nil.
func builtinFn(name string) func(*Env) int64 {
	s := builtinSlot(name)
	if s == 0 {
		return nil
	}
	return func(e *Env) int64 { return e.Builtin(s) }
}

// builtinSlot is name's Affine slot, 0 for none.
func builtinSlot(name string) int {
	switch name {
	case "rank":
		return SlotRank
	case "nranks":
		return SlotNRanks
	case "block_idx":
		return SlotBlock
	case "subblock_idx":
		return SlotSubBlock
	case "block_num":
		return SlotBlockNum
	}
	return 0
}

func constExpr(v int64, src Expr) CExpr { return CExpr{Const: true, Val: v, Src: src} }

func (c CExpr) fn() func(*Env) int64 {
	if c.Fn != nil {
		return c.Fn
	}
	v := c.Val
	return func(*Env) int64 { return v }
}

// EvalBinop is x op y as a run computes it: a division (or remainder) by
// zero is 0, where the assembler's own folding reports it (binop's ok).
// known is false for an operator the language does not have. The static
// flag pass folds constants with it, so its values are the machine's.
func EvalBinop(op string, x, y int64) (v int64, known bool) {
	if !validBinop(op) {
		return 0, false
	}
	v, _ = binop(op, x, y)
	return v, true
}

// binop evaluates x op y; ok is false for a division by zero.
func binop(op string, x, y int64) (v int64, ok bool) {
	b2i := func(b bool) int64 {
		if b {
			return 1
		}
		return 0
	}
	switch op {
	case "+":
		return x + y, true
	case "-":
		return x - y, true
	case "*":
		return x * y, true
	case "/":
		if y == 0 {
			return 0, false
		}
		if x == math.MinInt64 && y == -1 {
			return x, true
		}
		return x / y, true
	case "%":
		if y == 0 {
			return 0, false
		}
		if y == -1 {
			return 0, true
		}
		return x % y, true
	case "<<":
		if y < 0 || y > 63 {
			return 0, true
		}
		return x << uint(y), true
	case ">>":
		if y < 0 || y > 63 {
			if x < 0 {
				return -1, true
			}
			return 0, true
		}
		return x >> uint(y), true
	case "&":
		return x & y, true
	case "|":
		return x | y, true
	case "^":
		return x ^ y, true
	case "==":
		return b2i(x == y), true
	case "!=":
		return b2i(x != y), true
	case "<":
		return b2i(x < y), true
	case "<=":
		return b2i(x <= y), true
	case ">":
		return b2i(x > y), true
	case ">=":
		return b2i(x >= y), true
	case "&&":
		return b2i(x != 0 && y != 0), true
	case "||":
		return b2i(x != 0 || y != 0), true
	}
	return 0, true
}

func unop(op string, x int64) int64 {
	switch op {
	case "-":
		return -x
	case "!":
		if x == 0 {
			return 1
		}
		return 0
	case "~":
		return ^x
	}
	return x
}

func callFn(fn string, xs []int64) (int64, bool) {
	switch fn {
	case "min":
		m := xs[0]
		for _, x := range xs[1:] {
			m = min(m, x)
		}
		return m, true
	case "max":
		m := xs[0]
		for _, x := range xs[1:] {
			m = max(m, x)
		}
		return m, true
	case "abs":
		if xs[0] < 0 {
			return -xs[0], true
		}
		return xs[0], true
	case "ceildiv":
		if xs[1] == 0 {
			return 0, false
		}
		q, r := xs[0]/xs[1], xs[0]%xs[1]
		if r != 0 && (r > 0) == (xs[1] > 0) {
			q++
		}
		return q, true
	case "align":
		if xs[1] == 0 {
			return 0, false
		}
		v, _ := callFn("ceildiv", xs)
		return v * xs[1], true
	}
	return 0, false
}

var scalarFuncs = map[string][2]int{"min": {1, -1}, "max": {1, -1}, "abs": {1, 1}, "ceildiv": {2, 2}, "align": {2, 2}}

// expr compiles an integer expression. It reports every problem it finds and
// returns ok=false if there was any.
func (a *assembler) expr(e Expr, sc *scope) (CExpr, bool) {
	switch e := e.(type) {
	case nil:
		return CExpr{}, false
	case *Num:
		if e.IsFloat {
			a.errs.Add(e.Span, "floating-point %s in an integer expression", e.Text)
			return CExpr{}, false
		}
		return constExpr(e.Int, e), true
	case *Paren:
		c, ok := a.expr(e.X, sc)
		c.Src = e
		return c, ok
	case *Name:
		return a.nameExpr(e, sc)
	case *Ref:
		return a.refExpr(e, sc)
	case *Unary:
		x, ok := a.expr(e.X, sc)
		if !ok {
			return CExpr{}, false
		}
		op := e.Op
		if op != "-" && op != "!" && op != "~" {
			a.errs.Add(e.Span, "unknown unary operator %q", op)
			return CExpr{}, false
		}
		if x.Const {
			v := unop(op, x.Val)
			if op == "-" {
				var msg string
				if v, msg = FoldNeg(x.Val); msg != "" {
					a.errs.Add(e.Span, "%s", msg)
					return CExpr{}, false
				}
			}
			return constExpr(v, e), true
		}
		xf := x.fn()
		var lin *Affine
		if op == "-" {
			lin = binaryAffine("*", x, constExpr(-1, nil))
		}
		return CExpr{Fn: func(env *Env) int64 { return unop(op, xf(env)) }, Src: e, Lin: lin}, true
	case *Binary:
		x, okx := a.expr(e.X, sc)
		y, oky := a.expr(e.Y, sc)
		if !okx || !oky {
			return CExpr{}, false
		}
		op := e.Op
		if !validBinop(op) {
			a.errs.Add(e.Span, "unknown operator %q", op)
			return CExpr{}, false
		}
		if x.Const && y.Const {
			v, msg := FoldBinop(op, x.Val, y.Val)
			if msg == "division by zero" {
				a.errs.Add(e.Y.NodeSpan(), "%s", msg)
				return CExpr{}, false
			}
			if msg != "" {
				a.errs.Add(e.Span, "%s", msg)
				return CExpr{}, false
			}
			return constExpr(v, e), true
		}
		xf, yf := x.fn(), y.fn()
		return CExpr{Fn: func(env *Env) int64 { v, _ := binop(op, xf(env), yf(env)); return v }, Src: e,
			Lin: binaryAffine(op, x, y), Cond: binaryCond(op, x, y)}, true
	case *Call:
		ar, known := scalarFuncs[e.Fn]
		if !known {
			a.errs.Add(e.Span, "unknown function %s in an integer expression (have min, max, abs, ceildiv, align)", e.Fn)
			return CExpr{}, false
		}
		if len(e.Args) < ar[0] || (ar[1] >= 0 && len(e.Args) > ar[1]) {
			a.errs.Add(e.Span, "%s takes %s, got %d", e.Fn, arity(ar), len(e.Args))
			return CExpr{}, false
		}
		args := make([]CExpr, len(e.Args))
		allConst, ok := true, true
		for i, x := range e.Args {
			c, okc := a.expr(x, sc)
			ok = ok && okc
			allConst = allConst && c.Const
			args[i] = c
		}
		if !ok {
			return CExpr{}, false
		}
		fn := e.Fn
		if allConst {
			xs := make([]int64, len(args))
			for i, c := range args {
				xs[i] = c.Val
			}
			v, msg := FoldCall(fn, xs)
			if msg != "" {
				a.errs.Add(e.Span, "%s", msg)
				return CExpr{}, false
			}
			return constExpr(v, e), true
		}
		fs := make([]func(*Env) int64, len(args))
		for i, c := range args {
			fs[i] = c.fn()
		}
		return CExpr{Fn: func(env *Env) int64 {
			var buf [4]int64
			xs := buf[:0]
			for _, f := range fs {
				xs = append(xs, f(env))
			}
			v, _ := callFn(fn, xs)
			return v
		}, Src: e}, true
	case *GMRef:
		a.errs.Add(e.Span, "GM reference @%s in an integer expression", e.Name)
	case *Str:
		a.errs.Add(e.Span, "string in an integer expression")
	case *KeyVal:
		a.errs.Add(e.Span, "%s= is not allowed here", e.Key)
	default:
		a.errs.Add(e.NodeSpan(), "not an integer expression")
	}
	return CExpr{}, false
}

func arity(ar [2]int) string {
	switch {
	case ar[1] < 0:
		return "at least 1 argument"
	case ar[0] == 1 && ar[1] == 1:
		return "1 argument"
	}
	return "2 arguments"
}

func validBinop(op string) bool {
	switch op {
	case "+", "-", "*", "/", "%", "<<", ">>", "&", "|", "^", "==", "!=", "<", "<=", ">", ">=", "&&", "||":
		return true
	}
	return false
}

func (a *assembler) nameExpr(e *Name, sc *scope) (CExpr, bool) {
	if sc.extra[e.Name] {
		return constExpr(0, e), true
	}
	if f := builtinFn(e.Name); f != nil {
		if !sc.builtins {
			a.errs.Add(e.Span, "%s is not known in a %s expression (only constants)", e.Name, sc.what)
			return CExpr{}, false
		}
		return CExpr{Fn: f, Src: e, Lin: &Affine{N: 1, Slot: [2]int{builtinSlot(e.Name)}, Mul: [2]int64{1}}}, true
	}
	if c := a.consts[e.Name]; c != nil {
		v, ok := a.constVal(c, e.Span)
		if !ok {
			return CExpr{}, false
		}
		return constExpr(v, e), true
	}
	d := a.errs.Add(e.Span, "undefined: %s", e.Name)
	if s := a.suggestConst(e.Name); s != "" {
		d.Msg += " (did you mean " + s + "?)"
	}
	return CExpr{}, false
}

func (a *assembler) suggestConst(name string) string {
	return closest(name, len(a.constOrder), func(i int) string { return a.constOrder[i] })
}

func (a *assembler) refExpr(e *Ref, sc *scope) (CExpr, bool) {
	if sc.kern == nil {
		if sc == tileScope {
			a.errs.Add(e.Span, "register %%%s in a tile declaration's shape, address or step, which are fixed when the kernel is assembled: bind the tile to a register address at run time with `tassign %%t, EXPR` (or tsubview), index a tile array with %%%s, or give the valid region from registers (`valid [%%%s, COLS]`)", e.Name, e.Name, e.Name)
			return CExpr{}, false
		}
		a.errs.Add(e.Span, "register %%%s in a %s expression, which takes only constants", e.Name, sc.what)
		return CExpr{}, false
	}
	ks := sc.kern
	if t := ks.tiles[e.Name]; t != nil {
		a.errs.Add(e.Span, "tile %%%s used as an integer", e.Name).Note(t.Decl.Span, "declared here")
		return CExpr{}, false
	}
	slot, ok := ks.regs[e.Name]
	if !ok {
		a.errs.Add(e.Span, "undefined register %%%s", e.Name)
		return CExpr{}, false
	}
	if e.Index != nil {
		a.errs.Add(e.Index.NodeSpan(), "register %%%s cannot be indexed", e.Name)
		return CExpr{}, false
	}
	return CExpr{Fn: func(env *Env) int64 {
		if slot < len(env.Regs) {
			return env.Regs[slot]
		}
		return 0
	}, Src: e, Lin: &Affine{N: 1, Slot: [2]int{slot}, Mul: [2]int64{1}}}, true
}

// staticInt compiles e and insists it is a compile-time constant.
func (a *assembler) staticInt(e Expr, sc *scope, what string) (int64, bool) {
	c, ok := a.expr(e, sc)
	if !ok {
		return 0, false
	}
	if !c.Const {
		a.errs.Add(e.NodeSpan(), "%s must be a constant expression", what)
		return 0, false
	}
	return c.Val, true
}

// floatVal reads a float immediate: a float literal, an integer constant
// expression, or a negated float literal.
func (a *assembler) floatVal(e Expr, sc *scope) (float64, bool) {
	switch x := e.(type) {
	case *Num:
		if x.IsFloat {
			return x.Float, true
		}
		return float64(x.Int), true
	case *Paren:
		return a.floatVal(x.X, sc)
	case *Unary:
		if x.Op == "-" {
			if n, ok := x.X.(*Num); ok && n.IsFloat {
				return -n.Float, true
			}
			if n, ok := x.X.(*Name); ok {
				if c := a.consts[n.Name]; c != nil {
					if f, isF := c.floatConst(); isF {
						return -f, true
					}
				}
			}
		}
	case *Name:
		if c := a.consts[x.Name]; c != nil {
			if f, isF := c.floatConst(); isF {
				return f, true
			}
		}
	}
	v, ok := a.staticInt(e, sc, "a scalar immediate")
	return float64(v), ok
}

// floatLit is the value of a float literal, bracketed or negated.
func floatLit(e Expr) (float64, bool) {
	switch x := e.(type) {
	case *Num:
		return x.Float, x.IsFloat
	case *Paren:
		return floatLit(x.X)
	case *Unary:
		if x.Op == "-" {
			f, ok := floatLit(x.X)
			return -f, ok
		}
	}
	return 0, false
}

func isFloatLit(e Expr) bool {
	_, ok := floatLit(e)
	return ok
}

// EvalInt evaluates a register-free integer expression with the assembler's
// arithmetic, for what is evaluated after assembly: launch attributes and
// conditions, expectations, finding counts. lookup resolves names (constants,
// and whatever else the caller allows); && and || short-circuit, so
// `n > 0 && K / n > 1` is safe. A float literal must be a whole number (1e6).
// Errors carry the position of the offending node.
func EvalInt(e Expr, lookup func(string) (int64, bool)) (int64, error) {
	fail := func(n Node, format string, args ...any) (int64, error) {
		msg := fmt.Sprintf(format, args...)
		if n != nil {
			if p := n.NodeSpan().Pos; p.IsValid() {
				msg = p.String() + ": " + msg
			}
		}
		return 0, errors.New(msg)
	}
	switch x := e.(type) {
	case nil:
		return fail(nil, "missing expression")
	case *Num:
		if !x.IsFloat {
			return x.Int, nil
		}
		if v := int64(x.Float); float64(v) == x.Float {
			return v, nil
		}
		return fail(x, "%s is not an integer", x.Text)
	case *Name:
		if v, ok := lookup(x.Name); ok {
			return v, nil
		}
		return fail(x, "unknown name %s", x.Name)
	case *Paren:
		return EvalInt(x.X, lookup)
	case *Unary:
		v, err := EvalInt(x.X, lookup)
		if err != nil {
			return 0, err
		}
		switch x.Op {
		case "-":
			v, msg := FoldNeg(v)
			if msg != "" {
				return fail(x, "%s", msg)
			}
			return v, nil
		case "!", "~":
			return unop(x.Op, v), nil
		case "+":
			return v, nil
		}
		return fail(x, "unknown operator %q", x.Op)
	case *Binary:
		a, err := EvalInt(x.X, lookup)
		if err != nil {
			return 0, err
		}
		if x.Op == "&&" && a == 0 {
			return 0, nil
		}
		if x.Op == "||" && a != 0 {
			return 1, nil
		}
		b, err := EvalInt(x.Y, lookup)
		if err != nil {
			return 0, err
		}
		if !validBinop(x.Op) {
			return fail(x, "unknown operator %q", x.Op)
		}
		v, msg := FoldBinop(x.Op, a, b)
		if msg == "division by zero" {
			return fail(x.Y, "%s", msg)
		}
		if msg != "" {
			return fail(x, "%s", msg)
		}
		return v, nil
	case *Call:
		ar, known := scalarFuncs[x.Fn]
		if !known || len(x.Args) < ar[0] || (ar[1] >= 0 && len(x.Args) > ar[1]) {
			return fail(x, "%s(...) is not an integer function here (have min, max, abs, ceildiv, align)", x.Fn)
		}
		vals := make([]int64, 0, len(x.Args))
		for _, a := range x.Args {
			v, err := EvalInt(a, lookup)
			if err != nil {
				return 0, err
			}
			vals = append(vals, v)
		}
		v, msg := FoldCall(x.Fn, vals)
		if msg != "" {
			return fail(x, "%s", msg)
		}
		return v, nil
	}
	return fail(e, "%s is not an integer expression", ExprString(e))
}
