package machine

import "github.com/ptoasm/ptoasm/asm"

// stepEntry prepares a composite step that moves a window between a GM
// operand and a staging tile. gm is the op's GM argument, (dr, dc) the chunk's
// offset from its first element, rows×cols the chunk; load says GM→tile.
func (c *core) stepEntry(op *asm.COp, p asm.Pipe, step string, load bool, gm *asm.Arg,
	tile *asm.TileInfo, tileIdx int64, dr, dc, rows, cols int64, atomic bool) bool {
	m := c.m
	r, ok := c.gmRank(op, gm)
	if !ok {
		return false
	}
	off, ok := c.gmWindow(op, gm, r, rows, cols, dr, dc)
	if !ok {
		return false
	}
	if tileIdx < 0 || tileIdx >= int64(len(tile.Addr)) {
		m.fail(c.fault(op, p, "tile index %%%s[%d] outside 0..%d", tile.Name, tileIdx, len(tile.Addr)-1))
		return false
	}
	mc := c.addMicro(mEntry, p)
	e := &mc.e
	e.op, e.step, e.hasStep, e.atomic = op, step, step != "", atomic
	g := Operand{Kind: asm.ArgGM, GM: gm.GM, Off: off, Buf: m.ranks[r].gm[gm.GM.Index].buf,
		RowStride: lastDim(gm.GM) * int64(gm.GM.DType.Size())}
	t := Operand{Kind: asm.ArgTile, Tile: tile, Off: tile.Addr[tileIdx]}
	if tile.Space < asm.NumSpaces {
		t.Buf = c.bufs[tile.Space]
	}
	if rows != int64(tile.VRows) || cols != int64(tile.VCols) {
		// A partial chunk: the DMA moves a smaller valid region of the tile.
		e.tile = *tile
		e.tile.VRows, e.tile.VCols = int(rows), int(cols)
		t.Tile = &e.tile
	}
	gi := 1
	if load {
		e.eff, e.xop = exLoad, m.opTLoad
		e.args = append(e.args, t, g)
		e.access[0], e.access[1] = asm.AccWrite, asm.AccRead
	} else {
		e.eff, e.xop = exStore, m.opTStore
		e.args = append(e.args, g, t)
		e.access[0], e.access[1] = asm.AccWrite, asm.AccRead
		gi = 0
	}
	e.argRank[gi] = int32(r)
	e.winR[gi], e.winC[gi] = int32(rows), int32(cols)
	if r != c.rank.id {
		e.remote = int16(r)
	}
	return true
}

func (c *core) microFlag(op *asm.COp, set bool, src, dst asm.Pipe, id int) {
	p, k := dst, enWaitFlag
	if set {
		p, k = src, enSetFlag
	}
	mc := c.addMicro(mEntry, p)
	mc.e.kind, mc.e.op = k, op
	mc.e.flag = Flag{Src: src, Dst: dst, ID: int32(id)}
}

// tileArg resolves a tile operand (and its array index) of a composite op.
func (c *core) tileArg(op *asm.COp, i int) (*asm.TileInfo, int64, bool) {
	if i >= len(op.Args) || op.Args[i].Kind != asm.ArgTile || op.Args[i].Tile == nil {
		return nil, 0, false
	}
	a := &op.Args[i]
	if a.Tile.Variable() {
		// This instance's view: one element, at its binding (sem_view.go).
		v, _, ok := c.tileView(op, a)
		return v, 0, ok
	}
	idx := int64(0)
	if a.Tile.IsArray {
		idx = a.TileIdx.Eval(&c.env)
	}
	return a.Tile, idx, true
}

