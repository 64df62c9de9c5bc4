package memory

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// matmulRef is the plain triple loop in the documented order: each element
// from +0, products rounded to float64, added in increasing p.
func matmulRef(a, b []float64, m, k, n int) []float64 {
	c := make([]float64, m*n)
	for i := range m {
		for j := range n {
			var acc float64
			for p := range k {
				acc += float64(a[i*k+p] * b[p*n+j])
			}
			c[i*n+j] = acc
		}
	}
	return c
}

// TestMatmulOrder checks the blocked, banded matmul against the reference
// bit for bit, on shapes that exercise every edge (partial 4×2 tiles, K and
// N blocks, bands), and that the bytes do not depend on the worker count.
func TestMatmulOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, s := range []struct{ m, k, n int }{
		{1, 1, 1}, {3, 5, 7}, {4, 2, 2}, {5, 257, 3}, {37, 300, 131}, {70, 513, 260}, {129, 64, 129},
	} {
		a, b := make([]float64, s.m*s.k), make([]float64, s.k*s.n)
		for i := range a {
			a[i] = r.NormFloat64() * math.Exp2(float64(r.IntN(40)-20))
		}
		for i := range b {
			b[i] = r.NormFloat64()
		}
		want := matmulRef(a, b, s.m, s.k, s.n)
		// Both kernels: the AVX2 one where the CPU has it, the portable one.
		kernels := []bool{false}
		if matmulAsm {
			kernels = append(kernels, true)
		}
		for _, useAsm := range kernels {
			saved := matmulAsm
			matmulAsm = useAsm
			for _, w := range []int{1, 2, 3, 8} {
				got := make([]float64, s.m*s.n)
				// Below matmulSerial the product is serial whatever w is;
				// matmul64Work forces the banded path to be tested too.
				matmul64Work(a, b, got, s.m, s.k, s.n, w)
				if !slices.Equal(bits(got), bits(want)) {
					t.Errorf("%d×%d×%d on %d workers (AVX2 %v) differs from the reference", s.m, s.k, s.n, w, useAsm)
				}
			}
			matmulAsm = saved
		}
	}
}

func bits(x []float64) []uint64 {
	out := make([]uint64, len(x))
	for i, v := range x {
		out[i] = math.Float64bits(v)
	}
	return out
}

// TestMatmulNaN: a zero of a times an Inf of b is NaN, as in numpy.
func TestMatmulNaN(t *testing.T) {
	a := &Array{Shape: []int{1, 2}, Data: []float64{0, 1}}
	b := &Array{Shape: []int{2, 1}, Data: []float64{math.Inf(1), 2}}
	c, err := Matmul(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if !math.IsNaN(c.Data[0]) {
		t.Errorf("0·Inf + 1·2 = %v, want NaN", c.Data[0])
	}
}
