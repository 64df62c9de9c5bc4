package asm

import "fmt"

// Element types pto-isa's a2a3 implementation accepts, op by op, from the
// static_asserts of include/pto/npu/a2a3/<File>.hpp at 3186c381 (line
// numbers are the assert's). The assembler refuses any other combination
// (OpInfo.DTypes): the device build would fail, so the kernel must not run,
// lint or time here. Ops absent take what the machine runs; tpow, tpows,
// tfmod and tfmods carry their rules in isa_more.go.

// Element type sets the headers spell out.
var (
	dtFloat = []DType{F16, F32}
	// dtArith: int32, int16, half, float (TAdd.hpp's list and its kin).
	dtArith = []DType{I32, I16, F16, F32}
	// dtShift: TShl.hpp/TShr.hpp's 8-, 16- and 32-bit integers.
	dtShift = []DType{U8, I8, U16, I16, U32, I32}
	// dtShiftS: TBitwiseSOp.hpp TShiftCheck's.
	dtShiftS = []DType{I32, I16, U32, U16}
	// dtB8B16B32: any 1-, 2- or 4-byte element (sizeof checks).
	dtB8B16B32 = []DType{I8, U8, I16, U16, F16, BF16, I32, U32, F32}
	// dtB16B32: any 2- or 4-byte element.
	dtB16B32 = []DType{I16, U16, F16, BF16, I32, U32, F32}
	// dtB32: any 4-byte element.
	dtB32 = []DType{I32, U32, F32}
	// dtIdx32: a 32-bit index.
	dtIdx32 = []DType{I32, U32}
	// dtIdx: a 16- or 32-bit index.
	dtIdx = []DType{I16, U16, I32, U32}
	// dtListed: TConcat.hpp/TScatter.hpp/TExpandS.hpp's list (no 64-bit).
	dtListed = []DType{I32, I16, I8, U32, U16, U8, F16, F32, BF16}
)

type dtypeRow struct {
	ops    []string
	source string // file and line(s) under include/pto/npu/a2a3
	rules  []DTypeRule
}

// one is a rule restricting only operand i.
func one(i int, ts []DType) DTypeRule {
	r := make(DTypeRule, i+1)
	r[i] = ts
	return r
}

