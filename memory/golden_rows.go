package memory

import (
	"errors"
	"strconv"

	"github.com/ptoasm/ptoasm/asm"
)

// A Tensor is a golden expression's view of a GM tensor: its shape, and its
// values decoded on demand, whole or (rank 2) a band of rows, so that a
// row-local part of an expression is evaluated a band at a time and never
// holds a float64 copy of a whole tensor or intermediate.
type Tensor interface {
	Shape() []int
	Load() (*Array, error)
	// Rows are rows [r0, r1) of a rank-2 tensor.
	Rows(r0, r1 int) (*Array, error)
}

// ArrayTensor is a Tensor over values already in memory.
type ArrayTensor struct{ A *Array }

func (t ArrayTensor) Shape() []int          { return t.A.Shape }
func (t ArrayTensor) Load() (*Array, error) { return t.A, nil }

func (t ArrayTensor) Rows(r0, r1 int) (*Array, error) { return sliceRows(t.A, r0, r1), nil }

// sliceRows is rows [r0, r1) of a rank-2 array (shared, not copied).
func sliceRows(a *Array, r0, r1 int) *Array {
	c := a.Shape[1]
	return &Array{Shape: []int{r1 - r0, c}, Data: a.Data[r0*c : r1*c : r1*c]}
}

// GoldenBlockElems bounds the elements of one band of a row-local
// intermediate (4 MiB of float64): a band is as many rows as fit, and a
// multiple of matmulBand rows so that a band's matmul still spreads over
// the cores. Variable for tests.
var GoldenBlockElems = 1 << 19

// rowInfo is what the analysis of a golden sub-expression found: its shape,
// and whether row r of its value depends only on row r of its row-local
// operands (local), so that it can be computed a band of rows at a time.
type rowInfo struct {
	shape []int
	local bool
	ok    bool // the shape is known (else the whole evaluation reports why)
}

func (i rowInfo) rows() int {
	if len(i.shape) != 2 {
		return -1
	}
	return i.shape[0]
}

// analyse infers e's shape and row locality without computing row-local
// values. A sub-expression that is not row-local (transpose, colsum, a
// file, …) is evaluated whole here and its value kept in g.whole for the
// bands to read; an error stops the analysis there, and the whole
// evaluation then meets it in the same left-to-right order as before.
func (g *golden) analyse(e asm.Expr) rowInfo {
	if in, ok := g.info[e]; ok {
		return in
	}
	in := g.analyseNode(e)
	g.info[e] = in
	return in
}

