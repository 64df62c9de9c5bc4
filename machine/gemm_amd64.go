package machine

import "golang.org/x/sys/cpu"

// On amd64 CPUs with AVX2 the functional matmul's 4×16 blocks run in
// assembly (gemm_amd64.s), in every build: no GOEXPERIMENT needed. Each lane
// is one c element adding fp32(a·b) in K order, multiply then add, never
// fused, so the bits are those of the portable kernel
// (TestGemmF32BitIdentical runs whichever kernel is in use).
func init() {
	if cpu.X86.HasAVX2 {
		gemmRows = gemmRowsAsm
		gemmInPlace = true
	}
}

//go:noescape
func gemm4x16AVX2(a *float32, lda int, b *float32, ldb int, c *float32, ldc int, k int)

// gemmRowsAsm computes rows [i0, i1) of c: whole 4×16 blocks in assembly,
// the columns past the last multiple of 16 and the rows past the last
// multiple of 4 with the portable code.
func gemmRowsAsm(a, b, c []float32, i0, i1, K, N int) {
	n16 := N &^ 15
	i := i0
	if K > 0 && n16 > 0 {
		for ; i+4 <= i1; i += 4 {
			// The assembly reads a[i*K : (i+4)*K], b[: K*N] and c's four
			// rows; the slice expressions check those bounds once here.
			ab := a[i*K : (i+4)*K]
			cb := c[i*N : (i+4)*N]
			bb := b[:K*N]
			for j := 0; j < n16; j += 16 {
				gemm4x16AVX2(&ab[0], K, &bb[j], N, &cb[j], N, K)
			}
		}
		if n16 < N {
			gemmCols(a, b, c, i0, i, n16, K, N)
		}
	}
	gemmRowsPortable(a, b, c, i, i1, K, N)
}

// gemmCols computes columns [j0, N) of rows [i0, i1) element by element, in
// K order like every kernel.
func gemmCols(a, b, c []float32, i0, i1, j0, K, N int) {
	for i := i0; i < i1; i++ {
		ar := a[i*K : i*K+K]
		for j := j0; j < N; j++ {
			acc := c[i*N+j]
			q := j
			for _, x := range ar {
				acc += float32(x * b[q])
				q += N
			}
			c[i*N+j] = acc
		}
	}
}

// gemmRowsNZ computes rows [i0, i1) (multiples of 4) of an NZ accumulator c
// in place: in NZ an f32 accumulator's 16-column strip is a row-major
// [rows, 16] matrix (its boxes are 16×16 and stacked down the strip), so
// the 4×16 kernel runs on it with a row stride of 16, and strips lie cs
// floats apart. It spares the matmul decoding c into scratch and storing it
// back.
func gemmRowsNZ(a, b, c []float32, i0, i1, K, N, cs int) {
	bb := b[:K*N]
	for i := i0; i < i1; i += 4 {
		ab := a[i*K : (i+4)*K]
		for j := 0; j < N; j += 16 {
			cb := c[j/16*cs+i*16 : j/16*cs+(i+4)*16]
			gemm4x16AVX2(&ab[0], K, &bb[j], N, &cb[0], 16, K)
		}
	}
}
