package asm

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// kernelScope is what a kernel's statements see while compiling.
type kernelScope struct {
	k      *KernelInfo
	tiles  map[string]*TileInfo
	regs   map[string]int
	labels map[string]Span
	bad    map[*TileInfo]bool // tiles whose declaration had errors: uses stay quiet
	loops  int
	// loopStack is the loops around the statement being assembled,
	// outermost first (COp.Loops). Each loop gets its own slice, shared
	// by the ops directly inside it. arms is the if arms around it (Loop.Arms),
	// ifs counts the kernel's if statements.
	loopStack []*Loop
	arms      []int32
	ifs       int32
	sc        *scope
	// dynValid lists the tiles whose valid region reads registers, compiled
	// after the body (compileDynValid).
	dynValid []*TileInfo
}

func (a *assembler) kernel(ki *KernelInfo) {
	k := ki.Decl
	kind, ok := ParseCoreKind(k.Kind)
	switch {
	case !ok && k.Kind == "":
		// A kernel line cut before its kind (`kernel k`) has no span for
		// the kind: the error goes at the kernel, so it has a position.
		a.errs.Add(k.Span, "kernel %s has no core kind (have aic, aiv, unified)", k.Name)
	case !ok:
		a.errs.Add(k.KindSpan, "unknown core kind %q (have aic, aiv, unified)", k.Kind)
	}
	ki.Kind = kind
	ks := &kernelScope{k: ki, tiles: map[string]*TileInfo{}, regs: map[string]int{}, labels: map[string]Span{}, bad: map[*TileInfo]bool{}}
	ks.sc = &scope{kern: ks, builtins: true, what: "kernel"}
	// Tiles are kernel-scoped declarations wherever they are written.
	// Tiles a view instruction rebinds are noted on the way: an unaddressed
	// one is not placed.
	rebound := map[string]bool{}
	var walk func([]Stmt)
	walk = func(body []Stmt) {
		for _, s := range body {
			switch s := s.(type) {
			case *Instr:
				if name := bindTarget(s); name != "" {
					rebound[name] = true
				}
			case *TileDecl:
				a.declareTile(ks, s)
			case *For:
				walk(s.Body)
			case *If:
				walk(s.Then)
				walk(s.Else)
			case *While:
				walk(s.Body)
			}
		}
	}
	walk(k.Body)
	for _, t := range ki.Tiles {
		if rebound[t.Name] {
			t.Rebound, t.Unplaced = true, t.Decl.Addr == nil
		}
	}
	a.place(ks)
	ki.Body = a.stmts(ks, k.Body)
	a.compileDynValid(ks)
}

// bindTarget is the tile a tassign, tsubview or treshape rebinds ("" for
// any other instruction).
func bindTarget(in *Instr) string {
	info := LookupOp(strings.TrimPrefix(strings.ToLower(in.Op), "pto."))
	if info == nil || !isViewBind(info.Op) {
		return ""
	}
	if ops := in.Operands(); len(ops) > 0 {
		if r, ok := ops[0].(*Ref); ok {
			return r.Name
		}
	}
	return ""
}

// compileDynValid compiles the valid regions that read registers, with
// every register of the kernel in scope: the machine evaluates them when an
// instruction naming the tile issues. A constant part is range-checked here.
func (a *assembler) compileDynValid(ks *kernelScope) {
	for _, t := range ks.dynValid {
		for _, p := range []struct {
			e     Expr
			what  string
			limit int
			v     *int
			x     **CExpr
		}{{t.Decl.VRows, "valid rows", t.Rows, &t.VRows, &t.DynVRows}, {t.Decl.VCols, "valid cols", t.Cols, &t.VCols, &t.DynVCols}} {
			if *p.x == nil {
				continue // this dimension is a constant
			}
			*p.x = nil
			c, ok := a.expr(p.e, ks.sc)
			switch {
			case !ok:
				ks.bad[t] = true
			case c.Const:
				if c.Val < 1 || c.Val > int64(p.limit) {
					a.errs.Add(p.e.NodeSpan(), "%s %d out of range 1..%d", p.what, c.Val, p.limit)
				} else {
					*p.v = int(c.Val)
				}
			default:
				*p.x = &c
			}
		}
	}
}

