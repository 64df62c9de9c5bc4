package machine

import (
	"fmt"
	"runtime"
	"sync"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/memory"
)

// The cube: C[M×N] (=|+=) A[M×K] · B[K×N], with M and K from A's valid region
// and N from B's. f16 and bf16 inputs accumulate in f32, f32 in f32, i8/u8 in
// i32 (wrapping).
//
// Float accumulation is in fp32, element by element in K order, starting from
// the initial value (0, the old C, or the bias): acc = fp32(acc + fp32(a·b)).
// That is what an fp32 accumulator does; the cube's internal summation tree
// within a K granule is not documented, so results can differ from the hardware
// in the last bits, never by more than fp32 reordering error. f16/bf16 products
// are exact in fp32, so for them only the additions round.

type mmKind uint8

const (
	mmPlain mmKind = iota
	mmAcc
	mmBias
)

func grow32f(s []float32, n int) []float32 {
	if cap(s) < n {
		return make([]float32, n)
	}
	return s[:n]
}

func grow32i(s []int32, n int) []int32 {
	if cap(s) < n {
		return make([]int32, n)
	}
	return s[:n]
}

func execMatmul(op *asm.COp, args []Operand, s *ExecScratch, kind mmKind) error {
	n := 3
	if kind == mmBias {
		n = 4
	}
	if err := need(args, n); err != nil {
		return err
	}
	vs, err := views(args, "c", "a", "b")
	if err != nil {
		return err
	}
	c, a, b := vs[0], vs[1], vs[2]
	M, K, N := a.rows, a.cols, b.cols
	if b.rows != K {
		return fmt.Errorf("a is [%d, %d] but b is [%d, %d]", M, K, b.rows, N)
	}
	if c.rows < M || c.cols < N {
		return fmt.Errorf("c's valid region [%d, %d] is smaller than the product [%d, %d]", c.rows, c.cols, M, N)
	}
	c.rows, c.cols = M, N

	intMode := false
	switch {
	case (a.dt == asm.F16 || a.dt == asm.BF16 || a.dt == asm.F32) && b.dt == a.dt && c.dt == asm.F32:
	case (a.dt == asm.I8 || a.dt == asm.U8) && (b.dt == asm.I8 || b.dt == asm.U8) && c.dt == asm.I32:
		intMode = true
	default:
		return fmt.Errorf("unsupported dtypes %v × %v → %v (want f16/bf16/f32 → f32 or i8 → i32)", a.dt, b.dt, c.dt)
	}

	// Where the accumulator starts.
	init := kind != mmAcc
	if kind == mmAcc {
		v, ok, err := attrInt(op, "init", s.Env)
		if err != nil {
			return err
		}
		init = ok && v != 0
	}
	var bias view
	if kind == mmBias {
		if bias, err = tileView(&args[3], "bias"); err != nil {
			return err
		}
		if bias.rows < 1 || bias.cols < N {
			return fmt.Errorf("bias %%%s's valid region [%d, %d] is not a row of %d", args[3].Tile.Name, bias.rows, bias.cols, N)
		}
		if intMode != !bias.dt.IsFloat() {
			return fmt.Errorf("bias dtype %v does not suit a %v accumulator", bias.dt, c.dt)
		}
	}

	if intMode {
		s.ia = grow32i(s.ia, M*K)
		s.ib = grow32i(s.ib, K*N)
		s.ic = grow32i(s.ic, M*N)
		fa, fb, fc := s.ia, s.ib, s.ic
		decodeI32(&a, fa)
		decodeI32(&b, fb)
		switch {
		case kind == mmBias:
			for i := 0; i < M; i++ {
				for j := 0; j < N; j++ {
					fc[i*N+j] = int32(bias.i(0, j))
				}
			}
		case init:
			clear(fc)
		default:
			decodeI32(&c, fc)
		}
		for i := 0; i < M; i++ {
			crow := fc[i*N : i*N+N]
			for k, av := range fa[i*K : i*K+K] {
				brow := fb[k*N : k*N+N]
				for j := range crow {
					crow[j] += av * brow[j]
				}
			}
		}
		for i := 0; i < M; i++ {
			for j := 0; j < N; j++ {
				c.setBits(i, j, uint64(uint32(fc[i*N+j])))
			}
		}
		c.written()
		return nil
	}

	s.fa = grow32f(s.fa, M*K)
	s.fb = grow32f(s.fb, K*N)
	s.fc = grow32f(s.fc, M*N)
	fa, fb, fc := s.fa, s.fb, s.fc
	decodeF32s(&a, fa)
	decodeF32s(&b, fb)
	if cs := nzStrips(&c); cs > 0 && kind != mmBias {
		// The accumulator is summed in place (gemm_amd64.go).
		gemmNZ(fa, fb, &c, M, K, N, cs, init, &s.wg)
		c.written()
		return nil
	}
	switch {
	case kind == mmBias:
		for i := 0; i < M; i++ {
			for j := 0; j < N; j++ {
				fc[i*N+j] = float32(bias.f(0, j))
			}
		}
	case init:
		clear(fc)
	default:
		decodeF32s(&c, fc)
	}
	gemmF32(fa, fb, fc, M, K, N, &s.wg)
	storeF32s(&c, fc)
	c.written()
	return nil
}

