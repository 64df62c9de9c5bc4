package mlir

import (
	"math"

	"github.com/ptoasm/ptoasm/asm"
)

func float32frombits(b uint32) float32 { return math.Float32frombits(b) }
func float64frombits(b uint64) float64 { return math.Float64frombits(b) }

// Structured control flow. scf.for becomes `for`, scf.if `if`, scf.while a
// `while 1 { ...; if !cond { break } ... }`. Values carried by iter_args,
// yields and results live in registers; a yield assigns all of them through
// temporaries, because MLIR yields are parallel assignments.

// regVal is a scalar living in register r.
func regVal(sp asm.Span, r string) *val {
	return &val{kind: vScalar, x: &asm.Ref{Span: sp, Name: r}}
}

// carried binds a value that flows through a register: scalars get a register,
// anything else (tiles, views) is passed through as the initial value.
type carried struct {
	reg  string
	init *val
}

func (k *kctx) assign(sp asm.Span, regs []carried, vs []*val) {
	var tmps []string
	for i, c := range regs {
		// Only scalars live in registers: a tile or view yielded where a
		// scalar was expected (a tile allocated inside the branch) has no
		// expression to assign.
		if c.reg == "" || i >= len(vs) || vs[i] == nil || vs[i].kind != vScalar || vs[i].x == nil {
			tmps = append(tmps, "")
			continue
		}
		t := c.reg + "_next"
		k.emit(&asm.Let{Span: sp, Reg: t, X: vs[i].x})
		tmps = append(tmps, t)
	}
	for i, c := range regs {
		if tmps[i] != "" {
			k.emit(&asm.Let{Span: sp, Reg: c.reg, X: &asm.Ref{Span: sp, Name: tmps[i]}})
		}
	}
}

func (k *kctx) carry(sp asm.Span, hint string, init *val) carried {
	if init == nil || init.kind != vScalar || init.isF {
		return carried{init: init}
	}
	r := k.reg(hint)
	k.emit(&asm.Let{Span: sp, Reg: r, X: init.x})
	return carried{reg: r, init: init}
}

func (c carried) value(sp asm.Span) *val {
	if c.reg == "" {
		if c.init == nil {
			return &val{}
		}
		return c.init
	}
	return regVal(sp, c.reg)
}

// yieldVals returns the operands of the block's terminator if it is name.
func (k *kctx) terminator(r *Region, name string) (*Op, []*val) {
	if r == nil || len(r.Blocks) == 0 {
		return nil, nil
	}
	b := r.Blocks[len(r.Blocks)-1]
	if len(b.Ops) == 0 {
		return nil, nil
	}
	t := b.Ops[len(b.Ops)-1]
	if t.Name != name {
		return nil, nil
	}
	return t, k.valueList(t.Toks)
}

// valueList reads `%a, %b : T, T` (or `(%c) %a, %b : ...`) into values.
func (k *kctx) valueList(ts []Tok) []*val {
	body, _, _ := cutTop(ts, ":")
	var out []*val
	for _, t := range body {
		if t.Kind == KValue {
			out = append(out, k.use(t))
		}
	}
	return out
}

// bodyOps lowers a region without its terminator.
func (k *kctx) bodyOps(r *Region, term string) {
	if r == nil {
		return
	}
	for bi, b := range r.Blocks {
		for i, op := range b.Ops {
			if bi == len(r.Blocks)-1 && i == len(b.Ops)-1 && op.Name == term {
				continue
			}
			k.op(op)
		}
	}
}

func (k *kctx) nested(dst *[]asm.Stmt, f func()) {
	save := k.out
	k.out = dst
	f()
	k.out = save
}

func (k *kctx) scf(op *Op) {
	switch op.Name {
	case "scf.for":
		k.scfFor(op)
	case "scf.if":
		k.scfIf(op)
	case "scf.while":
		k.scfWhile(op)
	case "scf.yield", "scf.condition":
		// handled by the enclosing op
	default:
		k.errf(op.NameTok.Span, "unsupported operation %s", op.Name)
	}
}