func (a *assembler) defineReg(ks *kernelScope, name string, sp Span) (int, bool) {
	if t := ks.tiles[name]; t != nil {
		a.errs.Add(sp, "%%%s is a tile, not a register", name).Note(t.Decl.Span, "declared here")
		return 0, false
	}
	if slot, ok := ks.regs[name]; ok {
		return slot, true
	}
	slot := len(ks.k.Regs)
	ks.regs[name] = slot
	ks.k.Regs = append(ks.k.Regs, name)
	return slot, true
}

func (a *assembler) stmts(ks *kernelScope, body []Stmt) []CStmt {
	var out []CStmt
	for _, s := range body {
		switch s := s.(type) {
		case *TileDecl:
		case *Let:
			x, ok := a.expr(s.X, ks.sc)
			slot, okr := a.defineReg(ks, s.Reg, s.Span)
			if ok && okr {
				out = append(out, &CLet{Let: s, Slot: slot, X: x})
			}
		case *For:
			from, ok1 := a.expr(s.From, ks.sc)
			to, ok2 := a.expr(s.To, ks.sc)
			step, ok3 := constExpr(1, nil), true
			if s.Step != nil {
				step, ok3 = a.expr(s.Step, ks.sc)
				if ok3 && step.Const && step.Val <= 0 {
					a.errs.Add(s.Step.NodeSpan(), "for step must be positive, got %d", step.Val)
					ok3 = false
				}
			}
			slot, ok4 := a.defineReg(ks, s.Var, s.Span)
			body := a.loopBody(ks, s, s.Body)
			if ok1 && ok2 && ok3 && ok4 {
				out = append(out, &CFor{For: s, Slot: slot, From: from, To: to, Step: step, Body: body})
			}
		case *If:
			cond, ok := a.expr(s.Cond, ks.sc)
			id := ks.ifs << 2
			if roleCond(s.Cond) {
				id |= armRole
			}
			ks.ifs++
			then := a.armStmts(ks, id, s.Then)
			els := a.armStmts(ks, id|armElse, s.Else)
			if ok {
				out = append(out, &CIf{If: s, Cond: cond, Then: then, Else: els})
			}
		case *While:
			cond, ok := a.expr(s.Cond, ks.sc)
			body := a.loopBody(ks, s, s.Body)
			if ok {
				out = append(out, &CWhile{While: s, Cond: cond, Body: body})
			}
		case *Break:
			if ks.loops == 0 {
				a.errs.Add(s.Span, "break outside a loop")
				continue
			}
			out = append(out, &CBreak{Break: s})
		case *Instr:
			if op := a.instr(ks, s); op != nil {
				out = append(out, op)
			}
		case nil:
		default:
			a.errs.Add(s.NodeSpan(), "unexpected statement")
		}
	}
	return out
}

// roleCond says whether an if's condition splits the kernel into roles: it
// reads rank, block_idx or subblock_idx and otherwise only constants, so
// every pass of one core takes the same arm (Loop.Exclusive).
func roleCond(e Expr) bool {
	role := false
	var ok func(e Expr) bool
	ok = func(e Expr) bool {
		switch e := e.(type) {
		case *Num:
			return true
		case *Name:
			switch e.Name {
			case "rank", "block_idx", "subblock_idx":
				role = true
			}
			return true // a builtin or a constant
		case *Paren:
			return ok(e.X)
		case *Unary:
			return ok(e.X)
		case *Binary:
			return ok(e.X) && ok(e.Y)
		case *Call:
			for _, x := range e.Args {
				if !ok(x) {
					return false
				}
			}
			return true
		}
		return false // a register, a tensor
	}
	return ok(e) && role
}

// armStmts assembles one arm of an if (arm: a Loop.Arms entry) with the arm
// on the arm stack.
func (a *assembler) armStmts(ks *kernelScope, arm int32, body []Stmt) []CStmt {
	ks.arms = append(ks.arms, arm)
	out := a.stmts(ks, body)
	ks.arms = ks.arms[:len(ks.arms)-1]
	return out
}

