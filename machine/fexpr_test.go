package machine

import (
	"fmt"
	"io/fs"
	"math"
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

// TestRangeTests checks the scalar's inline tests (fexpr.tested) against
// evaluation at the ends of int64, where a range test that did not wrap
// exactly as the comparison would go wrong: comparisons of a register with
// a constant either way round (fnode.rangeOf), a register plus or minus a
// constant, constants, and && or || with a constant side (fnode.fold).
func TestRangeTests(t *testing.T) {
	vals := []int64{math.MinInt64, math.MinInt64 + 1, -2, -1, 0, 1, 2, math.MaxInt64 - 1, math.MaxInt64}
	env := coreEnv(1, asm.Env{})
	reg := func() *fnode { return &fnode{op: fnReg, slot: 0} }
	num := func(v int64) *fnode { return &fnode{op: fnConst, val: v} }
	check := func(what string, x fexpr, want func() int64) {
		t.Helper()
		for _, v := range vals {
			env.Regs[0] = v
			w := want()
			if got := x.eval(&env); got != w {
				t.Fatalf("%s at %d: eval %d, want %d", what, v, got, w)
			}
			if got, ok := x.tested(&env); !ok || got != (w != 0) {
				t.Fatalf("%s at %d: tested %v %v, want %v", what, v, got, ok, w != 0)
			}
		}
	}
	for op := fnEQ; op <= fnGE; op++ {
		for _, k := range vals {
			for _, n := range []*fnode{{op: op, x: reg(), y: num(k)}, {op: op, x: num(k), y: reg()}} {
				if _, _, _, _, ok := n.rangeOf(); !ok {
					t.Fatalf("op %d with %d: no range", op, k)
				}
				x := compileNode(n)
				check(fmt.Sprintf("op %d, %d", op, k), x, func() int64 { return n.eval(&env) })
			}
		}
	}
	for _, k := range vals {
		for _, mul := range []int64{1, -1} {
			x := affineExpr(0, mul, k)
			check(fmt.Sprintf("r*%d + %d", mul, k), x, func() int64 { return env.Regs[0]*mul + k })
		}
		c := compileExpr(asm.CExpr{Const: true, Val: k}, 1, nil)
		check(fmt.Sprintf("constant %d", k), c, func() int64 { return k })
	}
	// && and || with a constant side: the side left is a register (read as
	// a truth value) or a comparison (already 0 or 1).
	for _, op := range []uint8{fnLAnd, fnLOr} {
		for _, k := range []int64{0, 1, 5} {
			for _, side := range []*fnode{reg(), {op: fnEQ, x: reg(), y: num(0)}} {
				for _, n := range []*fnode{{op: op, x: side, y: num(k)}, {op: op, x: num(k), y: side}} {
					folded := n.fold()
					for _, v := range vals {
						env.Regs[0] = v
						if got, want := folded.eval(&env), n.eval(&env); got != want {
							t.Fatalf("op %d, constant %d at %d: folded %d, want %d", op, k, v, got, want)
						}
					}
				}
			}
		}
	}
}

// compileNode is compileExpr's form of node n.
func compileNode(n *fnode) fexpr {
	x := fexpr{slot: -1, node: n}
	x.rangeTest()
	return x
}
