package main

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// The collector's pace follows what collections free. A lint's heap is
// mostly the detector's state (shadow cells, signal words, clocks), live
// to the end of the run, so a collection marks what the last one kept and
// frees little: on the 384-rank ring about three fifths of what is
// allocated between two collections survives, and the collections of a
// heap that ends near 350 MB were a fifth of the lint's CPU. Other runs
// (the 8-rank allgather_gemm's lint) allocate mostly short-lived event
// data and keep a small heap, where collecting often is cheap and keeps
// the memory, and the page faults that first touch it, small.
//
// After each collection the pace is set from the fraction s of the bytes
// allocated since the previous one that survived it: GOGC = baseGOGC /
// (1 - s). A cycle marks the live heap L and then lets the program
// allocate L·GOGC/100 before the next, of which (1-s) is garbage, so this
// keeps the marking done per byte freed where baseGOGC puts it when
// nothing survives. The pace at most doubles from one collection to the
// next: the first collections fall in the setup (assembling, building the
// machine), whose data all survives, and taking their survival at face
// value let the 8-rank allgather_gemm's lint, whose run then makes mostly
// garbage, grow to twice its heap before collecting again. The memory
// limit (main.go: the --max-memory budget plus a quarter) still bounds the
// heap whatever the pace.

// baseGOGC is the pace when nothing survives: collect at 3x the live heap
// (a 128-rank ring lint took 7% fewer instructions than at Go's default
// 2x; docs/performance.md, round 4 of lint at many ranks).
const baseGOGC = 200

// maxGOGC bounds the pace when nearly everything survives; the memory
// limit bounds the heap before it matters.
const maxGOGC = 100 * baseGOGC

// gcPace is the GOGC for a collection after which live bytes are live,
// prevLive were live after the one before, and allocated bytes were
// allocated between the two; prev is the pace until now.
func gcPace(live, prevLive, allocated uint64, prev int) int {
	pace := uint64(maxGOGC)
	switch {
	case allocated == 0 || live <= prevLive:
		pace = baseGOGC
	case live-prevLive < allocated:
		pace = baseGOGC * allocated / (allocated - (live - prevLive))
	}
	return int(min(pace, maxGOGC, 2*uint64(max(prev, baseGOGC))))
}

// gcPacer sets the pace after each collection (a finalizer on an
// unreachable object runs once per cycle that finds it unreachable; it
// re-arms itself).
type gcPacer struct {
	samples  [2]metrics.Sample
	prevLive uint64
	prevSum  uint64
	pace     int
}

// paceGC starts pacing the collector by survival, from baseGOGC, once per
// process (the tests run realMain many times in one).
func paceGC() { pacing.Do(startPacer) }

var pacing sync.Once

func startPacer() {
	debug.SetGCPercent(baseGOGC)
	p := &gcPacer{pace: baseGOGC}
	p.samples[0].Name = "/gc/heap/live:bytes"
	p.samples[1].Name = "/gc/heap/allocs:bytes"
	runtime.SetFinalizer(p, (*gcPacer).collected)
}

func (p *gcPacer) collected() {
	metrics.Read(p.samples[:])
	if p.samples[0].Value.Kind() == metrics.KindUint64 && p.samples[1].Value.Kind() == metrics.KindUint64 {
		live, sum := p.samples[0].Value.Uint64(), p.samples[1].Value.Uint64()
		p.pace = gcPace(live, p.prevLive, sum-p.prevSum, p.pace)
		debug.SetGCPercent(p.pace)
		p.prevLive, p.prevSum = live, sum
	}
	runtime.SetFinalizer(p, (*gcPacer).collected)
}
