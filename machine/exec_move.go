package machine

import (
	"fmt"
	"math"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/memory"
)

// Transfers and tile moves. All of them go through memory.Copy2D, which converts
// layouts (an ND GM window lands in an NZ mat tile at the same logical (r, c)),
// converts dtypes where the path does (the fixpipe's f32 → f16 on acc → GM/mat)
// and carries poison with the data.

// LoadTile copies the GM window at src (shaped like dst's valid region) into
// dst: TLOAD, the FFN mock's TALLGATHER, and the load step of TPOP/TGET/TPUT.
// The dtypes must match: the MTE2 DMA does not convert.
func LoadTile(dst, src *Operand) error {
	d, err := tileView(dst, "dst")
	if err != nil {
		return err
	}
	g, err := gmView(src, d.rows, d.cols)
	if err != nil {
		return err
	}
	if g.dt != d.dt {
		return fmt.Errorf("GM @%s is %v but tile %%%s is %v: the DMA does not convert", src.GM.Name, g.dt, dst.Tile.Name, d.dt)
	}
	return copyView(&d, &g, memory.RoundRint)
}

// StoreTile copies src's valid region to the GM window at dst: TSTORE and the
// store step of TPUSH/TPUT/TGET. An acc source goes through the fixpipe, which
// converts f32 to the GM dtype (f16, bf16 or f32, round to nearest even). With
// atomicAdd the GM elements become GM + src, computed in float64 and rounded once
// to the GM dtype (integers wrap).
func StoreTile(dst, src *Operand, atomicAdd bool) error {
	s, err := tileView(src, "src")
	if err != nil {
		return err
	}
	// A plain store that will not fail writes the whole window (Copy2D),
	// so the pages it covers need no background; an atomic add reads it.
	over := !atomicAdd && dst.GM != nil && convertible(s.dt, dst.GM.DType, src.Tile.Loc) == nil
	g, err := gmWindow(dst, s.rows, s.cols, over)
	if err != nil {
		return err
	}
	if err := convertible(s.dt, g.dt, src.Tile.Loc); err != nil {
		return fmt.Errorf("tile %%%s to @%s: %v", src.Tile.Name, dst.GM.Name, err)
	}
	if !atomicAdd {
		return copyView(&g, &s, memory.RoundRint)
	}
	intDom := !s.dt.IsFloat() && !g.dt.IsFloat()
	for r := 0; r < s.rows; r++ {
		for c := 0; c < s.cols; c++ {
			if intDom {
				g.setI(r, c, g.i(r, c)+s.i(r, c))
			} else {
				g.setF(r, c, g.f(r, c)+s.f(r, c), memory.RoundRint)
			}
		}
	}
	g.written()
	return nil
}

// convertible says whether a move from a tile at loc may change dtype: the
// fixpipe (acc source) converts f32 to another float type, i32 stays i32;
// L1 into the bias table widens f16 to f32 (pto-isa TMov.hpp TMovToBt's
// convControl, at 3186c381), which only a move into a bias tile asks for
// (the assembler's location rules, asm/isa_locdtypes.go).
func convertible(from, to asm.DType, loc asm.Loc) error {
	if from == to {
		return nil
	}
	if loc == asm.LocAcc && from == asm.F32 && to.IsFloat() {
		return nil
	}
	if loc == asm.LocMat && from == asm.F16 && to == asm.F32 {
		return nil
	}
	return fmt.Errorf("cannot convert %v to %v on this path", from, to)
}

// copyView copies s's region into d's (same extents) with Copy2D.
func copyView(d, s *view, mode memory.RoundMode) error {
	if d.rows != s.rows || d.cols != s.cols {
		return fmt.Errorf("shape mismatch: [%d, %d] into [%d, %d]", s.rows, s.cols, d.rows, d.cols)
	}
	return memory.Copy2D(d.buf, d.base, d.l, d.r0, d.c0, s.buf, s.base, s.l, s.r0, s.c0, d.rows, d.cols, mode)
}

// execMove is TMOV in every variant: the destination's valid region is copied
// from the same region of the source, whose valid region must cover it.
func execMove(args []Operand) error {
	vs, err := views(args, "dst", "src")
	if err != nil {
		return err
	}
	d, s := vs[0], vs[1]
	if s.dt != d.dt && args[0].Tile.Loc == asm.LocVec && args[1].Tile.Loc == asm.LocVec && s.dt.Size() == d.dt.Size() {
		// UB to UB copies bytes: pto-isa's TMovToVecImpl asserts only
		// equal element sizes (a2a3/TMov.hpp:83-88), so f32 → i32 is the
		// bits reinterpreted, not a conversion.
		s.dt, s.l.DType = d.dt, d.dt
	}
	if err := convertible(s.dt, d.dt, args[1].Tile.Loc); err != nil {
		return err
	}
	if args[0].Tile.Loc == asm.LocVec && args[1].Tile.Loc == asm.LocVec {
		vecRegion(args[0].Tile, &d, &s)
	} else if s, err = s.sub(0, 0, d.rows, d.cols); err != nil {
		return fmt.Errorf("src %%%s: %v", args[1].Tile.Name, err)
	}
	return copyView(&d, &s, memory.RoundRint)
}

