package hazard

import (
	"testing"

	"github.com/ptoasm/ptoasm/asm"
)

// TestLocalDrain lints programs whose pipe_barrier ALL drains take the
// one-pass path (drainLocal) with the path off and on, the joins checked
// (checkLocalJoins: every agent of a drained core against the full join):
// the findings must be the same, and the path must have been taken.
func TestLocalDrain(t *testing.T) {
	for _, tc := range []struct {
		name string
		defs []asm.Define
	}{
		{"allreduce_ring/ring_final", []asm.Define{{Name: "RANKS", Value: "8"}}},
		{"allreduce_ring/ring_final", []asm.Define{{Name: "RANKS", Value: "40"}}},
		{"allreduce_ring/ring_second_barrier", nil},
		{"hazards/h1_publish_without_fence", nil},
		{"hazards/syncall", nil},
		{"gemm_ar_compute", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj := assembleProgram(t, tc.name, tc.defs...)
			checkLocalJoins, localDrains = true, 0
			defer func() { checkLocalJoins, noLocalDrain = false, false }()
			noLocalDrain = true
			want := lintTiming(t, obj, true)
			if localDrains != 0 {
				t.Fatalf("%d local drains with the path off", localDrains)
			}
			noLocalDrain = false
			got := lintTiming(t, obj, true)
			if got != want {
				t.Errorf("findings differ with the one-pass drain:\n got %s\nwant %s", got, want)
			}
			if localDrains == 0 {
				t.Errorf("no drain took the one-pass path")
			}
			t.Logf("%d local drains", localDrains)
		})
	}
}
