package memory

import (
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
			for _, n := range tc.banded {
				if len(*reads[n]) < 2 {
					t.Errorf("@%s read in %d bands", n, len(*reads[n]))
				}
				for _, r := range *reads[n] {
					if r[1]-r[0] > 2 {
						t.Errorf("@%s rows %v in one band", n, r)
					}
				}
			}
		})
	}
	// An error inside a banded tree is the whole evaluation's.
	bad := call("rowsum", bin("+", ref("C"), call("cast", ref("C"), name("f99"))))
	_, werr := EvalGolden(bad, func(n string, _ int, _ bool) (*Array, error) { return tensors[n], nil }, consts, nil)
	defer func(n int) { GoldenBlockElems = n }(GoldenBlockElems)
	GoldenBlockElems = 64
	_, berr := EvalGolden(bad, func(n string, _ int, _ bool) (*Array, error) { return tensors[n], nil }, consts, nil)
	if werr == nil || berr == nil || werr.Error() != berr.Error() {
		t.Errorf("banded error %v, whole %v", berr, werr)
	}
}
