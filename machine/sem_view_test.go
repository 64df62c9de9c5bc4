package machine

import (
	"math"
	"strings"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
)

// The view instructions checked against references computed here from the
// inputs' defining formulas (sem_view.go): each test moves data only
// through rebound tiles, so a wrong address or offset shows in the output.

// runView runs src and returns Y's element (r, c) reader.
func runView(t *testing.T, src string) func(r, c int64) float64 {
	t.Helper()
	m, _, err := runObj(t, assemble(t, src), Options{})
	if err != nil {
		t.Fatal(err)
	}
	buf, ti := m.TensorData("Y", 0)
	return func(r, c int64) float64 { return getGM(t, ti, buf, r, c) }
}

// checkY compares Y's first rows×cols elements with want.
func checkY(t *testing.T, y func(r, c int64) float64, rows, cols int64, want func(r, c int64) float64) {
	t.Helper()
	for r := int64(0); r < rows; r++ {
		for c := int64(0); c < cols; c++ {
			if got, w := y(r, c), want(r, c); got != w {
				t.Fatalf("Y[%d, %d] = %v, want %v", r, c, got, w)
			}
		}
	}
}

// TestTassign loads row i of X into a slot chosen by a register, reverse
// order, then stores slot i through a second tile bound to the same bytes:
// Y row i is X row 3-i. Neither tile is placed by the assembler.
func TestTassign(t *testing.T) {
	y := runView(t, `
const C = 64
gm X : f32 [4, C] = expr(i * 1000 + j)
gm Y : f32 [4, C] = zero
kernel k : aiv {
    tile %a : vec f32 [1, C]
    tile %b : vec f32 [1, C]
    for %i = 0 to 4 {
        tassign %a, 4096 + (3 - %i) * 256
        tload %a, @X[%i, 0]
    }
    set_flag MTE2, MTE3, 0
    wait_flag MTE2, MTE3, 0
    for %i = 0 to 4 {
        tassign %b, 4096 + %i * 256
        tstore @Y[%i, 0], %b
    }
}
launch ranks=1 { run k blocks=1 }
`)
	noteExecuted(asm.OpTassign)
	checkY(t, y, 4, 64, func(r, c int64) float64 { return float64((3-r)*1000 + c) })
}

// TestTsubview stores [2, 32] sub-tiles of a [4, 64] tile at register
// offsets, row-major (offset row·64 + col elements) and, through a column
// window of a rebound source, chained: Y's two blocks are X[2:4, 32:64] and
// X[0:2, 16:48].
func TestTsubview(t *testing.T) {
	y := runView(t, `
gm X : f32 [4, 64] = expr(i * 1000 + j)
gm Y : f32 [2, 64] = zero
kernel k : aiv {
    tile %s : vec f32 [4, 64] @ 0x1000
    tile %w : vec f32 [4, 64]
    tile %d : vec f32 [4, 64] valid [2, 32]
    let %r = 2
    let %c = 32
    tload %s, @X[0, 0]
    set_flag MTE2, MTE3, 0
    wait_flag MTE2, MTE3, 0
    tsubview %d, %s, %r, %c
    tstore @Y[0, 0], %d
    treshape %w, %s
    tsubview %d, %w, 0, %c - 16
    tstore @Y[0, 32], %d
}
launch ranks=1 { run k blocks=1 }
`)
	noteExecuted(asm.OpTsubview)
	checkY(t, y, 2, 64, func(r, c int64) float64 {
		if c >= 32 {
			return float64(r*1000 + 16 + c - 32)
		}
		return float64((r+2)*1000 + 32 + c)
	})
	// pto-isa's Tile::RowStride/ColStride (pto_tile.hpp): column-major
	// tiles step 1 between rows and Rows between columns.
	col := &asm.TileInfo{Rows: 16, Cols: 8, BLayout: "col"}
	if rs, cs := asm.RowColStride(col); rs != 1 || cs != 16 {
		t.Errorf("col-major strides = %d, %d; want 1, 16", rs, cs)
	}
}