// vecRegion narrows a vec→vec tmov's views to what TMovToVec copies
// (include/pto/npu/a2a3/TMov.hpp:114-124, 88-100 at 3186c381): the smaller
// of the two valid regions, validRow × validCol, where the source's region
// need not cover the destination's. The tiles have one static shape
// (TMov.hpp:139-141), so the copy takes TMovToVecImpl's first path: whole
// rows when the destination's valid width is the tile's (statically, or
// validCol == Cols), reading the source past its valid columns; otherwise
// validCol rounded up to 32-byte blocks per row, kept here within the
// destination's valid columns (the hazard model's write set; a rounding
// past them is not modelled).
func vecRegion(dt *asm.TileInfo, d, s *view) {
	rows, vc := min(d.rows, s.rows), min(d.cols, s.cols)
	cols := vc
	switch {
	case !dt.DynValid() && dt.VCols == dt.Cols, vc == dt.Cols:
		cols = dt.Cols
	default:
		per := int(32 / d.es)
		cols = min(d.cols, (vc+per-1)/per*per)
	}
	d.rows, d.cols = rows, cols
	s.rows, s.cols = rows, cols
}

// offsets reads textract/tinsert's (row, col) operands.
func offsets(args []Operand) (int, int, error) {
	if err := need(args, 4); err != nil {
		return 0, 0, err
	}
	r, c := args[2].Int, args[3].Int
	if r < 0 || c < 0 || r > math.MaxInt32 || c > math.MaxInt32 {
		return 0, 0, fmt.Errorf("offset (%d, %d) out of range", r, c)
	}
	return int(r), int(c), nil
}

// execExtract: dst's valid region ← src's window at (row, col), which must lie
// inside src's valid region.
func execExtract(args []Operand) error { return execWindow(args, false) }

// execInsert: dst's window at (row, col) ← src's valid region; the window must
// lie inside dst's valid region.
func execInsert(args []Operand) error { return execWindow(args, true) }

// execWindow copies between a tile and a window of another at (row, col): the
// window is on dst for tinsert and on src for textract, sized by the other tile.
func execWindow(args []Operand, onDst bool) error {
	row, col, err := offsets(args)
	if err != nil {
		return err
	}
	vs, err := views(args, "dst", "src")
	if err != nil {
		return err
	}
	d, s := vs[0], vs[1]
	if err := convertible(s.dt, d.dt, args[1].Tile.Loc); err != nil {
		return err
	}
	if onDst {
		if d, err = d.sub(row, col, s.rows, s.cols); err != nil {
			return fmt.Errorf("dst %%%s: %v", args[0].Tile.Name, err)
		}
	} else if s, err = s.sub(row, col, d.rows, d.cols); err != nil {
		return fmt.Errorf("src %%%s: %v", args[1].Tile.Name, err)
	}
	return copyView(&d, &s, memory.RoundRint)
}

// storeTileRelu is an acc tile's TSTORE with ReluPreMode::NormalRelu: each
// element not above 0 (NaN included) becomes 0 before the cast to the GM
// dtype (ConvertStoreValue, include/pto/cpu/common.hpp at 3186c381); with
// atomic, that value is added.
func storeTileRelu(dst, src *Operand, atomicAdd bool) error {
	s, err := tileView(src, "src")
	if err != nil {
		return err
	}
	g, err := gmView(dst, s.rows, s.cols)
	if err != nil {
		return err
	}
	if err := convertible(s.dt, g.dt, src.Tile.Loc); err != nil {
		return fmt.Errorf("tile %%%s to @%s: %v", src.Tile.Name, dst.GM.Name, err)
	}
	reluCopy(&g, &s, atomicAdd)
	g.written()
	return nil
}

// execMoveRelu is an acc→mat TMOV with ReluPreMode::NormalRelu (execMove
// with each element through the relu before its cast).
func execMoveRelu(args []Operand) error {
	vs, err := views(args, "dst", "src")
	if err != nil {
		return err
	}
	d, s := vs[0], vs[1]
	if err := convertible(s.dt, d.dt, args[1].Tile.Loc); err != nil {
		return err
	}
	if s, err = s.sub(0, 0, d.rows, d.cols); err != nil {
		return fmt.Errorf("src %%%s: %v", args[1].Tile.Name, err)
	}
	reluCopy(&d, &s, false)
	d.written()
	return nil
}

// reluCopy writes d = relu(s) (+ d when atomic) over s's extents: L0C holds
// f32 or i32, and an i32 source goes to an i32 destination.
func reluCopy(d, s *view, atomic bool) {
	for r := 0; r < s.rows; r++ {
		for c := 0; c < s.cols; c++ {
			if !s.dt.IsFloat() {
				x := max(s.i(r, c), 0)
				if atomic {
					x += d.i(r, c)
				}
				d.setI(r, c, x)
				continue
			}
			x := s.f(r, c)
			if !(x > 0) {
				x = 0
			}
			if atomic {
				// StoreElement: the converted value, in the
				// destination's type, is added
				x = d.f(r, c) + memory.Round(d.dt, x, memory.RoundRint)
			}
			d.setF(r, c, x, memory.RoundRint)
		}
	}
}
