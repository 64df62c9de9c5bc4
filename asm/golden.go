package asm

import (
	"fmt"
	"io"
	"strings"
)

// GoldenArg is the kind of one argument of a golden function.
type GoldenArg int

const (
	// GArray is a golden expression (a tensor, a constant, a number).
	GArray GoldenArg = iota
	// GInt is an integer expression over constants (slice bounds, an axis).
	GInt
	// GDType is a dtype word (f16, bf16, f32, i8, …).
	GDType
	// GRound is a rounding-mode word (rint round floor ceil trunc odd).
	GRound
	// GString is a string literal (a file name).
	GString
)

// GoldenFunc describes one function of golden expressions. The table is the
// single list both sides use: the assembler checks names, arity and argument
// kinds against it, and memory.EvalGolden implements exactly these names (a test
// there holds the two equal), so a function cannot assemble and then fail to
// evaluate, or the reverse.
type GoldenFunc struct {
	Name string
	// Args are the positional arguments; the last Optional of them may be left out.
	Args     []GoldenArg
	Optional int
	// Sig and Doc are the signature and one line for docs/language.md.
	Sig string
	Doc string
}

// MinArgs and MaxArgs bound the argument count.
func (f *GoldenFunc) MinArgs() int { return len(f.Args) - f.Optional }
func (f *GoldenFunc) MaxArgs() int { return len(f.Args) }

var (
	a1 = []GoldenArg{GArray}
	a2 = []GoldenArg{GArray, GArray}
)

var goldenFuncs = []GoldenFunc{
	{Name: "matmul", Args: a2, Sig: "matmul(a, b)", Doc: "matrix product in float64 (wrap it in cast(…, f32) to round like an fp32 result)"},
	{Name: "transpose", Args: a1, Sig: "transpose(a)", Doc: "swap the last two axes"},
	{Name: "add", Args: a2, Sig: "add(a, b)", Doc: "a + b (numpy broadcasting, as for the operators + - * /)"},
	{Name: "sub", Args: a2, Sig: "sub(a, b)", Doc: "a − b"},
	{Name: "mul", Args: a2, Sig: "mul(a, b)", Doc: "a · b"},
	{Name: "div", Args: a2, Sig: "div(a, b)", Doc: "a / b"},
	{Name: "max", Args: a2, Sig: "max(a, b)", Doc: "elementwise maximum"},
	{Name: "min", Args: a2, Sig: "min(a, b)", Doc: "elementwise minimum"},
	{Name: "lrelu", Args: a2, Sig: "lrelu(a, s)", Doc: "a where a ≥ 0, else s·a"},
	{Name: "prelu", Args: a2, Sig: "prelu(a, s)", Doc: "the same as lrelu (s may be a tensor that broadcasts)"},
	{Name: "exp", Args: a1, Sig: "exp(a)", Doc: "eᵃ"},
	{Name: "log", Args: a1, Sig: "log(a)", Doc: "natural logarithm"},
	{Name: "sqrt", Args: a1, Sig: "sqrt(a)", Doc: "square root"},
	{Name: "rsqrt", Args: a1, Sig: "rsqrt(a)", Doc: "1 / sqrt(a)"},
	{Name: "recip", Args: a1, Sig: "recip(a)", Doc: "1 / a"},
	{Name: "abs", Args: a1, Sig: "abs(a)", Doc: "|a|"},
	{Name: "neg", Args: a1, Sig: "neg(a)", Doc: "−a"},
	{Name: "relu", Args: a1, Sig: "relu(a)", Doc: "max(a, 0)"},
	{Name: "sigmoid", Args: a1, Sig: "sigmoid(a)", Doc: "1 / (1 + e⁻ᵃ)"},
	{Name: "tanh", Args: a1, Sig: "tanh(a)", Doc: "hyperbolic tangent"},
	{Name: "silu", Args: a1, Sig: "silu(a)", Doc: "a · sigmoid(a)"},
	{Name: "softmax", Args: a1, Sig: "softmax(a)", Doc: "along the last axis: exp(a − rowmax(a)) / rowsum(exp(a − rowmax(a)))"},
	{Name: "sum", Args: a1, Sig: "sum(a)", Doc: "the sum of every element, a scalar"},
	{Name: "mean", Args: a1, Sig: "mean(a)", Doc: "the mean of every element, a scalar"},
	{Name: "rowsum", Args: a1, Sig: "rowsum(a)", Doc: "sum along the last axis, kept as size 1: [R, C] → [R, 1] (numpy a.sum(-1, keepdims=True))"},
	{Name: "rowmax", Args: a1, Sig: "rowmax(a)", Doc: "maximum along the last axis, [R, C] → [R, 1]"},
	{Name: "rowmin", Args: a1, Sig: "rowmin(a)", Doc: "minimum along the last axis, [R, C] → [R, 1]"},
	{Name: "rowmean", Args: a1, Sig: "rowmean(a)", Doc: "mean along the last axis, [R, C] → [R, 1]"},
	{Name: "colsum", Args: a1, Sig: "colsum(a)", Doc: "sum along the second-to-last axis, kept as size 1: [R, C] → [1, C] (numpy a.sum(-2, keepdims=True))"},
	{Name: "colmax", Args: a1, Sig: "colmax(a)", Doc: "maximum along the second-to-last axis, [R, C] → [1, C]"},
	{Name: "colmin", Args: a1, Sig: "colmin(a)", Doc: "minimum along the second-to-last axis, [R, C] → [1, C]"},
	{Name: "colmean", Args: a1, Sig: "colmean(a)", Doc: "mean along the second-to-last axis, [R, C] → [1, C]"},
	{Name: "topk", Args: []GoldenArg{GArray, GInt}, Sig: "topk(a, k)", Doc: "the k largest of each row (last axis), descending: [R, C] → [R, k] (numpy -sort(-a, -1)[..., :k])"},
	{Name: "topk_index", Args: []GoldenArg{GArray, GInt}, Sig: "topk_index(a, k)", Doc: "their column indices, the lower first among equals (numpy argsort(-a, -1, kind='stable')[..., :k])"},
	{Name: "cast", Args: []GoldenArg{GArray, GDType, GRound}, Optional: 1, Sig: "cast(a, dtype[, rounding])", Doc: "round every element to dtype (rounding: rint round floor ceil trunc odd; default rint); into i8, u8 and i16 the rounded value wraps to its low bits as A2/A3's TCVT does (each of its pairs into them is narrowing, saturation off: NaN 0, +inf all ones), into other integers it saturates"},
	{Name: "slice", Args: []GoldenArg{GArray, GInt, GInt, GInt, GInt}, Sig: "slice(a, r0, r1, c0, c1)", Doc: "rows [r0, r1) and columns [c0, c1) of the last two axes"},
	{Name: "concat", Args: []GoldenArg{GArray, GArray, GInt}, Optional: 1, Sig: "concat(a, b[, axis])", Doc: "join along axis (default 0; negative counts from the end)"},
	{Name: "im2col", Args: []GoldenArg{GArray, GInt, GInt, GInt, GInt, GInt, GInt, GInt, GArray}, Sig: "im2col(x, h, w, kh, kw, stride, dilation, pad, value)", Doc: "the patches of an [h·w, C] map (row = pixel, row-major) for a kh×kw filter: [outH·outW, kh·kw·C], columns in (i, j, c) order, value where a tap falls in the padding (TIMG2COL's layout for one C0 block)"},
	{Name: "file", Args: []GoldenArg{GString}, Sig: `file("x.npy")`, Doc: "a .npy or raw little-endian .bin file, relative to the program"},
}

