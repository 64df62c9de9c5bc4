package asm

import "slices"

// An Object is an assembled program: names resolved, constants evaluated, tiles
// placed, every instruction decoded once. The machine runs Objects, never text.
type Object struct {
	// Main is the file that was assembled; Files lists it and its includes.
	Main    string
	Files   []*File
	Sources Sources
	// Consts in declaration order, after -D overrides.
	Consts  []ConstVal
	Tensors []*TensorInfo
	Kernels []*KernelInfo
	Launch  *Launch // evaluated by the machine; its expressions use only constants
	Expects []*Expect
}

// ConstVal is an evaluated constant.
type ConstVal struct {
	Name string
	Val  int64
	// IsFloat marks a floating-point constant (`const ALPHA = 0.5`): F holds
	// it, and only float operands and golden expressions may use it.
	IsFloat bool
	F       float64
	// Overridden is true when -D set it.
	Overridden bool
}

// Const returns the value of a named constant.
func (o *Object) Const(name string) (int64, bool) {
	for _, c := range o.Consts {
		if c.Name == name && !c.IsFloat {
			return c.Val, true
		}
	}
	return 0, false
}

// FloatConst returns the value of a named constant as a float: a float
// constant's, or an integer one's converted.
func (o *Object) FloatConst(name string) (float64, bool) {
	for _, c := range o.Consts {
		if c.Name == name {
			if c.IsFloat {
				return c.F, true
			}
			return float64(c.Val), true
		}
	}
	return 0, false
}