var dtypeRows = []dtypeRow{
	// Elementwise tile-tile and tile-scalar.
	{[]string{"tadd"}, "TAdd.hpp:62", []DTypeRule{{dtArith}}},
	{[]string{"tsub"}, "TSub.hpp:61", []DTypeRule{{dtArith}}},
	{[]string{"tmul"}, "TMul.hpp:61", []DTypeRule{{dtArith}}},
	{[]string{"tmax"}, "TMax.hpp:61", []DTypeRule{{dtArith}}},
	{[]string{"tmin"}, "TMin.hpp:62", []DTypeRule{{dtArith}}},
	{[]string{"tdiv"}, "TDiv.hpp:58", []DTypeRule{{dtFloat}}},
	{[]string{"tshl"}, "TShl.hpp:44", []DTypeRule{{dtShift}}},
	{[]string{"tshr"}, "TShr.hpp:44", []DTypeRule{{dtShift}}},
	{[]string{"tadds"}, "TAddS.hpp:52", []DTypeRule{{dtArith}}},
	{[]string{"tsubs"}, "TSubS.hpp:52", []DTypeRule{{dtArith}}},
	// TNEG_IMPL is TMULS by -1 (TUnaryOp.hpp:449).
	{[]string{"tmuls", "tneg"}, "TMulS.hpp:52", []DTypeRule{{dtArith}}},
	// TRECIP is TDIVS(dst, 1, src) (include/pto/common/pto_instr.hpp TRECIP).
	{[]string{"tdivs", "tsdivs", "trecip"}, "TDivS.hpp:220, 278", []DTypeRule{{dtArith}}},
	{[]string{"tmaxs"}, "TMaxS.hpp:53", []DTypeRule{{dtArith}}},
	{[]string{"tmins"}, "TMins.hpp:52", []DTypeRule{{dtArith}}},
	{[]string{"tshls", "tshrs"}, "TBitwiseSOp.hpp:24 (TShiftCheck)", []DTypeRule{{dtShiftS}}},
	{[]string{"texpands"}, "TExpandS.hpp:144", []DTypeRule{{dtListed}}},
	{[]string{"tlrelu"}, "TLRelu.hpp:53", []DTypeRule{{dtFloat}}},
	{[]string{"tprelu"}, "TPrelu.hpp:27", []DTypeRule{{dtFloat}}},
	{[]string{"tsubrelu"}, "TSubRelu.hpp:62", []DTypeRule{{dtFloat}}},
	{[]string{"trem"}, "TRem.hpp:177", []DTypeRule{{{F32, I32}}}},
	{[]string{"trems"}, "TRemS.hpp:155", []DTypeRule{{{F32, I32}}}},
	// Fused (each asserts dst, src0 and src1 alike).
	{[]string{"tfusedmuladd"}, "TFusedMulAdd.hpp:62", []DTypeRule{{dtFloat}}},
	{[]string{"tfusedmuladdrelu"}, "TFusedMulAddRelu.hpp:63", []DTypeRule{{dtFloat}}},
	{[]string{"tmuladddst"}, "TMulAddDst.hpp:62", []DTypeRule{{dtFloat}}},
	// dst f16 or f32; a the same, or f16 into an f32 dst.
	{[]string{"taxpy"}, "TAxpy.hpp:130-133", []DTypeRule{{{F32}, {F32, F16}}, {{F16}, {F16}}}},
	// TUnaryOp.hpp TunaryCheck's floatOnly (TUNARY_IMPL's default).
	{[]string{"texp", "tlog", "tsqrt", "trsqrt", "tabs"}, "TUnaryOp.hpp:265 (TunaryCheck)", []DTypeRule{{dtFloat}}},
	{[]string{"trelu"}, "TUnaryOp.hpp:408", []DTypeRule{{{F16, F32, I32}}}},
	// Compare: the sources; the mask destination is free.
	{[]string{"tcmp"}, "TCmp.hpp:119", []DTypeRule{one(1, []DType{I32, F16, F32})}},
	{[]string{"tcmps"}, "TCmps.hpp:155 (TcmpsCheck)", []DTypeRule{one(1, []DType{I32, F32, F16, U16, I16})}},
	{[]string{"tsel", "tsels"}, "TSel.hpp:67, TSels.hpp:54", []DTypeRule{{dtB16B32}}},
	// Reductions.
	{[]string{"trowsum", "trowmax", "trowmin"}, "TRowReduceOps.hpp:197 (TRowReduceCheck)", []DTypeRule{{dtArith}}},
	{[]string{"tcolsum"}, "TColSum.hpp:102", []DTypeRule{{dtArith}}},
	{[]string{"tcolmax", "tcolmin", "tcolprod"}, "TColReduceOps.hpp:87 (TColReduceCheck)", []DTypeRule{{dtArith}}},
	{[]string{"trowprod"}, "TRowProd.hpp:70", []DTypeRule{{dtArith}}},
	// Arg-reductions. Row: the index form takes a 32-bit index of any
	// TROWREDUCE source; the value form's index follows the value's width.
	{[]string{"trowargmax", "trowargmin"}, "TRowReduceIdxOps.hpp:36, TRowReduceOps.hpp:197",
		[]DTypeRule{{dtIdx32, dtArith}}},
	{[]string{"trowargmax.val", "trowargmin.val"}, "TRowReduceIdxOps.hpp:29, TRowReduceOps.hpp:197",
		[]DTypeRule{{{F32, I32}, dtIdx32, {F32, I32}}, {{F16, I16}, dtIdx, {F16, I16}}}},
	// Column: f16/u16/f32/u32 sources and a tmp of the source's type; the
	// index form's index is 32-bit, the value form's as wide as the value,
	// whose type is the source's.
	{[]string{"tcolargmax", "tcolargmin"}, "TColReduceIdx.hpp:26, 42, 85", colArgRules(false)},
	{[]string{"tcolargmax.val", "tcolargmin.val"}, "TColReduceIdx.hpp:26, 42, 59, 74-84", colArgRules(true)},
	// Expansions.
	{[]string{"trowexpand"}, "TRowExpand.hpp:82", []DTypeRule{{dtB8B16B32}}},
	{[]string{"tcolexpand"}, "TColExpand.hpp:44", []DTypeRule{{dtB8B16B32}}},
	{[]string{"trowexpandadd", "trowexpandsub", "trowexpandmul", "trowexpandmax", "trowexpandmin"},
		"TRowExpandAdd.hpp:40, TRowExpandSub.hpp:54, TRowExpandMul.hpp:40, TRowExpandMax.hpp:40, TRowExpandMin.hpp:40", []DTypeRule{{dtArith}}},
	{[]string{"trowexpanddiv"}, "TRowExpandDiv.hpp:55", []DTypeRule{{dtFloat}}},
	{[]string{"tcolexpandadd", "tcolexpandsub", "tcolexpandmul", "tcolexpandmax", "tcolexpandmin"},
		"TColExpandBinOp.hpp:89 (TCOLEXPANDOP_IMPL)", []DTypeRule{{dtArith}}},
	{[]string{"tcolexpanddiv"}, "TColExpandDiv.hpp:52", []DTypeRule{{dtFloat}}},
	// TROWEXPANDSUB then TEXP (TRowExpandExpdif.hpp:22-24).
	{[]string{"trowexpandexpdif"}, "TRowExpandSub.hpp:54, TUnaryOp.hpp:265", []DTypeRule{{dtFloat}}},
	{[]string{"tcolexpandexpdif"}, "TColExpandExpdif.hpp:59", []DTypeRule{{dtFloat}}},
	// Partial ops.
	{[]string{"tpartadd"}, "TPartAdd.hpp:74", []DTypeRule{{dtArith}}},
	{[]string{"tpartmul"}, "TPartMul.hpp:74", []DTypeRule{{dtArith}}},
	{[]string{"tpartmax"}, "TPartMax.hpp:74", []DTypeRule{{dtArith}}},
	{[]string{"tpartmin"}, "TPartMin.hpp:74", []DTypeRule{{dtArith}}},
	// dst, dstidx, a, b, aidx, bidx: the values of one type, the indices of
	// one type, which follows the value's width.
	{[]string{"tpartargmax", "tpartargmin"}, "TPartArgOp.hpp:182-194", partArgRules()},
	// Sorting, generators, layout.
	{[]string{"tsort32"}, "TSort32.hpp:150-157", []DTypeRule{{dtFloat, dtFloat, {U32}}}},
	{[]string{"tmrgsort", "tmrgsort.lists"}, "TMrgSort.hpp:183 (CheckStatic)", []DTypeRule{{dtFloat}}},
	{[]string{"tci"}, "TCI.hpp:21", []DTypeRule{{dtB16B32}}},
	{[]string{"ttri"}, "TTri.hpp:93", []DTypeRule{{{I32, I16, U32, U16, F16, F32}}}},
	{[]string{"tpairreducesum"}, "TPairReduceSum.hpp:135", []DTypeRule{{dtFloat}}},
	{[]string{"tconcat"}, "TConcat.hpp:75", []DTypeRule{{dtListed}}},
	{[]string{"tgather"}, "TGather.hpp:20-24", []DTypeRule{{dtB16B32, dtB16B32, dtB32}}},
	{[]string{"tgather.mask"}, "TGather.hpp:144", []DTypeRule{{dtB16B32, dtB16B32}}},
	{[]string{"tscatter"}, "TScatter.hpp:66-81", []DTypeRule{
		{dtB32, dtB32, dtIdx32}, {dtB16B32, dtB16B32, {I16, U16}}, {{I8, U8}, {I8, U8}, {I16, U16}}}},
	{[]string{"tgatherb"}, "TGatherB.hpp:147", []DTypeRule{{dtB8B16B32}}},
	{[]string{"tfillpad"}, "TFillPad.hpp:285-286", []DTypeRule{{dtB8B16B32}}},
	{[]string{"ttrans"}, "TTrans.hpp:1118", []DTypeRule{{dtB8B16B32}}},
	// Fused converts and quantisation: dst, then the sources.
	{[]string{"taddreluconv"}, "TAddReluConv.hpp:139-146", []DTypeRule{
		{{F16}, {F32}, {F32}}, {{I8}, {F16}, {F16}}, {{I8}, {I16}, {I16}}}},
	// dst, a, b, deqscale, tmp.
	{[]string{"tadddeqrelu"}, "TAddDeqRelu.hpp:137-140", []DTypeRule{{{F16}, {I32}, {I32}, nil, {I32}}}},
	// dst, src, scale, tmp, offset: i8 (INT8_SYM) or u8 (INT8_ASYM) from
	// f32, scaled by an f32 tile (TROWEXPANDMUL of src by scale), offset
	// one TileDataPara with scale. Which form needs the offset tile is
	// checkQuantOffset's.
	{[]string{"tquant"}, "TQuant.hpp:28-32, TRowExpandMul.hpp:107", []DTypeRule{{{I8, U8}, {F32}, {F32}, nil, {F32}}}},
	// dst, src, scale, offset.
	{[]string{"tdequant"}, "TDequant.hpp:113-124", []DTypeRule{{{F32}, {I8, I16}, {F32}, {F32}}}},
}

