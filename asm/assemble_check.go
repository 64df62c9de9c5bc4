package asm

import (
	"strconv"
	"strings"
)

// checkOp applies the per-instruction rules that need every operand resolved:
// pipes and event ids of sync ops, GM classes, dtype pairs and static shapes.
func (a *assembler) checkOp(ks *kernelScope, d *opDef, op *COp) bool {
	ok := true
	info := op.Info
	kind := ks.k.Kind
	args := op.Args
	bad := func(i int, format string, xs ...any) *Diagnostic {
		ok = false
		sp := op.Instr.OpSpan
		if i >= 0 && i < len(args) {
			sp = args[i].Span
		}
		return a.errs.Add(sp, format, xs...)
	}
	// Sync operands.
	for i, arg := range args {
		if arg.Kind != ArgPipe {
			continue
		}
		p := arg.Pipe
		switch {
		case p == PipeALL && info.Name != "pipe_barrier":
			bad(i, "%s cannot name ALL (only pipe_barrier drains every pipe)", info.Name)
		case p == PipeS && info.Name == "pipe_barrier":
			bad(i, "pipe_barrier S is a hardware error: the scalar unit is always in order")
		case p == PipeS && info.Name == "ffts_set":
			bad(i, "ffts_set names the pipe whose earlier work must finish; S is not allowed")
		case kind != CoreInvalid && !kind.HasPipe(p):
			bad(i, "an %s core has no %s pipe", kind, p)
		}
	}
	eventID := func(i int, hi int64, what string) {
		if i < len(args) && args[i].Kind == ArgScalar && args[i].Val.Const {
			if v := args[i].Val.Val; v < 0 || v > hi {
				bad(i, "%s id %d out of range 0..%d", what, v, hi)
			}
		}
	}
	switch info.Name {
	case "set_flag", "wait_flag":
		eventID(2, NumEventIDs-1, "event")
	case "ffts_set":
		eventID(1, NumFFTSIDs-1, "ffts flag")
	case "ffts_wait":
		eventID(0, NumFFTSIDs-1, "ffts flag")
	}
	// GM classes.
	for i, arg := range args {
		if arg.Kind != ArgGM || arg.GM == nil {
			continue
		}
		c := arg.GM.Class
		switch {
		case info.Name == "tpush" || info.Name == "tpop" || isFifoSlotOp(info.Op):
			if c != TensorFIFO {
				bad(i, "%s needs a fifo; @%s is a %s", info.Name, arg.GM.Name, c).Note(arg.GM.Decl.Span, "declared here")
			}
		case info.Name == "tnotify" || info.Name == "twait" || info.Name == "ttest":
			if c != TensorSignal {
				bad(i, "%s needs a signal; @%s is a %s", info.Name, arg.GM.Name, c).Note(arg.GM.Decl.Span, "declared here")
			}
		case c == TensorFIFO && (info.Op == OpTload || info.Op == OpTstore):
			// The slot a talloc or a tpop.slot made current (isa_view.go).
		case c == TensorFIFO:
			bad(i, "fifo @%s is only accessed with tpush and tpop, or with tload/tstore of the slot talloc or tpop.slot claimed", arg.GM.Name).Note(arg.GM.Decl.Span, "declared here")
		}
	}
	if !ok {
		return false
	}
	tile := func(i int) *TileInfo {
		if i < len(args) && args[i].Kind == ArgTile {
			return args[i].Tile
		}
		return nil
	}
	sameDType := func(i, j int) {
		x, y := tile(i), tile(j)
		if x != nil && y != nil && x.DType != y.DType {
			bad(j, "%s: %%%s is %s but %%%s is %s; the dtypes must match", info.Name, y.Name, y.DType, x.Name, x.DType)
		}
	}
	sameShape := func(i, j int) {
		x, y := tile(i), tile(j)
		// A valid region read from registers is checked by the machine.
		if x != nil && y != nil && !x.DynValid() && !y.DynValid() && (x.VRows != y.VRows || x.VCols != y.VCols) {
			bad(j, "%s: %%%s has valid shape [%d, %d] but %%%s has [%d, %d]", info.Name, y.Name, y.VRows, y.VCols, x.Name, x.VRows, x.VCols)
		}
	}
	if info.Family == FamView {
		a.checkView(op, bad)
	}
	locDecided := false
	if !op.Instr.StandIn {
		if info.DTypes != nil {
			checkDTypes(info, len(args), tile, bad)
		}
		locDecided = checkLocDTypes(d, op, bad)
	}
	if info.Op == OpTquant {
		checkQuantOffset(op, bad)
	}
	if info.Op == OpTci {
		// TCI's CheckValid (include/pto/npu/a2a3/TCI.hpp:24 at 3186c381)
		if t := tile(0); t != nil && t.Rows != 1 {
			bad(0, "tci: %%%s has %d rows; a2a3 takes a one-row tile only (pto-isa include/pto/npu/a2a3/TCI.hpp:24 at 3186c381 static_asserts)", t.Name, t.Rows)
		}
	}
	if a, ok := op.Attr(attrRelu.key); ok && a.Word == "normal" && len(args) > 1 {
		// ReluPreMode is a fixpipe stage: TSTORE and TMOV take it only on
		// their Acc paths (a2a3/TStore.hpp, TMov.hpp at 3186c381).
		if t := tile(1); t != nil && t.Loc != LocAcc {
			bad(1, "%s #relu=normal: the fixpipe's relu applies to a move out of L0C; %%%s is %s", info.Name, t.Name, t.Loc)
		}
	}
	switch d.check {
	case chkSame:
		for i := 1; i < len(args); i++ {
			sameDType(0, i)
			sameShape(0, i)
		}
	case chkSameTmp:
		for i := 1; i < len(args)-1; i++ {
			sameDType(0, i)
			sameShape(0, i)
		}
	case chkSameDType:
		for i := 1; i < len(args); i++ {
			sameDType(0, i)
		}
	case chkCvt:
		sameShape(0, 1)
	case chkCmp:
		sameDType(1, 2)
		sameShape(1, 2)
		sameShape(0, 1)
	case chkSel:
		sameShape(0, 1)
		for i := 2; i < len(args); i++ {
			sameDType(0, i)
			sameShape(0, i)
		}
	case chkMatmul:
		c, x, y := tile(0), tile(1), tile(2)
		if c != nil && x != nil && y != nil {
			want, pairOK := matmulOut(x.DType, y.DType)
			if !pairOK {
				bad(2, "%s: no cube mode for %s × %s (have f16×f16, bf16×bf16, f32×f32 → f32, i8×i8 → i32)", info.Name, x.DType, y.DType)
			} else if c.DType != want {
				bad(0, "%s: %s × %s accumulates in %s, but %%%s is %s", info.Name, x.DType, y.DType, want, c.Name, c.DType)
			}
			if x.DynValid() || y.DynValid() || c.DynValid() {
				// Shapes read from registers: the machine checks them.
			} else if x.VCols != y.VRows {
				bad(2, "%s: K mismatch: %%%s is [%d, %d] (M×K) but %%%s is [%d, %d] (K×N)", info.Name, x.Name, x.VRows, x.VCols, y.Name, y.VRows, y.VCols)
			} else if c.VRows != x.VRows || c.VCols != y.VCols {
				bad(0, "%s: [%d, %d] × [%d, %d] gives [%d, %d], but %%%s is [%d, %d]", info.Name, x.VRows, x.VCols, y.VRows, y.VCols,
					x.VRows, y.VCols, c.Name, c.VRows, c.VCols)
			}
			if b := tile(3); b != nil && b.DType != c.DType {
				bad(3, "%s: bias %%%s is %s, the accumulator is %s", info.Name, b.Name, b.DType, c.DType)
			}
		}
	case chkMove:
		// FIX converts L0C's f32/i32 on the way out, mat→bias widens f16:
		// the location rows decide those pairs.
		// UB to UB copies bytes, of any two types of one size
		// (a2a3/TMov.hpp:83-88).
		bitCopy := tile(0) != nil && tile(1) != nil && tile(0).Loc == LocVec && tile(1).Loc == LocVec && tile(0).DType.Size() == tile(1).DType.Size()
		if !locDecided && !bitCopy && !(tile(1) != nil && tile(1).Loc == LocAcc) {
			sameDType(0, 1)
		}
		// Every path of pto-isa's plain TMOV asserts the tiles' static
		// shapes equal (a2a3/TMov.hpp:139-141); the valid regions may
		// differ (vec→vec copies the smaller, TMovToVec 119-124). A
		// stand-in carries another op's shapes.
		if x, y := tile(0), tile(1); x != nil && y != nil && !op.Instr.StandIn && (x.Rows != y.Rows || x.Cols != y.Cols) {
			bad(1, "%s: %%%s is [%d, %d] but %%%s is [%d, %d]; a2a3 takes equal shapes only (pto-isa include/pto/npu/a2a3/TMov.hpp:139-141 at 3186c381 static_asserts)",
				info.Name, y.Name, y.Rows, y.Cols, x.Name, x.Rows, x.Cols)
		}
	case chkExtract:
		dst, src := tile(0), tile(1)
		if dst != nil && src != nil {
			if src.Loc != LocAcc {
				sameDType(0, 1)
			}
			big, small := src, dst
			if info.Name == "tinsert" {
				big, small = dst, src
			}
			if args[2].Val.Const && args[3].Val.Const && !small.DynValid() {
				r, c := args[2].Val.Val, args[3].Val.Val
				if r < 0 || c < 0 || r+int64(small.VRows) > int64(big.Rows) || c+int64(small.VCols) > int64(big.Cols) {
					bad(2, "%s: window [%d:%d, %d:%d] is outside %%%s [%d, %d]", info.Name, r, r+int64(small.VRows), c,
						c+int64(small.VCols), big.Name, big.Rows, big.Cols)
				}
			}
		}
	case chkTransfer:
		a.checkTransfer(op, bad)
	}
	if op.Unit != UnitNone && info.Family != FamCube {
		// The unit flag couples the cube with FIX's read of L0C; a store or
		// move of another location has no unit to hand over.
		if src := tile(1); src != nil && src.Loc != LocAcc {
			bad(1, "#unit needs an acc source (the FIX read of L0C); %%%s is %s", src.Name, src.Loc)
		}
	}
	return ok
}

