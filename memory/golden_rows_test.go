package memory

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
)

// bandTensor is a tensor that records the rows read from it and refuses to
// be loaded whole.
type bandTensor struct {
	a     *Array
	whole bool // Load allowed
	reads *[][2]int
}

func (t bandTensor) Shape() []int { return t.a.Shape }
func (t bandTensor) Load() (*Array, error) {
	if !t.whole {
		return nil, fmt.Errorf("loaded whole")
	}
	return t.a, nil
}
func (t bandTensor) Rows(r0, r1 int) (*Array, error) {
	*t.reads = append(*t.reads, [2]int{r0, r1})
	return sliceRows(t.a, r0, r1), nil
}

func randArray(rng *rand.Rand, shape ...int) *Array {
	a := NewArray(shape...)
	for i := range a.Data {
		a.Data[i] = rng.Float64()*4 - 2
	}
	return a
}

// The row-local parts of a golden are evaluated a band of rows at a time
// (fa_causal's rowsum over a masked [4096, 4096] product held five such
// intermediates whole, 1.2 GB): every expression gives the same bits banded
// as whole, tensors of the tree's rows are read a band at a time and never
// whole, and the errors are the same.
func TestGoldenBands(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	const rows = 70
	tensors := map[string]*Array{
		"A":   randArray(rng, rows, 24),
		"B":   randArray(rng, 24, 40),
		"C":   randArray(rng, rows, 40),
		"Row": randArray(rng, 1, 40),
		"Col": randArray(rng, rows, 1),
		"V":   randArray(rng, 40),
		"T":   randArray(rng, 40, rows),
		"S":   randArray(rng, 20, 2),
		"P":   randArray(rng, rows, 2),
	}
	mm := func() asm.Expr { return call("matmul", ref("A"), ref("B")) }
	masked := func() asm.Expr { return bin("+", mm(), ref("C")) }
	tests := []struct {
		name   string
		e      asm.Expr
		banded []string // tensors read only by bands
	}{
		{"fa_causal row sum", call("rowsum", call("exp", bin("*", bin("-", masked(), call("rowmax", masked())), fnum(0.125)))), []string{"A", "C"}},
		{"transposed row max", call("transpose", call("rowmax", masked())), []string{"A", "C"}},
		{"broadcasts", bin("/", bin("+", bin("*", ref("C"), ref("Row")), ref("Col")), bin("-", ref("V"), fnum(3))), []string{"C", "Col"}},
		{"functions", call("max", call("lrelu", call("prelu", ref("C"), fnum(0.5)), fnum(0.1)), call("neg", call("sigmoid", ref("C")))), []string{"C"}},
		{"softmax cast", call("cast", call("softmax", masked()), name("f16")), []string{"A", "C"}},
		{"topk", call("topk_index", bin("-", ref("C"), call("rowmean", ref("C"))), num(5)), []string{"C"}},
		{"row min of a whole operand", call("rowmin", bin("+", ref("C"), call("transpose", ref("T")))), []string{"C"}},
		{"matmul of a whole product", call("rowsum", call("matmul", ref("A"), call("matmul", ref("B"), call("transpose", ref("C"))))), []string{"A"}},
		{"a lone matmul stays whole", call("matmul", ref("A"), ref("B")), nil},
		{"column sum stays whole", call("colsum", masked()), []string{"A", "C"}},
		// slice is row-local: band [b0, b1) of slice(x, r0, …) is band
		// [r0+b0, r0+b1) of x (topk's golden read @X whole).
		{"topk of a slice", call("topk", call("slice", ref("C"), num(3), num(61), num(2), num(30)), num(5)), []string{"C"}},
		{"slices at two offsets", bin("+", call("slice", ref("C"), num(0), num(35), num(0), num(40)),
			call("slice", call("exp", ref("C")), num(35), num(70), num(0), num(40))), []string{"C"}},
		{"row sum of a sliced product", call("rowsum", call("slice", masked(), num(10), num(70), num(5), num(25))), []string{"A", "C"}},
		// concat is row-local (grouped_gemm's and decode_pair's goldens,
		// per-group matmuls joined along the rows, were evaluated whole):
		// along the rows a band takes its rows of each operand in turn.
		{"grouped matmuls joined along the rows", call("concat",
			call("concat", call("matmul", call("slice", ref("A"), num(0), num(20), num(0), num(24)), ref("B")),
				call("matmul", call("slice", ref("A"), num(20), num(21), num(0), num(24)), ref("B"))),
			call("matmul", call("slice", ref("A"), num(21), num(70), num(0), num(24)), ref("B"))), []string{"A"}},
		{"a tensor joined to itself", call("concat", ref("C"), call("exp", ref("C"))), []string{"C"}},
		{"a tensor joined to itself, negative axis", call("concat", ref("C"), call("neg", ref("C")), num(-2)), []string{"C"}},
		// Band [0, 32) meets @S at rows [0, 5) under the slice and [0,
		// 20) in the inner concat: a band's values are kept by both ends.
		{"one tensor at two lengths in a band", call("concat", call("slice", ref("S"), num(0), num(5), num(0), num(2)),
			call("concat", call("exp", ref("S")), ref("P"))), []string{"S", "P"}},
		{"joined to a whole value", call("rowsum", call("concat", call("transpose", ref("T")), ref("C"), num(0))), []string{"C"}},
		{"joined along the columns", call("softmax", call("concat", ref("C"), call("transpose", ref("T")), num(1))), []string{"C"}},
		{"row vectors joined", call("concat", call("slice", ref("C"), num(4), num(5), num(0), num(40)), ref("Row")), nil},
	}
	consts := func(string) (float64, bool) { return 0, false }
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			whole, err := EvalGolden(tc.e, func(n string, _ int, _ bool) (*Array, error) { return tensors[n], nil }, consts, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer func(n int) { GoldenBlockElems = n }(GoldenBlockElems)
			GoldenBlockElems = 64 // one or two rows a band
			reads := map[string]*[][2]int{}
			got, err := EvalGoldenTensors(tc.e, func(n string, _ int, _ bool) (Tensor, error) {
				reads[n] = new([][2]int)
				banded := false
				for _, b := range tc.banded {
					banded = banded || b == n
				}
				return bandTensor{a: tensors[n], whole: !banded, reads: reads[n]}, nil
			}, consts, nil)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got.Shape) != fmt.Sprint(whole.Shape) || len(got.Data) != len(whole.Data) {
				t.Fatalf("shape %v, whole %v", got.Shape, whole.Shape)
			}
			for i, v := range got.Data {
				if math.Float64bits(v) != math.Float64bits(whole.Data[i]) {
					t.Fatalf("element %d is %v banded, %v whole", i, v, whole.Data[i])
				}
			}
			// A check takes the value band by band: the same bits, in order.
			var streamed []float64
			err = EvalGoldenBands(tc.e, GoldenSource{Lookup: func(n string, _ int, _ bool) (Tensor, error) {
				return bandTensor{a: tensors[n], whole: true, reads: new([][2]int)}, nil
			}, Consts: consts}, func(shape []int) error {
				if fmt.Sprint(shape) != fmt.Sprint(whole.Shape) {
					t.Errorf("ready with shape %v, whole %v", shape, whole.Shape)
				}
				return nil
			}, func(off int, v *Array) error {
				if off != len(streamed) {
					t.Fatalf("band at %d after %d elements", off, len(streamed))
				}
				streamed = append(streamed, v.Data...)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(streamed) != len(whole.Data) {
				t.Fatalf("%d elements streamed, want %d", len(streamed), len(whole.Data))
			}
			for i, v := range streamed {
				if math.Float64bits(v) != math.Float64bits(whole.Data[i]) {
					t.Fatalf("element %d is %v streamed, %v whole", i, v, whole.Data[i])
				}
			}
			for _, n := range tc.banded {
				if len(*reads[n]) < 2 {
					t.Errorf("@%s read in %d bands", n, len(*reads[n]))
				}
				for _, r := range *reads[n] {
					if r[1]-r[0] > max(2, 64/tensors[n].Shape[1]) { // a band's 64 elements
						t.Errorf("@%s rows %v in one band", n, r)
					}
				}
			}
		})
	}
	// An error inside a banded tree is the whole evaluation's.
	for _, bad := range []asm.Expr{
		call("rowsum", bin("+", ref("C"), call("cast", ref("C"), name("f99")))),
		call("rowsum", call("slice", ref("C"), num(3), num(71), num(0), num(4))),
		call("rowsum", call("slice", ref("C"), num(3), name("NOPE"), num(0), num(4))),
		call("rowsum", call("concat", ref("C"), call("cast", ref("C"), name("f99")))),
		call("rowsum", call("concat", ref("C"), ref("A"))),
		call("rowsum", call("concat", ref("C"), ref("C"), name("NOPE"))),
		call("rowsum", call("concat", ref("C"), ref("C"), num(2))),
	} {
		_, werr := EvalGolden(bad, func(n string, _ int, _ bool) (*Array, error) { return tensors[n], nil }, consts, nil)
		old := GoldenBlockElems
		GoldenBlockElems = 64
		_, berr := EvalGolden(bad, func(n string, _ int, _ bool) (*Array, error) { return tensors[n], nil }, consts, nil)
		GoldenBlockElems = old
		if werr == nil || berr == nil || werr.Error() != berr.Error() {
			t.Errorf("banded error %v, whole %v", berr, werr)
		}
	}
}

