package hazard

import (
	"slices"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
)

// TestFailedTestForced drives which failed TTESTs a next pass holds until
// they pass (testforce.go). Ranks add 1 each to rank 0's count @S and test
// it for want once (`ttest ... #cmp=ge`), the "last block finishes" shape:
//   - "last block": ranks 1, 2, 3 add and test in turn; 1 and 2 fail, 3
//     passes. The adds after 1's and 2's tests are ordered after neither,
//     so on another timing they land first: both are forced.
//   - "add after the test": rank 1 tells rank 2 (@T) after its test and
//     rank 2 adds only after it, so rank 1's test can read rank 3's add
//     and not rank 2's (2 of 3): not forced; rank 3's can read rank 2's.
//   - "one short": want 4 of 3 adds: none can pass.
//   - "one adder": rank 1 adds three times and rank 0, which adds nothing,
//     tests between (a count polled in a loop, hazards/poll_chunks): the
//     one agent's count keeps its path.
//   - "a set after": rank 2 sets the word after rank 1's failed test: the
//     value rank 1 can read is no sum at hand (not forced).
//
// On the detector before session 27 (no Forced) no test was decided, and
// ln_bwd_last_block's verdict followed which tests the timing passed.
func TestFailedTestForced(t *testing.T) {
	type step struct {
		rank int32
		do   string // "add", "test", "tell" (notify @T of rank 2), "hear" (rank 2 waits for it), "set"
	}
	for _, tc := range []struct {
		name  string
		want  int64
		steps []step
		force []int32 // ranks whose test is forced
	}{
		{"last block", 3, []step{{1, "add"}, {1, "test"}, {2, "add"}, {2, "test"}, {3, "add"}, {3, "test"}}, []int32{1, 2}},
		{"add after the test", 3, []step{{1, "add"}, {1, "test"}, {1, "tell"}, {3, "add"}, {3, "test"}, {2, "hear"}, {2, "add"}, {2, "test"}}, []int32{3}},
		{"one short", 4, []step{{1, "add"}, {1, "test"}, {2, "add"}, {2, "test"}, {3, "add"}, {3, "test"}}, nil},
		{"one adder", 3, []step{{1, "add"}, {0, "test"}, {1, "add"}, {1, "add"}}, nil},
		{"a set after", 3, []step{{1, "add"}, {1, "test"}, {2, "set"}, {2, "add"}, {3, "add"}, {3, "test"}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSim(Options{})
			p := &prog{}
			nt := p.op("tnotify", 42, S)
			tt := p.op("ttest", 50, S)
			tt.Args = []asm.Arg{{Kind: asm.ArgReg}, {Kind: asm.ArgGM, GM: sigCnt}, {Kind: asm.ArgScalar, Val: asm.CExpr{Const: true, Val: tc.want}}}
			tt.Attrs = []asm.CAttr{{Key: "cmp", Word: "ge", IsWord: true}}
			tw := twaitOp(p, 60, sigArr, 1, "ge")
			startCounterRun(s, true)
			val := int64(0)
			for _, st := range tc.steps {
				switch st.do {
				case "add":
					val++
					s.ev(machine.Event{Kind: machine.EvNotify, Agent: ag(st.rank, 0, S), Op: nt, Word: "add", Value: 1, Accesses: cntWord(true)})
				case "set":
					val = 0
					s.ev(machine.Event{Kind: machine.EvNotify, Agent: ag(st.rank, 0, S), Op: nt, Word: "set", Value: 0, Accesses: cntWord(true)})
				case "test":
					k := machine.EvSignalTest
					if val >= tc.want {
						k = machine.EvSignalWait
					}
					s.ev(machine.Event{Kind: k, Agent: ag(st.rank, 0, S), Op: tt, Value: val, Want: tc.want, Accesses: cntWord(false)})
				case "tell":
					s.ev(machine.Event{Kind: machine.EvNotify, Agent: ag(st.rank, 0, S), Op: nt, Word: "add", Value: 1, Accesses: arrWord(true)})
				case "hear":
					s.ev(machine.Event{Kind: machine.EvSignalWait, Agent: ag(st.rank, 0, S), Op: tw, Value: 1, Want: 1, Accesses: arrWord(false)})
				}
			}
			s.ev(machine.Event{Kind: machine.EvRunEnd})
			f := s.d.Forced()
			var got []int32
			if f != nil {
				for k := range f.tests {
					got = append(got, k.rank)
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.force) {
				t.Errorf("forced the tests of ranks %v, want %v", got, tc.force)
			}
			// The next pass asks by agent, run and count.
			next := New(Options{Force: f})
			for _, r := range tc.force {
				if !next.ForceTest(ag(r, 0, S), 0, 0) || next.ForceTest(ag(r, 0, S), 0, 1) {
					t.Errorf("rank %d's first test: not forced alone in the next pass", r)
				}
			}
			if len(tc.force) > 0 != next.ForcesTests() {
				t.Errorf("ForcesTests = %v with %d forced", next.ForcesTests(), len(tc.force))
			}
		})
	}
}
