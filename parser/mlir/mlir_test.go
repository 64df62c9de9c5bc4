package mlir

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/internal/fuzzseed"
	"github.com/ptoasm/ptoasm/parser"
)

func TestIsMLIR(t *testing.T) {
	for _, c := range []struct {
		src  string
		want bool
	}{
		{"module {\n}\n", true},
		{"  func.func @k() {\n return\n }\n", true},
		{"pto.tload ins(%a : T) outs(%b : T)\n", true},
		{"kernel k : aiv {\n tload %t, @A[0, 0]\n}\n", false},
		{"// module in a comment only\nconst N = 1\n", false},
	} {
		if got := IsMLIR([]byte(c.src)); got != c.want {
			t.Errorf("IsMLIR(%q) = %v, want %v", c.src, got, c.want)
		}
	}
}

// TestArch: ptoas's --pto-arch wins over the module's attribute, as in
// ptoas; a3 reads an A5 module as an A2/A3 kernel.
func TestArch(t *testing.T) {
	src := []byte("module attributes {pto.target_arch = \"a5\"} {\n  func.func @k() {\n    %a = pto.alloc_tile : !pto.tile_buf<loc=vec, dtype=f32, rows=8, cols=8>\n    pto.tadd ins(%a, %a : T, T) outs(%a : T)\n    return\n  }\n}\n")
	for _, c := range []struct{ arch, want string }{
		{"", "A5"}, {"a5", "A5"}, {"a3", ""}, {"a2a3", ""}, {"x9", "expected a3 or a5"},
	} {
		_, errs := ParseFileWith("e.pto", src, Options{Arch: c.arch})
		got := ""
		if errs.HasErrors() {
			got = errs[0].Msg
		}
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("--pto-arch=%q: got %q, want an error containing %q", c.arch, got, c.want)
		}
	}
}

func TestLexDims(t *testing.T) {
	toks := tokenize("x", []byte("memref<16x16xf16> %y#1 0x3F800000 ?x?xf32 -> @f ^bb0"))
	var got []string
	for _, tk := range toks {
		got = append(got, tk.Kind.String()+":"+tk.Text)
	}
	want := "identifier:memref punctuation:< dimension list:16x16x identifier:f16 punctuation:> value:%y#1 hex number:0x3F800000 dimension list:?x?x identifier:f32 ->:-> symbol:@f block label:^bb0 end of file:"
	if s := strings.Join(got, " "); s != want {
		t.Errorf("tokens:\n got %s\nwant %s", s, want)
	}
}

