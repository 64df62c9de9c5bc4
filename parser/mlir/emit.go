package mlir

import (
	"fmt"
	"maps"
	"slices"

	"sort"
	"strconv"
	"strings"

	"github.com/ptoasm/ptoasm/asm"
)

// Emit prints an assembled PTO-AS program as PTOAS-dialect MLIR (`ptoasm fmt
// --to mlir`), so a kernel written and linted here can be handed to ptoas.
// It prints only constructs this package reads back and PTOAS's op table
// has (include/PTO/IR/PTOOps.td at a56b18c3: make_tensor_view,
// partition_view, alloc_tile with addr, subset, the DPS tile ops,
// set_flag/wait_flag[_dyn], barrier, get_block_idx/num,
// initialize_l2g2l_pipe with tpush/tpop), plus func, arith and scf (while
// loops as scf.while). It works from the Object, not the syntax tree, so
// constants are evaluated (-D applies) and tiles sit at the addresses the
// assembler chose. A construct PTOAS has no form for (noForm: several ranks,
// signals, windows, syncall, dsb, FIFOs of 1 or 2 slots, ...) or that is not
// printed yet (SDMA copies, rank > 3 or nz GM, ...) is an error at its
// source position naming it.
func Emit(obj *asm.Object) (string, asm.ErrorList) {
	e := &emitter{obj: obj, flags: map[*asm.TensorInfo]bool{}}
	e.program()
	if len(e.errs) > 0 {
		return "", e.errs
	}
	return e.out.String(), nil
}

type emitter struct {
	obj *asm.Object
	// flags are the GM tensors that stand for i1 kernel arguments
	flags map[*asm.TensorInfo]bool
	// multi: several kernels run one after another (no pto.entry)
	multi bool
	// names are the functions printed for the launch's kernels, in run
	// order: a kernel run again (a warm-up run, then the timed one) is
	// printed again under a new name, since the reader runs each function
	// once
	names []string
	out   strings.Builder
	errs  asm.ErrorList
}

func (e *emitter) errf(sp asm.Span, format string, args ...any) {
	e.errs = append(e.errs, &asm.Diagnostic{Span: sp, Severity: asm.SevError, Msg: fmt.Sprintf(format, args...)})
}

// launchKernels are the kernels of the launch's one run: one kernel, or a
// cube and a vector kernel launched together (`run C + V`). The checks name
// the launch constructs PTOAS has no equivalent for.
func (e *emitter) launchKernels() []*asm.KernelInfo {
	l := e.obj.Launch
	if l == nil {
		p := asm.Pos{File: e.obj.Main, Line: 1, Col: 1}
		e.errf(asm.Span{Pos: p, End: p}, "--to mlir: the program has no launch, so no kernel to print")
		return nil
	}
	for _, a := range l.Attrs {
		if a.Key == "ranks" {
			n, ok := a.Val.(*asm.Num)
			if nm, isName := a.Val.(*asm.Name); isName {
				v, _ := e.obj.Const(nm.Name)
				n, ok = &asm.Num{Int: v}, true
			}
			if !ok || n.Int != 1 {
				e.errf(a.Span, "--to mlir: a launch on several ranks has no PTOAS form: PTOAS kernels run on one device (%s has no rank operand)", ptoOpsTd)
				return nil
			}
		}
	}
	// The runs of one round: the launch's leading runs; what follows them
	// must be the reader's rounds over i1 arguments (flagLaunch).
	var runs []*asm.Run
	for _, s := range l.Body {
		r, ok := s.(*asm.Run)
		if !ok {
			break
		}
		runs = append(runs, r)
	}
	if len(runs) == 0 || len(runs) < len(l.Body) && !e.flagLaunch(runs) {
		sp := l.Span
		if len(runs) < len(l.Body) {
			sp = l.Body[len(runs)].NodeSpan()
		}
		e.errf(sp, "--to mlir: a launch with resets or conditions is not printed (a PTOAS module holds kernels, not the host's launch), other than the rounds the reader makes of i1 arguments")
		return nil
	}
	var ks []*asm.KernelInfo
	kinds := map[string]int{}
	for _, run := range runs {
		if len(run.Streams) != 1 {
			e.errf(run.Span, "--to mlir: only runs of one stream are printed")
			return nil
		}
		if s, s0 := run.Streams[0], runs[0].Streams[0]; (s.Blocks == nil) != (s0.Blocks == nil) || s.Blocks != nil && asm.ExprString(s.Blocks) != asm.ExprString(s0.Blocks) {
			e.errf(run.Span, "--to mlir: runs with different block counts are not printed (the reader's runs share BLOCKS)")
			return nil
		}
		for _, n := range run.Streams[0].Kernels {
			k := e.obj.Kernel(n)
			ks = append(ks, k)
			kinds[k.Kind.String()]++
		}
	}
	// The reader launches a module's first cube and first vector kernel
	// together and every other kernel alone, in order; only launches that
	// come back so are printed.
	pair := len(runs[0].Streams[0].Kernels) == 2
	switch {
	case len(runs) == 1 && pair && kinds["aic"] == 1 && kinds["aiv"] == 1:
	case len(runs) == 1 && len(ks) == 1:
	case !pair && len(ks) == len(runs) && (kinds["aic"] == 0 || kinds["aiv"] == 0):
		e.multi = true
		e.fnNames(ks)
	default:
		e.errf(runs[0].Span, "--to mlir: only runs of one kernel each (not cube and vector kernels apart), or one cube and one vector kernel launched together, are printed")
		return nil
	}
	return ks
}

// fnNames names one function per run: a kernel's name, then name_runN for
// its N-th run, skipping names the program already uses.
func (e *emitter) fnNames(ks []*asm.KernelInfo) {
	taken, seen := map[string]bool{}, map[*asm.KernelInfo]int{}
	for _, k := range e.obj.Kernels {
		taken[k.Name] = true
	}
	for _, k := range ks {
		seen[k]++
		name := k.Name
		for n := seen[k]; n > 1 && (name == k.Name || taken[name]); n++ {
			name = fmt.Sprintf("%s_run%d", k.Name, n)
		}
		taken[name] = true
		e.names = append(e.names, name)
	}
}

// flagLaunch recognises the launch the reader makes of i1 kernel arguments
// (lowerer.boolRuns): a round of runs, then for each further combination of
// the flags' values (boolCombos) the resets of the flags that change and the
// round again. The flags are i32 [1] GM tensors only ever read by `ld` at
// index 0; they print as i1 arguments, which the reader lays out the same
// way.
func (e *emitter) flagLaunch(round []*asm.Run) bool {
	body := e.obj.Launch.Body
	reset := map[string]bool{}
	for _, s := range body {
		if r, ok := s.(*asm.Reset); ok {
			reset[r.Target.Name] = true
		}
	}
	var flags []*asm.TensorInfo
	for _, t := range e.obj.Tensors {
		if reset[t.Name] {
			if t.Class != asm.TensorGM || t.DType.String() != "i32" || len(t.Shape) != 1 || t.Shape[0] != 1 {
				return false
			}
			flags = append(flags, t)
		}
	}
	if len(flags) == 0 || len(flags) != len(reset) || !e.onlyLoaded(flags) {
		return false
	}
	i, prev := len(round), uint(0)
	next := func() asm.LaunchStmt {
		if i >= len(body) {
			return nil
		}
		i++
		return body[i-1]
	}
	for _, c := range boolCombos(len(flags))[1:] {
		for b, t := range flags {
			if (c^prev)>>b&1 == 0 {
				continue
			}
			r, ok := next().(*asm.Reset)
			if !ok || r.Target.Name != t.Name || len(r.Target.Index) != 0 || r.Init.Kind != "fill" {
				return false
			}
			if n, ok := r.Init.X.(*asm.Num); !ok || n.IsFloat || n.Int != int64(c>>b&1) {
				return false
			}
		}
		for _, want := range round {
			if r, ok := next().(*asm.Run); !ok || !sameRun(r, want) {
				return false
			}
		}
		prev = c
	}
	if i != len(body) {
		return false
	}
	for _, t := range flags {
		e.flags[t] = true
	}
	return true
}

// sameRun says two runs start the same streams.
func sameRun(a, b *asm.Run) bool {
	if a.Name != b.Name || len(a.Streams) != len(b.Streams) {
		return false
	}
	for i, s := range a.Streams {
		t := b.Streams[i]
		if strings.Join(s.Kernels, "+") != strings.Join(t.Kernels, "+") || (s.Blocks == nil) != (t.Blocks == nil) ||
			s.Blocks != nil && asm.ExprString(s.Blocks) != asm.ExprString(t.Blocks) {
			return false
		}
	}
	return true
}

// onlyLoaded says every access to the tensors is an `ld` of element 0.
func (e *emitter) onlyLoaded(ts []*asm.TensorInfo) bool {
	is := map[*asm.TensorInfo]bool{}
	for _, t := range ts {
		is[t] = true
	}
	for _, k := range e.obj.Kernels {
		for _, op := range k.Ops {
			for j, a := range op.Args {
				if a.Kind != asm.ArgGM || !is[a.GM] {
					continue
				}
				if op.Info.Name != "ld" || j != 1 || a.HasRank || len(a.Idx) != 1 || !a.Idx[0].Const || a.Idx[0].Val != 0 {
					return false
				}
			}
		}
	}
	return true
}

