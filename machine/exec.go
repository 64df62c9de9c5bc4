package machine

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"strings"
	"sync"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/memory"
)

// This file and its exec_*.go siblings give every tile instruction its data
// effect. They know nothing about time: the engine decides when an op completes
// and calls Execute then, with the operands resolved for that dynamic instance.
//
// Conventions shared by every op:
//   - ops iterate the destination tile's valid region [VRows × VCols]; elements
//     outside it are untouched;
//   - float results are computed in float64 from the decoded inputs and rounded
//     once to the destination dtype (round to nearest even unless #rnd says
//     otherwise); integer results are computed in int64 and wrap on store;
//   - a tile is addressed through memory.TileLayout, so ND, DN and the NZ/ZZ/ZN
//     fractal layouts all agree on logical (r, c);
//   - poison (never-written bytes) moves with the data through DMA and tile moves
//     (memory.Copy2D); compute ops mark what they write as initialised, and rely on
//     the hazard detector to report the uninitialised read itself.

// Operand is an instruction operand resolved at execution time.
type Operand struct {
	Kind asm.ArgKind
	Buf  *memory.Buffer // the tile's core buffer, or the owning rank's buffer of the GM tensor
	// Off is the byte offset of the tile (array element) in Buf, or of the GM
	// window's first element in the tensor's buffer: the physical offset in the
	// tensor's layout, as GMOffset computes it (for ND it is the row-major offset).
	Off  int64
	Tile *asm.TileInfo
	GM   *asm.TensorInfo
	// RowStride is, for GM windows, the bytes between consecutive rows of the 2-D
	// window (last dim × elem size). The row pitch comes from the tensor's shape;
	// a non-zero RowStride that disagrees with it is reported as a fault.
	RowStride int64
	Int       int64   // ArgScalar/ArgReg value
	F         float64 // ArgFloat
	Word      string  // ArgWord
	Pipe      asm.Pipe
}

// ExecScratch holds buffers Execute reuses, so that steady-state execution
// allocates nothing. One per engine goroutine; it is not safe for concurrent use.
type ExecScratch struct {
	// Env evaluates expression attributes (#init=(%k == 0)). The engine sets it to
	// the issuing core's environment before each Execute; constant attributes need
	// no Env.
	Env *asm.Env

	fa, fb, fc []float32
	ia, ib, ic []int32
	// wg waits for gemmF32's bands; here, not on the stack, so a matmul
	// hands work to the pool without allocating.
	wg sync.WaitGroup
	// img is the IMG2COL/fixpipe registers and mgather/mscatter's GM ranges
	// (sem_img.go).
	img imgState
}

// NewExecScratch returns empty scratch space.
func NewExecScratch() *ExecScratch { return &ExecScratch{} }

// Execute applies the data effect of op. args are destination-first in the order
// of op.Info.Operands. It returns an error (never panics) for runtime faults: a GM
// window outside its tensor, a shape mismatch at run time, an unsupported dtype
// combination. Sync, scalar and composite comm ops have no data effect here (the
// engine implements them, calling LoadTile/StoreTile for their transfer steps).
func Execute(op *asm.COp, args []Operand, s *ExecScratch) (err error) {
	if op == nil || op.Info == nil {
		return fmt.Errorf("execute: instruction has no ISA entry")
	}
	if s == nil {
		s = NewExecScratch()
	}
	// A fault in the arithmetic below is a bug here, but it must surface as an
	// error at the instruction, not take the whole simulation down.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%s: internal error: %v", op.Info.Name, r)
		}
	}()
	sm := &semTable[op.Info.Op]
	if sm.engine {
		return nil
	}
	if sm.exec == nil {
		return fmt.Errorf("%s: no data semantics for this instruction", op.Info.Name)
	}
	if err := sm.exec(op, args, s); err != nil {
		return fmt.Errorf("%s: %w", op.Info.Name, err)
	}
	return nil
}

func need(args []Operand, n int) error {
	if len(args) < n {
		return fmt.Errorf("needs %d operands, got %d", n, len(args))
	}
	return nil
}

