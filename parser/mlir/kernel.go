package mlir

import (
	"strconv"
	"strings"

	"github.com/ptoasm/ptoasm/asm"
)

// kctx lowers one function body into one kernel.
type kctx struct {
	l       *lowerer
	fn      *funcInfo
	kind    string // aic, aiv, unified
	section string // "cube"/"vector": lower only that section of a split function
	name    string
	mixed   bool
	vals    map[string]*val
	out     *[]asm.Stmt
	tiles   map[string]bool
	next    [asm.NumSpaces]int64
	nreg    int
	inSec   string // the section being lowered ("" outside sections)
	// ret collects a helper's `return` operands while a call inlines it.
	ret *[]*val
	// manualReserve: the function reserves a buffer with auto = false
	manualReserve bool
	// plan is PlanMemory's placement of the body being lowered (planmem.go);
	// cur is the op being lowered, whose buffer the plan places.
	plan *memPlan
	cur  *Op
	// setValid names the tiles a pto.set_validshape updates: their valid
	// region lives in registers (setValidTargets).
	setValid map[string]bool
	// rings are the slots this kernel's pops of each FIFO land in
	// (slotRing).
	rings map[string]*slotRing
}

// kernel lowers fi into a kernel of the given kind.
func (l *lowerer) kernel(fi *funcInfo, kind, section, name string, mixed bool) *asm.Kernel {
	k := &kctx{l: l, fn: fi, kind: kind, section: section, name: name, mixed: mixed, vals: map[string]*val{}, tiles: map[string]bool{}}
	kd := &asm.Kernel{Span: fi.op.Span, Name: name, Kind: kind, KindSpan: fi.op.NameTok.Span}
	k.out = &kd.Body
	k.manualReserve = manualReserve(fi.body)
	k.plan = l.memPlan(fi.body, fi.op.NameTok.Span)
	// Tiles PlanMemory does not place (declare_tile, tpop results, local
	// memref arguments) go past the planned bytes; a pop through a pipe
	// fed by a reserve_buffer then rebinds its tile to the reserve's slot
	// (slotRing).
	for sp, end := range k.plan.end {
		k.next[sp] = end
	}
	k.setValid = map[string]bool{}
	setValidTargets(fi.body, k.setValid)
	k.bindArgs(fi)
	k.region(fi.body)
	l.kernels = append(l.kernels, kd)
	return kd
}

// bindArgs makes the function's arguments values: pointers and GM memrefs
// become tensors, integers constants (overridable with -D), local memrefs tiles.
func (k *kctx) bindArgs(fi *funcInfo) {
	sizes, bounds := sizeLike(fi.body)
	for i, a := range fi.args {
		if i < len(fi.argVals) && fi.argVals[i] != nil {
			k.vals[a.Name] = fi.argVals[i]
			continue
		}
		ti, ok := parseType(a.Type)
		if !ok {
			if len(a.Type) > 0 && strings.HasPrefix(a.Type[0].Text, "!pto.tile_buf") {
				// PTOAS's TileBufType::parse reads `loc=...` keys or
				// the compact `<loc, RxCxT>`; anything else (the old
				// `<32x64xf32, #pto.address_space<vec>>`) it rejects.
				k.errf(a.Span, "%s: unreadable !pto.tile_buf type; PTOAS takes `loc=..., dtype=..., rows=...` keys or the compact `<loc, RxCxT>` form (TileBufType::parse)", a.Name)
			}
			k.vals[a.Name] = &val{}
			continue
		}
		switch {
		case ti.kind == "ptr" || (ti.kind == "memref" && ti.loc == "gm") || ti.kind == "tensor_view" || ti.kind == "partition_tensor_view":
			td := k.l.tensor(sanitize(a.Name), ti.elem, a.Span)
			if td == nil {
				k.vals[a.Name] = &val{}
				continue
			}
			if f, ok := attrDict(a.Attrs)["ptoasm.fill"]; ok && len(f) > 0 && f[0].Kind == KInt {
				if v, err := strconv.ParseInt(f[0].Text, 0, 64); err == nil {
					td.fill = num(f[0].Span, v)
				}
			}
			v := &val{kind: vView, view: &viewVal{tensor: td, lin: lit(a.Span, 0)}}
			if ti.kind != "ptr" && len(ti.dims) > 0 {
				k.shapeTensor(td, v.view, dimVals(a.Span, ti.dims), nil, "")
				for range ti.dims {
					v.view.idx = append(v.view.idx, lit(a.Span, 0))
				}
			}
			k.vals[a.Name] = v
		case ti.kind == "memref":
			k.vals[a.Name] = k.declTile(a.Span, sanitize(a.Name), ti, nil, nil, nil)
		case ti.kind == "scalar" && isFloatType(ti.elem):
			k.vals[a.Name] = &val{kind: vScalar, isF: true, f: DefaultFloatArg, x: fnum(a.Span, DefaultFloatArg), static: true}
		case ti.kind == "scalar" && ti.elem == "i1":
			// A flag: the host passes either value, so it lives in GM and
			// the launch runs once per value (lowerer.boolRuns); the kernel
			// reads it, and both the run and the static pass (which splits
			// paths on a loaded value) see it as data, not a constant.
			n := k.l.boolArg(sanitize(a.Name), a.Span)
			r := k.reg(a.Name)
			k.emit(&asm.Instr{Span: a.Span, Op: "ld", OpSpan: a.Span, Result: &asm.Ref{Span: a.Span, Name: r},
				Args: []asm.Expr{&asm.GMRef{Span: a.Span, Name: n, Index: []asm.Expr{num(a.Span, 0)}}}})
			k.vals[a.Name] = &val{kind: vScalar, x: &asm.Ref{Span: a.Span, Name: r}}
		case ti.kind == "scalar" && (ti.elem == "index" || strings.HasPrefix(ti.elem, "i")):
			n := sanitize(a.Name)
			def := int64(0)
			if sizes[a.Name] {
				def = DefaultScalarArg
			} else if bounds[a.Name] {
				def = 1
			}
			k.l.constant(n, num(a.Span, def), a.Span)
			k.vals[a.Name] = &val{kind: vScalar, x: &asm.Name{Span: a.Span, Name: n}, static: true, known: true, v: def}
			if def == 0 {
				k.l.offsetArgs[n] = true
			}
		default:
			k.vals[a.Name] = &val{}
		}
	}
}