// fillAttr is the argument attribute `{ptoasm.fill = v : i64}` of a tensor
// an `ld` reads: its data steer the kernel, so the host's fill travels with
// the MLIR (an attribute of no loaded dialect, which MLIR's verifier and
// PTOAS leave alone; the reader fills the argument with it). Other tensors
// get the reader's seeded random data, as any kernel argument does.
func (e *emitter) fillAttr(t *asm.TensorInfo, ks []*asm.KernelInfo) string {
	read := false
	for _, k := range ks {
		for _, op := range k.Ops {
			if op.Info.Op == asm.OpLd && len(op.Args) > 1 && op.Args[1].GM == t {
				read = true
			}
		}
	}
	if !read {
		return ""
	}
	in := t.Decl.Init
	switch {
	case in == nil || in.Kind == "zero":
		return " {ptoasm.fill = 0 : i64}"
	case in.Kind == "fill" && in.X != nil:
		if v, err := asm.EvalInt(in.X, e.obj.Const); err == nil {
			return fmt.Sprintf(" {ptoasm.fill = %d : i64}", v)
		}
	}
	e.errf(t.Decl.Span, "--to mlir: @%s: ld reads it, and only a constant fill (or zero) of such a tensor is carried (as ptoasm.fill); its init is %s", t.Name, in.Kind)
	return ""
}

func (e *emitter) program() {
	if e.noForm() {
		return
	}
	ks := e.launchKernels()
	if ks == nil {
		return
	}
	var tensors, fifos []*asm.TensorInfo
	for _, t := range e.obj.Tensors {
		if t.Class == asm.TensorFIFO {
			// noForm refused other slot counts
			fifos = append(fifos, t)
			continue
		}
		if e.flags[t] {
			continue
		}
		if len(t.Shape) > 3 || len(t.Shape) == 3 && t.Layout != asm.LayoutND || t.Layout == asm.LayoutNZ {
			e.errf(t.Decl.Span, "--to mlir: @%s: only 1-D and 2-D nd or dn GM tensors and 3-D nd ones are printed", t.Name)
			continue
		}
		tensors = append(tensors, t)
	}
	if len(e.errs) > 0 {
		return
	}
	var params, args, types []string
	// A FIFO is a pipe over a GM slot buffer the host passes: an argument
	// named after it (the reader names the FIFO after its buffer).
	for _, t := range append(append([]*asm.TensorInfo(nil), tensors...), fifos...) {
		params = append(params, fmt.Sprintf("%%%s: !pto.ptr<%s>%s", t.Name, mlirDType(t.DType), e.fillAttr(t, ks)))
		args = append(args, "%"+t.Name)
		types = append(types, fmt.Sprintf("!pto.ptr<%s>", mlirDType(t.DType)))
	}
	for _, t := range e.obj.Tensors {
		if e.flags[t] {
			params, args, types = append(params, fmt.Sprintf("%%%s: i1", t.Name)), append(args, "%"+t.Name), append(types, "i1")
		}
	}
	if slices.ContainsFunc(ks, usesSDMA) && e.sdmaWorkspaceTensor() == nil {
		// the async session's GM workspace (emit_sdma.go)
		params, args, types = append(params, "%"+sdmaWorkspace+": !pto.ptr<i8>"), append(args, "%"+sdmaWorkspace), append(types, "!pto.ptr<i8>")
	}
	var funcs []string
	if e.names == nil {
		for _, k := range ks {
			e.names = append(e.names, k.Name)
		}
	}
	for i, k := range ks {
		f := &fnEmitter{emitter: e, k: k, consts: map[string]string{}, regs: map[int]string{}, views: map[string]string{}, used: map[string]bool{}, addrs: map[*asm.TileInfo]string{}, events: map[int]string{}}
		for _, t := range tensors {
			f.used["%"+t.Name], f.used["%"+t.Name+"_view"] = true, true
		}
		for _, t := range fifos {
			f.used["%"+t.Name], f.used["%"+t.Name+"_pipe"] = true, true
		}
		for _, t := range k.Tiles {
			f.used["%"+t.Name] = true
		}
		f.body(k, tensors, fifos)
		if len(e.errs) > 0 {
			return
		}
		attrs := []string{}
		if len(ks) == 1 {
			attrs = append(attrs, "pto.entry")
		}
		switch k.Kind.String() {
		case "aic":
			attrs = append(attrs, "pto.kernel_kind = #pto.kernel_kind<cube>")
		case "aiv":
			attrs = append(attrs, "pto.kernel_kind = #pto.kernel_kind<vector>")
		}
		at := ""
		if len(attrs) > 0 {
			at = " attributes {" + strings.Join(attrs, ", ") + "}"
		}
		funcs = append(funcs, fmt.Sprintf("  func.func @%s(%s)%s {\n%s%s    return\n  }\n", e.names[i], strings.Join(params, ", "), at, f.head.String(), f.b.String()))
	}
	fmt.Fprintf(&e.out, "// PTOAS MLIR translation of %s (ptoasm fmt --to mlir; docs/mlir.md)\n", e.obj.Main)
	e.out.WriteString("module {\n")
	for _, fn := range funcs {
		e.out.WriteString(fn)
	}
	if len(ks) > 1 && !e.multi {
		// The host's entry launches both kernels on the same tensors (the
		// reader binds the callees' arguments to the entry's).
		fmt.Fprintf(&e.out, "  func.func @%s_entry(%s) attributes {pto.entry} {\n", ks[0].Name, strings.Join(params, ", "))
		for _, k := range ks {
			fmt.Fprintf(&e.out, "    func.call @%s(%s) : (%s) -> ()\n", k.Name, strings.Join(args, ", "), strings.Join(types, ", "))
		}
		e.out.WriteString("    return\n  }\n")
	}
	e.out.WriteString("}\n")
}

// fnEmitter prints one function. Constants go to head (they dominate every
// use); registers map to their current SSA value.
type fnEmitter struct {
	*emitter
	k      *asm.KernelInfo
	head   strings.Builder
	b      strings.Builder
	depth  int
	n      int
	consts map[string]string
	regs   map[int]string // register slot -> SSA value
	views  map[string]string
	tiles  map[*asm.TileInfo]string
	// pads are the pad values (PadValue numbers) tfillpad fills tiles with
	pads map[*asm.TileInfo]int
	// addrs are the i64 addresses tassign, tsubview and treshape gave
	// tiles in the open regions ("" once the region that set one closed)
	addrs map[*asm.TileInfo]string
	// events are the async_event values of the registers tput_async and
	// tget_async set, and sdma the function's async session (emit_sdma.go)
	events map[int]string
	sdma   string
	used   map[string]bool
	// loops is the enclosing loops, innermost last: true for a while
	loops []bool
	// quantPre is the i64 constant of the QUANT_PRE word the last
	// top-level set_quant_scalar wrote (emit_quant.go)
	quantPre string
}

// fresh names a new SSA value, never one of the program's tile or tensor
// names (a translation's own names come back as tile names).
func (f *fnEmitter) fresh(p string) string {
	for {
		f.n++
		s := fmt.Sprintf("%%%s%d", p, f.n)
		if !f.used[s] {
			f.used[s] = true
			return s
		}
	}
}

func (f *fnEmitter) line(format string, args ...any) {
	f.b.WriteString(strings.Repeat("  ", f.depth+2))
	fmt.Fprintf(&f.b, format, args...)
	f.b.WriteByte('\n')
}

func (f *fnEmitter) constant(v int64, ty string) string {
	key := fmt.Sprint(v, ty)
	if s, ok := f.consts[key]; ok {
		return s
	}
	name := fmt.Sprintf("%%c%d", v)
	if v < 0 {
		name = fmt.Sprintf("%%cn%d", -v)
	}
	if ty != "index" {
		name += "_" + ty
	}
	if f.used[name] {
		name = f.fresh("k")
	}
	f.used[name] = true
	f.consts[key] = name
	fmt.Fprintf(&f.head, "    %s = arith.constant %d : %s\n", name, v, ty)
	return name
}

func floatText(x float64) string {
	s := strconv.FormatFloat(x, 'g', -1, 64)
	if !strings.ContainsAny(s, ".e") {
		s += ".0"
	}
	return s
}

func (f *fnEmitter) fconst(x float64, ty string) string {
	key := "f" + floatText(x) + ty
	if s, ok := f.consts[key]; ok {
		return s
	}
	name := f.fresh("cst")
	f.consts[key] = name
	fmt.Fprintf(&f.head, "    %s = arith.constant %s : %s\n", name, floatText(x), ty)
	return name
}

var slayoutNames = map[string]string{"none": "none_box", "row": "row_major", "col": "col_major"}

func tileType(t *asm.TileInfo, rows, cols, vrows, vcols int) string {
	return fmt.Sprintf("!pto.tile_buf<loc=%s, dtype=%s, rows=%d, cols=%d, v_row=%d, v_col=%d, blayout=%s_major, slayout=%s, fractal=%d, pad=0>",
		t.Loc, mlirDType(t.DType), rows, cols, vrows, vcols, t.BLayout, slayoutNames[t.SLayout], t.Fractal)
}

