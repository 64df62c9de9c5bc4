package hazard

import (
	"slices"
	"strconv"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
)

// TestWaitOverwritten: rank 1 sets rank 0's word @S to 1 (`set1`, line
// 42) and rank 0 waits for it (line 50, compare cmp with want); rank 2
// writes the word too (`w2`, line 43: a set of val, or an add of val).
// The second write can land between the set and the wait's poll unless it
// is ordered after the wait (rank 0 adds to rank 2's @T, line 52, and rank
// 2 waits for that, line 53) or, for a set, before the set (rank 2 adds to
// rank 1's @T first and rank 1 waits for it), and then the wait spins
// forever if the value fails the compare: wait-overwritten `50, 43`,
// in whichever order the write reaches the detector (after the wait, or
// before the set, which overwrote it). An add racing the set is
// reset-races-atomic alone. Until session 23 no kind said it: lint was
// clean on every order.
func TestWaitOverwritten(t *testing.T) {
	const (
		after  = "after the wait"    // set1, wait, w2
		before = "before the set"    // w2, set1, wait
		waited = "ordered after"     // set1, wait, 0 → T[2] → w2
		first  = "ordered before"    // w2 → T[1] → set1, wait
		setHB  = "add after the set" // set1 → T[2] → w2, wait before w2's add
		hung   = "hung"              // set1, w2, the wait blocked at a deadlock
		hidden = "hung behind"       // set1 → T[2] → w2 → T[0], the wait blocked
		alone  = "hung alone"        // w2, the wait blocked
	)
	for _, tc := range []struct {
		name     string
		order    string
		cmp      string
		want     int64
		add      bool
		val      int64
		findings []string // kind first,second
	}{
		{"another value after the wait", after, "eq", 1, false, 2, []string{"wait-overwritten 50,43"}},
		{"another value before the set", before, "eq", 1, false, 2, []string{"wait-overwritten 50,43"}},
		{"another value ordered after the wait", waited, "eq", 1, false, 2, nil},
		{"another value ordered before the set", first, "eq", 1, false, 2, nil},
		{"the same value after the wait", after, "eq", 1, false, 1, nil},
		{"the same value before the set", before, "eq", 1, false, 1, nil},
		{"a reset below >= after the wait", after, "ge", 1, false, 0, []string{"wait-overwritten 50,43"}},
		{"a reset below >= before the set", before, "ge", 1, false, 0, []string{"wait-overwritten 50,43"}},
		{"a larger value for >=", after, "ge", 1, false, 5, nil},
		{"!= set to the value it avoids", before, "ne", 2, false, 2, []string{"wait-overwritten 50,43"}},
		{"an add after the set, not after the wait", setHB, "eq", 1, true, 1, []string{"wait-overwritten 50,43"}},
		{"an add after the set for >=", setHB, "ge", 1, true, 1, nil},
		{"an add ordered after the wait", waited, "eq", 1, true, 1, nil},
		{"an add racing the set", after, "eq", 1, true, 1, []string{"reset-races-atomic 42,43"}},
		// The timing on which the write landed between the set and the
		// poll: the wait hangs, and the pair is the same as where it
		// passed (until session 24, the deadlock alone).
		{"another value landed before the poll", hung, "eq", 1, false, 2, []string{"deadlock 50,0", "wait-overwritten 50,43"}},
		{"a reset below >= landed before the poll", hung, "ge", 1, false, 0, []string{"deadlock 50,0", "wait-overwritten 50,43"}},
		{"the write ordered before the wait: never readable", hidden, "eq", 1, false, 2, []string{"deadlock 50,0"}},
		{"no set of the value", alone, "eq", 1, false, 2, []string{"deadlock 50,0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &prog{}
			set1 := p.op("tnotify", 42, S)
			w2 := p.op("tnotify", 43, S)
			tw := twaitOp(p, 50, sigCnt, tc.want, tc.cmp)
			nt0 := p.op("tnotify", 52, S)
			tw2 := twaitOp(p, 53, sigArr, 1, "ge")
			nt2 := p.op("tnotify", 54, S)
			tw1 := twaitOp(p, 55, sigArr, 1, "ge")
			s := newSim(Options{})
			s.hostInit(sigCnt, 0, 0x3000)
			s.hostInit(sigArr, 1, 0x4000)
			s.hostInit(sigArr, 2, 0x4000)
			s.ev(machine.Event{Kind: machine.EvRunStart})
			tWord := func(rank int32, write bool) []machine.Access {
				return []machine.Access{gmAcc(sigArr, rank, 0x4000, 0x4004, write)}
			}
			doSet1 := func() {
				s.ev(machine.Event{Kind: machine.EvNotify, Agent: ag(1, 0, S), Op: set1, Word: "set", Value: 1, Accesses: cntWord(true)})
			}
			doW2 := func() {
				word := "set"
				if tc.add {
					word = "add"
				}
				s.ev(machine.Event{Kind: machine.EvNotify, Agent: ag(2, 0, S), Op: w2, Word: word, Value: tc.val, Accesses: cntWord(true)})
			}
			doWait := func() {
				s.ev(machine.Event{Kind: machine.EvSignalWait, Agent: ag(0, 0, S), Op: tw, Value: 1, Want: tc.want, Accesses: cntWord(false)})
			}
			// to hands an edge from rank from to rank to through to's @T.
			to := func(from, rank int32, nt, tw *asm.COp) {
				s.ev(machine.Event{Kind: machine.EvNotify, Agent: ag(from, 0, S), Op: nt, Word: "add", Value: 1, Accesses: tWord(rank, true)})
				s.ev(machine.Event{Kind: machine.EvSignalWait, Agent: ag(rank, 0, S), Op: tw, Value: 1, Want: 1, Accesses: tWord(rank, false)})
			}
			switch tc.order {
			case after:
				doSet1()
				doWait()
				doW2()
			case before:
				doW2()
				doSet1()
				doWait()
			case waited:
				doSet1()
				doWait()
				to(0, 2, nt0, tw2)
				doW2()
			case first:
				doW2()
				to(2, 1, nt2, tw1)
				doSet1()
				doWait()
			case setHB:
				doSet1()
				to(1, 2, nt2, tw2)
				doWait()
				doW2()
			case hung:
				doSet1()
				doW2()
			case hidden:
				doSet1()
				to(1, 2, nt2, tw2)
				doW2()
				to(2, 0, nt0, tw1)
			case alone:
				doW2()
			}
			if tc.order == hung || tc.order == hidden || tc.order == alone {
				bs := &machine.BlockedSignal{Access: cntWord(false)[0], Want: tc.want, Value: tc.val}
				s.ev(machine.Event{Kind: machine.EvDeadlock, Blocked: []machine.Blocked{{Agent: ag(0, 0, S), Op: tw, Reason: "twait", Signal: bs}}})
			}
			s.ev(machine.Event{Kind: machine.EvRunEnd})
			var got []string
			for _, f := range s.d.Findings() {
				got = append(got, f.Kind+" "+strconv.Itoa(f.First.Line)+","+strconv.Itoa(f.Second.Line))
			}
			if !slices.Equal(got, tc.findings) {
				t.Fatalf("want %v, got %v", tc.findings, got)
			}
		})
	}
}

