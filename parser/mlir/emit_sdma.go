package mlir

import (
	"strings"

	"github.com/ptoasm/ptoasm/asm"
)

// SDMA copies print through PTOAS's async session (include/PTO/IR/PTOOps.td
// at a56b18c3: build_async_session, tput_async, tget_async,
// wait_async_event). The session needs a UB scratch tile and a GM i8
// workspace that PTO-AS does not have: the scratch is a 32-byte vec tile
// above every vec tile of the kernel, the workspace an i8 pointer argument.
// The reader keeps a session's scratch and workspace as a tile and a tensor
// no instruction names, so a program that has such ones reuses them and the
// round trip stays a fixed point.
const (
	sdmaScratch   = "sdma_scratch"
	sdmaWorkspace = "sdma_workspace"
)

// usesSDMA says whether a kernel hands copies to SDMA.
func usesSDMA(k *asm.KernelInfo) bool {
	for _, op := range k.Ops {
		if n := op.Info.Name; n == "tput_async" || n == "tget_async" {
			return true
		}
	}
	return false
}

// named says whether an instruction of k names tile t or tensor g.
func named(k *asm.KernelInfo, t *asm.TileInfo, g *asm.TensorInfo) bool {
	for _, op := range k.Ops {
		for _, a := range op.Args {
			if t != nil && a.Tile == t || g != nil && a.GM == g {
				return true
			}
		}
	}
	return false
}

// sdmaWorkspaceTensor is the program's workspace: an i8 GM tensor no
// instruction names (what the reader makes of a session's workspace, or of
// one a translation added), or nil.
func (e *emitter) sdmaWorkspaceTensor() *asm.TensorInfo {
	for _, t := range e.obj.Tensors {
		if t.Class != asm.TensorGM || t.DType.String() != "i8" {
			continue
		}
		free := true
		for _, k := range e.obj.Kernels {
			free = free && !named(k, nil, t)
		}
		if free {
			return t
		}
	}
	return nil
}

// session prints the kernel's async session at the start of its body:
// the scratch tile (reused when the kernel has one) and
// build_async_session. It returns false, with an error, when no UB is
// certainly free for the scratch.
func (f *fnEmitter) session() bool {
	var vec []*asm.TileInfo
	end := int64(0)
	for _, t := range f.k.Tiles {
		if t.Loc != asm.LocVec {
			continue
		}
		if t.Variable() {
			f.errf(t.Decl.Span, "--to mlir: the SDMA session's scratch tile is not printed beside %%%s: a tile bound at run time may lie anywhere in UB", t.Name)
			return false
		}
		vec = append(vec, t)
		for _, a := range t.Addr {
			end = max(end, a+t.Bytes)
		}
	}
	// A scratch the kernel has: an i8 tile of at least 8 bytes that no
	// instruction names and no other tile overlaps (SDMA writes it).
	var scratch *asm.TileInfo
	for _, t := range vec {
		if scratch != nil || t.DType.String() != "i8" || t.Count != 1 || t.Bytes < 8 || named(f.k, t, nil) {
			continue
		}
		alone := true
		for _, o := range vec {
			for _, a := range o.Addr {
				alone = alone && (o == t || a+o.Bytes <= t.Addr[0] || t.Addr[0]+t.Bytes <= a)
			}
		}
		if alone {
			scratch = t
		}
	}
	ws := "%" + sdmaWorkspace
	if w := f.sdmaWorkspaceTensor(); w != nil {
		ws = "%" + w.Name
	}
	name := "%" + sdmaScratch
	ty := "!pto.tile_buf<loc=vec, dtype=i8, rows=1, cols=32, v_row=1, v_col=32, blayout=row_major, slayout=none_box, fractal=512, pad=0>"
	if scratch != nil {
		name, ty = f.tiles[scratch], f.elemType(scratch)
	} else {
		at := (end + 31) / 32 * 32
		if at+32 > asm.SpaceCapacity(asm.UB) {
			f.errf(f.k.Decl.Span, "--to mlir: the SDMA session's 32-byte scratch tile does not fit above the kernel's vec tiles (UB ends at %d)", asm.SpaceCapacity(asm.UB))
			return false
		}
		if f.used[name] {
			name = f.fresh(sdmaScratch)
		}
		f.used[name] = true
		f.line("%s = pto.alloc_tile addr = %s : %s", name, f.constant(at, "i64"), ty)
	}
	f.sdma = f.fresh("session")
	f.line("%s = pto.build_async_session(%s, %s : %s, !pto.ptr<i8>) -> !pto.async_session", f.sdma, name, ws, ty)
	return true
}

// asyncCopy prints `%e = tput_async @D[..], @S[..] #rows=1 #cols=N` (and
// tget_async) as the copy of two [1, N] partitions, which PTOAS takes as
// static flat contiguous 1-D GM views (verifyAsyncFlatContiguous1DGMViewLike,
// lib/PTO/IR/PTO.cpp at a56b18c3). The event is an SSA value the register
// stands for until a wait reads it.
func (f *fnEmitter) asyncCopy(op *asm.COp) {
	name := op.Info.Name
	rows, cols := int64(1), int64(0)
	for _, at := range op.Attrs {
		if !at.Val.Const {
			f.errf(op.Instr.OpSpan, "--to mlir: %s with a computed #%s is not printed", name, at.Key)
			return
		}
		switch at.Key {
		case "rows":
			rows = at.Val.Val
		case "cols":
			cols = at.Val.Val
		}
	}
	if rows != 1 || cols <= 0 {
		f.errf(op.Instr.OpSpan, "--to mlir: %s of %d rows is not printed (PTOAS copies flat contiguous 1-D views; give one row)", name, rows)
		return
	}
	if _, isIdx := f.regs[op.Args[0].Slot]; isIdx {
		f.errf(op.Instr.OpSpan, "--to mlir: %s: its event register also holds an integer, which is not printed", name)
		return
	}
	g := &asm.TileInfo{DType: op.Args[1].GM.DType, Rows: 1, Cols: int(cols), VRows: 1, VCols: int(cols)}
	var ps, ts []string
	for _, a := range op.Args[1:3] {
		if a.GM.Class != asm.TensorGM {
			f.errf(a.Span, "--to mlir: %s of a %s tensor is not printed", name, a.GM.Class)
			return
		}
		ps, ts = append(ps, f.window(a, g)), append(ts, ptTypeOf(g, a.GM))
	}
	if len(f.errs) > 0 {
		return
	}
	v := f.fresh("event")
	f.line("%s = pto.%s(%s, %s, %s : %s, %s, !pto.async_session) -> !pto.async_event", v, name, ps[0], ps[1], f.sdma, ts[0], ts[1])
	f.events[op.Args[0].Slot] = v
}

// waitAsync prints `wait_async %e` as wait_async_event of the event the
// register stands for (in this region or an enclosing one).
func (f *fnEmitter) waitAsync(op *asm.COp) {
	c := op.Args[0].Val
	slot := -1
	if r, ok := c.Src.(*asm.Ref); ok && !c.Const && r.Index == nil {
		for s, n := range f.k.Regs {
			if n == r.Name {
				slot = s
			}
		}
	}
	ev := f.events[slot]
	if slot < 0 || ev == "" {
		f.errf(op.Instr.OpSpan, "--to mlir: wait_async of %s is not printed: only a register a tput_async/tget_async of this region (or an enclosing one) set names an SSA event", strings.TrimSpace(asm.ExprString(c.Src)))
		return
	}
	f.line("%s = pto.wait_async_event(%s, %s : !pto.async_event, !pto.async_session) -> i1", f.fresh("done"), ev, f.sdma)
}