// TestGoldenLimit: what a golden holds is charged before it is allocated,
// as its shapes and bands decide: a whole intermediate past the limit stops
// the evaluation at its sub-expression, and a banded tree is charged its
// bands, not the whole values it spares.
func TestGoldenLimit(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	tensors := map[string]*Array{
		"A": randArray(rng, 70, 24), "B": randArray(rng, 24, 40), "C": randArray(rng, 70, 40),
	}
	lookup := func(n string, _ int, _ bool) (Tensor, error) { return ArrayTensor{tensors[n]}, nil }
	consts := func(string) (float64, bool) { return 0, false }
	product := call("matmul", ref("A"), ref("B")) // [70, 40]: 22 400 bytes
	masked := func() asm.Expr { return bin("+", call("matmul", ref("A"), ref("B")), ref("C")) }
	faRowSum := call("rowsum", call("exp", bin("-", masked(), call("rowmax", masked()))))
	defer func(n int) { GoldenBlockElems = n }(GoldenBlockElems)
	GoldenBlockElems = 64 // one row a band
	tests := []struct {
		name  string
		e     asm.Expr
		limit int64
		at    asm.Expr // the node refused, nil: it fits
		bytes int64
	}{
		// @A [70, 24] whole (13 440 bytes) and @B (7 680), then the product.
		{"whole product over", call("sum", product), 30000, product, 22400},
		{"whole product within", call("sum", product), 60000, nil, 0},
		{"operands over", call("sum", product), 20000, product.Args[1], 7680},
		// @B whole (7 680 bytes) and a few rows a band: whole, the masked
		// product alone would take 22 400.
		{"banded tree within", faRowSum, 12000, nil, 0},
		{"banded tree over", faRowSum, 7000, nil, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := EvalGoldenBands(tc.e, GoldenSource{Lookup: lookup, Consts: consts, Limit: tc.limit},
				func([]int) error { return nil }, func(int, *Array) error { return nil })
			var le *GoldenLimitError
			switch {
			case tc.name == "banded tree over":
				if !errors.As(err, &le) {
					t.Fatalf("error %v, want a *GoldenLimitError", err)
				}
			case tc.at == nil:
				if err != nil {
					t.Fatal(err)
				}
			case !errors.As(err, &le):
				t.Fatalf("error %v, want a *GoldenLimitError", err)
			case le.At != tc.at || le.Bytes != tc.bytes || le.Held <= tc.limit:
				t.Errorf("refused %s (%d bytes, holding %d), want %s (%d bytes)", asm.ExprString(le.At.(asm.Expr)), le.Bytes, le.Held, asm.ExprString(tc.at), tc.bytes)
			}
		})
	}
}

