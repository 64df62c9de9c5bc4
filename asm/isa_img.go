package asm

// The remaining A2/A3 tile instructions of pto-isa (docs/isa and
// include/pto/npu/a2a3 at 3186c381): GM gather/scatter through an index tile,
// the IMG2COL path (its three configuration registers and the L1→L0A load) and
// the fixpipe's quantisation (its two parameter registers and the moves out of
// L0C that apply a scaling tile or the registers). Each row cites the header it
// follows.

var (
	// attrCoalesce is pto::Coalesce (docs/isa/MGATHER.md): a row per index
	// (dst[r, :] = table[idx[r], :]) or an element per index (dst[r, c] =
	// table[idx[r, c]] over the flattened table).
	attrCoalesce = attrDomain{key: "coalesce", kind: attrWord, words: []string{"row", "elem"}}
	// attrGatherOOB is pto::GatherOOB, attrScatterOOB pto::ScatterOOB
	// (MGather.hpp mgather_remap, MScatter.hpp): undefined makes an index
	// outside the table a run-time error here.
	attrGatherOOB  = attrDomain{key: "oob", kind: attrWord, words: []string{"undefined", "clamp", "wrap", "zero"}}
	attrScatterOOB = attrDomain{key: "oob", kind: attrWord, words: []string{"undefined", "skip", "clamp", "wrap"}}
	// IMG2COL convolution parameters (pto::ConvTile's strides, filter and
	// dilation, TImg2col.hpp's img2colv2_cbuf_to_ca arguments).
	attrKH = attrDomain{key: "kh", kind: attrExpr}
	attrKW = attrDomain{key: "kw", kind: attrExpr}
	attrSH = attrDomain{key: "sh", kind: attrExpr}
	attrSW = attrDomain{key: "sw", kind: attrExpr}
	attrDH = attrDomain{key: "dh", kind: attrExpr}
	attrDW = attrDomain{key: "dw", kind: attrExpr}
	// attrQuantOut is SET_QUANT_SCALAR's OutType: for 8-bit outputs it sets
	// the register's sign bit 46 (SetQuantScalar.hpp), which picks the
	// saturation range [-128, 127] or [0, 255].
	attrQuantOut = attrDomain{key: "out", kind: attrWord, words: []string{"i8", "u8", "f16", "bf16"}}
	// attrQuantShift is the QUANT_PRE word's shift field, bits 32..35: an
	// i32→i16 move (SHIFTS322S16) shifts right by the field plus one
	// (include/pto/cpu/common.hpp quantize_element). pto-isa's TMOV with a
	// preQuantScalar takes the whole word; SET_QUANT_SCALAR's float cannot
	// hold the field, so here it is an attribute of set_quant_scalar.
	attrQuantShift = attrDomain{key: "shift", kind: attrConst, lo: 0, hi: 15}
	// attrQuant picks which fixpipe quantisation register a move applies.
	attrQuant = attrDomain{key: "quant", kind: attrWord, words: []string{"scalar", "vector"}}
)

