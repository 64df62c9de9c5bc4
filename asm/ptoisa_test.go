package asm

import (
	"strings"
	"testing"
)

// TestPtoISACoverage keeps the coverage table honest: every pto-isa page is
// accepted, rejected with a source, or missing with a reason; no reason is
// left over for a name that is now accepted; and no rejected name is one the
// table accepts.
func TestPtoISACoverage(t *testing.T) {
	acc := 0
	for _, p := range ptoISAPages {
		op, _, missing := PtoISACoverage(p)
		if missing == "not accepted" {
			t.Errorf("%s: neither accepted, rejected nor explained (asm/ptoisa.go notYet)", p)
		}
		if op != nil {
			acc++
			if _, stale := notYet[p]; stale {
				t.Errorf("%s is accepted as %s: drop its notYet entry", p, op.Name)
			}
		}
	}
	for n := range notOnA2A3 {
		if LookupOp(n) != nil {
			t.Errorf("%s is rejected as not A2/A3 but the table accepts it", n)
		}
	}
	for n := range notYet {
		found := false
		for _, p := range ptoISAPages {
			found = found || p == n
		}
		if !found {
			t.Errorf("notYet names %s, which is no pto-isa page", n)
		}
	}
	// Coverage only grows.
	if acc < 121 {
		t.Errorf("%d pages accepted, fewer than at the last addition (121)", acc)
	}
	if !strings.Contains(NotOnA2A3("pto.TInterleave"), "A5 only") {
		t.Error("NotOnA2A3 ignores case or the pto. prefix")
	}
}
