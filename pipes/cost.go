package pipes

import (
	"github.com/ptoasm/ptoasm/asm"
)

// VecOp is a vector intrinsic cost entry (machine-facts §4.5): an asm.CostKey
// below asm.NumVecCosts. The ISA table gives every PIPE_V instruction one and
// the assembler resolves it into COp.Cost, so the machine costs by index.
type VecOp = asm.CostKey

// NumVecOps bounds Profile.Vec; index 0 (asm.CostNone) is unused.
const NumVecOps = asm.NumVecCosts

type vecKind uint8

const (
	vkElem   vecKind = iota // elementwise over 256-byte repeats
	vkPerRow                // one repeat per row at the op's slope, further repeats of the row at fold's
	vkUBCopy                // a UB→UB DMA burst per row
)

type vecOpInfo struct {
	kind vecKind
	// countMode marks the binary ops the cost model charges vec.count_floor for
	// when a row is not a whole number of repeats (kCountModeFloorCycles, §4.2).
	countMode bool
	// fold is the intrinsic whose slope folds extra repeats of a row before a
	// row reduction.
	fold VecOp
}

// vecOps holds how each intrinsic's repeats are counted; the keys with no row
// here are plain elementwise ops. vmrgsort4 counts merges, not bytes: see
// MergeCycles. Some intrinsics (vgatherb, vaxpy, ...) are profiled but no
// instruction pays them yet.
var vecOps = [NumVecOps]vecOpInfo{
	asm.CostVAdd:  {countMode: true},
	asm.CostVSub:  {countMode: true},
	asm.CostVMul:  {countMode: true},
	asm.CostVMax:  {countMode: true},
	asm.CostVMin:  {countMode: true},
	asm.CostVDiv:  {countMode: true},
	asm.CostVAnd:  {countMode: true},
	asm.CostVOr:   {countMode: true},
	asm.CostVCAdd: {kind: vkPerRow, fold: asm.CostVAdd},
	asm.CostVCMax: {kind: vkPerRow, fold: asm.CostVMax},
	asm.CostVCMin: {kind: vkPerRow, fold: asm.CostVMin},
	// TROWEXPAND goes row by row: V→S and S→V flags around a scalar read of
	// the row's value, then a count-mode vector_dup of the row (TRowExpand.hpp
	// at 3186c381). pto-isa's formula backend fits ≈14 cycles a row at every
	// width up to 512 bytes (TROWEXPAND fp32 cols 8..128, fp16 32..192,
	// formula_params.csv), so vbrcb's slope is per row and a wider row adds
	// vector_dup's slope per further repeat; charging it per repeat of the
	// tile made 8-column rows 8× too cheap and 128-column f32 rows 2× too dear.
	asm.CostVBrcb:  {kind: vkPerRow, fold: asm.CostVDup},
	asm.CostUBCopy: {kind: vkUBCopy},
}

// LookupVecOp finds an intrinsic cost entry by key (vadd, vexp, ubcopy, ...).
func LookupVecOp(key string) (VecOp, bool) {
	for v := asm.CostVAdd; v < NumVecOps; v++ {
		if v.String() == key {
			return v, true
		}
	}
	return asm.CostNone, false
}

// elemSize is dt's size in bytes; an invalid dtype counts as 4 bytes.
func elemSize(dt asm.DType) int64 {
	if n := int64(dt.Size()); n > 0 {
		return n
	}
	return 4
}

func ceilDiv(a, b int64) int64 {
	if a <= 0 || b <= 0 {
		return 0
	}
	return (a + b - 1) / b
}

// ceilBytes is ceil(bytes / bw) cycles. One division, so the result is the same
// on every platform.
func ceilBytes(bytes int64, bw float64) int64 {
	if bytes <= 0 || !(bw > 0) {
		return 0
	}
	c := float64(bytes) / bw
	if c >= 1<<62 {
		// Saturate: converting a float beyond int64 is undefined and
		// came out as a small or negative cycle count.
		return 1 << 62
	}
	n := int64(c)
	if float64(n) < c {
		n++
	}
	return n
}

