package machine

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/parser"
	"github.com/ptoasm/ptoasm/pipes"
)

// TestEventsForHazards checks the events the hazard detector relies on:
// EvIssue per queued instruction, EvHostWrite with poison/init words and
// pipe stalls on a head wait_flag.
func TestEventsForHazards(t *testing.T) {
	obj := assembleFile(t, "../programs/vec_add/vec_add.pto")
	rec := &recorder{kinds: map[EventKind]bool{EvIssue: true, EvHostWrite: true, EvStall: true, EvExec: true}}
	m, _, err := runObj(t, obj, Options{Observers: []Observer{rec}})
	if err != nil {
		t.Fatal(err)
	}
	issues, execs := 0, 0
	words := map[string]string{}
	pipeStall := false
	for _, e := range rec.evs {
		switch e.Kind {
		case EvIssue:
			issues++
			if e.Agent.Pipe != asm.PipeS || e.Target == asm.PipeS || e.Target == asm.PipeInvalid || e.Op == nil {
				t.Fatalf("bad EvIssue: agent %+v target %v op %v", e.Agent, e.Target, e.Op)
			}
		case EvExec:
			if e.Agent.Pipe != asm.PipeS {
				execs++
			}
		case EvHostWrite:
			if len(e.Accesses) != 1 || e.Accesses[0].Tensor == nil {
				t.Fatalf("host write without its tensor: %+v", e)
			}
			words[e.Accesses[0].Tensor.Name] = e.Word
			if base, _ := m.TensorBase(e.Accesses[0].Tensor.Name, 0); e.Accesses[0].Lo != base {
				t.Errorf("host write of %s at %#x, tensor at %#x", e.Accesses[0].Tensor.Name, e.Accesses[0].Lo, base)
			}
		case EvStall:
			if e.Agent.Pipe != asm.PipeS {
				pipeStall = true
				if !strings.HasPrefix(e.Reason, "wait_flag ") || e.End <= e.Start || e.Flag.Dst != e.Agent.Pipe {
					t.Errorf("pipe stall %q on %v from %d to %d", e.Reason, e.Agent.Pipe, e.Start, e.End)
				}
			}
		}
	}
	if issues < execs {
		t.Errorf("%d EvIssue for %d pipe execs", issues, execs)
	}
	want := map[string]string{"X": "init", "Y": "init", "Z": "poison"}
	for k, w := range want {
		if words[k] != w {
			t.Errorf("host write of %s: word %q, want %q", k, words[k], w)
		}
	}
	if !pipeStall {
		t.Errorf("no pipe reported a wait_flag stall")
	}
}

func TestFaultKinds(t *testing.T) {
	tests := []struct {
		name, body string
		want       FaultKind
	}{
		{"bad-event-id", "let %i = 9\n    set_flag V, MTE2, %i", FaultBadEventID},
		{"ffts-id", "let %i = 16\n    ffts_wait %i", FaultBadEventID},
		{"out-of-bounds", "tile %t : vec f32 [16, 64]\n    let %r = 60\n    tload %t, @A[%r, 0]", FaultOutOfBounds},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := "gm A : f32 [64, 64] = zero\nkernel k : aiv {\n    " + tc.body + "\n}\nlaunch ranks=1 { run k blocks=1 }\n"
			_, _, err := runObj(t, assemble(t, src), Options{})
			var f *Fault
			if !errors.As(err, &f) {
				t.Fatalf("want a fault, got %v", err)
			}
			if f.Kind != tc.want {
				t.Errorf("kind %q, want %q (%s)", f.Kind, tc.want, f.Msg)
			}
		})
	}
	if got := classifyFault("fifo misuse: @F is a gm"); got != FaultFIFO {
		t.Errorf("classify fifo: %q", got)
	}
}

