package hazard

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
)

const (
	S    = asm.PipeS
	V    = asm.PipeV
	M    = asm.PipeM
	MTE1 = asm.PipeMTE1
	MTE2 = asm.PipeMTE2
	MTE3 = asm.PipeMTE3
	FIX  = asm.PipeFIX
	ALL  = asm.PipeALL
)

// crossPipeRAW: tload on MTE2 fills %a, tmov on MTE1 reads it. readFirst runs
// the read before the write in simulated time (issue order stays the same).
func crossPipeRAW(s *sim, fixed, readFirst bool) {
	p := &prog{}
	ld := p.op("tload", 10, MTE2)
	set := p.op("set_flag", 11, S)
	wt := p.op("wait_flag", 12, S)
	mv := p.op("tmov", 13, MTE1)
	s.issue(0, 0, ld, MTE2)
	if fixed {
		s.issue(0, 0, set, MTE2)
		s.issue(0, 0, wt, MTE1)
	}
	s.issue(0, 0, mv, MTE1)
	write := func() { s.exec(ag(0, 0, MTE2), ld, nil, tileAcc(tileA, 0, 0, 0, true)) }
	read := func() { s.exec(ag(0, 0, MTE1), mv, nil, tileAcc(tileA, 0, 0, 0, false)) }
	if readFirst {
		read()
		write()
		return
	}
	write()
	if fixed {
		s.set(0, 0, MTE2, MTE1, 0, set)
		s.wait(0, 0, MTE2, MTE1, 0, wt)
	}
	read()
}

func TestCrossPipeRAW(t *testing.T) {
	s := newSim(Options{})
	s.hostInit(gmA, 0, 0)
	crossPipeRAW(s, false, false)
	fs := s.d.Findings()
	if len(fs) != 1 {
		t.Fatalf("got %d findings, want 1: %+v", len(fs), fs)
	}
	f := fs[0]
	if f.Kind != KindRAW || f.Severity != "error" || f.First.Line != 10 || f.Second.Line != 13 {
		t.Errorf("got %s %s %d->%d", f.Kind, f.Severity, f.First.Line, f.Second.Line)
	}
	if f.Buffer != "%a" || f.Range != [2]int64{0, 0x400} || f.First.Pipe != "MTE2" || f.Second.Pipe != "MTE1" {
		t.Errorf("buffer %q range %v pipes %s %s", f.Buffer, f.Range, f.First.Pipe, f.Second.Pipe)
	}
	if !strings.Contains(f.Hint, "set_flag MTE2, MTE1, 0") || !strings.Contains(f.Hint, "wait_flag MTE2, MTE1, 0") {
		t.Errorf("hint %q", f.Hint)
	}

	s = newSim(Options{})
	crossPipeRAW(s, true, false)
	if fs := s.d.Findings(); len(fs) != 0 {
		t.Errorf("fixed: got %v", kinds(fs))
	}
}

// The verdict and the report must not depend on which access ran first.
func TestTimingIndependence(t *testing.T) {
	a, b := newSim(Options{}), newSim(Options{})
	crossPipeRAW(a, false, false)
	crossPipeRAW(b, false, true)
	fa, fb := a.d.Findings(), b.d.Findings()
	if len(fa) != 1 {
		t.Fatalf("got %v", kinds(fa))
	}
	if d := cmp.Diff(fa, fb); d != "" {
		t.Errorf("time order changed the report (-write first +read first):\n%s", d)
	}
}

