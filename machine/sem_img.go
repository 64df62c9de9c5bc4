package machine

import (
	"fmt"
	"math"
	"strings"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/memory"
	"github.com/ptoasm/ptoasm/pipes"
)

// Semantics of asm/isa_img.go: MGATHER/MSCATTER (GM through an index tile),
// the IMG2COL path and the fixpipe's quantisation, each from pto-isa at
// 3186c381 (include/pto/npu/a2a3/<File>.hpp for what the hardware path does,
// include/pto/cpu/<File>.hpp for the element formula where the NPU header
// hands it to an intrinsic).

// cubeRegs are an AIC's IMG2COL and fixpipe configuration registers. The
// scalar writes them in program order (setfmatrix, set_img2col_padding,
// set_img2col_rpt, set_quant_scalar, set_quant_vector), and an instruction
// that reads them takes them at issue: a snapshot is never changed, a write
// makes a new one, so a queued timg2col keeps the registers it was issued
// under.
type cubeRegs struct {
	fmSet    bool
	fmH, fmW int64
	pad      [4]int64 // left, right, top, bottom (SetFmatrix.hpp's padList order)
	padVal   float64
	rptTime  int64
	quantSet bool
	quantPre uint64 // the QUANT_PRE word (SetQuantScalar.hpp)
	fpSet    bool
	fp       Operand // the scaling tile FPC points at (SetQuantVector.hpp)
}

// imgState is ExecScratch's part for these instructions.
type imgState struct {
	regs *cubeRegs // the core's registers now (the scalar's view)
	op   *cubeRegs // the registers the executing op was issued under
	// gm lists the byte ranges (relative to the tensor's buffer) the last
	// mgather/mscatter touched, for the accesses the detector sees.
	gm []gmSpan
	// plans are issueRegs' operand plans, per instruction.
	plans map[*asm.COp]*opPlan
}

type gmSpan struct{ lo, hi int64 }

// note records a touched range, merging it into the previous one when they
// are adjacent (a row-mode gather of consecutive rows is one range).
func (st *imgState) note(lo, hi int64) {
	if n := len(st.gm); n > 0 && st.gm[n-1].hi == lo {
		st.gm[n-1].hi = hi
		return
	}
	st.gm = append(st.gm, gmSpan{lo, hi})
}

func initSemImg(t *[asm.NumOpcodes]semantics) {
	t[asm.OpMgather] = semantics{exec: execMGather, bytes: byteDst}
	t[asm.OpMscatter] = semantics{exec: execMScatter, bytes: byteSrc}
	t[asm.OpTimg2col] = semantics{exec: execImg2col, bytes: byteDst}
	t[asm.OpTstoreFp] = semantics{exec: execStoreQuant, bytes: byteTransfer}
	t[asm.OpTstoreQ] = semantics{exec: execStoreQuant, bytes: byteTransfer}
	for _, o := range []asm.Opcode{asm.OpTmovFp, asm.OpTmovQ, asm.OpTextractFp} {
		t[o] = semantics{exec: execMoveQuant, bytes: byteDst}
	}
	t[asm.OpTinsertFp] = semantics{exec: execMoveQuant, bytes: byteSrc}
}

// ---- MGATHER / MSCATTER ----

// gmIndexed is what mgather/mscatter read from their operands.
type gmIndexed struct {
	elem       bool   // #coalesce=elem
	oob        string // #oob
	atomic     bool
	tile, idx  view // the UB data tile (dst or src) and the index tile
	t          *asm.TensorInfo
	buf        *memory.Buffer
	es         int64
	start      int64 // ND: the table's first element, in elements from the tensor's start
	cols, rows int64 // the tensor as a matrix
	capacity   int64 // rows from start (Row) or elements from start (Elem)
	tileName   string
	// nz: an NZ table (and NZ data tile), MGather.hpp's MGatherRowNzImpl /
	// MGatherElemNzImpl: lay is its layout, r0 its first row (a whole
	// fractal row, column 0), c0n its C0 (elements per 32 bytes).
	nz  bool
	lay memory.Layout2D
	r0  int64
	c0n int64
}

func openIndexed(op *asm.COp, args []Operand, gather bool) (g gmIndexed, err error) {
	if err = need(args, 3); err != nil {
		return
	}
	ti, gi := 0, 1
	if !gather {
		ti, gi = 1, 0
	}
	g.oob = "undefined"
	if a, ok := op.Attr("coalesce"); ok {
		g.elem = strings.EqualFold(a.Word, "elem")
	}
	if a, ok := op.Attr("oob"); ok {
		g.oob = strings.ToLower(a.Word)
	}
	if a, ok := op.Attr("atomic"); ok {
		g.atomic = strings.EqualFold(a.Word, "add")
	}
	if g.tile, err = tileView(&args[ti], "data"); err != nil {
		return
	}
	if g.idx, err = tileView(&args[2], "idx"); err != nil {
		return
	}
	g.tileName = args[ti].Tile.Name
	o := &args[gi]
	if o.Kind != asm.ArgGM || o.GM == nil || o.Buf == nil {
		return g, fmt.Errorf("the table must be a GM operand")
	}
	g.t, g.buf = o.GM, o.Buf
	l := memory.GMLayout(g.t)
	g.es = int64(g.t.DType.Size())
	if g.t.DType != g.tile.dt {
		return g, fmt.Errorf("@%s is %v but %%%s is %v (the table's and the tile's dtypes must match)", g.t.Name, g.t.DType, g.tileName, g.tile.dt)
	}
	if g.idx.dt != asm.I32 && g.idx.dt != asm.U32 {
		return g, fmt.Errorf("the index tile %%%s is %v; A2/A3 takes int32 or uint32 indices", args[2].Tile.Name, g.idx.dt)
	}
	if g.idx.l.Kind != memory.ND {
		return g, fmt.Errorf("the index tile %%%s is %v; A2/A3 takes a row-major (ND) index tile (MGather.hpp MGatherCheck)", args[2].Tile.Name, g.idx.l.Kind)
	}
	if g.tile.dt.Size() == 8 {
		return g, fmt.Errorf("%v elements: A2/A3 moves 8-, 16- and 32-bit elements", g.tile.dt)
	}
	g.rows, g.cols = int64(l.Rows), int64(l.Cols)
	// MGatherCheck pairs an ND table with an ND (row-major) tile and an NZ
	// table with an NZ tile of 512-byte fractals.
	tl := g.tile.l
	switch {
	case l.Kind == memory.ND && tl.Kind != memory.ND:
		return g, fmt.Errorf("@%s is ND but %%%s is %v: A2/A3 pairs an ND table with a row-major tile, an NZ table with an NZ tile (MGather.hpp MGatherCheck)", g.t.Name, g.tileName, tl.Kind)
	case l.Kind == memory.NZ:
		if tl.Kind != memory.NZ || tl.Fractal != 0 && tl.Fractal != 512 {
			return g, fmt.Errorf("@%s is NZ but %%%s is %v: A2/A3 pairs an NZ table with an NZ tile of 512-byte fractals (MGather.hpp MGatherCheck)", g.t.Name, g.tileName, tl.Kind)
		}
		return g, g.openNZ(o, l)
	case l.Kind != memory.ND:
		return g, fmt.Errorf("@%s is %v: A2/A3 takes ND or NZ tables (MGather.hpp MGatherCheck)", g.t.Name, l.Kind)
	}
	g.start = o.Off / g.es
	if g.elem {
		g.capacity = g.rows*g.cols - g.start
		return g, g.elemShape()
	}
	r0, c0 := g.start/g.cols, g.start%g.cols
	g.capacity = g.rows - r0
	if c0+int64(g.tile.cols) > g.cols {
		return g, fmt.Errorf("a row of %d elements from column %d passes @%s's %d columns", g.tile.cols, c0, g.t.Name, g.cols)
	}
	return g, g.rowShape()
}

