package machine

import (
	"fmt"
	"math"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/memory"
)

// tpow, tpows, trem and trems as pto-isa's a2a3 code computes them
// (include/pto/npu/a2a3/TPow.hpp, TRem.hpp, TRemS.hpp at 3186c381): every
// vector step is an f32 operation rounded on its own, and the operands the
// code uses as scratch (trem's and trems' i32 a and b, the tmp tiles) are left
// as the code leaves them, because a later reader of those bytes sees that.

// f32r rounds to f32, to nearest even.
func f32r(x float64) float64 { return float64(float32(x)) }

// f32Bits is the bit pattern of f32r(x).
func f32Bits(x float64) uint64 { return uint64(math.Float32bits(float32(x))) }

// powF32 is TPowF's result for base a and exponent b: vexp(vmul(vln(a), b))
// per step in f32 (t is the same with vabs(a) first, the tmp tile's value),
// then SwitchPowFResult's scalar fix-ups.
func powF32(a, b float64) (res, t float64) {
	t = f32r(math.Exp(f32r(f32r(math.Log(math.Abs(a))) * b)))
	res = f32r(math.Exp(f32r(f32r(math.Log(a)) * b)))
	switch {
	case b == 0:
		res = 1
	case a == 0:
		res = math.Inf(1)
		if b > 0 {
			res = 0
		}
	case a == -1 && math.IsInf(b, 0):
		res = 1
	case isIntegerF32(b):
		res = t
		// static_cast<int>(exp) % 2: int conversion saturates on the
		// scalar unit; beyond 2^24 every f32 is even.
		if a < 0 && math.Abs(b) < 0x1p24 && int64(b)%2 != 0 {
			res = -t
		}
	}
	return res, t
}

// isIntegerF32 is TPow.hpp's IsInteger: finite and without a fraction.
func isIntegerF32(x float64) bool { return !math.IsInf(x, 0) && x == x && x == math.Trunc(x) }

// powInt is TPowICore in the dtype's width: 1 for b = 0, 0 for a = 0, ±1 for
// a = ±1, 0 for a negative b, else a^b by squaring, wrapping.
func powInt(a, b int64) int64 {
	switch {
	case b == 0:
		return 1
	case a == 0:
		return 0
	case a == 1:
		return 1
	case a == -1:
		if b&1 != 0 {
			return -1
		}
		return 1
	case b < 0:
		return 0
	}
	r := int64(1)
	for ; b != 0; b >>= 1 {
		if b&1 != 0 {
			r *= a
		}
		a *= a
	}
	return r
}

// vecPow: tpow dst, a, b, tmp and tpows dst, a, s, tmp. pto-isa's a2a3 TPOW
// takes f32 and the integer dtypes (PowCheckType); f16 has no path.
func vecPow(args []Operand, kind srcKind) error {
	d, a, b, err := binSrcs(args, 4, kind)
	if err != nil {
		return err
	}
	if d.dt.IsFloat() && d.dt != asm.F32 {
		return fmt.Errorf("a2a3 TPOW has no %v path: f32 or an integer dtype (TPow.hpp PowCheckType)", d.dt)
	}
	if d.dt.Size() > 4 {
		return fmt.Errorf("a2a3 TPOW has no %v path (TPow.hpp PowCheckType)", d.dt)
	}
	if a.dt != d.dt || b.dt != d.dt {
		return fmt.Errorf("a and b must be dst's %v", d.dt)
	}
	if !d.dt.IsFloat() {
		// TPowI: the scalar loop in C int (a u32 above 2^31 is negative
		// there), stored into the dtype; tmp is not touched.
		in := func(x int64) int64 { return int64(int32(x)) }
		for r := 0; r < d.rows; r++ {
			for c := 0; c < d.cols; c++ {
				d.setI(r, c, powInt(in(a.I(r, c)), in(b.I(r, c))))
			}
		}
		d.written()
		return nil
	}
	tmp, err := tileView(&args[3], "tmp")
	if err != nil {
		return err
	}
	if tmp.dt != asm.F32 || tmp.rows < d.rows || tmp.cols < d.cols {
		return fmt.Errorf("tmp must be an f32 tile covering dst's valid region [%d, %d]", d.rows, d.cols)
	}
	for r := 0; r < d.rows; r++ {
		for c := 0; c < d.cols; c++ {
			res, t := powF32(a.F(r, c), b.F(r, c))
			tmp.setF(r, c, t, memory.RoundRint)
			d.setF(r, c, res, memory.RoundRint)
		}
	}
	tmp.rows, tmp.cols = d.rows, d.cols
	tmp.written()
	d.written()
	return nil
}

