package pipes

import (
	"testing"

	"github.com/ptoasm/ptoasm/asm"
)

// TestBinSCalls follows TBinSOp.hpp's TBinSInstr (3186c381) through each of
// its lowerings; the shapes are pto-isa's st cases (tests/costmodel/st,
// Tile<..., -1, -1>: row by row) and their static twins (flat).
func TestBinSCalls(t *testing.T) {
	tests := []struct {
		name string
		dt   asm.DType
		s    BinSShape
		want int64
	}{
		{"flat, whole repeats (BinS1LNormMode)", asm.F32, BinSShape{32, 64, 32, 64, true}, 1},
		{"flat, a part repeat at the end", asm.F16, BinSShape{63, 64, 63, 64, true}, 2},
		{"flat, rows not whole repeats (BinS1LCountMode)", asm.F32, BinSShape{16, 304, 16, 304, true}, 1},
		{"flat, over 255 repeats (BinS1LCountMode)", asm.F32, BinSShape{512, 64, 512, 64, true}, 1},
		{"one column repeat (RowRpt)", asm.F32, BinSShape{32, 64, 32, 64, false}, 1},
		{"half a repeat a row (RowRpt tail)", asm.F16, BinSShape{63, 64, 63, 64, false}, 1},
		{"two repeats a row (RowRpt)", asm.I32, BinSShape{31, 128, 31, 128, false}, 2},
		{"a repeat and a half (RowRpt)", asm.I16, BinSShape{15, 192, 15, 192, false}, 2},
		{"256 quarter-repeat rows (RowRpt Tail, 255 rows a call)", asm.F32, BinSShape{256, 16, 256, 16, false}, 2},
		{"fewer rows than repeats (ColVLAlign)", asm.F32, BinSShape{7, 448, 7, 448, false}, 7},
		{"fewer rows, part repeat (BinS2LCountMode)", asm.F32, BinSShape{6, 440, 6, 440, false}, 6},
		{"as many rows as repeats (RowRpt)", asm.F32, BinSShape{7, 440, 7, 440, false}, 7},
		{"tiny tile (BinS2LCountMode)", asm.F32, BinSShape{1, 128, 1, 128, false}, 1},
		{"over 255 rows (RowRpt Head and Tail)", asm.F32, BinSShape{300, 96, 300, 96, false}, 300 + 2},
		{"empty", asm.F32, BinSShape{4, 64, 0, 64, false}, 0},
	}
	for _, tt := range tests {
		if got := BinSCalls(tt.dt, tt.s); got != tt.want {
			t.Errorf("%s: %d calls, want %d", tt.name, got, tt.want)
		}
	}
}

// TestBinaryRowCalls follows TBinOp.hpp's strided BinaryInstr
// (Bin2LNormModeRowRpt), which TPow.hpp's TPowF calls.
func TestBinaryRowCalls(t *testing.T) {
	tests := []struct {
		dt                asm.DType
		vrows, vcols, col int
		want              int64
	}{
		{asm.F32, 64, 64, 64, 64},     // one call a row
		{asm.F32, 16, 16, 16, 1},      // the part repeat: one call for the rows
		{asm.F32, 16, 96, 96, 16 + 1}, // a call a row, then the part repeat
		{asm.F16, 300, 64, 64, 2},     // the part repeat, 255 rows a call
		{asm.F32, 2, 16384, 16384, 4}, // 256 repeats a row: 255 and 1
	}
	for _, tt := range tests {
		if got := BinaryRowCalls(tt.dt, tt.vrows, tt.vcols, tt.col); got != tt.want {
			t.Errorf("%s %d×%d: %d calls, want %d", tt.dt, tt.vrows, tt.vcols, got, tt.want)
		}
	}
}

