package hazard

import (
	"reflect"
	"testing"
	"unsafe"
)

// TestCellSlab: the slab hands out distinct zero cells with the bounds
// asked for, each on a cache line, one allocation per chunk, and a chunk
// with its header and lead fits the 16 KiB size class it is sized for.
func TestCellSlab(t *testing.T) {
	if size := int(unsafe.Sizeof(cellChunkArray{})) + mallocHeader; size > 16<<10 || size+int(unsafe.Sizeof(cell{})) <= 16<<10 {
		t.Fatalf("a chunk of %d cells takes %d bytes: want the most that fit 16 KiB", cellChunk, size)
	}
	for _, tc := range []struct {
		name string
		slab *cellSlab
	}{{"slab", &cellSlab{}}, {"heap", nil}} {
		t.Run(tc.name, func(t *testing.T) {
			seen := map[*cell]bool{}
			for i := range 3*cellChunk + 1 {
				c := tc.slab.newCell(int64(i), int64(i+1))
				if seen[c] {
					t.Fatalf("cell %d handed out twice", i)
				}
				seen[c] = true
				if c.lo != int64(i) || c.hi != int64(i+1) || !reflect.DeepEqual(*c, cell{lo: c.lo, hi: c.hi}) {
					t.Fatalf("cell %d: %+v, want an empty cell for [%d, %d)", i, c, i, i+1)
				}
				if a := uintptr(unsafe.Pointer(c)); a%64 != 0 {
					t.Fatalf("cell %d at %#x: not on a cache line", i, a)
				}
				c.written, c.reads = true, make([]rec, 1) // dirty it: the next must not see this
			}
		})
	}
	s := &cellSlab{}
	s.newCell(0, 1) // start a chunk
	if n := testing.AllocsPerRun(10, func() {
		for range cellChunk {
			s.newCell(0, 1)
		}
	}); n != 1 {
		t.Errorf("%d allocations for a chunk's worth of cells, want 1", int(n))
	}
}
