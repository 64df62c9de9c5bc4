package asm_test

import (
	"strings"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
)

// TestFloatDefine: -D gives a float constant a float value, and an integer
// constant overridden with a float becomes a float constant its integer uses
// then reject.
func TestFloatDefine(t *testing.T) {
	src := "const S = 0.5\nconst N = 8\nkernel k : aiv {\n    tile %x : vec f32 [N, 64]\n    tmuls %x, %x, S\n}\n"
	fe := memFrontend(map[string]string{"p.pto": src})
	for _, tc := range []struct {
		defs  []asm.Define
		float float64
		err   string
	}{
		{nil, 0.5, ""},
		{[]asm.Define{{Name: "S", Value: "-1e-3"}}, -1e-3, ""},
		{[]asm.Define{{Name: "S", Value: "2"}}, 2, ""},
		{[]asm.Define{{Name: "N", Value: "0.5"}}, 0, "constant N is the floating-point 0.5"},
	} {
		obj, errs := asm.Assemble(fe, "p.pto", tc.defs)
		if tc.err != "" {
			if !errs.HasErrors() || !contains(errs, tc.err) {
				t.Errorf("%v: errors %v, want %q", tc.defs, errs, tc.err)
			}
			continue
		}
		if errs.HasErrors() {
			t.Fatalf("%v: %v", tc.defs, errs)
		}
		if f, ok := obj.FloatConst("S"); !ok || f != tc.float {
			t.Errorf("%v: S = %v, %v; want %v", tc.defs, f, ok, tc.float)
		}
		if got := obj.Kernels[0].Ops[0].Args[2].F; got != tc.float {
			t.Errorf("%v: the immediate is %v, want %v", tc.defs, got, tc.float)
		}
	}
}

func contains(errs asm.ErrorList, s string) bool {
	for _, d := range errs {
		if strings.Contains(d.Msg, s) {
			return true
		}
	}
	return false
}
