package machine

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/memory"
)

// Semantics of the pto-isa instructions of asm/isa_more.go. The conventions of
// exec.go hold: a float result is computed in float64 from the decoded inputs
// and rounded once to the destination's dtype, an integer one wraps.

// views checks that args has an operand for each name and opens those tiles'
// valid regions in order: the common start of an instruction whose leading
// operands are tiles. An array, so nothing is allocated.
func views(args []Operand, names ...string) (vs [4]view, err error) {
	if err = need(args, len(names)); err != nil {
		return
	}
	for i, n := range names {
		if vs[i], err = tileView(&args[i], n); err != nil {
			return
		}
	}
	return
}

// dstSrcs checks that args has n operands, opens the destination's valid
// region and makes each named operand after it an elementwise source that
// must cover it.
func dstSrcs(args []Operand, n int, names ...string) (d view, src [3]esrc, err error) {
	if err = need(args, n); err != nil {
		return
	}
	if d, err = tileView(&args[0], "dst"); err != nil {
		return
	}
	for i, name := range names {
		if src[i], err = tileSrc(&args[i+1], name, srcTile, &d); err != nil {
			return
		}
	}
	return
}

// initSemMore adds their rows to the table.
func initSemMore(t *[asm.NumOpcodes]semantics) {
	t[asm.OpTsubrelu] = vBin(vSubRelu, srcTile)
	for o, v := range map[asm.Opcode]vop{
		asm.OpTands: vAnd, asm.OpTors: vOr, asm.OpTxors: vXor, asm.OpTshls: vShl, asm.OpTshrs: vShr,
	} {
		t[o] = vBin(v, srcScalar)
	}
	for o, k := range map[asm.Opcode]srcKind{asm.OpTpow: srcTile, asm.OpTpows: srcScalar} {
		t[o] = sem(argsOnly(func(a []Operand) error { return vecPow(a, k) }), flopDst)
	}
	for o, k := range map[asm.Opcode]srcKind{asm.OpTrem: srcTile, asm.OpTrems: srcScalar} {
		t[o] = sem(argsOnly(func(a []Operand) error { return vecRem(a, k) }), flopDst)
	}
	for o, k := range map[asm.Opcode]srcKind{asm.OpTfmod: srcTile, asm.OpTfmods: srcScalar} {
		t[o] = sem(argsOnly(func(a []Operand) error { return vecFmod(a, k) }), flopDst)
	}
	t[asm.OpTrowexpandexpdif] = vBin(vExpDif, srcRow)
	t[asm.OpTcolexpandexpdif] = vBin(vExpDif, srcCol)
	for o, k := range map[asm.Opcode]fusedKind{
		asm.OpTfusedmuladd: fmaADst, asm.OpTfusedmuladdrelu: fmaADstRelu, asm.OpTmuladddst: fmaABDst, asm.OpTaxpy: fmaAxpy,
	} {
		t[o] = sem(argsOnly(func(a []Operand) error { return vecFused(a, k) }), flopDst)
	}
	t[asm.OpTrowprod], t[asm.OpTcolprod] = vRed(vProd, true), vRed(vProd, false)
	for o, v := range map[asm.Opcode]vop{asm.OpTpartadd: vAdd, asm.OpTpartmul: vMul, asm.OpTpartmax: vMax, asm.OpTpartmin: vMin} {
		t[o] = sem(argsOnly(func(a []Operand) error { return vecPart(a, v) }), flopDst)
	}
	t[asm.OpTpartargmax] = sem(argsOnly(func(a []Operand) error { return vecPartArg(a, true) }), flopDst)
	t[asm.OpTpartargmin] = sem(argsOnly(func(a []Operand) error { return vecPartArg(a, false) }), flopDst)
	for _, v := range []struct {
		idx, val  asm.Opcode
		max, rows bool
	}{
		{asm.OpTrowargmax, asm.OpTrowargmaxVal, true, true}, {asm.OpTrowargmin, asm.OpTrowargminVal, false, true},
		{asm.OpTcolargmax, asm.OpTcolargmaxVal, true, false}, {asm.OpTcolargmin, asm.OpTcolargminVal, false, false},
	} {
		t[v.idx] = sem(argsOnly(func(a []Operand) error { return vecArgReduce(a, v.max, v.rows, false) }), flopSrc)
		t[v.val] = sem(argsOnly(func(a []Operand) error { return vecArgReduce(a, v.max, v.rows, true) }), flopSrc)
	}
	t[asm.OpTsort32] = sem(argsOnly(vecSort32), flopSrc)
	t[asm.OpTmrgsort] = sem(argsOnly(vecMrgSort), flopSrc)
	t[asm.OpTmrgsortLists] = sem(argsOnly(vecMrgSortLists), flopDst)
	t[asm.OpTci] = sem(withOp(vecCI), flopNone)
	t[asm.OpTtri] = sem(withOp(vecTri), flopNone)
	t[asm.OpTfillpad] = sem(withOp(vecFillPad), flopNone)
	t[asm.OpTconcat] = sem(argsOnly(vecConcat), flopNone)
	t[asm.OpTpairreducesum] = sem(argsOnly(vecPairReduceSum), flopDst)
	t[asm.OpTgatherb] = sem(argsOnly(vecGatherB), flopNone)
	t[asm.OpTdequant] = sem(argsOnly(vecDequant), flopDst)
	t[asm.OpTgatherMask] = sem(withOp(vecGatherMask), flopNone)
	t[asm.OpTaddreluconv] = sem(argsOnly(vecAddReluConv), flopDst)
	t[asm.OpTadddeqrelu] = sem(argsOnly(vecAddDeqRelu), flopDst)
	t[asm.OpTquant] = sem(argsOnly(vecQuant), flopDst)
}

