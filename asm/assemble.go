package asm

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// Frontend supplies what the assembler cannot do itself: asm must not import the
// parser (the parser imports asm), and tests read files from memory.
type Frontend struct {
	ParseFile func(name string, src []byte) (*File, ErrorList)
	ParseExpr func(src string) (Expr, error)
	ReadFile  func(name string) ([]byte, error)
}

// Define is a command-line override `-D NAME=VALUE`. VALUE is an expression over
// the program's constants, so `-D MODE=pipelined` works when the program declares
// `const pipelined = 2`.
type Define struct{ Name, Value string }

// cmdLine is the pseudo-file of -D diagnostics.
const cmdLine = "<command line>"

type constEntry struct {
	decl       *Const
	override   Expr
	state      uint8 // 0 unevaluated, 1 evaluating, 2 done
	val        int64
	ok         bool
	overridden bool
}

// floatConst reports whether c is a floating-point constant (its value, or
// its -D override, is a float literal such as 0.5 or -1e-3) and its value.
// Float constants serve float operands and golden expressions; an integer
// expression that names one is an error.
func (c *constEntry) floatConst() (float64, bool) {
	x := c.decl.Val
	if c.override != nil {
		x = c.override
	}
	return floatLit(x)
}

type assembler struct {
	fe   Frontend
	errs ErrorList
	obj  *Object

	decls      []Decl
	loaded     map[string]bool
	consts     map[string]*constEntry
	constOrder []string
	tensors    map[string]*TensorInfo
	kernels    map[string]*KernelInfo
	labels     map[string]bool
	launch     *Launch
	// constDepth is how many constants' values are being computed, each
	// needing the next (constVal recurses through the expression).
	constDepth int
}

// MaxConstDepth bounds a chain of constants each defined by the next (`const
// A0 = A1`, `const A1 = A2`, ...): each link is a few KiB of Go stack, so
// 45,000 of them in a 1 MiB file took 450 MB and a million (under a larger
// --max-file-size) ran into Go's fatal stack limit. Programs chain a few;
// PTOAS MLIR binds a constant per two dozen nodes of a static value.
const MaxConstDepth = 1000

// Assemble loads main and its includes, evaluates constants with the overrides,
// resolves tensors and kernels, places tiles and compiles every statement. It
// reports every problem it finds; the Object is nil when there were errors.
func Assemble(fe Frontend, main string, defines []Define) (*Object, ErrorList) {
	a := &assembler{
		fe:      fe,
		obj:     &Object{Main: main, Sources: Sources{}},
		loaded:  map[string]bool{},
		consts:  map[string]*constEntry{},
		tensors: map[string]*TensorInfo{},
		kernels: map[string]*KernelInfo{},
		labels:  map[string]bool{},
	}
	if fe.ParseFile == nil || fe.ReadFile == nil {
		a.errs.Add(Span{Pos: Pos{File: main}}, "assembler frontend has no parser or file reader")
		return nil, a.errs
	}
	a.load(main, nil, Span{Pos: Pos{File: main}})
	a.collect()
	a.applyDefines(defines)
	for _, n := range a.constOrder {
		c := a.consts[n]
		if f, isF := c.floatConst(); isF {
			a.obj.Consts = append(a.obj.Consts, ConstVal{Name: n, IsFloat: true, F: f, Overridden: c.overridden})
			continue
		}
		v, ok := a.constVal(c, c.decl.Span)
		if ok {
			a.obj.Consts = append(a.obj.Consts, ConstVal{Name: n, Val: v, Overridden: c.overridden})
		}
	}
	for _, d := range a.decls {
		if t, ok := d.(*Tensor); ok {
			a.tensor(t)
		}
	}
	// Kernels are registered before any is compiled so launch and expect checks
	// see them all; labels are per kernel but expectations name them globally.
	for _, d := range a.decls {
		if k, ok := d.(*Kernel); ok {
			if prev := a.kernels[k.Name]; prev != nil {
				a.errs.Add(k.Span, "kernel %s redeclared", k.Name).Note(prev.Decl.Span, "previous declaration")
				continue
			}
			ki := &KernelInfo{Decl: k, Name: k.Name}
			a.kernels[k.Name] = ki
			a.obj.Kernels = append(a.obj.Kernels, ki)
		}
	}
	for _, ki := range a.obj.Kernels {
		a.kernel(ki)
		placeOps(ki.Body)
	}
	for _, d := range a.decls {
		switch d := d.(type) {
		case *Launch:
			if a.launch != nil {
				a.errs.Add(d.Span, "second launch section").Note(a.launch.Span, "first launch section")
				continue
			}
			a.launch = d
			a.obj.Launch = d
			a.checkLaunch(d)
		case *Expect:
			a.obj.Expects = append(a.obj.Expects, d)
			a.checkExpect(d)
		}
	}
	a.errs.RemoveMultiples()
	if a.errs.HasErrors() {
		return nil, a.errs
	}
	return a.obj, a.errs
}

