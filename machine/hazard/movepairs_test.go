package hazard

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ptoasm/ptoasm/asm"
)

// TestMovedPairNotCounted: a race's count is its pairs of agents, and a
// pair whose only race moved to a later write (moveRace) is not one of
// them. Two cubes run a store of an L0C tile (FIX) that a matmul (M)
// overwrites unordered; on cube 0 a second matmul, ordered after the
// first on M (here by a barrier), overwrites it again, so cube 0's race of the store with the
// first matmul moves to the second (landing after both, the store meets
// the second alone). The WAR of the store and the first matmul counts
// cube 1's pair only, in every order; it counted cube 0's too where the
// store landed between the two matmuls (hazards/grouped_gemm_tail_no_reverse
// at SC = 2, WAR `stt, mmt`: 2 or 1 pipe pairs under a per-unit skew).
func TestMovedPairNotCounted(t *testing.T) {
	acc := &asm.TileInfo{Name: "%c", Space: asm.L0C, Addr: []int64{0}, Bytes: 0x400, Count: 1}
	p := &prog{}
	st := p.op("tstore", 10, FIX)
	mm1 := p.op("tmatmul", 12, M)
	bar := p.op("pipe_barrier", 13, M)
	mm2 := p.op("tmatmul", 14, M)
	steps := []func(s *sim){
		func(s *sim) { s.exec(ag(0, 0, FIX), st, nil, tileAcc(acc, 0, 0, 0, false)) },
		func(s *sim) { s.exec(ag(0, 0, M), mm1, nil, tileAcc(acc, 0, 0, 0, true)) },
		func(s *sim) {
			s.barrier(0, 0, M, bar)
			s.exec(ag(0, 0, M), mm2, nil, tileAcc(acc, 0, 0, 0, true))
		},
		func(s *sim) { s.exec(ag(0, 1, FIX), st, nil, tileAcc(acc, 0, 1, 0, false)) },
		func(s *sim) { s.exec(ag(0, 1, M), mm1, nil, tileAcc(acc, 0, 1, 0, true)) },
	}
	want := []string{"WAR 10->12 x1", "WAR 10->14 x1"}
	n := 0
	for _, order := range permutations(len(steps)) {
		if slices.Index(order, 1) > slices.Index(order, 2) {
			continue // one pipe: the first matmul lands first
		}
		s := newSim(Options{})
		for c := int32(0); c < 2; c++ {
			s.issue(0, c, st, FIX)
			s.issue(0, c, mm1, M)
			if c == 0 {
				s.issue(0, c, bar, M)
				s.issue(0, c, mm2, M)
			}
		}
		for _, i := range order {
			steps[i](s)
		}
		if diff := cmp.Diff(want, raceLines(s.d.Findings())); diff != "" {
			t.Errorf("order %v: findings (-want +got):\n%s", order, diff)
		}
		n++
	}
	if n != 60 {
		t.Fatalf("%d orders, want 60", n)
	}
}