// StaticFlops is Flops of op with its declared operands: what every
// instance does when its tiles' valid shapes are the declared ones (the
// trace and the report count per op, not per instance).
func StaticFlops(op *asm.COp) int64 {
	var args [4]Operand
	n := min(len(op.Args), len(args))
	for i := 0; i < n; i++ {
		args[i] = Operand{Kind: op.Args[i].Kind, Tile: op.Args[i].Tile, GM: op.Args[i].GM}
	}
	return Flops(op, args[:n])
}

// Flops is the floating-point (or integer multiply-accumulate) operation count of
// op for TFLOPS reporting: 2·M·K·N for matmuls, one per destination element for
// elementwise vector ops, one per source element for reductions, 0 otherwise.
func Flops(op *asm.COp, args []Operand) int64 {
	if op == nil || op.Info == nil {
		return 0
	}
	switch semTable[op.Info.Op].flops {
	case flopMatmul:
		if len(args) < 3 || args[1].Tile == nil || args[2].Tile == nil {
			return 0
		}
		a, b := args[1].Tile, args[2].Tile
		return 2 * int64(a.VRows) * int64(a.VCols) * int64(b.VCols)
	case flopDst:
		if len(args) > 0 && args[0].Tile != nil {
			return int64(args[0].Tile.VRows) * int64(args[0].Tile.VCols)
		}
	case flopSrc:
		if len(args) > 1 && args[1].Tile != nil {
			return int64(args[1].Tile.VRows) * int64(args[1].Tile.VCols)
		}
	}
	return 0
}

// Bytes is the number of bytes op moves between spaces (DMA and tile moves) for
// the per-path report: the elements of the transfer window times the size of the
// element as it lands at the destination. Other ops move nothing.
func Bytes(op *asm.COp, args []Operand) int64 {
	if op == nil || op.Info == nil {
		return 0
	}
	switch semTable[op.Info.Op].bytes {
	case byteTransfer:
		var tile *asm.TileInfo
		var gm *asm.TensorInfo
		for i := range args {
			if args[i].Kind == asm.ArgTile && tile == nil {
				tile = args[i].Tile
			}
			if args[i].Kind == asm.ArgGM && gm == nil {
				gm = args[i].GM
			}
		}
		if tile == nil || gm == nil {
			return 0
		}
		return int64(tile.VRows) * int64(tile.VCols) * int64(gm.DType.Size())
	case byteDst:
		if len(args) < 1 || args[0].Tile == nil {
			return 0
		}
		d := args[0].Tile
		return int64(d.VRows) * int64(d.VCols) * int64(d.DType.Size())
	case byteSrc:
		if len(args) < 2 || args[0].Tile == nil || args[1].Tile == nil {
			return 0
		}
		s := args[1].Tile
		return int64(s.VRows) * int64(s.VCols) * int64(args[0].Tile.DType.Size())
	}
	return 0
}

// GMOffset is the byte offset, in the tensor's buffer, of the element at index
// idx (outermost first): what Operand.Off holds for a GM window. ND tensors are
// row-major; DN and NZ tensors lay out each matrix of the last two dimensions in
// their layout (memory.GMLayout) and stack the outer dimensions.
func GMOffset(t *asm.TensorInfo, idx []int64) (int64, error) {
	if t == nil {
		return 0, fmt.Errorf("no tensor")
	}
	if len(idx) != len(t.Shape) {
		return 0, fmt.Errorf("@%s has %d dimensions, index has %d", t.Name, len(t.Shape), len(idx))
	}
	for i, x := range idx {
		if x < 0 || x >= t.Shape[i] {
			return 0, fmt.Errorf("@%s index %d is %d, outside [0, %d)", t.Name, i, x, t.Shape[i])
		}
	}
	es := int64(t.DType.Size())
	if t.Layout == asm.LayoutND || len(idx) < 2 {
		var lin int64
		for i, x := range idx {
			lin = lin*t.Shape[i] + x
		}
		return lin * es, nil
	}
	l := memory.GMLayout(t)
	n := len(idx)
	var m int64
	for i := 0; i < n-2; i++ {
		m = m*t.Shape[i] + idx[i]
	}
	return m*l.Footprint() + l.Offset(int(idx[n-2]), int(idx[n-1])), nil
}

