package pipes

import (
	"strings"

	"github.com/ptoasm/ptoasm/asm"
)

// VecOp is a vector intrinsic cost entry (machine-facts §4.5). The machine maps
// a PTO op to one once, at decode time (VectorOp), and then costs it by index.
type VecOp uint8

const (
	VAdd VecOp = iota
	VSub
	VMul
	VMax
	VMin
	VDiv
	VAnd
	VOr
	VNot
	VXor
	VAddS
	VMulS
	VMaxS
	VMinS
	VAbs
	VRelu
	VLRelu
	VRsqrt
	VRec
	VExp
	VLn
	VSqrt
	VSel
	VCmpvGE
	VCmpvNE
	VCmp
	VCopy
	VDup
	VCAdd
	VCGAdd
	VCGMax
	VCGMin
	VCMax
	VCMin
	VReduceV2
	VBrcb
	VGather
	VGatherB
	VMrgSort4
	VBitSort
	VConv
	VAxpy
	VShl
	VShr
	VTrans
	VUBCopy // copy_ubuf_to_ubuf: costed on dma.ub_ub, not by head/slope/tail
	NumVecOps
)

type vecKind uint8

const (
	vkElem      vecKind = iota // elementwise over 256-byte repeats
	vkRowReduce                // one reducing repeat per row after folding the row to 256 B
	vkUBCopy                   // a UB→UB DMA burst per row
)

type vecOpInfo struct {
	name string
	kind vecKind
	// countMode marks the binary ops the cost model charges vec.count_floor for
	// when a row is not a whole number of repeats (kCountModeFloorCycles, §4.2).
	countMode bool
	// fold is the intrinsic whose slope folds extra repeats of a row before a
	// row reduction.
	fold VecOp
}

var vecOps = [NumVecOps]vecOpInfo{
	VAdd:      {name: "vadd", countMode: true},
	VSub:      {name: "vsub", countMode: true},
	VMul:      {name: "vmul", countMode: true},
	VMax:      {name: "vmax", countMode: true},
	VMin:      {name: "vmin", countMode: true},
	VDiv:      {name: "vdiv", countMode: true},
	VAnd:      {name: "vand", countMode: true},
	VOr:       {name: "vor", countMode: true},
	VNot:      {name: "vnot"},
	VXor:      {name: "vxor"},
	VAddS:     {name: "vadds"},
	VMulS:     {name: "vmuls"},
	VMaxS:     {name: "vmaxs"},
	VMinS:     {name: "vmins"},
	VAbs:      {name: "vabs"},
	VRelu:     {name: "vrelu"},
	VLRelu:    {name: "vlrelu"},
	VRsqrt:    {name: "vrsqrt"},
	VRec:      {name: "vrec"},
	VExp:      {name: "vexp"},
	VLn:       {name: "vln"},
	VSqrt:     {name: "vsqrt"},
	VSel:      {name: "vsel"},
	VCmpvGE:   {name: "vcmpv_ge"},
	VCmpvNE:   {name: "vcmpv_ne"},
	VCmp:      {name: "vcmp"},
	VCopy:     {name: "vcopy"},
	VDup:      {name: "vector_dup"},
	VCAdd:     {name: "vcadd", kind: vkRowReduce, fold: VAdd},
	VCGAdd:    {name: "vcgadd"},
	VCGMax:    {name: "vcgmax"},
	VCGMin:    {name: "vcgmin"},
	VCMax:     {name: "vcmax", kind: vkRowReduce, fold: VMax},
	VCMin:     {name: "vcmin", kind: vkRowReduce, fold: VMin},
	VReduceV2: {name: "vreducev2"},
	VBrcb:     {name: "vbrcb"},
	VGather:   {name: "vgather"},
	VGatherB:  {name: "vgatherb"},
	VMrgSort4: {name: "vmrgsort4"},
	VBitSort:  {name: "vbitsort"},
	VConv:     {name: "vconv"},
	VAxpy:     {name: "vaxpy"},
	VShl:      {name: "vshl"},
	VShr:      {name: "vshr"},
	VTrans:    {name: "scatter_vnchwconv"},
	VUBCopy:   {name: "ubcopy", kind: vkUBCopy},
}

func (v VecOp) String() string {
	if v < NumVecOps {
		return vecOps[v].name
	}
	return "invalid"
}

// LookupVecOp finds an intrinsic cost entry by key (vadd, vexp, ubcopy, ...).
func LookupVecOp(key string) (VecOp, bool) {
	for i := range vecOps {
		if vecOps[i].name == key {
			return VecOp(i), true
		}
	}
	return NumVecOps, false
}

