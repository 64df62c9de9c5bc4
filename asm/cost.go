package asm

// CostKey is the cost-model entry an instruction pays, carried by its ISA table
// row and resolved per instruction at assembly (COp.Cost). The keys below
// NumVecCosts are PIPE_V intrinsics (machine-facts §4.5): pipes.Profile.Vec holds
// their head/slope/tail, indexed by the key. The rest name how the machine
// charges the other pipes. CostNone is no entry: TestEveryOpHasCost fails on it.
type CostKey uint8

const (
	CostNone CostKey = iota
	// Vector intrinsics. Where pto-isa lowers an op to several intrinsics the
	// table charges the dominant one (the op's row says which).
	CostVAdd
	CostVSub
	CostVMul
	CostVMax
	CostVMin
	CostVDiv
	CostVAnd
	CostVOr
	CostVNot
	CostVXor
	CostVAddS
	CostVMulS
	CostVMaxS
	CostVMinS
	CostVAbs
	CostVRelu
	CostVLRelu
	CostVRsqrt
	CostVRec
	CostVExp
	CostVLn
	CostVSqrt
	CostVSel
	CostVCmpvGE
	CostVCmpvNE
	CostVCmp
	CostVCopy
	CostVDup
	CostVCAdd
	CostVCGAdd
	CostVCGMax
	CostVCGMin
	CostVCMax
	CostVCMin
	CostVReduceV2
	CostVBrcb
	CostVGather
	CostVGatherB
	CostVMrgSort4
	CostVBitSort
	CostVConv
	CostVAxpy
	CostVShl
	CostVShr
	CostVTrans
	// CostUBCopy is copy_ubuf_to_ubuf: a UB→UB DMA (dma.ub_ub), not a repeat count.
	CostUBCopy
	// CostMad is one mad on PIPE_M (pipes.Profile.MatmulCycles).
	CostMad
	// CostDMA is a transfer costed by its (source, destination) path.
	CostDMA
	// CostMove is a routed tile move: a DMA on its path, or CostUBCopy when the
	// operands put it on V (COp.Cost holds the resolved key).
	CostMove
	// CostSync is a synchronisation instruction's issue cost (sync.*).
	CostSync
	// CostScalar is a scalar-unit action (scalar.*).
	CostScalar
	NumCostKeys
)

// NumVecCosts bounds the vector intrinsic keys: k is one when 0 < k < NumVecCosts.
const NumVecCosts = CostMad

var costNames = [NumCostKeys]string{
	CostNone: "none",
	CostVAdd: "vadd", CostVSub: "vsub", CostVMul: "vmul", CostVMax: "vmax", CostVMin: "vmin",
	CostVDiv: "vdiv", CostVAnd: "vand", CostVOr: "vor", CostVNot: "vnot", CostVXor: "vxor",
	CostVAddS: "vadds", CostVMulS: "vmuls", CostVMaxS: "vmaxs", CostVMinS: "vmins",
	CostVAbs: "vabs", CostVRelu: "vrelu", CostVLRelu: "vlrelu", CostVRsqrt: "vrsqrt", CostVRec: "vrec",
	CostVExp: "vexp", CostVLn: "vln", CostVSqrt: "vsqrt", CostVSel: "vsel",
	CostVCmpvGE: "vcmpv_ge", CostVCmpvNE: "vcmpv_ne", CostVCmp: "vcmp",
	CostVCopy: "vcopy", CostVDup: "vector_dup",
	CostVCAdd: "vcadd", CostVCGAdd: "vcgadd", CostVCGMax: "vcgmax", CostVCGMin: "vcgmin",
	CostVCMax: "vcmax", CostVCMin: "vcmin", CostVReduceV2: "vreducev2", CostVBrcb: "vbrcb",
	CostVGather: "vgather", CostVGatherB: "vgatherb", CostVMrgSort4: "vmrgsort4", CostVBitSort: "vbitsort",
	CostVConv: "vconv", CostVAxpy: "vaxpy", CostVShl: "vshl", CostVShr: "vshr",
	CostVTrans: "scatter_vnchwconv", CostUBCopy: "ubcopy",
	CostMad: "mad", CostDMA: "dma", CostMove: "dma/ubcopy", CostSync: "sync", CostScalar: "scalar",
}

// String is the key's name: the intrinsic (vadd, vexp, ...), whose profile
// parameters are vec.NAME.{head,slope,tail}, or the charge (mad, dma, ...).
func (k CostKey) String() string {
	if k < NumCostKeys {
		return costNames[k]
	}
	return "invalid"
}

// Vector reports whether k is a PIPE_V intrinsic.
func (k CostKey) Vector() bool { return k > CostNone && k < NumVecCosts }

// CostOn is the key the machine charges when the instruction runs on pipe p:
// a routed move on V is a UB→UB copy, elsewhere a DMA on its path.
func (op *OpInfo) CostOn(p Pipe) CostKey {
	if op.Cost == CostMove {
		if p == PipeV {
			return CostUBCopy
		}
		return CostDMA
	}
	return op.Cost
}