// mlirDType is an element type as MLIR spells it: unsigned integers are
// ui8..ui64 (u32 is not an MLIR type; PTOAS's tests write ui32).
func mlirDType(d asm.DType) string {
	if s := d.String(); s[0] == 'u' {
		return "ui" + s[1:]
	}
	return d.String()
}

// padType gives a tile type the pad value the kernel's tfillpads fill t
// with (pads): PTOAS's TFillPadOp takes it from the destination's type
// (pad=1 zero, 2 max, 3 min: pto-isa's PadValue), so the declaration and
// every use carry it.
func (f *fnEmitter) padType(t *asm.TileInfo, ty string) string {
	if n, ok := f.pads[t]; ok {
		return strings.Replace(ty, "pad=0>", "pad="+strconv.Itoa(n)+">", 1)
	}
	return ty
}

func (f *fnEmitter) elemType(t *asm.TileInfo) string { return f.padType(t, elemType(t)) }

func (f *fnEmitter) tileType(t *asm.TileInfo, rows, cols, vrows, vcols int) string {
	return f.padType(t, tileType(t, rows, cols, vrows, vcols))
}

func elemType(t *asm.TileInfo) string {
	if t.DynValid() {
		// PTOAS's dynamic valid shape: v_row=? and v_col=?, which
		// set_validshape requires of both.
		return fmt.Sprintf("!pto.tile_buf<loc=%s, dtype=%s, rows=%d, cols=%d, v_row=?, v_col=?, blayout=%s_major, slayout=%s, fractal=%d, pad=0>",
			t.Loc, mlirDType(t.DType), t.Rows, t.Cols, t.BLayout, slayoutNames[t.SLayout], t.Fractal)
	}
	return tileType(t, t.Rows, t.Cols, t.VRows, t.VCols)
}

// validShape prints a tile's valid region as index values: the registers'
// current values for a region read from registers.
func (f *fnEmitter) validShape(t *asm.TileInfo, sp asm.Span) (string, string) {
	dim := func(c *asm.CExpr, v int) string {
		if c == nil {
			return f.constant(int64(v), "index")
		}
		return f.cexpr(*c, sp)
	}
	return dim(t.DynVRows, t.VRows), dim(t.DynVCols, t.VCols)
}

// setValid prints, before an instruction, pto.set_validshape of every tile
// operand whose valid region reads registers: PTO-AS evaluates the region
// when the instruction issues, so setting it just before gives the same
// region (the reader keeps it in registers again).
func (f *fnEmitter) setValid(op *asm.COp) {
	done := map[*asm.TileInfo]bool{}
	for _, a := range op.Args {
		if a.Kind != asm.ArgTile || a.Tile == nil || !a.Tile.DynValid() || done[a.Tile] {
			continue
		}
		done[a.Tile] = true
		r, c := f.validShape(a.Tile, a.Span)
		f.line("pto.set_validshape %s, %s, %s : %s", f.tiles[a.Tile], r, c, f.elemType(a.Tile))
	}
}

// How a tile array's elements lie in the one parent tile printed for it.
const (
	byRows = iota // whole rows, S rows apart (row-major, unboxed or whole boxes)
	byCols        // whole columns, S columns apart (column-major, plain or nz)
	byGrid        // row-major unboxed elements S elements apart, anywhere in a row
)

// arrayGeometry says how a tile array is printed: one parent tile holding
// its elements, stacked by rows or columns, or (a row-major unboxed array
// whose elements are a multiple of 32 bytes apart, as the reader makes of a
// subset at a computed column) on the parent's 32-byte grid, each element a
// subset of its valid shape at the row and column its offset falls on. ok is
// false for other arrays.
func arrayGeometry(t *asm.TileInfo) (mode int, s int64, parent [2]int, ok bool) {
	step := t.Addr[1] - t.Addr[0]
	for i, a := range t.Addr {
		if a != t.Addr[0]+int64(i)*step {
			return 0, 0, parent, false
		}
	}
	es := int64(t.DType.Size())
	grid := func() (int, int64, [2]int, bool) {
		if t.BLayout == "row" && t.SLayout == "none" && step > 0 && step%32 == 0 {
			s = step / es
			n := int64(t.Count-1)*s + int64(t.Rows*t.Cols)
			return byGrid, s, [2]int{int((n + int64(t.Cols) - 1) / int64(t.Cols)), t.Cols}, true
		}
		return 0, 0, parent, false
	}
	if t.VRows != t.Rows || t.VCols != t.Cols {
		return grid()
	}
	// Boxed tiles: only whole fractal boxes are contiguous.
	bh, bw := int64(1), int64(1)
	switch t.SLayout {
	case "row":
		bh, bw = 16, 32/es
	case "col":
		bh, bw = 32/es, 16
	}
	switch {
	case t.BLayout == "row" && int64(t.Rows)%bh == 0 && step%(int64(t.Cols)*es) == 0:
		s = step / (int64(t.Cols) * es)
		return byRows, s, [2]int{int(int64(t.Count-1)*s) + t.Rows, t.Cols}, true
	case t.BLayout == "col" && int64(t.Cols)%bw == 0 && step%(int64(t.Rows)*es) == 0:
		s = step / (int64(t.Rows) * es)
		return byCols, s, [2]int{t.Rows, int(int64(t.Count-1)*s) + t.Cols}, true
	}
	return grid()
}

// fifoDir is a FIFO's direction as PTOAS's dir_mask says it: 1 when a
// cube kernel pushes into it (C2V), 2 when a vector kernel does (V2C).
func (e *emitter) fifoDir(t *asm.TensorInfo) int {
	for _, k := range e.obj.Kernels {
		for _, op := range k.Ops {
			if len(op.Args) == 2 && op.Info.Name == "tpush" && op.Args[0].GM == t {
				if k.Kind.String() == "aic" {
					return 1
				}
				return 2
			}
			if len(op.Args) == 2 && op.Info.Name == "tpop" && op.Args[1].GM == t {
				if k.Kind.String() == "aic" {
					return 2
				}
				return 1
			}
		}
	}
	return 1
}

// body declares the views, pipes and tiles, then prints the statements.
func (f *fnEmitter) body(k *asm.KernelInfo, tensors, fifos []*asm.TensorInfo) {
	for _, t := range tensors {
		if len(t.Shape) == 3 {
			// A 3-D tensor is a rank-3 view; a window is a [1, R, C]
			// partition of it (window).
			v := "%" + t.Name + "_view"
			f.views[t.Name] = v
			sh := t.Shape
			f.line("%s = pto.make_tensor_view %%%s, shape = [%s, %s, %s], strides = [%s, %s, %s] : !pto.tensor_view<?x?x?x%s>", v, t.Name,
				f.constant(sh[0], "index"), f.constant(sh[1], "index"), f.constant(sh[2], "index"),
				f.constant(sh[1]*sh[2], "index"), f.constant(sh[2], "index"), f.constant(1, "index"), mlirDType(t.DType))
			continue
		}
		// A 1-D tensor is a view of one row; its windows are one row.
		r, c := int64(1), t.Shape[0]
		if len(t.Shape) == 2 {
			r, c = t.Shape[0], t.Shape[1]
		}
		v := "%" + t.Name + "_view"
		f.views[t.Name] = v
		strides, attr := []int64{c, 1}, ""
		if t.Layout == asm.LayoutDN {
			strides, attr = []int64{1, r}, " {layout = #pto.layout<dn>}"
		}
		f.line("%s = pto.make_tensor_view %%%s, shape = [%s, %s], strides = [%s, %s]%s : !pto.tensor_view<?x?x%s>", v, t.Name,
			f.constant(r, "index"), f.constant(c, "index"), f.constant(strides[0], "index"), f.constant(strides[1], "index"), attr, mlirDType(t.DType))
	}
	for _, t := range fifos {
		// The pipe's local buffer is PTOAS's to place; the reader reads
		// neither it nor the split (the popped tile's shape says it).
		f.line("%%%s_pipe = pto.initialize_l2g2l_pipe {dir_mask = %d, slot_size = %d, slot_num = %d, flag_base = %d}(%%%s : !pto.ptr<%s>, %s : i32) -> !pto.pipe",
			t.Name, f.fifoDir(t), t.Elems()*int64(t.DType.Size()), t.Attrs["slots"], t.Attrs["id"], t.Name, mlirDType(t.DType), f.constant(0, "i32"))
	}
	if !f.fillPads(k) {
		return
	}
	f.tiles = map[*asm.TileInfo]string{}
	for _, t := range k.Tiles {
		sp := t.Decl.Span
		typ := f.elemType(t)
		if t.Variable() && t.Count > 1 {
			f.errf(sp, "--to mlir: tile array %%%s: a valid region read from registers or a binding made at run time is printed for single tiles only", t.Name)
			return
		}
		if t.Count > 1 {
			// An array is one tile holding its elements; an element is a
			// subset of whole rows or columns of it (PTOAS's pto.subset),
			// which the reader lowers back to an array of aliases.
			_, _, pr, ok := arrayGeometry(t)
			if !ok {
				f.errf(sp, "--to mlir: tile array %%%s: only evenly spaced arrays of whole row-major rows or column-major columns, or of row-major unboxed tiles 32-byte multiples apart, are printed (as pto.subset of one tile)", t.Name)
				return
			}
			typ = f.tileType(t, pr[0], pr[1], pr[0], pr[1])
		}
		name := "%" + t.Name
		f.tiles[t] = name
		valid := ""
		if t.DynValid() {
			// The region the registers give is set before every
			// instruction naming the tile (validShape).
			valid = fmt.Sprintf(" valid_row = %s valid_col = %s", f.constant(int64(t.VRows), "index"), f.constant(int64(t.VCols), "index"))
		}
		// An unplaced tile (bound by tassign before any use) is
		// allocated at 0: PTOAS's level3 tassign wants an address.
		f.line("%s = pto.alloc_tile addr = %s%s : %s", name, f.constant(t.Addr[0], "i64"), valid, typ)
	}
	if usesSDMA(k) && !f.session() {
		return
	}
	f.stmts(k.Body)
}

