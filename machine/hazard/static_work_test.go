package hazard

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
)

// deepNest is a kernel of n loops nested with symbolic bounds, each bound
// read from the loop around it (`for %i1 = 0 to %a1 + 100 { let %a2 = %a1 +
// %i1 ...`), with a wait and a set in the innermost: every level is peeled,
// and its states grow with the depth.
func deepNest(n int) string {
	var b strings.Builder
	b.WriteString("kernel k : aiv {\n    set_flag V, MTE3, 0\n    let %a0 = 0\n")
	for i := range n {
		ind := strings.Repeat("    ", i+1)
		fmt.Fprintf(&b, "%sfor %%i%d = 0 to %%a%d + 100 {\n%s    let %%a%d = %%a%d + %%i%d\n", ind, i, i, ind, i+1, i, i)
	}
	ind := strings.Repeat("    ", n+1)
	fmt.Fprintf(&b, "%swait_flag V, MTE3, 0\n%sset_flag V, MTE3, 0\n", ind, ind)
	for i := n; i > 0; i-- {
		fmt.Fprintf(&b, "%s}\n", strings.Repeat("    ", i))
	}
	b.WriteString("    wait_flag V, MTE3, 0\n}\nlaunch ranks=1 { run k blocks=1 }\n")
	return b.String()
}

// testsInARow is a kernel that loads regs values and tests one of them for
// equality n times in a row, a set and its wait under each test: every test
// splits each path in two that join cannot merge (a value and a
// disequality), up to maxStates paths, each with a fact per test.
func testsInARow(regs, n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "gm G : i32 [%d] = expr(i)\nkernel k : aiv {\n", regs)
	for i := range regs {
		fmt.Fprintf(&b, "    %%r%d = ld @G[%d]\n", i, i)
	}
	for j := range n {
		fmt.Fprintf(&b, "    if %%r%d == %d {\n        set_flag V, MTE3, 0\n        wait_flag V, MTE3, 0\n    }\n", j%regs, j)
	}
	b.WriteString("}\nlaunch ranks=1 { run k blocks=1 }\n")
	return b.String()
}

// TestStaticWorkBounded: the static pass's work budget counts what its work
// costs, not only statement visits, so a kernel whose states grow (deep
// nests of symbolic loops, long rows of tests that split every path) ends
// within the budget, says so, and keeps memo keys within the budget's bytes.
// Counting visits only, 12 nested loops spent 3–5 s and 0.5 GB before they
// gave up, 150 spent 36 s and 1.7 GB, and the row of tests compared its 256
// paths pairwise at every test for seconds.
func TestStaticWorkBounded(t *testing.T) {
	tests := []struct {
		name, src string
		giveUp    bool
	}{
		{"8 nested loops", deepNest(8), false},
		{"12 nested loops", deepNest(12), true},
		{"30 nested loops", deepNest(30), true},
		{"150 nested loops", deepNest(150), true},
		{"300 tests of 40 loaded values", testsInARow(40, 300), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			obj, errs := asm.Assemble(srcFE(map[string]string{"mem:k.pto": tc.src}), "mem:k.pto", nil)
			if errs.HasErrors() {
				t.Fatal(errs)
			}
			var work, memoBytes int
			var aborted bool
			staticDone = func(c *checker) {
				work, aborted = c.work, c.aborted
				for k := range c.memo {
					memoBytes += len(k)
				}
			}
			defer func() { staticDone = nil }()
			fs := CheckObject(obj)
			gaveUp := false
			for _, f := range fs {
				if f.Kind == KindUnchecked && strings.Contains(f.Message, "too many paths") {
					gaveUp = true
				}
			}
			if gaveUp != tc.giveUp || aborted != tc.giveUp {
				t.Errorf("gave up %v (note %v), want %v: %v", aborted, gaveUp, tc.giveUp, fs)
			}
			// Past the budget each loop still unwinding charges what it
			// finishes: a little more.
			if limit := maxWork * visitWork * 5 / 4; work > limit {
				t.Errorf("work %d, want at most %d", work, limit)
			}
			if limit := maxWork * visitWork; memoBytes > limit {
				t.Errorf("memo keys hold %d bytes, want at most %d (the budget's)", memoBytes, limit)
			}
		})
	}
}

// BenchmarkStaticDeep times the static pass on deep nests of symbolic loops
// and reports its work (in units of a statement visit) and the bytes its
// memo keys hold: 8 levels finish, the others give up when the budget runs
// out.
//
//	go test ./machine/hazard -run '^$' -bench StaticDeep
func BenchmarkStaticDeep(b *testing.B) {
	for _, n := range []int{8, 12, 30, 150} {
		obj, errs := asm.Assemble(srcFE(map[string]string{"mem:k.pto": deepNest(n)}), "mem:k.pto", nil)
		if errs.HasErrors() {
			b.Fatal(errs)
		}
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			var work, memoBytes int
			staticDone = func(c *checker) {
				work, memoBytes = c.work, 0
				for k := range c.memo {
					memoBytes += len(k)
				}
			}
			defer func() { staticDone = nil }()
			for b.Loop() {
				CheckObject(obj)
			}
			b.ReportMetric(float64(work)/visitWork, "work/op")
			b.ReportMetric(float64(memoBytes), "memo-B/op")
		})
	}
}
