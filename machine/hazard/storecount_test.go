package hazard

import (
	"testing"

	"github.com/ptoasm/ptoasm/machine"
)

// racedStore checks that fs holds a reset-races-atomic of the reset (line
// 30) against the adds (42), and returns the other findings.
func racedStore(t *testing.T, fs []Finding) []Finding {
	t.Helper()
	var rest []Finding
	raced := false
	for _, f := range fs {
		if f.Kind == KindResetRacesAtomic && f.First.Line == 30 && f.Second.Line == 42 {
			raced = true
			continue
		}
		rest = append(rest, f)
	}
	if !raced {
		t.Fatalf("want reset-races-atomic 30, 42; got %v", kinds(fs))
	}
	return rest
}

// TestCounterBehindRacingStore: rank 0 zeroes its counter (`st`, line 30)
// with nothing ordering the store and rank 1's adds (the entry zeroing of
// allreduce_ring/ring_zero_at_entry); rank 1 writes slot k of @W on MTE3,
// drains and adds 1, for k = 0, 1, 2; rank 0 waits for want and loads slot
// 2. Counted from the store, a wait for 2 needs rank 1's first two adds
// and not the third, which orders slot 2's write: RAW 40, 51 on every
// order of the adds, the store and the wait; a wait for 3 needs all three
// (clean). The word used to take the whole join after the racing store:
// with the third add in before the wait (rank 1 a round ahead) the race
// was hidden, and with the first add in before the store (erased there: a
// lost wake-up on this timing, a count from the store on another) too.
func TestCounterBehindRacingStore(t *testing.T) {
	for _, tc := range []struct {
		name   string
		want   int64
		before int // rank 1's rounds before the store
		landed int // rank 1's rounds before the wait
		race   bool
	}{
		{"needs two, third out", 2, 0, 2, true},
		{"needs two, third in", 2, 0, 3, true},
		{"needs two, first erased", 2, 1, 3, true},
		{"needs all", 3, 0, 3, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSim(Options{})
			p, st, bar, nt, tw, ld := counterOps(tc.want, "ge")
			reset := p.op("st", 30, S)
			startCounterRun(s, false)
			val := int64(0)
			round := counterRound(s, st, bar, nt, cntWord(true), &val)
			k := int64(0)
			for ; k < int64(tc.before); k++ {
				round(k)
			}
			s.exec(ag(0, 0, S), reset, nil, cntWord(true)...)
			val = 0 // the store erased them
			for ; k < int64(tc.landed); k++ {
				round(k)
			}
			s.ev(machine.Event{Kind: machine.EvSignalWait, Agent: ag(0, 0, S), Op: tw, Value: val, Want: tc.want, Accesses: cntWord(false)})
			s.issue(0, 0, ld, MTE2)
			s.exec(ag(0, 0, MTE2), ld, nil, gmAcc(winW, 0, 0x1200, 0x1300, false))
			for ; k < 3; k++ {
				round(k)
			}
			s.ev(machine.Event{Kind: machine.EvRunEnd})
			wantRace(t, racedStore(t, s.d.Findings()), anyCount(tc.race), KindRAW, 40, 51)
		})
	}
}

// TestArrivalsBehindRacingStore: ranks 1 and 2 each write slot x of rank
// 0's @W on MTE3, drain and add 1 to rank 0's counter, which rank 0 zeroes
// (`st`, line 30) with nothing ordering the store and the adds (the re-arm
// of hazards/rs_ag_reset); rank 0 waits for 1 (one short) and loads slots 1
// and 2. Either add can land after the store and pass the wait alone, so
// the load races both writes (two pipe pairs) on every order: the store
// first, or rank 1's add in before it (erased on this timing, counted
// from the store on another). Where rank 0 waited for rank 1's add before
// the store, that add is ordered before the store and can never be
// counted from it: the second wait needs rank 2's (clean). The word used
// to take the whole join after the store: clean with the store first, one
// pair (rank 1's) with rank 1's add erased.
func TestArrivalsBehindRacingStore(t *testing.T) {
	for _, tc := range []struct {
		name  string
		order string // "store first", "erased", "waited"
		race  int
	}{
		{"store first", "store first", 2},
		{"rank 1's add erased", "erased", 2},
		{"rank 1's add waited for", "waited", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSim(Options{})
			p, st, bar, nt, tw, ld := counterOps(1, "ge")
			reset := p.op("st", 30, S)
			startCounterRun(s, false)
			val := int64(0)
			arrive := func(x int32) {
				s.issue(x, 0, st, MTE3)
				s.exec(ag(x, 0, MTE3), st, nil, gmAcc(winW, 0, 0x1000+0x100*int64(x), 0x1100+0x100*int64(x), true))
				s.barrier(x, 0, ALL, bar)
				val++
				s.ev(machine.Event{Kind: machine.EvNotify, Agent: ag(x, 0, S), Op: nt, Word: "add", Value: 1, Accesses: cntWord(true)})
			}
			if tc.order != "store first" {
				arrive(1)
			}
			if tc.order == "waited" {
				s.ev(machine.Event{Kind: machine.EvSignalWait, Agent: ag(0, 0, S), Op: tw, Value: val, Want: 1, Accesses: cntWord(false)})
			}
			s.exec(ag(0, 0, S), reset, nil, cntWord(true)...)
			val = 0
			if tc.order == "store first" {
				arrive(1)
			}
			arrive(2)
			s.ev(machine.Event{Kind: machine.EvSignalWait, Agent: ag(0, 0, S), Op: tw, Value: val, Want: 1, Accesses: cntWord(false)})
			s.issue(0, 0, ld, MTE2)
			s.exec(ag(0, 0, MTE2), ld, nil, gmAcc(winW, 0, 0x1100, 0x1300, false))
			s.ev(machine.Event{Kind: machine.EvRunEnd})
			wantRace(t, racedStore(t, s.d.Findings()), tc.race, KindRAW, 40, 51)
		})
	}
}

