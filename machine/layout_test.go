package machine

import (
	"testing"
	"unsafe"
)

// The engine's hot structures are laid out by cache line (issue 22, round
// 12): a wake-up on 8 ranks finds each of them out of cache, so a field
// that slips onto another line costs a miss per event.
func TestHotLayout(t *testing.T) {
	// Go puts a 192-byte object on a 64-byte boundary: three lines.
	if n := unsafe.Sizeof(pipeState{}); n != 192 {
		t.Errorf("pipeState is %d bytes, want 192 (three lines)", n)
	}
	// A queue slot's hot fields (all a flag touches) end within 56 bytes,
	// so that, 8 bytes into a line behind the ring's malloc header, they
	// share one line.
	if end := unsafe.Offsetof(entryData{}.seq) + unsafe.Sizeof(entryData{}.seq); end > 56 {
		t.Errorf("entry's hot fields end at byte %d, want at most 56", end)
	}
	// An observed issue writes the iteration vector and, for a lean op,
	// ldyn: niter and iterBuf share one line (behind the same header), and
	// ldyn starts the next.
	var e entryData
	line := func(off uintptr) uintptr { return (off + 8) / 64 }
	if a, b := line(unsafe.Offsetof(e.niter)), line(unsafe.Offsetof(e.iterBuf)+unsafe.Sizeof(e.iterBuf)-1); a != b {
		t.Errorf("niter and iterBuf span lines %d to %d, want one", a, b)
	}
	if a, b := line(unsafe.Offsetof(e.ldyn)), line(unsafe.Offsetof(e.ldyn)+unsafe.Sizeof(e.ldyn)-1); a != b || a != line(unsafe.Offsetof(e.iterBuf))+1 {
		t.Errorf("ldyn spans lines %d to %d, want the one after iterBuf's", a, b)
	}
}