// remF32 is RemF32Instr's and RemSF32Instr's chain for one element:
// q = floor(f32(a/b)), r = f32(a - f32(q·b)), then r + b where f32(r·b) < 0.
// It returns the result and what the chain leaves in tmp, f32(r + b).
func remF32(a, b float64) (res, t float64) {
	q := math.Floor(f32r(a / b))
	r := f32r(a - f32r(q*b))
	t = f32r(r + b)
	if f32r(r*b) < 0 {
		return t, t
	}
	return r, t
}

// remI32 is RemInt32Instr's chain (and RemSInt32Instr's, with b a scalar):
// a and b are rounded through f32 (rint back to i32: a2), the quotient
// floored from f32 with saturation, the remainder r = a2 - q·b2 wrapped in
// i32, then r and the correction in f32 and a truncating convert. tb is
// the f32 correction f32(f32(r) + f32(b)), the value left in tmp. TRemS
// multiplies q by the scalar itself (vmuls with the int32 x), TRem by b
// rounded through f32. The f32 → i32 converts saturate, NaN to 0.
func remI32(a, b int64, scalar bool) (res, a2 int64, tb float64) {
	af, bf := f32r(float64(a)), f32r(float64(b))
	q := memory.FloatToInt(asm.I32, f32r(af/bf), memory.RoundFloor)
	a2 = memory.FloatToInt(asm.I32, af, memory.RoundRint)
	b2 := b
	if !scalar {
		b2 = memory.FloatToInt(asm.I32, bf, memory.RoundRint)
	}
	r := int64(int32(a2 - int64(int32(q*b2))))
	rf := f32r(float64(r))
	tb = f32r(rf + bf)
	x := rf
	if f32r(rf*bf) < 0 {
		x = tb
	}
	return memory.FloatToInt(asm.I32, x, memory.RoundTrunc), a2, tb
}

