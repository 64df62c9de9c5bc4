package machine

import (
	"strings"

	"github.com/ptoasm/ptoasm/asm"
)

// semantics is what an instruction does to data, reached from its ISA row by
// opcode: semTable[op.Info.Op]. The assembler decoded the mnemonic once; nothing
// here compares names. TestEveryOpHasSemantics walks asm.ISA and fails on a row
// without an entry, and TestMain fails a full run of this package when an
// instruction with data semantics is never executed by a functional test.
type semantics struct {
	// exec applies the data effect; args are destination-first in the order of
	// the row's operands.
	exec func(op *asm.COp, args []Operand, s *ExecScratch) error
	// engine marks instructions the engine carries out itself (flags, barriers,
	// fifo, scalar GM access, composite communication): Execute has nothing
	// to do for them, and their steps run through LoadTile/StoreTile.
	engine bool
	flops  flopKind
	bytes  byteKind
}

// flopKind says how Flops counts an instruction.
type flopKind uint8

const (
	flopNone   flopKind = iota
	flopDst             // one per valid destination element
	flopSrc             // one per valid element of the first source (reductions, sorts)
	flopMatmul          // 2·M·K·N
)

// byteKind says how Bytes counts an instruction's transfer.
type byteKind uint8

const (
	byteNone     byteKind = iota
	byteTransfer          // the tile's valid shape in the GM tensor's dtype
	byteDst               // the destination's valid region
	byteSrc               // the source's valid region in the destination's dtype
)

type execFn = func(op *asm.COp, args []Operand, s *ExecScratch) error

// Constructors for the table's rows.
func sem(f execFn, fl flopKind) semantics { return semantics{exec: f, flops: fl} }
func withOp(f func(*asm.COp, []Operand) error) execFn {
	return func(op *asm.COp, args []Operand, _ *ExecScratch) error { return f(op, args) }
}
func argsOnly(f func([]Operand) error) execFn {
	return func(_ *asm.COp, args []Operand, _ *ExecScratch) error { return f(args) }
}
func vBin(o vop, kind srcKind) semantics {
	return sem(func(_ *asm.COp, args []Operand, _ *ExecScratch) error { return vecBinary(args, o, kind) }, flopDst)
}
func vUn(o vop) semantics {
	return sem(func(_ *asm.COp, args []Operand, _ *ExecScratch) error { return vecUnary(args, o) }, flopDst)
}
func vRed(o vop, rows bool) semantics {
	return sem(func(_ *asm.COp, args []Operand, _ *ExecScratch) error { return vecReduce(args, o, rows) }, flopSrc)
}
func mm(kind mmKind) semantics {
	return sem(func(op *asm.COp, args []Operand, s *ExecScratch) error { return execMatmul(op, args, s, kind) }, flopMatmul)
}
func move(f func([]Operand) error, b byteKind) semantics {
	return semantics{exec: argsOnly(f), bytes: b}
}

var engineOp = semantics{engine: true}

var semTable [asm.NumOpcodes]semantics