// ffn replays the FFN mock's chunk loop (kernels.md §2(c)); fix adds the
// reviewer's MTE1->MTE2 flags, drain the two waits after the loop.
func ffn(s *sim, fix, drain bool) {
	p := &prog{}
	prime := p.op("tallgather", 1, MTE2)
	primeSet := p.op("set_flag", 2, S)
	freeSet := p.op("set_flag", 3, S)
	freeWait := p.op("wait_flag", 5, S)
	gather := p.op("tallgather", 6, MTE2)
	readySet := p.op("set_flag", 7, S)
	readyWait := p.op("wait_flag", 8, S)
	mov := p.op("tmov", 9, MTE1)
	freeSet2 := p.op("set_flag", 10, S)
	drain0 := p.op("wait_flag", 15, S)
	drain1 := p.op("wait_flag", 16, S)

	pipe := func(pp asm.Pipe) machine.Agent { return ag(0, 0, pp) }
	s.issue(0, 0, prime, MTE2)
	s.exec(pipe(MTE2), prime, nil, tileAcc(chunk, 0, 0, 0, true))
	s.issue(0, 0, primeSet, MTE2)
	s.set(0, 0, MTE2, MTE1, 0, primeSet)
	if fix {
		s.issue(0, 0, freeSet, MTE1)
		s.set(0, 0, MTE1, MTE2, 1, freeSet)
	}
	for j := int64(0); j < 4; j++ {
		it := []int64{j}
		b, nb := int32(j&1), int32((j+1)&1)
		if j < 3 {
			if fix {
				s.issue(0, 0, freeWait, MTE2)
				s.ev(machine.Event{Kind: machine.EvFlagWait, Agent: pipe(MTE2), Op: freeWait, Iter: it, Flag: machine.Flag{Src: MTE1, Dst: MTE2, ID: nb}})
			}
			s.issue(0, 0, gather, MTE2)
			s.exec(pipe(MTE2), gather, it, tileAcc(chunk, 0, 0, int(nb), true))
			s.issue(0, 0, readySet, MTE2)
			s.ev(machine.Event{Kind: machine.EvFlagSet, Agent: pipe(MTE2), Op: readySet, Iter: it, Flag: machine.Flag{Src: MTE2, Dst: MTE1, ID: nb}})
		}
		s.issue(0, 0, readyWait, MTE1)
		s.ev(machine.Event{Kind: machine.EvFlagWait, Agent: pipe(MTE1), Op: readyWait, Iter: it, Flag: machine.Flag{Src: MTE2, Dst: MTE1, ID: b}})
		s.issue(0, 0, mov, MTE1)
		s.exec(pipe(MTE1), mov, it, tileAcc(chunk, 0, 0, int(b), false))
		if fix {
			s.issue(0, 0, freeSet2, MTE1)
			s.ev(machine.Event{Kind: machine.EvFlagSet, Agent: pipe(MTE1), Op: freeSet2, Iter: it, Flag: machine.Flag{Src: MTE1, Dst: MTE2, ID: b}})
		}
	}
	if fix && drain {
		s.issue(0, 0, drain0, MTE2)
		s.wait(0, 0, MTE1, MTE2, 0, drain0)
		s.issue(0, 0, drain1, MTE2)
		s.wait(0, 0, MTE1, MTE2, 1, drain1)
	}
	s.ev(machine.Event{Kind: machine.EvKernelEnd, Agent: ag(0, 0, S)})
}

func TestFFNChunkWAR(t *testing.T) {
	s := newSim(Options{})
	ffn(s, false, false)
	fs := s.d.Findings()
	// Besides the M1 WAR, nothing orders a ready set after the MTE1 wait
	// that consumed the previous set of its id (the same missing reverse
	// flag): two potential double sets, prime -> ready and ready -> ready,
	// whatever the timing.
	var f Finding
	var doubles []string
	for _, x := range fs {
		switch x.Kind {
		case KindWAR:
			f = x
		case KindDoubleSet:
			doubles = append(doubles, fmt.Sprintf("%d->%d", x.First.Line, x.Second.Line))
		default:
			t.Errorf("as shipped: unexpected %s", x.Kind)
		}
	}
	if !cmp.Equal(doubles, []string{"2->7", "7->7"}) {
		t.Errorf("as shipped: double sets %v, want [2->7 7->7]", doubles)
	}
	// Two instances, on one pair of pipes: a race counts its pipe pairs.
	if f.Kind != KindWAR || f.First.Op != "tmov" || f.Second.Op != "tallgather" || f.Count != 1 {
		t.Errorf("got %s %s->%s count %d", f.Kind, f.First.Op, f.Second.Op, f.Count)
	}
	// The finding names its latest instance (instLess), iterations 1 and
	// 2, which use the second chunk.
	if f.Buffer != "%chunk[1]" || f.First.Pipe != "MTE1" || f.Second.Pipe != "MTE2" {
		t.Errorf("buffer %q pipes %s %s", f.Buffer, f.First.Pipe, f.Second.Pipe)
	}
	if !cmp.Equal(f.First.Iter, []int64{1}) || !cmp.Equal(f.Second.Iter, []int64{2}) {
		t.Errorf("iters %v %v", f.First.Iter, f.Second.Iter)
	}
	// MTE1->MTE2 uses no id yet, so the hint picks 0.
	if !strings.Contains(f.Hint, "set_flag MTE1, MTE2, 0") {
		t.Errorf("hint %q", f.Hint)
	}

	s = newSim(Options{})
	ffn(s, true, false)
	fs = s.d.Findings()
	// Two unconsumed sets (ids 0 and 1) of one set_flag line: one finding,
	// count 2, as `expect finding unpaired-set at 10 count 2` states it.
	if len(fs) != 1 || fs[0].Kind != KindUnpairedSet || fs[0].Count != 2 || fs[0].First.Line != 10 {
		t.Fatalf("reviewer fix without drain: got %+v, want unpaired-set at line 10 count 2", fs)
	}

	s = newSim(Options{})
	ffn(s, true, true)
	if fs := s.d.Findings(); len(fs) != 0 {
		t.Errorf("fix with drain: got %v", kinds(fs))
	}
}

func samePipe(s *sim, pipe asm.Pipe, barrier bool) {
	p := &prog{}
	w := p.op("tadd", 20, pipe)
	bar := p.op("pipe_barrier", 21, S)
	r := p.op("tmul", 22, pipe)
	s.issue(0, 0, w, pipe)
	if barrier {
		s.issue(0, 0, bar, pipe)
	}
	s.issue(0, 0, r, pipe)
	s.exec(ag(0, 0, pipe), w, nil, tileAcc(ubX, 0, 0, 0, true))
	if barrier {
		s.barrier(0, 0, pipe, bar)
	}
	s.exec(ag(0, 0, pipe), r, nil, tileAcc(ubX, 0, 0, 0, false))
}

