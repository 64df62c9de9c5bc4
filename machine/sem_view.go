package machine

import (
	"fmt"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/memory"
	"github.com/ptoasm/ptoasm/pipes"
)

// Tile views (docs/language.md "Tile views"): tassign, tsubview and
// treshape rebind a tile to other bytes of its buffer, and a tile may take
// its valid region from registers. On A2/A3 a binding is the scalar storing
// an address in the tile object (pto-isa include/pto/npu/a2a3/TAssign.hpp,
// TSubView.hpp, TReshape.hpp at 3186c381): no pipe, no data access. So the
// machine does it at issue, in program order, and resolves every later
// instruction naming the tile with the binding and the registers of that
// moment: each instance's operand is a view, a copy of the declaration with
// that address and valid region, and everything downstream (data, cost,
// the accesses the hazard detector sees) works on the real bytes.

// viewKey names one resolved view: views are immutable, so an instruction
// that names the same binding again (a ring slot, the next trip) reuses it.
type viewKey struct {
	t      *asm.TileInfo
	idx    int64
	addr   int64
	vr, vc int
}

// maxViews bounds the view cache; past it views are made afresh (a kernel
// that slides a view over a whole buffer makes at most a few thousand).
const maxViews = 1 << 16

// bindView executes tassign, tsubview or treshape on the scalar unit.
func (c *core) bindView(op *asm.COp) bool {
	m := c.m
	if len(op.Args) < 2 || op.Args[0].Kind != asm.ArgTile || op.Args[0].Tile == nil {
		m.fail(c.faultK(FaultBadOperand, op, asm.PipeS, "%s needs a tile to bind", op.Info.Name))
		return false
	}
	dst := op.Args[0].Tile
	di, ok := c.elemIndex(op, &op.Args[0])
	if !ok {
		return false
	}
	var addr int64
	switch op.Info.Op {
	case asm.OpTassign:
		addr = op.Args[1].Val.Eval(&c.env)
		// TASSIGN's checks (docs/isa/TASSIGN.md SA-0353, SA-0354): a runtime
		// address the hardware cannot use is a fault, not a finding.
		if why := asm.CheckBinding(dst, addr); why != "" {
			m.fail(c.faultK(FaultOutOfBounds, op, asm.PipeS, "tassign %%%s: %s", dst.Name, why))
			return false
		}
	default:
		src := &op.Args[1]
		if src.Kind != asm.ArgTile || src.Tile == nil {
			m.fail(c.faultK(FaultBadOperand, op, asm.PipeS, "%s needs a source tile", op.Info.Name))
			return false
		}
		si, ok := c.elemIndex(op, src)
		if !ok {
			return false
		}
		if addr, ok = c.tileAddr(op, src.Tile, si); !ok {
			return false
		}
		if op.Info.Op == asm.OpTsubview {
			r, col := argInt(c, op, 2), argInt(c, op, 3)
			if r < 0 || r > 65535 || col < 0 || col > 65535 {
				m.fail(c.faultK(FaultBadOperand, op, asm.PipeS, "tsubview: (%d, %d) outside 0..65535 (pto-isa's uint16_t rowIdx, colIdx)", r, col))
				return false
			}
			rs, cs := asm.RowColStride(src.Tile)
			addr += (r*rs + col*cs) * int64(src.Tile.DType.Size())
		}
		// The view's bytes are checked where an instruction uses them
		// (tileView): TSUBVIEW's manual mode checks nothing, and a view whose
		// declared shape runs past the buffer's end is legal while its
		// valid region stays inside.
	}
	c.setBind(dst, di, addr)
	c.charge(m.prof.ScalarCycles(pipes.ScalarOp, 0))
	return true
}

// elemIndex evaluates a tile operand's array index and checks it.
func (c *core) elemIndex(op *asm.COp, a *asm.Arg) (int64, bool) {
	t := a.Tile
	idx := int64(0)
	if t.IsArray {
		idx = a.TileIdx.Eval(&c.env)
	}
	if idx < 0 || idx >= int64(len(t.Addr)) {
		c.m.fail(c.faultK(FaultOutOfBounds, op, op.Pipe, "tile index %%%s[%d] outside 0..%d", t.Name, idx, len(t.Addr)-1))
		return 0, false
	}
	return idx, true
}

// setBind records that element idx of t now lives at addr.
func (c *core) setBind(t *asm.TileInfo, idx, addr int64) {
	for len(c.bind) <= t.Index {
		c.bind = append(c.bind, nil)
	}
	b := c.bind[t.Index]
	if len(b) != len(t.Addr) {
		// First binding of t in this block: the other elements keep their
		// declared addresses (none, -1, when the tile was never placed).
		b = make([]int64, len(t.Addr))
		for i := range b {
			b[i] = -1
			if !t.Unplaced {
				b[i] = t.Addr[i]
			}
		}
		c.bind[t.Index] = b
	}
	b[idx] = addr
}

