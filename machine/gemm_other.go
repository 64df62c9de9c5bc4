//go:build !amd64

package machine

// gemmRowsNZ has no kernel here: gemmInPlace stays false, so nzStrips
// sends every matmul through the decode-and-store path.
func gemmRowsNZ(a, b, c []float32, i0, i1, K, N, cs int) {
	panic("gemmRowsNZ without an in-place kernel")
}
