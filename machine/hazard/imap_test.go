package hazard

import (
	"math/rand/v2"
	"testing"
	"unsafe"
)

// TestImapBounds drives an imap through random spans, writes (collapses)
// and splits and checks that its bounds array stays in step with its cells
// and that the cells stay sorted, disjoint and cover every span asked for.
func TestImapBounds(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		var m imap
		for step := range 200 {
			lo := rng.Int64N(4096)
			hi := lo + 1 + rng.Int64N(512)
			i, j := m.span(lo, hi)
			if i >= j || m.cells[i].lo != lo || m.cells[j-1].hi != hi {
				t.Fatalf("round %d step %d: span(%d, %d) = [%d, %d) does not cover it exactly", round, step, lo, hi, i, j)
			}
			for k := i + 1; k < j; k++ {
				if m.cells[k].lo != m.cells[k-1].hi {
					t.Fatalf("round %d step %d: gap inside span at cell %d", round, step, k)
				}
			}
			if rng.IntN(2) == 0 && j-i > keepSplits {
				m.collapse(i, j)
			}
			if len(m.bs) != len(m.cells) {
				t.Fatalf("round %d step %d: %d bounds for %d cells", round, step, len(m.bs), len(m.cells))
			}
			for k, c := range m.cells {
				if m.bs[k] != [2]int64{c.lo, c.hi} {
					t.Fatalf("round %d step %d: bounds[%d] = %v, cell is [%d, %d)", round, step, k, m.bs[k], c.lo, c.hi)
				}
				if c.lo >= c.hi || k > 0 && m.cells[k-1].hi > c.lo {
					t.Fatalf("round %d step %d: cell %d [%d, %d) empty or overlapping", round, step, k, c.lo, c.hi)
				}
			}
		}
	}
}

// TestImapNear checks that the neighbour lookup span tries first agrees
// with the binary search wherever it answers, on lists with gaps, for
// every hint and every address around the cells, and that it answers the
// in-order walks it is for (the next word, the previous chunk).
func TestImapNear(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	answered := 0
	for round := range 100 {
		var m imap
		for range 1 + rng.IntN(12) {
			lo := rng.Int64N(256)
			m.span(lo, lo+1+rng.Int64N(24))
		}
		for h := range len(m.bs) + 2 {
			for lo := int64(-2); lo < 300; lo++ {
				got := m.neighbour(h, lo)
				if got < 0 {
					continue
				}
				answered++
				if want := m.search(lo); got != want {
					t.Fatalf("round %d: neighbour(%d, %d) = %d, search = %d (bounds %v)", round, h, lo, got, want, m.bs)
				}
			}
		}
	}
	var m imap
	m.span(0, 64)
	for w := int64(0); w < 60; w += 4 { // words split off one by one
		m.hint = int(w/4) - 1
		if w == 0 {
			m.hint = 0
		}
		if got, want := m.neighbour(m.hint, w), m.search(w); got != want {
			t.Fatalf("in-order walk: neighbour(%d, %d) = %d, want %d", m.hint, w, got, want)
		}
		m.span(w, w+4)
	}
	if i := m.neighbour(5, 16); i != 4 {
		t.Fatalf("downward walk: neighbour(5, 16) = %d, want 4", i)
	}
	if answered == 0 {
		t.Fatal("neighbour never answered")
	}
}

// A signal word's history stays in the 128-byte size class (see its doc
// comment).
func TestSigHistSize(t *testing.T) {
	if n := unsafe.Sizeof(sigHist{}); n > 128 {
		t.Errorf("sigHist is %d bytes, want at most 128", n)
	}
}

// A rec stays one cache line (see its doc comment).
func TestRecSize(t *testing.T) {
	if n := unsafe.Sizeof(rec{}); n > 64 {
		t.Errorf("rec is %d bytes, want at most 64", n)
	}
}

// A data cell's access reads its first line (bounds, flags, the lists'
// headers, the signal box's pointer), w and read0: three whole lines,
// w and read0 each on one, for a cell that starts on a line
// (TestCellSlab, TestSigSlabRecords).
func TestCellLayout(t *testing.T) {
	var c cell
	// Three lines: data cells, most of them, carry no signal word's
	// fields and rarely a list but the reads.
	if n := unsafe.Sizeof(c); n != 192 {
		t.Errorf("cell is %d bytes, want 192", n)
	}
	if n := unsafe.Sizeof(sigBox{}); n != 64 {
		t.Errorf("sigBox is %d bytes, want 64, one line", n)
	}
	if o := unsafe.Offsetof(c.sigBox) + unsafe.Sizeof(c.sigBox); o > 64 {
		t.Errorf("the first line ends at %d, want 64", o)
	}
	if unsafe.Offsetof(c.w) != 64 || unsafe.Offsetof(c.read0) != 128 {
		t.Errorf("w at %d and read0 at %d, want 64 and 128", unsafe.Offsetof(c.w), unsafe.Offsetof(c.read0))
	}
}

// A split gives the new cell lists of its own (cell.copyTo): changing
// one side's other writes or uninitialised reads after leaves the
// other's as they were, whichever side changes.
func TestSplitKeepsListsApart(t *testing.T) {
	add, un := rec{agent: 1, epoch: 1, atomic: true}, uninitRead{r: rec{agent: 2, epoch: 2}}
	for _, tc := range []struct {
		name   string
		change int // which cell of the split changes: 0 left, 1 right
	}{{"left changes", 0}, {"right changes", 1}} {
		t.Run(tc.name, func(t *testing.T) {
			m := &imap{}
			i, _ := m.span(0, 64)
			c := m.cells[i]
			c.putAdd(&add)
			c.setUninit([]uninitRead{un})
			m.span(0, 32) // splits the cell at 32
			if len(m.cells) != 2 || m.cells[0].lists == m.cells[1].lists {
				t.Fatalf("split made %d cells sharing lists %v", len(m.cells), m.cells[0].lists == m.cells[1].lists)
			}
			ch, other := m.cells[tc.change], m.cells[1-tc.change]
			ch.setAdds(append(ch.adds()[:0], rec{agent: 3}))
			ch.setUninit(ch.uninit()[:0])
			if a, u := other.adds(), other.uninit(); len(a) != 1 || a[0] != add || len(u) != 1 || u[0] != un {
				t.Errorf("the other cell holds adds %v and uninit %v, want [%v] and [%v]", a, u, add, un)
			}
		})
	}
}
