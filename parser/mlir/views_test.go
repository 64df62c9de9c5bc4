package mlir

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
)

// TestViewGeo: the geometry of a rows × cols transfer through a view: row
// pitch (nd) or column pitch (dn), or none when the rows do not nest.
func TestViewGeo(t *testing.T) {
	sp := asm.Span{}
	vals := func(xs ...int64) []*val {
		out := make([]*val, len(xs))
		for i, x := range xs {
			out[i] = lit(sp, x)
		}
		return out
	}
	for _, c := range []struct {
		name           string
		shape, strides []int64
		layout         string
		rows, cols     int64
		want           refGeo
	}{
		{"row-major", []int64{16, 32}, []int64{32, 1}, "", 16, 32, refGeo{kind: "nd", pitch: 32, ok: true}},
		{"row pitch wider than the window", []int64{16, 256}, []int64{25600, 1}, "nd", 16, 256, refGeo{kind: "nd", pitch: 25600, ok: true}},
		{"column-major", []int64{128, 128}, []int64{1, 128}, "", 128, 128, refGeo{kind: "dn", pitch: 128, ok: true}},
		{"one contiguous column, dn", []int64{16, 1}, []int64{1, 16}, "dn", 16, 1, refGeo{kind: "nd", pitch: 1, ok: true}},
		{"one row", []int64{1, 64}, []int64{1024, 1}, "", 1, 64, refGeo{kind: "nd", pitch: 0, ok: true}},
		{"rank 3, rows nest", []int64{16, 16, 16}, []int64{256, 16, 1}, "", 256, 16, refGeo{kind: "nd", pitch: 16, ok: true}},
		{"rank 5, unit outer dims", []int64{1, 1, 1, 16, 16}, []int64{1 << 20, 1 << 20, 1 << 20, 1024, 1}, "", 16, 16, refGeo{kind: "nd", pitch: 1024, ok: true}},
		{"rank 5, rows do not nest", []int64{1, 1, 16, 16, 16}, []int64{1 << 20, 1 << 20, 1 << 20, 1024, 1}, "", 256, 16, refGeo{kind: "nd", pitch: 1024, ok: false}},
		{"both strides > 1", []int64{16, 16}, []int64{64, 2}, "", 16, 16, refGeo{kind: "nd", pitch: 64, ok: false}},
	} {
		t.Run(c.name, func(t *testing.T) {
			vw := &viewVal{shape: vals(c.shape...), strides: vals(c.strides...), layout: c.layout}
			if got := viewGeo(vw, c.rows, c.cols); got != c.want {
				t.Errorf("viewGeo = %+v, want %+v", got, c.want)
			}
		})
	}
}

