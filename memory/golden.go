package memory

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/ptoasm/ptoasm/asm"
)

// Array is a dense row-major float64 array: the currency of golden expressions.
// A rank-0 Array (empty Shape, one value) is a scalar and broadcasts.
type Array struct {
	Shape []int
	Data  []float64
}

// NewArray allocates a zero array of shape.
func NewArray(shape ...int) *Array {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return &Array{Shape: slices.Clone(shape), Data: make([]float64, n)}
}

// Scalar is a rank-0 array.
func Scalar(v float64) *Array { return &Array{Shape: []int{}, Data: []float64{v}} }

func (a *Array) rank() int { return len(a.Shape) }

type golden struct {
	lookup   func(name string, rank int, hasRank bool) (Tensor, error)
	consts   func(name string) (float64, bool)
	readFile func(path string) (*Array, error)

	tensors map[tensorKey]tensorRead // each tensor looked up once
	info    map[asm.Expr]rowInfo     // analyse's findings
	whole   map[asm.Expr]*Array      // values computed whole, not yet consumed
	failed  map[asm.Expr]error
	band    map[string]*Array // the current band's shared row-local values
	shared  map[string]bool   // texts met more than once in the banded tree

	// What the evaluation holds (golden_budget.go), in bytes: at most
	// limit (≤ 0: no bound).
	limit, stack, held, bandHeld int64
	over                         *GoldenLimitError // the value refused
}

type tensorKey struct {
	name    string
	rank    int
	hasRank bool
}

type tensorRead struct {
	t   Tensor
	err error
}

// EvalGolden evaluates a golden expression (docs/language.md, "Expectations") in
// float64. Tensors come from lookup (@name, or @name[rank=r] with hasRank),
// named constants (integer or float) from consts, file("x") from readFile. Scalars broadcast in
// elementwise functions and operators (+ - * /, numpy broadcasting rules); matmul
// accumulates in float64, so wrap it in cast(…, f32) to mimic an fp32 result.
// Errors are *asm.Diagnostic at the offending sub-expression.
func EvalGolden(e asm.Expr,
	lookup func(name string, rank int, hasRank bool) (*Array, error),
	consts func(name string) (float64, bool),
	readFile func(path string) (*Array, error)) (*Array, error) {
	var lt func(string, int, bool) (Tensor, error)
	if lookup != nil {
		lt = func(name string, rank int, hasRank bool) (Tensor, error) {
			a, err := lookup(name, rank, hasRank)
			if a == nil || err != nil {
				return nil, err
			}
			return ArrayTensor{a}, nil
		}
	}
	return EvalGoldenTensors(e, lt, consts, readFile)
}

// EvalGoldenTensors is EvalGolden over tensors read on demand: a row-local
// part of the expression (elementwise operators and functions, row
// reductions, softmax, topk, matmul's left operand, over rank-2 values of
// the same rows) is evaluated a band of rows at a time, reading its tensors
// a band at a time, so its intermediates take a band each instead of the
// whole (fa_causal's rowsum over a masked [4096, 4096] product).
func EvalGoldenTensors(e asm.Expr,
	lookup func(name string, rank int, hasRank bool) (Tensor, error),
	consts func(name string) (float64, bool),
	readFile func(path string) (*Array, error)) (*Array, error) {
	return newGolden(GoldenSource{Lookup: lookup, Consts: consts, ReadFile: readFile}).eval(e)
}

// GoldenSource is what a golden expression reads: tensors (@name, or
// @name[rank=r] with hasRank), named constants (integer or float), files
// (file("x")); and the most bytes of float64 values its evaluation may
// hold at once (Limit, ≤ 0: no bound), past which it stops with a
// *GoldenLimitError before allocating.
type GoldenSource struct {
	Lookup   func(name string, rank int, hasRank bool) (Tensor, error)
	Consts   func(name string) (float64, bool)
	ReadFile func(path string) (*Array, error)
	Limit    int64
}

func newGolden(src GoldenSource) *golden {
	return &golden{lookup: src.Lookup, consts: src.Consts, readFile: src.ReadFile, limit: src.Limit,
		tensors: map[tensorKey]tensorRead{}, info: map[asm.Expr]rowInfo{},
		whole: map[asm.Expr]*Array{}, failed: map[asm.Expr]error{}}
}

// tensor looks @name up once per evaluation.
func (g *golden) tensor(e *asm.GMRef) (Tensor, error) {
	if len(e.Index) > 0 {
		return nil, errAt(e, "golden expressions take whole tensors: use slice(@%s, …) instead of an index", e.Name)
	}
	if g.lookup == nil {
		return nil, errAt(e, "no tensors available for @%s", e.Name)
	}
	rank, hasRank := 0, e.Rank != nil
	if hasRank {
		r, err := g.evalInt(e.Rank)
		if err != nil {
			return nil, err
		}
		rank = int(r)
	}
	k := tensorKey{e.Name, rank, hasRank}
	rd, ok := g.tensors[k]
	if !ok {
		rd.t, rd.err = g.lookup(e.Name, rank, hasRank)
		g.tensors[k] = rd
	}
	if rd.err != nil {
		return nil, wrapAt(e, rd.err)
	}
	if rd.t == nil {
		return nil, errAt(e, "unknown tensor @%s", e.Name)
	}
	return rd.t, nil
}

