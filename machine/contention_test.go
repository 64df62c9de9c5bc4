package machine

import (
	"strings"
	"testing"

	"github.com/ptoasm/ptoasm/pipes"
)

type stallObs struct {
	stalls, execs []Event
}

func (o *stallObs) Observe(e *Event) {
	switch {
	case e.Kind == EvStall && (e.Reason == "link busy" || e.Reason == "GM port busy" || e.Reason == "L2 port busy"):
		o.stalls = append(o.stalls, *e)
	case e.Kind == EvExec:
		o.execs = append(o.execs, *e)
	}
}

// TestContentionStalls: allgather_gemm's two ranks push their chunks over
// the same links and memory ports at once, so some transfers wait for a
// shared resource: a link, or the destination die's L2 port (a remote write
// lands in L2; with the L2 off, l2.size=0, on the HBM port). Each wait is reported as a stall slice that starts with the
// transfer's own slice and ends inside it.
func TestContentionStalls(t *testing.T) {
	// The memory port that shows the waits: the HBM port without an L2, the
	// L2 port when a slow one makes it the shared bottleneck.
	for _, tc := range []struct{ set, reason string }{
		{"l2.size=0", "GM port busy"},
		{"l2.bw=64", "L2 port busy"},
	} {
		t.Run(tc.set, func(t *testing.T) {
			prof := pipes.DefaultProfile().Clone()
			k, v, _ := strings.Cut(tc.set, "=")
			if err := prof.Set(k, v); err != nil {
				t.Fatal(err)
			}
			obs := &stallObs{}
			if _, _, err := runObj(t, assembleFile(t, "../programs/allgather_gemm/allgather_gemm.pto"),
				Options{Profile: prof, TimingOnly: true, Observers: []Observer{obs}}); err != nil {
				t.Fatal(err)
			}
			reasons := map[string]int{}
			for _, s := range obs.stalls {
				reasons[s.Reason]++
				if s.End <= s.Start {
					t.Errorf("empty stall %+v", s)
				}
				inside := false
				for _, x := range obs.execs {
					if x.Agent == s.Agent && x.Op == s.Op && x.Start == s.Start && s.End <= x.End {
						inside = true
						break
					}
				}
				if !inside {
					t.Errorf("%s stall [%d, %d) on %v is not inside a transfer of its op", s.Reason, s.Start, s.End, s.Agent)
				}
			}
			if reasons["link busy"] == 0 || reasons[tc.reason] == 0 {
				t.Errorf("stall reasons %v: want both link and %s contention", reasons, tc.reason)
			}
		})
	}
}