// TestStoreAfterReadWait: ranks 1 and 2 add 1 to rank 0's counter (phase
// 1), rank 0 waits for need1 (line 52) and re-arms the word (`st`, line 30)
// with nothing ordering the store after the adds of phase 3: ranks 1 and 2
// each write slot x of @W on MTE3, drain and add 1 again, and rank 0 waits
// for 2 (line 50) and loads slots 1 and 2 (hazards/ar2d_grid_reset_reuse
// with two row peers). The phase-3 adds are not ordered after the phase-1
// wait, so either could have stood in for the other rank's phase-1 add: the
// phase-1 wait is ordered after neither (Settle's second pass), and every
// add is a candidate of the store. With need1 2 the phase-1 wait read two
// of them, so the phase-3 wait counts the other two, and the pair holds
// each rank's phase-3 add: the write to its slot is ordered before the
// load through the phase-1 wait (it read the add) or the phase-3 one.
// Clean. With need1 1 a set with rank 1's two adds after the store and
// rank 2's phase-1 add read before it passes both waits without rank 2's
// phase-3 add: RAW 40, 51 with each rank's write, two pipe pairs. The
// phase-3 wait used to count the candidates alone: RAW with need1 2 too.
func TestStoreAfterReadWait(t *testing.T) {
	for _, tc := range []struct {
		name  string
		need1 int64
		race  int
	}{
		{"phase 1 read both", 2, 0},
		{"phase 1 one short", 1, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Settle(Options{}, func(opt Options) (*Detector, error) {
				s := newSim(opt)
				p, st, bar, nt, tw, ld := counterOps(2, "ge")
				reset := p.op("st", 30, S)
				w1 := twaitOp(p, 52, sigCnt, tc.need1, "ge")
				startCounterRun(s, false)
				add := func(x int32) {
					s.ev(machine.Event{Kind: machine.EvNotify, Agent: ag(x, 0, S), Op: nt, Word: "add", Value: 1, Accesses: cntWord(true)})
				}
				add(1)
				add(2)
				s.ev(machine.Event{Kind: machine.EvSignalWait, Agent: ag(0, 0, S), Op: w1, Value: 2, Want: tc.need1, Accesses: cntWord(false)})
				s.exec(ag(0, 0, S), reset, nil, cntWord(true)...)
				for x := int32(1); x <= 2; x++ {
					s.issue(x, 0, st, MTE3)
					s.exec(ag(x, 0, MTE3), st, nil, gmAcc(winW, 0, 0x1000+0x100*int64(x), 0x1100+0x100*int64(x), true))
					s.barrier(x, 0, ALL, bar)
					add(x)
				}
				s.ev(machine.Event{Kind: machine.EvSignalWait, Agent: ag(0, 0, S), Op: tw, Value: 2, Want: 2, Accesses: cntWord(false)})
				s.issue(0, 0, ld, MTE2)
				s.exec(ag(0, 0, MTE2), ld, nil, gmAcc(winW, 0, 0x1100, 0x1300, false))
				s.ev(machine.Event{Kind: machine.EvRunEnd})
				return s.d, nil
			})
			if err != nil {
				t.Fatal(err)
			}
			wantRace(t, racedStore(t, d.Findings()), tc.race, KindRAW, 40, 51)
		})
	}
}
