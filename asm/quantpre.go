package asm

import "math"

// QuantPreWord is the QUANT_PRE word set_quant_scalar writes, as
// SET_QUANT_SCALAR_IMPL builds it (include/pto/npu/a2a3/SetQuantScalar.hpp
// at 3186c381): the f32 scale's bits widened through int32_t, so a negative
// scale also sets bits 32..63; for an 8-bit out, bit 46 set (i8) or clear
// (u8); then ptoasm's #shift in bits 32..35. The machine executes this word
// and the MLIR importer checks a preQuantScalar against it, so both read
// the register the same way.
func QuantPreWord(scale float32, out string, shift uint64) uint64 {
	w := uint64(int64(int32(math.Float32bits(scale))))
	switch out {
	case "i8":
		w |= 1 << 46
	case "u8":
		w &^= 1 << 46
	}
	return w | (shift&0xF)<<32
}