// expandPut turns TPUT/TGET into the steps TPut.hpp executes (kernels.md §0.3):
// per chunk TLOAD (MTE2) into a staging tile, MTE2→MTE3 flag, TSTORE (MTE3),
// MTE3→MTE2 flag; the serial path adds BAR ALL before each store, the ping-pong
// path (two tiles, more than one chunk) overlaps the store of chunk i with the
// load of chunk i+1 on events 0 and 1.
func (c *core) expandPut(op *asm.COp) bool {
	m := c.m
	if len(op.Args) < 3 || op.Args[0].Kind != asm.ArgGM || op.Args[1].Kind != asm.ArgGM {
		m.fail(c.fault(op, asm.PipeS, "%s needs a destination, a source and a staging tile", op.Info.Name))
		return false
	}
	ping, pi, ok := c.tileArg(op, 2)
	if !ok {
		m.fail(c.fault(op, asm.PipeS, "%s: operand 3 must be a staging tile", op.Info.Name))
		return false
	}
	pong, po, hasPong := c.tileArg(op, 3)
	rows, cols := int64(ping.VRows), int64(ping.VCols)
	if a, ok := op.Attr("rows"); ok {
		rows = a.Val.Eval(&c.env)
	}
	if a, ok := op.Attr("cols"); ok {
		cols = a.Val.Eval(&c.env)
	}
	if rows < 1 || cols < 1 {
		m.fail(c.fault(op, asm.PipeS, "%s: transfer shape [%d, %d] is empty", op.Info.Name, rows, cols))
		return false
	}
	atomic := false
	if a, ok := op.Attr("atomic"); ok && a.Word == "add" {
		atomic = true
	}
	cr, cc := int64(ping.VRows), int64(ping.VCols)
	nr, nc := (rows+cr-1)/cr, (cols+cc-1)/cc
	chunks := nr * nc
	pingPong := hasPong && chunks > 1
	ldStep, stStep := "tput.load", "tput.store"
	if op.Info.Op == asm.OpTget {
		ldStep, stStep = "tget.load", "tget.store"
	}
	dst, src := &op.Args[0], &op.Args[1]
	c.micro, c.mi = c.micro[:0], 0
	for k := int64(0); k < chunks; k++ {
		dr, dc := (k/nc)*cr, (k%nc)*cc
		h, w := min(cr, rows-dr), min(cc, cols-dc)
		t, ti, ev := ping, pi, 0
		if pingPong && k&1 == 1 {
			t, ti, ev = pong, po, 1
		}
		if pingPong && k >= 2 {
			c.microFlag(op, false, asm.PipeMTE3, asm.PipeMTE2, ev)
		}
		if !c.stepEntry(op, asm.PipeMTE2, ldStep, true, src, t, ti, dr, dc, h, w, false) {
			return false
		}
		c.microFlag(op, true, asm.PipeMTE2, asm.PipeMTE3, ev)
		c.microFlag(op, false, asm.PipeMTE2, asm.PipeMTE3, ev)
		if !pingPong {
			mc := c.addMicro(mDrain, asm.PipeALL)
			mc.e.op = op
		}
		if !c.stepEntry(op, asm.PipeMTE3, stStep, false, dst, t, ti, dr, dc, h, w, atomic) {
			return false
		}
		c.microFlag(op, true, asm.PipeMTE3, asm.PipeMTE2, ev)
		if !pingPong {
			c.microFlag(op, false, asm.PipeMTE3, asm.PipeMTE2, ev)
		}
	}
	if pingPong {
		// Consume the last two chunks' MTE3→MTE2 events.
		for k := max(chunks-2, 0); k < chunks; k++ {
			c.microFlag(op, false, asm.PipeMTE3, asm.PipeMTE2, int(k&1))
		}
	}
	c.tick()
	return true
}

// expandFifo turns TPUSH/TPOP into the TPipe protocol (kernels.md §0.3): the
// producer waits for a free slot once the ring has wrapped (FFTS id+1), stores
// the tile into the slot (FIX from acc, MTE3 from vec/mat) and signals ready
// (FFTS id, mode 2); the consumer waits for ready, loads the slot on MTE2 and
// returns the free credit. AIC→AIV (C2V) and AIV→AIC (V2C) are told apart by
// who pushes; using one fifo both ways is misuse.
func (c *core) expandFifo(op *asm.COp) bool {
	m := c.m
	push := op.Info.Op == asm.OpTpush
	gi, ti := 1, 0
	if push {
		gi, ti = 0, 1
	}
	fp, ok := c.fifoSetup(op, gi, push)
	if !ok {
		return false
	}
	tile, tix, ok := c.tileArg(op, ti)
	if !ok {
		m.fail(c.fault(op, asm.PipeS, "%s needs a tile operand", op.Info.Name))
		return false
	}
	n := fp.next(c, push)
	// Slot window: block's ring, slot n%slots; an AIV moving half a slot uses
	// its subblock's half.
	rowOff := fp.slotRow(n)
	if c.kind == asm.CoreAIV && 2*int64(tile.VRows) <= fp.slotRows {
		rowOff += c.env.SubBlock * int64(tile.VRows)
	}
	// The ring is a [blocks*slots*rows, cols] matrix over the fifo's storage.
	ga := op.Args[gi]
	g := &ga
	g.HasRank = false
	g.Idx = nil
	g.GM = fp.ring
	c.micro, c.mi = c.micro[:0], 0
	rows, cols := int64(tile.VRows), int64(tile.VCols)
	if push {
		if n >= fp.slots {
			mc := c.addMicro(mCrossWait, asm.PipeS)
			mc.e.op, mc.e.id = op, int32(fp.id+1)
		}
		p := asm.PipeMTE3
		if tile.Loc == asm.LocAcc {
			p = asm.PipeFIX
		}
		if !c.stepEntry(op, p, "tpush.store", false, g, tile, tix, rowOff, 0, rows, cols, false) {
			return false
		}
		mc := c.addMicro(mEntry, p)
		mc.e.kind, mc.e.op, mc.e.id, mc.e.mode = enFFTSSet, op, int32(fp.id), 2
	} else {
		mc := c.addMicro(mCrossWait, asm.PipeS)
		mc.e.op, mc.e.id = op, int32(fp.id)
		if !c.stepEntry(op, asm.PipeMTE2, "tpop.load", true, g, tile, tix, rowOff, 0, rows, cols, false) {
			return false
		}
		mc = c.addMicro(mEntry, asm.PipeMTE2)
		mc.e.kind, mc.e.op, mc.e.id, mc.e.mode = enFFTSSet, op, int32(fp.id+1), 2
	}
	c.tick()
	return true
}