func TestSamePipe(t *testing.T) {
	tests := []struct {
		name    string
		opt     SamePipe
		pipe    asm.Pipe
		barrier bool
		want    string // severity, "" for none
	}{
		{"V default", SamePipe{}, V, false, "warning"},
		{"V barrier", SamePipe{}, V, true, ""},
		{"V off", SamePipe{V: SevOff}, V, false, ""},
		{"V error", SamePipe{V: SevError}, V, false, "error"},
		{"MTE2 default", SamePipe{}, MTE2, false, "note"},
		{"MTE3 default", SamePipe{}, MTE3, false, "warning"},
		{"MTE2 off", SamePipe{MTE2: SevOff}, MTE2, false, ""},
		{"MTE1 default", SamePipe{}, asm.PipeMTE1, false, "note"},
		{"FIX default", SamePipe{}, asm.PipeFIX, false, "note"},
		// Accumulation chains on L0C: the cube runs mads in order.
		{"M default", SamePipe{}, M, false, ""},
		{"M note", SamePipe{M: SevNote}, M, false, "note"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newSim(Options{SamePipe: tc.opt})
			samePipe(s, tc.pipe, tc.barrier)
			fs := s.d.Findings()
			if tc.want == "" {
				if len(fs) != 0 {
					t.Fatalf("got %v", kinds(fs))
				}
				return
			}
			if len(fs) != 1 || fs[0].Kind != KindRAW || fs[0].Severity != tc.want {
				t.Fatalf("got %+v", fs)
			}
			if want := "pipe_barrier " + tc.pipe.String(); !strings.Contains(fs[0].Hint, want) {
				t.Errorf("hint %q lacks %q", fs[0].Hint, want)
			}
		})
	}
}

// R7: MTE2 -> V -> MTE3 with no V op orders MTE3 after MTE2 transitively.
func TestTransitiveThroughIdlePipe(t *testing.T) {
	for _, chain := range []bool{true, false} {
		s := newSim(Options{})
		p := &prog{}
		ld := p.op("tload", 30, MTE2)
		st := p.op("tstore", 35, MTE3)
		s.exec(ag(0, 0, MTE2), ld, nil, tileAcc(ubX, 0, 0, 0, true))
		s.set(0, 0, MTE2, V, 0, p.op("set_flag", 31, S))
		s.wait(0, 0, MTE2, V, 0, p.op("wait_flag", 32, S))
		if chain {
			s.set(0, 0, V, MTE3, 0, p.op("set_flag", 33, S))
			s.wait(0, 0, V, MTE3, 0, p.op("wait_flag", 34, S))
		}
		s.exec(ag(0, 0, MTE3), st, nil, tileAcc(ubX, 0, 0, 0, false))
		fs := s.d.Findings()
		if chain && len(fs) != 0 {
			t.Errorf("chained: got %v", kinds(fs))
		}
		if !chain && (len(fs) != 1 || fs[0].Kind != KindRAW) {
			t.Errorf("broken chain: got %v", kinds(fs))
		}
	}
}

// Publish protocol across ranks (kernels.md §5, item 2): store, BAR ALL, notify;
// the peer waits, then loads. TNOTIFY does not fence earlier MTE3 stores.
func crossRank(s *sim, barrier bool) {
	p := &prog{}
	st := p.op("tstore", 40, MTE3)
	bar := p.op("pipe_barrier", 41, S)
	nt := p.op("tnotify", 42, S)
	tw := p.op("twait", 50, S)
	ld := p.op("tload", 51, MTE2)
	s.hostInit(winW, 1, 0x1000)
	s.hostInit(sigS, 1, 0x3000)
	s.hostInit(winW, 0, 0x1000)
	s.ev(machine.Event{Kind: machine.EvRunStart})
	s.issue(0, 0, st, MTE3)
	s.exec(ag(0, 0, MTE3), st, nil, gmAcc(winW, 1, 0x1000, 0x1100, true))
	if barrier {
		s.barrier(0, 0, ALL, bar)
	}
	s.ev(machine.Event{Kind: machine.EvNotify, Agent: ag(0, 0, S), Op: nt, Word: "add", Value: 1,
		Accesses: []machine.Access{gmAcc(sigS, 1, 0x3000, 0x3004, true)}})
	s.ev(machine.Event{Kind: machine.EvSignalWait, Agent: ag(1, 0, S), Op: tw,
		Accesses: []machine.Access{gmAcc(sigS, 1, 0x3000, 0x3004, false)}})
	s.issue(1, 0, ld, MTE2)
	s.exec(ag(1, 0, MTE2), ld, nil, gmAcc(winW, 1, 0x1000, 0x1100, false))
}