// loopBody assembles the body of loop statement s (a *For or *While) with s
// on the loop stack.
func (a *assembler) loopBody(ks *kernelScope, s Stmt, body []Stmt) []CStmt {
	outer := ks.loopStack
	ks.loops++
	ks.loopStack = append(slices.Clip(outer), &Loop{Stmt: s, Arms: slices.Clone(ks.arms)})
	out := a.stmts(ks, body)
	ks.loops--
	ks.loopStack = outer
	return out
}

// instr decodes one instruction. It returns nil when the instruction had errors.
func (a *assembler) instr(ks *kernelScope, in *Instr) *COp {
	if in.Label != "" {
		if prev, dup := ks.labels[in.Label]; dup {
			a.errs.Add(in.Span, "label %s redeclared", in.Label).Note(prev, "previous declaration")
		} else {
			ks.labels[in.Label] = in.Span
		}
		a.labels[in.Label] = true
	}
	opSpan := in.OpSpan
	if !opSpan.Pos.IsValid() {
		opSpan = in.Span
	}
	cands := lookupAll(in.Op)
	if len(cands) == 0 {
		if why := NotOnA2A3(in.Op); why != "" {
			a.errs.Add(opSpan, "%s", why)
			return nil
		}
		d := a.errs.Add(opSpan, "unknown instruction %s", in.Op)
		if s := suggestOp(in.Op); s != "" {
			d.Msg += " (did you mean " + s + "?)"
		}
		// Still check the operand names so undefined ones are reported.
		for _, x := range in.Operands() {
			a.lintOperand(ks, x)
		}
		return nil
	}
	ops := in.Operands()
	d := cands[0]
	switch {
	case len(cands) > 1 && cands[1].info.Family == FamComm:
		for _, x := range ops {
			if _, isGM := x.(*GMRef); isGM {
				d = cands[1]
				break
			}
		}
	case len(cands) > 1 && len(ops) < len(d.info.Operands):
		// tpush @F / tpop @F: the GlobalData form, without a tile.
		d = cands[1]
	}
	info := d.info
	// pto-isa writes `tstore %t, @C[i, j]`; ours is destination first.
	if info.Name == "tstore" && len(ops) == 2 {
		if _, gm := ops[0].(*GMRef); !gm {
			if _, gm2 := ops[1].(*GMRef); gm2 {
				ops = []Expr{ops[1], ops[0]}
			}
		}
	}
	// PTO-AS writes the scalar-over-tile division `tdivs %d, s, %a`.
	if info.Name == "tdivs" && len(ops) == 3 {
		if _, tile := ops[1].(*Ref); !tile {
			if _, tile2 := ops[2].(*Ref); tile2 {
				d = lookupAll("tsdivs")[0]
				info = d.info
			}
		}
	}
	// `%acc1 = tmatmul.acc %acc0, %a, %b` (pto-isa's SSA spelling): one accumulator.
	if strings.HasSuffix(info.Name, ".acc") && len(ops) == len(info.Operands)+1 {
		if r0, ok0 := ops[0].(*Ref); ok0 {
			if r1, ok1 := ops[1].(*Ref); ok1 && r0.Name == r1.Name {
				ops = ops[1:]
			}
		}
	}
	required, maxOps := 0, len(info.Operands)
	for _, s := range info.Operands {
		if !s.Optional {
			required++
		}
		if s.Variadic {
			maxOps = 1 << 20
		}
	}
	if len(ops) < required || len(ops) > maxOps {
		sp := opSpan
		if len(ops) > maxOps {
			sp = ops[maxOps].NodeSpan()
		}
		a.errs.Add(sp, "%s takes %s (%s), got %d", info.Name, countWord(required, maxOps), operandsString(info), len(ops))
		for _, x := range ops {
			a.lintOperand(ks, x)
		}
		return nil
	}
	// A core that cannot run the op at all: one error, not one per operand.
	if !a.checkCore(ks, in, info, opSpan) {
		for _, x := range ops {
			a.lintOperand(ks, x)
		}
		return nil
	}
	op := &COp{ID: len(ks.k.Ops), Instr: in, Info: info, Args: make([]Arg, len(ops)), Kernel: ks.k, Loops: ks.loopStack}
	ok := true
	for i, x := range ops {
		spec := info.Operands[min(i, len(info.Operands)-1)]
		arg, oka := a.operand(ks, info, i, spec, x)
		op.Args[i] = arg
		ok = ok && oka
	}
	if !a.attrs(ks, d, in, op) {
		ok = false
	}
	if !ok {
		return nil
	}
	// Route before the dtype rules: an illegal pair says more than its dtypes.
	op.Pipe = info.Pipe
	if info.Route != nil {
		op.Pipe = info.Route(unifiedView(ks.k.Kind, op.Args))
		if op.Pipe == PipeInvalid {
			a.errs.Add(opSpan, "%s from %s to %s is not a legal pair on A2/A3 (%s)", info.Name,
				locOf(op.Args, 1), locOf(op.Args, 0), d.route)
			return nil
		}
	}
	op.Cost = info.CostOn(op.Pipe)
	if !a.checkOp(ks, d, op) {
		return nil
	}
	a.checkTypeAnn(in, op)
	if !ks.k.Kind.HasPipe(op.Pipe) && ks.k.Kind != CoreInvalid {
		a.errs.Add(opSpan, "%s runs on %s, which a %s core does not have", info.Name, op.Pipe, ks.k.Kind)
		return nil
	}
	ks.k.Ops = append(ks.k.Ops, op)
	return op
}

