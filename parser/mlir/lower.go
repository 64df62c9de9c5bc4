package mlir

import (
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/parser"
)

// ParseFile parses a PTOAS .pto file and lowers it to a PTO-AS syntax tree. It
// has the signature of asm.Frontend.ParseFile. Spans in the tree point into the
// MLIR source.
func ParseFile(name string, src []byte) (*asm.File, asm.ErrorList) {
	return ParseFileWith(name, src, Options{})
}

// Options are what ptoas takes on its command line and ptoasm must know to
// read a file the same way.
type Options struct {
	// Arch is ptoas's --pto-arch: "a3" (A2/A3, "a2" and "a2a3" mean the
	// same) or "a5". Empty means the module's pto.target_arch attribute,
	// else a3, as ptoas decides (tools/ptoas/ptoas.cpp). ptoasm models
	// A2/A3 only, so an A5 file is rejected with an error that says so.
	Arch string
}

// ParseFileWith is ParseFile for a given target architecture.
func ParseFileWith(name string, src []byte, opt Options) (*asm.File, asm.ErrorList) {
	m, errs := Parse(name, src)
	if errs.HasErrors() {
		return nil, errs
	}
	l := newLowerer(name, src)
	l.opt = opt
	f := l.lower(m)
	l.errs.RemoveMultiples()
	if l.errs.HasErrors() {
		return nil, l.errs
	}
	return f, l.errs
}

var mlirHint = regexp.MustCompile(`(?m)^\s*(module\b|func\.func\b)|\bpto\.[a-z_.0-9]+\s+ins\(|\bouts\(`)

// IsMLIR reports whether src is MLIR text rather than PTO-AS: it has a
// `module` or `func.func` line, or a DPS op `pto.x ins(` / `outs(`. PTO-AS has
// none of these (its kernels start with `kernel`, operands are never in ins()).
func IsMLIR(src []byte) bool { return mlirHint.Match(src) }

// Defaults the lowering needs where MLIR leaves a value to the host.
const (
	// DefaultScalarArg is the value of an integer kernel argument (a shape, a
	// loop count) unless -D ARG=value overrides it.
	DefaultScalarArg = 16
	// DefaultFloatArg stands for a floating-point kernel argument.
	DefaultFloatArg = 1.0
	// blocksConst names the launch's block count (-D BLOCKS=n): 1, or 2
	// when a kernel reads its block index (get_block_idx), so that lint
	// sees two blocks' accesses side by side.
	blocksConst = "BLOCKS"
)

type vkind uint8

const (
	vOpaque vkind = iota
	vScalar
	vTile
	vView
	vFifo
	vEvents
)

// val is what an SSA value lowers to.
type val struct {
	kind vkind
	// scalars
	x      asm.Expr
	static bool // uses only constants and literals (valid in tile declarations)
	known  bool // v is the value under the default constants
	v      int64
	isF    bool
	f      float64
	// tiles
	tile *tileVal
	// views of GM
	view *viewVal
	// fifos
	fifo string
	// eventid arrays: register name prefix
	events string
	nev    int
	// reserved: a local address from pto.reserve_buffer or
	// pto.import_reserved_buffer (pipes place popped tiles in its slots)
	reserved bool
}

type tileVal struct {
	name  string // without %
	loc   string
	dtype string
	rows  int64
	cols  int64
	vrows int64
	vcols int64
	skip  bool // not declared in this kernel (a section of the other core)
	addr  asm.Expr
	addrV int64
	known bool
	nd    bool // row-major, unboxed: a block of whole rows is contiguous
	// bl, sl are the type's blayout and slayout as written ("" if absent)
	bl, sl string
	// validStatic: the type gives the valid shape (no `?`)
	validStatic bool
	// vrReg, vcReg hold a valid region known only at run time (a
	// set_validshape target, or `?` dimensions given by computed
	// operands): the tile is declared `valid [%vrReg, %vcReg]`.
	vrReg, vcReg string
	// index, when set, makes the tile an element of the array name: an
	// alias at a computed address (a subset at a computed offset, an
	// scf.if's tile result) is the element index of an array of aliases.
	index asm.Expr
}

