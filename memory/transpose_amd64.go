package memory

import "golang.org/x/sys/cpu"

// transpose8x8 (transpose_amd64.s): d[c*ld + r] = s[r*ls + c] for r, c in
// 0..8, strides in elements.
//
//go:noescape
func transpose8x8(d *uint16, ld int, s *uint16, ls int)

var haveTranspose8x8 = true

// matmul4x8AVX2 (matmul_amd64.s): c[0:4][0:8] += a[0:4][0:k]·b[0:k][0:8] in
// float64, strides in elements, products then sums, increasing k.
//
//go:noescape
func matmul4x8AVX2(a *float64, lda int, b *float64, ldb int, c *float64, ldc int, k int)

// matmulAsm says the CPU has AVX2 for matmul4x8AVX2.
var matmulAsm = cpu.X86.HasAVX2