func (g *gmIndexed) elemShape() error {
	if g.idx.rows != g.tile.rows || g.idx.cols != g.tile.cols {
		return fmt.Errorf("#coalesce=elem: index tile valid [%d, %d] must equal the data tile's [%d, %d]", g.idx.rows, g.idx.cols, g.tile.rows, g.tile.cols)
	}
	return nil
}

func (g *gmIndexed) rowShape() error {
	if g.idx.rows != 1 || g.idx.cols != g.tile.rows {
		return fmt.Errorf("#coalesce=row: index tile valid [%d, %d] must be [1, %d], one index per row", g.idx.rows, g.idx.cols, g.tile.rows)
	}
	return nil
}

// openNZ checks an NZ table against MGatherCheck's NZ rules (whole 16-row
// fractals, C0 = 32 bytes of elements; the tile's rows a multiple of 16 and
// its columns of C0) and finds its first row. The table is the tensor's
// matrix from a fractal row boundary, column 0: pto-isa's NZ GlobalTensor
// is whole fractals. A Row move copies whole table rows
// (MGatherRowNzImpl's bursts cover every column block), so the tile's valid
// columns are the table's.
func (g *gmIndexed) openNZ(o *Operand, l memory.Layout2D) error {
	g.nz, g.lay = true, l
	g.c0n = 32 / g.es
	tl := g.tile.l
	if g.rows%16 != 0 || g.cols%g.c0n != 0 {
		return fmt.Errorf("the NZ table @%s is [%d, %d]: A2/A3 takes whole fractals, rows a multiple of 16 and columns of %d (MGather.hpp MGatherCheck: staticShape[3] == 16, staticShape[4] == 32 / sizeof(T))", g.t.Name, g.rows, g.cols, g.c0n)
	}
	if tl.Rows%16 != 0 || int64(tl.Cols)%g.c0n != 0 {
		return fmt.Errorf("the NZ tile %%%s is [%d, %d]: A2/A3 takes rows a multiple of 16 and columns of %d (MGather.hpp MGatherCheck)", g.tileName, tl.Rows, tl.Cols, g.c0n)
	}
	mb := l.Footprint()
	if o.Off < 0 || o.Off >= mb || o.Off%g.es != 0 {
		return fmt.Errorf("the NZ table @%s must start in its first matrix", g.t.Name)
	}
	br, bc := l.Box()
	boxB := int64(br*bc) * g.es
	in := (o.Off % boxB) / g.es
	nbr := int64((l.Rows + br - 1) / br)
	box := o.Off / boxB
	r0, c0 := (box%nbr)*int64(br)+in/int64(bc), (box/nbr)*int64(bc)+in%int64(bc)
	if c0 != 0 || r0%16 != 0 {
		return fmt.Errorf("the NZ table @%s starts at [%d, %d]: it must start at column 0 on a fractal row (a multiple of 16)", g.t.Name, r0, c0)
	}
	g.r0 = r0
	if g.elem {
		g.capacity = (g.rows - r0) * g.cols
		return g.elemShape()
	}
	g.capacity = g.rows - r0
	if int64(g.tile.cols) != g.cols {
		return fmt.Errorf("#coalesce=row on an NZ table moves whole rows (MGatherRowNzImpl): %%%s's valid columns are %d, @%s has %d", g.tileName, g.tile.cols, g.t.Name, g.cols)
	}
	return g.rowShape()
}

// runs calls f for each contiguous run of table elements unit k (a row in
// Row mode, an element in Elem mode, k after remapping) covers: j is the
// run's first column of the data tile's row (Row) or 0 (Elem), off its
// byte offset in the tensor, n its length in elements. An ND row is one
// run; an NZ row is a run per column block (MGatherRowMultiDma's bursts of
// C0 elements).
func (g *gmIndexed) runs(k int64, f func(j int, off, n int64) error) error {
	switch {
	case !g.nz && g.elem:
		return f(0, (g.start+k)*g.es, 1)
	case !g.nz:
		return f(0, (g.start+k*g.cols)*g.es, int64(g.tile.cols))
	case g.elem:
		return f(0, g.lay.Offset(int(g.r0+k/g.cols), int(k%g.cols)), 1)
	}
	for cb := int64(0); cb < g.cols; cb += g.c0n {
		if err := f(int(cb), g.lay.Offset(int(g.r0+k), int(cb)), g.c0n); err != nil {
			return err
		}
	}
	return nil
}

