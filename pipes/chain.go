package pipes

import "github.com/ptoasm/ptoasm/asm"

// The ops below are charged as the instruction sequence pto-isa's a2a3
// implementation issues (3186c381), not as one intrinsic over the tile:
// float TDIVS (TDivS.hpp DivSOp: vector_dup, barrier, vdiv per call of its
// TBinSInstr), TPOW/TPOWS (TPow.hpp: two passes of vabs/vln/vmul/vexp
// behind barriers, then a scalar fix-up loop), and the scalar loops of
// integer TDIVS (TDivs_naive), integer TPOW/TPOWS (TPowI) and TCI without
// a scratch tile (TCI.hpp). docs/profile.md "Per-instruction audit".

// pto-isa's repeat limits (include/pto/common/constants.hpp).
const (
	repeatMax       = 255 // REPEAT_MAX: repeats of one instruction
	repeatStrideMax = 255 // REPEAT_STRIDE_MAX: 32-byte blocks between repeats
	blockBytes      = 32  // BLOCK_BYTE_SIZE
	smallRpt        = 4   // TBinSOp.hpp SMALL_RPT
)

// BinSShape is the shape TBinSInstr (TBinSOp.hpp) decides its lowering
// on: the declared rows (the larger of dst's and the source's) and dst's
// declared columns, the valid region, and whether the tile is one flat run
// (every operand's valid columns its columns at compile time, or one row:
// tileDataContinue).
type BinSShape struct {
	Rows, Cols   int
	VRows, VCols int
	Flat         bool
}

// BinSCalls is how many times TBinSInstr calls its Op's instruction
// sequence (TBinSOp.hpp at 3186c381). Flat: one call (BinS1LCountMode, or
// BinS1LNormMode) and one more for a part repeat. Row by row:
// BinS2LCountMode and BinS2LNormModeColVLAlign call once per row;
// BinS2LNormModeRowRpt once per column repeat (each covering every row),
// or, past 255 rows or a row stride of more than 255 blocks, per row and
// per 255 repeats (its Head/Tail forms). The repeats are the same in every
// form; only the calls differ, which matters for ops whose sequence has a
// barrier inside.
func BinSCalls(dt asm.DType, s BinSShape) int64 {
	if s.VRows <= 0 || s.VCols <= 0 {
		return 0
	}
	size := elemSize(dt)
	epr := max(256/size, 1)
	rows, cols := int64(s.Rows), int64(s.Cols)
	vr, vc := int64(s.VRows), int64(s.VCols)
	if s.Flat {
		total := ceilDiv(vr*vc, epr)
		if cols%epr != 0 && cols > epr || total > repeatMax {
			return 1
		}
		if vr*vc%epr != 0 {
			return 2
		}
		return 1
	}
	norm := cols / epr
	if norm > 1 && rows*norm < smallRpt || rows < norm+1 {
		return vr
	}
	strideOver := cols*size/blockBytes > repeatStrideMax
	if rows <= repeatMax && !strideOver {
		return ceilDiv(vc, epr)
	}
	var calls int64
	head, remain := vc, vc
	if rows > epr {
		head, remain = vc/epr, vc%epr
		if head > 0 {
			calls += vr * ceilDiv(head, repeatMax)
		}
	}
	if remain > 0 {
		if strideOver {
			calls += vr
		} else {
			calls += ceilDiv(vr, repeatMax)
		}
	}
	return calls
}

// BinaryRowCalls is how many times TBinOp.hpp's strided BinaryInstr (the
// one TPow.hpp's TPowF calls) calls its Op: it always takes
// Bin2LNormModeRowRpt, one call per row for each 255 of the row's whole
// repeats (Bin2LNormModeHead), then for a part repeat one call per 255
// rows, or one per row when a row stride passes 255 blocks
// (Bin2LNormModeTail). cols is the widest operand's declared columns.
func BinaryRowCalls(dt asm.DType, vrows, vcols, cols int) int64 {
	if vrows <= 0 || vcols <= 0 {
		return 0
	}
	size := elemSize(dt)
	epr := max(256/size, 1)
	vr, vc := int64(vrows), int64(vcols)
	var calls int64
	if rpt := vc / epr; rpt > 0 {
		calls += vr * ceilDiv(rpt, repeatMax)
	}
	if vc%epr != 0 {
		if int64(cols)*size/blockBytes > repeatStrideMax {
			calls += vr
		} else {
			calls += ceilDiv(vr, repeatMax)
		}
	}
	return calls
}

