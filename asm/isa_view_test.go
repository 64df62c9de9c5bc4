package asm_test

import (
	"testing"

	"github.com/ptoasm/ptoasm/asm"
)

// TestViewsAssemble: tiles a view instruction rebinds, and valid regions
// read from registers, are marked for the machine; an unaddressed rebound
// tile takes no bytes (the automatic tile after it starts at 0), and the
// checks that compare valid regions assume nothing about one read from
// registers: a ragged tile's window at row 96 of a 100-row tensor, a
// tadd with a static tile of another shape, a textract window that would
// not fit the declared shape, all assemble (the machine checks each
// instance).
func TestViewsAssemble(t *testing.T) {
	obj, errs := assembleText(t, `
const C = 64
gm X : f32 [100, C] = zero
kernel k : aiv {
    tile %x : vec f32 [16, C] valid [%vr, C]
    tile %ring : vec f32 [16, C]
    tile %y : vec f32 [8, C]
    tile %s : vec f32 [16, C] @ 0x8000
    tile %w : vec f32 [8, C] valid [%vr, C]
    let %vr = 4
    tassign %ring, 0x4000
    tsubview %x, %s, 2, 0
    tload %x, @X[96, 0]
    tadd %y, %x, %x
    textract %w, %x, 12, 0
}
launch ranks=1 { run k blocks=1 }
`)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	k := obj.Kernel("k")
	get := func(name string) *asm.TileInfo {
		for _, ti := range k.Tiles {
			if ti.Name == name {
				return ti
			}
		}
		t.Fatalf("no tile %s", name)
		return nil
	}
	x, ring, y := get("x"), get("ring"), get("y")
	if !x.Rebound || !x.Unplaced || !x.DynValid() || x.VRows != 16 {
		t.Errorf("%%x: rebound %v unplaced %v dyn %v vrows %d; want a rebound, unplaced tile with valid rows from registers, bounded by 16",
			x.Rebound, x.Unplaced, x.DynValid(), x.VRows)
	}
	if !ring.Unplaced || y.Addr[0] != 0 {
		t.Errorf("%%ring unplaced %v, %%y at %#x; want no bytes for %%ring and %%y at 0", ring.Unplaced, y.Addr[0])
	}
	for _, o := range k.Overlaps() {
		if o.A.Unplaced || o.B.Unplaced {
			t.Errorf("overlap listed with an unplaced tile: %%%s and %%%s", o.A.Name, o.B.Name)
		}
	}
}