// gemmF32 is c[M×N] += a[M×K]·b[K×N], row-major. Every c element starts
// from its old value and adds its products in K order, rounding the product
// and the sum to fp32 each time, however the work is split: the result is
// bit-identical to the plain triple loop. Large products are split by bands
// of rows of c (each band is written by one goroutine): the caller computes
// the first band and the gemm pool the others, waiting on wg.
func gemmF32(a, b, c []float32, M, K, N int, wg *sync.WaitGroup) {
	gemmBands(a, b, c, M, K, N, 0, wg)
}

// gemmBands runs gemmF32's bands; cs > 0 says c is an NZ accumulator of
// 16-column strips cs floats apart, summed in place by gemmRowsNZ.
func gemmBands(a, b, c []float32, M, K, N, cs int, wg *sync.WaitGroup) {
	workers := runtime.GOMAXPROCS(0)
	if M*K*N < gemmParallelWork || workers < 2 || M < 8 {
		gemmJob{a: a, b: b, c: c, i0: 0, i1: M, K: K, N: N, cs: cs}.run()
		return
	}
	workers = min(workers, M/4)
	band := (M/workers + 3) &^ 3
	jobs := gemmPool()
	for i0 := band; i0 < M; i0 += band {
		wg.Add(1)
		jobs <- gemmJob{a: a, b: b, c: c, i0: i0, i1: min(i0+band, M), K: K, N: N, cs: cs, wg: wg}
	}
	gemmJob{a: a, b: b, c: c, i0: 0, i1: min(band, M), K: K, N: N, cs: cs}.run()
	wg.Wait()
}

func (j gemmJob) run() {
	if j.cs > 0 {
		gemmRowsNZ(j.a, j.b, j.c, j.i0, j.i1, j.K, j.N, j.cs)
		return
	}
	gemmRows(j.a, j.b, j.c, j.i0, j.i1, j.K, j.N)
}

// gemmJob is one band of rows for the gemm pool. It travels by value, so
// handing it over allocates nothing (a goroutine per band allocated its
// closure on every large matmul).
type gemmJob struct {
	a, b, c      []float32
	i0, i1, K, N int
	cs           int // see gemmBands
	wg           *sync.WaitGroup
}

var (
	gemmOnce sync.Once
	gemmJobs chan gemmJob
)

// gemmPool starts, once per process, one worker per CPU; machines running
// side by side (ptoasm sweep) share it.
func gemmPool() chan<- gemmJob {
	gemmOnce.Do(func() {
		n := runtime.GOMAXPROCS(0)
		gemmJobs = make(chan gemmJob, 4*n)
		for range n {
			go func() {
				for j := range gemmJobs {
					j.run()
					j.wg.Done()
				}
			}()
		}
	})
	return gemmJobs
}

// gemmParallelWork is the product size (M·K·N) from which gemmF32 uses
// several goroutines: below it the hand-off costs more than it saves.
const gemmParallelWork = 1 << 19

// gemmRows computes rows [i0, i1) of c with the fastest kernel this build
// and CPU have; every kernel gives the same bits.
var gemmRows = gemmRowsPortable

// gemmRowsPortable computes rows [i0, i1) of c. A 2×4 block of c stays in
// registers while the k loop runs (kernel2x4), so each step loads two values
// of a and four of b for eight multiply-adds. 4×4 needs 21 float registers
// and spills on amd64 (15): it was about 1.4× slower.
func gemmRowsPortable(a, b, c []float32, i0, i1, K, N int) {
	i := i0
	for ; i+2 <= i1; i += 2 {
		a0 := a[i*K : i*K+K]
		a1 := a[(i+1)*K : (i+1)*K+K]
		r0, r1 := c[i*N:i*N+N], c[(i+1)*N:(i+1)*N+N]
		j := 0
		for ; j+4 <= N; j += 4 {
			t := [8]float32{r0[j], r0[j+1], r0[j+2], r0[j+3], r1[j], r1[j+1], r1[j+2], r1[j+3]}
			kernel2x4(a0, a1, b[j:], N, &t)
			r0[j], r0[j+1], r0[j+2], r0[j+3] = t[0], t[1], t[2], t[3]
			r1[j], r1[j+1], r1[j+2], r1[j+3] = t[4], t[5], t[6], t[7]
		}
		for ; j < N; j++ {
			for r, ar := range [2][]float32{a0, a1} {
				row := c[(i+r)*N : (i+r)*N+N]
				acc := row[j]
				for k, x := range ar {
					acc += float32(x * b[k*N+j])
				}
				row[j] = acc
			}
		}
	}
	for ; i < i1; i++ {
		crow := c[i*N : i*N+N]
		for k, av := range a[i*K : i*K+K] {
			brow := b[k*N : k*N+N]
			crow := crow[:len(brow)]
			for j, bv := range brow {
				crow[j] += float32(av * bv)
			}
		}
	}
}

