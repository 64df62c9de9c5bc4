package hazard

import (
	"testing"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
)

// half is the access of bytes [lo, hi) of tile t (element 0).
func half(t *asm.TileInfo, lo, hi int64, write bool) machine.Access {
	a := tileAcc(t, 0, 0, 0, write)
	a.Lo, a.Hi = t.Addr[0]+lo, t.Addr[0]+hi
	return a
}

// TestPartialMoveKeepsRace: a race with a write moves to a later write
// ordered after it only where the later write covers the bytes.
func TestPartialMoveKeepsRace(t *testing.T) {
	for _, tc := range []struct {
		name    string
		readEnd int64 // the racing access covers [0, readEnd) of %x
		mvEnd   int64 // the move covers [0, mvEnd)
		write   bool  // the racing access writes instead of reading
		want    []string
	}{
		// The move covers all the store reads: its race with the load
		// moves there.
		{"read, move covers all", 0x80, 0x80, false, []string{"RAW 12->18 x1"}},
		// The store reads [0x80, 0x100) too, where only the load wrote.
		{"read, move covers half", 0x100, 0x80, false, []string{"RAW 10->18 x1", "RAW 12->18 x1"}},
		{"write, move covers all", 0x80, 0x80, true, []string{"WAW 12->18 x1"}},
		{"write, move covers half", 0x100, 0x80, true, []string{"WAW 10->18 x1", "WAW 12->18 x1"}},
	} {
		p := &prog{}
		ld := p.op("tload", 10, MTE2)
		set := p.op("set_flag", 11, S)
		wt := p.op("wait_flag", 11, S)
		mv := p.op("texpands", 12, V)
		st := p.op("tstore", 18, MTE3)
		if tc.write {
			st = p.op("tmov", 18, MTE1)
		}
		stPipe := st.Pipe
		steps := []func(s *sim){
			func(s *sim) {
				s.exec(ag(0, 0, MTE2), ld, nil, tileAcc(ubX, 0, 0, 0, true))
				s.set(0, 0, MTE2, V, 0, set)
			},
			func(s *sim) {
				s.wait(0, 0, MTE2, V, 0, wt)
				s.exec(ag(0, 0, V), mv, nil, half(ubX, 0, tc.mvEnd, true))
			},
			func(s *sim) { s.exec(ag(0, 0, stPipe), st, nil, half(ubX, 0, tc.readEnd, tc.write)) },
		}
		issued := []issue{{ld, MTE2}, {set, MTE2}, {wt, V}, {mv, V}, {st, stPipe}}
		checkOrders(t, tc.name, issued, steps, [][2]int{{0, 1}}, tc.want)
	}
}

// TestWARStandsForWAWOfItsSites: an op reads one tile and writes another
// (trowsum %part, %sq, %tmp), and a later load, unordered, writes a third
// that covers part of each (rmsnorm_overlapping_slots: %x[1] over %sq and
// the head of %tmp). The load races the op's read, a WAR, and its write, a
// WAW, on the bytes they share: one flag from the op to the load fixes
// both, and the WAR stands for the WAW in either order. When the load
// landed last it met the op's read first (warred); when the op landed
// last, the WAW was reported on %tmp and the WAR on %sq or %x, buffers
// the rule in Findings, matching by buffer, did not pair.
func TestWARStandsForWAWOfItsSites(t *testing.T) {
	sq := &asm.TileInfo{Name: "%sq", Space: asm.UB, Addr: []int64{0x1000}, Bytes: 0x400, Count: 1}
	tmp := &asm.TileInfo{Name: "%tmp", Space: asm.UB, Addr: []int64{0x1200}, Bytes: 0x400, Count: 1}
	x := &asm.TileInfo{Name: "%x", Space: asm.UB, Addr: []int64{0x1000}, Bytes: 0x400, Count: 1}
	p := &prog{}
	op := p.op("trowsum", 10, V)
	ld := p.op("tload", 12, MTE2)
	steps := []func(s *sim){
		func(s *sim) {
			s.exec(ag(0, 0, V), op, nil, tileAcc(tmp, 0, 0, 0, true), tileAcc(sq, 0, 0, 0, false))
		},
		func(s *sim) { s.exec(ag(0, 0, MTE2), ld, nil, tileAcc(x, 0, 0, 0, true)) },
	}
	checkOrders(t, "op then load", []issue{{op, V}, {ld, MTE2}}, steps, nil, []string{"WAR 10->12 x1"})
	// The same with the op's read delivered before its write.
	steps[0] = func(s *sim) {
		s.exec(ag(0, 0, V), op, nil, tileAcc(sq, 0, 0, 0, false), tileAcc(tmp, 0, 0, 0, true))
	}
	checkOrders(t, "read first", []issue{{op, V}, {ld, MTE2}}, steps, nil, []string{"WAR 10->12 x1"})
}