// TestSequenceCosts holds the charges of pipes/chain.go to the sequences
// pto-isa issues, with the a2a3 profile's values written out.
func TestSequenceCosts(t *testing.T) {
	p := DefaultProfile()
	v := func(k VecOp) VecParams { return p.Vec[k] }
	dup, div, muls := v(asm.CostVDup), v(asm.CostVDiv), v(asm.CostVMulS)
	bar := p.Sync.Barrier
	flags := 2 * (p.Sync.SetFlag + p.Sync.WaitFlag)

	// Float TDIVS f32 32×64, one call: vector_dup, barrier, vdiv.
	s := BinSShape{32, 64, 32, 64, true}
	busy, tail := p.DivSCycles(asm.F32, s, false, true)
	if want := dup.Head + 32*dup.Slope + dup.Tail + bar + div.Head + 32*div.Slope; busy != want || tail != div.Tail {
		t.Errorf("tdivs f32 32×64: %d+%d, want %d+%d", busy, tail, want, div.Tail)
	}
	// In place: one vmuls.
	busy, tail = p.DivSCycles(asm.F32, s, true, true)
	if want := muls.Head + 32*muls.Slope; busy != want || tail != muls.Tail {
		t.Errorf("tdivs in place: %d+%d, want %d+%d", busy, tail, want, muls.Tail)
	}
	// Row by row over 7 calls (ColVLAlign): every call pays the fixed part.
	s7 := BinSShape{7, 448, 7, 448, false}
	busy, _ = p.DivSCycles(asm.F32, s7, false, true)
	if want := 7*(dup.Head+dup.Tail+bar+div.Head) + 49*(dup.Slope+div.Slope); busy != want {
		t.Errorf("tdivs f32 7×448 dynamic: %d, want %d", busy, want)
	}
	// Scalar loops.
	if got, want := p.ScalarLoopCycles(31*128, 3, true), 31*128*3*p.Scalar.Op+flags; got != want {
		t.Errorf("integer tdivs 31×128: %d, want %d", got, want)
	}
	if got := p.ScalarLoopCycles(0, 3, true); got != 0 {
		t.Errorf("empty loop: %d", got)
	}
	// Integer TPOWS: the base and the store per element, between flags.
	if got, want := p.PowCycles(asm.I32, BinSShape{4, 8, 4, 8, true}, false), 32*2*p.Scalar.Op+flags; got != want {
		t.Errorf("integer tpows 4×8: %d, want %d", got, want)
	}
}

// TestPowTrend: TPOW's passes go a call per row (BinaryInstr), TPOWS's one
// flat call for a whole tile (TBinSInstr), so TPOW grows by the chain's
// fixed part per row and TPOWS by repeats; both by the scalar fix-up per
// element (pto-isa TPow.hpp). Over rows 1..128 at 64 f32 columns.
func TestPowTrend(t *testing.T) {
	p := DefaultProfile()
	var prevPow, prevPows int64
	for _, rows := range []int{1, 2, 8, 32, 128} {
		s := BinSShape{rows, 64, rows, 64, true}
		pow, pows := p.PowCycles(asm.F32, s, true), p.PowCycles(asm.F32, s, false)
		fix := p.ScalarLoopCycles(int64(rows*64), 3, true)
		// TPOW's vector part is linear in the rows: one call a row.
		vec := pow - fix
		one := p.PowCycles(asm.F32, BinSShape{1, 64, 1, 64, true}, true) - p.ScalarLoopCycles(64, 3, true)
		if tail := p.Vec[asm.CostVExp].Tail; vec-tail != int64(rows)*(one-tail) {
			t.Errorf("tpow %d×64: vector part %d, want %d rows × %d", rows, vec, rows, one)
		}
		if pow <= prevPow || pows <= prevPows {
			t.Errorf("%d×64: tpow %d, tpows %d do not grow (%d, %d)", rows, pow, pows, prevPow, prevPows)
		}
		if rows > 1 && pows >= pow {
			t.Errorf("%d×64: tpows %d not below tpow %d (one call against one a row)", rows, pows, pow)
		}
		prevPow, prevPows = pow, pows
	}
}
