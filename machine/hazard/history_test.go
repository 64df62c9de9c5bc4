package hazard

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
)

// TestIssueSeenQuick holds quick to mark: from the same watermark, every
// number quick takes must leave what mark leaves, over shuffled numbers
// (nearby and far), repeats, numbers that never come and jumps.
func TestIssueSeenQuick(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	taken := 0
	for trial := range 200 {
		var s issueSeen
		next := int64(1)
		for range 4 * seenWindow {
			var k int64
			switch r := rng.IntN(100); {
			case r < 60:
				k = next // in order
				next++
			case r < 85:
				k = next + int64(rng.IntN(40)) // ahead, within queues
			case r < 93:
				k = max(1, next-int64(rng.IntN(40))) // again, or late
			case r < 97:
				k = next + int64(rng.IntN(2*seenWindow)) // near the window's end
			case r < 98:
				k = next + int64(3*seenWindow) // a jump
				next = k
			default:
				next++ // a number that never comes
				continue
			}
			want := s
			want.mark(k)
			if s.quick(k) {
				taken++
				if s != want {
					t.Fatalf("trial %d: quick(%d) left watermark %d and bits %x, mark %d and %x", trial, k, s.low, s.bits, want.low, want.bits)
				}
			} else {
				s.mark(k)
			}
		}
	}
	if taken == 0 {
		t.Fatal("quick took no number")
	}
}

// TestIssueSeenWatermark marks a core's issue numbers in shuffled orders
// and checks the watermark against the lowest number not yet marked, and
// that a number that never comes is given up only once the window has
// passed it.
func TestIssueSeenWatermark(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	for trial := range 50 {
		n := 1 + rng.IntN(3*seenWindow)
		order := rng.Perm(n)
		// Keep the disorder within what queues allow: swap only nearby.
		nums := make([]int64, n)
		for i := range nums {
			nums[i] = int64(i + 1)
		}
		for i := range order {
			j := min(n-1, i+order[i]%32)
			nums[i], nums[j] = nums[j], nums[i]
		}
		var s issueSeen
		marked := map[int64]bool{}
		for _, k := range nums {
			s.mark(k)
			marked[k] = true
			want := int64(0)
			for marked[want+1] {
				want++
			}
			if s.low != want {
				t.Fatalf("trial %d: after marking %d the watermark is %d, want %d", trial, k, s.low, want)
			}
		}
	}
	var s issueSeen
	for k := int64(2); k <= seenWindow; k++ {
		s.mark(k) // 1 never comes
	}
	if s.low != 0 {
		t.Fatalf("watermark %d passed a number that is missing within the window", s.low)
	}
	s.mark(seenWindow + 1)
	if s.low != seenWindow+1 {
		t.Fatalf("watermark %d: a number missing for a whole window should be given up", s.low)
	}
	s.mark(10 * seenWindow) // a core numbered from far above
	if s.low != 10*seenWindow {
		t.Fatalf("watermark %d after a jump, want %d", s.low, 10*seenWindow)
	}
}

// TestPrunePriorKeepsWhatLateAccessesNeed builds a site's instances, issued
// two numbers apart (another pipe's op between each two), and checks which
// stay: an instance goes only when every op issued before the next
// instance has landed; the instances of other sites stay in their order.
func TestPrunePriorKeepsWhatLateAccessesNeed(t *testing.T) {
	op, other := &asm.COp{}, &asm.COp{}
	mk := func(o *asm.COp, issue int64) rec {
		return rec{agent: 1, epoch: uint32(issue), gen: 1, serial: 2 * issue, op: o, write: true}
	}
	var list []rec
	for k := int64(1); k <= 19; k += 2 {
		list = append(list, mk(op, k))
		if k == 5 {
			list = append(list, mk(other, 6))
		}
	}
	r := mk(op, 21)
	for _, tc := range []struct {
		low  int64
		keep []int64 // issue numbers of op's instances that stay
	}{
		{low: 0, keep: []int64{1, 3, 5, 7, 9, 11, 13, 15, 17, 19}},
		{low: 2, keep: []int64{3, 5, 7, 9, 11, 13, 15, 17, 19}},
		{low: 9, keep: []int64{9, 11, 13, 15, 17, 19}},
		{low: 19, keep: []int64{19}},
		{low: 20, keep: nil},
	} {
		l := append([]rec(nil), list...)
		out, n := (&Detector{}).prunePrior(nil, l, &r, tc.low, 10)
		var got []int64
		sawOther := false
		for i := range out {
			if out[i].op == other {
				sawOther = true
				continue
			}
			got = append(got, issueOf(out[i].serial))
		}
		if !sawOther || n != len(got) || len(got) != len(tc.keep) {
			t.Fatalf("low %d: kept %v (count %d, other site kept %v), want %v", tc.low, got, n, sawOther, tc.keep)
		}
		for i := range got {
			if got[i] != tc.keep[i] {
				t.Fatalf("low %d: kept %v, want %v", tc.low, got, tc.keep)
			}
		}
	}
	// GM keeps the fixed bound: no watermark.
	d := New(Options{})
	if low := d.landed(&r, &machine.Access{Space: asm.GM}); low != -1 {
		t.Fatalf("GM watermark %d, want -1", low)
	}
}