func defsImg() {
	// MGather.hpp / MScatter.hpp (A2/A3 VEC-CORE, 3186c381): a scalar walk.
	// The header waits on the scalar for V and MTE3 (gather Row), V and MTE2
	// (scatter Row) or all three (Elem), reads the index tile on the scalar,
	// moves a row per index with MTE2/MTE3 DMAs (Row) or an element per
	// scalar load/store (Elem), then makes V, MTE2 and MTE3 wait for it. So
	// no author barrier is needed after it, but a Row gather's index tile
	// loaded on MTE2 (or a Row scatter's written by MTE3) needs a flag to S.
	def("mgather", FamTile, PipeS, CostScalar, aivOnly,
		[]OperandSpec{tileW("dst", LocVec), gmR("table"), tileR("idx", LocVec)},
		"dst[r, :] = table[idx[r], :] (#coalesce=row, idx [1, R]) or dst[r, c] = table[idx[r, c]] over the table flattened from its first element (#coalesce=elem); an nz table takes an NZ tile; #oob remaps an index past the table (a2a3/MGather.hpp; the scalar first waits for V and MTE3, Elem also MTE2: an index tile loaded on MTE2 needs set_flag MTE2, S)").
		with(attrCoalesce, attrGatherOOB)
	def("mscatter", FamTile, PipeS, CostScalar, aivOnly,
		[]OperandSpec{gmW("table"), tileR("src", LocVec), tileR("idx", LocVec)},
		"table[idx[r], :] = src[r, :] (#coalesce=row) or table[idx[r, c]] = src[r, c] (#coalesce=elem), in row-major order so the last write wins; #atomic=add accumulates; #oob=skip drops an index past the table (a2a3/MScatter.hpp; the scalar first waits for V and MTE2, Elem also MTE3)").
		with(attrCoalesce, attrScatterOOB, attrAtomic)

	// IMG2COL configuration: scalar writes of the FMATRIX, padding and repeat
	// registers (SetFmatrix.hpp set_fmatrix, SetImg2colPadding.hpp
	// set_padding, SetImg2colRpt.hpp set_l3d_rpt).
	def("setfmatrix", FamScalar, PipeS, CostScalar, aicOnly,
		[]OperandSpec{scalar("h"), scalar("w"), scalar("padl"), scalar("padr"), scalar("padt"), scalar("padb")},
		"FMATRIX register: the feature map's height and width and its left/right/top/bottom padding (0..255) for later timg2col")
	def("set_img2col_padding", FamScalar, PipeS, CostScalar, aicOnly,
		[]OperandSpec{floatImm("value")},
		"the value timg2col writes where the window falls in the padding")
	def("set_img2col_rpt", FamScalar, PipeS, CostScalar, aicOnly,
		[]OperandSpec{scalar("stride"), scalar("time"), scalar("mode")},
		"load3d repeat register (stride, time, mode); timg2col's extent comes from its destination's valid shape, and a repeat time above 1 is refused: a2a3/TImg2col.hpp sizes one load by the destination and only A5's repeat word places later repeats (dstStride, dstMposition)")
	// TImg2col.hpp: img2colv2_cbuf_to_ca, an MTE1 load from L1 to L0A.
	def("timg2col", FamMove, PipeMTE1, CostDMA, aicOnly,
		[]OperandSpec{tileW("dst", LocLeft), tileR("src", LocMat), scalar("posm"), scalar("posk")},
		"im2col of an NC1HWC0 feature map (src: [C1·H·W, C0] with H, W from setfmatrix) into dst[m, k] for m from posm, k from posk: output pixel m, k = ((c1·kh + i)·kw + j)·C0 + c0, the set padding value outside the map (#kh #kw filter, #sh #sw stride, #dh #dw dilation; default 1)").
		with(attrKH, attrKW, attrSH, attrSW, attrDH, attrDW)

	// Fixpipe quantisation (SetQuantScalar.hpp set_quant_pre,
	// SetQuantVector.hpp set_fpc).
	def("set_quant_scalar", FamScalar, PipeS, CostScalar, aicOnly,
		[]OperandSpec{floatImm("scale")},
		"QUANT_PRE register: the f32 scale later #quant=scalar moves apply, its bits widened through int32 as SET_QUANT_SCALAR does (a negative scale also sets bits 32..63, so the offset field is 511); #out=i8 (default) or u8 sets the saturation range of an 8-bit output; #shift=N (bits 32..35) makes an i32→i16 move shift right by N+1").
		with(attrQuantOut, attrQuantShift)
	def("set_quant_vector", FamScalar, PipeS, CostScalar, aicOnly,
		[]OperandSpec{tileR("fp", LocScaling)},
		"FPC register: the scaling tile (u64 per column) later #quant=vector moves apply")
	// Moves out of L0C with quantisation: the _FP forms take the scaling tile
	// (TStore.hpp, TMov.hpp, TExtract.hpp, TInsert.hpp: SetFPC then the
	// copy with the vector quant mode); the .q forms apply the register
	// set_quant_scalar or set_quant_vector set.
	def("tstore.fp", FamTile, PipeFIX, CostDMA, aicOnly,
		[]OperandSpec{gmW("dst"), tileR("src", LocAcc), tileR("fp", LocScaling)},
		"tstore from L0C quantised by the scaling tile's per-column parameters").with(attrAtomic, attrRelu).alias("tstore_fp")
	def("tstore.q", FamTile, PipeFIX, CostDMA, aicOnly,
		[]OperandSpec{gmW("dst"), tileR("src", LocAcc)},
		"tstore from L0C quantised by the register #quant names (pto-isa TSTORE with preQuantScalar, or after SET_QUANT_VECTOR)").with(attrQuant, attrAtomic, attrRelu)
	def("tmov.fp", FamMove, PipeFIX, CostDMA, aicOnly,
		[]OperandSpec{tileW("dst", LocMat), tileR("src", LocAcc), tileR("fp", LocScaling)},
		"tmov acc→mat quantised by the scaling tile").with(attrRelu)
	def("tmov.q", FamMove, PipeFIX, CostDMA, aicOnly,
		[]OperandSpec{tileW("dst", LocMat), tileR("src", LocAcc)},
		"tmov acc→mat quantised by the register #quant names").with(attrQuant, attrRelu)
	def("textract.fp", FamMove, PipeFIX, CostDMA, aicOnly,
		[]OperandSpec{tileW("dst", LocMat), tileR("src", LocAcc), tileR("fp", LocScaling), scalar("row"), scalar("col")},
		"textract acc→mat of the dst-sized window at (row, col), quantised by the scaling tile (column col+j uses fp[col+j])").alias("textract_fp")
	def("tinsert.fp", FamMove, PipeFIX, CostDMA, aicOnly,
		[]OperandSpec{tileW("dst", LocMat), tileR("src", LocAcc), tileR("fp", LocScaling), scalar("row"), scalar("col")},
		"tinsert acc→mat of src into dst at (row, col), quantised by the scaling tile (source column j uses fp[j])").alias("tinsert_fp")
}
