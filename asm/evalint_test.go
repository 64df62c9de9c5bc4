package asm_test

import (
	"strings"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/parser"
)

// TestEvalInt: host-side evaluation uses the assembler's arithmetic (the
// same value a const declaration folds to), short-circuits, and reports
// errors at the offending node.
func TestEvalInt(t *testing.T) {
	consts := map[string]int64{"N": 4, "Z": 0}
	lookup := func(n string) (int64, bool) { v, ok := consts[n]; return v, ok }
	for _, tc := range []struct {
		src  string
		want int64
		err  string
	}{
		{"N * 3 + 1", 13, ""},
		{"ceildiv(-7, 2)", -3, ""},
		{"align(5, N)", 8, ""},
		{"1 << 70", 0, ""},
		{"Z > 0 && 8 / Z > 1", 0, ""},
		{"N > 0 || 8 / Z", 1, ""},
		{"1e6", 1000000, ""},
		{"-N", -4, ""},
		{"8 / Z", 0, "1:5: division by zero"},
		{"1.5", 0, "1.5 is not an integer"},
		{"M + 1", 0, "unknown name M"},
		{"foo(1)", 0, "foo(...) is not an integer function"},
	} {
		e, perr := parser.ParseExpr(tc.src)
		if perr != nil {
			t.Fatalf("%s: %v", tc.src, perr)
		}
		got, err := asm.EvalInt(e, lookup)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: err %v, want %q", tc.src, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s = %d, %v; want %d", tc.src, got, err, tc.want)
		}
	}
}