func errAt(n asm.Node, format string, args ...any) error {
	return &asm.Diagnostic{Span: n.NodeSpan(), Severity: asm.SevError, Msg: fmt.Sprintf(format, args...)}
}

func wrapAt(n asm.Node, err error) error {
	var d *asm.Diagnostic
	var le *GoldenLimitError
	var pe *PageError
	if errors.As(err, &d) || errors.As(err, &le) || errors.As(err, &pe) {
		return err // a budget error keeps its type for the caller
	}
	return errAt(n, "%v", err)
}

// eval is e's whole value. What e's evaluation charged (golden_budget.go)
// is released when it returns, but for the value itself, which the caller
// holds until it returns in turn.
func (g *golden) eval(e asm.Expr) (*Array, error) {
	mark := g.stack
	v, err := g.evalCharged(e)
	g.stack = mark
	if err == nil {
		g.stack += bytesOf(v)
	}
	return v, err
}

func (g *golden) evalCharged(e asm.Expr) (*Array, error) {
	if e == nil {
		return nil, errors.New("golden: missing expression")
	}
	in := g.analyse(e)
	if g.over != nil {
		return nil, g.over
	}
	if err := g.failed[e]; err != nil {
		return nil, err
	}
	if v, ok := g.whole[e]; ok { // computed whole by the analysis
		delete(g.whole, e)
		g.held -= bytesOf(v)
		return v, nil
	}
	if rows := in.rows(); in.ok && in.local && rows > blockRows(g.widest(e)) && g.bandsSave(e, rows) {
		v, err := g.evalBanded(e, rows)
		g.forget(e)
		return v, err
	}
	return g.evalNode(e)
}

// evalNode computes e whole, its operands through eval.
func (g *golden) evalNode(e asm.Expr) (*Array, error) {
	switch e := e.(type) {
	case nil:
		return nil, errors.New("golden: missing expression")
	case *asm.Paren:
		return g.eval(e.X)
	case *asm.Num:
		if e.IsFloat {
			return Scalar(e.Float), nil
		}
		return Scalar(float64(e.Int)), nil
	case *asm.Name:
		if g.consts != nil {
			if v, ok := g.consts(e.Name); ok {
				return Scalar(v), nil
			}
		}
		return nil, errAt(e, "unknown name %q in golden expression", e.Name)
	case *asm.GMRef:
		t, err := g.tensor(e)
		if err != nil {
			return nil, err
		}
		if err := g.needShape(e, t.Shape()); err != nil {
			return nil, err
		}
		a, err := t.Load()
		if err != nil {
			return nil, wrapAt(e, err)
		}
		return a, nil
	case *asm.Unary:
		if e.Op != "-" {
			return nil, errAt(e, "operator %s is not defined on tensors", e.Op)
		}
		x, err := g.eval(e.X)
		if err != nil {
			return nil, err
		}
		if err := g.needShape(e, x.Shape); err != nil {
			return nil, err
		}
		return mapArray(x, func(v float64) float64 { return -v }), nil
	case *asm.Binary:
		f := binaryFuncs[e.Op]
		if f == nil {
			return nil, errAt(e, "operator %s is not defined on tensors", e.Op)
		}
		x, err := g.eval(e.X)
		if err != nil {
			return nil, err
		}
		y, err := g.eval(e.Y)
		if err != nil {
			return nil, err
		}
		if err := g.needBroadcast(e, x, y); err != nil {
			return nil, err
		}
		out, err := broadcast(x, y, f)
		if err != nil {
			return nil, errAt(e, "%v", err)
		}
		return out, nil
	case *asm.Call:
		return g.call(e)
	case *asm.Str:
		return nil, errAt(e, "a string is not a tensor (did you mean file(%q)?)", e.Val)
	}
	return nil, errAt(e, "unsupported expression in golden")
}

var binaryFuncs = map[string]func(x, y float64) float64{
	"+":   func(x, y float64) float64 { return x + y },
	"-":   func(x, y float64) float64 { return x - y },
	"*":   func(x, y float64) float64 { return x * y },
	"/":   func(x, y float64) float64 { return x / y },
	"add": func(x, y float64) float64 { return x + y },
	"sub": func(x, y float64) float64 { return x - y },
	"mul": func(x, y float64) float64 { return x * y },
	"div": func(x, y float64) float64 { return x / y },
	"max": math.Max,
	"min": math.Min,
	"lrelu": func(x, s float64) float64 {
		if x < 0 {
			return s * x
		}
		return x
	},
}

