package hazard

import (
	"strings"
	"testing"

	"github.com/ptoasm/ptoasm/machine"
)

// TestOneAgentWaitLateAdd: ranks 1 and 2 each write slot x of rank 0's @W
// on MTE3, drain and add 1 to rank 0's counter (the children of a tree's
// parent announcing on one word); rank 0 waits `>= 1` twice, loading slot 1
// after the first wait and slot 2 after the second
// (hazards/tree_allreduce_one_word's parent). Either add passes either
// wait, so each load races the write of its slot, whichever add landed
// first: RAW 40, 51, two pipe pairs, on every order.
//   - "lock step": rank 1's add alone is in at the first wait, which the
//     one-agent rule decided and nobody watched: rank 2's later add never
//     stood in, and rank 1's pair was missed (one pipe pair on main).
//   - "other first": rank 2's add alone is in at the first wait.
//   - "both in": both adds are in at the first wait (meetWait's, as before).
//   - "polled twice": the second wait comes before rank 2's add too, on the
//     word the first one joined (no acquire of its own), and both loads
//     after it: taken back at the first wait, rank 1's add is the second's
//     to acquire, so it is noted too, and two passes settle it, not three.
//   - "gated": rank 2 adds only after rank 0's first load (it waits for
//     rank 0's tnotify on its @T) and the second wait is `>= 2`: the add
//     is ordered after the first wait and stands in for nothing: clean in
//     one pass.
//   - "flag waited": rank 1 adds to its own flag word D before the counter
//     (allgather_gemm's chunk flag and summary), rank 0 waits D >= 1 after
//     the counter and then loads slot 1; rank 2's later add to the counter
//     stands in, but the flag's wait orders the load as the counter's did:
//     clean, and in one pass (the noted wait's raise was not what the load
//     needed, notedep.go; two passes before).
//   - "flag loaded": the flag is a scalar load of D, not a wait: the same.
//   - "passed on": rank 0 loads nothing; it adds to rank 2's @T after the
//     wait and rank 2 waits @T and loads slot 1; rank 4's add to the
//     counter stands in: rank 2's load races rank 1's write, one pipe pair
//     (the raise left rank 0's core in its add: it counts).
func TestOneAgentWaitLateAdd(t *testing.T) {
	for _, tc := range []struct {
		name   string
		order  string // the events in order: 1, 2 (a rank's store and add), s2 (rank 2's store alone), a2 (its add alone), w (a wait), l1, l2, l12 (loads), g (rank 0 releases rank 2)
		want2  int64  // the second wait's operand
		race   int
		passes int
	}{
		{"lock step", "1 w l1 2 w l2", 1, 2, 2},
		{"other first", "2 w l1 1 w l2", 1, 2, 2},
		{"both in", "1 2 w l1 w l2", 1, 2, 1},
		{"polled twice", "1 s2 w w l12 a2", 1, 2, 2},
		{"gated", "1 w l1 g 2 w l2", 2, 0, 1},
		{"flag waited", "1f w f l1 a2", 1, 0, 1},
		{"flag loaded", "1f w fl l1 a2", 1, 0, 1},
		{"passed on", "1 w g w2 l1r2 a4", 1, 1, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			passes := 0
			d, err := Settle(Options{}, func(opt Options) (*Detector, error) {
				passes++
				s := newSim(opt)
				p, st, bar, nt, tw, ld := counterOps(1, "ge")
				tw2 := twaitOp(p, 52, sigCnt, tc.want2, "ge")
				pub := p.op("tnotify", 43, S)
				sub := twaitOp(p, 44, sigArr, 1, "ge")
				twD := twaitOp(p, 53, sigCnt, 1, "ge")
				ldD := p.op("ld", 54, S)
				dWord := func(write bool) []machine.Access {
					return []machine.Access{gmAcc(sigCnt, 0, 0x3004, 0x3008, write)}
				}
				startCounterRun(s, true)
				val, waits := int64(0), 0
				store := func(x int32) {
					s.issue(x, 0, st, MTE3)
					s.exec(ag(x, 0, MTE3), st, nil, gmAcc(winW, 0, 0x1000+0x100*int64(x), 0x1100+0x100*int64(x), true))
					s.barrier(x, 0, ALL, bar)
				}
				add := func(x int32) {
					val++
					s.ev(machine.Event{Kind: machine.EvNotify, Agent: ag(x, 0, S), Op: nt, Word: "add", Value: 1, Accesses: cntWord(true)})
				}
				load := func(lo, hi int64) {
					s.issue(0, 0, ld, MTE2)
					s.exec(ag(0, 0, MTE2), ld, nil, gmAcc(winW, 0, lo, hi, false))
				}
				for _, e := range strings.Fields(tc.order) {
					switch e {
					case "1", "2":
						x := int32(e[0] - '0')
						if x == 2 && tc.name == "gated" {
							s.ev(machine.Event{Kind: machine.EvSignalWait, Agent: ag(2, 0, S), Op: sub, Value: 1, Want: 1, Accesses: arrWord(false)})
						}
						store(x)
						add(x)
					case "1f":
						store(1)
						s.ev(machine.Event{Kind: machine.EvNotify, Agent: ag(1, 0, S), Op: nt, Word: "add", Value: 1, Accesses: dWord(true)})
						add(1)
					case "f":
						s.ev(machine.Event{Kind: machine.EvSignalWait, Agent: ag(0, 0, S), Op: twD, Value: 1, Want: 1, Accesses: dWord(false)})
					case "fl":
						s.exec(ag(0, 0, S), ldD, nil, dWord(false)[0])
					case "w2":
						s.ev(machine.Event{Kind: machine.EvSignalWait, Agent: ag(2, 0, S), Op: sub, Value: 1, Want: 1, Accesses: arrWord(false)})
					case "l1r2":
						s.issue(2, 0, ld, MTE2)
						s.exec(ag(2, 0, MTE2), ld, nil, gmAcc(winW, 0, 0x1100, 0x1200, false))
					case "s2":
						store(2)
					case "a2":
						add(2)
					case "a4":
						add(4)
					case "w":
						op, want := tw, int64(1)
						if waits++; waits == 2 {
							op, want = tw2, tc.want2
						}
						s.ev(machine.Event{Kind: machine.EvSignalWait, Agent: ag(0, 0, S), Op: op, Value: val, Want: want, Accesses: cntWord(false)})
					case "l1":
						load(0x1100, 0x1200)
					case "l2":
						load(0x1200, 0x1300)
					case "l12":
						load(0x1100, 0x1300)
					case "g":
						s.barrier(0, 0, ALL, bar)
						s.ev(machine.Event{Kind: machine.EvNotify, Agent: ag(0, 0, S), Op: pub, Word: "add", Value: 1, Accesses: arrWord(true)})
					}
				}
				s.ev(machine.Event{Kind: machine.EvRunEnd})
				return s.d, nil
			})
			if err != nil {
				t.Fatal(err)
			}
			wantRace(t, d.Findings(), tc.race, KindRAW, 40, 51)
			if passes != tc.passes {
				t.Fatalf("settled in %d passes, want %d", passes, tc.passes)
			}
		})
	}
}

