package machine

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ptoasm/ptoasm/asm"
)

// TestWindowAccesses: textract/tinsert report only the window they touch: a
// row-major or column-major window as one range when its runs touch, else as
// one strided access (exact, whatever the row count); a fractal window as a
// range per contiguous run, merged where runs touch.
func TestWindowAccesses(t *testing.T) {
	nd := &asm.TileInfo{Name: "nd", Space: asm.UB, DType: asm.F32, Rows: 4, Cols: 8, VRows: 4, VCols: 8, Addr: []int64{0x100}, Bytes: 128}
	dn := &asm.TileInfo{Name: "dn", Space: asm.UB, DType: asm.F32, Rows: 4, Cols: 8, VRows: 4, VCols: 8, BLayout: "col", Addr: []int64{0}, Bytes: 128}
	tall := &asm.TileInfo{Name: "tall", Space: asm.L1, DType: asm.F16, Rows: 128, Cols: 256, VRows: 128, VCols: 256, Addr: []int64{0x8000}, Bytes: 128 * 512}
	for _, tc := range []struct {
		name                 string
		t                    *asm.TileInfo
		row, col, rows, cols int
		want                 [][4]int64 // lo, hi, rows, pitch
		fits                 bool
	}{
		{"full width is one range", nd, 1, 0, 2, 8, [][4]int64{{0x120, 0x160, 0, 0}}, true},
		{"one row of a narrow window is one range", nd, 3, 2, 1, 3, [][4]int64{{0x168, 0x174, 0, 0}}, true},
		{"narrow window, strided by rows", nd, 0, 2, 2, 3, [][4]int64{{0x108, 0x114, 2, 32}}, true},
		{"dn column slice is one range", dn, 0, 2, 4, 2, [][4]int64{{32, 64, 0, 0}}, true},
		{"dn row slice, strided by columns", dn, 1, 2, 2, 3, [][4]int64{{36, 44, 3, 16}}, true},
		// More rows than maxWindowRanges stays exact (it was a bounding range).
		{"128-row column window", tall, 0, 64, 128, 64, [][4]int64{{0x8080, 0x8100, 128, 512}}, true},
		{"outside the tile", nd, 3, 0, 2, 8, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &Operand{Kind: asm.ArgTile, Tile: tc.t, Off: tc.t.Addr[0]}
			out, ok := windowAccesses(nil, Access{Space: asm.UB, Write: true, Tile: tc.t}, a, tc.row, tc.col, tc.rows, tc.cols)
			if ok != tc.fits {
				t.Fatalf("ok = %v", ok)
			}
			var got [][4]int64
			for _, x := range out {
				if !x.Write || x.Tile != tc.t {
					t.Errorf("access %+v lost its proto fields", x)
				}
				got = append(got, [4]int64{x.Lo, x.Hi, x.Rows, x.Pitch})
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("ranges (-want +got):\n%s", d)
			}
		})
	}
}

