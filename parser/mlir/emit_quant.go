package mlir

import "github.com/ptoasm/ptoasm/asm"

// The fixpipe's scalar quantisation and relu in PTOAS form. PTOAS has no
// op that sets QUANT_PRE: its tstore and tmov take the word as an i64
// preQuantScalar operand (TStoreOp, TMovOp in include/PTO/IR/PTOOps.td at
// a56b18c3), so set_quant_scalar prints as the word's constant and a later
// tstore.q / tmov.q #quant=scalar as the move with that operand, which the
// reader lowers back to the same pair (fixpipeMode).

// reluDict is PTOAS's spelling of #relu=normal (ReluPreMode, PTOAttrs.td).
const reluDict = "reluPreMode = #pto<relu_pre_mode normal_relu>"

// setQuant records the QUANT_PRE word of a set_quant_scalar. Only one at
// the kernel's top level is printed: in a loop or branch, which word a
// later move reads would depend on the path, and each PTOAS move names
// its own.
func (f *fnEmitter) setQuant(op *asm.COp) {
	if f.depth != 0 {
		f.errf(op.Instr.OpSpan, "--to mlir: a set_quant_scalar inside a loop or branch is not printed (PTOAS's tstore and tmov name their preQuantScalar word; which word a later move reads would depend on the path)")
		return
	}
	if len(op.Args) < 1 || op.Args[0].Kind != asm.ArgFloat {
		f.errf(op.Instr.OpSpan, "--to mlir: set_quant_scalar with a computed scale is not printed")
		return
	}
	out := "i8"
	if a, ok := op.Attr("out"); ok {
		out = a.Word
	}
	var shift uint64
	if a, ok := op.Attr("shift"); ok {
		shift = uint64(a.Val.Val)
	}
	w := asm.QuantPreWord(float32(op.Args[0].F), out, shift)
	f.quantPre = f.constant(int64(w), "i64")
}

// quantMove prints tstore.q or tmov.q #quant=scalar as pto.tstore or
// pto.tmov with the last top-level set_quant_scalar's word.
func (f *fnEmitter) quantMove(op *asm.COp) {
	name := op.Info.Name
	if a, ok := op.Attr("quant"); ok && a.Word == "vector" {
		f.errf(op.Instr.OpSpan, "--to mlir: %s #quant=vector is not printed (PTOAS's moves read the scaling tile as their fp operand, not the FPC register set_quant_vector sets)", name)
		return
	}
	if f.quantPre == "" {
		f.errf(op.Instr.OpSpan, "--to mlir: %s #quant=scalar without a top-level set_quant_scalar before it is not printed", name)
		return
	}
	var dict []string
	for _, at := range op.Attrs {
		switch {
		case at.Key == "quant":
		case at.Key == "relu" && at.Word == "normal":
			dict = append(dict, reluDict)
		case at.Key == "relu":
		case name == "tstore.q" && at.Key == "atomic" && at.Word == "add":
			dict = append(dict, "atomicType = #pto<atomic_type atomic_add>")
		case name == "tstore.q" && at.Key == "atomic":
		default:
			f.errf(op.Instr.OpSpan, "--to mlir: the attribute #%s of %s is not printed", at.Key, name)
			return
		}
	}
	tail := ""
	if len(dict) > 0 {
		tail = " {" + dict[0]
		for _, d := range dict[1:] {
			tail += ", " + d
		}
		tail += "}"
	}
	args := op.Args
	if len(args) < 2 || args[1].Kind != asm.ArgTile || args[1].Tile == nil {
		f.errf(op.Instr.OpSpan, "--to mlir: %s: unresolved operand", name)
		return
	}
	src, srcTy := f.tile(args[1])
	var outs, outTy string
	if name == "tstore.q" {
		outs, outTy = f.window(args[0], args[1].Tile), ptTypeOf(args[1].Tile, args[0].GM)
	} else {
		outs, outTy = f.tile(args[0])
	}
	if len(f.errs) == 0 {
		f.line("pto.%s ins(%s, %s : %s, i64) outs(%s : %s)%s", map[string]string{"tstore.q": "tstore", "tmov.q": "tmov"}[name], src, f.quantPre, srcTy, outs, outTy, tail)
	}
}
