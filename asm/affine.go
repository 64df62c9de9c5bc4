package asm

// Affine is an exact closed form of a compiled integer expression over at
// most two registers: Add + Mul[0]·Regs[Slot[0]] + Mul[1]·Regs[Slot[1]] (the
// first N terms), then & Mask when Masked. Arithmetic wraps as Fn's does, so
// the form is exact for every register value. The assembler builds it while
// compiling, so an evaluator on a hot path (the machine's scalar) can skip
// the closure tree for the shapes kernels use most: a loop index, %kt * BK,
// (%k * KSUB + %s) & 1, block_idx * M.
//
// A negative Slot is a launch value instead of a register (SlotRank ...
// SlotBlockNum): constant for a core's run, so a slot like any other.
type Affine struct {
	N      int
	Slot   [2]int
	Mul    [2]int64
	Add    int64
	Mask   int64
	Masked bool
}

// The launch values' slots in an Affine, BuiltinSlot(i) for i in
// [0, NumBuiltins): rank, nranks, block_idx, subblock_idx, block_num.
const (
	SlotRank = -1 - iota
	SlotNRanks
	SlotBlock
	SlotSubBlock
	SlotBlockNum
	NumBuiltins = 5
)

// Builtin is the launch value of a negative slot (SlotRank ...).
func (e *Env) Builtin(slot int) int64 {
	switch slot {
	case SlotRank:
		return e.Rank
	case SlotNRanks:
		return e.NRanks
	case SlotBlock:
		return e.Block
	case SlotSubBlock:
		return e.SubBlock
	case SlotBlockNum:
		return e.BlockNum
	}
	return 0
}

// Eval evaluates a in env (the registers must hold every slot).
func (a *Affine) Eval(env *Env) int64 {
	v := a.Add
	for i := range a.N {
		if s := a.Slot[i]; s >= 0 {
			v += a.Mul[i] * env.Regs[s]
		} else {
			v += a.Mul[i] * env.Builtin(s)
		}
	}
	if a.Masked {
		v &= a.Mask
	}
	return v
}

// affineOf is c's affine form: a constant is one with no registers.
func affineOf(c CExpr) (Affine, bool) {
	if c.Fn == nil {
		return Affine{Add: c.Val}, true
	}
	if c.Lin != nil {
		return *c.Lin, true
	}
	return Affine{}, false
}

func (a Affine) scaled(k int64) Affine {
	a.Add *= k
	for i := range a.N {
		a.Mul[i] *= k
	}
	return a
}

// sum is x + y, or false when a side is masked or more than two registers
// would remain.
func sum(x, y Affine) (Affine, bool) {
	if x.Masked || y.Masked {
		return Affine{}, false
	}
	out := x
	out.Add += y.Add
	for i := range y.N {
		j := 0
		for j < out.N && out.Slot[j] != y.Slot[i] {
			j++
		}
		if j == out.N {
			if out.N == len(out.Slot) {
				return Affine{}, false
			}
			out.Slot[j] = y.Slot[i]
			out.N++
		}
		out.Mul[j] += y.Mul[i]
	}
	// Drop cancelled terms (%a - %a), so N counts the registers read.
	n := 0
	for i := range out.N {
		if out.Mul[i] != 0 {
			out.Slot[n], out.Mul[n] = out.Slot[i], out.Mul[i]
			n++
		}
	}
	out.N = n
	return out, true
}

// binaryAffine is the affine form of x op y, or nil.
func binaryAffine(op string, x, y CExpr) *Affine {
	ax, okx := affineOf(x)
	ay, oky := affineOf(y)
	if !okx || !oky {
		return nil
	}
	var out Affine
	var ok bool
	switch {
	case op == "+":
		out, ok = sum(ax, ay)
	case op == "-":
		out, ok = sum(ax, ay.scaled(-1))
	case op == "*" && y.Fn == nil && !ax.Masked:
		out, ok = ax.scaled(y.Val), true
	case op == "*" && x.Fn == nil && !ay.Masked:
		out, ok = ay.scaled(x.Val), true
	case op == "&" && y.Fn == nil && !ax.Masked:
		out, ok = ax, true
		out.Mask, out.Masked = y.Val, true
	case op == "&" && x.Fn == nil && !ay.Masked:
		out, ok = ay, true
		out.Mask, out.Masked = x.Val, true
	}
	if !ok || out.N == 0 {
		return nil
	}
	return &out
}