var unaryFuncs = map[string]func(float64) float64{
	"exp":   math.Exp,
	"log":   math.Log,
	"sqrt":  math.Sqrt,
	"rsqrt": func(x float64) float64 { return 1 / math.Sqrt(x) },
	"recip": func(x float64) float64 { return 1 / x },
	"abs":   math.Abs,
	"neg":   func(x float64) float64 { return -x },
	"relu": func(x float64) float64 {
		if x < 0 {
			return 0
		}
		return x
	},
	"sigmoid": sigmoid,
	"tanh":    math.Tanh,
	"silu":    func(x float64) float64 { return x * sigmoid(x) },
}

func sigmoid(x float64) float64 {
	// Split by sign so neither branch overflows exp.
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}

// reduction is a fold over one axis: start value, step, and a finish that sees
// the count (for means).
type reduction struct {
	init   float64
	step   func(acc, v float64) float64
	finish func(acc float64, n int) float64
}

var (
	redSum  = reduction{0, func(a, v float64) float64 { return a + v }, nil}
	redMean = reduction{0, func(a, v float64) float64 { return a + v }, func(a float64, n int) float64 { return a / float64(n) }}
	redMax  = reduction{math.Inf(-1), math.Max, nil}
	redMin  = reduction{math.Inf(1), math.Min, nil}
)

// axisFuncs are the row (last axis) and column (second-to-last axis)
// reductions; both keep the reduced axis with size 1, as numpy's
// keepdims=True does, so rowsum(@X) broadcasts back against @X.
var axisFuncs = map[string]struct {
	fromEnd int // 1: last axis, 2: second-to-last
	r       reduction
}{
	"rowsum": {1, redSum}, "rowmax": {1, redMax}, "rowmin": {1, redMin}, "rowmean": {1, redMean},
	"colsum": {2, redSum}, "colmax": {2, redMax}, "colmin": {2, redMin}, "colmean": {2, redMean},
}

// Reduce folds a along axis (counted from 0), keeping it with size 1.
func Reduce(a *Array, axis int, r reduction) (*Array, error) {
	if axis < 0 || axis >= a.rank() {
		return nil, fmt.Errorf("needs an array of rank ≥ %d, got shape %v", a.rank()-axis, a.Shape)
	}
	shape := slices.Clone(a.Shape)
	n := shape[axis]
	shape[axis] = 1
	outer, inner := 1, 1
	for k := 0; k < axis; k++ {
		outer *= a.Shape[k]
	}
	for k := axis + 1; k < a.rank(); k++ {
		inner *= a.Shape[k]
	}
	out := NewArray(shape...)
	for o := 0; o < outer; o++ {
		for i := 0; i < inner; i++ {
			acc := r.init
			for k := 0; k < n; k++ {
				acc = r.step(acc, a.Data[(o*n+k)*inner+i])
			}
			if r.finish != nil {
				acc = r.finish(acc, n)
			}
			out.Data[o*inner+i] = acc
		}
	}
	return out, nil
}

// Softmax is exp(a − max) / sum(exp(a − max)) along the last axis.
func Softmax(a *Array) (*Array, error) {
	if a.rank() == 0 {
		return nil, fmt.Errorf("softmax needs an array of rank ≥ 1, got a scalar")
	}
	n := a.Shape[a.rank()-1]
	out := &Array{Shape: slices.Clone(a.Shape), Data: make([]float64, len(a.Data))}
	for b := 0; b*n < len(a.Data); b++ {
		src, dst := a.Data[b*n:(b+1)*n], out.Data[b*n:(b+1)*n]
		m := math.Inf(-1)
		for _, v := range src {
			m = math.Max(m, v)
		}
		s := 0.0
		for i, v := range src {
			dst[i] = math.Exp(v - m)
			s += dst[i]
		}
		for i := range dst {
			dst[i] /= s
		}
	}
	return out, nil
}

// goldenImpls implements every function of asm.GoldenFuncs, and only those (a
// test holds the two lists equal). The table has already checked the argument
// count when an implementation runs.
var goldenImpls = map[string]func(g *golden, c *asm.Call) (*Array, error){}