// TestErrors checks that bad input gives positioned errors, never a panic.
func TestErrors(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"module {\n  func.func @k() {\n    return\n", "e.pto:2:18: error: { is never closed"},
		{"module {\n  %x = \n}\n", "e.pto:3:1: error: expected an operation name, found \"}\""},
		{"module {\n  func.func @k() {\n    pto.tadd ins(%a, %b : T, T) outs(%c : T)\n    return\n  }\n}\n", "e.pto:3:5: error: pto.tadd: expected 2 input and 1 output tiles, got 0 and 0"},
		{"module {\n  func.func @k() {\n    pto.frob %x\n  }\n}\n", "e.pto:3:5: error: unsupported operation pto.frob: not an op ptoasm reads (PTOAS's tile ops in their ins(...) outs(...) form, and the view, sync, pipe and scalar ops docs/mlir.md lists)"},
		{"module {\n  func.func @k() {\n    \"foo.bar\"() : () -> ()\n  }\n}\n", "e.pto:3:5: error: the generic form of foo.bar is not supported"},
		{"module { ) }", "e.pto:1:10: error: ) does not close {"},
		{"module {\n  func.func @k() {\n    pto.set_flag[<PIPE_MTE4>, <PIPE_V>, <EVENT_ID0>]\n  }\n}\n", "e.pto:3:19: error: pto.set_flag: pipe PIPE_MTE4 is not an A2/A3 pipe"},
		{"\x00", "e.pto:1:1: error: invalid character \"\\x00\""},
		// A layout of two tokens became a PTO-AS name with a space in it:
		// the file assembled to an error, but `fmt` printed a translation
		// that did not parse (FuzzParseFile, corpus seed).
		{"func.func @k() {\n  %a = pto.alloc_tile : !pto.tile_buf<loc=vec, dtype=f16, rows=1, cols=16, blayout=row_major, slayout=non _box>\n  return\n}\n",
			"e.pto:2:3: error: slayout non _box is not a layout name (none_box, row_major, col_major)"},
		// A window through a view strided in both dimensions has no nd or
		// dn pitch: flat, it was read as out of bounds (session 21).
		{"func.func @k(%a: !pto.ptr<f32>) {\n  %c0 = arith.constant 0 : index\n  %c32 = arith.constant 32 : index\n  %c256 = arith.constant 256 : index\n  %c8192 = arith.constant 8192 : index\n  %tv = pto.make_tensor_view %a, shape = [%c32, %c256], strides = [%c256, %c8192] : !pto.tensor_view<?x?xf32>\n  %t = pto.alloc_tile : !pto.tile_buf<loc=vec, dtype=f32, rows=32, cols=32, v_row=32, v_col=32, blayout=row_major, slayout=none_box, fractal=512, pad=0>\n  %p = pto.partition_view %tv, offsets = [%c0, %c0], sizes = [%c32, %c32] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<32x32xf32>\n  pto.tload ins(%p : !pto.partition_tensor_view<32x32xf32>) outs(%t : !pto.tile_buf<loc=vec, dtype=f32, rows=32, cols=32, v_row=32, v_col=32, blayout=row_major, slayout=none_box, fractal=512, pad=0>)\n  return\n}\n",
			"e.pto:9:17: error: a 32 × 32 window of a view strided in both dimensions (no row or column of it is contiguous): ptoasm models row-major (nd) and column-major (dn) views only (docs/mlir.md)"},
		// Folding two known integers never wraps: a shape of 2^62*4+1 rows
		// folded to 1 (and, left unknown, read as a dynamic dimension).
		{"func.func @k() {\n  %a = arith.constant 4611686018427387904 : index\n  %b = arith.constant 4 : index\n  %c = arith.muli %a, %b : index\n  return\n}\n",
			"e.pto:4:3: error: arith.muli: integer overflow: 4611686018427387904 * 4 does not fit in int64"},
		{"func.func @k() {\n  %a = arith.constant 1 : i64\n  %b = arith.constant 64 : i64\n  %c = arith.shli %a, %b : i64\n  return\n}\n",
			"e.pto:4:3: error: arith.shli: shift count 64 out of range: counts are 0 to 63"},
		{"func.func @k() {\n  %a = arith.constant 9223372036854775807 : index\n  %b = arith.constant 1 : index\n  %c = arith.ceildivsi %a, %b : index\n  %d = arith.addi %c, %b : index\n  return\n}\n",
			"e.pto:5:3: error: arith.addi: integer overflow: 9223372036854775807 + 1 does not fit in int64"},
		// pto-isa's a2a3 TFmod.hpp/TFmodS.hpp static-assert f32, where
		// PTOAS's verifier takes i32/i16/f16/f32: they were tadd stand-ins.
		{"func.func @k() {\n  %a = pto.alloc_tile : !pto.tile_buf<loc=vec, dtype=f16, rows=8, cols=64>\n  pto.tfmod ins(%a, %a : T, T) outs(%a : T)\n  return\n}\n",
			"e.pto:3:37: error: tfmod: %a is f16; a2a3 takes f32 only (pto-isa include/pto/npu/a2a3/TFmod.hpp TFmodCheck at 3186c381 static_asserts)"},
		{"func.func @k() {\n  %a = pto.alloc_tile : !pto.tile_buf<loc=vec, dtype=i32, rows=8, cols=64>\n  %s = arith.constant 3 : i32\n  pto.tfmods ins(%a, %s : T, i32) outs(%a : T)\n  return\n}\n",
			"e.pto:4:40: error: tfmods: %a is i32; a2a3 takes f32 only (pto-isa include/pto/npu/a2a3/TFmodS.hpp TFMODS_IMPL at 3186c381 static_asserts)"},
		// A rule on a source, and one on a pair: TAxpy.hpp takes an f16
		// source into an f32 destination, not an f32 one into f16.
		{"func.func @k() {\n  %a = pto.alloc_tile : !pto.tile_buf<loc=vec, dtype=f32, rows=8, cols=64>\n  %d = pto.alloc_tile : !pto.tile_buf<loc=vec, dtype=f16, rows=8, cols=64>\n  %s = arith.constant 2.0 : f32\n  pto.taxpy ins(%a, %s : T, f32) outs(%d : T)\n  return\n}\n",
			"e.pto:5:17: error: taxpy: %d is f16, %a is f32; a2a3 takes (dst f32, a f32|f16) or (dst f16, a f16) only (pto-isa include/pto/npu/a2a3/TAxpy.hpp:130-133 at 3186c381 static_asserts)"},
		{"func.func @k() {\n  %a = pto.alloc_tile : !pto.tile_buf<loc=vec, dtype=i32, rows=8, cols=64>\n  pto.texp ins(%a : T) outs(%a : T)\n  return\n}\n",
			"e.pto:3:29: error: texp: %a is i32; a2a3 takes f16, f32 only (pto-isa include/pto/npu/a2a3/TUnaryOp.hpp:265 (TunaryCheck) at 3186c381 static_asserts)"},
		// tshls was a stand-in (a tmov), which took any dtype.
		{"func.func @k() {\n  %a = pto.alloc_tile : !pto.tile_buf<loc=vec, dtype=f32, rows=8, cols=64>\n  %s = arith.constant 2 : i32\n  pto.tshls ins(%a, %s : T, i32) outs(%a : T)\n  return\n}\n",
			"e.pto:4:39: error: tshls: %a is f32; a2a3 takes i32, i16, u32, u16 only (pto-isa include/pto/npu/a2a3/TBitwiseSOp.hpp:24 (TShiftCheck) at 3186c381 static_asserts)"},
		// ptoasm models A2/A3: an A5 module is rejected, saying so.
		{"module attributes {pto.target_arch = \"a5\"} {\n}\n", "e.pto:1:38: error: this file targets A5 (pto.target_arch = \"a5\"); ptoasm models A2/A3 only (the a2a3 profile); --pto-arch=a3 reads it as an A2/A3 kernel"},
		// PTOAS's A2/A3 verifier rules (verify.go).
		{"func.func @k() {\n  %a = pto.alloc_tile : !pto.tile_buf<loc=vec, dtype=i8, rows=2, cols=128>\n  pto.tsel ins(%a, %a, %a : T, T, T) outs(%a : T)\n  return\n}\n",
			"e.pto:3:3: error: pto.tsel: expects A2/A3 tsel src0, src1, and dst element type to be i16/i32/f16/f32 (%a is i8)"},
		{"func.func @k() {\n  %a = pto.alloc_tile : !pto.tile_buf<loc=vec, dtype=f32, rows=8, cols=32>\n  pto.thistogram ins(%a, %a : T, T) outs(%a : T)\n  return\n}\n",
			"e.pto:3:3: error: pto.thistogram: thistogram is only supported on A5"},
		// pto-isa has no A2/A3 TADDC (CPU simulator only) and no A2/A3
		// TGET_SCALE_ADDR (A5): PTOAS emits them, the build fails.
		{"func.func @k() {\n  %a = pto.alloc_tile : !pto.tile_buf<loc=vec, dtype=f32, rows=8, cols=32>\n  pto.taddc ins(%a, %a, %a : T, T, T) outs(%a : T)\n  return\n}\n",
			"e.pto:3:3: error: pto.taddc: taddc is not an A2/A3 instruction (CPU simulator only: include/pto/cpu (no NPU implementation)); ptoasm models A2/A3 (profile a2a3)"},
		{"func.func @k() {\n  %a = pto.alloc_tile : !pto.tile_buf<loc=left, dtype=f16, rows=16, cols=32>\n  %b = pto.alloc_tile : !pto.tile_buf<loc=scaling, dtype=f16, rows=1, cols=32>\n  pto.tget_scale_addr ins(%a : T) outs(%b : T)\n  return\n}\n",
			"e.pto:4:3: error: pto.tget_scale_addr: tget_scale_addr is not an A2/A3 instruction (A5 only: include/pto/npu/a5/TGetScaleAddr.hpp); ptoasm models A2/A3 (profile a2a3)"},
		{"func.func @k() {\n  %a = pto.alloc_tile : !pto.tile_buf<loc=left, dtype=f16, rows=16, cols=32>\n  %b = pto.alloc_tile : !pto.tile_buf<loc=acc, dtype=f32, rows=16, cols=16>\n  pto.tmatmul.mx.acc ins(%b, %a, %a, %a, %a : T, T, T, T, T) outs(%b : T)\n  return\n}\n",
			"e.pto:4:3: error: pto.tmatmul.mx.acc: tmatmul_mx is not an A2/A3 instruction (A5 only: include/pto/npu/a5/TMatmul.hpp (MX formats)); ptoasm models A2/A3 (profile a2a3)"},
		{"func.func @k() {\n  %a = pto.alloc_tile : !pto.tile_buf<loc=vec, dtype=f32, rows=8, cols=32, pad=0>\n  pto.tfillpad ins(%a : T) outs(%a : !pto.tile_buf<loc=vec, dtype=f32, rows=8, cols=32, pad=0>)\n  return\n}\n",
			"e.pto:3:3: error: pto.tfillpad: the destination tile has no pad value (pad=0, PadValue::Null); TFILLPAD fills with its type's pad=1 (zero), 2 (max) or 3 (min) and pto-isa's TFillPad.hpp static-asserts a non-Null pad"},
		{"func.func @k(%p : !pto.partition_tensor_view<64x64xf32>) {\n  %a = pto.alloc_tile : !pto.tile_buf<loc=vec, dtype=f32, rows=64, cols=64, v_row=32, v_col=32>\n  pto.tstore ins(%a : T) outs(%p : !pto.partition_tensor_view<64x64xf32>)\n  return\n}\n",
			"e.pto:3:3: error: pto.tstore: expects dst static element count (4096) to match src valid_shape static element count (1024)"},
		// A value that is no integer where the lowering computes with one
		// (an offset, a shape, an arith operand, an event id): an error at the
		// use, not an expression with a hole that crashed the lowering or
		// printed as `(( != 0) * 0)`.
		{"func.func @k(%a: !pto.ptr<f32>) {\n  %v = pto.make_tensor_view %a, shape = [16, 16], strides = [16, 1] : T\n  pto.partition_view %v, offsets = [%u, 0], sizes = [16, 16] : T -> T\n}\n",
			"e.pto:3:37: error: undefined value %u"},
		{"func.func @k(%a: !pto.ptr<f32>) {\n  %d = arith.constant dense<0> : vector<4xi32>\n  %v = pto.make_tensor_view %a, shape = [%d, 16], strides = [16, 1] : T\n}\n",
			"e.pto:3:42: error: pto.make_tensor_view: %d is not an integer"},
		{"func.func @k(%a: !pto.ptr<f32>) {\n  %v = pto.make_tensor_view %a, shape = [99999999999999999999, 16], strides = [16, 1] : T\n}\n",
			"e.pto:2:42: error: pto.make_tensor_view: integer 99999999999999999999 out of range"},
		{"func.func @k() {\n  %c0 = arith.constant 0 : index\n  %d = arith.constant dense<0> : vector<4xi32>\n  %m = arith.minsi %d, %c0 : index\n}\n",
			"e.pto:4:3: error: arith.minsi: operands are not integers"},
		{"func.func @k() {\n  %c0 = arith.constant 0 : index\n  %d = arith.constant dense<0> : vector<4xi32>\n  %s = arith.select %d, %c0, %c0 : index\n}\n",
			"e.pto:4:3: error: arith.select: the condition is not an integer"},
		{"func.func @k() {\n  %c0 = arith.constant 0 : index\n  %ids = pto.declare_eventid_array -> !pto.eventid_array<2>\n  %d = arith.constant dense<0> : vector<4xi32>\n  pto.eventid_array_set %ids[%c0], %d : T\n}\n",
			"e.pto:5:36: error: pto.eventid_array_set: %d is not an integer"},
		// Tile shapes whose dimensions multiply past 2^63 or are dynamic:
		// 3074457345618258603 x 6 wrapped to a tile of 2 rows, ? x ? to 1.
		{"func.func @k(%g: memref<16x16xf16, #pto.address_space<gm>>) {\n  %a = memref.alloc() : memref<3074457345618258603x6x16xf16, #pto.address_space<vec>>\n  pto.tload ins(%g : memref<16x16xf16, #pto.address_space<gm>>) outs(%a : memref<3074457345618258603x6x16xf16, #pto.address_space<vec>>)\n  return\n}\n",
			"e.pto:1:1: error: VEC overflow, requires 8796093022208 bits while 1572864 bits avaliable! (PTOAS PlanMemory)"},
		{"func.func @k(%g: memref<16x16xf16, #pto.address_space<gm>>) {\n  %a = memref.alloc() : memref<?x?x16xf16, #pto.address_space<vec>>\n  pto.tload ins(%g : memref<16x16xf16, #pto.address_space<gm>>) outs(%a : memref<?x?x16xf16, #pto.address_space<vec>>)\n  return\n}\n",
			"e.pto:2:3: error: tile shape must be static"},
		// A value defined twice while the first is in scope is MLIR's
		// "redefinition of SSA value" (ptoas refuses the file); the
		// lowering took the later one for every use after it, so a
		// duplicated line re-sized a view with exit 0 (session 26).
		{"func.func @k() {\n  %c = arith.constant 32 : index\n  %c = arith.constant 16 : index\n  return\n}\n",
			"e.pto:3:3: error: redefinition of SSA value %c"},
		{"func.func @k(%a: index) {\n  %a = arith.constant 1 : index\n  return\n}\n",
			"e.pto:2:3: error: redefinition of SSA value %a"},
		{"func.func @k() {\n  %c0 = arith.constant 0 : index\n  %c1 = arith.constant 1 : index\n  scf.for %i = %c0 to %c1 step %c1 {\n    %c1 = arith.constant 2 : index\n  }\n  return\n}\n",
			"e.pto:5:5: error: redefinition of SSA value %c1"},
		{"func.func @k() {\n  %c0 = arith.constant 0 : index\n  %c1 = arith.constant 1 : index\n  scf.for %c0 = %c0 to %c1 step %c1 {\n  }\n  return\n}\n",
			"e.pto:4:11: error: redefinition of SSA value %c0"},
	} {
		_, errs := ParseFile("e.pto", []byte(c.src))
		if len(errs) == 0 {
			// A rule of the ISA table (asm.OpInfo.DTypes) is the
			// assembler's, for the translation as for PTO-AS.
			_, errs = assembleFile("e.pto", []byte(c.src))
		}
		if len(errs) == 0 {
			t.Errorf("%q: no error, want %s", c.src, c.want)
			continue
		}
		if got := errs[0].Error(); got != c.want {
			t.Errorf("%q:\n got %s\nwant %s", c.src, got, c.want)
		}
	}
}

