package memory

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ptoasm/ptoasm/asm"
	goldenfile "github.com/ptoasm/ptoasm/internal/golden"
)

// The first values of a few random fills are pinned in testdata so a change to
// the generator (which would change every program's data) is noticed.
func TestFillRandomGolden(t *testing.T) {
	var out strings.Builder
	for _, tc := range []struct {
		dt      asm.DType
		seed    uint64
		lo, hi  float64
		integer bool
	}{
		{asm.F16, 1, -1, 1, false},
		{asm.F16, 19, 1, 4, true},
		{asm.BF16, 2, 0, 1, false},
		{asm.F32, 3, -10, 10, false},
		{asm.I8, 4, -3, 3, false},
		{asm.I32, 5, 0, 1, true},
	} {
		const n = 8
		b := NewBuffer(asm.GM, "", n*int64(tc.dt.Size()), tc.dt.Size(), true)
		if err := FillRandom(b, 0, tc.dt, n, tc.seed, tc.lo, tc.hi, tc.integer); err != nil {
			t.Fatal(err)
		}
		if b.IsPoisoned(0, b.Size()) {
			t.Errorf("%v: still poisoned", tc.dt)
		}
		fmt.Fprintf(&out, "%v seed=%d lo=%g hi=%g int=%v:", tc.dt, tc.seed, tc.lo, tc.hi, tc.integer)
		for i := int64(0); i < n; i++ {
			v, _ := b.LoadF(tc.dt, i*int64(tc.dt.Size()))
			if v < tc.lo || v > tc.hi || Round(tc.dt, v, RoundRint) != v {
				t.Errorf("%v: %v outside [%g, %g] or not representable", tc.dt, v, tc.lo, tc.hi)
			}
			fmt.Fprintf(&out, " %v", v)
		}
		out.WriteByte('\n')
	}
	goldenfile.Check(t, "testdata/random.golden", []byte(out.String()))
}

func TestFillRandomProperties(t *testing.T) {
	const n = 4000
	b := NewBuffer(asm.GM, "", n*2, 2, true)
	if err := FillRandom(b, 0, asm.F16, n, 19, 1, 4, true); err != nil {
		t.Fatal(err)
	}
	seen := map[float64]int{}
	for i := int64(0); i < n; i++ {
		v, _ := b.LoadF(asm.F16, 2*i)
		seen[v]++
	}
	if len(seen) != 4 || seen[1] == 0 || seen[4] == 0 {
		t.Errorf("int draws in [1, 4] should hit 1, 2, 3, 4: %v", seen)
	}
	c := NewBuffer(asm.GM, "", n*2, 2, true)
	FillRandom(c, 0, asm.F16, n, 19, 1, 4, true)
	if !cmp.Equal(b.Data, c.Data) {
		t.Error("same seed gave different data")
	}
	FillRandom(c, 0, asm.F16, n, 20, 1, 4, true)
	if cmp.Equal(b.Data, c.Data) {
		t.Error("different seeds gave the same data")
	}
	for _, tc := range []struct {
		lo, hi float64
		int    bool
		n      int64
	}{{1, 0, false, 1}, {0.2, 0.8, true, 1}, {0, 1, false, n + 1}, {0, 1, false, -1}} {
		if err := FillRandom(b, 0, asm.F16, tc.n, 1, tc.lo, tc.hi, tc.int); err == nil {
			t.Errorf("FillRandom(lo=%g hi=%g int=%v n=%d) accepted", tc.lo, tc.hi, tc.int, tc.n)
		}
	}
}

func TestFillFunc(t *testing.T) {
	b := NewBuffer(asm.GM, "", 16, 4, true)
	if err := FillFunc(b, 0, asm.I32, 4, func(i int64) float64 { return float64(i*10 + 1) }); err != nil {
		t.Fatal(err)
	}
	for i := int64(0); i < 4; i++ {
		if v, _ := b.LoadI(asm.I32, 4*i); v != i*10+1 {
			t.Errorf("element %d = %d", i, v)
		}
	}
	if err := FillFunc(b, 4, asm.I32, 4, func(int64) float64 { return 0 }); err == nil {
		t.Error("overflowing FillFunc accepted")
	}
}

