package trace

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
	"github.com/ptoasm/ptoasm/pipes"
)

// valueAt is a track's value of series s at cycle t (0 before its first sample).
func valueAt(tr *CounterTrack, s int, t int64) int64 {
	v := int64(0)
	for _, c := range tr.Samples {
		if c.T > t {
			break
		}
		v = c.Values[s]
	}
	return v
}

func peaks(tr *CounterTrack) map[string]int64 {
	out := map[string]int64{}
	for _, c := range tr.Samples {
		for i, v := range c.Values {
			out[tr.Series[i]] = max(out[tr.Series[i]], v)
		}
	}
	return out
}

// checkTrack checks what every counter track promises: samples in time
// order, one per change, no negative value.
func checkTrack(t *testing.T, tr *CounterTrack) {
	t.Helper()
	if len(tr.Samples) == 0 {
		t.Errorf("%s %s: no samples", tr.Place, tr.Name)
		return
	}
	for k, c := range tr.Samples {
		if len(c.Values) != len(tr.Series) {
			t.Fatalf("%s %s: %d values for %d series", tr.Place, tr.Name, len(c.Values), len(tr.Series))
		}
		for i, v := range c.Values {
			if v < 0 {
				t.Errorf("%s %s %s = %d at cycle %d", tr.Place, tr.Name, tr.Series[i], v, c.T)
			}
		}
		if k > 0 {
			p := tr.Samples[k-1]
			if c.T <= p.T {
				t.Errorf("%s %s: sample at %d after one at %d", tr.Place, tr.Name, c.T, p.T)
			}
			if equalVals(p.Values, c.Values) {
				t.Errorf("%s %s: sample at %d repeats the previous values", tr.Place, tr.Name, c.T)
			}
		}
	}
}

// TestCountersGemmDB checks the counters of the double-buffered GEMM against
// its tile declarations: each L0 buffer pair is full at some moment, the
// accumulator is live as a whole, and L1 holds more than one K tile (the
// prefetch overlaps the extracts) but never more than the two declared.
func TestCountersGemmDB(t *testing.T) {
	obj := assembleProgram(t, "gemm_db")
	decl := map[asm.Space]int64{} // bytes of every declared tile element
	for _, k := range obj.Kernels {
		for _, ti := range k.Tiles {
			decl[ti.Space] += ti.Bytes * int64(max(ti.Count, 1))
		}
	}
	rec, _ := runProgram(t, "gemm_db", Options{})
	tracks := rec.Counters(Filter{})
	var q, occ *CounterTrack
	for i := range tracks {
		checkTrack(t, &tracks[i])
		switch tracks[i].Name {
		case "queue depth":
			q = &tracks[i]
		case "live bytes":
			occ = &tracks[i]
		}
	}
	if len(tracks) != 2 || q == nil || occ == nil {
		t.Fatalf("got %d tracks, want queue depth and live bytes of the one AIC", len(tracks))
	}
	if d := cmp.Diff([]string{"MTE2", "MTE1", "M", "FIX"}, q.Series); d != "" {
		t.Errorf("queue series (-want +got):\n%s", d)
	}
	last := q.Samples[len(q.Samples)-1]
	for i, v := range last.Values {
		if v != 0 {
			t.Errorf("queue depth of %s ends at %d", q.Series[i], v)
		}
	}
	prof := pipes.DefaultProfile()
	for p, v := range peaks(q) {
		pipe, ok := asm.ParsePipe(p)
		depth := int64(0)
		if ok {
			depth = prof.QueueDepth[pipe]
		}
		if v < 1 || int64(v) > depth { // a queue never holds more than the profile's depth
			t.Errorf("queue depth of %s peaks at %d, want 1..%d", p, v, depth)
		}
	}
	pk := peaks(occ)
	for _, s := range []asm.Space{asm.L0A, asm.L0B, asm.L0C} {
		if pk[s.String()] != decl[s] || decl[s] == 0 {
			t.Errorf("%s peak %d bytes, want every declared tile live once: %d", s, pk[s.String()], decl[s])
		}
	}
	oneK := decl[asm.L1] / 2 // %a1[2] and %b1[2]: one K tile is half of L1's tiles
	if l1 := pk["L1"]; l1 <= oneK || l1 > decl[asm.L1] {
		t.Errorf("L1 peak %d bytes, want more than one K tile (%d) and at most both (%d)", l1, oneK, decl[asm.L1])
	}
	for i, v := range occ.Samples[len(occ.Samples)-1].Values {
		if v != 0 {
			t.Errorf("%s ends with %d live bytes", occ.Series[i], v)
		}
	}
}