const vadd = `module {
  func.func @vadd(%arg0: !pto.ptr<f32>, %arg1: !pto.ptr<f32>, %n: index) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %v = pto.make_tensor_view %arg0, shape = [%c16, %c16], strides = [%c16, %c1] : !pto.tensor_view<?x?xf32>
    %w = pto.make_tensor_view %arg1, shape = [%c16, %c16], strides = [%c16, %c1] : !pto.tensor_view<?x?xf32>
    %t = pto.alloc_tile : !pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=16, v_row=16, v_col=16, blayout=row_major, slayout=none_box, fractal=512, pad=0>
    scf.for %i = %c0 to %n step %c1 {
      %p = pto.partition_view %v, offsets = [%c0, %c0], sizes = [%c16, %c16] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<16x16xf32>
      pto.tload ins(%p : !pto.partition_tensor_view<16x16xf32>) outs(%t : !pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=16, v_row=16, v_col=16, blayout=row_major, slayout=none_box, fractal=512, pad=0>)
      pto.record_event[#pto.sync_op_type<TLOAD>, <TVEC>, <EVENT_ID0>]
      pto.wait_event[#pto.sync_op_type<TLOAD>, <TVEC>, <EVENT_ID0>]
      pto.tadds ins(%t, %cst {x = 1} : !pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=16, v_row=16, v_col=16, blayout=row_major, slayout=none_box, fractal=512, pad=0>, f32)
        outs(%t : !pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=16, v_row=16, v_col=16, blayout=row_major, slayout=none_box, fractal=512, pad=0>)
      pto.barrier <PIPE_V>
    }
    return
  }
}
`

