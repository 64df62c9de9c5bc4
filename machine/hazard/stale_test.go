package hazard

import (
	"slices"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
)

// twaitGE returns a `twait @S[0], want #cmp=ge` op stub; with reg the
// operand is a register (%gen), whose value only the event's Want carries.
func twaitGE(p *prog, line int, want int64, reg bool) *asm.COp {
	op := p.op("twait", line, asm.PipeS)
	v := asm.CExpr{Const: true, Val: want}
	if reg {
		v = asm.CExpr{}
	}
	op.Args = []asm.Arg{{Kind: asm.ArgGM, GM: sigS}, {Kind: asm.ArgScalar, Val: v}}
	op.Attrs = []asm.CAttr{{Key: "cmp", Word: "ge", IsWord: true}}
	return op
}

// TestStaleSignal: run 1 notifies and waits; run 2 waits on the same word.
// Whether run 2's own notify landed before its wait (observed value 2) or not
// (value 1), the wait passes on run 1's +1 alone: a stale-signal with the
// same sites either way. A host reset between the runs, or a wait that needs
// more than what is left over, is clean. The verdict is the same whether the
// wait's operand is a constant or a register (%gen): the detector checks the
// value the wait compared with at run time.
func TestStaleSignal(t *testing.T) {
	for _, tc := range []struct {
		name        string
		reset       bool
		notifyFirst bool // run 2's notify lands before its wait
		want        int64
		stale       bool
	}{
		{"notify first", false, true, 1, true},
		{"wait first", false, false, 1, true},
		{"host reset", true, true, 1, false},
		{"needs this run", false, true, 2, false},
	} {
		for _, reg := range []bool{false, true} {
			name := tc.name + "/const"
			if reg {
				name = tc.name + "/register"
			}
			t.Run(name, func(t *testing.T) {
				s := newSim(Options{})
				p := &prog{}
				nt := p.op("tnotify", 10, asm.PipeS)
				tw := twaitGE(p, 11, tc.want, reg)
				s.hostInit(sigS, 0, 0x3000)
				val := int64(0)
				notify := func() {
					val++
					s.ev(machine.Event{Kind: machine.EvNotify, Agent: ag(1, 0, asm.PipeS), Op: nt, Word: "add", Value: 1, Accesses: sigAcc(true)})
				}
				wait := func() {
					s.ev(machine.Event{Kind: machine.EvSignalWait, Agent: ag(0, 0, asm.PipeS), Op: tw, Value: val, Want: tc.want, Accesses: sigAcc(false)})
				}
				s.ev(machine.Event{Kind: machine.EvRunStart})
				notify()
				if tc.want <= 1 {
					wait()
				}
				s.ev(machine.Event{Kind: machine.EvRunEnd})
				if tc.reset {
					s.hostInit(sigS, 0, 0x3000)
					val = 0
				}
				s.ev(machine.Event{Kind: machine.EvRunStart})
				if tc.notifyFirst {
					notify()
					wait()
				} else {
					wait()
					notify()
				}
				s.ev(machine.Event{Kind: machine.EvRunEnd})
				fs := s.d.Findings()
				if !tc.stale {
					if len(fs) != 0 {
						t.Fatalf("got %+v", fs)
					}
					return
				}
				if len(fs) != 1 || fs[0].Kind != KindStaleSignal || fs[0].First.Line != 10 || fs[0].Second.Line != 11 || fs[0].Count != 1 {
					t.Fatalf("want one stale-signal at 10, 11; got %+v", fs)
				}
			})
		}
	}
}

// sigAcc is word 0 of @S on rank 0.
func sigAcc(write bool) []machine.Access {
	return []machine.Access{gmAcc(sigS, 0, 0x3000, 0x3004, write)}
}

