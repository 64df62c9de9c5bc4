package machine

import (
	"testing"

	"github.com/ptoasm/ptoasm/asm"
)

// TestPlacement: every core id an observer sees in a mixed launch in waves
// (10 blocks on 4 AICs + 8 AIVs) has the placement it ran: the first wave's
// physical cores their block by placeStream's order (AIC a, AIVs 2a and
// 2a+1), the later blocks their virtual core's block and position; all of
// one mixed stream that runs in waves. A run that never started has none.
func TestPlacement(t *testing.T) {
	rec := &recorder{}
	m, _, err := runObj(t, assemble(t, wavesMixed, asm.Define{Name: "BLOCKS", Value: "10"}), Options{Profile: smallDie(t), Observers: []Observer{rec}})
	if err != nil {
		t.Fatal(err)
	}
	n := m.nAIC + m.nAIV
	seen := map[int]bool{}
	for _, e := range rec.evs {
		if e.Kind == EvRunStart && e.ID != 0 {
			t.Errorf("EvRunStart ID %d, want 0", e.ID)
		}
		c := int(e.Agent.Core)
		if c < 0 || seen[c] {
			continue
		}
		seen[c] = true
		want := Placement{Mixed: true, Waves: true}
		switch {
		case c < m.nAIC:
			want.Block = c
		case c < n:
			want.Block, want.AIV, want.Sub = (c-m.nAIC)/2, true, (c-m.nAIC)%2
		default:
			b, pos := (c-n)/numVirtualPos, (c-n)%numVirtualPos
			want.Block, want.AIV, want.Sub = b, pos != vpMixedAIC, max(pos-vpMixedAIV0, 0)
		}
		if got, ok := m.Placement(0, 0, c); !ok || got != want {
			t.Errorf("%s: Placement = %+v, %v; want %+v", m.CoreName(0, c), got, ok, want)
		}
	}
	if len(seen) != 30 {
		t.Errorf("saw %d cores, want 30 (10 blocks x 3)", len(seen))
	}
	if _, ok := m.Placement(1, 0, 0); ok {
		t.Errorf("Placement of run 1, which never ran: ok")
	}
}