func dimVals(sp asm.Span, dims []int64) []*val {
	out := make([]*val, len(dims))
	for i, d := range dims {
		if d < 0 {
			d = 1 << 16
		}
		out[i] = &val{kind: vScalar, x: num(sp, d), static: true, known: true, v: d}
	}
	return out
}

// tensor declares (once) the GM tensor of a kernel argument. Arguments of the
// same name and dtype in different functions share one tensor: that is how the
// cube and vector halves of a mixed kernel see the same data.
func (l *lowerer) tensor(name, elem string, sp asm.Span) *tensorDecl {
	dt, ok := dtypeName(elem)
	if !ok {
		l.errf(sp, "GM element type %s is not supported", elem)
		return nil
	}
	if t := l.byName[name]; t != nil {
		if t.dtype == dt {
			return t
		}
		name = name + "_" + dt
		if t := l.byName[name]; t != nil {
			return t
		}
	}
	t := &tensorDecl{name: name, dtype: dt, span: sp}
	l.byName[name] = t
	l.tensors = append(l.tensors, t)
	return t
}

// shapeTensor gives td its shape from the first view made of it. The view is
// natural when its strides are the row-major strides of that shape; indices
// into a natural view are the tensor's own, others are linearised.
func (k *kctx) shapeTensor(td *tensorDecl, v *viewVal, shape, strides []*val, layout string) {
	v.shape, v.strides = shape, strides
	if len(strides) == 0 {
		v.strides = rowMajor(shape)
	}
	if !td.shaped {
		td.shaped = true
		td.layout = layout
		if layout == "dn" || !isRowMajor(shape, v.strides) || len(shape) > 2 {
			// Not expressible as an nd tensor of that shape: a flat tensor
			// covering every element the view can reach.
			// Row-major views of rank > 2 fold into [rows, last dim], the
			// shape tiles see.
			ext := int64(1)
			for i, s := range shape {
				if i < len(v.strides) && s.known && v.strides[i].known && s.v > 0 {
					ext += (s.v - 1) * v.strides[i].v
				}
			}
			ext = max(ext, 1)
			td.layout = ""
			last := shape[len(shape)-1]
			if isRowMajor(shape, v.strides) && last.known && last.v > 0 && ext%last.v == 0 {
				td.dims = []asm.Expr{num(td.span, ext/last.v), num(td.span, last.v)}
				td.dimV = []int64{ext / last.v, last.v}
			} else {
				td.dims = []asm.Expr{num(td.span, ext)}
				td.dimV = []int64{ext}
			}
			v.natural = false
			return
		}
		for _, s := range shape {
			d, dv := s.x, s.v
			if !s.static || !s.known || s.v <= 0 {
				d, dv = num(td.span, 1<<12), 1<<12
			}
			td.dims = append(td.dims, d)
			td.dimV = append(td.dimV, dv)
		}
		v.natural = true
		return
	}
	v.natural = len(shape) == len(td.dimV) && isRowMajor(shape, v.strides)
	for i, s := range shape {
		if v.natural && (!s.known || s.v != td.dimV[i]) {
			v.natural = false
		}
	}
}

