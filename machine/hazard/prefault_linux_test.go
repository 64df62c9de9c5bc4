//go:build linux

package hazard

import (
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TestSlabsPrefaulted: a slab's new array and a cell slab's new chunk are
// resident when they are handed out (prefault), so their pages cost one
// call, not a page fault each at their first write. Enough arrays are made
// (32 MiB of each kind, kept alive) that most come from memory the process
// never touched, which without the prefault is not resident.
func TestSlabsPrefaulted(t *testing.T) {
	if !populateWorks(t) {
		t.Skip("this kernel has no MADV_POPULATE_WRITE (Linux 5.14): prefault is a no-op")
	}
	const arrays = 512 // of 64 KiB: 32 MiB
	var words slab[sigWord]
	var kept []*sigWord
	missing, pages := 0, 0
	for range arrays {
		words.free = nil // the next get makes a new array
		p := words.get()
		kept = append(kept, p)
		m, n := notResident(t, unsafe.Pointer(p), slabBytes/unsafe.Sizeof(*p)*unsafe.Sizeof(*p))
		missing, pages = missing+m, pages+n
	}
	if missing > 0 {
		t.Errorf("signal word slabs: %d of %d pages not resident when handed out", missing, pages)
	}
	var cells cellSlab
	var chunks []*cell
	missing, pages = 0, 0
	for range arrays * 4 { // of 16 KiB
		cells.chunk = nil // the next cell starts a new chunk
		c := cells.newCell(0, 1)
		chunks = append(chunks, c)
		// The chunk starts chunkLead bytes before its first cell.
		m, n := notResident(t, unsafe.Add(unsafe.Pointer(c), -chunkLead), unsafe.Sizeof(cellChunkArray{}))
		missing, pages = missing+m, pages+n
	}
	if missing > 0 {
		t.Errorf("cell chunks: %d of %d pages not resident when handed out", missing, pages)
	}
	_, _ = kept, chunks
}

// notResident counts the pages wholly inside the n bytes at p that are not
// resident (mincore), and those pages.
func notResident(t *testing.T, p unsafe.Pointer, n uintptr) (missing, pages int) {
	t.Helper()
	lo := (uintptr(p) + pageSize - 1) &^ (pageSize - 1)
	hi := (uintptr(p) + n) &^ (pageSize - 1)
	if hi <= lo {
		return 0, 0
	}
	vec := make([]byte, (hi-lo)/pageSize)
	// x/sys/unix has no Mincore wrapper.
	if _, _, errno := unix.Syscall(unix.SYS_MINCORE, lo, hi-lo, uintptr(unsafe.Pointer(&vec[0]))); errno != 0 { // the bytes are kept alive by the caller
		t.Fatalf("mincore: %v", errno)
	}
	for _, v := range vec {
		if v&1 == 0 {
			missing++
		}
	}
	return missing, len(vec)
}

// populateWorks says MADV_POPULATE_WRITE works here, tried on a mapping of
// the test's own.
func populateWorks(t *testing.T) bool {
	b, err := unix.Mmap(-1, 0, int(pageSize), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		t.Fatalf("mmap: %v", err)
	}
	defer unix.Munmap(b)
	return unix.Madvise(b, unix.MADV_POPULATE_WRITE) == nil
}