// setSat writes x to d(r, c) saturating: an integer dtype clamps to its
// range, a float one to its largest finite value (pto-isa's saturating
// converts), both rounding to nearest even.
func setSat(d *view, r, c int, x float64) {
	if !d.dt.IsFloat() {
		d.setI(r, c, memory.FloatToInt(d.dt, x, memory.RoundRint))
		return
	}
	if x == x {
		top := math.Abs(memory.Round(d.dt, math.MaxFloat64, memory.RoundTrunc))
		x = max(-top, min(top, memory.Round(d.dt, x, memory.RoundRint)))
	}
	d.setF(r, c, x, memory.RoundRint)
}

// vecAddReluConv: dst = convert(max(a + b, 0)), the sum exact in float64.
func vecAddReluConv(args []Operand) error {
	d, src, err := dstSrcs(args, 3, "a", "b")
	if err != nil {
		return err
	}
	a, b := &src[0], &src[1]
	if a.dt != b.dt {
		return fmt.Errorf("a is %v, b %v", a.dt, b.dt)
	}
	for r := 0; r < d.rows; r++ {
		for c := 0; c < d.cols; c++ {
			setSat(&d, r, c, floatOp(vRelu, a.F(r, c)+b.F(r, c), 0))
		}
	}
	d.written()
	return nil
}

// vecAddDeqRelu follows TAddDeqRelu.hpp's AddDeqReluComputeBlock: vadd of
// a and b into tmp (i32, wrapping), vconv to f32 into a's bytes, ·2⁻¹⁷
// ·deqscale ·2¹⁷ there, a vector_dup of 0.0 into tmp, vmax with it into b's
// bytes, and a saturating f16 into dst. a and b are left holding f32 bits,
// tmp zeros: the hardware uses them as its scratch.
func vecAddDeqRelu(args []Operand) error {
	d, src, err := dstSrcs(args, 5, "a", "b")
	if err != nil {
		return err
	}
	a, b := &src[0], &src[1]
	tmp, err := tileView(&args[4], "tmp")
	if err != nil {
		return err
	}
	if a.dt != asm.I32 || b.dt != asm.I32 || tmp.dt != asm.I32 || d.dt != asm.F16 {
		return fmt.Errorf("needs i32 a, b and tmp and an f16 dst")
	}
	if tmp.rows < d.rows || tmp.cols < d.cols {
		return fmt.Errorf("tmp's valid region [%d, %d] does not cover dst's [%d, %d]", tmp.rows, tmp.cols, d.rows, d.cols)
	}
	deq := float64(float32(args[3].F))
	if args[3].Kind != asm.ArgFloat {
		deq = float64(args[3].Int)
	}
	for r := 0; r < d.rows; r++ {
		for c := 0; c < d.cols; c++ {
			sum := int64(int32(a.I(r, c) + b.I(r, c)))
			x := f32r(f32r(f32r(float64(sum))*0x1p-17)*deq) * 0x1p17
			x = f32r(x)
			relu := floatOp(vRelu, x, 0)
			tmp.setI(r, c, 0)
			a.v.setBits(r, c, f32Bits(x))
			b.v.setBits(r, c, f32Bits(relu))
			setSat(&d, r, c, relu)
		}
	}
	for _, v := range []*view{&tmp, &a.v, &b.v} {
		v.rows, v.cols = d.rows, d.cols
		v.written()
	}
	d.written()
	return nil
}

