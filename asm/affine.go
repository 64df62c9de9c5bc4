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

// Cond is an exact closed form of a comparison of an affine form with a
// constant (%kt == 0, %i < N - 1), or of && and || over two such forms or
// affine forms read as truth values (%kt == 0 && %ks == 0): the shapes of
// #init attributes and if conditions in a kernel's hot loop. Eval gives 1 or
// 0, as the closure does; neither side can fail, so && and || may stop early.
type Cond struct {
	Op   CondOp
	L    Affine // comparisons and CondTruth: L op R
	R    int64
	X, Y *Cond // CondAnd, CondOr
}

// CondOp is a Cond's operator.
type CondOp uint8

// The Cond operators.
const (
	CondEQ CondOp = iota + 1
	CondNE
	CondLT
	CondLE
	CondGT
	CondGE
	CondAnd
	CondOr
	CondTruth // L != 0
)

// Eval evaluates c in env (the registers must hold every slot).
func (c *Cond) Eval(env *Env) int64 {
	var b bool
	switch c.Op {
	case CondAnd:
		b = c.X.Eval(env) != 0 && c.Y.Eval(env) != 0
	case CondOr:
		b = c.X.Eval(env) != 0 || c.Y.Eval(env) != 0
	default:
		l := c.L.Eval(env)
		switch c.Op {
		case CondEQ:
			b = l == c.R
		case CondNE:
			b = l != c.R
		case CondLT:
			b = l < c.R
		case CondLE:
			b = l <= c.R
		case CondGT:
			b = l > c.R
		case CondGE:
			b = l >= c.R
		case CondTruth:
			b = l != 0
		}
	}
	if b {
		return 1
	}
	return 0
}

// Affines calls fn for every affine form in c.
func (c *Cond) Affines(fn func(*Affine)) {
	switch c.Op {
	case CondAnd, CondOr:
		c.X.Affines(fn)
		c.Y.Affines(fn)
	default:
		fn(&c.L)
	}
}

var condOps = map[string]CondOp{"==": CondEQ, "!=": CondNE, "<": CondLT, "<=": CondLE, ">": CondGT, ">=": CondGE}

// mirrored is the comparison with its sides swapped: k < x is x > k.
var mirrored = map[CondOp]CondOp{CondEQ: CondEQ, CondNE: CondNE, CondLT: CondGT, CondLE: CondGE, CondGT: CondLT, CondGE: CondLE}

// binaryCond is the Cond form of x op y, or nil.
func binaryCond(op string, x, y CExpr) *Cond {
	switch op {
	case "&&", "||":
		cx, cy := truthOf(x), truthOf(y)
		if cx == nil || cy == nil {
			return nil
		}
		o := CondAnd
		if op == "||" {
			o = CondOr
		}
		return &Cond{Op: o, X: cx, Y: cy}
	}
	o, ok := condOps[op]
	if !ok {
		return nil
	}
	ax, okx := affineOf(x)
	ay, oky := affineOf(y)
	switch {
	case !okx || !oky:
		return nil
	case y.Fn == nil:
		return &Cond{Op: o, L: ax, R: y.Val}
	case x.Fn == nil:
		return &Cond{Op: mirrored[o], L: ay, R: x.Val}
	case o == CondEQ || o == CondNE:
		// x == y is x - y == 0 even when the subtraction wraps; an ordering
		// is not, so it keeps the closure.
		if d, ok := sum(ax, ay.scaled(-1)); ok {
			return &Cond{Op: o, L: d}
		}
	}
	return nil
}

// truthOf is x as an operand of && or ||: its Cond, or its affine form
// compared with zero.
func truthOf(x CExpr) *Cond {
	if x.Cond != nil {
		return x.Cond
	}
	if x.Lin != nil {
		return &Cond{Op: CondTruth, L: *x.Lin}
	}
	return nil
}
