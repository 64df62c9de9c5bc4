package machine

import "testing"

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
