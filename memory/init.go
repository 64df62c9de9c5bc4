package memory

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/ptoasm/ptoasm/asm"
)

// randStream is the second PCG seed word. It is fixed (not derived from the
// tensor's name) so that random(seed=S) gives the same numbers for any tensor and
// on any machine: PCG and rand/v2's Float64/Int64N are specified bit for bit.
const randStream = 0x5EED_0F_9700_A5A5

// FillRandom writes n elements of dt from off, drawn from PCG(seed). Floats are
// uniform in [lo, hi) and then rounded to dt (to nearest even, so a draw just
// below hi may round to hi); with integers set, or for an integer dt, values are
// uniform integers in [ceil(lo), floor(hi)], stored exactly when dt holds them.
// The elements are drawn in offset order, one draw each.
func FillRandom(b *Buffer, off int64, dt asm.DType, n int64, seed uint64, lo, hi float64, integers bool) error {
	sz := int64(dt.Size())
	if sz == 0 {
		return fmt.Errorf("random: invalid dtype %v", dt)
	}
	if math.IsNaN(lo) || math.IsNaN(hi) || hi < lo || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return fmt.Errorf("random: bad range lo=%g hi=%g", lo, hi)
	}
	if n < 0 || n > math.MaxInt64/sz {
		return &RangeError{Buffer: b.label(), Off: off, N: n, Size: b.Size()}
	}
	ints := integers || !dt.IsFloat()
	ilo, ihi := math.Ceil(lo), math.Floor(hi)
	if ints && (ihi < ilo || ihi-ilo >= 1<<62) {
		return fmt.Errorf("random: no integers in [%g, %g]", lo, hi)
	}
	if err := b.CheckRange(off, n*sz); err != nil {
		return err
	}
	// Every element is written below, nothing can fail after the touch.
	if err := b.TouchOverwrite(off, n*sz); err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(seed, randStream))
	if ints {
		base, span := int64(ilo), int64(ihi-ilo)+1
		for i := int64(0); i < n; i++ {
			v := base + rng.Int64N(span)
			b.setBits(int(sz), off+i*sz, Encode(dt, float64(v), RoundRint))
		}
	} else {
		w := hi - lo
		for i := int64(0); i < n; i++ {
			b.setBits(int(sz), off+i*sz, Encode(dt, lo+w*rng.Float64(), RoundRint))
		}
	}
	b.Written(off, n*sz)
	return nil
}

// FillFunc writes n elements of dt from off with f(i), i the element index,
// rounded to nearest even (for `expr(...)` inits).
func FillFunc(b *Buffer, off int64, dt asm.DType, n int64, f func(i int64) float64) error {
	sz := int64(dt.Size())
	if sz == 0 {
		return fmt.Errorf("init: invalid dtype %v", dt)
	}
	if n < 0 || n > math.MaxInt64/sz {
		return &RangeError{Buffer: b.label(), Off: off, N: n, Size: b.Size()}
	}
	if err := b.CheckRange(off, n*sz); err != nil {
		return err
	}
	if err := b.TouchOverwrite(off, n*sz); err != nil { // every element is written below
		return err
	}
	for i := int64(0); i < n; i++ {
		b.setBits(int(sz), off+i*sz, Encode(dt, f(i), RoundRint))
	}
	b.Written(off, n*sz)
	return nil
}

// Zero clears [off, off+n) bytes and marks them written.
func (b *Buffer) Zero(off, n int64) error {
	if err := b.CheckRange(off, n); err != nil {
		return err
	}
	if !b.setBackground(off, n, 0) {
		if err := b.Touch(off, n); err != nil {
			return err
		}
		clear(b.Data[off : off+n])
	}
	b.Written(off, n)
	return nil
}

// tensorMatrices splits a tensor into its batch of 2-D matrices: the number of
// matrices, the layout of one, and the byte distance between them.
func tensorMatrices(dt asm.DType, shape []int, kind LayoutKind) (int, Layout2D, int64, error) {
	l := Layout2D{Kind: kind, DType: dt, Rows: 1, Cols: 1}
	n := len(shape)
	batch := 1
	for i, d := range shape {
		if d < 0 {
			return 0, l, 0, fmt.Errorf("negative dimension in %v", shape)
		}
		switch {
		case i == n-1:
			l.Cols = d
		case i == n-2 && kind != ND:
			l.Rows = d
		case kind == ND:
			l.Rows *= d
		default:
			batch *= d
		}
	}
	if err := l.Validate(); err != nil {
		return 0, l, 0, err
	}
	return batch, l, l.Footprint(), nil
}

func layoutKind(l asm.Layout) LayoutKind {
	switch l {
	case asm.LayoutDN:
		return DN
	case asm.LayoutNZ:
		return NZ
	}
	return ND
}

