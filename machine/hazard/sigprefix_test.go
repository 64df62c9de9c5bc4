package hazard

import (
	"slices"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
)

// sigCnt is an int32 signal word, as the machine declares signals.
var sigCnt = &asm.TensorInfo{Name: "S", Index: 2, Class: asm.TensorSignal, Bytes: 64, DType: asm.I32}

// TestCounterWaitNeedsOnlyItsAdds: rank 1 writes slot k of @W on MTE3,
// drains and adds 1 to rank 0's counter, for k = 0, 1, 2; rank 0 waits for
// the counter to reach want and loads slot want-1 (want 0: slot 0). The
// wait is ordered after rank 1's first `want` adds, whether the later ones
// landed before it polled or not: the load of slot k races rank 1's write
// of it exactly when want <= k (a wait on the previous round's count,
// hazards/ring_slots_wrong_round), under every order of the adds and the
// wait. It used to be ordered after every add that had landed, so the race
// showed only when the wait came before the add.

// wantRace fails t unless fs is clean (count 0) or exactly one race of
// kind from source line first to second, counted count times (count < 0:
// any count), as the counter tests script them.
func wantRace(t *testing.T, fs []Finding, count int, kind string, first, second int) {
	t.Helper()
	if count == 0 {
		if len(fs) != 0 {
			t.Fatalf("want clean, got %v", kinds(fs))
		}
		return
	}
	if len(fs) != 1 || fs[0].Kind != kind || fs[0].First.Line != first || fs[0].Second.Line != second || (count > 0 && fs[0].Count != count) {
		t.Fatalf("want %s %d, %d [%d pipe pairs, -1 any]; got %v %+v", kind, first, second, count, kinds(fs), fs)
	}
}

// anyCount is wantRace's count for a race whose count the test leaves
// open: -1 when raced, else 0 (clean).
func anyCount(raced bool) int {
	if raced {
		return -1
	}
	return 0
}

// cntWord and arrWord are the access to the counter word (sigCnt on rank 0)
// and to the arrival word (sigArr on rank 2) the counter tests script.
func cntWord(write bool) []machine.Access {
	return []machine.Access{gmAcc(sigCnt, 0, 0x3000, 0x3004, write)}
}

func arrWord(write bool) []machine.Access {
	return []machine.Access{gmAcc(sigArr, 2, 0x4000, 0x4004, write)}
}
func TestCounterWaitNeedsOnlyItsAdds(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cmp    string
		want   int64
		slot   int64
		landed int // rank 1's adds in before the wait (at least those it needs)
		race   bool
	}{
		{"needs all", "ge", 3, 2, 3, false},
		{"needs two, third in", "ge", 2, 2, 3, true},
		{"needs two, third out", "ge", 2, 2, 2, true},
		{"needs two, reads the second", "ge", 2, 1, 3, false},
		{"needs none, all in", "ge", 0, 0, 3, true},
		{"needs none, none in", "ge", 0, 0, 0, true},
		{"eq two, third out", "eq", 2, 1, 2, false},
		{"gt one, third in", "gt", 1, 1, 3, false},
		{"gt one, third in, slot 2", "gt", 1, 2, 3, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSim(Options{})
			_, st, bar, nt, tw, ld := counterOps(tc.want, tc.cmp)
			word := cntWord
			startCounterRun(s, false)
			val := int64(0)
			round := counterRound(s, st, bar, nt, word(true), &val)
			k := int64(0)
			for ; k < int64(tc.landed); k++ {
				round(k)
			}
			s.ev(machine.Event{Kind: machine.EvSignalWait, Agent: ag(0, 0, S), Op: tw, Value: val, Want: tc.want, Accesses: word(false)})
			s.issue(0, 0, ld, MTE2)
			s.exec(ag(0, 0, MTE2), ld, nil, gmAcc(winW, 0, 0x1000+0x100*tc.slot, 0x1100+0x100*tc.slot, false))
			for ; k < 3; k++ {
				round(k)
			}
			s.ev(machine.Event{Kind: machine.EvRunEnd})
			wantRace(t, s.d.Findings(), anyCount(tc.race), KindRAW, 40, 51)
		})
	}
}