// TestGivenWaitStaysGiven: a wait given late adds that acquires nothing
// with them is still watched, so the pass after gives them again. Rank 1
// writes slot 1 of rank 0's @W, drains, adds 1 to rank 0's word D, then to
// its counter C, then to rank 2's @T; rank 0 waits C >= 1 (W, only rank 1's
// add in: the one-agent rule) and loads slot 1; rank 2 waits its @T and adds
// to D; rank 0 waits D >= 1 (X: rank 1's add to D or rank 2's, and both
// carry no more than W acquired: X acquires nothing and is not watched);
// then rank 3 adds to C and rank 4 to D, neither ordered after the waits.
// Rank 3's add passes W in rank 1's place, so the load races rank 1's
// write: RAW 40, 51, one pipe pair. Pass 2 gives W rank 3's add (it
// acquires nothing), X then acquires rank 1's write and falls with rank 4's
// add; pass 3 gives X rank 4's, and W, watched in pass 2 only because it
// was given, rank 3's again. Not given them, W acquired rank 1's write in
// pass 3, X fell again, and the passes alternated up to the cap (4).
func TestGivenWaitStaysGiven(t *testing.T) {
	passes := 0
	d, err := Settle(Options{}, func(opt Options) (*Detector, error) {
		passes++
		s := newSim(opt)
		p, st, bar, nt, tw, ld := counterOps(1, "ge")
		twD := twaitOp(p, 53, sigCnt, 1, "ge")
		sub := twaitOp(p, 44, sigArr, 1, "ge")
		dWord := func(write bool) []machine.Access {
			return []machine.Access{gmAcc(sigCnt, 0, 0x3004, 0x3008, write)}
		}
		startCounterRun(s, true)
		add := func(x int32, word []machine.Access) {
			s.ev(machine.Event{Kind: machine.EvNotify, Agent: ag(x, 0, S), Op: nt, Word: "add", Value: 1, Accesses: word})
		}
		s.issue(1, 0, st, MTE3)
		s.exec(ag(1, 0, MTE3), st, nil, gmAcc(winW, 0, 0x1100, 0x1200, true))
		s.barrier(1, 0, ALL, bar)
		add(1, dWord(true))
		add(1, cntWord(true))
		add(1, arrWord(true))
		s.ev(machine.Event{Kind: machine.EvSignalWait, Agent: ag(0, 0, S), Op: tw, Value: 1, Want: 1, Accesses: cntWord(false)})
		s.issue(0, 0, ld, MTE2)
		s.exec(ag(0, 0, MTE2), ld, nil, gmAcc(winW, 0, 0x1100, 0x1200, false))
		s.ev(machine.Event{Kind: machine.EvSignalWait, Agent: ag(2, 0, S), Op: sub, Value: 1, Want: 1, Accesses: arrWord(false)})
		add(2, dWord(true))
		s.ev(machine.Event{Kind: machine.EvSignalWait, Agent: ag(0, 0, S), Op: twD, Value: 2, Want: 1, Accesses: dWord(false)})
		add(3, cntWord(true))
		add(4, dWord(true))
		s.ev(machine.Event{Kind: machine.EvRunEnd})
		return s.d, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	wantRace(t, d.Findings(), 1, KindRAW, 40, 51)
	if passes != 3 {
		t.Fatalf("settled in %d passes, want 3", passes)
	}
}