// unifiedView lets the routing functions see a unified core's mat tiles as vec
// tiles for mat→mat moves (its one L1 serves both cube and vector).
func unifiedView(kind CoreKind, args []Arg) []Arg {
	if kind != CoreUnified || argLoc(args, 0) != LocMat || argLoc(args, 1) != LocMat {
		return args
	}
	out := append([]Arg(nil), args...)
	for i := 0; i < 2; i++ {
		t := *out[i].Tile
		t.Loc = LocVec
		out[i].Tile = &t
	}
	return out
}

func locOf(args []Arg, i int) string {
	if l := argLoc(args, i); l != LocInvalid {
		return l.String()
	}
	return "?"
}

func countWord(req, max int) string {
	switch {
	case req == max && req == 1:
		return "1 operand"
	case req == max:
		return strconv.Itoa(req) + " operands"
	case max >= 1<<20:
		return fmt.Sprintf("at least %d operands", req)
	}
	return fmt.Sprintf("%d to %d operands", req, max)
}

// lintOperand reports undefined names in an operand of an instruction that could
// not be decoded, so one mistake does not hide another.
func (a *assembler) lintOperand(ks *kernelScope, x Expr) {
	switch x := x.(type) {
	case *Ref:
		if ks.tiles[x.Name] == nil {
			if _, ok := ks.regs[x.Name]; !ok {
				a.errs.Add(x.Span, "undefined: %%%s", x.Name)
			}
		}
		if x.Index != nil {
			a.lintOperand(ks, x.Index)
		}
	case *GMRef:
		if a.tensors[x.Name] == nil {
			a.errs.Add(x.Span, "undefined tensor @%s", x.Name)
		}
	case *Binary:
		a.lintOperand(ks, x.X)
		a.lintOperand(ks, x.Y)
	case *Paren:
		a.lintOperand(ks, x.X)
	case *Unary:
		a.lintOperand(ks, x.X)
	}
}

func (a *assembler) checkCore(ks *kernelScope, in *Instr, info *OpInfo, sp Span) bool {
	if len(info.Cores) == 0 || ks.k.Kind == CoreInvalid {
		return true
	}
	for _, c := range info.Cores {
		if c == ks.k.Kind {
			return true
		}
	}
	a.errs.Add(sp, "%s is not available on a %s core (runs on %s)", info.Name, ks.k.Kind, coresString(info))
	return false
}