func rowMajor(shape []*val) []*val {
	out := make([]*val, len(shape))
	acc := &val{kind: vScalar, x: &asm.Num{Text: "1", Int: 1}, static: true, known: true, v: 1}
	for i := len(shape) - 1; i >= 0; i-- {
		out[i] = acc
		acc = mulVal(acc, shape[i])
	}
	return out
}

func isRowMajor(shape, strides []*val) bool {
	if len(shape) != len(strides) {
		return false
	}
	want := int64(1)
	dense := lit(asm.Span{}, 1)
	for i := len(shape) - 1; i >= 0; i-- {
		// A stride a kernel argument gives is the launch's, whatever its
		// default: unless it is the product of the inner dimensions as
		// written (shape [%n, %n], strides [%n, 1] is dense for every n),
		// the view is strided (views.go keeps the expression).
		if !strides[i].known || strides[i].v != want || symbolic(strides[i]) && asm.ExprString(strides[i].x) != asm.ExprString(dense.x) {
			return false
		}
		if !shape[i].known {
			return i == 0
		}
		want *= shape[i].v
		dense = mulVal(dense, shape[i])
	}
	return true
}

// region lowers a region's ops into the current statement list.
func (k *kctx) region(r *Region) {
	if r == nil {
		return
	}
	for _, b := range r.Blocks {
		for _, op := range b.Ops {
			k.op(op)
		}
	}
}

func (k *kctx) emit(s asm.Stmt) { *k.out = append(*k.out, s) }

func (k *kctx) errf(sp asm.Span, format string, args ...any) { k.l.errf(sp, format, args...) }

// use returns the value of an SSA use token (`%x` or `%x#1`).
func (k *kctx) use(t Tok) *val {
	if t.Kind != KValue {
		k.errf(t.Span, "expected a value, found %s", describe(t))
		return &val{}
	}
	if v := k.vals[t.Text]; v != nil {
		return v
	}
	k.errf(t.Span, "undefined value %s", t.Text)
	return &val{}
}

// useInt is use for a value the lowering computes with as an integer (a
// shape, a stride, an offset or a size, an operand of integer arithmetic,
// an event id): it returns the value only if it is an integer scalar. A
// tile, a view, a float or an opaque value there is an error at the use
// (one use reported as undefined is not reported again), and useInt
// returns nil, since the expressions built from it would have holes (an
// undefined offset once crashed the lowering).
func (k *kctx) useInt(t Tok, what string) *val {
	v := k.use(t)
	if v.kind == vScalar && !v.isF && v.x != nil {
		return v
	}
	if t.Kind == KValue && k.vals[t.Text] != nil {
		k.errf(t.Span, "%s: %s is not an integer", what, t.Text)
	}
	return nil
}

// define binds op's results; a multi-result `%r:2` binds %r#0 and %r#1.
func (k *kctx) define(op *Op, vs ...*val) {
	i := 0
	for _, r := range op.Results {
		for j := 0; j < r.Count; j++ {
			v := &val{}
			if i < len(vs) && vs[i] != nil {
				v = vs[i]
			}
			if r.Count == 1 {
				k.vals[r.Name] = v
			}
			k.vals[r.Name+"#"+strconv.Itoa(j)] = v
			i++
		}
	}
}

func (k *kctx) result(op *Op) (string, asm.Span) {
	if len(op.Results) == 0 {
		return "", op.Span
	}
	return op.Results[0].Name, op.Results[0].Span
}

// reg allocates a fresh scalar register name.
func (k *kctx) reg(hint string) string {
	k.nreg++
	return "r" + strconv.Itoa(k.nreg) + "_" + sanitize(hint)
}

func (k *kctx) instr(op *Op, name string, args ...asm.Expr) *asm.Instr {
	in := &asm.Instr{Span: op.Span, Op: name, OpSpan: op.NameTok.Span, Args: args}
	k.emit(in)
	return in
}

func (k *kctx) note(in *asm.Instr, format string, args ...any) {
	if in != nil {
		in.After = &asm.Comment{Span: in.Span, Text: "// " + sprintf(format, args...)}
	}
}

