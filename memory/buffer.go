package memory

import (
	"encoding/binary"
	"fmt"
	"math"
	"sort"
	"unsafe"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/x448/float16"
)

// Buffer is the byte storage of one address space instance: one core's UB, L1,
// L0A…, or one GM tensor on one rank. Data is little-endian and 8-byte aligned,
// so typed views (View, F32s, U16s) alias it without copying.
//
// Poison: a buffer keeps the byte ranges that were never written or were
// explicitly poisoned as a sorted set of disjoint intervals. Poisoned bytes also
// hold a pattern (see PoisonBits) that reads back as NaN for every float dtype and
// as 0x7F…F for signed integers of ElemSize bytes, so a missed sync shows up in the
// data too. (With ElemSize 1 every byte is 0x7F, which bf16/f32 reinterpretations
// read as a large finite number rather than NaN; the interval set stays exact.) Per-element stores (StoreF, StoreI, views) do not update the set — a
// caller writing through them marks the window once with Written; Fill, Copy2D and
// the init functions do it themselves.
type Buffer struct {
	Space asm.Space
	// Name labels errors: "UB", "GM @A[rank=1]".
	Name string
	Data []byte
	// ElemSize (1, 2, 4 or 8) picks the poison pattern's period so integers of
	// that size read the exact sentinel; 0 means 8.
	ElemSize int
	poison   []span
	// sp is the page state of a sparse GM buffer (NewGMBuffer), nil for a
	// dense one. Code that reaches into Data calls Touch (or TouchWindow)
	// for the range first.
	sp *sparse
}

// span is the half-open byte interval [lo, hi).
type span struct{ lo, hi int64 }

// NewBuffer allocates size bytes. A poisoned buffer starts fully poisoned (the
// default for GM tensors and never-written tile buffers); otherwise it is zero.
func NewBuffer(space asm.Space, name string, size int64, elemSize int, poisoned bool) *Buffer {
	if size < 0 {
		size = 0
	}
	words := make([]uint64, (size+7)/8)
	var data []byte
	if len(words) > 0 {
		data = unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), size)
	}
	b := &Buffer{Space: space, Name: name, Data: data, ElemSize: elemSize}
	if poisoned {
		b.Poison(0, size)
	}
	return b
}

// Size is the buffer's length in bytes.
func (b *Buffer) Size() int64 { return int64(len(b.Data)) }

func (b *Buffer) label() string {
	if b.Name != "" {
		return b.Name
	}
	return b.Space.String()
}

// RangeError reports an access outside a buffer.
type RangeError struct {
	Buffer string
	Off, N int64
	Size   int64
}

func (e *RangeError) Error() string {
	return fmt.Sprintf("%s: access [%#x, %#x) (%d bytes) outside the buffer's %d bytes", e.Buffer, e.Off, e.Off+e.N, e.N, e.Size)
}

// CheckRange returns a *RangeError unless [off, off+n) lies inside the buffer.
func (b *Buffer) CheckRange(off, n int64) error {
	if off < 0 || n < 0 || off > int64(len(b.Data)) || n > int64(len(b.Data))-off {
		return &RangeError{Buffer: b.label(), Off: off, N: n, Size: int64(len(b.Data))}
	}
	return nil
}

func (b *Buffer) check(dt asm.DType, off int64) error {
	sz := dt.Size()
	if sz == 0 {
		return fmt.Errorf("%s: invalid dtype %v", b.label(), dt)
	}
	if err := b.CheckRange(off, int64(sz)); err != nil {
		return err
	}
	return b.Touch(off, int64(sz))
}

// LoadBits reads dt's raw bit pattern at byte offset off.
func (b *Buffer) LoadBits(dt asm.DType, off int64) (uint64, error) {
	if err := b.check(dt, off); err != nil {
		return 0, err
	}
	return b.bits(dt.Size(), off), nil
}

func (b *Buffer) bits(size int, off int64) uint64 {
	d := b.Data[off:]
	switch size {
	case 1:
		return uint64(d[0])
	case 2:
		return uint64(binary.LittleEndian.Uint16(d))
	case 4:
		return uint64(binary.LittleEndian.Uint32(d))
	}
	return binary.LittleEndian.Uint64(d)
}

// StoreBits writes dt's raw bit pattern at byte offset off.
func (b *Buffer) StoreBits(dt asm.DType, off int64, v uint64) error {
	if err := b.check(dt, off); err != nil {
		return err
	}
	b.setBits(dt.Size(), off, v)
	return nil
}

