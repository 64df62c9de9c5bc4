package machine

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestDeadlockRootFirst: a deadlock report lists first the wait the others
// block behind (issue 25), whatever the agents' numbering, with or without
// an observer (which numbers issues differently), and marks only it as root.
func TestDeadlockRootFirst(t *testing.T) {
	tests := []struct {
		name string
		body string
		want []string // "PIPE:LINE" in report order, root first; "S:0" is any scalar line, "S:" a scalar at kernel end (no instruction)
		root int      // how many leading entries are roots
		// cube: the body runs on an AIC with %a, %b, %c (left, right,
		// acc); else on an AIV with %x.
		cube bool
	}{
		{
			// V waits for a set queued behind MTE2's wait, whose set is
			// queued behind MTE3's wait, which nothing sets: two blocked
			// waits behind the root, which has the highest pipe number.
			name: "chain",
			body: `
    wait_flag V, MTE3, 1
    set_flag MTE3, MTE2, 0
    wait_flag MTE3, MTE2, 0
    tload %x, @X[0, 0]
    set_flag MTE2, V, 0
    wait_flag MTE2, V, 0`,
			want: []string{"MTE3:5", "MTE2:7", "S:", "V:10"},
			root: 1,
		},
		{
			// The loop's first wait has a set queued, but the next round's
			// (issued after it): MTE2 and MTE3 wait for each other, and the
			// unprimed wait is the root, not whichever pipe numbers first.
			name: "unprimed loop",
			body: `
    for %i = 0 to 4 {
        wait_flag MTE3, MTE2, 0
        tload %x, @X[0, 0]
        set_flag MTE2, MTE3, 0
        wait_flag MTE2, MTE3, 0
        tstore @Y[0, 0], %x
        set_flag MTE3, MTE2, 0
    }`,
			want: []string{"MTE2:6", "MTE3:9", "S:0"},
			root: 1,
		},
		{
			// Both loop waits come before their sets in the body and nothing
			// primes either: two roots, in the report's pipe order.
			name: "two unprimed",
			body: `
    for %i = 0 to 4 {
        tstore @Y[0, 0], %x
        set_flag MTE3, MTE2, 0
        wait_flag MTE2, MTE3, 0
        wait_flag MTE3, MTE2, 1
        tload %x, @X[0, 0]
        set_flag MTE2, MTE3, 0
        set_flag MTE3, MTE2, 1
    }`,
			want: []string{"MTE2:9", "MTE3:8", "S:0"},
			root: 2,
		},
		{
			// V's wait has no set queued because the scalar, which would
			// issue it, is stuck on MTE2's full queue; MTE2's head waits for
			// a set nothing issues. Root: MTE2, then the scalar, then V.
			name: "set not issued: full queue",
			body: `
    wait_flag MTE3, V, 1
    wait_flag V, MTE2, 0
    tload %x, @X[0, 0]
    tload %x, @X[0, 0]
    tload %x, @X[0, 0]
    tload %x, @X[0, 0]
    tload %x, @X[0, 0]
    tload %x, @X[0, 0]
    tload %x, @X[0, 0]
    tload %x, @X[0, 0]
    tload %x, @X[0, 0]
    set_flag MTE3, V, 1`,
			want: []string{"MTE2:6", "S:0", "V:5"},
			root: 1,
		},
		{
			// The scalar stalls on MTE2's full queue, then issues the rest
			// and ends; MTE3 waits for a set nothing issues. At kernel end
			// the scalar waits at no instruction: it used to be reported at
			// the load it last stalled on, which the DMA latency chose, so a
			// deadlock finding's second site moved with the timing
			// (hazards/early_exit_after_wait at NT=5).
			name: "kernel end after a full queue",
			body: strings.Repeat("\n    tload %x, @X[0, 0]", 20) + "\n    wait_flag V, MTE3, 1",
			want: []string{"MTE3:25", "S:"},
			root: 1,
		},
		{
			// The scalar's own wait_flag (dst S) whose set is queued behind a
			// wait that nothing sets.
			name: "scalar wait",
			body: `
    wait_flag V, MTE2, 2
    set_flag MTE2, S, 0
    wait_flag MTE2, S, 0`,
			want: []string{"MTE2:5", "S:7"},
			root: 1,
		},
		// An L0C unit-flag wait is a wait like a flag's (unitWait): its
		// "set" is the other pipe's final entry for the same acc tile, and
		// one issued after the wait is the next round's, so the wait is the
		// root and the flag wait blocked behind it is not. Before, a unit
		// wait pointed at the other pipe whenever it was busy, and these
		// cycles had no root.
		{
			// The store waits for a final mad issued after it, behind M's
			// wait for a set queued behind the store.
			name: "store before its final mad",
			body: `
    tmatmul %c, %a, %b #unit=partial
    tstore @C[0, 0], %c #unit=final
    set_flag FIX, M, 0
    wait_flag FIX, M, 0
    tmatmul.acc %c, %a, %b #unit=final`,
			want: []string{"FIX:7", "M:9", "S:"},
			root: 1,
			cube: true,
		},
		{
			// The second mad waits for the final store that frees %c, which
			// is issued after it, behind FIX's wait for a set queued behind
			// the mad.
			name: "mad before the release",
			body: `
    tmatmul %c, %a, %b #unit=final
    tmatmul %c, %a, %b #unit=partial
    set_flag M, FIX, 0
    wait_flag M, FIX, 0
    tstore @C[0, 0], %c #unit=final`,
			want: []string{"M:7", "FIX:9", "S:"},
			root: 1,
			cube: true,
		},
	}
	for _, tc := range tests {
		for _, observe := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/observe=%v", tc.name, observe), func(t *testing.T) {
				head := "gm X : f32 [16, 64] = zero\ngm Y : f32 [16, 64] = zero\nkernel k : aiv {\n    tile %x : vec f32 [16, 64]"
				if tc.cube {
					head = "gm C : f32 [16, 16] = zero\nkernel k : aic {\n    tile %a : left f16 [16, 16]\n" +
						"    tile %b : right f16 [16, 16]\n    tile %c : acc f32 [16, 16]"
				}
				src := head + tc.body + "\n}\nlaunch ranks=1 { run k blocks=1 }\n"
				opt := Options{}
				if observe {
					opt.Observers = []Observer{&recorder{kinds: map[EventKind]bool{EvDeadlock: true}}}
				}
				_, _, err := runObj(t, assemble(t, src), opt)
				var d *DeadlockError
				if !errors.As(err, &d) {
					t.Fatalf("want a deadlock, got %v", err)
				}
				var got []string
				roots := 0
				for i, b := range d.Blocked {
					line := ""
					if b.Op != nil && b.Op.Instr != nil && b.Op.Instr.Pos.IsValid() {
						line = fmt.Sprint(b.Op.Instr.Pos.Line)
					}
					got = append(got, fmt.Sprintf("%s:%s", b.Agent.Pipe, line))
					if b.Root {
						if i != roots {
							t.Errorf("root %d after a non-root", i)
						}
						roots++
					}
				}
				if !sameSites(got, tc.want) {
					t.Errorf("order %v, want %v\n%s", got, tc.want, d.Error())
				}
				if roots != tc.root {
					t.Errorf("%d roots, want %d\n%s", roots, tc.root, d.Error())
				}
				if !strings.Contains(d.Error(), "\n  root: ") {
					t.Errorf("report does not mark the root:\n%s", d.Error())
				}
			})
		}
	}
}

// sameSites compares report orders; a want of "S:0" accepts any scalar line.
func sameSites(got, want []string) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if want[i] == "S:0" && strings.HasPrefix(got[i], "S:") {
			continue
		}
		if got[i] != want[i] {
			return false
		}
	}
	return true
}