// vecQuant follows TQuant.hpp's A2/A3 chain: src = f32(src·scale[i]) (then
// + offset[i]) in place, tmp = rint to i32, then rint to f16, then a
// saturating i8 (u8 with an offset). The last stage leaves f16 bits in src's
// bytes on the hardware; here src keeps the scaled f32 values (clobbered
// either way).
func vecQuant(args []Operand) error {
	vs, err := views(args, "dst", "src", "scale", "tmp")
	if err != nil {
		return err
	}
	d, s, sc, tmp := vs[0], vs[1], vs[2], vs[3]
	var off view
	hasOff := len(args) > 4 && args[4].Kind == asm.ArgTile
	if hasOff {
		if off, err = tileView(&args[4], "offset"); err != nil {
			return err
		}
	}
	switch {
	case s.dt != asm.F32:
		return fmt.Errorf("src must be f32, not %v", s.dt)
	case hasOff && d.dt != asm.U8, !hasOff && d.dt != asm.I8:
		return fmt.Errorf("dst must be i8 (u8 with an offset), not %v", d.dt)
	case tmp.dt != asm.I32 && tmp.dt != asm.F32:
		return fmt.Errorf("tmp must be a 4-byte tile, not %v", tmp.dt)
	case s.rows < d.rows || s.cols < d.cols || tmp.rows < d.rows || tmp.cols < d.cols:
		return fmt.Errorf("src and tmp must cover dst's valid region [%d, %d]", d.rows, d.cols)
	case sc.rows < d.rows || (hasOff && off.rows < d.rows):
		return fmt.Errorf("scale and offset need a value for each of dst's %d rows", d.rows)
	}
	f32 := func(x float64) float64 { return float64(float32(x)) }
	for r := 0; r < d.rows; r++ {
		for c := 0; c < d.cols; c++ {
			x := f32(s.f(r, c) * sc.f(r, 0))
			if hasOff {
				x = f32(x + off.f(r, 0))
			}
			s.setF(r, c, x, memory.RoundRint)
			i := memory.FloatToInt(asm.I32, x, memory.RoundRint)
			tmp.setBits(r, c, memory.EncodeInt(asm.I32, i))
			h := memory.Round(asm.F16, float64(i), memory.RoundRint)
			d.setI(r, c, memory.FloatToInt(d.dt, h, memory.RoundRint))
		}
	}
	s.rows, s.cols = d.rows, d.cols
	tmp.rows, tmp.cols = d.rows, d.cols
	s.written()
	tmp.written()
	d.written()
	return nil
}

// maskKeeps is pto::MaskPattern's selection of column c (TGather.hpp's
// MaskSelect).
func maskKeeps(pattern string, c int) bool {
	switch pattern {
	case "p0101":
		return c%2 == 0
	case "p1010":
		return c%2 == 1
	case "p0001", "p0010", "p0100", "p1000":
		return c%4 == strings.IndexByte(reverse(pattern[1:]), '1')
	}
	return true // p1111
}

func reverse(s string) string {
	b := []byte(s)
	for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
		b[i], b[j] = b[j], b[i]
	}
	return string(b)
}

// vecGatherMask packs the selected elements of each of dst's rows of src.
func vecGatherMask(op *asm.COp, args []Operand) error {
	vs, err := views(args, "dst", "src")
	if err != nil {
		return err
	}
	d, s := vs[0], vs[1]
	if s.es != d.es {
		return fmt.Errorf("src's %v elements are not dst's %v", s.dt, d.dt)
	}
	if s.rows < d.rows {
		return fmt.Errorf("src has %d valid rows, dst %d", s.rows, d.rows)
	}
	pattern := attrWord(op, "pattern", "p1111")
	n := 0
	for r := 0; r < d.rows; r++ {
		n = 0
		for c := 0; c < s.cols; c++ {
			if !maskKeeps(pattern, c) {
				continue
			}
			if n >= d.cols {
				return fmt.Errorf("#pattern=%s keeps more than dst's %d valid columns of src's %d", pattern, d.cols, s.cols)
			}
			d.setBits(r, n, s.bits(r, c))
			n++
		}
	}
	d.cols = n
	d.written()
	return nil
}

// fusedKind says which operands a fused multiply-add multiplies.
type fusedKind uint8

const (
	fmaADst     fusedKind = iota // a·dst + b (tfusedmuladd)
	fmaADstRelu                  // max(a·dst + b, 0)
	fmaABDst                     // a·b + dst (tmuladddst)
	fmaAxpy                      // s·a + dst (taxpy)
)

// vecFused computes the read-modify-write fused ops; dst's old element is read
// before its new one is written, so every element sees its own old value.
func vecFused(args []Operand, k fusedKind) error {
	if err := need(args, 3); err != nil {
		return err
	}
	d, err := tileView(&args[0], "dst")
	if err != nil {
		return err
	}
	a, err := tileSrc(&args[1], "a", srcTile, &d)
	if err != nil {
		return err
	}
	kind := srcTile
	if k == fmaAxpy {
		kind = srcScalar
	}
	b, err := secondSrc(&args[2], kind, a.dt, &d)
	if err != nil {
		return err
	}
	if !d.dt.IsFloat() && !a.dt.IsFloat() && !b.dt.IsFloat() {
		for r := 0; r < d.rows; r++ {
			for c := 0; c < d.cols; c++ {
				x, y, z := a.I(r, c), b.I(r, c), d.i(r, c)
				var v int64
				switch k {
				case fmaADst:
					v = x*z + y
				case fmaADstRelu:
					v = max(x*z+y, 0)
				default: // a·b + dst, s·a + dst
					v = x*y + z
				}
				d.setI(r, c, v)
			}
		}
		d.written()
		return nil
	}
	for r := 0; r < d.rows; r++ {
		for c := 0; c < d.cols; c++ {
			x, y, z := a.F(r, c), b.F(r, c), d.f(r, c)
			var v float64
			switch k {
			case fmaADst:
				v = x*z + y
			case fmaADstRelu:
				v = floatOp(vRelu, x*z+y, 0)
			default:
				v = x*y + z
			}
			d.setF(r, c, v, memory.RoundRint)
		}
	}
	d.written()
	return nil
}

