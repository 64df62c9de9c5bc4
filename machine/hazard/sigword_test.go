package hazard

import (
	"testing"
	"unsafe"
)

// A slab hands out distinct zero records, as new would, each on its own
// bytes, and cells and histories that start on a cache line (slabBytes).
func TestSigSlabRecords(t *testing.T) {
	var s sigSlab
	r := rec{agent: 3, epoch: 7}
	cases := []struct {
		name  string
		get   func() unsafe.Pointer
		size  uintptr
		align uintptr
	}{
		{"cell", func() unsafe.Pointer { return unsafe.Pointer(s.cells.get()) }, unsafe.Sizeof(cell{}), 64},
		{"sigHist", func() unsafe.Pointer { return unsafe.Pointer(s.hist()) }, unsafe.Sizeof(sigHist{}), 64},
		{"recBox", func() unsafe.Pointer { return unsafe.Pointer(s.boxes.get()) }, unsafe.Sizeof(recBox{}), 8},
	}
	for _, tc := range cases {
		seen := map[unsafe.Pointer]bool{}
		// More than one array's worth, so a refill is crossed.
		n := 2*slabBytes/int(tc.size) + 3
		for i := range n {
			p := tc.get()
			if seen[p] {
				t.Fatalf("%s %d: handed out twice", tc.name, i)
			}
			seen[p] = true
			b := unsafe.Slice((*byte)(p), tc.size)
			for k, x := range b {
				if x != 0 {
					t.Fatalf("%s %d: byte %d is %d, want a zero record", tc.name, i, k, x)
				}
			}
			if uintptr(p)%tc.align != 0 {
				t.Fatalf("%s %d at %#x: not on a %d-byte boundary", tc.name, i, uintptr(p), tc.align)
			}
			// Dirty it: a later record must not see these bytes.
			for k := range b {
				b[k] = 0xff
			}
		}
	}
	l := s.addBox(&r)
	if len(*l) != 1 || (*l)[0] != r {
		t.Fatalf("addBox holds %v, want just %v", *l, r)
	}
}

// roomFor leaves a page's free list at least the cells a span can take,
// and newCell hands them out as new cells of the asked bounds.
func TestSigSlabRoomFor(t *testing.T) {
	var s sigSlab
	m := &imap{}
	for w := int64(0); w < 40; w += 4 {
		s.roomFor(m)
		if len(m.free) < sigCellsPerSpan {
			t.Fatalf("word %d: %d free cells, want at least %d", w, len(m.free), sigCellsPerSpan)
		}
		i, j := m.span(w, w+4)
		if j-i != 1 || m.cells[i].lo != w || m.cells[i].hi != w+4 || m.cells[i].written {
			t.Fatalf("word %d: span gave %d cells, the first [%d, %d) written %v", w, j-i, m.cells[i].lo, m.cells[i].hi, m.cells[i].written)
		}
	}
}