// TestLower checks the lowered program text (the printer's canonical form).
func TestLower(t *testing.T) {
	src := strings.Replace(vadd, "scf.for", "%cst = arith.constant 2.5 : f32\n    scf.for", 1)
	f := lowerHas(t, "v.pto", src,
		"const n = 16",
		"gm arg0 : f32 [16, 16]",
		"kernel vadd : aiv {",
		"tile %t : vec f32 [16, 16] layout(blayout=row_major, slayout=none_box) @ 0",
		"for %i = 0 to n {",
		"tload %t, @arg0[0, 0]",
		"set_flag MTE2, V, 0",
		"wait_flag MTE2, V, 0",
		"tadds %t, %t, 2.5",
		"pipe_barrier V",
		"run vadd blocks=BLOCKS")
	// Spans point into the MLIR source.
	k := f.Decls[len(f.Decls)-2].(*asm.Kernel)
	if p := k.Body[0].NodeSpan().Pos; p.File != "v.pto" || p.Line != 8 {
		t.Errorf("tile decl at %v, want v.pto:8", p)
	}
}

// TestISAOps: PTOAS ops our ISA has are lowered to them, reading every tile
// the op reads. The arg-reductions were a stand-in that only wrote the index
// tile (no V op reads an f16 tile into a u32 one), so a read of an unwritten
// or racing source went unreported; trem, trems, tpartmul and tfillpad were
// tadd/tmov stand-ins whose data were not the op's.
func TestISAOps(t *testing.T) {
	tile := func(dt string, rows, cols int, pad int) string {
		return fmt.Sprintf("!pto.tile_buf<loc=vec, dtype=%s, rows=%d, cols=%d, v_row=%d, v_col=%d, blayout=row_major, slayout=none_box, fractal=512, pad=%d>", dt, rows, cols, rows, cols, pad)
	}
	src, dst, idx := tile("f32", 16, 32, 0), tile("f32", 16, 32, 3), tile("ui32", 16, 1, 0)
	for _, c := range []struct{ name, body, want string }{
		{"trowargmax", "pto.trowargmax ins(%s, %tmp : " + src + ", " + src + ") outs(%i : " + idx + ")", "trowargmax %i, %s, %tmp"},
		{"tcolargmin", "pto.tcolargmin ins(%s, %tmp : " + src + ", " + src + ") outs(%i : " + idx + ")", "tcolargmin %i, %s, %tmp"},
		{"trowargmax.val", "pto.trowargmax ins(%s, %tmp : " + src + ", " + src + ") outs(%d, %i : " + dst + ", " + idx + ")", "trowargmax.val %d, %i, %s, %tmp"},
		{"trem", "pto.trem ins(%s, %d, %tmp : " + src + ", " + dst + ", " + src + ") outs(%o : " + src + ")", "trem %o, %s, %d, %tmp"},
		{"trems", "pto.trems ins(%s, %cst, %tmp : " + src + ", f32, " + src + ") outs(%o : " + src + ")", "trems %o, %s, 2.5, %tmp"},
		{"tpartmul", "pto.tpartmul ins(%s, %d : " + src + ", " + dst + ") outs(%o : " + src + ")", "tpartmul %o, %s, %d"},
		{"tfillpad", "pto.tfillpad ins(%s : " + src + ") outs(%d : " + dst + ")", "tfillpad %d, %s #pad=min"},
		{"tfillpad_inplace", "pto.tfillpad_inplace ins(%d : " + dst + ") outs(%d : " + dst + ")", "tfillpad %d, %d #pad=min"},
		// TDivSOp reads both orders; the scalar first is the scalar over
		// each element (pto-isa's TDIVS(dst, scalar, src)), not src / s.
		{"tdivs", "pto.tdivs ins(%s, %cst : " + src + ", f32) outs(%o : " + src + ")", "tdivs %o, %s, 2.5"},
		{"tdivs scalar first", "pto.tdivs ins(%cst, %s : f32, " + src + ") outs(%o : " + src + ")", "tsdivs %o, 2.5, %s"},
	} {
		t.Run(c.name, func(t *testing.T) {
			prog := "module {\n  func.func @k() {\n    %cst = arith.constant 2.5 : f32\n" +
				"    %s = pto.alloc_tile : " + src + "\n    %tmp = pto.alloc_tile : " + src + "\n    %o = pto.alloc_tile : " + src + "\n" +
				"    %d = pto.alloc_tile : " + dst + "\n    %i = pto.alloc_tile : " + idx + "\n    " + c.body + "\n    return\n  }\n}\n"
			lowerHas(t, "isa.pto", prog, c.want)
		})
	}
}

