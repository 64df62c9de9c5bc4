package memory

import (
	"fmt"
	"math"
	"runtime"
	"sort"
	"sync"
	"unsafe"

	"github.com/ptoasm/ptoasm/asm"
)

// LayoutKind is how a logical 2-D matrix is laid out in bytes.
//
// The fractal kinds split the matrix into boxes of Fractal bytes (512 for A/B
// operands, 1024 for the accumulator; machine-facts §3.2). The first letter is
// the order of the boxes, the second the order inside a box: Z is row-major, N is
// column-major. So NZ (GM NZ, TileAcc, the CPU-sim TileLeft) stores boxes
// column by column, each box row-major; ZZ (A2/A3 TileLeft) stores boxes row by
// row, each row-major; ZN (TileRight) stores boxes row by row, each column-major.
type LayoutKind uint8

const (
	ND LayoutKind = iota // row-major
	DN                   // column-major
	NZ
	ZZ
	ZN
)

var layoutKindNames = [...]string{"nd", "dn", "nz", "zz", "zn"}

func (k LayoutKind) String() string {
	if int(k) < len(layoutKindNames) {
		return layoutKindNames[k]
	}
	return "invalid"
}

// Layout2D describes a 2-D matrix in a buffer, relative to a base byte offset.
type Layout2D struct {
	Kind       LayoutKind
	Rows, Cols int // logical (capacity) shape
	DType      asm.DType
	// Stride is the distance in elements between rows (ND) or columns (DN);
	// 0 means dense (Cols or Rows). Fractal kinds ignore it.
	Stride int
	// Fractal is the box size in bytes for NZ/ZZ/ZN; 0 means 512.
	Fractal int
}

// Box returns the fractal box shape in elements: 16 rows × Fractal/16/size
// columns for Z-inner boxes; the transpose for ZN. ND and DN return 1×1.
func (l Layout2D) Box() (rows, cols int) {
	sz := l.DType.Size()
	if l.Kind < NZ || sz == 0 {
		return 1, 1
	}
	f := l.Fractal
	if f <= 0 {
		f = 512
	}
	w := max(f/16/sz, 1)
	if l.Kind == ZN {
		return w, 16
	}
	return 16, w
}

func (l Layout2D) stride() int {
	if l.Stride > 0 {
		return l.Stride
	}
	if l.Kind == DN {
		return l.Rows
	}
	return l.Cols
}

// Validate rejects layouts that cannot address their shape.
func (l Layout2D) Validate() error {
	if l.DType.Size() == 0 {
		return fmt.Errorf("layout: invalid dtype %v", l.DType)
	}
	if l.Rows < 0 || l.Cols < 0 || l.Kind > ZN {
		return fmt.Errorf("layout: bad %v [%d, %d]", l.Kind, l.Rows, l.Cols)
	}
	if l.Kind == ND && l.stride() < l.Cols || l.Kind == DN && l.stride() < l.Rows {
		return fmt.Errorf("layout: %v stride %d is smaller than the matrix", l.Kind, l.Stride)
	}
	if f := l.Fractal; l.Kind >= NZ && f != 0 && (f < 16*l.DType.Size() || f%(16*l.DType.Size()) != 0) {
		return fmt.Errorf("layout: fractal %d bytes does not hold 16 %v rows", f, l.DType)
	}
	if l.Footprint() < 0 {
		return fmt.Errorf("layout: %v [%d, %d] is too large", l.Kind, l.Rows, l.Cols)
	}
	return nil
}

