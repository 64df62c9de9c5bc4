package hazard

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ptoasm/ptoasm/machine"
)

// One block: AIC core 0, AIVs 1 and 2 (block 0).
const (
	fAIC  = 0
	fAIV0 = 1
	fAIV1 = 2
)

// fftsStep is one event of a leftover scenario.
type fftsStep struct {
	kind  machine.EventKind // EvCrossSet, EvCrossWait, EvSyncAll, EvKernelEnd, EvRunStart, EvRunEnd
	core  int32
	line  int // the op's line (0: none)
	op    string
	mode  int32
	peers []int32 // the counters a set raised (none: a reduction that did not fire)
}

func fset(core int32, line int, mode int32, peers ...int32) fftsStep {
	return fftsStep{kind: machine.EvCrossSet, core: core, line: line, op: "ffts_set", mode: mode, peers: peers}
}

func fwait(core int32, line int) fftsStep {
	return fftsStep{kind: machine.EvCrossWait, core: core, line: line, op: "ffts_wait"}
}

// fifo ops: a tpop's credit set and a tpush's ready set.
func fop(op string, core int32, line int, peers ...int32) fftsStep {
	return fftsStep{kind: machine.EvCrossSet, core: core, line: line, op: op, mode: 2, peers: peers}
}

var (
	runStart = fftsStep{kind: machine.EvRunStart}
	runEnd   = fftsStep{kind: machine.EvRunEnd}
)

func endOf(core int32) fftsStep { return fftsStep{kind: machine.EvKernelEnd, core: core} }

// playFFTS feeds the steps to a detector, every set and wait on flag id 3.
func playFFTS(steps []fftsStep) []Finding {
	s := newSim(Options{})
	p := &prog{}
	for _, st := range steps {
		e := machine.Event{Kind: st.kind, ID: 3, Mode: st.mode, Peers: st.peers, Group: -1}
		if st.mode != 0 {
			e.Group = 0
		}
		pipe := S
		if st.kind == machine.EvCrossSet {
			pipe = MTE2
		}
		e.Agent = ag(0, st.core, pipe)
		if st.kind == machine.EvRunStart || st.kind == machine.EvRunEnd {
			e.Agent = machine.Agent{Core: -1}
		}
		if st.line > 0 {
			e.Op = p.op(st.op, st.line, pipe)
		}
		s.ev(e)
	}
	return s.d.Findings()
}