func (g *golden) analyseNode(e asm.Expr) rowInfo {
	switch e := e.(type) {
	case *asm.Paren:
		return g.analyse(e.X)
	case *asm.Num, *asm.Name:
		return rowInfo{shape: []int{}, ok: true}
	case *asm.GMRef:
		t, err := g.tensor(e)
		if err != nil || t == nil {
			return rowInfo{}
		}
		return rowInfo{shape: t.Shape(), local: len(t.Shape()) == 2, ok: true}
	case *asm.Unary:
		if e.Op != "-" {
			return rowInfo{}
		}
		return g.analyse(e.X)
	case *asm.Binary:
		if binaryFuncs[e.Op] == nil {
			return rowInfo{}
		}
		return g.analyseBroadcast(e.X, e.Y)
	case *asm.Call:
		f, ok := asm.LookupGoldenFunc(e.Fn)
		if !ok || goldenImpls[e.Fn] == nil || f.CheckArity(len(e.Args)) != "" {
			return rowInfo{}
		}
		switch {
		case unaryFuncs[e.Fn] != nil || e.Fn == "cast":
			return g.analyse(e.Args[0])
		case binaryFuncs[e.Fn] != nil || e.Fn == "prelu":
			return g.analyseBroadcast(e.Args[0], e.Args[1])
		case axisFuncs[e.Fn].fromEnd == 1:
			a := g.analyse(e.Args[0])
			if !a.ok || !a.local || a.rows() < 0 {
				return g.opaque(e, a)
			}
			return rowInfo{shape: []int{a.shape[0], 1}, local: true, ok: true}
		case e.Fn == "softmax":
			a := g.analyse(e.Args[0])
			if !a.ok || !a.local || a.rows() < 0 {
				return g.opaque(e, a)
			}
			return a
		case e.Fn == "topk" || e.Fn == "topk_index":
			a := g.analyse(e.Args[0])
			k, err := g.evalInt(e.Args[1])
			if !a.ok || !a.local || a.rows() < 0 || err != nil || k < 0 || int(k) > a.shape[1] {
				return g.opaque(e, a)
			}
			return rowInfo{shape: []int{a.shape[0], int(k)}, local: true, ok: true}
		case e.Fn == "slice":
			// Rows r0:r1 of a row-local value: band [b0, b1) of the slice
			// is band [r0+b0, r0+b1) of its operand (topk's
			// topk(slice(@X, …))).
			a := g.analyse(e.Args[0])
			b, err := g.sliceBounds(e)
			if !a.ok || !a.local || a.rows() < 0 || err != nil || !sliceFits(a.shape, b) {
				return g.opaque(e, a)
			}
			return rowInfo{shape: []int{b[1] - b[0], b[3] - b[2]}, local: true, ok: true}
		case e.Fn == "concat":
			return g.analyseConcat(e)
		case e.Fn == "matmul":
			a := g.analyse(e.Args[0])
			if !a.ok || !a.local || a.rows() < 0 {
				return g.opaque(e, a)
			}
			b := g.analyse(e.Args[1])
			if !b.ok || len(b.shape) != 2 || b.shape[0] != a.shape[1] {
				return g.opaque(e, b)
			}
			return rowInfo{shape: []int{a.shape[0], b.shape[1]}, local: true, ok: true}
		}
	}
	return g.opaque(e, rowInfo{ok: true})
}

// opaque evaluates e whole (its value kept for the bands), unless the
// analysis of an operand already failed.
func (g *golden) opaque(e asm.Expr, operand rowInfo) rowInfo {
	if !operand.ok {
		return rowInfo{}
	}
	mark := g.stack
	v, err := g.evalNode(e)
	g.stack = mark
	if err != nil {
		g.failed[e] = err
		return rowInfo{}
	}
	g.whole[e] = v
	g.held += bytesOf(v)
	return rowInfo{shape: v.Shape, ok: true}
}

// analyseConcat is concat's of two matrices with a row-local operand.
// Along the columns, band [b0, b1) joins the operands' same bands; along
// the rows, it is a band of the first operand's rows followed by one of
// the second's, each of its own rows (grouped_gemm's and decode_pair's
// goldens join per-group matmuls): nothing is held whole but what the
// operands hold.
func (g *golden) analyseConcat(e *asm.Call) rowInfo {
	a := g.analyse(e.Args[0])
	if !a.ok {
		return rowInfo{}
	}
	b := g.analyse(e.Args[1])
	if !b.ok {
		return rowInfo{}
	}
	axis, ok := g.concatAxis(e)
	switch {
	case !ok || a.rows() < 0 || b.rows() < 0 || !a.local && !b.local:
	case axis == 0 && a.shape[1] == b.shape[1]:
		return rowInfo{shape: []int{a.shape[0] + b.shape[0], a.shape[1]}, local: true, ok: true}
	case axis == 1 && a.shape[0] == b.shape[0]:
		return rowInfo{shape: []int{a.shape[0], a.shape[1] + b.shape[1]}, local: true, ok: true}
	}
	return g.opaque(e, b)
}

// concatAxis is a concat of matrices' axis, 0 or 1 (negative counts from
// the end), or false when it is neither.
func (g *golden) concatAxis(e *asm.Call) (int, bool) {
	axis := int64(0)
	if len(e.Args) == 3 {
		v, err := g.evalInt(e.Args[2])
		if err != nil {
			return 0, false
		}
		axis = v
	}
	if axis < 0 {
		axis += 2
	}
	return int(axis), axis == 0 || axis == 1
}