// tileAddr is where element idx of t lives now: its last binding on this
// core, or its declared address.
func (c *core) tileAddr(op *asm.COp, t *asm.TileInfo, idx int64) (int64, bool) {
	addr := int64(-1)
	if t.Index < len(c.bind) && len(c.bind[t.Index]) == len(t.Addr) {
		addr = c.bind[t.Index][idx]
	} else if !t.Unplaced {
		addr = t.Addr[idx]
	}
	if addr < 0 {
		c.m.fail(c.faultK(FaultBadOperand, op, op.Pipe, "%s is used before a tassign, tsubview or treshape binds it (it was declared without an address)", viewName(t, idx)))
		return 0, false
	}
	return addr, true
}

func viewName(t *asm.TileInfo, idx int64) string {
	if t.IsArray {
		return fmt.Sprintf("%%%s[%d]", t.Name, idx)
	}
	return "%" + t.Name
}

// tileView resolves a variable tile operand for this instance: its binding and
// its valid region now. The valid region must lie inside the buffer: the
// accesses are its bytes, which is what the detector checks and what the
// data path touches.
func (c *core) tileView(op *asm.COp, a *asm.Arg) (*asm.TileInfo, int64, bool) {
	m := c.m
	t := a.Tile
	idx, ok := c.elemIndex(op, a)
	if !ok {
		return nil, 0, false
	}
	addr, ok := c.tileAddr(op, t, idx)
	if !ok {
		return nil, 0, false
	}
	vr, vc := t.VRows, t.VCols
	for _, d := range [2]struct {
		x     *asm.CExpr
		v     *int
		limit int
		what  string
	}{{t.DynVRows, &vr, t.Rows, "rows"}, {t.DynVCols, &vc, t.Cols, "cols"}} {
		if d.x == nil {
			continue
		}
		v := d.x.Eval(&c.env)
		if v < 1 || v > int64(d.limit) {
			m.fail(c.faultK(FaultBadOperand, op, op.Pipe, "%s: valid %s %d outside 1..%d", viewName(t, idx), d.what, v, d.limit))
			return nil, 0, false
		}
		*d.v = int(v)
	}
	k := viewKey{t, idx, addr, vr, vc}
	if v := m.views[k]; v != nil {
		return v, addr, true
	}
	l := memory.TileLayout(t)
	end := addr + l.Offset(vr-1, vc-1) + int64(t.DType.Size())
	capacity := m.prof.Mem[t.Space]
	if capacity <= 0 {
		capacity = asm.SpaceCapacity(t.Space)
	}
	if addr < 0 || end > capacity {
		m.fail(c.faultK(FaultOutOfBounds, op, op.Pipe, "%s bound at %#x: its valid region [%d, %d] ends at %#x, past the end of %s (%#x bytes)",
			viewName(t, idx), addr, vr, vc, end, t.Space, capacity))
		return nil, 0, false
	}
	v := *t
	v.Of, v.Addr, v.Count, v.IsArray = t, []int64{addr}, 1, false
	v.VRows, v.VCols, v.DynVRows, v.DynVCols = vr, vc, nil, nil
	v.Rebound, v.Unplaced = false, false
	if t.IsArray {
		v.Name = fmt.Sprintf("%s[%d]", t.Name, idx)
	}
	if len(m.views) < maxViews {
		if m.views == nil {
			m.views = make(map[viewKey]*asm.TileInfo)
		}
		m.views[k] = &v
	}
	return &v, addr, true
}

// resolveVar resolves the operands of an instruction with a tile whose
// valid region reads registers: its tiles first, so that its GM windows take
// the first tile's valid shape of this instance.
func (c *core) resolveVar(op *asm.COp, e *entry) bool {
	rows, cols := int64(1), int64(1)
	first := true
	for i := range op.Args {
		if op.Args[i].Kind != asm.ArgTile {
			continue
		}
		if !c.resolveArg(op, &op.Args[i], &e.args[i], e, i, 0, 0, nil) {
			return false
		}
		if t := e.args[i].Tile; first && t != nil {
			rows, cols, first = int64(t.VRows), int64(t.VCols), false
		}
	}
	for i := range op.Args {
		if op.Args[i].Kind == asm.ArgTile {
			continue
		}
		if !c.resolveArg(op, &op.Args[i], &e.args[i], e, i, rows, cols, nil) {
			return false
		}
	}
	return true
}

