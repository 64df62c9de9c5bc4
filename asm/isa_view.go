package asm

import "math"

// Tile memory: views and the fifo's GlobalData slots.
//
// Tile views: the A2/A3 instructions that rebind a tile object to other bytes
// of its buffer without moving data (pto-isa docs/isa and
// include/pto/npu/a2a3 at 3186c381). On A2/A3 all three end in TASSIGN_IMPL,
// which stores the new address in the tile object (TAssign.hpp
// assignData): scalar work, no pipe, no data access. The machine keeps the
// binding per core and resolves every later instruction naming the tile at
// its issue (docs/language.md "Tile views").

// tileBind is a tile operand whose bytes the instruction does not touch:
// only its address (and declared type) matter.
func tileBind(name string) OperandSpec {
	return OperandSpec{Name: name, Kinds: []ArgKind{ArgTile}, Access: AccNone}
}

func defsView() {
	defsFifoSlot()
	// TAssign.hpp: obj.assignData(addr), Form 1 (runtime address).
	def("tassign", FamView, PipeS, CostScalar, anyCore,
		[]OperandSpec{tileBind("dst"), scalar("addr")},
		"bind dst (a tile or an element of an array) to byte addr of its buffer from here on, on this core; addr may read registers (TAssign.hpp)")
	// TSubView.hpp: dst.data() = src.data() + row*RowStride + col*ColStride
	// elements of src, RowStride = Cols and ColStride = 1 for a row-major
	// src (1 and Rows for a column-major one).
	def("tsubview", FamView, PipeS, CostScalar, anyCore,
		[]OperandSpec{tileBind("dst"), tileBind("src"), scalar("row"), scalar("col")},
		"bind dst to element (row, col) of src's current binding: src + row·RowStride + col·ColStride elements (TSubView.hpp)")
	// TReshape.hpp: same TileType, same byte size, boxed only to boxed;
	// then TASSIGN_IMPL(dst, src.data()).
	def("treshape", FamView, PipeS, CostScalar, anyCore,
		[]OperandSpec{tileBind("dst"), tileBind("src")},
		"bind dst to src's current address: another shape or dtype over the same bytes (same location and byte size; TReshape.hpp)")
}

// isViewBind says whether op rebinds its first operand.
func isViewBind(op Opcode) bool {
	return op == OpTassign || op == OpTsubview || op == OpTreshape
}

// RowColStride is pto-isa's Tile::RowStride and ColStride (pto_tile.hpp):
// the element distance between rows and between columns of t, which
// depends on the outer (b) layout only, boxed or not.
func RowColStride(t *TileInfo) (row, col int64) {
	if t.BLayout == "col" {
		return 1, int64(t.Rows)
	}
	return int64(t.Cols), 1
}

// CheckBinding checks a tile binding of t at byte addr of its buffer as
// TASSIGN's compile-time form does (docs/isa/TASSIGN.md, SA-0352..0354):
// non-negative, 32-byte aligned, and t's bytes inside the buffer. It returns
// "" when the binding is legal. The machine checks every binding with it
// at run time; the assembler checks constant ones.
func CheckBinding(t *TileInfo, addr int64) string {
	capacity := SpaceCapacity(t.Space)
	switch {
	case addr < 0 || addr%32 != 0:
		return "address " + hex(addr) + " is not a non-negative multiple of 32"
	case t.Bytes > capacity || addr > capacity-t.Bytes:
		end := hex(addr + t.Bytes)
		if addr > math.MaxInt64-t.Bytes { // the end wraps: say it as a sum
			end = hex(addr) + " + " + hex(t.Bytes)
		}
		return "[" + hex(addr) + ", " + end + ") runs past the end of " + t.Space.String() + " (" + hex(capacity) + " bytes)"
	}
	return ""
}

func hex(v int64) string {
	if v < 0 {
		return "-" + hex(-v)
	}
	const digits = "0123456789abcdef"
	if v == 0 {
		return "0x0"
	}
	var b [18]byte
	i := len(b)
	for v > 0 {
		i--
		b[i] = digits[v&15]
		v >>= 4
	}
	return "0x" + string(b[i:])
}

// checkView applies TRESHAPE's and TSUBVIEW's static rules and checks a
// constant tassign address.
func (a *assembler) checkView(op *COp, bad func(int, string, ...any) *Diagnostic) {
	tile := func(i int) *TileInfo {
		if i < len(op.Args) && op.Args[i].Kind == ArgTile {
			return op.Args[i].Tile
		}
		return nil
	}
	dst, src := tile(0), tile(1)
	name := op.Info.Name
	switch op.Info.Op {
	case OpTassign:
		if dst != nil && len(op.Args) > 1 && op.Args[1].Val.Const {
			if why := CheckBinding(dst, op.Args[1].Val.Val); why != "" {
				bad(1, "tassign %%%s: %s", dst.Name, why)
			}
		}
		return
	case OpTsubview:
		for i := 2; i < 4 && i < len(op.Args); i++ {
			if x := op.Args[i].Val; x.Const && (x.Val < 0 || x.Val > 65535) {
				bad(i, "tsubview: index %d outside 0..65535 (pto-isa's uint16_t rowIdx, colIdx)", x.Val)
			}
		}
	}
	if dst == nil || src == nil {
		return
	}
	if dst.Loc != src.Loc {
		bad(1, "%s: %%%s is a %s tile but %%%s is %s; the tile types must be the same", name, src.Name, src.Loc, dst.Name, dst.Loc)
		return
	}
	if op.Info.Op == OpTreshape {
		if dst.Bytes != src.Bytes {
			bad(1, "treshape: %%%s has %d bytes but %%%s has %d; the byte sizes must match", src.Name, src.Bytes, dst.Name, dst.Bytes)
		}
		if (dst.SLayout == "none") != (src.SLayout == "none") {
			bad(1, "treshape: cannot reshape between boxed and non-boxed layouts (%%%s slayout=%s, %%%s slayout=%s)", src.Name, src.SLayout, dst.Name, dst.SLayout)
		}
	}
}