// counterRound returns round k of the counter tests' notifier: rank 1
// writes slot k of @W on MTE3, drains and adds 1 to the word add names,
// counting the adds in *val.
func counterRound(s *sim, st, bar, nt *asm.COp, add []machine.Access, val *int64) func(k int64) {
	return func(k int64) {
		s.issue(1, 0, st, MTE3)
		s.exec(ag(1, 0, MTE3), st, []int64{k}, gmAcc(winW, 0, 0x1000+0x100*k, 0x1100+0x100*k, true))
		s.barrier(1, 0, ALL, bar)
		*val++
		s.ev(machine.Event{Kind: machine.EvNotify, Agent: ag(1, 0, S), Op: nt, Word: "add", Value: 1, Accesses: add})
	}
}

// startCounterRun starts a counter test's run: the host fills rank 0's
// window @W and counter @S (and, with arr, rank 2's arrival word @T), then
// the run begins.
func startCounterRun(s *sim, arr bool) {
	s.hostInit(winW, 0, 0x1000)
	s.hostInit(sigCnt, 0, 0x3000)
	if arr {
		s.hostInit(sigArr, 2, 0x4000)
	}
	s.ev(machine.Event{Kind: machine.EvRunStart})
}

// counterOps are the counter tests' ops: the data store (line 40), the
// drain (41), the notify (42), the wait for want on @S (50) and the load
// (51).
func counterOps(want int64, cmp string) (p *prog, st, bar, nt, tw, ld *asm.COp) {
	p = &prog{}
	st = p.op("tstore", 40, MTE3)
	bar = p.op("pipe_barrier", 41, S)
	nt = p.op("tnotify", 42, S)
	tw = twaitOp(p, 50, sigCnt, want, cmp)
	ld = p.op("tload", 51, MTE2)
	return p, st, bar, nt, tw, ld
}

// twaitOp is `twait @sig[0], want #cmp=cmp` at line.
func twaitOp(p *prog, line int, sig *asm.TensorInfo, want int64, cmp string) *asm.COp {
	tw := p.op("twait", line, S)
	tw.Args = []asm.Arg{{Kind: asm.ArgGM, GM: sig}, {Kind: asm.ArgScalar, Val: asm.CExpr{Const: true, Val: want}}}
	tw.Attrs = []asm.CAttr{{Key: "cmp", Word: cmp, IsWord: true}}
	return tw
}

// sigArr is a second signal word, on rank 2 (a peer's own arrival word).
var sigArr = &asm.TensorInfo{Name: "T", Index: 3, Class: asm.TensorSignal, Bytes: 64, DType: asm.I32}

