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
		body string // %d %a %b %t are tiles of dt; %i of idx (default i32)
		dt   string
		idx  string
		at   string // the operand the error points at (its last use); "": the first
		want string // "" accepted
	}{
		{"tpow %d, %a, %b, %t", "f16", "", "", "tpow: %d is f16; a2a3 takes i32, i16, i8, u32, u16, u8, f32 only (pto-isa include/pto/npu/a2a3/TPow.hpp PowCheckType"},
		{"tpow %d, %a, %b, %t", "bf16", "", "", "tpow: %d is bf16"},
		{"tpow %d, %a, %b, %t", "f32", "", "", ""},
		{"tpow %d, %a, %b, %t", "i32", "", "", ""},
		{"tpow %d, %a, %b, %t", "u8", "", "", ""},
		{"tpows %d, %a, 2.0, %t", "f16", "", "", "tpows: %d is f16"},
		{"tpows %d, %a, 2.0, %t", "i16", "", "", ""},
		{"tfmod %d, %a, %b", "f16", "", "", "tfmod: %d is f16; a2a3 takes f32 only (pto-isa include/pto/npu/a2a3/TFmod.hpp"},
		{"tfmod %d, %a, %b", "i32", "", "", "tfmod: %d is i32"},
		{"tfmod %d, %a, %b", "f32", "", "", ""},
		{"tfmods %d, %a, 3.0", "f16", "", "", "tfmods: %d is f16; a2a3 takes f32 only (pto-isa include/pto/npu/a2a3/TFmodS.hpp"},
		{"tfmods %d, %a, 3.0", "f32", "", "", ""},
		// Session 23: the rest of pto-isa's a2a3 static_asserts.
		{"trem %d, %a, %b, %t", "f16", "", "", "trem: %d is f16; a2a3 takes f32, i32 only (pto-isa include/pto/npu/a2a3/TRem.hpp:177"},
		{"trem %d, %a, %b, %t", "i32", "", "", ""},
		{"trems %d, %a, 2.0, %t", "i16", "", "", "trems: %d is i16; a2a3 takes f32, i32 only"},
		{"tsubrelu %d, %a, %b", "i32", "", "", "tsubrelu: %d is i32; a2a3 takes f16, f32 only"},
		{"tfusedmuladd %d, %a, %b", "i16", "", "", "tfusedmuladd: %d is i16"},
		{"tfusedmuladdrelu %d, %a, %b", "i32", "", "", "tfusedmuladdrelu: %d is i32"},
		{"tmuladddst %d, %a, %b", "bf16", "", "", "tmuladddst: %d is bf16"},
		{"tmuladddst %d, %a, %b", "f16", "", "", ""},
		{"trowexpanddiv %d, %a, %b", "i32", "", "", "trowexpanddiv: %d is i32; a2a3 takes f16, f32 only"},
		{"tcolexpanddiv %d, %a, %b", "i16", "", "", "tcolexpanddiv: %d is i16"},
		{"trowexpandadd %d, %a, %b", "i32", "", "", ""},
		{"tpairreducesum %d, %a", "i32", "", "", "tpairreducesum: %d is i32; a2a3 takes f16, f32 only"},
		{"tpartadd %d, %a, %b", "u8", "", "", "tpartadd: %d is u8; a2a3 takes i32, i16, f16, f32 only"},
		{"tcolsum %d, %a", "u16", "", "", "tcolsum: %d is u16"},
		{"tcolmax %d, %a", "i8", "", "", "tcolmax: %d is i8"},
		{"trowexpand %d, %a", "u8", "", "", ""},
		{"texp %d, %a", "i32", "", "", "texp: %d is i32; a2a3 takes f16, f32 only (pto-isa include/pto/npu/a2a3/TUnaryOp.hpp"},
		{"trelu %d, %a", "i32", "", "", ""},
		{"trelu %d, %a", "i16", "", "", "trelu: %d is i16; a2a3 takes f16, f32, i32 only"},
		{"tnot %d, %a", "u16", "", "", ""},
		// The compare's sources, not its mask destination.
		{"tcmp %i, %a, %b #cmp=gt", "i16", "u8", "%a", "tcmp: %a is i16; a2a3 takes i32, f16, f32 only (pto-isa include/pto/npu/a2a3/TCmp.hpp"},
		{"tcmp %i, %a, %b #cmp=gt", "f16", "u8", "", ""},
		{"tcmps %i, %a, 1.0 #cmp=gt", "u16", "u8", "", ""},
		{"tcmps %i, %a, 1.0 #cmp=gt", "u32", "u8", "%a", "tcmps: %a is u32"},
		// Source and destination constrained apart: taxpy takes an f16
		// source into an f32 destination, not the reverse.
		{"taxpy %i, %a, 2.0", "f16", "f32", "", ""},
		{"taxpy %i, %a, 2.0", "f32", "f16", "%a", "taxpy: %i is f16, %a is f32; a2a3 takes (dst f32, a f32|f16) or (dst f16, a f16) only (pto-isa include/pto/npu/a2a3/TAxpy.hpp:130-133"},
		{"taxpy %i, %a, 2.0", "i32", "i32", "", "taxpy: %i is i32; a2a3 takes f32, f16 only"},
		// The index type follows the value's width.
		{"tpartargmax %d, %i, %a, %b, %i, %i", "f32", "i16", "%i", "tpartargmax: %d is f32, %i is i16, %a is f32, %b is f32, %i is i16, %i is i16; a2a3 takes (dst f32, dstidx i32, a f32, b f32, aidx i32, bidx i32) or (dst f32, dstidx u32"},
		{"tpartargmax %d, %i, %a, %b, %i, %i", "f16", "i16", "", ""},
		{"tpartargmin %d, %i, %a, %b, %i, %i", "i32", "i32", "", "tpartargmin: %d is i32; a2a3 takes f32, f16 only"},
		{"trowargmax %i, %a", "f16", "u16", "", "trowargmax: %i is u16; a2a3 takes i32, u32 only"},
		{"trowargmax %i, %a", "f16", "u32", "", ""},
		{"trowargmax.val %d, %i, %a", "f16", "u16", "", ""},
		{"trowargmax.val %d, %i, %a", "f32", "u16", "%a", "trowargmax.val: %d is f32, %i is u16, %a is f32; a2a3 takes"},
		{"tcolargmax %i, %a, %t", "i32", "i32", "%a", "tcolargmax: %a is i32; a2a3 takes f16, u16, f32, u32 only"},
		{"tcolargmin.val %d, %i, %a, %t", "u16", "i16", "", ""},
		{"tsort32 %d, %a, %i", "f32", "i32", "%i", "tsort32: %i is i32; a2a3 takes u32 only"},
		{"tsort32 %d, %a, %i", "f32", "u32", "", ""},
		{"tadd %d, %a, %b", "u8", "", "", "tadd: %d is u8; a2a3 takes i32, i16, f16, f32 only (pto-isa include/pto/npu/a2a3/TAdd.hpp:62"},
		{"tdiv %d, %a, %b", "i32", "", "", "tdiv: %d is i32; a2a3 takes f16, f32 only"},
		{"tshl %d, %a, %b", "u8", "", "", ""},
		{"tshl %d, %a, %b", "f32", "", "", "tshl: %d is f32"},
		// Fused converts and quantisation: the pairs their headers take.
		{"taddreluconv %i, %a, %b", "f32", "f16", "", ""},
		{"taddreluconv %i, %a, %b", "f16", "i8", "", ""},
		{"taddreluconv %i, %a, %b", "f32", "i8", "%b", "taddreluconv: %i is i8, %a is f32, %b is f32; a2a3 takes (dst f16, a f32, b f32) or (dst i8, a f16, b f16) or (dst i8, a i16, b i16) only"},
		{"tquant %i, %a, %b, %t", "f32", "i8", "", ""},
		{"tquant %i, %a, %b, %t", "f16", "i8", "%a", "tquant: %a is f16; a2a3 takes f32 only"},
		{"tdequant %i, %a, %b, %t", "i8", "f32", "%b", "tdequant: %b is i8; a2a3 takes f32 only"},
	} {
		idx := tc.idx
		if idx == "" {
			idx = "i32"
		}
		src := fmt.Sprintf("kernel k : aiv {\n    tile %%d : vec %[1]s [8, 64]\n    tile %%a : vec %[1]s [8, 64]\n    tile %%b : vec %[1]s [8, 64]\n    tile %%t : vec %[1]s [8, 64]\n    tile %%i : vec %[2]s [8, 64]\n    %[3]s\n}\n", tc.dt, idx, tc.body)
		_, errs := assembleText(t, src)
		col := strings.Index(tc.body, " ") + 6
		if tc.at != "" {
			col = strings.LastIndex(tc.body, tc.at) + 5
		}
		switch {
		case tc.want == "" && errs.HasErrors():
			t.Errorf("%s (%s, %s): %v", tc.body, tc.dt, idx, errs)
		case tc.want != "" && !strings.Contains(errs.Error(), "main.pto:7:"+fmt.Sprint(col)+": error: "+tc.want):
			t.Errorf("%s (%s, %s): %v, want %q at column %d", tc.body, tc.dt, idx, errs, tc.want, col)
		}
	}
}
