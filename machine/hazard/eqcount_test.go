package hazard

import (
	"testing"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
)

// TestEqCountOvershoot: agents add 1 to rank 0's counter (line 42, adds
// lists them in order, each an add of the rank it names) and rank 0 waits
// for want with `==` (line 50), after the adds of before have landed (or
// hangs on it, value the sum, when hang is set; the rest land after). Add A
// pairs with the wait (wait-overwritten 50, 42) when a set of prefixes of
// each rank's adds reaching want leaves it out, whichever had landed:
//   - "either of two": ranks 1 and 2 add once, want 1: each is left out by
//     the other: two pairs, whether rank 1's lands before the wait and
//     rank 2's after it (Settle's second pass has the wait ordered after
//     neither) or the wait hangs with both in;
//   - "both needed": want 2: none;
//   - "one rank twice": rank 1 adds twice, want 1: its second add, one pair;
//   - "ordered after": the wait is published to rank 2 (rank 0's @T,
//     which rank 2 waits for) before rank 2's add: none (rank 2's add
//     cannot land before the wait, and every passing set holds rank 1's).
//
// A wait on a word no set writes was never checked: clean.
func TestEqCountOvershoot(t *testing.T) {
	for _, tc := range []struct {
		name   string
		adds   []int32
		before int
		want   int64
		hang   bool
		gated  bool
		pairs  int
	}{
		{"either of two", []int32{1, 2}, 1, 1, false, false, 2},
		{"either of two, hung", []int32{1, 2}, 2, 1, true, false, 2},
		{"both needed", []int32{1, 2}, 2, 2, false, false, 0},
		{"one rank twice", []int32{1, 1}, 1, 1, false, false, 1},
		{"one rank twice, hung", []int32{1, 1}, 2, 1, true, false, 1},
		{"ordered after", []int32{1, 2}, 1, 1, false, true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &prog{}
			nt := p.op("tnotify", 42, S)
			pub := p.op("tnotify", 43, S)
			sub := twaitOp(p, 44, sigArr, 1, "ge")
			tw := twaitOp(p, 50, sigCnt, tc.want, "eq")
			k := &asm.KernelInfo{Name: "k", Ops: p.ops}
			for _, op := range p.ops {
				op.Kernel = k
			}
			d, err := Settle(Options{}, func(opt Options) (*Detector, error) {
				s := newSim(opt)
				startCounterRun(s, true)
				val := int64(0)
				add := func(x int32) {
					val++
					s.ev(machine.Event{Kind: machine.EvNotify, Agent: ag(x, 0, S), Op: nt, Word: "add", Value: 1, Accesses: cntWord(true)})
				}
				for _, x := range tc.adds[:tc.before] {
					add(x)
				}
				if tc.hang {
					bs := &machine.BlockedSignal{Access: cntWord(false)[0], Want: tc.want, Value: val}
					s.ev(machine.Event{Kind: machine.EvDeadlock, Blocked: []machine.Blocked{{Agent: ag(0, 0, S), Op: tw, Reason: "twait", Signal: bs}}})
				} else {
					s.ev(machine.Event{Kind: machine.EvSignalWait, Agent: ag(0, 0, S), Op: tw, Value: val, Want: tc.want, Accesses: cntWord(false)})
					if tc.gated {
						s.ev(machine.Event{Kind: machine.EvNotify, Agent: ag(0, 0, S), Op: pub, Word: "add", Value: 1, Accesses: arrWord(true)})
						s.ev(machine.Event{Kind: machine.EvSignalWait, Agent: ag(2, 0, S), Op: sub, Value: 1, Want: 1, Accesses: arrWord(false)})
					}
					for _, x := range tc.adds[tc.before:] {
						add(x)
					}
				}
				s.ev(machine.Event{Kind: machine.EvRunEnd})
				return s.d, nil
			})
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, f := range d.Findings() {
				if f.Kind == KindDeadlock {
					continue
				}
				if f.Kind != KindWaitOverwritten || f.First.Line != 50 || f.Second.Line != 42 {
					t.Fatalf("want wait-overwritten 50, 42; got %v %+v", kinds(d.Findings()), f)
				}
				n = f.Count
			}
			if n != tc.pairs {
				t.Fatalf("want %d pairs, got %d: %+v", tc.pairs, n, d.Findings())
			}
		})
	}
}
