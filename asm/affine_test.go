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
		src := fmt.Sprintf(`const BK = 64
const KSUB = 3
kernel k : aiv {
    let %%a = 0
    let %%b = 0
    let %%c = 0
    let %%x = %s
}
launch ranks=1 { run k blocks=1 }
`, tc.src)
		obj, errs := asm.Assemble(memFrontend(map[string]string{"m.pto": src}), "m.pto", nil)
		if errs.HasErrors() {
			t.Fatalf("%s: %v", tc.src, errs)
		}
		body := obj.Kernels[0].Body
		x := body[len(body)-1].(*asm.CLet).X
		if got := x.Lin != nil; got != tc.affine {
			t.Errorf("%s: affine %v, want %v", tc.src, got, tc.affine)
			continue
		}
		if x.Lin == nil {
			continue
		}
		rng := rand.New(rand.NewPCG(7, 9))
		env := asm.Env{Regs: make([]int64, len(obj.Kernels[0].Regs))}
		for trial := range 200 {
			env.Rank, env.NRanks, env.Block, env.SubBlock, env.BlockNum = rng.Int64(), rng.Int64(), rng.Int64N(64), rng.Int64N(2), rng.Int64N(64)
			for i := range env.Regs {
				switch trial % 4 {
				case 0:
					env.Regs[i] = math.MaxInt64 - rng.Int64N(4)
				case 1:
					env.Regs[i] = math.MinInt64 + rng.Int64N(4)
				default:
					env.Regs[i] = rng.Int64() - math.MaxInt64/2
				}
			}
			if got, want := x.Lin.Eval(&env), x.Fn(&env); got != want {
				t.Fatalf("%s: affine %d, closure %d at %v", tc.src, got, want, env.Regs)
			}
		}
	}
}
