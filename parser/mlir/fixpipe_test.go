package mlir

import (
	"strings"
	"testing"
)

// TestFixpipeOperands: pto.tstore's and pto.tmov's preQuantScalar and
// reluPreMode were dropped, so a quantised store became a plain one. A
// constant QUANT_PRE word set_quant_scalar can write lowers to it and the
// .q move, normal_relu to #relu=normal; anything else is refused at the
// operand or attribute.
func TestFixpipeOperands(t *testing.T) {
	const acc = "!pto.tile_buf<loc=acc, dtype=i32, rows=16, cols=16, v_row=16, v_col=16, blayout=col_major, slayout=row_major, fractal=1024, pad=0>"
	const accF = "!pto.tile_buf<loc=acc, dtype=f32, rows=16, cols=16, v_row=16, v_col=16, blayout=col_major, slayout=row_major, fractal=1024, pad=0>"
	const mat = "!pto.tile_buf<loc=mat, dtype=i8, rows=16, cols=32, v_row=16, v_col=32, blayout=col_major, slayout=row_major, fractal=512, pad=0>"
	const matH = "!pto.tile_buf<loc=mat, dtype=f16, rows=16, cols=16, v_row=16, v_col=16, blayout=col_major, slayout=row_major, fractal=512, pad=0>"
	prog := func(pre, body string) string {
		return "func.func @k(%g: !pto.ptr<i8>, %q: i64) {\n" +
			"  %c0 = arith.constant 0 : index\n  %c1 = arith.constant 1 : index\n  %c16 = arith.constant 16 : index\n" +
			"  %pre = arith.constant " + pre + " : i64\n" +
			"  %tv = pto.make_tensor_view %g, shape = [%c16, %c16], strides = [%c16, %c1] : !pto.tensor_view<?x?xi8>\n" +
			"  %pv = pto.partition_view %tv, offsets = [%c0, %c0], sizes = [%c16, %c16] : !pto.tensor_view<?x?xi8> -> !pto.partition_tensor_view<16x16xi8>\n" +
			"  %acc = pto.alloc_tile : " + acc + "\n  %accf = pto.alloc_tile : " + accF + "\n" +
			"  %m = pto.alloc_tile : " + mat + "\n  %mh = pto.alloc_tile : " + matH + "\n" +
			"  " + body + "\n  return\n}\n"
	}
	store := func(pre, attrs string) string {
		return "pto.tstore ins(%acc : " + acc + ", " + pre + " : i64) outs(%pv : !pto.partition_tensor_view<16x16xi8>)" + attrs
	}
	for _, c := range []struct {
		name, pre, body string
		wants           []string // lowered lines, or the error
	}{
		// 0x4000_3F00_0000: bit 46: scale 0.5, signed 8-bit output.
		{"tstore scalar i8", "70369801142272", store("%pre", " {atomicType = #pto<atomic_type atomic_add>}"),
			[]string{"set_quant_scalar 0.5 #out=i8\n", "tstore.q @g[0, 0], %acc #quant=scalar #atomic=add\n"}},
		{"tstore scalar u8 shift", "13941866496", store("%pre", ""), // 3 << 32 | 0.5
			[]string{"set_quant_scalar 0.5 #out=u8 #shift=3\n", "tstore.q @g[0, 0], %acc #quant=scalar\n"}},
		{"no_relu is plain", "0", "pto.tmov ins(%accf : " + accF + ") outs(%mh : " + matH + ") {reluPreMode = #pto<relu_pre_mode no_relu>}",
			[]string{"tmov %mh, %accf\n"}},
		{"tmov generic scalar", "70369801142272", `"pto.tmov"(%accf, %m, %pre) <{operandSegmentSizes = array<i32: 1, 1, 0, 1>}> : (` + accF + ", " + mat + ", i64) -> ()",
			[]string{"set_quant_scalar 0.5 #out=i8\n", "tmov.q %m, %accf #quant=scalar\n"}},
		{"tstore relu", "70369801142272", store("%pre", " {reluPreMode = #pto<relu_pre_mode normal_relu>}"),
			[]string{"set_quant_scalar 0.5 #out=i8\n", "tstore.q @g[0, 0], %acc #quant=scalar #relu=normal\n"}},
		{"tmov relu", "0", "pto.tmov ins(%accf : " + accF + ") outs(%mh : " + matH + ") {reluPreMode = #pto<relu_pre_mode normal_relu>}",
			[]string{"tmov %mh, %accf #relu=normal\n"}},
		{"bad relu word", "0", "pto.tmov ins(%accf : " + accF + ") outs(%mh : " + matH + ") {reluPreMode = #pto<relu_pre_mode leaky>}",
			[]string{"error: pto.tmov reluPreMode = leaky is not a ReluPreMode (no_relu, normal_relu)"}},
		{"runtime word", "0", store("%q", ""),
			[]string{"e.pto:12:157: error: pto.tstore preQuantScalar %q must be an integer constant"}},
		{"offset bits", "137438953472", store("%pre", ""), // 1 << 37
			[]string{"e.pto:12:157: error: pto.tstore preQuantScalar %pre = 0x2000000000 is not a QUANT_PRE word set_quant_scalar can write"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := prog(c.pre, c.body)
			if strings.Contains(c.wants[0], "error:") {
				_, errs := ParseFile("e.pto", []byte(src))
				for _, w := range c.wants {
					if !strings.Contains(errs.Error(), w) {
						t.Errorf("errors lack %q:\n%v", w, errs)
					}
				}
				return
			}
			lowerHas(t, "e.pto", src, c.wants...)
		})
	}
}
