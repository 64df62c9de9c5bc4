package machine

import (
	"testing"
	"unsafe"

	"github.com/ptoasm/ptoasm/asm"
)

func TestAccessOverlaps(t *testing.T) {
	// 4 runs of 16 bytes, 64 apart: [100,116) [164,180) [228,244) [292,308).
	a := Access{Lo: 100, Hi: 116, Rows: 4, Pitch: 64}
	if lo, hi := a.Bounds(); lo != 100 || hi != 308 {
		t.Errorf("Bounds = %d, %d", lo, hi)
	}
	if a.Bytes() != 64 {
		t.Errorf("Bytes = %d", a.Bytes())
	}
	for _, tc := range []struct {
		lo, hi int64
		want   bool
	}{
		{0, 100, false}, {0, 101, true}, {116, 164, false}, {115, 117, true}, {170, 171, true},
		{180, 228, false}, {300, 400, true}, {308, 400, false}, {120, 300, true},
	} {
		if got := a.Overlaps(tc.lo, tc.hi); got != tc.want {
			t.Errorf("Overlaps(%d, %d) = %v, want %v", tc.lo, tc.hi, got, tc.want)
		}
	}
	plain := Access{Lo: 10, Hi: 20}
	if !plain.Overlaps(19, 30) || plain.Overlaps(20, 30) || plain.NumRows() != 1 {
		t.Error("plain access")
	}
}

// TestAccessOverlapsBrute checks Overlaps against a byte-by-byte scan.
func TestAccessOverlapsBrute(t *testing.T) {
	for _, a := range []Access{
		{Lo: 100, Hi: 116, Rows: 4, Pitch: 64},
		{Lo: 0, Hi: 8, Rows: 3, Pitch: 8},   // runs that touch
		{Lo: 10, Hi: 30, Rows: 3, Pitch: 8}, // runs that overlap each other
		{Lo: 5, Hi: 6, Rows: 1 << 40, Pitch: 1000},
	} {
		for lo := int64(0); lo < 340; lo += 3 {
			for hi := lo + 1; hi < lo+70; hi += 5 {
				want := false
				for k := int64(0); k < min(a.Rows, 1000) && !want; k++ {
					rlo, rhi := a.Lo+k*a.Pitch, a.Hi+k*a.Pitch
					want = rlo < hi && lo < rhi
				}
				if got := a.Overlaps(lo, hi); got != want {
					t.Fatalf("%+v Overlaps(%d, %d) = %v, want %v", a, lo, hi, got, want)
				}
			}
		}
	}
}

// An Access stays one cache line: observers copy one per operand.
func TestAccessSize(t *testing.T) {
	if n := unsafe.Sizeof(Access{}); n > 64 {
		t.Errorf("Access is %d bytes, want at most 64", n)
	}
}

// elemOf finds the element an operand's address names, also when elements
// overlap (step below the tile size) or the step is not uniform.
func TestElemOf(t *testing.T) {
	for _, tc := range []struct {
		name string
		addr []int64
		off  int64
		want int32
	}{
		{"single tile", []int64{0x100}, 0x100, 0},
		{"disjoint, second", []int64{0, 0x1000}, 0x1000, 1},
		{"overlapping, middle", []int64{0, 0x80, 0x100}, 0x80, 1},
		{"overlapping, last", []int64{0, 0x80, 0x100}, 0x100, 2},
		{"descending step", []int64{0x200, 0x100, 0}, 0, 2},
		{"uneven addresses", []int64{0, 0x100, 0x180}, 0x180, 2},
		{"step 0: any is right", []int64{0x40, 0x40}, 0x40, 0},
	} {
		ti := &asm.TileInfo{Name: "w", Addr: tc.addr, Bytes: 0x100, Count: len(tc.addr), IsArray: len(tc.addr) > 1}
		if got := elemOf(ti, tc.off); got != tc.want {
			t.Errorf("%s: elemOf(%v, %#x) = %d, want %d", tc.name, tc.addr, tc.off, got, tc.want)
		}
	}
}
