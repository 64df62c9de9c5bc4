package asm

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
)

// The ISA table. Every A2/A3 instruction the language accepts has one entry with
// its operand slots, accepted attributes, pipe (fixed, or routed by the operands'
// tile locations) and cost key (what the machine charges). The assembler
// validates against it; the machine dispatches on OpInfo.Name and charges by
// COp.Cost; `ptoasm ops` prints it.
//
// Naming: canonical names are lower case with their variant (`tmatmul.acc`). The
// collectives `tgather`/`tscatter` share their spelling with the tile ops of the
// same name; their canonical names are `tgather.comm`/`tscatter.comm` and the
// assembler picks them when an operand is a GM reference (see lookupAll).

// attrKind says what an attribute's value must be.
type attrKind uint8

const (
	attrWord  attrKind = iota // an enum word from words
	attrExpr                  // an integer expression (may use registers)
	attrConst                 // a static integer in [lo, hi]
	attrFloat                 // a float (or integer) immediate
)

// attrDomain describes one accepted `#key=value`.
type attrDomain struct {
	key    string
	kind   attrKind
	words  []string
	lo, hi int64
}

func (d attrDomain) String() string {
	switch d.kind {
	case attrWord:
		return d.key + "=" + strings.Join(d.words, "|")
	case attrConst:
		return fmt.Sprintf("%s=%d..%d", d.key, d.lo, d.hi)
	case attrFloat:
		return d.key + "=float"
	}
	return d.key + "=expr"
}

var (
	attrCmp    = attrDomain{key: "cmp", kind: attrWord, words: []string{"eq", "ne", "gt", "ge", "lt", "le"}}
	attrRnd    = attrDomain{key: "rnd", kind: attrWord, words: []string{"rint", "round", "floor", "ceil", "trunc", "odd", "none", "rne", "rz", "rp", "rm"}}
	attrAtomic = attrDomain{key: "atomic", kind: attrWord, words: []string{"none", "add"}}
	attrNotify = attrDomain{key: "op", kind: attrWord, words: []string{"set", "add"}}
	attrReduce = attrDomain{key: "op", kind: attrWord, words: []string{"sum", "max", "min"}}
	attrMode   = attrDomain{key: "mode", kind: attrConst, lo: 0, hi: 2}
	attrInit   = attrDomain{key: "init", kind: attrExpr}
	attrCount  = attrDomain{key: "count", kind: attrExpr}
	attrRows   = attrDomain{key: "rows", kind: attrExpr}
	attrCols   = attrDomain{key: "cols", kind: attrExpr}
	attrRoot   = attrDomain{key: "root", kind: attrExpr}
	// attrGroup is a collective's group size: the aligned block of that many ranks
	// holding the executing rank (pto-isa ParallelGroup nranks); default all ranks.
	attrGroup = attrDomain{key: "group", kind: attrExpr}
)

// checkKind selects the assembler's dtype/shape rule for an instruction.
type checkKind uint8

const (
	chkNone      checkKind = iota
	chkSame                // every tile operand has the destination's dtype and valid shape
	chkSameTmp             // as chkSame but for the last operand, a scratch the machine sizes (trem, trems)
	chkSameDType           // same dtype, shapes free (reductions, expands)
	chkCvt                 // same valid shape, any dtypes
	chkCmp                 // sources agree; the mask destination is free
	chkSel                 // d, mask, a, b: d/a/b agree
	chkMatmul              // M×K · K×N → M×N with the dtype pairs of the cube
	chkMove                // same dtype (tmov) and static shape; valid regions may differ
	chkExtract             // same dtype; source offsets checked when static
	chkTransfer            // GM window sized by the tile's valid shape
)

// opDef is one table row before it is published as an OpInfo.
type opDef struct {
	info  *OpInfo
	attrs []attrDomain
	check checkKind
	// route describes the routing for the printed table when Route is set.
	route string
	// locDTypes are the element types by location (isa_locdtypes.go).
	locDTypes []*locDTypeRow
}

var (
	aicOnly = []CoreKind{CoreAIC, CoreUnified}
	aivOnly = []CoreKind{CoreAIV, CoreUnified}
	anyCore = []CoreKind(nil)
	vecLocs = []Loc{LocVec}
)

func tileW(name string, locs ...Loc) OperandSpec {
	return OperandSpec{Name: name, Kinds: []ArgKind{ArgTile}, Access: AccWrite, Locs: locs}
}
func tileR(name string, locs ...Loc) OperandSpec {
	return OperandSpec{Name: name, Kinds: []ArgKind{ArgTile}, Access: AccRead, Locs: locs}
}
func tileRW(name string, locs ...Loc) OperandSpec {
	return OperandSpec{Name: name, Kinds: []ArgKind{ArgTile}, Access: AccRW, Locs: locs}
}

// scratchW is a reduction's or transpose's scratch tile: pto-isa writes it
// before it reads it (TRowReduceOps.hpp's FillTmp and the first vcgadd,
// TColSum.hpp's BinarySum, TTrans.hpp's TransFullSubTiles all fill tmp from
// src), so its earlier contents are neither read nor needed: a write. As a
// read it was an uninitialised read of a fresh scratch and a false RAW with
// its previous user.
func scratchW(name string, locs ...Loc) OperandSpec { return tileW(name, locs...) }

func gmR(name string) OperandSpec {
	return OperandSpec{Name: name, Kinds: []ArgKind{ArgGM}, Access: AccRead}
}
func gmW(name string) OperandSpec {
	return OperandSpec{Name: name, Kinds: []ArgKind{ArgGM}, Access: AccWrite}
}
func scalar(name string) OperandSpec {
	return OperandSpec{Name: name, Kinds: []ArgKind{ArgScalar}, Access: AccRead}
}
func floatImm(name string) OperandSpec {
	return OperandSpec{Name: name, Kinds: []ArgKind{ArgFloat}, Access: AccRead}
}
func pipeOpnd(name string) OperandSpec {
	return OperandSpec{Name: name, Kinds: []ArgKind{ArgPipe}}
}
func regW(name string) OperandSpec {
	return OperandSpec{Name: name, Kinds: []ArgKind{ArgReg}, Access: AccWrite}
}
func opt(s OperandSpec) OperandSpec { s.Optional = true; return s }

// rwIf is a tile operand read, and written too only when its dtype is dt.
func rwIf(dt DType, s OperandSpec) OperandSpec { s.Access, s.WriteDType = AccRW, dt; return s }

// routeMove routes tmov/textract/tinsert by (src, dst) location. Pairs that are not
// legal on A2/A3 (machine-facts §3.2) give PipeInvalid.
func routeMove(dst, src Loc) Pipe {
	switch {
	case src == LocMat && (dst == LocLeft || dst == LocRight || dst == LocBias):
		return PipeMTE1
	case src == LocMat && dst == LocScaling:
		return PipeFIX
	case src == LocAcc && dst == LocMat:
		return PipeFIX
	case src == LocVec && dst == LocVec:
		return PipeV
	}
	return PipeInvalid
}

func argLoc(args []Arg, i int) Loc {
	if i < len(args) && args[i].Kind == ArgTile && args[i].Tile != nil {
		return args[i].Tile.Loc
	}
	return LocInvalid
}

func routeTMov(args []Arg) Pipe { return routeMove(argLoc(args, 0), argLoc(args, 1)) }

func routeTExtract(args []Arg) Pipe {
	d, s := argLoc(args, 0), argLoc(args, 1)
	if s == LocMat && (d == LocLeft || d == LocRight) {
		return PipeMTE1
	}
	if s == LocAcc && d == LocMat {
		return PipeFIX
	}
	if s == LocVec && d == LocVec {
		return PipeV
	}
	return PipeInvalid
}

func routeTInsert(args []Arg) Pipe {
	d, s := argLoc(args, 0), argLoc(args, 1)
	if s == LocAcc && d == LocMat {
		return PipeFIX
	}
	if s == LocVec && d == LocVec {
		return PipeV
	}
	return PipeInvalid
}

func routeTLoad(args []Arg) Pipe {
	switch argLoc(args, 0) {
	case LocVec, LocMat:
		return PipeMTE2
	}
	return PipeInvalid
}

