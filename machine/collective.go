package machine

import (
	"github.com/ptoasm/ptoasm/asm"
)

// Collectives on A2/A3 are not hardware operations: the root's AIV runs them as
// TLOAD/TSTORE pairs through UB staging tiles against every group member's GM
// (machine-facts §1.4, pto-isa include/pto/comm/a2a3). Only the root executes
// them (pto-isa: calling one on a non-root rank is undefined), so in an SPMD
// program every other rank of the group skips the instruction.
//
// Group: #group=G names the aligned block of G ranks that holds the executing
// rank (pto-isa ParallelGroup nranks; default every rank); #root=k is the
// group-relative root index (default 0).

// collGroup resolves the group and root of a collective; ok is false after a
// fault.
func (c *core) collGroup(op *asm.COp) (base, size, root int, ok bool) {
	m := c.m
	size = m.nranks
	if a, has := op.Attr("group"); has {
		v := a.Val.Eval(&c.env)
		if v < 1 || v > int64(m.nranks) || int64(m.nranks)%v != 0 {
			m.fail(c.fault(op, asm.PipeS, "%s #group=%d: want a divisor of the %d ranks", op.Info.Name, v, m.nranks))
			return 0, 0, 0, false
		}
		size = int(v)
	}
	base = c.rank.id - c.rank.id%size
	k := int64(0)
	if a, has := op.Attr("root"); has {
		k = a.Val.Eval(&c.env)
	}
	if k < 0 || k >= int64(size) {
		m.fail(c.fault(op, asm.PipeS, "%s #root=%d outside the group's 0..%d", op.Info.Name, k, size-1))
		return 0, 0, 0, false
	}
	return base, size, base + int(k), true
}

// collShape is a collective's transfer window (the first staging tile's valid
// shape, or #rows/#cols) and its chunking by that tile.
type collShape struct {
	rows, cols int64 // whole transfer per rank
	cr, cc     int64 // chunk (staging tile valid shape)
	nr, nc     int64 // chunks per dimension
}

func (c *core) collShapeOf(op *asm.COp, t *asm.TileInfo) (collShape, bool) {
	s := collShape{rows: int64(t.VRows), cols: int64(t.VCols), cr: int64(t.VRows), cc: int64(t.VCols)}
	if a, ok := op.Attr("rows"); ok {
		s.rows = a.Val.Eval(&c.env)
	}
	if a, ok := op.Attr("cols"); ok {
		s.cols = a.Val.Eval(&c.env)
	}
	if s.rows < 1 || s.cols < 1 || s.cr < 1 || s.cc < 1 {
		c.m.fail(c.fault(op, asm.PipeS, "%s: transfer shape [%d, %d] is empty", op.Info.Name, s.rows, s.cols))
		return s, false
	}
	s.nr, s.nc = (s.rows+s.cr-1)/s.cr, (s.cols+s.cc-1)/s.cc
	return s, true
}

// chunk k's offset and extent inside the transfer.
func (s *collShape) chunk(k int64) (dr, dc, h, w int64) {
	dr, dc = (k/s.nc)*s.cr, (k%s.nc)*s.cc
	return dr, dc, min(s.cr, s.rows-dr), min(s.cc, s.cols-dc)
}

// sliceOff moves a window to slice i of a tensor that stacks one transfer per
// group member along rows (TGATHER's dst, TSCATTER's src): i*rows rows, or
// i*rows*cols elements of a 1-D tensor.
func (s *collShape) sliceOff(g *asm.Arg, i int64, dr, dc int64) (int64, int64) {
	if g.GM != nil && len(g.GM.Shape) == 1 {
		return dr, dc + i*s.rows*s.cols
	}
	return dr + i*s.rows, dc
}

// onRank is a copy of GM operand g that addresses rank r.
func onRank(g *asm.Arg, r int) asm.Arg {
	a := *g
	a.HasRank = true
	a.Rank = asm.CExpr{Const: true, Val: int64(r)}
	return a
}

// flagPair queues set_flag src→dst and its wait_flag.
func (c *core) flagPair(op *asm.COp, src, dst asm.Pipe, id int) {
	c.microFlag(op, true, src, dst, id)
	c.microFlag(op, false, src, dst, id)
}