// partViews returns dst and the two sources of a partial op, checking that
// dst's valid region is one of theirs (pto-isa TPartOp.hpp's precondition),
// so every dst element has at least one valid source.
func partViews(dst, a, b *Operand) (d, va, vb view, err error) {
	if d, err = tileView(dst, "dst"); err != nil {
		return
	}
	if va, err = tileView(a, "a"); err != nil {
		return
	}
	if vb, err = tileView(b, "b"); err != nil {
		return
	}
	if (d.rows != va.rows || d.cols != va.cols) && (d.rows != vb.rows || d.cols != vb.cols) {
		err = fmt.Errorf("dst's valid region [%d, %d] is neither a's [%d, %d] nor b's [%d, %d]", d.rows, d.cols, va.rows, va.cols, vb.rows, vb.cols)
	}
	return
}

func (v *view) covers(r, c int) bool { return r < v.rows && c < v.cols }

// copyElem copies s(r, c) to d(r, c), converting when the dtypes differ.
func copyElem(d, s *view, r, c int) {
	switch {
	case s.dt == d.dt:
		d.setBits(r, c, s.bits(r, c))
	case !s.dt.IsFloat() && !d.dt.IsFloat():
		d.setI(r, c, s.i(r, c))
	default:
		d.setF(r, c, s.f(r, c), memory.RoundRint)
	}
}

func vecPart(args []Operand, o vop) error {
	if err := need(args, 3); err != nil {
		return err
	}
	d, a, b, err := partViews(&args[0], &args[1], &args[2])
	if err != nil {
		return err
	}
	intDom := !d.dt.IsFloat() && !a.dt.IsFloat() && !b.dt.IsFloat()
	for r := 0; r < d.rows; r++ {
		for c := 0; c < d.cols; c++ {
			inA, inB := a.covers(r, c), b.covers(r, c)
			switch {
			case inA && inB && intDom:
				x, err := intOp(o, a.i(r, c), b.i(r, c))
				if err != nil {
					return err
				}
				d.setI(r, c, x)
			case inA && inB:
				d.setF(r, c, floatOp(o, a.f(r, c), b.f(r, c)), memory.RoundRint)
			case inA:
				copyElem(&d, &a, r, c)
			default:
				copyElem(&d, &b, r, c)
			}
		}
	}
	d.written()
	return nil
}

// vecPartArg: dst, dstidx, a, b, aidx, bidx (pto-isa's operand order after the
// destinations). b wins ties and any comparison with NaN, as "src1 ≥ src0"
// selects b and "src0 > src1" alone selects a.
func vecPartArg(args []Operand, isMax bool) error {
	if err := need(args, 6); err != nil {
		return err
	}
	d, a, b, err := partViews(&args[0], &args[2], &args[3])
	if err != nil {
		return err
	}
	di, err := tileView(&args[1], "dstidx")
	if err != nil {
		return err
	}
	ai, err := tileView(&args[4], "aidx")
	if err != nil {
		return err
	}
	bi, err := tileView(&args[5], "bidx")
	if err != nil {
		return err
	}
	if di.rows != d.rows || di.cols != d.cols || ai.rows != a.rows || ai.cols != a.cols || bi.rows != b.rows || bi.cols != b.cols {
		return fmt.Errorf("each index tile needs its value tile's valid region")
	}
	for r := 0; r < d.rows; r++ {
		for c := 0; c < d.cols; c++ {
			inA, inB := a.covers(r, c), b.covers(r, c)
			takeA := inA && !inB
			if inA && inB {
				// TPartArgOps: vcmp_ge (vcmp_le for min) of a and b, then
				// vsel takes a where the compare holds: a on a tie, b
				// where either is NaN (an unordered compare is false).
				if !d.dt.IsFloat() {
					xi, yi := a.i(r, c), b.i(r, c)
					takeA = (isMax && xi >= yi) || (!isMax && xi <= yi)
				} else {
					x, y := a.f(r, c), b.f(r, c)
					takeA = (isMax && x >= y) || (!isMax && x <= y)
				}
			}
			if takeA {
				copyElem(&d, &a, r, c)
				copyElem(&di, &ai, r, c)
			} else {
				copyElem(&d, &b, r, c)
				copyElem(&di, &bi, r, c)
			}
		}
	}
	d.written()
	di.written()
	return nil
}

// better reports whether x replaces the best so far: strictly greater (or
// less), so the first of equal elements stays; NaN never replaces, and a NaN
// best is replaced by any number.
func better(x, best float64, isMax bool) bool {
	if x != x {
		return false
	}
	if best != best {
		return true
	}
	if isMax {
		return x > best
	}
	return x < best
}

