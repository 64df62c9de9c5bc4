package hazard

import (
	"testing"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
)

// TestAccessMemoMatchesGeneralPath runs every shipped program with the
// shortcuts checked, so that each access hitMemo takes (a core-local
// access of the same bytes through the same tile element as its core's
// last one) is compared with the general path: checkMemo panics unless the
// bounds check reports nothing, hitLocal's dispatch would take the access
// to the cache under the entry's key, and the entry's cell is the page's
// or the view's (a run's cells are checkCachedRun's).
func TestAccessMemoMatchesGeneralPath(t *testing.T) {
	runCheckedAtLeast(t, &memoHits, "memo hits", "hitMemo")
}

// TestAccessMemoKeepsBoundsChecks repeats one access past the end of its
// tile element from several ops: the first takes the general path, the
// second hits the cache, and each later one must still be bounds-checked
// (an access the bounds check reported is never remembered), so that
// every op has its finding.
func TestAccessMemoKeepsBoundsChecks(t *testing.T) {
	tile := &asm.TileInfo{Name: "%t", Space: asm.UB, Addr: []int64{0, 0x100}, Bytes: 0x100, Count: 2, IsArray: true}
	for _, tc := range []struct {
		name string
		acc  machine.Access
		want int
	}{
		{"in bounds", machine.Access{Space: asm.UB, Lo: 0x100, Hi: 0x200, Tile: tile, Elem: 1}, 0},
		{"past the end", machine.Access{Space: asm.UB, Lo: 0x100, Hi: 0x280, Tile: tile, Elem: 1}, 4},
		{"before the start", machine.Access{Space: asm.UB, Lo: 0x80, Hi: 0x180, Tile: tile, Elem: 1}, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &prog{}
			s := newSim(Options{})
			s.ev(machine.Event{Kind: machine.EvRunStart})
			for i := range 4 {
				acc := tc.acc
				acc.Write = i%2 == 0
				s.exec(ag(0, 0, asm.PipeV), p.op("tadds", 10+i, asm.PipeV), nil, acc)
			}
			n := 0
			for _, f := range s.d.Findings() {
				if f.Kind == KindOutOfBounds {
					n++
				}
			}
			if n != tc.want {
				t.Errorf("%d out-of-bounds findings, want %d", n, tc.want)
			}
		})
	}
}

// TestAccessMemoWindowSplit writes and reads a column window of an L1 tile
// (the read hits the cache and is remembered, the next read hits the
// entry), then writes a narrower window, which splits the first one's
// cell, then reads the first window again: its entry's cell no longer
// spans the window's columns, and the read must take the general path,
// both cells (checked: checkMemo, checkCachedCell, checkCachedRun). The
// reads after it hit the run of two cells, through the cache then the
// entry.
func TestAccessMemoWindowSplit(t *testing.T) {
	checkShortcuts, memoHits = true, 0
	defer func() { checkShortcuts = false }()
	tile := &asm.TileInfo{Name: "%a", Space: asm.L1, Addr: []int64{0}, Bytes: 0x1000, Count: 1}
	win := func(hi int64, write bool) machine.Access {
		return machine.Access{Space: asm.L1, Lo: 0, Hi: hi, Rows: 16, Pitch: 256, Write: write, Tile: tile}
	}
	p := &prog{}
	s := newSim(Options{})
	s.ev(machine.Event{Kind: machine.EvRunStart})
	mte1 := ag(0, 0, asm.PipeMTE1)
	for i, acc := range []machine.Access{win(64, true), win(64, false), win(64, false), win(32, true), win(64, false), win(64, false), win(64, false)} {
		s.exec(mte1, p.op("textract", 10+i, asm.PipeMTE1), nil, acc)
	}
	if memoHits != 2 {
		t.Errorf("%d memo hits, want 2 (the third access and the last)", memoHits)
	}
}