func TestCrossRankSignal(t *testing.T) {
	s := newSim(Options{})
	crossRank(s, true)
	if fs := s.d.Findings(); len(fs) != 0 {
		t.Errorf("with barrier: got %v", fs)
	}
	s = newSim(Options{})
	crossRank(s, false)
	fs := s.d.Findings()
	if len(fs) != 1 || fs[0].Kind != KindRAW || fs[0].First.Rank != 0 || fs[0].Second.Rank != 1 {
		t.Fatalf("without barrier: got %+v", fs)
	}
	if fs[0].Buffer != "@W[rank=1]" || !strings.Contains(fs[0].Hint, "tnotify") {
		t.Errorf("buffer %q hint %q", fs[0].Buffer, fs[0].Hint)
	}
}

// Cross-core hand-off through GM with an FFTS flag (AIC FIX store, AIV load).
func TestCrossCoreFFTS(t *testing.T) {
	for _, flag := range []bool{true, false} {
		s := newSim(Options{})
		p := &prog{}
		st := p.op("tstore", 60, FIX)
		set := p.op("ffts_set", 61, S)
		wt := p.op("ffts_wait", 70, S)
		ld := p.op("tload", 71, MTE2)
		s.hostInit(gmA, 0, 0)
		s.ev(machine.Event{Kind: machine.EvRunStart})
		s.issue(0, 0, st, FIX)
		s.exec(ag(0, 0, FIX), st, nil, gmAcc(gmA, 0, 0, 0x100, true))
		if flag {
			s.issue(0, 0, set, FIX)
			s.ev(machine.Event{Kind: machine.EvCrossSet, Agent: ag(0, 0, FIX), Op: set, ID: 3, Mode: 2, Peers: []int32{1, 2}})
			s.ev(machine.Event{Kind: machine.EvCrossWait, Agent: ag(0, 1, S), Op: wt, ID: 3})
		}
		s.issue(0, 1, ld, MTE2)
		s.exec(ag(0, 1, MTE2), ld, nil, gmAcc(gmA, 0, 0, 0x100, false))
		fs := s.d.Findings()
		if flag && len(fs) != 0 {
			t.Errorf("with ffts: got %v", fs)
		}
		if !flag {
			if len(fs) != 1 || fs[0].Kind != KindRAW || !strings.Contains(fs[0].Hint, "ffts_set FIX, 0 #mode=2") {
				t.Errorf("without ffts: got %+v", fs)
			}
		}
	}
}

func TestAtomicAdds(t *testing.T) {
	s := newSim(Options{})
	p := &prog{}
	a1 := p.op("tstore", 80, MTE3)
	a2 := p.op("tstore", 81, MTE3)
	rd := p.op("tload", 82, MTE2)
	s.hostInit(gmA, 0, 0)
	s.ev(machine.Event{Kind: machine.EvRunStart})
	acc := gmAcc(gmA, 0, 0, 0x100, true)
	acc.Atomic = true
	s.exec(ag(0, 0, MTE3), a1, nil, acc)
	s.exec(ag(0, 1, MTE3), a2, nil, acc)
	if fs := s.d.Findings(); len(fs) != 0 {
		t.Fatalf("two atomic adds race: %v", fs)
	}
	s.exec(ag(0, 2, MTE2), rd, nil, gmAcc(gmA, 0, 0, 0x100, false))
	fs := s.d.Findings()
	if got := kinds(fs); !cmp.Equal(got, []string{KindRAW, KindRAW}) {
		t.Fatalf("read after unordered atomics: got %v", got)
	}
	if !strings.Contains(fs[0].Message, "atomically adds to") {
		t.Errorf("message %q", fs[0].Message)
	}
}

// kernels.md §3(d) R5: a reset store racing a peer's atomic add.
func resetRace(s *sim, resetFirst, ordered bool) {
	p := &prog{}
	add := p.op("tnotify", 90, S)
	tw := p.op("twait", 91, S)
	reset := p.op("st", 92, S)
	s.hostInit(sigS, 0, 0x3000)
	s.ev(machine.Event{Kind: machine.EvRunStart})
	notify := func() {
		s.ev(machine.Event{Kind: machine.EvNotify, Agent: ag(1, 0, S), Op: add, Word: "add", Value: 1,
			Accesses: []machine.Access{gmAcc(sigS, 0, 0x3000, 0x3004, true)}})
	}
	store := func() {
		if ordered {
			s.ev(machine.Event{Kind: machine.EvSignalWait, Agent: ag(0, 0, S), Op: tw,
				Accesses: []machine.Access{gmAcc(sigS, 0, 0x3000, 0x3004, false)}})
		}
		s.exec(ag(0, 0, S), reset, nil, gmAcc(sigS, 0, 0x3000, 0x3004, true))
	}
	if resetFirst {
		store()
		notify()
	} else {
		notify()
		store()
	}
}

func TestResetRacesAtomic(t *testing.T) {
	var prev []Finding
	for _, first := range []bool{false, true} {
		s := newSim(Options{})
		resetRace(s, first, false)
		fs := s.d.Findings()
		if len(fs) != 1 || fs[0].Kind != KindResetRacesAtomic || fs[0].First.Op != "st" || fs[0].Second.Op != "tnotify" {
			t.Fatalf("resetFirst=%v: got %+v", first, fs)
		}
		if prev != nil {
			if d := cmp.Diff(prev, fs); d != "" {
				t.Errorf("time order changed the report:\n%s", d)
			}
		}
		prev = fs
	}
	s := newSim(Options{})
	resetRace(s, false, true)
	if fs := s.d.Findings(); len(fs) != 0 {
		t.Errorf("reset after waiting for the add: got %v", fs)
	}
}