// vecRem: trem dst, a, b, tmp and trems dst, a, s, tmp, f32 or i32.
//
// On i32, TRem.hpp converts a and b to f32 in place, a back to i32 (rint)
// and b to i32 and again to f32, so a ends as rint(f32(a)) and b as the
// bits of f32(b); TRemS.hpp does the same to a. tmp's first row ends with
// the last row's f32(r + b). trem also keeps its compare mask in tmp at
// dst's row stride: a vector_dup of the mask's own UB address over 256
// bytes, then one bit per element of tmp's first row (< 0), 8 bytes per
// 64 elements.
func vecRem(args []Operand, kind srcKind) error {
	d, a, b, err := binSrcs(args, 4, kind)
	if err != nil {
		return err
	}
	if (d.dt != asm.F32 && d.dt != asm.I32) || a.dt != d.dt || b.dt != d.dt {
		return fmt.Errorf("a2a3 TREM takes f32 or i32 dst, a and b (TRemCheck), not %v", d.dt)
	}
	tmp, err := tileView(&args[3], "tmp")
	if err != nil {
		return err
	}
	if tmp.es != 4 || tmp.rows < 1 || tmp.cols < d.cols {
		return fmt.Errorf("tmp must be a 4-byte tile with a row of dst's %d valid columns", d.cols)
	}
	var maskAt int64
	if kind == srcTile {
		// maskBuf = tmp + dstRowStride elements; vector_dup writes 256
		// bytes there (RemF32Instr, RemInt32Instr).
		if !d.flat || d.cs != d.es {
			return fmt.Errorf("dst must be row-major (TRemCheck)")
		}
		maskAt = tmp.base + d.rs
		if tmp.base+memory.TileLayout(args[3].Tile).Footprint() < maskAt+256 {
			return fmt.Errorf("tmp %%%s: TRem keeps a 256-byte compare mask at dst's row stride (%d bytes) in tmp, which has %d bytes",
				args[3].Tile.Name, d.rs, memory.TileLayout(args[3].Tile).Footprint())
		}
	}
	isInt := d.dt == asm.I32
	var bv view
	if kind == srcTile {
		bv = b.v
	}
	for r := 0; r < d.rows; r++ {
		for c := 0; c < d.cols; c++ {
			var t float64
			if isInt {
				res, a2, tb := remI32(a.I(r, c), b.I(r, c), kind == srcScalar)
				bf := f32r(float64(b.I(r, c)))
				a.v.setI(r, c, a2)
				if kind == srcTile {
					bv.setBits(r, c, f32Bits(bf))
				}
				d.setI(r, c, res)
				t = tb
			} else {
				var res float64
				res, t = remF32(a.F(r, c), b.F(r, c))
				d.setF(r, c, res, memory.RoundRint)
			}
			if r == d.rows-1 {
				tmp.setBits(0, c, f32Bits(t))
			}
		}
	}
	if kind == srcTile {
		remMask(&tmp, maskAt, d.cols)
	}
	tmp.rows, tmp.cols = 1, d.cols
	tmp.written()
	if isInt {
		a.v.rows, a.v.cols = d.rows, d.cols
		a.v.written()
		if kind == srcTile {
			bv.rows, bv.cols = d.rows, d.cols
			bv.written()
		}
	}
	d.written()
	return nil
}

// remMask writes TRem's compare mask at byte address at of tmp's buffer:
// the vector_dup of the address as u32 over 256 bytes, then vcmpvs_lt of
// tmp's first ⌈cols/64⌉·64 f32 elements against 0, one bit each.
func remMask(tmp *view, at int64, cols int) {
	data := tmp.buf.Data
	for k := int64(0); k < 256; k += 4 {
		storeBits(data, at+k, 4, uint64(uint32(at)))
	}
	n := (cols + 63) / 64 * 64
	for e := 0; e < n; e += 8 {
		var m uint64
		for j := 0; j < 8; j++ {
			x := math.Float32frombits(uint32(loadBits(data, tmp.base+int64(e+j)*4, 4)))
			if x < 0 {
				m |= 1 << j
			}
		}
		storeBits(data, at+int64(e/8), 1, m)
	}
	tmp.buf.Written(at, 256)
}

// vecFmod: tfmod dst, a, b and tfmods dst, a, s as TFmod.hpp's FmodF32Instr
// and TFmodS.hpp's FmodSF32Instr compute them, f32 only: dst =
// f32(a - f32(trunc(f32(a/b))·b)), each step rounded (so b = 0 gives NaN,
// and a quotient past 2^24 leaves the f32 product's error in dst).
func vecFmod(args []Operand, kind srcKind) error {
	d, a, b, err := binSrcs(args, 3, kind)
	if err != nil {
		return err
	}
	if d.dt != asm.F32 || a.dt != asm.F32 {
		return fmt.Errorf("a2a3 TFMOD takes f32 only (TFmod.hpp), not %v", d.dt)
	}
	for r := 0; r < d.rows; r++ {
		for c := 0; c < d.cols; c++ {
			x, y := a.F(r, c), b.F(r, c)
			d.setF(r, c, f32r(x-f32r(math.Trunc(f32r(x/y))*y)), memory.RoundRint)
		}
	}
	d.written()
	return nil
}