// TestWaitOverwrittenCount: rank 2 sets rank 0's word twice from one site
// (line 43, values 2 and 3) with nothing ordering either against rank 1's
// set of 1 (line 42) or rank 0's wait for it (line 50): two instances,
// whether both land after the wait (two events) or both before the set
// (the wait meets both on its racing list in one event, whose notes of one
// pair of sites used to be merged into one).
func TestWaitOverwrittenCount(t *testing.T) {
	for _, early := range []bool{false, true} {
		p := &prog{}
		set1 := p.op("tnotify", 42, S)
		w2 := p.op("tnotify", 43, S)
		tw := twaitOp(p, 50, sigCnt, 1, "eq")
		s := newSim(Options{})
		s.hostInit(sigCnt, 0, 0x3000)
		s.ev(machine.Event{Kind: machine.EvRunStart})
		sets := func() {
			for v := int64(2); v <= 3; v++ {
				s.ev(machine.Event{Kind: machine.EvNotify, Agent: ag(2, 0, S), Op: w2, Word: "set", Value: v, Accesses: cntWord(true)})
			}
		}
		if early {
			sets()
		}
		s.ev(machine.Event{Kind: machine.EvNotify, Agent: ag(1, 0, S), Op: set1, Word: "set", Value: 1, Accesses: cntWord(true)})
		s.ev(machine.Event{Kind: machine.EvSignalWait, Agent: ag(0, 0, S), Op: tw, Value: 1, Want: 1, Accesses: cntWord(false)})
		if !early {
			sets()
		}
		s.ev(machine.Event{Kind: machine.EvRunEnd})
		fs := s.d.Findings()
		if len(fs) != 1 || fs[0].Kind != KindWaitOverwritten || fs[0].Count != 2 {
			t.Errorf("sets before the set %v: want wait-overwritten count 2, got %+v", early, fs)
		}
	}
}

// TestWaitOverwrittenBound: rank 2 sets rank 0's word NS times from one
// site (line 43), none ordered against rank 1's set of 1 (line 42) or
// rank 0's wait for it (line 50). Arriving after the wait, every set
// meets it: count NS. Arriving before the set, they are on its racing list
// only as far as the word keeps them (16): past that the count was 16,
// silently, on the timing where they came first; now the report says the
// bound was reached (a kept-limit note naming the word), and a lint at a
// larger --max-kept counts them all.
func TestWaitOverwrittenBound(t *testing.T) {
	for _, tc := range []struct {
		ns, maxKept int
		early       bool
		count       int
		note        bool
	}{
		{16, 0, true, 16, false},
		{17, 0, false, 17, false},
		{17, 0, true, 16, true},
		{17, 20, true, 17, false},
		{40, 0, false, 40, false},
	} {
		p := &prog{}
		set1 := p.op("tnotify", 42, S)
		w2 := p.op("tnotify", 43, S)
		tw := twaitOp(p, 50, sigCnt, 1, "eq")
		s := newSim(Options{MaxKept: tc.maxKept})
		s.hostInit(sigCnt, 0, 0x3000)
		s.ev(machine.Event{Kind: machine.EvRunStart})
		sets := func() {
			for v := range int64(tc.ns) {
				s.ev(machine.Event{Kind: machine.EvNotify, Agent: ag(2, 0, S), Op: w2, Word: "set", Value: v + 2, Accesses: cntWord(true)})
			}
		}
		if tc.early {
			sets()
		}
		s.ev(machine.Event{Kind: machine.EvNotify, Agent: ag(1, 0, S), Op: set1, Word: "set", Value: 1, Accesses: cntWord(true)})
		s.ev(machine.Event{Kind: machine.EvSignalWait, Agent: ag(0, 0, S), Op: tw, Value: 1, Want: 1, Accesses: cntWord(false)})
		if !tc.early {
			sets()
		}
		s.ev(machine.Event{Kind: machine.EvRunEnd})
		count, note := 0, false
		for _, f := range s.d.Findings() {
			switch f.Kind {
			case KindWaitOverwritten:
				count = f.Count
			case KindKeptLimit:
				note = true
			}
		}
		if count != tc.count || note != tc.note {
			t.Errorf("%+v: got count %d, note %v", tc, count, note)
		}
	}
}
