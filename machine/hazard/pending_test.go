package hazard

import "testing"

// TestPendingHostWrites: host writes over more than maxRegionPages pages
// left pending give the pages made later, and the wide reads that make
// none, what writing every page at once gave.
func TestPendingHostWrites(t *testing.T) {
	const G = int64(1) << 30
	writes := []struct {
		lo, hi int64
		poison bool
	}{
		{5 << 16, 5<<16 + 100, false}, // a page with a list before the wide writes
		{0, 9 * G, false},
		{G + 100, 5*G + 7, true},
		{2 * G, 2*G + 10, false}, // one page, written at once
		{3 * G, 8*G + 3, false},
	}
	lazy, eager := newShadowMem(pageShift, nil), newShadowMem(pageShift, nil)
	for n, w := range writes {
		r := rec{agent: 1, epoch: uint32(n + 1), write: true}
		lazy.hostWrite(w.lo, w.hi, &r, w.poison, true)
		eager.hostWrite(w.lo, w.hi, &r, w.poison, false)
	}
	if len(lazy.pending) != 3 {
		t.Fatalf("%d pending writes, want 3", len(lazy.pending))
	}
	for _, q := range [][2]int64{{0, 9*G + 5}, {G, 6 * G}, {G + 200, 2*G + 5}, {5*G + 7, 9 * G}, {9 * G, 10 * G}} {
		lo, hi, ok := lazy.unwrittenWide(q[0], q[1])
		var elo, ehi int64
		eok := false
		for pos := q[0]; pos < q[1]; {
			m, end := eager.page(pos, q[1])
			if a, b, f := m.unwritten(pos, end); f {
				if !eok {
					elo, eok = a, true
				}
				ehi = b
			}
			pos = end
		}
		if lo != elo || hi != ehi || ok != eok {
			t.Errorf("unwritten %#x..%#x: %#x..%#x %v, want %#x..%#x %v", q[0], q[1], lo, hi, ok, elo, ehi, eok)
		}
	}
	for _, p := range []int64{0, 5, G>>pageShift + 0, (5*G + 7) >> pageShift, (8*G + 3) >> pageShift, 2 * G >> pageShift} {
		a, _ := lazy.page(p<<pageShift, (p+1)<<pageShift)
		b, _ := eager.page(p<<pageShift, (p+1)<<pageShift)
		if len(a.cells) != len(b.cells) {
			t.Fatalf("page %#x: %d cells, want %d", p, len(a.cells), len(b.cells))
		}
		for i, c := range a.cells {
			e := b.cells[i]
			if a.bs[i] != b.bs[i] || c.written != e.written || c.w != e.w {
				t.Errorf("page %#x cell %d: %v written=%v w=%+v, want %v written=%v w=%+v", p, i, a.bs[i], c.written, c.w, b.bs[i], e.written, e.w)
			}
		}
	}
}
