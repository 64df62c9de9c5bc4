package machine

import (
	"testing"
)

type stallObs struct {
	stalls, execs []Event
}

func (o *stallObs) Observe(e *Event) {
	switch {
	case e.Kind == EvStall && (e.Reason == "link busy" || e.Reason == "GM port busy"):
		o.stalls = append(o.stalls, *e)
	case e.Kind == EvExec:
		o.execs = append(o.execs, *e)
	}
}

// TestContentionStalls: allgather_gemm's two ranks push their chunks over
// the same links and GM ports at once, so some transfers wait for a shared
// resource. Each wait is reported as a stall slice that starts with the
// transfer's own slice and ends inside it.
func TestContentionStalls(t *testing.T) {
	obs := &stallObs{}
	if _, _, err := runObj(t, assembleFile(t, "../programs/allgather_gemm/allgather_gemm.pto"), Options{TimingOnly: true, Observers: []Observer{obs}}); err != nil {
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
	if reasons["link busy"] == 0 || reasons["GM port busy"] == 0 {
		t.Errorf("stall reasons %v: want both link and GM port contention", reasons)
	}
}
