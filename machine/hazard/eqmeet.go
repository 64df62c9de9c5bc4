package hazard

import "slices"

// An `==` wait on a word several agents add to (a round count every
// follower adds 1 to, waited for with `#cmp=eq`, hazards/counter_eq_overshoot)
// passes on the sets of landed adds whose sum is the value exactly, and is
// ordered after what every such set carries: the meet over them of the join
// of their releases, as for `>=` (sigprefix.go). It used to join the whole
// word, so it was ordered after whichever adds had landed when it polled.
// On one timing that is the same (a proper prefix of the landed adds sums
// to less than the value the wait read), but an add that lands after the
// wait, not ordered after it, can stand in for one it took on another
// timing (latewait.go), and then the whole join named the adds the timing
// brought: the verdict followed the followers' speed.
//
// The meet is below v at a component when some set of prefixes, one per
// agent, each of releases at most v there, sums to the value: a subset sum
// over each agent's prefix sums, not the largest prefixes' sum that `>=`
// tests (`==` is not monotone in the sum: adds of 2 from two ranks jump
// over 3, so a wait for 3 needs the rank that adds 1). It is still monotone
// in v (more releases, more sets), so meetAt's search stands, with
// eqReaches as its test.

// maxEqSum bounds the sum eqReaches tracks (bits of its scratch): an `==`
// wait needing more of the adds joins the whole word (ordering more: a
// missed race, never a false one).
const maxEqSum = 1 << 12

// eqReaches reports whether the adds of m, taking of each adder a prefix
// of its releases at most u in col (meetAt's column), can sum to target.
func (d *Detector) eqReaches(m *multiHist, col []uint32, u uint32, target int64) bool {
	if target == 0 {
		return true
	}
	if target < 0 || target > maxEqSum {
		return false
	}
	words := int(target>>6) + 1
	reach := slices.Grow(d.eqReach[:0], 2*words)[:2*words]
	d.eqReach = reach
	cur, next := reach[:words], reach[words:]
	clear(cur)
	cur[0] = 1 // the empty prefix of every adder
	off := 0
	for k := range m.adders {
		rels := m.adders[k].rels
		c, _ := slices.BinarySearch(col[off:off+len(rels)], u+1) // releases <= u
		off += len(rels)
		if c == 0 {
			continue
		}
		copy(next, cur)
		for r := range c {
			if s := rels[r].through; s > 0 && s <= target {
				orShifted(next, cur, int(s))
			}
		}
		cur, next = next, cur
	}
	return cur[target>>6]>>(target&63)&1 != 0
}

// orShifted ors src shifted left by n bits into dst (both the same
// length; bits past the end are dropped).
func orShifted(dst, src []uint64, n int) {
	w, b := n>>6, uint(n&63)
	for i := len(dst) - 1; i >= w; i-- {
		v := src[i-w] << b
		if b != 0 && i-w-1 >= 0 {
			v |= src[i-w-1] >> (64 - b)
		}
		dst[i] |= v
	}
}