func kindsString(ks []ArgKind) string {
	parts := make([]string, len(ks))
	for i, k := range ks {
		parts[i] = map[ArgKind]string{ArgTile: "a tile", ArgGM: "a GM reference (@name[...])", ArgScalar: "an integer expression",
			ArgFloat: "a number", ArgPipe: "a pipe name", ArgWord: "a word", ArgReg: "a register (%name)"}[k]
	}
	return strings.Join(parts, " or ")
}

func accepts(spec OperandSpec, k ArgKind) bool {
	for _, x := range spec.Kinds {
		if x == k {
			return true
		}
	}
	return false
}

// operand resolves one operand against its slot.
func (a *assembler) operand(ks *kernelScope, info *OpInfo, i int, spec OperandSpec, x Expr) (Arg, bool) {
	arg := Arg{Span: x.NodeSpan()}
	wrong := func(got string) (Arg, bool) {
		a.errs.Add(x.NodeSpan(), "operand %d (%s) of %s must be %s, got %s", i+1, spec.Name, info.Name, kindsString(spec.Kinds), got)
		return arg, false
	}
	switch e := x.(type) {
	case *Ref:
		if t := ks.tiles[e.Name]; t != nil {
			if !accepts(spec, ArgTile) {
				return wrong("tile %" + e.Name)
			}
			return a.tileOperand(ks, info, i, spec, e, t)
		}
		if accepts(spec, ArgReg) {
			if e.Index != nil {
				a.errs.Add(e.Index.NodeSpan(), "register %%%s cannot be indexed", e.Name)
				return arg, false
			}
			slot, ok := a.defineReg(ks, e.Name, e.Span)
			arg.Kind, arg.Slot = ArgReg, slot
			return arg, ok
		}
		if _, isReg := ks.regs[e.Name]; isReg {
			if !accepts(spec, ArgScalar) {
				return wrong("register %" + e.Name)
			}
		} else if accepts(spec, ArgTile) {
			d := a.errs.Add(e.Span, "undefined tile %%%s", e.Name)
			if s := suggestIn(e.Name, ks.k.Tiles); s != "" {
				d.Msg += " (did you mean %" + s + "?)"
			}
			return arg, false
		}
	case *GMRef:
		if !accepts(spec, ArgGM) {
			if a.tensors[e.Name] == nil {
				a.errs.Add(e.Span, "undefined tensor @%s", e.Name)
				return arg, false
			}
			return wrong("@" + e.Name)
		}
		return a.gmOperand(ks, e)
	case *Name:
		if accepts(spec, ArgPipe) {
			p, ok := ParsePipe(e.Name)
			if !ok {
				a.errs.Add(e.Span, "unknown pipe %s (have S, V, M, MTE1, MTE2, MTE3, FIX, ALL)", e.Name)
				return arg, false
			}
			arg.Kind, arg.Pipe = ArgPipe, p
			return arg, true
		}
		if accepts(spec, ArgWord) {
			arg.Kind, arg.Word = ArgWord, e.Name
			return arg, true
		}
	}
	if accepts(spec, ArgPipe) {
		return wrong("an expression")
	}
	if accepts(spec, ArgFloat) {
		f, ok := a.floatVal(x, ks.sc)
		arg.Kind, arg.F = ArgFloat, f
		return arg, ok
	}
	if accepts(spec, ArgScalar) {
		if isFloatLit(x) {
			return wrong("a floating-point number")
		}
		c, ok := a.expr(x, ks.sc)
		arg.Kind, arg.Val = ArgScalar, c
		return arg, ok
	}
	switch e := x.(type) {
	case *Ref:
		if _, isReg := ks.regs[e.Name]; isReg {
			return wrong("register %" + e.Name)
		}
		a.errs.Add(e.Span, "undefined: %%%s", e.Name)
		return arg, false
	case *Num:
		return wrong("the number " + e.Text)
	}
	a.lintOperand(ks, x)
	return wrong("an expression")
}

