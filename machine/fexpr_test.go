package machine

import (
	"io/fs"
	"math/rand/v2"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/parser"
	"github.com/ptoasm/ptoasm/programs"
)

// TestCompileExprAgrees checks compileExpr on every register expression of
// every shipped program (let values, conditions, loop bounds, operands and
// attributes): on random register files and core identities, the
// precomputed form must give exactly what the assembler's closure gives,
// and the common shapes must not fall back to the closure.
func TestCompileExprAgrees(t *testing.T) {
	fe := asm.Frontend{ParseFile: parser.ParseFile, ParseExpr: parser.ParseExpr,
		ReadFile: func(name string) ([]byte, error) { return fs.ReadFile(programs.FS, name) }}
	rng := rand.New(rand.NewPCG(1, 2))
	fast, total := 0, 0
	for _, name := range programs.List() {
		path, _ := programs.Find(name)
		obj, errs := asm.Assemble(fe, path, nil)
		if errs.HasErrors() {
			t.Fatalf("%s: %v", name, errs)
		}
		for _, k := range obj.Kernels {
			sc := newExprScope(obj, k)
			var xs []asm.CExpr
			var walk func([]asm.CStmt)
			walk = func(body []asm.CStmt) {
				for _, s := range body {
					switch s := s.(type) {
					case *asm.CLet:
						xs = append(xs, s.X)
					case *asm.CFor:
						xs = append(xs, s.From, s.To, s.Step)
						walk(s.Body)
					case *asm.CIf:
						xs = append(xs, s.Cond)
						walk(s.Then)
						walk(s.Else)
					case *asm.CWhile:
						xs = append(xs, s.Cond)
						walk(s.Body)
					case *asm.COp:
						for _, a := range s.Args {
							xs = append(xs, a.Val, a.TileIdx, a.Rank)
							xs = append(xs, a.Idx...)
						}
						for _, a := range s.Attrs {
							xs = append(xs, a.Val)
						}
					}
				}
			}
			walk(k.Body)
			for _, x := range xs {
				if x.Fn == nil {
					continue
				}
				total++
				f := compileExpr(x, len(k.Regs), sc)
				if f.slot >= 0 || f.fn == nil {
					fast++
				}
				for trial := range 50 {
					env := coreEnv(len(k.Regs), asm.Env{Rank: rng.Int64N(8), NRanks: 8,
						Block: rng.Int64N(48), SubBlock: rng.Int64N(2), BlockNum: 48})
					for i := range len(k.Regs) {
						// Small values half the time, so that comparisons
						// (%kt == 0) come out both ways.
						if trial%2 == 0 {
							env.Regs[i] = rng.Int64N(5) - 2
						} else {
							env.Regs[i] = rng.Int64N(1<<20) - 1<<19
						}
					}
					if got, want := f.eval(&env), x.Fn(&env); got != want {
						t.Fatalf("%s kernel %s: %s = %d, closure %d (regs %v)", name, k.Name, asm.ExprString(x.Src), got, want, env.Regs)
					}
				}
			}
		}
	}
	t.Logf("%d of %d register expressions evaluate without the closure", fast, total)
	if total == 0 || fast*2 < total {
		t.Errorf("only %d of %d expressions took a closure-free form", fast, total)
	}
}
