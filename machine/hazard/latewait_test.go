package hazard

import (
	"testing"

	"github.com/ptoasm/ptoasm/machine"
)

// TestLateAddStandsIn: ranks 1, 2 and 3 each write slot x of rank 0's @W on
// MTE3, drain and add 1 to rank 0's counter; rank 0 waits for 3 and loads
// slots 1..3. Every add had landed when the wait passed, so on this timing
// the wait is ordered after all three. Then rank 2 adds to the word again
// (its next round), after the load. Whether that add could have landed
// before the wait, standing in for rank 1's, is known only then:
//   - "stand-in": nothing orders it after rank 0's wait, and its release
//     lacks the bands of ranks 1 and 3, so {rank 2 twice, rank 3} passes the
//     wait without rank 1, and {rank 1, rank 2 twice} without rank 3: RAW 40,
//     51 with both bands, two pipe pairs (the session-17 limit
//     arrival_rounds_interleaved in lock step).
//   - "gated": rank 0 publishes its load (tnotify rank 2's @T) and rank 2
//     waits for it before adding again: the add is ordered after the wait
//     and stands in for nothing (arrival_rounds_interleaved_gated).
//   - "carries the bands": ranks 1 and 3 publish their bands to rank 2
//     (its @T) and rank 2 waits for both before adding again: every set
//     that passes holds every band (arrival_rounds).
//   - "carries one band": as above with rank 1's alone: a set with rank 2
//     twice and rank 1 passes without rank 3's band: RAW with it, one pair.
//
// A single pass decides the wait when it passes and reports all three
// clean; Settle's second pass gives the wait the late add.
func TestLateAddStandsIn(t *testing.T) {
	for _, tc := range []struct {
		name string
		link string // "", "gated", "bands", "band"
		race int    // pipe pairs of RAW 40, 51 (0: clean)
	}{
		{"stand-in", "", 2},
		{"gated", "gated", 0},
		{"carries the bands", "bands", 0},
		{"carries one band", "band", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			passes := 0
			d, err := Settle(Options{}, func(opt Options) (*Detector, error) {
				passes++
				s := newSim(opt)
				p, st, bar, nt, tw, ld := counterOps(3, "ge")
				pub := p.op("tnotify", 43, S)
				need := int64(1)
				if tc.link == "bands" {
					need = 2
				}
				sub := twaitOp(p, 44, sigArr, need, "ge")
				cnt, arr := cntWord, arrWord
				startCounterRun(s, true)
				add := func(x int32) {
					s.ev(machine.Event{Kind: machine.EvNotify, Agent: ag(x, 0, S), Op: nt, Word: "add", Value: 1, Accesses: cnt(true)})
				}
				for x := int32(1); x <= 3; x++ {
					s.issue(x, 0, st, MTE3)
					s.exec(ag(x, 0, MTE3), st, nil, gmAcc(winW, 0, 0x1000+0x100*int64(x), 0x1100+0x100*int64(x), true))
					s.barrier(x, 0, ALL, bar)
					add(x)
				}
				s.ev(machine.Event{Kind: machine.EvSignalWait, Agent: ag(0, 0, S), Op: tw, Value: 3, Want: 3, Accesses: cnt(false)})
				s.issue(0, 0, ld, MTE2)
				s.exec(ag(0, 0, MTE2), ld, nil, gmAcc(winW, 0, 0x1100, 0x1400, false))
				switch tc.link {
				case "gated":
					s.barrier(0, 0, ALL, bar)
					s.ev(machine.Event{Kind: machine.EvNotify, Agent: ag(0, 0, S), Op: pub, Word: "add", Value: 1, Accesses: arr(true)})
				case "band", "bands":
					for x := int32(1); x < 2*int32(need); x += 2 { // rank 1, and rank 3 for two
						s.ev(machine.Event{Kind: machine.EvNotify, Agent: ag(x, 0, S), Op: pub, Word: "add", Value: 1, Accesses: arr(true)})
					}
				}
				if tc.link != "" {
					s.ev(machine.Event{Kind: machine.EvSignalWait, Agent: ag(2, 0, S), Op: sub, Value: need, Want: need, Accesses: arr(false)})
				}
				add(2) // rank 2's next round
				s.ev(machine.Event{Kind: machine.EvRunEnd})
				return s.d, nil
			})
			if err != nil {
				t.Fatal(err)
			}
			fs := d.Findings()
			if tc.race == 0 {
				if len(fs) != 0 || passes != 1 {
					t.Fatalf("want clean in one pass, got %v in %d", fs, passes)
				}
				return
			}
			if len(fs) != 1 || fs[0].Kind != KindRAW || fs[0].First.Line != 40 || fs[0].Second.Line != 51 || fs[0].Count != tc.race || passes != 2 {
				t.Fatalf("want RAW 40, 51 [%d pipe pairs] in two passes; got %v in %d", tc.race, fs, passes)
			}
		})
	}
}