func suggestIn(name string, tiles []*TileInfo) string {
	return closest(name, len(tiles), func(i int) string { return tiles[i].Name })
}

func (a *assembler) tileOperand(ks *kernelScope, info *OpInfo, i int, spec OperandSpec, e *Ref, t *TileInfo) (Arg, bool) {
	arg := Arg{Kind: ArgTile, Span: e.Span, Tile: t}
	ok := !ks.bad[t]
	if t.IsArray {
		if e.Index == nil {
			a.errs.Add(e.Span, "tile array %%%s needs an index: %%%s[i]", t.Name, t.Name).Note(t.Decl.Span, "declared here")
			ok = false
		} else if c, okc := a.expr(e.Index, ks.sc); okc {
			if c.Const && (c.Val < 0 || c.Val >= int64(t.Count)) {
				a.errs.Add(e.Index.NodeSpan(), "index %d out of range for %%%s[%d]", c.Val, t.Name, t.Count).Note(t.Decl.Span, "declared here")
				ok = false
			}
			arg.TileIdx = c
		} else {
			ok = false
		}
	} else if e.Index != nil {
		a.errs.Add(e.Index.NodeSpan(), "%%%s is not a tile array", t.Name).Note(t.Decl.Span, "declared here")
		ok = false
	}
	if len(spec.Locs) > 0 && t.Loc != LocInvalid {
		locs := spec.Locs
		if ks.k.Kind == CoreUnified && containsLoc(locs, LocVec) && !containsLoc(locs, LocMat) {
			locs = append(append([]Loc(nil), locs...), LocMat)
		}
		if !containsLoc(locs, t.Loc) {
			a.errs.Add(e.Span, "operand %d (%s) of %s must be a %s tile; %%%s is %s", i+1, spec.Name, info.Name,
				locsString(locs), t.Name, t.Loc).Note(t.Decl.Span, "%%%s declared here", t.Name)
			ok = false
		}
	}
	return arg, ok
}

func containsLoc(ls []Loc, l Loc) bool {
	for _, x := range ls {
		if x == l {
			return true
		}
	}
	return false
}

func locsString(ls []Loc) string {
	parts := make([]string, len(ls))
	for i, l := range ls {
		parts[i] = l.String()
	}
	if len(parts) > 1 {
		return strings.Join(parts[:len(parts)-1], ", ") + " or " + parts[len(parts)-1]
	}
	return strings.Join(parts, "")
}

func (a *assembler) gmOperand(ks *kernelScope, e *GMRef) (Arg, bool) {
	arg := Arg{Kind: ArgGM, Span: e.Span}
	t := a.tensors[e.Name]
	if t == nil {
		d := a.errs.Add(e.Span, "undefined tensor @%s", e.Name)
		ts := a.obj.Tensors
		if best := closest(e.Name, len(ts), func(i int) string { return ts[i].Name }); best != "" {
			d.Msg += " (did you mean @" + best + "?)"
		}
		return arg, false
	}
	arg.GM = t
	ok := true
	if e.Rank != nil {
		if t.Class != TensorWindow && t.Class != TensorSignal {
			a.errs.Add(e.Rank.NodeSpan(), "@%s is a %s tensor, private to each rank; only windows and signals take rank=", t.Name, t.Class).
				Note(t.Decl.Span, "declared here")
			ok = false
		}
		c, okc := a.expr(e.Rank, ks.sc)
		arg.HasRank, arg.Rank = true, c
		ok = ok && okc
	}
	if len(e.Index) > 0 && len(t.Shape) > 0 && len(e.Index) != len(t.Shape) {
		a.errs.Add(e.Span, "@%s has %d dimensions, indexed with %d", t.Name, len(t.Shape), len(e.Index)).Note(t.Decl.Span, "declared here")
		return arg, false
	}
	for d, x := range e.Index {
		c, okc := a.expr(x, ks.sc)
		if !okc {
			ok = false
			continue
		}
		if c.Const && d < len(t.Shape) && (c.Val < 0 || c.Val >= t.Shape[d]) {
			a.errs.Add(x.NodeSpan(), "index %d out of bounds for dimension %d of @%s (size %d)", c.Val, d, t.Name, t.Shape[d]).
				Note(t.Decl.Span, "declared here")
			ok = false
		}
		arg.Idx = append(arg.Idx, c)
	}
	return arg, ok
}