// padNumbers are pto-isa's PadValue numbers of the ISA's #pad words (the
// inverse of padWords).
var padNumbers = map[string]int{"zero": 1, "max": 2, "min": 3}

// fillPads gives every tile a tfillpad of k writes the pad value it fills
// with; a tile filled with two pad values has no one type and is refused.
func (f *fnEmitter) fillPads(k *asm.KernelInfo) bool {
	f.pads = map[*asm.TileInfo]int{}
	for _, op := range k.Ops {
		at, ok := op.Attr("pad")
		if op.Info.Name != "tfillpad" || !ok || len(op.Args) == 0 || op.Args[0].Tile == nil {
			continue
		}
		t, n := op.Args[0].Tile, padNumbers[at.Word]
		if m, seen := f.pads[t]; seen && m != n {
			f.errf(op.Instr.OpSpan, "--to mlir: tfillpad: %%%s is filled with two pad values; PTOAS takes the pad value from the destination tile's type, which is one", t.Name)
			return false
		}
		f.pads[t] = n
	}
	return true
}

// breakSlot stands, in the register maps, for the innermost while loop's
// "broke" flag: a `break` writes it (scf has no early exit, so the rest of
// the body runs under `if broke == 0`).
const breakSlot = -1

// assigned is the set of register slots a statement list writes; a break of
// the enclosing while counts as writing breakSlot.
func assigned(ss []asm.CStmt, out map[int]bool) { assignedIn(ss, out, true) }

func assignedIn(ss []asm.CStmt, out map[int]bool, ownBreaks bool) {
	for _, s := range ss {
		switch s := s.(type) {
		case *asm.CLet:
			out[s.Slot] = true
		case *asm.CFor:
			assignedIn(s.Body, out, false)
		case *asm.CWhile:
			assignedIn(s.Body, out, false) // its breaks are its own
		case *asm.CIf:
			assignedIn(s.Then, out, ownBreaks)
			assignedIn(s.Else, out, ownBreaks)
		case *asm.CBreak:
			if ownBreaks {
				out[breakSlot] = true
			}
		}
	}
}

// mayBreak says a statement can leave the enclosing while loop.
func mayBreak(s asm.CStmt) bool {
	w := map[int]bool{}
	assignedIn([]asm.CStmt{s}, w, true)
	return w[breakSlot]
}

// carried lists, in slot order, the registers live before a region that the
// region writes: they become scf iter_args or scf.if results.
func (f *fnEmitter) carried(regions ...[]asm.CStmt) []int {
	w := map[int]bool{}
	for _, r := range regions {
		assigned(r, w)
	}
	var out []int
	for s := range w {
		if _, ok := f.regs[s]; ok {
			out = append(out, s)
		}
	}
	sort.Ints(out)
	return out
}

func (f *fnEmitter) snapshot() map[int]string {
	m := make(map[int]string, len(f.regs))
	for k, v := range f.regs {
		m[k] = v
	}
	return m
}

func types(n int) string {
	return strings.TrimSuffix(strings.Repeat("index, ", n), ", ")
}

func (f *fnEmitter) yield(slots []int) {
	if len(slots) == 0 {
		return
	}
	var vs []string
	for _, s := range slots {
		vs = append(vs, f.regs[s])
	}
	f.line("scf.yield %s : %s", strings.Join(vs, ", "), types(len(slots)))
}

// results names the results of a region op with n results and binds slots.
func (f *fnEmitter) results(slots []int) string {
	if len(slots) == 0 {
		return ""
	}
	r := f.fresh("r")
	for i, s := range slots {
		if len(slots) == 1 {
			f.regs[s] = r
		} else {
			f.regs[s] = fmt.Sprintf("%s#%d", r, i)
		}
	}
	if len(slots) == 1 {
		return r + " = "
	}
	return fmt.Sprintf("%s:%d = ", r, len(slots))
}

func (f *fnEmitter) stmts(ss []asm.CStmt) {
	// A tassign's handle is an SSA value of this region only.
	defer maps.Copy(f.tiles, maps.Clone(f.tiles))
	// An address or event set inside the region is not an SSA value after it.
	defer func(addrs map[*asm.TileInfo]string, events map[int]string) {
		for t, a := range f.addrs {
			if addrs[t] != a {
				f.addrs[t] = ""
			}
		}
		for r, e := range f.events {
			if events[r] != e {
				f.events[r] = ""
			}
		}
	}(maps.Clone(f.addrs), maps.Clone(f.events))
	for i, s := range ss {
		if len(f.errs) > 0 {
			return
		}
		switch s := s.(type) {
		case *asm.CLet:
			f.regs[s.Slot] = f.cexpr(s.X, s.Let.Span)
		case *asm.CFor:
			f.loops = append(f.loops, false)
			f.forLoop(s)
			f.loops = f.loops[:len(f.loops)-1]
		case *asm.CIf:
			f.ifStmt(s)
		case *asm.CWhile:
			f.loops = append(f.loops, true)
			f.whileLoop(s)
			f.loops = f.loops[:len(f.loops)-1]
		case *asm.CBreak:
			if len(f.loops) == 0 || !f.loops[len(f.loops)-1] {
				f.errf(s.Break.Span, "--to mlir: a break out of a for loop has no scf equivalent (scf.for has no early exit)")
				return
			}
			// The rest of this list is dead: the loop's condition
			// region sees the flag and stops.
			f.regs[breakSlot] = f.constant(1, "index")
			return
		case *asm.COp:
			f.op(s)
		}
		if i+1 < len(ss) && mayBreak(s) {
			// What follows a statement that may have broken out runs only
			// if it did not.
			f.ifRegions(f.cmp("eq", f.regs[breakSlot], f.constant(0, "index")), ss[i+1:], nil)
			return
		}
	}
}

// whileLoop prints `while C { body }` as an scf.while whose condition region
// holds the whole iteration: C, then the body under `scf.if C`, a break
// setting a flag (breakSlot) that skips the rest of the body; the loop goes
// on while C held and no break ran. The after region only forwards the
// registers. The reader lowers it to `while 1 { ...; if !go { break } }`,
// so the instruction stream is the original's.
func (f *fnEmitter) whileLoop(s *asm.CWhile) {
	outerBreak, hadBreak := f.regs[breakSlot]
	delete(f.regs, breakSlot)
	// Every register the body writes is carried: one first written inside
	// (the reader's loop results are) holds 0 before, as registers start.
	w := map[int]bool{}
	assignedIn(s.Body, w, false)
	for sl := range w {
		if _, ok := f.regs[sl]; !ok {
			f.regs[sl] = f.constant(0, "index")
		}
	}
	slots := f.carried(s.Body)
	var inits, args []string
	for _, sl := range slots {
		inits = append(inits, f.regs[sl])
		args = append(args, f.fresh("a"))
	}
	before := f.snapshot()
	outer := f.b
	f.b = strings.Builder{}
	f.depth++
	for i, sl := range slots {
		f.regs[sl] = args[i]
	}
	c := f.cond(s.Cond, s.While.Span)
	f.regs[breakSlot] = f.constant(0, "index")
	f.ifRegions(c, s.Body, nil)
	goOn := f.fresh("b")
	f.line("%s = arith.andi %s, %s : i1", goOn, c, f.cmp("eq", f.regs[breakSlot], f.constant(0, "index")))
	var fwd []string
	for _, sl := range slots {
		fwd = append(fwd, f.regs[sl])
	}
	if len(slots) > 0 {
		f.line("scf.condition(%s) %s : %s", goOn, strings.Join(fwd, ", "), types(len(slots)))
	} else {
		f.line("scf.condition(%s)", goOn)
	}
	f.depth--
	inner := f.b.String()
	f.b = outer
	f.regs = before
	delete(f.regs, breakSlot)
	if hadBreak {
		f.regs[breakSlot] = outerBreak
	}
	res := f.results(slots)
	if len(slots) == 0 {
		f.line("scf.while : () -> () {")
	} else {
		var parts []string
		for i := range slots {
			parts = append(parts, args[i]+" = "+inits[i])
		}
		f.line("%sscf.while (%s) : (%s) -> (%s) {", res, strings.Join(parts, ", "), types(len(slots)), types(len(slots)))
	}
	f.b.WriteString(inner)
	f.line("} do {")
	if len(slots) == 0 {
		f.line("  scf.yield")
	} else {
		var bs, ps []string
		for range slots {
			b := f.fresh("y")
			bs = append(bs, b)
			ps = append(ps, b+": index")
		}
		f.line("^bb0(%s):", strings.Join(ps, ", "))
		f.line("  scf.yield %s : %s", strings.Join(bs, ", "), types(len(slots)))
	}
	f.line("}")
}