// Tensor returns the named GM object, or nil.
func (o *Object) Tensor(name string) *TensorInfo {
	for _, t := range o.Tensors {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// Kernel returns the named kernel, or nil.
func (o *Object) Kernel(name string) *KernelInfo {
	for _, k := range o.Kernels {
		if k.Name == name {
			return k
		}
	}
	return nil
}

// Layout is a GM tensor's layout.
type Layout uint8

const (
	LayoutND Layout = iota
	LayoutDN
	LayoutNZ
)

func (l Layout) String() string { return [...]string{"nd", "dn", "nz"}[l] }

// TensorInfo is a resolved GM object. Shape is outermost first.
type TensorInfo struct {
	Decl   *Tensor
	Index  int
	Name   string
	Class  TensorClass
	DType  DType
	Shape  []int64
	Layout Layout
	Bytes  int64
	// Attrs holds evaluated integer attributes (fifo slots=, id=).
	Attrs map[string]int64
}

// Elems is the number of elements.
func (t *TensorInfo) Elems() int64 {
	n := int64(1)
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

// TileInfo is a resolved tile or tile array. Addr has one entry per element.
type TileInfo struct {
	Decl    *TileDecl
	Index   int
	Name    string
	Loc     Loc
	Space   Space
	DType   DType
	Rows    int
	Cols    int
	VRows   int
	VCols   int
	BLayout string // row or col
	SLayout string // none, row or col
	Fractal int
	Count   int // 1 for a single tile
	IsArray bool
	Addr    []int64
	Bytes   int64 // one element: Rows*Cols*DType.Size()
	// Auto is true when the assembler chose the address.
	Auto bool
	// DynVRows and DynVCols, when not nil, are a valid region that reads
	// registers (`valid [%n, C]`): the machine evaluates them when an
	// instruction naming the tile issues, and VRows/VCols hold the declared
	// shape, the bound the assembler's checks may assume.
	DynVRows, DynVCols *CExpr
	// Rebound is true when a tassign, tsubview or treshape names the tile
	// as its destination: its address at an instruction is the last binding
	// that core issued (Addr until the first one), known at run time only.
	Rebound bool
	// Unplaced marks a rebound tile declared without `@`: it owns no bytes
	// (Addr is all zeros) and a use before its first binding is a fault.
	Unplaced bool
	// Of is set on a view the machine resolved for one instruction (one
	// binding, one valid region): the declared tile it was made from.
	Of *TileInfo
}

// Variable says the tile's address or valid region is known only when an
// instruction naming it issues (docs/language.md "Tile views").
func (t *TileInfo) Variable() bool {
	return t.Rebound || t.DynVRows != nil || t.DynVCols != nil
}

// DynValid says the tile's valid region reads registers.
func (t *TileInfo) DynValid() bool { return t.DynVRows != nil || t.DynVCols != nil }

// KernelInfo is a resolved kernel.
type KernelInfo struct {
	Decl  *Kernel
	Name  string
	Kind  CoreKind
	Tiles []*TileInfo
	// Regs names the scalar register slots; loop variables have slots too.
	Regs []string
	Body []CStmt
	// Ops lists every instruction in source order; COp.ID indexes it.
	Ops []*COp
}

// CStmt is a compiled kernel statement: *COp, *CLet, *CFor, *CIf, *CWhile, *CBreak.
type CStmt interface{ cstmt() }

// CLet sets register Slot.
type CLet struct {
	Let  *Let
	Slot int
	X    CExpr
}

// CFor runs Body with register Slot = From, From+Step, … while < To.
type CFor struct {
	For            *For
	Slot           int
	From, To, Step CExpr
	Body           []CStmt
}

// CIf runs Then when Cond is non-zero, else Else.
type CIf struct {
	If   *If
	Cond CExpr
	Then []CStmt
	Else []CStmt
}

// CWhile runs Body while Cond is non-zero.
type CWhile struct {
	While *While
	Cond  CExpr
	Body  []CStmt
}

// CBreak leaves the innermost loop.
type CBreak struct{ Break *Break }

// COp is a decoded instruction.
type COp struct {
	ID    int
	Instr *Instr
	Info  *OpInfo
	// Pipe is where this instruction executes, fixed by its operands' locations.
	Pipe Pipe
	// Cost is Info.CostOn(Pipe), decoded once at assembly.
	Cost CostKey
	// Args are destination-first, in the order of Info.Operands.
	Args  []Arg
	Attrs []CAttr
	// Unit is the #unit attribute, decoded once: the L0C unit flag of a mad
	// or of a FIX read of L0C.
	Unit UnitPhase
	// Kernel is the kernel the op belongs to, and Loops the loops around
	// it, outermost first: the levels of the iteration vector the scalar
	// issues it in. The hazard detector compares two accesses' iterations
	// of one kernel only over the loops they share, unless their loops sit
	// in two arms of one if (docs/hazards.md, "Intended order of two
	// loops").
	Kernel *KernelInfo
	Loops  []*Loop
	// Barriers is how many grid barriers (syncall) are written before the
	// op in the body of its innermost loop (the kernel's body outside
	// loops), those in branches and in nested loops included: where the
	// op stands among its kernel's barriers as written, whether or not a
	// run passes them. Two kernels of one launch meet at their barriers,
	// so it orders their accesses the way the program means them
	// (machine/hazard, intendedBefore) where the source line would give
	// only the order the kernels are written in.
	Barriers int32
}

// Loop is a loop statement of a kernel (*For or *While) and the if arms
// around it, outermost first: each the if's number in the kernel shifted
// left by two, or'ed with armRole when the if's condition splits roles
// (it reads rank, block_idx or subblock_idx and no register) and armElse
// for its else arm.
type Loop struct {
	Stmt Stmt
	Arms []int32
}

const (
	armElse = 1
	armRole = 2
)

// Exclusive says whether loops l and m are two roles' loops, which no
// scalar runs one after the other: they sit in two arms of one if, or in
// two ifs that each split roles (`if block_idx == 0 { producer }` and
// `if block_idx == 1 { consumer }`).
func (l *Loop) Exclusive(m *Loop) bool {
	for i := range min(len(l.Arms), len(m.Arms)) {
		if a, b := l.Arms[i], m.Arms[i]; a != b {
			return a>>2 == b>>2 || a&b&armRole != 0
		}
	}
	return false
}

// UnitPhase is an L0C unit-flag phase (pto-isa AccPhase / STPhase,
// include/pto/common/type.hpp: Partial 0x2, Final 0x3). A mad with a unit
// flag first waits until the FIX side has released the L0C tile; a final mad
// then publishes it. A FIX read with a unit flag waits for the publication
// and may start on the first finished fractal while the cube still
// accumulates; a final one releases the tile to the next mad.
type UnitPhase uint8

const (
	UnitNone UnitPhase = iota
	UnitPartial
	UnitFinal
)

func (*COp) cstmt()    {}
func (*CLet) cstmt()   {}
func (*CFor) cstmt()   {}
func (*CIf) cstmt()    {}
func (*CWhile) cstmt() {}
func (*CBreak) cstmt() {}

// Attr returns the named attribute.
func (op *COp) Attr(key string) (CAttr, bool) {
	for _, a := range op.Attrs {
		if a.Key == key {
			return a, true
		}
	}
	return CAttr{}, false
}

// CAttr is a decoded attribute: an enum word (atomic=add), an integer
// expression (init=(%j == 0)) or a float (alpha=0.1).
type CAttr struct {
	Key     string
	Word    string
	Val     CExpr
	F       float64
	IsFloat bool
	IsWord  bool
}

// ArgKind says what an operand resolved to.
type ArgKind uint8

const (
	ArgNone   ArgKind = iota
	ArgTile           // a tile, or an element of a tile array
	ArgGM             // a GM tensor window starting at an element, on a rank
	ArgScalar         // an integer expression (offsets, event ids, signal values)
	ArgFloat          // a floating-point immediate (tadds %d, %s, 0.5)
	ArgPipe           // a pipe name (set_flag MTE2, MTE1, 0)
	ArgWord           // an enum word (twait ... ge)
	ArgReg            // a scalar register written by the instruction (%x = ld @S[0])
)

// Arg is a decoded operand.
type Arg struct {
	Kind ArgKind
	Span Span
	// ArgTile
	Tile    *TileInfo
	TileIdx CExpr
	// ArgGM: Rank is valid when HasRank; otherwise the executing rank.
	GM      *TensorInfo
	HasRank bool
	Rank    CExpr
	Idx     []CExpr
	// ArgScalar, ArgReg (Slot)
	Val  CExpr
	Slot int
	// ArgFloat
	F float64
	// ArgPipe
	Pipe Pipe
	// ArgWord
	Word string
}

// Env is what compiled expressions read: the core's registers and identity.
type Env struct {
	Regs     []int64
	Rank     int64
	NRanks   int64
	Block    int64
	SubBlock int64
	BlockNum int64
}

// CExpr is a compiled integer expression. Constants need no call.
type CExpr struct {
	Const bool
	Val   int64
	Fn    func(*Env) int64
	Src   Expr
	// Lin is the expression's exact affine form when it has one (see
	// Affine); nil for constants and every other shape.
	Lin *Affine
	// Cond is its exact comparison form when it has one (see Cond).
	Cond *Cond
}

// Eval evaluates e in env. A zero CExpr evaluates to 0.
func (e CExpr) Eval(env *Env) int64 {
	if e.Fn == nil {
		return e.Val
	}
	return e.Fn(env)
}

// Access says how an instruction uses an operand.
type Access uint8

const (
	AccNone  Access = 0
	AccRead  Access = 1
	AccWrite Access = 2
	AccRW    Access = AccRead | AccWrite
)

// OperandSpec describes one operand slot of an instruction.
type OperandSpec struct {
	Name   string
	Kinds  []ArgKind // accepted kinds
	Access Access
	// Locs restricts tile operands; empty accepts any location.
	Locs     []Loc
	Optional bool
	// Variadic marks the last slot as repeating.
	Variadic bool
	// WriteDType, with Access AccRW, limits the write to a tile of that
	// dtype (trem's i32 path converts a and b in place, its f32 path only
	// reads them); DTInvalid writes for every dtype.
	WriteDType DType
}

// AccessFor is the access of an operand whose tile has dtype dt.
func (s *OperandSpec) AccessFor(dt DType) Access {
	if s.Access == AccRW && s.WriteDType != DTInvalid && dt != s.WriteDType {
		return AccRead
	}
	return s.Access
}

// Family groups instructions by what they act on; the machine and the linter
// test it (a composite comm op, a scalar GM access) instead of a name.
type Family uint8

const (
	FamNone   Family = iota
	FamTile          // GM <-> tile transfers
	FamMove          // tile <-> tile moves
	FamCube          // PIPE_M matmuls
	FamVector        // PIPE_V compute
	FamSync          // flags, barriers, fifo push/pop
	FamScalar        // scalar GM access
	FamComm          // communication (composite on A2/A3)
	FamView          // tile views: the scalar rebinds a tile's address
	NumFamilies
)

var familyNames = [NumFamilies]string{"none", "tile", "move", "cube", "vector", "sync", "scalar", "comm", "view"}

func (f Family) String() string {
	if f < NumFamilies {
		return familyNames[f]
	}
	return "invalid"
}

// OpInfo is one ISA table entry.
type OpInfo struct {
	Op       Opcode // what machine and linter switch on
	Name     string // canonical mnemonic, lower case, with variant suffix (tmatmul.acc)
	Aliases  []string
	Family   Family
	Operands []OperandSpec
	Attrs    []string // accepted attribute keys
	// Pipe is the pipe when it does not depend on operands; Route picks it otherwise.
	Pipe  Pipe
	Route func(args []Arg) Pipe
	// Cost is what the machine charges (vadd, vexp, mad, dma, ...); CostOn
	// resolves a routed move's by its pipe.
	Cost CostKey
	Doc  string
	// Cores restricts the core kinds that may execute it; empty means any.
	Cores []CoreKind
	// VBar is the pipe_barrier(PIPE_V) inside pto-isa's a2a3 implementation
	// of the op, nil when it has none a program may rely on.
	VBar *VBarrier
	// Fold marks an op that pto-isa lowers to a chain of dependent
	// instructions, each behind a pipe_barrier(PIPE_V), or to a scalar
	// loop: the machine charges the chain (pipes.ColFoldCycles,
	// pipes.RowProdCycles, pipes.PowCycles, ...), not the tile's 256-byte
	// repeats at its cost key's slope.
	Fold FoldKind
	// RowsIfDynCols marks an op built on pto-isa's TBinSInstr (TBinSOp.hpp
	// at 3186c381): it chooses its flat run over the whole tile only when
	// every operand's valid columns are the tile's columns at compile time
	// (or every operand has one row), and its run-time fallback re-tests that
	// compile-time flag (TBinSOp.hpp:188-190, 203-204), so a tile whose valid
	// columns come from registers always goes row by row, one repeat run per
	// row, even when its rows fill the tile. TBinOp.hpp and TUnaryOp.hpp
	// re-test the run-time shape instead and keep their flat run.
	RowsIfDynCols bool
	// DTypes is the element types pto-isa's a2a3 implementation accepts
	// (its static_asserts, DTypeSource): an instruction passes when one rule
	// holds for all its tile operands; nil where the table does not restrict
	// them. The assembler refuses any other, so a kernel the device build
	// rejects is not run, linted or timed.
	DTypes      []DTypeRule
	DTypeSource string
	// DTypeWhy is what the source does with other types, for the message:
	// "static_asserts" when empty.
	DTypeWhy string
}

// DTypeRule is one accepted combination of element types: entry i is the
// types operand i may have, nil (or past the end) any. Several rules say
// what one set per operand cannot: taxpy takes an f16 source into an f32
// destination but not the reverse, tpartargmax's index type follows its
// value type's width.
type DTypeRule [][]DType

// Allows reports whether the rule accepts dt for operand i.
func (r DTypeRule) Allows(i int, dt DType) bool {
	return i >= len(r) || r[i] == nil || slices.Contains(r[i], dt)
}

// FoldKind is how a reduction's chain of barrier-separated instructions runs.
type FoldKind uint8

const (
	FoldNone FoldKind = iota
	// FoldCols: a UB copy of row 0, then one count-mode fold per further
	// row (TColReduceOps.hpp ColReduceInstr, TColSum.hpp SequentialSum).
	FoldCols
	// FoldRowBlocks: per row, a vector_dup of ones into the scratch, then a
	// count-mode vmul per 32-byte block of the row, then the scalar
	// multiplies the block's lanes between V→S and S→V flags (TRowProd.hpp).
	FoldRowBlocks
	// FoldColArg: per 256-byte column block, two vector_dups and a copy of
	// row 0, then per further row vadds+vcmp and vsel+vmax (or vmin), each
	// pair behind a barrier (TColReduceIdx.hpp ProcessSingleBlock).
	FoldColArg
	// FoldRowArg: rows wider than one repeat reduce per row in stages of
	// vcmax and two vreducev2, each behind a barrier, then the scalar
	// assembles each row's index between V→S and S→V flags
	// (TRowReduceIdxOps.hpp ProcReduceIdxStage1/2); one-repeat rows are one
	// vcmax over the tile, charged as before.
	FoldRowArg
	// FoldDivS: float TDIVS is, per call of TBinSInstr, a vector_dup of the
	// scalar, a barrier and vdiv (one vmuls in place); integer TDIVS a
	// scalar loop between V→S and S→V flags (TDivS.hpp DivSOp, TDivs_naive).
	FoldDivS
	// FoldPow: TPOW/TPOWS on floats are two passes of vabs/vln/vmul/vexp
	// behind barriers and a scalar fix-up loop; on integers a scalar loop
	// (TPow.hpp TPowF, TPowI).
	FoldPow
	// FoldScalarFill: TCI without a scratch tile is a scalar loop storing
	// each element (TCI.hpp TCI).
	FoldScalarFill
)

// VBarrier is a pipe_barrier(PIPE_V) that pto-isa's a2a3 implementation of
// an op executes between its intrinsics, so that programs need not add the
// ordering it already gives (docs/isa.md, "Internal barriers"). Operand i
// is in Pre when the op accesses it before the barrier and in Post when
// after (a scratch written, then read, is in both); a barrier after every
// access has an empty Post. The hazard detector orders Post's accesses after
// every earlier op of the pipe and every later op after Pre's accesses; the
// machine charges the barrier's flush. Tail marks an op whose last access is
// followed by a barrier too (or by V→S and S→V flags around scalar steps,
// which order the pipe the same way): later ops are then ordered after
// Post's accesses as well.
type VBarrier struct {
	Pre, Post uint8 // bit i: operand i
	Tail      bool
	When      VBarrierCond
	Source    string // the pto-isa file (at 3186c381) whose code has the barrier
}

// VBarrierCond says on which operands' types the implementation takes the
// path with the barrier.
type VBarrierCond uint8

const (
	VBarAlways VBarrierCond = iota
	// VBarColB: only when operand 2 (the broadcast vector b) is
	// column-major (blayout=col), where pto-isa broadcasts it with vbrcb into
	// a scratch first; a row-major b is read in place, with no barrier.
	VBarColB
	// VBarCmpNE: only for #cmp=ne, which pto-isa computes as the eq compare,
	// a barrier, then vnot of the mask in place (TCmp.hpp, TCmps.hpp).
	VBarCmpNE
	// VBarTmp: only when the optional scratch operand 2 is given (TCOLSUM's
	// tmp form); the form without it skips the barrier for a single row.
	VBarTmp
	// VBarDeq: only for an i32 a converted to an f16 dst, which pto-isa
	// converts with vconv_deq after set_deqscale(1.0) and a barrier
	// (TCvt.hpp, GenCastCallSpecialCases); every other pair is one vconv.
	VBarDeq
	// VBarSameValid: only when a and b (operands 2 and 3) have the same
	// valid shape, known at assembly. Otherwise TPartArgOp.hpp also copies
	// the larger source's extra rows or columns, before its first barrier
	// or after its last one.
	VBarSameValid
	// VBarPairs: only when dst (operand 0), whose valid columns both
	// TPairReduceSum.hpp and tpairreducesum count, has at least two, known
	// at assembly: every vcpadd is followed by a barrier, and a single
	// column makes no vcpadd.
	VBarPairs
	// VBarNarrowB: only when b (operand 2) has fewer valid columns than dst
	// and no more valid rows, known at assembly: TPartOp.hpp then copies a
	// into dst, a barrier, and combines b into dst in place; every other
	// shape is one pass without a barrier.
	VBarNarrowB
)

// Applies reports whether the op with these operands and attributes takes
// the path with the barrier.
func (v *VBarrier) Applies(op *COp) bool {
	if v == nil || op == nil {
		return false
	}
	args := op.Args
	switch v.When {
	case VBarColB:
		return len(args) > 2 && args[2].Tile != nil && args[2].Tile.BLayout == "col"
	case VBarCmpNE:
		a, ok := op.Attr("cmp")
		return ok && a.Word == "ne"
	case VBarTmp:
		return len(args) > 2 && args[2].Tile != nil
	case VBarDeq:
		return len(args) > 1 && args[0].Tile != nil && args[1].Tile != nil &&
			args[0].Tile.DType == F16 && args[1].Tile.DType == I32
	case VBarSameValid:
		if len(args) < 4 {
			return false
		}
		a, b := args[2].Tile, args[3].Tile
		// A valid region read from registers is known only at issue: no
		// barrier, the safe side.
		return a != nil && b != nil && !a.DynValid() && !b.DynValid() && a.VRows == b.VRows && a.VCols == b.VCols
	case VBarNarrowB:
		if len(args) < 3 {
			return false
		}
		d, b := args[0].Tile, args[2].Tile
		return d != nil && b != nil && !d.DynValid() && !b.DynValid() && b.VCols < d.VCols && b.VRows <= d.VRows
	case VBarPairs:
		return len(args) > 0 && args[0].Tile != nil && args[0].Tile.DynVCols == nil && args[0].Tile.VCols >= 2
	}
	return true
}

// ExecPipe is the pipe whose queue the instruction occupies. Sync instructions
// are issued by the scalar but sit in another pipe's queue: set_flag in its
// source pipe's, wait_flag in its destination's, pipe_barrier P in P's, an
// FFTS set in the pipe whose earlier work it waits for.
func (op *COp) ExecPipe() Pipe {
	arg := -1
	switch op.Info.Op {
	case OpSetFlag, OpPipeBarrier, OpFftsSet:
		arg = 0
	case OpWaitFlag:
		arg = 1
	}
	if arg >= 0 && arg < len(op.Args) && op.Args[arg].Kind == ArgPipe {
		if p := op.Args[arg].Pipe; p != PipeALL {
			return p
		}
		return PipeS
	}
	return op.Pipe
}
