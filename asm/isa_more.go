package asm

import (
	"fmt"
	"strings"
)

// The pto-isa tile instructions beyond the first table (pto-isa docs/isa at
// 3186c381): each row cites the A2/A3 implementation it follows,
// include/pto/npu/a2a3/<File>.hpp, and the intrinsic it is charged as. Where the
// lowering uses several intrinsics the row charges the dominant one; where
// pto-isa's a2a3 cost model (include/pto/costmodel/a2a3) has no entry for the
// intrinsic (vmadd, vmla, vmaddrelu, vsubrelu) it charges the nearest one that
// has (vmul, vsub) and says so.

var (
	attrDesc  = attrDomain{key: "descending", kind: attrConst, lo: 0, hi: 1}
	attrUpper = attrDomain{key: "upper", kind: attrConst, lo: 0, hi: 1}
	attrPad   = attrDomain{key: "pad", kind: attrWord, words: []string{"zero", "max", "min"}}
	// attrPattern is pto::MaskPattern (include/pto/common/type.hpp): bits read
	// right to left, so p0101 takes the first of every two elements.
	attrPattern = attrDomain{key: "pattern", kind: attrWord, words: []string{"p0101", "p1010", "p0001", "p0010", "p0100", "p1000", "p1111"}}
)

func vecOp3(name string, cost CostKey, doc string) *opDef {
	return def(name, FamVector, PipeV, cost, aivOnly,
		[]OperandSpec{tileW("dst", vecLocs...), tileR("a", vecLocs...), tileR("b", vecLocs...)}, doc)
}

func vecOpS(name string, cost CostKey, doc string) *opDef {
	return def(name, FamVector, PipeV, cost, aivOnly,
		[]OperandSpec{tileW("dst", vecLocs...), tileR("a", vecLocs...), floatImm("s")}, doc)
}

// powTypes is what TPOW and TPOWS accept on a2a3: PowCheckType's
// isSupportType (TPOWS checks its dst as the exponent's tile too). f16 and
// bf16 have no path.
var powTypes = []DType{I32, I16, I8, U32, U16, U8, F32}

const powTypesSource = "include/pto/npu/a2a3/TPow.hpp PowCheckType at 3186c381"