// order calls f for each position (r, c) of the data tile the walk visits,
// in the header's order: row-major, one position per row in Row mode; an
// NZ Elem walk goes by column block, then row, then column in the block
// (MGatherElemNzImpl, MScatterElemNzImpl), which decides the last write of
// a scatter whose indices collide.
func (g *gmIndexed) order(f func(r, c int) error) error {
	d := &g.tile
	if !g.elem {
		for r := 0; r < d.rows; r++ {
			if err := f(r, 0); err != nil {
				return err
			}
		}
		return nil
	}
	bw := d.cols
	if g.nz {
		bw = int(g.c0n)
	}
	for cb := 0; cb < d.cols; cb += bw {
		for r := 0; r < d.rows; r++ {
			for c := cb; c < min(cb+bw, d.cols); c++ {
				if err := f(r, c); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// remap applies #oob to index x: the element (or row) to access and whether
// to access one at all (MGather.hpp mgather_remap, MScatter.hpp).
func (g *gmIndexed) remap(x int64, pos string) (int64, bool, error) {
	if x >= 0 && x < g.capacity {
		return x, true, nil
	}
	switch g.oob {
	case "clamp":
		return g.capacity - 1, true, nil
	case "wrap":
		return x % g.capacity, true, nil
	case "zero", "skip":
		return 0, false, nil
	}
	unit := "rows"
	if g.elem {
		unit = "elements"
	}
	from := fmt.Sprintf("element %d", g.start)
	if g.nz {
		from = fmt.Sprintf("row %d", g.r0)
	}
	return 0, false, fmt.Errorf("index %d at %s is outside the table (@%s from %s: %d %s); #oob=undefined requires every index in range",
		x, pos, g.t.Name, from, g.capacity, unit)
}

// index reads the index at (r, c) as pto-isa does, a uint32: a negative
// int32 index is a huge one.
func (g *gmIndexed) index(r, c int) int64 { return int64(uint32(g.idx.bits(r, c))) }

func execMGather(op *asm.COp, args []Operand, s *ExecScratch) error {
	g, err := openIndexed(op, args, true)
	if err != nil {
		return err
	}
	s.img.gm = s.img.gm[:0]
	if g.capacity <= 0 {
		return fmt.Errorf("the table @%s is empty from element %d", g.t.Name, g.start)
	}
	d := &g.tile
	if g.nz && !g.elem && g.oob == "zero" {
		// MGatherRowNzImpl zeroes the tile first, then copies the rows in
		// range (rows past the valid region, which it zeroes too, are not
		// the op's to write here).
		for r := 0; r < d.rows; r++ {
			for c := 0; c < d.cols; c++ {
				d.setBits(r, c, 0)
			}
		}
	}
	err = g.order(func(r, c int) error {
		// Row: one index per row, idx[0, r]; Elem: idx[r, c].
		k, ok, err := g.remap(g.index(pick(g.elem, r, 0), pick(g.elem, c, r)), idxPos(g.elem, r, c))
		if err != nil {
			return err
		}
		if !ok { // #oob=zero
			n := 1
			if !g.elem {
				n = d.cols
			}
			for j := 0; j < n; j++ {
				d.setBits(r, c+j, 0)
			}
			return nil
		}
		return g.runs(k, func(j int, off, n int64) error {
			if err := g.rowIO(off, n, func(i int, a int64) { d.setBits(r, c+j+i, loadBits(g.buf.Data, a, g.es)) }); err != nil {
				return err
			}
			s.img.note(off, off+n*g.es)
			return nil
		})
	})
	if err != nil {
		return err
	}
	d.written()
	return nil
}

func execMScatter(op *asm.COp, args []Operand, s *ExecScratch) error {
	g, err := openIndexed(op, args, false)
	if err != nil {
		return err
	}
	s.img.gm = s.img.gm[:0]
	if g.capacity <= 0 {
		return fmt.Errorf("the table @%s is empty from element %d", g.t.Name, g.start)
	}
	src := &g.tile
	put := func(r, c int, a int64) {
		if !g.atomic {
			storeBits(g.buf.Data, a, g.es, src.bits(r, c))
			return
		}
		// #atomic=add: the MTE3 atomic add (Row) or the scalar's
		// read-add-write (Elem); floats round once to the dtype, integers wrap.
		old := loadBits(g.buf.Data, a, g.es)
		if g.t.DType.IsFloat() {
			storeBits(g.buf.Data, a, g.es, memory.Encode(g.t.DType, decodeF(g.t.DType, old)+src.f(r, c), memory.RoundRint))
		} else {
			storeBits(g.buf.Data, a, g.es, memory.EncodeInt(g.t.DType, memory.DecodeInt(g.t.DType, old)+src.i(r, c)))
		}
	}
	return g.order(func(r, c int) error {
		x := g.index(pick(g.elem, r, 0), pick(g.elem, c, r))
		k, ok, err := g.remap(x, idxPos(g.elem, r, c))
		if err != nil || !ok {
			return err
		}
		return g.runs(k, func(j int, off, n int64) error {
			if err := g.rowIO(off, n, func(i int, a int64) { put(r, c+j+i, a) }); err != nil {
				return err
			}
			g.buf.Written(off, n*g.es)
			s.img.note(off, off+n*g.es)
			return nil
		})
	})
}

// rowIO touches n elements of the table from byte off (committing sparse
// pages) and calls f for each with its byte address.
func (g *gmIndexed) rowIO(off, n int64, f func(j int, a int64)) error {
	if err := g.buf.Touch(off, n*g.es); err != nil {
		return err
	}
	for j := int64(0); j < n; j++ {
		f(int(j), off+j*g.es)
	}
	return nil
}

func pick(b bool, x, y int) int {
	if b {
		return x
	}
	return y
}

func idxPos(elem bool, r, c int) string {
	if elem {
		return fmt.Sprintf("idx[%d, %d]", r, c)
	}
	return fmt.Sprintf("idx[0, %d]", r)
}

// ---- IMG2COL ----

// execImg2col is TIMG2COL (TImg2col.hpp's img2colv2_cbuf_to_ca, with the
// element formula of include/pto/cpu/TImg2col.hpp): dst[r, c] is input
// pixel (c1, ih, iw, c0) of the NC1HWC0 map for output position m = posm+r
// and K index k = posk+c, k = ((c1·kh + i)·kw + j)·C0 + c0, ih = (m / outW)·sh
// + i·dh - padTop, iw = (m % outW)·sw + j·dw - padLeft; the padding value
// where (ih, iw) is off the map, where m passes outH·outW or c1 passes C1.
// The map is the [C1·H·W, C0] source tile (C0 = 32 bytes of elements), H
// and W from setfmatrix.
func execImg2col(op *asm.COp, args []Operand, s *ExecScratch) error {
	vs, err := views(args, "dst", "src")
	if err != nil {
		return err
	}
	if err := need(args, 4); err != nil {
		return err
	}
	d, src := &vs[0], &vs[1]
	rg := s.img.op
	if rg == nil || !rg.fmSet {
		return fmt.Errorf("no setfmatrix before it (the FMATRIX register gives the map's height and width)")
	}
	if rg.rptTime > 1 {
		// Refused, not guessed: no source ptoasm follows says where the
		// repeats after the first land on A2/A3.
		return fmt.Errorf("set_img2col_rpt repeat time %d: only 1 is modelled; pto-isa's A2/A3 TIMG2COL sizes its one load by the destination (a2a3/TImg2col.hpp at 3186c381: stepM and stepK from its valid shape), the A2/A3 repeat word has no destination stride or position (A5's SetRepeat adds dstStride and dstMposition, a5/TImg2col.hpp), and the CPU reference ignores the repeat (cpu/TImg2col.hpp), so where later repeats land is not defined", rg.rptTime)
	}
	switch d.dt {
	case asm.I8, asm.F16, asm.BF16, asm.F32:
	default:
		return fmt.Errorf("%v: A2/A3 takes int8, half, bfloat16 or float (TImg2col.hpp)", d.dt)
	}
	if src.dt != d.dt {
		return fmt.Errorf("source %v, destination %v: the dtypes must match", src.dt, d.dt)
	}
	attr := func(k string) int64 {
		if a, ok := op.Attr(k); ok && s.Env != nil {
			return a.Val.Eval(s.Env)
		} else if ok {
			return a.Val.Eval(&asm.Env{})
		}
		return 1
	}
	kh, kw, sh, sw, dh, dw := attr("kh"), attr("kw"), attr("sh"), attr("sw"), attr("dh"), attr("dw")
	for _, v := range []struct {
		k string
		x int64
	}{{"kh", kh}, {"kw", kw}, {"sh", sh}, {"sw", sw}, {"dh", dh}, {"dw", dw}} {
		if v.x < 1 || v.x > 255 && (v.k[0] == 's' || v.k[0] == 'd') || v.x > 4095 {
			return fmt.Errorf("#%s=%d outside its range (strides and dilations 1..255, filter 1..4095)", v.k, v.x)
		}
	}
	c0 := int64(32 / d.dt.Size())
	if int64(src.cols) != c0 {
		return fmt.Errorf("the map tile's valid columns are %d; NC1HWC0 as [C1·H·W, C0] has C0 = %d for %v", src.cols, c0, d.dt)
	}
	H, W := rg.fmH, rg.fmW
	if int64(src.rows)%(H*W) != 0 {
		return fmt.Errorf("the map tile's %d valid rows are not C1·H·W for the FMATRIX's H=%d, W=%d", src.rows, H, W)
	}
	c1n := int64(src.rows) / (H * W)
	pl, pr, pt, pb := rg.pad[0], rg.pad[1], rg.pad[2], rg.pad[3]
	outH := (H+pt+pb-dh*(kh-1)-1)/sh + 1
	outW := (W+pl+pr-dw*(kw-1)-1)/sw + 1
	if H+pt+pb-dh*(kh-1)-1 < 0 || W+pl+pr-dw*(kw-1)-1 < 0 {
		return fmt.Errorf("a %d×%d filter (dilation %d, %d) does not fit the padded %d×%d map", kh, kw, dh, dw, H+pt+pb, W+pl+pr)
	}
	posm, posk := args[2].Int, args[3].Int
	if posm < 0 || posk < 0 || posm > 65535 || posk > 65535 {
		return fmt.Errorf("position (%d, %d) outside 0..65535", posm, posk)
	}
	padBits := memory.Encode(d.dt, rg.padVal, memory.RoundRint)
	kc := c0 * kh * kw
	for r := 0; r < d.rows; r++ {
		m := posm + int64(r)
		for c := 0; c < d.cols; c++ {
			k := posk + int64(c)
			bits := padBits
			if c1 := k / kc; m < outH*outW && c1 < c1n {
				ko := (k % kc) / c0
				i, j := ko/kw, ko%kw
				ih := (m/outW)*sh + i*dh - pt
				iw := (m%outW)*sw + j*dw - pl
				if ih >= 0 && ih < H && iw >= 0 && iw < W {
					bits = src.bits(int((c1*H+ih)*W+iw), int(k%c0))
				}
			}
			d.setBits(r, c, bits)
		}
	}
	d.written()
	return nil
}

// ---- Fixpipe quantisation ----

// quantParams gives the parameter word for each column of a quantised move:
// the scaling tile's u64 (vector) or the QUANT_PRE register (scalar).
type quantParams struct {
	vector bool
	relu   bool // #relu=normal
	fp     view
	scalar uint64
}

func (q *quantParams) at(c int) (uint64, error) {
	if !q.vector {
		return q.scalar, nil
	}
	if c >= q.fp.cols {
		return 0, fmt.Errorf("the scaling tile has %d valid columns; column %d needs one", q.fp.cols, c)
	}
	return q.fp.bits(0, c), nil
}

// openQuant finds a move's parameters: the scaling tile operand at fpArg
// (the _fp forms, and #quant=vector, whose tile the engine appends from the
// FPC register), or the QUANT_PRE register (#quant=scalar).
func openQuant(op *asm.COp, args []Operand, fpArg int, s *ExecScratch) (q quantParams, err error) {
	relu := reluOf(op)
	defer func() { q.relu = relu }()
	scalar := false
	if a, ok := op.Attr("quant"); ok {
		scalar = strings.EqualFold(a.Word, "scalar")
	} else if op.Info.Op == asm.OpTstoreQ || op.Info.Op == asm.OpTmovQ {
		scalar = true
	}
	if scalar {
		rg := s.img.op
		if rg == nil || !rg.quantSet {
			return q, fmt.Errorf("#quant=scalar: no set_quant_scalar before it")
		}
		return quantParams{scalar: rg.quantPre}, nil
	}
	if fpArg >= len(args) || args[fpArg].Kind != asm.ArgTile {
		return q, fmt.Errorf("#quant=vector: no set_quant_vector before it")
	}
	fp, err := tileView(&args[fpArg], "fp")
	if err != nil {
		return q, err
	}
	if fp.dt.Size() != 8 {
		return q, fmt.Errorf("the scaling tile %%%s is %v; its parameters are 64-bit words (u64)", args[fpArg].Tile.Name, fp.dt)
	}
	return quantParams{vector: true, fp: fp}, nil
}

// fixQuant is the fixpipe's pre-stage quantisation of one L0C element x
// (f32 or i32) to dt with parameter word w, as include/pto/cpu/common.hpp's
// quantize_element computes it: the scale is the word's low 32 bits as an
// f32 (scalar) or its 19-bit M1 field, bits 13..31, sign, 8-bit exponent and
// 10-bit mantissa (vector); bits 37..45 are an offset added before rounding
// to an 8-bit integer and bit 46 picks signed [-128, 127] or unsigned
// [0, 255] saturation. The arithmetic is f32: x·scale rounds once, then
// +offset rounds. An i32→f16 result saturates to ±65504; an f32→f16 one
// saturates when finite (inf and NaN pass: the saturate-inf control bit is
// clear by default). A NaN into an 8-bit integer gives 0 (the C++ cast is
// undefined there). i32→i16 (SHIFTS322S16, VSHIFTS322S16) ignores the scale:
// x shifts right arithmetically by bits 32..35 plus one and saturates to
// [-32768, 32767], as pto-isa's reference generator does
// (tests/cpu/st/testcase/textract_quant/gen_data.py apply_quant_element:
// np.clip); common.hpp casts to int16_t before its clamp, which wraps
// instead, and is not followed. The pairs are GetScalarPreQuantMode's and
// GetVectorPreQuantMode's; others are refused.
func fixQuant(x float64, from, to asm.DType, w uint64, vector bool) (uint64, error) {
	return fixQuantRelu(x, from, to, w, vector, false)
}

// fixQuantRelu is fixQuant with the fixpipe's ReluPreMode::NormalRelu when
// relu is set: quantize_element (include/pto/cpu/common.hpp at 3186c381)
// zeroes a result that is not above 0 (NaN included) after the
// quantisation, before the cast to the destination type.
func fixQuantRelu(x float64, from, to asm.DType, w uint64, vector, relu bool) (uint64, error) {
	mode := ""
	switch {
	case from == asm.F32 && (to == asm.I8 || to == asm.U8), from == asm.I32 && (to == asm.I8 || to == asm.U8):
		mode = "b8"
	case from == asm.I32 && to == asm.F16:
		mode = "deqf16"
	case !vector && from == asm.F32 && to == asm.F16:
		mode = "f16"
	case !vector && from == asm.F32 && to == asm.BF16:
		mode = "bf16"
	case from == asm.I32 && to == asm.I16:
		mode = "shift"
	}
	if mode == "" {
		kind := "scalar"
		if vector {
			kind = "vector"
		}
		return 0, fmt.Errorf("no %s quantisation from %v to %v on A2/A3 (pto-isa a2a3/common.hpp GetScalarPreQuantMode/GetVectorPreQuantMode)", kind, from, to)
	}
	if mode == "shift" {
		v := max(-32768, min(32767, int64(x)>>((w>>32)&0xF+1)))
		if relu {
			v = max(v, 0)
		}
		return memory.EncodeInt(to, v), nil
	}
	scale := math.Float32frombits(uint32(w))
	if vector {
		scale = quantM1(w)
	}
	r := float32(float32(x) * scale)
	switch mode {
	case "b8":
		off := float32((w >> 37) & 0x1FF)
		v := float64(float32(r + off))
		lo, hi := -128.0, 127.0
		if (w>>46)&1 == 0 {
			lo, hi = 0, 255
		}
		if math.IsNaN(v) {
			v = 0
		}
		v = math.Max(lo, math.Min(hi, math.RoundToEven(v)))
		if relu {
			v = math.Max(v, 0)
		}
		return memory.EncodeInt(to, int64(v)), nil
	case "deqf16":
		if !math.IsNaN(float64(r)) {
			r = float32(math.Max(-65504, math.Min(65504, float64(r))))
		}
	case "f16":
		if !math.IsInf(float64(r), 0) && !math.IsNaN(float64(r)) {
			r = float32(math.Max(-65504, math.Min(65504, float64(r))))
		}
	}
	if relu && !(r > 0) {
		r = 0
	}
	return memory.Encode(to, float64(r), memory.RoundRint), nil
}

// quantM1 decodes a vector parameter's M1 field as common.hpp's
// extract_m1_from_quant does: an exponent of 0 is not denormal.
func quantM1(w uint64) float32 {
	m1 := uint32(w>>13) & 0x7FFFF
	sign, exp, mant := m1>>18&1, int(m1>>10&0xFF), m1&0x3FF
	if exp == 0 && mant == 0 {
		return 0
	}
	v := float32(math.Ldexp(1+float64(mant)/1024, exp-127))
	if sign == 1 {
		v = -v
	}
	return v
}

// execStoreQuant is TSTORE_FP and the register-quantised tstore.q: the acc
// tile's valid region to the GM window, each element through fixQuant with
// its column's parameters. (pto-isa's CPU TStore.hpp indexes them by row for
// a column-major accumulator; the parameters are per output channel, the
// column, as its TExtract.hpp and TInsert.hpp index them and the scaling
// tile's [1, N] shape says, so every quantised move here uses the column.)
func execStoreQuant(op *asm.COp, args []Operand, s *ExecScratch) error {
	if err := need(args, 2); err != nil {
		return err
	}
	src, err := tileView(&args[1], "src")
	if err != nil {
		return err
	}
	q, err := openQuant(op, args, 2, s)
	if err != nil {
		return err
	}
	g, err := gmView(&args[0], src.rows, src.cols)
	if err != nil {
		return err
	}
	if err := checkQuantPair(src.dt, g.dt, true); err != nil {
		return err
	}
	atomic := false
	if a, ok := op.Attr("atomic"); ok {
		atomic = strings.EqualFold(a.Word, "add")
	}
	if err := quantCopy(&g, &src, &q, 0, atomic); err != nil {
		return err
	}
	g.written()
	return nil
}

// checkQuantPair refuses the dtype pairs A2/A3's quantised FIX paths refuse
// before any mode is chosen (at 3186c381): a store to GM
// (a2a3/TStore.hpp CheckAcc2gm) writes int8/uint8 from f32 and int8, uint8
// or half from i32; a move into L1 (a2a3/common.hpp CheckTMovAccToMat,
// isCastQuant false, as tmov, textract and tinsert pass it for a scalar or
// vector quant) writes int8 from f32 and int8, uint8, half or int16 from
// i32. GetScalarPreQuantMode names modes for more pairs (QF322F16_PRE,
// SHIFTS322S16 to GM), but no quantised op reaches them; an unscaled f32 to
// half or bf16 is a plain tstore or tmov.
func checkQuantPair(src, dst asm.DType, toGM bool) error {
	ok := false
	switch src {
	case asm.F32:
		ok = dst == asm.I8 || (toGM && dst == asm.U8)
	case asm.I32:
		ok = dst == asm.I8 || dst == asm.U8 || dst == asm.F16 || (!toGM && dst == asm.I16)
	}
	switch {
	case ok:
		return nil
	case toGM:
		return fmt.Errorf("a quantised TSTORE writes int8/uint8 from f32 and int8, uint8 or half from i32 on A2/A3, not %s from %s (a2a3/TStore.hpp CheckAcc2gm at 3186c381); the i32→i16 shift is for moves into L1, an unscaled f32→half a plain tstore", dst, src)
	default:
		return fmt.Errorf("a quantised move into L1 writes int8 from f32 and int8, uint8, half or int16 from i32 on A2/A3, not %s from %s (a2a3/common.hpp CheckTMovAccToMat at 3186c381); an unscaled f32→half is a plain tmov", dst, src)
	}
}

// execMoveQuant is TMOV_FP, tmov.q, TEXTRACT_FP and TINSERT_FP (acc→mat on
// FIX): textract.fp reads the dst-sized window of src at (row, col) and its
// column col+j takes parameter col+j (include/pto/cpu/TExtract.hpp);
// tinsert.fp writes src into dst at (row, col), source column j taking
// parameter j (TInsert.hpp).
func execMoveQuant(op *asm.COp, args []Operand, s *ExecScratch) error {
	vs, err := views(args, "dst", "src")
	if err != nil {
		return err
	}
	d, src := vs[0], vs[1]
	code := op.Info.Op
	fpArg := 2
	var row, col int
	if code == asm.OpTextractFp || code == asm.OpTinsertFp {
		if err := need(args, 5); err != nil {
			return err
		}
		row, col = int(args[3].Int), int(args[4].Int)
	}
	if err := checkQuantPair(src.dt, d.dt, false); err != nil {
		return err
	}
	q, err := openQuant(op, args, fpArg, s)
	if err != nil {
		return err
	}
	pc := 0
	switch code {
	case asm.OpTinsertFp:
		if d, err = d.sub(row, col, src.rows, src.cols); err != nil {
			return err
		}
	default:
		if src, err = src.sub(row, col, d.rows, d.cols); err != nil {
			return err
		}
		pc = col
	}
	if err := quantCopy(&d, &src, &q, pc, false); err != nil {
		return err
	}
	d.written()
	return nil
}

// quantCopy writes d[r, c] = fixQuant(src[r, c]) with column c's parameter
// taken at pc+c; atomic adds the result to d in d's dtype.
func quantCopy(d, src *view, q *quantParams, pc int, atomic bool) error {
	if d.rows != src.rows || d.cols != src.cols {
		return fmt.Errorf("shape mismatch: [%d, %d] into [%d, %d]", src.rows, src.cols, d.rows, d.cols)
	}
	if src.dt != asm.F32 && src.dt != asm.I32 {
		return fmt.Errorf("the source is %v; L0C holds f32 or i32", src.dt)
	}
	for c := 0; c < d.cols; c++ {
		w, err := q.at(pc + c)
		if err != nil {
			return err
		}
		for r := 0; r < d.rows; r++ {
			x := src.f(r, c)
			if src.dt == asm.I32 {
				x = float64(src.i(r, c))
			}
			b, err := fixQuantRelu(x, src.dt, d.dt, w, q.vector, q.relu)
			if err != nil {
				return err
			}
			if atomic {
				if d.dt.IsFloat() {
					b = memory.Encode(d.dt, d.f(r, c)+decodeF(d.dt, b), memory.RoundRint)
				} else {
					b = memory.EncodeInt(d.dt, d.i(r, c)+memory.DecodeInt(d.dt, b))
				}
			}
			d.setBits(r, c, b)
		}
	}
	return nil
}

// ---- The engine's side ----

// indexedWaits are the pipes whose earlier work the scalar waits for
// (PtoSetWaitFlag<P, PIPE_S>, event 0) before it reads the first index, as
// pto-isa's a2a3 headers do at 3186c381: MGatherRowImpl waits for V and
// MTE3 only, since its row DMAs queue on MTE2 behind any load still in
// flight, which must not be the index tile's (the scalar reads that
// itself); MScatterRowImpl waits for V and MTE2, its DMAs queueing on MTE3;
// the Elem forms move every element on the scalar and wait for all three.
func indexedWaits(gather, elem bool) []asm.Pipe {
	switch {
	case elem:
		return []asm.Pipe{asm.PipeV, asm.PipeMTE3, asm.PipeMTE2}
	case gather:
		return []asm.Pipe{asm.PipeV, asm.PipeMTE3}
	}
	return []asm.Pipe{asm.PipeV, asm.PipeMTE2}
}

// indexedSync appends PtoSetWaitFlag<src, dst>() (event 0) to the
// expansion: the set on src's queue (at once when src is the scalar), the
// wait on dst's (the scalar stops when dst is S).
func (c *core) indexedSync(op *asm.COp, src, dst asm.Pipe) {
	if src == asm.PipeS {
		mc := c.addMicro(mSetS, asm.PipeS)
		mc.e.op, mc.e.flag = op, Flag{Src: src, Dst: dst}
	} else {
		c.microFlag(op, true, src, dst, 0)
	}
	if dst == asm.PipeS {
		mc := c.addMicro(mWaitS, asm.PipeS)
		mc.e.op, mc.e.flag = op, Flag{Src: src, Dst: dst}
	} else {
		c.microFlag(op, false, src, dst, 0)
	}
}

// indexedGM expands mgather/mscatter into the steps of pto-isa's a2a3
// MGather.hpp/MScatter.hpp (3186c381) on an AIV, each with the header's own
// event-0 flags, so that the detector sees exactly the waits the library
// makes and no other:
//
//   - Row (MGatherRowImpl, MScatterRowImpl): the scalar waits for the pipes
//     of indexedWaits, reads the indices (a scalar read of the index tile)
//     and starts a DMA per row on MTE2 (gather: GM→UB) or MTE3 (scatter:
//     UB→GM), modelled as one queue entry for all rows. Afterwards a gather
//     makes V and MTE3 wait for MTE2 and for the scalar; a scatter waits
//     for MTE3 on the scalar (after each row when plain, once when atomic;
//     one entry, so once), and makes V and MTE2 wait for MTE3.
//   - Elem (MGatherElemImpl, MScatterElemImpl): the scalar waits for V,
//     MTE3 and MTE2, moves every element itself, then makes the three pipes
//     wait for it.
//
// The detector sees the index tile read, the data tile, and exactly the GM
// bytes the indices chose.
func (c *core) indexedGM(op *asm.COp) bool {
	m := c.m
	gather := op.Info.Op == asm.OpMgather
	gi, ti := 1, 0
	if !gather {
		gi, ti = 0, 1
	}
	if len(op.Args) != 3 || op.Args[gi].Kind != asm.ArgGM || op.Args[ti].Kind != asm.ArgTile || op.Args[2].Kind != asm.ArgTile {
		m.fail(c.faultK(FaultBadOperand, op, asm.PipeS, "%s needs a tile, a GM table and an index tile", op.Info.Name))
		return false
	}
	elem := false
	if a, ok := op.Attr("coalesce"); ok {
		elem = strings.EqualFold(a.Word, "elem")
	}
	atomic := false
	if a, ok := op.Attr("atomic"); ok {
		atomic = strings.EqualFold(a.Word, "add")
	}
	dma := asm.PipeMTE2
	if !gather {
		dma = asm.PipeMTE3
	}
	for _, p := range [...]asm.Pipe{asm.PipeV, asm.PipeMTE2, asm.PipeMTE3} {
		if c.pipes[p] == nil {
			m.fail(c.faultK(FaultUnsupported, op, asm.PipeS, "%s runs on an AIV: this %s core has no %s pipe", op.Info.Name, c.kind, p))
			return false
		}
	}
	// The steps hold pointers into their own entries (resolveArg's views):
	// room for all of them first, so that no append moves the slice.
	c.micro, c.mi = c.micro[:0], 0
	if cap(c.micro) < 32 {
		c.micro = make([]micro, 0, 32)
	}
	for _, p := range indexedWaits(gather, elem) {
		c.indexedSync(op, p, asm.PipeS)
	}
	if !gather && !elem {
		c.indexedSync(op, asm.PipeS, asm.PipeMTE3)
	}
	// The scalar's step: the whole walk (Elem) or the index reads (Row).
	sc := c.addMicro(mIndexed, asm.PipeS)
	if !c.indexedArgs(op, &sc.e, gi, elem) {
		return false
	}
	switch {
	case elem:
		for _, p := range [...]asm.Pipe{asm.PipeV, asm.PipeMTE2, asm.PipeMTE3} {
			c.indexedSync(op, asm.PipeS, p)
		}
	case gather:
		dm := c.addMicro(mEntry, dma)
		if !c.indexedDMA(op, &dm.e, gi, "mgather.rows") {
			return false
		}
		c.indexedSync(op, asm.PipeS, asm.PipeMTE2)
		c.indexedSync(op, asm.PipeMTE2, asm.PipeV)
		c.indexedSync(op, asm.PipeMTE2, asm.PipeMTE3)
		c.indexedSync(op, asm.PipeS, asm.PipeV)
		c.indexedSync(op, asm.PipeS, asm.PipeMTE3)
	default:
		dm := c.addMicro(mEntry, dma)
		if !c.indexedDMA(op, &dm.e, gi, "mscatter.rows") {
			return false
		}
		c.indexedSync(op, asm.PipeMTE3, asm.PipeS)
		if atomic {
			c.indexedSync(op, asm.PipeS, asm.PipeV)
			c.indexedSync(op, asm.PipeS, asm.PipeMTE2)
		}
		c.indexedSync(op, asm.PipeMTE3, asm.PipeV)
		c.indexedSync(op, asm.PipeMTE3, asm.PipeMTE2)
	}
	return true
}

// indexedArgs resolves the operands of the scalar's step into e. The
// scalar reads the index tile; in Elem mode it also moves the data itself
// (the data tile and the GM bytes are its accesses), in Row mode the DMA
// step does.
func (c *core) indexedArgs(op *asm.COp, e *entry, gi int, elem bool) bool {
	e.op, e.xop = op, op
	e.args = e.args[:0]
	for i := range op.Args {
		e.args = append(e.args, Operand{})
		e.access[i] = op.Info.Operands[i].Access
		if !elem && i != 2 {
			e.access[i] = asm.AccNone
		}
		if !c.resolveArg(op, &op.Args[i], &e.args[i], e, i, 1, 1, nil) {
			return false
		}
	}
	e.access[gi] = asm.AccNone // reported byte for byte (indexedSpans)
	return true
}

// indexedDMA fills the row DMAs' queue entry: the data tile and the GM
// bytes the indices choose; the index tile is the scalar's read. The data
// effect runs when the entry completes and reads the indices then: in a
// program that orders the index tile's writer before the scalar, as the
// header requires, they are the values the scalar read (a program that does
// not gets its RAW from the detector, not wrong rows).
func (c *core) indexedDMA(op *asm.COp, e *entry, gi int, step string) bool {
	if !c.indexedArgs(op, e, gi, true) {
		return false
	}
	e.access[2] = asm.AccNone
	e.eff, e.step = exIndexed, step
	return true
}

// indexedScalar runs the scalar's step of an mgather/mscatter expansion:
// in Elem mode the whole walk, element by element (a scalar UB read, a
// scalar GM access and a scalar UB write per element; docs/isa/MGATHER.md:
// DMA bursts cannot serve single elements); in Row mode the index reads
// and the DMA starts, the rows themselves moving on the DMA step.
func (c *core) indexedScalar(mc *micro) bool {
	m := c.m
	e := &mc.e
	op := e.op
	gather := op.Info.Op == asm.OpMgather
	gi, ti := 1, 0
	if !gather {
		gi, ti = 0, 1
	}
	elem := e.access[ti] != asm.AccNone
	ran := false
	if elem {
		c.scratch.img.gm = c.scratch.img.gm[:0]
		if ran = m.dataOp(op); ran {
			c.scratch.Env = &c.env
			if err := Execute(op, e.args, c.scratch); err != nil {
				m.fail(c.execErr(op, asm.PipeS, err))
				return false
			}
		}
	}
	t := op.Args[ti].Tile
	r := int(e.argRank[gi])
	prof := m.prof
	var d int64
	if elem {
		k := pipes.ScalarGMLoad
		if !gather {
			k = pipes.ScalarGMStore
		}
		d = int64(t.VRows*t.VCols) * (prof.ScalarCycles(k, c.hops(r)) + 2*prof.ScalarCycles(pipes.ScalarOp, 0))
	} else {
		d = int64(t.VRows) * prof.ScalarCycles(pipes.ScalarOp, 0)
	}
	start := c.t
	c.charge(max(d, 1))
	if elem && !gather && ran {
		m.gmWritten(r)
	}
	if m.emitting {
		ev := m.event(EvExec, c, asm.PipeS, op)
		ev.Start, ev.End, ev.Cycle = start, c.t, start
		ev.Issue = c.issued
		ev.Accesses = c.accesses(e, ev.Accesses[:0])
		if elem {
			ev.Accesses = c.indexedSpans(e, ev.Accesses, ran)
		}
		m.emit()
	}
	return true
}

// indexedSpans appends the GM accesses of an mgather/mscatter: exactly the
// bytes its indices chose (imgState.gm, from the run of its data effect),
// or without data, whose indices are unknown, the table from its start.
func (c *core) indexedSpans(e *entry, out []Access, ran bool) []Access {
	m := c.m
	op := e.op
	gather := op.Info.Op == asm.OpMgather
	gi := 1
	if !gather {
		gi = 0
	}
	g := op.Args[gi].GM
	r := int(e.argRank[gi])
	base := m.ranks[r].gm[g.Index].base
	atomic := false
	if a, ok := op.Attr("atomic"); ok {
		atomic = strings.EqualFold(a.Word, "add")
	}
	x := Access{Space: asm.GM, Rank: int32(r), Core: -1, Tensor: g, Write: !gather, Atomic: !gather && atomic,
		ReadOnly: gather && m.readOnly[g.Index]}
	spans := c.scratch.img.gm
	if !ran {
		spans = []gmSpan{{e.args[gi].Off, g.Bytes}}
	}
	for _, s := range spans {
		x.Lo, x.Hi = base+s.lo, base+s.hi
		out = append(out, x)
	}
	return out
}

// indexedCost is the row DMAs' time on their pipe: one transfer of a row
// per index, a burst per 32-byte column block from an NZ table
// (MGatherRowMultiDma's nBurst).
func (p *pipeState) indexedCost(e *entry) int64 {
	m := p.c.m
	gather := e.op.Info.Op == asm.OpMgather
	ti, gi := 0, 1
	src, dst := asm.GM, asm.UB
	if !gather {
		ti, gi, src, dst = 1, 0, asm.UB, asm.GM
	}
	t := e.args[ti].Tile
	path, _ := pipes.DMAPathFor(src, dst)
	row := int64(t.VCols * t.DType.Size())
	bursts := 1
	if g := e.args[gi].GM; g != nil && g.Layout == asm.LayoutNZ {
		bursts = int(max(row/32, 1))
	}
	m.bytes[path] += int64(t.VRows) * row
	return max(int64(t.VRows)*m.prof.DMACycles(path, row, bursts), 1)
}

// setRegs runs a configuration write on the scalar: a new register
// snapshot for the instructions issued after it.
func (c *core) setRegs(op *asm.COp) bool {
	m := c.m
	st := &c.scratch.img
	nr := &cubeRegs{}
	if st.regs != nil {
		*nr = *st.regs
	}
	bad := func(format string, a ...any) bool {
		m.fail(c.faultK(FaultBadOperand, op, asm.PipeS, format, a...))
		return false
	}
	fl := func(i int) float64 {
		if i < len(op.Args) && op.Args[i].Kind == asm.ArgFloat {
			return op.Args[i].F
		}
		return float64(argInt(c, op, i))
	}
	switch op.Info.Op {
	case asm.OpSetfmatrix:
		// SetFmatrix.hpp: W and H are 16-bit fields, each pad 8 bits.
		var v [6]int64
		for i := range v {
			v[i] = argInt(c, op, i)
		}
		if v[0] < 1 || v[0] > 65535 || v[1] < 1 || v[1] > 65535 {
			return bad("setfmatrix: map %d×%d outside 1..65535", v[0], v[1])
		}
		for i, n := range []string{"padl", "padr", "padt", "padb"} {
			if v[2+i] < 0 || v[2+i] > 255 {
				return bad("setfmatrix: %s=%d outside 0..255", n, v[2+i])
			}
		}
		nr.fmSet, nr.fmH, nr.fmW, nr.pad = true, v[0], v[1], [4]int64{v[2], v[3], v[4], v[5]}
	case asm.OpSetImg2colPadding:
		nr.padVal = fl(0)
	case asm.OpSetImg2colRpt:
		// SetImg2colRpt.hpp: stride 16 bits, time and mode 8 bits.
		s, n, md := argInt(c, op, 0), argInt(c, op, 1), argInt(c, op, 2)
		if s < 0 || s > 65535 || n < 0 || n > 255 || md < 0 || md > 255 {
			return bad("set_img2col_rpt: stride %d (0..65535), time %d, mode %d (0..255)", s, n, md)
		}
		nr.rptTime = n
	case asm.OpSetQuantScalar:
		out := "i8"
		if a, ok := op.Attr("out"); ok {
			out = strings.ToLower(a.Word)
		}
		var shift uint64
		if a, ok := op.Attr("shift"); ok {
			shift = uint64(a.Val.Eval(&c.env))
		}
		nr.quantSet, nr.quantPre = true, asm.QuantPreWord(float32(fl(0)), out, shift)
	case asm.OpSetQuantVector:
		var e entry
		var o Operand
		if len(op.Args) < 1 || !c.resolveArg(op, &op.Args[0], &o, &e, 0, 1, 1, nil) {
			return len(op.Args) < 1 && bad("set_quant_vector needs a scaling tile")
		}
		nr.fpSet, nr.fp = true, o
	}
	st.regs = nr
	start := c.t
	c.charge(max(m.prof.ScalarCycles(pipes.ScalarOp, 0), 1))
	if m.emitting {
		ev := m.event(EvExec, c, asm.PipeS, op)
		ev.Start, ev.End, ev.Cycle = start, c.t, start
		ev.Accesses = ev.Accesses[:0]
		m.emit()
	}
	return true
}

// issueRegs issues timg2col, tstore.q or tmov.q into its pipe with the
// registers as they are now. A #quant=vector move reads the scaling tile
// FPC points at: it becomes the entry's last operand, so the detector sees
// that read.
func (c *core) issueRegs(op *asm.COp) bool {
	m := c.m
	st := &c.scratch.img
	pl := st.plans[op]
	if pl == nil {
		pl = &opPlan{}
		planOp(op, pl, 0, nil)
		pl.data = m.dataOp(op)
		if st.plans == nil {
			st.plans = map[*asm.COp]*opPlan{}
		}
		st.plans[op] = pl
	}
	vector := false
	if a, ok := op.Attr("quant"); ok {
		vector = strings.EqualFold(a.Word, "vector")
	}
	if vector && (st.regs == nil || !st.regs.fpSet) {
		m.fail(c.faultK(FaultBadOperand, op, op.Pipe, "%s #quant=vector: no set_quant_vector before it", op.Info.Name))
		return false
	}
	p := op.Pipe
	e := c.pushExec(op, pl)
	if e == nil {
		return false
	}
	e.regs = st.regs
	if vector {
		n := len(e.args)
		if n >= maxArgs {
			m.fail(c.faultK(FaultBadOperand, op, p, "too many operands"))
			return false
		}
		e.args = append(e.args, st.regs.fp)
		e.access[n] = asm.AccRead
		e.argsOf = nil // the slot's operands are not this op's plain ones
	}
	c.pushed(c.pipes[p], e)
	return true
}

// reluOf says whether a move out of L0C carries #relu=normal (the
// assembler refuses it on other sources).
func reluOf(op *asm.COp) bool {
	a, ok := op.Attr("relu")
	return ok && strings.EqualFold(a.Word, "normal")
}