// vecArgReduce writes, per row (or column) of a's valid region, the index of
// its maximum (minimum) into dstidx[r, 0] (dstidx[0, c]), and with withVal
// the value into dst first.
func vecArgReduce(args []Operand, isMax, rows, withVal bool) error {
	n := 2
	if withVal {
		n = 3
	}
	if err := need(args, n); err != nil {
		return err
	}
	var dv view
	var err error
	if withVal {
		if dv, err = tileView(&args[0], "dst"); err != nil {
			return err
		}
	}
	di, err := tileView(&args[n-2], "dstidx")
	if err != nil {
		return err
	}
	a, err := tileView(&args[n-1], "a")
	if err != nil {
		return err
	}
	if di.dt.IsFloat() {
		return fmt.Errorf("dstidx must be an integer dtype, not %v", di.dt)
	}
	if a.rows == 0 || a.cols == 0 {
		return fmt.Errorf("empty reduction")
	}
	outer, inner := a.rows, a.cols
	if !rows {
		outer, inner = a.cols, a.rows
	}
	at := func(o, i int) (int, int) {
		if rows {
			return o, i
		}
		return i, o
	}
	fits := func(v *view, what string) error {
		if rows && (v.rows < outer || v.cols < 1) || !rows && (v.cols < outer || v.rows < 1) {
			return fmt.Errorf("%s's valid region [%d, %d] cannot hold %d results", what, v.rows, v.cols, outer)
		}
		return nil
	}
	if err := fits(&di, "dstidx"); err != nil {
		return err
	}
	if withVal {
		if err := fits(&dv, "dst"); err != nil {
			return err
		}
	}
	intDom := !a.dt.IsFloat()
	for o := 0; o < outer; o++ {
		bi := 0
		if intDom {
			best := a.i(at(o, 0))
			for i := 1; i < inner; i++ {
				if x := a.i(at(o, i)); (isMax && x > best) || (!isMax && x < best) {
					best, bi = x, i
				}
			}
		} else {
			best := a.f(at(o, 0))
			for i := 1; i < inner; i++ {
				if x := a.f(at(o, i)); better(x, best, isMax) {
					best, bi = x, i
				}
			}
		}
		dr, dc := o, 0
		if !rows {
			dr, dc = 0, o
		}
		di.setI(dr, dc, int64(bi))
		if withVal {
			ar, ac := at(o, bi)
			if dv.dt == a.dt {
				dv.setBits(dr, dc, a.bits(ar, ac))
			} else {
				return fmt.Errorf("dst must have a's dtype %v, not %v", a.dt, dv.dt)
			}
		}
	}
	if rows {
		di.cols = 1
		dv.cols = min(dv.cols, 1)
		di.rows, dv.rows = outer, min(dv.rows, outer)
	} else {
		di.rows = 1
		dv.rows = min(dv.rows, 1)
		di.cols, dv.cols = outer, min(dv.cols, outer)
	}
	di.written()
	if withVal {
		dv.written()
	}
	return nil
}

// A sorted list is a row of (value, index) pairs of 8 bytes (pto-isa
// TSORT32.md): an f32 pair is two f32 slots [value, index bits], an f16 pair
// four f16 slots [value, 0, index low half, index high half].
type pair struct {
	v   float64 // decoded, for ordering
	vb  uint64  // the value's bits, copied exactly
	idx uint32
}

func pairSlots(dt asm.DType) (int, error) {
	switch dt {
	case asm.F32:
		return 2, nil
	case asm.F16:
		return 4, nil
	}
	return 0, fmt.Errorf("sorts take f16 or f32 tiles, not %v", dt)
}

func getPair(v *view, r, k, slots int) pair {
	c := k * slots
	p := pair{vb: v.bits(r, c)}
	p.v = decodeF(v.dt, p.vb)
	if slots == 2 {
		p.idx = uint32(v.bits(r, c+1))
	} else {
		p.idx = uint32(v.bits(r, c+2)) | uint32(v.bits(r, c+3))<<16
	}
	return p
}

func setPair(v *view, r, k, slots int, p pair) {
	c := k * slots
	v.setBits(r, c, p.vb)
	if slots == 2 {
		v.setBits(r, c+1, uint64(p.idx))
		return
	}
	v.setBits(r, c+1, 0)
	v.setBits(r, c+2, uint64(p.idx&0xffff))
	v.setBits(r, c+3, uint64(p.idx>>16))
}

// before orders pairs descending by value; NaN ranks above +inf (an
// assumption: pto-isa does not document vbitsort's NaN order). Equal values
// keep their input order (sort.SliceStable, merge by list).
func before(x, y *pair) bool {
	xn, yn := x.v != x.v, y.v != y.v
	if xn || yn {
		return xn && !yn
	}
	return x.v > y.v
}