// fifoPlan is what a fifo instruction needs of its fifo: the FFTS ids (id
// ready, id+1 free), the ring's shape and this block's place in it.
type fifoPlan struct {
	f         *asm.TensorInfo
	ring      *asm.TensorInfo
	id, slots int64
	slotRows  int64
	block     int64
}

// next is the index of the producer's (push) or consumer's next slot on
// this core, counted from the block's start.
func (fp *fifoPlan) next(c *core, push bool) int64 {
	var n int64
	if push {
		n = c.fifoPush[fp.f.Index]
		c.fifoPush[fp.f.Index]++
	} else {
		n = c.fifoPop[fp.f.Index]
		c.fifoPop[fp.f.Index]++
	}
	return n
}

// slotRow is the ring row where slot index n of this block starts.
func (fp *fifoPlan) slotRow(n int64) int64 {
	return fp.block*fp.slots*fp.slotRows + (n%fp.slots)*fp.slotRows
}

// fifoSetup checks fifo operand gi of a producer (push) or consumer
// instruction: a fifo, in a mixed launch, used in one direction, with its
// two FFTS ids in range.
func (c *core) fifoSetup(op *asm.COp, gi int, push bool) (fifoPlan, bool) {
	m := c.m
	if gi >= len(op.Args) || op.Args[gi].Kind != asm.ArgGM || op.Args[gi].GM == nil {
		m.fail(c.fault(op, asm.PipeS, "%s needs a fifo and a tile", op.Info.Name))
		return fifoPlan{}, false
	}
	f := op.Args[gi].GM
	if f.Class != asm.TensorFIFO {
		m.fail(c.fault(op, asm.PipeS, "fifo misuse: @%s is a %s, not a fifo", f.Name, f.Class))
		return fifoPlan{}, false
	}
	s := c.strm
	block := int(c.env.Block)
	var ba *blockArrivals
	if s != nil && block < len(s.blockArr[c.rank.id]) {
		ba = &s.blockArr[c.rank.id][block]
	}
	if ba == nil || ba.aic == nil || ba.aivs[0] == nil || ba.aivs[1] == nil {
		m.fail(c.fault(op, asm.PipeS, "fifo misuse: %s on @%s needs a mixed launch (an aic kernel + an aiv kernel)", op.Info.Name, f.Name))
		return fifoPlan{}, false
	}
	isAIV := c.kind == asm.CoreAIV
	// dir 1: AIC→AIV, 2: AIV→AIC
	dir := int8(1)
	if push == isAIV {
		dir = 2
	}
	rs := c.rank
	if rs.fifoDir == nil {
		rs.fifoDir = make([]int8, len(m.obj.Tensors))
	}
	if rs.fifoDir[f.Index] == 0 {
		rs.fifoDir[f.Index] = dir
	} else if rs.fifoDir[f.Index] != dir {
		m.fail(c.fault(op, asm.PipeS, "fifo misuse: @%s is already used in the other direction", f.Name))
		return fifoPlan{}, false
	}
	id := f.Attrs["id"]
	slots := f.Attrs["slots"]
	if slots <= 0 {
		slots = 2
	}
	if id < 0 || id+1 >= asm.NumFFTSIDs {
		m.fail(c.fault(op, asm.PipeS, "fifo @%s: id=%d needs FFTS ids %d and %d in 0..%d", f.Name, id, id, id+1, asm.NumFFTSIDs-1))
		return fifoPlan{}, false
	}
	slotRows := int64(1)
	if len(f.Shape) >= 2 {
		slotRows = f.Shape[len(f.Shape)-2]
	}
	return fifoPlan{f: f, ring: m.ring(f, slots, slotRows), id: id, slots: slots, slotRows: slotRows, block: int64(block)}, true
}

// ring is the view of a fifo's storage as one [blocks*slots*rows, cols]
// matrix, so a slot is an ordinary 2-D window. One per fifo, made once.
func (m *Machine) ring(f *asm.TensorInfo, slots, slotRows int64) *asm.TensorInfo {
	if m.rings == nil {
		m.rings = make(map[*asm.TensorInfo]*asm.TensorInfo)
	}
	if r := m.rings[f]; r != nil {
		return r
	}
	r := *f
	r.Shape = []int64{int64(m.nAIC) * slots * slotRows, lastDim(f)}
	r.Bytes = fifoBytes(f, m.nAIC)
	m.rings[f] = &r
	return &r
}

// maxWindowRanges bounds how many byte ranges one tile window is reported as;
// a window that scatters wider is reported as its bounding range (a superset:
// it can add a conflict, and a write can mark a few extra bytes written).
const maxWindowRanges = 64
