package machine

import (
	"math"

	"github.com/ptoasm/ptoasm/asm"
)

// fnode is a register expression compiled from its source for the shapes
// fexpr's affine form does not cover: comparisons of two registers
// (%processed < %nsc), conditions with a constant operand
// (%k == STEP_K - 1 && MUTANT != h3), shifts and masks ((%done >> %i) & 1),
// min and max. The assembler's closures cost an indirect call per node; a
// node here is a switch case, and constant subtrees are folded. It computes
// exactly what asm's binop, unop and callFn do (TestCompileExprAgrees).
type fnode struct {
	op   uint8
	slot int   // fnReg
	val  int64 // fnConst
	x, y *fnode
	xs   []*fnode // fnMin, fnMax
}

const (
	fnConst uint8 = iota
	fnReg
	fnNeg
	fnNot
	fnCompl
	fnAbs
	fnMin
	fnMax
	// binary operators, in fnBinops order
	fnAdd
	fnSub
	fnMul
	fnDiv
	fnRem
	fnShl
	fnShr
	fnAnd
	fnOr
	fnXor
	fnEQ
	fnNE
	fnLT
	fnLE
	fnGT
	fnGE
	fnLAnd
	fnLOr
)

var fnBinops = map[string]uint8{"+": fnAdd, "-": fnSub, "*": fnMul, "/": fnDiv, "%": fnRem, "<<": fnShl, ">>": fnShr,
	"&": fnAnd, "|": fnOr, "^": fnXor, "==": fnEQ, "!=": fnNE, "<": fnLT, "<=": fnLE, ">": fnGT, ">=": fnGE,
	"&&": fnLAnd, "||": fnLOr}

// exprScope is what compiling a kernel's expression from its source needs:
// the register slots by name and the program's constants (after -D).
type exprScope struct {
	nregs  int
	regs   map[string]int
	consts map[string]int64
}

func newExprScope(obj *asm.Object, k *asm.KernelInfo) *exprScope {
	sc := &exprScope{nregs: len(k.Regs), regs: make(map[string]int, len(k.Regs)), consts: make(map[string]int64, len(obj.Consts))}
	for i, r := range k.Regs {
		if _, dup := sc.regs[r]; dup {
			sc.regs[r] = -1 // ambiguous: keep the closure
			continue
		}
		sc.regs[r] = i
	}
	for _, c := range obj.Consts {
		if !c.IsFloat {
			sc.consts[c.Name] = c.Val
		}
	}
	return sc
}

// compile returns e's node, or nil for a shape it does not know (the
// closure stays).
func (sc *exprScope) compile(e asm.Expr) *fnode {
	switch e := e.(type) {
	case *asm.Num:
		if e.IsFloat {
			return nil
		}
		return &fnode{op: fnConst, val: e.Int}
	case *asm.Paren:
		return sc.compile(e.X)
	case *asm.Name:
		if s := builtinOf(e.Name); s != 0 {
			return &fnode{op: fnReg, slot: builtinReg(s, sc.nregs)}
		}
		if v, ok := sc.consts[e.Name]; ok {
			return &fnode{op: fnConst, val: v}
		}
	case *asm.Ref:
		if s, ok := sc.regs[e.Name]; ok && s >= 0 && e.Index == nil {
			return &fnode{op: fnReg, slot: s}
		}
	case *asm.Unary:
		x := sc.compile(e.X)
		if x == nil {
			return nil
		}
		n := &fnode{x: x}
		switch e.Op {
		case "-":
			n.op = fnNeg
		case "!":
			n.op = fnNot
		case "~":
			n.op = fnCompl
		default:
			return nil
		}
		return n.fold()
	case *asm.Binary:
		op, ok := fnBinops[e.Op]
		x, y := sc.compile(e.X), sc.compile(e.Y)
		if !ok || x == nil || y == nil {
			return nil
		}
		if y.op == fnConst && y.val == 0 && (op == fnDiv || op == fnRem) {
			return nil // the closure's zero, not worth a case
		}
		return (&fnode{op: op, x: x, y: y}).fold()
	case *asm.Call:
		n := &fnode{}
		switch {
		case (e.Fn == "min" || e.Fn == "max") && len(e.Args) >= 1:
			n.op = fnMin
			if e.Fn == "max" {
				n.op = fnMax
			}
		case e.Fn == "abs" && len(e.Args) == 1:
			n.op = fnAbs
		default:
			return nil
		}
		for _, a := range e.Args {
			x := sc.compile(a)
			if x == nil {
				return nil
			}
			n.xs = append(n.xs, x)
		}
		return n.fold()
	}
	return nil
}

// builtinOf is the Affine slot of a launch value's name (asm's builtinSlot),
// 0 for none.
func builtinOf(name string) int {
	switch name {
	case "rank":
		return asm.SlotRank
	case "nranks":
		return asm.SlotNRanks
	case "block_idx":
		return asm.SlotBlock
	case "subblock_idx":
		return asm.SlotSubBlock
	case "block_num":
		return asm.SlotBlockNum
	}
	return 0
}

