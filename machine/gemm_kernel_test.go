package machine

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/memory"
)

// gemmNaive is the cube's float semantics as the plain triple loop: every
// c element starts from its old value and adds fp32(a·b) in K order.
func gemmNaive(a, b, c []float32, M, K, N int) {
	for i := range M {
		for j := range N {
			acc := c[i*N+j]
			for k := range K {
				acc += float32(a[i*K+k] * b[k*N+j])
			}
			c[i*N+j] = acc
		}
	}
}

// randF32s draws n values exactly representable in dt (the decoded inputs
// the cube sees), with varied exponents so that the additions round.
func randF32s(g *lcg, dt asm.DType, n int) []float32 {
	out := make([]float32, n)
	for i := range out {
		x := (g.next()*4 - 2) * math.Exp2(math.Floor(g.next()*16)-8)
		switch dt {
		case asm.F16:
			x = f16(x)
		case asm.BF16:
			x = bf16(x)
		}
		out[i] = float32(x)
	}
	return out
}

// TestGemmF32BitIdentical holds the functional matmul kernel (whichever
// gemmF32 uses: the portable one, or the AVX2 assembly one, gemm_amd64.s,
// where the CPU has it) to the naive K-order sums bit for bit, for every float input
// dtype, on shapes that cover the register tiles' edges and the parallel
// path, at several GOMAXPROCS.
func TestGemmF32BitIdentical(t *testing.T) {
	g := lcg(11)
	shapes := []struct{ M, K, N int }{
		{1, 1, 1}, {1, 64, 32}, {3, 7, 5}, {4, 16, 8}, {5, 33, 17}, {16, 16, 16},
		{20, 48, 24}, {7, 33, 9}, {64, 64, 256}, {128, 64, 256}, {66, 130, 250},
	}
	for _, dt := range []asm.DType{asm.F16, asm.BF16, asm.F32} {
		for _, s := range shapes {
			t.Run(fmt.Sprintf("%v/%dx%dx%d", dt, s.M, s.K, s.N), func(t *testing.T) {
				a, b := randF32s(&g, dt, s.M*s.K), randF32s(&g, dt, s.K*s.N)
				c0 := randF32s(&g, asm.F32, s.M*s.N)
				want := slices.Clone(c0)
				gemmNaive(a, b, want, s.M, s.K, s.N)
				for _, procs := range []int{1, 2, 5} {
					prev := runtime.GOMAXPROCS(procs)
					got := slices.Clone(c0)
					var wg sync.WaitGroup
					gemmF32(a, b, got, s.M, s.K, s.N, &wg)
					runtime.GOMAXPROCS(prev)
					for i := range want {
						if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
							t.Fatalf("GOMAXPROCS=%d: element %d = %v, want %v", procs, i, got[i], want[i])
						}
					}
				}
			})
		}
	}
}

// TestGemmF32Portable holds the portable kernel itself to the naive sums
// when the assembly kernel is what gemmF32 uses.
func TestGemmF32Portable(t *testing.T) {
	g := lcg(5)
	for _, s := range []struct{ M, K, N int }{{5, 33, 17}, {64, 64, 256}, {9, 3, 30}} {
		a, b := randF32s(&g, asm.F16, s.M*s.K), randF32s(&g, asm.F16, s.K*s.N)
		c0 := randF32s(&g, asm.F32, s.M*s.N)
		want, got := slices.Clone(c0), slices.Clone(c0)
		gemmNaive(a, b, want, s.M, s.K, s.N)
		gemmRowsPortable(a, b, got, 0, s.M, s.K, s.N)
		if !slices.Equal(f32bits(got), f32bits(want)) {
			t.Errorf("%d×%d×%d: the portable kernel differs from the naive sums", s.M, s.K, s.N)
		}
	}
}

func f32bits(x []float32) []uint32 {
	out := make([]uint32, len(x))
	for i, v := range x {
		out[i] = math.Float32bits(v)
	}
	return out
}

// TestGoldenMatmulGOMAXPROCS: the golden evaluator's matmul gives the same
// bytes whatever GOMAXPROCS is.
func TestGoldenMatmulGOMAXPROCS(t *testing.T) {
	g := lcg(3)
	a, b := memory.NewArray(130, 300), memory.NewArray(300, 70)
	for i := range a.Data {
		a.Data[i] = g.next()*2 - 1
	}
	for i := range b.Data {
		b.Data[i] = g.next()*2 - 1
	}
	var first []float64
	for _, procs := range []int{1, 2, 3, 8} {
		prev := runtime.GOMAXPROCS(procs)
		c, err := memory.Matmul(a, b)
		runtime.GOMAXPROCS(prev)
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = c.Data
			continue
		}
		for i := range first {
			if math.Float64bits(c.Data[i]) != math.Float64bits(first[i]) {
				t.Fatalf("GOMAXPROCS=%d: element %d = %v, at 1 it is %v", procs, i, c.Data[i], first[i])
			}
		}
	}
}