func routeTStore(args []Arg) Pipe {
	switch argLoc(args, 1) {
	case LocVec, LocMat:
		return PipeMTE3
	case LocAcc:
		return PipeFIX
	}
	return PipeInvalid
}

func routeTPush(args []Arg) Pipe {
	switch argLoc(args, 1) {
	case LocVec, LocMat:
		return PipeMTE3
	case LocAcc:
		return PipeFIX
	}
	return PipeInvalid
}

var defs []*opDef

// opCost pairs a mnemonic with the intrinsic it is charged as.
type opCost struct {
	name string
	cost CostKey
}

// def adds a row; it returns the def so callers can chain settings.
func def(name string, family Family, pipe Pipe, cost CostKey, cores []CoreKind, ops []OperandSpec, doc string) *opDef {
	d := &opDef{info: &OpInfo{Name: name, Family: family, Pipe: pipe, Cost: cost, Cores: cores, Operands: ops, Doc: doc}}
	defs = append(defs, d)
	return d
}

func (d *opDef) alias(a ...string) *opDef { d.info.Aliases = append(d.info.Aliases, a...); return d }
func (d *opDef) with(a ...attrDomain) *opDef {
	d.attrs = append(d.attrs, a...)
	for _, x := range a {
		d.info.Attrs = append(d.info.Attrs, x.key)
	}
	return d
}
func (d *opDef) chk(c checkKind) *opDef { d.check = c; return d }

// attrUnit is the L0C unit flag (pto-isa AccPhase / STPhase, type.hpp): a
// mad and the FIX read of its result hand L0C over without flags.
var attrUnit = attrDomain{key: "unit", kind: attrWord, words: []string{"partial", "final"}}

// attrRelu is the fixpipe's ReluPreMode (include/pto/common/type.hpp at
// 3186c381): NormalRelu zeroes the negative results of a move out of L0C,
// after its quantisation or cast (quantize_element and ConvertStoreValue,
// include/pto/cpu/common.hpp). Only an acc source has it (TStore.hpp,
// TMov.hpp take it for the Acc paths).
var attrRelu = attrDomain{key: "relu", kind: attrWord, words: []string{"none", "normal"}}

// vbar records the op's internal pipe_barrier(PIPE_V) (see VBarrier).
func (d *opDef) vbar(pre, post uint8, when VBarrierCond, source string) *opDef {
	d.info.VBar = &VBarrier{Pre: pre, Post: post, When: when, Source: source}
	return d
}

// fold marks a reduction charged as its chain of barrier-separated
// instructions (OpInfo.Fold).
func (d *opDef) fold(k FoldKind) *opDef {
	d.info.Fold = k
	return d
}

// binS marks an op built on pto-isa's TBinSInstr (OpInfo.RowsIfDynCols).
func (d *opDef) binS() *opDef {
	d.info.RowsIfDynCols = true
	return d
}

// endBarrier marks the op's recorded barrier as followed by another after
// its last access (VBarrier.Tail).
func (d *opDef) endBarrier() *opDef {
	d.info.VBar.Tail = true
	return d
}

// dtypes restricts the destination's element type to ts, as source (a
// pto-isa a2a3 header's static_assert) does (OpInfo.DTypes).
func (d *opDef) dtypes(source string, ts ...DType) *opDef {
	return d.dtypeRules(source, DTypeRule{ts})
}

// dtypeRules restricts the op's tile operands to the combinations rules
// accept, as source does (OpInfo.DTypes).
func (d *opDef) dtypeRules(source string, rules ...DTypeRule) *opDef {
	d.info.DTypes, d.info.DTypeSource = rules, source
	return d
}

func (d *opDef) routed(desc string, f func([]Arg) Pipe) *opDef {
	d.info.Route, d.route = f, desc
	return d
}

