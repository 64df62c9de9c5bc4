package hazard

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
)

// tensT is a plain row-major f32 [32, 64] tensor: 256-byte rows.
var tensT = &asm.TensorInfo{Name: "T", Index: 5, Class: asm.TensorGM, DType: asm.F32, Shape: []int64{32, 64},
	Layout: asm.LayoutND, Bytes: 32 * 256}

const baseT = 0x1000

func strided(rank int32, row, col, rows, cols int64, write bool) machine.Access {
	lo := baseT + row*256 + col*4
	return machine.Access{Space: asm.GM, Rank: rank, Core: -1, Lo: lo, Hi: lo + cols*4, Rows: rows, Pitch: 256,
		Write: write, Tensor: tensT}
}

func TestGMShadowRects(t *testing.T) {
	s := newGMShadow(tensT, baseT)
	if s == nil || s.pitch != 256 || s.rows != 32 {
		t.Fatalf("newGMShadow = %+v", s)
	}
	for _, tc := range []struct {
		name string
		acc  machine.Access
		want []rect
	}{
		{"strided window", strided(0, 2, 8, 16, 16, false), []rect{{2, 18, 32, 96}}},
		{"one element", gmAcc(tensT, 0, baseT+5*256+40, baseT+5*256+44, false), []rect{{5, 6, 40, 44}}},
		{"whole rows", gmAcc(tensT, 0, baseT+256, baseT+3*256, false), []rect{{1, 3, 0, 256}}},
		{"partial first and last row", gmAcc(tensT, 0, baseT+256+16, baseT+4*256+8, false),
			[]rect{{1, 2, 16, 256}, {2, 4, 0, 256}, {4, 5, 0, 8}}},
		{"two partial rows", gmAcc(tensT, 0, baseT+256+16, baseT+2*256+8, false),
			[]rect{{1, 2, 16, 256}, {2, 3, 0, 8}}},
		{"clipped past the end", gmAcc(tensT, 0, baseT+31*256, baseT+33*256, false), []rect{{31, 32, 0, 256}}},
		{"other pitch: row by row", machine.Access{Space: asm.GM, Lo: baseT, Hi: baseT + 8, Rows: 2, Pitch: 512, Tensor: tensT},
			[]rect{{0, 1, 0, 8}, {2, 3, 0, 8}}},
	} {
		got := s.rects(&tc.acc, nil)
		if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(rect{})); diff != "" {
			t.Errorf("%s: rects (-want +got):\n%s", tc.name, diff)
		}
	}
	if newGMShadow(sigS, 0) != nil || newGMShadow(gmA, 0) != nil {
		t.Error("signals and shapeless tensors must stay in byte ranges")
	}
}

// TestGMShadowDN: a column-major tensor's shadow rows are its columns, so
// the machine's DN window (a run per column, a column apart) is one
// rectangle; fractal tensors stay in byte ranges.
func TestGMShadowDN(t *testing.T) {
	// f32 [64, 32] dn: 32 columns of 64 elements, 256 bytes each.
	dn := &asm.TensorInfo{Name: "D", Index: 6, Class: asm.TensorGM, DType: asm.F32, Shape: []int64{64, 32},
		Layout: asm.LayoutDN, Bytes: 64 * 32 * 4}
	s := newGMShadow(dn, baseT)
	if s == nil || s.pitch != 256 || s.rows != 32 {
		t.Fatalf("newGMShadow(dn) = %+v", s)
	}
	// rows [32, 64) of columns [8, 24): 16 runs of 128 bytes.
	acc := machine.Access{Space: asm.GM, Lo: baseT + 8*256 + 32*4, Hi: baseT + 8*256 + 64*4, Rows: 16, Pitch: 256, Tensor: dn}
	if got, want := s.rects(&acc, nil), []rect{{8, 24, 128, 256}}; !cmp.Equal(want, got, cmp.AllowUnexported(rect{})) {
		t.Errorf("DN window rects = %v, want %v", got, want)
	}
	nz := *dn
	nz.Layout = asm.LayoutNZ
	if newGMShadow(&nz, 0) != nil {
		t.Error("NZ tensors must stay in byte ranges")
	}
}

// TestStridedWindows: two cores touch interleaved column halves of the same
// rows with no synchronisation. Their byte ranges interleave (a byte-range
// bounding box would overlap) but no byte is shared, so there is no race; a
// scalar store into the written half, and a read of whole rows, do race.
func TestStridedWindows(t *testing.T) {
	p := &prog{}
	st := p.op("tstore", 10, MTE3)
	ld := p.op("tload", 20, MTE2)
	sst := p.op("st", 21, S)
	rows := p.op("tload", 22, MTE2)
	s := newSim(Options{})
	s.hostInit(tensT, 0, baseT)
	s.issue(0, 0, st, MTE3)
	s.exec(ag(0, 0, MTE3), st, nil, strided(0, 0, 0, 16, 32, true))
	s.issue(0, 1, ld, MTE2)
	s.exec(ag(0, 1, MTE2), ld, nil, strided(0, 0, 32, 16, 32, false))
	if fs := s.d.Findings(); len(fs) != 0 {
		t.Fatalf("disjoint column halves: %v", kinds(fs))
	}
	s.exec(ag(0, 1, S), sst, nil, gmAcc(tensT, 0, baseT+5*256+40, baseT+5*256+44, true))
	s.issue(0, 1, rows, MTE2)
	s.exec(ag(0, 1, MTE2), rows, nil, gmAcc(tensT, 0, baseT+20*256, baseT+22*256, false))
	fs := s.d.Findings()
	if got, want := kinds(fs), []string{KindWAW}; !cmp.Equal(got, want) {
		t.Fatalf("findings %v, want %v", got, want)
	}
	if got, want := fs[0].Range, [2]int64{baseT + 5*256 + 40, baseT + 5*256 + 44}; got != want {
		t.Errorf("range %#x, want %#x (the element both wrote)", got, want)
	}
	// Rows 20-21 were never written by a core: reading them races nothing.
}