func TestNextPollChargesBarrier(t *testing.T) {
	prof := pipes.DefaultProfile().Clone()
	prof.TWaitPoll, prof.TWaitBarrierEvery, prof.Sync.Barrier = 10, 4, 5
	m := &Machine{prof: prof}
	// Polls at 0 10 20 30, barrier, 45 55 65 75, barrier, 90 ...
	tests := []struct{ now, k, at int64 }{
		{0, 0, 0}, {1, 1, 10}, {30, 3, 30}, {31, 4, 45}, {45, 4, 45}, {46, 5, 55}, {76, 8, 90}, {90, 8, 90},
	}
	for _, tc := range tests {
		k, at := m.nextPoll(0, tc.now)
		if k != tc.k || at != tc.at {
			t.Errorf("nextPoll(0, %d) = %d at %d, want %d at %d", tc.now, k, at, tc.k, tc.at)
		}
	}
	prof.TWaitBarrierEvery = 0
	if k, at := m.nextPoll(100, 131); k != 4 || at != 140 {
		t.Errorf("without barriers: %d at %d", k, at)
	}
}

// visSrc: rank 0 puts A into rank 1's window and raises a flag with a plain
// scalar store; rank 1 copies the window out and answers; only then does
// rank 0 execute its dsb.
const visSrc = `
gm A : f32 [16, 64] = expr(i * 64 + j + 1)
window W : f32 [16, 64] = zero
gm O : f32 [16, 64] = zero
signal S : [4] = zero
kernel k : aiv {
    tile %t : vec f32 [16, 64]
    if rank == 0 {
        tput @W[rank=1][0, 0], @A[0, 0], %t
        pipe_barrier ALL
        st @S[rank=1][0], 1
        twait @S[1], 1 #cmp=eq
        dsb
    } else {
        twait @S[0], 1 #cmp=eq
        tload %t, @W[0, 0]
        set_flag MTE2, MTE3, 0
        wait_flag MTE2, MTE3, 0
        tstore @O[0, 0], %t
        pipe_barrier ALL
        st @S[rank=0][1], 1
    }
}
launch ranks=2 { run k blocks=1 }
`

func TestRemoteVisibilityDSB(t *testing.T) {
	for _, vis := range []string{"completion", "dsb"} {
		t.Run(vis, func(t *testing.T) {
			prof := pipes.DefaultProfile().Clone()
			if err := prof.Set("remote_visibility", vis); err != nil {
				t.Fatal(err)
			}
			m, _, err := runObj(t, assemble(t, visSrc), Options{Profile: prof})
			if err != nil {
				t.Fatal(err)
			}
			o, _ := m.TensorData("O", 1)
			w, _ := m.TensorData("W", 1)
			got, _ := o.LoadF(asm.F32, 4*65)
			// The window itself holds the data once rank 0's dsb ran.
			win, _ := w.LoadF(asm.F32, 4*65)
			want := 0.0 // dsb: rank 1 read the window before it became visible
			if vis == "completion" {
				want = 66
			}
			if got != want || win != 66 {
				t.Errorf("O[1,1] = %g (want %g), W[1,1] = %g (want 66)", got, want, win)
			}
		})
	}
}

// TestWakeOrder drives the scheduler alone, without a machine: whatever mix
// of heap, current cycle list and parked front it uses, wake-ups come out in
// (cycle, agent, seq) order, reschedules move a waker and cancel removes it.
func TestWakeOrder(t *testing.T) {
	s := &scheduler{}
	var got []int
	ws := make([]*waker, 8)
	for i := range ws {
		i := i
		ws[i] = &waker{hidx: -1, fn: func() { got = append(got, i) }}
	}
	s.schedule(ws[3], 5, 3)
	s.schedule(ws[1], 5, 1)
	s.schedule(ws[2], 0, 2) // now
	s.schedule(ws[0], 0, 0) // now, earlier agent
	s.schedule(ws[4], 2, 4)
	s.schedule(ws[5], 7, 5)
	s.schedule(ws[5], 1, 5) // moved earlier
	s.schedule(ws[6], 3, 6)
	s.cancel(ws[6])
	s.seq = seqMask/2 + 1 // force a renumber
	s.checkSeq()
	s.schedule(ws[7], 5, 0)
	for {
		w := s.next()
		if w == nil {
			break
		}
		s.now = w.at
		s.cur = w
		w.fn()
		s.cur = nil
	}
	want := []int{0, 2, 5, 4, 7, 1, 3}
	if len(got) != len(want) {
		t.Fatalf("order %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("order %v, want %v", got, want)
		}
	}
}

