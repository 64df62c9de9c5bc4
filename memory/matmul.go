package memory

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
)

// Matmul is the float64 product of a [M, K] and b [K, N].
//
// Summation order (the result depends on it, so it is fixed): every output
// element starts from +0 and adds its K products a[i,p]·b[p,j] in increasing
// p, each product rounded to float64 before the add (never fused into an
// FMA). Zero elements of a are not skipped, so 0·Inf gives NaN as in numpy.
// The work is cut into bands of matmulBand output rows, each band computed
// by one goroutine, and within a band into K and N blocks visited in
// increasing order; none of this changes any element's order, so the bytes
// are the same whatever GOMAXPROCS is.
func Matmul(a, b *Array) (*Array, error) {
	if a.rank() != 2 || b.rank() != 2 {
		return nil, fmt.Errorf("matmul needs two matrices, got shapes %v and %v", a.Shape, b.Shape)
	}
	m, k, n := a.Shape[0], a.Shape[1], b.Shape[1]
	if b.Shape[0] != k {
		return nil, fmt.Errorf("matmul: inner dimensions differ: %v × %v", a.Shape, b.Shape)
	}
	out := NewArray(m, n)
	matmul64(a.Data, b.Data, out.Data, m, k, n, runtime.GOMAXPROCS(0))
	return out, nil
}

const (
	// matmulBand rows of the output are one unit of parallel work.
	matmulBand = 32
	// matmulKB × matmulNB float64s of b (256 KiB) are one cache block:
	// a band streams its rows of a against a block that stays in L2.
	matmulKB = 256
	matmulNB = 128
	// matmulSerial is the product size (m·k·n) below which one goroutine
	// does the whole product: starting the others costs more.
	matmulSerial = 1 << 18
)

// matmul64 is c[m×n] += a[m×k]·b[k×n] (row-major) on up to workers
// goroutines, each taking the next band of rows until none is left.
func matmul64(a, b, c []float64, m, k, n, workers int) {
	if m*k*n < matmulSerial {
		workers = 1
	}
	matmul64Work(a, b, c, m, k, n, workers)
}

func matmul64Work(a, b, c []float64, m, k, n, workers int) {
	bands := (m + matmulBand - 1) / matmulBand
	workers = min(workers, bands)
	if workers < 2 {
		matmulRows(a, b, c, 0, m, k, n, newMatmulPack())
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			pack := newMatmulPack()
			for {
				i := int(next.Add(1) - 1)
				if i >= bands {
					return
				}
				i0 := i * matmulBand
				matmulRows(a, b, c, i0, min(i0+matmulBand, m), k, n, pack)
			}
		})
	}
	wg.Wait()
}

// newMatmulPack is one worker's buffer for a packed block of b.
func newMatmulPack() []float64 { return make([]float64, matmulKB*matmulNB) }

