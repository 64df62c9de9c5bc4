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
}
