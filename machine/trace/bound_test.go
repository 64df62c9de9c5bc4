package trace

import (
	"bytes"
	"encoding/json"
	"sort"
	"testing"
)

// TestChromeLimits: over its slice limit a trace is aggregated per lane and
// window, within the limits, with every lane of the full trace still
// present, slices on a lane disjoint, counters thinned and flows capped.
func TestChromeLimits(t *testing.T) {
	rec, m := runProgram(t, "allgather_gemm", Options{})
	parse := func(lim Limits) (map[string]int, map[[2]int]int, map[[2]int][][2]int64, json.RawMessage) {
		var b bytes.Buffer
		if err := rec.WriteChromeOpts(&b, ChromeOptions{ClockHz: m.Profile().ClockHz, Limits: lim}); err != nil {
			t.Fatal(err)
		}
		var doc struct {
			OtherData struct {
				Aggregated json.RawMessage `json:"aggregated"`
			} `json:"otherData"`
			TraceEvents []struct {
				Ph       string `json:"ph"`
				Name     string `json:"name"`
				Pid, Tid int
				Ts, Dur  int64
			} `json:"traceEvents"`
		}
		if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
			t.Fatal(err)
		}
		count := map[string]int{}
		lanes := map[[2]int]int{}
		spans := map[[2]int][][2]int64{}
		for _, e := range doc.TraceEvents {
			count[e.Ph]++
			k := [2]int{e.Pid, e.Tid}
			switch {
			case e.Ph == "M" && e.Name == "thread_name":
				lanes[k] += 0
			case e.Ph == "X":
				lanes[k]++
				spans[k] = append(spans[k], [2]int64{e.Ts, e.Ts + e.Dur})
			}
		}
		return count, lanes, spans, doc.OtherData.Aggregated
	}
	full, fullLanes, _, agg := parse(Limits{})
	if agg != nil {
		t.Fatal("an unlimited trace says it is aggregated")
	}
	lim := Limits{MaxSlices: full["X"] / 10, MaxCounterSamples: full["C"] / 10, MaxFlows: 10}
	got, lanes, spans, agg := parse(lim)
	if agg == nil {
		t.Error("otherData does not say the trace is aggregated")
	}
	if got["X"] > lim.MaxSlices || got["C"] > lim.MaxCounterSamples || got["s"] != 0 || got["f"] != 0 {
		t.Errorf("aggregated trace: %v, limits %+v (and no flows)", got, lim)
	}
	if len(lanes) != len(fullLanes) {
		t.Errorf("%d lanes, the full trace has %d", len(lanes), len(fullLanes))
	}
	for k, n := range lanes {
		if n == 0 {
			t.Errorf("lane %v has no slice", k)
		}
	}
	for k, ss := range spans {
		sort.Slice(ss, func(i, j int) bool { return ss[i][0] < ss[j][0] })
		for i := 1; i < len(ss); i++ {
			if ss[i][0] < ss[i-1][1] {
				t.Fatalf("lane %v: aggregated slices %v and %v overlap", k, ss[i-1], ss[i])
			}
		}
	}
	// Under the slice limit, flows beyond MaxFlows are left out in pairs.
	got, _, _, _ = parse(Limits{MaxFlows: 10})
	if got["s"] != 10 || got["f"] != 10 || got["X"] != full["X"] {
		t.Errorf("flow limit 10: %v (full %v)", got, full)
	}
}