// MatmulCycles is one mad on PIPE_M (machine-facts §4.4):
//
//	head (only when the cube queue is empty) +
//	perRepeat × ceil(M/16) × ceil(K/(32/sizeof(A))) × ceil(N/16)
//
// perRepeat is 2 for fp32 inputs and 1 for fp16/bf16/int8.
func (p *Profile) MatmulCycles(m, k, n int, in asm.DType, queueEmpty bool) int64 {
	size := int64(in.Size())
	if size <= 0 {
		size = 2
	}
	var per int64
	switch in {
	case asm.F32, asm.I32, asm.U32:
		per = p.Cube.RepeatF32
	case asm.BF16:
		per = p.Cube.RepeatBF16
	case asm.I8, asm.U8:
		per = p.Cube.RepeatI8
	default:
		per = p.Cube.RepeatF16
	}
	kg := p.Cube.KGranuleBytes / size
	if kg < 1 {
		kg = 1
	}
	c := per * ceilDiv(int64(m), 16) * ceilDiv(int64(k), kg) * ceilDiv(int64(n), 16)
	if queueEmpty {
		c += p.Cube.Head
	}
	return c
}

// VectorCycles is one vector tile instruction on PIPE_V. busy includes the head
// (charged only when the V queue is empty); tail is returned separately because
// the cost model charges it when the next sync or barrier on V flushes the pipe.
// busy+tail with queueEmpty is the single-instruction latency pto-isa profiles.
//
// Repeats (256 bytes each):
//   - a tile whose rows are contiguous (rowStride == validCols, or one row) is
//     processed as one flat run: ceil(rows×cols×size / 256);
//   - otherwise every row starts its own repeat: rows × ceil(cols×size / 256);
//   - count-mode binary ops (vadd, vmul, ... see vecOps) work row by row whenever
//     a row is not a whole number of repeats, and pay vec.count_floor once. The
//     profiled TADD int16 64×64 (167 cycles, 128-byte rows) needs this; TEXP fp16
//     64×64 (95, same rows) shows unary ops do not.
//   - row reductions fold each row to 256 bytes with the fold op's slope, then
//     pay one reducing repeat per row; vbrcb (TROWEXPAND) pays its slope per
//     row the same way, with vector_dup's for a row's further repeats.
//
// For TCVT pass the wider of the two element types: a conversion repeat covers
// 64 elements, i.e. 256 bytes of the 4-byte side. TMOV Vec→Vec (VUBCopy) is a
// UB→UB DMA and costs DMACycles(PathUBUB), with no tail.
func (p *Profile) VectorCycles(op VecOp, dt asm.DType, validRows, validCols, rowStride int, queueEmpty bool) (busy, tail int64) {
	contiguous := rowStride <= validCols || validRows == 1
	return p.vectorCycles(op, dt, validRows, validCols, contiguous, queueEmpty)
}

// VectorRowsCycles is VectorCycles for an instruction that starts a repeat
// run per row whatever its tile's row stride: pto-isa's TBinSInstr ops
// (asm.OpInfo.RowsIfDynCols) on a tile whose valid columns come from
// registers. Every row pays ceil(cols×size / 256) repeats at the op's slope,
// so rows narrower than 256 bytes cost a whole repeat each: pto-isa's st
// TADDS f32 256×16 (dynamic valid shape) is 266 cycles, 256 repeats and
// about 10 cycles more (tests/costmodel/st/testcase/tadds at 3186c381).
func (p *Profile) VectorRowsCycles(op VecOp, dt asm.DType, validRows, validCols int, queueEmpty bool) (busy, tail int64) {
	return p.vectorCycles(op, dt, validRows, validCols, validRows == 1, queueEmpty)
}

func (p *Profile) vectorCycles(op VecOp, dt asm.DType, validRows, validCols int, contiguous, queueEmpty bool) (busy, tail int64) {
	if !op.Vector() || validRows <= 0 || validCols <= 0 {
		return 0, 0
	}
	size := elemSize(dt)
	rows := int64(validRows)
	rowBytes := int64(validCols) * size
	info := &vecOps[op]
	if info.kind == vkUBCopy {
		return p.DMACycles(PathUBUB, rows*rowBytes, validRows), 0
	}
	rb := p.VecRepeatBytes
	vp := &p.Vec[op]
	perRow := ceilDiv(rowBytes, rb)
	switch info.kind {
	case vkPerRow:
		busy = rows*vp.Slope + rows*(perRow-1)*p.Vec[info.fold].Slope
	default:
		var repeats int64
		switch {
		case info.countMode && rowBytes%rb != 0:
			repeats = rows * perRow
			busy = p.VecCountFloor
		case contiguous:
			repeats = ceilDiv(rows*rowBytes, rb)
		default:
			repeats = rows * perRow
		}
		busy += repeats * vp.Slope
	}
	if queueEmpty {
		busy += vp.Head
	}
	return busy, vp.Tail
}

