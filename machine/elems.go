package machine

import "unsafe"

// u16s and f32s view little-endian element bytes of a buffer (a tile's
// decode and store runs) as whole elements, so the cube's operand decode
// moves an element per load instead of assembling it byte by byte. Buffers
// are little-endian and their typed views need a little-endian host
// (memory.View); every host Go supports the unaligned access this may make.
func u16s(b []byte) []uint16 {
	return unsafe.Slice((*uint16)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/2)
}

func f32s(b []byte) []float32 {
	return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/4)
}
