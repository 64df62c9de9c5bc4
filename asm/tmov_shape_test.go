package asm_test

import (
	"strings"
	"testing"
)

// TestTMovShapes: pto-isa's plain TMOV asserts equal static shapes on every
// path (a2a3/TMov.hpp:139-141); the valid regions may differ, and the
// quantised forms (tmov.fp, tmov.q) have no such assert. vec→vec takes any
// two element types of one size, other paths one type.
func TestTMovShapes(t *testing.T) {
	for _, tc := range []struct {
		kind, decls, body string
		want              string // "" accepted
	}{
		{"aiv", "tile %a : vec f32 [8, 64]\n    tile %b : vec f32 [8, 64] valid [4, 32]", "tmov %b, %a", ""},
		{"aiv", "tile %a : vec f32 [8, 64]\n    tile %b : vec f32 [16, 32]", "tmov %b, %a",
			"main.pto:4:14: error: tmov: %a is [8, 64] but %b is [16, 32]; a2a3 takes equal shapes only (pto-isa include/pto/npu/a2a3/TMov.hpp:139-141"},
		{"aiv", "tile %a : vec f32 [8, 64]\n    tile %b : vec f32 [8, 128] valid [8, 64]", "tmov.v2v %b, %a", "tmov.v2v: %a is [8, 64] but %b is [8, 128]"},
		{"aic", "tile %m : mat f16 [32, 64]\n    tile %l : left f16 [16, 64]", "tmov %l, %m", "tmov: %m is [32, 64] but %l is [16, 64]"},
		{"aic", "tile %c : acc f32 [16, 64]\n    tile %m : mat f16 [32, 64]", "tmov.a2m %m, %c", "tmov.a2m: %c is [16, 64] but %m is [32, 64]"},
		{"aic", "tile %c : acc i32 [16, 64]\n    tile %m : mat i8 [32, 64]\n    tile %fp : scaling u64 [1, 64]", "tmov.fp %m, %c, %fp", ""},
		// vec→vec copies bytes: any two types of one size (TMov.hpp:83-88).
		{"aiv", "tile %a : vec f32 [8, 64]\n    tile %b : vec i32 [8, 64]", "tmov %b, %a", ""},
		{"aiv", "tile %a : vec u16 [8, 64]\n    tile %b : vec bf16 [8, 64]", "tmov.v2v %b, %a", ""},
		{"aiv", "tile %a : vec f32 [8, 64]\n    tile %b : vec f16 [8, 64]", "tmov %b, %a", "tmov: %a is f32 but %b is f16; the dtypes must match"},
		{"aic", "tile %m : mat f16 [16, 64]\n    tile %l : left bf16 [16, 64]", "tmov %l, %m", "tmov: %m is f16 but %l is bf16"},
	} {
		src := "kernel k : " + tc.kind + " {\n    " + tc.decls + "\n    " + tc.body + "\n}\n"
		_, errs := assembleText(t, src)
		switch {
		case tc.want == "" && errs.HasErrors():
			t.Errorf("%s: %v", tc.body, errs)
		case tc.want != "" && !strings.Contains(errs.Error(), tc.want):
			t.Errorf("%s: %v, want %q", tc.body, errs, tc.want)
		}
	}
}