// lowerHas lowers src, requires each of wants in its PTO-AS and that it
// assembles, and returns the lowered tree.
func lowerHas(t *testing.T, name, src string, wants ...string) *asm.File {
	t.Helper()
	f, errs := ParseFile(name, []byte(src))
	if errs.HasErrors() {
		t.Fatal(errs)
	}
	var b bytes.Buffer
	asm.Fprint(&b, f)
	for _, want := range wants {
		if !strings.Contains(b.String(), want) {
			t.Errorf("lowered program lacks %q:\n%s", want, b.String())
		}
	}
	if obj, errs := assembleFile(name, []byte(src)); obj == nil || errs.HasErrors() {
		t.Fatalf("assemble: %v", errs)
	}
	return f
}

func FuzzParseFile(f *testing.F) {
	f.Add([]byte(vadd))
	f.Add([]byte("module { func.func @k() { scf.while (%a = %b) : (i1) -> i1 { scf.condition(%a) %a : i1 } do { ^bb0(%x: i1): scf.yield %x : i1 } return } }"))
	// Every MLIR file of the repository and of the corpus of real PTOAS
	// kernels: scf.while, set_validshape, tile views, the shapes
	// PlanMemory places.
	for _, src := range fuzzseed.Files(f, 32<<10, fuzzseed.Bool(true), append(fuzzseed.Dirs, fuzzseed.Corpus)...) {
		f.Add(src)
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		file, errs := ParseFile("f.pto", src)
		// Every error points into the file, so the CLI prints it as
		// f.pto:LINE:COL: error:.
		for _, d := range errs {
			if p := d.Span.Pos; p.File != "f.pto" || p.Line < 1 || p.Col < 1 {
				t.Fatalf("error without a position in the file: %v (%q)", p, d.Msg)
			}
		}
		if file == nil || errs.HasErrors() {
			return
		}
		// The translation `ptoasm fmt` prints is a canonical PTO-AS program:
		// it parses cleanly and is its own fmt.
		var b bytes.Buffer
		if err := asm.Fprint(&b, file); err != nil {
			t.Fatal(err)
		}
		again, errs2 := parser.ParseFile("t.pto", b.Bytes())
		if errs2.HasErrors() {
			t.Fatalf("the translation does not parse: %v\n%s", errs2, b.String())
		}
		var b2 bytes.Buffer
		asm.Fprint(&b2, again)
		if !bytes.Equal(b.Bytes(), b2.Bytes()) {
			t.Fatalf("the translation is not a fmt fixed point:\n%s\n---\n%s", b.String(), b2.String())
		}
	})
}

