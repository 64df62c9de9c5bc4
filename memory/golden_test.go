package memory

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ptoasm/ptoasm/asm"
)

// Expression builders: the parser is another package, so tests build trees by hand.
var col = 0

func sp() asm.Span {
	col++
	return asm.Span{Pos: asm.Pos{File: "g.pto", Line: 1, Col: col}}
}
func call(fn string, args ...asm.Expr) *asm.Call { return &asm.Call{Span: sp(), Fn: fn, Args: args} }
func ref(name string) *asm.GMRef                 { return &asm.GMRef{Span: sp(), Name: name} }
func refRank(name string, r int64) *asm.GMRef {
	return &asm.GMRef{Span: sp(), Name: name, Rank: num(r)}
}
func num(v int64) *asm.Num { return &asm.Num{Span: sp(), Int: v, Text: fmt.Sprint(v)} }
func fnum(v float64) *asm.Num {
	return &asm.Num{Span: sp(), Float: v, IsFloat: true, Text: fmt.Sprint(v)}
}
func name(n string) *asm.Name { return &asm.Name{Span: sp(), Name: n} }
func str(s string) *asm.Str   { return &asm.Str{Span: sp(), Val: s} }
func bin(op string, x, y asm.Expr) *asm.Binary {
	return &asm.Binary{Span: sp(), Op: op, X: x, Y: y}
}

func arr(shape []int, data ...float64) *Array { return &Array{Shape: shape, Data: data} }

func testEnv() (func(string, int, bool) (*Array, error), func(string) (float64, bool), func(string) (*Array, error)) {
	tensors := map[string]*Array{
		"A": arr([]int{2, 3}, 1, 2, 3, 4, 5, 6),
		"B": arr([]int{3, 2}, 1, 0, 0, 1, 1, 1),
		"X": arr([]int{2, 2}, -2, 1, 0.5, -0.25),
		"R": arr([]int{1, 3}, 10, 20, 30),
		"S": arr([]int{2}, 4, 9),
	}
	lookup := func(n string, rank int, hasRank bool) (*Array, error) {
		if n == "W" {
			if !hasRank {
				return nil, errors.New("W needs a rank")
			}
			return arr([]int{1, 2}, float64(rank), float64(rank)*2), nil
		}
		if a, ok := tensors[n]; ok {
			return a, nil
		}
		return nil, fmt.Errorf("no tensor @%s", n)
	}
	consts := func(n string) (float64, bool) {
		switch n {
		case "M":
			return 2, true
		case "HALF":
			return 0.5, true
		}
		return 0, false
	}
	files := func(p string) (*Array, error) {
		if p == "c.npy" {
			return arr([]int{2}, 7, 8), nil
		}
		return nil, fmt.Errorf("open %s: no such file", p)
	}
	return lookup, consts, files
}

