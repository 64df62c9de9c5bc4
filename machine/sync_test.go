package machine

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
)

func execsOn(evs []Event, p asm.Pipe) []Event {
	var out []Event
	for _, e := range evs {
		if e.Kind == EvExec && e.Agent.Pipe == p {
			out = append(out, e)
		}
	}
	return out
}

func TestFlagOrdersPipes(t *testing.T) {
	src := `
gm X : f32 [16, 64] = random(seed=5, lo=1, hi=3, int)
gm Y : f32 [16, 64] = poison
kernel k : aiv {
    tile %x : vec f32 [16, 64]
    tile %y : vec f32 [16, 64]
    tload %x, @X[0, 0]
    set_flag MTE2, V, 0
    wait_flag MTE2, V, 0
    tadds %y, %x, 1.0
    set_flag V, MTE3, 0
    wait_flag V, MTE3, 0
    tstore @Y[0, 0], %y
}
launch ranks=1 { run k blocks=1 }
expect @Y == add(@X, 1) tol 0
`
	rec := &recorder{}
	_, r, err := runObj(t, assemble(t, src), Options{Observers: []Observer{rec}})
	if err != nil {
		t.Fatal(err)
	}
	ld, v, st := execsOn(rec.evs, asm.PipeMTE2), execsOn(rec.evs, asm.PipeV), execsOn(rec.evs, asm.PipeMTE3)
	if len(ld) != 1 || len(v) != 1 || len(st) != 1 {
		t.Fatalf("execs: %d loads, %d vector, %d stores", len(ld), len(v), len(st))
	}
	if v[0].Start < ld[0].End || st[0].Start < v[0].End {
		t.Errorf("not ordered: load %d-%d, tadds %d-%d, store %d-%d", ld[0].Start, ld[0].End, v[0].Start, v[0].End, st[0].Start, st[0].End)
	}
	if len(r.Checks) != 1 || !r.Checks[0].OK {
		t.Errorf("checks: %+v", r.Checks)
	}
}

func TestMissingFlagRace(t *testing.T) {
	// Without the MTE2→V flag the vector op reads the tile before the load
	// lands: the data shows it (poison → NaN), not only the hazard report.
	src := `
gm X : f32 [16, 64] = random(seed=5, lo=1, hi=3, int)
gm Y : f32 [16, 64] = poison
kernel k : aiv {
    tile %x : vec f32 [16, 64]
    tile %y : vec f32 [16, 64]
    tload %x, @X[0, 0]
    tadds %y, %x, 1.0
    set_flag V, MTE3, 0
    wait_flag V, MTE3, 0
    tstore @Y[0, 0], %y
}
launch ranks=1 { run k blocks=1 }
expect @Y == add(@X, 1) tol 0
`
	_, r, err := runObj(t, assemble(t, src), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Checks) != 1 || r.Checks[0].OK {
		t.Errorf("the race should corrupt Y: %+v", r.Checks)
	}
}

func TestMissingSetDeadlocks(t *testing.T) {
	src := `
kernel k : aiv {
    tile %x : vec f32 [16, 64]
    texpands %x, 1.0
    wait_flag MTE2, V, 1
    texpands %x, 2.0
}
launch ranks=1 { run k blocks=1 }
`
	rec := &recorder{kinds: map[EventKind]bool{EvDeadlock: true}}
	_, _, err := runObj(t, assemble(t, src), Options{Observers: []Observer{rec}})
	var d *DeadlockError
	if !errors.As(err, &d) {
		t.Fatalf("want a deadlock, got %v", err)
	}
	want := "wait_flag MTE2->V #1: no set_flag MTE2->V #1 is queued or pending on r0.aiv0"
	if !strings.Contains(d.Error(), want) {
		t.Errorf("explanation:\n%s\nwant it to contain %q", d.Error(), want)
	}
	if len(d.Blocked) == 0 || d.Blocked[0].Agent.Pipe != asm.PipeV || d.Blocked[0].Op == nil {
		t.Errorf("blocked: %+v", d.Blocked)
	}
	if len(rec.evs) != 1 {
		t.Errorf("%d EvDeadlock events, want 1", len(rec.evs))
	}
}

