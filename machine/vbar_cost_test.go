package machine

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
)

// An op with an internal pipe_barrier(PIPE_V) (asm.VBarrier) costs V what
// the same op without it costs between manual `pipe_barrier V`s where its
// barriers fall: before it (the previous op's tail flushed), after it (its
// own tail), or both for an op that also closes with one (Tail).
func TestInternalBarrierCharge(t *testing.T) {
	const kernel = `const R = 16
const C = 64
gm X : f32 [R, C] = random(seed=1, lo=1, hi=2)
gm I : i32 [R, C] = random(seed=2, lo=-9, hi=9)
kernel k : aiv {
    tile %%x : vec f32 [R, C]
    tile %%y : vec f32 [R, C]
    tile %%z : vec f32 [R, C]
    tile %%i : vec i32 [R, C]
    tile %%h : vec f16 [R, C]
    tile %%w : vec f32 [R, C]
    tload %%x, @X[0, 0]
    tload %%i, @I[0, 0]
    set_flag MTE2, V, 0
    wait_flag MTE2, V, 0
    tadds %%y, %%x, 1.0
%s
    tadds %%y, %%x, 2.0
}
launch ranks=1 {
    run k blocks=1
}
`
	for _, tc := range []struct {
		name, op string
	}{
		{"barrier after every access", "tcolmax %z, %x"},
		{"barrier before every access", "tcvt %h, %i #rnd=rint"},
		{"barrier in between", "tgather %z, %x, %i"},
		{"barrier in between and at the end", "tpow %z, %x, %y, %w"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			busyV := func(body string, strip bool) int64 {
				obj := assemble(t, fmt.Sprintf(kernel, body))
				var vb *asm.VBarrier
				for _, k := range obj.Kernels {
					for _, op := range k.Ops {
						if op.Info.VBar != nil && op.Info.VBar.Applies(op) {
							vb = op.Info.VBar
							if strip {
								info := *op.Info
								info.VBar = nil
								op.Info = &info
							}
						}
					}
				}
				if vb == nil {
					t.Fatalf("%s takes no internal barrier", tc.op)
				}
				_, r, err := runObj(t, obj, Options{TimingOnly: true})
				if err != nil {
					t.Fatal(err)
				}
				for _, p := range r.Pipes {
					if p.Pipe == "V" {
						return p.BusyCycles
					}
				}
				t.Fatal("no V pipe")
				return 0
			}
			var vb *asm.VBarrier
			for _, op := range asm.ISA {
				if strings.HasPrefix(tc.op, op.Name+" ") {
					vb = op.VBar
				}
			}
			manual := "    " + tc.op
			if vb.Pre == 0 || vb.Post != 0 {
				manual = "    pipe_barrier V\n" + manual
			}
			if vb.Post == 0 || vb.Tail {
				manual += "\n    pipe_barrier V"
			}
			got, want := busyV("    "+tc.op, false), busyV(manual, true)
			if got != want {
				t.Errorf("V busy %d cycles with the internal barrier, %d with manual ones:\n%s", got, want, manual)
			}
		})
	}
}