// viewVal is a window of a GM tensor: its origin as a linear element offset
// (lin) and, for a natural view, as an index into the tensor's dimensions.
type viewVal struct {
	tensor  *tensorDecl
	shape   []*val
	strides []*val
	lin     *val
	idx     []*val
	natural bool   // same dims and strides as the tensor declaration
	layout  string // the make_tensor_view's layout attribute ("nd", "dn", "nz" or "")
}

type tensorDecl struct {
	name   string
	dtype  string
	dims   []asm.Expr
	dimV   []int64
	shaped bool // dims came from a view (otherwise a placeholder)
	// minDim (natural views) and minExt (elements, any view) are what the
	// partitions reach with offsets 0: a tensor sized by kernel arguments is
	// grown to hold them, so the default argument values stay in bounds.
	minDim []int64
	minExt int64
	// refs are every GM reference made to the tensor, with the linear
	// offset of its first element. When any view of the tensor is not
	// natural (another shape, strides, addptr), the tensor is declared flat
	// and every reference is rewritten to its linear offset.
	refs []gmUse
	flat bool
	// scalars are the load_scalar/store_scalar references, indexed once
	// the tensor's dimensions are final (tensorDecl).
	scalars []gmUse
	// fill is the argument's `ptoasm.fill` attribute: the value the host
	// fills it with (fmt --to mlir prints it for a tensor whose data steer
	// the kernel, read by ld); nil: seeded random data.
	fill asm.Expr
	// fifoBuf: a pipe's GM slot buffer (the FIFO is named after it)
	fifoBuf bool
	layout  string
	span    asm.Span
}

type gmUse struct {
	g   *asm.GMRef
	lin *val
	// geo is how the transfer's window lies in memory; rows × cols is the
	// window (the tile's valid shape).
	geo        refGeo
	rows, cols int64
}

type funcInfo struct {
	op     *Op
	name   string
	args   []Arg
	kind   string // aic, aiv, unified, or "" for an entry wrapper
	body   *Region
	entry  bool // a wrapper that launches the kernels it calls (not a kernel)
	callee bool
	// ptoEntry is PTOAS's `pto.entry` attribute: the host's entry point. It
	// is a kernel like any other unless it only calls kernels.
	ptoEntry bool
	// helper is a function that returns values: not a kernel; a call from
	// a kernel inlines it.
	helper  bool
	results asm.Span // the `-> T` of a helper
	mixed   bool
	argVals []*val // bound by an entry wrapper's call
}

type lowerer struct {
	file string
	errs asm.ErrorList
	opt  Options
	// readsBlock: some kernel reads its block index, so the launch has two
	// blocks and lint checks one neighbour pair (-D BLOCKS=n for more)
	readsBlock bool
	// bools are the i1 kernel arguments, each a one-element GM tensor
	bools    []string
	boolSpan map[string]asm.Span
	consts   []*asm.Const
	constOK  map[string]bool
	tensors  []*tensorDecl
	byName   map[string]*tensorDecl
	fifos    []*asm.Tensor
	// fifoSpecs and fifoDir are each FIFO's slots, flag base and direction
	// as its pipe initialisation gave them; frontFifo is the FIFO of each
	// direction the frontend ops use.
	// offsetArgs are the integer arguments whose default is 0 (they flow
	// into no size); one that first serves as a view's stride defaults to
	// the dense stride instead (kctx.strideDefaults)
	offsetArgs map[string]bool
	fifoSpecs  map[string]fifoSpec
	fifoDir    map[string]int64
	frontFifo  map[int64]string
	kernels    []*asm.Kernel
	runs       []*asm.Run
	funcs      map[string]*funcInfo
	order      []*funcInfo
	used       map[string]bool // global names (consts, tensors)
	// plans are PlanMemory's placements, per function body (planmem.go)
	plans map[*Region]*memPlan
}