// fifoSlot executes the fifo's GlobalData instructions (asm/isa_view.go):
// talloc and tpop.slot make a slot current, tpush.slot and tfree signal
// ready and free with the FFTS ids tpush and tpop use, on the pipes pto-isa's
// record() and free() name (TPush.hpp: FIX from the AIC, MTE3 from an AIV;
// free on MTE2).
func (c *core) fifoSlot(op *asm.COp) bool {
	m := c.m
	code := op.Info.Op
	push := code == asm.OpTalloc || code == asm.OpTpushSlot
	fp, ok := c.fifoSetup(op, 0, push)
	if !ok {
		return false
	}
	f := fp.f
	cur := &c.fifoCur[f.Index]
	claim := code == asm.OpTalloc || code == asm.OpTpopSlot
	claimer, releaser := "tpop", "tfree"
	if push {
		claimer, releaser = "talloc", "tpush"
	}
	if claim && *cur >= 0 {
		m.fail(c.faultK(FaultFIFO, op, asm.PipeS, "fifo misuse: %s @%s while slot %d is still held (release it with %s @%s first)",
			op.Info.Name, f.Name, *cur%fp.slots, releaser, f.Name))
		return false
	}
	if !claim && *cur < 0 {
		m.fail(c.faultK(FaultFIFO, op, asm.PipeS, "fifo misuse: %s @%s holds no slot (%s claims one)", op.Info.Name, f.Name, claimer))
		return false
	}
	c.micro, c.mi = c.micro[:0], 0
	set := func(p asm.Pipe, id int64) {
		mc := c.addMicro(mEntry, p)
		mc.e.kind, mc.e.op, mc.e.id, mc.e.mode = enFFTSSet, op, int32(id), 2
	}
	switch code {
	case asm.OpTalloc:
		n := fp.next(c, true)
		if n >= fp.slots {
			mc := c.addMicro(mCrossWait, asm.PipeS)
			mc.e.op, mc.e.id = op, int32(fp.id+1)
		}
		*cur = n
	case asm.OpTpushSlot:
		p := asm.PipeMTE3
		if c.kind != asm.CoreAIV {
			p = asm.PipeFIX
		}
		set(p, fp.id)
		*cur = -1
	case asm.OpTpopSlot:
		mc := c.addMicro(mCrossWait, asm.PipeS)
		mc.e.op, mc.e.id = op, int32(fp.id)
		*cur = fp.next(c, false)
	case asm.OpTfree:
		set(asm.PipeMTE2, fp.id+1)
		*cur = -1
	}
	c.tick()
	return true
}

// resolveSlot resolves `@F[i, j]` in a tload or tstore: element (i, j) of
// the slot this core's talloc or tpop.slot made current, a window that
// must stay inside the slot.
func (c *core) resolveSlot(op *asm.COp, a *asm.Arg, o *Operand, e *entry, i int, rows, cols int64) bool {
	m := c.m
	f := a.GM
	n := int64(-1)
	if f.Index < len(c.fifoCur) {
		n = c.fifoCur[f.Index]
	}
	if n < 0 {
		m.fail(c.faultK(FaultFIFO, op, op.Pipe, "fifo misuse: %s of @%s outside a slot (talloc or tpop @%s claims one)", op.Info.Name, f.Name, f.Name))
		return false
	}
	if len(a.Idx) != 2 || len(f.Shape) != 2 {
		m.fail(c.faultK(FaultBadOperand, op, op.Pipe, "@%s: a fifo slot is indexed [row, col]", f.Name))
		return false
	}
	r0, c0 := a.Idx[0].Eval(&c.env), a.Idx[1].Eval(&c.env)
	if r0 < 0 || c0 < 0 || r0+rows > f.Shape[0] || c0+cols > f.Shape[1] {
		m.fail(c.faultK(FaultOutOfBounds, op, op.Pipe, "the [%d, %d] window at @%s[%d, %d] runs outside the slot [%d, %d]", rows, cols, f.Name, r0, c0, f.Shape[0], f.Shape[1]))
		return false
	}
	slots := f.Attrs["slots"]
	if slots <= 0 {
		slots = 2
	}
	fp := fifoPlan{f: f, ring: m.ring(f, slots, f.Shape[0]), slots: slots, slotRows: f.Shape[0], block: c.env.Block}
	g := *a
	g.GM, g.Idx, g.HasRank = fp.ring, nil, false
	off, ok := c.gmWindow(op, &g, c.rank.id, rows, cols, fp.slotRow(n)+r0, c0)
	if !ok {
		return false
	}
	o.GM, o.Off = fp.ring, off
	o.Buf = m.ranks[c.rank.id].gm[f.Index].buf
	o.RowStride = lastDim(f) * int64(f.DType.Size())
	e.argRank[i] = int32(c.rank.id)
	e.winR[i], e.winC[i] = int32(rows), int32(cols)
	return true
}

// TileAddr is where element idx of t lives now on a core: its last binding
// there, or its declared address; ok is false when the tile was declared
// without an address and is not bound yet (the debugger's view of a tile).
func (m *Machine) TileAddr(rank, core int, t *asm.TileInfo, idx int) (addr int64, ok bool) {
	c := m.coreOf(rank, core)
	if c == nil || idx < 0 || idx >= len(t.Addr) {
		return 0, false
	}
	if t.Index < len(c.bind) && len(c.bind[t.Index]) == len(t.Addr) {
		addr = c.bind[t.Index][idx]
		return addr, addr >= 0
	}
	return t.Addr[idx], !t.Unplaced
}
