package hazard

import (
	"fmt"
	"slices"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
)

// TestWaitAsyncJoinsIssuePrefix: a wait_async covers the copies of its core
// up to the one its event names (Event.Value, an issue number), not later
// ones, whichever order the copies landed in. Copy A (issue 1) writes the
// first half of @A, copy B (issue 2) the second; after the wait a load
// reads each half. A wait covering A only leaves the load of B's half racing
// B, also when B landed first: the detector runs a core's copies in issue
// order (sdmaorder.go), so B's epoch is after A's and the wait's prefix
// stops before it. Run in landing order, a B that landed first came before
// A on the SDMA agent's clock, the wait on A joined it too, and the load
// of A's half was not seen to be ordered by the wait either.
func TestWaitAsyncJoinsIssuePrefix(t *testing.T) {
	for _, tc := range []struct {
		name    string
		bFirst  bool
		covered int64 // the wait's Value: the newest copy it covers
		want    []string
	}{
		{"A lands first, wait covers A", false, 1, []string{"RAW t.pto:11 t.pto:14"}},
		{"B lands first, wait covers A", true, 1, []string{"RAW t.pto:11 t.pto:14"}},
		{"A lands first, wait covers both", false, 2, nil},
		{"B lands first, wait covers both", true, 2, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p prog
			getA := p.op("tget_async", 10, asm.PipeS)
			getB := p.op("tget_async", 11, asm.PipeS)
			wait := p.op("wait_async", 12, asm.PipeS)
			ldA := p.op("tload", 13, asm.PipeMTE2)
			ldB := p.op("tload", 14, asm.PipeMTE2)
			s := newSim(Options{})
			s.hostInit(gmA, 0, 0)
			sc := ag(0, 0, asm.PipeS)
			s.ev(machine.Event{Kind: machine.EvIssue, Agent: sc, Target: asm.PipeS, Op: getA, Issue: 1})
			s.ev(machine.Event{Kind: machine.EvIssue, Agent: sc, Target: asm.PipeS, Op: getB, Issue: 2})
			land := func(op *asm.COp, n, lo int64) {
				s.ev(machine.Event{Kind: machine.EvExec, Agent: machine.Agent{Rank: 0, Core: -1, Pipe: asm.PipeInvalid},
					IssueCore: 0, Issue: n, Op: op, Step: "sdma", Iter: []int64{},
					Accesses: []machine.Access{gmAcc(gmA, 0, lo, lo+0x100, true)}})
			}
			if tc.bFirst {
				land(getB, 2, 0x100)
				land(getA, 1, 0)
			} else {
				land(getA, 1, 0)
				land(getB, 2, 0x100)
			}
			s.ev(machine.Event{Kind: machine.EvExec, Agent: sc, Op: wait, Value: tc.covered})
			s.issue(0, 0, ldA, asm.PipeMTE2)
			s.issue(0, 0, ldB, asm.PipeMTE2)
			s.exec(ag(0, 0, asm.PipeMTE2), ldA, nil, gmAcc(gmA, 0, 0, 0x100, false))
			s.exec(ag(0, 0, asm.PipeMTE2), ldB, nil, gmAcc(gmA, 0, 0x100, 0x200, false))
			var got []string
			for _, f := range s.d.Findings() {
				got = append(got, fmt.Sprintf("%s t.pto:%d t.pto:%d", f.Kind, f.First.Line, f.Second.Line))
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("findings %q, want %q", got, tc.want)
			}
		})
	}
}
