package asm_test

import (
	"fmt"
	"testing"
)

// TestOpBarriers holds each op's place among its kernel's grid barriers as
// written (COp.Barriers): counted from the start of its innermost loop's
// body, a barrier in a branch counting whether or not a run takes it, and
// a nested loop counting, for the ops after it, as the barriers it holds.
// Each op's Kernel is the kernel whose body holds it (numbered from 1 in
// declaration order here).
func TestOpBarriers(t *testing.T) {
	src := `gm A : f32 [16, 16] = zero

kernel v : aiv {
    tile %t : vec f32 [16, 16]
k0: tload %t, @A[0, 0]
    syncall
    if block_idx == 0 {
    k1: tload %t, @A[0, 0]
        syncall
    } else {
    k2: tload %t, @A[0, 0]
    }
k3: tload %t, @A[0, 0]
    for %i = 0 to 2 {
    l0: tload %t, @A[0, 0]
        if %i != 1 {
            syncall
        }
    l1: tload %t, @A[0, 0]
        for %j = 0 to 2 {
        n0: tload %t, @A[0, 0]
            syncall
            syncall
        n2: tload %t, @A[0, 0]
        }
    l3: tload %t, @A[0, 0]
    }
k4: tload %t, @A[0, 0]
}

kernel c : aic {
    tile %m : mat f32 [16, 16]
    while 0 {
        syncall
    w1: tload %m, @A[0, 0]
    }
c1: tload %m, @A[0, 0]
}

launch ranks=1 {
    run c + v blocks=1
}
`
	obj, errs := assembleText(t, src)
	if errs.HasErrors() {
		t.Fatal(errs)
	}
	want := map[string]string{
		"k0": "1/0", "k1": "1/1", "k2": "1/2", "k3": "1/2", "k4": "1/5",
		"l0": "1/0", "l1": "1/1", "l3": "1/3", "n0": "1/0", "n2": "1/2",
		"w1": "2/1", "c1": "2/1",
	}
	seen := 0
	for ki, k := range obj.Kernels {
		for _, op := range k.Ops {
			w, ok := want[op.Instr.Label]
			if !ok {
				continue
			}
			seen++
			kn := 0
			if op.Kernel == k {
				kn = ki + 1
			}
			if got := fmt.Sprintf("%d/%d", kn, op.Barriers); got != w {
				t.Errorf("%s: kernel/barriers %s, want %s", op.Instr.Label, got, w)
			}
		}
	}
	if seen != len(want) {
		t.Errorf("found %d of the %d labelled ops", seen, len(want))
	}
}