// BenchmarkGemmF32 is one tmatmul of allgather_gemm (64×64×256) and of
// gemm_db (128×64×256), the functional kernel alone.
func BenchmarkGemmF32(b *testing.B) {
	for _, s := range []struct{ M, K, N int }{{64, 64, 256}, {128, 64, 256}} {
		b.Run(fmt.Sprintf("%dx%dx%d", s.M, s.K, s.N), func(b *testing.B) {
			g := lcg(1)
			x, y := randF32s(&g, asm.F16, s.M*s.K), randF32s(&g, asm.F16, s.K*s.N)
			c := make([]float32, s.M*s.N)
			var wg sync.WaitGroup
			for b.Loop() {
				gemmF32(x, y, c, s.M, s.K, s.N, &wg)
			}
			b.ReportMetric(float64(s.M*s.K*s.N)*float64(b.N)/b.Elapsed().Seconds(), "madd/s")
		})
	}
}

// TestDecodeF32s: the bulk decoder (by row runs, or by column runs for the
// column-major layouts) reads every layout and float dtype exactly as
// element-by-element decoding does, also for a region that starts inside a
// fractal box.
func TestDecodeF32s(t *testing.T) {
	g := lcg(9)
	for _, l := range []layout{lND, lDN, lNZ, lZZ, lZN, lAcc} {
		for _, dt := range []asm.DType{asm.F16, asm.BF16, asm.F32} {
			t.Run(fmt.Sprintf("%v/%v", l, dt), func(t *testing.T) {
				o := newTileOp(mkTile(asm.LocMat, dt, 48, 64, 48, 64, l), 0)
				setTile(t, o, randGrid(&g, dt, 48, 64))
				full := viewOf(t, o)
				for _, r := range [][4]int{{0, 0, 48, 64}, {3, 5, 37, 41}, {17, 1, 1, 60}, {0, 9, 48, 1}} {
					v, err := full.sub(r[0], r[1], r[2], r[3])
					if err != nil {
						t.Fatal(err)
					}
					got := make([]float32, v.rows*v.cols)
					decodeF32s(&v, got)
					for i := range v.rows {
						for j := range v.cols {
							if want := float32(v.f(i, j)); math.Float32bits(got[i*v.cols+j]) != math.Float32bits(want) {
								t.Fatalf("region %v: (%d, %d) = %v, want %v", r, i, j, got[i*v.cols+j], want)
							}
						}
					}
				}
			})
		}
	}
}

// TestGoldenMemo: a golden is reused for another rank only when every tensor
// it read holds the same bits there.
func TestGoldenMemo(t *testing.T) {
	arr := func(v ...float64) *memory.Array { return &memory.Array{Shape: []int{len(v)}, Data: v} }
	// Rank r's @X; @W is the same on every rank.
	xs := map[int]*memory.Array{0: arr(1, 2), 1: arr(1, 2), 2: arr(1, 3), 3: arr(1, 2, 0)}
	w := arr(5)
	load := func(n string, r int) (memory.Tensor, error) {
		if n == "W" {
			return memory.ArrayTensor{A: w}, nil
		}
		return memory.ArrayTensor{A: xs[r]}, nil
	}
	for _, tc := range []struct {
		name string
		own  bool // @X without a rank
		rank int  // the rank checked after rank 0
		want bool
	}{
		{"same own input", true, 1, true},
		{"different own input", true, 2, false},
		{"different shape", true, 3, false},
		{"named rank, same tensor", false, 2, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var g goldenMemo
			g.start(0)
			g.read("X", 0, !tc.own, nil)
			g.read("W", 0, true, nil)
			if got := g.same(load, tc.rank); got != tc.want {
				t.Errorf("reused = %v, want %v", got, tc.want)
			}
		})
	}
	var g goldenMemo
	g.start(0)
	g.read("X", 0, false, fmt.Errorf("no such tensor"))
	if g.same(load, 1) {
		t.Error("a golden whose read failed was reused")
	}
}

// TestExprInitPerRank: an expr init that uses rank gets each rank's values;
// one that does not is the same on every rank (and, from the second rank
// on, copied from the first rank's evaluation).
func TestExprInitPerRank(t *testing.T) {
	src := `
gm A : f32 [4, 8] = expr(i * 8 + j + 100 * rank)
gm B : f16 [4, 8] nz = expr(i * 8 + j)
gm C : f32 [4, 8] dn = expr(j + i * rank)
kernel k : aiv {
    tile %x : vec f32 [4, 8]
    tload %x, @A[0, 0]
}
launch ranks=3 { run k blocks=1 }
`
	m, err := New(assemble(t, src), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for r := range 3 {
		for _, tc := range []struct {
			name string
			want func(i, j int) float64
		}{
			{"A", func(i, j int) float64 { return float64(i*8 + j + 100*r) }},
			{"B", func(i, j int) float64 { return float64(i*8 + j) }},
			{"C", func(i, j int) float64 { return float64(j + i*r) }},
		} {
			a, err := m.loadArray(tc.name, r)
			if err != nil {
				t.Fatal(err)
			}
			for i := range 4 {
				for j := range 8 {
					if got := a.Data[i*8+j]; got != tc.want(i, j) {
						t.Fatalf("@%s[rank=%d][%d, %d] = %v, want %v", tc.name, r, i, j, got, tc.want(i, j))
					}
				}
			}
		}
	}
}