// TensorBytes is the storage a GM tensor needs in its layout (NZ pads partial
// fractal boxes, so it can exceed TensorInfo.Bytes).
func TensorBytes(t *asm.TensorInfo) int64 {
	shape := make([]int, len(t.Shape))
	for i, d := range t.Shape {
		shape[i] = int(d)
	}
	batch, _, step, err := tensorMatrices(t.DType, shape, layoutKind(t.Layout))
	if err != nil {
		return t.Bytes
	}
	return max(int64(batch)*step, t.Bytes)
}

// LoadArray decodes a tensor of dt and shape stored at off in layout (the last
// two dimensions form the matrix for DN and NZ) into a logical row-major Array.
func LoadArray(b *Buffer, off int64, dt asm.DType, shape []int, layout asm.Layout) (*Array, error) {
	batch, l, step, err := tensorMatrices(dt, shape, layoutKind(layout))
	if err != nil {
		return nil, fmt.Errorf("%s: %v", b.label(), err)
	}
	if err := b.CheckRange(off, int64(batch)*step); err != nil {
		return nil, err
	}
	if err := b.Touch(off, int64(batch)*step); err != nil {
		return nil, err
	}
	a := &Array{Shape: append([]int{}, shape...), Data: make([]float64, batch*l.Rows*l.Cols)}
	sz := dt.Size()
	tab, cols, _ := partTables(l.Cols, func(c int) (int64, int64) { return l.colPart(c), 0 })
	defer colTables.Put(tab)
	k := 0
	for m := 0; m < batch; m++ {
		base := off + int64(m)*step
		for r := 0; r < l.Rows; r++ {
			row := base + l.rowPart(r)
			for _, cp := range cols {
				a.Data[k] = Decode(dt, b.bits(sz, row+cp))
				k++
			}
		}
	}
	return a, nil
}

// LoadRows decodes rows [r0, r1) of a rank-2 tensor, as LoadArray would
// decode them: a golden expression reads a band of rows at a time.
func LoadRows(b *Buffer, off int64, dt asm.DType, shape []int, layout asm.Layout, r0, r1 int) (*Array, error) {
	if len(shape) != 2 || r0 < 0 || r0 > r1 || r1 > shape[0] {
		return nil, fmt.Errorf("%s: rows [%d, %d) of a %v tensor", b.label(), r0, r1, shape)
	}
	_, l, step, err := tensorMatrices(dt, shape, layoutKind(layout))
	if err != nil {
		return nil, fmt.Errorf("%s: %v", b.label(), err)
	}
	if err := b.CheckRange(off, step); err != nil {
		return nil, err
	}
	if err := b.Touch(off, step); err != nil {
		return nil, err
	}
	a := &Array{Shape: []int{r1 - r0, l.Cols}, Data: make([]float64, (r1-r0)*l.Cols)}
	sz := dt.Size()
	if l.Kind == ND && l.stride() == l.Cols {
		// The rows are one run of elements: decoded in order, without
		// the column table (a check decodes every rank's output).
		decodeRun(dt, b.Data[off+l.rowPart(r0):], a.Data)
		return a, nil
	}
	tab, cols, _ := partTables(l.Cols, func(c int) (int64, int64) { return l.colPart(c), 0 })
	defer colTables.Put(tab)
	k := 0
	for r := r0; r < r1; r++ {
		row := off + l.rowPart(r)
		for _, cp := range cols {
			a.Data[k] = Decode(dt, b.bits(sz, row+cp))
			k++
		}
	}
	return a, nil
}

// decodeRun decodes len(dst) elements of dt stored one after another at
// the start of d, as Decode does one at a time.
func decodeRun(dt asm.DType, d []byte, dst []float64) {
	switch dt {
	case asm.F32:
		d = d[:4*len(dst)]
		for i := range dst {
			dst[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(d[4*i:])))
		}
	case asm.F16:
		d = d[:2*len(dst)]
		for i := range dst {
			dst[i] = float64(DecodeF16(binary.LittleEndian.Uint16(d[2*i:])))
		}
	default:
		sz := dt.Size()
		for i := range dst {
			var v uint64
			switch sz {
			case 1:
				v = uint64(d[i])
			case 2:
				v = uint64(binary.LittleEndian.Uint16(d[2*i:]))
			case 4:
				v = uint64(binary.LittleEndian.Uint32(d[4*i:]))
			default:
				v = binary.LittleEndian.Uint64(d[8*i:])
			}
			dst[i] = Decode(dt, v)
		}
	}
}

