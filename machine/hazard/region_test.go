package hazard

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestRegionsKeepCells drives two shadow memories through the same random
// host writes and accesses, one giving each "tensor" a region (claim) and
// one with the plain page lists, and requires the same cells from every
// span and the same cells in all after every step: regions may only move
// where a page's cells are listed, never where a cell starts or ends.
// Accesses cross tensor edges, page boundaries and each other at random,
// so regions are dissolved and claimed again along the way.
func TestRegionsKeepCells(t *testing.T) {
	const shift = 8 // 256-byte pages: tensors span several
	rng := rand.New(rand.NewPCG(3, 4))
	claimed, dissolved := 0, 0
	for round := range 300 {
		// Tensors laid end to end with gaps, as the machine places them.
		var tensors [][2]int64
		for pos := int64(rng.IntN(64)); len(tensors) < 1+rng.IntN(6); {
			n := 4 * (1 + rng.Int64N(200))
			tensors = append(tensors, [2]int64{pos, pos + n})
			pos += n + 4*rng.Int64N(16)
		}
		end := tensors[len(tensors)-1][1]
		plain, reg := newShadowMem(shift, nil), newShadowMem(shift, nil)
		for step := range 300 {
			var lo, hi int64
			host := false
			switch k := rng.IntN(100); {
			case step < len(tensors) || k < 10: // a host write of a whole tensor
				tt := tensors[rng.IntN(len(tensors))]
				if step < len(tensors) { // each tensor's initial contents
					tt = tensors[step]
				}
				lo, hi, host = tt[0], tt[1], true
				n := len(reg.regions)
				reg.claim(lo, hi, rng.Int64N(3)*4) // two in three as signal tensors of 4- or 8-byte words
				claimed += len(reg.regions) - n
			case k < 98: // words and runs inside one tensor
				tt := tensors[rng.IntN(len(tensors))]
				lo = tt[0] + 4*rng.Int64N((tt[1]-tt[0])/4)
				hi = min(tt[1], lo+4*(1+rng.Int64N(8)))
			default: // anywhere: across tensors, gaps and pages
				lo = rng.Int64N(end + 64)
				hi = lo + 1 + rng.Int64N(300)
			}
			write := host || rng.IntN(3) == 0
			n := len(reg.regions)
			a := spanAll(plain, lo, hi, write)
			b := spanAll(reg, lo, hi, write)
			dissolved += n - len(reg.regions)
			if !slices.Equal(a, b) {
				t.Fatalf("round %d step %d: [%d, %d) spans %v with regions, %v without", round, step, lo, hi, b, a)
			}
			if a, b := allCells(t, plain), allCells(t, reg); !slices.Equal(a, b) {
				t.Fatalf("round %d step %d: after [%d, %d) the cells are %v with regions, %v without", round, step, lo, hi, b, a)
			}
		}
	}
	if claimed < 500 || dissolved < 200 {
		t.Fatalf("%d regions claimed, %d dissolved: the test no longer covers both", claimed, dissolved)
	}
	t.Logf("%d regions claimed, %d dissolved", claimed, dissolved)
}

// spanAll spans [lo, hi) page by page as the detector does, merging the
// cells as a plain write does, and returns the bounds of the cells found.
func spanAll(s *shadowMem, lo, hi int64, write bool) [][2]int64 {
	var out [][2]int64
	for lo < hi {
		m, e := s.page(lo, hi)
		i, j := m.span(lo, e)
		if write && j-i > keepSplits {
			m.collapse(i, j)
			j = i + 1
		}
		for _, c := range m.cells[i:j] {
			out = append(out, [2]int64{c.lo, c.hi})
		}
		lo = e
	}
	return out
}

// allCells returns the bounds of every cell of s in address order, checking
// that each list is sorted, in step with its bounds array, and inside its
// region.
func allCells(t *testing.T, s *shadowMem) [][2]int64 {
	t.Helper()
	var out [][2]int64
	list := func(m *imap, lo, hi int64) {
		if m == nil {
			return
		}
		for k, c := range m.cells {
			if m.bs[k] != [2]int64{c.lo, c.hi} || c.lo >= c.hi || c.lo < lo || c.hi > hi {
				t.Fatalf("cell %d [%d, %d) (bounds %v) outside [%d, %d) or out of step", k, c.lo, c.hi, m.bs[k], lo, hi)
			}
			out = append(out, [2]int64{c.lo, c.hi})
		}
	}
	for p, m := range s.dense {
		list(m, int64(p)<<s.shift, int64(p+1)<<s.shift)
	}
	for k, r := range s.regions {
		if r.lo >= r.hi || k > 0 && s.regions[k-1].hi > r.lo {
			t.Fatalf("region %d [%d, %d) empty or out of order", k, r.lo, r.hi)
		}
		for n, m := range r.pages {
			p := r.p0 + int64(n)
			list(m, max(r.lo, p<<s.shift), min(r.hi, (p+1)<<s.shift))
		}
	}
	slices.SortFunc(out, func(a, b [2]int64) int { return int(a[0] - b[0]) })
	for k := 1; k < len(out); k++ {
		if out[k-1][1] > out[k][0] {
			t.Fatalf("cells %v and %v overlap", out[k-1], out[k])
		}
	}
	return out
}
