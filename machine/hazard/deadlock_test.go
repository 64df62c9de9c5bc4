package hazard

import (
	"testing"

	"github.com/ptoasm/ptoasm/asm"
)

// TestDeadlockRootSite: lint's deadlock finding has the root wait as its
// first site and, as its second, the first agent blocked behind it that has
// an instruction; a scalar waiting at kernel end has none, so a lone wait is
// a one-site finding rather than a pair with an empty "?" site (issue 25).
func TestDeadlockRootSite(t *testing.T) {
	tests := []struct {
		name          string
		body          string
		first, second int // source lines; second 0: a one-site finding
	}{
		{"lone wait", `
    wait_flag MTE2, MTE3, 2`, 5, 0},
		// MTE3's wait is the root although V and MTE2 number before it.
		{"chain", `
    wait_flag V, MTE3, 1
    set_flag MTE3, MTE2, 0
    wait_flag MTE3, MTE2, 0
    tload %x, @X[0, 0]
    set_flag MTE2, V, 0
    wait_flag MTE2, V, 0`, 5, 7},
		// The unprimed loop (the root's only queued set is the next
		// round's) is programs/hazards/deadlock.pto, whose expectation names
		// its root.
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := "gm X : f32 [16, 64] = zero\ngm Y : f32 [16, 64] = zero\nkernel k : aiv {\n    tile %x : vec f32 [16, 64]" +
				tc.body + "\n}\nlaunch ranks=1 { run k blocks=1 }\n"
			obj, errs := asm.Assemble(srcFE(map[string]string{"t.pto": src}), "t.pto", nil)
			if errs.HasErrors() {
				t.Fatal(errs)
			}
			var dl []Finding
			for _, f := range runLint(t, obj, true).Findings() {
				if f.Kind == KindDeadlock {
					dl = append(dl, f)
				}
			}
			if len(dl) != 1 {
				t.Fatalf("%d deadlock findings, want 1: %+v", len(dl), dl)
			}
			f := dl[0]
			if f.First.Line != tc.first || f.Second.Line != tc.second {
				t.Errorf("sites %d, %d; want %d, %d\n%s", f.First.Line, f.Second.Line, tc.first, tc.second, f.Message)
			}
			if tc.second == 0 && (f.Second.Op != "" || f.Second.Pipe != "") {
				t.Errorf("second site %+v, want none", f.Second)
			}
		})
	}
}