func newLowerer(name string, src []byte) *lowerer {
	return &lowerer{file: name, constOK: map[string]bool{}, byName: map[string]*tensorDecl{}, funcs: map[string]*funcInfo{}, used: map[string]bool{},
		fifoSpecs: map[string]fifoSpec{}, offsetArgs: map[string]bool{}, fifoDir: map[string]int64{}, frontFifo: map[int64]string{}, plans: map[*Region]*memPlan{}}
}

func (l *lowerer) errf(sp asm.Span, format string, args ...any) {
	l.errs.Add(sp, format, args...)
}

// lower walks the module: functions become kernels, kernel arguments GM tensors
// or constants, and a launch section starts them.
func (l *lowerer) lower(m *Module) *asm.File {
	f := &asm.File{Name: l.file}
	if !l.checkArch(m) {
		return f
	}
	var funcs []*Op
	var walk func(ops []*Op)
	walk = func(ops []*Op) {
		for _, op := range ops {
			switch op.Name {
			case "module", "builtin.module":
				for _, r := range op.Regions {
					for _, b := range r.Blocks {
						walk(b.Ops)
					}
				}
			case "func.func":
				funcs = append(funcs, op)
			default:
				l.errf(op.NameTok.Span, "unexpected %s at module level", op.Name)
			}
		}
	}
	walk(m.Ops)
	for _, op := range funcs {
		fi := l.funcHeader(op)
		if fi == nil {
			continue
		}
		if prev := l.funcs[fi.name]; prev != nil {
			l.errf(op.Span, "function @%s redefined", fi.name)
			continue
		}
		l.funcs[fi.name] = fi
		l.order = append(l.order, fi)
		l.checkNames(fi)
	}
	if l.errs.HasErrors() {
		return f
	}
	l.classify()
	if l.errs.HasErrors() {
		return f
	}
	var aics, aivs []*funcInfo
	for _, fi := range l.order {
		if !fi.isKernel() {
			continue
		}
		switch fi.kind {
		case "aic":
			aics = append(aics, fi)
		case "aiv":
			aivs = append(aivs, fi)
		}
	}
	// One cube and one vector kernel in a module run as a mixed launch: the
	// TPUSH/TPOP and cross-core flag tests pair them that way.
	if len(aics) >= 1 && len(aivs) >= 1 {
		aics[0].mixed, aivs[0].mixed = true, true
	}
	for _, fi := range l.order {
		if !fi.isKernel() {
			continue
		}
		if fi.kind == "split" {
			c := l.kernel(fi, "aic", "cube", fi.name+"_aic", true)
			v := l.kernel(fi, "aiv", "vector", fi.name+"_aiv", true)
			l.runs = append(l.runs, l.run(fi.op.Span, c.Name+"+"+v.Name))
			continue
		}
		k := l.kernel(fi, fi.kind, "", sanitize(fi.name), fi.mixed)
		if fi.mixed && fi == aivs[0] {
			continue
		}
		if fi.mixed && fi == aics[0] {
			l.runs = append(l.runs, l.run(fi.op.Span, k.Name+"+"+sanitize(aivs[0].name)))
			continue
		}
		l.runs = append(l.runs, l.run(fi.op.Span, k.Name))
	}
	for _, c := range l.consts {
		if c.Name == blocksConst && l.readsBlock {
			c.Val = num(c.Span, 2)
		}
		f.Decls = append(f.Decls, c)
	}
	for i, t := range l.tensors {
		if t.fifoBuf && len(t.refs) == 0 {
			continue // a FIFO's slot buffer: the fifo declaration is it
		}
		for _, d := range l.tensorDecls(t, i) {
			f.Decls = append(f.Decls, d)
		}
	}
	for _, n := range l.bools {
		sp := l.boolSpan[n]
		f.Decls = append(f.Decls, &asm.Tensor{Span: sp, Class: asm.TensorGM, Name: n, DType: "i32",
			Shape: []asm.Expr{num(sp, 1)}, Init: &asm.Init{Span: sp, Kind: "zero"}})
	}
	for _, t := range l.fifos {
		f.Decls = append(f.Decls, t)
	}
	for _, k := range l.kernels {
		f.Decls = append(f.Decls, k)
	}
	if len(l.runs) > 0 {
		sp := l.runs[0].Span
		f.Decls = append(f.Decls, &asm.Launch{Span: sp,
			Attrs: []*asm.Attr{{Span: sp, Key: "ranks", Val: num(sp, 1)}},
			Body:  l.boolRuns(runsAsStmts(l.runs))})
	}
	return f
}

