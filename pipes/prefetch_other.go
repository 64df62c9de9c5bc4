//go:build !amd64

package pipes

import "unsafe"

// prefetch does nothing where there is no prefetch instruction written for it.
func prefetch(unsafe.Pointer) {}
