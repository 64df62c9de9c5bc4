package asm_test

import "testing"

// TestLoops checks each op's loops (COp.Loops) and which pairs of loops are
// two roles' (Loop.Exclusive), which the hazard detector's intended order
// reads: loops one after the other are not, loops in the then and else arms
// of one if are, and so are loops in two ifs on rank, block_idx or
// subblock_idx.
func TestLoops(t *testing.T) {
	src := `kernel k : aiv {
    tile %t : vec f32 [1, 64]
    a: texpands %t, 0.0
    for %i = 0 to 2 {
    b: texpands %t, 1.0
        for %j = 0 to 2 {
        c: texpands %t, 2.0
        }
    }
    for %i = 0 to 2 {
    d: texpands %t, 3.0
    }
    if block_idx == 0 {
        for %i = 0 to 2 {
        e: texpands %t, 4.0
        }
    } else if block_idx == 1 {
        while block_idx > 5 {
        f: texpands %t, 5.0
        }
    } else {
        for %i = 0 to 2 {
        g: texpands %t, 6.0
        }
    }
    if block_idx == 0 {
        for %i = 0 to 2 {
        h: texpands %t, 7.0
        }
    }
    let %z = block_idx + 1
    if %z == 1 {
        for %i = 0 to 2 {
        i: texpands %t, 8.0
        }
    }
}
launch ranks=1 {
    run k blocks=1
}
`
	obj, errs := assembleText(t, src)
	if errs.HasErrors() {
		t.Fatal(errs)
	}
	ops := map[string]int{}
	k := obj.Kernels[0]
	for i, op := range k.Ops {
		ops[op.Instr.Label] = i
	}
	loops := func(label string) int { return len(k.Ops[ops[label]].Loops) }
	for label, want := range map[string]int{"a": 0, "b": 1, "c": 2, "d": 1, "e": 1, "f": 1, "g": 1, "h": 1, "i": 1} {
		if got := loops(label); got != want {
			t.Errorf("%s: %d loops, want %d", label, got, want)
		}
	}
	if b, c := k.Ops[ops["b"]].Loops, k.Ops[ops["c"]].Loops; b[0] != c[0] {
		t.Errorf("b and c: the outer loop differs")
	}
	for _, tc := range []struct {
		x, y string
		want bool
	}{
		{"b", "d", false}, // one after the other
		{"e", "f", true},  // then and else (the else's if)
		{"e", "g", true},
		{"f", "g", true},  // the else-if's two arms
		{"e", "h", true},  // two ifs on block_idx: roles
		{"h", "i", false}, // an if on a register: maybe one core's two phases
		{"d", "e", false}, // a loop beside an if
	} {
		lx, ly := k.Ops[ops[tc.x]].Loops[0], k.Ops[ops[tc.y]].Loops[0]
		if lx == ly {
			t.Errorf("%s and %s: one loop", tc.x, tc.y)
		}
		if got := lx.Exclusive(ly); got != tc.want || ly.Exclusive(lx) != tc.want {
			t.Errorf("%s, %s: Exclusive = %v, want %v", tc.x, tc.y, got, tc.want)
		}
	}
}
