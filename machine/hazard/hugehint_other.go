//go:build !linux

package hazard

import "unsafe"

// hugeHint does nothing: transparent huge pages are Linux's
// (hugehint_linux.go).
func hugeHint(*uintptr, unsafe.Pointer, uintptr) {}
