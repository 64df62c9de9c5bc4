package hazard

import (
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
)

// TestReadRacesTwoWrites runs a read that races two writes of one tile in
// every order the three may run in, with the two writes ordered (a flag
// between them) and racing, and requires the same findings, counts
// included, from every order. With a single last write per cell, the
// read's RAW named whichever write ran last (racing writes), or the load
// when the read ran first (ordered writes).
func TestReadRacesTwoWrites(t *testing.T) {
	for _, tc := range []struct {
		name    string
		ordered bool // the fill waits for the load (MTE2 -> V)
		want    []string
	}{
		// The store races the load and the scale; the scale is ordered
		// after the load, so its race is the one reported.
		{"ordered writes", true, []string{"RAW 13->14 x1"}},
		// The two writes race: each races the store, and each other.
		{"racing writes", false, []string{"RAW 10->14 x1", "WAW 10->13 x1", "RAW 13->14 x1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The read's position among the two writes: before both,
			// between them, after both.
			for readAt := range 3 {
				for _, writesSwapped := range []bool{false, true} {
					if writesSwapped && tc.ordered {
						continue // the flag fixes their order
					}
					s := newSim(Options{})
					p := &prog{}
					ld := p.op("tload", 10, MTE2)
					set := p.op("set_flag", 11, S)
					wt := p.op("wait_flag", 12, S)
					fill := p.op("texpands", 13, V)
					st := p.op("tstore", 14, MTE3)
					s.issue(0, 0, ld, MTE2)
					if tc.ordered {
						s.issue(0, 0, set, MTE2)
						s.issue(0, 0, wt, V)
					}
					s.issue(0, 0, fill, V)
					s.issue(0, 0, st, MTE3)
					writes := []func(){
						func() {
							s.exec(ag(0, 0, MTE2), ld, nil, tileAcc(ubX, 0, 0, 0, true))
							if tc.ordered {
								s.set(0, 0, MTE2, V, 0, set)
							}
						},
						func() {
							if tc.ordered {
								s.wait(0, 0, MTE2, V, 0, wt)
							}
							s.exec(ag(0, 0, V), fill, nil, tileAcc(ubX, 0, 0, 0, true))
						},
					}
					if writesSwapped {
						writes[0], writes[1] = writes[1], writes[0]
					}
					read := func() { s.exec(ag(0, 0, MTE3), st, nil, tileAcc(ubX, 0, 0, 0, false)) }
					for i := range 3 {
						if i == readAt {
							read()
						}
						if i < 2 {
							writes[i]()
						}
					}
					// (The read before both writes read nothing written:
					// raceLines leaves its uninit-read out.)
					if diff := cmp.Diff(tc.want, raceLines(s.d.Findings())); diff != "" {
						t.Errorf("read at %d, writes swapped %v: findings (-want +got):\n%s", readAt, writesSwapped, diff)
					}
				}
			}
		})
	}
}

// TestRaceMovesOncePerInstance: a read that ran before a chain of writes
// of one op (a loop, its loads unordered on one pipe) and races each of
// them counts once, as it does when it runs after them all, though each
// load splits the cell it read.
func TestRaceMovesOncePerInstance(t *testing.T) {
	s := newSim(Options{})
	p := &prog{}
	ld := p.op("tload", 10, MTE2)
	st := p.op("tstore", 14, MTE3)
	half := func(i int, write bool) machine.Access {
		a := tileAcc(ubX, 0, 0, 0, write)
		a.Lo += int64(i) * ubX.Bytes / 2
		a.Hi = a.Lo + ubX.Bytes/2
		return a
	}
	whole := tileAcc(ubX, 0, 0, 0, false)
	s.issue(0, 0, st, MTE3)
	s.exec(ag(0, 0, MTE3), st, nil, whole) // before any write
	for k := range 3 {
		s.issue(0, 0, ld, MTE2)
		s.exec(ag(0, 0, MTE2), ld, []int64{int64(k)}, half(0, true), half(1, true))
	}
	got := raceLines(s.d.Findings())
	// Issue order puts the store first: a WAR with the first load, which
	// the later loads of the same op do not count again.
	if diff := cmp.Diff([]string{"WAR 14->10 x1"}, got); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
}