func defsMore() {
	// Elementwise, tile-tile (TPow.hpp, TRem.hpp, TFmod.hpp, TSubRelu.hpp).
	def("tpow", FamVector, PipeV, CostVLn, aivOnly,
		[]OperandSpec{tileW("dst", vecLocs...), tileR("a", vecLocs...), tileR("b", vecLocs...), scratchW("tmp", vecLocs...)},
		"a to the power b; f32 (no f16 path on a2a3): exp(b·ln a) with exp(b·ln|a|) in tmp, then 1 for b = 0, 0 or +inf for a = 0, 1 for a = -1 and b = ±inf, ±tmp for an integer b (else exp(b·ln a), NaN for a < 0); integers by squaring (TPow.hpp: vabs, vln, vmul, vexp per row behind barriers, then a scalar fix-up per element; charged as that sequence, pipes.PowCycles)").chk(chkSame).
		// Float: vabs of a into tmp, barrier, vln, vmul by b, vexp (a
		// barrier between each), the same into dst, then the scalar
		// fix-ups between V→S and S→V flags. Integer: only the scalar
		// loop between those flags.
		vbar(0b1010, 0b1111, VBarAlways, "include/pto/npu/a2a3/TPow.hpp (PowOp, TPowF, TPowI)").endBarrier().fold(FoldPow).
		dtypes(powTypesSource, powTypes...)
	def("trem", FamVector, PipeV, CostVDiv, aivOnly,
		[]OperandSpec{tileW("dst", vecLocs...), rwIf(I32, tileR("a", vecLocs...)), rwIf(I32, tileR("b", vecLocs...)), scratchW("tmp", vecLocs...)},
		"remainder with the divisor's sign, f32 steps: r = a - floor(a/b)·b, plus b where r·b < 0; i32 converts a and b to f32 in place (a keeps rint(f32(a)), b ends as f32 bits), tmp holds a row of scratch and a compare mask at dst's row stride (TRem.hpp: vdiv, vconv, vmul, vsub; charged as vdiv)").chk(chkSameTmp).
		// Per row: f32 vdiv of a by b into tmp (i32: a and b converted
		// to f32 in place first), then every step followed by a barrier.
		vbar(0b1110, 0b1111, VBarAlways, "include/pto/npu/a2a3/TRem.hpp (RemF32Instr, RemInt32Instr)").endBarrier()
	vecOp3("tfmod", CostVDiv, "fmod, f32 only: f32(a - f32(trunc(f32(a/b))·b)), each step rounded, so b = 0 or ±inf gives NaN (TFmod.hpp; charged as vdiv)").chk(chkSame).
		// f32 only: per row vdiv, vconv, vmul, vsub, each followed by a
		// barrier.
		vbar(0b111, 0, VBarAlways, "include/pto/npu/a2a3/TFmod.hpp (FmodF32Instr)").
		dtypes("include/pto/npu/a2a3/TFmod.hpp TFmodCheck at 3186c381", F32)
	vecOp3("tsubrelu", CostVSub, "max(a - b, 0) (TSubRelu.hpp vsubrelu; no a2a3 cost entry, charged as vsub)").chk(chkSame)
	// Tile-scalar (TBitwiseSOp.hpp, TPow.hpp, TRemS.hpp, TFmodS.hpp).
	for _, v := range []struct {
		name string
		cost CostKey
		doc  string
	}{
		{"tands", CostVAnd, "bitwise and with a scalar"},
		{"tors", CostVOr, "bitwise or with a scalar"},
		{"txors", CostVXor, "bitwise xor with a scalar"},
		{"tshls", CostVShl, "shift left by a scalar"},
		{"tshrs", CostVShr, "shift right by a scalar (arithmetic for signed dtypes)"},
		{"tfmods", CostVDiv, "fmod by a scalar, f32 only, the steps of tfmod (charged as vdiv)"},
	} {
		d := vecOpS(v.name, v.cost, v.doc).chk(chkSame)
		switch v.name {
		case "tands", "tors":
			// TEXPANDS of the scalar into dst, barrier, then the tile op
			// reads a and dst and writes dst.
			d.vbar(0b001, 0b011, VBarAlways, "include/pto/npu/a2a3/TBitwiseSOp.hpp ("+strings.ToUpper(v.name)+"_IMPL)")
		case "tfmods":
			// f32 only: vector_dup of the scalar into dst, then vdiv,
			// vconv, vmuls, vsub, a barrier after each.
			d.vbar(0b011, 0, VBarAlways, "include/pto/npu/a2a3/TFmodS.hpp (FmodSF32Instr)").
				dtypes("include/pto/npu/a2a3/TFmodS.hpp TFMODS_IMPL at 3186c381", F32)
		case "txors":
			// TORS into a scratch, barrier, TANDS into dst, barrier,
			// TNOT, barrier, TAND with the scratch: as txor.
			d.vbar(0b010, 0b001, VBarAlways, "include/pto/npu/a2a3/TBitwiseSOp.hpp (TXORS_IMPL)")
		case "tshls", "tshrs":
			// TShiftS calls TBinSInstr (TBitwiseSOp.hpp).
			d.binS()
		}
	}
	// tpows and trems take pto-isa's tmp after the scalar (TPOWS_IMPL,
	// TREMS_IMPL).
	def("tpows", FamVector, PipeV, CostVLn, aivOnly,
		[]OperandSpec{tileW("dst", vecLocs...), tileR("a", vecLocs...), floatImm("s"), scratchW("tmp", vecLocs...)},
		"a to the power of a scalar, as tpow (charged as its sequence: TBinSInstr calls of vabs, vln, vmuls, vexp, then the scalar fix-up)").chk(chkSame).
		// As tpow: vabs of a into tmp first (TPowF), or the scalar loop
		// between flags (TPowI).
		vbar(0b1010, 0b1011, VBarAlways, "include/pto/npu/a2a3/TPow.hpp (PowSOp, TPowF, TPowI)").endBarrier().fold(FoldPow).
		dtypes(powTypesSource, powTypes...).
		// Its float passes go through TBinSInstr.
		binS()
	def("trems", FamVector, PipeV, CostVDiv, aivOnly,
		[]OperandSpec{tileW("dst", vecLocs...), rwIf(I32, tileR("a", vecLocs...)), floatImm("s"), scratchW("tmp", vecLocs...)},
		"remainder by a scalar with the scalar's sign, f32 steps as trem; i32 converts a to f32 and back in place (a keeps rint(f32(a))); tmp's first row is scratch (charged as vdiv)").chk(chkSameTmp).
		// Per row: f32 vector_dup of the scalar into tmp, barrier, then
		// every step followed by a barrier; i32 first converts a to f32
		// in place.
		vbar(0b1010, 0b1011, VBarAlways, "include/pto/npu/a2a3/TRemS.hpp (RemSF32Instr, RemSInt32Instr)").endBarrier()
	// Fused (TFusedMulAdd.hpp vmadd, TFusedMulAddRelu.hpp vmaddrelu,
	// TMulAddDst.hpp vmla, TAxpy.hpp vaxpy). The result is rounded once.
	fused := func(name, doc string) {
		def(name, FamVector, PipeV, CostVMul, aivOnly,
			[]OperandSpec{tileRW("dst", vecLocs...), tileR("a", vecLocs...), tileR("b", vecLocs...)},
			doc+"; rounded once (no a2a3 cost entry, charged as vmul)").chk(chkSame)
	}
	fused("tfusedmuladd", "dst = a·dst + b (vmadd)")
	fused("tfusedmuladdrelu", "dst = max(a·dst + b, 0) (vmaddrelu)")
	fused("tmuladddst", "dst = a·b + dst (vmla)")
	def("taxpy", FamVector, PipeV, CostVAxpy, aivOnly,
		[]OperandSpec{tileRW("dst", vecLocs...), tileR("a", vecLocs...), floatImm("s")},
		"dst = s·a + dst; an f16 a accumulates into an f32 dst, row by row (vaxpy)").chk(chkCvt).
		// One dtype: TBinSInstr. An f16 a into an f32 dst runs vaxpy's
		// repeats across rows whatever the shape (TAxpy.hpp AxpyNormMode),
		// which only a tile with dynamic valid columns is charged as.
		binS()
	// Products (TRowProd.hpp, TColProd.hpp: vmul folds).
	for _, n := range []string{"trowprod", "tcolprod"} {
		d := def(n, FamVector, PipeV, CostVMul, aivOnly,
			[]OperandSpec{tileW("dst", vecLocs...), tileR("a", vecLocs...), opt(scratchW("tmp", vecLocs...))},
			"reduce "+n[1:4]+"s by product (vmul folds)").chk(chkSameDType)
		if n == "tcolprod" {
			// Like tcolmax: copy, barrier, a barrier after every fold.
			d.vbar(0b111, 0, VBarAlways, "include/pto/npu/a2a3/TColReduceOps.hpp (ColReduceInstr)").fold(FoldCols)
		} else {
			// Per row: vector_dup into the scratch, barrier, vmul folds
			// each followed by a barrier, then the scalar multiplies the
			// scratch's lanes into dst between V→S and S→V flags.
			d.vbar(0b111, 0, VBarAlways, "include/pto/npu/a2a3/TRowProd.hpp (TRowProd)").fold(FoldRowBlocks)
		}
	}
	// exp(a - b) with b broadcast (TRowExpandExpdif.hpp, TColExpandExpdif.hpp).
	for _, n := range []string{"trowexpandexpdif", "tcolexpandexpdif"} {
		def(n, FamVector, PipeV, CostVExp, aivOnly,
			[]OperandSpec{tileW("dst", vecLocs...), tileR("a", vecLocs...), tileR("b", vecLocs...)},
			"exp(a - b) with b broadcast along "+n[1:4]+"s (vsub then vexp; charged as vexp)").chk(chkSameDType).
			// The subtract, barrier, then vexp of dst in place.
			vbar(0b111, 0b001, VBarAlways, "include/pto/npu/a2a3/T"+strings.ToUpper(n[1:2])+n[2:4]+"ExpandExpdif.hpp")
	}
	// Partial ops (TPartOp.hpp, TPartArgOp.hpp): where only one source's valid
	// region covers an element, that source's element.
	for _, v := range []opCost{{"tpartadd", CostVAdd}, {"tpartmul", CostVMul}, {"tpartmax", CostVMax}, {"tpartmin", CostVMin}} {
		vecOp3(v.name, v.cost, v.name[5:]+" where both sources are valid, else the valid one's element").chk(chkSameDType).
			// A b narrower than dst: a copied into dst, barrier, then the
			// op of b and dst into dst (TPartInstr).
			vbar(0b011, 0b101, VBarNarrowB, "include/pto/npu/a2a3/TPartOp.hpp (TPartInstr)")
	}
	for _, n := range []string{"tpartargmax", "tpartargmin"} {
		def(n, FamVector, PipeV, CostVSel, aivOnly,
			[]OperandSpec{tileW("dst", vecLocs...), tileW("dstidx", vecLocs...), tileR("a", vecLocs...), tileR("b", vecLocs...),
				tileR("aidx", vecLocs...), tileR("bidx", vecLocs...)},
			"partial "+n[5:]+": value and index of a where a "+map[string]string{"tpartargmax": "≥", "tpartargmin": "≤"}[n]+" b (so a on a tie, b where either is NaN), or of the only valid source (charged as vsel)").
			// Per row and repeat: vcmp of a and b, barrier, the two vsel,
			// barrier (TPartArgOps).
			vbar(0b001100, 0b111111, VBarSameValid, "include/pto/npu/a2a3/TPartArgOp.hpp (TPartArgOps)").endBarrier()
	}
	// Arg-reductions (TRowReduceIdxOps.hpp, TColReduceIdx.hpp).
	for _, v := range []struct {
		name string
		cost CostKey
	}{{"trowargmax", CostVCMax}, {"trowargmin", CostVCMin}, {"tcolargmax", CostVMax}, {"tcolargmin", CostVMin}} {
		axis := v.name[1:4]
		idx := def(v.name, FamVector, PipeV, v.cost, aivOnly,
			[]OperandSpec{tileW("dstidx", vecLocs...), tileR("a", vecLocs...), opt(scratchW("tmp", vecLocs...))},
			"index of the "+v.name[7:]+" of each "+axis+" (the first on a tie; NaN is never selected)")
		val := def(v.name+".val", FamVector, PipeV, v.cost, aivOnly,
			[]OperandSpec{tileW("dst", vecLocs...), tileW("dstidx", vecLocs...), tileR("a", vecLocs...), opt(scratchW("tmp", vecLocs...))},
			"value and index of the "+v.name[7:]+" of each "+axis)
		if axis == "row" {
			// Every vcmax/vcmin and vreducev2 is followed by a barrier,
			// the scalar steps sit between V→S and S→V flags. The index
			// form's first vcmax writes dstidx; the value form's writes
			// only tmp, so its outputs come after a barrier.
			const src = "include/pto/npu/a2a3/TRowReduceIdxOps.hpp (OneRepeatProcIdx, OneRepeatProcValIdx, ProcReduceIdxStage1/2)"
			idx.vbar(0b111, 0, VBarAlways, src).fold(FoldRowArg)
			val.vbar(0b1100, 0b1111, VBarAlways, src).endBarrier().fold(FoldRowArg)
		} else {
			// Per 256-byte column block: vector_dup of the running index
			// (dstidx, or tmp for 16-bit without the value), copy of a's
			// row 0 into tmp, barrier, then per row vcmp, barrier, vsel
			// and vmax, barrier. pto_instr_impl.hpp includes this file, not
			// TColArgMax.hpp/TColArgMin.hpp.
			const src = "include/pto/npu/a2a3/TColReduceIdx.hpp (ProcessSingleBlock)"
			idx.vbar(0b111, 0, VBarAlways, src).fold(FoldColArg)
			val.vbar(0b1110, 0b1111, VBarAlways, src).endBarrier().fold(FoldColArg)
		}
	}
	// Sorting (TSort32.hpp vbitsort, TMrgSort.hpp vmrgsort4). A sorted list
	// is (value, index) pairs of 8 bytes: f32 [value, index bits], f16
	// [value, 0, index bits].
	def("tsort32", FamVector, PipeV, CostVBitSort, aivOnly,
		[]OperandSpec{tileW("dst", vecLocs...), tileR("src", vecLocs...), tileR("idx", vecLocs...), opt(scratchW("tmp", vecLocs...))},
		"sort each 32-element block of each row descending, with its uint32 index, into (value, index) pairs; a short tail block is padded with -inf").
		// Every path ends each row's vbitsort (and the tail's copy and
		// -inf fill) with pipe_barrier(PIPE_V).
		vbar(0b1111, 0, VBarAlways, "include/pto/npu/a2a3/TSort32.hpp (TSort32Impl, LargeTmpBufferImpl)")
	def("tmrgsort", FamVector, PipeV, CostVMrgSort4, aivOnly,
		[]OperandSpec{tileW("dst", vecLocs...), tileR("src", vecLocs...), scalar("blocklen")},
		"merge 4 sorted runs of blocklen elements (pairs) per group of 4·blocklen, descending")
	def("tmrgsort.lists", FamVector, PipeV, CostVMrgSort4, aivOnly,
		[]OperandSpec{tileW("dst", vecLocs...), scratchW("tmp", vecLocs...), tileR("src0", vecLocs...), tileR("src1", vecLocs...),
			opt(tileR("src2", vecLocs...)), opt(tileR("src3", vecLocs...))},
		"merge 2-4 sorted lists of (value, index) pairs into dst, descending").
		// vmrgsort4 into tmp, then MovUb2Ub: pipe_barrier(PIPE_V) and a UB
		// copy from tmp to dst.
		vbar(0b111110, 0b000011, VBarAlways, "include/pto/npu/a2a3/TMrgSort.hpp (TMrgsort, MovUb2Ub)")
	// Generators (TCI.hpp, TTri.hpp). tci has no VBar: its barriers are in
	// TCI_IMPL's overload with a tmp tile, and tci takes the one without,
	// a scalar loop.
	def("tci", FamVector, PipeV, CostVDup, aivOnly,
		[]OperandSpec{tileW("dst", vecLocs...), scalar("start")},
		"dst's valid elements get start+k (start-k with #descending=1); dst has one row (TCI.hpp:24); a scalar loop, charged 2 scalar.op an element (TCI.hpp)").with(attrDesc).fold(FoldScalarFill)
	def("ttri", FamVector, PipeV, CostVDup, aivOnly,
		[]OperandSpec{tileW("dst", vecLocs...), scalar("diagonal")},
		"triangular 0/1 mask: lower j ≤ i+d, or with #upper=1, j ≥ i+d").with(attrUpper).
		// Per row: vector_dup of the background, barrier, vector_dup of
		// the triangle's part, barrier.
		vbar(0b1, 0, VBarAlways, "include/pto/npu/a2a3/TTri.hpp (TTril, TTriu)")
	// Layout (TFillPad.hpp, TConcat.hpp, TPairReduceSum.hpp, TGatherB.hpp).
	def("tfillpad", FamVector, PipeV, CostVCopy, aivOnly,
		[]OperandSpec{tileW("dst", vecLocs...), tileR("src", vecLocs...)},
		"dst's valid region gets src where src is valid, else the pad value (#pad=zero|max|min: ±inf for floats, the dtype's extreme for integers)").
		alias("tfillpad_expand", "tfillpad_inplace").with(attrPad).chk(chkSameDType).
		// vcopy of src into dst (none in place), the 32-byte-aligned pad,
		// then PadRightSingleRow's vector_dup and barrier; the other rows'
		// pad is copied from row 0 and the bottom rows filled after it.
		vbar(0b11, 0b01, VBarAlways, "include/pto/npu/a2a3/TFillPad.hpp (TFillPad, TFillPad_Inplace, PadRightSingleRow)")
	def("tconcat", FamVector, PipeV, CostVCopy, aivOnly,
		[]OperandSpec{tileW("dst", vecLocs...), tileR("a", vecLocs...), tileR("b", vecLocs...)},
		"each row of dst is a's valid columns then b's").chk(chkSameDType)
	def("tpairreducesum", FamVector, PipeV, CostVCGAdd, aivOnly,
		[]OperandSpec{tileW("dst", vecLocs...), tileR("src", vecLocs...)},
		"dst[i, k] = src[i, 2k] + src[i, 2k+1] for k < ⌊cols/2⌋; an odd last column is dropped and dst's other columns keep their contents (charged as vcgadd)").chk(chkSameDType).
		// Every vcpadd is followed by a barrier.
		vbar(0b11, 0, VBarPairs, "include/pto/npu/a2a3/TPairReduceSum.hpp (TPairReduceSum_1D/2D_NoPostUpdate)")
	def("tgatherb", FamVector, PipeV, CostVGatherB, aivOnly,
		[]OperandSpec{tileW("dst", vecLocs...), tileR("src", vecLocs...), tileR("offsets", vecLocs...)},
		"dst[i, j] = the element at byte offset offsets[i, j] from src's start")
	def("tgather.mask", FamVector, PipeV, CostVReduceV2, aivOnly,
		[]OperandSpec{tileW("dst", vecLocs...), tileR("src", vecLocs...)},
		"keep the elements of each row of src that #pattern selects, packed to the left of dst's row; element bits are copied, so an f32 slot may land in a u32 tile (TGather.hpp mask form, vreducev2)").
		with(attrPattern)
	// Fused converts (TAddReluConv.hpp vaddreluconv_*, TAddDeqRelu.hpp) and
	// int8 quantisation (TQuant.hpp), charged as their vconv.
	def("taddreluconv", FamVector, PipeV, CostVConv, aivOnly,
		[]OperandSpec{tileW("dst", vecLocs...), tileR("a", vecLocs...), tileR("b", vecLocs...)},
		"dst = convert(max(a + b, 0)), saturating, round to nearest even: f32→f16, f16→i8, i16→i8").chk(chkCvt)
	def("tadddeqrelu", FamVector, PipeV, CostVConv, aivOnly,
		[]OperandSpec{tileW("dst", vecLocs...), tileRW("a", vecLocs...), tileRW("b", vecLocs...), floatImm("deqscale"), scratchW("tmp", vecLocs...)},
		"f16 dst = max((a + b)·deqscale, 0) for i32 a, b: the int32 sum in tmp, then f32 steps ·2⁻¹⁷ ·deqscale ·2¹⁷ in a's bytes, relu in b's, saturating to f16; a and b end as f32 bits, tmp as zeros").chk(chkCvt).
		// Per row block: vadd of a and b into tmp, barrier, then the f32
		// steps (in a's and b's own bytes) and the f16 conversion into
		// dst, each followed by a barrier.
		vbar(0b10110, 0b10111, VBarAlways, "include/pto/npu/a2a3/TAddDeqRelu.hpp (AddDeqReluComputeBlock)").endBarrier()
	def("tquant", FamVector, PipeV, CostVConv, aivOnly,
		[]OperandSpec{tileW("dst", vecLocs...), tileRW("src", vecLocs...), tileR("scale", vecLocs...), scratchW("tmp", vecLocs...), opt(tileR("offset", vecLocs...))},
		"int8 quantisation of an f32 src, in place as A2/A3 does it: src = src·scale[i] (+ offset[i]), tmp = rint to i32, then f16 and a saturating i8 (or u8 with offset) dst").chk(chkCvt).
		// TROWEXPANDMUL of src by scale (in place, tmp as its scratch),
		// barrier, then TROWEXPANDADD of offset and the three TCVT, each
		// followed by a barrier.
		vbar(0b01110, 0b11011, VBarAlways, "include/pto/npu/a2a3/TQuant.hpp (TQUANT_IMPL)").endBarrier()
	// Quantisation (TDequant.hpp).
	def("tdequant", FamVector, PipeV, CostVConv, aivOnly,
		[]OperandSpec{tileW("dst", vecLocs...), tileR("src", vecLocs...), tileR("scale", vecLocs...), tileR("offset", vecLocs...)},
		"dst = f32(f32(src - offset[i, 0]) · scale[i, 0]): one f32 parameter per row, column 0 of scale and offset, each step rounded (charged as vconv)").
		// Per row a vconv of src into dst and a barrier; then per row the
		// scalar reads offset and scale between V→S and S→V flags, and
		// vadds and vmuls of dst, each followed by a barrier.
		vbar(0b0011, 0b1111, VBarAlways, "include/pto/npu/a2a3/TDequant.hpp (ConvertForDequant, ApplyScaleAndOffset)").endBarrier()
}