// TestValidRegionAccesses: an op touches only its tiles' valid regions
// (exec.go's tileView), so a tile declared with a valid region smaller than
// its shape (a sub-tile view) is reported as exactly that window; a
// gather's source is indexed over the whole tile and stays whole. Each
// access names the tile-array element its operand named, also where
// elements overlap.
func TestValidRegionAccesses(t *testing.T) {
	type acc struct {
		lo, hi, rows, pitch int64
		write               bool
		elem                int32
	}
	for _, tc := range []struct {
		name string
		body string // the kernel's statements; the tile checked is %v
		op   string
		want []acc
	}{
		{"load into a column half", "tload %v, @X[0, 0]", "tload",
			[]acc{{0x80, 0x80 + 128, 16, 256, true, 0}}},
		{"fill of a row half is one range", "texpands %h, 1.0", "texpands",
			[]acc{{0x2000, 0x2800, 0, 0, true, 0}}},
		{"whole tile", "texpands %w, 1.0", "texpands",
			[]acc{{0x3000, 0x4000, 0, 0, true, 0}}},
		{"read and write of a column half", "tadds %v, %v, 1.0", "tadds",
			[]acc{{0x80, 0x80 + 128, 16, 256, true, 0}, {0x80, 0x80 + 128, 16, 256, false, 0}}},
		{"gather source stays whole", "texpands %idx, 0.0\n    tgather %g, %v, %idx", "tgather",
			[]acc{{0x5000, 0x5000 + 0x400, 0, 0, true, 0}, {0x80, 0x1080, 0, 0, false, 0}, {0x6000, 0x6400, 0, 0, false, 0}}},
		{"overlapping array element", "texpands %o[1], 1.0", "texpands",
			[]acc{{0x7800, 0x8800, 0, 0, true, 1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := `
gm X : f32 [16, 64] = fill(1.0)
kernel k : aiv {
    tile %v : vec f32 [16, 64] valid [16, 32] @ 0x80
    tile %h : vec f32 [16, 64] valid [8, 64] @ 0x2000
    tile %w : vec f32 [16, 64] @ 0x3000
    tile %g : vec f32 [16, 16] @ 0x5000
    tile %idx : vec i32 [16, 16] @ 0x6000
    tile %o[2] : vec f32 [16, 64] @ 0x7000 step 0x800
    ` + tc.body + `
}
launch ranks=1 {
    run k blocks=1
}
`
			rec := &recorder{kinds: map[EventKind]bool{EvExec: true}}
			if _, _, err := runObj(t, assemble(t, src), Options{Observers: []Observer{rec}}); err != nil {
				t.Fatal(err)
			}
			var got []acc
			for _, e := range rec.evs {
				if e.Op == nil || e.Op.Info == nil || e.Op.Info.Name != tc.op {
					continue
				}
				for _, a := range e.Accesses {
					if a.Tile == nil {
						continue
					}
					got = append(got, acc{a.Lo, a.Hi, a.Rows, a.Pitch, a.Write, a.Elem})
				}
			}
			if d := cmp.Diff(tc.want, got, cmp.AllowUnexported(acc{})); d != "" {
				t.Errorf("accesses (-want +got):\n%s", d)
			}
		})
	}
}

// A tput chunked through a staging tile moves a smaller valid region of it
// in a partial chunk (a copy of the tile in the entry): its accesses cover
// that region only, and a later chunk with another shape through the same
// entry slot gets its own ranges, not a memoised earlier one's.
func TestPartialChunkAccesses(t *testing.T) {
	src := `
gm A : f32 [40, 32] = fill(1.0)
gm B : f32 [40, 32] = fill(2.0)
window W : f32 [40, 32] = zero
window V : f32 [40, 32] = zero
kernel k : aiv {
    tile %ping : vec f32 [16, 64] @ 0x0
    tile %wide : vec f32 [16, 128] @ 0x8000
    // Enough rounds that the pipes' entry slots come round again.
    for %i = 0 to 16 {
        tput @W[rank=(rank + 1) % nranks][0, 0], @A[0, 0], %ping #rows=40 #cols=32
        pipe_barrier ALL
        tput @V[rank=(rank + 1) % nranks][0, 0], @B[0, 0], %wide #rows=40 #cols=32
        pipe_barrier ALL
    }
}
launch ranks=2 { run k blocks=1 }
expect @W[rank=1] == @A[rank=0] tol 0
expect @V[rank=1] == @B[rank=0] tol 0
`
	rec := &recorder{kinds: map[EventKind]bool{EvExec: true}}
	_, r, err := runObj(t, assemble(t, src), Options{Observers: []Observer{rec}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range r.Checks {
		if !c.OK {
			t.Errorf("%s: %s", c.Name, c.Msg)
		}
	}
	type acc struct{ lo, hi, rows, pitch int64 }
	var got []acc
	for _, e := range rec.evs {
		if e.Step != "tput.load" || e.Agent.Rank != 0 {
			continue
		}
		for _, a := range e.Accesses {
			if a.Tile != nil {
				got = append(got, acc{a.Lo, a.Hi, a.Rows, a.Pitch})
			}
		}
	}
	// Chunks of 16, 16 and 8 rows, 32 columns: a column window of each
	// staging tile, at its own row pitch (256 and 512 bytes), though both
	// windows are (0, 0, rows, 32) of a copy of the tile in the entry.
	var want []acc
	for range 16 {
		want = append(want, acc{0, 128, 16, 256}, acc{0, 128, 16, 256}, acc{0, 128, 8, 256},
			acc{0x8000, 0x8080, 16, 512}, acc{0x8000, 0x8080, 16, 512}, acc{0x8000, 0x8080, 8, 512})
	}
	if d := cmp.Diff(want, got, cmp.AllowUnexported(acc{})); d != "" {
		t.Errorf("staging accesses (-want +got):\n%s", d)
	}
}

// TestGMWindowAccesses: a GM window is reported as the bytes the DMA
// touches: one range when its runs are contiguous, else one strided access
// — a run per row of an ND window narrower than the tensor, a run per
// column of a DN window shorter than the tensor's columns — and a read of a
// tensor nothing writes as its bounding range.
func TestGMWindowAccesses(t *testing.T) {
	type acc struct {
		lo, hi, rows, pitch int64
		write, readOnly     bool
	}
	for _, tc := range []struct {
		name string
		body string
		want []acc
	}{
		// Y is f32 [16, 32] nd (128-byte rows), D f32 [16, 32] dn (64-byte columns).
		{"nd full width", "tstore @Y[4, 0], %w", []acc{{4 * 128, 8 * 128, 0, 0, true, false}}},
		{"nd narrow window, a run per row", "tstore @Y[4, 8], %n", []acc{{4*128 + 32, 4*128 + 64, 4, 128, true, false}}},
		{"dn full height, one range", "tstore @D[0, 8], %t", []acc{{8 * 64, 16 * 64, 0, 0, true, false}}},
		{"dn short window, a run per column", "tstore @D[4, 8], %n", []acc{{8*64 + 16, 8*64 + 32, 8, 64, true, false}}},
		{"dn read and write", "tload %n, @D[4, 8]\n    set_flag MTE2, MTE3, 0\n    wait_flag MTE2, MTE3, 0\n    tstore @D[8, 0], %n", []acc{
			{8*64 + 16, 8*64 + 32, 8, 64, false, false}, {32, 48, 8, 64, true, false}}},
		{"dn read-only: bounding range", "tload %n, @R[4, 8]", []acc{{8*64 + 16, 15*64 + 32, 0, 0, false, true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := `
gm Y : f32 [16, 32] = zero
gm D : f32 [16, 32] dn = zero
gm R : f32 [16, 32] dn = zero
kernel k : aiv {
    tile %w : vec f32 [4, 32]
    tile %n : vec f32 [4, 8]
    tile %t : vec f32 [16, 8] layout(blayout=col)
    ` + tc.body + `
}
launch ranks=1 {
    run k blocks=1
}
`
			obj := assemble(t, src)
			rec := &recorder{kinds: map[EventKind]bool{EvExec: true}}
			m, _, err := runObj(t, obj, Options{Observers: []Observer{rec}})
			if err != nil {
				t.Fatal(err)
			}
			var got []acc
			for _, e := range rec.evs {
				for _, a := range e.Accesses {
					if a.Tensor == nil {
						continue
					}
					base := m.ranks[0].gm[a.Tensor.Index].base
					got = append(got, acc{a.Lo - base, a.Hi - base, a.Rows, a.Pitch, a.Write, a.ReadOnly})
				}
			}
			if d := cmp.Diff(tc.want, got, cmp.AllowUnexported(acc{})); d != "" {
				t.Errorf("GM accesses (-want +got):\n%s", d)
			}
		})
	}
}