// op lowers one operation.
func (k *kctx) op(op *Op) {
	k.cur = op
	name := op.Name
	switch {
	case name == "pto.section.cube" || name == "pto.section.vector":
		sec := strings.TrimPrefix(name, "pto.section.")
		if k.section != "" && k.section != sec {
			return
		}
		prev := k.inSec
		k.inSec = sec
		for _, r := range op.Regions {
			k.region(r)
		}
		k.inSec = prev
	case strings.HasPrefix(name, "arith."):
		k.arith(op)
	case strings.HasPrefix(name, "scf."):
		k.scf(op)
	case name == "return" || name == "func.return":
		if k.ret != nil {
			body, _, _ := cutTop(op.Toks, ":")
			for _, t := range body {
				if t.Kind == KValue {
					*k.ret = append(*k.ret, k.use(t))
				}
			}
		}
	case name == "func.call" || name == "call":
		k.call(op)
	case strings.HasPrefix(name, "memref."):
		k.memref(op)
	case op.Generic && name == "pto.tmov":
		k.pto(genericDPS(op))
	case op.Generic:
		k.errf(op.NameTok.Span, "the generic form of %s is not supported", name)
	case strings.HasPrefix(name, "pto."):
		k.pto(op)
	default:
		k.errf(op.NameTok.Span, "unsupported operation %s", name)
	}
}

func sprintf(format string, args ...any) string {
	if len(args) == 0 {
		return format
	}
	return fmtSprintf(format, args...)
}

// sizeLike returns the values that flow, through arith ops, into a size: a
// tensor view's shape, a partition's sizes, a loop bound or step, a valid
// shape (alloc_tile's or set_validshape's). Integer kernel arguments among
// them default to DefaultScalarArg; the others are offsets and default to 0,
// the one value that keeps every access inside tensors sized by the views.
// bounds are the values that flow into the bound of an ordering compare
// (cmpBound) and into no size: a guard `i < n` around a loop's body. Such an
// argument defaults to 1, the least count that runs the guarded body: at 0
// the Qwen3 decode kernels (`block*64 + i < %arg4`) ran nothing and lint
// said "no hazards found"; at DefaultScalarArg a trip past the first read a
// valid column count `min(%arg5 - 64*i, 64)` below 1, since the count and
// the length it was derived from default independently.
func sizeLike(body *Region) (sizes, bounds map[string]bool) {
	sizes, bounds = map[string]bool{}, map[string]bool{}
	if body == nil {
		return sizes, bounds
	}
	add := func(set map[string]bool, ts []Tok) {
		for _, t := range ts {
			if t.Kind == KValue {
				set[t.Text] = true
			}
		}
	}
	var ariths []*Op
	visit(body, func(op *Op) {
		switch {
		case op.Name == "pto.make_tensor_view":
			g, _ := keyGroup(op.Toks, "shape")
			add(sizes, g)
		case op.Name == "pto.partition_view":
			g, _ := keyGroup(op.Toks, "sizes")
			add(sizes, g)
		case op.Name == "pto.alloc_tile":
			for _, kw := range []string{"valid_row", "valid_col"} {
				v, _ := keyValue(op.Toks, kw)
				add(sizes, v)
			}
		case op.Name == "pto.set_validshape":
			// %tile, %rows, %cols : type
			body, _, _ := cutTop(op.Toks, ":")
			if items := splitTop(body, ","); len(items) == 3 {
				add(sizes, items[1])
				add(sizes, items[2])
			}
		case op.Name == "scf.for" && len(op.Toks) >= 7:
			add(sizes, []Tok{op.Toks[4], op.Toks[6]})
		case op.Name == "arith.cmpi" && len(op.Results) == 1:
			add(bounds, cmpBound(op.Toks))
			ariths = append(ariths, op)
		case strings.HasPrefix(op.Name, "arith.") && len(op.Results) == 1:
			ariths = append(ariths, op)
		}
	})
	def := make(map[string][]*Op, len(ariths))
	for _, op := range ariths {
		def[op.Results[0].Name] = append(def[op.Results[0].Name], op)
	}
	flowBack(sizes, def)
	flowBack(bounds, def)
	return sizes, bounds
}

// flowBack adds to set every value the arith ops of def compute a member
// from, transitively (of a subtraction, the minuend). It walks back from
// each value to the ops defining it, each value once: sweeping every op
// until nothing changed took a pass per link of a chain, quadratic (10,000
// chained arith.addi took 15 s).
func flowBack(set map[string]bool, def map[string][]*Op) {
	work := make([]string, 0, len(set))
	for v := range set {
		work = append(work, v)
	}
	seen := map[string]bool{}
	for len(work) > 0 {
		v := work[len(work)-1]
		work = work[:len(work)-1]
		if seen[v] {
			continue
		}
		seen[v] = true
		for _, op := range def[v] {
			body, _, _ := cutTop(op.Toks, ":")
			if op.Name == "arith.subi" {
				// n - off: off is an offset into the extent n, not a size
				if items := splitTop(body, ","); len(items) == 2 {
					body = items[0]
				}
			}
			for _, t := range body {
				if t.Kind == KValue && !set[t.Text] {
					set[t.Text] = true
					work = append(work, t.Text)
				}
			}
		}
	}
}

