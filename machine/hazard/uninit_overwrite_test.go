package hazard_test

import (
	"fmt"
	"testing"

	"github.com/ptoasm/ptoasm/machine/hazard"
)

// TestUninitPastOrderedOverwrite lands a read, meant before the two writes
// of its bytes and ordered after neither, before the first write (no slow
// work), between or after both (slow vector work ahead of it), the second
// write ordered after the first. The uninit-read must stay at every timing:
// an ordered overwrite cleared firstW, and a read landing after it was taken
// as filled (docs/hazards.md, "uninit-read"). In a core's UB the first
// write stays shadowed; in GM it stays in olds.
func TestUninitPastOrderedOverwrite(t *testing.T) {
	const local = `gm X : f32 [8, 64] = random(seed=5, lo=-1, hi=1)
gm Y : f32 [4, 64] = zero
kernel k : aiv {
    tile %%t : vec f32 [4, 64]
    tile %%u : vec f32 [4, 64]
    tile %%pad : vec f32 [128, 128] @ 0x10000
    for %%i = 0 to %d {
        texpands %%pad, 0.0
        pipe_barrier V
    }
    tmuls %%u, %%t, 2.0
    tload %%t, @X[0, 0]
    pipe_barrier MTE2
    tload %%t, @X[4, 0]
    set_flag V, MTE3, 0
    wait_flag V, MTE3, 0
    tstore @Y[0, 0], %%u
}
launch ranks=1 {
    run k blocks=1
}
`
	const global = `gm X : f32 [8, 64] = random(seed=5, lo=-1, hi=1)
gm T : f32 [4, 64] = poison
gm Y : f32 [4, 64] = zero
kernel k : aiv {
    tile %%t : vec f32 [4, 64]
    tile %%pad : vec f32 [128, 128] @ 0x10000
    if block_idx == 1 {
        for %%i = 0 to %d {
            texpands %%pad, 0.0
            pipe_barrier V
        }
        set_flag V, MTE2, 0
        wait_flag V, MTE2, 0
        tload %%t, @T[0, 0]
        set_flag MTE2, MTE3, 0
        wait_flag MTE2, MTE3, 0
        tstore @Y[0, 0], %%t
    }
    if block_idx == 0 {
        tload %%t, @X[0, 0]
        set_flag MTE2, MTE3, 0
        wait_flag MTE2, MTE3, 0
        tstore @T[0, 0], %%t
        pipe_barrier MTE3
        tstore @T[0, 0], %%t
    }
}
launch ranks=1 {
    run k blocks=2
}
`
	want := []string{hazard.KindWAR, hazard.KindWAR, hazard.KindUninitRead}
	for _, tc := range []struct {
		name, src string
	}{{"UB", local}, {"GM", global}} {
		for _, slow := range []int{0, 2, 4, 16} {
			t.Run(fmt.Sprintf("%s slow %d", tc.name, slow), func(t *testing.T) {
				checkKinds(t, fmt.Sprintf(tc.src, slow), want)
			})
		}
	}
}