// scfFor: `scf.for %i = %lb to %ub step %s [iter_args(%a = %x, ...) -> (T)] [: T] { ... }`.
func (k *kctx) scfFor(op *Op) {
	ts := op.Toks
	if len(ts) < 7 || ts[0].Kind != KValue || !ts[1].is("=") || !ts[3].is("to") || !ts[5].is("step") || len(op.Regions) != 1 {
		k.errf(op.Span, "scf.for: expected `%%i = %%lb to %%ub step %%s { ... }`")
		return
	}
	lb, ub, st := k.use(ts[2]), k.use(ts[4]), k.use(ts[6])
	var regs []carried
	if inner, ok := keyGroup(ts, "iter_args"); ok {
		for _, it := range splitTop(inner, ",") {
			if len(it) != 3 || it[0].Kind != KValue || !it[1].is("=") {
				k.errf(spanOf(it), "scf.for: bad iter_arg %s", text(it))
				return
			}
			c := k.carry(op.Span, it[0].Text, k.use(it[2]))
			regs = append(regs, c)
			k.vals[it[0].Text] = c.value(it[0].Span)
		}
	}
	v := sanitize(ts[0].Text)
	k.vals[ts[0].Text] = &val{kind: vScalar, x: &asm.Ref{Span: ts[0].Span, Name: v}}
	f := &asm.For{Span: op.Span, Var: v, From: lb.x, To: ub.x}
	if !(isLit(st) && st.v == 1) {
		f.Step = st.x
	}
	if lb.kind != vScalar || ub.kind != vScalar || st.kind != vScalar {
		k.errf(op.Span, "scf.for bounds must be integers")
		return
	}
	k.nested(&f.Body, func() {
		k.bodyOps(op.Regions[0], "scf.yield")
		if y, vs := k.terminator(op.Regions[0], "scf.yield"); y != nil {
			k.assign(y.Span, regs, vs)
		}
	})
	k.emit(f)
	res := make([]*val, len(regs))
	for i, c := range regs {
		res[i] = c.value(op.Span)
	}
	k.define(op, res...)
}

// scfIf: `scf.if %c [-> (T)] { ... } [else { ... }]`.
func (k *kctx) scfIf(op *Op) {
	ts := op.Toks
	if len(ts) < 1 || ts[0].Kind != KValue || len(op.Regions) == 0 {
		k.errf(op.Span, "scf.if: expected `%%cond { ... }`")
		return
	}
	c := k.use(ts[0])
	if c.kind != vScalar {
		k.errf(ts[0].Span, "scf.if condition must be an integer")
		return
	}
	n := 0
	for _, r := range op.Results {
		n += r.Count
	}
	// Result registers: scalars only; tile results are chosen per branch
	// after both are lowered (tileResult).
	regs := make([]carried, n)
	thenVals := k.peekYield(op.Regions[0])
	for i := range regs {
		if i < len(thenVals) && thenVals[i] != nil && thenVals[i].kind != vScalar {
			regs[i] = carried{init: thenVals[i]}
			continue
		}
		regs[i] = carried{reg: k.reg("if")}
	}
	st := &asm.If{Span: op.Span, Cond: c.x}
	var yielded [2][]*val
	k.nested(&st.Then, func() {
		k.bodyOps(op.Regions[0], "scf.yield")
		if y, vs := k.terminator(op.Regions[0], "scf.yield"); y != nil {
			k.assign(y.Span, regs, vs)
			yielded[0] = vs
		}
	})
	if len(op.Regions) > 1 {
		k.nested(&st.Else, func() {
			k.bodyOps(op.Regions[1], "scf.yield")
			if y, vs := k.terminator(op.Regions[1], "scf.yield"); y != nil {
				k.assign(y.Span, regs, vs)
				yielded[1] = vs
			}
		})
	}
	res := make([]*val, n)
	for i, r := range regs {
		res[i] = r.value(op.Span)
		if t := k.tileResult(op, st, i, yielded); t != nil {
			res[i] = t
		}
	}
	k.emit(st)
	k.define(op, res...)
}

// tileResult is result i of an scf.if when its branches yield tiles: the
// one tile both yield, or, when they yield two tiles of one shape, an
// element of a two-tile alias array (`tile %r[2] @ lo step hi-lo`) whose
// index register each branch sets, so every use after the if touches the
// tile its path yielded. Other pairs (layouts, shapes or addresses that
// differ in kind) keep the then-branch tile (documented).
func (k *kctx) tileResult(op *Op, st *asm.If, i int, yielded [2][]*val) *val {
	at := func(b int) *tileVal {
		if i < len(yielded[b]) && yielded[b][i] != nil && yielded[b][i].kind == vTile {
			return yielded[b][i].tile
		}
		return nil
	}
	a, b := at(0), at(1)
	if a == nil {
		return nil
	}
	same := func(x, y *tileVal) bool { return x.name == y.name && x.index == nil && y.index == nil }
	if b == nil || same(a, b) {
		return &val{kind: vTile, tile: a}
	}
	if a.index != nil || b.index != nil || !a.known || !b.known || !a.nd || !b.nd || a.skip || b.skip ||
		a.loc != b.loc || a.dtype != b.dtype || a.rows != b.rows || a.cols != b.cols || a.vrows != b.vrows ||
		a.vcols != b.vcols || a.addrV == b.addrV || (a.addrV-b.addrV)%32 != 0 {
		return &val{kind: vTile, tile: a}
	}
	lo, hi := min(a.addrV, b.addrV), max(a.addrV, b.addrV)
	name := "if"
	if i < len(op.Results) {
		name = op.Results[i].Name
	}
	sp := op.Span
	ti := typeInfo{loc: a.loc, elem: a.dtype, dims: []int64{a.rows, a.cols}, vrow: a.vrows, vcol: a.vcols}
	t := k.declTile(sp, name, ti, lit(sp, lo), nil, nil)
	if t.kind != vTile {
		return nil
	}
	if d, ok := (*k.out)[len(*k.out)-1].(*asm.TileDecl); ok && d.Name == t.tile.name {
		d.Count, d.Step = num(sp, 2), num(sp, hi-lo)
	}
	r := k.reg(name)
	pick := func(x *tileVal) asm.Expr {
		if x.addrV == lo {
			return num(sp, 0)
		}
		return num(sp, 1)
	}
	st.Then = append(st.Then, &asm.Let{Span: sp, Reg: r, X: pick(a)})
	st.Else = append(st.Else, &asm.Let{Span: sp, Reg: r, X: pick(b)})
	t.tile.index = &asm.Ref{Span: sp, Name: r}
	return t
}