// TestTreshape views an f32 [16, 64] tile as u32 [8, 128]: the same bytes,
// so Y's element k (row-major) holds the bits of X's element k.
func TestTreshape(t *testing.T) {
	m, _, err := runObj(t, assemble(t, `
gm X : f32 [16, 64] = random(seed=7, lo=-3, hi=3)
gm Y : u32 [8, 128] = zero
kernel k : aiv {
    tile %a : vec f32 [16, 64]
    tile %b : vec u32 [8, 128]
    tload %a, @X[0, 0]
    set_flag MTE2, MTE3, 0
    wait_flag MTE2, MTE3, 0
    treshape %b, %a
    tstore @Y[0, 0], %b
}
launch ranks=1 { run k blocks=1 }
`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	noteExecuted(asm.OpTreshape)
	xb, xt := m.TensorData("X", 0)
	yb, yt := m.TensorData("Y", 0)
	for k := int64(0); k < 16*64; k++ {
		x := getGM(t, xt, xb, k/64, k%64)
		off, err := GMOffset(yt, []int64{k / 128, k % 128})
		if err != nil {
			t.Fatal(err)
		}
		bits, err := yb.LoadBits(asm.U32, off)
		if err != nil {
			t.Fatal(err)
		}
		if want := uint64(math.Float32bits(float32(x))); bits != want {
			t.Fatalf("element %d: bits %#x, want %#x (X = %v)", k, bits, want, x)
		}
	}
}

// TestDynValid: a valid region from a register bounds what the load, the
// vector op and the store touch, instance by instance.
func TestDynValid(t *testing.T) {
	y := runView(t, `
gm X : f32 [8, 64] = expr(i * 100 + j)
gm Y : f32 [8, 64] = zero
kernel k : aiv {
    tile %x : vec f32 [8, 64] valid [%n, %m]
    let %n = 5
    let %m = 64
    tload %x, @X[0, 0]
    set_flag MTE2, V, 0
    wait_flag MTE2, V, 0
    let %n = 3
    let %m = 40
    tadds %x, %x, 0.5
    set_flag V, MTE3, 0
    wait_flag V, MTE3, 0
    let %n = 5
    let %m = 64
    tstore @Y[0, 0], %x
}
launch ranks=1 { run k blocks=1 }
`)
	checkY(t, y, 8, 64, func(r, c int64) float64 {
		want := 0.0
		if r < 5 {
			want = float64(r*100 + c)
		}
		if r < 3 && c < 40 {
			want += 0.5
		}
		return want
	})
}

// TestViewAccesses: the accesses observers see are the view's bytes at
// issue: its binding and its valid rows.
func TestViewAccesses(t *testing.T) {
	obj := assemble(t, `
gm X : f32 [8, 64] = zero
kernel k : aiv {
    tile %x : vec f32 [8, 64] valid [%n, 64]
    let %n = 2
    tassign %x, 0x2000
    tload %x, @X[0, 0]
}
launch ranks=1 { run k blocks=1 }
`)
	rec := &recorder{kinds: map[EventKind]bool{EvExec: true}}
	if _, _, err := runObj(t, obj, Options{Observers: []Observer{rec}}); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, ev := range rec.evs {
		for _, a := range ev.Accesses {
			if a.Space == asm.UB {
				n++
				if a.Lo != 0x2000 || a.Hi != 0x2000+2*64*4 || !a.Write {
					t.Errorf("UB access [%#x, %#x) write=%v, want a write of [0x2000, 0x2200)", a.Lo, a.Hi, a.Write)
				}
			}
		}
	}
	if n != 1 {
		t.Errorf("%d UB accesses, want one", n)
	}
}

// TestViewFaults: bindings and valid regions the hardware cannot use stop
// the run with a fault naming the tile.
func TestViewFaults(t *testing.T) {
	for _, tc := range []struct{ name, body, want string }{
		{"unbound", "tile %a : vec f32 [1, 64]\n let %z = 0\n if %z { tassign %a, 0 }\n texpands %a, 1.0",
			"%a is used before a tassign, tsubview or treshape binds it"},
		{"misaligned", "tile %a : vec f32 [1, 64]\n let %r = 16\n tassign %a, %r", "tassign %a: address 0x10 is not a non-negative multiple of 32"},
		{"past the end", "tile %a : vec f32 [1, 64]\n let %r = 0x30000\n tassign %a, %r", "runs past the end of UB"},
		{"past 2^63", "tile %a : vec f32 [1, 64]\n let %r = 0x7fffffffffffffe0\n tassign %a, %r", "tassign %a: [0x7fffffffffffffe0, 0x7fffffffffffffe0 + 0x100) runs past the end of UB"},
		{"valid rows", "tile %a : vec f32 [4, 64] valid [%n, 64]\n let %n = 0\n texpands %a, 1.0", "%a: valid rows 0 outside 1..4"},
		{"view past the end", "tile %s : vec f32 [4, 64] @ 0x2fc00\n tile %d : vec f32 [4, 64] valid [2, 64]\n tsubview %d, %s, 3, 0\n texpands %d, 1.0",
			"its valid region [2, 64] ends at 0x30100, past the end of UB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj := assemble(t, "kernel k : aiv {\n"+tc.body+"\n}\nlaunch ranks=1 { run k blocks=1 }\n")
			_, _, err := runObj(t, obj, Options{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// fifoSlotSrc: both AIVs claim each slot, store their half of it and commit
// it; the AIC pops the slot, loads it whole into L1, frees it and stores it
// to Y. Three pushes through two slots wrap the ring, so the second talloc
// round waits for the AIC's tfree.
const fifoSlotSrc = `
const T = 16
const C = 64
const N = 3
gm X : f32 [N * T, C] = expr(i * 100 + j)
gm Y : f32 [N * T, C] = zero
fifo F : f32 [T, C] slots=2 id=0
kernel prod : aiv {
    tile %v : vec f32 [T / 2, C]
    for %k = 0 to N {
        tload %v, @X[%k * T + subblock_idx * (T / 2), 0]
        set_flag MTE2, MTE3, 0
        wait_flag MTE2, MTE3, 0
        talloc @F
        tstore @F[subblock_idx * (T / 2), 0], %v
        tpush @F
        set_flag MTE3, MTE2, 0
        wait_flag MTE3, MTE2, 0
    }
}
kernel cons : aic {
    tile %m : mat f32 [T, C]
    for %k = 0 to N {
        tpop @F
        tload %m, @F[0, 0]
        tfree @F
        set_flag MTE2, MTE3, 0
        wait_flag MTE2, MTE3, 0
        tstore @Y[%k * T, 0], %m
        set_flag MTE3, MTE2, 0
        wait_flag MTE3, MTE2, 0
    }
}
launch ranks=1 { run cons + prod blocks=1 }
`

// TestFifoSlots checks the GlobalData flow moves every row, in order, and
// that its FFTS ids match the tile flow's: the detector finds nothing.
func TestFifoSlots(t *testing.T) {
	y := runView(t, fifoSlotSrc)
	checkY(t, y, 48, 64, func(r, c int64) float64 { return float64(r*100 + c) })
	for _, o := range []asm.Opcode{asm.OpTalloc, asm.OpTpushSlot, asm.OpTpopSlot, asm.OpTfree} {
		noteExecuted(o)
	}
	for _, tc := range []struct{ name, from, to, want string }{
		{"store outside a slot", "        talloc @F\n", "", "tstore of @F outside a slot"},
		{"commit twice", "        tpush @F\n", "        tpush @F\n        tpush @F\n", "tpush.slot @F holds no slot (talloc claims one)"},
		{"claim twice", "        tpop @F\n", "        tpop @F\n        tpop @F\n", "tpop.slot @F while slot 0 is still held (release it with tfree @F first)"},
		{"past the slot", "tload %m, @F[0, 0]", "tload %m, @F[%k, 0]", "the [16, 64] window at @F[1, 0] runs outside the slot [16, 64]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := strings.Replace(fifoSlotSrc, tc.from, tc.to, 1)
			_, _, err := runObj(t, assemble(t, src), Options{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestTassignElement rebinds one element of a tile array: element 1 moves,
// element 0 keeps its declared address, and a tile declared at the new
// address sees element 1's data.
func TestTassignElement(t *testing.T) {
	y := runView(t, `
gm X : f32 [2, 64] = expr(i * 1000 + j)
gm Y : f32 [2, 64] = zero
kernel k : aiv {
    tile %a[2] : vec f32 [1, 64] @ 0 step 256
    tile %b : vec f32 [1, 64] @ 0x1000
    let %i = 1
    tassign %a[%i], 0x1000
    tload %a[0], @X[0, 0]
    tload %a[%i], @X[1, 0]
    set_flag MTE2, MTE3, 0
    wait_flag MTE2, MTE3, 0
    tstore @Y[0, 0], %b
    tstore @Y[1, 0], %a[0]
}
launch ranks=1 { run k blocks=1 }
`)
	// Y row 0 is X row 1 (through %b), Y row 1 is X row 0.
	checkY(t, y, 2, 64, func(r, c int64) float64 { return float64((1-r)*1000 + c) })
}