// cvtPairs are the conversions TCvt.hpp's GenCastCall dispatches, as
// destination types by source type: GenCastCall (lines 813-894, and f16 ↔
// int4, which ptoasm has no type for) and GenCastCallSpecialCases (757-795).
// There is no static_assert: another pair falls through the last `if
// constexpr` and compiles to no instruction, so the device leaves dst as
// it was while the machine would have converted.
var cvtPairs = []struct {
	src DType
	dst []DType
}{
	{F32, []DType{F16, F32, I64, I32, I16, BF16}},
	{F16, []DType{I32, I16, I8, U8, F32}},
	{BF16, []DType{I32, F32}},
	{I16, []DType{F16, F32}},
	{I32, []DType{F32, I64, I16, F16}},
	{I64, []DType{F32, I32}},
	{U8, []DType{F16}},
	{I8, []DType{F16}},
}

// colArgRules are tcolargmax's (dstidx, a, tmp) or, val, (dst, dstidx, a,
// tmp): tmp and the value of a's type, the index 32-bit or, for the value
// form, as wide as the value.
func colArgRules(val bool) []DTypeRule {
	var rules []DTypeRule
	for _, t := range []DType{F16, U16, F32, U32} {
		idx := dtIdx32
		if val && t.Size() == 2 {
			idx = []DType{I16, U16}
		}
		if val {
			rules = append(rules, DTypeRule{{t}, idx, {t}, {t}})
		} else {
			rules = append(rules, DTypeRule{idx, {t}, {t}})
		}
	}
	return rules
}

