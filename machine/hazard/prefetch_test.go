package hazard

import (
	"encoding/json"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
)

// TestLookahead: replay's lookahead (prefetch.go) names, ahead of nearly
// every flag set and wait of real kernels, the channel the event then uses,
// and the findings are the same with it off. A prediction that reads the
// wrong lines would change no finding, only the time, so the test counts
// the predictions (checkWarm).
func TestLookahead(t *testing.T) {
	for _, tc := range []struct {
		name string
		defs []asm.Define
	}{
		{"allgather_gemm", []asm.Define{{Name: "MODE", Value: "pipelined"}}},
		{"allreduce_ring/ring_final", []asm.Define{{Name: "RANKS", Value: "16"}}},
		{"gemm_performance", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj := assembleProgram(t, tc.name, tc.defs...)
			checkWarm, warmHits, warmMisses = true, 0, 0
			on := runLintWith(t, obj, Options{})
			checkWarm = false
			hits, misses := warmHits, warmMisses
			noPrefetch = true
			off := runLintWith(t, obj, Options{})
			noPrefetch = false
			if hits == 0 || misses*100 > (hits+misses)*15 {
				t.Errorf("the lookahead named the channel of %d flag events and missed %d, want at least 85%% named", hits, misses)
			}
			t.Logf("%d flag events named ahead, %d missed", hits, misses)
			a, _ := json.Marshal(on.Findings())
			b, _ := json.Marshal(off.Findings())
			if string(a) != string(b) {
				t.Errorf("findings differ with the lookahead off:\n%s\n%s", a, b)
			}
		})
	}
}