func init() {
	for fn, f := range unaryFuncs {
		goldenImpls[fn] = func(g *golden, c *asm.Call) (*Array, error) {
			a, err := g.eval(c.Args[0])
			if err != nil {
				return nil, err
			}
			if err := g.needShape(c, a.Shape); err != nil {
				return nil, err
			}
			return mapArray(a, f), nil
		}
	}
	for fn, f := range binaryFuncs {
		if fn[0] < 'a' {
			continue // an operator, not a function
		}
		goldenImpls[fn] = func(g *golden, c *asm.Call) (*Array, error) {
			a, err := g.arrays(c.Args)
			if err != nil {
				return nil, err
			}
			if err := g.needBroadcast(c, a[0], a[1]); err != nil {
				return nil, err
			}
			out, err := broadcast(a[0], a[1], f)
			if err != nil {
				return nil, errAt(c, "%s: %v", c.Fn, err)
			}
			return out, nil
		}
	}
	goldenImpls["prelu"] = goldenImpls["lrelu"]
	for fn, ax := range axisFuncs {
		goldenImpls[fn] = func(g *golden, c *asm.Call) (*Array, error) {
			a, err := g.eval(c.Args[0])
			if err != nil {
				return nil, err
			}
			if err := g.needReduce(c, a, a.rank()-ax.fromEnd); err != nil {
				return nil, err
			}
			out, err := Reduce(a, a.rank()-ax.fromEnd, ax.r)
			if err != nil {
				return nil, errAt(c, "%s %v", c.Fn, err)
			}
			return out, nil
		}
	}
	whole := func(r reduction) func(g *golden, c *asm.Call) (*Array, error) {
		return func(g *golden, c *asm.Call) (*Array, error) {
			a, err := g.eval(c.Args[0])
			if err != nil {
				return nil, err
			}
			flat := &Array{Shape: []int{len(a.Data)}, Data: a.Data}
			out, err := Reduce(flat, 0, r)
			if err != nil {
				return nil, errAt(c, "%s %v", c.Fn, err)
			}
			return Scalar(out.Data[0]), nil
		}
	}
	goldenImpls["sum"] = whole(redSum)
	goldenImpls["mean"] = whole(redMean)
	goldenImpls["softmax"] = func(g *golden, c *asm.Call) (*Array, error) {
		a, err := g.eval(c.Args[0])
		if err != nil {
			return nil, err
		}
		if err := g.needShape(c, a.Shape); err != nil {
			return nil, err
		}
		out, err := Softmax(a)
		if err != nil {
			return nil, errAt(c, "%v", err)
		}
		return out, nil
	}
	goldenImpls["matmul"] = func(g *golden, c *asm.Call) (*Array, error) {
		a, err := g.arrays(c.Args)
		if err != nil {
			return nil, err
		}
		if err := g.needMatmul(c, a[0], a[1]); err != nil {
			return nil, err
		}
		out, err := Matmul(a[0], a[1])
		if err != nil {
			return nil, errAt(c, "%v", err)
		}
		return out, nil
	}
	goldenImpls["transpose"] = func(g *golden, c *asm.Call) (*Array, error) {
		a, err := g.eval(c.Args[0])
		if err != nil {
			return nil, err
		}
		if err := g.needShape(c, a.Shape); err != nil {
			return nil, err
		}
		return Transpose(a), nil
	}
	goldenImpls["cast"] = (*golden).cast
	goldenImpls["slice"] = (*golden).slice
	goldenImpls["topk"] = func(g *golden, c *asm.Call) (*Array, error) { return g.topk(c, false) }
	goldenImpls["topk_index"] = func(g *golden, c *asm.Call) (*Array, error) { return g.topk(c, true) }
	goldenImpls["concat"] = (*golden).concat
	goldenImpls["file"] = (*golden).file
	goldenImpls["im2col"] = (*golden).im2col
}

