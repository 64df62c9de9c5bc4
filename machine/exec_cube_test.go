package machine

import (
	"math"
	"strings"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
)

// lcg is a tiny deterministic generator for test data.
type lcg uint64

func (g *lcg) next() float64 {
	*g = *g*6364136223846793005 + 1442695040888963407
	return float64(*g>>11) / (1 << 53)
}

func randGrid(g *lcg, dt asm.DType, rows, cols int) [][]float64 {
	out := make([][]float64, rows)
	for r := range out {
		out[r] = make([]float64, cols)
		for c := range out[r] {
			x := g.next()*4 - 2
			switch dt {
			case asm.I8:
				x = math.Floor(g.next()*256) - 128
			case asm.F16:
				x = f16(x)
			case asm.BF16:
				x = bf16(x)
			default:
				x = f32(x)
			}
			out[r][c] = x
		}
	}
	return out
}

// refMatmul is the specification written the obvious way: every c[i][j] is an
// fp32 accumulator starting at init[i][j] that adds fp32(a·b) in K order.
func refMatmul(a, b, init [][]float64, intMode bool) [][]float64 {
	M, K, N := len(a), len(b), len(b[0])
	out := make([][]float64, M)
	for i := range out {
		out[i] = make([]float64, N)
		for j := range out[i] {
			if intMode {
				acc := int32(init[i][j])
				for k := 0; k < K; k++ {
					acc += int32(a[i][k]) * int32(b[k][j])
				}
				out[i][j] = float64(acc)
				continue
			}
			acc := float32(init[i][j])
			for k := 0; k < K; k++ {
				acc += float32(float32(a[i][k]) * float32(b[k][j]))
			}
			out[i][j] = float64(acc)
		}
	}
	return out
}

func zeros(r, c int) [][]float64 {
	out := make([][]float64, r)
	for i := range out {
		out[i] = make([]float64, c)
	}
	return out
}

type mmSetup struct {
	a, b, c    Operand
	av, bv, cv [][]float64
}

func newMM(t testing.TB, g *lcg, in, out asm.DType, M, K, N int, fractal bool) mmSetup {
	la, lb, lc := lND, lND, lND
	if fractal {
		la, lb, lc = lZZ, lZN, lAcc
	}
	// Capacities are rounded up to whole fractal boxes and larger than the valid region.
	up := func(x, m int) int { return (x + m - 1) / m * m }
	a := newTileOp(mkTile(asm.LocLeft, in, up(M+1, 16), up(K+1, 32), M, K, la), 0)
	b := newTileOp(mkTile(asm.LocRight, in, up(K+1, 32), up(N+1, 16), K, N, lb), 0)
	c := newTileOp(mkTile(asm.LocAcc, out, up(M+1, 16), up(N+1, 16), M, N, lc), 0)
	s := mmSetup{a: a, b: b, c: c, av: randGrid(g, in, M, K), bv: randGrid(g, in, K, N), cv: randGrid(g, out, M, N)}
	setTile(t, a, s.av)
	setTile(t, b, s.bv)
	setTile(t, c, s.cv)
	return s
}

