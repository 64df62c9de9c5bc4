package memory

import (
	"testing"

	"github.com/ptoasm/ptoasm/asm"
)

// BenchmarkCopy2DTranspose: the B operand's copies in a GEMM, a [256, 256]
// f16 tile loaded from a DN tensor into NZ L1, and [64, 256] extracted from
// NZ into ZN L0B.
func BenchmarkCopy2DTranspose(b *testing.B) {
	for _, tc := range []struct {
		name       string
		from, to   LayoutKind
		rows, cols int
		srcRows    int
	}{{"DN-NZ", DN, NZ, 256, 256, 2048}, {"NZ-ZN", NZ, ZN, 64, 256, 256}} {
		b.Run(tc.name, func(b *testing.B) {
			sl := Layout2D{Kind: tc.from, Rows: tc.srcRows, Cols: tc.cols, DType: asm.F16}
			dl := Layout2D{Kind: tc.to, Rows: tc.rows, Cols: tc.cols, DType: asm.F16}
			src := NewBuffer(asm.GM, "src", sl.Footprint(), 2, false)
			dst := NewBuffer(asm.L1, "dst", dl.Footprint(), 2, false)
			for b.Loop() {
				if err := Copy2D(dst, 0, dl, 0, 0, src, 0, sl, 64, 0, tc.rows, tc.cols, RoundRint); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(tc.rows*tc.cols)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Melem/s")
		})
	}
}