// Footprint is the number of bytes the layout spans from its base, including
// the padding of partial fractal boxes.
func (l Layout2D) Footprint() int64 {
	sz := int64(l.DType.Size())
	if l.Rows == 0 || l.Cols == 0 {
		return 0
	}
	var n float64
	switch l.Kind {
	case ND:
		n = float64(l.Rows-1)*float64(l.stride()) + float64(l.Cols)
	case DN:
		n = float64(l.Cols-1)*float64(l.stride()) + float64(l.Rows)
	default:
		br, bc := l.Box()
		n = float64(ceilDiv(l.Rows, br)*br) * float64(ceilDiv(l.Cols, bc)*bc)
	}
	if n*float64(sz) > math.MaxInt64/2 {
		return -1
	}
	return int64(n) * sz
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// Offset is the byte offset of logical element (r, c) from the layout's base.
// Every kind is separable, Offset = rowPart(r) + colPart(c), which Copy2D uses to
// hoist the arithmetic out of its inner loop.
func (l Layout2D) Offset(r, c int) int64 { return l.rowPart(r) + l.colPart(c) }

func (l Layout2D) rowPart(r int) int64 {
	sz := int64(l.DType.Size())
	switch l.Kind {
	case ND:
		return int64(r) * int64(l.stride()) * sz
	case DN:
		return int64(r) * sz
	}
	br, bc := l.Box()
	boxBytes := int64(br*bc) * sz
	bi, ir := int64(r/br), int64(r%br)
	switch l.Kind {
	case NZ:
		return bi*boxBytes + ir*int64(bc)*sz
	case ZZ:
		return bi*int64(ceilDiv(l.Cols, bc))*boxBytes + ir*int64(bc)*sz
	}
	return bi*int64(ceilDiv(l.Cols, bc))*boxBytes + ir*sz // ZN
}

func (l Layout2D) colPart(c int) int64 {
	sz := int64(l.DType.Size())
	switch l.Kind {
	case ND:
		return int64(c) * sz
	case DN:
		return int64(c) * int64(l.stride()) * sz
	}
	br, bc := l.Box()
	boxBytes := int64(br*bc) * sz
	bj, ic := int64(c/bc), int64(c%bc)
	switch l.Kind {
	case NZ:
		return bj*int64(ceilDiv(l.Rows, br))*boxBytes + ic*sz
	case ZZ:
		return bj*boxBytes + ic*sz
	}
	return bj*boxBytes + ic*int64(br)*sz // ZN
}

// run is how many elements from (r, c) onward along the row are contiguous.
func (l Layout2D) run(c int) int {
	switch l.Kind {
	case ND:
		return l.Cols - c
	case NZ, ZZ:
		_, bc := l.Box()
		return bc - c%bc
	}
	return 1
}

// colRun is how many elements from (r, c) onward down the column are
// contiguous: the column-major layouts' counterpart of run.
func (l Layout2D) colRun(r int) int {
	switch l.Kind {
	case DN:
		return l.Rows - r
	case ZN:
		br, _ := l.Box()
		return br - r%br
	}
	return 1
}

// TileLayout is the layout of one element of a tile (its capacity shape).
// BLayout/SLayout/Fractal follow pto-isa's Tile parameters: no box → ND or DN;
// row-major boxes → ZZ (col-major outer: NZ); col-major boxes → ZN.
func TileLayout(t *asm.TileInfo) Layout2D {
	l := Layout2D{Rows: t.Rows, Cols: t.Cols, DType: t.DType, Fractal: t.Fractal}
	colOuter := t.BLayout == "col"
	switch t.SLayout {
	case "row":
		l.Kind = ZZ
		if colOuter {
			l.Kind = NZ
		}
	case "col":
		l.Kind = ZN
	default:
		l.Kind = ND
		if colOuter {
			l.Kind = DN
		}
		l.Fractal = 0
	}
	return l
}

// GMLayout is the 2-D layout of a GM tensor: the last dimension is Cols and the
// outer ones fold into Rows (a batch of ND matrices is one taller ND matrix). For
// DN and NZ only the last two dimensions form the matrix; the machine addresses
// outer indices by adding MatrixBytes per step.
func GMLayout(t *asm.TensorInfo) Layout2D {
	l := Layout2D{DType: t.DType, Rows: 1, Cols: 1}
	n := len(t.Shape)
	switch t.Layout {
	case asm.LayoutDN:
		l.Kind = DN
	case asm.LayoutNZ:
		l.Kind = NZ
	}
	if n >= 1 {
		l.Cols = int(t.Shape[n-1])
	}
	if l.Kind == ND {
		for _, d := range t.Shape[:max(n-1, 0)] {
			l.Rows *= int(d)
		}
	} else if n >= 2 {
		l.Rows = int(t.Shape[n-2])
	}
	return l
}

// Copy2D copies a rows×cols window from logical (sr, sc) of the matrix sl at
// byte sbase of src to logical (dr, dc) of dl at dbase of dst, converting
// sl.DType to dl.DType with mode (float→int saturates, see Round). Poison moves
// with the data: destination bytes fed by poisoned source elements become
// poisoned, the rest of the window is marked written. src and dst may be the same
// buffer only if the windows do not overlap.
func Copy2D(dst *Buffer, dbase int64, dl Layout2D, dr, dc int,
	src *Buffer, sbase int64, sl Layout2D, sr, sc int, rows, cols int, mode RoundMode) error {
	if rows < 0 || cols < 0 {
		return fmt.Errorf("copy: negative window [%d, %d]", rows, cols)
	}
	if rows == 0 || cols == 0 {
		return nil
	}
	for _, x := range []struct {
		b    *Buffer
		base int64
		l    Layout2D
		r, c int
	}{{src, sbase, sl, sr, sc}, {dst, dbase, dl, dr, dc}} {
		if err := x.l.Validate(); err != nil {
			return fmt.Errorf("%s: %v", x.b.label(), err)
		}
		if x.r < 0 || x.c < 0 || x.r+rows > x.l.Rows || x.c+cols > x.l.Cols {
			return fmt.Errorf("%s: window [%d:%d, %d:%d] outside the %v matrix [%d, %d]",
				x.b.label(), x.r, x.r+rows, x.c, x.c+cols, x.l.Kind, x.l.Rows, x.l.Cols)
		}
		if err := x.b.CheckRange(x.base, x.l.Footprint()); err != nil {
			return err
		}
	}
	if src.sp != nil || dst.sp != nil {
		// A sparse GM tensor commits the pages of the window's rows once
		// here, so the loops below index Data directly.
		if err := src.TouchWindow(sbase, sl, sr, sc, rows, cols); err != nil {
			return err
		}
		// Every element of the destination window is written below.
		if err := dst.TouchWindowOverwrite(dbase, dl, dr, dc, rows, cols); err != nil {
			return err
		}
	}
	ssz, dsz := sl.DType.Size(), dl.DType.Size()
	conv := converter(sl.DType, dl.DType, mode)
	// Poison bookkeeping per run is only needed when the source may carry poison
	// or the destination window is partial; a clean full-tile copy marks once.
	srcClean := len(src.poison) == 0 || !src.IsPoisoned(sbase, sl.Footprint())
	fullDst := dr == 0 && dc == 0 && rows == dl.Rows && cols == dl.Cols
	track := !srcClean || (len(dst.poison) > 0 && !fullDst)
	sw, dw := sl.run(sc) > 1 || cols == 1, dl.run(dc) > 1 || cols == 1
	if sw && dw {
		// Both sides have contiguous row runs: copy run by run.
		for i := 0; i < rows; i++ {
			sr0, dr0 := sbase+sl.rowPart(sr+i), dbase+dl.rowPart(dr+i)
			for j := 0; j < cols; {
				n := min(cols-j, sl.run(sc+j), dl.run(dc+j))
				so, do := sr0+sl.colPart(sc+j), dr0+dl.colPart(dc+j)
				copyRun(dst, do, dsz, src, so, ssz, n, conv, track)
				j += n
			}
		}
	} else if sl.colRun(sr) > 1 && dl.colRun(dr) > 1 {
		// Both sides are column-major (DN, or ZN within a box; a dn GM
		// tensor loaded into an L1 ZN tile): copy down the columns, run by
		// run, instead of element by element across them.
		for j := 0; j < cols; j++ {
			sc0, dc0 := sbase+sl.colPart(sc+j), dbase+dl.colPart(dc+j)
			for i := 0; i < rows; {
				n := min(rows-i, sl.colRun(sr+i), dl.colRun(dr+i))
				so, do := sc0+sl.rowPart(sr+i), dc0+dl.rowPart(dr+i)
				copyRun(dst, do, dsz, src, so, ssz, n, conv, track)
				i += n
			}
		}
	} else if blockCopy(dst, dbase, dl, dr, dc, src, sbase, sl, sr, sc, rows, cols, conv, track) {
		// Whole 16×16 blocks (the B operand's transposes): done.
	} else if sl.colRun(sr) > 1 || dl.colRun(dr) > 1 {
		// One side column-major, the other not (a dn GM tensor into an NZ
		// tile): element by element down the columns, so the column-major
		// side moves in order and the other strides within its boxes,
		// instead of striding a whole column's length per element.
		tab, srow, drow := partTables(rows, func(i int) (int64, int64) { return sl.rowPart(sr + i), dl.rowPart(dr + i) })
		colPart := func(j int) (int64, int64) { return sbase + sl.colPart(sc+j), dbase + dl.colPart(dc+j) }
		if !moveWhole(dst, src, ssz, conv, track, sbase, dbase, cols, colPart, srow, drow) {
			for j := 0; j < cols; j++ {
				sc0, dc0 := colPart(j)
				for i := range rows {
					copyRun(dst, dc0+drow[i], dsz, src, sc0+srow[i], ssz, 1, conv, track)
				}
			}
		}
		colTables.Put(tab)
	} else {
		// Element by element, with column parts hoisted into scratch tables.
		tab, scol, dcol := partTables(cols, func(j int) (int64, int64) { return sl.colPart(sc + j), dl.colPart(dc + j) })
		rowPart := func(i int) (int64, int64) { return sbase + sl.rowPart(sr+i), dbase + dl.rowPart(dr+i) }
		if !moveWhole(dst, src, ssz, conv, track, sbase, dbase, rows, rowPart, scol, dcol) {
			for i := 0; i < rows; i++ {
				sr0, dr0 := rowPart(i)
				for j := range cols {
					copyRun(dst, dr0+dcol[j], dsz, src, sr0+scol[j], ssz, 1, conv, track)
				}
			}
		}
		colTables.Put(tab)
	}
	if fullDst && !track {
		dst.Written(dbase, dl.Footprint())
	}
	return nil
}

// block16 returns the element strides of l's rows and columns inside a
// 16×16 block that starts at a multiple of 16: every layout with no boxes
// or with 16×16 boxes (f16 and bf16 fractals) is affine there.
func (l Layout2D) block16() (rs, cs int64, ok bool) {
	switch l.Kind {
	case ND:
		return int64(l.stride()), 1, true
	case DN:
		return 1, int64(l.stride()), true
	}
	if br, bc := l.Box(); br != 16 || bc != 16 {
		return 0, 0, false
	}
	if l.Kind == ZN {
		return 1, 16, true
	}
	return 16, 1, true
}

// blockCopy is Copy2D for a window of whole 16×16 blocks, aligned to 16 on
// both sides, of 2-byte elements that need no conversion and carry no poison:
// loading a DN B operand into an NZ L1 tile and extracting NZ into ZN L0B
// are 16×16 transposes with fixed strides, done without offset tables. It
// reports false, doing nothing, for any other copy.
func blockCopy(dst *Buffer, dbase int64, dl Layout2D, dr, dc int,
	src *Buffer, sbase int64, sl Layout2D, sr, sc int, rows, cols int, conv convFunc, track bool) bool {
	if conv != nil || track || !hostLittle || sl.DType.Size() != 2 || (sr|sc|dr|dc|rows|cols)&15 != 0 || sbase%2 != 0 || dbase%2 != 0 {
		return false
	}
	srs, scs, ok1 := sl.block16()
	drs, dcs, ok2 := dl.block16()
	if !ok1 || !ok2 || srs != 1 && scs != 1 || drs != 1 && dcs != 1 {
		return false
	}
	s := unsafe.Slice((*uint16)(unsafe.Pointer(unsafe.SliceData(src.Data))), len(src.Data)/2)
	d := unsafe.Slice((*uint16)(unsafe.Pointer(unsafe.SliceData(dst.Data))), len(dst.Data)/2)
	band := func(i0, i1 int) {
		for i := i0; i < i1; i += 16 {
			for j := 0; j < cols; j += 16 {
				so := (sbase + sl.Offset(sr+i, sc+j)) / 2
				do := (dbase + dl.Offset(dr+i, dc+j)) / 2
				block16(d[do:do+15*(drs+dcs)+1], drs, dcs, s[so:so+15*(srs+scs)+1], srs, scs)
			}
		}
	}
	// A large window (a 256×256 B tile) is split in two bands of rows, the
	// second on another goroutine: the blocks are disjoint, so the bytes
	// are the same whichever runs first.
	if rows >= 32 && rows*cols >= parallelCopy && runtime.GOMAXPROCS(0) > 1 {
		mid := rows / 32 * 16
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			band(mid, rows)
			wg.Done()
		}()
		band(0, mid)
		wg.Wait()
		return true
	}
	band(0, rows)
	return true
}