// ColFoldCycles is a column reduction (OpInfo.Fold FoldCols: TCOLSUM,
// TCOLMAX, TCOLMIN, TCOLPROD) of a rows × cols source with fold intrinsic op on
// PIPE_V. pto-isa lowers it to a UB→UB copy of row 0 into dst, a
// pipe_barrier(PIPE_V), then one count-mode fold of the next row into dst per
// further row, each followed by a barrier (TColReduceOps.hpp ColReduceInstr,
// TColSum.hpp SequentialSum at 3186c381): every fold waits for the previous
// one, so each pays the head (the pipe is empty after a barrier), the count
// mode floor, its repeats and its tail. busy covers all but the last fold's
// tail, which is returned (the barrier after it is the op's own, charged with
// its VBarrier). The copy has no head and every fold issues after a barrier,
// so the state of the queue does not matter. Hardware: TCOLMAX f32 and f16
// 64×64 2589 and 2713 cycles, 1×3072 f32 (the copy alone) 390
// (tests/costmodel/st/testcase/tcolmax).
func (p *Profile) ColFoldCycles(op VecOp, dt asm.DType, rows, cols int) (busy, tail int64) {
	if !op.Vector() || rows <= 0 || cols <= 0 {
		return 0, 0
	}
	size := elemSize(dt)
	rowBytes := int64(cols) * size
	busy = p.DMACycles(PathUBUB, rowBytes, 1)
	if rows == 1 {
		return busy, 0
	}
	vp := &p.Vec[op]
	fold := vp.Head + p.VecCountFloor + ceilDiv(rowBytes, p.VecRepeatBytes)*vp.Slope
	folds := int64(rows - 1)
	bar := p.Sync.Barrier
	busy += bar + folds*fold + (folds-1)*(vp.Tail+bar)
	return busy, vp.Tail
}

// RowProdCycles is TROWPROD of a rows × cols source (OpInfo.Fold
// FoldRowBlocks) on PIPE_V. pto-isa runs it row by row (TRowProd.hpp at
// 3186c381): a count-mode vector_dup of ones into a 32-byte scratch and a
// barrier, then one count-mode vmul of each 32-byte block of the row into the
// scratch, each followed by a barrier, then V→S flags, the scalar multiplying
// the block's lanes, and S→V flags before the next row. Every instruction of
// the chain waits for the one before, so each pays its head and tail. No
// pto-isa source times it; the charge is the profile's costs of those steps
// (the vector unit idles while the scalar works). Nothing is left pending.
func (p *Profile) RowProdCycles(dt asm.DType, rows, cols int) int64 {
	if rows <= 0 || cols <= 0 {
		return 0
	}
	size := elemSize(dt)
	lanes := max(p.DMABlockBytes/size, 1)
	blocks := ceilDiv(int64(cols), lanes)
	bar := p.Sync.Barrier
	dup, mul := &p.Vec[asm.CostVDup], &p.Vec[asm.CostVMul]
	perRow := dup.Head + dup.Slope + dup.Tail + bar +
		blocks*(mul.Head+p.VecCountFloor+mul.Slope+mul.Tail+bar) +
		2*(p.Sync.SetFlag+p.Sync.WaitFlag) + lanes*p.Scalar.Op
	return int64(rows) * perRow
}

// ColArgCycles is TCOLARGMAX/TCOLARGMIN (withVal: the .val forms) of a
// rows × cols source with fold intrinsic op (vmax or vmin) on PIPE_V
// (OpInfo.Fold FoldColArg). pto-isa works one 256-byte column block at a time
// (TColReduceIdx.hpp ProcessSingleBlock at 3186c381): two vector_dups and a
// UB copy of the block's row 0 and a barrier, then per further row vadds
// (the running index) and vcmp, a barrier, vsel and the fold, a barrier; a
// 16-bit source without the value converts the index with two vconvs, each
// behind a barrier; the value form copies the block out behind one. Each
// group after a barrier pays the head of its first instruction and the tail
// of its last. No pto-isa source times it; the charge is the profile's costs
// of those steps. Nothing is left pending.
func (p *Profile) ColArgCycles(op VecOp, dt asm.DType, rows, cols int, withVal bool) int64 {
	if !op.Vector() || rows <= 0 || cols <= 0 {
		return 0
	}
	size := elemSize(dt)
	v := func(k VecOp) *VecParams { return &p.Vec[k] }
	bar := p.Sync.Barrier
	rb := p.VecRepeatBytes
	blocks := ceilDiv(int64(cols)*size, rb)
	dup := v(asm.CostVDup)
	setup := dup.Head + 2*dup.Slope + dup.Tail + p.DMACycles(PathUBUB, rb, 1) + bar
	adds, cmp, sel, fold := v(asm.CostVAddS), v(asm.CostVCmp), v(asm.CostVSel), v(op)
	perRow := adds.Head + adds.Slope + cmp.Slope + cmp.Tail + bar +
		sel.Head + sel.Slope + fold.Slope + fold.Tail + bar
	var end int64
	switch {
	case withVal:
		end = p.DMACycles(PathUBUB, rb, 1) + bar
	case size == 2:
		cv := v(asm.CostVConv)
		end = 2 * (cv.Head + cv.Slope + cv.Tail + bar)
	}
	return blocks * (setup + int64(rows-1)*perRow + end)
}