// expandCollective expands tbroadcast, tgather.comm, tscatter.comm and treduce
// into their steps on the root; on every other rank it is a no-op.
func (c *core) expandCollective(op *asm.COp) bool {
	m := c.m
	name := op.Info.Name
	if len(op.Args) < 3 || op.Args[0].Kind != asm.ArgGM || op.Args[1].Kind != asm.ArgGM ||
		op.Args[0].GM == nil || op.Args[1].GM == nil {
		m.fail(c.fault(op, asm.PipeS, "%s needs a destination, a source and a staging tile", name))
		return false
	}
	stage, si, ok := c.tileArg(op, 2)
	if !ok {
		m.fail(c.fault(op, asm.PipeS, "%s: operand 3 must be a staging tile", name))
		return false
	}
	base, size, root, ok := c.collGroup(op)
	if !ok {
		return false
	}
	if c.rank.id != root {
		c.tick()
		return true
	}
	sh, ok := c.collShapeOf(op, stage)
	if !ok {
		return false
	}
	dst, src := &op.Args[0], &op.Args[1]
	c.micro, c.mi = c.micro[:0], 0
	chunks := sh.nr * sh.nc
	switch op.Info.Op {
	case asm.OpTbroadcast:
		// TLOAD once, then a TSTORE to every member (the root included).
		for k := int64(0); k < chunks; k++ {
			dr, dc, h, w := sh.chunk(k)
			if !c.stepEntry(op, asm.PipeMTE2, "tbroadcast.load", true, src, stage, si, dr, dc, h, w, false) {
				return false
			}
			c.flagPair(op, asm.PipeMTE2, asm.PipeMTE3, 0)
			for r := base; r < base+size; r++ {
				d := onRank(dst, r)
				if !c.stepEntry(op, asm.PipeMTE3, "tbroadcast.store", false, &d, stage, si, dr, dc, h, w, false) {
					return false
				}
			}
			c.flagPair(op, asm.PipeMTE3, asm.PipeMTE2, 0)
		}
	case asm.OpTgatherComm, asm.OpTscatterComm:
		gather := op.Info.Op == asm.OpTgatherComm
		ld, st := "tscatter.load", "tscatter.store"
		if gather {
			ld, st = "tgather.load", "tgather.store"
		}
		for r := base; r < base+size; r++ {
			for k := int64(0); k < chunks; k++ {
				dr, dc, h, w := sh.chunk(k)
				var from, to asm.Arg
				fr, fc, tr, tc := dr, dc, dr, dc
				if gather {
					from, to = onRank(src, r), *dst
					tr, tc = sh.sliceOff(dst, int64(r-base), dr, dc)
				} else {
					from, to = *src, onRank(dst, r)
					fr, fc = sh.sliceOff(src, int64(r-base), dr, dc)
				}
				if !c.stepEntry(op, asm.PipeMTE2, ld, true, &from, stage, si, fr, fc, h, w, false) {
					return false
				}
				c.flagPair(op, asm.PipeMTE2, asm.PipeMTE3, 0)
				if !c.stepEntry(op, asm.PipeMTE3, st, false, &to, stage, si, tr, tc, h, w, false) {
					return false
				}
				c.flagPair(op, asm.PipeMTE3, asm.PipeMTE2, 0)
			}
		}
	case asm.OpTreduce:
		if !c.expandReduce(op, dst, src, stage, si, &sh, base, size, root) {
			return false
		}
	default:
		m.fail(c.fault(op, asm.PipeS, "%s is not a collective the machine knows", name))
		return false
	}
	c.tick()
	return true
}

// expandReduce is TREDUCE on the root, per chunk: TLOAD the root's src into the
// acc tile; for every other member TLOAD its src into the recv tile, MTE2→V,
// the V op (add/max/min), V→MTE2; then V→MTE3 and TSTORE acc to dst.
func (c *core) expandReduce(op *asm.COp, dst, src *asm.Arg, acc *asm.TileInfo, ai int64,
	sh *collShape, base, size, root int) bool {
	m := c.m
	recv, ri, ok := c.tileArg(op, 3)
	if !ok {
		m.fail(c.fault(op, asm.PipeS, "treduce: operand 4 must be the recv tile"))
		return false
	}
	if recv.VRows != acc.VRows || recv.VCols != acc.VCols || recv.DType != acc.DType {
		m.fail(c.fault(op, asm.PipeS, "treduce: %%%s and %%%s differ in shape or dtype", acc.Name, recv.Name))
		return false
	}
	// The V step works on whole tiles; a ragged last chunk would combine bytes
	// no load wrote.
	if sh.rows%sh.cr != 0 || sh.cols%sh.cc != 0 {
		m.fail(c.fault(op, asm.PipeS, "treduce: transfer [%d, %d] is not a whole number of [%d, %d] tiles",
			sh.rows, sh.cols, sh.cr, sh.cc))
		return false
	}
	xop, step := m.opTAddV, "treduce.add"
	if a, ok := op.Attr("op"); ok {
		switch a.Word {
		case "max":
			xop, step = m.opTMaxV, "treduce.max"
		case "min":
			xop, step = m.opTMinV, "treduce.min"
		}
	}
	at := Operand{Kind: asm.ArgTile, Tile: acc, Off: acc.Addr[ai], Buf: c.bufs[acc.Space]}
	rt := Operand{Kind: asm.ArgTile, Tile: recv, Off: recv.Addr[ri], Buf: c.bufs[recv.Space]}
	for k := int64(0); k < sh.nr*sh.nc; k++ {
		dr, dc, h, w := sh.chunk(k)
		if !c.stepEntry(op, asm.PipeMTE2, "treduce.load", true, src, acc, ai, dr, dc, h, w, false) {
			return false
		}
		for r := base; r < base+size; r++ {
			if r == root {
				continue
			}
			from := onRank(src, r)
			if !c.stepEntry(op, asm.PipeMTE2, "treduce.load", true, &from, recv, ri, dr, dc, h, w, false) {
				return false
			}
			c.flagPair(op, asm.PipeMTE2, asm.PipeV, 0)
			mc := c.addMicro(mEntry, asm.PipeV)
			e := &mc.e
			e.op, e.xop, e.step, e.hasStep = op, xop, step, step != ""
			e.args = append(e.args, at, at, rt)
			e.access[0], e.access[1], e.access[2] = asm.AccWrite, asm.AccRead, asm.AccRead
			c.flagPair(op, asm.PipeV, asm.PipeMTE2, 0)
		}
		if size == 1 {
			c.flagPair(op, asm.PipeMTE2, asm.PipeMTE3, 0)
		} else {
			c.flagPair(op, asm.PipeV, asm.PipeMTE3, 0)
		}
		if !c.stepEntry(op, asm.PipeMTE3, "treduce.store", false, dst, acc, ai, dr, dc, h, w, false) {
			return false
		}
		// The next chunk's TLOAD overwrites acc: wait for the store to read it.
		c.flagPair(op, asm.PipeMTE3, asm.PipeMTE2, 0)
	}
	return true
}