// TestFFTSLeftover: an FFTS counter still raised when the run ends is an
// unpaired-set at the set that left it, counted per leftover increment over
// every core; half a reduction is one too. The verdict and the site do not
// depend on the order sets, waits and kernel ends happened in.
func TestFFTSLeftover(t *testing.T) {
	type want struct {
		line, count int
		msg         string // in the message
	}
	for _, tc := range []struct {
		name  string
		steps []fftsStep
		want  []want
	}{
		{"balanced mode 2 AIC to AIVs", []fftsStep{
			runStart, fset(fAIC, 10, 2, fAIV0, fAIV1), fwait(fAIV0, 20), fwait(fAIV1, 20), runEnd,
		}, nil},
		// Mode 2: an AIC set raises both AIVs' counters, so one extra set
		// leaves two increments.
		{"AIC sets twice, AIVs wait once", []fftsStep{
			runStart, fset(fAIC, 10, 2, fAIV0, fAIV1), fwait(fAIV0, 20), fwait(fAIV1, 20),
			fset(fAIC, 11, 2, fAIV0, fAIV1), runEnd,
		}, []want{{11, 2, "FFTS flag 3 of r0.c1 is still raised when the run ends: its counter is 1"}}},
		// The same program in another order: the AIVs finish before the
		// AIC's extra set reaches them. Kernel end is no point to decide.
		{"extra set after the AIVs ended", []fftsStep{
			runStart, fset(fAIC, 10, 2, fAIV0, fAIV1), fwait(fAIV0, 20), fwait(fAIV1, 20),
			endOf(fAIV0), endOf(fAIV1), fset(fAIC, 11, 2, fAIV0, fAIV1), endOf(fAIC), runEnd,
		}, []want{{11, 2, "counter is 1"}}},
		{"waits before the extra set, loop", []fftsStep{
			runStart, fset(fAIC, 10, 2, fAIV0, fAIV1), fset(fAIC, 10, 2, fAIV0, fAIV1), fset(fAIC, 10, 2, fAIV0, fAIV1),
			fwait(fAIV0, 20), fwait(fAIV1, 20), runEnd,
		}, []want{{10, 4, "its counter is 2 (2 sets nobody waited for"}}},
		// Mode 2 the other way: the AIC's counter rises once both AIVs set.
		// Two rounds and one wait leave one increment, named at the later
		// line of the two AIVs' sets whichever arrived last.
		{"AIVs set twice, AIC waits once, AIV1 last", []fftsStep{
			runStart, fset(fAIV0, 31, 2), fset(fAIV1, 30, 2, fAIC), fwait(fAIC, 40),
			fset(fAIV0, 31, 2), fset(fAIV1, 30, 2, fAIC), runEnd,
		}, []want{{31, 1, "FFTS flag 3 of r0.c0"}}},
		{"AIVs set twice, AIC waits once, AIV0 last", []fftsStep{
			runStart, fset(fAIV1, 30, 2), fset(fAIV0, 31, 2, fAIC), fwait(fAIC, 40),
			fset(fAIV1, 30, 2), fset(fAIV0, 31, 2, fAIC), runEnd,
		}, []want{{31, 1, "FFTS flag 3 of r0.c0"}}},
		{"one AIV sets mode 2 alone", []fftsStep{
			runStart, fset(fAIV0, 31, 2), runEnd,
		}, []want{{31, 1, "mode-2 FFTS set of flag 3 is left half done"}}},
		{"balanced mode 2 AIVs to AIC", []fftsStep{
			runStart, fset(fAIV0, 31, 2), fset(fAIV1, 31, 2, fAIC), fwait(fAIC, 40), runEnd,
		}, nil},
		// A fifo's free credits (tpop) are the library's: never reported,
		// also when one AIV returns its half with a plain ffts_set.
		{"fifo credits", []fftsStep{
			runStart, fop("tpush", fAIC, 50, fAIV0, fAIV1), fwait(fAIV0, 60), fwait(fAIV1, 60),
			fop("tpop", fAIV0, 61), fop("tpop", fAIV1, 61, fAIC), runEnd,
		}, nil},
		{"fifo credit completed by a plain set", []fftsStep{
			runStart, fop("tpop", fAIV0, 61), fset(fAIV1, 70, 2, fAIC), runEnd,
		}, nil},
		{"fifo tile pushed, never popped", []fftsStep{
			runStart, fop("tpush", fAIC, 50, fAIV0, fAIV1), runEnd,
		}, []want{{50, 2, "the last by tpush"}}},
		// syncall is a barrier of its own (ids 11-14 inside pto-isa): it
		// leaves no counter raised.
		{"syncall", []fftsStep{
			runStart, {kind: machine.EvSyncAll, core: fAIC, line: 80, op: "syncall"},
			{kind: machine.EvSyncAll, core: fAIV0, line: 80, op: "syncall"},
			{kind: machine.EvSyncAll, core: fAIV1, line: 80, op: "syncall"}, runEnd,
		}, nil},
		// A leftover of one run is reported once; the next run starts with
		// counters at 0 in the model and is judged on its own.
		{"two runs, the first leaves one", []fftsStep{
			runStart, fset(fAIC, 10, 2, fAIV0, fAIV1), fwait(fAIV0, 20), runEnd,
			runStart, fset(fAIC, 10, 2, fAIV0, fAIV1), fwait(fAIV0, 20), fwait(fAIV1, 20), runEnd,
		}, []want{{10, 1, "FFTS flag 3 of r0.c2"}}},
		// Mode 0 on AIVs: the counters rise once every AIV has set.
		{"mode 0 reduction", []fftsStep{
			runStart, fset(fAIV0, 90, 0), fset(fAIV1, 90, 0, fAIV0, fAIV1), fwait(fAIV0, 91), runEnd,
		}, []want{{90, 1, "FFTS flag 3 of r0.c2"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := playFFTS(tc.steps)
			if len(fs) != len(tc.want) {
				t.Fatalf("got %d findings, want %d: %+v", len(fs), len(tc.want), fs)
			}
			for i, w := range tc.want {
				f := fs[i]
				if f.Kind != KindUnpairedSet || f.Severity != "warning" || f.First.Line != w.line || f.Count != w.count || !f.Second.IsZero() {
					t.Errorf("finding %d: got %s at %d count %d (%q), want unpaired-set warning at %d count %d", i, f.Kind, f.First.Line, f.Count, f.Severity, w.line, w.count)
				}
				if !strings.Contains(f.Message, w.msg) {
					t.Errorf("message %q does not say %q", f.Message, w.msg)
				}
				if !strings.Contains(f.Hint, "ffts_wait 3") && !strings.Contains(f.Hint, "set flag 3 the same number of times") {
					t.Errorf("hint %q names no wait that consumes it", f.Hint)
				}
			}
		})
	}
}

// TestFFTSLeftoverOrder: the same sets and waits in every order the machine
// could run them give the same findings (a wait is reported only once a set
// raised its counter).
func TestFFTSLeftoverOrder(t *testing.T) {
	// The AIC sets id 3 three times; each AIV waits twice.
	orders := [][]fftsStep{
		{fset(fAIC, 10, 2, fAIV0, fAIV1), fwait(fAIV0, 20), fwait(fAIV1, 20), fset(fAIC, 10, 2, fAIV0, fAIV1), fwait(fAIV1, 20), fwait(fAIV0, 20), fset(fAIC, 10, 2, fAIV0, fAIV1)},
		{fset(fAIC, 10, 2, fAIV0, fAIV1), fset(fAIC, 10, 2, fAIV0, fAIV1), fset(fAIC, 10, 2, fAIV0, fAIV1), fwait(fAIV0, 20), fwait(fAIV0, 20), fwait(fAIV1, 20), fwait(fAIV1, 20)},
		{fset(fAIC, 10, 2, fAIV0, fAIV1), fwait(fAIV1, 20), fset(fAIC, 10, 2, fAIV0, fAIV1), fwait(fAIV1, 20), endOf(fAIV1), fwait(fAIV0, 20), fset(fAIC, 10, 2, fAIV0, fAIV1), fwait(fAIV0, 20)},
	}
	var first []Finding
	for i, o := range orders {
		fs := playFFTS(append(append([]fftsStep{runStart}, o...), runEnd))
		if len(fs) != 1 || fs[0].First.Line != 10 || fs[0].Count != 2 {
			t.Fatalf("order %d: got %+v", i, fs)
		}
		if i == 0 {
			first = fs
			continue
		}
		if d := cmp.Diff(first, fs); d != "" {
			t.Errorf("order %d changed the report:\n%s", i, d)
		}
	}
}

// TestModeTwoTakesOldestOfEachAIV: a mode-2 reduction fires once both AIVs
// have a set pending and takes the oldest of each (machine.aivArrivals).
// AIV0 reads slots 0 and 1 and sets after each before AIV1 sets once: the
// fire is AIV1's, and the AIC's wait on it is ordered after AIV0's first
// read only, so the AIC's store into slot 1 races AIV0's read of it (and
// AIV1's, which comes later). Joining every pending arrival ordered the
// store after AIV0's second read and dropped that pipe pair: a finding that
// followed how far AIV0 had run ahead.
func TestModeTwoTakesOldestOfEachAIV(t *testing.T) {
	s := newSim(Options{})
	p := &prog{}
	rd := p.op("tload", 10, MTE2)
	set := p.op("ffts_set", 11, MTE2)
	wt := p.op("ffts_wait", 20, S)
	st := p.op("tstore", 21, MTE3)
	s.hostInit(gmA, 0, 0)
	s.ev(machine.Event{Kind: machine.EvRunStart})
	slot := func(i int64, write bool) machine.Access { return gmAcc(gmA, 0, i*0x100, (i+1)*0x100, write) }
	read := func(core int32, i int64, peers ...int32) {
		s.issue(0, core, rd, MTE2)
		s.exec(ag(0, core, MTE2), rd, []int64{i}, slot(i, false))
		s.issue(0, core, set, MTE2)
		s.ev(machine.Event{Kind: machine.EvCrossSet, Agent: ag(0, core, MTE2), Op: set, ID: 3, Mode: 2, Group: 0, Peers: peers})
	}
	read(fAIV0, 0)
	read(fAIV0, 1)
	read(fAIV1, 0, fAIC) // completes the first reduction: AIV0's and AIV1's slot 0
	s.ev(machine.Event{Kind: machine.EvCrossWait, Agent: ag(0, fAIC, S), Op: wt, ID: 3})
	s.issue(0, fAIC, st, MTE3)
	s.exec(ag(0, fAIC, MTE3), st, nil, slot(1, true)) // slot 1 refilled one credit early
	read(fAIV1, 1, fAIC)
	fs := s.d.Findings()
	if len(fs) != 1 || fs[0].Kind != KindWAR || fs[0].Count != 2 {
		t.Fatalf("got %+v, want one WAR tload -> tstore over 2 pipe pairs (AIV0's and AIV1's reads of slot 1)", fs)
	}
}