// alongRows reports whether x is a row-local concat along the rows, whose
// operands have rows of their own.
func (g *golden) alongRows(x asm.Expr) bool {
	call, ok := x.(*asm.Call)
	if !ok || call.Fn != "concat" || !g.info[x].local {
		return false
	}
	axis, ok := g.concatAxis(call)
	return ok && axis == 0
}

// analyseBroadcast is an elementwise operator's: row-local when an operand
// is row-local with the result's rows and the other is too or broadcasts
// along the rows (a scalar, a vector, a [1, N] row).
func (g *golden) analyseBroadcast(x, y asm.Expr) rowInfo {
	a := g.analyse(x)
	if !a.ok {
		return rowInfo{}
	}
	b := g.analyse(y)
	if !b.ok {
		return rowInfo{}
	}
	shape, ok := broadcastShape(a.shape, b.shape)
	if !ok {
		return rowInfo{shape: nil, ok: false}
	}
	if len(shape) != 2 {
		return rowInfo{shape: shape, ok: true}
	}
	rows := shape[0]
	banded := func(in rowInfo) bool { return in.local && in.rows() == rows }
	// A whole value of the result's rows is sliced for each band; one
	// without rows (a scalar, a vector, a [1, N] row) broadcasts whole.
	fits := func(in rowInfo) bool { return in.rows() == rows || len(in.shape) < 2 || in.shape[0] == 1 }
	local := fits(a) && fits(b) && (banded(a) || banded(b))
	return rowInfo{shape: shape, local: local, ok: true}
}

// broadcastShape is numpy's broadcast of two shapes.
func broadcastShape(x, y []int) ([]int, bool) {
	r := max(len(x), len(y))
	out := make([]int, r)
	for k := range r {
		dx, dy := 1, 1
		if i := k - (r - len(x)); i >= 0 {
			dx = x[i]
		}
		if i := k - (r - len(y)); i >= 0 {
			dy = y[i]
		}
		switch {
		case dx == dy, dy == 1:
			out[k] = dx
		case dx == 1:
			out[k] = dy
		default:
			return nil, false
		}
	}
	return out, true
}

// blockRows is the band height for a row-local tree whose widest value has
// cols columns.
func blockRows(cols int) int {
	n := GoldenBlockElems / max(cols, 1)
	if n >= matmulBand {
		n -= n % matmulBand
	}
	return max(n, 1)
}

// widest is the largest column count of the row-local values under e.
func (g *golden) widest(e asm.Expr) int {
	in := g.info[e]
	w := 0
	if in.local && len(in.shape) == 2 {
		w = in.shape[1]
	}
	for _, c := range children(e) {
		w = max(w, g.widest(c))
	}
	return w
}

// bandsSave reports whether evaluating e by bands holds less than whole:
// the band values it no longer holds whole (the row-local values under e
// of its rows, tensors read by band included) outweigh the one it adds,
// e's own, computed by bands and then copied. A lone matmul(@A, @B) would
// only trade @A's float64 copy for its result's bands.
func (g *golden) bandsSave(e asm.Expr, rows int) bool {
	own := elems(g.info[e].shape)
	saved := 0
	var walk func(x asm.Expr, rows int)
	walk = func(x asm.Expr, rows int) {
		for _, c := range children(x) {
			r := g.bandRows(x, c, rows)
			if in := g.info[c]; in.local && in.rows() == r {
				if _, paren := c.(*asm.Paren); !paren {
					saved += elems(in.shape)
				}
				walk(c, r)
			}
		}
	}
	walk(e, rows)
	return saved > own
}

// bandRows is the rows a child c of x, a node of a banded tree of rows
// rows, has when it is banded too: the tree's, but under a slice or a
// concat along the rows, whose operands have rows of their own.
func (g *golden) bandRows(x, c asm.Expr, rows int) int {
	if call, ok := x.(*asm.Call); ok && call.Fn == "slice" && len(call.Args) > 0 && c == call.Args[0] {
		return g.info[c].rows()
	}
	if g.alongRows(x) {
		return g.info[c].rows() // the axis, too: a scalar, never banded
	}
	return rows
}