// TestOverwriteKeepsReadsForLateWrites: a store reads a tile, a load
// ordered after it (MTE3 -> MTE2) overwrites the tile, and a vector write
// of the tile is ordered with neither. By hand the store races the vector
// write (WAR st, w) and the vector write races the load, in every order
// they land in. When the vector write, issued before the load, landed
// after it, the load had dropped the store's read (ordered before it) and
// the WAR was lost (hazards/rmsnorm_overlapping_slots under
// `--set vec.vmul.slope=100`: a slow squaring lost WAR `st, sq` and
// `sc, sq`). Issued after the load, the vector write's race with the
// store moves to the load (a fix of WAW ld, w orders w after the store
// too), as when it landed after the load.
func TestOverwriteKeepsReadsForLateWrites(t *testing.T) {
	for _, tc := range []struct {
		name   string
		wFirst bool // the vector write is issued before the load
		want   []string
	}{
		{"write issued before the load", true, []string{"WAR 10->12 x1", "WAW 12->16 x1"}},
		{"write issued after the load", false, []string{"WAW 16->12 x1"}},
	} {
		p := &prog{}
		st := p.op("tstore", 10, MTE3)
		set := p.op("set_flag", 11, MTE3)
		w := p.op("texpands", 12, V)
		wt := p.op("wait_flag", 13, MTE2)
		ld := p.op("tload", 16, MTE2)
		wIssue := int64(3)
		if !tc.wFirst {
			wIssue = 6
		}
		f := machine.Flag{Src: MTE3, Dst: MTE2}
		steps := []func(s *sim){
			func(s *sim) {
				s.ev(machine.Event{Kind: machine.EvExec, Agent: ag(0, 0, MTE3), Op: st, Issue: 1, Accesses: []machine.Access{tileAcc(ubX, 0, 0, 0, false)}})
				s.ev(machine.Event{Kind: machine.EvFlagSet, Agent: ag(0, 0, MTE3), Op: set, Issue: 2, Flag: f})
			},
			func(s *sim) {
				s.ev(machine.Event{Kind: machine.EvExec, Agent: ag(0, 0, V), Op: w, Issue: wIssue, Accesses: []machine.Access{tileAcc(ubX, 0, 0, 0, true)}})
			},
			func(s *sim) {
				s.ev(machine.Event{Kind: machine.EvFlagWait, Agent: ag(0, 0, MTE2), Op: wt, Issue: 4, Flag: f})
				s.ev(machine.Event{Kind: machine.EvExec, Agent: ag(0, 0, MTE2), Op: ld, Issue: 5, Accesses: []machine.Access{tileAcc(ubX, 0, 0, 0, true)}})
			},
		}
		checkOrders(t, tc.name, nil, steps, [][2]int{{0, 2}}, tc.want)
	}
}

// TestValidRegionTileNamedByDeclaration: a squaring writes %sq and a load,
// unordered, writes %x over the same bytes, both tiles with a valid region
// read from registers (valid [%vr, C]). The WAW names its buffer as the
// load's operand does, in either order: looked up by the declared
// addresses, not kept from the access that arrived last (which named
// %sq when the squaring landed after the load, and the WAR standing for
// the WAW, named %x, missed it; hazards/rmsnorm_overlapping_slots).
func TestValidRegionTileNamedByDeclaration(t *testing.T) {
	vr := asm.CExpr{}
	sq := &asm.TileInfo{Name: "%sq", Space: asm.UB, Addr: []int64{0x1000}, Bytes: 0x400, Count: 1, DynVRows: &vr}
	x := &asm.TileInfo{Name: "%x", Space: asm.UB, Addr: []int64{0x1000}, Bytes: 0x400, Count: 1, DynVRows: &vr}
	p := &prog{}
	mul := p.op("tmul", 10, V)
	mul.Args = []asm.Arg{{Kind: asm.ArgTile, Tile: sq}}
	ld := p.op("tload", 12, MTE2)
	ld.Args = []asm.Arg{{Kind: asm.ArgTile, Tile: x}}
	steps := []func(s *sim){
		func(s *sim) { s.exec(ag(0, 0, V), mul, nil, tileAcc(sq, 0, 0, 0, true)) },
		func(s *sim) { s.exec(ag(0, 0, MTE2), ld, nil, tileAcc(x, 0, 0, 0, true)) },
	}
	for _, order := range [][]int{{0, 1}, {1, 0}} {
		s := newSim(Options{})
		s.issue(0, 0, mul, V)
		s.issue(0, 0, ld, MTE2)
		for _, i := range order {
			steps[i](s)
		}
		fs := s.d.Findings()
		if len(fs) != 1 || fs[0].Kind != KindWAW || fs[0].Buffer != "%x" {
			t.Errorf("order %v: got %+v, want one WAW on %%x", order, fs)
		}
	}
}