// attrs decodes the instruction's attributes against the op's domains.
func (a *assembler) attrs(ks *kernelScope, d *opDef, in *Instr, op *COp) bool {
	ok := true
	seen := map[string]bool{}
	for _, at := range in.Attrs {
		if at.Key == "standin" && at.Val == nil {
			// The MLIR importer's mark on a stand-in (Instr.StandIn), kept
			// in the PTO-AS it prints so that the text assembles as the
			// import did.
			in.StandIn = true
			continue
		}
		var dom *attrDomain
		for i := range d.attrs {
			if d.attrs[i].key == at.Key {
				dom = &d.attrs[i]
			}
		}
		if dom == nil {
			msg := fmt.Sprintf("%s takes no attribute #%s", d.info.Name, at.Key)
			if len(d.attrs) > 0 {
				msg += " (accepts " + attrsString(d.info) + ")"
			}
			a.errs.Add(at.Span, "%s", msg)
			ok = false
			continue
		}
		if seen[at.Key] {
			a.errs.Add(at.Span, "#%s given twice", at.Key)
			ok = false
			continue
		}
		seen[at.Key] = true
		ca := CAttr{Key: at.Key}
		switch dom.kind {
		case attrWord:
			n, isName := at.Val.(*Name)
			w := ""
			if isName {
				w = strings.ToLower(n.Name)
			}
			found := false
			for _, x := range dom.words {
				found = found || x == w
			}
			if !found {
				sp := at.Span
				if at.Val != nil {
					sp = at.Val.NodeSpan()
				}
				a.errs.Add(sp, "#%s must be one of %s", at.Key, strings.Join(dom.words, ", "))
				ok = false
				continue
			}
			ca.IsWord, ca.Word = true, w
			if at.Key == attrUnit.key {
				op.Unit = map[string]UnitPhase{"partial": UnitPartial, "final": UnitFinal}[w]
			}
		case attrExpr, attrConst:
			if at.Val == nil {
				ca.Val = constExpr(1, nil)
				break
			}
			c, okc := a.expr(at.Val, ks.sc)
			if !okc {
				ok = false
				continue
			}
			if dom.kind == attrConst {
				if !c.Const {
					a.errs.Add(at.Val.NodeSpan(), "#%s must be a constant", at.Key)
					ok = false
					continue
				}
				if c.Val < dom.lo || c.Val > dom.hi {
					a.errs.Add(at.Val.NodeSpan(), "#%s=%d out of range %d..%d%s", at.Key, c.Val, dom.lo, dom.hi, evaluates(at.Val, c.Val))
					ok = false
					continue
				}
			}
			ca.Val = c
		case attrFloat:
			if at.Val == nil {
				a.errs.Add(at.Span, "#%s needs a value", at.Key)
				ok = false
				continue
			}
			f, okf := a.floatVal(at.Val, ks.sc)
			if !okf {
				ok = false
				continue
			}
			ca.IsFloat, ca.F = true, f
		}
		op.Attrs = append(op.Attrs, ca)
	}
	return ok
}

// placeOps sets the Barriers of every op of body, a kernel's compiled
// body: each op counts the barriers written before it in its own
// loop's body, and a nested loop counts, for the ops after it, as the
// barriers its body holds.
func placeOps(body []CStmt) int32 {
	n := int32(0)
	var walk func([]CStmt)
	walk = func(list []CStmt) {
		for _, s := range list {
			switch s := s.(type) {
			case *COp:
				s.Barriers = n
				if s.Info.Op == OpSyncall {
					n++
				}
			case *CIf:
				walk(s.Then)
				walk(s.Else)
			case *CFor:
				n += placeOps(s.Body)
			case *CWhile:
				n += placeOps(s.Body)
			}
		}
	}
	walk(body)
	return n
}