// checkArch rejects a file for A5, ptoas's way of choosing the target: the
// command line's --pto-arch (Options.Arch) wins over the module's
// pto.target_arch attribute, and a3 is the default. A5 kernels have other
// pipes and data paths (acc→vec moves, FP8 cube modes, PIPE_V ordered in
// hardware), so reading one with the A2/A3 model would lint a different
// machine.
func (l *lowerer) checkArch(m *Module) bool {
	p := asm.Pos{File: l.file, Line: 1, Col: 1}
	arch, sp, from := strings.ToLower(l.opt.Arch), asm.Span{Pos: p, End: p}, "--pto-arch="+l.opt.Arch
	if arch == "" {
		for _, op := range m.Ops {
			if op.Name != "module" && op.Name != "builtin.module" {
				continue
			}
			if v, ok := attrDict(op.Toks)["pto.target_arch"]; ok && len(v) == 1 && v[0].Kind == KString {
				arch, sp = strings.ToLower(strings.Trim(v[0].Text, `"`)), v[0].Span
				from = "pto.target_arch = " + v[0].Text
			}
		}
	}
	switch arch {
	case "", "a2", "a3", "a2a3":
		return true
	case "a5":
		l.errf(sp, "this file targets A5 (%s); ptoasm models A2/A3 only (the a2a3 profile); --pto-arch=a3 reads it as an A2/A3 kernel", from)
	default:
		if l.opt.Arch == "" {
			return true // ptoas falls back to a3 on an unknown module arch
		}
		l.errf(sp, "--pto-arch=%s: expected a3 or a5", l.opt.Arch)
	}
	return false
}

// maxBoolArgs bounds the i1 arguments whose every combination is run; with
// more, the launch runs all-false and all-true only.
const maxBoolArgs = 3

// boolArg declares i1 kernel argument n (once) and returns its tensor name.
func (l *lowerer) boolArg(n string, sp asm.Span) string {
	if l.boolSpan == nil {
		l.boolSpan = map[string]asm.Span{}
	}
	if _, ok := l.boolSpan[n]; !ok {
		for l.used[n] {
			n += "_"
		}
		l.used[n] = true
		l.boolSpan[n] = sp
		l.bools = append(l.bools, n)
	}
	return n
}

// boolRuns repeats the launch's runs once per combination of the i1
// arguments' values, the host rewriting each flag between them, so lint
// checks the path behind every value of every flag.
func (l *lowerer) boolRuns(runs []asm.LaunchStmt) []asm.LaunchStmt {
	n := len(l.bools)
	if n == 0 || len(runs) == 0 {
		return runs
	}
	combos := boolCombos(n)
	out := append([]asm.LaunchStmt{}, runs...)
	prev := uint(0)
	for _, c := range combos[1:] {
		for i, b := range l.bools {
			if (c^prev)>>i&1 == 0 {
				continue
			}
			sp := l.boolSpan[b]
			out = append(out, &asm.Reset{Span: sp, Target: &asm.GMRef{Span: sp, Name: b},
				Init: &asm.Init{Span: sp, Kind: "fill", X: num(sp, int64(c>>i&1))}})
		}
		for _, r := range runs {
			rr := *r.(*asm.Run)
			out = append(out, &rr)
		}
		prev = c
	}
	return out
}

