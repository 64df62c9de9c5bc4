package machine

import (
	"math"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
)

// TestLeanDynFast holds leanOperands' table (leanDynFast, planLeanDyn) to
// the plan's own loop (leanDynSlow): the same values and the same verdict
// for register values at and around every bound, on plans mixing tile
// array indices and scalar operands, and no table where the loop must
// decide (an operand not affine in one register, an empty array, too
// many operands).
func TestLeanDynFast(t *testing.T) {
	tile := func(slot int, mul, add int64, n int) dynArg {
		return dynArg{kind: dynTile, x: fexpr{slot: slot, mul: mul, add: add}, addr: make([]int64, n)}
	}
	scalar := func(slot int, mul, add int64) dynArg {
		return dynArg{kind: dynScalar, x: fexpr{slot: slot, mul: mul, add: add}}
	}
	plans := []struct {
		name  string
		dyn   []dynArg
		table bool
	}{
		{"tile", []dynArg{tile(0, 1, 0, 2)}, true},
		{"tiles and offset", []dynArg{tile(0, 1, 0, 2), tile(1, 1, 1, 3), scalar(2, 64, 0)}, true},
		{"four", []dynArg{scalar(0, 1, 0), scalar(1, -1, 5), tile(2, 2, -1, 4), scalar(0, 1<<20, 3)}, true},
		{"five", []dynArg{scalar(0, 1, 0), scalar(0, 1, 0), scalar(0, 1, 0), scalar(0, 1, 0), scalar(0, 1, 0)}, false},
		{"not affine", []dynArg{tile(0, 1, 0, 2), {kind: dynScalar, x: fexpr{slot: -1}}}, false},
		{"empty array", []dynArg{tile(0, 1, 0, 0)}, false},
	}
	vals := []int64{0, 1, 2, 3, -1, -2, 7, math.MaxInt32, math.MaxInt32 + 1, math.MinInt32, math.MinInt32 - 1,
		math.MaxInt64, math.MinInt64, 1 << 40, -(1 << 40)}
	for _, p := range plans {
		pl := &opPlan{lean: true, dyn: p.dyn}
		ld := planLeanDyn(pl)
		if (ld != nil) != p.table {
			t.Fatalf("%s: table %v, want %v", p.name, ld != nil, p.table)
		}
		if ld == nil {
			continue
		}
		c := &core{env: asm.Env{Regs: make([]int64, 3)}}
		for _, a := range vals {
			for _, b := range vals {
				for _, d := range vals[:6] {
					c.env.Regs[0], c.env.Regs[1], c.env.Regs[2] = a, b, d
					var slow, fast entry
					okSlow, okFast := c.leanDynSlow(pl, &slow), c.leanDynFast(ld, &fast)
					if okSlow != okFast || okSlow && slow.ldyn != fast.ldyn {
						t.Fatalf("%s, regs %v: fast %v %v, slow %v %v", p.name, c.env.Regs, okFast, fast.ldyn, okSlow, slow.ldyn)
					}
				}
			}
		}
	}
}