func TestFlagProtocol(t *testing.T) {
	p := &prog{}
	set1 := p.op("set_flag", 100, S)
	set2 := p.op("set_flag", 101, S)
	wt := p.op("wait_flag", 102, S)
	bad := p.op("set_flag", 103, S)

	t.Run("double-set", func(t *testing.T) {
		s := newSim(Options{})
		s.set(0, 0, MTE2, V, 1, set1)
		s.set(0, 0, MTE2, V, 1, set2)
		s.wait(0, 0, MTE2, V, 1, wt)
		fs := s.d.Findings()
		if len(fs) != 1 || fs[0].Kind != KindDoubleSet || fs[0].First.Line != 100 || fs[0].Second.Line != 101 {
			t.Fatalf("got %+v", fs)
		}
		// Set, wait, set, wait with nothing telling MTE2 that V waited:
		// the second set can reach the flag first on another timing.
		s = newSim(Options{})
		s.set(0, 0, MTE2, V, 1, set1)
		s.wait(0, 0, MTE2, V, 1, wt)
		s.set(0, 0, MTE2, V, 1, set2)
		s.wait(0, 0, MTE2, V, 1, wt)
		if fs := s.d.Findings(); len(fs) != 1 || fs[0].Kind != KindDoubleSet || fs[0].First.Line != 100 || fs[0].Second.Line != 101 {
			t.Fatalf("set, wait, set, wait without a reverse flag: got %v", fs)
		}
		// With the reverse flag V -> MTE2 after the wait, the second set
		// happens after the first is consumed: clean.
		back := p.op("set_flag", 104, S)
		backWait := p.op("wait_flag", 105, S)
		s = newSim(Options{})
		s.set(0, 0, MTE2, V, 1, set1)
		s.wait(0, 0, MTE2, V, 1, wt)
		s.set(0, 0, V, MTE2, 2, back)
		s.wait(0, 0, V, MTE2, 2, backWait)
		s.set(0, 0, MTE2, V, 1, set2)
		s.wait(0, 0, MTE2, V, 1, wt)
		if fs := s.d.Findings(); len(fs) != 0 {
			t.Fatalf("set, wait, reverse flag, set, wait: got %v", fs)
		}
		// The reverse flag set before the wait does not count: V's set
		// publishes only what came before the wait.
		s = newSim(Options{})
		s.set(0, 0, MTE2, V, 1, set1)
		s.set(0, 0, V, MTE2, 2, back)
		s.wait(0, 0, MTE2, V, 1, wt)
		s.wait(0, 0, V, MTE2, 2, backWait)
		s.set(0, 0, MTE2, V, 1, set2)
		s.wait(0, 0, MTE2, V, 1, wt)
		if fs := s.d.Findings(); len(fs) != 1 || fs[0].Kind != KindDoubleSet {
			t.Fatalf("reverse flag set before the wait: got %v", fs)
		}
	})
	t.Run("double-set verdict ignores which waits ran", func(t *testing.T) {
		// Three sets of MTE2 -> V #1. The third is checked against wait 1
		// (error when unordered) and wait 2 (note); whether wait 2 ran
		// before the third set is timing and must not matter.
		set3 := p.op("set_flag", 106, S)
		back := p.op("set_flag", 107, S)
		backWait := p.op("wait_flag", 108, S)
		for _, tc := range []struct {
			name       string
			reverse    bool // V -> MTE2 after wait 1 orders set 3 after it
			wait2First bool
			want       string
		}{
			{"no back-pressure, wait 2 late", false, false, "error"},
			{"no back-pressure, wait 2 early", false, true, "error"},
			{"one set of slack, wait 2 late", true, false, "note"},
			{"one set of slack, wait 2 early", true, true, "note"},
		} {
			s := newSim(Options{})
			s.set(0, 0, MTE2, V, 1, set1)
			s.wait(0, 0, MTE2, V, 1, wt)
			if tc.reverse {
				s.set(0, 0, V, MTE2, 2, back)
				s.wait(0, 0, V, MTE2, 2, backWait)
			}
			s.set(0, 0, MTE2, V, 1, set2)
			if tc.wait2First {
				s.wait(0, 0, MTE2, V, 1, wt)
			}
			s.set(0, 0, MTE2, V, 1, set3)
			if !tc.wait2First {
				s.wait(0, 0, MTE2, V, 1, wt)
			}
			s.wait(0, 0, MTE2, V, 1, wt)
			var got []string
			for _, f := range s.d.Findings() {
				if f.Kind == KindDoubleSet && f.First.Line == 101 && f.Second.Line == 106 {
					got = append(got, f.Severity)
				}
			}
			if len(got) != 1 || got[0] != tc.want {
				t.Errorf("%s: set 2 -> set 3 double sets %v, want one %s", tc.name, got, tc.want)
			}
		}
	})
	t.Run("unpaired-set", func(t *testing.T) {
		s := newSim(Options{})
		s.set(0, 0, MTE2, V, 1, set1)
		s.ev(machine.Event{Kind: machine.EvKernelEnd, Agent: ag(0, 0, S), Flags: []machine.Flag{{Src: MTE2, Dst: V, ID: 1}}})
		fs := s.d.Findings()
		if len(fs) != 1 || fs[0].Kind != KindUnpairedSet || fs[0].First.Line != 100 || fs[0].Severity != "warning" {
			t.Fatalf("got %+v", fs)
		}
		s = newSim(Options{})
		s.set(0, 0, MTE2, V, 1, set1)
		s.wait(0, 0, MTE2, V, 1, wt)
		s.ev(machine.Event{Kind: machine.EvKernelEnd, Agent: ag(0, 0, S)})
		if fs := s.d.Findings(); len(fs) != 0 {
			t.Fatalf("paired: got %v", fs)
		}
	})
	t.Run("bad-event-id", func(t *testing.T) {
		s := newSim(Options{})
		s.set(0, 0, MTE2, V, 8, bad)
		fs := s.d.Findings()
		if len(fs) != 1 || fs[0].Kind != KindBadEventID || fs[0].First.Line != 103 {
			t.Fatalf("got %+v", fs)
		}
		s = newSim(Options{})
		s.set(0, 0, MTE2, V, 7, bad)
		s.wait(0, 0, MTE2, V, 7, wt)
		if fs := s.d.Findings(); len(fs) != 0 {
			t.Fatalf("id 7: got %v", fs)
		}
	})
}

