package hazard

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ptoasm/ptoasm/machine"
)

// TestGMAccessBetweenOrderedWrites: one core stores a GM band in rounds, a
// pipe_barrier MTE3 between the rounds' stores, and an access of another
// core (or rank) that nothing orders lands at every place among them. The
// findings, counts included, must be the same wherever it lands: an access
// meant between two rounds races the first one way round and the second the
// other (RAW and WAR for a read), and both pairs stand. A GM cell used to
// keep only the last of the ordered stores, and an access landing after the
// later one met it alone (hazards/grid_read_between_writes).
func TestGMAccessBetweenOrderedWrites(t *testing.T) {
	for _, tc := range []struct {
		name   string
		rank   int32 // the access's rank and core
		core   int32
		write  bool
		iter   int64 // its iteration; the stores are rounds 0..rounds-1
		rounds int
		adds   bool // the stores are atomic adds
		deep   bool // every vector three deep: records that do not pack (olds.go)
		big    bool // iterations from 40 000: records that do not pack either
		want   []string
	}{
		{name: "read of another core meant between two rounds", core: 1, iter: 1, rounds: 3,
			want: []string{"RAW 10->20 x1", "WAR 20->10 x1"}},
		{name: "read of another rank meant between two rounds", rank: 1, iter: 1, rounds: 3,
			want: []string{"RAW 10->20 x1", "WAR 20->10 x1"}},
		{name: "read meant between the first two of four rounds", core: 1, iter: 0, rounds: 4,
			want: []string{"RAW 10->20 x1", "WAR 20->10 x1"}},
		{name: "read meant after every round", core: 1, iter: 5, rounds: 3,
			want: []string{"RAW 10->20 x1"}},
		{name: "read meant before every round", core: 1, iter: -1, rounds: 3,
			want: []string{"WAR 20->10 x1"}},
		{name: "write of another core meant between two rounds", core: 1, write: true, iter: 1, rounds: 3,
			want: []string{"WAW 10->20 x1", "WAW 20->10 x1"}},
		{name: "read meant between two rounds of atomic adds", core: 1, iter: 1, rounds: 3, adds: true,
			want: []string{"RAW 10->20 x1", "WAR 20->10 x1"}},
		{name: "read meant between two late rounds of six", core: 1, iter: 4, rounds: 6,
			want: []string{"RAW 10->20 x1", "WAR 20->10 x1"}},
		{name: "read meant between two rounds, vectors three deep", core: 1, iter: 1, rounds: 3, deep: true,
			want: []string{"RAW 10->20 x1", "WAR 20->10 x1"}},
		{name: "read meant between two late rounds of eight, vectors three deep", core: 1, iter: 6, rounds: 8, deep: true,
			want: []string{"RAW 10->20 x1", "WAR 20->10 x1"}},
		{name: "read meant between two late rounds of eight, iterations past 16 bits", core: 1, iter: 6, rounds: 8, big: true,
			want: []string{"RAW 10->20 x1", "WAR 20->10 x1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for at := 0; at <= tc.rounds; at++ {
				got := raceLines(gmRounds(tc.rank, tc.core, tc.write, tc.iter, tc.rounds, at, tc.adds, tc.deep, tc.big).Findings())
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("access landing after %d stores: findings (-want +got):\n%s", at, diff)
				}
			}
		})
	}
}

// gmRounds runs rounds stores of rank 0's @A by core 0's MTE3 (line 10, a
// barrier after each; atomic adds if adds) and one access of [0, 0x100) by
// the given rank and core (line 20, iteration iter), landing after the
// first at stores, and returns the detector. With deep, every iteration
// vector has two outer levels of 0 before it; with big, every iteration
// is 40 000 more.
func gmRounds(rank, core int32, write bool, iter int64, rounds, at int, adds, deep, big bool) *Detector {
	return gmRoundsOpt(Options{}, rank, core, write, iter, rounds, at, adds, deep, big)
}

// gmRoundsOpt is gmRounds with the detector's options.
func gmRoundsOpt(opt Options, rank, core int32, write bool, iter int64, rounds, at int, adds, deep, big bool) *Detector {
	vec := func(k int64) []int64 {
		if big {
			k += 40000
		}
		if deep {
			return []int64{0, 0, k}
		}
		return []int64{k}
	}
	s := newSim(opt)
	p := &prog{}
	st := p.op("tstore", 10, MTE3)
	bar := p.op("pipe_barrier", 11, S)
	op, pipe := p.op("tload", 20, MTE2), MTE2
	if write {
		op, pipe = p.op("tstore", 20, MTE3), MTE3
	}
	s.hostInit(gmA, 0, 0)
	access := func() {
		s.issue(rank, core, op, pipe)
		s.exec(ag(rank, core, pipe), op, vec(iter), gmAcc(gmA, 0, 0, 0x100, write))
	}
	for k := range rounds {
		if k == at {
			access()
		}
		s.issue(0, 0, st, MTE3)
		store := gmAcc(gmA, 0, 0, 0x100, true)
		store.Atomic = adds
		s.exec(ag(0, 0, MTE3), st, vec(int64(k)), store)
		s.issue(0, 0, bar, MTE3)
		s.barrier(0, 0, MTE3, bar)
	}
	if at == rounds {
		access()
	}
	return s.d
}

