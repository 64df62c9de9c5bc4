//go:build !linux

package hazard

import "unsafe"

// prefault is a no-op where MADV_POPULATE_WRITE does not exist: the pages
// fault in at their first write (prefault_linux.go).
func prefault(p unsafe.Pointer, n uintptr) {}