// parallelCopy is the window size (elements) from which blockCopy uses a
// second goroutine: below it the hand-off costs more than it saves.
const parallelCopy = 1 << 15

// block16 copies a 16×16 block between strided views. The inner loop runs
// along the contiguous direction of the side whose other stride is the
// larger: a DN tensor's columns lie K elements apart, often a multiple of
// 4 KiB, and sixteen loads at that stride in the inner loop would fight for
// one set of the L1 cache.
func block16(d []uint16, drs, dcs int64, s []uint16, srs, scs int64) {
	if haveTranspose8x8 && (scs == 1 && drs == 1 || srs == 1 && dcs == 1) {
		// A true transpose (each side contiguous along the other's index):
		// four 8×8 register transposes. With srs == 1, name the indices
		// the other way round so the source rows are the contiguous ones.
		if srs == 1 {
			drs, dcs = dcs, drs
			srs, scs = scs, srs
		}
		for i := int64(0); i < 16; i += 8 {
			for j := int64(0); j < 16; j += 8 {
				// The slice expressions check the 8×8 block's extent.
				out := d[i+j*dcs : i+j*dcs+7*dcs+8]
				in := s[i*srs+j : i*srs+j+7*srs+8]
				transpose8x8(&out[0], int(dcs), &in[0], int(srs))
			}
		}
		return
	}
	// Name the indices so the inner one (j) is contiguous on the source
	// when its other stride is the larger, else on the destination.
	if max(srs, scs) > max(drs, dcs) && srs == 1 || max(srs, scs) <= max(drs, dcs) && dcs != 1 {
		drs, dcs = dcs, drs
		srs, scs = scs, srs
	}
	for i := range int64(16) {
		out, in := d[i*drs:], s[i*srs:]
		if dcs == 1 && scs == 1 {
			copy(out[:16], in[:16])
			continue
		}
		for j := range int64(16) {
			out[j*dcs] = in[j*scs]
		}
	}
}