// load parses one file and, recursively, its includes, appending declarations in
// source order with every include expanded in place.
func (a *assembler) load(name string, stack []string, from Span) {
	for i, s := range stack {
		if s == name {
			cycle := append(append([]string(nil), stack[i:]...), name)
			a.errs.Add(from, "include cycle: %s", strings.Join(cycle, " -> "))
			return
		}
	}
	if a.loaded[name] {
		return // diamond includes merge once
	}
	src, err := a.fe.ReadFile(name)
	if err != nil {
		var le *FileLimitError
		if errors.As(err, &le) {
			a.errs.Add(from, "%v", err) // names the file, the limit and its flag
		} else {
			a.errs.Add(from, "cannot read %s: %v", name, err)
		}
		return
	}
	a.loaded[name] = true
	a.obj.Sources[name] = src
	f, perrs := a.fe.ParseFile(name, src)
	a.errs = append(a.errs, perrs...)
	if f == nil {
		return
	}
	a.obj.Files = append(a.obj.Files, f)
	stack = append(stack, name)
	for _, d := range f.Decls {
		if inc, ok := d.(*Include); ok {
			p := inc.Path
			if !filepath.IsAbs(p) {
				p = filepath.Join(filepath.Dir(name), p)
			}
			a.load(p, stack, inc.Span)
			continue
		}
		if d != nil {
			a.decls = append(a.decls, d)
		}
	}
}

// collect registers constants (evaluated lazily so that -D values and forward
// references resolve in dependency order).
func (a *assembler) collect() {
	for _, d := range a.decls {
		c, ok := d.(*Const)
		if !ok {
			continue
		}
		if prev := a.consts[c.Name]; prev != nil {
			a.errs.Add(c.Span, "constant %s redeclared", c.Name).Note(prev.decl.Span, "previous declaration")
			continue
		}
		if builtinFn(c.Name) != nil {
			a.errs.Add(c.Span, "%s is a builtin and cannot be redeclared", c.Name)
			continue
		}
		a.consts[c.Name] = &constEntry{decl: c}
		a.constOrder = append(a.constOrder, c.Name)
	}
}

func (a *assembler) applyDefines(defs []Define) {
	for _, d := range defs {
		sp := Span{Pos: Pos{File: cmdLine}}
		c := a.consts[d.Name]
		if c == nil {
			diag := a.errs.Add(sp, "-D %s: the program declares no constant %s", d.Name, d.Name)
			if s := a.suggestConst(d.Name); s != "" {
				diag.Msg += " (did you mean " + s + "?)"
			}
			continue
		}
		if a.fe.ParseExpr == nil {
			a.errs.Add(sp, "-D %s: no expression parser", d.Name)
			continue
		}
		x, err := a.fe.ParseExpr(d.Value)
		if err != nil || x == nil {
			// Quote the value shortly (it may be megabytes) and the parser's
			// first message without its position in the value.
			msg := fmt.Sprint(err)
			var el ErrorList
			if errors.As(err, &el) && len(el) > 0 {
				msg = el[0].Msg
			}
			v := d.Value
			if len(v) > 40 {
				v = v[:40] + "..."
			}
			a.errs.Add(sp, "-D %s=%s: %s", d.Name, v, msg)
			continue
		}
		c.override, c.overridden = x, true
	}
}

