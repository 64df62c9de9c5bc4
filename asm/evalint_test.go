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
		{"1 << 62", 1 << 62, ""},
		{"-1 << 63", -1 << 63, ""},
		{"-9223372036854775807 - 1", -1 << 63, ""},
		{"9223372036854775807 >> 63", 0, ""},
		// Folding never wraps: an overflow is an error at the operator.
		{"1 << 70", 0, "1:1: shift count 70 out of range: counts are 0 to 63"},
		{"1 << -1", 0, "shift count -1 out of range"},
		{"1 << 63", 0, "integer overflow: 1 << 63"},
		{"(1 << 62) * 4", 0, "1:1: integer overflow: 4611686018427387904 * 4 does not fit in int64"},
		{"9223372036854775807 + 1", 0, "integer overflow"},
		{"-9223372036854775807 - 2", 0, "integer overflow"},
		{"N - -9223372036854775807 - 1", 0, "integer overflow"},
		{"-(-9223372036854775807 - 1)", 0, "integer overflow: -(-9223372036854775808)"},
		{"(-9223372036854775807 - 1) / -1", 0, "integer overflow"},
		{"(-9223372036854775807 - 1) * -1", 0, "integer overflow"},
		{"-1 * (-9223372036854775807 - 1)", 0, "integer overflow"},
		{"abs(-9223372036854775807 - 1)", 0, "integer overflow: abs"},
		{"align(9223372036854775807, 2)", 0, "integer overflow: align"},
		{"ceildiv(-9223372036854775807 - 1, -1)", 0, "integer overflow: ceildiv"},
		{"3037000500 * 3037000500", 0, "integer overflow"},
		{"3037000499 * 3037000499", 3037000499 * 3037000499, ""},
		{"(-9223372036854775807 - 1) % -1", 0, ""},
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

// TestFoldOverflow: a constant expression that does not fit int64, in the
// program or in a -D, is an error where it is written; registers keep the
// machine's wrapping arithmetic (TestCompiledExprs). `-D ROWS=(1<<62)*4` was
// 0 and `2^63-1 * 2` -2, refused (if at all) only by what used the value.
func TestFoldOverflow(t *testing.T) {
	for _, tc := range []struct {
		src  string
		defs []asm.Define
		want string
	}{
		{"const A = (1 << 62) * 4\n", nil, "main.pto:1:11: error: integer overflow: 4611686018427387904 * 4 does not fit in int64"},
		{"const A = 9223372036854775807\nconst B = A * 2\n", nil, "main.pto:2:11: error: integer overflow: 9223372036854775807 * 2"},
		{"const A = 1 << 64\n", nil, "main.pto:1:11: error: shift count 64 out of range: counts are 0 to 63"},
		{"const A = 2 >> -1\n", nil, "main.pto:1:11: error: shift count -1 out of range"},
		{"const A = -9223372036854775807 - 1\nconst B = -A\n", nil, "main.pto:2:11: error: integer overflow: -(-9223372036854775808)"},
		{"const A = abs(-9223372036854775807 - 1)\n", nil, "main.pto:1:11: error: integer overflow: abs(-9223372036854775808)"},
		{"kernel k : aiv {\n    let %a = block_idx + (1 << 62) * 4\n}\n", nil, "main.pto:2:26: error: integer overflow"},
		{"kernel k : aiv {\n    for %i = 0 to 9223372036854775807 + 1 {\n    }\n}\n", nil, "main.pto:2:19: error: integer overflow"},
		{"const ROWS = 4\n", []asm.Define{{Name: "ROWS", Value: "(1<<62)*4"}}, "<command line>: error: -D ROWS: integer overflow: 4611686018427387904 * 4 does not fit in int64"},
		{"const ROWS = 4\n", []asm.Define{{Name: "ROWS", Value: "1<<64"}}, "<command line>: error: -D ROWS: shift count 64 out of range"},
		{"const ROWS = 4\n", []asm.Define{{Name: "ROWS", Value: "1/0"}}, "<command line>: error: -D ROWS: division by zero"},
	} {
		_, errs := assembleText(t, tc.src, tc.defs...)
		if !errs.HasErrors() || !strings.Contains(errs.Error(), tc.want) {
			t.Errorf("%q %v: %v, want %q", tc.src, tc.defs, errs, tc.want)
		}
	}
}