func TestDeadlock(t *testing.T) {
	p := &prog{}
	w1 := p.op("wait_flag", 110, S)
	w2 := p.op("twait", 120, S)
	s := newSim(Options{})
	s.ev(machine.Event{Kind: machine.EvDeadlock, Blocked: []machine.Blocked{
		{Agent: ag(0, 0, MTE1), Op: w1, Reason: "wait_flag MTE2->MTE1 #1: nobody will set it"},
		{Agent: ag(1, 0, S), Op: w2, Reason: "twait @S[3] >= 1: value 0"},
	}})
	fs := s.d.Findings()
	if len(fs) != 1 || fs[0].Kind != KindDeadlock || fs[0].First.Line != 110 || fs[0].Second.Line != 120 {
		t.Fatalf("got %+v", fs)
	}
	if !strings.Contains(fs[0].Message, "nobody will set it") || !strings.Contains(fs[0].Message, "value 0") {
		t.Errorf("message %q", fs[0].Message)
	}
	// A DeadlockError after the event adds nothing.
	s.d.NoteError(&machine.DeadlockError{Blocked: []machine.Blocked{{Agent: ag(0, 0, MTE1), Op: w1, Reason: "x"}}})
	if n := len(s.d.Findings()); n != 1 {
		t.Errorf("after NoteError: %d findings", n)
	}
}

func TestUninitRead(t *testing.T) {
	p := &prog{}
	ld := p.op("tload", 130, MTE2)
	mv := p.op("tmov", 131, MTE1)
	for _, tc := range []struct {
		name string
		init string // "", "data", "poison"
		want int
	}{{"never written", "", 1}, {"host init", "data", 0}, {"host poison", "poison", 1}} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSim(Options{})
			switch tc.init {
			case "data":
				s.hostInit(gmA, 0, 0)
			case "poison":
				s.hostInit(gmA, 0, 0)
				s.ev(machine.Event{Kind: machine.EvHostWrite, Word: "poison", Accesses: []machine.Access{gmAcc(gmA, 0, 0, 0x1000, true)}})
			}
			s.ev(machine.Event{Kind: machine.EvRunStart})
			s.exec(ag(0, 0, MTE2), ld, nil, gmAcc(gmA, 0, 0x10, 0x20, false), tileAcc(tileA, 0, 0, 0, true))
			fs := s.d.Findings()
			if len(fs) != tc.want {
				t.Fatalf("got %+v", fs)
			}
			if tc.want == 1 && (fs[0].Kind != KindUninitRead || fs[0].Range != [2]int64{0x10, 0x20}) {
				t.Errorf("got %+v", fs[0])
			}
		})
	}
	// A local buffer read before anything filled it in this launch.
	s := newSim(Options{})
	s.exec(ag(0, 0, MTE1), mv, nil, tileAcc(tileA, 0, 0, 0, false))
	if fs := s.d.Findings(); len(fs) != 1 || fs[0].Kind != KindUninitRead || fs[0].Buffer != "%a" {
		t.Fatalf("local: got %+v", fs)
	}
}

