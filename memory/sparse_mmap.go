//go:build linux

package memory

import (
	"runtime"
	"syscall"
)

// mapPages reserves size bytes of zero pages outside the Go heap. The OS
// commits a page when it is first written (MAP_NORESERVE: no swap is set
// aside for the rest), so a 4 GiB tensor of which one tile is used costs that
// tile's pages. It returns nil when the OS refuses the reservation; the caller
// then allocates densely. decommit hands the committed pages back.
func mapPages(size int64) (data []byte, decommit func()) {
	if int64(int(size)) != size {
		return nil, nil
	}
	data, err := syscall.Mmap(-1, 0, int(size), syscall.PROT_READ|syscall.PROT_WRITE,
		syscall.MAP_PRIVATE|syscall.MAP_ANON|syscall.MAP_NORESERVE)
	if err != nil {
		return nil, nil
	}
	return data, func() { _ = syscall.Madvise(data, syscall.MADV_DONTNEED) }
}

func unmapPages(data []byte) { _ = syscall.Munmap(data) }

// unmapWhenUnreachable returns b's reservation to the OS once nothing refers
// to b. The mapping is not Go memory, so the collector cannot free it; every
// view of it is reached through b (views are made per access and not kept).
func unmapWhenUnreachable(b *Buffer, data []byte) {
	runtime.AddCleanup(b, unmapPages, data)
}
