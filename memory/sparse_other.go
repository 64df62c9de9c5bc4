//go:build !linux

package memory

// mapPages: without a way to reserve address space that is committed page
// by page, GM buffers are dense and charged whole (NewGMBuffer).
func mapPages(size int64) (data []byte, decommit func()) { return nil, nil }

func unmapPages(data []byte) {}

func unmapWhenUnreachable(b *Buffer, data []byte) {}