// TestCounterArithmetic drives a Recorder with hand-made events and checks
// the step functions exactly.
func TestCounterArithmetic(t *testing.T) {
	on := func(p asm.Pipe) machine.Agent { return machine.Agent{Rank: 0, Core: 0, Pipe: p} }
	acc := func(lo, hi int64, w bool) machine.Access {
		return machine.Access{Space: asm.UB, Rank: 0, Core: 0, Lo: lo, Hi: hi, Write: w}
	}
	tput := &asm.COp{}
	evs := []machine.Event{
		{Kind: machine.EvIssue, Agent: on(asm.PipeS), Target: asm.PipeMTE2, Start: 0, End: 0},
		{Kind: machine.EvIssue, Agent: on(asm.PipeS), Target: asm.PipeMTE2, Start: 1, End: 1},
		{Kind: machine.EvIssue, Agent: on(asm.PipeS), Target: asm.PipeS, Op: tput, Start: 2, End: 2},
		// Value 1: bytes 0..100 written 0..10; 0..50 read until 30, 50..100 never read.
		{Kind: machine.EvExec, Agent: on(asm.PipeMTE2), Start: 0, End: 10, Accesses: []machine.Access{acc(0, 100, true)}},
		{Kind: machine.EvExec, Agent: on(asm.PipeMTE2), Start: 20, End: 30, Accesses: []machine.Access{acc(0, 50, false)}},
		// The composite's step: queued from its issue at 2.
		{Kind: machine.EvExec, Agent: on(asm.PipeMTE2), Op: tput, Step: "tput.load", Start: 30, End: 35},
		{Kind: machine.EvIssue, Agent: on(asm.PipeS), Target: asm.PipeV, Start: 38, End: 38},
		{Kind: machine.EvIssue, Agent: on(asm.PipeS), Target: asm.PipeV, Start: 38, End: 38},
		{Kind: machine.EvIssue, Agent: on(asm.PipeS), Target: asm.PipeV, Start: 38, End: 38},
		// Value 2 overwrites all of it at 40..50; its upper half is read until 70.
		{Kind: machine.EvExec, Agent: on(asm.PipeV), Start: 40, End: 50, Accesses: []machine.Access{acc(0, 100, true)}},
		{Kind: machine.EvExec, Agent: on(asm.PipeV), Start: 60, End: 70, Accesses: []machine.Access{acc(50, 100, false), acc(200, 300, false)}},
		// An in-place update: read then rewrite 50..100 at 80..90, never read again.
		{Kind: machine.EvExec, Agent: on(asm.PipeV), Start: 80, End: 90, Accesses: []machine.Access{acc(50, 100, false), acc(50, 100, true)}},
		{Kind: machine.EvRunEnd, Agent: machine.Agent{Core: -1}, Start: 90, End: 90},
	}
	rec := New(Options{})
	for i := range evs {
		rec.Observe(&evs[i])
	}
	type sample struct {
		T int64
		V []int64
	}
	flat := func(tr CounterTrack) []sample {
		var out []sample
		for _, c := range tr.Samples {
			out = append(out, sample{c.T, c.Values})
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		f     Filter
		queue []sample
		live  []sample
	}{
		{
			name: "all",
			// MTE2: issued at 0 and 1, the tput step from the tput's issue at 2; they
			// leave at 10, 30, 35. V: three issued at 38, done at 50, 70, 90.
			queue: []sample{{0, []int64{1, 0}}, {1, []int64{2, 0}}, {2, []int64{3, 0}}, {10, []int64{2, 0}},
				{30, []int64{1, 0}}, {35, []int64{0, 0}}, {38, []int64{0, 3}}, {50, []int64{0, 2}},
				{70, []int64{0, 1}}, {90, []int64{0, 0}}},
			// Value 1: 0..50 live 0..30, 50..100 only while written (0..10). Value 2:
			// 0..50 never read (40..50); 50..100 read by the update, so live until the
			// update starts to overwrite it (40..80). Value 3: 80..90. The read of
			// never-written bytes 200..300 adds nothing.
			live: []sample{{0, []int64{100}}, {10, []int64{50}}, {30, []int64{0}}, {40, []int64{100}},
				{50, []int64{50}}, {90, []int64{0}}},
		},
		{
			name: "window",
			f:    Filter{From: 5, To: 60},
			queue: []sample{{5, []int64{3, 0}}, {10, []int64{2, 0}}, {30, []int64{1, 0}}, {35, []int64{0, 0}},
				{38, []int64{0, 3}}, {50, []int64{0, 2}}},
			live: []sample{{5, []int64{100}}, {10, []int64{50}}, {30, []int64{0}}, {40, []int64{100}}, {50, []int64{50}}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tracks := rec.Counters(tc.f)
			if len(tracks) != 2 {
				t.Fatalf("%d tracks, want 2", len(tracks))
			}
			if d := cmp.Diff(tc.queue, flat(tracks[0])); d != "" {
				t.Errorf("queue depth (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.live, flat(tracks[1])); d != "" {
				t.Errorf("live bytes (-want +got):\n%s", d)
			}
		})
	}
}

// TestChromeCounters checks the C events of a real trace: on named
// processes, in time order per track, never negative, queue depth back to 0.
func TestChromeCounters(t *testing.T) {
	b, _ := chromeBytes(t, "ffn_grid/unified_fixed")
	var f chromeFile
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	procs := map[int]bool{}
	type key struct {
		pid  int
		name string
	}
	lastTs := map[key]float64{}
	lastVals := map[key]map[string]int64{}
	n := 0
	for _, e := range f.TraceEvents {
		if e.Ph == "M" && e.Name == "process_name" {
			procs[e.Pid] = true
		}
		if e.Ph != "C" {
			continue
		}
		n++
		if !procs[e.Pid] {
			t.Fatalf("counter %q on unnamed process %d", e.Name, e.Pid)
		}
		k := key{e.Pid, e.Name}
		if p, ok := lastTs[k]; ok && *e.Ts <= p {
			t.Errorf("%v: ts %v after %v", k, *e.Ts, p)
		}
		lastTs[k] = *e.Ts
		var vals map[string]int64
		if err := json.Unmarshal(e.Args, &vals); err != nil || len(vals) == 0 {
			t.Fatalf("counter args %s: %v", e.Args, err)
		}
		for s, v := range vals {
			if v < 0 {
				t.Errorf("%v %s = %d", k, s, v)
			}
		}
		lastVals[k] = vals
	}
	if n == 0 {
		t.Fatal("no counter events")
	}
	queues := 0
	for k, vals := range lastVals {
		if k.name != "queue depth" {
			continue
		}
		queues++
		for s, v := range vals {
			if v != 0 {
				t.Errorf("process %d: queue depth %s ends at %d", k.pid, s, v)
			}
		}
	}
	if queues != 4 {
		t.Errorf("%d queue depth tracks, want one per core (4)", queues)
	}
}

// TestCounterFilters checks that a record-time place and window filter gives
// the same values as the full recording, sampled inside the window.
func TestCounterFilters(t *testing.T) {
	all, _ := runProgram(t, "ffn_grid/unified_fixed", Options{})
	f := Filter{Cores: []string{"aic1"}, From: 1000, To: 3000}
	some, _ := runProgram(t, "ffn_grid/unified_fixed", Options{Filter: f})
	got := some.Counters(f)
	if len(got) != 2 {
		t.Fatalf("%d tracks, want the 2 of r0.aic1", len(got))
	}
	full := map[string]*CounterTrack{}
	tracks := all.Counters(Filter{})
	for i := range tracks {
		full[tracks[i].Place+" "+tracks[i].Name] = &tracks[i]
	}
	for i := range got {
		tr := &got[i]
		checkTrack(t, tr)
		if tr.Place != "r0.aic1" {
			t.Errorf("track of %s kept", tr.Place)
		}
		ref := full[tr.Place+" "+tr.Name]
		if ref == nil || !cmp.Equal(ref.Series, tr.Series) {
			t.Fatalf("%s %s: no matching unfiltered track", tr.Place, tr.Name)
		}
		if tr.Samples[0].T != f.From {
			t.Errorf("%s: first sample at %d, want the window start %d", tr.Name, tr.Samples[0].T, f.From)
		}
		for _, c := range tr.Samples {
			if c.T < f.From || c.T >= f.To {
				t.Errorf("%s: sample at %d outside [%d, %d)", tr.Name, c.T, f.From, f.To)
			}
			for s, v := range c.Values {
				if w := valueAt(ref, s, c.T); v != w {
					t.Errorf("%s %s at %d: %d, unfiltered %d", tr.Name, tr.Series[s], c.T, v, w)
				}
			}
		}
	}
	var a, b bytes.Buffer
	if err := some.WriteChrome(&a, 0); err != nil {
		t.Fatal(err)
	}
	if err := some.WriteChrome(&b, 0); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("writing the same recording twice differs")
	}
}
