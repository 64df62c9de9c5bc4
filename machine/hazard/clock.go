package hazard

// Vector clocks are dense []uint32 indexed by agent; a missing entry is 0, so a
// clock grows only when it learns about a newer agent.

// join raises dst to at least src, componentwise, growing dst as needed, and
// reports whether any component changed.
func join(dst *[]uint32, src []uint32) bool {
	d := *dst
	if len(d) < len(src) {
		d = grow(d, len(src))
	}
	changed := false
	for i, v := range src {
		if v > d[i] {
			d[i] = v
			changed = true
		}
	}
	*dst = d
	return changed
}

// raise sets component i of c to at least v.
func raise(c *[]uint32, i int32, v uint32) {
	d := *c
	if int(i) >= len(d) {
		d = grow(d, int(i)+1)
	}
	if v > d[i] {
		d[i] = v
	}
	*c = d
}

func grow(d []uint32, n int) []uint32 {
	if cap(d) >= n {
		old := len(d)
		d = d[:n]
		clear(d[old:])
		return d
	}
	nd := make([]uint32, n, n+n/2+4)
	copy(nd, d)
	return nd
}

func get(c []uint32, i int32) uint32 {
	if i < 0 || int(i) >= len(c) {
		return 0
	}
	return c[i]
}
