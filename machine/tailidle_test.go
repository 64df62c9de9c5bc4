package machine

import (
	"fmt"
	"testing"
)

// TestTailElapsesWhileIdle: a vector op's pending tail runs from the op's
// end, so a flag, barrier or barrier-first op on V after V sat in a
// wait_flag stall longer than the tail pays none of it, and a
// `pipe_barrier ALL` that drains the tail first (drainAll) saves nothing
// (docs/profile.md, "Trends", T8: the flush charged the whole tail again
// and the added barrier made hazards/correlated_conditions 13 cycles
// faster).
func TestTailElapsesWhileIdle(t *testing.T) {
	const kernel = `gm X : f32 [16, 64] = random(seed=1, lo=1, hi=2)
gm I : i32 [16, 64] = random(seed=2, lo=-9, hi=9)
gm Y : f32 [16, 64] = zero
kernel k : aiv {
    tile %%x : vec f32 [16, 64]
    tile %%y : vec f32 [16, 64]
    tile %%z : vec f32 [16, 64]
    tile %%i : vec i32 [16, 64]
    tile %%h : vec f16 [16, 64]
    tload %%x, @X[0, 0]
    tload %%i, @I[0, 0]
    set_flag MTE2, V, 0
    wait_flag MTE2, V, 0
    tadds %%y, %%x, 1.0 // leaves its tail pending
    tload %%z, @X[0, 0]
    set_flag MTE2, V, 1
    wait_flag MTE2, V, 1 // V idles a whole load, far past the tail
%s
%s
    set_flag V, MTE3, 0
    wait_flag V, MTE3, 0
    tstore @Y[0, 0], %%y
}
launch ranks=1 {
    run k blocks=1
}
`
	for _, tc := range []struct{ name, flush string }{
		{"pipe_barrier V", "    pipe_barrier V"},
		{"set_flag", "    set_flag V, MTE3, 1\n    wait_flag V, MTE3, 1"},
		{"internal barrier before", "    tcvt %h, %i #rnd=rint"},
	} {
		flush := tc.flush
		t.Run(tc.name, func(t *testing.T) {
			cycles := func(extra string) int64 {
				_, r, err := runObj(t, assemble(t, fmt.Sprintf(kernel, extra, flush)), Options{TimingOnly: true})
				if err != nil {
					t.Fatal(err)
				}
				return r.Cycles
			}
			plain, drained := cycles(""), cycles("    pipe_barrier ALL")
			if drained < plain {
				t.Errorf("with pipe_barrier ALL before it %d cycles, %d without", drained, plain)
			}
		})
	}
}