// VectorOp maps a PTO op name straight to its cost entry.
func VectorOp(op string) (VecOp, bool) {
	k := VectorCostKey(op)
	if k == "" {
		return NumVecOps, false
	}
	return LookupVecOp(k)
}

// VectorCostKey names the intrinsic whose cost a PTO vector op pays, or "" when
// op does not run on PIPE_V. Where pto-isa lowers an op to several intrinsics we
// charge the dominant one; the notes say which are approximations.
func VectorCostKey(op string) string {
	op = strings.TrimPrefix(strings.ToLower(op), "pto.")
	switch op {
	case "tadd", "tpartadd", "tcolsum", "trowexpandadd", "tcolexpandadd":
		// tcolsum folds rows with vadd: (rows-1) row-adds ≈ the tile's repeats.
		return "vadd"
	case "tsub", "trowexpandsub", "tcolexpandsub":
		return "vsub"
	case "tmul", "trowexpandmul", "tcolexpandmul", "tprelu":
		// tprelu = multiply by the slope tile then select; the multiply dominates.
		return "vmul"
	case "tdiv", "tdivs", "trowexpanddiv", "tcolexpanddiv":
		// tdivs: the formula backend gives ≈5 (fp32) / 9 (fp16) cycles per repeat,
		// closest to vdiv's 4 (§4.6).
		return "vdiv"
	case "tmax", "tpartmax", "tcolmax", "trowexpandmax", "tcolexpandmax":
		return "vmax"
	case "tmin", "tpartmin", "tcolmin", "trowexpandmin", "tcolexpandmin":
		return "vmin"
	case "tand":
		return "vand"
	case "tor":
		return "vor"
	case "txor":
		return "vxor"
	case "tnot":
		return "vnot"
	case "tshl", "tshls":
		return "vshl"
	case "tshr", "tshrs":
		return "vshr"
	case "tadds", "tsubs":
		return "vadds"
	case "tmuls", "tneg":
		// tneg is a multiply by -1.
		return "vmuls"
	case "tmaxs":
		return "vmaxs"
	case "tmins":
		return "vmins"
	case "tabs":
		return "vabs"
	case "trelu":
		return "vrelu"
	case "tlrelu":
		return "vlrelu"
	case "trsqrt":
		return "vrsqrt"
	case "trecip":
		return "vrec"
	case "texp":
		return "vexp"
	case "tlog":
		return "vln"
	case "tsqrt":
		return "vsqrt"
	case "tsel", "tsels":
		return "vsel"
	case "tcmp":
		return "vcmpv_ge"
	case "tcmps":
		return "vcmp"
	case "texpands", "tci", "ttri":
		return "vector_dup"
	case "tcvt", "tquant", "tdequant":
		return "vconv"
	case "trowsum":
		return "vcadd"
	case "trowmax", "trowargmax":
		return "vcmax"
	case "trowmin", "trowargmin":
		return "vcmin"
	case "trowexpand":
		return "vbrcb"
	case "tcolexpand", "tfillpad":
		return "vcopy"
	case "tgather", "tscatter", "mgather":
		return "vgather"
	case "tgatherb":
		return "vgatherb"
	case "tsort32":
		return "vbitsort"
	case "tmrgsort":
		return "vmrgsort4"
	case "ttrans":
		return "scatter_vnchwconv"
	case "taxpy":
		return "vaxpy"
	case "tmov.v2v", "textract.v2v", "tinsert.v2v":
		return "ubcopy"
	}
	return ""
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
//     pay one reducing repeat per row.
//
// For TCVT pass the wider of the two element types: a conversion repeat covers
// 64 elements, i.e. 256 bytes of the 4-byte side. TMOV Vec→Vec (VUBCopy) is a
// UB→UB DMA and costs DMACycles(PathUBUB), with no tail.
func (p *Profile) VectorCycles(op VecOp, dt asm.DType, validRows, validCols, rowStride int, queueEmpty bool) (busy, tail int64) {
	if op >= NumVecOps || validRows <= 0 || validCols <= 0 {
		return 0, 0
	}
	size := int64(dt.Size())
	if size <= 0 {
		size = 4
	}
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
	case vkRowReduce:
		busy = rows*vp.Slope + rows*(perRow-1)*p.Vec[info.fold].Slope
	default:
		contiguous := rowStride <= validCols || validRows == 1
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