// TestGMOldsBound: a cell keeps at most the bound (Options.MaxKept, 0 the
// default) of overwritten GM writes, the oldest leaving first, and the
// records they name, so its lists stay bounded however many rounds
// overwrite it; past the four held inline too.
func TestGMOldsBound(t *testing.T) {
	for _, tc := range []struct{ opt, want int }{{0, DefaultMaxKept}, {4, 4}, {5, 5}, {40, 40}, {1000, MaxKeptLimit}} {
		t.Run(fmt.Sprint("MaxKept ", tc.opt), func(t *testing.T) {
			d := gmRoundsOpt(Options{MaxKept: tc.opt}, 0, 1, false, 0, 2*tc.want+20, 0, false, false, false)
			acc := gmAcc(gmA, 0, 0, 0x100, true)
			m, _ := d.shadowFor(&acc).page(0, 0x100)
			most, recs := 0, 0
			for _, c := range m.cells {
				most = max(most, len(c.olds()))
				if c.hasOlds() {
					l := c.lists.olds
					recs = max(recs, int(l.nrec)+len(l.moreRecs()))
				}
			}
			if most != tc.want {
				t.Errorf("after %d rounds the store's cells keep at most %d overwritten writes, want the bound %d", 2*tc.want+20, most, tc.want)
			}
			// The records the entries left behind leave too (packOldRecs): a
			// write replaced by the next round's names two records, shared
			// along the chain, and an entry's w its predecessor's by.
			if recs > tc.want+1 {
				t.Errorf("a cell keeps %d records for its %d entries, want at most %d", recs, most, tc.want+1)
			}
		})
	}
}

// TestKeptLimitNote: where the bound drops an overwritten GM access that an
// access landing later is not ordered after, the dropped access is kept in
// a run (dropRun) and the race found as if it were still kept; only past
// the runs' bound does the report say, in a kept-limit note at that
// access naming the flag, that a race may be missing. A store of another
// core meant in round 1 of 6 in-place updates (the limit kernel
// hazards/gm_store_late_past_olds) needs 11 entries: under a bound of 4 it
// lost WAR `ld, x` silently, landing last, and later said so in a note.
// Rounds at iterations that make no run (k*k: each step longer than the
// last) each drop into a run of their own, and past the runs' bound the
// note comes back (the store meant at iteration 80, after round 8's 64,
// which has left the cell by then).
func TestKeptLimitNote(t *testing.T) {
	full := []string{"WAR 10->20 x1", "RAW 20->10 x1", "WAW 20->14 x1"}
	// Past the runs' bound: WAR `ld, x` stands on the early rounds' run,
	// naming round 3's load where round 8's is meant just before the
	// store, and the note says the dropped accesses were not all checked.
	noted := append(slices.Clone(full), "kept-limit 20->0 x1")
	linear := func(k int) int64 { return int64(k) }
	square := func(k int) int64 { return int64(k * k) }
	for _, tc := range []struct {
		name    string
		maxKept int
		rounds  int
		at      int // where the other core's store lands (2*rounds: last)
		iterOf  func(int) int64
		meant   int
		want    []string
	}{
		{"default bound, store last", 0, 6, 12, linear, 1, full},
		{"bound 12, store last", 12, 6, 12, linear, 1, full},
		{"bound 4, store first", 4, 6, 0, linear, 1, full},
		{"bound 4, store last", 4, 6, 12, linear, 1, full},
		{"default bound, 12 rounds, store last", 0, 12, 24, linear, 1, full},
		{"bound 30, 12 rounds, store last", 30, 12, 24, linear, 1, full},
		{"bound 4, 12 rounds at k*k, store first", 4, 12, 0, square, 80, full},
		{"bound 4, 12 rounds at k*k, store last", 4, 12, 24, square, 80, noted},
		{"bound 40, 12 rounds at k*k, store last", 40, 12, 24, square, 80, full},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := gmUpdateRoundsAt(Options{MaxKept: tc.maxKept}, tc.rounds, tc.meant, tc.at, 1, tc.iterOf).Findings()
			if diff := cmp.Diff(tc.want, raceLines(fs)); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
			for _, f := range fs {
				if f.Kind == KindKeptLimit && (f.Severity != "note" || !strings.Contains(f.Hint, "--max-kept")) {
					t.Errorf("the note is %s, hint %q: want a note naming --max-kept", f.Severity, f.Hint)
				}
			}
		})
	}
	// The same rounds, the late store by core 0's own MTE3, in order after
	// every access the bound dropped: no note (its same-pipe WAW with the
	// last round's store, no pipe_barrier between them, stands).
	fs := gmUpdateRoundsAt(Options{MaxKept: 4}, 12, 80, 24, 0, square).Findings()
	if diff := cmp.Diff([]string{"WAW 14->20 x1"}, raceLines(fs)); diff != "" {
		t.Errorf("a store ordered after what was dropped: findings (-want +got):\n%s", diff)
	}
}

