package hazard

import (
	"slices"
	"strconv"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
)

// TestEqWaitOnStartValue: rank 0 waits for its word @S `== want` (line
// 50) and rank 1 writes the word (line 42: a set or an add of val), the
// run's kernels saying so at EvRunStart. A wait that passed before any
// write of the run read the word's value at the run's start, which the
// write, unless ordered after the wait (rank 0 adds to rank 1's @T, line
// 52, and rank 1 waits for it, line 53), can overwrite before the poll:
// wait-overwritten `50, 42`. On the timing where the write landed first
// the wait hangs, and the pair is the same when the start value (the
// first notify's Event.Want, here a host-written 7 or the initial 0)
// passes its compare and no write of the run is ordered before it (rank 1
// adds to rank 0's @T, line 54, and rank 0 waits, line 55). Until session
// 27 a wait that passed on the start value was not checked and a hung one
// was the deadlock alone: splitk_turn_epi_initial's verdict followed
// whether the epilogue started before split 0's hand-off.
func TestEqWaitOnStartValue(t *testing.T) {
	const (
		after  = "passed, then the write"
		gated  = "passed, the write ordered after it"
		hung   = "the write, then hung"
		behind = "the write ordered before the hung wait"
	)
	for _, tc := range []struct {
		name     string
		order    string
		start    int64 // the word's value at the run's start
		want     int64
		add      bool
		val      int64
		findings []string // kind first,second
	}{
		{"a set after the wait", after, 0, 0, false, 1, []string{"wait-overwritten 50,42"}},
		{"a set of the same value", after, 0, 0, false, 0, nil},
		{"an add after the wait", after, 0, 0, true, 1, []string{"wait-overwritten 50,42"}},
		{"a set ordered after the wait", gated, 0, 0, false, 1, nil},
		{"a host-written value, a set after", after, 7, 7, false, 1, []string{"wait-overwritten 50,42"}},
		{"hung on the initial value", hung, 0, 0, false, 1, []string{"deadlock 50,0", "wait-overwritten 50,42"}},
		{"hung on a host-written value", hung, 7, 7, false, 1, []string{"deadlock 50,0", "wait-overwritten 50,42"}},
		{"hung, the start value fails", hung, 0, 5, false, 1, []string{"deadlock 50,0"}},
		{"hung, the set ordered before it", behind, 0, 0, false, 1, []string{"deadlock 50,0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &prog{}
			w1 := p.op("tnotify", 42, S)
			tw := twaitOp(p, 50, sigCnt, tc.want, "eq")
			nt0 := p.op("tnotify", 52, S)
			tw1 := twaitOp(p, 53, sigArr, 1, "ge")
			nt1 := p.op("tnotify", 54, S)
			tw0 := twaitOp(p, 55, sigArr, 1, "ge")
			k := &asm.KernelInfo{Name: "k", Ops: p.ops}
			for _, op := range p.ops {
				op.Kernel = k
			}
			s := newSim(Options{})
			s.hostInit(sigCnt, 0, 0x3000)
			s.hostInit(sigArr, 0, 0x4000)
			s.hostInit(sigArr, 1, 0x4000)
			s.ev(machine.Event{Kind: machine.EvRunStart, Kernels: []*asm.KernelInfo{k}})
			doWrite := func() {
				word := "set"
				if tc.add {
					word = "add"
				}
				s.ev(machine.Event{Kind: machine.EvNotify, Agent: ag(1, 0, S), Op: w1, Word: word, Value: tc.val, Want: tc.start, Accesses: cntWord(true)})
			}
			doWait := func() {
				s.ev(machine.Event{Kind: machine.EvSignalWait, Agent: ag(0, 0, S), Op: tw, Value: tc.start, Want: tc.want, Accesses: cntWord(false)})
			}
			// edge hands an edge from rank from to rank to through to's @T.
			edge := func(from, to int32, nt, tw *asm.COp) {
				acc := func(write bool) []machine.Access {
					return []machine.Access{gmAcc(sigArr, to, 0x4000, 0x4004, write)}
				}
				s.ev(machine.Event{Kind: machine.EvNotify, Agent: ag(from, 0, S), Op: nt, Word: "add", Value: 1, Accesses: acc(true)})
				s.ev(machine.Event{Kind: machine.EvSignalWait, Agent: ag(to, 0, S), Op: tw, Value: 1, Want: 1, Accesses: acc(false)})
			}
			switch tc.order {
			case after:
				doWait()
				doWrite()
			case gated:
				doWait()
				edge(0, 1, nt0, tw1)
				doWrite()
			case hung:
				doWrite()
			case behind:
				doWrite()
				edge(1, 0, nt1, tw0)
			}
			if tc.order == hung || tc.order == behind {
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

// TestEqCountOtherKernel: TestEqCountOvershoot's "either of two" with the
// `==` wait (line 50) in a kernel of its own ("lead") and the adds (line
// 42) in another ("follow"), rank 1's add landing before the wait's kernel
// has an event. The run's kernels, named at EvRunStart, say which signals
// an `==` wait polls, so the count keeps its adds from the first: two
// pairs whether the wait passed between the adds or hung with both in.
// Until session 27 a kernel was scanned for `==` waits at its first add or
// wait, so the adds before the waiting kernel's first event were not kept
// and both cases were clean (bar the deadlock):
// counter_eq_overshoot_two_kernels reported 6 of its 18 pairs.
func TestEqCountOtherKernel(t *testing.T) {
	for _, hang := range []bool{false, true} {
		t.Run("hung="+strconv.FormatBool(hang), func(t *testing.T) {
			p := &prog{}
			nt := p.op("tnotify", 42, S)
			tw := twaitOp(p, 50, sigCnt, 1, "eq")
			follow := &asm.KernelInfo{Name: "follow", Ops: []*asm.COp{nt}}
			lead := &asm.KernelInfo{Name: "lead", Ops: []*asm.COp{tw}}
			nt.Kernel, tw.Kernel = follow, lead
			d, err := Settle(Options{}, func(opt Options) (*Detector, error) {
				s := newSim(opt)
				s.hostInit(sigCnt, 0, 0x3000)
				s.ev(machine.Event{Kind: machine.EvRunStart, Kernels: []*asm.KernelInfo{lead, follow}})
				add := func(x int32, old int64) {
					s.ev(machine.Event{Kind: machine.EvNotify, Agent: ag(x, 0, S), Op: nt, Word: "add", Value: 1, Want: old, Accesses: cntWord(true)})
				}
				add(1, 0)
				if hang {
					add(2, 1)
					bs := &machine.BlockedSignal{Access: cntWord(false)[0], Want: 1, Value: 2}
					s.ev(machine.Event{Kind: machine.EvDeadlock, Blocked: []machine.Blocked{{Agent: ag(0, 0, S), Op: tw, Reason: "twait", Signal: bs}}})
				} else {
					s.ev(machine.Event{Kind: machine.EvSignalWait, Agent: ag(0, 0, S), Op: tw, Value: 1, Want: 1, Accesses: cntWord(false)})
					add(2, 1)
				}
				s.ev(machine.Event{Kind: machine.EvRunEnd})
				return s.d, nil
			})
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, f := range d.Findings() {
				if f.Kind == KindDeadlock {
					continue
				}
				if f.Kind != KindWaitOverwritten || f.First.Line != 50 || f.Second.Line != 42 {
					t.Fatalf("want wait-overwritten 50, 42; got %v %+v", kinds(d.Findings()), f)
				}
				n = f.Count
			}
			if n != 2 {
				t.Fatalf("want 2 pairs, got %d: %+v", n, d.Findings())
			}
		})
	}
}
