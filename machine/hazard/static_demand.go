package hazard

import (
	"strings"

	"github.com/ptoasm/ptoasm/asm"
)

// Residue demand. valueRegs finds the registers whose values the pass reads;
// some of those it reads only through a low-bit mask, or multiplied by a
// constant before one: a double-buffered kernel's slot id
// `(%q * KT + %k) & 1` reads the count of tiles done %q, but only %q mod
// 2/gcd(2, KT), which for an even KT is nothing at all. Kept exact, such a
// counter (0, 1, 2, ... tiles on each path, or a loop's widening symbol plus
// that many) keeps apart paths that agree on every flag and on everything
// else the pass decides. grouped_gemm's per-block tile count, incremented
// under the data-dependent test of whether the block owns a tile, made one
// path per count at every expert and ran the pass past its work budget
// (session 24: 1 048 576 statement visits without reaching the end).
//
// So each register gets the modulus m of what the pass demands of it: full
// (its value), or its residue mod m (m = 1: only that it is some value), the
// lcm over its reads. A let of a register with demand m stores the
// register's own residue symbol (residueSym), rebound at each let, with the
// value's residue mod m as a fact, instead of the value: every reader
// computes the same from it, and paths that differ only there are one path.
// A let whose value's residue is unknown (m > 1) stores the value as before.

// demandFull is the demand of a register the pass reads whole.
const demandFull = -1

// maxDemand bounds a residue demand; a larger lcm is full demand.
const maxDemand = 64

// regDemands is each register's demand: 0 when the pass never reads it,
// demandFull, or m >= 1 when every read depends only on its residue mod m.
// Conditions, loop bounds and flag ids read their registers whole; a let
// passes its register's demand on to what it reads (demandOf).
func (c *checker) regDemands() []int64 {
	d := make([]int64, len(c.k.Regs))
	grew := false
	raise := func(slot int, v int64) {
		if slot < 0 || slot >= len(d) || d[slot] == demandFull || d[slot] == v {
			return
		}
		switch {
		case v == demandFull || d[slot] == 0:
			d[slot] = v
		default:
			l := d[slot] / gcd(d[slot], v) * v
			if l > maxDemand {
				l = demandFull
			}
			if l == d[slot] {
				return
			}
			d[slot] = l
		}
		grew = true
	}
	full := func(x asm.CExpr) {
		if x.Src != nil && !x.Const {
			c.demandOf(x.Src, demandFull, raise)
		}
	}
	var lets []*asm.CLet
	walkStmts(c.k.Body, func(st asm.CStmt) {
		if l, ok := st.(*asm.CLet); ok {
			lets = append(lets, l)
		}
		decidingExprs(st, full)
	})
	for grew = true; grew; {
		grew = false
		for _, l := range lets {
			if l.Slot >= 0 && l.Slot < len(d) && d[l.Slot] != 0 && l.X.Src != nil && !l.X.Const {
				c.demandOf(l.X.Src, d[l.Slot], raise)
			}
		}
	}
	return d
}

// demandOf raises the demand of the registers e reads when e's value is
// demanded at dm (demandFull or a modulus): a sum passes dm on, a product by
// a constant k needs dm/gcd(dm, k), a mask `& (2^j - 1)` needs the residue
// mod 2^j whatever dm is, and anything else (a comparison, a quotient, a
// remainder, whose sign the residue does not give, a call) needs the whole
// value.
func (c *checker) demandOf(e asm.Expr, dm int64, raise func(slot int, v int64)) {
	scale := func(k int64) int64 {
		if dm == demandFull {
			return demandFull
		}
		return dm / gcd(dm, abs64(k))
	}
	switch e := e.(type) {
	case nil, *asm.Num, *asm.Name:
	case *asm.Ref:
		slot, ok := c.slots[strings.TrimPrefix(e.Name, "%")]
		if !ok {
			return
		}
		if e.Index != nil {
			raise(slot, demandFull)
			c.demandOf(e.Index, demandFull, raise)
			return
		}
		raise(slot, dm)
	case *asm.Paren:
		c.demandOf(e.X, dm, raise)
	case *asm.Unary:
		if e.Op == "-" {
			c.demandOf(e.X, dm, raise)
			return
		}
		c.demandOf(e.X, demandFull, raise)
	case *asm.Binary:
		switch e.Op {
		case "+", "-":
			c.demandOf(e.X, dm, raise)
			c.demandOf(e.Y, dm, raise)
			return
		case "*":
			if k, ok := c.constOf(e.Y); ok {
				c.demandOf(e.X, scale(k), raise)
				return
			}
			if k, ok := c.constOf(e.X); ok {
				c.demandOf(e.Y, scale(k), raise)
				return
			}
		case "<<":
			if k, ok := c.constOf(e.Y); ok && k >= 0 && k < 32 {
				c.demandOf(e.X, scale(1<<k), raise)
				return
			}
		case "&":
			if k, ok := c.constOf(e.Y); ok && k >= 0 && k&(k+1) == 0 && k < maxDemand {
				c.demandOf(e.X, k+1, raise)
				return
			}
			if k, ok := c.constOf(e.X); ok && k >= 0 && k&(k+1) == 0 && k < maxDemand {
				c.demandOf(e.Y, k+1, raise)
				return
			}
		}
		c.demandOf(e.X, demandFull, raise)
		c.demandOf(e.Y, demandFull, raise)
	default:
		walkRefs(e, func(r *asm.Ref) {
			if slot, ok := c.slots[strings.TrimPrefix(r.Name, "%")]; ok {
				raise(slot, demandFull)
			}
		})
	}
}

// residueSym is the symbol a register with a residue demand holds after a
// let (see above), one per register so that the paths agree on it.
func (c *checker) residueSym(slot int) int32 {
	if c.resSyms == nil {
		c.resSyms = map[int]int32{}
	}
	s, ok := c.resSyms[slot]
	if !ok {
		s = c.newSym(negInf, posInf, nil)
		c.resSyms[slot] = s
	}
	return s
}

// storeResidue stores let value v in register slot, whose demand is the
// residue mod m: as the register's residue symbol with v's residue, when
// that is known. It reports whether it did.
func (c *checker) storeResidue(st *sstate, slot int, m int64, v lin) bool {
	r := int64(0)
	if m > 1 {
		var ok bool
		if r, ok = c.modOf(st, v, m); !ok {
			return false
		}
	}
	s := c.residueSym(slot)
	c.retire(st, s)
	st.setReg(slot, s, 0)
	return c.assumeMod(st, s, m, r)
}