// sortWakers orders any mix of ords as a general sort does: descending,
// whatever the length (insertion sort and quicksort alike), with runs,
// sorted and reversed input.
func TestSortWakers(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for n := 0; n < 400; n += 1 + n/8 {
		for trial := range 6 {
			q := make([]*waker, n)
			for i := range q {
				var ord uint64
				switch trial {
				case 0:
					ord = r.Uint64()
				case 1:
					ord = uint64(i) // ascending: worst case for a naive pivot
				case 2:
					ord = uint64(n - i)
				default:
					ord = uint64(r.IntN(4))<<seqBits | uint64(i) // few agents, many seqs
				}
				q[i] = &waker{ord: ord}
			}
			want := slices.Clone(q)
			slices.SortFunc(want, func(a, b *waker) int { return cmp.Compare(b.ord, a.ord) })
			sortWakers(q)
			for i := range q {
				if q[i] != want[i] {
					t.Fatalf("n=%d trial %d: position %d has ord %d, want %d", n, trial, i, q[i].ord, want[i].ord)
				}
			}
		}
	}
}

// TestSchedulerAgainstReference drives the scheduler with random schedules,
// reschedules (of the waker being processed too, in a crowded cycle and
// not), cancels and inline runs, in Step's mode and events', against a
// plain list ordered by (cycle, agent, seq): every wake-up comes out in
// that order, and comesNext agrees with it.
func TestSchedulerAgainstReference(t *testing.T) {
	type ref struct {
		at       int64
		key, seq int
		armed    bool
	}
	for trial := range 40 {
		r := rand.New(rand.NewPCG(uint64(trial), 7))
		s := &scheduler{batch: trial%2 == 1}
		const n = 48
		ws := make([]*waker, n)
		refs := make([]ref, n)
		keys := make([]int, n)
		for i := range ws {
			ws[i] = &waker{hidx: -1}
			keys[i] = i/2 - 1 // pairs share a key (-1: SDMA callbacks; a scalar and its wave slot)
		}
		seq := 0
		sched := func(i int, at int64) {
			at = max(at, s.now)
			s.schedule(ws[i], at, keys[i])
			seq++
			refs[i] = ref{at: at, key: keys[i], seq: seq, armed: true}
		}
		span := []int64{3, 40, wheelSize + 300}[trial%3]
		for range n / 2 {
			sched(r.IntN(n), r.Int64N(span))
		}
		for steps := 0; steps < 4000; steps++ {
			best := -1
			for i, x := range refs {
				if !x.armed {
					continue
				}
				if best < 0 {
					best = i
					continue
				}
				b := refs[best]
				if x.at < b.at || x.at == b.at && (x.key < b.key || x.key == b.key && x.seq < b.seq) {
					best = i
				}
			}
			w := s.next()
			if best < 0 {
				if w != nil {
					t.Fatalf("trial %d step %d: got a wake-up at %d, want none", trial, steps, w.at)
				}
				break
			}
			if w != ws[best] {
				gi := slices.Index(ws, w)
				t.Fatalf("trial %d step %d: got waker %d (at %d key %d ref %+v), want %d (at %d key %d) now %d", trial, steps, gi, w.at, keys[max(gi, 0)], refs[max(gi, 0)], best, refs[best].at, refs[best].key, s.now)
			}
			s.now = w.at
			w.armed = false
			refs[best].armed = false
			s.cur = w
			// The event: rearm itself, schedule or cancel others.
			for k := r.IntN(4); k > 0; k-- {
				i := r.IntN(n)
				if r.IntN(3) == 0 {
					i = best
				}
				switch r.IntN(6) {
				case 0:
					s.cancel(ws[i])
					refs[i].armed = false
				case 1:
					sched(i, s.now)
				default:
					sched(i, s.now+r.Int64N(span))
				}
			}
			s.cur = nil
			// An inline run: an agent not armed, due now, when it comes next.
			if i := r.IntN(n); !refs[i].armed && r.IntN(2) == 0 {
				want := true
				for _, x := range refs {
					if x.armed && x.at == s.now && (x.key < keys[i] || x.key == keys[i] && x.seq < seq+1) {
						want = false
					}
				}
				if got := s.comesNext(keys[i]); got != want {
					t.Fatalf("trial %d step %d: comesNext(%d) = %v, want %v", trial, steps, keys[i], got, want)
				}
				if want {
					s.runNow(ws[i], keys[i])
					seq++
					if r.IntN(2) == 0 {
						sched(i, s.now+r.Int64N(span))
					}
					s.cur = nil
				}
			}
			if r.IntN(500) == 0 {
				s.seq = seqMask/2 + 1 // force a renumber
			}
			s.checkSeq()
		}
	}
}