// view addresses a 2-D region of a tile or GM window: logical (r, c) of the
// region is element (r0+r, c0+c) of the layout at base.
type view struct {
	buf    *memory.Buffer
	data   []byte
	dt     asm.DType
	es     int64
	base   int64
	l      memory.Layout2D
	flat   bool  // ND or DN: addr is base + r*rs + c*cs
	rs, cs int64 // byte strides when flat
	// Fractal layouts with power-of-two boxes (every real one) are addressed
	// here with shifts; others fall back to Layout2D.Offset.
	fast     bool
	brs, bcs uint  // log2 of the box's rows and columns
	nbr, nbc int64 // boxes per column and per row
	boxB     int64 // bytes per box
	r0, c0   int
	rows     int // region extent
	cols     int
}

func newView(buf *memory.Buffer, base int64, l memory.Layout2D, r0, c0, rows, cols int) (view, error) {
	return newWindow(buf, base, l, r0, c0, rows, cols, false)
}

// newWindow is newView; over says the caller writes every element of the
// region before reading any (memory.Buffer.TouchWindowOverwrite).
func newWindow(buf *memory.Buffer, base int64, l memory.Layout2D, r0, c0, rows, cols int, over bool) (view, error) {
	v := view{buf: buf, dt: l.DType, es: int64(l.DType.Size()), base: base, l: l, r0: r0, c0: c0, rows: rows, cols: cols}
	if buf == nil {
		return v, fmt.Errorf("operand has no buffer")
	}
	if err := l.Validate(); err != nil {
		return v, err
	}
	if rows < 0 || cols < 0 || r0 < 0 || c0 < 0 || r0+rows > l.Rows || c0+cols > l.Cols {
		return v, fmt.Errorf("region [%d:%d, %d:%d] outside [%d, %d]", r0, r0+rows, c0, c0+cols, l.Rows, l.Cols)
	}
	if err := buf.CheckRange(base, l.Footprint()); err != nil {
		return v, err
	}
	touch := buf.TouchWindow
	if over {
		touch = buf.TouchWindowOverwrite
	}
	if err := touch(base, l, r0, c0, rows, cols); err != nil {
		return v, err
	}
	v.data = buf.Data
	switch l.Kind {
	case memory.ND:
		v.flat, v.rs, v.cs = true, l.Offset(1, 0), v.es
	case memory.DN:
		v.flat, v.rs, v.cs = true, v.es, l.Offset(0, 1)
	default:
		br, bc := l.Box()
		if br > 0 && bc > 0 && br&(br-1) == 0 && bc&(bc-1) == 0 {
			v.fast = true
			v.brs, v.bcs = uint(bits.TrailingZeros(uint(br))), uint(bits.TrailingZeros(uint(bc)))
			v.nbr, v.nbc = int64((l.Rows+br-1)/br), int64((l.Cols+bc-1)/bc)
			v.boxB = int64(br*bc) * v.es
		}
	}
	return v, nil
}

// tileView is the valid region of a tile operand.
func tileView(o *Operand, what string) (view, error) {
	if o.Kind != asm.ArgTile || o.Tile == nil {
		return view{}, fmt.Errorf("%s: expected a tile operand", what)
	}
	t := o.Tile
	v, err := newView(o.Buf, o.Off, memory.TileLayout(t), 0, 0, t.VRows, t.VCols)
	if err != nil {
		return v, fmt.Errorf("%s %%%s: %w", what, t.Name, err)
	}
	return v, nil
}

// gmView is the rows×cols window of a GM operand starting at its element Off.
func gmView(o *Operand, rows, cols int) (view, error) { return gmWindow(o, rows, cols, false) }