func init() {
	// GM <-> tile.
	def("tload", FamTile, PipeInvalid, CostDMA, anyCore,
		[]OperandSpec{tileW("dst", LocVec, LocMat), gmR("src")},
		"load the tile's valid shape from GM starting at the element given").
		routed("GM→vec MTE2, GM→mat MTE2", routeTLoad).chk(chkTransfer)
	def("tstore", FamTile, PipeInvalid, CostDMA, anyCore,
		[]OperandSpec{gmW("dst"), tileR("src", LocVec, LocMat, LocAcc)},
		"store the tile's valid shape to GM (pto-isa order `tstore %t, @C[i, j]` accepted)").
		with(attrAtomic, attrUnit, attrRelu).routed("vec→GM MTE3, mat→GM MTE3, acc→GM FIX", routeTStore).chk(chkTransfer)
	def("tprefetch", FamTile, PipeMTE2, CostDMA, aivOnly,
		[]OperandSpec{tileW("dst", LocVec), gmR("src")},
		"prefetch a GM window into a vec tile").chk(chkTransfer)

	// Tile moves.
	def("tmov", FamMove, PipeInvalid, CostMove, anyCore,
		[]OperandSpec{tileW("dst"), tileR("src")},
		"copy src's valid region to dst, a tile of the same static shape (vec→vec: the smaller of the two valid regions, whole rows when dst's valid width is the tile's, TMovToVec); legal A2/A3 pairs: mat→left/right/bias/scaling, acc→mat, vec→vec").
		with(attrUnit, attrRelu).routed("mat→left/right/bias MTE1, mat→scaling FIX, acc→mat FIX, vec→vec V", routeTMov).chk(chkMove)
	for _, v := range []struct {
		name     string
		dst, src Loc
	}{
		{"tmov.m2l", LocLeft, LocMat}, {"tmov.m2r", LocRight, LocMat}, {"tmov.m2b", LocBias, LocMat},
		{"tmov.m2s", LocScaling, LocMat}, {"tmov.a2m", LocMat, LocAcc}, {"tmov.v2v", LocVec, LocVec},
	} {
		p := routeMove(v.dst, v.src)
		cores := aicOnly
		if p == PipeV {
			cores = aivOnly
		}
		// These run on one fixed pipe: a DMA on their path, or on V the UB→UB copy.
		cost := CostDMA
		if p == PipeV {
			cost = CostUBCopy
		}
		d := def(v.name, FamMove, p, cost, cores,
			[]OperandSpec{tileW("dst", v.dst), tileR("src", v.src)},
			fmt.Sprintf("tmov %s→%s", v.src, v.dst)).chk(chkMove)
		if v.src == LocAcc {
			d.with(attrUnit, attrRelu)
		}
	}
	def("textract", FamMove, PipeInvalid, CostMove, anyCore,
		[]OperandSpec{tileW("dst"), tileR("src"), scalar("row"), scalar("col")},
		"copy the dst-sized window of src at (row, col) into dst").
		routed("mat→left/right MTE1, acc→mat FIX, vec→vec V", routeTExtract).chk(chkExtract)
	def("tinsert", FamMove, PipeInvalid, CostMove, anyCore,
		[]OperandSpec{tileW("dst"), tileR("src"), scalar("row"), scalar("col")},
		"write src's valid region into dst at (row, col)").
		routed("acc→mat FIX, vec→vec V", routeTInsert).chk(chkExtract)

	// Cube.
	for _, base := range []string{"tmatmul", "tgemv"} {
		what := "C = A·B"
		if base == "tgemv" {
			what = "matrix-vector C = A·B (A has one row)"
		}
		unit := "; #unit=partial|final: the L0C unit flag (docs/isa.md, \"Unit flag\")"
		def(base, FamCube, PipeM, CostMad, aicOnly,
			[]OperandSpec{tileW("c", LocAcc), tileR("a", LocLeft), tileR("b", LocRight)}, what+unit).with(attrUnit).chk(chkMatmul)
		def(base+".acc", FamCube, PipeM, CostMad, aicOnly,
			[]OperandSpec{tileRW("c", LocAcc), tileR("a", LocLeft), tileR("b", LocRight)},
			what+" accumulated into C; #init non-zero starts from zero"+unit).with(attrInit, attrUnit).chk(chkMatmul)
		def(base+".bias", FamCube, PipeM, CostMad, aicOnly,
			[]OperandSpec{tileW("c", LocAcc), tileR("a", LocLeft), tileR("b", LocRight), tileR("bias", LocBias)},
			what+" plus a bias row"+unit).with(attrUnit).chk(chkMatmul)
	}

	// Vector binary.
	for _, v := range []opCost{
		{"tadd", CostVAdd}, {"tsub", CostVSub}, {"tmul", CostVMul}, {"tdiv", CostVDiv}, {"tmax", CostVMax},
		{"tmin", CostVMin}, {"tand", CostVAnd}, {"tor", CostVOr}, {"txor", CostVXor}, {"tshl", CostVShl}, {"tshr", CostVShr},
	} {
		d := def(v.name, FamVector, PipeV, v.cost, aivOnly,
			[]OperandSpec{tileW("dst", vecLocs...), tileR("a", vecLocs...), tileR("b", vecLocs...)},
			"elementwise "+strings.TrimPrefix(v.name, "t")).chk(chkSame)
		if v.name == "txor" {
			// a2a3 has no vxor: TOR into a scratch, barrier, TAND into
			// dst, barrier, TNOT, barrier, TAND with the scratch. a and b
			// are read only before the last barrier, dst written after
			// the first.
			d.vbar(0b110, 0b001, VBarAlways, "include/pto/npu/a2a3/TXor.hpp (TXOR_IMPL)")
		}
	}
	// Vector with a scalar immediate. tdivs keeps vdiv as its key but is
	// charged as TDivS.hpp's sequence (FoldDivS): a vector_dup, a barrier and
	// vdiv per TBinSInstr call, which is the formula backend's ≈5 cycles an
	// fp32 repeat (vdiv's 4 and vector_dup's 1; machine-facts §4.6).
	for _, v := range []opCost{
		{"tadds", CostVAddS}, {"tsubs", CostVAddS}, {"tmuls", CostVMulS}, {"tdivs", CostVDiv},
		{"tmaxs", CostVMaxS}, {"tmins", CostVMinS},
	} {
		d := def(v.name, FamVector, PipeV, v.cost, aivOnly,
			[]OperandSpec{tileW("dst", vecLocs...), tileR("a", vecLocs...), floatImm("s")},
			"elementwise "+strings.TrimSuffix(strings.TrimPrefix(v.name, "t"), "s")+" with a scalar").chk(chkSame).
			// TAddS.hpp, TSubS.hpp, TMulS.hpp, TDivS.hpp (float; integer
			// TDIVS is a scalar loop), TMaxS.hpp, TMins.hpp.
			binS()
		if v.name == "tdivs" {
			d.fold(FoldDivS)
		}
	}
	// The scalar divided by each element: pto-isa's other TDIVS overload,
	// TDIVS(dst, scalar, src) (pto_instr.hpp), whose a2a3 TSDiv runs the
	// same TBinSInstr calls with SDivOp: a vector_dup of the scalar into
	// dst, a barrier, vdiv(dst, dst, src); integers TSDiv_naive's scalar
	// loop (TDivS.hpp at 3186c381). PTO-AS writes it `tdivs %d, s, %a`,
	// which the assembler reads as this op.
	def("tsdivs", FamVector, PipeV, CostVDiv, aivOnly,
		[]OperandSpec{tileW("dst", vecLocs...), floatImm("s"), tileR("a", vecLocs...)},
		"the scalar divided by each element (pto-isa's TDIVS(dst, scalar, src); `tdivs %d, s, %a` reads as this)").
		chk(chkSame).binS().fold(FoldDivS)
	def("texpands", FamVector, PipeV, CostVDup, aivOnly,
		[]OperandSpec{tileW("dst", vecLocs...), floatImm("s")}, "fill dst with a scalar").chk(chkSame)
	// Vector unary. tneg is a multiply by -1.
	for _, v := range []opCost{
		{"texp", CostVExp}, {"tlog", CostVLn}, {"tsqrt", CostVSqrt}, {"trsqrt", CostVRsqrt}, {"trecip", CostVRec},
		{"tabs", CostVAbs}, {"tneg", CostVMulS}, {"trelu", CostVRelu}, {"tnot", CostVNot},
	} {
		def(v.name, FamVector, PipeV, v.cost, aivOnly,
			[]OperandSpec{tileW("dst", vecLocs...), tileR("a", vecLocs...)},
			"elementwise "+strings.TrimPrefix(v.name, "t")).chk(chkSame)
	}
	def("tlrelu", FamVector, PipeV, CostVLRelu, aivOnly,
		[]OperandSpec{tileW("dst", vecLocs...), tileR("a", vecLocs...), floatImm("slope")},
		"leaky relu with a scalar slope").chk(chkSame).binS() // TLRelu.hpp
	// tprelu = multiply by the slope tile then select; the multiply dominates.
	def("tprelu", FamVector, PipeV, CostVMul, aivOnly,
		[]OperandSpec{tileW("dst", vecLocs...), tileR("a", vecLocs...), tileR("slope", vecLocs...)},
		"parametric relu with a slope tile").chk(chkSame).
		// TMUL into dst, barriers around a compare into a scratch, then
		// TSEL reads a and dst and writes dst.
		vbar(0b111, 0b011, VBarAlways, "include/pto/npu/a2a3/TPrelu.hpp (TPRELU_IMPL)")
	def("tcvt", FamVector, PipeV, CostVConv, aivOnly,
		[]OperandSpec{tileW("dst", vecLocs...), tileR("a", vecLocs...)},
		"convert dtype with rounding #rnd").with(attrRnd).chk(chkCvt).
		// i32 → f16 only: per repeat group set_deqscale(1.0), barrier,
		// vconv_deq, so every access comes after a barrier. The
		// NonSatTorch paths' barriers are in the overload with a tmp
		// tile (and EDGE_CASE_ALIGN_ENABLE), which tcvt does not take.
		vbar(0, 0b11, VBarDeq, "include/pto/npu/a2a3/TCvt.hpp (GenCastCallSpecialCases)")
	// Reductions and expansions. tcolsum folds rows with vadd: a copy of row
	// 0, then rows-1 dependent row-adds each behind a barrier, charged per
	// row (FoldCols; docs/profile.md "Per-instruction audit"); tcolmax/tcolmin
	// likewise.
	for _, v := range []opCost{
		{"trowsum", CostVCAdd}, {"trowmax", CostVCMax}, {"trowmin", CostVCMin},
		{"tcolsum", CostVAdd}, {"tcolmax", CostVMax}, {"tcolmin", CostVMin},
	} {
		d := def(v.name, FamVector, PipeV, v.cost, aivOnly,
			[]OperandSpec{tileW("dst", vecLocs...), tileR("a", vecLocs...), opt(scratchW("tmp", vecLocs...))},
			"reduce "+strings.TrimPrefix(v.name, "t")[:3]+"s by "+strings.TrimPrefix(v.name, "t")[3:]).chk(chkSameDType)
		switch {
		case strings.HasPrefix(v.name, "trow"):
			// TRowReduceInstr ends every float/half path (and the FP32
			// shortcuts) with pipe_barrier(PIPE_V) after its last write;
			// the int16/int32 path folds each row into the scratch with a
			// barrier after every vector op, then the scalar writes dst
			// between V→S and S→V flags, which order later V ops too.
			d.vbar(0b111, 0, VBarAlways, "include/pto/npu/a2a3/TRowReduceOps.hpp (TRowReduceInstr, OneRepeatProc, ReduceOptFP32_*), TRow"+
				strings.ToUpper(v.name[4:5])+v.name[5:]+".hpp (integer path)")
		case v.name == "tcolsum":
			// The tmp form (binary or sequential) ends with a barrier
			// after its last access, also for one row; the form without
			// tmp has none when there is a single row.
			d.vbar(0b111, 0, VBarTmp, "include/pto/npu/a2a3/TColSum.hpp (TColSum, BinarySum, SequentialSum)").fold(FoldCols)
		default:
			// Copy row 0 to dst, barrier, then fold each further row
			// into dst with a barrier after every fold.
			d.vbar(0b111, 0, VBarAlways, "include/pto/npu/a2a3/TColReduceOps.hpp (ColReduceInstr)").fold(FoldCols)
		}
	}
	// trowexpand broadcasts with vbrcb; tcolexpand copies the row to every row
	// of dst, which pto-isa lowers to vcopy repeats.
	for _, v := range []opCost{{"trowexpand", CostVBrcb}, {"tcolexpand", CostVCopy}} {
		n := v.name
		def(n, FamVector, PipeV, v.cost, aivOnly,
			[]OperandSpec{tileW("dst", vecLocs...), tileR("a", vecLocs...)},
			"broadcast a "+strings.TrimSuffix(strings.TrimPrefix(n, "t"), "expand")+" vector over dst").chk(chkSameDType)
	}
	for _, base := range []string{"trowexpand", "tcolexpand"} {
		for _, v := range []opCost{{"add", CostVAdd}, {"sub", CostVSub}, {"mul", CostVMul}, {"div", CostVDiv}, {"max", CostVMax}, {"min", CostVMin}} {
			d := def(base+v.name, FamVector, PipeV, v.cost, aivOnly,
				[]OperandSpec{tileW("dst", vecLocs...), tileR("a", vecLocs...), tileR("b", vecLocs...)},
				v.name+" a and b broadcast along "+strings.TrimSuffix(strings.TrimPrefix(base, "t"), "expand")+"s").chk(chkSameDType)
			if base == "trowexpand" {
				// A column-major b is broadcast with vbrcb into a scratch,
				// then pipe_barrier(PIPE_V), then the binary op reads a
				// and the scratch and writes dst.
				d.vbar(0b100, 0b011, VBarColB, "include/pto/npu/a2a3/TRowExpandBinOp.hpp (TRowExpandBinaryInstr)")
			}
		}
	}
	// Compare and select.
	def("tcmp", FamVector, PipeV, CostVCmpvGE, aivOnly,
		[]OperandSpec{tileW("mask", vecLocs...), tileR("a", vecLocs...), tileR("b", vecLocs...)},
		"compare elementwise into a mask tile").with(attrCmp).chk(chkCmp).
		// ne is the eq compare, a barrier, then vnot of the mask in place.
		vbar(0b111, 0b001, VBarCmpNE, "include/pto/npu/a2a3/TCmp.hpp (TCmp)")
	def("tcmps", FamVector, PipeV, CostVCmp, aivOnly,
		[]OperandSpec{tileW("mask", vecLocs...), tileR("a", vecLocs...), floatImm("s")},
		"compare with a scalar into a mask tile").with(attrCmp).chk(chkCmp).
		vbar(0b011, 0b001, VBarCmpNE, "include/pto/npu/a2a3/TCmps.hpp (TCmps)")
	def("tsel", FamVector, PipeV, CostVSel, aivOnly,
		[]OperandSpec{tileW("dst", vecLocs...), tileR("mask", vecLocs...), tileR("a", vecLocs...), tileR("b", vecLocs...)},
		"dst = mask ? a : b").chk(chkSel).
		// Per row: vector_dup of the mask's address into a scratch,
		// barrier, set_cmpmask, barrier, vsel: every operand access comes
		// after the first barrier.
		vbar(0, 0b1111, VBarAlways, "include/pto/npu/a2a3/TSel.hpp (TSel)")
	def("tsels", FamVector, PipeV, CostVSel, aivOnly,
		[]OperandSpec{tileW("dst", vecLocs...), tileR("mask", vecLocs...), tileR("a", vecLocs...), floatImm("s")},
		"dst = mask ? a : s").chk(chkSel).
		// The scalar goes to a scratch, set_cmpmask, barrier, then the
		// vsel rows.
		vbar(0, 0b111, VBarAlways, "include/pto/npu/a2a3/TSels.hpp (TSels)")
	def("tgather", FamVector, PipeV, CostVGather, aivOnly,
		[]OperandSpec{tileW("dst", vecLocs...), tileR("a", vecLocs...), tileR("idx", vecLocs...)},
		"tile gather by an index tile (with GM operands: the collective tgather.comm)").
		// Per row: vmuls of the indices into byte offsets (in dst for
		// 32-bit, a scratch for 16-bit dtypes), barrier, vgather reads a.
		vbar(0b101, 0b011, VBarAlways, "include/pto/npu/a2a3/TGather.hpp (TGather, index form)")
	def("tscatter", FamVector, PipeV, CostVGather, aivOnly,
		[]OperandSpec{tileW("dst", vecLocs...), tileR("a", vecLocs...), tileR("idx", vecLocs...)},
		"tile scatter by an index tile (with GM operands: the collective tscatter.comm)")
	def("ttrans", FamVector, PipeV, CostVTrans, aivOnly,
		[]OperandSpec{tileW("dst", vecLocs...), tileR("a", vecLocs...), opt(scratchW("tmp", vecLocs...))},
		"transpose").chk(chkSameDType).
		// vnchwconv of a into tmp, barrier, UB→UB copy of tmp into dst.
		// Strides the 16×16 (32×32 for 8-bit) blocks do not divide take
		// a scalar loop between V→S and S→V flags instead, which orders
		// at least as much.
		vbar(0b110, 0b101, VBarAlways, "include/pto/npu/a2a3/TTrans.hpp (TTransOperation, TransTailTiles)")

	// Intra-core sync.
	def("set_flag", FamSync, PipeS, CostSync, anyCore,
		[]OperandSpec{pipeOpnd("src"), pipeOpnd("dst"), scalar("id")},
		fmt.Sprintf("set event (src, dst, id) once src's earlier work completes; ids 0–%d", NumEventIDs-1)).alias("set_flag_dyn")
	def("wait_flag", FamSync, PipeS, CostSync, anyCore,
		[]OperandSpec{pipeOpnd("src"), pipeOpnd("dst"), scalar("id")},
		"block dst until event (src, dst, id) is set, then clear it").alias("wait_flag_dyn")
	def("pipe_barrier", FamSync, PipeS, CostSync, anyCore,
		[]OperandSpec{pipeOpnd("pipe")},
		"order the pipe after its own earlier work; ALL drains every pipe (pto-isa TSYNC<pipe>)").alias("barrier", "tsync")
	def("dsb", FamSync, PipeS, CostSync, anyCore, nil, "data synchronisation barrier (GM writes visible)").alias("dcci")
	def("ffts_set", FamSync, PipeS, CostSync, anyCore,
		[]OperandSpec{pipeOpnd("pipe"), scalar("id")},
		fmt.Sprintf("FFTS cross-core set after pipe's earlier work; ids 0–%d; #mode=2 on an AIC raises both AIVs' counters, on an AIV counts once both AIVs have set (two sets of one AIV wait for the other's)", NumFFTSIDs-1)).
		alias("set_cross_core", "ffts_cross_core_sync").with(attrMode)
	def("ffts_wait", FamSync, PipeS, CostSync, anyCore,
		[]OperandSpec{scalar("id")},
		"wait for an FFTS cross-core flag (stalls the whole core on A2/A3)").alias("wait_flag_dev")
	def("syncall", FamSync, PipeS, CostSync, anyCore, nil, "grid barrier: drains the core's pipes, then waits for every core of its stream on its rank")
	def("tpush", FamSync, PipeInvalid, CostDMA, anyCore,
		[]OperandSpec{gmW("fifo"), tileR("src", LocVec, LocMat, LocAcc)},
		"push a tile into a fifo slot (waits for a free slot, stores, signals ready)").
		routed("acc→FIX, vec/mat→MTE3", routeTPush)
	def("tpop", FamSync, PipeMTE2, CostDMA, anyCore,
		[]OperandSpec{tileW("dst", LocVec, LocMat), gmR("fifo")},
		"pop a tile from a fifo slot (waits for ready, loads, frees the slot)")

	// Scalar.
	def("ld", FamScalar, PipeS, CostScalar, anyCore,
		[]OperandSpec{regW("dst"), gmR("src")}, "scalar GM load through the data cache").alias("load_scalar")
	def("st", FamScalar, PipeS, CostScalar, anyCore,
		[]OperandSpec{gmW("dst"), scalar("val")}, "scalar GM store through the data cache").alias("store_scalar")
	// pto-isa a2a3/TPrint.hpp: a pipe_barrier ALL, then the scalar reads the
	// tile through cce::printf (%8.4f for floats, %8d / %8u for integers).
	def("tprint", FamScalar, PipeS, CostScalar, aivOnly,
		[]OperandSpec{tileR("src", vecLocs...)},
		"debug print of a vec tile's valid region after draining every pipe (run --print shows it)")

	// Communication. These are composite on A2/A3; Pipe is S and the machine expands them.
	const composite = " (composite: the machine expands it into MTE2/MTE3/V steps)"
	def("tput", FamComm, PipeS, CostDMA, aivOnly,
		[]OperandSpec{gmW("dst"), gmR("src"), tileRW("ping", vecLocs...), opt(tileRW("pong", vecLocs...))},
		"copy local GM to a remote window through the staging tiles"+composite).with(attrAtomic, attrRows, attrCols).chk(chkTransfer)
	def("tget", FamComm, PipeS, CostDMA, aivOnly,
		[]OperandSpec{gmW("dst"), gmR("src"), tileRW("ping", vecLocs...), opt(tileRW("pong", vecLocs...))},
		"copy a remote window to local GM through the staging tiles"+composite).with(attrRows, attrCols).chk(chkTransfer)
	def("tput_async", FamComm, PipeS, CostDMA, anyCore,
		[]OperandSpec{regW("event"), gmW("dst"), gmR("src")},
		"hand a flat copy to SDMA; the result register names the transfer").with(attrRows, attrCols)
	def("tget_async", FamComm, PipeS, CostDMA, anyCore,
		[]OperandSpec{regW("event"), gmW("dst"), gmR("src")},
		"hand a flat remote read to SDMA; the result register names the transfer").with(attrRows, attrCols)
	// An SDMA cache-maintenance op (pto-isa TPrefetchAsyncImpl.hpp, CMO
	// opcode 6): it moves no data the kernel sees, only warms L2 lines.
	def("tprefetch_async", FamComm, PipeS, CostDMA, anyCore,
		[]OperandSpec{regW("event"), gmR("src")},
		"have SDMA prefetch a flat GM window into its rank's L2 (no data moves); the result register names the transfer").with(attrRows, attrCols)
	def("wait_async", FamComm, PipeS, CostSync, anyCore,
		[]OperandSpec{scalar("event")}, "wait until an async transfer and every earlier one of its core completed (not later ones)").alias("wait_async_event")
	def("tnotify", FamComm, PipeS, CostScalar, anyCore,
		[]OperandSpec{gmW("signal"), scalar("val")},
		"store or atomically add to a (remote) int32 signal, then drain every pipe (the word is stored first: data it publishes needs `pipe_barrier ALL` and `dsb` before it)").with(attrNotify)
	def("twait", FamComm, PipeS, CostScalar, anyCore,
		[]OperandSpec{gmR("signal"), scalar("val")},
		"spin until every signal element compares true against val").with(attrCmp, attrCount)
	def("ttest", FamComm, PipeS, CostScalar, anyCore,
		[]OperandSpec{regW("res"), gmR("signal"), scalar("val")},
		"one pass of twait: res = 1 when every element compares true").with(attrCmp, attrCount)
	def("tbroadcast", FamComm, PipeS, CostDMA, aivOnly,
		[]OperandSpec{gmW("dst"), gmR("src"), tileRW("stage", vecLocs...)},
		"root's src to dst on every rank"+composite).with(attrRoot, attrGroup, attrRows, attrCols).chk(chkTransfer)
	def("tgather.comm", FamComm, PipeS, CostDMA, aivOnly,
		[]OperandSpec{gmW("dst"), gmR("src"), tileRW("stage", vecLocs...)},
		"every rank's src into slice r of root's dst"+composite).with(attrRoot, attrGroup, attrRows, attrCols).chk(chkTransfer)
	def("tscatter.comm", FamComm, PipeS, CostDMA, aivOnly,
		[]OperandSpec{gmW("dst"), gmR("src"), tileRW("stage", vecLocs...)},
		"slice r of root's src to rank r's dst"+composite).with(attrRoot, attrGroup, attrRows, attrCols).chk(chkTransfer)
	def("treduce", FamComm, PipeS, CostDMA, aivOnly,
		[]OperandSpec{gmW("dst"), gmR("src"), tileRW("acc", vecLocs...), tileRW("recv", vecLocs...)},
		"reduce every rank's src into root's dst"+composite).with(attrReduce, attrRoot, attrGroup, attrRows, attrCols).chk(chkTransfer)
	def("tallgather", FamComm, PipeMTE2, CostDMA, anyCore,
		[]OperandSpec{tileW("dst", LocVec, LocMat), gmR("src")},
		"the FFN mock's band gather: a TLOAD from a (remote) window").chk(chkTransfer)

	defsMore()
	defsImg()
	defsView()
	defsDTypes()
	defsLocDTypes()
	sort.Slice(defs, func(i, j int) bool { return defs[i].info.Name < defs[j].info.Name })
	for _, d := range defs {
		d.info.Op = opcodeOf[d.info.Name] // OpNone when missing: TestOpcodesCoverISA
		infoOf[d.info.Op] = d.info
		ISA = append(ISA, d.info)
		defOf[d.info] = d
		for _, n := range append([]string{d.info.Name}, d.info.Aliases...) {
			byName[n] = append(byName[n], d)
		}
	}
	// The collectives answer to the tile ops' spelling too; the tile op stays first.
	byName["tgather"] = append(byName["tgather"], byName["tgather.comm"]...)
	byName["tscatter"] = append(byName["tscatter"], byName["tscatter.comm"]...)
	// So do the fifo's GlobalData forms, which take no tile (isa_view.go).
	byName["tpush"] = append(byName["tpush"], byName["tpush.slot"]...)
	byName["tpop"] = append(byName["tpop"], byName["tpop.slot"]...)
	for n := range byName {
		names = append(names, n)
	}
	sort.Strings(names)
}