func TestEvalGolden(t *testing.T) {
	tests := []struct {
		name string
		e    asm.Expr
		want *Array
	}{
		{"matmul", call("matmul", ref("A"), ref("B")), arr([]int{2, 2}, 4, 5, 10, 11)},
		{"transpose", call("transpose", ref("A")), arr([]int{3, 2}, 1, 4, 2, 5, 3, 6)},
		{"add scalar", call("add", ref("X"), num(1)), arr([]int{2, 2}, -1, 2, 1.5, 0.75)},
		{"scalar first", call("sub", fnum(1), ref("X")), arr([]int{2, 2}, 3, 0, 0.5, 1.25)},
		{"row broadcast", call("mul", ref("A"), ref("R")), arr([]int{2, 3}, 10, 40, 90, 40, 100, 180)},
		{"operators", bin("+", bin("*", ref("X"), num(2)), num(1)), arr([]int{2, 2}, -3, 3, 2, 0.5)},
		{"div", call("div", ref("X"), num(4)), arr([]int{2, 2}, -0.5, 0.25, 0.125, -0.0625)},
		{"max min", call("max", call("min", ref("X"), fnum(0.75)), fnum(-1)), arr([]int{2, 2}, -1, 0.75, 0.5, -0.25)},
		{"relu", call("relu", ref("X")), arr([]int{2, 2}, 0, 1, 0.5, 0)},
		{"abs neg", call("neg", call("abs", ref("X"))), arr([]int{2, 2}, -2, -1, -0.5, -0.25)},
		{"lrelu", call("lrelu", ref("X"), fnum(0.1)), arr([]int{2, 2}, -0.2, 1, 0.5, -0.025)},
		{"prelu", call("prelu", ref("X"), fnum(0.5)), arr([]int{2, 2}, -1, 1, 0.5, -0.125)},
		{"sqrt exp log", call("log", call("exp", call("sqrt", ref("S")))), arr([]int{2}, 2, 3)},
		{"cast f16", call("cast", bin("/", num(1), num(3)), name("f16")), arr([]int{}, 0.333251953125)},
		{"cast i8 trunc", call("cast", fnum(-7.9), name("i8"), name("trunc")), arr([]int{}, -7)},
		// TCVT into i8/u8/i16 is always a narrowing pair, which wraps
		// (TCvt.hpp kIsNarrowingCvt): 300 → 44, not 127. Into i32 the
		// float sources saturate.
		{"cast i8 wraps", call("cast", num(300), name("i8")), arr([]int{}, 44)},
		{"cast u8 wraps", call("cast", num(-100), name("u8")), arr([]int{}, 156)},
		{"cast i16 wraps", call("cast", num(40000), name("i16"), name("floor")), arr([]int{}, -25536)},
		{"cast i8 nan", call("cast", bin("/", num(0), num(0)), name("i8")), arr([]int{}, 0)},
		{"cast i32 saturates", call("cast", num(3000000000), name("i32")), arr([]int{}, 2147483647)},
		{"slice", call("slice", ref("A"), num(1), name("M"), num(0), bin("+", num(1), num(1))), arr([]int{1, 2}, 4, 5)},
		{"concat 0", call("concat", ref("A"), ref("R"), num(0)), arr([]int{3, 3}, 1, 2, 3, 4, 5, 6, 10, 20, 30)},
		{"concat -1", call("concat", ref("X"), ref("X"), num(-1)), arr([]int{2, 4}, -2, 1, -2, 1, 0.5, -0.25, 0.5, -0.25)},
		{"file", call("file", str("c.npy")), arr([]int{2}, 7, 8)},
		{"rank", refRank("W", 3), arr([]int{1, 2}, 3, 6)},
		{"const", name("M"), arr([]int{}, 2)},
		{"rsqrt recip", call("recip", call("rsqrt", ref("S"))), arr([]int{2}, 2, 3)},
		{"sigmoid", call("sigmoid", ref("X")), arr([]int{2, 2}, 1/(1+math.Exp(2)), 1/(1+math.Exp(-1)), 1/(1+math.Exp(-0.5)), 1/(1+math.Exp(0.25)))},
		{"tanh", call("tanh", fnum(0.5)), arr([]int{}, math.Tanh(0.5))},
		{"silu", call("silu", fnum(-3)), arr([]int{}, -3/(1+math.Exp(3)))},
		{"rowsum", call("rowsum", ref("A")), arr([]int{2, 1}, 6, 15)},
		{"rowmax", call("rowmax", ref("X")), arr([]int{2, 1}, 1, 0.5)},
		{"float constant", call("mul", ref("X"), name("HALF")), arr([]int{2, 2}, -1, 0.5, 0.25, -0.125)},
		{"topk", call("topk", ref("X"), num(2)), arr([]int{2, 2}, 1, -2, 0.5, -0.25)},
		{"topk_index", call("topk_index", ref("X"), num(1)), arr([]int{2, 1}, 1, 0)},
		{"rowmin", call("rowmin", ref("X")), arr([]int{2, 1}, -2, -0.25)},
		{"rowmean", call("rowmean", ref("A")), arr([]int{2, 1}, 2, 5)},
		{"rowsum 1-D", call("rowsum", ref("S")), arr([]int{1}, 13)},
		{"colsum", call("colsum", ref("A")), arr([]int{1, 3}, 5, 7, 9)},
		{"colmax", call("colmax", ref("A")), arr([]int{1, 3}, 4, 5, 6)},
		{"colmin", call("colmin", ref("X")), arr([]int{1, 2}, -2, -0.25)},
		{"colmean", call("colmean", ref("A")), arr([]int{1, 3}, 2.5, 3.5, 4.5)},
		{"sum mean", bin("+", call("sum", ref("A")), call("mean", ref("A"))), arr([]int{}, 24.5)},
		{"normalise rows", bin("/", ref("A"), call("rowsum", ref("A"))), arr([]int{2, 3}, 1.0/6, 2.0/6, 3.0/6, 4.0/15, 5.0/15, 6.0/15)},
		{"softmax", call("softmax", ref("R")), arr([]int{1, 3}, 1/(1+math.Exp(10)+math.Exp(20)), math.Exp(10)/(1+math.Exp(10)+math.Exp(20)), math.Exp(20)/(1+math.Exp(10)+math.Exp(20)))},
		{"paren unary", &asm.Paren{X: &asm.Unary{Op: "-", X: ref("R")}}, arr([]int{1, 3}, -10, -20, -30)},
	}
	lookup, consts, files := testEnv()
	for _, tc := range tests {
		got, err := EvalGolden(tc.e, lookup, consts, files)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if d := cmp.Diff(tc.want, got, cmp.Comparer(func(a, b float64) bool { return math.Abs(a-b) < 1e-12 })); d != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, d)
		}
	}
}