// TestResumeAheadIsLocal runs every shipped program (timing only, at its
// default size and at 2 and 8 ranks where it has RANKS) under the model's
// rule for a scalar its own pipe resumes ahead of the clock (inline only in
// an otherwise empty cycle, which reads the machine-wide current cycle) and
// under the two rules that ask nothing outside the core (always queued at
// its own time; always inline when it comes next): the results are the
// same. A scalar ahead of the clock touches only its own core's queues, at
// its own time, until it syncs with the clock (syncTime) before anything
// shared, so where it runs in host order does not show.
func TestResumeAheadIsLocal(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every program three times")
	}
	run := func(obj *asm.Object, ahead int8) (string, int64) {
		m, err := New(obj, Options{TimingOnly: true})
		if err != nil {
			return "new: " + err.Error(), 0
		}
		// The rule is the global order's: in a stretch (stretch.go) a
		// resumed scalar is always queued at its own time.
		m.ahead, m.noStr = ahead, true
		r, err := m.Run()
		b, jerr := json.Marshal(r)
		if jerr != nil {
			t.Fatal(jerr)
		}
		return fmt.Sprintf("%s\nerr: %v", b, err), m.aheads
	}
	var seen int64
	runs := forEachProgram(t, func(f string, defs []asm.Define, obj *asm.Object) {
		want, _ := run(obj, aheadModel)
		for _, rule := range []int8{aheadQueue, aheadInline} {
			got, n := run(obj, rule)
			seen += n
			if got != want {
				t.Errorf("%s %v, rule %d: result differs from the model's rule:\n%s\nwant\n%s", f, defs, rule, got, want)
			}
		}
	})
	t.Logf("%d runs; scalars resumed ahead of the clock (the inline rule): %d", runs, seen)
	if runs < 50 || seen == 0 {
		t.Fatalf("%d runs, %v resumes ahead: the test exercises nothing", runs, seen)
	}
}

// forEachProgram assembles every shipped program at its default size and,
// where it declares RANKS, at 2 and 8 ranks, and calls fn with each that
// assembles without flags of its own; it returns how many it called.
func forEachProgram(t *testing.T, fn func(f string, defs []asm.Define, obj *asm.Object)) int {
	t.Helper()
	files, err := filepath.Glob("../programs/*/*.pto")
	if err != nil {
		t.Fatal(err)
	}
	more, _ := filepath.Glob("../programs/*/*/*.pto")
	files = append(files, more...)
	runs := 0
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sizes := [][]asm.Define{nil}
		if strings.Contains(string(src), "RANKS") {
			sizes = append(sizes, []asm.Define{{Name: "RANKS", Value: "2"}}, []asm.Define{{Name: "RANKS", Value: "8"}})
		}
		for _, defs := range sizes {
			fe := asm.Frontend{ParseFile: parser.ParseFile, ParseExpr: parser.ParseExpr, ReadFile: os.ReadFile}
			obj, errs := asm.Assemble(fe, f, defs)
			if len(errs) > 0 {
				continue // a program that needs its own -D flags
			}
			fn(f, defs, obj)
			runs++
		}
	}
	return runs
}