// scfWhile: `scf.while (%a = %x, ...) : (T) -> (T) { before; scf.condition(%c) %v... } do { ^bb0(%y: T): after; scf.yield ... }`.
func (k *kctx) scfWhile(op *Op) {
	ts := op.Toks
	if len(op.Regions) != 2 {
		k.errf(op.Span, "scf.while needs a before and an after region")
		return
	}
	inner, _, ok := group(ts, 0)
	if !ok && (len(ts) == 0 || !ts[0].is(":")) { // `scf.while : () -> ()` carries nothing
		k.errf(op.Span, "scf.while: expected `(%%a = %%init, ...)`")
		return
	}
	var regs []carried
	for _, it := range splitTop(inner, ",") {
		if len(it) == 0 {
			continue
		}
		if len(it) != 3 || it[0].Kind != KValue || !it[1].is("=") {
			k.errf(spanOf(it), "scf.while: bad argument %s", text(it))
			return
		}
		c := k.carry(op.Span, it[0].Text, k.use(it[2]))
		regs = append(regs, c)
		k.vals[it[0].Text] = c.value(it[0].Span)
	}
	before, after := op.Regions[0], op.Regions[1]
	// The condition's forwarded values become the loop's results and the after
	// block's arguments; they get registers too.
	w := &asm.While{Span: op.Span, Cond: num(op.Span, 1)}
	var fwd []carried
	k.nested(&w.Body, func() {
		k.bodyOps(before, "scf.condition")
		cop, _ := k.terminator(before, "scf.condition")
		if cop == nil {
			k.errf(op.Span, "scf.while: the before region must end in scf.condition")
			return
		}
		cond, _, ok := group(cop.Toks, 0)
		if !ok || len(cond) != 1 {
			k.errf(cop.Span, "scf.condition: expected `(%%cond)`")
			return
		}
		cv := k.use(cond[0])
		_, next, _ := group(cop.Toks, 0)
		vals := k.valueList(cop.Toks[next:])
		for i, v := range vals {
			c := carried{init: v}
			if v.kind == vScalar && !v.isF {
				c.reg = k.reg("while")
				k.emit(&asm.Let{Span: cop.Span, Reg: c.reg, X: v.x})
			}
			fwd = append(fwd, c)
			_ = i
		}
		k.emit(&asm.If{Span: cop.Span, Cond: &asm.Binary{Span: cop.Span, Op: "==", X: paren(cv.x), Y: num(cop.Span, 0)},
			Then: []asm.Stmt{&asm.Break{Span: cop.Span}}})
		if len(after.Blocks) > 0 {
			for i, a := range after.Blocks[0].Args {
				if i < len(fwd) {
					k.vals[a.Name] = fwd[i].value(a.Span)
				}
			}
		}
		k.bodyOps(after, "scf.yield")
		if y, vs := k.terminator(after, "scf.yield"); y != nil {
			k.assign(y.Span, regs, vs)
		}
	})
	k.emit(w)
	res := make([]*val, len(fwd))
	for i, c := range fwd {
		res[i] = c.value(op.Span)
	}
	k.define(op, res...)
}

// peekYield returns the values a region's yield names that are already
// defined (tiles allocated before the if); values defined inside the region
// are nil. It reports nothing: the yield is checked when it is lowered.
func (k *kctx) peekYield(r *Region) []*val {
	if r == nil || len(r.Blocks) == 0 {
		return nil
	}
	b := r.Blocks[len(r.Blocks)-1]
	if len(b.Ops) == 0 || b.Ops[len(b.Ops)-1].Name != "scf.yield" {
		return nil
	}
	body, _, _ := cutTop(b.Ops[len(b.Ops)-1].Toks, ":")
	var out []*val
	for _, t := range body {
		if t.Kind == KValue {
			out = append(out, k.vals[t.Text])
		}
	}
	return out
}