// boolCombos are the values of n flags the launch runs, in order (bit i is
// flag i): every combination up to maxBoolArgs flags, else all-false and
// all-true.
func boolCombos(n int) []uint {
	if n > maxBoolArgs {
		return []uint{0, 1<<n - 1}
	}
	var combos []uint
	for c := uint(0); c < 1<<n; c++ {
		combos = append(combos, c)
	}
	return combos
}

func runsAsStmts(rs []*asm.Run) []asm.LaunchStmt {
	out := make([]asm.LaunchStmt, len(rs))
	for i, r := range rs {
		out[i] = r
	}
	return out
}

func (l *lowerer) run(sp asm.Span, kernels string) *asm.Run {
	l.constant(blocksConst, num(sp, 1), sp)
	return &asm.Run{Span: sp, Streams: []*asm.Stream{{Span: sp, Kernels: strings.Split(kernels, "+"),
		Blocks: &asm.Name{Span: sp, Name: blocksConst}}}}
}

// randomInit is a kernel argument's contents: the host fills its inputs, so
// every GM argument starts initialised (seeded per tensor; `run --input`
// replaces it with a file's data).
func randomInit(sp asm.Span, seed int64, dtype string) *asm.Init {
	init := &asm.Init{Span: sp, Kind: "random", Args: []*asm.Attr{
		{Span: sp, Key: "seed", Val: num(sp, seed)},
		{Span: sp, Key: "lo", Val: num(sp, -1)},
		{Span: sp, Key: "hi", Val: num(sp, 1)}}}
	if strings.HasPrefix(dtype, "i") || strings.HasPrefix(dtype, "u") {
		init.Args = append(init.Args, &asm.Attr{Span: sp, Key: "int"})
		init.Args[1].Val = num(sp, 0)
		init.Args[2].Val = num(sp, 3)
	}
	return init
}

// tensorDecls declares tensor t: its own shape when every transfer is a
// window of it, else (t.flat) a 2-D tensor in the layout and pitch of its
// transfers (stridedDecls).
func (l *lowerer) tensorDecls(t *tensorDecl, i int) []*asm.Tensor {
	if t.flat {
		if ds := l.stridedDecls(t, i); ds != nil {
			if len(t.scalars) > 0 {
				l.errf(t.scalars[0].g.Span, "a scalar access of @%s, which strided or rank > 2 views read, is not supported", t.name)
			}
			return ds
		}
	}
	return []*asm.Tensor{l.tensorDecl(t, i)}
}

func (l *lowerer) tensorDecl(t *tensorDecl, i int) *asm.Tensor {
	sp := t.span
	init := randomInit(sp, int64(i+1), t.dtype)
	if t.flat && len(t.dimV) > 1 {
		ds := make([]int64, len(t.dimV))
		for i, d := range t.dimV {
			ds[i] = max(d, 1)
		}
		total := asm.DimProduct(ds) // saturates: a wrapped product is a plausible size
		t.dims, t.dimV, t.minDim = []asm.Expr{num(sp, total)}, []int64{total}, nil
	}
	if t.flat {
		for _, u := range t.refs {
			u.g.Index = []asm.Expr{u.lin.x}
		}
	}
	dims := append([]asm.Expr(nil), t.dims...)
	if len(dims) == 0 {
		dims = []asm.Expr{num(sp, max(t.minExt, 1))}
	}
	grow := func(i int, want int64) {
		if i < len(t.dimV) && t.dimV[i] < want {
			if _, lit := dims[i].(*asm.Num); lit {
				dims[i] = num(sp, want)
			} else {
				dims[i] = &asm.Call{Span: sp, Fn: "max", Args: []asm.Expr{dims[i], num(sp, want)}}
			}
		}
	}
	for i, m := range t.minDim {
		grow(i, m)
	}
	if len(t.dims) > 0 && t.minExt > 0 {
		inner := int64(1)
		for _, d := range t.dimV[1:] {
			inner *= max(d, 1)
		}
		grow(0, (t.minExt+inner-1)/inner)
	}
	for _, u := range t.scalars {
		// the element at linear offset lin, row-major over the dims
		switch len(dims) {
		case 1:
			u.g.Index = []asm.Expr{u.lin.x}
		case 2:
			c := &val{kind: vScalar, x: dims[1]}
			if n, ok := dims[1].(*asm.Num); ok {
				c = lit(sp, n.Int)
			}
			u.g.Index = []asm.Expr{binVal(sp, "/", u.lin, c).x, binVal(sp, "%", u.lin, c).x}
		default:
			l.errf(u.g.Span, "a scalar access of the rank-%d tensor @%s is not supported", len(dims), t.name)
		}
	}
	if t.fill != nil {
		init = &asm.Init{Span: sp, Kind: "fill", X: t.fill}
	}
	return &asm.Tensor{Span: sp, Class: asm.TensorGM, Name: t.name, DType: t.dtype, Shape: dims, Layout: t.layout, Init: init}
}

