package hazard

import (
	"math/rand/v2"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
)

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
		out, n := prunePrior(l, &r, tc.low, 10)
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
