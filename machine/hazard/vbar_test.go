package hazard_test

import (
	"strings"
	"testing"

	"github.com/ptoasm/ptoasm/machine/hazard"
)

// vbarKernel is a one-core V kernel whose inputs are loaded and ordered
// before body, so that body's findings are the body's own.
const vbarKernel = `const N = 64
gm X : f32 [1, N] = random(seed=1, lo=-1, hi=1)
gm I : i32 [1, N] = random(seed=2, lo=0, hi=8)
gm U : u32 [1, N] = random(seed=3, lo=0, hi=64)
gm S : f32 [8, 8] = random(seed=4, lo=-1, hi=1)
kernel k : aiv {
    tile %x : vec f32 [1, N]
    tile %y : vec f32 [1, N]
    tile %z : vec f32 [1, N]
    tile %a : vec i32 [1, N]
    tile %b : vec i32 [1, N]
    tile %d : vec i32 [1, N]
    tile %ix : vec u32 [1, N]
    tile %mk : vec u8 [1, N]
    tile %h : vec f16 [1, N]
    tile %xh : vec f32 [1, N] valid [1, N/2]
    tile %ah : vec i32 [1, N] valid [1, N/2]
    tile %x1 : vec f32 [1, N] valid [1, 1]
    tile %s1 : vec f32 [8, 8]
    tile %s2 : vec f32 [8, 8]
    tile %s3 : vec f32 [8, 8]
    tile %w : vec f32 [1, N]
    tile %wr : vec f32 [1, 128]
    tload %x, @X[0, 0]
    tload %y, @X[0, 0]
    tload %a, @I[0, 0]
    tload %b, @I[0, 0]
    tload %ix, @U[0, 0]
    tload %xh, @X[0, 0]
    tload %ah, @I[0, 0]
    tload %x1, @X[0, 0]
    tload %s1, @S[0, 0]
    tload %s2, @S[0, 0]
    set_flag MTE2, V, 0
    wait_flag MTE2, V, 0
    tcmps %mk, %x, 0.0 #cmp=gt
    tmuls %z, %x, 1.0
    tadd %d, %a, %b
    tcvt %h, %x
    pipe_barrier V
BODY
}
launch ranks=1 {
    run k blocks=1
}
`