// vecSort32: dst, src, idx, [tmp]. Each row's valid columns are sorted in
// blocks of 32; a short last block is padded with -inf pairs of index 0 (the
// tail of pto-isa's 4-operand form), so dst needs ⌈C/32⌉·32 pairs per row.
// idx is R×C or 1×C (broadcast to every row).
func vecSort32(args []Operand) error {
	vs, err := views(args, "dst", "src", "idx")
	if err != nil {
		return err
	}
	d, s, ix := vs[0], vs[1], vs[2]
	slots, err := pairSlots(s.dt)
	if err != nil {
		return err
	}
	if d.dt != s.dt {
		return fmt.Errorf("dst must have src's dtype %v", s.dt)
	}
	if ix.dt != asm.U32 && ix.dt != asm.I32 {
		return fmt.Errorf("idx must be uint32, not %v", ix.dt)
	}
	if ix.cols < s.cols || (ix.rows < s.rows && ix.rows != 1) {
		return fmt.Errorf("idx's valid region [%d, %d] does not cover src's [%d, %d] (or one row of it)", ix.rows, ix.cols, s.rows, s.cols)
	}
	blocks := (s.cols + 31) / 32
	if d.rows < s.rows || d.cols < blocks*32*slots {
		return fmt.Errorf("dst's valid region [%d, %d] cannot hold %d rows of %d pairs (%d columns)", d.rows, d.cols, s.rows, blocks*32, blocks*32*slots)
	}
	ninf := memory.Encode(s.dt, math.Inf(-1), memory.RoundRint)
	buf := make([]pair, 32)
	for r := 0; r < s.rows; r++ {
		ir := r
		if ix.rows == 1 {
			ir = 0
		}
		for b := 0; b < blocks; b++ {
			buf = buf[:0]
			for k := 0; k < 32; k++ {
				c := b*32 + k
				if c < s.cols {
					vb := s.bits(r, c)
					buf = append(buf, pair{v: decodeF(s.dt, vb), vb: vb, idx: uint32(ix.bits(ir, c))})
				} else {
					buf = append(buf, pair{v: math.Inf(-1), vb: ninf})
				}
			}
			sort.SliceStable(buf, func(i, j int) bool { return before(&buf[i], &buf[j]) })
			for k := range buf {
				setPair(&d, r, b*32+k, slots, buf[k])
			}
		}
	}
	d.rows, d.cols = s.rows, blocks*32*slots
	d.written()
	return nil
}

// pairBufs recycles the pair lists of the merge sorts: topk's run made a
// run and an output list per source row and op, 490 MB of garbage that the
// collector let the heap grow to 450 MB for. Go's pool, not a core's own
// buffer: the data effects are plain functions of their operands.
var pairBufs sync.Pool

// getPairs is an empty pair list with room for n.
func getPairs(n int) *[]pair {
	if p, ok := pairBufs.Get().(*[]pair); ok && cap(*p) >= n {
		*p = (*p)[:0]
		return p
	}
	s := make([]pair, 0, n)
	return &s
}

// mergeRuns merges sorted runs into out, descending; on equal values the
// earlier run's pair comes first (vmrgsort4 takes its lists in order).
func mergeRuns(runs [][]pair, out []pair) []pair {
	heads := make([]int, len(runs))
	for {
		best := -1
		for l, run := range runs {
			if heads[l] < len(run) && (best < 0 || before(&run[heads[l]], &runs[best][heads[best]])) {
				best = l
			}
		}
		if best < 0 {
			return out
		}
		out = append(out, runs[best][heads[best]])
		heads[best]++
	}
}

// vecMrgSort: dst, src, blocklen (pto-isa's single-list TMRGSORT). Each row's
// valid columns are groups of 4·blocklen elements, each four sorted runs of
// blocklen elements; every group is merged on its own.
func vecMrgSort(args []Operand) error {
	if err := need(args, 3); err != nil {
		return err
	}
	vs, err := views(args, "dst", "src")
	if err != nil {
		return err
	}
	d, s := vs[0], vs[1]
	slots, err := pairSlots(s.dt)
	if err != nil {
		return err
	}
	bl := args[2].Int
	if bl <= 0 || bl%64 != 0 {
		return fmt.Errorf("blocklen %d must be a positive multiple of 64", bl)
	}
	group := 4 * int(bl)
	if s.cols%group != 0 || s.cols/group > 255 {
		return fmt.Errorf("src's %d valid columns must be 1 to 255 groups of 4·blocklen = %d", s.cols, group)
	}
	if d.dt != s.dt || d.rows < s.rows || d.cols < s.cols {
		return fmt.Errorf("dst must have src's dtype and cover its valid region [%d, %d]", s.rows, s.cols)
	}
	per := int(bl) / slots
	var bufs [5]*[]pair
	for i := range bufs {
		bufs[i] = getPairs(per * 4)
		defer pairBufs.Put(bufs[i])
	}
	runs := [][]pair{*bufs[0], *bufs[1], *bufs[2], *bufs[3]}
	out := *bufs[4]
	for r := 0; r < s.rows; r++ {
		for g := 0; g < s.cols/group; g++ {
			for l := range runs {
				runs[l] = runs[l][:0]
				for k := 0; k < per; k++ {
					runs[l] = append(runs[l], getPair(&s, r, (g*4+l)*per+k, slots))
				}
			}
			out = mergeRuns(runs, out[:0])
			for k, p := range out {
				setPair(&d, r, g*4*per+k, slots, p)
			}
		}
	}
	for i, run := range runs {
		*bufs[i] = run[:0]
	}
	*bufs[4] = out[:0]
	d.rows, d.cols = s.rows, s.cols
	d.written()
	return nil
}