// TestSizeChain: a loop bound reached through a long chain of arith ops
// still marks the kernel argument at its head as a size (it defaults to
// DefaultScalarArg, not 0). The chain is walked once, not a pass per link.
func TestSizeChain(t *testing.T) {
	const n = 5000
	var b strings.Builder
	b.WriteString("module {\n  func.func @k(%n: index) {\n    %c0 = arith.constant 0 : index\n    %c1 = arith.constant 1 : index\n    %v0 = arith.addi %n, %c1 : index\n")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "    %%v%d = arith.addi %%v%d, %%c1 : index\n", i, i-1)
	}
	fmt.Fprintf(&b, "    scf.for %%i = %%c0 to %%v%d step %%c1 {\n    }\n    return\n  }\n}\n", n-1)
	f, errs := ParseFile("chain.pto", []byte(b.String()))
	if len(errs) > 0 || f == nil {
		t.Fatalf("errors: %v", errs)
	}
	var out bytes.Buffer
	asm.Fprint(&out, f)
	if want := fmt.Sprintf("const n = %d", DefaultScalarArg); !strings.Contains(out.String(), want) {
		t.Errorf("the chain's head is not a size: no %q in\n%.400s", want, out.String())
	}
}

// TestArgDefaults: the value an integer kernel argument gets from how the
// body uses it. A guard bound (`i < %n` around a loop's body, the Qwen3
// decode kernels' `block*64 + i < %arg4`) defaults to 1, so the body runs
// (at 0 it never ran and lint said "no hazards found"); an equality compare
// does not make a bound; a set_validshape count is a size; in a size `%n -
// %off`, %off stays an offset.
func TestArgDefaults(t *testing.T) {
	const tile = `!pto.tile_buf<loc=vec, dtype=f32, rows=8, cols=64, v_row=?, v_col=?, blayout=row_major, slayout=none_box, fractal=512, pad=0>`
	cases := []struct {
		name, args, body string
		want             []string
	}{
		{"slt bound", "%n: index", "%g = arith.cmpi slt, %i, %n : index", []string{"const n = 1"}},
		{"sgt bound", "%n: index", "%g = arith.cmpi sgt, %n, %i : index", []string{"const n = 1"}},
		{"bound through a cast", "%n: i32", "%m = arith.index_cast %n : i32 to index\n%g = arith.cmpi slt, %i, %m : index", []string{"const n = 1"}},
		{"slt, the index side", "%n: index", "%g = arith.cmpi slt, %n, %i : index", []string{"const n = 0"}},
		{"eq is no bound", "%n: index", "%g = arith.cmpi eq, %i, %n : index", []string{"const n = 0"}},
		{"set_validshape", "%len: index, %off: index", "%t = pto.alloc_tile valid_row = %c8 valid_col = %c8 : " + tile +
			"\n%r = arith.subi %len, %off : index\n%c = arith.minsi %r, %c8 : index\npto.set_validshape %t, %c8, %c : " + tile,
			[]string{fmt.Sprintf("const len = %d", DefaultScalarArg), "const off = 0"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := "module {\n  func.func @k(" + c.args + ") {\n    %c0 = arith.constant 0 : index\n    %c1 = arith.constant 1 : index\n" +
				"    %c8 = arith.constant 8 : index\n    scf.for %i = %c0 to %c8 step %c1 {\n" + c.body + "\n    }\n    return\n  }\n}\n"
			f, errs := ParseFile("args.pto", []byte(src))
			if errs.HasErrors() || f == nil {
				t.Fatalf("errors: %v\n%s", errs, src)
			}
			var out bytes.Buffer
			asm.Fprint(&out, f)
			for _, w := range c.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("no %q in\n%.600s", w, out.String())
				}
			}
		})
	}
}