// Store then load must give the logical array back in every GM layout, and DN
// must really be column-major on the bytes.
func TestArrayLayouts(t *testing.T) {
	shape := []int{2, 20, 24}
	a := NewArray(shape...)
	for i := range a.Data {
		a.Data[i] = float64(i)
	}
	for _, lay := range []asm.Layout{asm.LayoutND, asm.LayoutDN, asm.LayoutNZ} {
		ti := &asm.TensorInfo{DType: asm.F32, Shape: []int64{2, 20, 24}, Layout: lay, Bytes: 2 * 20 * 24 * 4}
		size := TensorBytes(ti)
		b := NewBuffer(asm.GM, "", size, 4, true)
		if err := StoreArray(b, 0, asm.F32, shape, lay, a, RoundRint); err != nil {
			t.Fatal(err)
		}
		got, err := LoadArray(b, 0, asm.F32, shape, lay)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(a, got); d != "" {
			t.Errorf("%v (-want +got):\n%s", lay, d)
		}
		if lay == asm.LayoutDN {
			if v, _ := b.LoadF(asm.F32, 4); v != 24 { // element (0, 1, 0)
				t.Errorf("DN second stored element = %v, want 24", v)
			}
		}
		if lay == asm.LayoutNZ && size <= ti.Bytes {
			t.Errorf("NZ [20, 24] f32 should pad to whole boxes: %d bytes", size)
		}
	}
	b := NewBuffer(asm.GM, "", 16, 4, true)
	if err := StoreArray(b, 0, asm.F32, []int{2, 2}, asm.LayoutND, NewArray(3), RoundRint); err == nil {
		t.Error("size mismatch accepted")
	}
	if _, err := LoadArray(b, 0, asm.F32, []int{4, 4}, asm.LayoutND); err == nil {
		t.Error("load past the end accepted")
	}
}

// TestLoadRowsDecodesAsLoadArray: rows decoded by LoadRows (a row-major
// tensor's rows as one run, other layouts by the column table) are
// LoadArray's, bit for bit, for every dtype (NaNs and poison included).
// (It failed with the run's f16 decoded as bf16.)
func TestLoadRowsDecodesAsLoadArray(t *testing.T) {
	for _, dt := range []asm.DType{asm.F32, asm.F16, asm.BF16, asm.I8, asm.U8, asm.I16, asm.U16, asm.I32, asm.U32, asm.I64, asm.U64} {
		for _, layout := range []asm.Layout{asm.LayoutND, asm.LayoutDN, asm.LayoutNZ} {
			shape := []int{48, 40}
			if layout == asm.LayoutNZ && dt.Size() != 2 {
				continue
			}
			size := TensorBytes(&asm.TensorInfo{DType: dt, Shape: []int64{48, 40}, Layout: layout})
			b := NewBuffer(asm.GM, "t", size, dt.Size(), true)
			for i := range b.Data[:size/2] {
				b.Data[i] = byte(i*131 + i>>3) // every bit pattern, poison in the upper half
			}
			whole, err := LoadArray(b, 0, dt, shape, layout)
			if err != nil {
				t.Fatalf("%v %v: %v", dt, layout, err)
			}
			for _, r := range [][2]int{{0, 48}, {5, 6}, {17, 40}} {
				got, err := LoadRows(b, 0, dt, shape, layout, r[0], r[1])
				if err != nil {
					t.Fatalf("%v %v rows %v: %v", dt, layout, r, err)
				}
				want := whole.Data[r[0]*40 : r[1]*40]
				for i, v := range got.Data {
					if math.Float64bits(v) != math.Float64bits(want[i]) {
						t.Fatalf("%v %v rows %v: element %d is %v, LoadArray %v", dt, layout, r, i, v, want[i])
					}
				}
			}
		}
	}
}