// TestSeveralNotifiersWaitNeedsOnlyItsAdds: ranks 1, 2 and 3 each write
// slot x of rank 0's @W on MTE3, drain and add 1 to rank 0's counter (an
// all-to-all arrival count); rank 0 waits for want and loads slots 1..3.
// With want 3 every add is needed and the load is clean; with want 2 (one
// short) any two suffice, so no add is needed on every timing and the load
// races every write whose add it did not need, whichever had landed: it
// used to be ordered after every add that had landed, clean when all three
// had and racing the late one's write only when one was late (the verdict
// followed the ranks' speed). A peer a round ahead (ahead: ranks 1 and 3
// arrive at rank 2's own word too, and rank 2, past its wait for both,
// adds twice, its second add standing in for a late one) carries their
// writes through its second add, so the load stays clean with rank 1's add
// landed or not: no false alarm.
func TestSeveralNotifiersWaitNeedsOnlyItsAdds(t *testing.T) {
	for _, tc := range []struct {
		name  string
		want  int64
		late  []int32 // ranks whose add lands after the load
		ahead bool
		race  int64 // pipe pairs of RAW 40, 51 (0: clean)
	}{
		{"needs all", 3, nil, false, 0},
		{"one short, all in", 2, nil, false, 3},
		{"one short, rank 3 late", 2, []int32{3}, false, 1},
		{"peer ahead, late one in", 3, nil, true, 0},
		{"peer ahead, late one out", 3, []int32{1}, true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSim(Options{})
			p, st, bar, nt, tw, ld := counterOps(tc.want, "ge")
			na := p.op("tnotify", 43, S)
			wa := twaitOp(p, 44, sigArr, 2, "ge")
			cnt := cntWord
			startCounterRun(s, true)
			val := int64(0)
			add := func(x int32) {
				val++
				s.ev(machine.Event{Kind: machine.EvNotify, Agent: ag(x, 0, S), Op: nt, Word: "add", Value: 1, Accesses: cnt(true)})
			}
			for x := int32(1); x <= 3; x++ {
				s.issue(x, 0, st, MTE3)
				s.exec(ag(x, 0, MTE3), st, nil, gmAcc(winW, 0, 0x1000+0x100*int64(x), 0x1100+0x100*int64(x), true))
				s.barrier(x, 0, ALL, bar)
			}
			if tc.ahead {
				// Ranks 1 and 3 arrive at rank 2 too; rank 2 passes its
				// own wait for both and so is a round ahead.
				for _, x := range []int32{1, 3} {
					s.ev(machine.Event{Kind: machine.EvNotify, Agent: ag(x, 0, S), Op: na, Word: "add", Value: 1,
						Accesses: []machine.Access{gmAcc(sigArr, 2, 0x4000, 0x4004, true)}})
				}
				s.ev(machine.Event{Kind: machine.EvSignalWait, Agent: ag(2, 0, S), Op: wa, Value: 2, Want: 2,
					Accesses: []machine.Access{gmAcc(sigArr, 2, 0x4000, 0x4004, false)}})
			}
			for x := int32(1); x <= 3; x++ {
				if !slices.Contains(tc.late, x) {
					add(x)
				}
			}
			if tc.ahead {
				add(2) // rank 2's next round
			}
			s.ev(machine.Event{Kind: machine.EvSignalWait, Agent: ag(0, 0, S), Op: tw, Value: val, Want: tc.want, Accesses: cnt(false)})
			s.issue(0, 0, ld, MTE2)
			s.exec(ag(0, 0, MTE2), ld, nil, gmAcc(winW, 0, 0x1100, 0x1400, false))
			for _, x := range tc.late {
				add(x)
			}
			s.ev(machine.Event{Kind: machine.EvRunEnd})
			wantRace(t, s.d.Findings(), int(tc.race), KindRAW, 40, 51)
		})
	}
}

// TestCounterAfterOrderedReset is TestCounterWaitNeedsOnlyItsAdds with the
// counter zeroed first by the waiter (`st @S[0], 0`, line 30) and the
// zeroing published to the notifier before its first add (rank 0 adds to
// rank 1's word @S[4], rank 1 waits for it: allreduce_ring's
// ring_zero_at_entry with the reset ordered). The word is one agent's
// counter after the store as it is without one, so the wait is ordered
// after the adds it needed whether the later ones had landed or not. It
// used to take the whole join after a plain store, and rank 1 a round
// ahead (its third add in before the wait) hid the race of slot 2 that a
// wait for 2 leaves (programs.TestFindingsIgnoreSkew found it).
func TestCounterAfterOrderedReset(t *testing.T) {
	for _, tc := range []struct {
		name   string
		want   int64
		landed int
		race   bool
	}{
		{"needs two, third out", 2, 2, true},
		{"needs two, third in", 2, 3, true},
		{"needs all", 3, 3, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSim(Options{})
			p, st, bar, nt, tw, ld := counterOps(tc.want, "ge")
			reset := p.op("st", 30, S)
			pub := p.op("tnotify", 31, S)
			sub := twaitOp(p, 32, sigCnt, 1, "ge")
			word := func(rank int32, off int64, write bool) []machine.Access {
				return []machine.Access{gmAcc(sigCnt, rank, 0x3000+off, 0x3004+off, write)}
			}
			s.hostInit(winW, 0, 0x1000)
			s.hostInit(sigCnt, 0, 0x3000)
			s.hostInit(sigCnt, 1, 0x3000)
			s.ev(machine.Event{Kind: machine.EvRunStart})
			s.exec(ag(0, 0, S), reset, nil, word(0, 0, true)...)
			s.ev(machine.Event{Kind: machine.EvNotify, Agent: ag(0, 0, S), Op: pub, Word: "add", Value: 1, Accesses: word(1, 4, true)})
			s.ev(machine.Event{Kind: machine.EvSignalWait, Agent: ag(1, 0, S), Op: sub, Value: 1, Want: 1, Accesses: word(1, 4, false)})
			val := int64(0)
			round := counterRound(s, st, bar, nt, word(0, 0, true), &val)
			k := int64(0)
			for ; k < int64(tc.landed); k++ {
				round(k)
			}
			s.ev(machine.Event{Kind: machine.EvSignalWait, Agent: ag(0, 0, S), Op: tw, Value: val, Want: tc.want, Accesses: word(0, 0, false)})
			s.issue(0, 0, ld, MTE2)
			s.exec(ag(0, 0, MTE2), ld, nil, gmAcc(winW, 0, 0x1200, 0x1300, false))
			for ; k < 3; k++ {
				round(k)
			}
			s.ev(machine.Event{Kind: machine.EvRunEnd})
			wantRace(t, s.d.Findings(), anyCount(tc.race), KindRAW, 40, 51)
		})
	}
}