// notOnA2A3 names the pto-isa instructions ptoasm knows but does not accept:
// it models A2/A3, and these have no A2/A3 implementation in pto-isa
// (include/pto/npu/a2a3 at 3186c381 has no header for them).
var notOnA2A3 = map[string]string{
	"tinterleave":     "A5 only: include/pto/npu/a5/TInterleave.hpp",
	"tdeinterleave":   "A5 only: include/pto/npu/a5/TDeInterleave.hpp",
	"thistogram":      "A5 only: include/pto/npu/a5/THistogram.hpp",
	"trandom":         "A5 only: include/pto/npu/a5/TRandom.hpp",
	"tget_scale_addr": "A5 only: include/pto/npu/a5/TGetScaleAddr.hpp",
	"tmatmul_mx":      "A5 only: include/pto/npu/a5/TMatmul.hpp (MX formats)",
	"tgemv_mx":        "A5 only: include/pto/npu/a5/TMatmul.hpp (MX formats)",
	"tmatmul_mx_hif4": "A5 only: docs/isa/TMATMUL_MX_HIF4.md",
	"tquant_hif4":     "A5 only: docs/isa/TQUANT_HIF4.md",
	"tquant_dn":       "A5 only: docs/isa/TQUANT_DN.md (verified from A5 simulator logs)",
	"taddc":           "CPU simulator only: include/pto/cpu (no NPU implementation)",
	"tsubc":           "CPU simulator only: include/pto/cpu (no NPU implementation)",
	"taddsc":          "CPU simulator only: include/pto/cpu (no NPU implementation)",
	"tsubsc":          "CPU simulator only: include/pto/cpu (no NPU implementation)",
}

// NotOnA2A3 says why a pto-isa mnemonic is not accepted, or "" when it is
// not one of them.
func NotOnA2A3(name string) string {
	if why, ok := notOnA2A3[normOpName(name)]; ok {
		return fmt.Sprintf("%s is not an A2/A3 instruction (%s); ptoasm models A2/A3 (profile a2a3)", normOpName(name), why)
	}
	return ""
}