func TestOutOfBounds(t *testing.T) {
	p := &prog{}
	op := p.op("tload", 140, MTE2)
	s := newSim(Options{})
	s.hostInit(gmA, 0, 0x8000)
	s.ev(machine.Event{Kind: machine.EvRunStart})
	bad := tileAcc(tileA, 0, 0, 0, true)
	bad.Hi += 0x20
	s.exec(ag(0, 0, MTE2), op, nil, gmAcc(gmA, 0, 0x8F00, 0x9010, false), bad)
	fs := s.d.Findings()
	// Both accesses of the one instruction are out of bounds: one finding
	// (deduplicated by site) counted twice. The GM tail past the tensor is
	// also uninitialised.
	var oob int
	for _, f := range fs {
		if f.Kind == KindOutOfBounds {
			oob += f.Count
		}
	}
	if oob != 2 {
		t.Fatalf("got %+v, want two out-of-bounds", fs)
	}
	s = newSim(Options{})
	s.hostInit(gmA, 0, 0x8000)
	s.exec(ag(0, 0, MTE2), op, nil, gmAcc(gmA, 0, 0x8F00, 0x9000, false), tileAcc(tileA, 0, 0, 0, true))
	if fs := s.d.Findings(); len(fs) != 0 {
		t.Fatalf("in bounds: got %v", fs)
	}
}

// Accesses of different runs never race: the host joins everything.
func TestRunBoundary(t *testing.T) {
	p := &prog{}
	w := p.op("tstore", 150, MTE3)
	r := p.op("tload", 151, MTE2)
	s := newSim(Options{})
	s.ev(machine.Event{Kind: machine.EvRunStart})
	s.exec(ag(0, 0, MTE3), w, nil, gmAcc(gmA, 0, 0, 0x100, true))
	s.ev(machine.Event{Kind: machine.EvRunEnd})
	s.ev(machine.Event{Kind: machine.EvRunStart})
	s.exec(ag(0, 5, MTE2), r, nil, gmAcc(gmA, 0, 0, 0x100, false))
	if fs := s.d.Findings(); len(fs) != 0 {
		t.Fatalf("got %v", fs)
	}
}