// kernel2x4 adds to the 2×4 tile t (row-major) the products of rows a0 and
// a1 with columns b[0:4], b[N:N+4], ... of b, in K order.
func kernel2x4(a0, a1, b []float32, N int, t *[8]float32) {
	c00, c01, c02, c03, c10, c11, c12, c13 := t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7]
	a1 = a1[:len(a0)]
	q := 0
	for k, x := range a0 {
		bk := b[q : q+4 : q+4]
		q += N
		b0, b1, b2, b3 := bk[0], bk[1], bk[2], bk[3]
		// The explicit conversions forbid fusing into an FMA, so every
		// host rounds the product and the sum the same way.
		c00 += float32(x * b0)
		c01 += float32(x * b1)
		c02 += float32(x * b2)
		c03 += float32(x * b3)
		y := a1[k]
		c10 += float32(y * b0)
		c11 += float32(y * b1)
		c12 += float32(y * b2)
		c13 += float32(y * b3)
	}
	t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7] = c00, c01, c02, c03, c10, c11, c12, c13
}

// decodeF32s fills dst (row-major, v.rows×v.cols) with v's elements, a
// contiguous run at a time.
func decodeF32s(v *view, dst []float32) {
	n := v.cols
	lut := f16LUT()
	if n > 1 && v.run(0) == 1 && v.colRun(0) > 1 {
		if decodeZNBoxes(v, dst, lut) {
			return
		}
		decodeF32sByColumn(v, dst, lut)
		return
	}
	for r := 0; r < v.rows; r++ {
		row := dst[r*n : r*n+n]
		for c := 0; c < n; {
			k := v.run(c)
			a := v.addr(r, c)
			seg := row[c : c+k]
			switch v.dt {
			case asm.F16:
				for x, h := range u16s(v.data[a : a+int64(2*k)]) {
					seg[x] = lut[h]
				}
			case asm.F32:
				copy(seg, f32s(v.data[a:a+int64(4*k)]))
			default:
				for x := range seg {
					seg[x] = decodeF32(v.dt, loadBits(v.data, a+int64(x)*v.es, v.es))
				}
			}
			c += k
		}
	}
}

// colRun is how many elements from (r, c) down the column are contiguous in
// storage: the column-major layouts (DN, and ZN within a box), where a row
// has no runs.
func (v *view) colRun(r int) int {
	switch {
	case v.flat && v.rs == v.es:
		return v.rows - r
	case v.fast && v.l.Kind == memory.ZN:
		br := 1 << v.brs
		return min(br-(r+v.r0)&(br-1), v.rows-r)
	}
	return 1
}

// decodeF32sByColumn is decodeF32s for a column-major view (the cube's B
// operand in L0B is ZN): it reads contiguous runs down each column instead
// of addressing every element on its own.
func decodeF32sByColumn(v *view, dst []float32, lut *[1 << 16]float32) {
	n := v.cols
	for c := 0; c < n; c++ {
		for r := 0; r < v.rows; {
			k := v.colRun(r)
			a := v.addr(r, c)
			out := dst[r*n+c:]
			switch v.dt {
			case asm.F16:
				for x, h := range u16s(v.data[a : a+int64(2*k)]) {
					out[x*n] = lut[h]
				}
			case asm.F32:
				for x, f := range f32s(v.data[a : a+int64(4*k)]) {
					out[x*n] = f
				}
			default:
				for x := range k {
					out[x*n] = decodeF32(v.dt, loadBits(v.data, a+int64(x)*v.es, v.es))
				}
			}
			r += k
		}
	}
}

// storeF32s writes src (row-major) into v's f32 region.
func storeF32s(v *view, src []float32) {
	n := v.cols
	for r := 0; r < v.rows; r++ {
		row := src[r*n : r*n+n]
		for c := 0; c < n; {
			k := v.run(c)
			a := v.addr(r, c)
			copy(f32s(v.data[a:a+int64(4*k)]), row[c:c+k])
			c += k
		}
	}
}

func decodeI32(v *view, dst []int32) {
	n := v.cols
	for r := 0; r < v.rows; r++ {
		for c := 0; c < n; c++ {
			dst[r*n+c] = int32(v.i(r, c))
		}
	}
}