// chainCycles is calls runs of the barrier-separated instruction sequence
// steps over a tile: every call pays each step's head, and each step but the
// last its tail and sync.pipe_barrier (the barrier empties the pipe, so the
// next step pays its head); the repeats (and vec.count_floor) are each
// step's over the whole tile, as VectorCycles counts them. The last step's
// tail is returned: the next call's first step issues behind it without a
// barrier.
func (p *Profile) chainCycles(steps []VecOp, dt asm.DType, vrows, vcols int, contiguous bool, calls int64) (busy, tail int64) {
	bar := p.Sync.Barrier
	for i, op := range steps {
		vp := &p.Vec[op]
		reps, t := p.vectorCycles(op, dt, vrows, vcols, contiguous, false)
		busy += reps + calls*vp.Head
		if i < len(steps)-1 {
			busy += calls * (t + bar)
		} else {
			tail = t
		}
	}
	return busy, tail
}

// DivSCycles is float TDIVS on PIPE_V. TDivS.hpp's DivSOp issues, per call
// of TBinSInstr (BinSCalls), a vector_dup of the scalar into dst, a
// pipe_barrier(PIPE_V) and vdiv of the source by dst; in place (dst is the
// source) it is one vmuls by the reciprocal instead. pto-isa's formula
// backend fits TDIVS at 0.0781 cycles an fp32 element, 5 a 64-element repeat:
// vdiv's 4 and vector_dup's 1 (formula_params.csv).
func (p *Profile) DivSCycles(dt asm.DType, s BinSShape, inPlace, queueEmpty bool) (busy, tail int64) {
	if s.VRows <= 0 || s.VCols <= 0 {
		return 0, 0
	}
	if inPlace {
		return p.vectorCycles(asm.CostVMulS, dt, s.VRows, s.VCols, s.Flat, queueEmpty)
	}
	return p.chainCycles([]VecOp{asm.CostVDup, asm.CostVDiv}, dt, s.VRows, s.VCols, s.Flat, BinSCalls(dt, s))
}

// ScalarLoopCycles is a loop of the scalar unit over elems elements that
// pto-isa runs inside a vector op, charged on PIPE_V (the vector unit waits
// for it): steps `scalar.op` per element, and with flags the V→S and S→V
// set/wait pairs around it (PtoSetWaitFlag). steps counts the element's UB
// accesses and the arithmetic result it writes; compares, branches and loop
// control are not charged, so this is a lower bound. No pto-isa source
// times a scalar loop: its cost model runs them uncharged on the host (st
// TDIVS int32 31×128 "4" cycles, the two flag pairs alone).
func (p *Profile) ScalarLoopCycles(elems, steps int64, flags bool) int64 {
	if elems <= 0 {
		return 0
	}
	c := elems * steps * p.Scalar.Op
	if flags {
		c += 2 * (p.Sync.SetFlag + p.Sync.WaitFlag)
	}
	return c
}

// PowCycles is TPOW (tileExp: the exponent is a tile) or TPOWS on PIPE_V.
// A float tile (TPow.hpp TPowF) runs two passes, one into tmp with
// |base| and one into dst: per call vabs (tmp's pass only), vln, vmul by
// the exponent tile (vmuls by the scalar), vexp, a pipe_barrier(PIPE_V)
// between each. TPOW's passes go through TBinOp.hpp's strided BinaryInstr
// (BinaryRowCalls), TPOWS's through TBinSInstr (BinSCalls). Then, between
// V→S and S→V flags, the scalar fixes up every element
// (ProcessSpecialCaseForPowF): it reads base, the exponent (TPOW) and tmp;
// the store it makes for a zero or integer exponent depends on the data and
// is not charged. An integer tile (TPowI) is only a scalar loop between the
// flags: it reads base and the exponent (TPOW), squares by the exponent's
// bits (data-dependent, not charged) and stores. Nothing is left pending.
func (p *Profile) PowCycles(dt asm.DType, s BinSShape, tileExp bool) int64 {
	if s.VRows <= 0 || s.VCols <= 0 {
		return 0
	}
	elems := int64(s.VRows) * int64(s.VCols)
	// Per element the scalar reads base (and the exponent tile) and then
	// tmp (float) or stores the power (integer): one more access either way.
	loads := int64(1)
	if tileExp {
		loads = 2
	}
	if !dt.IsFloat() {
		return p.ScalarLoopCycles(elems, loads+1, true)
	}
	mul := asm.CostVMulS
	calls, flat := BinSCalls(dt, s), s.Flat
	if tileExp {
		mul, calls, flat = asm.CostVMul, BinaryRowCalls(dt, s.VRows, s.VCols, s.Cols), false
	}
	// The dst pass issues behind the tmp pass's last vexp; the fix-up's
	// V→S flag waits for the dst pass's.
	abs, _ := p.chainCycles([]VecOp{asm.CostVAbs, asm.CostVLn, mul, asm.CostVExp}, dt, s.VRows, s.VCols, flat, calls)
	ln, lnTail := p.chainCycles([]VecOp{asm.CostVLn, mul, asm.CostVExp}, dt, s.VRows, s.VCols, flat, calls)
	return abs + ln + lnTail + p.ScalarLoopCycles(elems, loads+1, true)
}
