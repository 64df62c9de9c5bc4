package machine

import (
	"slices"
	"strings"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
)

// TestCoreIDs: CoreIDs reads back what CoreName writes, for physical cores
// and for blocks after a first wave, and names only blocks the program's
// launches have in that position: a mixed stream's AIC and an aic stream's
// share the name "aic" (two ids when both streams reach the block), a mixed
// block's AIVs are aiv0/aiv1, an aiv block's is aiv.
func TestCoreIDs(t *testing.T) {
	obj := assemble(t, `
kernel ca : aic {
    pipe_barrier ALL
}
kernel va : aiv {
    pipe_barrier ALL
}
launch ranks=2 {
    run ca + va blocks=30
    run va blocks=50
    run ca blocks=25
}
`)
	m, err := New(obj, Options{TimingOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	v := m.virtualCore
	tests := []struct {
		name string
		rank int
		ids  []int // nil: not a core of this program
	}{
		{"r0.aic3", 0, []int{3}},
		{"r1.aiv47", 1, []int{m.nAIC + 47}},
		{"r0.b24.aic", 0, []int{v(24, vpMixedAIC), v(24, vpAIC)}},
		{"r0.b29.aic", 0, []int{v(29, vpMixedAIC)}},
		{"r1.b29.aiv1", 1, []int{v(29, vpMixedAIV1)}},
		{"r0.b49.aiv", 0, []int{v(49, vpAIV)}},
		{"r0.b50.aiv", 0, nil},  // the aiv stream has 50 blocks
		{"r0.b30.aiv0", 0, nil}, // the mixed stream has 30
		{"r0.aic24", 0, nil},    // 24 AICs
		{"r2.aic0", 0, nil},     // 2 ranks
		{"r0.aic03", 0, nil},    // not as CoreName writes it
		{"r0.b.aic", 0, nil},    // no block number
		{"r0.b5.aiv2", 0, nil},  // no such position
		{"aic3", 0, nil},        // no rank: the debugger adds the current one
		{"r0", 0, nil},
	}
	for _, tc := range tests {
		rank, ids, ok := m.CoreIDs(tc.name)
		if ok != (tc.ids != nil) || ok && (rank != tc.rank || !slices.Equal(ids, tc.ids)) {
			t.Errorf("CoreIDs(%q) = %d, %v, %v; want %d, %v", tc.name, rank, ids, ok, tc.rank, tc.ids)
			continue
		}
		for _, id := range ids {
			if got := m.CoreName(rank, id); got != tc.name {
				t.Errorf("CoreName(%d, %d) = %q, want %q", rank, id, got, tc.name)
			}
		}
	}
}

// TestMode0InWaves: a mode-0 FFTS set is refused in a stream that runs in
// waves, with the wave's size, and kept in one that has a core per block:
// a mixed launch of 30 blocks runs 24 at a time (one per AIC), so its AICs'
// all-core barrier cannot take every block; 24 blocks pass it.
func TestMode0InWaves(t *testing.T) {
	src := `
const BLOCKS = 1
kernel ca : aic {
    ffts_set FIX, 2
    ffts_wait 2
}
kernel va : aiv {
    pipe_barrier ALL
}
launch ranks=1 {
    run ca + va blocks=BLOCKS
}
`
	for _, tc := range []struct {
		blocks string
		want   string // "" for a clean run
	}{
		{"24", ""},
		{"30", "ffts mode 0 synchronises every AIC of the launch, but blocks=30 runs in waves, 24 blocks at a time per rank"},
	} {
		obj := assemble(t, src, asm.Define{Name: "BLOCKS", Value: tc.blocks})
		_, _, err := runObj(t, obj, Options{TimingOnly: true})
		f, _ := err.(*Fault)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("blocks=%s: %v", tc.blocks, err)
		case tc.want != "" && (f == nil || f.Kind != FaultSync || !strings.HasPrefix(f.Msg, tc.want) || f.Op.Instr.Pos.Line != 4):
			t.Errorf("blocks=%s: %v; want a sync fault at line 4 starting %q", tc.blocks, err, tc.want)
		}
	}
}