// The internal pipe_barrier(PIPE_V) of composite ops (asm.VBarrier, docs/isa.md
// "Internal barriers") orders exactly the accesses on its far side: per class
// of row (a barrier before every access, after every access, in between, in
// between and at the end, and one taken only on a dtype, attribute or
// valid-shape condition) a dependence it covers needs no manual barrier and
// one it does not cover, or where the condition fails, is still reported.
func TestInternalBarrierClasses(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       []string // finding kinds
	}{
		// tsel: every access after its first barrier.
		{"tsel reads what the op before wrote", "tadds %y, %x, 1.0\ntsel %z, %mk, %x, %y", nil},
		{"tsel's accesses are not ordered before later ops", "tsel %z, %mk, %x, %y\ntadds %y, %z, 1.0", []string{hazard.KindRAW, hazard.KindWAR}},
		// tcolmax: a barrier after every access.
		{"tcolmax's read is ordered before a later write", "tcolmax %z, %x\ntadds %x, %y, 1.0", nil},
		{"tcolmax's result is ordered before a later reader", "tcolmax %z, %x\ntadds %y, %z, 1.0", nil},
		{"tcolmax reads what the op before wrote", "tadds %x, %y, 1.0\ntcolmax %z, %x", []string{hazard.KindRAW}},
		// txor: a and b before the last barrier, dst after the first.
		{"txor's reads are ordered before a later write", "txor %d, %a, %b\ntadd %a, %b, %b", nil},
		{"txor's dst write is ordered after an earlier reader", "tadd %a, %d, %b\ntxor %d, %a, %b", []string{hazard.KindRAW}},
		{"txor's dst is not ordered before a later reader", "txor %d, %a, %b\ntadd %b, %d, %d", []string{hazard.KindRAW}},
		// tgather: idx read before the barrier, a read after it.
		{"tgather reads a written just before", "tadds %y, %x, 1.0\ntgather %z, %y, %ix", nil},
		{"tgather reads idx before its barrier", "tmov.v2v %ix, %ix\ntgather %z, %y, %ix", []string{hazard.KindRAW}},
		// tcmps: the barrier only for #cmp=ne.
		{"tcmps ne: a later write of a is ordered", "tcmps %mk, %y, 0.0 #cmp=ne\ntadds %y, %x, 1.0", nil},
		{"tcmps eq: no barrier inside", "tcmps %mk, %y, 0.0 #cmp=eq\ntadds %y, %x, 1.0", []string{hazard.KindWAR}},
		// tcvt: a barrier before every access, only from i32 to f16.
		{"tcvt i32 to f16 reads what the op before wrote", "tadd %d, %a, %b\ntcvt %h, %d", nil},
		{"tcvt f32 to f16: no barrier inside", "tmuls %z, %x, 2.0\ntcvt %h, %z", []string{hazard.KindRAW}},
		{"tcvt i32 to f16 is not ordered before a later reader", "tcvt %h, %d\ntcvt %y, %h", []string{hazard.KindRAW}},
		// tpow, trem, trems: a before the first barrier, every access
		// before the last.
		{"tpow reads b after its first barrier and ends with one", "tadds %y, %x, 1.0\ntpow %z, %x, %y, %w\ntadds %y, %z, 1.0", nil},
		{"tpow reads a before its first barrier", "tadds %y, %x, 1.0\ntpow %z, %y, %x, %w", []string{hazard.KindRAW}},
		{"trem's accesses are ordered before later ops", "trem %z, %x, %y, %wr\ntadds %x, %z, 1.0", nil},
		{"trems reads a before its first barrier", "tadds %y, %x, 1.0\ntrems %z, %y, 3.0, %wr", []string{hazard.KindRAW}},
		// On i32 they convert a (trem: and b) to f32 in place before the
		// first barrier: a write the f32 path does not make (and
		// TestInPlaceOperandWrites across pipes).
		{"trems i32 converts a in place", "tadds %a, %b, 1\ntrems %d, %a, 3, %wr", []string{hazard.KindRAW, hazard.KindWAW}},
		// tpartargmax: only when a and b have the same valid shape.
		{"tpartargmax reads the index tiles after its first barrier", "tadd %b, %a, %a\ntpartargmax %z, %d, %x, %y, %a, %b", nil},
		{"tpartargmax of different valid shapes: no barrier taken", "tadd %b, %a, %a\ntpartargmax %z, %d, %xh, %y, %ah, %b", []string{hazard.KindRAW}},
		// tpartadd: only for a b narrower than dst.
		{"tpartadd reads a narrow b after its barrier", "tmuls %xh, %xh, 2.0\ntpartadd %z, %x, %xh", nil},
		{"tpartadd with a narrow a: no barrier taken", "tmuls %xh, %xh, 2.0\ntpartadd %z, %xh, %x", []string{hazard.KindRAW}},
		// tpairreducesum: a barrier after every vcpadd, none for one column.
		{"tpairreducesum's result is ordered before a later reader", "tpairreducesum %z, %x\ntadds %y, %z, 1.0", nil},
		{"tpairreducesum of one column has no barrier", "tpairreducesum %x1, %x\ntmuls %x, %x, 2.0", []string{hazard.KindWAR}},
		// tfillpad: src and dst before the barrier, dst after it.
		{"tfillpad's src read is ordered before a later write", "tfillpad %z, %xh #pad=zero\ntmuls %xh, %xh, 2.0", nil},
		{"tfillpad's pad is not ordered before a later reader", "tfillpad %z, %xh #pad=zero\ntadds %y, %z, 1.0", []string{hazard.KindRAW}},
		// ttri: a barrier after every vector_dup.
		{"ttri's mask is ordered before a later reader", "ttri %z, 0\ntadds %y, %z, 1.0", nil},
		{"ttri writes before its first barrier", "tadds %y, %z, 1.0\nttri %z, 0", []string{hazard.KindWAR}},
		// ttrans: a read before the barrier, dst written after it.
		{"ttrans writes dst after its barrier", "tmuls %s3, %s2, 2.0\nttrans %s2, %s1", nil},
		{"ttrans's dst is not ordered before a later reader", "ttrans %s2, %s1\ntmuls %s3, %s2, 2.0", []string{hazard.KindRAW}},
		// Arg-reductions: the value forms write their outputs after a
		// barrier; the index forms write dstidx before one.
		{"trowargmax.val writes its outputs after its first barrier", "tadds %y, %z, 1.0\ntrowargmax.val %z, %d, %x", nil},
		{"trowargmax writes dstidx before its first barrier", "tadd %b, %d, %a\ntrowargmax %d, %x", []string{hazard.KindWAR}},
		{"tcolargmax.val writes its value after its first barrier", "tadds %y, %z, 1.0\ntcolargmax.val %z, %d, %x\ntadds %y, %z, 1.0", nil},
		// tadddeqrelu: the sum of a and b before the first barrier, the f16
		// result before the last.
		{"tadddeqrelu's result is ordered before a later reader", "tadddeqrelu %h, %a, %b, 0.5, %d\ntcvt %y, %h", nil},
		// It also writes b (the relu, after its barriers); a barrier mask
		// names operands, not reads and writes, so b in the first segment
		// brings the WAW with the RAW that needs the same barrier.
		{"tadddeqrelu reads a and b before its first barrier", "tadd %b, %a, %a\ntadddeqrelu %h, %a, %b, 0.5, %d", []string{hazard.KindRAW, hazard.KindWAW}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := "    " + strings.ReplaceAll(tc.body, "\n", "\n    ")
			checkKinds(t, strings.Replace(vbarKernel, "BODY", body, 1), tc.want)
		})
	}
}