// cmpBound returns the bound of an ordering comparison, `arith.cmpi slt,
// %i, %n` (%n; %i for sgt/sge): a guard `i < n` is a loop bound by another
// name (the Qwen3 decode kernels guard their body with `block*64 + i <
// %arg4`), and an argument defaulting to 0 there skips the whole body, so
// lint judged a kernel that ran nothing. Equality compares stay offsets.
func cmpBound(ts []Tok) []Tok {
	if len(ts) < 1 {
		return nil
	}
	rest := ts[1:]
	if len(rest) > 0 && rest[0].is(",") {
		rest = rest[1:]
	}
	body, _, _ := cutTop(rest, ":")
	items := splitTop(body, ",")
	if len(items) != 2 {
		return nil
	}
	switch ts[0].Text {
	case "slt", "sle", "ult", "ule":
		return items[1]
	case "sgt", "sge", "ugt", "uge":
		return items[0]
	}
	return nil
}

// genericDPS rewrites `"pto.tmov"(%src, %dst, ...) <{...}> : (...) -> ()` into
// the DPS form `ins(%src, ...) outs(%dst) {...}`: tmov's operand segments are
// (src, dst, fp, preQuant), so the second operand is the destination.
func genericDPS(op *Op) *Op {
	inner, next, ok := group(op.Toks, 0)
	if !ok {
		return op
	}
	var vals []Tok
	for _, it := range splitTop(inner, ",") {
		if len(it) == 1 && it[0].Kind == KValue {
			vals = append(vals, it[0])
		}
	}
	if len(vals) < 2 {
		return op
	}
	p := func(s string, at Tok) Tok { return Tok{Kind: KPunct, Text: s, Span: at.Span} }
	id := func(s string, at Tok) Tok { return Tok{Kind: KIdent, Text: s, Span: at.Span} }
	ts := []Tok{id("ins", vals[0]), p("(", vals[0]), vals[0]}
	for _, v := range vals[2:] {
		ts = append(ts, p(",", v), v)
	}
	ts = append(ts, p(")", vals[0]), id("outs", vals[1]), p("(", vals[1]), vals[1], p(")", vals[1]))
	ts = append(ts, op.Toks[next:]...)
	out := *op
	out.Toks = ts
	out.Generic = false
	return &out
}

// call inlines a helper (a function that returns values) called from a
// kernel: its body is lowered in place with its arguments bound to the
// call's operands, in a scope of its own, and its `return` operands become
// the call's results. Calls of kernels belong in an entry wrapper.
func (k *kctx) call(op *Op) {
	name := calleeName(op)
	callee := k.l.funcs[name]
	switch {
	case name == "":
		k.errf(op.NameTok.Span, "%s: expected @function(args)", op.Name)
		return
	case callee == nil:
		k.errf(op.Toks[0].Span, "call of undefined function @%s", name)
		return
	case !callee.helper || callee.body == nil:
		k.errf(op.NameTok.Span, "func.call of @%s inside a kernel is not supported (only an entry function may call kernels; functions that return values are inlined)", name)
		return
	}
	var args []*val
	if inner, _, ok := group(op.Toks, 1); ok {
		for _, a := range splitTop(inner, ",") {
			if len(a) == 1 && a[0].Kind == KValue {
				args = append(args, k.use(a[0]))
			} else if len(a) > 0 {
				args = append(args, &val{})
			}
		}
	}
	saved, savedRet := k.vals, k.ret
	k.vals = map[string]*val{}
	for i, a := range callee.args {
		k.vals[a.Name] = &val{}
		if i < len(args) {
			k.vals[a.Name] = args[i]
		}
	}
	var rets []*val
	k.ret = &rets
	if k.setValid != nil {
		setValidTargets(callee.body, k.setValid)
	}
	// PlanMemory plans the callee on its own, from address 0.
	savedPlan := k.plan
	k.plan = k.l.memPlan(callee.body, callee.op.NameTok.Span)
	k.region(callee.body)
	k.plan = savedPlan
	k.vals, k.ret = saved, savedRet
	k.define(op, rets...)
}