// TestGMWriteBetweenReadAndStore: one core updates a GM band in place each
// round (a load on MTE2, then a store on MTE3 flagged after it, and a flag
// back before the next load), and a store of another core meant in round 1,
// after that round's update and before the next round's, lands at every
// place among them. It races round 1's load (WAR), round 2's load (RAW) and
// round 2's store (WAW), wherever it lands. The store ordered after a load
// took the load out of the cell, and a write landing after both met the
// store alone: the WAR and the RAW came and went with the latency. Meant in
// round 4 of 6, it lands after the cell has dropped the oldest kept
// records for room (packOldRecs): those it meets must be the right ones.
func TestGMWriteBetweenReadAndStore(t *testing.T) {
	for _, tc := range []struct{ rounds, meant int }{{3, 1}, {6, 4}, {6, 1}, {8, 1}} {
		t.Run(fmt.Sprint(tc.rounds, " rounds, meant in ", tc.meant), func(t *testing.T) {
			gmWriteBetweenReadAndStore(t, tc.rounds, tc.meant)
		})
	}
}

// gmWriteBetweenReadAndStore is TestGMWriteBetweenReadAndStore's run of
// rounds updates and the other core's store meant in round meant.
func gmWriteBetweenReadAndStore(t *testing.T, rounds, meant int) {
	want := []string{"WAR 10->20 x1", "RAW 20->10 x1", "WAW 20->14 x1"}
	for at := 0; at <= 2*rounds; at++ {
		if diff := cmp.Diff(want, raceLines(gmUpdateRounds(Options{}, rounds, meant, at, 1).Findings())); diff != "" {
			t.Errorf("store landing at place %d: findings (-want +got):\n%s", at, diff)
		}
	}
}

// gmUpdateRounds runs rounds in-place updates of rank 0's @A by core 0 (a
// load on MTE2, line 10, then a store on MTE3, line 14, flagged after it,
// and a flag back before the next load) and a store of core xcore's MTE3
// (line 20) meant in round meant, landing at place at (before round k's
// load at 2k, before its store at 2k+1, last at 2*rounds), and returns the
// detector. Core 0's store at line 20 is ordered after every update.
func gmUpdateRounds(opt Options, rounds, meant, at int, xcore int32) *Detector {
	return gmUpdateRoundsAt(opt, rounds, meant, at, xcore, func(k int) int64 { return int64(k) })
}

// gmUpdateRoundsAt is gmUpdateRounds with round k at iteration iterOf(k)
// (meant is the other store's iteration).
func gmUpdateRoundsAt(opt Options, rounds, meant, at int, xcore int32, iterOf func(int) int64) *Detector {
	s := newSim(opt)
	p := &prog{}
	ld := p.op("tload", 10, MTE2)
	set := p.op("set_flag", 11, S)
	wt := p.op("wait_flag", 12, S)
	st := p.op("tstore", 14, MTE3)
	set2 := p.op("set_flag", 15, S)
	wt2 := p.op("wait_flag", 16, S)
	x := p.op("tstore", 20, MTE3)
	s.hostInit(gmA, 0, 0)
	band := func(write bool) machine.Access { return gmAcc(gmA, 0, 0, 0x100, write) }
	other := func() {
		s.issue(0, xcore, x, MTE3)
		s.exec(ag(0, xcore, MTE3), x, []int64{int64(meant)}, band(true))
	}
	for k := range rounds {
		it := []int64{iterOf(k)}
		if at == 2*k {
			other()
		}
		s.issue(0, 0, ld, MTE2)
		s.issue(0, 0, set, MTE2)
		s.issue(0, 0, wt, MTE3)
		s.issue(0, 0, st, MTE3)
		s.issue(0, 0, set2, MTE3)
		s.issue(0, 0, wt2, MTE2)
		s.exec(ag(0, 0, MTE2), ld, it, band(false))
		s.set(0, 0, MTE2, MTE3, 0, set)
		s.wait(0, 0, MTE2, MTE3, 0, wt)
		if at == 2*k+1 {
			other()
		}
		s.exec(ag(0, 0, MTE3), st, it, band(true))
		s.set(0, 0, MTE3, MTE2, 1, set2)
		s.wait(0, 0, MTE3, MTE2, 1, wt2)
	}
	if at == 2*rounds {
		other()
	}
	return s.d
}