func TestMatmulAgainstReference(t *testing.T) {
	g := lcg(7)
	env := &asm.Env{Regs: []int64{0}}
	initK := asm.CAttr{Key: "init", Val: asm.CExpr{Fn: func(e *asm.Env) int64 { return boolInt(e.Regs[0] == 0) }}}
	for _, tc := range []struct {
		name    string
		op      string
		attrs   []asm.CAttr
		reg     int64
		in, out asm.DType
		M, K, N int
		fractal bool
		accum   bool // starts from the old C
		bias    bool
	}{
		{name: "f16", op: "tmatmul", in: asm.F16, out: asm.F32, M: 20, K: 48, N: 24, fractal: true},
		{name: "f16 nd", op: "tmatmul", in: asm.F16, out: asm.F32, M: 20, K: 48, N: 24},
		{name: "bf16", op: "tmatmul", in: asm.BF16, out: asm.F32, M: 16, K: 64, N: 16, fractal: true},
		{name: "f32", op: "tmatmul", in: asm.F32, out: asm.F32, M: 7, K: 33, N: 9, fractal: true},
		{name: "i8", op: "tmatmul", in: asm.I8, out: asm.I32, M: 16, K: 64, N: 32, fractal: true},
		{name: "acc no init", op: "tmatmul.acc", in: asm.F16, out: asm.F32, M: 16, K: 32, N: 16, fractal: true, accum: true},
		{name: "acc init true", op: "tmatmul.acc", attrs: []asm.CAttr{initK}, reg: 0, in: asm.F16, out: asm.F32, M: 16, K: 32, N: 16, fractal: true},
		{name: "acc init false", op: "tmatmul.acc", attrs: []asm.CAttr{initK}, reg: 3, in: asm.F16, out: asm.F32, M: 16, K: 32, N: 16, fractal: true, accum: true},
		{name: "acc const init", op: "tmatmul.acc", attrs: []asm.CAttr{{Key: "init", Val: asm.CExpr{Const: true, Val: 1}}}, in: asm.BF16, out: asm.F32, M: 16, K: 16, N: 16},
		// Several 16-column strips and bands (the parallel path) of an NZ
		// accumulator summed in place (gemmRowsNZ, on AVX2 CPUs).
		{name: "acc nz in place", op: "tmatmul.acc", in: asm.F16, out: asm.F32, M: 68, K: 96, N: 80, fractal: true, accum: true},
		{name: "acc nz in place init", op: "tmatmul.acc", attrs: []asm.CAttr{initK}, reg: 0, in: asm.F16, out: asm.F32, M: 64, K: 128, N: 96, fractal: true},
		{name: "acc i8", op: "tmatmul.acc", in: asm.I8, out: asm.I32, M: 4, K: 32, N: 8, accum: true},
		{name: "bias", op: "tmatmul.bias", in: asm.F16, out: asm.F32, M: 16, K: 32, N: 24, fractal: true, bias: true},
		{name: "gemv", op: "tgemv", in: asm.F16, out: asm.F32, M: 1, K: 64, N: 32, fractal: true},
		{name: "gemv bias", op: "tgemv.bias", in: asm.F16, out: asm.F32, M: 1, K: 32, N: 16, bias: true},
		{name: "gemv acc", op: "tgemv.acc", in: asm.F16, out: asm.F32, M: 1, K: 64, N: 32, accum: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newMM(t, &g, tc.in, tc.out, tc.M, tc.K, tc.N, tc.fractal)
			args := []Operand{s.c, s.a, s.b}
			init := zeros(tc.M, tc.N)
			if tc.accum {
				init = s.cv
			}
			if tc.bias {
				bt := newTileOp(mkTile(asm.LocBias, asm.F32, 1, 32, 1, tc.N, lND), 0)
				bv := randGrid(&g, asm.F32, 1, tc.N)
				setTile(t, bt, bv)
				args = append(args, bt)
				for i := range init {
					copy(init[i], bv[0])
				}
			}
			env.Regs[0] = tc.reg
			sc := NewExecScratch()
			sc.Env = env
			if err := Execute(mkOp(t, tc.op, tc.attrs...), args, sc); err != nil {
				t.Fatal(err)
			}
			intMode := tc.in == asm.I8
			want := refMatmul(s.av, s.bv, init, intMode)
			checkGrid(t, tc.op, getTile(t, s.c, tc.M, tc.N), want)
			// Outside the product nothing moved.
			v := viewOf(t, s.c)
			if !s.c.Buf.IsPoisoned(v.addr(tc.M, 0), v.es) || !s.c.Buf.IsPoisoned(v.addr(0, tc.N), v.es) {
				t.Error("matmul wrote outside the product")
			}
			// And the reference itself is close to exact arithmetic.
			if !intMode {
				for i := range want {
					for j := range want[i] {
						exact := init[i][j]
						mag := math.Abs(init[i][j])
						for k := range s.bv {
							exact += s.av[i][k] * s.bv[k][j]
							mag += math.Abs(s.av[i][k] * s.bv[k][j])
						}
						if d := math.Abs(want[i][j] - exact); d > mag*float64(tc.K+1)*pow2(-23) {
							t.Fatalf("(%d, %d): fp32 %v vs exact %v", i, j, want[i][j], exact)
						}
					}
				}
			}
		})
	}
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func TestMatmulIntWraps(t *testing.T) {
	a := newTileOp(mkTile(asm.LocLeft, asm.I8, 16, 32, 1, 2, lZZ), 0)
	b := newTileOp(mkTile(asm.LocRight, asm.I8, 32, 16, 2, 1, lZN), 0)
	c := newTileOp(mkTile(asm.LocAcc, asm.I32, 16, 16, 1, 1, lAcc), 0)
	setTile(t, a, [][]float64{{-128, 127}})
	setTile(t, b, [][]float64{{-128}, {127}})
	setTile(t, c, [][]float64{{math.MaxInt32}})
	if err := Execute(mkOp(t, "tmatmul.acc"), []Operand{c, a, b}, nil); err != nil {
		t.Fatal(err)
	}
	want := float64(int32(math.MaxInt32 + 16384 + 16129 - (1 << 32)))
	if got := getTile(t, c, 1, 1)[0][0]; got != want {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestMatmulFaults(t *testing.T) {
	g := lcg(1)
	s := newMM(t, &g, asm.F16, asm.F32, 16, 32, 16, true)
	b2 := newTileOp(mkTile(asm.LocRight, asm.F16, 32, 16, 16, 16, lZN), 0)
	bbf := newTileOp(mkTile(asm.LocRight, asm.BF16, 32, 16, 32, 16, lZN), 0)
	c16 := newTileOp(mkTile(asm.LocAcc, asm.F16, 16, 16, 16, 16, lAcc), 0)
	cSmall := newTileOp(mkTile(asm.LocAcc, asm.F32, 16, 16, 8, 16, lAcc), 0)
	dyn := asm.CAttr{Key: "init", Val: asm.CExpr{Fn: func(e *asm.Env) int64 { return e.Regs[0] }}}
	for _, tc := range []struct {
		name string
		op   *asm.COp
		args []Operand
		err  string
	}{
		{"k mismatch", mkOp(t, "tmatmul"), []Operand{s.c, s.a, b2}, "but b is"},
		{"mixed inputs", mkOp(t, "tmatmul"), []Operand{s.c, s.a, bbf}, "unsupported dtypes"},
		{"f16 accumulator", mkOp(t, "tmatmul"), []Operand{c16, s.a, s.b}, "unsupported dtypes"},
		{"small c", mkOp(t, "tmatmul"), []Operand{cSmall, s.a, s.b}, "smaller"},
		{"no env", mkOp(t, "tmatmul.acc", dyn), []Operand{s.c, s.a, s.b}, "environment"},
		{"no bias", mkOp(t, "tmatmul.bias"), []Operand{s.c, s.a, s.b}, "operands"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Execute(tc.op, tc.args, NewExecScratch())
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("error %v, want %q", err, tc.err)
			}
		})
	}
}

