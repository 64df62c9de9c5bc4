//go:build linux

package hazard

import (
	"syscall"
	"unsafe"
)

// hugeSpan is the size of a transparent huge page on amd64 and arm64.
const hugeSpan = 2 << 20

// hugeAhead is how far past the array the advice reaches: the heap grows
// upwards into fresh memory, and the spans just above a new slab array are
// where the lint's next objects (clock blocks, lists, more arrays) go. At
// 384 ranks, advising the array's own spans cut the faults from 96 000 to
// 61 000; 4 MiB ahead, to 38 000; 16 MiB, to 35 000.
const hugeAhead = 4 << 20

// hugeHint asks the kernel to back the 2 MiB spans around [p, p+n), a
// detector's slab array just made, and hugeAhead bytes above it with
// transparent huge pages (MADV_HUGEPAGE). The slabs hold most of what a lint at many ranks keeps
// (the 384-rank ring_final's cells, signal histories and add boxes: 200
// of its 395 MB), and each 4 KiB page of them is a page fault at its first
// touch, about 8 us of system time on a Firecracker guest: 96 000 faults,
// 0.8 s of a 5 s lint. Under THP "madvise" (such a guest's setting) a
// fault in an advised span that no page of it was touched yet maps 2 MiB
// at once. The span is rounded outwards: the neighbours the heap put there
// are the lint's too, and the advice is only a hint, which changes no byte
// and no result; where huge pages are off or "always", or none is free,
// the kernel maps 4 KiB pages as before. *last is the span the caller's
// slab advised last from: its next arrays mostly lie in it, and one system
// call a span is enough. (The call takes addresses, not a slice: the rounded
// span reaches past the array's object. It is raw: madvise does not block,
// and Syscall's scheduler bookkeeping reads the cycle counter with rdtscp,
// which valgrind does not decode, so callgrind died on it.)
func hugeHint(last *uintptr, p unsafe.Pointer, n uintptr) {
	lo := uintptr(p) &^ (hugeSpan - 1)
	hi := (uintptr(p) + n + hugeAhead + hugeSpan - 1) &^ (hugeSpan - 1)
	if lo == *last {
		return
	}
	*last = lo
	_, _, _ = syscall.RawSyscall(syscall.SYS_MADVISE, lo, hi-lo, syscall.MADV_HUGEPAGE)
}