// TestGMOldsDropOrdered: at the bound, a range's overwritten accesses that
// every agent that may still reach GM is ordered after leave first
// (dropOrdered), not the oldest: one core updating a band in place with a
// pipe_barrier ALL each round drops none by age. An agent of another core
// that is ordered after none of them keeps them, and the oldest leave,
// until its core's kernel ends.
func TestGMOldsDropOrdered(t *testing.T) {
	for _, tc := range []struct {
		name    string
		other   bool // core 1's vector pipe ran an op first
		ended   bool // and core 1's kernel ended then
		ordered bool // dropped by the rule, none by age
	}{
		{name: "one core, a barrier ALL each round", ordered: true},
		{name: "another core's agent unordered", other: true},
		{name: "another core's agent, its kernel ended", other: true, ended: true, ordered: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSim(Options{})
			p := &prog{}
			ld := p.op("tload", 10, MTE2)
			st := p.op("tstore", 14, MTE3)
			bar := p.op("pipe_barrier", 16, S)
			fill := p.op("texpands", 30, V)
			s.hostInit(gmA, 0, 0)
			if tc.other {
				s.issue(0, 1, fill, V)
				s.exec(ag(0, 1, V), fill, []int64{0}, tileAcc(ubX, 0, 1, 0, true))
				if tc.ended {
					s.ev(machine.Event{Kind: machine.EvKernelEnd, Agent: ag(0, 1, S)})
				}
			}
			band := func(write bool) machine.Access { return gmAcc(gmA, 0, 0, 0x100, write) }
			for k := range 2*DefaultMaxKept + 4 {
				it := []int64{int64(k)}
				s.issue(0, 0, ld, MTE2)
				s.exec(ag(0, 0, MTE2), ld, it, band(false))
				s.issue(0, 0, bar, ALL)
				s.barrier(0, 0, ALL, bar)
				s.issue(0, 0, st, MTE3)
				s.exec(ag(0, 0, MTE3), st, it, band(true))
				s.issue(0, 0, bar, ALL)
				s.barrier(0, 0, ALL, bar)
			}
			if got := raceLines(s.d.Findings()); len(got) != 0 {
				t.Errorf("findings %v, want none", got)
			}
			d := s.d
			if tc.ordered && (d.keptAged != 0 || d.keptOrdered == 0) || !tc.ordered && (d.keptAged == 0 || d.keptOrdered != 0) {
				t.Errorf("dropped %d by the rule and %d by age, want ordered = %v", d.keptOrdered, d.keptAged, tc.ordered)
			}
		})
	}
}

// TestGMOldsPastBoundIgnoreTiming: a store of another core meant in round
// meant of many in-place updates lands at every place among them, past the
// bound on the range's kept accesses. The findings, the instances they
// name and their counts must be those of the store landing first, with no
// kept-limit note: the accesses the bound drops are summarised per agent,
// op and the write that replaced them (dropRun), and a late access meets
// the instances of each run it would have met, the ones it is meant just
// before and after among them. With the oldest simply dropped, the store
// meant in round 1 of 12 lost WAR `ld, x` landing last (sweep seed 27,
// hazards/gm_store_late_past_olds at ROUNDS=12).
func TestGMOldsPastBoundIgnoreTiming(t *testing.T) {
	named := func(fs []Finding) []string {
		var out []string
		for _, f := range fs {
			out = append(out, fmt.Sprintf("%s %d%v->%d%v x%d", f.Kind, f.First.Line, f.First.Iter, f.Second.Line, f.Second.Iter, f.Count))
		}
		return out
	}
	for _, tc := range []struct{ maxKept, rounds, meant int }{
		{0, 12, 1}, {4, 12, 1}, {4, 40, 1}, {4, 40, 20}, {4, 40, 38}, {0, 60, 3}, {1, 20, 7},
	} {
		t.Run(fmt.Sprintf("bound %d, %d rounds, meant in %d", tc.maxKept, tc.rounds, tc.meant), func(t *testing.T) {
			want := named(gmUpdateRounds(Options{MaxKept: tc.maxKept}, tc.rounds, tc.meant, 0, 1).Findings())
			if len(want) != 3 {
				t.Fatalf("store landing first: findings %v, want WAR, RAW and WAW", want)
			}
			for at := 1; at <= 2*tc.rounds; at++ {
				got := named(gmUpdateRounds(Options{MaxKept: tc.maxKept}, tc.rounds, tc.meant, at, 1).Findings())
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("store landing at place %d: findings (-first +here):\n%s", at, diff)
				}
			}
		})
	}
}