// constant declares `const name = x` once.
func (l *lowerer) constant(name string, x asm.Expr, sp asm.Span) {
	if l.constOK[name] {
		return
	}
	l.constOK[name] = true
	l.used[name] = true
	l.consts = append(l.consts, &asm.Const{Span: sp, Name: name, Val: x})
}

// funcHeader reads `func.func [private] @name(args) [-> T] [attributes {..}] {body}`.
func (l *lowerer) funcHeader(op *Op) *funcInfo {
	ts := op.Toks
	i := 0
	for i < len(ts) && ts[i].Kind == KIdent && (ts[i].Text == "private" || ts[i].Text == "public") {
		i++
	}
	if i >= len(ts) || ts[i].Kind != KSymbol {
		l.errf(op.NameTok.Span, "func.func needs a @name")
		return nil
	}
	fi := &funcInfo{op: op, name: strings.Trim(strings.TrimPrefix(ts[i].Text, "@"), `"`)}
	inner, next, ok := group(ts, i+1)
	if !ok {
		l.errf(ts[i].Span, "func.func @%s needs an argument list", fi.name)
		return nil
	}
	for _, a := range splitTop(inner, ",") {
		if len(a) == 0 {
			continue
		}
		if a[0].Kind != KValue || len(a) < 3 || !a[1].is(":") {
			l.errf(spanOf(a), "bad argument %s", text(a))
			return nil
		}
		ty := a[2:]
		var attrs []Tok
		if j := indexTok(ty, "{"); j > 0 {
			ty, attrs = ty[:j], ty[j:]
		}
		fi.args = append(fi.args, Arg{Name: a[0].Text, Type: ty, Span: a[0].Span, Attrs: attrs})
	}
	rest := ts[next:]
	attrs := attrDict(rest)
	if kk, ok := attrs["pto.kernel_kind"]; ok {
		for _, w := range words(kk) {
			switch w.Text {
			case "cube":
				fi.kind = "aic"
			case "vector":
				fi.kind = "aiv"
			}
		}
	}
	if _, ok := attrs["pto.entry"]; ok {
		fi.ptoEntry = true
	}
	// `-> ()` returns nothing; any other result list makes a helper.
	if len(rest) > 1 && rest[0].Kind == KArrow && !(len(rest) > 2 && rest[1].is("(") && rest[2].is(")")) {
		fi.helper, fi.results = true, rest[0].Span
	}
	if len(op.Regions) > 0 {
		fi.body = op.Regions[0]
	}
	return fi
}

func indexTok(ts []Tok, s string) int {
	for i, t := range ts {
		if t.Kind == KPunct && t.Text == s {
			return i
		}
	}
	return -1
}

// isKernel reports whether fi is lowered to a kernel of its own: every
// function with a body except entry wrappers and value-returning helpers.
func (fi *funcInfo) isKernel() bool { return !fi.entry && !fi.helper && fi.body != nil }