func TestSuppressions(t *testing.T) {
	sup, err := ParseSuppressions("s.txt", []byte("# known\nRAW t.pto:13   # the tmov\n\nWAR other.pto:1\n* a.pto:2\nkept-LIMIT b.pto:3\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []Suppression{{Kind: "RAW", File: "t.pto", Line: 13}, {Kind: "WAR", File: "other.pto", Line: 1},
		{Kind: "*", File: "a.pto", Line: 2}, {Kind: "kept-LIMIT", File: "b.pto", Line: 3}}
	if d := cmp.Diff(want, sup); d != "" {
		t.Fatal(d)
	}
	s := newSim(Options{Suppress: sup})
	crossPipeRAW(s, false, false)
	if fs := s.d.Findings(); len(fs) != 0 {
		t.Errorf("suppressed: got %v", fs)
	}
	// A site copied from a report with its column suppresses that site, and
	// only at that column (it was read as a file "t.pto:13", line 5, and
	// suppressed nothing).
	all := newSim(Options{})
	crossPipeRAW(all, false, false)
	fs := all.d.Findings()
	if len(fs) == 0 {
		t.Fatal("crossPipeRAW reports nothing")
	}
	at := fs[0].First
	for _, tc := range []struct {
		col  int
		kept bool
	}{{at.Col, false}, {at.Col + 1, true}} {
		src := fmt.Sprintf("%s %s:%d:%d\n", fs[0].Kind, at.File, at.Line, tc.col)
		sup, err := ParseSuppressions("s.txt", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		if want := (Suppression{Kind: fs[0].Kind, File: at.File, Line: at.Line, Col: tc.col}); sup[0] != want {
			t.Errorf("%q read as %+v, want %+v", src, sup[0], want)
		}
		s := newSim(Options{Suppress: sup})
		crossPipeRAW(s, false, false)
		if got := len(s.d.Findings()) > 0; got != tc.kept {
			t.Errorf("%q: findings kept %v, want %v", src, got, tc.kept)
		}
	}
	// Each bad line is an error at its line and column; a line of any
	// length is read (a bufio.Scanner said "token too long" past 64 KiB).
	for _, tc := range []struct{ src, want string }{
		{"RAW", `s.txt:1:1: error: want ` + "`KIND file:line`" + `, got "RAW"`},
		{"# c\n  RAW t.pto", `s.txt:2:7: error: "t.pto": want file:line`},
		{"RAW t.pto:x", `s.txt:1:5: error: "t.pto:x": bad line number`},
		{"RAW t.pto:3 extra", `s.txt:1:1: error: want ` + "`KIND file:line`" + `, got "RAW t.pto:3 extra"`},
		{"RAW t.pto:0\nWAR u.pto:", `s.txt:1:5: error: "t.pto:0": bad line number (and 1 more errors)`},
		{"RAW t.pto:0:5", `s.txt:1:5: error: "t.pto:0:5": bad line number`},
		// A misspelt kind matched nothing and suppressed nothing, silently.
		{"# c\n RWA t.pto:3", `s.txt:2:2: error: unknown kind "RWA": want * or one of RAW, WAR, WAW, deadlock, unpaired-set, double-set, bad-event-id, uninit-read, out-of-bounds, reset-races-atomic, stale-signal, wait-overwritten, fault, unchecked-flag, kept-limit`},
		{"uninit t.pto:3", `s.txt:1:1: error: unknown kind "uninit": want * or one of RAW`},
	} {
		_, err := ParseSuppressions("s.txt", []byte(tc.src))
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %s", tc.src, err, tc.want)
		}
	}
	long := "RAW " + strings.Repeat("d/", 40000) + "t.pto:13\n"
	if sup, err := ParseSuppressions("s.txt", []byte(long)); err != nil || len(sup) != 1 || sup[0].Line != 13 {
		t.Errorf("a line of %d bytes: %v, %v", len(long), sup, err)
	}
}

// The hint picks an event id the pipe pair does not use yet.
func TestHintPicksFreeID(t *testing.T) {
	s := newSim(Options{})
	p := &prog{}
	s.set(0, 0, MTE2, MTE1, 0, p.op("set_flag", 1, S))
	s.wait(0, 0, MTE2, MTE1, 0, p.op("wait_flag", 2, S))
	crossPipeRAW(s, false, false)
	fs := s.d.Findings()
	if len(fs) == 0 || !strings.Contains(fs[len(fs)-1].Hint, "set_flag MTE2, MTE1, 1") {
		t.Fatalf("got %+v", fs)
	}
}

func TestNoPanicOnJunk(t *testing.T) {
	d := New(Options{})
	d.Observe(nil)
	for k := machine.EvNone; k <= machine.EvDeadlock+1; k++ {
		d.Observe(&machine.Event{Kind: k, Agent: machine.Agent{Rank: -3, Core: 7, Pipe: 200}, Flags: []machine.Flag{{Src: 99, Dst: 0, ID: -1}},
			Accesses: []machine.Access{{Space: asm.UB, Lo: 10, Hi: 5}, {Space: asm.UB, Lo: 0, Hi: 4, Write: true}}, Blocked: []machine.Blocked{{}}})
	}
	// A strided access with an absurd row count, on a local buffer and on
	// GM: bounded work, no hang.
	for _, sp := range []asm.Space{asm.L1, asm.GM} {
		d.Observe(&machine.Event{Kind: machine.EvExec, Agent: machine.Agent{Core: 0, Pipe: asm.PipeMTE2},
			Accesses: []machine.Access{{Space: sp, Core: 0, Lo: 64, Hi: 65, Rows: 1 << 40, Pitch: 64, Write: true}}})
	}
	// Cores below -1 are junk agents, each its own, and the same junk
	// agent twice is one agent (keyed apart from the dense table, so the
	// key fits a 32-bit int too).
	for _, c := range []int32{-2, math.MinInt32, -2, math.MinInt32} {
		d.Observe(&machine.Event{Kind: machine.EvExec, Agent: machine.Agent{Rank: 1, Core: c, Pipe: asm.PipeV},
			Accesses: []machine.Access{{Space: asm.UB, Core: c, Lo: 0, Hi: 4, Write: true}}})
	}
	if len(d.junkIdx) != 2 {
		t.Errorf("%d junk agents for cores -2 and MinInt32, want 2", len(d.junkIdx))
	}
	d.NoteError(&machine.Fault{Msg: "bad dynamic event id 9"})
	_ = d.Findings()
}

// A finding names the iteration of every loop around its sites, up to
// maxIter levels: allgather_gemm's compute kernel is 7 deep, and its H3
// mutant's WAR is in the innermost loop.
func TestFindingIterDepth(t *testing.T) {
	d := runLint(t, assembleProgram(t, "allgather_gemm/mutant_h3"), true)
	fs := d.Findings()
	found := false
	for _, f := range fs {
		if f.Kind != KindWAR {
			continue
		}
		found = true
		for _, s := range []Site{f.First, f.Second} {
			if len(s.Iter) != 7 {
				t.Errorf("%s at line %d: iter %v, want the 7 levels of the compute nest", f.Kind, s.Line, s.Iter)
			}
		}
	}
	if !found {
		t.Fatalf("no WAR among %v", kinds(fs))
	}
}

// An SDMA race's hint says what orders the copy: a wait_async on the core
// that issued it (then a hand-over when the other access is another
// core's), or the earlier access known complete before the copy's issue.
// (Without Options.CoreName, AIV n of a rank is core 24+n: r0.c24.)
func TestSDMAHintNamesTheFix(t *testing.T) {
	for _, tc := range []struct{ prog, want string }{
		{"hazards/sdma_raw", "`wait_async` on the transfer's event between sdma (line 16) and tload (line 18)"},
		{"hazards/tput_async_src_reuse", "`wait_async` on the transfer's event between sdma (line 30) and tstore (line 26)"},
		{"hazards/sdma_other_core", "on r0.c24, `wait_async` on the transfer's event after sdma (line 33), then hand over to r0.c25 before tload (line 43)"},
		{"hazards/sdma_prefetch_loop", "make tload (line 36) complete before the copy is issued: `pipe_barrier ALL`"},
		{"hazards/sdma_land_scale", "hand over from r0.c25 after tload (line 38) to r0.c24 before it issues sdma (line 31)"},
	} {
		fs := runLint(t, assembleProgram(t, tc.prog), true).Findings()
		if len(fs) != 1 || !strings.Contains(fs[0].Hint, tc.want) {
			t.Errorf("%s: %v, want one finding whose hint says %q", tc.prog, fs, tc.want)
		}
	}
}
