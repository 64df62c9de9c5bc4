package hazard

import (
	"slices"
	"testing"

	"github.com/ptoasm/ptoasm/machine"
)

// TestEqWaitMeetsItsSets: ranks 1, 2 and 3 each write slot x of rank 0's
// @W on MTE3, drain and add adds[x] to rank 0's counter; rank 0 waits for
// the counter `==` want and loads slots 1..3. The adds of late land after
// the load, nothing ordering them after the wait, so on another timing
// they land first and stand in:
//   - "stand-in": adds of 1, want 3, all three in and rank 2's next add
//     late: {rank 2 twice, rank 3} and {rank 1, rank 2 twice} pass, so the
//     load races the bands of ranks 1 and 3 (TestLateAddStandsIn with `==`).
//   - "odd add": rank 1 adds 1, ranks 2 and 3 add 2, want 3, rank 3 late:
//     only {1, 2} and {1, 3} make 3 ({2, 3} jumps over it), so every set
//     holds rank 1's band and the load races those of ranks 2 and 3. The
//     `>=` meet would race rank 1's too.
//   - "exact": the same with want 5, every add needed: clean.
//   - "one agent in": ranks 1 and 2 add 1, want 1, rank 2 late: either
//     passes it alone, so the load races both writes. With one agent's
//     adds in, the wait took its earliest release that met the compare
//     (prefixFor) and was not watched for another agent's: rank 1's write
//     was ordered.
//
// It used to join the whole word at an `==` wait: ordered after what had
// landed, clean in "stand-in", one pair (rank 3) in "odd add".
func TestEqWaitMeetsItsSets(t *testing.T) {
	for _, tc := range []struct {
		name string
		adds [4]int64
		want int64
		late []int32 // adds after the load, in order
		race int     // pipe pairs of RAW 40, 51 (0: clean)
	}{
		{"stand-in", [4]int64{0, 1, 1, 1}, 3, []int32{2}, 2},
		{"odd add", [4]int64{0, 1, 2, 2}, 3, []int32{3}, 2},
		{"exact", [4]int64{0, 1, 2, 2}, 5, nil, 0},
		{"one agent in", [4]int64{0, 1, 1, 0}, 1, []int32{2}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Settle(Options{}, func(opt Options) (*Detector, error) {
				s := newSim(opt)
				_, st, bar, nt, tw, ld := counterOps(tc.want, "eq")
				cnt := cntWord
				startCounterRun(s, false)
				val := int64(0)
				add := func(x int32) {
					val += tc.adds[x]
					s.ev(machine.Event{Kind: machine.EvNotify, Agent: ag(x, 0, S), Op: nt, Word: "add", Value: tc.adds[x], Accesses: cnt(true)})
				}
				for x := int32(1); x <= 3; x++ {
					if tc.adds[x] == 0 {
						continue // rank x takes no part
					}
					s.issue(x, 0, st, MTE3)
					s.exec(ag(x, 0, MTE3), st, nil, gmAcc(winW, 0, 0x1000+0x100*int64(x), 0x1100+0x100*int64(x), true))
					s.barrier(x, 0, ALL, bar)
					if tc.name == "stand-in" || !slices.Contains(tc.late, x) {
						add(x)
					}
				}
				if val != tc.want {
					t.Fatalf("the wait reads %d, wants %d", val, tc.want)
				}
				s.ev(machine.Event{Kind: machine.EvSignalWait, Agent: ag(0, 0, S), Op: tw, Value: val, Want: tc.want, Accesses: cnt(false)})
				s.issue(0, 0, ld, MTE2)
				s.exec(ag(0, 0, MTE2), ld, nil, gmAcc(winW, 0, 0x1100, 0x1400, false))
				for _, x := range tc.late {
					add(x)
				}
				s.ev(machine.Event{Kind: machine.EvRunEnd})
				return s.d, nil
			})
			if err != nil {
				t.Fatal(err)
			}
			wantRace(t, d.Findings(), tc.race, KindRAW, 40, 51)
		})
	}
}