// StoreRows encodes a, rows [r0, r0+len) of a rank-2 tensor in logical
// row-major order, as StoreArray would store them; the store of the last
// rows marks the tensor's bytes written. An expr init is computed and
// stored a band of rows at a time.
func StoreRows(b *Buffer, off int64, dt asm.DType, shape []int, layout asm.Layout, r0 int, a *Array, mode RoundMode) error {
	if len(shape) != 2 || shape[1] == 0 || len(a.Data)%shape[1] != 0 || r0 < 0 || r0+len(a.Data)/shape[1] > shape[0] {
		return fmt.Errorf("%s: %d values at row %d of a %v tensor", b.label(), len(a.Data), r0, shape)
	}
	_, l, step, err := tensorMatrices(dt, shape, layoutKind(layout))
	if err != nil {
		return fmt.Errorf("%s: %v", b.label(), err)
	}
	if err := b.CheckRange(off, step); err != nil {
		return err
	}
	sz := dt.Size()
	r1 := r0 + len(a.Data)/shape[1]
	if l.Kind == ND && l.stride() == l.Cols {
		// The band's rows are one run of bytes that it writes whole.
		if err := b.TouchOverwrite(off+l.rowPart(r0), int64(r1-r0)*int64(l.Cols)*int64(sz)); err != nil {
			return err
		}
	} else if err := b.Touch(off, step); err != nil {
		return err
	}
	tab, cols, _ := partTables(l.Cols, func(c int) (int64, int64) { return l.colPart(c), 0 })
	defer colTables.Put(tab)
	k := 0
	for r := r0; r < r1; r++ {
		row := off + l.rowPart(r)
		for _, cp := range cols {
			b.setBits(sz, row+cp, Encode(dt, a.Data[k], mode))
			k++
		}
	}
	if r1 == shape[0] {
		b.Written(off, step)
	}
	return nil
}

// CopyStored copies the bytes of a tensor of dt, shape and layout at off
// from src to dst and marks them written there: the same values on another
// rank, without decoding them.
func CopyStored(dst, src *Buffer, off int64, dt asm.DType, shape []int, layout asm.Layout) error {
	batch, _, step, err := tensorMatrices(dt, shape, layoutKind(layout))
	if err != nil {
		return fmt.Errorf("%s: %v", dst.label(), err)
	}
	n := int64(batch) * step
	for _, b := range []*Buffer{src, dst} {
		if err := b.CheckRange(off, n); err != nil {
			return err
		}
	}
	if err := src.Touch(off, n); err != nil {
		return err
	}
	if err := dst.TouchOverwrite(off, n); err != nil { // copied whole below
		return err
	}
	copy(dst.Data[off:off+n], src.Data[off:off+n])
	dst.Written(off, n)
	return nil
}

// SameStored reports whether x and y hold the same n bytes from off: two
// ranks' copies of a tensor, compared without decoding them.
func SameStored(x, y *Buffer, off, n int64) (bool, error) {
	for _, b := range []*Buffer{x, y} {
		if err := b.CheckRange(off, n); err != nil {
			return false, err
		}
		if err := b.Touch(off, n); err != nil {
			return false, err
		}
	}
	return bytes.Equal(x.Data[off:off+n], y.Data[off:off+n]), nil
}

// StoreArray encodes a (logical row-major, of the tensor's shape or at least its
// element count) into the tensor of dt and shape at off in layout, rounding with
// mode, and marks the bytes written.
func StoreArray(b *Buffer, off int64, dt asm.DType, shape []int, layout asm.Layout, a *Array, mode RoundMode) error {
	batch, l, step, err := tensorMatrices(dt, shape, layoutKind(layout))
	if err != nil {
		return fmt.Errorf("%s: %v", b.label(), err)
	}
	if n := batch * l.Rows * l.Cols; len(a.Data) != n {
		return fmt.Errorf("%s: %d values for a %v tensor of %d elements", b.label(), len(a.Data), shape, n)
	}
	if err := b.CheckRange(off, int64(batch)*step); err != nil {
		return err
	}
	sz := dt.Size()
	touch := b.Touch
	if step == int64(l.Rows)*int64(l.Cols)*int64(sz) {
		// No padding: the elements, at distinct offsets, write every byte.
		touch = b.TouchOverwrite
	}
	if err := touch(off, int64(batch)*step); err != nil {
		return err
	}
	tab, cols, _ := partTables(l.Cols, func(c int) (int64, int64) { return l.colPart(c), 0 })
	defer colTables.Put(tab)
	k := 0
	for m := 0; m < batch; m++ {
		base := off + int64(m)*step
		for r := 0; r < l.Rows; r++ {
			row := base + l.rowPart(r)
			for _, cp := range cols {
				b.setBits(sz, row+cp, Encode(dt, a.Data[k], mode))
				k++
			}
		}
	}
	b.Written(off, int64(batch)*step)
	return nil
}
