package main

import (
	"runtime"
	"runtime/debug"
)

// A lint's heap is mostly the detector's shadow cells and clocks, live to
// the end: a 384-rank ring_final lint ends with about 380 MB in use, nearly
// all of it live, and at GOGC=200 its five collections marked about 400 MB
// in all, re-marking what the last one kept (0.6 to 1.2 s of the
// collector's CPU in a lint of 6 to 7 s; docs/performance.md, issue 28
// round "allocation"). A lint therefore starts with the collector off and
// the memory limit at a floor, gcFloor of the budget: the first collection
// comes when the process reaches the floor, and from then on the collector
// paces as before (GOGC=200 under the process's memory limit). A lint whose
// heap stays under the floor never collects; one that passes it pays one
// collection of at most the floor before the usual pace, no more marking
// than GOGC=200's collections up to that size.

// gcFloor is the memory a lint may take before its first collection: two
// thirds of the --max-memory budget (512 MiB by default), inside the process's
// memory limit (memoryLimit), so the live-heap guard (machine.Options
// MaxHeap, which reads the live heap of the last collection) has
// collections to read long before the limit.
//
// A budget whose floor would be under minFloor keeps the usual pace:
// collections of so small a heap cost little, and a small budget is a
// test of the guards (TestHostile's 32 and 64 MiB), which should see the
// process as it always paced.
func gcFloor(maxMemory int64) (floor int64, ok bool) {
	floor = maxMemory / 3 * 2
	return floor, floor >= minFloor
}

// minFloor is the least floor worth a lint's starting without the
// collector.
const minFloor = 128 << 20

// collectFrom turns the collector off until the process's memory reaches
// floor, then back to GOGC=percent under memory limit limit.
func collectFrom(floor, limit int64, percent int) {
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(floor)
	// The first collection (the floor's, or any other) finds the sentinel
	// unreachable and runs its cleanup.
	runtime.AddCleanup(new(floorSentinel), func(int) {
		debug.SetGCPercent(percent)
		debug.SetMemoryLimit(limit)
	}, 0)
}

// floorSentinel is the object whose collection ends the floor; it holds a
// pointer so that it is not a tiny allocation, which may share a block
// with other objects and be kept alive by them.
type floorSentinel struct{ _ *int }

// isLint reports whether command (kong's path, "lint <program>") is lint.
func isLint(command string) bool {
	return command == "lint" || len(command) > 5 && command[:5] == "lint "
}