// TestEntryFunctions: a `pto.entry` function with a body of tile ops is a
// kernel (its body used to be dropped: the file had no kernel); one that
// only calls kernels is a wrapper binding their arguments; a helper that
// returns values is inlined where a kernel calls it; PTOAS's rejections of
// a non-void entry and of recursion are ours too.
func TestEntryFunctions(t *testing.T) {
	const tile = `!pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=16, v_row=16, v_col=16, blayout=row_major, slayout=none_box, fractal=512, pad=0>`
	body := `
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %v = pto.make_tensor_view %a, shape = [%c16, %c16], strides = [%c16, %c1] : !pto.tensor_view<?x?xf32>
    %p = pto.partition_view %v, offsets = [%c0, %c0], sizes = [%c16, %c16] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<16x16xf32>
    %t = pto.alloc_tile : ` + tile + `
    pto.tload ins(%p : !pto.partition_tensor_view<16x16xf32>) outs(%t : ` + tile + `)
    return
`
	for _, c := range []struct {
		name, src string
		want      []string // in the lowered program
		err       string   // the first error instead
	}{
		{"entry with a body is a kernel", `module {
  func.func @k(%a: !pto.ptr<f32>) attributes {pto.entry, pto.kernel_kind = #pto.kernel_kind<vector>} {` + body + `  }
}`, []string{"kernel k : aiv {", "tload %t, @a[0, 0]", "run k blocks=BLOCKS"}, ""},
		{"entry wrapper launches its callee", `module {
  func.func @w(%x: !pto.ptr<f32>) attributes {pto.entry} {
    func.call @k(%x) : (!pto.ptr<f32>) -> ()
    return
  }
  func.func private @k(%a: !pto.ptr<f32>) {` + body + `  }
}`, []string{"gm x : f32 [16, 16]", "kernel k : aiv {", "tload %t, @x[0, 0]", "run k blocks=BLOCKS"}, ""},
		{"helper is inlined", `module {
  func.func @k(%a: !pto.ptr<f32>, %n: i32) attributes {pto.entry} {
    %r = func.call @twice(%n) : (i32) -> i32
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %i = arith.index_cast %r : i32 to index
    %v = pto.make_tensor_view %a, shape = [%c16, %c16], strides = [%c16, %c1] : !pto.tensor_view<?x?xf32>
    %p = pto.partition_view %v, offsets = [%i, %c0], sizes = [%c16, %c16] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<16x16xf32>
    %t = pto.alloc_tile : ` + tile + `
    pto.tload ins(%p : !pto.partition_tensor_view<16x16xf32>) outs(%t : ` + tile + `)
    return
  }
  func.func private @twice(%x: i32) -> i32 {
    %c2 = arith.constant 2 : i32
    %y = arith.muli %x, %c2 : i32
    return %y : i32
  }
}`, []string{"kernel k : aiv {", "tload %t, @a[n * 2, 0]"}, ""},
		{"non-void entry", `module {
  func.func @k(%x: i32) -> i32 attributes {pto.entry} {
    return %x : i32
  }
}`, nil, "e.pto:2:25: error: PTO entry functions must return void (@k returns values)"},
		{"uncalled function returning values", `module {
  func.func @k(%x: i32) -> i32 {
    return %x : i32
  }
}`, nil, "e.pto:2:25: error: PTO entry functions must return void (@k returns values)"},
		{"recursion", `module {
  func.func @k(%x: i32) attributes {pto.entry} {
    func.call @k(%x) : (i32) -> ()
    return
  }
}`, nil, "e.pto:3:5: error: recursive function calls are not supported (@k calls @k, which is on its own call chain)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, errs := ParseFile("e.pto", []byte(c.src))
			if c.err != "" {
				if len(errs) == 0 || errs[0].Error() != c.err {
					t.Fatalf("errors %v, want %s", errs, c.err)
				}
				return
			}
			if errs.HasErrors() {
				t.Fatal(errs)
			}
			var b bytes.Buffer
			asm.Fprint(&b, f)
			for _, w := range c.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("lowered program lacks %q:\n%s", w, b.String())
				}
			}
			if obj, errs := assembleFile("e.pto", []byte(c.src)); obj == nil || errs.HasErrors() || len(obj.Kernels) == 0 {
				t.Fatalf("assemble: %v", errs)
			}
		})
	}
}