func (f *fnEmitter) forLoop(s *asm.CFor) {
	sp := s.For.Span
	lo, hi, st := f.cexpr(s.From, sp), f.cexpr(s.To, sp), f.cexpr(s.Step, sp)
	if s.Step.Src == nil && !s.Step.Const {
		st = f.constant(1, "index")
	}
	slots := f.carried(s.Body)
	var inits []string
	for _, sl := range slots {
		inits = append(inits, f.regs[sl])
	}
	before := f.snapshot()
	iv := f.fresh("i")
	var iter, rty string
	var args []string
	for range slots {
		args = append(args, f.fresh("a"))
	}
	if len(slots) > 0 {
		var parts []string
		for i := range slots {
			parts = append(parts, args[i]+" = "+inits[i])
		}
		iter = " iter_args(" + strings.Join(parts, ", ") + ")"
		rty = " -> (" + types(len(slots)) + ")"
	}
	// The result names are chosen after the body; print into a side buffer.
	outer := f.b
	f.b = strings.Builder{}
	for i, sl := range slots {
		f.regs[sl] = args[i]
	}
	f.regs[s.Slot] = iv
	f.depth++
	f.stmts(s.Body)
	f.yield(slots)
	f.depth--
	inner := f.b.String()
	f.b = outer
	f.regs = before
	res := f.results(slots)
	f.line("%sscf.for %s = %s to %s step %s%s%s {", res, iv, lo, hi, st, iter, rty)
	f.b.WriteString(inner)
	f.line("}")
}

func (f *fnEmitter) ifStmt(s *asm.CIf) {
	f.ifRegions(f.cond(s.Cond, s.If.Span), s.Then, s.Else)
}

// ifRegions prints `scf.if cond` over two statement lists.
func (f *fnEmitter) ifRegions(cond string, then, els []asm.CStmt) {
	// Every register a branch writes is a result (the reader's own scf.if
	// results are registers first written in the branches); one not
	// written before holds 0, as registers start.
	w := map[int]bool{}
	assigned(then, w)
	assigned(els, w)
	for sl := range w {
		if _, ok := f.regs[sl]; !ok {
			f.regs[sl] = f.constant(0, "index")
		}
	}
	slots := f.carried(then, els)
	before := f.snapshot()
	branch := func(ss []asm.CStmt) string {
		outer := f.b
		f.b = strings.Builder{}
		f.regs = make(map[int]string, len(before))
		for k, v := range before {
			f.regs[k] = v
		}
		f.depth++
		f.stmts(ss)
		f.yield(slots)
		f.depth--
		out := f.b.String()
		f.b = outer
		return out
	}
	th := branch(then)
	el := ""
	if len(els) > 0 || len(slots) > 0 {
		el = branch(els)
	}
	f.regs = before
	res := f.results(slots)
	rty := ""
	if len(slots) > 0 {
		rty = " -> (" + types(len(slots)) + ")"
	}
	f.line("%sscf.if %s%s {", res, cond, rty)
	f.b.WriteString(th)
	if el != "" {
		f.line("} else {")
		f.b.WriteString(el)
	}
	f.line("}")
}

// cexpr prints a compiled integer expression as an index value.
func (f *fnEmitter) cexpr(c asm.CExpr, sp asm.Span) string {
	if c.Const || c.Src == nil {
		return f.constant(c.Val, "index")
	}
	v, isBool := f.expr(c.Src)
	if isBool {
		return f.toIndex(v)
	}
	return v
}

func (f *fnEmitter) toIndex(b string) string {
	w := f.fresh("w")
	f.line("%s = arith.extui %s : i1 to i64", w, b)
	x := f.fresh("x")
	f.line("%s = arith.index_cast %s : i64 to index", x, w)
	return x
}

// cond prints a condition as an i1 value.
func (f *fnEmitter) cond(c asm.CExpr, sp asm.Span) string {
	if !c.Const && c.Src != nil {
		if v, isBool := f.expr(c.Src); isBool {
			return v
		} else {
			return f.cmp("ne", v, f.constant(0, "index"))
		}
	}
	return f.cmp("ne", f.constant(c.Val, "index"), f.constant(0, "index"))
}

func (f *fnEmitter) cmp(pred, a, b string) string {
	v := f.fresh("b")
	f.line("%s = arith.cmpi %s, %s, %s : index", v, pred, a, b)
	return v
}

var emitBin = map[string]string{"+": "addi", "-": "subi", "*": "muli", "/": "divsi", "%": "remsi", "&": "andi", "|": "ori",
	"^": "xori", "<<": "shli", ">>": "shrsi", "min": "minsi", "max": "maxsi", "ceildiv": "ceildivsi"}

var emitCmp = map[string]string{"==": "eq", "!=": "ne", "<": "slt", "<=": "sle", ">": "sgt", ">=": "sge"}

// expr prints x; the bool result says it is an i1 (a comparison).
func (f *fnEmitter) expr(x asm.Expr) (string, bool) {
	idx := func(y asm.Expr) string {
		v, b := f.expr(y)
		if b {
			return f.toIndex(v)
		}
		return v
	}
	switch x := x.(type) {
	case *asm.Num:
		if !x.IsFloat {
			return f.constant(x.Int, "index"), false
		}
	case *asm.Paren:
		return f.expr(x.X)
	case *asm.Name:
		if v, ok := f.obj.Const(x.Name); ok {
			return f.constant(v, "index"), false
		}
		op := map[string]string{"block_idx": "get_block_idx", "block_num": "get_block_num", "subblock_idx": "get_subblock_idx"}[x.Name]
		if op != "" {
			r, v := f.fresh("t"), f.fresh("x")
			f.line("%s = pto.%s", r, op)
			f.line("%s = arith.index_cast %s : i64 to index", v, r)
			return v, false
		}
	case *asm.Ref:
		if x.Index == nil {
			for slot, name := range f.k.Regs {
				if name == x.Name {
					if v, ok := f.regs[slot]; ok {
						return v, false
					}
				}
			}
		}
	case *asm.Unary:
		switch x.Op {
		case "-":
			v := f.fresh("x")
			f.line("%s = arith.subi %s, %s : index", v, f.constant(0, "index"), idx(x.X))
			return v, false
		case "!":
			return f.cmp("eq", idx(x.X), f.constant(0, "index")), true
		}
	case *asm.Binary:
		if p, ok := emitCmp[x.Op]; ok {
			return f.cmp(p, idx(x.X), idx(x.Y)), true
		}
		if x.Op == "&&" || x.Op == "||" {
			a, b := f.truth(x.X), f.truth(x.Y)
			v := f.fresh("b")
			op := map[string]string{"&&": "andi", "||": "ori"}[x.Op]
			f.line("%s = arith.%s %s, %s : i1", v, op, a, b)
			return v, true
		}
		if op, ok := emitBin[x.Op]; ok {
			a, b := idx(x.X), idx(x.Y)
			v := f.fresh("x")
			f.line("%s = arith.%s %s, %s : index", v, op, a, b)
			return v, false
		}
	case *asm.Call:
		if op, ok := emitBin[x.Fn]; ok && len(x.Args) == 2 {
			a, b := idx(x.Args[0]), idx(x.Args[1])
			v := f.fresh("x")
			f.line("%s = arith.%s %s, %s : index", v, op, a, b)
			return v, false
		}
	}
	f.errf(x.NodeSpan(), "--to mlir: the expression %s has no arith equivalent here", asm.ExprString(x))
	return f.constant(0, "index"), false
}

func (f *fnEmitter) truth(x asm.Expr) string {
	v, b := f.expr(x)
	if b {
		return v
	}
	return f.cmp("ne", v, f.constant(0, "index"))
}

// emitOps maps a PTO-AS mnemonic to the PTOAS op and operand shape the
// reader lowers back to it (the inverse of tileOps, identity names only).
// ptoasStandIns are PTOAS tile ops (include/PTO/IR/PTOOps.td at a56b18c3)
// that ptoasm's ISA has too but the reader still lowers to stand-ins (their
// operand forms are not read yet), so the printer cannot use them.
var ptoasStandIns = map[string]bool{"tgather": true}

// fpNames are the quantising moves PTOAS spells with an underscore.
var fpNames = map[string]struct {
	name string
	sh   opShape
}{"textract.fp": {"textract_fp", shExtractFP}, "tinsert.fp": {"tinsert_fp", shExtractFP}, "tstore.fp": {"tstore_fp", shStore}}

var emitOps = func() map[string]opShape {
	m := map[string]opShape{}
	for name, row := range tileOps {
		if name == row.our {
			m[name] = row.sh
		}
	}
	return m
}()