// ISA is the instruction table, sorted by canonical name.
var ISA []*OpInfo

var (
	defOf  = map[*OpInfo]*opDef{}
	byName = map[string][]*opDef{}
	names  []string // every canonical name and alias, sorted (suggestions)
)

func normOpName(name string) string {
	return strings.TrimPrefix(strings.ToLower(name), "pto.")
}

// LookupOp returns the table entry for a mnemonic or alias, with or without the
// `pto.` prefix, or nil. For `tgather`/`tscatter` it returns the tile op; the
// assembler switches to the collective when an operand is a GM reference.
func LookupOp(name string) *OpInfo {
	if ds := byName[normOpName(name)]; len(ds) > 0 {
		return ds[0].info
	}
	return nil
}

func lookupAll(name string) []*opDef { return byName[normOpName(name)] }

// suggestOp returns the closest known mnemonic, or "".
func suggestOp(name string) string {
	name = normOpName(name)
	best, bestD := "", 1<<30
	for _, n := range names {
		if d := EditDistanceWithin(name, n, 3); d < bestD {
			best, bestD = n, d
		}
	}
	if bestD <= 2 || (bestD <= 3 && len(name) >= 6) {
		return best
	}
	return ""
}

// closest is the name among n candidates (at(i), in order) nearest to name,
// ignoring case, or "" when none is near enough to be a likely typo: at most
// 2 edits, and at most one per two characters of name (for "zz", "h3" is two
// edits away and no guess).
func closest(name string, n int, at func(i int) string) string {
	lower := strings.ToLower(name)
	best, bestD := "", 3
	for i := range n {
		c := at(i)
		if d := EditDistanceWithin(lower, strings.ToLower(c), bestD-1); d < bestD {
			best, bestD = c, d
		}
	}
	if 2*bestD > len(name) {
		return ""
	}
	return best
}

