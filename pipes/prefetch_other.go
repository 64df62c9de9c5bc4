//go:build !amd64

package pipes

import "unsafe"

// Prefetch does nothing where there is no prefetch instruction written for it.
func Prefetch(unsafe.Pointer) {}
