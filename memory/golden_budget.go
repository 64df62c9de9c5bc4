package memory

import (
	"fmt"
	"math"
	"slices"

	"github.com/ptoasm/ptoasm/asm"
)

// GoldenLimitError is a golden evaluation stopped before it allocated a
// value that would bring the float64 values it holds past its limit
// (GoldenSource.Limit): the caller's memory budget, which a flag raises.
type GoldenLimitError struct {
	At    asm.Node // the sub-expression whose value did not fit
	Bytes int64    // that value's bytes
	Held  int64    // what the evaluation would hold with it
	Limit int64
}

func (e *GoldenLimitError) Error() string {
	return fmt.Sprintf("%s: the evaluation would hold %s, over its limit of %s", e.What(), asm.FormatBytes(e.Held), asm.FormatBytes(e.Limit))
}

// What names the value that did not fit and its size.
func (e *GoldenLimitError) What() string {
	return fmt.Sprintf("%s takes %s of float64 values", exprBrief(e.At), asm.FormatBytes(e.Bytes))
}

// exprBrief is n's source text, cut to a length a diagnostic can quote.
func exprBrief(n asm.Node) string {
	e, ok := n.(asm.Expr)
	if !ok {
		return "a value"
	}
	s := []rune(asm.ExprString(e))
	if len(s) > 60 {
		return string(s[:57]) + "..."
	}
	return string(s)
}

// elemsCap is the element count of shape, saturating at 1<<59 (so that
// 8 bytes an element still fits an int64) for shapes no one could hold.
func elemsCap(shape []int) int64 {
	n := int64(1)
	for _, d := range shape {
		n = mulElems(n, int64(d))
	}
	return n
}

func mulElems(a, b int64) int64 {
	const most = 1 << 59
	if a <= 0 || b <= 0 {
		return 0
	}
	if a > most/b {
		return most
	}
	return a * b
}

// The evaluation's accounting. Every float64 value it allocates is charged
// before it is allocated: g.stack holds the values in flight (an operand
// waits on the stack while its sibling is computed; eval and evalRows
// release their operands when they return), g.held the values kept for
// later (g.whole, a band's shared sub-expressions). Their sum is what the
// evaluation holds, as its shapes decide, so a verdict on the limit never
// depends on the garbage collector or on timing.

// need charges a value of n elements at node at, or refuses it.
func (g *golden) need(at asm.Node, n int64) error {
	b := mulElems(n, 8)
	if g.limit > 0 && b > g.limit-g.stack-g.held {
		// Kept: it ends the evaluation, though the analysis that met it
		// would leave the rest to a whole evaluation.
		g.over = &GoldenLimitError{At: at, Bytes: b, Held: min(g.stack+g.held+b, 1<<62), Limit: g.limit}
		return g.over
	}
	g.stack += b
	return nil
}

// needShape is need for a value of shape.
func (g *golden) needShape(at asm.Node, shape []int) error { return g.need(at, elemsCap(shape)) }

func bytesOf(a *Array) int64 {
	if a == nil {
		return 0
	}
	return int64(len(a.Data)) * 8
}

// A Comparison is Compare and CannotFail over values that come a band at a
// time, in order: a check compares a band of the output with the same band
// of the expected values and holds neither whole.
type Comparison struct {
	tol Tolerance
	n   int // elements compared so far
	// MaxAbsErr is the largest |got − want| (+Inf for NaN or infinite
	// mismatches); FirstBad the flat index of the first element outside the
	// tolerance, or −1, and BadGot, BadWant its values.
	MaxAbsErr       float64
	FirstBad        int
	BadGot, BadWant float64
	consts          []constCheck
	wants           int // expected values seen (AddWant included)
}

// constCheck is CannotFail's state for one constant output v.
type constCheck struct {
	v               float64
	outside, differ bool
}

// NewComparison starts a comparison under tol that also asks whether a
// constant output of each of consts would pass (CannotFail).
func NewComparison(tol Tolerance, consts ...float64) *Comparison {
	c := &Comparison{tol: tol, FirstBad: -1}
	for _, v := range consts {
		c.consts = append(c.consts, constCheck{v: v})
	}
	return c
}

// Add compares the next len(want) elements: got[i] against want[i].
func (c *Comparison) Add(got, want []float64) {
	got = got[:len(want)]
	for i, w := range want {
		g := got[i]
		if g == w {
			continue
		}
		d := math.Abs(g - w)
		if d != d { // a NaN on either side
			d = math.Inf(1)
		}
		c.MaxAbsErr = math.Max(c.MaxAbsErr, d)
		if c.FirstBad < 0 && !c.tol.Passes(g, w) {
			c.FirstBad, c.BadGot, c.BadWant = c.n+i, g, w
		}
	}
	c.n += len(want)
	c.AddWant(want)
}

// AddWant feeds the next expected values to CannotFail alone (a check
// whose output has the wrong number of elements compares none).
func (c *Comparison) AddWant(want []float64) {
	c.wants += len(want)
	for k := range c.consts {
		cc := &c.consts[k]
		if cc.outside {
			continue
		}
		for _, w := range want {
			if !c.tol.Passes(cc.v, w) {
				cc.outside = true
				break
			}
			cc.differ = cc.differ || w != cc.v
		}
	}
}

// CannotFail is CannotFail(want, tol, consts[k]) over the values seen.
func (c *Comparison) CannotFail(k int) bool {
	return !c.consts[k].outside && c.consts[k].differ
}

// OK reports whether every element compared passed.
func (c *Comparison) OK() bool { return c.FirstBad < 0 }

// The charges of the operations whose result is not their operand's shape;
// arguments that the operation refuses charge nothing (its error follows).

func (g *golden) needBroadcast(at asm.Node, x, y *Array) error {
	shape, ok := broadcastShape(x.Shape, y.Shape)
	if !ok {
		return nil
	}
	return g.needShape(at, shape)
}

func (g *golden) needReduce(at asm.Node, a *Array, axis int) error {
	if axis < 0 || axis >= a.rank() || a.Shape[axis] == 0 {
		return nil
	}
	return g.need(at, int64(len(a.Data)/a.Shape[axis]))
}

func (g *golden) needMatmul(at asm.Node, a, b *Array) error {
	if a.rank() != 2 || b.rank() != 2 {
		return nil
	}
	return g.needShape(at, []int{a.Shape[0], b.Shape[1]})
}

func (g *golden) needSlice(at asm.Node, a *Array, b [4]int) error {
	if a.rank() < 2 || !sliceFits(a.Shape, b) {
		return nil
	}
	shape := slices.Clone(a.Shape)
	shape[len(shape)-2], shape[len(shape)-1] = b[1]-b[0], b[3]-b[2]
	return g.needShape(at, shape)
}

func (g *golden) needTopK(at asm.Node, a *Array, k int64) error {
	if a.rank() < 1 || k < 0 || k > int64(a.Shape[a.rank()-1]) {
		return nil
	}
	shape := slices.Clone(a.Shape)
	shape[len(shape)-1] = int(k)
	return g.needShape(at, shape)
}

// sliceFits reports whether Slice takes rows b[0]:b[1] and columns b[2]:b[3]
// of a value of shape.
func sliceFits(shape []int, b [4]int) bool {
	r := len(shape)
	return r >= 2 && b[0] >= 0 && b[0] <= b[1] && b[1] <= shape[r-2] && b[2] >= 0 && b[2] <= b[3] && b[3] <= shape[r-1]
}