// moveWhole is Copy2D's element-by-element copy when nothing converts and
// no poison moves: a whole 2- or 4-byte element per load and store, for
// outer lines o (columns or rows) starting at part(o), whose elements lie
// at the inner tables' offsets sIn, dIn (bytes, from partTables; rewritten
// here in elements). It reports false, doing nothing, for other copies. It
// is the transposes at the heart of loading a DN B operand into an NZ L1
// tile and extracting an NZ tile into ZN L0B.
func moveWhole(dst, src *Buffer, size int, conv convFunc, track bool, sbase, dbase int64,
	outer int, part func(o int) (int64, int64), sIn, dIn []int64) bool {
	if conv != nil || track || !hostLittle || sbase%int64(size) != 0 || dbase%int64(size) != 0 {
		return false
	}
	switch size {
	case 2:
		moveElems[uint16](dst, src, outer, part, sIn, dIn)
	case 4:
		moveElems[uint32](dst, src, outer, part, sIn, dIn)
	default:
		return false
	}
	return true
}

func moveElems[T uint16 | uint32](dst, src *Buffer, outer int, part func(o int) (int64, int64), sIn, dIn []int64) {
	var zero T
	es := int64(unsafe.Sizeof(zero))
	s := unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(src.Data))), len(src.Data)/int(es))
	d := unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(dst.Data))), len(dst.Data)/int(es))
	for k := range sIn {
		sIn[k] /= es
		dIn[k] /= es
	}
	for o := range outer {
		so, do := part(o)
		in, out := s[so/es:], d[do/es:]
		for k, x := range sIn {
			out[dIn[k]] = in[x]
		}
	}
}