// TestOverwrittenWriteStaysShadowed: a vector op's in-place write that a
// later vector op overwrites after a barrier stays in the cell, shadowed,
// while the load issued before the overwrite is still out, and goes once
// it lands; so does a write whose value another pipe read in order (the
// flags of a correct kernel): whether that read reached the detector
// before the overwrite follows timing (hazards/store_before_scratch).
func TestOverwrittenWriteStaysShadowed(t *testing.T) {
	shadowedOps := func(d *Detector) []string {
		acc := tileAcc(ubX, 0, 0, 0, false)
		m, hi := d.shadowFor(&acc).page(acc.Lo, acc.Hi)
		i, j := m.span(acc.Lo, hi)
		var out []string
		for _, c := range m.cells[i:j] {
			for _, w := range c.adds() {
				if w.shadowed() {
					out = append(out, w.op.Instr.Op)
				}
			}
		}
		return out
	}
	// The op issued first, landing last, is the load; or a store, a read,
	// which drops the shadowed write as a write does once nothing issued
	// before the overwrite is still to come.
	for _, c := range []struct{ handed, lastRead bool }{{false, false}, {true, false}, {false, true}} {
		handed := c.handed
		s := newSim(Options{})
		p := &prog{}
		first, firstPipe := p.op("tload", 10, MTE2), MTE2
		if c.lastRead {
			first, firstPipe = p.op("tstore", 9, MTE3), MTE3
		}
		sq := p.op("tmul", 11, V)
		set := p.op("set_flag", 12, V)
		wt := p.op("wait_flag", 13, MTE3)
		st := p.op("tstore", 14, MTE3)
		bar := p.op("pipe_barrier", 15, V)
		ov := p.op("tmuls", 16, V)
		exec := func(pipe asm.Pipe, op *asm.COp, issue int64, acc ...machine.Access) {
			s.ev(machine.Event{Kind: machine.EvExec, Agent: ag(0, 0, pipe), Op: op, Issue: issue, Accesses: acc})
		}
		// Issue order: first 1, sq 2, (set 3, wait 4, st 5,) bar, ov;
		// the first lands last.
		exec(V, sq, 2, tileAcc(ubX, 0, 0, 0, false), tileAcc(ubX, 0, 0, 0, true))
		next := int64(3)
		if handed {
			s.ev(machine.Event{Kind: machine.EvFlagSet, Agent: ag(0, 0, V), Op: set, Issue: 3, Flag: machine.Flag{Src: V, Dst: MTE3}})
			s.ev(machine.Event{Kind: machine.EvFlagWait, Agent: ag(0, 0, MTE3), Op: wt, Issue: 4, Flag: machine.Flag{Src: V, Dst: MTE3}})
			exec(MTE3, st, 5, tileAcc(ubX, 0, 0, 0, false))
			next = 6
		}
		s.ev(machine.Event{Kind: machine.EvBarrier, Agent: ag(0, 0, V), Target: V, Op: bar, Issue: next})
		exec(V, ov, next+1, tileAcc(ubX, 0, 0, 0, true))
		got := shadowedOps(s.d)
		if want := []string{"tmul"}; !slices.Equal(got, want) {
			t.Fatalf("%+v: shadowed writes after the overwrite %v, want %v", c, got, want)
		}
		exec(firstPipe, first, 1, tileAcc(ubX, 0, 0, 0, !c.lastRead))
		if got := shadowedOps(s.d); len(got) != 0 {
			t.Fatalf("%+v: shadowed writes %v stay after every op issued before the overwrite landed", c, got)
		}
	}
}
