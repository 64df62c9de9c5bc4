package machine

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// zeroSoftmax is a kernel that stores zeros where a softmax belongs: the
// golden check must fail it unless its tolerance lets zeros through, and then
// it must say that the check cannot fail.
const zeroSoftmax = `
const R = 16
const C = 512

gm X : f32 [R, C] = random(seed=11, lo=-1, hi=1)
gm Y : f32 [R, C] = poison

kernel zeros : aiv {
    tile %y : vec f32 [R, C]
    texpands %y, 0.0
    set_flag V, MTE3, 0
    wait_flag V, MTE3, 0
    tstore @Y[0, 0], %y
}

launch ranks=1 {
    run zeros blocks=1
}

expect @Y == softmax(@X) TOL
`

func TestSoftmaxZeroOutput(t *testing.T) {
	tests := []struct {
		tol  string
		ok   bool
		warn string
	}{
		{"rtol 1e-5 atol 1e-9", false, ""},
		{"rtol 1e-2", false, ""},
		{"tol 1e-3", false, ""},
		// Every value of a 512-column softmax of [-1, 1] is below 0.01: the
		// pto-isa-style bound passes zeros, and says so.
		{"tol 1e-2", true, "within tol 0.01 of 0, so an all-zero output passes"},
		{"atol 1e-2", true, "within rtol 0 atol 0.01 of 0"},
	}
	for _, tc := range tests {
		obj := assemble(t, strings.Replace(zeroSoftmax, "TOL", tc.tol, 1))
		_, r, err := runObj(t, obj, Options{})
		if err != nil {
			t.Fatalf("%s: %v", tc.tol, err)
		}
		if len(r.Checks) != 1 {
			t.Fatalf("%s: %d checks, want 1", tc.tol, len(r.Checks))
		}
		c := r.Checks[0]
		if c.OK != tc.ok {
			t.Errorf("%s: ok = %v, want %v (%s)", tc.tol, c.OK, tc.ok, c.Msg)
		}
		if tc.warn == "" && c.Warning != "" || !strings.Contains(c.Warning, tc.warn) {
			t.Errorf("%s: warning %q, want %q", tc.tol, c.Warning, tc.warn)
		}
		if !tc.ok && !strings.Contains(c.Msg, "expected") {
			t.Errorf("%s: message %q does not show the failing element", tc.tol, c.Msg)
		}
	}
}

// TestPoisonOutputCannotFail: an integer output never written reads the 0x7F…
// sentinel; a check whose tolerance reaches it from the expected values
// passes the unwritten output, and says so.
func TestPoisonOutputCannotFail(t *testing.T) {
	src := `
gm A : i32 [4, 8] = fill(3)
gm B : i32 [4, 8] = poison
kernel idle : aiv {
    tile %a : vec i32 [4, 8]
    tload %a, @A[0, 0]
}
launch ranks=1 {
    run idle blocks=1
}
expect @B == @A * 0 + 2147483646 atol 2
`
	_, r, err := runObj(t, assemble(t, src), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c := r.Checks[0]; !c.OK || !strings.Contains(c.Warning, "poison value 2.147483647e+09") {
		t.Errorf("check %+v: want a pass with a poison warning", c)
	}
}

// TestTimingOnlyCheckIsSkipped: a check that did not run says so.
func TestTimingOnlyCheckIsSkipped(t *testing.T) {
	obj := assemble(t, strings.Replace(zeroSoftmax, "TOL", "rtol 1e-5", 1))
	_, r, err := runObj(t, obj, Options{TimingOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	c := r.Checks[0]
	if !c.Skipped || !c.OK {
		t.Errorf("check %+v: want skipped", c)
	}
	var b strings.Builder
	r.Fprint(&b)
	if !strings.Contains(b.String(), "  skip @Y") || strings.Contains(b.String(), "ok   @Y") {
		t.Errorf("report shows the skipped check as:\n%s", b.String())
	}
}

// TestCheckOverBudgetKeepsRun: a check whose golden does not fit the memory
// budget is reported as not checked, the checks that fit are made, and the
// error (AfterRun) comes with the run's result, which is not run again
// without stretches. It was the error alone: no result, no other check.
func TestCheckOverBudgetKeepsRun(t *testing.T) {
	src := `
gm A : f32 [65536, 16] = random(seed=1)
gm B : f32 [16, 65536] = random(seed=2)
gm Z : f32 [16, 256] = fill(0)
kernel k : aiv {
    tile %x : vec f32 [16, 256]
    tload %x, @Z[0, 0]
}
launch ranks=2 {
    run k blocks=1
}
expect @Z == @Z * 0 + sum(matmul(@A, @B)) tol 1e-3
expect @Z == @Z * 0 tol 1e-3
`
	m, r, err := runObj(t, assemble(t, src), Options{MaxMemory: 64 << 20})
	var be *BudgetError
	if !errors.As(err, &be) || !be.AfterRun || !strings.Contains(be.Msg, "checking @Z: matmul(@A, @B) takes 32GiB") {
		t.Fatalf("error %v, want a check's *BudgetError (AfterRun)", err)
	}
	if r == nil || r.Cycles == 0 {
		t.Fatalf("result %+v, want the run's", r)
	}
	if m.reran {
		t.Errorf("the run was repeated for a check's error")
	}
	var got []string
	for _, c := range r.Checks {
		got = append(got, fmt.Sprintf("%s ok=%v skip=%v", c.Name, c.OK, c.Skipped))
		if c.Skipped && !strings.HasPrefix(c.Msg, "not checked: checking @Z: matmul(@A, @B) takes 32GiB") {
			t.Errorf("%s: message %q", c.Name, c.Msg)
		}
	}
	want := []string{"@Z[rank=0] ok=true skip=true", "@Z[rank=1] ok=true skip=true",
		"@Z[rank=0] ok=true skip=false", "@Z[rank=1] ok=true skip=false"}
	if !slices.Equal(got, want) {
		t.Errorf("checks\n\t%q\nwant\n\t%q", got, want)
	}
}