var colTables = sync.Pool{New: func() any { return new([]int64) }}

// partTables fills two scratch tables of n offsets each, the source's and
// the destination's part of index k (part(k)), hoisted out of Copy2D's inner
// loop; the caller puts tab back into colTables when done.
func partTables(n int, part func(k int) (src, dst int64)) (tab *[]int64, src, dst []int64) {
	tab = colTables.Get().(*[]int64)
	if cap(*tab) < 2*n {
		*tab = make([]int64, 2*n)
	}
	src, dst = (*tab)[:n], (*tab)[n:2*n]
	for k := range n {
		src[k], dst[k] = part(k)
	}
	return tab, src, dst
}

func copyRun(dst *Buffer, do int64, dsz int, src *Buffer, so int64, ssz, n int, conv convFunc, track bool) {
	sb := src.Data[so : so+int64(n*ssz)]
	db := dst.Data[do : do+int64(n*dsz)]
	if conv == nil {
		copy(db, sb)
	} else {
		conv(db, sb, n)
	}
	if track {
		movePoison(dst, do, dsz, src, so, ssz, n)
	}
}

// movePoison marks the n-element destination run written, then re-poisons the
// elements whose source bytes are poisoned.
func movePoison(dst *Buffer, do int64, dsz int, src *Buffer, so int64, ssz, n int) {
	dst.Written(do, int64(n*dsz))
	if len(src.poison) == 0 {
		return
	}
	end := so + int64(n*ssz)
	sz, dz := int64(ssz), int64(dsz)
	// Search afresh each step: when dst is src, Poison edits the same set.
	for p := so; p < end; {
		k := sort.Search(len(src.poison), func(i int) bool { return src.poison[i].hi > p })
		if k == len(src.poison) || src.poison[k].lo >= end {
			return
		}
		lo, hi := max(src.poison[k].lo, p), min(src.poison[k].hi, end)
		e0, e1 := (lo-so)/sz, (hi-so+sz-1)/sz
		dst.Poison(do+e0*dz, (e1-e0)*dz)
		p = so + e1*sz
	}
}