// RowArgCycles is TROWARGMAX/TROWARGMIN (withVal: the .val forms) of a
// rows × cols source with reduce intrinsic op (vcmax or vcmin) on PIPE_V
// (OpInfo.Fold FoldRowArg). Rows of one repeat or less are one vcmax over the
// tile (TRowReduceIdxOps.hpp OneRepeatProcIdx), charged as VectorCycles.
// Wider rows go row by row (ProcReduceIdxStage1 at 3186c381): a vcmax over
// the row into (value, index) pairs, two vreducev2 that separate them, a
// vcmax over the pairs, each behind a barrier; rows of more than one
// repeat's worth of repeats add a second such stage (ProcReduceIdxStage2).
// Then the scalar assembles every row's index from the stages' indices
// between V→S and S→V flags: a UB load per stage and a store, two more with
// the value. No pto-isa source times it; the charge is the profile's costs
// of those steps, and nothing is left pending.
func (p *Profile) RowArgCycles(op VecOp, dt asm.DType, rows, cols int, withVal, queueEmpty bool) (busy, tail int64) {
	if !op.Vector() || rows <= 0 || cols <= 0 {
		return 0, 0
	}
	size := elemSize(dt)
	ept := max(p.VecRepeatBytes/size, 1)
	reps := ceilDiv(int64(cols), ept)
	if reps <= 1 {
		return p.VectorCycles(op, dt, rows, cols, cols, queueEmpty)
	}
	bar := p.Sync.Barrier
	red, rv := &p.Vec[op], &p.Vec[asm.CostVReduceV2]
	group := func(n int64) int64 {
		return red.Head + ceilDiv(n, ept)*red.Slope + red.Tail + bar + 2*(rv.Head+rv.Slope+rv.Tail+bar)
	}
	perRow := group(int64(cols)) + red.Head + red.Slope + red.Tail + bar
	stages := int64(1)
	if reps > ept {
		perRow += group(reps)
		stages = 2
	}
	scalar := stages + 1
	if withVal {
		scalar += 2
	}
	perRow += scalar * p.Scalar.Op
	return int64(rows)*perRow + 2*(p.Sync.SetFlag+p.Sync.WaitFlag), 0
}

// MergeFitBytes is the data one repeat of pto-isa's vmrgsort4 fit merges:
// four runs of blockLen 64 f32 slots, i.e. 128 (value, index) pairs of 8
// bytes (cce_costmodel_vector_compute.hpp at 3186c381, "fp32, blockLen=64
// single-source merge": 78·repeat + 20).
const MergeFitBytes = 4 * 64 * 4

// MergeCycles is one vmrgsort4 call merging bytes of (value, index) pairs in
// merges separate merges (groups of four runs, or one merge of 2-4 lists) on
// PIPE_V: head (queue empty) + slope × repeats, with one repeat per merge and
// per MergeFitBytes of a merge. At the fit's blockLen this is the source's
// repeat count (validCols / (4·blockLen), TMrgSort.hpp); for longer runs the
// source itself says the cost "is driven by count (data volume), not modeled
// here" and sets the repeat to 1 for the list form, so the data volume is
// charged at the fit's rate instead (docs/profile.md, "Merge sort").
func (p *Profile) MergeCycles(bytes, merges int64, queueEmpty bool) (busy, tail int64) {
	if bytes <= 0 || merges <= 0 {
		return 0, 0
	}
	vp := &p.Vec[asm.CostVMrgSort4]
	busy = merges * ceilDiv(ceilDiv(bytes, merges), MergeFitBytes) * vp.Slope
	if queueEmpty {
		busy += vp.Head
	}
	return busy, vp.Tail
}

// DMACycles is one transfer on path: latency + bytes/bw. Each of the rows bursts
// is rounded up to whole dma.block_bytes blocks, since the engines move 32-byte
// blocks (this is what puts TLOAD int16 128×127 at 520, not 518, cycles).
// rows <= 0 means one burst.
func (p *Profile) DMACycles(path DMAPath, bytes int64, rows int) int64 {
	if path >= NumDMAPaths || bytes <= 0 {
		return 0
	}
	d := &p.DMA[path]
	return d.Latency + ceilBytes(p.burstBytes(bytes, rows), d.BW)
}

