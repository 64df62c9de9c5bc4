package machine

import (
	"bytes"
	"fmt"
	"math"

	"github.com/ptoasm/ptoasm/asm"
)

// tprint is TPRINT (pto-isa include/pto/npu/a2a3/TPrint.hpp): a
// pipe_barrier ALL, so the tile holds every earlier write, then the scalar
// reads it element by element into cce::printf.
func (c *core) tprint(op *asm.COp) bool {
	m := c.m
	if !c.drainAll(op) {
		return false
	}
	if len(op.Args) < 1 || op.Args[0].Kind != asm.ArgTile {
		m.fail(c.faultK(FaultBadOperand, op, asm.PipeS, "tprint needs a tile"))
		return false
	}
	var e entry
	e.reset(enExec, op, c.t, c.entryIter())
	e.args = append(e.args, Operand{})
	e.access[0] = asm.AccRead
	if !c.resolveArg(op, &op.Args[0], &e.args[0], &e, 0, 1, 0, nil) {
		return false
	}
	if m.opt.Print != nil && m.dataOp(op) {
		var b bytes.Buffer
		if err := FprintTile(&b, &e.args[0]); err != nil {
			m.fail(c.execErr(op, asm.PipeS, err))
			return false
		}
		if _, err := m.opt.Print.Write(b.Bytes()); err != nil {
			m.fail(c.execErr(op, asm.PipeS, err))
			return false
		}
	}
	start := c.t
	// One scalar UB load and one printf call per element, at the least.
	t := e.args[0].Tile
	c.charge(m.prof.Scalar.Op * 2 * int64(t.VRows*t.VCols))
	if m.emitting {
		ev := m.event(EvExec, c, asm.PipeS, op)
		ev.Start, ev.End, ev.Cycle = start, c.t, start
		ev.Accesses = c.accesses(&e, ev.Accesses[:0])
		m.emit()
	}
	return true
}

// printNames are the element types TPrint.hpp prints, by its names.
var printNames = map[asm.DType]string{
	asm.F32: "float32", asm.F16: "float16", asm.I32: "int32", asm.U32: "uint32",
	asm.I16: "int16", asm.U16: "uint16", asm.I8: "int8", asm.U8: "uint8",
}

// FprintTile writes a vec tile's valid region as TPRINT's default format
// (PrintFormat::Width8_Precision4) prints it: a header, then one line per
// row, elements " "-separated, floats as C's %8.4f, integers as %8d / %8u.
// The region outside the valid shape, which pto-isa also prints, holds
// nothing defined, so it is left out.
func FprintTile(w *bytes.Buffer, o *Operand) error {
	v, err := tileView(o, "tprint")
	if err != nil {
		return err
	}
	t := o.Tile
	name, ok := printNames[t.DType]
	if !ok {
		return fmt.Errorf("tprint: %%%s is %v, which TPRINT cannot print (pto-isa TPrint.hpp: float32, float16 and 8/16/32-bit integers)", t.Name, t.DType)
	}
	fmt.Fprintf(w, "=== [TPRINT Tile] Data Type: %s, TileType: Vec ===\n", name)
	fmt.Fprintf(w, "  Shape: [%d, %d], Valid Shape: [%d, %d]\n", t.Rows, t.Cols, t.VRows, t.VCols)
	unsigned := t.DType == asm.U32 || t.DType == asm.U16 || t.DType == asm.U8
	for r := 0; r < v.rows; r++ {
		for c := 0; c < v.cols; c++ {
			if c > 0 {
				w.WriteByte(' ')
			}
			switch {
			case t.DType.IsFloat():
				fmt.Fprintf(w, "%8s", cFloat(v.f(r, c)))
			case unsigned:
				fmt.Fprintf(w, "%8d", uint64(v.i(r, c)))
			default:
				fmt.Fprintf(w, "%8d", v.i(r, c))
			}
		}
		w.WriteByte('\n')
	}
	return nil
}

// cFloat is C's %.4f: Go spells the non-finite values differently.
func cFloat(x float64) string {
	switch {
	case math.IsNaN(x):
		if math.Signbit(x) {
			return "-nan"
		}
		return "nan"
	case math.IsInf(x, 1):
		return "inf"
	case math.IsInf(x, -1):
		return "-inf"
	}
	return fmt.Sprintf("%.4f", x)
}