func (g *golden) arrays(args []asm.Expr) ([]*Array, error) {
	out := make([]*Array, len(args))
	for i, a := range args {
		v, err := g.eval(a)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

func (g *golden) call(c *asm.Call) (*Array, error) {
	f, ok := asm.LookupGoldenFunc(c.Fn)
	impl := goldenImpls[c.Fn]
	if !ok || impl == nil {
		return nil, errAt(c, "unknown golden function %s (known: %s)", c.Fn, asm.GoldenFuncNames())
	}
	if msg := f.CheckArity(len(c.Args)); msg != "" {
		return nil, errAt(c, "%s", msg)
	}
	return impl(g, c)
}

func (g *golden) slice(c *asm.Call) (*Array, error) {
	a, err := g.eval(c.Args[0])
	if err != nil {
		return nil, err
	}
	var b [4]int
	for i := range b {
		v, err := g.evalInt(c.Args[i+1])
		if err != nil {
			return nil, err
		}
		b[i] = int(v)
	}
	if err := g.needSlice(c, a, b); err != nil {
		return nil, err
	}
	out, err := Slice(a, b[0], b[1], b[2], b[3])
	if err != nil {
		return nil, errAt(c, "%v", err)
	}
	return out, nil
}

func (g *golden) topk(c *asm.Call, index bool) (*Array, error) {
	a, err := g.eval(c.Args[0])
	if err != nil {
		return nil, err
	}
	k, err := g.evalInt(c.Args[1])
	if err != nil {
		return nil, err
	}
	if err := g.needTopK(c, a, k); err != nil {
		return nil, err
	}
	out, err := TopK(a, int(k), index)
	if err != nil {
		return nil, errAt(c, "%v", err)
	}
	return out, nil
}

// TopK keeps the k largest elements of every row (last axis) in descending
// order, or with index their column numbers; equal values keep column order
// and NaN sorts first, as the sort instructions order them.
func TopK(a *Array, k int, index bool) (*Array, error) {
	if len(a.Shape) < 1 {
		return nil, fmt.Errorf("topk needs rank ≥ 1")
	}
	cols := a.Shape[len(a.Shape)-1]
	if k < 0 || k > cols {
		return nil, fmt.Errorf("k = %d outside 0..%d", k, cols)
	}
	shape := append(append([]int(nil), a.Shape[:len(a.Shape)-1]...), k)
	out := NewArray(shape...)
	rows := 0
	if cols > 0 {
		rows = len(a.Data) / cols
	}
	order := make([]int, cols)
	for r := 0; r < rows; r++ {
		row := a.Data[r*cols : (r+1)*cols]
		for i := range order {
			order[i] = i
		}
		sort.SliceStable(order, func(i, j int) bool {
			x, y := row[order[i]], row[order[j]]
			if x != x || y != y {
				return x != x && y == y
			}
			return x > y
		})
		for i := 0; i < k; i++ {
			if index {
				out.Data[r*k+i] = float64(order[i])
			} else {
				out.Data[r*k+i] = row[order[i]]
			}
		}
	}
	return out, nil
}

func (g *golden) concat(c *asm.Call) (*Array, error) {
	x, err := g.eval(c.Args[0])
	if err != nil {
		return nil, err
	}
	y, err := g.eval(c.Args[1])
	if err != nil {
		return nil, err
	}
	axis := int64(0)
	if len(c.Args) == 3 {
		if axis, err = g.evalInt(c.Args[2]); err != nil {
			return nil, err
		}
	}
	if err := g.need(c, int64(len(x.Data))+int64(len(y.Data))); err != nil {
		return nil, err
	}
	out, err := Concat(x, y, int(axis))
	if err != nil {
		return nil, errAt(c, "%v", err)
	}
	return out, nil
}

func (g *golden) file(c *asm.Call) (*Array, error) {
	s, ok := c.Args[0].(*asm.Str)
	if !ok {
		return nil, errAt(c.Args[0], "file takes a string: file(\"x.npy\")")
	}
	if g.readFile == nil {
		return nil, errAt(c, "cannot read files here")
	}
	a, err := g.readFile(s.Val)
	if err != nil {
		return nil, wrapAt(c, err)
	}
	// Charged once read: the caller bounds the file by the tensor it checks.
	if err := g.needShape(c, a.Shape); err != nil {
		return nil, err
	}
	return a, nil
}

// cast(a, dtype[, mode]) rounds every element to dtype.
func (g *golden) cast(c *asm.Call) (*Array, error) {
	a, err := g.eval(c.Args[0])
	if err != nil {
		return nil, err
	}
	if err := g.needShape(c, a.Shape); err != nil {
		return nil, err
	}
	return g.castArray(c, a)
}

func (g *golden) castArray(c *asm.Call, a *Array) (*Array, error) {
	n, ok := c.Args[1].(*asm.Name)
	if !ok {
		return nil, errAt(c.Args[1], "cast wants a dtype name (f16, bf16, f32, i8, …)")
	}
	dt, ok := asm.ParseDType(n.Name)
	if !ok {
		return nil, errAt(n, "unknown dtype %q", n.Name)
	}
	mode := RoundRint
	if len(c.Args) == 3 {
		m, ok := c.Args[2].(*asm.Name)
		if !ok {
			return nil, errAt(c.Args[2], "cast wants a rounding mode (rint round floor ceil trunc odd)")
		}
		if mode, ok = ParseRoundMode(m.Name); !ok {
			return nil, errAt(m, "unknown rounding mode %q", m.Name)
		}
	}
	if castWraps(dt) {
		return mapArray(a, func(v float64) float64 {
			return float64(DecodeInt(dt, EncodeInt(dt, FloatToInt(asm.I64, v, mode))))
		}), nil
	}
	return mapArray(a, func(v float64) float64 { return Round(dt, v, mode) }), nil
}

// castWraps says whether cast to dt wraps as the device's TCVT does. A
// golden value carries no element type, so the rule is the destination's:
// every A2/A3 TCVT into i8, u8 or i16 is a narrowing pair (f16 → i8/u8/i16,
// f32 → i16, i32 → i16: include/pto/npu/a2a3/TCvt.hpp:1216-1227
// kIsNarrowingCvt at 3186c381, the only pairs GenCastCall has into them),
// which runs with saturation off: the value rounds, saturates into int64
// and keeps its low bits (NaN 0, +inf all ones, -inf 0), as the machine's
// tcvt does (cvtWraps). Into i32 the float sources saturate (only i64 → i32
// wraps, and a golden value from an i64 past i32 is rare), so cast
// saturates; u16, u32 and u64 have no TCVT pair and saturate too.
func castWraps(dt asm.DType) bool {
	return dt == asm.I8 || dt == asm.U8 || dt == asm.I16
}

// evalInt evaluates an integer argument: literals, constants, + - * / % and unary minus.
func (g *golden) evalInt(e asm.Expr) (int64, error) {
	switch e := e.(type) {
	case *asm.Paren:
		return g.evalInt(e.X)
	case *asm.Num:
		if e.IsFloat {
			if e.Float != math.Trunc(e.Float) || math.Abs(e.Float) > 1<<53 {
				return 0, errAt(e, "want an integer, got %s", e.Text)
			}
			return int64(e.Float), nil
		}
		return e.Int, nil
	case *asm.Name:
		if g.consts != nil {
			if v, ok := g.consts(e.Name); ok {
				if v != math.Trunc(v) || math.Abs(v) > 1<<53 {
					return 0, errAt(e, "want an integer, constant %s is %v", e.Name, v)
				}
				return int64(v), nil
			}
		}
		return 0, errAt(e, "unknown constant %q", e.Name)
	case *asm.Unary:
		x, err := g.evalInt(e.X)
		if err != nil {
			return 0, err
		}
		if e.Op == "-" {
			return -x, nil
		}
		return 0, errAt(e, "operator %s is not allowed here", e.Op)
	case *asm.Binary:
		x, err := g.evalInt(e.X)
		if err != nil {
			return 0, err
		}
		y, err := g.evalInt(e.Y)
		if err != nil {
			return 0, err
		}
		switch e.Op {
		case "+":
			return x + y, nil
		case "-":
			return x - y, nil
		case "*":
			return x * y, nil
		case "/", "%":
			if y == 0 {
				return 0, errAt(e, "division by zero")
			}
			if e.Op == "/" {
				return x / y, nil
			}
			return x % y, nil
		}
		return 0, errAt(e, "operator %s is not allowed here", e.Op)
	case nil:
		return 0, errors.New("golden: missing integer")
	}
	return 0, errAt(e, "want an integer")
}

func mapArray(a *Array, f func(float64) float64) *Array {
	out := &Array{Shape: slices.Clone(a.Shape), Data: make([]float64, len(a.Data))}
	for i, v := range a.Data {
		out.Data[i] = f(v)
	}
	return out
}

// broadcast applies f elementwise under numpy broadcasting rules.
func broadcast(x, y *Array, f func(a, b float64) float64) (*Array, error) {
	if slices.Equal(x.Shape, y.Shape) {
		out := &Array{Shape: slices.Clone(x.Shape), Data: make([]float64, len(x.Data))}
		for i := range out.Data {
			out.Data[i] = f(x.Data[i], y.Data[i])
		}
		return out, nil
	}
	if len(y.Data) == 1 && y.rank() <= x.rank() {
		s := y.Data[0]
		return mapArray(x, func(v float64) float64 { return f(v, s) }), nil
	}
	if len(x.Data) == 1 && x.rank() <= y.rank() {
		s := x.Data[0]
		return mapArray(y, func(v float64) float64 { return f(s, v) }), nil
	}
	r := max(x.rank(), y.rank())
	shape := make([]int, r)
	xs, ys := make([]int, r), make([]int, r) // broadcast strides (0 on stretched dims)
	sx, sy := 1, 1
	for k := r - 1; k >= 0; k-- {
		dx, dy := 1, 1
		if i := k - (r - x.rank()); i >= 0 {
			dx = x.Shape[i]
		}
		if i := k - (r - y.rank()); i >= 0 {
			dy = y.Shape[i]
		}
		switch {
		case dx == dy:
			shape[k] = dx
		case dx == 1:
			shape[k] = dy
		case dy == 1:
			shape[k] = dx
		default:
			return nil, fmt.Errorf("shapes %v and %v do not broadcast", x.Shape, y.Shape)
		}
		if dx != 1 {
			xs[k] = sx
		}
		if dy != 1 {
			ys[k] = sy
		}
		sx *= dx
		sy *= dy
	}
	out := NewArray(shape...)
	idx := make([]int, r)
	ox, oy := 0, 0
	for i := range out.Data {
		out.Data[i] = f(x.Data[ox], y.Data[oy])
		for k := r - 1; k >= 0; k-- {
			idx[k]++
			ox += xs[k]
			oy += ys[k]
			if idx[k] < shape[k] {
				break
			}
			ox -= idx[k] * xs[k]
			oy -= idx[k] * ys[k]
			idx[k] = 0
		}
	}
	return out, nil
}

// Transpose swaps the last two dimensions (a 1-D or scalar array is returned as is).
func Transpose(a *Array) *Array {
	if a.rank() < 2 {
		return a
	}
	r := a.rank()
	rows, cols := a.Shape[r-2], a.Shape[r-1]
	shape := slices.Clone(a.Shape)
	shape[r-2], shape[r-1] = cols, rows
	out := NewArray(shape...)
	mat := rows * cols
	for b := 0; b*mat < len(a.Data); b++ {
		src, dst := a.Data[b*mat:], out.Data[b*mat:]
		for i := 0; i < rows; i++ {
			for j := 0; j < cols; j++ {
				dst[j*rows+i] = src[i*cols+j]
			}
		}
	}
	return out
}

// Slice takes rows [r0, r1) and columns [c0, c1) of the last two dimensions.
func Slice(a *Array, r0, r1, c0, c1 int) (*Array, error) {
	if a.rank() < 2 {
		return nil, fmt.Errorf("slice needs a matrix, got shape %v", a.Shape)
	}
	r := a.rank()
	rows, cols := a.Shape[r-2], a.Shape[r-1]
	if r0 < 0 || r0 > r1 || r1 > rows || c0 < 0 || c0 > c1 || c1 > cols {
		return nil, fmt.Errorf("slice [%d:%d, %d:%d] outside shape %v", r0, r1, c0, c1, a.Shape)
	}
	shape := slices.Clone(a.Shape)
	shape[r-2], shape[r-1] = r1-r0, c1-c0
	out := NewArray(shape...)
	k := 0
	for b := 0; b*rows*cols < len(a.Data); b++ {
		for i := r0; i < r1; i++ {
			base := b*rows*cols + i*cols
			k += copy(out.Data[k:], a.Data[base+c0:base+c1])
		}
	}
	return out, nil
}

// Concat joins x and y along axis (negative counts from the end).
func Concat(x, y *Array, axis int) (*Array, error) {
	r := x.rank()
	if r == 0 || y.rank() != r {
		return nil, fmt.Errorf("concat needs arrays of equal rank ≥ 1, got shapes %v and %v", x.Shape, y.Shape)
	}
	if axis < 0 {
		axis += r
	}
	if axis < 0 || axis >= r {
		return nil, fmt.Errorf("concat axis %d out of range for rank %d", axis, r)
	}
	for k := 0; k < r; k++ {
		if k != axis && x.Shape[k] != y.Shape[k] {
			return nil, fmt.Errorf("concat along axis %d: shapes %v and %v differ elsewhere", axis, x.Shape, y.Shape)
		}
	}
	outer := 1
	for k := 0; k < axis; k++ {
		outer *= x.Shape[k]
	}
	inner := 1
	for k := axis + 1; k < r; k++ {
		inner *= x.Shape[k]
	}
	shape := slices.Clone(x.Shape)
	shape[axis] += y.Shape[axis]
	out := NewArray(shape...)
	bx, by := x.Shape[axis]*inner, y.Shape[axis]*inner
	k := 0
	for o := 0; o < outer; o++ {
		k += copy(out.Data[k:], x.Data[o*bx:(o+1)*bx])
		k += copy(out.Data[k:], y.Data[o*by:(o+1)*by])
	}
	return out, nil
}

// Tolerance bounds |got − want| for one element: Tol·max(1, |want|) + ATol +
// RTol·|want|. A check sets Tol (`tol T`: absolute for values up to 1, relative
// above, the shape of pto-isa's ResultCmp) or RTol and ATol (`rtol R atol A`:
// numpy's allclose, |got − want| ≤ A + R·|want|), never both; the zero value is
// an exact comparison.
type Tolerance struct {
	Tol, RTol, ATol float64
}

// Bound is the largest |got − want| that passes at want.
func (t Tolerance) Bound(want float64) float64 {
	w := math.Abs(want)
	return t.Tol*math.Max(1, w) + t.ATol + t.RTol*w
}

func (t Tolerance) String() string {
	switch {
	case t.Tol != 0:
		return fmt.Sprintf("tol %g", t.Tol)
	case t.RTol != 0 || t.ATol != 0:
		return fmt.Sprintf("rtol %g atol %g", t.RTol, t.ATol)
	}
	return "exact"
}

// Passes reports whether got is within tolerance of want. Equal values pass
// (so matching infinities do); a NaN in got, or in want alone, fails (numpy's
// allclose with equal_nan=False).
func (t Tolerance) Passes(got, want float64) bool {
	if got == want {
		return true
	}
	return math.Abs(got-want) <= t.Bound(want) // false for any NaN
}

// Compare checks got against want element by element under tol. Arrays of
// different element counts fail with firstBad 0. maxAbsErr is the largest
// |got − want| seen (+Inf for NaN or infinite mismatches); firstBad is the flat
// index of the first failing element, or −1.
func Compare(got, want *Array, tol Tolerance) (ok bool, maxAbsErr float64, firstBad int) {
	if len(got.Data) != len(want.Data) {
		return false, math.Inf(1), 0
	}
	c := NewComparison(tol)
	c.Add(got.Data, want.Data)
	return c.OK(), c.MaxAbsErr, c.FirstBad
}

// CannotFail reports whether a constant output of v (0: a kernel that wrote
// zeros or nothing into a zeroed tensor; the poison value: a kernel that never
// wrote) would pass the check of want under tol although it is wrong: every
// expected value is within tolerance of v, and one at least differs from it.
// (When every expected value is exactly v, v is the right answer, and the check
// can still fail any other output.)
func CannotFail(want *Array, tol Tolerance, v float64) bool {
	c := NewComparison(tol, v)
	c.AddWant(want.Data)
	return c.CannotFail(0)
}

// PoisonValue is what a never-written element of dt reads as: NaN for the
// float dtypes, the 0x7F… sentinel for integers (PoisonBits).
func PoisonValue(dt asm.DType) float64 { return Decode(dt, PoisonBits(dt)) }

func (g *golden) im2col(c *asm.Call) (*Array, error) {
	x, err := g.eval(c.Args[0])
	if err != nil {
		return nil, err
	}
	var v [7]int
	for i := range v {
		n, err := g.evalInt(c.Args[i+1])
		if err != nil {
			return nil, err
		}
		v[i] = int(n)
	}
	val, err := g.eval(c.Args[8])
	if err != nil {
		return nil, err
	}
	if len(val.Data) != 1 {
		return nil, errAt(c, "im2col: the padding value must be one number")
	}
	if n, err := im2colElems(x, v[0], v[1], v[2], v[3], v[4], v[5], v[6]); err == nil {
		if err := g.need(c, n); err != nil {
			return nil, err
		}
	}
	out, err := Im2col(x, v[0], v[1], v[2], v[3], v[4], v[5], v[6], val.Data[0])
	if err != nil {
		return nil, errAt(c, "%v", err)
	}
	return out, nil
}

// Im2col lays out the patches of x, an [h·w, C] map whose row h'·w + w' is
// pixel (h', w'), for a kh×kw filter with the given stride, dilation and
// padding on every side: row oh·outW + ow of the result is output pixel
// (oh, ow), column (i·kw + j)·C + c its tap (i, j) of channel c, value
// where the tap falls in the padding.
func Im2col(x *Array, h, w, kh, kw, stride, dil, pad int, value float64) (*Array, error) {
	outH, outW, err := im2colShape(x, h, w, kh, kw, stride, dil, pad)
	if err != nil {
		return nil, err
	}
	if n, _ := im2colElems(x, h, w, kh, kw, stride, dil, pad); n > 1<<40 {
		return nil, fmt.Errorf("im2col: the patches would take %d elements", n)
	}
	ch := x.Shape[1]
	out := NewArray(outH*outW, kh*kw*ch)
	k := 0
	for oh := 0; oh < outH; oh++ {
		for ow := 0; ow < outW; ow++ {
			for i := 0; i < kh; i++ {
				for j := 0; j < kw; j++ {
					ih, iw := oh*stride+i*dil-pad, ow*stride+j*dil-pad
					for cc := 0; cc < ch; cc++ {
						out.Data[k] = value
						if ih >= 0 && ih < h && iw >= 0 && iw < w {
							out.Data[k] = x.Data[(ih*w+iw)*ch+cc]
						}
						k++
					}
				}
			}
		}
	}
	return out, nil
}

// im2colShape checks Im2col's arguments and returns its output pixels.
func im2colShape(x *Array, h, w, kh, kw, stride, dil, pad int) (outH, outW int, err error) {
	if len(x.Shape) != 2 || x.Shape[0] != h*w {
		return 0, 0, fmt.Errorf("im2col: the map is %v, want [%d, C] (h·w rows)", x.Shape, h*w)
	}
	if h < 1 || w < 1 || kh < 1 || kw < 1 || stride < 1 || dil < 1 || pad < 0 {
		return 0, 0, fmt.Errorf("im2col: sizes, filter, stride and dilation must be ≥ 1, pad ≥ 0")
	}
	// In int64 and capped: a padding or filter of 2^40 must not wrap.
	const most = 1 << 40
	ph, pw := int64(h)+2*min(int64(pad), most), int64(w)+2*min(int64(pad), most)
	oh := (ph-min(int64(dil), most)*(min(int64(kh), most)-1)-1)/int64(stride) + 1
	ow := (pw-min(int64(dil), most)*(min(int64(kw), most)-1)-1)/int64(stride) + 1
	if oh < 1 || ow < 1 {
		return 0, 0, fmt.Errorf("im2col: a %d×%d filter does not fit the padded %d×%d map", kh, kw, ph, pw)
	}
	if oh > most || ow > most {
		return 0, 0, fmt.Errorf("im2col: %d×%d output pixels", oh, ow)
	}
	return int(oh), int(ow), nil
}

// im2colElems is the element count of Im2col's result (saturating).
func im2colElems(x *Array, h, w, kh, kw, stride, dil, pad int) (int64, error) {
	oh, ow, err := im2colShape(x, h, w, kh, kw, stride, dil, pad)
	if err != nil {
		return 0, err
	}
	return elemsCap([]int{oh, ow, kh, kw, x.Shape[1]}), nil
}