// TestComparisonBands: a comparison fed band by band is Compare and
// CannotFail on the whole arrays, whatever the bands.
func TestComparisonBands(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	want := randArray(rng, 1, 500)
	got := NewArray(1, 500)
	copy(got.Data, want.Data)
	for _, i := range []int{17, 230, 231, 499} {
		got.Data[i] += 1e-3 * float64(i)
	}
	got.Data[300] = math.NaN()
	small := NewArray(1, 500)
	for i := range small.Data {
		small.Data[i] = 1e-4 * want.Data[i]
	}
	for _, tol := range []Tolerance{{Tol: 1e-3}, {RTol: 1e-2, ATol: 1e-3}, {}, {Tol: 0.5}} {
		for _, w := range []*Array{want, small} {
			ok, maxErr, bad := Compare(got, w, tol)
			for _, step := range []int{1, 7, 64, 500} {
				c := NewComparison(tol, 0, 1)
				for off := 0; off < 500; off += step {
					end := min(off+step, 500)
					c.Add(got.Data[off:end], w.Data[off:end])
				}
				if c.OK() != ok || math.Float64bits(c.MaxAbsErr) != math.Float64bits(maxErr) || c.FirstBad != bad ||
					bad >= 0 && (c.BadGot != got.Data[bad] && !math.IsNaN(c.BadGot) || c.BadWant != w.Data[bad]) {
					t.Errorf("%v step %d: %v %v %d, whole %v %v %d", tol, step, c.OK(), c.MaxAbsErr, c.FirstBad, ok, maxErr, bad)
				}
				if c.CannotFail(0) != CannotFail(w, tol, 0) || c.CannotFail(1) != CannotFail(w, tol, 1) {
					t.Errorf("%v step %d: cannot-fail differs", tol, step)
				}
			}
		}
	}
}