func TestEvalGoldenErrors(t *testing.T) {
	lookup, consts, files := testEnv()
	bad := call("nosuch", ref("A"))
	tests := []struct {
		name string
		e    asm.Expr
		at   asm.Expr // the node the error must point at
		msg  string
	}{
		{"unknown fn", bad, bad, "unknown golden function"},
		{"arity", call("exp"), nil, "takes 1 arguments"},
		{"matmul shapes", call("matmul", ref("A"), ref("A")), nil, "inner dimensions"},
		{"broadcast", call("add", ref("A"), ref("X")), nil, "do not broadcast"},
		{"unknown tensor", ref("Q"), nil, "no tensor @Q"},
		{"rank required", ref("W"), nil, "needs a rank"},
		{"unknown const", call("slice", ref("A"), name("K"), num(1), num(0), num(1)), nil, "unknown constant"},
		{"slice bounds", call("slice", ref("A"), num(0), num(3), num(0), num(1)), nil, "outside shape"},
		{"bad dtype", call("cast", ref("A"), name("f8")), nil, "unknown dtype"},
		{"missing file", call("file", str("nope.npy")), nil, "no such file"},
		{"file not string", call("file", num(1)), nil, "takes a string"},
		{"index", &asm.GMRef{Span: sp(), Name: "A", Index: []asm.Expr{num(0)}}, nil, "whole tensors"},
		{"string", str("x"), nil, "not a tensor"},
		{"bad op", bin("<<", ref("A"), num(1)), nil, "not defined on tensors"},
		{"div zero", call("slice", ref("A"), bin("/", num(1), num(0)), num(1), num(0), num(1)), nil, "division by zero"},
		{"concat axis", call("concat", ref("A"), ref("A"), num(2)), nil, "out of range"},
		{"colsum of a vector", call("colsum", ref("S")), nil, "rank ≥ 2"},
		{"softmax of a scalar", call("softmax", num(1)), nil, "rank ≥ 1"},
		{"cast arity", call("cast", ref("A")), nil, "cast takes 2 or 3 arguments"},
	}
	for _, tc := range tests {
		_, err := EvalGolden(tc.e, lookup, consts, files)
		var d *asm.Diagnostic
		if !errors.As(err, &d) {
			t.Errorf("%s: error %v is not a Diagnostic", tc.name, err)
			continue
		}
		if !strings.Contains(d.Msg, tc.msg) {
			t.Errorf("%s: %q does not mention %q", tc.name, d.Msg, tc.msg)
		}
		if !d.Span.Pos.IsValid() {
			t.Errorf("%s: no position", tc.name)
		}
		if tc.at != nil && d.Span != tc.at.NodeSpan() {
			t.Errorf("%s: at %v, want %v", tc.name, d.Span.Pos, tc.at.NodeSpan().Pos)
		}
	}
}

func TestCompare(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	tests := []struct {
		name      string
		got, want []float64
		tol       Tolerance
		ok        bool
		maxErr    float64
		firstBad  int
	}{
		{"exact", []float64{1, 2}, []float64{1, 2}, Tolerance{}, true, 0, -1},
		{"abs tol", []float64{0.5005}, []float64{0.5}, Tolerance{Tol: 1e-3}, true, 0.0005, -1},
		{"rel tol", []float64{1000.5}, []float64{1000}, Tolerance{Tol: 1e-3}, true, 0.5, -1},
		{"too far", []float64{1, 2.1, 3.5}, []float64{1, 2, 3}, Tolerance{Tol: 1e-3}, false, 0.5, 1},
		{"nan got", []float64{nan}, []float64{nan}, Tolerance{Tol: 1}, false, inf, 0},
		{"nan want", []float64{1}, []float64{nan}, Tolerance{Tol: 1}, false, inf, 0},
		{"inf equal", []float64{inf}, []float64{inf}, Tolerance{}, true, 0, -1},
		{"inf vs big", []float64{inf}, []float64{1e30}, Tolerance{Tol: 1e-3}, false, inf, 0},
		{"size", []float64{1}, []float64{1}, Tolerance{}, true, 0, -1},
		// allclose: |got − want| ≤ atol + rtol·|want|.
		{"rtol small values", []float64{0.0101}, []float64{0.01}, Tolerance{RTol: 1e-2}, true, 0.0001, -1},
		{"rtol zero got", []float64{0, 0}, []float64{0.01, 0.02}, Tolerance{RTol: 1e-2}, false, 0.02, 0},
		{"tol zero got", []float64{0, 0}, []float64{0.01, 0.002}, Tolerance{Tol: 1e-2}, true, 0.01, -1},
		{"atol only", []float64{1e-6}, []float64{0}, Tolerance{ATol: 1e-5}, true, 1e-6, -1},
		{"atol plus rtol", []float64{1.0021}, []float64{1}, Tolerance{RTol: 2e-3, ATol: 1e-4}, true, 0.0021, -1},
		{"atol plus rtol over", []float64{1.0022}, []float64{1}, Tolerance{RTol: 2e-3, ATol: 1e-4}, false, 0.0022, 0},
	}
	for _, tc := range tests {
		ok, m, fb := Compare(arr(nil, tc.got...), arr(nil, tc.want...), tc.tol)
		if ok != tc.ok || math.Abs(m-tc.maxErr) > 1e-9 && m != tc.maxErr || fb != tc.firstBad {
			t.Errorf("%s: Compare = %v, %v, %d; want %v, %v, %d", tc.name, ok, m, fb, tc.ok, tc.maxErr, tc.firstBad)
		}
	}
}

