package machine

import (
	"sync"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/memory"
)

// nzStrips reports, for a matmul's accumulator view c (already cut to the
// product's M×N), the distance in floats between its 16-column strips when
// the assembly kernel can sum it in place (gemmRowsNZ): an f32 NZ tile of
// 16×16 boxes, the product at its origin, M a multiple of 4 and N of 16.
// Otherwise 0: the matmul decodes c into scratch and stores it back.
func nzStrips(c *view) int {
	if !gemmInPlace || c.dt != asm.F32 || !c.fast || c.l.Kind != memory.NZ ||
		c.brs != 4 || c.bcs != 4 || c.r0 != 0 || c.c0 != 0 || c.rows%4 != 0 || c.cols%16 != 0 || c.base%4 != 0 {
		return 0
	}
	return int(c.nbr * c.boxB / 4)
}

// gemmNZ is gemmF32 on an accumulator summed in place (see nzStrips),
// cleared first when the matmul starts it from zero.
func gemmNZ(a, b []float32, c *view, M, K, N, cs int, init bool, wg *sync.WaitGroup) {
	tile := f32s(c.data[c.base : c.base+c.l.Footprint()])
	if init {
		for j := 0; j < N; j += 16 {
			clear(tile[j/16*cs : j/16*cs+M*16])
		}
	}
	gemmBands(a, b, tile, M, K, N, cs, wg)
}

// gemmInPlace says gemmRowsNZ has a kernel on this CPU.
var gemmInPlace bool

// decodeZNBoxes is decodeF32s for the cube's usual B operand: f16 in ZN
// (16×16 boxes, each column-major) with the region on box boundaries. Each
// box is 512 contiguous bytes; it fills 16 rows of 16 floats of dst, one
// row at a time, so the writes stay in 16 cache lines instead of striding
// a whole column of dst per element. It reports false for other views.
func decodeZNBoxes(v *view, dst []float32, lut *[1 << 16]float32) bool {
	if v.dt != asm.F16 || !v.fast || v.l.Kind != memory.ZN || v.brs != 4 || v.bcs != 4 || (v.r0|v.c0|v.rows|v.cols)&15 != 0 {
		return false
	}
	n := v.cols
	for i := 0; i < v.rows; i += 16 {
		for j := 0; j < n; j += 16 {
			a := v.addr(i, j)
			box := u16s(v.data[a : a+512])
			for ir := range 16 {
				out := dst[(i+ir)*n+j : (i+ir)*n+j+16]
				col := box[ir:]
				for ic := range out {
					out[ic] = lut[col[ic*16]]
				}
			}
		}
	}
	return true
}
