package memory

// transpose8x8 (transpose_amd64.s): d[c*ld + r] = s[r*ls + c] for r, c in
// 0..8, strides in elements.
//
//go:noescape
func transpose8x8(d *uint16, ld int, s *uint16, ls int)

const haveTranspose8x8 = true