// TestStaleGeneration: cumulative generations (kernels.md §3(d) R5's fix),
// `tnotify +1; twait @S[0], %gen #cmp=ge` with %gen = base + round + 1, over
// two launches and no reset. When the generation restarts every launch
// (base 0, or an epoch the kernel reads but never advances) every round of
// the second launch passes on what the first left; an epoch that advances
// by the first launch's rounds (or a host reset) makes every round need this
// launch's notify. The verdict is the same whichever of a round's notify and
// wait comes first.
func TestStaleGeneration(t *testing.T) {
	const rounds = 3
	for _, tc := range []struct {
		name  string
		base  int64 // %gen's base in the second launch
		reset bool
		stale int // stale rounds of the second launch
	}{
		{"restarts", 0, false, rounds},
		{"epoch behind by one round", rounds - 1, false, 1},
		{"epoch advanced", rounds, false, 0},
		{"host reset", 0, true, 0},
	} {
		for _, notifyFirst := range []bool{true, false} {
			t.Run(orderName(tc.name, notifyFirst), func(t *testing.T) {
				s := newSim(Options{})
				p := &prog{}
				nt := p.op("tnotify", 20, asm.PipeS)
				tw := twaitGE(p, 21, 0, true)
				s.hostInit(sigS, 0, 0x3000)
				val := int64(0)
				notify := func() {
					val++
					s.ev(machine.Event{Kind: machine.EvNotify, Agent: ag(1, 0, asm.PipeS), Op: nt, Word: "add", Value: 1, Accesses: sigAcc(true)})
				}
				wait := func(gen int64) {
					s.ev(machine.Event{Kind: machine.EvSignalWait, Agent: ag(0, 0, asm.PipeS), Op: tw, Value: val, Want: gen, Accesses: sigAcc(false)})
				}
				s.ev(machine.Event{Kind: machine.EvRunStart})
				for g := range int64(rounds) {
					notify()
					wait(g + 1)
				}
				s.ev(machine.Event{Kind: machine.EvRunEnd})
				if tc.reset {
					s.hostInit(sigS, 0, 0x3000)
					val = 0
				}
				s.ev(machine.Event{Kind: machine.EvRunStart})
				for g := range int64(rounds) {
					gen := tc.base + g + 1
					// The machine reports a wait once it is satisfied: it
					// comes first only when the value already satisfies it.
					if notifyFirst || val < gen {
						notify()
						wait(gen)
					} else {
						wait(gen)
						notify()
					}
				}
				s.ev(machine.Event{Kind: machine.EvRunEnd})
				fs := s.d.Findings()
				if tc.stale == 0 {
					if len(fs) != 0 {
						t.Fatalf("got %+v", fs)
					}
					return
				}
				if len(fs) != 1 || fs[0].Kind != KindStaleSignal || fs[0].First.Line != 20 || fs[0].Second.Line != 21 || fs[0].Count != tc.stale {
					t.Fatalf("want one stale-signal at 20, 21 count %d; got %+v", tc.stale, fs)
				}
			})
		}
	}
}

// TestStaleWordOfSeveral: a wait over two words (`twait @S[0], 1 #cmp=ge
// #count=2`) in a second run, with no reset between the runs. Each word is
// compared with the operand, so each is checked for what earlier runs left
// on its own value (Event.Words): a stale first word beside a fresh last
// one is a stale-signal as surely as a stale last word
// (hazards/stale_words_grown, which only the last word's check missed).
// Run 1 adds to the words stale1 names; run 2 adds to both, after the wait
// or before it.
func TestStaleWordOfSeveral(t *testing.T) {
	for _, tc := range []struct {
		name   string
		stale1 [2]bool // run 1 added to word k
		stale  int     // stale words of run 2's wait
	}{
		{"first word stale", [2]bool{true, false}, 1},
		{"last word stale", [2]bool{false, true}, 1},
		{"both stale", [2]bool{true, true}, 2},
		{"none stale", [2]bool{false, false}, 0},
	} {
		for _, notifyFirst := range []bool{true, false} {
			t.Run(orderName(tc.name, notifyFirst), func(t *testing.T) {
				s := newSim(Options{})
				p := &prog{}
				nt := p.op("tnotify", 30, asm.PipeS)
				tw := twaitGE(p, 31, 1, false)
				s.hostInit(sigCnt, 0, 0x3000)
				var val [2]int64
				notify := func(k int) {
					val[k]++
					w := 0x3000 + 4*int64(k)
					s.ev(machine.Event{Kind: machine.EvNotify, Agent: ag(1, int32(k), asm.PipeS), Op: nt, Word: "add", Value: 1,
						Accesses: []machine.Access{gmAcc(sigCnt, 0, w, w+4, true)}})
				}
				wait := func() {
					s.ev(machine.Event{Kind: machine.EvSignalWait, Agent: ag(0, 0, asm.PipeS), Op: tw, Value: val[1], Want: 1,
						Words: slices.Clone(val[:]), Accesses: []machine.Access{gmAcc(sigCnt, 0, 0x3000, 0x3008, false)}})
				}
				s.ev(machine.Event{Kind: machine.EvRunStart})
				for k, on := range tc.stale1 {
					if on {
						notify(k)
					}
				}
				s.ev(machine.Event{Kind: machine.EvRunEnd})
				s.ev(machine.Event{Kind: machine.EvRunStart})
				// The machine reports the wait once every word holds 1.
				for k := range 2 {
					if notifyFirst || val[k] == 0 {
						notify(k)
					}
				}
				wait()
				for k := range 2 {
					if val[k] < int64(run2Adds(tc.stale1[k])) {
						notify(k)
					}
				}
				s.ev(machine.Event{Kind: machine.EvRunEnd})
				var got []Finding
				for _, f := range s.d.Findings() {
					if f.Kind == KindStaleSignal {
						got = append(got, f)
					}
				}
				if tc.stale == 0 {
					if len(got) != 0 {
						t.Fatalf("got %+v", got)
					}
					return
				}
				if len(got) != 1 || got[0].First.Line != 30 || got[0].Second.Line != 31 || got[0].Count != tc.stale {
					t.Fatalf("want one stale-signal at 30, 31 count %d; got %+v", tc.stale, got)
				}
			})
		}
	}
}

// run2Adds is what a word holds after run 2's add: 2 when run 1 added too.
func run2Adds(stale bool) int {
	if stale {
		return 2
	}
	return 1
}

// orderName names a subtest by which of a run's notify and wait comes
// first.
func orderName(name string, notifyFirst bool) string {
	if notifyFirst {
		return name + "/notify first"
	}
	return name + "/wait first"
}