// convFunc converts n elements from src bytes to dst bytes.
type convFunc func(dst, src []byte, n int)

// converter picks the element conversion between two dtypes once per copy;
// nil means a plain byte copy.
func converter(from, to asm.DType, mode RoundMode) convFunc {
	if from == to {
		return nil
	}
	switch {
	case from == asm.F32 && to == asm.F16 && mode == RoundRint:
		return func(d, s []byte, n int) {
			for k := 0; k < n; k++ {
				f := math.Float32frombits(le32(s[4*k:]))
				put16(d[2*k:], F16FromF32(f))
			}
		}
	case from == asm.F32 && to == asm.BF16 && mode == RoundRint:
		return func(d, s []byte, n int) {
			for k := 0; k < n; k++ {
				put16(d[2*k:], BF16FromF32(math.Float32frombits(le32(s[4*k:]))))
			}
		}
	case from == asm.F16 && to == asm.F32:
		return func(d, s []byte, n int) {
			for k := 0; k < n; k++ {
				put32(d[4*k:], math.Float32bits(DecodeF16(le16(s[2*k:]))))
			}
		}
	case from == asm.BF16 && to == asm.F32:
		return func(d, s []byte, n int) {
			for k := 0; k < n; k++ {
				put32(d[4*k:], uint32(le16(s[2*k:]))<<16)
			}
		}
	}
	ssz, dsz := from.Size(), to.Size()
	return func(d, s []byte, n int) {
		for k := 0; k < n; k++ {
			v := Decode(from, loadLE(s[k*ssz:], ssz))
			storeLE(d[k*dsz:], dsz, Encode(to, v, mode))
		}
	}
}

func le16(b []byte) uint16 { return uint16(b[0]) | uint16(b[1])<<8 }
func le32(b []byte) uint32 {
	_ = b[3]
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}
func put16(b []byte, v uint16) { b[0], b[1] = byte(v), byte(v>>8) }
func put32(b []byte, v uint32) {
	_ = b[3]
	b[0], b[1], b[2], b[3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
}

func loadLE(b []byte, size int) uint64 {
	var v uint64
	for i := size - 1; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v
}

func storeLE(b []byte, size int, v uint64) {
	for i := 0; i < size; i++ {
		b[i] = byte(v)
		v >>= 8
	}
}