// burstBytes rounds each row of a transfer up to whole blocks.
func (p *Profile) burstBytes(bytes int64, rows int) int64 {
	if rows < 1 {
		rows = 1
	}
	r := int64(rows)
	row := ceilDiv(bytes, r)
	if b := p.DMABlockBytes; b > 1 {
		row = ceilDiv(row, b) * b
	}
	return row * r
}

// RemoteDMACycles is a transfer on path whose GM side is another rank's memory
// hops links away (the TLOAD/TSTORE inside TGET/TPUT/collectives): the path's
// own latency plus the links' latency, at the slower of the path and one MTE
// stream's remote rate (link.stream_bw). Sharing a link between cores is the
// machine's business (link.bw).
func (p *Profile) RemoteDMACycles(path DMAPath, bytes int64, rows int, hops int) int64 {
	if path >= NumDMAPaths || bytes <= 0 {
		return 0
	}
	if hops < 1 {
		return p.DMACycles(path, bytes, rows)
	}
	d := &p.DMA[path]
	bw := min(d.BW, p.Link.StreamBW)
	return d.Latency + int64(hops)*p.Link.Latency + ceilBytes(p.burstBytes(bytes, rows), bw)
}

// LinkCycles is the time bytes need to cross hops links as one stream:
// per-hop latency plus bytes at link.stream_bw.
func (p *Profile) LinkCycles(bytes int64, hops int) int64 {
	if bytes <= 0 || hops < 1 {
		return 0
	}
	return int64(hops)*p.Link.Latency + ceilBytes(bytes, p.Link.StreamBW)
}

// SDMACycles is one TPUT_ASYNC/TGET_ASYNC payload moved by the off-core SDMA
// engine: setup and completion latency, link latency, bytes at sdma.bw.
func (p *Profile) SDMACycles(bytes int64, hops int) int64 {
	if bytes < 0 {
		bytes = 0
	}
	if hops < 0 {
		hops = 0
	}
	return p.SDMA.Latency + int64(hops)*p.Link.Latency + ceilBytes(bytes, p.SDMA.BW)
}

// Hops is the number of links between two ranks under the profile's topology.
func (p *Profile) Hops(from, to, ranks int) int {
	if from == to {
		return 0
	}
	switch p.Link.Topology {
	case TopoRing:
		d := from - to
		if d < 0 {
			d = -d
		}
		if ranks > 0 && ranks-d < d {
			d = ranks - d
		}
		return d
	case TopoSwitch:
		return 2
	}
	return 1
}

// SyncKind is a synchronisation instruction.
type SyncKind uint8

const (
	SyncSetFlag SyncKind = iota
	SyncWaitFlag
	SyncBarrier
	SyncFFTSSet
	SyncFFTSWait
	SyncDSB
)

// SyncCycles is the issue cost of one sync instruction (1 cycle each in the
// pto-isa cost model, §4.7). Blocking time is the simulator's, not this.
func (p *Profile) SyncCycles(k SyncKind) int64 {
	switch k {
	case SyncSetFlag:
		return p.Sync.SetFlag
	case SyncWaitFlag:
		return p.Sync.WaitFlag
	case SyncBarrier:
		return p.Sync.Barrier
	case SyncFFTSSet:
		return p.Sync.FFTSSet
	case SyncFFTSWait:
		return p.Sync.FFTSWait
	case SyncDSB:
		return p.Sync.DSB
	}
	return 0
}

// ScalarKind is a scalar-unit action.
type ScalarKind uint8

const (
	ScalarOp ScalarKind = iota
	ScalarGMLoad
	ScalarGMStore
	ScalarAtomic
	ScalarDcci
)

// ScalarCycles is one scalar action; a GM access to another rank adds the link
// latency of every hop.
func (p *Profile) ScalarCycles(k ScalarKind, hops int) int64 {
	var c int64
	switch k {
	case ScalarOp:
		return p.Scalar.Op
	case ScalarDcci:
		return p.Scalar.Dcci
	case ScalarGMLoad:
		c = p.Scalar.GMLoad
	case ScalarGMStore:
		c = p.Scalar.GMStore
	case ScalarAtomic:
		c = p.Scalar.Atomic
	}
	if hops > 0 {
		c += int64(hops) * p.Link.Latency
	}
	return c
}

// Seconds converts cycles to seconds at the profile's clock.
func (p *Profile) Seconds(cycles int64) float64 {
	return float64(cycles) / p.ClockHz
}