// constVal evaluates a constant on first use; a cycle is an error at use.
func (a *assembler) constVal(c *constEntry, use Span) (int64, bool) {
	switch c.state {
	case 2:
		return c.val, c.ok
	case 1:
		a.errs.Add(use, "constant %s depends on itself", c.decl.Name).Note(c.decl.Span, "declared here")
		c.state, c.ok = 2, false
		return 0, false
	}
	if f, isF := c.floatConst(); isF {
		a.errs.Add(use, "constant %s is the floating-point %v: an integer expression cannot use it (float operands and golden expressions can)", c.decl.Name, f).Note(c.decl.Span, "declared here")
		return 0, false
	}
	if a.constDepth >= MaxConstDepth {
		a.errs.Add(use, "constant %s is at the end of a chain of more than %d constants, each defined by the next (at most %d)", c.decl.Name, MaxConstDepth, MaxConstDepth).Note(c.decl.Span, "declared here")
		c.state, c.ok = 2, false
		return 0, false
	}
	a.constDepth++
	defer func() { a.constDepth-- }()
	c.state = 1
	x := c.decl.Val
	if c.override != nil {
		x = c.override
	}
	sc := &scope{what: "constant"}
	mark := len(a.errs)
	v, ok := a.staticInt(x, sc, "a constant")
	if !ok && c.override != nil {
		// Errors in a -D value have no file position; say which -D it was.
		for _, d := range a.errs[mark:] {
			if d.Span.Pos.File == "" || !d.Span.Pos.IsValid() {
				d.Span = Span{Pos: Pos{File: cmdLine}}
				d.Msg = fmt.Sprintf("-D %s: %s", c.decl.Name, d.Msg)
			}
		}
	}
	if c.state == 2 { // a cycle was reported inside
		return 0, false
	}
	c.state, c.val, c.ok = 2, v, ok
	return v, ok
}

var constScope = &scope{what: "constant"}

// tensor resolves a GM declaration.
func (a *assembler) tensor(t *Tensor) {
	if prev := a.tensors[t.Name]; prev != nil {
		a.errs.Add(t.Span, "@%s redeclared", t.Name).Note(prev.Decl.Span, "previous declaration")
		return
	}
	ti := &TensorInfo{Decl: t, Index: len(a.obj.Tensors), Name: t.Name, Class: t.Class, Attrs: map[string]int64{}}
	ok := true
	if t.Class == TensorSignal {
		ti.DType = I32
		if t.DType != "" {
			if dt, _ := ParseDType(t.DType); dt != I32 {
				a.errs.Add(t.Span, "signal @%s is int32; dtype %s not allowed", t.Name, t.DType)
				ok = false
			}
		}
	} else {
		dt, okd := ParseDType(t.DType)
		if !okd {
			a.errs.Add(t.Span, "unknown dtype %q for @%s", t.DType, t.Name)
			ok = false
		}
		ti.DType = dt
	}
	if len(t.Shape) == 0 {
		a.errs.Add(t.Span, "@%s has no shape", t.Name)
		ok = false
	}
	elems := int64(1)
	for _, d := range t.Shape {
		v, okv := a.staticInt(d, constScope, "a tensor dimension")
		if !okv {
			ok = false
			ti.Shape = append(ti.Shape, 1)
			continue
		}
		if v <= 0 || v > 1<<40 || elems > (1<<42)/v {
			if v > 0 && v <= 1<<40 {
				// Each dimension is in range; their product is not. Saying
				// the dimension is out of 1..2^40 would contradict itself.
				a.errs.Add(d.NodeSpan(), "@%s has too many elements: dimension %d%s brings it past 2^42 elements", t.Name, v, evaluates(d, v))
			} else {
				a.errs.Add(d.NodeSpan(), "tensor dimension %d out of range%s: dimensions are 1 to 2^40", v, evaluates(d, v))
			}
			ok = false
			// Keep the rank, so indexing @T does not add errors of its own.
			ti.Shape = append(ti.Shape, 1)
			continue
		}
		elems *= v
		ti.Shape = append(ti.Shape, v)
	}
	switch strings.ToLower(t.Layout) {
	case "", "nd":
		ti.Layout = LayoutND
	case "dn":
		ti.Layout = LayoutDN
	case "nz":
		ti.Layout = LayoutNZ
	default:
		a.errs.Add(t.Span, "unknown layout %q (have nd, dn, nz)", t.Layout)
	}
	for _, at := range t.Attrs {
		if t.Class != TensorFIFO || (at.Key != "slots" && at.Key != "id") {
			a.errs.Add(at.Span, "%s @%s takes no attribute %s", t.Class, t.Name, at.Key)
			continue
		}
		if at.Val == nil {
			a.errs.Add(at.Span, "%s needs a value", at.Key)
			continue
		}
		v, okv := a.staticInt(at.Val, constScope, at.Key)
		if !okv {
			continue
		}
		lo, hi := int64(0), int64(NumFFTSIDs-1) // id
		if at.Key == "slots" {
			lo, hi = 1, 8
		}
		if v < lo || v > hi {
			a.errs.Add(at.Val.NodeSpan(), "fifo %s=%d out of range %d..%d%s", at.Key, v, lo, hi, evaluates(at.Val, v))
			continue
		}
		ti.Attrs[at.Key] = v
	}
	if t.Class == TensorFIFO {
		if _, has := ti.Attrs["slots"]; !has {
			ti.Attrs["slots"] = 2
		}
		if _, has := ti.Attrs["id"]; !has {
			ti.Attrs["id"] = 0
		}
	}
	if t.Init != nil {
		a.checkInit(t.Init, len(t.Shape), ti.DType)
	}
	if ok {
		ti.Bytes = elems * int64(ti.DType.Size())
		if t.Class == TensorFIFO {
			ti.Bytes *= ti.Attrs["slots"]
		}
	}
	a.tensors[t.Name] = ti
	a.obj.Tensors = append(a.obj.Tensors, ti)
}