// vecMrgSortLists: dst, tmp, src0, src1, [src2], [src3]: the first row of
// each list (its valid columns, whole pairs) merged into dst's first row.
func vecMrgSortLists(args []Operand) error {
	if err := need(args, 4); err != nil {
		return err
	}
	d, err := tileView(&args[0], "dst")
	if err != nil {
		return err
	}
	slots, err := pairSlots(d.dt)
	if err != nil {
		return err
	}
	var runs [][]pair
	total := 0
	for i := 2; i < len(args); i++ {
		s, err := tileView(&args[i], fmt.Sprintf("src%d", i-2))
		if err != nil {
			return err
		}
		if s.dt != d.dt {
			return fmt.Errorf("src%d is %v, dst %v", i-2, s.dt, d.dt)
		}
		if s.rows < 1 || s.cols%slots != 0 {
			return fmt.Errorf("src%d's %d valid columns are not whole (value, index) pairs", i-2, s.cols)
		}
		buf := getPairs(s.cols / slots)
		defer pairBufs.Put(buf)
		run := (*buf)[:s.cols/slots]
		for k := range run {
			run[k] = getPair(&s, 0, k, slots)
		}
		runs = append(runs, run)
		total += len(run)
	}
	if d.rows < 1 || d.cols < total*slots {
		return fmt.Errorf("dst's valid region [%d, %d] cannot hold %d pairs", d.rows, d.cols, total)
	}
	out := getPairs(total)
	defer pairBufs.Put(out)
	*out = mergeRuns(runs, *out)
	for k, p := range *out {
		setPair(&d, 0, k, slots, p)
	}
	d.rows, d.cols = 1, total*slots
	d.written()
	return nil
}

// setNum writes the number x into d(r, c) in d's dtype.
func setNum(d *view, r, c int, x int64) {
	if d.dt.IsFloat() {
		d.setF(r, c, float64(x), memory.RoundRint)
	} else {
		d.setI(r, c, x)
	}
}

// vecCI: dst's valid elements in row-major order get start+k (#descending=1:
// start-k).
func vecCI(op *asm.COp, args []Operand) error {
	if err := need(args, 2); err != nil {
		return err
	}
	d, err := tileView(&args[0], "dst")
	if err != nil {
		return err
	}
	desc, _, err := attrInt(op, "descending", nil)
	if err != nil {
		return err
	}
	step := int64(1)
	if desc != 0 {
		step = -1
	}
	x := args[1].Int
	for r := 0; r < d.rows; r++ {
		for c := 0; c < d.cols; c++ {
			setNum(&d, r, c, x)
			x += step
		}
	}
	d.written()
	return nil
}

// vecTri: a 0/1 mask, lower (j ≤ i+d) or with #upper=1 upper (j ≥ i+d).
func vecTri(op *asm.COp, args []Operand) error {
	if err := need(args, 2); err != nil {
		return err
	}
	d, err := tileView(&args[0], "dst")
	if err != nil {
		return err
	}
	upper, _, err := attrInt(op, "upper", nil)
	if err != nil {
		return err
	}
	diag := args[1].Int
	for r := 0; r < d.rows; r++ {
		for c := 0; c < d.cols; c++ {
			lower := int64(c) <= int64(r)+diag
			if upper != 0 {
				lower = int64(c) >= int64(r)+diag
			}
			v := int64(0)
			if lower {
				v = 1
			}
			setNum(&d, r, c, v)
		}
	}
	d.written()
	return nil
}

// padBits is the pad value of #pad in dt: zero, or the largest (smallest)
// value, ±inf for floats.
func padBits(dt asm.DType, pad string) uint64 {
	inf := 0.0
	switch pad {
	case "max":
		inf = math.Inf(1)
	case "min":
		inf = math.Inf(-1)
	}
	if dt.IsFloat() {
		return memory.Encode(dt, inf, memory.RoundRint)
	}
	return memory.EncodeInt(dt, memory.FloatToInt(dt, inf, memory.RoundTrunc))
}

// vecFillPad: dst's valid region gets src where src is valid, the pad value
// elsewhere. With dst and src views of one tile it pads in place.
func vecFillPad(op *asm.COp, args []Operand) error {
	vs, err := views(args, "dst", "src")
	if err != nil {
		return err
	}
	d, s := vs[0], vs[1]
	if s.dt != d.dt {
		return fmt.Errorf("dtype %v into %v", s.dt, d.dt)
	}
	pad := padBits(d.dt, attrWord(op, "pad", "zero"))
	for r := 0; r < d.rows; r++ {
		for c := 0; c < d.cols; c++ {
			if s.covers(r, c) {
				d.setBits(r, c, s.bits(r, c))
			} else {
				d.setBits(r, c, pad)
			}
		}
	}
	d.written()
	return nil
}

