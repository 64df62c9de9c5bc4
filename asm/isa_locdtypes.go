package asm

// Element types a move between two locations takes: pto-isa's a2a3
// TLOAD/TSTORE/TMOV/TEXTRACT/TINSERT pick their path by the tiles'
// locations (TileType), and each path static-asserts its own types. Lines
// are include/pto/npu/a2a3's, or include/pto/common/arch/memory's, at
// 3186c381. Ops here also keep their own checks (chkMove's same dtype
// outside L0C, checkTransfer's tile and tensor alike outside L0C).

// locDTypeRow restricts an op's destination and source types (operands 0
// and 1; a GM operand is its tensor's type) where its tiles sit at dst and
// src (LocInvalid: GM, or any location for atomic rows).
type locDTypeRow struct {
	ops      []string
	dst, src Loc
	// atomic: the row holds only under #atomic=add.
	atomic bool
	rules  []DTypeRule
	source string
}

// accQuant is what CheckTMovAccToMat (common.hpp:89-121) takes from L0C
// when the path converts without a quantisation parameter (isCastQuant:
// TMOV, TEXTRACT, TINSERT) and when it quantises (the .fp and .q forms).
var (
	accCast  = []DTypeRule{{{F16, BF16}, {F32}}}
	accQuant = []DTypeRule{{{I8}, {F32}}, {{I8, U8, F16, I16}, {I32}}}
)

var locDTypeRows = []locDTypeRow{
	// L1 to the bias table: an f16 source widens to f32, i32 and f32 copy.
	{ops: []string{"tmov", "tmov.m2b"}, dst: LocBias, src: LocMat,
		rules:  []DTypeRule{{{F32}, {F32, F16}}, {{I32}, {I32}}},
		source: "include/pto/npu/a2a3/TMov.hpp:27-34 (TMovToBt)"},
	// L1 to the fixpipe buffer: 64-bit quantisation parameters, copied.
	{ops: []string{"tmov", "tmov.m2s"}, dst: LocScaling, src: LocMat,
		rules:  []DTypeRule{{{U64}, {U64}}, {{I64}, {I64}}},
		source: "include/pto/npu/a2a3/TMov.hpp:62-65 (TMovToFb)"},
	// L0C to L1 without a quantisation parameter: every path casts f32 to
	// f16 or bf16 (isCastQuant true): TMOV's plain and ReLU forms
	// (TMov.hpp:160, 182), TEXTRACT's and TINSERT's. An f32 or i32 copy
	// into L1 has no such path on A2/A3: the fixpipe's quant modes are the
	// only way an i32 or an unconverted value leaves L0C for L1.
	{ops: []string{"tmov", "tmov.a2m", "textract", "tinsert"}, dst: LocMat, src: LocAcc,
		rules:  accCast,
		source: "include/pto/npu/a2a3/common.hpp:107-112 (CheckTMovAccToMat, isCastQuant; TMov.hpp:160, 182, TExtract.hpp:66, TInsert.hpp:181)"},
	{ops: []string{"tmov.fp", "tmov.q", "textract.fp", "tinsert.fp"}, dst: LocMat, src: LocAcc,
		rules:  accQuant,
		source: "include/pto/npu/a2a3/common.hpp:113-120 (CheckTMovAccToMat; TMov.hpp:193, 205, TExtract.hpp:517, 535, TInsert.hpp:216, 234)"},
	// L1 to L0A/L0B by window.
	{ops: []string{"textract"}, dst: LocLeft, src: LocMat,
		rules:  []DTypeRule{{{I8, F16, BF16, F32}}},
		source: "include/pto/npu/a2a3/TExtract.hpp:24-27 (CheckTExtract)"},
	{ops: []string{"textract"}, dst: LocRight, src: LocMat,
		rules:  []DTypeRule{{{I8, F16, BF16, F32}}},
		source: "include/pto/npu/a2a3/TExtract.hpp:24-27 (CheckTExtract)"},
	// L0C to GM: an f32 or i32 accumulator, plain into i32/f32/f16/bf16.
	{ops: []string{"tstore"}, src: LocAcc,
		rules:  []DTypeRule{{{I32, F32, F16, BF16}, {I32, F32}}},
		source: "include/pto/npu/a2a3/TStore.hpp:198-207 (CheckAcc2gm)"},
	// L0C to GM quantised (isQuant): f32 into i8/u8, i32 into i8/u8/f16.
	// Narrower than the L1 row: no i32→i16 shift (SHIFTS322S16 is a move
	// into L1 only) and no f32→f16/bf16 with a scale.
	{ops: []string{"tstore.fp", "tstore.q"}, src: LocAcc,
		rules:  []DTypeRule{{{I8, U8}, {F32}}, {{I8, U8, F16}, {I32}}},
		source: "include/pto/npu/a2a3/TStore.hpp:208-220 (CheckAcc2gm, isQuant; TStore.hpp:318, 342)"},
	// An atomic add into GM: the tensor's type from any location.
	{ops: []string{"tstore", "tstore.fp", "tstore.q"}, atomic: true,
		rules:  []DTypeRule{{{F16, F32, I16, I32, I8, BF16}}},
		source: "include/pto/common/arch/memory/tstore_common.hpp:151-155 (SetAtomicAdd)"},
}

// defsLocDTypes attaches locDTypeRows to their ops.
func defsLocDTypes() {
	byName := map[string]*opDef{}
	for _, d := range defs {
		byName[d.info.Name] = d
	}
	for i := range locDTypeRows {
		r := &locDTypeRows[i]
		for _, n := range r.ops {
			d := byName[n]
			if d == nil {
				panic("asm: location dtype row for " + n + ": no such op")
			}
			d.locDTypes = append(d.locDTypes, r)
		}
	}
}
