package hazard

import (
	"testing"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
)

// TestWriteOverCellsKeepsEachCellsRaces: a vector write over more cells than
// keepSplits merges the cells it leaves in the same state, never cells that
// keep different accesses. Here a load (MTE2) writes %big, the vector unit
// then writes %tmp, which covers the second half of %big and two small tiles
// beyond it, without a flag: the load races the vector write on the shared
// half only (WAW), and is kept there beside it. A later vector read of %acc,
// one of the small tiles, after a barrier, races nothing. Merging the cells
// the vector write covered into the first spread the load over all of
// %tmp, and the read of %acc was a RAW with a load that never wrote it
// (under some timings of a real kernel only, as the cells there followed
// the order the accesses landed in).
func TestWriteOverCellsKeepsEachCellsRaces(t *testing.T) {
	big := &asm.TileInfo{Name: "%big", Space: asm.UB, Addr: []int64{0}, Bytes: 0x4000, Count: 1}
	tmp := &asm.TileInfo{Name: "%tmp", Space: asm.UB, Addr: []int64{0x2000}, Bytes: 0x4000, Count: 1}
	acc := &asm.TileInfo{Name: "%acc", Space: asm.UB, Addr: []int64{0x4100}, Bytes: 0x80, Count: 1}
	acc2 := &asm.TileInfo{Name: "%acc2", Space: asm.UB, Addr: []int64{0x5000}, Bytes: 0x80, Count: 1}
	s := newSim(Options{})
	p := &prog{}
	init := p.op("texpands", 10, V)
	ld := p.op("tload", 11, MTE2)
	sc := p.op("texpands", 12, V)
	bar := p.op("pipe_barrier", 13, V)
	rd := p.op("tadd", 14, V)
	s.ev(machine.Event{Kind: machine.EvRunStart})
	s.issue(0, 0, init, V)
	s.exec(ag(0, 0, V), init, nil, tileAcc(acc, 0, 0, 0, true), tileAcc(acc2, 0, 0, 0, true))
	s.barrier(0, 0, V, bar)
	s.issue(0, 0, ld, MTE2)
	s.exec(ag(0, 0, MTE2), ld, nil, tileAcc(big, 0, 0, 0, true))
	s.issue(0, 0, sc, V)
	s.exec(ag(0, 0, V), sc, nil, tileAcc(tmp, 0, 0, 0, true))
	s.barrier(0, 0, V, bar)
	s.issue(0, 0, rd, V)
	s.exec(ag(0, 0, V), rd, nil, tileAcc(acc, 0, 0, 0, false), tileAcc(acc2, 0, 0, 0, false), tileAcc(acc2, 0, 0, 0, true))
	fs := s.d.Findings()
	if len(fs) != 1 || fs[0].Kind != KindWAW || fs[0].First.Line != 11 || fs[0].Second.Line != 12 || fs[0].Range != [2]int64{0x2000, 0x4000} {
		t.Fatalf("got %+v, want one WAW tload -> texpands on 0x2000..0x4000", fs)
	}
}