func (b *Buffer) setBits(size int, off int64, v uint64) {
	d := b.Data[off:]
	switch size {
	case 1:
		d[0] = byte(v)
	case 2:
		binary.LittleEndian.PutUint16(d, uint16(v))
	case 4:
		binary.LittleEndian.PutUint32(d, uint32(v))
	default:
		binary.LittleEndian.PutUint64(d, v)
	}
}

// LoadF reads the element of type dt at byte offset off as float64.
func (b *Buffer) LoadF(dt asm.DType, off int64) (float64, error) {
	v, err := b.LoadBits(dt, off)
	if err != nil {
		return math.NaN(), err
	}
	return Decode(dt, v), nil
}

// StoreF writes v as dt at off: floats round to nearest even, integers round to
// nearest even and saturate (see Round).
func (b *Buffer) StoreF(dt asm.DType, off int64, v float64) error {
	return b.StoreBits(dt, off, Encode(dt, v, RoundRint))
}

// LoadI reads the element at off as int64 (see DecodeInt).
func (b *Buffer) LoadI(dt asm.DType, off int64) (int64, error) {
	v, err := b.LoadBits(dt, off)
	if err != nil {
		return 0, err
	}
	return DecodeInt(dt, v), nil
}

// StoreI writes v as dt at off: integers wrap, floats round (see EncodeInt).
func (b *Buffer) StoreI(dt asm.DType, off int64, v int64) error {
	return b.StoreBits(dt, off, EncodeInt(dt, v))
}

// Fill writes n elements of dt, all equal to v, from off, and marks them written.
func (b *Buffer) Fill(dt asm.DType, off, n int64, v float64) error {
	return b.fillBits(dt, off, n, Encode(dt, v, RoundRint))
}

func (b *Buffer) fillBits(dt asm.DType, off, n int64, bits uint64) error {
	sz := int64(dt.Size())
	if sz == 0 {
		return fmt.Errorf("%s: invalid dtype %v", b.label(), dt)
	}
	if n < 0 || n > math.MaxInt64/sz {
		return &RangeError{Buffer: b.label(), Off: off, N: n, Size: b.Size()}
	}
	if err := b.CheckRange(off, n*sz); err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	if !b.setBackground(off, n*sz, patternWord(bits, int(sz))) {
		if err := b.Touch(off, n*sz); err != nil {
			return err
		}
		b.setBits(int(sz), off, bits)
		replicate(b.Data[off:off+n*sz], int(sz))
	}
	b.Written(off, n*sz)
	return nil
}

// replicate copies d[:period] over the rest of d by doubling.
func replicate(d []byte, period int) {
	for k := period; k < len(d); k *= 2 {
		copy(d[k:], d[:k])
	}
}

// Elem is a Go type a typed view may use; float16.Float16 views fp16 bits.
type Elem interface {
	~int8 | ~uint8 | ~int16 | ~uint16 | ~int32 | ~uint32 | ~int64 | ~uint64 | ~float32 | ~float64
}

// hostLittle: views alias Data, which is little-endian, so they need a
// little-endian host (amd64, arm64 and riscv64 all are).
var hostLittle = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// View returns n elements of T starting at byte offset off, aliasing the buffer
// (no copy, no allocation besides the slice header). off must be a multiple of
// T's size. Writes through the view do not clear poison; call Written.
func View[T Elem](b *Buffer, off, n int64) ([]T, error) {
	var zero T
	sz := int64(unsafe.Sizeof(zero))
	if n < 0 || n > math.MaxInt64/sz {
		return nil, &RangeError{Buffer: b.label(), Off: off, N: n, Size: b.Size()}
	}
	if err := b.CheckRange(off, n*sz); err != nil {
		return nil, err
	}
	if off%sz != 0 {
		return nil, fmt.Errorf("%s: offset %#x is not aligned to %d bytes", b.label(), off, sz)
	}
	if !hostLittle {
		return nil, fmt.Errorf("%s: typed views need a little-endian host", b.label())
	}
	if n == 0 {
		return []T{}, nil
	}
	if err := b.Touch(off, n*sz); err != nil {
		return nil, err
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&b.Data[off])), n), nil
}

// F32s views n float32 elements from off.
func (b *Buffer) F32s(off, n int64) ([]float32, error) { return View[float32](b, off, n) }

// U16s views n 16-bit elements (fp16 or bf16 bits, u16) from off.
func (b *Buffer) U16s(off, n int64) ([]uint16, error) { return View[uint16](b, off, n) }

// F16s views n fp16 elements from off.
func (b *Buffer) F16s(off, n int64) ([]float16.Float16, error) {
	return View[float16.Float16](b, off, n)
}

// I32s views n int32 elements from off.
func (b *Buffer) I32s(off, n int64) ([]int32, error) { return View[int32](b, off, n) }