// calleeName is the function a `func.call @f(...)` op names, or "".
func calleeName(op *Op) string {
	if (op.Name != "func.call" && op.Name != "call") || len(op.Toks) == 0 || op.Toks[0].Kind != KSymbol {
		return ""
	}
	return strings.Trim(strings.TrimPrefix(op.Toks[0].Text, "@"), `"`)
}

// checkCalls rejects what PTOAS rejects about functions: an entry that
// returns values, and recursion (a call cycle), which EmitC cannot emit and
// inlining could not end.
func (l *lowerer) checkCalls() {
	called := map[string]bool{}
	for _, fi := range l.order {
		if fi.body != nil {
			visit(fi.body, func(op *Op) { called[calleeName(op)] = true })
		}
	}
	for _, fi := range l.order {
		// A function nothing calls is an entry (with or without the
		// attribute), so it must not return values either.
		if fi.helper && (fi.ptoEntry || !called[fi.name]) {
			l.errf(fi.results, "PTO entry functions must return void (@%s returns values)", fi.name)
		}
	}
	const (
		unvisited = iota
		active
		done
	)
	state := map[*funcInfo]int{}
	var walk func(fi *funcInfo) bool
	walk = func(fi *funcInfo) bool {
		switch state[fi] {
		case active:
			return false
		case done:
			return true
		}
		state[fi] = active
		ok := true
		if fi.body != nil {
			visit(fi.body, func(op *Op) {
				callee := l.funcs[calleeName(op)]
				if ok && callee != nil && !walk(callee) {
					l.errf(op.Span, "recursive function calls are not supported (@%s calls @%s, which is on its own call chain)", fi.name, callee.name)
					ok = false
				}
			})
		}
		state[fi] = done
		return ok
	}
	for _, fi := range l.order {
		walk(fi)
	}
}

// classify decides each function's core kind: its kernel_kind attribute, its
// sections, or the buffers its tiles live in. A function that calls kernels
// and has no tiles of its own is an entry wrapper (whether or not it carries
// `pto.entry`): its arguments become the GM tensors the callees share. A
// `pto.entry` function with a body of tile ops is a kernel. Calls to helpers
// (functions that return values) do not make a wrapper: the kernel inlines
// them.
func (l *lowerer) classify() {
	l.checkCalls()
	if l.errs.HasErrors() {
		return
	}
	for _, fi := range l.order {
		if fi.body == nil || fi.helper {
			continue
		}
		var cube, vec, sc, sv bool
		calls := false
		visit(fi.body, func(op *Op) {
			switch op.Name {
			case "pto.section.cube":
				sc = true
			case "pto.section.vector":
				sv = true
			case "func.call", "call":
				if callee := l.funcs[calleeName(op)]; callee == nil || !callee.helper {
					calls = true
				}
			}
			if strings.HasPrefix(op.Name, "pto.tmatmul") || strings.HasPrefix(op.Name, "pto.tgemv") {
				cube = true
			}
			if op.Name == "pto.alloc_tile" || op.Name == "memref.alloc" || op.Name == "pto.declare_tile" {
				if ti, ok := parseType(lastType(op.Toks)); ok {
					switch ti.loc {
					case "vec":
						vec = true
					case "mat", "left", "right", "acc", "bias", "scaling":
						cube = true
					}
				}
			}
			switch op.Name {
			case "pto.tpush_to_aiv", "pto.tpop_from_aiv", "pto.tfree_from_aiv", "pto.aic_initialize_pipe":
				cube = true
			case "pto.tpush_to_aic", "pto.tpop_from_aic", "pto.tfree_from_aic", "pto.aiv_initialize_pipe":
				vec = true
			}
		})
		if calls && !cube && !vec {
			fi.entry = true
		}
		if fi.entry {
			continue
		}
		switch {
		case sc && sv:
			fi.kind = "split"
		case sc:
			fi.kind = "aic"
		case sv:
			fi.kind = "aiv"
		case fi.kind != "":
		case cube && vec:
			fi.kind = "unified"
		case cube:
			fi.kind = "aic"
		default:
			fi.kind = "aiv"
		}
	}
	// Entry wrappers bind their callees' arguments to their own.
	for _, fi := range l.order {
		if !fi.entry || fi.body == nil {
			continue
		}
		k := &kctx{l: l, fn: fi, vals: map[string]*val{}}
		k.bindArgs(fi)
		visit(fi.body, func(op *Op) {
			callee := l.funcs[calleeName(op)]
			if callee == nil || callee.entry || callee.helper {
				return
			}
			inner, _, ok := group(op.Toks, 1)
			if !ok {
				return
			}
			callee.callee = true
			callee.argVals = nil
			for _, a := range splitTop(inner, ",") {
				if len(a) == 1 && a[0].Kind == KValue {
					callee.argVals = append(callee.argVals, k.vals[a[0].Text])
				} else {
					callee.argVals = append(callee.argVals, nil)
				}
			}
		})
	}
}