func matmulOut(x, y DType) (DType, bool) {
	switch {
	case x == F16 && y == F16, x == BF16 && y == BF16, x == F32 && y == F32:
		return F32, true
	case x == I8 && y == I8:
		return I32, true
	}
	return DTInvalid, false
}

// checkTransfer checks a GM window moved through a tile: dtypes agree and, when
// the start is static, the window (the tile's valid shape, or #rows/#cols) fits.
func (a *assembler) checkTransfer(op *COp, bad func(int, string, ...any) *Diagnostic) {
	var t *TileInfo
	var gms []int
	for i, arg := range op.Args {
		switch arg.Kind {
		case ArgTile:
			if t == nil {
				t = arg.Tile
			}
		case ArgGM:
			gms = append(gms, i)
		}
	}
	if t == nil {
		return
	}
	rows, cols := int64(t.VRows), int64(t.VCols)
	if t.DynValid() {
		// The window is the valid region at run time, at most the declared
		// shape: a start that fits the largest may still be right for the
		// real one (a ragged last tile), so only the machine can tell.
		rows, cols = 1, 1
	}
	if at, ok := op.Attr("rows"); ok && at.Val.Const {
		rows = at.Val.Val
	}
	if at, ok := op.Attr("cols"); ok && at.Val.Const {
		cols = at.Val.Val
	}
	for _, i := range gms {
		g := op.Args[i].GM
		if g == nil {
			continue
		}
		// FIX converts an accumulator on its way to GM; comm ops stage any dtype.
		if g.DType != t.DType && t.Loc != LocAcc && op.Info.Family != FamComm {
			bad(i, "%s: @%s is %s but %%%s is %s", op.Info.Name, g.Name, g.DType, t.Name, t.DType).Note(g.Decl.Span, "declared here")
			continue
		}
		if len(op.Args[i].Idx) == 0 || len(g.Shape) == 0 || g.Bytes == 0 {
			// Bytes == 0: the declaration was refused and its shape is a
			// placeholder; a window outside it would be a second error
			// for the same mistake.
			continue
		}
		start := make([]int64, len(op.Args[i].Idx))
		static := true
		for d, c := range op.Args[i].Idx {
			static = static && c.Const
			start[d] = c.Val
		}
		if !static {
			continue
		}
		n := len(g.Shape)
		if n == 1 {
			if start[0]+rows*cols > g.Shape[0] {
				bad(i, "%s: %d elements from @%s[%d] run past its end (%d)", op.Info.Name, rows*cols, g.Name, start[0], g.Shape[0]).
					Note(g.Decl.Span, "declared here")
			}
			continue
		}
		if start[n-2]+rows > g.Shape[n-2] || start[n-1]+cols > g.Shape[n-1] {
			bad(i, "%s: the [%d, %d] window at @%s[%s] runs outside [%d, %d]", op.Info.Name, rows, cols, g.Name,
				joinInts(start), g.Shape[n-2], g.Shape[n-1]).Note(g.Decl.Span, "declared here")
		}
	}
}

