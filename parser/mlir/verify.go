package mlir

import (
	"fmt"
	"strings"

	"github.com/ptoasm/ptoasm/asm"
)

// A2/A3 rules of PTOAS's op verifiers that the lowering would otherwise let
// through: an op the A2/A3 instruction set lacks in that form, or operands
// that contradict each other. Each rule is PTOAS's (lib/PTO/IR/PTO.cpp at
// a56b18c3, the function named at each case), and the message keeps
// PTOAS's words so a user finds the same diagnostic in both tools, at the
// op's line. A file passing these still yields a kernel whenever PTOAS's
// A2/A3 lowering accepts it.

// verifyTileOp checks one DPS tile op; false means an error was reported.
func (k *kctx) verifyTileOp(op *Op, name string, d dps, insT, outT []*val) bool {
	fail := func(format string, args ...any) bool {
		k.errf(op.Span, "%s: %s", op.Name, fmt.Sprintf(format, args...))
		return false
	}
	elem := func(vs []*val, i int) string {
		if i < len(vs) {
			return vs[i].tile.dtype
		}
		return ""
	}
	is := func(dt string, set ...string) bool {
		for _, s := range set {
			if dt == s {
				return true
			}
		}
		return false
	}
	switch name {
	case "thistogram":
		// THistogramOp::verify: an A5 instruction.
		return fail("thistogram is only supported on A5")
	case "tgemv.mx", "tgemv.mx.acc", "tgemv.mx.bias", "tpack":
		// TGemvMx*Op, TPackOp::verify: A5 instructions (the scaled FP8
		// GEMV, packing).
		return fail("%s is only supported on A5 targets", name)
	case "mgather", "mscatter":
		// MGatherOp, MScatterOp::verify.
		return fail("pto.%s is only supported on A5 targets", name)
	case "trandom":
		// TRandomOp::verify.
		return fail("trandom is only supported for A5 targets")
	case "tsel":
		// TSelOp::verify, verifyA2A3: 16- and 32-bit elements only.
		for _, v := range append(append([]*val{}, insT[min(1, len(insT)):min(3, len(insT))]...), outT...) {
			if !is(v.tile.dtype, "i16", "u16", "i32", "u32", "f16", "f32") {
				return fail("expects A2/A3 tsel src0, src1, and dst element type to be i16/i32/f16/f32 (%%%s is %s)", v.tile.name, v.tile.dtype)
			}
		}
	case "tgather":
		// TGatherOp::verify, the compare form (a kValue scalar operand,
		// two results): A2/A3 compare f16/f32, or i32 for equality.
		if len(d.scalars()) == 0 || len(outT) < 2 || len(insT) == 0 {
			break
		}
		mode := "eq"
		for _, w := range words(d.attrs["cmpMode"]) {
			if x, ok := cmpWords[strings.ToLower(w.Text)]; ok {
				mode = x
			}
		}
		if src := elem(insT, 0); !is(src, "f16", "f32") && !(is(src, "i32", "u32") && mode == "eq") {
			return fail("expects A2/A3 compare-form tgather src element type to be f16/f32, or i32 when cmpMode=eq (src is %s, cmpMode=%s)", src, mode)
		}
	case "tcvt":
		// TCvtOp::verify: a conversion keeps the shape and the valid shape.
		if len(insT) == 0 || len(outT) == 0 {
			break
		}
		src, dst := insT[0].tile, outT[0].tile
		if src.rows != dst.rows || src.cols != dst.cols {
			return fail("expects src and dst to have compatible shapes (src is [%d, %d], dst [%d, %d])", src.rows, src.cols, dst.rows, dst.cols)
		}
		if src.validStatic && dst.validStatic && (src.vrows != dst.vrows || src.vcols != dst.vcols) {
			return fail("expects src and dst to have the same valid_shape (src [%d, %d], dst [%d, %d])", src.vrows, src.vcols, dst.vrows, dst.vcols)
		}
	case "tinsert":
		// TInsertOp::verify, verifyA2A3: the acc→mat form converts f32 to
		// f16/bf16 on its way out of L0C.
		if len(insT) > 0 && len(outT) > 0 && insT[0].tile.loc == "acc" && outT[0].tile.loc == "mat" {
			if !(elem(insT, 0) == "f32" && is(elem(outT, 0), "f16", "bf16")) {
				return fail("expects A2/A3 tinsert element types to be src=f32, dst=f16/bf16 (src is %s, dst %s)", elem(insT, 0), elem(outT, 0))
			}
		}
	case "tquant":
		// TQuantOp::verify: ins(src, fp[, offset]); the offset and the
		// destination's signedness follow quant_type.
		asym := false
		for _, w := range words(d.attrs["quant_type"]) {
			if strings.EqualFold(w.Text, "INT8_ASYM") {
				asym = true
			}
		}
		dst, offset := elem(outT, 0), len(insT) >= 3
		switch {
		case !asym && dst != "i8":
			return fail("expects dst element type i8 for INT8_SYM quantization (dst is %s)", dst)
		case !asym && offset:
			return fail("INT8_SYM quantization must not have an offset operand")
		case asym && dst != "u8":
			return fail("expects dst element type ui8 for INT8_ASYM quantization (dst is %s)", dst)
		case asym && !offset:
			return fail("INT8_ASYM quantization requires an offset operand")
		}
	case "tstore":
		// TStoreOp::verify: a static destination window holds exactly the
		// tile's static valid region (layouts may be reinterpreted, 1x1024
		// ↔ 32x32, but elements are not dropped or invented).
		if len(insT) == 0 {
			break
		}
		inner, ok := keyGroup(op.Toks, "outs")
		if !ok {
			break
		}
		parts := splitTop(inner, ":")
		if len(parts) < 2 {
			break
		}
		ti, ok := parseType(parts[len(parts)-1])
		t := insT[0].tile
		if !ok || ti.kind != "partition_tensor_view" || len(ti.dims) == 0 || t.vrows <= 0 || t.vcols <= 0 || !t.validStatic {
			break
		}
		n := asm.DimProduct(ti.dims)
		if n < 0 {
			return true // dynamic
		}
		if n != t.vrows*t.vcols {
			return fail("expects dst static element count (%d) to match src valid_shape static element count (%d)", n, t.vrows*t.vcols)
		}
	}
	return true
}

// manualReserve reports whether body reserves a buffer with auto = false:
// the function then places its local buffers by hand, and PTOAS's
// PlanMemory refuses to place a memref.alloc beside it (ReserveBufferOp
// handling in lib/PTO/Transforms/PTOPlanMemory.cpp).
func manualReserve(body *Region) bool {
	found := false
	visit(body, func(op *Op) {
		if op.Name == "pto.reserve_buffer" {
			if v, ok := attrDict(op.Toks)["auto"]; ok && len(v) == 1 && v[0].Text == "false" {
				found = true
			}
		}
	})
	return found
}