// TestWaitOverWordsNeedsOnlyItsAdds: ranks 1 and 2 each write their slot
// of round k of rank 0's @W on MTE3, drain and add 1 to their own word of
// rank 0's @S (words 0 and 1), for k = 0, 1; rank 0 waits on both words at
// once (`twait @S[0], want #cmp=ge #count=2`) and loads round slot's two
// slots. Each word is compared with want on its own, so the wait is
// ordered after each word's first `want` adds, not after a second round
// that happened to land before it polled: with want 1 (one short) the load
// of round 1 races both round-1 writes whichever had landed (a write after
// the load is named RAW too: the write-first naming of two loops,
// docs/hazards.md "Intended order across kernels"). It used to
// join each word whole, clean when every add was in (the timing of slow
// scalar GM loads, hazards/splitkv_flag_words).
func TestWaitOverWordsNeedsOnlyItsAdds(t *testing.T) {
	for _, tc := range []struct {
		name   string
		want   int64
		slot   int64
		landed [2]int64 // rounds of ranks 1 and 2 in before the wait
		found  []string // the findings' kinds, in order
		raw    int      // pipe pairs of RAW 40, 51
	}{
		{"needs both rounds", 2, 1, [2]int64{2, 2}, nil, 0},
		{"one short, both second rounds in", 1, 1, [2]int64{2, 2}, []string{KindRAW}, 2},
		{"one short, rank 2's second round in", 1, 1, [2]int64{1, 2}, []string{KindRAW}, 2},
		{"one short, reads round 0", 1, 0, [2]int64{2, 2}, nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSim(Options{})
			_, st, bar, nt, tw, ld := counterOps(tc.want, "ge")
			startCounterRun(s, false)
			var val [2]int64
			round := func(x int32, k int64) {
				lo := 0x1000 + 0x200*k + 0x100*int64(x-1)
				s.issue(x, 0, st, MTE3)
				s.exec(ag(x, 0, MTE3), st, []int64{k}, gmAcc(winW, 0, lo, lo+0x100, true))
				s.barrier(x, 0, ALL, bar)
				val[x-1]++
				w := 0x3000 + 4*int64(x-1)
				s.ev(machine.Event{Kind: machine.EvNotify, Agent: ag(x, 0, S), Op: nt, Word: "add", Value: 1,
					Accesses: []machine.Access{gmAcc(sigCnt, 0, w, w+4, true)}})
			}
			for x := int32(1); x <= 2; x++ {
				for k := range tc.landed[x-1] {
					round(x, k)
				}
			}
			s.ev(machine.Event{Kind: machine.EvSignalWait, Agent: ag(0, 0, S), Op: tw, Value: val[1], Want: tc.want,
				Words: val[:], Accesses: []machine.Access{gmAcc(sigCnt, 0, 0x3000, 0x3008, false)}})
			s.issue(0, 0, ld, MTE2)
			lo := 0x1000 + 0x200*tc.slot
			s.exec(ag(0, 0, MTE2), ld, nil, gmAcc(winW, 0, lo, lo+0x200, false))
			for x := int32(1); x <= 2; x++ {
				for k := tc.landed[x-1]; k < 2; k++ {
					round(x, k)
				}
			}
			s.ev(machine.Event{Kind: machine.EvRunEnd})
			fs := s.d.Findings()
			if !slices.Equal(kinds(fs), tc.found) {
				t.Fatalf("want %v, got %v", tc.found, kinds(fs))
			}
			if tc.raw > 0 && (fs[0].First.Line != 40 || fs[0].Second.Line != 51 || fs[0].Count != tc.raw) {
				t.Fatalf("want RAW 40, 51 [%d pipe pairs]; got %v %d, %d [%d]", tc.raw, fs[0].Kind, fs[0].First.Line, fs[0].Second.Line, fs[0].Count)
			}
		})
	}
}