// sliceBounds evaluates slice's four bounds.
func (g *golden) sliceBounds(c *asm.Call) ([4]int, error) {
	var b [4]int
	for i := range b {
		v, err := g.evalInt(c.Args[i+1])
		if err != nil {
			return b, err
		}
		if v < -1<<40 || v > 1<<40 {
			v = -1 // out of every shape
		}
		b[i] = int(v)
	}
	return b, nil
}

func elems(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

func children(e asm.Expr) []asm.Expr {
	switch e := e.(type) {
	case *asm.Paren:
		return []asm.Expr{e.X}
	case *asm.Unary:
		return []asm.Expr{e.X}
	case *asm.Binary:
		return []asm.Expr{e.X, e.Y}
	case *asm.Call:
		return e.Args
	}
	return nil
}

// evalBanded computes a row-local e of rows rows band by band into one
// array. Every operation it runs on a band (elementwise maps, row
// reductions, softmax, topk, a matmul's rows, a slice's) computes each
// output row from the same input row in the same order as on the whole, so
// the values are bit for bit the whole evaluation's.
func (g *golden) evalBanded(e asm.Expr, rows int) (*Array, error) {
	cols := g.info[e].shape[1]
	if err := g.needShape(e, []int{rows, cols}); err != nil {
		return nil, err
	}
	out := NewArray(rows, cols)
	err := g.bands(e, rows, func(r0, r1 int, v *Array) error {
		copy(out.Data[r0*cols:r1*cols], v.Data)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// bands hands rows [r0, r1) of a row-local e of rows rows to visit, band
// by band in order; a band's values are released once visit returns.
func (g *golden) bands(e asm.Expr, rows int, visit func(r0, r1 int, v *Array) error) error {
	step := blockRows(g.widest(e))
	outer, outerShared, outerHeld := g.band, g.shared, g.bandHeld // a banded tree inside a whole value of an outer one
	defer func() { g.band, g.shared, g.bandHeld = outer, outerShared, outerHeld }()
	g.shared = map[string]bool{}
	seen := map[string]bool{}
	var count func(x asm.Expr, rows int)
	count = func(x asm.Expr, rows int) {
		if in := g.info[x]; !in.local || in.rows() != rows {
			return
		}
		k := asm.ExprString(x)
		g.shared[k] = seen[k]
		seen[k] = true
		for _, c := range children(x) {
			count(c, g.bandRows(x, c, rows))
		}
	}
	count(e, rows)
	for r0 := 0; r0 < rows; r0 += step {
		r1 := min(r0+step, rows)
		g.band, g.bandHeld = map[string]*Array{}, 0
		mark := g.stack
		v, err := g.evalRows(e, rows, r0, r1)
		if err == nil {
			err = visit(r0, r1, v)
		}
		g.stack = mark
		g.held -= g.bandHeld
		if err != nil {
			return err
		}
	}
	return nil
}

// evalRows is rows [r0, r1) of e, a node under a banded tree of rows rows:
// row-local nodes of those rows are computed on the band (a sub-expression
// met twice in the tree, as softmax's max, once a band); others are whole
// values, sliced when they have the tree's rows. What it computes stays
// charged until the band ends when it is shared, else until the caller
// returns.
func (g *golden) evalRows(e asm.Expr, rows, r0, r1 int) (*Array, error) {
	in := g.info[e]
	if !in.local || in.rows() != rows {
		v, err := g.wholeValue(e)
		if err != nil {
			return nil, err
		}
		if len(v.Shape) == 2 && v.Shape[0] == rows && rows != 1 {
			return sliceRows(v, r0, r1), nil
		}
		return v, nil
	}
	// A tensor read again in the band (layernorm's @X, four times) is
	// decoded once, as is any sub-expression met twice; under slices the
	// same text can be met at other rows.
	text := asm.ExprString(e)
	// concat(@A, @A) along the rows meets @A at rows [0, r1) and [0,
	// r1-n) in one band: the key has both ends.
	key := text + "\x00" + strconv.Itoa(r0) + "\x00" + strconv.Itoa(r1)
	if v, ok := g.band[key]; ok {
		return v, nil
	}
	mark := g.stack
	v, err := g.rowsNode(e, rows, r0, r1)
	g.stack = mark
	if err != nil {
		return nil, err
	}
	if g.shared[text] {
		g.band[key] = v
		g.held += bytesOf(v)
		g.bandHeld += bytesOf(v)
	} else {
		g.stack += bytesOf(v)
	}
	return v, nil
}

func (g *golden) rowsNode(e asm.Expr, rows, r0, r1 int) (*Array, error) {
	arg := func(i int) (*Array, error) { return g.evalRows(children(e)[i], rows, r0, r1) }
	band := g.info[e].shape[1] * (r1 - r0)
	switch e := e.(type) {
	case *asm.Paren:
		return arg(0)
	case *asm.GMRef:
		t, err := g.tensor(e)
		if err != nil {
			return nil, wrapAt(e, err)
		}
		if err := g.need(e, int64(band)); err != nil {
			return nil, err
		}
		a, err := t.Rows(r0, r1)
		if err != nil {
			return nil, wrapAt(e, err)
		}
		return a, nil
	case *asm.Unary:
		x, err := arg(0)
		if err != nil {
			return nil, err
		}
		if err := g.need(e, int64(band)); err != nil {
			return nil, err
		}
		return mapArray(x, func(v float64) float64 { return -v }), nil
	case *asm.Binary:
		x, err := arg(0)
		if err != nil {
			return nil, err
		}
		y, err := arg(1)
		if err != nil {
			return nil, err
		}
		if err := g.need(e, int64(band)); err != nil {
			return nil, err
		}
		out, err := broadcast(x, y, binaryFuncs[e.Op])
		if err != nil {
			return nil, errAt(e, "%v", err)
		}
		return out, nil
	case *asm.Call:
		if e.Fn == "concat" {
			return g.concatRows(e, rows, r0, r1)
		}
		if e.Fn == "slice" {
			b, err := g.sliceBounds(e)
			if err != nil {
				return nil, err
			}
			c := e.Args[0]
			x, err := g.evalRows(c, g.info[c].rows(), r0+b[0], r1+b[0])
			if err != nil {
				return nil, err
			}
			if err := g.need(e, int64(band)); err != nil {
				return nil, err
			}
			return Slice(x, 0, r1-r0, b[2], b[3])
		}
		x, err := arg(0)
		if err != nil {
			return nil, err
		}
		// Every result is a band of e's columns (the reductions' one).
		if err := g.need(e, int64(band)); err != nil {
			return nil, err
		}
		switch {
		case unaryFuncs[e.Fn] != nil:
			return mapArray(x, unaryFuncs[e.Fn]), nil
		case e.Fn == "cast":
			return g.castArray(e, x)
		case binaryFuncs[e.Fn] != nil || e.Fn == "prelu":
			y, err := arg(1)
			if err != nil {
				return nil, err
			}
			f := binaryFuncs[e.Fn]
			if e.Fn == "prelu" {
				f = binaryFuncs["lrelu"]
			}
			out, err := broadcast(x, y, f)
			if err != nil {
				return nil, errAt(e, "%s: %v", e.Fn, err)
			}
			return out, nil
		case axisFuncs[e.Fn].fromEnd == 1:
			out, err := Reduce(x, 1, axisFuncs[e.Fn].r)
			if err != nil {
				return nil, errAt(e, "%s %v", e.Fn, err)
			}
			return out, nil
		case e.Fn == "softmax":
			return Softmax(x)
		case e.Fn == "topk" || e.Fn == "topk_index":
			k, err := g.evalInt(e.Args[1])
			if err != nil {
				return nil, err
			}
			return TopK(x, int(k), e.Fn == "topk_index")
		case e.Fn == "matmul":
			b, err := g.wholeValue(e.Args[1])
			if err != nil {
				return nil, err
			}
			out, err := Matmul(x, b)
			if err != nil {
				return nil, errAt(e, "%v", err)
			}
			return out, nil
		}
	}
	return nil, errAt(e, "golden: %s is not row-local", asm.ExprString(e))
}

// concatRows is rows [r0, r1) of a row-local concat: the same rows of
// each operand joined (along the columns), or the first operand's rows of
// the band followed by the second's (along the rows). Only values are
// copied, so the band is the whole concat's, bit for bit.
func (g *golden) concatRows(e *asm.Call, rows, r0, r1 int) (*Array, error) {
	band := g.info[e].shape[1] * (r1 - r0)
	x0, x1 := e.Args[0], e.Args[1]
	if !g.alongRows(e) {
		a, err := g.evalRows(x0, rows, r0, r1)
		if err != nil {
			return nil, err
		}
		b, err := g.evalRows(x1, rows, r0, r1)
		if err != nil {
			return nil, err
		}
		if err := g.need(e, int64(band)); err != nil {
			return nil, err
		}
		return Concat(a, b, 1)
	}
	n0, n1 := g.info[x0].rows(), g.info[x1].rows()
	var parts []*Array
	if r0 < n0 {
		a, err := g.evalRows(x0, n0, r0, min(r1, n0))
		if err != nil {
			return nil, err
		}
		parts = append(parts, a)
	}
	if r1 > n0 {
		b, err := g.evalRows(x1, n1, max(r0, n0)-n0, r1-n0)
		if err != nil {
			return nil, err
		}
		parts = append(parts, b)
	}
	if err := g.need(e, int64(band)); err != nil {
		return nil, err
	}
	out := NewArray(r1-r0, g.info[e].shape[1])
	k := 0
	for _, p := range parts {
		k += copy(out.Data[k:], p.Data)
	}
	return out, nil
}

// wholeValue is e's whole value, computed once per banded tree.
func (g *golden) wholeValue(e asm.Expr) (*Array, error) {
	if err := g.failed[e]; err != nil {
		return nil, err
	}
	if v, ok := g.whole[e]; ok {
		return v, nil
	}
	mark := g.stack
	v, err := g.eval(e)
	g.stack = mark
	if err != nil {
		g.failed[e] = err
		return nil, err
	}
	g.whole[e] = v
	g.held += bytesOf(v)
	return v, nil
}

// forget drops the whole values kept under e once its banded evaluation is
// done, so they live no longer than the whole evaluation kept them.
func (g *golden) forget(e asm.Expr) {
	if v, ok := g.whole[e]; ok {
		g.held -= bytesOf(v)
		delete(g.whole, e)
	}
	for _, c := range children(e) {
		g.forget(c)
	}
}

// EvalGoldenBands evaluates e as EvalGoldenTensors does, but hands its
// value to visit a band of rows at a time, in order, instead of returning
// it whole: off is the band's first element (row-major), want its values,
// valid during the call. A value that is not row-local, not a matrix or
// one band high comes whole (off 0). A check compares each band with the
// output's and so never holds the expected values whole (layernorm_pair at
// 2048 rows held 256 MiB of them and of the output).
//
// ready is called once before the first visit, with e's shape, when every
// tensor the expression reads has been looked up: a caller that checks
// several ranks can tell there which of them read the same values.
func EvalGoldenBands(e asm.Expr, src GoldenSource, ready func(shape []int) error, visit func(off int, want *Array) error) error {
	if e == nil {
		return errors.New("golden: missing expression")
	}
	g := newGolden(src)
	in := g.analyse(e)
	if g.over != nil {
		return g.over
	}
	if err := g.failed[e]; err != nil {
		return err
	}
	if rows := in.rows(); in.ok && in.local && rows > blockRows(g.widest(e)) {
		if err := ready(in.shape); err != nil {
			return err
		}
		cols := in.shape[1]
		return g.bands(e, rows, func(r0, _ int, v *Array) error { return visit(r0*cols, v) })
	}
	v, err := g.eval(e)
	if err != nil {
		return err
	}
	if err := ready(v.Shape); err != nil {
		return err
	}
	return visit(0, v)
}