// indexNames are the element-index names of an expr(...) init, outermost first.
var indexNames = []string{"i", "j", "k", "l", "m", "n"}

func (a *assembler) checkInit(in *Init, rank int, dt DType) {
	args := map[string]*Attr{}
	var positional []*Attr
	for _, at := range in.Args {
		if at.Key == "" {
			positional = append(positional, at)
			continue
		}
		if args[at.Key] != nil {
			a.errs.Add(at.Span, "%s= given twice", at.Key)
		}
		args[at.Key] = at
	}
	allow := func(keys ...string) {
		for _, at := range in.Args {
			if at.Key == "" {
				continue
			}
			found := false
			for _, k := range keys {
				found = found || k == at.Key
			}
			if !found {
				a.errs.Add(at.Span, "%s(...) takes no argument %s", in.Kind, at.Key)
			}
		}
	}
	num := func(at *Attr) {
		if at != nil && at.Val != nil {
			if _, ok := a.floatVal(at.Val, constScope); !ok {
				return
			}
		}
	}
	switch in.Kind {
	case "zero", "poison":
		if len(in.Args) > 0 {
			a.errs.Add(in.Span, "%s takes no arguments", in.Kind)
		}
	case "fill":
		allow("value", "v")
		v := args["value"]
		if v == nil {
			v = args["v"]
		}
		if in.X != nil && v == nil && len(positional) == 0 {
			// The parser keeps fill(v)'s value in X, as it does expr(E)'s.
			v = &Attr{Span: in.Span, Val: in.X}
		}
		if len(positional) == 1 && v == nil {
			v = positional[0]
		} else if len(positional) > 0 || v == nil {
			a.errs.Add(in.Span, "fill takes one value: fill(1.5)")
		}
		num(v)
	case "random":
		allow("seed", "lo", "hi", "int")
		for _, at := range positional {
			if n, ok := at.Val.(*Name); !ok || n.Name != "int" {
				a.errs.Add(at.Span, "random(...) takes seed=, lo=, hi= and int")
			}
		}
		if s := args["seed"]; s != nil && s.Val != nil {
			a.staticInt(s.Val, constScope, "seed")
		}
		num(args["lo"])
		num(args["hi"])
		if lo, hi := args["lo"], args["hi"]; lo != nil && hi != nil && lo.Val != nil && hi.Val != nil {
			l, ok1 := a.floatVal(lo.Val, constScope)
			h, ok2 := a.floatVal(hi.Val, constScope)
			if ok1 && ok2 && l > h {
				a.errs.Add(in.Span, "random: lo %g > hi %g", l, h)
			}
		}
	case "file":
		if in.File == "" {
			a.errs.Add(in.Span, "file(...) needs a file name")
		} else if ext := strings.ToLower(filepath.Ext(in.File)); ext != ".npy" && ext != ".bin" {
			a.errs.Add(in.Span, "file %q: want a .npy or .bin file", in.File)
		}
	case "expr":
		if in.X == nil {
			a.errs.Add(in.Span, "expr(...) needs an expression")
			break
		}
		sc := &scope{what: "tensor init", extra: map[string]bool{"rank": true, "nranks": true}}
		for i := 0; i < rank && i < len(indexNames); i++ {
			sc.extra[indexNames[i]] = true
		}
		a.expr(in.X, sc)
	default:
		a.errs.Add(in.Span, "unknown init %q (have zero, poison, fill, random, file, expr)", in.Kind)
	}
	_ = dt
}