// TestDoubleSetCounts: a set over a set is counted, not a fault (pipes.
// FlagBits): the k-th wait consumes the k-th set on every timing, and the
// kernel end lists each set nobody consumed. The hazard detector reports the
// double set itself from ordering.
func TestDoubleSetCounts(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		left       int // sets listed at the kernel end
	}{
		{"set set", "set_flag V, MTE2, 3\n    set_flag V, MTE2, 3", 2},
		{"set set wait", "set_flag V, MTE2, 3\n    set_flag V, MTE2, 3\n    wait_flag V, MTE2, 3", 1},
		{"set set wait wait", "set_flag V, MTE2, 3\n    set_flag V, MTE2, 3\n    wait_flag V, MTE2, 3\n    wait_flag V, MTE2, 3", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "kernel k : aiv {\n    " + tc.body + "\n}\nlaunch ranks=1 { run k blocks=1 }\n"
			rec := &recorder{kinds: map[EventKind]bool{EvKernelEnd: true}}
			_, r, err := runObj(t, assemble(t, src), Options{Observers: []Observer{rec}})
			if err != nil || len(r.Faults) != 0 {
				t.Fatalf("want a clean run, got %v %v", err, r.Faults)
			}
			if len(rec.evs) != 1 {
				t.Fatalf("%d kernel ends", len(rec.evs))
			}
			if n := len(rec.evs[0].Flags); n != tc.left {
				t.Errorf("kernel end lists %d pending sets, want %d", n, tc.left)
			}
		})
	}
}

func TestBadDynamicEventID(t *testing.T) {
	src := `
kernel k : aiv {
    let %i = 9
    set_flag V, MTE2, %i
}
launch ranks=1 { run k blocks=1 }
`
	_, _, err := runObj(t, assemble(t, src), Options{})
	var f *Fault
	if !errors.As(err, &f) || !strings.Contains(f.Msg, "outside 0..7") {
		t.Fatalf("want a bad-id fault, got %v", err)
	}
}

func TestPipeAllDrains(t *testing.T) {
	src := `
gm X : f32 [64, 64] = zero
kernel k : aiv {
    tile %x : vec f32 [64, 64]
    tload %x, @X[0, 0]
    pipe_barrier ALL
    texpands %x, 1.0
}
launch ranks=1 { run k blocks=1 }
`
	rec := &recorder{}
	_, _, err := runObj(t, assemble(t, src), Options{Observers: []Observer{rec}})
	if err != nil {
		t.Fatal(err)
	}
	ld := execsOn(rec.evs, asm.PipeMTE2)
	var bar *Event
	for i := range rec.evs {
		if rec.evs[i].Kind == EvBarrier && rec.evs[i].Target == asm.PipeALL {
			bar = &rec.evs[i]
		}
	}
	v := execsOn(rec.evs, asm.PipeV)
	if bar == nil || len(ld) != 1 || len(v) != 1 {
		t.Fatalf("barrier %v, loads %d, vector %d", bar, len(ld), len(v))
	}
	if bar.Cycle < ld[0].End || v[0].Start < ld[0].End {
		t.Errorf("barrier at %d, vector op at %d, load ends at %d", bar.Cycle, v[0].Start, ld[0].End)
	}
}

