package machine

import "github.com/ptoasm/ptoasm/asm"

// The L0C unit flag (#unit=partial|final; pto-isa AccPhase/STPhase,
// include/pto/common/type.hpp, used by TMatmul.hpp's mad and TStore.hpp's
// FIX store, Xt[33:32]). pto-isa's docs/isa/cube/ops/mad/mad.md: a mad's
// "check_only checks that the producer slot can be used. check_and_set also
// publishes the produced %dst tile for later consumers"; the FIX writeback's
// unit flag is check_only | check_and_clear (mte-l0c-gm.md). Kernels that
// use it drop both the M→FIX and the FIX→M flags around the store
// (demos/baseline/flash_atten fa_custom.cpp, UF_ENABLE). Modelled per acc
// tile (its L0C offset):
//   - a mad with a unit flag waits while the tile is held (published and not
//     yet released by a final FIX read);
//   - a final mad holds the tile from its start, recording its window;
//   - a FIX read with a unit flag waits until the tile is held, then may
//     start once the mad's first fractal is done and ends no earlier than
//     one fractal's share of its own time after the mad ends (FIX drains
//     finished fractals while the cube accumulates the rest);
//   - a final FIX read releases the tile at its end.

// unitHold is one acc tile's unit flag.
type unitHold struct {
	held       bool
	start, end int64 // the final mad's execution
	fractals   int64 // 16×16 fractals of the tile: the hand-off granule
}

// unitKey is the L0C offset of the acc operand of a unit-flagged entry: the
// mad's destination, or the FIX read's source.
func unitKey(e *entry, pipe asm.Pipe) (int64, *asm.TileInfo) {
	i := 1
	if pipe == asm.PipeM {
		i = 0
	}
	if i >= len(e.args) || e.args[i].Tile == nil {
		return -1, nil
	}
	return e.args[i].Off, e.args[i].Tile
}

func (c *core) unit(key int64) *unitHold {
	if c.units == nil {
		c.units = map[int64]*unitHold{}
	}
	u := c.units[key]
	if u == nil {
		u = &unitHold{}
		c.units[key] = u
	}
	return u
}

// unitBegin decides whether unit-flagged entry e may start at now on p; when
// it may, d is its duration (from cost) adjusted for the hand-off. ok false
// means p must wait (it is kicked when the flag changes, or at retry).
func (p *pipeState) unitBegin(e *entry, now int64) (d int64, ok bool) {
	c := p.c
	key, t := unitKey(e, p.p)
	if t == nil {
		return p.duration(e, now), true
	}
	u := c.unit(key)
	if p.p == asm.PipeM {
		if u.held {
			p.stallFrom(now)
			p.waiting = true
			return 0, false
		}
		d = p.duration(e, now)
		if e.xop.Unit == asm.UnitFinal {
			u.held, u.start, u.end = true, now, now+d
			u.fractals = max(int64((t.VRows+15)/16)*int64((t.VCols+15)/16), 1)
			if f := c.pipes[asm.PipeFIX]; f != nil {
				f.kick(now)
			}
		}
		return d, true
	}
	if !u.held {
		p.stallFrom(now)
		p.waiting = true
		return 0, false
	}
	if first := u.start + (u.end-u.start)/u.fractals; first > now {
		p.stallFrom(now)
		p.m.schedule(&p.wake.w, first, p.key())
		return 0, false
	}
	d = p.duration(e, now)
	return max(d, u.end+d/u.fractals-now), true
}

// unitDone releases the tile after a final FIX read of it.
func (p *pipeState) unitDone(e *entry) {
	if p.p == asm.PipeM || e.xop.Unit != asm.UnitFinal {
		return
	}
	if key, t := unitKey(e, p.p); t != nil {
		p.c.unit(key).held = false
		if mp := p.c.pipes[asm.PipeM]; mp != nil {
			mp.kick(p.m.now)
		}
	}
}