// EditDistance is the Levenshtein distance, for "did you mean" suggestions.
func EditDistance(a, b string) int { return EditDistanceWithin(a, b, max(len(a), len(b))) }

// EditDistanceWithin is EditDistance(a, b) when that is at most k, else
// k+1. It fills only the band of k cells either side of the diagonal and
// stops once a row has nothing within k: O(k·len) instead of
// O(len(a)·len(b)). Suggestions want near names only, and a 500 KB
// unknown mnemonic measured against every instruction name took seconds.
func EditDistanceWithin(a, b string, k int) int {
	inf := k + 1
	if d := len(a) - len(b); d > k || -d > k {
		return inf
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = min(j, inf)
	}
	for i := 1; i <= len(a); i++ {
		lo, hi := max(1, i-k), min(len(b), i+k)
		// The cell left of the band: the first column, or outside the band.
		if lo == 1 {
			cur[0] = min(i, inf)
		} else {
			cur[lo-1] = inf
		}
		best := cur[lo-1]
		for j := lo; j <= hi; j++ {
			c := prev[j-1]
			if a[i-1] != b[j-1] {
				c++
			}
			c = min(c, prev[j]+1, cur[j-1]+1, inf)
			cur[j] = c
			best = min(best, c)
		}
		if hi < len(b) {
			cur[hi+1] = inf // the next row's band reaches one cell further
		}
		if best > k {
			return inf
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func kindName(k ArgKind) string {
	return [...]string{"none", "tile", "gm", "int", "float", "pipe", "word", "reg"}[k]
}

func (s OperandSpec) String() string {
	var b strings.Builder
	b.WriteString(s.Name)
	b.WriteByte(':')
	for i, k := range s.Kinds {
		if i > 0 {
			b.WriteByte('|')
		}
		b.WriteString(kindName(k))
	}
	if len(s.Locs) > 0 {
		b.WriteByte('<')
		for i, l := range s.Locs {
			if i > 0 {
				b.WriteByte('|')
			}
			b.WriteString(l.String())
		}
		b.WriteByte('>')
	}
	switch s.Access {
	case AccWrite:
		b.WriteString(" w")
	case AccRW:
		b.WriteString(" rw")
		if s.WriteDType != DTInvalid {
			b.WriteString("(" + s.WriteDType.String() + ")")
		}
	}
	if s.Optional {
		return "[" + b.String() + "]"
	}
	return b.String()
}

// RouteString describes where an instruction executes: its pipe, or its routing
// by operand location.
func (op *OpInfo) RouteString() string {
	if d := defOf[op]; d != nil && d.route != "" {
		return d.route
	}
	return op.Pipe.String()
}

// FprintISA writes the instruction table as aligned text: name, aliases, pipe or
// routing, operands (destination first; w written, rw read and written),
// attributes, core kinds and the cost key the machine charges.
func FprintISA(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tALIASES\tPIPE\tOPERANDS\tATTRS\tCORES\tCOST")
	for _, op := range ISA {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", op.Name, dash(strings.Join(op.Aliases, " ")),
			op.RouteString(), dash(operandsString(op)), dash(attrsString(op)), coresString(op), op.Cost)
	}
	tw.Flush()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func operandsString(op *OpInfo) string {
	parts := make([]string, len(op.Operands))
	for i, s := range op.Operands {
		parts[i] = s.String()
	}
	return strings.Join(parts, ", ")
}

func attrsString(op *OpInfo) string {
	d := defOf[op]
	if d == nil {
		return strings.Join(op.Attrs, " ")
	}
	parts := make([]string, len(d.attrs))
	for i, a := range d.attrs {
		parts[i] = "#" + a.String()
	}
	return strings.Join(parts, " ")
}

func coresString(op *OpInfo) string {
	if len(op.Cores) == 0 {
		return "any"
	}
	parts := make([]string, len(op.Cores))
	for i, c := range op.Cores {
		parts[i] = c.String()
	}
	return strings.Join(parts, ",")
}

// FprintISAMarkdown writes docs/isa.md: the same table as FprintISA, one
// Markdown table per family, with each instruction's description.
func FprintISAMarkdown(w io.Writer) {
	fmt.Fprintln(w, "# PTO-AS instruction table")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Generated from `asm.ISA` (`ptoasm ops` prints the same table); do not edit by hand.")
	fmt.Fprintln(w, "`UPDATE_GOLDEN=1 go test ./asm -run TestISADoc` regenerates it.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Operands are destination first: `name:kind<locations>`, `w` written, `rw` read and")
	fmt.Fprintln(w, "written, `[...]` optional. On a `unified` kernel, vector instructions also accept `mat`")
	fmt.Fprintln(w, "tiles and `mat`→`mat` moves run on V. `tgather`/`tscatter` with GM operands are the")
	fmt.Fprintln(w, "collectives `tgather.comm`/`tscatter.comm`. Composite comm ops are recorded on S; the")
	fmt.Fprintln(w, "machine expands them into the MTE2/MTE3/V steps that really move the data.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "The cost column is what the machine charges (docs/profile.md): a vector intrinsic")
	fmt.Fprintln(w, "(`vec.NAME.{head,slope,tail}`; `ubcopy` is the UB→UB DMA), `mad` on the cube, `dma`")
	fmt.Fprintln(w, "on the transfer's path, `sync.*` or `scalar.*`. `dma/ubcopy` is a routed move: a DMA")
	fmt.Fprintln(w, "on its path, or `ubcopy` when it runs on V.")
	for fam := FamTile; fam < NumFamilies; fam++ {
		fmt.Fprintf(w, "\n## %s\n\n", fam)
		fmt.Fprintln(w, "| name | aliases | pipe | operands | attributes | cores | cost | description |")
		fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
		for _, op := range ISA {
			if op.Family != fam {
				continue
			}
			fmt.Fprintf(w, "| `%s` | %s | %s | %s | %s | %s | %s | %s |\n", op.Name, mdCode(op.Aliases),
				op.RouteString(), mdEsc(dash(operandsString(op))), mdEsc(dash(attrsString(op))),
				coresString(op), op.Cost, mdEsc(op.Doc))
		}
		if fam == FamView {
			fmt.Fprint(w, tileMemoryNote)
		}
	}
	fprintBarriers(w)
	fprintDTypes(w)
	io.WriteString(w, unitFlagDoc)
	fmt.Fprint(w, addingAnInstruction)
	fprintCoverage(w)
}

// fprintBarriers lists the ops whose pto-isa implementation has an internal
// pipe_barrier(PIPE_V), from their VBar rows.
// fprintDTypes lists the ops whose element types the table restricts, from
// their DTypes rows.
func fprintDTypes(w io.Writer) {
	fmt.Fprint(w, `
## Element types

The assembler refuses element types pto-isa's a2a3 implementation rejects with a
`+"`static_assert`"+` (the device build fails), in PTO-AS and PTOAS MLIR alike; the `+"`DTypes`"+`
field of the op's row holds its rules (asm/isa_dtypes.go). A plain list is the destination's
types (the sources' follow from the op's same-dtype check); a rule naming operands restricts
those, and several rules joined by "or" are the combinations accepted (`+"`taxpy`"+` takes an
f16 source into an f32 destination but not the reverse). Ops not listed take what the machine
runs. Lines are pto-isa's `+"`include/pto/npu/a2a3`"+` at 3186c381.

| op | element types | pto-isa |
|---|---|---|
`)
	for _, op := range ISA {
		if op.DTypes == nil {
			continue
		}
		fmt.Fprintf(w, "| `%s` | %s | %s |\n", op.Name, mdEsc(rulesString(op)), mdEsc(op.DTypeSource))
	}
	fmt.Fprint(w, `
`+"`tcvt`"+` has no `+"`static_assert`"+`: TCvt.hpp's dispatch converts the pairs above, and any
other falls through its last `+"`if constexpr`"+` to no instruction, leaving dst as it was
while the machine would convert, so it is refused too. `+"`tquant`"+`'s i8 destination is
pto-isa's INT8_SYM, which takes no offset, and its u8 one INT8_ASYM, which adds the offset
tile (TQuant.hpp:29-32, 44-45): a u8 destination without the offset, or an i8 one with it, is
refused. An instruction the MLIR importer made to stand in for an op the ISA lacks (a
`+"`tgather`"+` compare form's u8 tmp read through a `+"`tcvt`"+` into its i32 dst) carries that
op's types, which PTOAS checks, and is not held to these rules; `+"`--to mlir`"+` refuses to
print such a stand-in, which would read back as the op it borrowed.

A move's types depend on the path its tiles' locations select (asm/isa_locdtypes.go); dst
and src are operands 0 and 1, a GM operand its tensor's type. Out of L0C, a move without a
quantisation parameter only casts f32 to f16 or bf16: an f32 accumulator copied into an f32
mat tile is refused (TMov.hpp:160), so a kernel that keeps f32 stores L0C to GM with
`+"`tstore`"+`, and an integer one quantises (`+"`tmov.q`"+`, `+"`tmov.fp`"+`). A quantised
`+"`tstore`"+` takes fewer pairs than a quantised move into L1: no i32→i16 shift and no
f32→f16 (TStore.hpp:208-220). Every move out of L0C (`+"`tstore`"+` from acc,
`+"`tmov`"+` acc→mat and their `+"`.fp`"+`/`+"`.q`"+` forms) takes `+"`#relu=normal`"+`, pto-isa's
`+"`ReluPreMode::NormalRelu`"+`: a result not above 0 (NaN too) becomes 0 after the quantisation
or cast, before it is written or atomically added (quantize_element and ConvertStoreValue,
include/pto/cpu/common.hpp at 3186c381); another source is refused.

| op | dst ← src | element types | pto-isa |
|---|---|---|---|
`)
	for _, r := range locDTypeRows {
		where := func(l Loc) string {
			if l == LocInvalid {
				return "GM"
			}
			return l.String()
		}
		path := where(r.dst) + " ← " + where(r.src)
		if r.atomic {
			path = "GM ← any, #atomic=add"
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s at 3186c381 |\n", "`"+strings.Join(r.ops, "`, `")+"`", path, mdEsc(locRulesString(r.rules)), mdEsc(r.source))
	}
}

func fprintBarriers(w io.Writer) {
	fmt.Fprint(w, `
## Internal barriers

Some composite vector ops execute a `+"`pipe_barrier(PIPE_V)`"+` between their own intrinsics
in pto-isa's a2a3 implementation. A program need not add the ordering that barrier already
gives: the hazard detector records the op's accesses before the barrier, then moves V's own
clock as a `+"`pipe_barrier V`"+` does, then records the accesses after it, so the "after"
operands are ordered after every earlier V op and every later V op after the "before"
operands. The machine charges the barrier's flush of the V tail. Operands accessed on the
other side of the barrier still need a manual one (`+"`hazards/composite_barrier`"+`,
`+"`composite_barrier_select`"+` and their buggy twins `+"`composite_barrier_missing`"+`,
`+"`composite_barrier_select_missing`"+`). The `+"`VBar`"+` field of the op's row is the one
source; files are pto-isa's at 3186c381.

| op | before the barrier | after the barrier | when | source |
|---|---|---|---|---|
`)
	when := map[VBarrierCond]string{VBarAlways: "always",
		VBarColB:      "b column-major (`layout(blayout=col)`); a row-major b is read in place, no barrier",
		VBarCmpNE:     "`#cmp=ne` (eq, then vnot of the mask in place)",
		VBarTmp:       "with tmp (without it a single row has no barrier)",
		VBarDeq:       "i32 a to f16 dst (set_deqscale, barrier, vconv_deq); every other pair is one vconv",
		VBarSameValid: "a and b of the same valid shape, known at assembly (otherwise the larger one's extra part is copied outside the barriers)",
		VBarPairs:     "dst with at least 2 valid columns, known at assembly (one column makes no vcpadd)",
		VBarNarrowB:   "b with fewer valid columns than dst and no more rows, known at assembly (every other shape is one pass)"}
	names := func(op *OpInfo, mask uint8, none string) string {
		var parts []string
		for i, o := range op.Operands {
			if mask&(1<<i) != 0 {
				parts = append(parts, o.Name)
			}
		}
		if len(parts) == 0 {
			return none
		}
		return strings.Join(parts, ", ")
	}
	for _, op := range ISA {
		if vb := op.VBar; vb != nil {
			after := names(op, vb.Post, "- (a barrier after every access)")
			if vb.Tail {
				after += "; then a barrier after every access"
			}
			fmt.Fprintf(w, "| `%s` | %s | %s | %s | `%s` |\n", op.Name, names(op, vb.Pre, "- (a barrier before every access)"), after, when[vb.When], vb.Source)
		}
	}
	fmt.Fprint(w, `
43 files of pto-isa's `+"`include/pto/npu/a2a3`"+` contain `+"`pipe_barrier(PIPE_V)`"+` (3186c381). The rows above
cover 37: TAddDeqRelu, TBitwiseSOp, TCmp, TCmps, TColExpandExpdif, TColReduceIdx, TColReduceOps
(TColMax, TColMin, TColProd), TColSum, TCvt, TDequant, TFillPad, TFmod, TFmodS, TGather,
TMrgSort, TPairReduceSum, TPartArgOp, TPartOp, TPow, TPrelu, TQuant, TRem, TRemS, TRowExpandBinOp,
TRowExpandExpdif, TRowMax, TRowMin, TRowProd, TRowReduceIdxOps, TRowReduceOps, TRowSum, TSel,
TSels, TSort32, TTrans, TTri and TXor. V→S and S→V flags around an op's scalar steps (TPow's
fix-ups, TDequant's reads of offset and scale, TRowReduceIdxOps' index arithmetic, TTrans's
scalar path for strides the 16×16 blocks do not divide) order the pipe as a barrier does and
count as one. "then a barrier after every access" is an op that also ends with one, so later
ops are ordered after its "after" operands too.

A condition on valid shapes holds only for shapes known at assembly: a valid region read from
registers takes no barrier, the safe side.

Checked and left out, because the barrier is not on the path the op takes here (6):
TDivS (the float path has it only when dst and a differ, in place it is one vmuls: an alias
condition), TUnaryOp (only the high-precision TRSQRT form with a tmp, which `+"`trsqrt`"+` does
not take), TExtract (only the s8 UB→UB conversion through an f16 scratch), TCI (only the
`+"`TCI_IMPL`"+` overload with a tmp tile; `+"`tci`"+` has none and takes the scalar loop, with no
barrier), TColArgMax and TColArgMin (not included by
`+"`include/pto/common/pto_instr_impl.hpp`"+`: `+"`tcolargmax`"+`/`+"`tcolargmin`"+` on a2a3 are TColReduceIdx.hpp's).
Within covered files, paths ptoasm's form does not take have no row: TCvt's NonSatTorch
conversions (the overload with a tmp tile, under EDGE_CASE_ALIGN_ENABLE). A missing row is the
safe side: the detector then asks for the manual barrier.

### Where pto-isa's docs and its a2a3 code differ

The machine computes what `+"`include/pto/npu/a2a3`"+` (3186c381) computes, which is what runs on the
device; where `+"`docs/isa`"+` says otherwise, the code is followed (tests: `+"`machine/sem_rem_test.go`"+`):

- `+"`tpartargmax`/`tpartargmin`"+`: `+"`docs/isa/TPARTARGMAX.md`"+` takes src1 when src1 ≥ src0 (b on a tie);
  `+"`TPartArgOp.hpp`"+` compares with `+"`vcmp_ge`"+` (`+"`vcmp_le`"+`) and selects src0 where it holds: a on
  a tie, b where either value is NaN.
- `+"`tpairreducesum`"+`: `+"`docs/isa/TPairReduceSum.md`"+` writes ⌈C/2⌉ sums (the last with an implicit 0)
  and zeros after them; `+"`TPairReduceSum.hpp`"+` runs `+"`vcpadd`"+` over the full repeats and the even
  part of the rest, so it writes ⌊C/2⌋ sums, drops an odd last column and leaves dst's other
  columns as they were.
- `+"`tdequant`"+`: `+"`docs/isa/TDEQUANT.md`"+` describes a broadcast `+"`vsub`"+`/`+"`vmul`"+` of M×1 parameters;
  `+"`TDequant.hpp`"+` reads offset and scale as scalars at row i's start (column 0, whatever the
  parameter tile's width) and runs `+"`vadds`"+` then `+"`vmuls`"+`, each rounded to f32.
- `+"`tadddeqrelu`"+`: `+"`docs/isa/TAddDeqRelu.md`"+` names tmp only; `+"`TAddDeqRelu.hpp`"+` keeps the f32 steps
  in a's bytes and the relu in b's and ends with zeros in tmp, so a and b are written (rw above).
- `+"`trem`"+`/`+"`trems`"+` on i32: `+"`TRem.hpp`"+`/`+"`TRemS.hpp`"+` convert a (and trem's b) to f32 in place, divide in
  f32 and floor, so above 2²⁴ the result is that of a and b rounded to f32 (16777217 rem 2 is
  0); a keeps rint(f32(a)), trem's b ends as the bits of f32(b), and the quotient saturates
  (MinInt32 rem -1 is -1, the f32 → i32 `+"`vconv`"+` taken to saturate as `+"`tcvt`"+`'s does). A divisor of 0 gives a back (f32: NaN), not a fault. trem's tmp holds
  a 256-byte compare mask at dst's row stride (a `+"`vector_dup`"+` of 64 u32), more than the
  `+"`Cols + 2·⌈Cols/64⌉`"+` columns `+"`docs/isa/TREM.md`"+` asks for: a smaller tmp is an error here.
- `+"`tfmod`"+`/`+"`tfmods`"+`: `+"`TFmod.hpp`"+`/`+"`TFmodS.hpp`"+` are f32 only, and their vdiv, trunc, vmul, vsub chain
  rounds each step, so fmod(1e10, 3) is 0 and b = ±inf gives NaN (C's fmod: 1 and a).
- `+"`tpow`"+`/`+"`tpows`"+`: the a2a3 path is f32 and the integer dtypes (`+"`PowCheckType`"+`), not f16; the
  float result is `+"`exp(b·ln a)`"+` with `+"`SwitchPowFResult`"+`'s fix-ups, so 1 to the power NaN is NaN (not
  C's 1). `+"`tpow`"+`, `+"`tpows`"+`, `+"`trem`"+` and `+"`trems`"+` take pto-isa's tmp operand.
- `+"`tcvt`"+`'s `+"`#rnd`"+`: `+"`TCvt.hpp`"+`'s helpers switch on RINT, ROUND, FLOOR, CEIL and TRUNC (f32 → f16
  on ODD too) and send any other mode (`+"`#rnd=none`"+`; `+"`odd`"+` elsewhere) to their default
  instruction: toward zero (`+"`vconv_*z`"+`) from a float to an integer, to nearest even otherwise,
  so `+"`tcvt`"+` of 2.7 into i32 with `+"`#rnd=none`"+` is 2 (it was rounded to even, 3). f32 → f32 is
  `+"`vconv_f322f32*`"+`, a rounding to an integral value (floor of 2.5 is 2), not a copy. The
  special cases (f16/bf16 → f32, i8/u8 → f16, i16 → f32, the integer pairs, i32 → f16
  through `+"`vconv_deq`"+`) take no mode; i32 → f16 rounds to nearest even whatever `+"`#rnd`"+` says
  (machine/exec_vec.go cvtRound; `+"`TestVectorCvt`"+`). Past the destination's range, the pairs
  `+"`kIsNarrowingCvt`"+` names (f16 → i8/u8/i16, f32 → i16, i32 → i16, i64 → i32) wrap: `+"`tcvt`"+`
  is TCVT without a saturation argument, which turns saturation off for them (TCvt.hpp:1216-1227,
  1315-1323), and saturation off keeps the low bits of the rounded value taken to int64
  (TCvt.hpp:73-75, 1116-1118): f16 300 → i8 44, i32 40000 → i16 -25536. NaN gives 0, +inf
  all ones (-1; u8 255) and -inf 0, the value saturating into int64 first, as the a2a3 tcvt
  test's golden_truncated has it for this form. Every other pair into an integer clamps, NaN
  to 0; into a float, overflow gives an infinity (machine/exec_vec.go cvtWraps;
  `+"`TestVectorCvtEdges`"+`).
`)
}

// unitFlagDoc is docs/isa.md's section on #unit.
const unitFlagDoc = `
## Unit flag

` + "`#unit=partial|final`" + ` on a ` + "`tmatmul`" + ` (` + "`.acc`, `.bias`, `tgemv`" + `) and on the FIX read of its
L0C tile (` + "`tstore`" + ` or ` + "`tmov`" + ` from ` + "`acc`" + `) is pto-isa's L0C unit flag: ` + "`TMATMUL<AccPhase::Partial|Final>`" + `
and ` + "`TSTORE<STPhase::Partial|Final>`" + ` (` + "`include/pto/common/type.hpp`" + `, 0x2 and 0x3 in Xt[33:32] of
` + "`TStore.hpp`" + `'s FIX store, the mad's unit-flag argument in ` + "`TMatmul.hpp`" + `; at 3186c381). pto-isa's
` + "`docs/isa/cube/ops/mad/mad.md`" + `: the mad's ` + "`check_only`" + ` "checks that the producer slot can be used",
` + "`check_and_set`" + ` "also publishes the produced ` + "`%dst`" + ` tile for later consumers"; the FIX writeback's
flag is ` + "`check_only | check_and_clear`" + ` (` + "`mte-l0c-gm.md`" + `). Kernels that use it drop both the M→FIX and the
FIX→M flags around the store (` + "`demos/baseline/flash_atten/csrc/kernel/fa_custom.cpp`" + `, ` + "`UF_ENABLE`" + `;
` + "`kernels/automode/a2a3/gemm/gemm_performance_kernel.cpp`" + `).

Per acc tile (its L0C address):

- a mad with ` + "`#unit`" + ` waits while the tile is held (published, not yet released);
- a ` + "`#unit=final`" + ` mad holds the tile from its start: it publishes it;
- a FIX read with ` + "`#unit`" + ` waits for the publication, may start once the mad's first 16×16 fractal
  is done and ends no earlier than one fractal's share of its own time after the mad ends (FIX
  drains finished fractals while the cube accumulates the rest; the fractal granule is this
  model's assumption, no public source gives the hardware's);
- a ` + "`#unit=final`" + ` FIX read releases the tile when it ends.

The hazard detector takes the same hand-offs as edges (final mad → FIX read, final FIX read →
next mad with ` + "`#unit`" + `), so such a pair needs no flag, and an op without the flag gets no edge:
` + "`programs/gemm_unit`" + ` is clean, its twin ` + "`mutant_init_without_unit`" + ` (a plain first mad that does
not wait) reports the WAR. A FIX read with ` + "`#unit`" + ` that no final mad publishes, or a mad waiting on a
tile no final FIX read releases, is a deadlock naming the unit flag.
`

// addingAnInstruction ends docs/isa.md: the files one instruction touches.
const addingAnInstruction = `
## Adding an instruction

1. The assembler's table, ` + "`asm/isa.go`" + `: its ` + "`def`" + ` row (name, family, pipe or a route
   by operand locations, cost key, operands, attributes, core kinds, description), and its
   ` + "`Op…`" + ` constant and name in ` + "`asm/opcode.go`" + `. The cost key is an ` + "`asm.CostKey`" + `
   (` + "`asm/cost.go`" + `); a new vector intrinsic also needs its ` + "`vec.NAME.{head,slope,tail}`" + ` in
   ` + "`pipes/profiles/a2a3.txt`" + ` (with the source).
2. Its semantics, ` + "`machine/sem.go`" + ` (or ` + "`machine/sem_more.go`" + `, ` + "`machine/sem_img.go`" + `): the row of ` + "`semTable`" + `
   its opcode indexes, with the function that computes it and how ` + "`Flops`" + ` counts it; sync,
   scalar and comm instructions are the engine's own (` + "`machine/issue.go`" + `'s opcode switch,
   which also runs instructions with a data effect on the scalar, as mgather, or that read
   configuration registers, as timg2col: see ` + "`machine/sem_img.go`" + `).
   Add a functional test that checks it against an independent reference.

` + "`UPDATE_GOLDEN=1 go test ./asm ./cmd/ptoasm -run 'TestISADoc|TestGolden/^ops$'`" + ` then
regenerates this file and the ` + "`ptoasm ops`" + ` goldens. Nothing can be forgotten silently:
` + "`TestOpcodesCoverISA`" + ` fails on a row without an opcode, ` + "`TestEveryOpHasCost`" + ` (pipes) on a V
instruction without a profiled intrinsic, ` + "`TestEveryOpHasSemantics`" + ` (machine) on a row without
semantics, and a full ` + "`go test ./machine`" + ` on an instruction no functional test executes.
`

func mdCode(ss []string) string {
	if len(ss) == 0 {
		return "-"
	}
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = "`" + s + "`"
	}
	return strings.Join(out, " ")
}

func mdEsc(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