// matmulRows computes rows [i0, i1) of c, block by block: for each K block
// (in increasing order) and each N block, the block of b is packed into
// column pairs (p-major within a pair, so the inner loop reads it
// sequentially), and 4×2 tiles of c stay in registers while p runs through
// the block: four values of a and two of b per step for eight multiply-adds
// (4×4 does not fit amd64's float registers and spills).
func matmulRows(a, b, c []float64, i0, i1, k, n int, pack []float64) {
	for p0 := 0; p0 < k; p0 += matmulKB {
		p1 := min(p0+matmulKB, k)
		kb := p1 - p0
		for j0 := 0; j0 < n; j0 += matmulNB {
			j1 := min(j0+matmulNB, n)
			if matmulAsm && j1-j0 >= 8 && kb > 0 {
				// AVX2: 4×8 tiles read b's rows in place (8 doubles of a
				// row are one cache line), no packing.
				j8 := j0 + (j1-j0)&^7
				i := i0
				for ; i+4 <= i1; i += 4 {
					ab := a[i*k : (i+3)*k+p1]
					cb := c[i*n : (i+3)*n+j1]
					bb := b[p0*n : (p1-1)*n+j1]
					for j := j0; j < j8; j += 8 {
						matmul4x8AVX2(&ab[p0], k, &bb[j], n, &cb[j], n, kb)
					}
					matmulRect(a, b, c, i, i+4, j8, j1, p0, p1, k, n)
				}
				matmulRect(a, b, c, i, i1, j0, j1, p0, p1, k, n)
				continue
			}
			pairs := (j1 - j0) / 2
			for t := range pairs {
				dst := pack[t*2*kb : (t+1)*2*kb]
				q := p0*n + j0 + 2*t
				for x := 0; x < len(dst); x += 2 {
					bp := b[q : q+2 : q+2]
					dst[x], dst[x+1] = bp[0], bp[1]
					q += n
				}
			}
			i := i0
			for ; i+4 <= i1; i += 4 {
				a0 := a[i*k+p0 : i*k+p1]
				a1 := a[(i+1)*k+p0 : (i+1)*k+p1]
				a2 := a[(i+2)*k+p0 : (i+2)*k+p1]
				a3 := a[(i+3)*k+p0 : (i+3)*k+p1]
				for t := range pairs {
					j := j0 + 2*t
					var tile [8]float64
					tile[0], tile[1] = c[i*n+j], c[i*n+j+1]
					tile[2], tile[3] = c[(i+1)*n+j], c[(i+1)*n+j+1]
					tile[4], tile[5] = c[(i+2)*n+j], c[(i+2)*n+j+1]
					tile[6], tile[7] = c[(i+3)*n+j], c[(i+3)*n+j+1]
					kernel4x2(a0, a1, a2, a3, pack[t*2*kb:(t+1)*2*kb], &tile)
					c[i*n+j], c[i*n+j+1] = tile[0], tile[1]
					c[(i+1)*n+j], c[(i+1)*n+j+1] = tile[2], tile[3]
					c[(i+2)*n+j], c[(i+2)*n+j+1] = tile[4], tile[5]
					c[(i+3)*n+j], c[(i+3)*n+j+1] = tile[6], tile[7]
				}
				for j := j0 + 2*pairs; j < j1; j++ {
					for r, ar := range [4][]float64{a0, a1, a2, a3} {
						acc := c[(i+r)*n+j]
						q := p0*n + j
						for _, v := range ar {
							acc += float64(v * b[q])
							q += n
						}
						c[(i+r)*n+j] = acc
					}
				}
			}
			matmulRect(a, b, c, i, i1, j0, j1, p0, p1, k, n)
		}
	}
}

// matmulRect adds to c's rows [i0, i1) × columns [j0, j1) the products for
// p in [p0, p1), element by element in increasing p: the edges the
// register tiles leave.
func matmulRect(a, b, c []float64, i0, i1, j0, j1, p0, p1, k, n int) {
	for i := i0; i < i1; i++ {
		crow := c[i*n+j0 : i*n+j1]
		for p := p0; p < p1; p++ {
			v := a[i*k+p]
			brow := b[p*n+j0 : p*n+j1]
			brow = brow[:len(crow)]
			for j, bv := range brow {
				crow[j] += float64(v * bv)
			}
		}
	}
}

// kernel4x2 adds to the 4×2 tile t (row-major) the products of four rows
// of a with a packed column pair bp (b[p,0], b[p,1], b[p+1,0], ...), in
// increasing p.
func kernel4x2(a0, a1, a2, a3, bp []float64, t *[8]float64) {
	c00, c01, c10, c11, c20, c21, c30, c31 := t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7]
	a1, a2, a3 = a1[:len(a0)], a2[:len(a0)], a3[:len(a0)]
	bp = bp[:2*len(a0)]
	for x, v := range a0 {
		b0, b1 := bp[2*x], bp[2*x+1]
		// The conversions forbid fusing into an FMA.
		c00 += float64(v * b0)
		c01 += float64(v * b1)
		v = a1[x]
		c10 += float64(v * b0)
		c11 += float64(v * b1)
		v = a2[x]
		c20 += float64(v * b0)
		c21 += float64(v * b1)
		v = a3[x]
		c30 += float64(v * b0)
		c31 += float64(v * b1)
	}
	t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7] = c00, c01, c10, c11, c20, c21, c30, c31
}