// Poison marks [off, off+n) poisoned and fills it with the poison pattern. It
// clips to the buffer rather than failing, so a reset of a whole tensor is simple.
func (b *Buffer) Poison(off, n int64) {
	lo, hi := b.clip(off, n)
	if lo >= hi {
		return
	}
	b.fillPoison(lo, hi)
	b.poison = addSpan(b.poison, span{lo, hi})
}

func (b *Buffer) fillPoison(lo, hi int64) {
	p := b.ElemSize
	if p != 1 && p != 2 && p != 4 && p != 8 {
		p = 8
	}
	if b.setBackground(lo, hi-lo, patternWord(0x7F<<(8*p-8)|(1<<(8*p-8)-1), p)) {
		return
	}
	if b.Touch(lo, hi-lo) != nil {
		// Over the memory budget: the pages left untouched will read as
		// their background when touched, and the interval set stays exact;
		// the access that needs them fails with the budget error.
		return
	}
	// The pattern is phased on absolute offsets, so aligned elements always see
	// 0x7F in their top byte and 0xFF below. Write one period, then replicate.
	end := min(hi, lo+int64(p))
	for i := lo; i < end; i++ {
		if int(i%int64(p)) == p-1 {
			b.Data[i] = 0x7F
		} else {
			b.Data[i] = 0xFF
		}
	}
	replicate(b.Data[lo:hi], p)
}

// Written marks [off, off+n) as initialised.
func (b *Buffer) Written(off, n int64) {
	if len(b.poison) == 0 {
		return
	}
	lo, hi := b.clip(off, n)
	if lo < hi {
		b.poison = removeSpan(b.poison, span{lo, hi})
	}
}

// IsPoisoned reports whether any byte of [off, off+n) is poisoned.
func (b *Buffer) IsPoisoned(off, n int64) bool {
	_, ok := b.FirstPoisoned(off, n)
	return ok
}

// FirstPoisoned returns the first poisoned byte offset in [off, off+n).
func (b *Buffer) FirstPoisoned(off, n int64) (int64, bool) {
	if len(b.poison) == 0 || n <= 0 {
		return 0, false
	}
	hi := off + n
	i := sort.Search(len(b.poison), func(i int) bool { return b.poison[i].hi > off })
	if i < len(b.poison) && b.poison[i].lo < hi {
		return max(b.poison[i].lo, off), true
	}
	return 0, false
}

// PoisonedRanges returns the poisoned intervals as [lo, hi) pairs, in order.
func (b *Buffer) PoisonedRanges() [][2]int64 {
	out := make([][2]int64, len(b.poison))
	for i, s := range b.poison {
		out[i] = [2]int64{s.lo, s.hi}
	}
	return out
}

func (b *Buffer) clip(off, n int64) (int64, int64) {
	lo, hi := off, off+n
	if n < 0 || hi < off {
		return 0, 0
	}
	lo = max(lo, 0)
	hi = min(hi, int64(len(b.Data)))
	return lo, hi
}

// addSpan inserts s into the sorted disjoint set, merging touching intervals.
func addSpan(set []span, s span) []span {
	i := sort.Search(len(set), func(i int) bool { return set[i].hi >= s.lo })
	j := i
	for j < len(set) && set[j].lo <= s.hi {
		s.lo = min(s.lo, set[j].lo)
		s.hi = max(s.hi, set[j].hi)
		j++
	}
	if i == j {
		set = append(set, span{})
		copy(set[i+1:], set[i:])
		set[i] = s
		return set
	}
	set[i] = s
	return append(set[:i+1], set[j:]...)
}

// removeSpan subtracts s from the set.
func removeSpan(set []span, s span) []span {
	i := sort.Search(len(set), func(i int) bool { return set[i].hi > s.lo })
	if i == len(set) || set[i].lo >= s.hi {
		return set
	}
	// Common case: s falls strictly inside one interval and splits it.
	if set[i].lo < s.lo && set[i].hi > s.hi {
		right := span{s.hi, set[i].hi}
		set[i].hi = s.lo
		set = append(set, span{})
		copy(set[i+2:], set[i+1:])
		set[i+1] = right
		return set
	}
	// No interval strictly contains s now: trim a left overlap, drop the covered
	// intervals, trim a right overlap.
	if set[i].lo < s.lo {
		set[i].hi = s.lo
		i++
	}
	j := i
	for j < len(set) && set[j].hi <= s.hi {
		j++
	}
	if j < len(set) && set[j].lo < s.hi {
		set[j].lo = s.hi
	}
	return append(set[:i], set[j:]...)
}