// TestReserveSlots: a pipe fed by a reserve_buffer places each popped tile
// in its slot, base + n % L * S (pto-isa's TPOP), with the base PlanMemory
// gives the reserve after planning. Worked by hand: %v (1 KiB, written by
// its tload) is planned at 0 and %w (512 B, written by the tneg) at 1024;
// they occupy [0, 1024) and [1024, 1536) on the 256-byte grid, so the
// reserve starts at 1536, and with local_slot_num = 2 and slot_size = 2048
// the loop's pops go to 1536 and 3584.
func TestReserveSlots(t *testing.T) {
	const tv = "!pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=16, v_row=16, v_col=16, blayout=row_major, slayout=none_box, fractal=512, pad=0>"
	const th = "!pto.tile_buf<loc=vec, dtype=f32, rows=8, cols=16, v_row=8, v_col=16, blayout=row_major, slayout=none_box, fractal=512, pad=0>"
	src := `module {
  func.func @vec(%gm: !pto.ptr<f32>, %a: memref<16x16xf32, #pto.address_space<gm>>) attributes {pto.kernel_kind = #pto.kernel_kind<vector>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %buf = pto.reserve_buffer {name = "c2v", size = 4096, location = #pto.address_space<vec>, auto = true} -> i32
    %pipe = pto.initialize_l2g2l_pipe {dir_mask = 1, slot_size = 2048, slot_num = 4, local_slot_num = 2, flag_base = 0}(%gm : !pto.ptr<f32>, %buf : i32) -> !pto.pipe
    %v = pto.alloc_tile : ` + tv + `
    %w = pto.alloc_tile : ` + th + `
    pto.tload ins(%a : memref<16x16xf32, #pto.address_space<gm>>) outs(%v : ` + tv + `)
    pto.tadd ins(%v, %v : ` + tv + `, ` + tv + `) outs(%v : ` + tv + `)
    scf.for %i = %c0 to %c2 step %c1 {
      %p = pto.declare_tile -> ` + th + `
      pto.tpop(%p, %pipe : ` + th + `, !pto.pipe) {split = 0}
      pto.tneg ins(%p : ` + th + `) outs(%w : ` + th + `)
    }
    return
  }
}
`
	lowerHas(t, "r.pto", src,
		"tile %v : vec f32 [16, 16] layout(blayout=row_major, slayout=none_box) @ 0",
		"tile %w : vec f32 [8, 16] layout(blayout=row_major, slayout=none_box) @ 1024",
		"tassign %p, 1536 + %",
		"% 2 * 2048")
}

// pto.tmov with a scaling tile among its inputs is pto-isa's TMOV(dst, src,
// fp), the vector quantisation (a2a3/TMov.hpp:201-212): it lowers to
// tmov.fp, not to a plain tmov that drops fp.
func TestTMovFpOperand(t *testing.T) {
	const src = `func.func @k() {
  %src = pto.alloc_tile : !pto.tile_buf<loc=acc, dtype=i32, rows=16, cols=64, v_row=16, v_col=64, blayout=col_major, slayout=row_major, fractal=1024, pad=0>
  %fp = pto.alloc_tile : !pto.tile_buf<loc=scaling, dtype=ui64, rows=1, cols=64, v_row=1, v_col=64, blayout=row_major, slayout=none_box, fractal=512, pad=0>
  %dst = pto.alloc_tile : !pto.tile_buf<loc=mat, dtype=i8, rows=16, cols=64, v_row=16, v_col=64, blayout=col_major, slayout=row_major, fractal=512, pad=0>
  pto.tmov ins(%src, %fp : !pto.tile_buf<loc=acc, dtype=i32, rows=16, cols=64, v_row=16, v_col=64, blayout=col_major, slayout=row_major, fractal=1024, pad=0>, !pto.tile_buf<loc=scaling, dtype=ui64, rows=1, cols=64, v_row=1, v_col=64, blayout=row_major, slayout=none_box, fractal=512, pad=0>) outs(%dst : !pto.tile_buf<loc=mat, dtype=i8, rows=16, cols=64, v_row=16, v_col=64, blayout=col_major, slayout=row_major, fractal=512, pad=0>)
  return
}
`
	lowerHas(t, "q.pto", src, "tmov.fp %dst, %src, %fp")
}