// gmWindow is gmView; over says the caller writes every element of the
// window before reading any (a tstore that is not an atomic add), so the
// pages it covers whole need no background (newWindow).
func gmWindow(o *Operand, rows, cols int, over bool) (view, error) {
	if o.Kind != asm.ArgGM || o.GM == nil {
		return view{}, fmt.Errorf("expected a GM operand")
	}
	t := o.GM
	l := memory.GMLayout(t)
	es := int64(t.DType.Size())
	bad := func(format string, a ...any) (view, error) {
		return view{}, fmt.Errorf("@%s: "+format, append([]any{t.Name}, a...)...)
	}
	if es == 0 || l.Rows <= 0 || l.Cols <= 0 {
		return bad("empty or untyped tensor")
	}
	if o.Off < 0 || o.Off%es != 0 {
		return bad("window offset %#x is not an element offset", o.Off)
	}
	var base int64
	var r0, c0 int
	switch l.Kind {
	case memory.ND:
		if o.RowStride != 0 && o.RowStride != int64(l.Cols)*es {
			return bad("row stride %d bytes, the tensor's rows are %d bytes", o.RowStride, int64(l.Cols)*es)
		}
		e := o.Off / es
		r0, c0 = int(e/int64(l.Cols)), int(e%int64(l.Cols))
	default:
		mb := l.Footprint()
		if mb <= 0 {
			return bad("bad layout")
		}
		m := o.Off / mb
		rem := o.Off % mb
		base = m * mb
		if l.Kind == memory.DN {
			e := rem / es
			c0, r0 = int(e/int64(l.Rows)), int(e%int64(l.Rows))
		} else { // NZ
			br, bc := l.Box()
			boxBytes := int64(br*bc) * es
			box := rem / boxBytes
			in := int((rem % boxBytes) / es)
			nbr := int64((l.Rows + br - 1) / br)
			bi, bj := int(box%nbr), int(box/nbr)
			r0, c0 = bi*br+in/bc, bj*bc+in%bc
		}
	}
	if r0 >= l.Rows || c0 >= l.Cols || r0+rows > l.Rows || c0+cols > l.Cols {
		return bad("window [%d:%d, %d:%d] outside the %v matrix [%d, %d]", r0, r0+rows, c0, c0+cols, l.Kind, l.Rows, l.Cols)
	}
	v, err := newWindow(o.Buf, base, l, r0, c0, rows, cols, over)
	if err != nil {
		return v, fmt.Errorf("@%s: %w", t.Name, err)
	}
	return v, nil
}

func (v *view) addr(r, c int) int64 {
	if v.flat {
		return v.base + int64(r+v.r0)*v.rs + int64(c+v.c0)*v.cs
	}
	if !v.fast {
		return v.base + v.l.Offset(r+v.r0, c+v.c0)
	}
	r, c = r+v.r0, c+v.c0
	bi, bj := int64(r>>v.brs), int64(c>>v.bcs)
	ir, ic := int64(r&(1<<v.brs-1)), int64(c&(1<<v.bcs-1))
	switch v.l.Kind {
	case memory.NZ:
		return v.base + (bj*v.nbr+bi)*v.boxB + (ir<<v.bcs+ic)*v.es
	case memory.ZZ:
		return v.base + (bi*v.nbc+bj)*v.boxB + (ir<<v.bcs+ic)*v.es
	}
	return v.base + (bi*v.nbc+bj)*v.boxB + (ic<<v.brs+ir)*v.es // ZN
}

// run is how many elements from (r, c) along the row are contiguous in storage.
func (v *view) run(c int) int {
	switch {
	case v.flat && v.cs == v.es:
		return v.cols - c
	case v.fast && (v.l.Kind == memory.NZ || v.l.Kind == memory.ZZ):
		bc := 1 << v.bcs
		return min(bc-(c+v.c0)&(bc-1), v.cols-c)
	}
	return 1
}

// sub narrows v to the rows×cols region at (r, c) of it.
func (v view) sub(r, c, rows, cols int) (view, error) {
	if r < 0 || c < 0 || rows < 0 || cols < 0 || r+rows > v.rows || c+cols > v.cols {
		return v, fmt.Errorf("window [%d:%d, %d:%d] outside the valid region [%d, %d]", r, r+rows, c, c+cols, v.rows, v.cols)
	}
	v.r0 += r
	v.c0 += c
	v.rows, v.cols = rows, cols
	return v, nil
}

func loadBits(d []byte, a, es int64) uint64 {
	switch es {
	case 1:
		return uint64(d[a])
	case 2:
		return uint64(binary.LittleEndian.Uint16(d[a:]))
	case 4:
		return uint64(binary.LittleEndian.Uint32(d[a:]))
	}
	return binary.LittleEndian.Uint64(d[a:])
}

func storeBits(d []byte, a, es int64, x uint64) {
	switch es {
	case 1:
		d[a] = byte(x)
	case 2:
		binary.LittleEndian.PutUint16(d[a:], uint16(x))
	case 4:
		binary.LittleEndian.PutUint32(d[a:], uint32(x))
	default:
		binary.LittleEndian.PutUint64(d[a:], x)
	}
}

func (v *view) bits(r, c int) uint64 { return loadBits(v.data, v.addr(r, c), v.es) }