// TestL2RectMemoIsExact runs every shipped program (timing only, default
// size and 2 and 8 ranks) with the memoised DMA path's L2 rectangle
// (gmPortsMemo, kept in the op's plan from its first instance) and with
// the rectangle recomputed from every instance, as gmPorts does, and
// compares the results: what the memo keeps must be the same for every
// instance of an op (issue 22, round 20).
func TestL2RectMemoIsExact(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every program twice")
	}
	run := func(obj *asm.Object, fresh bool) string {
		m, err := New(obj, Options{TimingOnly: true})
		if err != nil {
			return "new: " + err.Error()
		}
		m.l2Fresh = fresh
		r, err := m.Run()
		b, jerr := json.Marshal(r)
		if jerr != nil {
			t.Fatal(jerr)
		}
		return fmt.Sprintf("%s\nerr: %v", b, err)
	}
	runs := forEachProgram(t, func(f string, defs []asm.Define, obj *asm.Object) {
		if got, want := run(obj, false), run(obj, true); got != want {
			t.Errorf("%s %v: result with the memoised rectangle differs:\n%s\nrecomputed\n%s", f, defs, got, want)
		}
	})
	if runs < 50 {
		t.Fatalf("%d runs: the test exercises too little", runs)
	}
}

// TestStretchIsExact runs every shipped program (timing only at its
// default size and at 2 and 8 ranks where it has RANKS, with data at its
// default size) with a core's local events in stretches (stretch.go) and
// without, and compares the results; a run with stretches that ended in
// an error and was repeated without them must be one whose run without
// them ended in an error too (issue 22, round 22). The data runs were 99%
// of the test's time (session 27: 1 256 of 1 272 s under load, 393 s of
// it the 8-rank sizes), and what they add to the timing-only runs is the
// values a stretch's reordered loads and stores compute, which the
// default size shows as well as the larger ones: the rank counts and the
// pauses, which change the scheduling, are checked in timing-only runs.
func TestStretchIsExact(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every program six times")
	}
	// stop: every window of three stretches pauses them for 50 cycles, as
	// when strPays finds they do not pay (the run goes on in the global
	// order, then takes stretches again).
	run := func(obj *asm.Object, timing, noStr, stop bool) (string, *Machine) {
		m, err := New(obj, Options{TimingOnly: timing})
		if err != nil {
			return "new: " + err.Error(), nil
		}
		m.noStr = noStr
		if stop {
			m.strProbeAt, m.strMinEv, m.strPauseN = 3, 1<<40, 50
		}
		r, err := m.Run()
		b, jerr := json.Marshal(r)
		if jerr != nil {
			t.Fatal(jerr)
		}
		return fmt.Sprintf("%s\nerr: %v", b, err), m
	}
	var stretched, dataStretched, stopped int
	runs := forEachProgram(t, func(f string, defs []asm.Define, obj *asm.Object) {
		for _, timing := range []bool{true, false} {
			if !timing && defs != nil {
				continue
			}
			want, _ := run(obj, timing, true, false)
			got, m := run(obj, timing, false, false)
			if got != want {
				t.Errorf("%s %v timing-only %v: result with stretches differs:\n%s\nwithout\n%s", f, defs, timing, got, want)
			}
			if timing { // a pause changes the scheduling alone
				if got, ms := run(obj, timing, false, true); got != want {
					t.Errorf("%s %v timing-only %v: result with stretches paused differs:\n%s\nwithout\n%s", f, defs, timing, got, want)
				} else if ms != nil && !ms.reran && ms.strPauses > 1 {
					stopped++
				}
			}
			if m != nil && m.strRan {
				stretched++
				if !timing {
					dataStretched++
				}
			}
			if m != nil && m.reran && strings.HasSuffix(want, "err: <nil>") {
				t.Errorf("%s %v timing-only %v: the run with stretches ended in an error and was repeated", f, defs, timing)
			}
		}
	})
	t.Logf("%d programs, %d runs with stretches (%d with data), %d paused more than once", runs, stretched, dataStretched, stopped)
	if runs < 50 || stretched == 0 || dataStretched == 0 || stopped == 0 {
		t.Fatalf("%d runs, %d with stretches: the test exercises nothing", runs, stretched)
	}
}