func init() {
	t := &semTable
	// GM <-> tile.
	load := semantics{exec: argsOnly(execLoad), bytes: byteTransfer}
	t[asm.OpTload], t[asm.OpTallgather] = load, load
	t[asm.OpTstore] = semantics{exec: execStore, bytes: byteTransfer}
	t[asm.OpTprefetch] = semantics{exec: func(*asm.COp, []Operand, *ExecScratch) error { return nil }, bytes: byteTransfer}
	// Tile moves.
	for _, o := range []asm.Opcode{asm.OpTmov, asm.OpTmovA2m, asm.OpTmovM2b, asm.OpTmovM2l, asm.OpTmovM2r, asm.OpTmovM2s, asm.OpTmovV2v} {
		t[o] = move(execMove, byteDst)
	}
	// #relu=normal exists on the acc→mat moves only (the assembler)
	for _, o := range []asm.Opcode{asm.OpTmov, asm.OpTmovA2m} {
		t[o].exec = func(op *asm.COp, args []Operand, _ *ExecScratch) error {
			if reluOf(op) {
				return execMoveRelu(args)
			}
			return execMove(args)
		}
	}
	t[asm.OpTextract] = move(execExtract, byteDst)
	t[asm.OpTinsert] = move(execInsert, byteSrc)
	// Cube.
	t[asm.OpTmatmul], t[asm.OpTgemv] = mm(mmPlain), mm(mmPlain)
	t[asm.OpTmatmulAcc], t[asm.OpTgemvAcc] = mm(mmAcc), mm(mmAcc)
	t[asm.OpTmatmulBias], t[asm.OpTgemvBias] = mm(mmBias), mm(mmBias)
	// Elementwise.
	for o, v := range map[asm.Opcode]vop{
		asm.OpTadd: vAdd, asm.OpTsub: vSub, asm.OpTmul: vMul, asm.OpTdiv: vDiv, asm.OpTmax: vMax,
		asm.OpTmin: vMin, asm.OpTand: vAnd, asm.OpTor: vOr, asm.OpTxor: vXor, asm.OpTshl: vShl,
		asm.OpTshr: vShr, asm.OpTprelu: vLrelu,
	} {
		t[o] = vBin(v, srcTile)
	}
	for o, v := range map[asm.Opcode]vop{
		asm.OpTadds: vAdd, asm.OpTsubs: vSub, asm.OpTmuls: vMul, asm.OpTdivs: vDiv, asm.OpTmaxs: vMax,
		asm.OpTmins: vMin, asm.OpTlrelu: vLrelu,
	} {
		t[o] = vBin(v, srcScalar)
	}
	t[asm.OpTsdivs] = sem(argsOnly(vecScalarDiv), flopDst)
	for o, v := range map[asm.Opcode]vop{
		asm.OpTexp: vExp, asm.OpTlog: vLog, asm.OpTsqrt: vSqrt, asm.OpTrsqrt: vRsqrt, asm.OpTrecip: vRecip,
		asm.OpTabs: vAbs, asm.OpTneg: vNeg, asm.OpTrelu: vRelu, asm.OpTnot: vNot,
	} {
		t[o] = vUn(v)
	}
	for o, v := range map[asm.Opcode]vop{
		asm.OpTrowexpandadd: vAdd, asm.OpTrowexpandsub: vSub, asm.OpTrowexpandmul: vMul,
		asm.OpTrowexpanddiv: vDiv, asm.OpTrowexpandmax: vMax, asm.OpTrowexpandmin: vMin,
	} {
		t[o] = vBin(v, srcRow)
	}
	for o, v := range map[asm.Opcode]vop{
		asm.OpTcolexpandadd: vAdd, asm.OpTcolexpandsub: vSub, asm.OpTcolexpandmul: vMul,
		asm.OpTcolexpanddiv: vDiv, asm.OpTcolexpandmax: vMax, asm.OpTcolexpandmin: vMin,
	} {
		t[o] = vBin(v, srcCol)
	}
	t[asm.OpTexpands] = sem(argsOnly(vecFill), flopDst)
	t[asm.OpTrowexpand] = sem(argsOnly(func(a []Operand) error { return vecExpand(a, srcRow) }), flopDst)
	t[asm.OpTcolexpand] = sem(argsOnly(func(a []Operand) error { return vecExpand(a, srcCol) }), flopDst)
	t[asm.OpTcvt] = sem(withOp(vecCvt), flopDst)
	// Reductions.
	t[asm.OpTrowsum], t[asm.OpTrowmax], t[asm.OpTrowmin] = vRed(vAdd, true), vRed(vMax, true), vRed(vMin, true)
	t[asm.OpTcolsum], t[asm.OpTcolmax], t[asm.OpTcolmin] = vRed(vAdd, false), vRed(vMax, false), vRed(vMin, false)
	// Compare, select, index, transpose.
	t[asm.OpTcmp] = sem(func(op *asm.COp, a []Operand, _ *ExecScratch) error { return vecCmp(op, a, false) }, flopDst)
	t[asm.OpTcmps] = sem(func(op *asm.COp, a []Operand, _ *ExecScratch) error { return vecCmp(op, a, true) }, flopDst)
	t[asm.OpTsel] = sem(argsOnly(func(a []Operand) error { return vecSel(a, false) }), flopDst)
	t[asm.OpTsels] = sem(argsOnly(func(a []Operand) error { return vecSel(a, true) }), flopDst)
	t[asm.OpTgather] = sem(argsOnly(vecGather), flopDst)
	t[asm.OpTscatter] = sem(argsOnly(vecScatter), flopDst)
	t[asm.OpTtrans] = sem(argsOnly(vecTrans), flopDst)
	initSemMore(t)
	initSemImg(t)
	// The engine's own: sync, fifo, scalar and communication (tallgather,
	// a comm op, is a plain load above).
	for _, op := range asm.ISA {
		switch op.Family {
		case asm.FamSync, asm.FamScalar, asm.FamComm, asm.FamView:
			if t[op.Op].exec == nil {
				t[op.Op] = engineOp
			}
		}
	}
}

func execLoad(args []Operand) error {
	if err := need(args, 2); err != nil {
		return err
	}
	return LoadTile(&args[0], &args[1])
}

func execStore(op *asm.COp, args []Operand, _ *ExecScratch) error {
	if err := need(args, 2); err != nil {
		return err
	}
	dst, src := &args[0], &args[1]
	if dst.Kind == asm.ArgTile && src.Kind == asm.ArgGM {
		dst, src = src, dst // pto-isa order
	}
	atomic := false
	if a, ok := op.Attr("atomic"); ok {
		atomic = strings.EqualFold(a.Word, "add")
	}
	if reluOf(op) {
		return storeTileRelu(dst, src, atomic)
	}
	return StoreTile(dst, src, atomic)
}