// The double-buffered GEMM of docs/language.md, functionally: GM → mat (NZ) →
// left/right → acc over K chunks with #init=(%k == 0), then acc → GM.
func TestGEMMPipelineFunctional(t *testing.T) {
	const M, K, N, BK = 32, 64, 16, 32
	g := lcg(3)
	A := mkTensor("A", asm.F16, asm.LayoutND, M, K)
	B := mkTensor("B", asm.F16, asm.LayoutND, K, N)
	C := mkTensor("C", asm.F32, asm.LayoutND, M, N)
	abuf, bbuf, cbuf := newGMBuf(A), newGMBuf(B), newGMBuf(C)
	av, bv := randGrid(&g, asm.F16, M, K), randGrid(&g, asm.F16, K, N)
	setGM(t, A, abuf, func(r, c int) float64 { return av[r][c] })
	setGM(t, B, bbuf, func(r, c int) float64 { return bv[r][c] })
	a1 := newTileOp(mkTile(asm.LocMat, asm.F16, M, BK, M, BK, lNZ), 0)
	b1 := newTileOp(mkTile(asm.LocMat, asm.F16, BK, N, BK, N, lNZ), 0)
	a0 := newTileOp(mkTile(asm.LocLeft, asm.F16, M, BK, M, BK, lZZ), 0)
	b0 := newTileOp(mkTile(asm.LocRight, asm.F16, BK, N, BK, N, lZN), 0)
	c := newTileOp(mkTile(asm.LocAcc, asm.F32, M, N, M, N, lAcc), 0)
	s := NewExecScratch()
	s.Env = &asm.Env{Regs: []int64{0}}
	mm := mkOp(t, "tmatmul.acc", asm.CAttr{Key: "init", Val: asm.CExpr{Fn: func(e *asm.Env) int64 { return boolInt(e.Regs[0] == 0) }}})
	run := func(op string, args ...Operand) {
		t.Helper()
		o := mm
		if op != "mm" {
			o = mkOp(t, op)
		}
		if err := Execute(o, args, s); err != nil {
			t.Fatal(err)
		}
	}
	for k := 0; k < K/BK; k++ {
		s.Env.Regs[0] = int64(k)
		run("tload", a1, gmOp(t, A, abuf, 0, int64(k*BK)))
		run("tload", b1, gmOp(t, B, bbuf, int64(k*BK), 0))
		run("tmov", a0, a1)
		run("tmov", b0, b1)
		run("mm", c, a0, b0)
	}
	run("tstore", gmOp(t, C, cbuf, 0, 0), c)
	want := refMatmul(av, bv, zeros(M, N), false)
	for i := 0; i < M; i++ {
		for j := 0; j < N; j++ {
			if got := getGM(t, C, cbuf, int64(i), int64(j)); got != want[i][j] {
				t.Fatalf("C[%d, %d] = %v, want %v", i, j, got, want[i][j])
			}
		}
	}
}

// BenchmarkMatmul128x256x64 is M=128, K=256, N=64 with f16 inputs in fractal
// tiles, the shape of one allgather_gemm step.
func BenchmarkMatmul128x256x64(b *testing.B) {
	const M, K, N = 128, 256, 64
	g := lcg(11)
	s := newMM(b, &g, asm.F16, asm.F32, M, K, N, true)
	op := mkOp(b, "tmatmul")
	args := []Operand{s.c, s.a, s.b}
	sc := NewExecScratch()
	if err := Execute(op, args, sc); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if err := Execute(op, args, sc); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(2*M*K*N)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

func BenchmarkTAddF16(b *testing.B) {
	d := newTileOp(mkTile(asm.LocVec, asm.F16, 64, 128, 64, 128, lND), 0)
	x := newTileOp(mkTile(asm.LocVec, asm.F16, 64, 128, 64, 128, lND), 0)
	g := lcg(5)
	setTile(b, x, randGrid(&g, asm.F16, 64, 128))
	op := mkOp(b, "tadd")
	args := []Operand{d, x, x}
	sc := NewExecScratch()
	b.ReportAllocs()
	for b.Loop() {
		if err := Execute(op, args, sc); err != nil {
			b.Fatal(err)
		}
	}
}