func joinInts(xs []int64) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.FormatInt(x, 10)
	}
	return strings.Join(parts, ", ")
}

// checkTypeAnn compares `: !pto.tile<...>` / `!pto.tile_buf<...>` annotations with
// the tile operands' declarations. A single tile type describes the destination
// (the first tile operand); a list pairs with the tile operands in order.
func (a *assembler) checkTypeAnn(in *Instr, op *COp) {
	if in.Type == nil {
		return
	}
	var tiles []*TileInfo
	for _, arg := range op.Args {
		if arg.Kind == ArgTile {
			tiles = append(tiles, arg.Tile)
		}
	}
	n := 0
	for _, ty := range in.Type.Types {
		if ty == nil || (ty.Kind != "tile" && ty.Kind != "tile_buf") {
			continue
		}
		if n >= len(tiles) {
			break
		}
		a.checkTileType(ty, tiles[n])
		n++
	}
}

func (a *assembler) checkTileType(ty *Type, t *TileInfo) {
	var loc, dtype, rows, cols, vrows, vcols string
	var pos []string
	for _, p := range ty.Params {
		switch strings.ToLower(p.Key) {
		case "":
			pos = append(pos, p.Val)
		case "loc":
			loc = p.Val
		case "dtype":
			dtype = p.Val
		case "rows":
			rows = p.Val
		case "cols":
			cols = p.Val
		case "v_row", "vrow", "valid_rows":
			vrows = p.Val
		case "v_col", "vcol", "valid_cols":
			vcols = p.Val
		}
	}
	// Positional: [loc,] dtype, rows, cols (pto-isa's `!pto.tile<loc=vec, f32, 16, 16>`).
	if len(pos) > 0 && loc == "" {
		if _, isLoc := ParseLoc(pos[0]); isLoc {
			loc, pos = pos[0], pos[1:]
		}
	}
	for i, v := range pos {
		switch i {
		case 0:
			if dtype == "" {
				dtype = v
			}
		case 1:
			if rows == "" {
				rows = v
			}
		case 2:
			if cols == "" {
				cols = v
			}
		}
	}
	report := func(what, said, is string) {
		a.errs.Add(ty.Span, "type annotation says %s=%s but %%%s is declared %s", what, said, t.Name, is).
			Note(t.Decl.Span, "%%%s declared here", t.Name)
	}
	if loc != "" {
		if l, ok := ParseLoc(loc); !ok {
			a.errs.Add(ty.Span, "unknown location %s in type annotation", loc)
		} else if l != t.Loc {
			report("loc", loc, t.Loc.String())
		}
	}
	if dtype != "" {
		if dt, ok := ParseDType(dtype); !ok {
			a.errs.Add(ty.Span, "unknown dtype %s in type annotation", dtype)
		} else if dt != t.DType {
			report("dtype", dtype, t.DType.String())
		}
	}
	dim := func(what, s string, want int) {
		if s == "" || s == "?" {
			return
		}
		v, err := strconv.ParseInt(s, 0, 64)
		if err != nil {
			a.errs.Add(ty.Span, "%s=%s in type annotation is not a number", what, s)
			return
		}
		if v != int64(want) {
			report(what, s, strconv.Itoa(want))
		}
	}
	dim("rows", rows, t.Rows)
	dim("cols", cols, t.Cols)
	dim("v_row", vrows, t.VRows)
	dim("v_col", vcols, t.VCols)
}