// lastType returns the tokens after the op's last top-level `:` (its type),
// cut before a trailing `->`.
func lastType(ts []Tok) []Tok {
	depth, at := 0, -1
	for j, t := range ts {
		if t.Kind == KPunct {
			switch t.Text {
			case "(", "[", "{", "<":
				depth++
			case ")", "]", "}", ">":
				depth--
			case ":":
				if depth == 0 {
					at = j
				}
			}
		}
	}
	if at < 0 {
		return nil
	}
	out := ts[at+1:]
	if b, _, found := cutTop(out, "->"); found {
		return b
	}
	for j, t := range out {
		if t.Kind == KArrow {
			return out[:j]
		}
	}
	return out
}

// visit calls fn on every op in r, depth first.
func visit(r *Region, fn func(*Op)) {
	for _, b := range r.Blocks {
		for _, op := range b.Ops {
			fn(op)
			for _, rr := range op.Regions {
				visit(rr, fn)
			}
		}
	}
}

var nonIdent = regexp.MustCompile(`[^A-Za-z0-9_]`)

// sanitize makes an MLIR name a PTO-AS identifier.
func sanitize(s string) string {
	s = strings.TrimLeft(s, "%@")
	s = nonIdent.ReplaceAllString(s, "_")
	if s == "" || (s[0] >= '0' && s[0] <= '9') {
		s = "v" + s
	}
	return s
}

func num(sp asm.Span, v int64) *asm.Num {
	return &asm.Num{Span: sp, Text: strconv.FormatInt(v, 10), Int: v}
}

func fnum(sp asm.Span, f float64) *asm.Num {
	t := strconv.FormatFloat(f, 'g', -1, 64)
	if !strings.ContainsAny(t, ".eEn") {
		t += ".0"
	}
	return &asm.Num{Span: sp, Text: t, Float: f, IsFloat: true}
}

func isFloatType(e string) bool {
	return e == "f16" || e == "bf16" || e == "f32" || e == "f64" || strings.HasPrefix(e, "f8")
}

func finite(f float64) float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return f
}

// ParseAny reads a .pto file of either kind, told apart by content (IsMLIR):
// PTOAS MLIR lowered to PTO-AS under opt, else PTO-AS itself.
func ParseAny(name string, src []byte, opt Options) (*asm.File, asm.ErrorList) {
	if IsMLIR(src) {
		return ParseFileWith(name, src, opt)
	}
	return parser.ParseFile(name, src)
}

// Frontend is the assembler's frontend for .pto files of either kind read
// from disk (ParseAny under opt): the corpus tests read PTOAS kernels with it.
func Frontend(opt Options) asm.Frontend {
	return asm.Frontend{
		ParseFile: func(name string, src []byte) (*asm.File, asm.ErrorList) { return ParseAny(name, src, opt) },
		ParseExpr: parser.ParseExpr,
		ReadFile:  os.ReadFile,
	}
}