// TestStridedViews: views that are not windows of their tensor's declared
// shape lower to a tensor in the transfer's layout and pitch (not a flat
// 1-D tensor, whose windows the machine saw as one range), a partition of
// rows that do not nest to one transfer per block, and an argument read
// both row- and column-major to one tensor per layout.
func TestStridedViews(t *testing.T) {
	tile := func(r, c int, bl string) string {
		return `!pto.tile_buf<loc=vec, dtype=f32, rows=` + itoa(r) + `, cols=` + itoa(c) + `, v_row=` + itoa(r) + `, v_col=` + itoa(c) + `, blayout=` + bl + `, slayout=none_box, fractal=512, pad=0>`
	}
	kernel := func(body string) string {
		return `module {
  func.func @k(%a: !pto.ptr<f32>, %b: !pto.ptr<f32>) attributes {pto.kernel_kind = #pto.kernel_kind<vector>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %c32 = arith.constant 32 : index
    %c64 = arith.constant 64 : index
    %c1024 = arith.constant 1024 : index
    %cM = arith.constant 1048576 : index
` + body + `
    return
  }
}`
	}
	for _, c := range []struct {
		name, body string
		want       []string
	}{
		{"dn window", `
    %v = pto.make_tensor_view %a, shape = [%c64, %c64], strides = [%c1, %c64] {layout = #pto.layout<dn>} : !pto.tensor_view<?x?xf32>
    %p = pto.partition_view %v, offsets = [%c32, %c16], sizes = [%c32, %c16] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<32x16xf32>
    %t = pto.alloc_tile : ` + tile(32, 16, "col_major") + `
    pto.tload ins(%p : !pto.partition_tensor_view<32x16xf32>) outs(%t : ` + tile(32, 16, "col_major") + `)`,
			[]string{"gm a : f32 [64, 64] dn", "tload %t, @a[32, 16]"}},
		{"row pitch", `
    %v = pto.make_tensor_view %a, shape = [%c16, %c32], strides = [%c1024, %c1] : !pto.tensor_view<?x?xf32>
    %p = pto.partition_view %v, offsets = [%c1, %c16], sizes = [%c16, %c16] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<16x16xf32>
    %t = pto.alloc_tile : ` + tile(16, 16, "row_major") + `
    pto.tload ins(%p : !pto.partition_tensor_view<16x16xf32>) outs(%t : ` + tile(16, 16, "row_major") + `)`,
			[]string{"gm a : f32 [17, 1024]", "tload %t, @a[1, 16]"}},
		{"rows that do not nest: a transfer per block", `
    %v = pto.make_tensor_view %a, shape = [%c16, %c1024, %c1024], strides = [%cM, %c1024, %c1] : !pto.tensor_view<?x?x?xf32>
    %p = pto.partition_view %v, offsets = [%c0, %c0, %c0], sizes = [%c16, %c16, %c16] : !pto.tensor_view<?x?x?xf32> -> !pto.partition_tensor_view<16x16x16xf32>
    %t = pto.alloc_tile : ` + tile(256, 16, "row_major") + `
    pto.tload ins(%p : !pto.partition_tensor_view<16x16x16xf32>) outs(%t : ` + tile(256, 16, "row_major") + `)`,
			[]string{"gm a : f32 [16384, 1024]", "tile %t_blk0 : vec f32 [16, 16] @ 0", "tload %t_blk0, @a[0, 0]",
				"tile %t_blk15 : vec f32 [16, 16] @ 15360", "tload %t_blk15, @a[15360, 0]"}},
		{"one argument, two layouts", `
    %v = pto.make_tensor_view %a, shape = [%c32, %c64], strides = [%c64, %c1] : !pto.tensor_view<?x?xf32>
    %w = pto.make_tensor_view %a, shape = [%c32, %c64], strides = [%c1, %c32] {layout = #pto.layout<dn>} : !pto.tensor_view<?x?xf32>
    %p = pto.partition_view %v, offsets = [%c0, %c0], sizes = [%c32, %c64] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<32x64xf32>
    %q = pto.partition_view %w, offsets = [%c0, %c0], sizes = [%c32, %c64] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<32x64xf32>
    %t = pto.alloc_tile : ` + tile(32, 64, "row_major") + `
    pto.tload ins(%p : !pto.partition_tensor_view<32x64xf32>) outs(%t : ` + tile(32, 64, "row_major") + `)
    pto.tload ins(%q : !pto.partition_tensor_view<32x64xf32>) outs(%t : ` + tile(32, 64, "row_major") + `)`,
			[]string{"gm a : f32 [32, 64] = random", "gm a_dn32 : f32 [32, 64] dn", "tload %t, @a[0, 0]", "tload %t, @a_dn32[0, 0]"}},
		{"a row of a dn tensor is not a window of it", `
    %w = pto.make_tensor_view %a, shape = [%c32, %c64], strides = [%c1, %c32] {layout = #pto.layout<dn>} : !pto.tensor_view<?x?xf32>
    %v = pto.make_tensor_view %a, shape = [%c1, %c64], strides = [%c64, %c1] : !pto.tensor_view<?x?xf32>
    %q = pto.partition_view %w, offsets = [%c0, %c0], sizes = [%c32, %c64] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<32x64xf32>
    %p = pto.partition_view %v, offsets = [%c0, %c0], sizes = [%c1, %c64] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<1x64xf32>
    %t = pto.alloc_tile : ` + tile(32, 64, "row_major") + `
    %r = pto.alloc_tile : ` + tile(1, 64, "row_major") + `
    pto.tload ins(%q : !pto.partition_tensor_view<32x64xf32>) outs(%t : ` + tile(32, 64, "row_major") + `)
    pto.tload ins(%p : !pto.partition_tensor_view<1x64xf32>) outs(%r : ` + tile(1, 64, "row_major") + `)`,
			[]string{"gm a : f32 [32, 64] dn", "gm a_nd64 : f32 [32, 64] = random", "tload %t, @a[0, 0]", "tload %r, @a_nd64[0, 0]"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := kernel(c.body)
			f, errs := ParseFile("s.pto", []byte(src))
			if errs.HasErrors() {
				t.Fatal(errs)
			}
			// Kernel arguments are host inputs: every GM tensor, the
			// per-layout ones too, starts with seeded data, never poison.
			for _, d := range f.Decls {
				if g, ok := d.(*asm.Tensor); ok && g.Class == asm.TensorGM && (g.Init == nil || g.Init.Kind != "random") {
					t.Errorf("gm %s is not initialised with random data: %+v", g.Name, g.Init)
				}
			}
			var b bytes.Buffer
			asm.Fprint(&b, f)
			for _, w := range c.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("lowered program lacks %q:\n%s", w, b.String())
				}
			}
			if obj, errs := assembleFile("s.pto", []byte(src)); obj == nil || errs.HasErrors() {
				t.Fatalf("assemble: %v", errs)
			}
		})
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