func (v *view) setBits(r, c int, x uint64) { storeBits(v.data, v.addr(r, c), v.es, x) }

// f decodes element (r, c) as float64.
func (v *view) f(r, c int) float64 { return decodeF(v.dt, v.bits(r, c)) }

// i decodes element (r, c) as int64 (sign- or zero-extended).
func (v *view) i(r, c int) int64 { return memory.DecodeInt(v.dt, v.bits(r, c)) }

func (v *view) setF(r, c int, x float64, mode memory.RoundMode) {
	v.setBits(r, c, memory.Encode(v.dt, x, mode))
}

func (v *view) setI(r, c int, x int64) { v.setBits(r, c, memory.EncodeInt(v.dt, x)) }

// written marks the region initialised, merging contiguous runs so that a dense
// region costs one call.
func (v *view) written() {
	if v.rows == 0 || v.cols == 0 {
		return
	}
	if v.flat && v.cs == v.es && (v.rs == int64(v.cols)*v.es || v.rows == 1) {
		v.buf.Written(v.addr(0, 0), int64(v.rows*v.cols)*v.es)
		return
	}
	// Nothing to clear when no byte of the whole tile is poisoned (an
	// accumulator after its first write): skip the address walk.
	if !v.buf.IsPoisoned(v.base, v.l.Footprint()) {
		return
	}
	lo, hi := int64(-1), int64(-1)
	for r := 0; r < v.rows; r++ {
		for c := 0; c < v.cols; {
			k := v.run(c)
			a := v.addr(r, c)
			c += k
			if a == hi {
				hi += int64(k) * v.es
				continue
			}
			if lo >= 0 {
				v.buf.Written(lo, hi-lo)
			}
			lo, hi = a, a+int64(k)*v.es
		}
	}
	if lo >= 0 {
		v.buf.Written(lo, hi-lo)
	}
}

// f16Table widens every fp16 bit pattern once (256 KiB, built at package
// init in well under a millisecond); decoding is then one load.
var f16Table = func() *[1 << 16]float32 {
	t := new([1 << 16]float32)
	for i := range t {
		t[i] = memory.DecodeF16(uint16(i))
	}
	return t
}()

func f16LUT() *[1 << 16]float32 { return f16Table }

func decodeF32(dt asm.DType, b uint64) float32 {
	switch dt {
	case asm.F16:
		return f16LUT()[uint16(b)]
	case asm.BF16:
		return math.Float32frombits(uint32(b) << 16)
	case asm.F32:
		return math.Float32frombits(uint32(b))
	}
	return float32(memory.Decode(dt, b))
}

func decodeF(dt asm.DType, b uint64) float64 {
	switch dt {
	case asm.F16, asm.BF16, asm.F32:
		return float64(decodeF32(dt, b))
	}
	return memory.Decode(dt, b)
}

// attrInt evaluates an integer attribute; ok is false when it is absent.
func attrInt(op *asm.COp, key string, env *asm.Env) (v int64, ok bool, err error) {
	a, ok := op.Attr(key)
	if !ok {
		return 0, false, nil
	}
	if a.IsWord || a.IsFloat {
		return 0, true, fmt.Errorf("#%s must be an integer expression", key)
	}
	if a.Val.Fn != nil && env == nil {
		return 0, true, fmt.Errorf("#%s needs a register environment (ExecScratch.Env)", key)
	}
	return a.Val.Eval(env), true, nil
}

// attrWord returns an enum attribute's word, or def when absent.
func attrWord(op *asm.COp, key, def string) string {
	if a, ok := op.Attr(key); ok && a.IsWord {
		return strings.ToLower(a.Word)
	}
	return def
}

// roundMode reads #rnd. The PTOAS spellings rz/rp/rm are toward zero, +∞, −∞.
func roundMode(op *asm.COp) (memory.RoundMode, error) {
	w := attrWord(op, "rnd", "rint")
	switch w {
	case "rz":
		return memory.RoundTrunc, nil
	case "rp":
		return memory.RoundCeil, nil
	case "rm":
		return memory.RoundFloor, nil
	}
	m, ok := memory.ParseRoundMode(w)
	if !ok {
		return m, fmt.Errorf("unknown rounding mode #rnd=%s", w)
	}
	return m, nil
}