// vecConcat: each row of dst is a's valid columns, then b's.
func vecConcat(args []Operand) error {
	vs, err := views(args, "dst", "a", "b")
	if err != nil {
		return err
	}
	d, a, b := vs[0], vs[1], vs[2]
	if a.rows < d.rows || b.rows < d.rows || a.cols+b.cols > d.cols {
		return fmt.Errorf("dst's valid region [%d, %d] does not take a's [%d, %d] beside b's [%d, %d]", d.rows, d.cols, a.rows, a.cols, b.rows, b.cols)
	}
	for r := 0; r < d.rows; r++ {
		for c := 0; c < a.cols; c++ {
			copyElem(&d, &a, r, c)
		}
		for c := 0; c < b.cols; c++ {
			if b.dt == d.dt {
				d.setBits(r, a.cols+c, b.bits(r, c))
			} else {
				d.setF(r, a.cols+c, b.f(r, c), memory.RoundRint)
			}
		}
	}
	d.cols = a.cols + b.cols
	d.written()
	return nil
}

// vecPairReduceSum: dst[i, k] = src[i, 2k] + src[i, 2k+1] for k < ⌊C/2⌋ of
// dst's C valid columns. TPairReduceSum.hpp's vcpadd covers the full
// repeats and the even part of the rest (evenRemain), so an odd last column
// is dropped and dst[i, k] for k ≥ ⌊C/2⌋ keeps its contents.
func vecPairReduceSum(args []Operand) error {
	vs, err := views(args, "dst", "src")
	if err != nil {
		return err
	}
	d, s := vs[0], vs[1]
	if s.rows < d.rows || s.cols < d.cols || s.dt != d.dt || !d.dt.IsFloat() {
		return fmt.Errorf("src must be a float tile of dst's dtype covering its valid region")
	}
	half := d.cols / 2
	for r := 0; r < d.rows; r++ {
		for k := 0; k < half; k++ {
			d.setF(r, k, s.f(r, 2*k)+s.f(r, 2*k+1), memory.RoundRint)
		}
	}
	d.cols = half
	d.written()
	return nil
}

// vecGatherB: dst[i, j] is the element at byte offset offsets[i, j] from
// the start of src's tile; an offset must be element aligned and inside it.
func vecGatherB(args []Operand) error {
	if err := need(args, 3); err != nil {
		return err
	}
	d, err := tileView(&args[0], "dst")
	if err != nil {
		return err
	}
	if args[1].Kind != asm.ArgTile || args[1].Tile == nil || args[1].Buf == nil {
		return fmt.Errorf("src: expected a tile operand")
	}
	src := &args[1]
	if src.Tile.DType.Size() != d.dt.Size() {
		return fmt.Errorf("src's %v elements are not dst's %v", src.Tile.DType, d.dt)
	}
	off, err := tileSrc(&args[2], "offsets", srcTile, &d)
	if err != nil {
		return err
	}
	if off.dt.IsFloat() {
		return fmt.Errorf("offsets must be an integer dtype, not %v", off.dt)
	}
	size := memory.TileLayout(src.Tile).Footprint()
	for r := 0; r < d.rows; r++ {
		for c := 0; c < d.cols; c++ {
			o := off.I(r, c)
			if o < 0 || o%d.es != 0 || o+d.es > size {
				return fmt.Errorf("element (%d, %d): byte offset %d is not an element of %%%s (%d bytes)", r, c, o, src.Tile.Name, size)
			}
			d.setBits(r, c, loadBits(src.Buf.Data, src.Off+o, d.es))
		}
	}
	d.written()
	return nil
}

// vecDequant follows TDequant.hpp: a vconv of src into dst (exact: i8 via
// f16, i16 to f32), then per row the scalar reads offset[i, 0] and
// scale[i, 0] (the parameter tile's row stride, its first column) and dst =
// f32(f32(dst - offset) · scale), vadds then vmuls, each rounded.
func vecDequant(args []Operand) error {
	vs, err := views(args, "dst", "src", "scale", "offset")
	if err != nil {
		return err
	}
	d, sc, of := vs[0], vs[2], vs[3]
	s, err := tileSrc(&args[1], "src", srcTile, &d)
	if err != nil {
		return err
	}
	if s.dt != asm.I8 && s.dt != asm.I16 {
		return fmt.Errorf("src must be int8 or int16, not %v", s.dt)
	}
	if d.dt != asm.F32 || sc.dt != asm.F32 || of.dt != asm.F32 {
		return fmt.Errorf("dst, scale and offset must be f32 (TDequantCheck)")
	}
	if sc.rows < d.rows || of.rows < d.rows || sc.cols < 1 || of.cols < 1 {
		return fmt.Errorf("scale and offset need a value for each of dst's %d rows", d.rows)
	}
	for r := 0; r < d.rows; r++ {
		off, scale := of.f(r, 0), sc.f(r, 0)
		for c := 0; c < d.cols; c++ {
			d.setF(r, c, f32r(f32r(s.F(r, c)-off)*scale), memory.RoundRint)
		}
	}
	d.written()
	return nil
}