// evaluates names the expression behind an out-of-range value, " (X
// evaluates to v)", so that a value derived from -D defines through several
// constants points back at them; empty for a literal.
func evaluates(e Expr, v int64) string {
	if _, lit := e.(*Num); lit {
		return ""
	}
	return fmt.Sprintf(" (%s evaluates to %d)", ExprString(e), v)
}

// checkLaunch validates the host section: kernels exist, mixed launches pair an
// aic kernel with an aiv kernel, expressions use only constants.
func (a *assembler) checkLaunch(l *Launch) {
	sc := &scope{what: "launch"}
	for _, at := range l.Attrs {
		switch at.Key {
		case "ranks":
			if at.Val == nil {
				a.errs.Add(at.Span, "ranks needs a value")
			} else if v, ok := a.staticInt(at.Val, sc, "ranks"); ok && (v < 1 || v > 4096) {
				a.errs.Add(at.Val.NodeSpan(), "ranks=%d out of range 1..4096%s", v, evaluates(at.Val, v))
			}
		case "topology":
			n, ok := at.Val.(*Name)
			if !ok || (n.Name != "mesh" && n.Name != "ring" && n.Name != "switch") {
				a.errs.Add(at.Span, "topology must be mesh, ring or switch")
			}
		default:
			a.errs.Add(at.Span, "launch takes no attribute %s (have ranks, topology)", at.Key)
		}
	}
	a.checkLaunchBody(l.Body, sc)
}

func (a *assembler) checkLaunchBody(body []LaunchStmt, sc *scope) {
	for _, s := range body {
		switch s := s.(type) {
		case *Run:
			for _, st := range s.Streams {
				a.checkStream(st, sc)
			}
		case *Reset:
			if s.Target != nil {
				t := a.tensors[s.Target.Name]
				if t == nil {
					a.errs.Add(s.Target.Span, "undefined tensor @%s", s.Target.Name)
				} else if s.Target.Rank != nil {
					a.expr(s.Target.Rank, sc)
				}
				if s.Init != nil {
					rank := 0
					if t != nil {
						rank = len(t.Shape)
					}
					a.checkInit(s.Init, rank, DTInvalid)
				}
			}
		case *LaunchIf:
			a.expr(s.Cond, sc)
			a.checkLaunchBody(s.Then, sc)
			a.checkLaunchBody(s.Else, sc)
		}
	}
}

func (a *assembler) checkStream(st *Stream, sc *scope) {
	var kinds []CoreKind
	for _, name := range st.Kernels {
		k := a.kernels[name]
		if k == nil {
			d := a.errs.Add(st.Span, "undefined kernel %s", name)
			if s := a.suggestKernel(name); s != "" {
				d.Msg += " (did you mean " + s + "?)"
			}
			return
		}
		kinds = append(kinds, k.Kind)
	}
	if len(kinds) == 2 && !(kinds[0] == CoreAIC && kinds[1] == CoreAIV) {
		a.errs.Add(st.Span, "a mixed launch pairs an aic kernel with an aiv kernel (CUBE + VEC), got %s + %s", kinds[0], kinds[1])
	}
	if len(kinds) > 2 {
		a.errs.Add(st.Span, "a stream runs one kernel or an aic+aiv pair")
	}
	if st.Blocks != nil {
		if v, ok := a.staticInt(st.Blocks, sc, "blocks"); ok && (v < 1 || v > 1<<16) {
			a.errs.Add(st.Blocks.NodeSpan(), "blocks=%d out of range 1..65536%s", v, evaluates(st.Blocks, v))
		}
	}
}

func (a *assembler) suggestKernel(name string) string {
	ks := a.obj.Kernels
	return closest(name, len(ks), func(i int) string { return ks[i].Name })
}