func TestQueueFullStalls(t *testing.T) {
	src := `
kernel k : aiv {
    tile %x : vec f32 [64, 64]
    for %i = 0 to 32 {
        texpands %x, 1.0
    }
}
launch ranks=1 { run k blocks=1 }
`
	rec := &recorder{kinds: map[EventKind]bool{EvStall: true, EvExec: true}}
	_, _, err := runObj(t, assemble(t, src), Options{Observers: []Observer{rec}, TimingOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	stalls := 0
	for _, e := range rec.evs {
		if e.Kind == EvStall && e.Reason == "queue full" && e.End > e.Start {
			stalls++
		}
	}
	if stalls == 0 {
		t.Error("32 vector ops into an 8-deep queue never stalled the scalar")
	}
	v := execsOn(rec.evs, asm.PipeV)
	if len(v) != 32 {
		t.Fatalf("%d vector execs", len(v))
	}
	for i := 1; i < len(v); i++ {
		if v[i].Start < v[i-1].End {
			t.Errorf("V ran two ops at once: %d-%d then %d", v[i-1].Start, v[i-1].End, v[i].Start)
		}
		if len(v[i].Iter) != 1 || v[i].Iter[0] != int64(i) {
			t.Errorf("exec %d has iteration vector %v", i, v[i].Iter)
		}
	}
}

func TestFFTSMode2Handshake(t *testing.T) {
	src := `
kernel cube : aic {
    ffts_set FIX, 3 #mode=2
    ffts_wait 4
}
kernel vec : aiv {
    ffts_wait 3
    ffts_set MTE3, 4 #mode=2
}
launch ranks=1 { run cube + vec blocks=2 }
`
	rec := &recorder{kinds: map[EventKind]bool{EvCrossSet: true, EvCrossWait: true}}
	m, _, err := runObj(t, assemble(t, src), Options{Observers: []Observer{rec}})
	if err != nil {
		t.Fatal(err)
	}
	// Per block: the AIC's set raises both AIVs; the AIC's wait passes only
	// after both of its AIVs set.
	aivSets := map[int32]int64{}
	for _, e := range rec.evs {
		name := m.CoreName(int(e.Agent.Rank), int(e.Agent.Core))
		switch {
		case e.Kind == EvCrossSet && strings.Contains(name, "aic"):
			if len(e.Peers) != 2 {
				t.Errorf("AIC set raised %v, want both AIVs", e.Peers)
			}
		case e.Kind == EvCrossSet:
			aivSets[e.Agent.Core] = e.Cycle
		case e.Kind == EvCrossWait && strings.Contains(name, "aic"):
			block := int(e.Agent.Core)
			for _, sub := range []int{0, 1} {
				at, ok := aivSets[int32(m.nAIC+2*block+sub)]
				if !ok || at > e.Cycle {
					t.Errorf("%s passed ffts_wait at %d before AIV %d set (%v)", name, e.Cycle, sub, ok)
				}
			}
		}
	}
	if len(aivSets) != 4 {
		t.Errorf("%d AIVs set, want 4", len(aivSets))
	}
}

func TestFFTSMissingSetDeadlocks(t *testing.T) {
	src := `
kernel cube : aic {
    ffts_wait 5
}
kernel vec : aiv {
    ffts_set MTE3, 5 #mode=2
}
launch ranks=1 { run cube + vec blocks=1 }
`
	// Only one of... both AIVs set, so the AIC passes; make one AIV skip it.
	src = strings.Replace(src, "ffts_set MTE3, 5 #mode=2", "if subblock_idx == 0 { ffts_set MTE3, 5 #mode=2 }", 1)
	_, _, err := runObj(t, assemble(t, src), Options{})
	var d *DeadlockError
	if !errors.As(err, &d) || !strings.Contains(d.Error(), "ffts_wait 5: counter 0") {
		t.Fatalf("want an ffts deadlock, got %v", err)
	}
}

// TestFFTSReductionNeedsBothAIVs: a mode-1 or mode-2 reduction fires once
// both AIVs of the block have set ("once both AIVs have set": CANN
// CrossCoreSetFlag), so two sets of one AIV are not two arrivals: with its
// partner silent the waiter hangs. Counting any two arrivals passed the
// wait, and in a pipeline an AIV two tiles ahead released the AIC while its
// partner still read the slot the AIC then refilled.
func TestFFTSReductionNeedsBothAIVs(t *testing.T) {
	for _, tc := range []struct{ name, src, want string }{
		{"mode 2", `
kernel cube : aic {
    ffts_wait 5
}
kernel vec : aiv {
    if subblock_idx == 0 {
        ffts_set MTE3, 5 #mode=2
        ffts_set MTE3, 5 #mode=2
    }
}
launch ranks=1 { run cube + vec blocks=1 }
`, "ffts_wait 5: counter 0"},
		{"mode 1", `
kernel cube : aic {
}
kernel vec : aiv {
    if subblock_idx == 0 {
        ffts_set MTE3, 6 #mode=1
        ffts_set MTE3, 6 #mode=1
        ffts_wait 6
    }
}
launch ranks=1 { run cube + vec blocks=1 }
`, "ffts_wait 6: counter 0"},
	} {
		_, _, err := runObj(t, assemble(t, tc.src), Options{})
		var d *DeadlockError
		if !errors.As(err, &d) || !strings.Contains(d.Error(), tc.want) {
			t.Errorf("%s: want an ffts deadlock (%s), got %v", tc.name, tc.want, err)
		}
	}
}

func TestNotifyWaitTwoRanks(t *testing.T) {
	src := `
signal S : [4] = zero
kernel k : aiv {
    if rank == 0 {
        tnotify @S[rank=1][2], 7 #op=set
    } else {
        twait @S[2], 7 #cmp=eq
    }
}
launch ranks=2 { run k blocks=1 }
`
	rec := &recorder{kinds: map[EventKind]bool{EvNotify: true, EvSignalWait: true}}
	_, _, err := runObj(t, assemble(t, src), Options{Observers: []Observer{rec}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.evs) != 2 || rec.evs[0].Kind != EvNotify || rec.evs[1].Kind != EvSignalWait {
		t.Fatalf("events: %+v", rec.evs)
	}
	n, w := rec.evs[0], rec.evs[1]
	if n.Agent.Rank != 0 || w.Agent.Rank != 1 || w.Cycle < n.Cycle {
		t.Errorf("notify on rank %d at %d, wait on rank %d at %d", n.Agent.Rank, n.Cycle, w.Agent.Rank, w.Cycle)
	}
	if n.Accesses[0].Rank != 1 || n.Accesses[0].Lo != w.Accesses[0].Lo {
		t.Errorf("notify wrote %+v, wait read %+v", n.Accesses[0], w.Accesses[0])
	}

	// Waiting for a value nobody writes is a deadlock that names the value.
	bad := strings.Replace(src, "twait @S[2], 7", "twait @S[2], 8", 1)
	_, _, err = runObj(t, assemble(t, bad), Options{})
	var d *DeadlockError
	if !errors.As(err, &d) || !strings.Contains(d.Error(), "twait @S[2] == 8 on rank 1: current value 7") {
		t.Fatalf("want a twait deadlock, got %v", err)
	}
}

// TestSignalWaitWant: a satisfied twait or ttest reports the value it
// compared the signal with, also when that value is computed (a loop's
// generation, an epoch loaded from GM), in timing-only runs too: the
// stale-signal check reads it.
func TestSignalWaitWant(t *testing.T) {
	src := `
signal S : [1] = zero
gm E : i32 [1] = fill(5)
kernel k : aiv {
    %e = ld @E[0]
    for %g = 0 to 3 {
        tnotify @S[0], 1 #op=add
        twait @S[0], %e - 5 + %g + 1 #cmp=ge
    }
    %r = ttest @S[0], %e - 3 #cmp=ge
}
launch ranks=1 { run k blocks=1 }
`
	for _, timingOnly := range []bool{false, true} {
		var got [][2]int64
		for _, e := range signalWaits(t, src, timingOnly) {
			got = append(got, [2]int64{e.Value, e.Want})
		}
		if want := [][2]int64{{1, 1}, {2, 2}, {3, 3}, {3, 2}}; !slices.Equal(got, want) {
			t.Errorf("timing-only %v: (value, want) %v, want %v", timingOnly, got, want)
		}
	}
}

// TestSignalWaitWords: a satisfied wait over several words reports what
// each held (the detector orders the waiter after each word's needed adds
// only), timing-only too; a one-word wait reports none.
func TestSignalWaitWords(t *testing.T) {
	src := `
signal S : [3] = zero
kernel k : aiv {
    tnotify @S[0], 2 #op=add
    tnotify @S[1], 1 #op=add
    tnotify @S[2], 3 #op=add
    twait @S[0], 1 #cmp=ge #count=3
    %r = ttest @S[1], 1 #cmp=ge #count=2
    twait @S[2], 3 #cmp=ge
}
launch ranks=1 { run k blocks=1 }
`
	for _, timingOnly := range []bool{false, true} {
		var got []string
		for _, e := range signalWaits(t, src, timingOnly) {
			got = append(got, fmt.Sprint(e.Value, e.Words))
		}
		if want := []string{"3 [2 1 3]", "3 [1 3]", "3 []"}; !slices.Equal(got, want) {
			t.Errorf("timing-only %v: (value, words) %q, want %q", timingOnly, got, want)
		}
	}
}

// signalWaits runs src and returns its EvSignalWait events.
func signalWaits(t *testing.T, src string, timingOnly bool) []Event {
	t.Helper()
	rec := &recorder{kinds: map[EventKind]bool{EvSignalWait: true}}
	_, _, err := runObj(t, assemble(t, src), Options{Observers: []Observer{rec}, TimingOnly: timingOnly})
	if err != nil {
		t.Fatal(err)
	}
	return rec.evs
}

func TestTPutChunks(t *testing.T) {
	src := `
gm A : f32 [64, 64] = expr(i * 64 + j + rank * 10000)
window W : f32 [64, 64] = poison
kernel k : aiv {
    tile %ping : vec f32 [16, 64]
    tile %pong : vec f32 [16, 64]
    tput @W[rank=(rank + 1) % nranks][0, 0], @A[0, 0], %ping, %pong #rows=64 #cols=64
}
launch ranks=2 { run k blocks=1 }
expect @W[rank=1] == @A[rank=0] tol 0
expect @W[rank=0] == @A[rank=1] tol 0
`
	rec := &recorder{kinds: map[EventKind]bool{EvExec: true}}
	_, r, err := runObj(t, assemble(t, src), Options{Observers: []Observer{rec}})
	if err != nil {
		t.Fatal(err)
	}
	steps := map[string]int{}
	for _, e := range rec.evs {
		steps[e.Step]++
		if e.Step == "tput.store" && e.Accesses[0].Rank == e.Agent.Rank {
			t.Errorf("store of rank %d wrote its own GM", e.Agent.Rank)
		}
	}
	if steps["tput.load"] != 8 || steps["tput.store"] != 8 {
		t.Errorf("steps %v, want 4 loads and 4 stores per rank", steps)
	}
	for _, c := range r.Checks {
		if !c.OK {
			t.Errorf("%s: %s", c.Name, c.Msg)
		}
	}
	// Ping-pong: the load of chunk 1 overlaps the store of chunk 0.
	var ld1, st0 *Event
	nl, ns := 0, 0
	for i := range rec.evs {
		e := &rec.evs[i]
		if e.Agent.Rank != 0 {
			continue
		}
		switch e.Step {
		case "tput.load":
			if nl == 1 {
				ld1 = e
			}
			nl++
		case "tput.store":
			if ns == 0 {
				st0 = e
			}
			ns++
		}
	}
	if ld1 == nil || st0 == nil || ld1.Start >= st0.End {
		t.Errorf("no overlap between the load of chunk 1 and the store of chunk 0")
	}
}

// TestSDMAEventIterAtIssue: an SDMA copy's event comes when the copy lands,
// but names its issue: the issuing core (IssueCore, with Agent.Core -1) and
// the iteration vector of the tget_async that queued it, not the scalar's
// when the copy landed (here every copy lands after the loop, once the
// scalar is in the wait_async). The hazard detector orders the copy by both.
func TestSDMAEventIterAtIssue(t *testing.T) {
	obj := assemble(t, `
window Src : f32 [4, 64] = expr(i * 64 + j)
gm Dst : f32 [4, 64] = zero
kernel k : aiv {
    if rank == 0 {
        if block_idx == 1 {
            for %k = 0 to 4 {
                %e = tget_async @Dst[%k, 0], @Src[rank=1][%k, 0] #rows=1 #cols=64
            }
            wait_async %e
        }
    }
}
launch ranks=2 { run k blocks=2 }
`)
	rec := &recorder{kinds: map[EventKind]bool{EvExec: true}}
	m, _, err := runObj(t, obj, Options{Observers: []Observer{rec}})
	if err != nil {
		t.Fatal(err)
	}
	var got [][]int64
	for _, e := range rec.evs {
		if e.Step != "sdma" {
			continue
		}
		if n := m.CoreName(0, int(e.IssueCore)); e.Agent.Core != -1 || n != "r0.aiv1" {
			t.Errorf("copy %v: Agent.Core %d, issuing core %s; want -1, r0.aiv1", e.Iter, e.Agent.Core, n)
		}
		got = append(got, e.Iter)
	}
	want := [][]int64{{0}, {1}, {2}, {3}}
	if !slices.EqualFunc(got, want, slices.Equal[[]int64]) {
		t.Errorf("the copies' iteration vectors are %v, want %v", got, want)
	}
}

// TestWaitAsyncCoversEarlierCopies: wait_async on an event waits for that
// copy and every copy its core issued before it, not later ones (pto-isa's
// CheckPostDoneIds polls the done records up to the event's post id), and
// its event names the newest copy it covered (Value: the copy's Issue; 0
// when an earlier wait covered them all), which the hazard detector joins.
// The first copy is small and the second large, so a wait on the first
// ends before the second lands.
func TestWaitAsyncCoversEarlierCopies(t *testing.T) {
	for _, tc := range []struct {
		name, waits string
		// want: per wait, the copy (0 first, 1 second, -1 none) it covers
		// last, and whether it ends before the second copy lands.
		cover  []int
		before []bool
	}{
		{"older", "wait_async %ea", []int{0}, []bool{true}},
		{"newer", "wait_async %eb", []int{1}, []bool{false}},
		{"older after newer", "wait_async %eb\n wait_async %ea", []int{1, -1}, []bool{false, false}},
		{"newer after older", "wait_async %ea\n wait_async %eb", []int{0, 1}, []bool{true, false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj := assemble(t, `
window Src : f32 [68, 64] = expr(i * 64 + j)
gm A : f32 [4, 64] = zero
gm B : f32 [64, 64] = zero
kernel k : aiv {
    if rank == 0 {
        %ea = tget_async @A[0, 0], @Src[rank=1][0, 0] #rows=4 #cols=64
        %eb = tget_async @B[0, 0], @Src[rank=1][4, 0] #rows=64 #cols=64
        `+tc.waits+`
    }
}
launch ranks=2 { run k blocks=1 }
`)
			rec := &recorder{kinds: map[EventKind]bool{EvExec: true}}
			if _, _, err := runObj(t, obj, Options{Observers: []Observer{rec}}); err != nil {
				t.Fatal(err)
			}
			var copies, waits []Event
			for _, e := range rec.evs {
				switch {
				case e.Step == "sdma":
					copies = append(copies, e)
				case e.Op != nil && e.Op.Info.Op == asm.OpWaitAsync:
					waits = append(waits, e)
				}
			}
			slices.SortFunc(copies, func(x, y Event) int { return int(x.Issue - y.Issue) })
			if len(copies) != 2 || len(waits) != len(tc.cover) {
				t.Fatalf("%d copies and %d waits, want 2 and %d", len(copies), len(waits), len(tc.cover))
			}
			if copies[0].End >= copies[1].End {
				t.Fatalf("the first copy ends at %d, the second at %d: want the first earlier", copies[0].End, copies[1].End)
			}
			for i, w := range waits {
				want := int64(0)
				if c := tc.cover[i]; c >= 0 {
					want = copies[c].Issue
					if w.Cycle < copies[c].End {
						t.Errorf("wait %d ends at %d, before its copy lands at %d", i, w.Cycle, copies[c].End)
					}
				}
				if w.Value != want {
					t.Errorf("wait %d covers up to issue %d, want %d", i, w.Value, want)
				}
				if got := w.Cycle < copies[1].End; got != tc.before[i] {
					t.Errorf("wait %d ends at %d, the second copy lands at %d: before = %v, want %v", i, w.Cycle, copies[1].End, got, tc.before[i])
				}
			}
		})
	}
}