// TestOverlappingRacesIgnoreOrder runs four accesses of one tile in every
// order the machine can deliver them and requires the same findings,
// counts included: an op on V (a plain write, or an in-place tmuls that
// reads the tile too), a load on MTE2 racing it, a move on MTE1 ordered
// after the load (a flag) and racing the op, and a store on MTE3 ordered
// with none of them. The store's race with the load moves to the move
// whether the load is the cell's last write or one kept beside it, and
// whether or not a write ordered after the store has meanwhile come
// (hazards/ring_tile_array_alias is the kernel).
func TestOverlappingRacesIgnoreOrder(t *testing.T) {
	for _, inPlace := range []bool{false, true} {
		p := &prog{}
		opName := "texpands"
		if inPlace {
			opName = "tmuls"
		}
		op := p.op(opName, 10, V)
		ld := p.op("tload", 12, MTE2)
		set := p.op("set_flag", 13, S)
		wt := p.op("wait_flag", 14, S)
		mv := p.op("tmov", 16, MTE1)
		st := p.op("tstore", 18, MTE3)
		steps := []func(s *sim){
			func(s *sim) {
				acc := []machine.Access{tileAcc(ubX, 0, 0, 0, true)}
				if inPlace { // as the machine delivers an in-place op: dst, then src
					acc = append(acc, tileAcc(ubX, 0, 0, 0, false))
				}
				s.exec(ag(0, 0, V), op, nil, acc...)
			},
			func(s *sim) {
				s.exec(ag(0, 0, MTE2), ld, nil, tileAcc(ubX, 0, 0, 0, true))
				s.set(0, 0, MTE2, MTE1, 0, set)
			},
			func(s *sim) {
				s.wait(0, 0, MTE2, MTE1, 0, wt)
				s.exec(ag(0, 0, MTE1), mv, nil, tileAcc(ubX, 0, 0, 0, true))
			},
			func(s *sim) { s.exec(ag(0, 0, MTE3), st, nil, tileAcc(ubX, 0, 0, 0, false)) },
		}
		// The load's races move to the move, ordered after it: the
		// store's RAW, and the op's WAW (a WAR when the op read the tile).
		want := []string{"RAW 10->18 x1", "WAW 10->16 x1", "RAW 16->18 x1"}
		if inPlace {
			want[1] = "WAR 10->16 x1"
		}
		issued := []issue{{op, V}, {ld, MTE2}, {set, MTE2}, {wt, MTE1}, {mv, MTE1}, {st, MTE3}}
		// The move waits for the load's flag.
		checkOrders(t, fmt.Sprintf("in place %v", inPlace), issued, steps, [][2]int{{1, 2}}, want)
	}
}

// issue is an op the scalar issues, and to which pipe.
type issue struct {
	op   *asm.COp
	pipe asm.Pipe
}

// checkOrders issues ops and then runs steps in every order that keeps
// each pair of after (step a before step b), requiring want of each.
func checkOrders(t *testing.T, name string, ops []issue, steps []func(s *sim), after [][2]int, want []string) {
	t.Helper()
next:
	for _, order := range permutations(len(steps)) {
		for _, ab := range after {
			if slices.Index(order, ab[0]) > slices.Index(order, ab[1]) {
				continue next
			}
		}
		s := newSim(Options{})
		for _, o := range ops {
			s.issue(0, 0, o.op, o.pipe)
		}
		for _, i := range order {
			steps[i](s)
		}
		if diff := cmp.Diff(want, raceLines(s.d.Findings())); diff != "" {
			t.Errorf("%s, order %v: findings (-want +got):\n%s", name, order, diff)
		}
	}
}

// permutations returns every order of 0..n-1.
func permutations(n int) [][]int {
	if n == 0 {
		return [][]int{{}}
	}
	var out [][]int
	for _, p := range permutations(n - 1) {
		for i := 0; i <= len(p); i++ {
			q := append(append(append([]int{}, p[:i]...), n-1), p[i:]...)
			out = append(out, q)
		}
	}
	return out
}

// raceLines is each finding but the uninit-reads as "KIND first->second
// xCOUNT", by source line.
func raceLines(fs []Finding) []string {
	var out []string
	for _, f := range fs {
		if f.Kind != KindUninitRead {
			out = append(out, fmt.Sprintf("%s %d->%d x%d", f.Kind, f.First.Line, f.Second.Line, f.Count))
		}
	}
	return out
}

// TestMovedRaceCountsOnce: a store races two racing loads of one op (a
// loop whose loads one pipe does not order) and a move ordered after both.
// The store counts once, against the move, in every order (its race with
// the second load shares the first's sites and is not counted twice).
func TestMovedRaceCountsOnce(t *testing.T) {
	p := &prog{}
	ld := p.op("tload", 12, MTE2)
	set := p.op("set_flag", 13, S)
	wt := p.op("wait_flag", 14, S)
	mv := p.op("tmov", 16, MTE1)
	st := p.op("tstore", 18, MTE3)
	load := func(k int64) func(s *sim) {
		return func(s *sim) { s.exec(ag(0, 0, MTE2), ld, []int64{k}, tileAcc(ubX, 0, 0, 0, true)) }
	}
	steps := []func(s *sim){
		load(0),
		load(1),
		func(s *sim) {
			s.set(0, 0, MTE2, MTE1, 0, set)
			s.wait(0, 0, MTE2, MTE1, 0, wt)
			s.exec(ag(0, 0, MTE1), mv, nil, tileAcc(ubX, 0, 0, 0, true))
		},
		func(s *sim) { s.exec(ag(0, 0, MTE3), st, nil, tileAcc(ubX, 0, 0, 0, false)) },
	}
	want := []string{"WAW 12->12 x1", "RAW 16->18 x1"}
	issued := []issue{{ld, MTE2}, {ld, MTE2}, {set, MTE2}, {wt, MTE1}, {mv, MTE1}, {st, MTE3}}
	// The move waits for both loads.
	checkOrders(t, "two loads", issued, steps, [][2]int{{0, 2}, {1, 2}}, want)
}