// tile prints a tile operand: a single tile is its SSA value, an array
// element a pto.subset of the stacked array tile.
func (f *fnEmitter) tile(a asm.Arg) (string, string) {
	t := a.Tile
	if !t.IsArray || t.Count < 2 {
		return f.tiles[t], f.elemType(t) // an array of one is its one tile
	}
	mode, s, pr, _ := arrayGeometry(t)
	off := f.cexpr(a.TileIdx, a.Span)
	if s != 1 {
		x := f.fresh("x")
		f.line("%s = arith.muli %s, %s : index", x, off, f.constant(s, "index"))
		off = x
	}
	r, c := off, f.constant(0, "index")
	sizes := [2]int{t.Rows, t.Cols}
	switch mode {
	case byCols:
		r, c = c, off
	case byGrid:
		// the element offset's row and column in the parent
		r, c = f.fresh("x"), f.fresh("x")
		f.line("%s = arith.divsi %s, %s : index", r, off, f.constant(int64(t.Cols), "index"))
		f.line("%s = arith.remsi %s, %s : index", c, off, f.constant(int64(t.Cols), "index"))
		sizes = [2]int{t.VRows, t.VCols}
	}
	v := f.fresh("e")
	f.line("%s = pto.subset %s[%s, %s] sizes [%d, %d] : %s", v, f.tiles[t], r, c, sizes[0], sizes[1], f.tileType(t, pr[0], pr[1], pr[0], pr[1]))
	return v, f.elemType(t)
}

// window prints the partition of a GM operand that tile t moves.
func (f *fnEmitter) window(a asm.Arg, t *asm.TileInfo) string {
	if a.HasRank {
		f.errf(a.Span, "--to mlir: a GM operand on another rank has no PTOAS form")
		return ""
	}
	sh, idx := a.GM.Shape, a.Idx
	if n := len(sh) - len(idx); n > 0 {
		// `@E` without indices starts at the tensor's first element (the
		// machine takes missing leading indices as zero), and PTOAS's
		// partition_view has an offset per dimension of its view.
		idx = append(make([]asm.CExpr, n, len(sh)), idx...)
		for i := range n {
			idx[i] = asm.CExpr{Const: true}
		}
	}
	if len(sh) == 1 {
		sh, idx = []int64{1, sh[0]}, append([]asm.CExpr{{Const: true}}, idx...)
	}
	lead, view := "", "?x?"
	if len(sh) == 3 {
		// a window of the last two dimensions at one index of the first
		lead, view, sh = f.constant(1, "index")+", ", "?x?x?", sh[1:]
	}
	if int64(t.VRows) > sh[0] || int64(t.VCols) > sh[1] {
		// PTOAS's partition_view must lie inside its view.
		f.errf(a.Span, "--to mlir: the window [%d x %d] does not fit @%s %v", t.VRows, t.VCols, a.GM.Name, sh)
		return ""
	}
	offs := make([]string, len(idx))
	for i, x := range idx {
		offs[i] = f.cexpr(x, a.Span)
	}
	v := f.fresh("p")
	r, c := f.validShape(t, a.Span)
	f.line("%s = pto.partition_view %s, offsets = [%s], sizes = [%s%s, %s] : !pto.tensor_view<%sx%s> -> %s",
		v, f.views[a.GM.Name], strings.Join(offs, ", "), lead, r, c, view, mlirDType(a.GM.DType), ptTypeOf(t, a.GM))
	return v
}

// ptTypeOf is the partition type of a transfer of t to or from tensor g:
// rank 3 for a 3-D tensor ([1, R, C]).
func ptTypeOf(t *asm.TileInfo, g *asm.TensorInfo) string {
	s := ptType(t)
	if g != nil && len(g.Shape) == 3 {
		s = strings.Replace(s, "<", "<1x", 1)
	}
	return s
}

// ptType is the partition a transfer of t moves: its valid shape, dynamic
// when the region reads registers.
func ptType(t *asm.TileInfo) string {
	if t.DynValid() {
		return fmt.Sprintf("!pto.partition_tensor_view<?x?x%s>", mlirDType(t.DType))
	}
	return fmt.Sprintf("!pto.partition_tensor_view<%dx%dx%s>", t.VRows, t.VCols, mlirDType(t.DType))
}

func (f *fnEmitter) scalar(a asm.Arg, dt asm.DType) (string, string) {
	ty := dt.String()
	if ty == "f16" || ty == "bf16" || ty == "f32" {
		x := a.F
		if a.Kind == asm.ArgScalar {
			x = float64(a.Val.Val)
		}
		return f.fconst(x, ty), ty
	}
	if a.Kind == asm.ArgFloat {
		return f.constant(int64(a.F), "i32"), "i32"
	}
	return f.constant(a.Val.Val, "i32"), "i32"
}

// initMatmul prints `tmatmul.acc c, a, b #init=x`, an accumulation that
// starts from zero when x is non-zero, as PTOAS spells the two: tmatmul
// (C = A·B) and tmatmul.acc (C += A·B), chosen by scf.if when x is computed.
func (f *fnEmitter) initMatmul(op *asm.COp, name string, x asm.CExpr) {
	plain := strings.TrimSuffix(name, ".acc")
	c, cTy := f.tile(op.Args[0])
	a, aTy := f.tile(op.Args[1])
	b, bTy := f.tile(op.Args[2])
	zero := func() { f.line("pto.%s ins(%s, %s : %s, %s) outs(%s : %s)", plain, a, b, aTy, bTy, c, cTy) }
	acc := func() {
		f.line("pto.%s ins(%s, %s, %s : %s, %s, %s) outs(%s : %s)", name, c, a, b, cTy, aTy, bTy, c, cTy)
	}
	if x.Const || x.Fn == nil {
		if x.Val != 0 {
			zero()
		} else {
			acc()
		}
		return
	}
	f.line("scf.if %s {", f.cond(x, op.Instr.Span))
	f.depth++
	zero()
	f.depth--
	f.line("} else {")
	f.depth++
	acc()
	f.depth--
	f.line("}")
}

// syncID is an FFTS id: a literal, or an index value (event_id_dyn).
func (f *fnEmitter) syncID(c asm.CExpr, sp asm.Span) string {
	if c.Const || c.Fn == nil {
		return fmt.Sprint(c.Val)
	}
	return f.cexpr(c, sp)
}