func (a *assembler) checkExpect(e *Expect) {
	switch e.Kind {
	case "output":
		if e.Target != nil {
			a.checkWholeRef(e.Target)
		}
		a.checkGolden(e.Golden)
		for _, t := range []Expr{e.Tol, e.RTol, e.ATol} {
			if t == nil {
				continue
			}
			if v, ok := a.floatVal(t, constScope); ok && !(v >= 0) {
				a.errs.Add(t.NodeSpan(), "a tolerance is ≥ 0, got %g", v)
			}
		}
		if e.Tol != nil && (e.RTol != nil || e.ATol != nil) {
			// Two bounds on one check would leave the reader guessing which
			// one decided it.
			a.errs.Add(e.Tol.NodeSpan(), "tol and rtol/atol do not mix: tol T is T·max(1, |want|), rtol R atol A is A + R·|want|")
		}
	case "finding":
		for _, s := range e.Sites {
			switch s := s.(type) {
			case *Name:
				if !a.labels[s.Name] {
					a.errs.Add(s.Span, "undefined label %s", s.Name)
				}
			case *Num:
				if s.IsFloat || s.Int < 1 {
					a.errs.Add(s.Span, "a finding site is a label or a line number")
				}
			default:
				a.errs.Add(s.NodeSpan(), "a finding site is a label or a line number")
			}
		}
		if e.Count != nil {
			a.staticInt(e.Count, constScope, "count")
		}
	case "cycles":
		if e.Cycles != nil {
			a.staticInt(e.Cycles, constScope, "cycles")
		}
	}
}

func (a *assembler) checkWholeRef(g *GMRef) {
	t := a.tensors[g.Name]
	if t == nil {
		a.errs.Add(g.Span, "undefined tensor @%s", g.Name)
		return
	}
	if g.Rank != nil {
		a.expr(g.Rank, constScope)
	}
}

func (a *assembler) checkGolden(x Expr) {
	switch x := x.(type) {
	case *GMRef:
		a.checkWholeRef(x)
	case *Call:
		f, ok := LookupGoldenFunc(x.Fn)
		if !ok {
			d := a.errs.Add(x.Span, "unknown golden function %s", x.Fn)
			if s := closest(x.Fn, len(goldenFuncs), func(i int) string { return goldenFuncs[i].Name }); s != "" {
				d.Msg += " (did you mean " + s + "?)"
			}
			for _, arg := range x.Args {
				a.checkGolden(arg)
			}
			return
		}
		if msg := f.CheckArity(len(x.Args)); msg != "" {
			a.errs.Add(x.Span, "%s", msg)
		}
		for i, arg := range x.Args {
			kind := GArray
			if i < len(f.Args) {
				kind = f.Args[i]
			}
			switch kind {
			case GArray:
				a.checkGolden(arg)
			case GInt:
				a.staticInt(arg, constScope, x.Fn+" argument")
			case GDType:
				n, ok := arg.(*Name)
				if !ok {
					a.errs.Add(arg.NodeSpan(), "%s wants a dtype word here (f16, bf16, f32, i8, …)", x.Fn)
				} else if _, ok := ParseDType(n.Name); !ok {
					a.errs.Add(n.Span, "unknown dtype %s in %s (f16, bf16, f32, i8, …)", n.Name, x.Fn)
				}
			case GRound:
				// The rounding modes are the data path's (memory.ParseRoundMode),
				// checked when the run evaluates the check.
				if _, ok := arg.(*Name); !ok {
					a.errs.Add(arg.NodeSpan(), "%s wants a rounding-mode word here (rint round floor ceil trunc odd)", x.Fn)
				}
			case GString:
				if _, ok := arg.(*Str); !ok {
					a.errs.Add(arg.NodeSpan(), "%s takes a string: %s", x.Fn, f.Sig)
				}
			}
		}
	case *Paren:
		a.checkGolden(x.X)
	case *Unary:
		a.checkGolden(x.X)
	case *Binary:
		a.checkGolden(x.X)
		a.checkGolden(x.Y)
	case *Name:
		// Anywhere else a name is a constant: caught here, not when the run
		// evaluates the check.
		if a.consts[x.Name] == nil {
			d := a.errs.Add(x.Span, "undefined: %s in a golden expression (golden expressions read tensors and constants)", x.Name)
			if s := a.suggestConst(x.Name); s != "" {
				d.Msg += " (did you mean " + s + "?)"
			}
		}
	}
}