// fold evaluates n at compile time when its operands are constants, and
// drops a constant operand of && and || (MUTANT != h3 in
// %k == STEP_K - 1 && MUTANT != h3), so that what is left is a comparison
// fexpr tests inline (rangeOf). Neither side of a node can fail or change
// anything, so dropping one is exact.
func (n *fnode) fold() *fnode {
	if (n.op == fnLAnd || n.op == fnLOr) && (n.x.op == fnConst) != (n.y.op == fnConst) {
		x, k := n.x, n.y
		if x.op == fnConst {
			x, k = k, x
		}
		switch {
		case (k.val != 0) == (n.op == fnLOr):
			// x || true, x && false
			return &fnode{op: fnConst, val: b2i(n.op == fnLOr)}
		case x.op >= fnEQ && x.op <= fnLOr || x.op == fnNot:
			return x // already 0 or 1
		}
		return &fnode{op: fnNE, x: x, y: &fnode{op: fnConst}}
	}
	if n.x != nil && n.x.op != fnConst || n.y != nil && n.y.op != fnConst {
		return n
	}
	for _, x := range n.xs {
		if x.op != fnConst {
			return n
		}
	}
	return &fnode{op: fnConst, val: n.eval(nil)}
}

// rangeOf reads a comparison of a register with a constant (%k == 0,
// %i < N - 1) as a range test: n is 1 when the register's value v has
// uint64(v-lo) <= span, or when it has not if out is set. Every comparison
// is one range or the other side of one, with no special cases at the
// ends of int64 (the subtraction wraps as the uint64 range does).
func (n *fnode) rangeOf() (slot int, lo int64, span uint64, out, ok bool) {
	if n.op < fnEQ || n.op > fnGE {
		return 0, 0, 0, false, false
	}
	op, r, k := n.op, n.x, n.y
	if r.op == fnConst && k.op == fnReg {
		// k op r: mirror it to r op' k
		r, k = k, r
		switch op {
		case fnLT:
			op = fnGT
		case fnLE:
			op = fnGE
		case fnGT:
			op = fnLT
		case fnGE:
			op = fnLE
		}
	}
	if r.op != fnReg || k.op != fnConst {
		return 0, 0, 0, false, false
	}
	v := k.val
	switch op {
	case fnEQ, fnNE: // [v, v]
		return r.slot, v, 0, op == fnNE, true
	case fnGE, fnLT: // [v, MaxInt64]
		return r.slot, v, uint64(math.MaxInt64) - uint64(v), op == fnLT, true
	default: // fnLE, fnGT: [MinInt64, v]
		return r.slot, math.MinInt64, uint64(v) - 1<<63, op == fnGT, true
	}
}

// leaf is the value of a register or a constant; ok is false for any other
// node. It does not call eval, so it inlines there.
func (n *fnode) leaf(env *asm.Env) (v int64, ok bool) {
	switch n.op {
	case fnConst:
		return n.val, true
	case fnReg:
		return env.Regs[n.slot], true
	}
	return 0, false
}

func (n *fnode) eval(env *asm.Env) int64 {
	switch n.op {
	case fnConst:
		return n.val
	case fnReg:
		return env.Regs[n.slot]
	case fnNeg:
		return -n.x.eval(env)
	case fnNot:
		return b2i(n.x.eval(env) == 0)
	case fnCompl:
		return ^n.x.eval(env)
	case fnAbs:
		if v := n.xs[0].eval(env); v < 0 {
			return -v
		} else {
			return v
		}
	case fnMin, fnMax:
		v := n.xs[0].eval(env)
		for _, x := range n.xs[1:] {
			if n.op == fnMin {
				v = min(v, x.eval(env))
			} else {
				v = max(v, x.eval(env))
			}
		}
		return v
	}
	// The operands are mostly a register or a constant: read them here, not
	// through a call.
	x, ok := n.x.leaf(env)
	if !ok {
		x = n.x.eval(env)
	}
	y, ok := n.y.leaf(env)
	if !ok {
		y = n.y.eval(env)
	}
	switch n.op {
	case fnAdd:
		return x + y
	case fnSub:
		return x - y
	case fnMul:
		return x * y
	case fnDiv:
		switch {
		case y == 0:
			return 0
		case x == math.MinInt64 && y == -1:
			return x
		}
		return x / y
	case fnRem:
		switch y {
		case 0, -1:
			return 0
		}
		return x % y
	case fnShl:
		if y < 0 || y > 63 {
			return 0
		}
		return x << uint(y)
	case fnShr:
		if y < 0 || y > 63 {
			if x < 0 {
				return -1
			}
			return 0
		}
		return x >> uint(y)
	case fnAnd:
		return x & y
	case fnOr:
		return x | y
	case fnXor:
		return x ^ y
	case fnEQ:
		return b2i(x == y)
	case fnNE:
		return b2i(x != y)
	case fnLT:
		return b2i(x < y)
	case fnLE:
		return b2i(x <= y)
	case fnGT:
		return b2i(x > y)
	case fnGE:
		return b2i(x >= y)
	case fnLAnd:
		return b2i(x != 0 && y != 0)
	case fnLOr:
		return b2i(x != 0 || y != 0)
	}
	return 0
}
