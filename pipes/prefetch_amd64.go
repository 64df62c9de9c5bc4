package pipes

import "unsafe"

// prefetch asks for the cache line at p without waiting for it (a load
// would hold up the instructions after it until the line arrives).
//
//go:noescape
func prefetch(p unsafe.Pointer)