func (f *fnEmitter) op(op *asm.COp) {
	name, sp := op.Info.Name, op.Instr.Span
	if name != "tassign" && name != "tsubview" && name != "treshape" {
		f.setValid(op) // a rebinding reads no region
	}
	switch name {
	case "set_flag", "wait_flag":
		p1, p2, ev := op.Args[0].Pipe, op.Args[1].Pipe, op.Args[2].Val
		if ev.Const {
			f.line("pto.%s[<PIPE_%s>, <PIPE_%s>, <EVENT_ID%d>]", name, p1, p2, ev.Val)
		} else {
			f.line("pto.%s_dyn[<PIPE_%s>, <PIPE_%s>, %s]", name, p1, p2, f.cexpr(ev, sp))
		}
		return
	case "ld", "st":
		a := op.Args[1]
		if name == "st" {
			a = op.Args[0]
		}
		if name == "ld" && a.Kind == asm.ArgGM && f.flags[a.GM] {
			// an i1 argument, read as the reader reads it: 0 or 1
			f.regs[op.Args[0].Slot] = f.toIndex("%" + a.GM.Name)
			return
		}
		f.scalarGM(op, a)
		return
	case "tpush", "tpop":
		fifo, tile := op.Args[0], op.Args[1]
		if name == "tpop" {
			fifo, tile = tile, fifo
		}
		v, ty := f.tile(tile)
		// split: the tile is the whole slot (0), its upper or lower half
		// (1, TILE_UP_DOWN) or its left or right half (2, TILE_LEFT_RIGHT)
		split, sh := 0, fifo.GM.Shape
		if len(sh) == 2 && int64(tile.Tile.Rows)*2 == sh[0] && int64(tile.Tile.Cols) == sh[1] {
			split = 1
		} else if len(sh) == 2 && int64(tile.Tile.Rows) == sh[0] && int64(tile.Tile.Cols)*2 == sh[1] {
			split = 2
		}
		f.line("pto.%s(%s, %%%s_pipe : %s, !pto.pipe) {split = %d}", name, v, fifo.GM.Name, ty, split)
		return
	case "pipe_barrier":
		f.line("pto.barrier <PIPE_%s>", op.Args[0].Pipe)
		return
	case "tassign", "tsubview", "treshape":
		f.rebind(op)
		return
	case "ffts_set":
		// PTOAS's sync.set (ffts_cross_core_sync on A3) with its mode.
		mode := int64(2)
		if at, ok := op.Attr("mode"); ok && (at.Val.Const || at.Val.Fn == nil) {
			mode = at.Val.Val
		}
		f.line("pto.sync.set <PIPE_%s>, %s {ffts_mode = %d : i32}", op.Args[0].Pipe, f.syncID(op.Args[1].Val, sp), mode)
		return
	case "ffts_wait":
		// sync.wait names the pipe that waits; PTO-AS's wait holds the
		// scalar, so the kernel's compute pipe is named (the reader
		// ignores it).
		p := "V"
		if f.k.Kind.String() == "aic" {
			p = "M"
		}
		f.line("pto.sync.wait <PIPE_%s>, %s", p, f.syncID(op.Args[0].Val, sp))
		return
	case "tmrgsort.lists", "tgather.mask":
		f.sortOp(op)
		return
	case "tquant":
		f.quantOp(op)
		return
	case "tprint":
		// TPrintOp: ins(src) and no outs (include/PTO/IR/PTOOps.td at
		// a56b18c3)
		v, ty := f.tile(op.Args[0])
		f.line("pto.tprint ins(%s : %s)", v, ty)
		return
	case "tput_async", "tget_async":
		f.asyncCopy(op)
		return
	case "wait_async":
		f.waitAsync(op)
		return
	case "set_quant_scalar":
		f.setQuant(op)
		return
	case "tstore.q", "tmov.q":
		f.quantMove(op)
		return
	case "tsdivs":
		// the scalar over each element: TDivSOp's other order,
		// ins(%scalar, %src : T, tile) (lib/PTO/IR/PTO.cpp at a56b18c3)
		a, aty := f.tile(op.Args[2])
		d, dty := f.tile(op.Args[0])
		s, sty := f.scalar(op.Args[1], op.Args[2].Tile.DType)
		if len(f.errs) == 0 {
			f.line("pto.tdivs ins(%s, %s : %s, %s) outs(%s : %s)", s, a, sty, aty, d, dty)
		}
		return
	}
	if op.Instr != nil && op.Instr.StandIn && !asm.DTypesAllow(op) {
		// The reader's stand-in for an op the ISA lacks, in types its own
		// op refuses (a u8 read by a tcvt into i32): printed, it would
		// read back as that op and be refused.
		f.errf(op.Instr.OpSpan, "--to mlir: this %s stands in for an op the ISA lacks, in element types pto.%s refuses: it has no PTOAS form", name, name)
		return
	}
	if base, _, _ := strings.Cut(name, "."); ptoasStandIns[base] {
		f.errf(op.Instr.OpSpan, "--to mlir: %s is not printed: PTOAS has pto.%s, but the reader lowers that form to a V-pipe stand-in, so it would not read back as %s", name, base, name)
		return
	}
	sh, ok := emitOps[name]
	ptoName := name
	if base, val := strings.CutSuffix(name, ".val"); val && tileOps[base].sh == shArgRed {
		// outs(dst, dstidx): the reader's .val form
		sh, ok, ptoName = shArgRed, true, base
	}
	if ren, fp := fpNames[name]; fp {
		sh, ok, ptoName = ren.sh, true, ren.name
	}
	if !ok {
		f.errf(op.Instr.OpSpan, "--to mlir: %s is not printed: ptoasm does not read a PTOAS form of it back yet", name)
		return
	}
	// Attributes as PTOAS spells them (include/PTO/IR/PTOAttrs.td at
	// a56b18c3: RoundMode, CmpMode, AtomicType), in the trailing dictionary.
	var dict []string
	if at, ok := op.Attr("init"); ok && (name == "tmatmul.acc" || name == "tgemv.acc") && len(op.Attrs) == 1 {
		f.initMatmul(op, name, at.Val)
		return
	}
	for _, at := range op.Attrs {
		switch {
		case name == "tcvt" && at.Key == "rnd" && at.IsWord:
			dict = append(dict, "rmode = #pto<round_mode "+strings.ToUpper(at.Word)+">")
		case (name == "tcmp" || name == "tcmps") && at.Key == "cmp" && at.IsWord:
			dict = append(dict, "cmpMode = #pto<cmp "+at.Word+">")
		case name == "tstore" && at.Key == "atomic" && at.IsWord && at.Word == "add":
			dict = append(dict, "atomicType = #pto<atomic_type atomic_add>")
		case (name == "tstore" || name == "tmov" || name == "tmov.a2m") && at.Key == "relu" && at.IsWord:
			// ReluPreMode on TStoreOp and TMovOp (PTOOps.td at a56b18c3)
			if at.Word == "normal" {
				dict = append(dict, reluDict)
			}
		case name == "tfillpad" && at.Key == "pad":
			// in the destination's type (fillPads)
		case name == "tci" && at.Key == "descending" || name == "ttri" && at.Key == "upper":
			if !at.Val.Const {
				f.errf(op.Instr.OpSpan, "--to mlir: a computed #%s of %s is not printed", at.Key, name)
				return
			} // printed inside ins (shGen)
		default:
			f.errf(op.Instr.OpSpan, "--to mlir: the attribute #%s of %s is not printed", at.Key, name)
			return
		}
	}
	tail := ""
	if len(dict) > 0 {
		tail = " {" + strings.Join(dict, ", ") + "}"
	}
	var ins, outs, inTy, outTy []string
	in := func(a asm.Arg) {
		switch a.Kind {
		case asm.ArgTile:
			v, ty := f.tile(a)
			ins, inTy = append(ins, v), append(inTy, ty)
		default:
			f.errf(a.Span, "--to mlir: operand %d of %s is not printed", len(ins)+1, name)
		}
	}
	out := func(a asm.Arg) {
		v, ty := f.tile(a)
		outs, outTy = append(outs, v), append(outTy, ty)
	}
	args := op.Args
	for _, a := range args {
		if a.Kind == asm.ArgTile && a.Tile == nil {
			f.errf(a.Span, "--to mlir: unresolved tile operand")
			return
		}
	}
	switch sh {
	case shLoad:
		in0 := f.window(args[1], args[0].Tile)
		out(args[0])
		ins, inTy = []string{in0}, []string{ptTypeOf(args[0].Tile, args[1].GM)}
	case shStore:
		in(args[1])
		if name == "tstore.fp" {
			in(args[2]) // the scaling tile
		}
		outs, outTy = []string{f.window(args[0], args[1].Tile)}, []string{ptTypeOf(args[1].Tile, args[0].GM)}
	case shMMAcc:
		in(args[0])
		in(args[1])
		in(args[2])
		out(args[0])
	case shScalar, shFill:
		out(args[0])
		if sh == shScalar {
			in(args[1])
		}
		s, ty := f.scalar(args[len(args)-1], args[0].Tile.DType)
		ins, inTy = append(ins, s), append(inTy, ty)
	case shMrgSort:
		// format1: ins(src, blockLen : T, i32) outs(dst)
		in(args[1])
		ins, inTy = append(ins, f.cexprAs(args[2].Val, args[2].Span, "i32")), append(inTy, "i32")
		out(args[0])
	case shExtractFP:
		// ins(src, fp, row, col): the scaling tile quantises
		in(args[1])
		in(args[2])
		for _, a := range args[3:5] {
			ins, inTy = append(ins, f.cexpr(a.Val, a.Span)), append(inTy, "index")
		}
		out(args[0])
	case shGen:
		// ins(s {attr} : iN) outs(dst): tci's start has dst's element type
		ty := "i32"
		if name == "tci" {
			if ty = mlirDType(args[0].Tile.DType); ty[0] != 'i' {
				f.errf(op.Instr.OpSpan, "--to mlir: tci into %s is not printed (its start must have the element type, and arith has no unsigned constants)", ty)
				return
			}
		}
		attr := ""
		if at, ok := op.Attr(map[string]string{"tci": "descending", "ttri": "upper"}[name]); ok && at.Val.Val != 0 {
			attr = map[string]string{"tci": " {descending = true}", "ttri": " {upperOrLower = 1 : i32}"}[name]
		}
		out(args[0])
		f.line("pto.%s ins(%s%s : %s) outs(%s : %s)", name, f.cexprAs(args[1].Val, args[1].Span, ty), attr, ty, outs[0], outTy[0])
		return
	case shExtract:
		in(args[1])
		for _, a := range args[2:4] {
			ins, inTy = append(ins, f.cexpr(a.Val, a.Span)), append(inTy, "index")
		}
		out(args[0])
	case shCmps, shSels:
		for _, a := range args[1 : len(args)-1] {
			in(a)
		}
		s, ty := f.scalar(args[len(args)-1], args[1].Tile.DType)
		ins, inTy = append(ins, s), append(inTy, ty)
		out(args[0])
	case shArgRed:
		// trowargmax[.val] [dst,] dstidx, a [, tmp]: ins(a [, tmp]) outs([dst,] dstidx)
		nout := 1
		if ptoName != name {
			nout = 2
		}
		for _, a := range args[nout:] {
			in(a)
		}
		for _, a := range args[:nout] {
			out(a)
		}
	case shRems:
		// trems d, a, s, tmp: ins(a, s, tmp) outs(d)
		in(args[1])
		s, ty := f.scalar(args[2], args[1].Tile.DType)
		ins, inTy = append(ins, s), append(inTy, ty)
		in(args[3])
		out(args[0])
	case shUnary, shBinary, shRed, shMM, shMMBias, shMove, shSel, shCvt, shCmp, shIdx, shSort32, shDequant, shRem, shFillPad:
		for _, a := range args[1:] {
			in(a)
		}
		out(args[0])
	default:
		f.errf(op.Instr.OpSpan, "--to mlir: %s is not printed yet", name)
		return
	}
	if len(f.errs) > 0 {
		return
	}
	f.line("pto.%s ins(%s : %s) outs(%s : %s)%s", ptoName, strings.Join(ins, ", "), strings.Join(inTy, ", "),
		strings.Join(outs, ", "), strings.Join(outTy, ", "), tail)
}

