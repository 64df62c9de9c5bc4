package hazard

import (
	"testing"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
)

// sigCnt is an int32 signal word, as the machine declares signals.
var sigCnt = &asm.TensorInfo{Name: "S", Index: 2, Class: asm.TensorSignal, Bytes: 64, DType: asm.I32}

// TestCounterWaitNeedsOnlyItsAdds: rank 1 writes slot k of @W on MTE3,
// drains and adds 1 to rank 0's counter, for k = 0, 1, 2; rank 0 waits for
// the counter to reach want and loads slot want-1 (want 0: slot 0). The
// wait is ordered after rank 1's first `want` adds, whether the later ones
// landed before it polled or not: the load of slot k races rank 1's write
// of it exactly when want <= k (a wait on the previous round's count,
// hazards/ring_slots_wrong_round), under every order of the adds and the
// wait. It used to be ordered after every add that had landed, so the race
// showed only when the wait came before the add.
func TestCounterWaitNeedsOnlyItsAdds(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cmp    string
		want   int64
		slot   int64
		landed int // rank 1's adds in before the wait (at least those it needs)
		race   bool
	}{
		{"needs all", "ge", 3, 2, 3, false},
		{"needs two, third in", "ge", 2, 2, 3, true},
		{"needs two, third out", "ge", 2, 2, 2, true},
		{"needs two, reads the second", "ge", 2, 1, 3, false},
		{"needs none, all in", "ge", 0, 0, 3, true},
		{"needs none, none in", "ge", 0, 0, 0, true},
		{"eq two, third out", "eq", 2, 1, 2, false},
		{"gt one, third in", "gt", 1, 1, 3, false},
		{"gt one, third in, slot 2", "gt", 1, 2, 3, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSim(Options{})
			p := &prog{}
			st := p.op("tstore", 40, MTE3)
			bar := p.op("pipe_barrier", 41, S)
			nt := p.op("tnotify", 42, S)
			tw := p.op("twait", 50, S)
			tw.Args = []asm.Arg{{Kind: asm.ArgGM, GM: sigCnt}, {Kind: asm.ArgScalar, Val: asm.CExpr{Const: true, Val: tc.want}}}
			tw.Attrs = []asm.CAttr{{Key: "cmp", Word: tc.cmp, IsWord: true}}
			ld := p.op("tload", 51, MTE2)
			word := func(write bool) []machine.Access {
				return []machine.Access{gmAcc(sigCnt, 0, 0x3000, 0x3004, write)}
			}
			s.hostInit(winW, 0, 0x1000)
			s.hostInit(sigCnt, 0, 0x3000)
			s.ev(machine.Event{Kind: machine.EvRunStart})
			val := int64(0)
			round := func(k int64) {
				s.issue(1, 0, st, MTE3)
				s.exec(ag(1, 0, MTE3), st, []int64{k}, gmAcc(winW, 0, 0x1000+0x100*k, 0x1100+0x100*k, true))
				s.barrier(1, 0, ALL, bar)
				val++
				s.ev(machine.Event{Kind: machine.EvNotify, Agent: ag(1, 0, S), Op: nt, Word: "add", Value: 1, Accesses: word(true)})
			}
			k := int64(0)
			for ; k < int64(tc.landed); k++ {
				round(k)
			}
			s.ev(machine.Event{Kind: machine.EvSignalWait, Agent: ag(0, 0, S), Op: tw, Value: val, Want: tc.want, Accesses: word(false)})
			s.issue(0, 0, ld, MTE2)
			s.exec(ag(0, 0, MTE2), ld, nil, gmAcc(winW, 0, 0x1000+0x100*tc.slot, 0x1100+0x100*tc.slot, false))
			for ; k < 3; k++ {
				round(k)
			}
			s.ev(machine.Event{Kind: machine.EvRunEnd})
			fs := s.d.Findings()
			if !tc.race {
				if len(fs) != 0 {
					t.Fatalf("want clean, got %v", kinds(fs))
				}
				return
			}
			if len(fs) != 1 || fs[0].Kind != KindRAW || fs[0].First.Line != 40 || fs[0].Second.Line != 51 {
				t.Fatalf("want RAW 40, 51; got %v", kinds(fs))
			}
		})
	}
}