var goldenIndex = func() map[string]*GoldenFunc {
	m := make(map[string]*GoldenFunc, len(goldenFuncs))
	for i := range goldenFuncs {
		m[goldenFuncs[i].Name] = &goldenFuncs[i]
	}
	return m
}()

// GoldenFuncs returns the functions of golden expressions, in documentation order.
func GoldenFuncs() []GoldenFunc { return goldenFuncs }

// LookupGoldenFunc finds a golden function by name.
func LookupGoldenFunc(name string) (*GoldenFunc, bool) {
	f, ok := goldenIndex[name]
	return f, ok
}

// GoldenFuncNames lists the names, for error messages.
func GoldenFuncNames() string {
	names := make([]string, len(goldenFuncs))
	for i, f := range goldenFuncs {
		names[i] = f.Name
	}
	return strings.Join(names, " ")
}

// CheckArity reports a wrong argument count for f in a call, or "".
func (f *GoldenFunc) CheckArity(n int) string {
	if n >= f.MinArgs() && n <= f.MaxArgs() {
		return ""
	}
	want := fmt.Sprint(f.MaxArgs())
	if f.Optional > 0 {
		want = fmt.Sprintf("%d or %d", f.MinArgs(), f.MaxArgs())
	}
	return fmt.Sprintf("%s takes %s arguments, got %d: %s", f.Name, want, n, f.Sig)
}

// WriteGoldenDoc writes the golden-function table of docs/language.md.
func WriteGoldenDoc(w io.Writer) {
	fmt.Fprint(w, "| function | meaning |\n|---|---|\n")
	for _, f := range goldenFuncs {
		fmt.Fprintf(w, "| `%s` | %s |\n", f.Sig, f.Doc)
	}
}
