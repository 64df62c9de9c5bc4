//go:build linux

package hazard

import (
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// pageSize is the kernel's page: madvise takes whole pages.
var pageSize = uintptr(os.Getpagesize())

// prefault asks the kernel for the pages of the n bytes at p in one call
// (MADV_POPULATE_WRITE, Linux 5.14), instead of one page fault at each
// page's first write. Only the pages wholly inside the bytes are asked
// for. An older kernel's EINVAL, or any other error, leaves the pages to
// fault in as before: the call only moves when the work is done.
func prefault(p unsafe.Pointer, n uintptr) {
	lo := (uintptr(p) + pageSize - 1) &^ (pageSize - 1)
	hi := (uintptr(p) + n) &^ (pageSize - 1)
	if hi <= lo {
		return
	}
	// A raw call keeps the goroutine's P: the call takes tens of
	// microseconds, past which the runtime's monitor would hand the P to
	// another thread (a wake-up and a lock each way, at each of the ring
	// lint's thousands of calls; under valgrind that lock's spin reaches an
	// instruction it does not know and kills the run).
	unix.RawSyscall(unix.SYS_MADVISE, lo, hi-lo, unix.MADV_POPULATE_WRITE)
}
