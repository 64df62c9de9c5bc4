package asm_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
)

// TestAffine compiles register expressions and checks which get an affine
// form and that every form equals the closure on random and extreme
// register values (wrap-around included).
func TestAffine(t *testing.T) {
	for _, tc := range []struct {
		src    string
		affine bool
	}{
		{"%a", true},
		{"(%a)", true},
		{"%a * BK", true},
		{"BK * %a + 3", true},
		{"-%a + 1", true},
		{"%a - %b * 2", true},
		{"(%a * KSUB + %b) & 1", true},
		{"1 & (%a + %a)", true},
		{"%a + %b - %a", true},
		{"%a * %b", false},
		{"%a / 2", false},
		{"%a % 2", false},
		{"(%a & 1) + 1", false},
		{"%a + %b + %c", false},
		{"%a + block_idx", true},
		{"block_idx * BK + rank", true},
		{"(block_idx + subblock_idx) & 1", true},
		{"%a * block_num", false},
		{"%a + %b + nranks", false},
		{"%a == 0", false},
		{"min(%a, 4)", false},
		{"~%a", false},
		{"%a - %a", false}, // no register left: nothing to gain over the closure
	} {
		x, nregs := letExpr(t, tc.src)
		if got := x.Lin != nil; got != tc.affine {
			t.Errorf("%s: affine %v, want %v", tc.src, got, tc.affine)
			continue
		}
		if x.Lin == nil {
			continue
		}
		rng := rand.New(rand.NewPCG(7, 9))
		env := asm.Env{Regs: make([]int64, nregs)}
		for trial := range 200 {
			env.Rank, env.NRanks, env.Block, env.SubBlock, env.BlockNum = rng.Int64(), rng.Int64(), rng.Int64N(64), rng.Int64N(2), rng.Int64N(64)
			fillRegs(rng, &env, trial)
			if got, want := x.Lin.Eval(&env), x.Fn(&env); got != want {
				t.Fatalf("%s: affine %d, closure %d at %v", tc.src, got, want, env.Regs)
			}
		}
	}
}

// TestCond compiles conditions and checks which get a Cond form and that
// every form equals the closure, on small values (so comparisons go both
// ways) and on values where a subtraction would wrap.
func TestCond(t *testing.T) {
	for _, tc := range []struct {
		src  string
		cond bool
	}{
		{"%a == 0", true},
		{"%a * 2 + 1 != %b", true},
		{"0 < %a", true},
		{"N - 6 >= %a + %b", true},
		{"%a == 0 && %b == 0", true},
		{"(%a == 0 && %b == 0) || block_idx == 3", true},
		{"%a && %b < 2", true},
		{"(%a & 1) == 1", true},
		{"%a < %b", false}, // a - b < 0 is wrong when it wraps
		{"%a == %b", true},
		{"%a * %b == 0", false},
		{"%a == 0 && %a * %b", false},
		{"%a + %b + %c == 0", false},
	} {
		x, nregs := letExpr(t, tc.src)
		if got := x.Cond != nil; got != tc.cond {
			t.Errorf("%s: cond %v, want %v", tc.src, got, tc.cond)
			continue
		}
		if x.Cond == nil {
			continue
		}
		rng := rand.New(rand.NewPCG(3, 4))
		env := asm.Env{Regs: make([]int64, nregs)}
		seen := map[int64]bool{}
		for trial := range 400 {
			env.Block = rng.Int64N(5)
			fillRegs(rng, &env, trial)
			got, want := x.Cond.Eval(&env), x.Fn(&env)
			if got != want {
				t.Fatalf("%s: cond %d, closure %d at %v", tc.src, got, want, env.Regs)
			}
			seen[got] = true
		}
		if !seen[0] || !seen[1] {
			t.Errorf("%s: only saw %v: the trials do not exercise both outcomes", tc.src, seen)
		}
	}
}

// letExpr compiles src as the value of a let in a kernel with registers %a,
// %b, %c and constants BK = 64, KSUB = 3, N = 8, and returns it with the
// kernel's register count.
func letExpr(t *testing.T, src string) (asm.CExpr, int) {
	t.Helper()
	prog := fmt.Sprintf(`const BK = 64
const KSUB = 3
const N = 8
kernel k : aiv {
    let %%a = 0
    let %%b = 0
    let %%c = 0
    let %%x = %s
}
launch ranks=1 { run k blocks=1 }
`, src)
	obj, errs := asm.Assemble(memFrontend(map[string]string{"m.pto": prog}), "m.pto", nil)
	if errs.HasErrors() {
		t.Fatalf("%s: %v", src, errs)
	}
	body := obj.Kernels[0].Body
	return body[len(body)-1].(*asm.CLet).X, len(obj.Kernels[0].Regs)
}

// fillRegs gives env's registers values of one of four kinds, by trial:
// small (so comparisons go both ways), near the largest and the smallest
// int64 (so sums wrap), and anywhere.
func fillRegs(rng *rand.Rand, env *asm.Env, trial int) {
	for i := range env.Regs {
		switch trial % 4 {
		case 0:
			env.Regs[i] = rng.Int64N(5) - 2
		case 1:
			env.Regs[i] = math.MaxInt64 - rng.Int64N(4)
		case 2:
			env.Regs[i] = math.MinInt64 + rng.Int64N(4)
		default:
			env.Regs[i] = rng.Int64() - math.MaxInt64/2
		}
	}
}
