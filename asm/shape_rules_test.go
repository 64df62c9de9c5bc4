package asm_test

import (
	"strings"
	"testing"
)

// TestShapeRules: shape static_asserts of pto-isa's a2a3 headers (at
// 3186c381) the assembler holds a kernel to, found by the session-26 audit
// of the ISA table against them.
func TestShapeRules(t *testing.T) {
	for _, tc := range []struct {
		decls, body string
		want        string // "" accepted
	}{
		// TCI.hpp:24: TCI expect tile row is 1.
		{"tile %i : vec i32 [1, 64]", "tci %i, 0", ""},
		{"tile %i : vec i32 [8, 64]", "tci %i, 0", "main.pto:3:9: error: tci: %i has 8 rows; a2a3 takes a one-row tile only (pto-isa include/pto/npu/a2a3/TCI.hpp:24"},
		{"tile %i : vec i16 [2, 64] valid [1, 64]", "tci %i, 0 #descending=1", "tci: %i has 2 rows"},
	} {
		src := "kernel k : aiv {\n    " + tc.decls + "\n    " + tc.body + "\n}\n"
		_, errs := assembleText(t, src)
		switch {
		case tc.want == "" && errs.HasErrors():
			t.Errorf("%s: %v", tc.body, errs)
		case tc.want != "" && !strings.Contains(errs.Error(), tc.want):
			t.Errorf("%s: %v, want %q", tc.body, errs, tc.want)
		}
	}
}