// partArgRules are tpartargmax's (dst, dstidx, a, b, aidx, bidx): one value
// type, f32 or f16, and one index type, 32-bit or, for f16, 16-bit too.
func partArgRules() []DTypeRule {
	var rules []DTypeRule
	for _, v := range []DType{F32, F16} {
		idxs := dtIdx32
		if v == F16 {
			idxs = dtIdx
		}
		for _, i := range idxs {
			rules = append(rules, DTypeRule{{v}, {i}, {v}, {v}, {i}, {i}})
		}
	}
	return rules
}

// defsDTypes applies dtypeRows to the table.
func defsDTypes() {
	byName := map[string]*opDef{}
	for _, d := range defs {
		byName[d.info.Name] = d
	}
	for _, row := range dtypeRows {
		for _, n := range row.ops {
			d := byName[n]
			if d == nil || d.info.DTypes != nil {
				panic(fmt.Sprintf("asm: dtype row for %q: no such op, or it has rules already", n))
			}
			d.dtypeRules("include/pto/npu/a2a3/"+row.source+" at 3186c381", row.rules...)
		}
	}
	var cvt []DTypeRule
	for _, p := range cvtPairs {
		cvt = append(cvt, DTypeRule{p.dst, {p.src}})
	}
	byName["tcvt"].dtypeRules("include/pto/npu/a2a3/TCvt.hpp:757-795, 813-894 at 3186c381", cvt...)
	byName["tcvt"].info.DTypeWhy = "dispatch (GenCastCall's pairs; any other compiles to no instruction, dst left as it was)"
}
