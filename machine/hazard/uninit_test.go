package hazard

import (
	"fmt"
	"slices"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
)

// An uninitialised read that races a write meant to come before it is the
// race's second half, not a finding of its own (docs/hazards.md,
// uninit-read): it is reported as the race only, for every such read,
// whichever ran first. A read meant to come before the only write read
// nothing, whichever ran first: uninit-read beside the WAR.
func TestUninitBesideRace(t *testing.T) {
	// One core: MTE2 writes, V reads. Without issue events both have serial
	// 0, so the intended order is the source line.
	big := &asm.TileInfo{Name: "%b", Space: asm.UB, Addr: []int64{0}, Bytes: 0x800, Count: 1}
	type step struct {
		write  bool
		line   int
		iter   int64
		lo, hi int64
	}
	rd := func(line int, iter, lo, hi int64) step { return step{false, line, iter, lo, hi} }
	wr := func(line int, lo, hi int64) step { return step{true, line, 0, lo, hi} }
	for _, tc := range []struct {
		name  string
		steps []step // in the order they run
		want  []string
	}{
		{"write meant first, read runs first",
			[]step{rd(20, 0, 0, 0x400), wr(10, 0, 0x400)},
			[]string{"RAW 10>20 x1"}},
		{"write meant first, runs first",
			[]step{wr(10, 0, 0x400), rd(20, 0, 0, 0x400)},
			[]string{"RAW 10>20 x1"}},
		{"write meant first, an agent's reads of two iterations run first",
			[]step{rd(20, 0, 0, 0x400), rd(20, 1, 0, 0x400), wr(10, 0, 0x400)},
			[]string{"RAW 10>20 x1"}},
		// A cell keeps an agent's latest read per site: the write that
		// lands after reads at two sites races both, as it does when it
		// lands first.
		{"write meant first, reads at two sites run first",
			[]step{rd(20, 0, 0, 0x400), rd(21, 0, 0, 0x400), wr(10, 0, 0x400)},
			[]string{"RAW 10>20 x1", "RAW 10>21 x1"}},
		{"write meant first, runs before reads at two sites",
			[]step{wr(10, 0, 0x400), rd(20, 0, 0, 0x400), rd(21, 0, 0, 0x400)},
			[]string{"RAW 10>20 x1", "RAW 10>21 x1"}},
		{"read meant first, runs first",
			[]step{rd(10, 0, 0, 0x400), wr(20, 0, 0x400)},
			[]string{"WAR 10>20 x1", "uninit-read 10 x1"}},
		{"read meant first, write runs first",
			[]step{wr(20, 0, 0x400), rd(10, 0, 0, 0x400)},
			[]string{"WAR 10>20 x1", "uninit-read 10 x1"}},
		{"read alone",
			[]step{rd(10, 0, 0, 0x400)},
			[]string{"uninit-read 10 x1"}},
		// The read of iteration 0 spans two cells the writes split: it is
		// taken back once, and the read of iteration 1, which no write
		// races, stays.
		{"read across two writes' cells retracted once",
			[]step{rd(20, 0, 0, 0x400), rd(20, 1, 0x400, 0x500), wr(10, 0, 0x200), wr(11, 0x200, 0x400)},
			[]string{"RAW 10>20 x1", "RAW 11>20 x1", "uninit-read 20 x1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &prog{}
			ops := map[int]*asm.COp{}
			s := newSim(Options{})
			s.ev(machine.Event{Kind: machine.EvRunStart})
			for _, st := range tc.steps {
				pipe := V
				if st.write {
					pipe = MTE2
				}
				op := ops[st.line]
				if op == nil {
					op = p.op(map[bool]string{true: "tload", false: "tmuls"}[st.write], st.line, pipe)
					ops[st.line] = op
				}
				var iter []int64
				if !st.write {
					iter = []int64{st.iter}
				}
				s.exec(ag(0, 0, pipe), op, iter, machine.Access{Space: asm.UB, Lo: st.lo, Hi: st.hi, Write: st.write, Tile: big})
			}
			var got []string
			for _, f := range s.d.Findings() {
				if f.Second.Line != 0 {
					got = append(got, fmt.Sprintf("%s %d>%d x%d", f.Kind, f.First.Line, f.Second.Line, f.Count))
				} else {
					got = append(got, fmt.Sprintf("%s %d x%d", f.Kind, f.First.Line, f.Count))
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestUninitRetractedInEveryOrder: a read (V, line 20) of bytes two
// unordered writes fill, one meant to come before it (MTE2, line 10) and
// one after (MTE1, line 30). Whichever order the run meets the three in,
// the read is the RAW's second half and the WAR's first, never an
// uninitialised read: the write meant first takes the read's uninit-read
// back also when it is not the cell's first write (the read found the
// other write's bytes, or nothing, and waits for it).
func TestUninitRetractedInEveryOrder(t *testing.T) {
	big := &asm.TileInfo{Name: "%b", Space: asm.UB, Addr: []int64{0}, Bytes: 0x400, Count: 1}
	type step struct {
		line  int
		pipe  asm.Pipe
		write bool
	}
	w10, r20, w30 := step{10, MTE2, true}, step{20, V, false}, step{30, MTE1, true}
	for _, order := range [][]step{
		{w10, r20, w30}, {w10, w30, r20}, {r20, w10, w30},
		{r20, w30, w10}, {w30, w10, r20}, {w30, r20, w10},
	} {
		name := ""
		for _, st := range order {
			name += fmt.Sprint(st.line, " ")
		}
		p := &prog{}
		s := newSim(Options{})
		s.ev(machine.Event{Kind: machine.EvRunStart})
		for _, st := range order {
			op := p.op(map[bool]string{true: "tload", false: "tmuls"}[st.write], st.line, st.pipe)
			s.exec(ag(0, 0, st.pipe), op, nil, machine.Access{Space: asm.UB, Lo: 0, Hi: 0x400, Write: st.write, Tile: big})
		}
		var got []string
		for _, f := range s.d.Findings() {
			got = append(got, fmt.Sprintf("%s %d>%d", f.Kind, f.First.Line, f.Second.Line))
		}
		slices.Sort(got)
		if want := []string{"RAW 10>20", "WAR 20>30"}; !slices.Equal(got, want) {
			t.Errorf("order %s: %q, want %q", name, got, want)
		}
	}
}

// TestUninitNamesALiveInstance: two reads of a poisoned GM range at line
// 20, rank 1's in iteration 1 and rank 2's in iteration 0, and rank 0's
// unordered store of it at line 30 in iteration 0. The store is meant
// before rank 1's read (an earlier iteration: RAW, no uninit-read) and
// after rank 2's (the same iteration, an earlier line: WAR, and the read
// found nothing written before it). In every order the uninit-read counts
// one instance and names rank 2's: rank 1's, noted only where its read
// landed before the store, is taken back. The finding used to go on
// naming rank 1's read, the later iteration, after taking it back.
func TestUninitNamesALiveInstance(t *testing.T) {
	x := &asm.TensorInfo{Name: "X", Index: 1, Class: asm.TensorGM, Bytes: 0x1000, DType: asm.F32}
	p := &prog{}
	ld := p.op("tload", 20, MTE2)
	st := p.op("tstore", 30, MTE3)
	type step struct {
		rank  int32
		iter  int64
		write bool
	}
	a, b, w := step{1, 1, false}, step{2, 0, false}, step{0, 0, true}
	for _, order := range [][]step{{a, b, w}, {b, a, w}, {a, w, b}, {b, w, a}, {w, a, b}, {w, b, a}} {
		s := newSim(Options{})
		s.ev(machine.Event{Kind: machine.EvRunStart})
		for _, st2 := range order {
			op, pipe := ld, MTE2
			if st2.write {
				op, pipe = st, MTE3
			}
			s.exec(ag(st2.rank, 0, pipe), op, []int64{st2.iter}, gmAcc(x, 0, 0x100, 0x200, st2.write))
		}
		var named []string
		for _, f := range s.d.Findings() {
			if f.Kind == KindUninitRead {
				named = append(named, fmt.Sprintf("r%d %v [%d]", f.First.Rank, f.First.Iter, f.Count))
			}
		}
		if want := []string{"r2 [0] [1]"}; !slices.Equal(named, want) {
			t.Errorf("order %v: uninit-read %q, want %q", order, named, want)
		}
	}
}
