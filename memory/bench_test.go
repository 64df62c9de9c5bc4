package memory

import (
	"testing"

	"github.com/ptoasm/ptoasm/asm"
)

func benchCopy(b *testing.B, sk, dk LayoutKind, sdt, ddt asm.DType, poisoned bool) {
	const rows, cols = 128, 256
	sl := Layout2D{Kind: sk, Rows: rows, Cols: cols, DType: sdt}
	dl := Layout2D{Kind: dk, Rows: rows, Cols: cols, DType: ddt}
	src := NewBuffer(asm.GM, "", sl.Footprint(), 0, false)
	dst := NewBuffer(asm.L1, "", dl.Footprint(), 0, poisoned)
	b.SetBytes(int64(rows * cols * sdt.Size()))
	b.ReportAllocs()
	for b.Loop() {
		if poisoned {
			dst.Poison(0, dst.Size())
		}
		if err := Copy2D(dst, 0, dl, 0, 0, src, 0, sl, 0, 0, rows, cols, RoundRint); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCopy2D_ND_ND_f16(b *testing.B)          { benchCopy(b, ND, ND, asm.F16, asm.F16, false) }
func BenchmarkCopy2D_ND_NZ_f16(b *testing.B)          { benchCopy(b, ND, NZ, asm.F16, asm.F16, false) }
func BenchmarkCopy2D_ND_NZ_f16_poisoned(b *testing.B) { benchCopy(b, ND, NZ, asm.F16, asm.F16, true) }
func BenchmarkCopy2D_ND_ZN_f16(b *testing.B)          { benchCopy(b, ND, ZN, asm.F16, asm.F16, false) }
func BenchmarkCopy2D_NZ_ND_f32_to_f16(b *testing.B)   { benchCopy(b, NZ, ND, asm.F32, asm.F16, false) }
func BenchmarkCopy2D_ND_ND_f32_to_i8(b *testing.B)    { benchCopy(b, ND, ND, asm.F32, asm.I8, false) }

// A 128×128 f32 matrix read through a typed view, as a cube or vector op would.
func BenchmarkLoadF32View(b *testing.B) {
	const n = 128 * 128
	buf := NewBuffer(asm.L0C, "", n*4, 0, false)
	b.SetBytes(n * 4)
	b.ReportAllocs()
	var sink float32
	for b.Loop() {
		v, err := buf.F32s(0, n)
		if err != nil {
			b.Fatal(err)
		}
		for _, x := range v {
			sink += x
		}
	}
	_ = sink
}

// The same matrix as f16 widened element by element.
func BenchmarkLoadF16View(b *testing.B) {
	const n = 128 * 128
	buf := NewBuffer(asm.L0A, "", n*2, 0, false)
	b.SetBytes(n * 2)
	b.ReportAllocs()
	var sink float32
	for b.Loop() {
		v, _ := buf.U16s(0, n)
		for _, x := range v {
			sink += DecodeF16(x)
		}
	}
	_ = sink
}

// Checked per-element access, for comparison with the views.
func BenchmarkLoadF(b *testing.B) {
	const n = 128 * 128
	buf := NewBuffer(asm.L0C, "", n*4, 0, false)
	b.SetBytes(n * 4)
	b.ReportAllocs()
	var sink float64
	for b.Loop() {
		for i := int64(0); i < n; i++ {
			v, _ := buf.LoadF(asm.F32, 4*i)
			sink += v
		}
	}
	_ = sink
}

func BenchmarkMatmulGolden(b *testing.B) {
	x, y := NewArray(128, 256), NewArray(256, 128)
	for i := range x.Data {
		x.Data[i] = float64(i % 7)
		y.Data[i] = float64(i % 5)
	}
	b.ReportAllocs()
	for b.Loop() {
		Matmul(x, y)
	}
}

// BenchmarkMatmulGoldenLarge is one rank's golden of the 8-rank
// allgather_gemm data run (2048×2048×1024) cut to a quarter of M.
func BenchmarkMatmulGoldenLarge(b *testing.B) {
	x, y := NewArray(512, 2048), NewArray(2048, 1024)
	for i := range x.Data {
		x.Data[i] = float64(i%7 - 3)
	}
	for i := range y.Data {
		y.Data[i] = float64(i%5 - 2)
	}
	for b.Loop() {
		Matmul(x, y)
	}
	b.ReportMetric(float64(512*2048*1024)*float64(b.N)/b.Elapsed().Seconds(), "madd/s")
}
