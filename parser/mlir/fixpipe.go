package mlir

import (
	"math"
	"strings"

	"github.com/ptoasm/ptoasm/asm"
)

// fixpipeMode reads the fixpipe operands PTOAS's pto.tstore and pto.tmov
// carry besides their tiles (TStoreOp, TMovOp in include/PTO/IR/PTOOps.td
// at a56b18c3): the optional i64 preQuantScalar and the reluPreMode
// attribute. Neither may be dropped, or a quantised store would silently
// become a plain one. A preQuantScalar is pto-isa's TSTORE/TMOV(dst, src,
// preQuantScalar), which writes the word to QUANT_PRE (set_quant_pre,
// include/pto/npu/a2a3/TStore.hpp, TMov.hpp at 3186c381) and moves with the
// scalar quant mode: the ISA's set_quant_scalar, then tstore.q or tmov.q
// #quant=scalar. quant is that set_quant_scalar, nil without the operand;
// relu is the attribute for the move (#relu=normal), nil for no_relu; ok is
// false when an error was reported.
func (k *kctx) fixpipeMode(op *Op, d dps) (quant *asm.Instr, relu *asm.Attr, ok bool) {
	ok = true
	if a, has := d.attrs["reluPreMode"]; has && !noRelu(a) {
		if w := reluWord(a); !strings.EqualFold(w, "normal_relu") {
			k.errf(spanOf(a), "%s reluPreMode = %s is not a ReluPreMode (no_relu, normal_relu)", op.Name, w)
			return nil, nil, false
		}
		sp := spanOf(a)
		relu = &asm.Attr{Span: sp, Key: "relu", Val: &asm.Name{Span: sp, Name: "normal"}}
	}
	for i, v := range d.ins {
		if v.kind != vScalar {
			continue
		}
		sp := d.inTok[i].Span
		// A literal, not a kernel argument's default: the word is split
		// into set_quant_scalar's literal scale and attributes.
		if _, lit := v.x.(*asm.Num); !lit || !v.known || v.isF {
			k.errf(sp, "%s preQuantScalar %s must be an integer constant: ptoasm writes QUANT_PRE with set_quant_scalar, whose scale is a literal", op.Name, d.inTok[i].Text)
			return nil, nil, false
		}
		w := uint64(v.v)
		scale := math.Float32frombits(uint32(w))
		out := "u8"
		if w&(1<<46) != 0 {
			out = "i8"
		}
		shift := (w >> 32) & 0xF
		if math.IsNaN(float64(scale)) || math.IsInf(float64(scale), 0) || asm.QuantPreWord(scale, out, shift) != w {
			// set_quant_scalar writes the scale's bits widened
			// through int32, bit 46 and the shift field; a word with
			// other bits (an offset, bits 37..45) is not one it writes.
			k.errf(sp, "%s preQuantScalar %s = %#x is not a QUANT_PRE word set_quant_scalar can write (an f32 scale in bits 0..31 widened through int32, sign bit 46, shift bits 32..35; no offset bits 37..45 of its own)", op.Name, d.inTok[i].Text, w)
			return nil, nil, false
		}
		in := &asm.Instr{Span: op.Span, Op: "set_quant_scalar", OpSpan: op.NameTok.Span, Args: []asm.Expr{fnum(sp, float64(scale))}}
		in.Attrs = append(in.Attrs, &asm.Attr{Span: sp, Key: "out", Val: &asm.Name{Span: sp, Name: out}})
		if shift != 0 {
			in.Attrs = append(in.Attrs, &asm.Attr{Span: sp, Key: "shift", Val: num(sp, int64(shift))})
		}
		return in, relu, ok
	}
	return nil, relu, ok
}

// noRelu says whether a reluPreMode attribute value is no_relu.
func noRelu(a []Tok) bool {
	for _, w := range words(a) {
		if strings.EqualFold(w.Text, "no_relu") || strings.EqualFold(w.Text, "NoRelu") {
			return true
		}
	}
	return false
}

// reluWord is the mode a reluPreMode attribute names (normal_relu).
func reluWord(a []Tok) string {
	ws := words(a)
	if len(ws) == 0 {
		return "?"
	}
	return ws[len(ws)-1].Text
}
