package asm_test

import (
	"fmt"
	"strings"
	"testing"
)

// TestOpDTypes: an op whose pto-isa a2a3 implementation static-asserts its
// element types is refused, where it is written, on any other (tpow on f16
// ran as a float; tfmod on i32 assembled and faulted only in a data run, so
// lint and timing runs passed a kernel the device build rejects).
func TestOpDTypes(t *testing.T) {
	for _, tc := range []struct {
		op, dt string
		want   string // "" accepted
	}{
		{"tpow", "f16", "tpow: %d is f16; a2a3 takes i32, i16, i8, u32, u16, u8, f32 only (pto-isa include/pto/npu/a2a3/TPow.hpp PowCheckType"},
		{"tpow", "bf16", "tpow: %d is bf16"},
		{"tpow", "f32", ""},
		{"tpow", "i32", ""},
		{"tpow", "u8", ""},
		{"tpows", "f16", "tpows: %d is f16"},
		{"tpows", "i16", ""},
		{"tfmod", "f16", "tfmod: %d is f16; a2a3 takes f32 only (pto-isa include/pto/npu/a2a3/TFmod.hpp"},
		{"tfmod", "i32", "tfmod: %d is i32"},
		{"tfmod", "f32", ""},
		{"tfmods", "f16", "tfmods: %d is f16; a2a3 takes f32 only (pto-isa include/pto/npu/a2a3/TFmodS.hpp"},
		{"tfmods", "f32", ""},
		{"trem", "f16", ""}, // not restricted by the table (the machine decides)
	} {
		var body string
		switch tc.op {
		case "tpow":
			body = "tpow %d, %a, %b, %t"
		case "tpows":
			body = "tpows %d, %a, 2.0, %t"
		case "tfmod":
			body = "tfmod %d, %a, %b"
		case "tfmods":
			body = "tfmods %d, %a, 3.0"
		case "trem":
			body = "trem %d, %a, %b, %t"
		}
		src := fmt.Sprintf("kernel k : aiv {\n    tile %%d : vec %[1]s [8, 64]\n    tile %%a : vec %[1]s [8, 64]\n    tile %%b : vec %[1]s [8, 64]\n    tile %%t : vec %[1]s [8, 64]\n    %[2]s\n}\n", tc.dt, body)
		_, errs := assembleText(t, src)
		switch {
		case tc.want == "" && errs.HasErrors():
			t.Errorf("%s %s: %v", tc.op, tc.dt, errs)
		case tc.want != "" && !strings.Contains(errs.Error(), "main.pto:6:"+fmt.Sprint(len(tc.op)+6)+": error: "+tc.want):
			t.Errorf("%s %s: %v, want %q", tc.op, tc.dt, errs, tc.want)
		}
	}
}