// readsReg reports whether e names a register (`%x`): such a tile valid
// region is evaluated at run time.
func readsReg(e Expr) bool {
	switch x := e.(type) {
	case *Ref:
		return true
	case *Unary:
		return readsReg(x.X)
	case *Binary:
		return readsReg(x.X) || readsReg(x.Y)
	case *Paren:
		return readsReg(x.X)
	case *Call:
		for _, y := range x.Args {
			if readsReg(y) {
				return true
			}
		}
	case *KeyVal:
		return readsReg(x.Val)
	}
	return false
}

// The FIFO's GlobalData interface (pto-isa docs/isa/TALLOC.md, TFREE.md;
// include/pto/npu/a2a3/TAlloc.hpp, TFree.hpp, TPush.hpp's GlobalData
// TPUSH_IMPL, TPop.hpp's GlobalData TPOP_IMPL at 3186c381): the producer
// claims a slot (talloc: wait for free space once the ring has wrapped),
// writes it with ordinary stores and commits it (tpush.slot: record ready);
// the consumer waits for a slot (tpop.slot), reads it with ordinary loads
// and releases it (tfree: notify free space). Between claim and commit (or
// pop and free) `@F[i, j]` in a tload or tstore names element (i, j) of
// that slot.

// fifoOpnd is a fifo operand whose slot the instruction claims, commits or
// releases: the FFTS protocol is its effect, not a data access.
func fifoOpnd() OperandSpec {
	return OperandSpec{Name: "fifo", Kinds: []ArgKind{ArgGM}, Access: AccNone}
}

func defsFifoSlot() {
	def("talloc", FamSync, PipeS, CostSync, anyCore, []OperandSpec{fifoOpnd()},
		"claim the producer's next fifo slot: wait for free space once the ring has wrapped (FFTS id+1); `@F[i, j]` in a tstore then names the slot (TAlloc.hpp)")
	def("tpush.slot", FamSync, PipeS, CostSync, anyCore, []OperandSpec{fifoOpnd()},
		"commit the slot talloc claimed: FFTS id, mode 2, once the producer's stores are done (MTE3 on an AIV, FIX on an AIC; TPush.hpp GlobalData TPUSH)")
	def("tpop.slot", FamSync, PipeS, CostSync, anyCore, []OperandSpec{fifoOpnd()},
		"wait for the consumer's next fifo slot (FFTS id); `@F[i, j]` in a tload then names the slot, until tfree (TPop.hpp GlobalData TPOP)")
	def("tfree", FamSync, PipeS, CostSync, anyCore, []OperandSpec{fifoOpnd()},
		"release the slot tpop.slot gave: FFTS id+1, mode 2, once MTE2's loads of it are done (TFree.hpp)")
}

func isFifoSlotOp(op Opcode) bool {
	return op == OpTalloc || op == OpTfree || op == OpTpushSlot || op == OpTpopSlot
}

// tileMemoryNote follows the view table in docs/isa.md.
const tileMemoryNote = `
Sources (pto-isa at 3186c381): ` + "`tassign`" + ` is TASSIGN's runtime form (docs/isa/TASSIGN.md,
include/pto/npu/a2a3/TAssign.hpp: ` + "`obj.assignData(addr)`" + `); ` + "`tsubview`" + ` is TSubView.hpp
(` + "`src.data() + rowIdx·RowStride + colIdx·ColStride`" + `, strides from pto_tile.hpp); ` + "`treshape`" + `
is TReshape.hpp (its three static_asserts, then ` + "`TASSIGN_IMPL(dst, src.data())`" + `). On A2/A3 all
three only store an address in the tile object, so they run on the scalar unit (one
` + "`scalar.op`" + `, docs/profile.md) and touch no data; the machine keeps the binding per core and
every later instruction naming the tile uses it (docs/language.md "Tile views"). A constant
` + "`tassign`" + ` address is checked when the kernel is assembled and a register one when it issues,
as TASSIGN's compile-time form does (SA-0353 inside the buffer, SA-0354 32-byte aligned).
The fifo's GlobalData flow (` + "`talloc`" + `, ` + "`tpush.slot`" + `, ` + "`tpop.slot`" + `, ` + "`tfree`" + `, in the sync table) follows
docs/isa/TALLOC.md and TFREE.md with a2a3/TAlloc.hpp, TFree.hpp and the GlobalData overloads
of TPUSH_IMPL/TPOP_IMPL in TPush.hpp and TPop.hpp: the same FFTS ids and pipes as ` + "`tpush`" + `/` + "`tpop`" + `
(ready on FIX from the AIC or MTE3 from an AIV, free on MTE2), without the data move.
`
