//go:build !amd64

package memory

func transpose8x8(d *uint16, ld int, s *uint16, ls int) { panic("no transpose8x8 kernel") }

// haveTranspose8x8: block16 uses its scalar loops.
var haveTranspose8x8 = false

func matmul4x8AVX2(a *float64, lda int, b *float64, ldb int, c *float64, ldc int, k int) {
	panic("no matmul4x8AVX2 kernel")
}

// matmulAsm: matmulRows uses its portable kernel.
var matmulAsm = false