func TestCompareSize(t *testing.T) {
	if ok, _, fb := Compare(arr(nil, 1), arr(nil, 1, 2), Tolerance{}); ok || fb != 0 {
		t.Errorf("different sizes: ok %v firstBad %d", ok, fb)
	}
}

// TestCannotFail: a check whose expected values all sit within tolerance of 0
// (or of the poison value) passes a kernel that wrote nothing useful.
func TestCannotFail(t *testing.T) {
	soft := NewArray(4, 128)
	for i := range soft.Data {
		soft.Data[i] = 1.0 / 128
	}
	tests := []struct {
		name string
		want *Array
		tol  Tolerance
		v    float64
		yes  bool
	}{
		{"softmax rows under tol 1e-2", soft, Tolerance{Tol: 1e-2}, 0, true},
		{"softmax rows under rtol 1e-2", soft, Tolerance{RTol: 1e-2}, 0, false},
		{"softmax rows under atol 1e-2", soft, Tolerance{ATol: 1e-2}, 0, true},
		{"one large value", arr(nil, 0.001, 5), Tolerance{Tol: 1e-2}, 0, false},
		{"NaN poison never passes", soft, Tolerance{Tol: 1}, math.NaN(), false},
		{"integer poison", arr(nil, 127, 126.5), Tolerance{ATol: 1}, 127, true},
		{"expected zeros are the right answer", arr(nil, 0, 0), Tolerance{Tol: 1e-2}, 0, false},
	}
	for _, tc := range tests {
		if got := CannotFail(tc.want, tc.tol, tc.v); got != tc.yes {
			t.Errorf("%s: CannotFail = %v, want %v", tc.name, got, tc.yes)
		}
	}
}

func TestPoisonValue(t *testing.T) {
	if v := PoisonValue(asm.F32); !math.IsNaN(v) {
		t.Errorf("f32 poison reads %g, want NaN", v)
	}
	if v := PoisonValue(asm.I8); v != 127 {
		t.Errorf("i8 poison reads %g, want 127", v)
	}
	if v := PoisonValue(asm.I32); v != math.MaxInt32 {
		t.Errorf("i32 poison reads %g, want %d", v, math.MaxInt32)
	}
}

// TestGoldenTable: the evaluator implements exactly the assembler's table, so
// nothing assembles and then fails to evaluate, or the reverse.
func TestGoldenTable(t *testing.T) {
	for _, f := range asm.GoldenFuncs() {
		if goldenImpls[f.Name] == nil {
			t.Errorf("%s is in asm's golden table but EvalGolden does not implement it", f.Name)
		}
	}
	for name := range goldenImpls {
		if _, ok := asm.LookupGoldenFunc(name); !ok {
			t.Errorf("EvalGolden implements %s but asm's golden table lacks it (it would not assemble)", name)
		}
	}
}

// TestTopKOrder: NaN first, then descending, equal values in column order.
func TestTopKOrder(t *testing.T) {
	a := &Array{Shape: []int{1, 4}, Data: []float64{1, math.NaN(), 1, 3}}
	v, _ := TopK(a, 4, false)
	ix, _ := TopK(a, 4, true)
	if !math.IsNaN(v.Data[0]) || v.Data[1] != 3 || v.Data[2] != 1 || v.Data[3] != 1 {
		t.Errorf("values %v", v.Data)
	}
	if want := []float64{1, 3, 0, 2}; fmt.Sprint(ix.Data) != fmt.Sprint(want) {
		t.Errorf("indices %v, want %v", ix.Data, want)
	}
	if _, err := TopK(a, 5, false); err == nil {
		t.Error("k > cols: no error")
	}
}