// TestSetChainWaitNeedsEarliestSet: rank 1 writes slot k of @W on MTE3,
// drains and sets rank 0's status word to k + 1 (`tnotify ... #op=set`),
// for k = 0, 1, 2; rank 0 waits for the word to compare true with want
// and loads slot `slot`. One scalar's sets land in program order, so a
// wait that read a later set could have polled while the earliest set
// whose value met its compare was the word's: it is ordered after that
// set only, and the load of slot k races rank 1's write of it exactly when
// the set of value k + 1 was not needed (a decoupled look-back reading the
// prefix on the aggregate's flag, hazards/lookback_scan_agg_flag). It used
// to acquire the set it read, so the race showed only when the wait came
// before the later sets.
func TestSetChainWaitNeedsEarliestSet(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cmp    string
		want   int64
		slot   int64
		landed int // rank 1's sets in before the wait (at least those it needs)
		race   bool
	}{
		{"ge one, all in, slot 1", "ge", 1, 1, 3, true},
		{"ge one, one in, slot 1", "ge", 1, 1, 1, true},
		{"ge one, all in, slot 0", "ge", 1, 0, 3, false},
		{"ge two, all in, slot 1", "ge", 2, 1, 3, false},
		{"ge two, all in, slot 2", "ge", 2, 2, 3, true},
		{"ge three, all in", "ge", 3, 2, 3, false},
		{"eq three, all in, slot 2", "eq", 3, 2, 3, false},
		{"ne zero, all in, slot 1", "ne", 0, 1, 3, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSim(Options{})
			_, st, bar, nt, tw, ld := counterOps(tc.want, tc.cmp)
			startCounterRun(s, false)
			val := int64(0)
			round := func(k int64) {
				s.issue(1, 0, st, MTE3)
				s.exec(ag(1, 0, MTE3), st, []int64{k}, gmAcc(winW, 0, 0x1000+0x100*k, 0x1100+0x100*k, true))
				s.barrier(1, 0, ALL, bar)
				val = k + 1
				s.ev(machine.Event{Kind: machine.EvNotify, Agent: ag(1, 0, S), Op: nt, Word: "set", Value: val, Accesses: cntWord(true)})
			}
			k := int64(0)
			for ; k < int64(tc.landed); k++ {
				round(k)
			}
			s.ev(machine.Event{Kind: machine.EvSignalWait, Agent: ag(0, 0, S), Op: tw, Value: val, Want: tc.want, Accesses: cntWord(false)})
			s.issue(0, 0, ld, MTE2)
			s.exec(ag(0, 0, MTE2), ld, nil, gmAcc(winW, 0, 0x1000+0x100*tc.slot, 0x1100+0x100*tc.slot, false))
			for ; k < 3; k++ {
				round(k)
			}
			s.ev(machine.Event{Kind: machine.EvRunEnd})
			wantRace(t, s.d.Findings(), anyCount(tc.race), KindRAW, 40, 51)
		})
	}
}