// scalarGM prints `ld` / `st` as PTOAS's load_scalar / store_scalar
// (include/PTO/IR/PTOOps.td at a56b18c3) of the element's linear offset in
// the tensor's argument pointer; registers are index values, the element an
// integer, converted by index_cast.
func (f *fnEmitter) scalarGM(op *asm.COp, a asm.Arg) {
	sp := op.Instr.Span
	if a.Kind != asm.ArgGM || a.HasRank || a.GM.Class != asm.TensorGM || a.GM.DType.IsFloat() || mlirDType(a.GM.DType) != a.GM.DType.String() {
		f.errf(a.Span, "--to mlir: %s of a float, unsigned or non-GM element is not printed", op.Info.Name)
		return
	}
	t := a.GM
	off := f.constant(0, "index")
	for d, x := range a.Idx {
		v := f.cexpr(x, a.Span)
		if d == 0 {
			off = v
			continue
		}
		m := f.fresh("x")
		f.line("%s = arith.muli %s, %s : index", m, off, f.constant(t.Shape[d], "index"))
		s := f.fresh("x")
		f.line("%s = arith.addi %s, %s : index", s, m, v)
		off = s
	}
	ty := t.DType.String()
	if op.Info.Op == asm.OpLd {
		v := f.fresh("s")
		f.line("%s = pto.load_scalar %%%s[%s] : !pto.ptr<%s> -> %s", v, t.Name, off, ty, ty)
		x := f.fresh("x")
		f.line("%s = arith.index_cast %s : %s to index", x, v, ty)
		f.regs[op.Args[0].Slot] = x
		return
	}
	v := f.fresh("s")
	f.line("%s = arith.index_cast %s : index to %s", v, f.cexpr(op.Args[1].Val, sp), ty)
	f.line("pto.store_scalar %s, %%%s[%s] : !pto.ptr<%s>, %s", v, t.Name, off, ty, ty)
}

// sortOp prints the forms PTOAS spells with another op's name:
// `tmrgsort.lists d, tmp, s0, s1 [, s2, s3]` is tmrgsort's format2,
// ins(s0, s1, ..., tmp {exhausted = false}) outs(d, executed), executed a
// vector<4xi16> the op fills (a constant here, as in PTOAS's tests); and
// `tgather.mask d, s #pattern=p` is tgather's mask form (TMrgSortOp::parse,
// TGatherOp::parse in lib/PTO/IR/PTO.cpp at a56b18c3).
func (f *fnEmitter) sortOp(op *asm.COp) {
	d, dTy := f.tile(op.Args[0])
	if op.Info.Name == "tgather.mask" {
		at, ok := op.Attr("pattern")
		if !ok || !at.IsWord {
			f.errf(op.Instr.OpSpan, "--to mlir: tgather.mask without a #pattern word is not printed")
			return
		}
		ins, tys := f.tileOperands(op.Args[1])
		f.line("pto.tgather ins(%s, {maskPattern = #pto.mask_pattern<%s>} : %s) outs(%s : %s)", ins[0], strings.ToUpper(at.Word), tys[0], d, dTy)
		return
	}
	ins, tys := f.tileOperands(append(slices.Clone(op.Args[2:]), op.Args[1])...)
	ex, ok := f.consts["executed"]
	if !ok {
		ex = f.fresh("executed")
		f.consts["executed"] = ex
		fmt.Fprintf(&f.head, "    %s = arith.constant dense<0> : vector<4xi16>\n", ex)
	}
	f.line("pto.tmrgsort ins(%s {exhausted = false} : %s) outs(%s, %s : %s, vector<4xi16>)", strings.Join(ins, ", "), strings.Join(tys, ", "), d, ex, dTy)
}

// tileOperands prints tile operands, in order: their values and types.
func (f *fnEmitter) tileOperands(args ...asm.Arg) (vs, tys []string) {
	for _, a := range args {
		v, ty := f.tile(a)
		vs, tys = append(vs, v), append(tys, ty)
	}
	return vs, tys
}

// quantOp prints `tquant dst, src, scale, tmp [, offset]` as PTOAS's
// pto.tquant ins(src, scale [, offset]) outs(dst): INT8_ASYM with the
// offset, INT8_SYM without (TQuantOp::verify, lib/PTO/IR/PTO.cpp at
// a56b18c3). PTOAS's op has no tmp (the reader makes it src, the in-place
// TQUANT PTOAS emits); a tmp of its own is named by `ptoasm.tmp`, an
// attribute of no loaded dialect that MLIR's verifier and ptoas leave
// alone, holding the tile's SSA name (an attribute holds no operand).
func (f *fnEmitter) quantOp(op *asm.COp) {
	d, dTy := f.tile(op.Args[0])
	srcs, qt := []asm.Arg{op.Args[1], op.Args[2]}, "INT8_SYM"
	if len(op.Args) > 4 {
		srcs, qt = append(srcs, op.Args[4]), "INT8_ASYM"
	}
	ins, tys := f.tileOperands(srcs...)
	attrs := "quant_type = #pto<quant_type " + qt + ">"
	if s, t := op.Args[1], op.Args[3]; t.Tile != s.Tile || t.Tile.Count > 1 && !sameIndex(t.TileIdx, s.TileIdx) {
		tmp, _ := f.tile(t)
		attrs += fmt.Sprintf(", ptoasm.tmp = %q", tmp)
	}
	f.line("pto.tquant ins(%s : %s) outs(%s : %s) {%s}", strings.Join(ins, ", "), strings.Join(tys, ", "), d, dTy, attrs)
}

// sameIndex says whether two array indices are certainly the same: equal
// constants, or the same expression.
func sameIndex(a, b asm.CExpr) bool {
	if a.Src == nil || b.Src == nil {
		return a.Src == nil && b.Src == nil && a.Val == b.Val
	}
	return asm.ExprString(a.Src) == asm.ExprString(b.Src)
}

// cexprAs prints an integer expression as a value of integer type ty.
func (f *fnEmitter) cexprAs(c asm.CExpr, sp asm.Span, ty string) string {
	if c.Const || c.Src == nil {
		return f.constant(c.Val, ty)
	}
	x := f.fresh("x")
	f.line("%s = arith.index_cast %s : index to %s", x, f.cexpr(c, sp), ty)
	return x
}

// rebind prints the three rebinding instructions as PTOAS's level3
// tassign, which yields the rebound handle; later uses in this region name
// it (stmts restores the outer one after a region, where EmitC's in-place
// TASSIGN still holds and the reader's in-place rebinding too). tsubview
// and treshape bind %d at an address computed from %s's current one: %s's
// address plus (row·RowStride + col·ColStride) elements, or %s's address
// (asm.RowColStride, as the machine computes it). PTOAS's own subset and
// treshape are not used: a subset keeps its parent's row pitch, and both
// are read back as static aliases, not run-time rebindings.
func (f *fnEmitter) rebind(op *asm.COp) {
	name, sp := op.Info.Name, op.Instr.Span
	d := op.Args[0]
	if d.Tile.Count > 1 || name != "tassign" && op.Args[1].Tile.Count > 1 {
		f.errf(op.Instr.OpSpan, "--to mlir: %s of a tile array element is not printed", name)
		return
	}
	var x string
	if name == "tassign" {
		x = f.fresh("a")
		f.line("%s = arith.index_cast %s : index to i64", x, f.cexpr(op.Args[1].Val, sp))
	} else {
		s := op.Args[1].Tile
		base, set := f.addrs[s]
		if set && base == "" {
			f.errf(op.Instr.OpSpan, "--to mlir: %s: %%%s was rebound inside a region that has closed, so its address is no SSA value here (not printed)", name, s.Name)
			return
		}
		if !set {
			base = f.constant(s.Addr[0], "i64")
		}
		x = base
		if name == "tsubview" {
			rs, cs := asm.RowColStride(s)
			es := f.constant(int64(s.DType.Size()), "index")
			r, c := f.cexpr(op.Args[2].Val, sp), f.cexpr(op.Args[3].Val, sp)
			rr, cc, off, b, sum := f.fresh("x"), f.fresh("x"), f.fresh("x"), f.fresh("x"), f.fresh("x")
			f.line("%s = arith.muli %s, %s : index", rr, r, f.constant(rs, "index"))
			f.line("%s = arith.muli %s, %s : index", cc, c, f.constant(cs, "index"))
			f.line("%s = arith.addi %s, %s : index", off, rr, cc)
			f.line("%s = arith.muli %s, %s : index", b, off, es)
			f.line("%s = arith.index_cast %s : i64 to index", sum, base)
			idx := f.fresh("x")
			f.line("%s = arith.addi %s, %s : index", idx, sum, b)
			x = f.fresh("a")
			f.line("%s = arith.index_cast %s : index to i64", x, idx)
		}
	}
	v := f.fresh(d.Tile.Name + "_at")
	f.line("%s = pto.tassign %s, %s : %s -> %s", v, f.tiles[d.Tile], x, f.elemType(d.Tile), f.elemType(d.Tile))
	f.tiles[d.Tile] = v
	f.addrs[d.Tile] = x
}
