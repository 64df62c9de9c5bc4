package mlir

import (
	"fmt"
	"strings"

	"github.com/ptoasm/ptoasm/asm"
)

// ptoOpsTd is the op table every "no PTOAS form" refusal is checked against.
const ptoOpsTd = "include/PTO/IR/PTOOps.td at a56b18c3"

// noFormOps are the instructions PTOAS has no form for on A2/A3, with why.
// PTOAS kernels run on one device and its op table has no rank operand, no
// signal op and no collective; nothing there orders the cores of a launch
// (syncall) or the scalar's GM writes (dsb); it has no IMG2COL or FMATRIX
// op, no fused add-relu converts, no pair reduction and no slot-form fifo
// ops; its mgather/mscatter are A5-only.
var noFormOps = func() map[string]string {
	m := map[string]string{
		"syncall":  "a barrier across the launch's blocks; " + ptoOpsTd + " has none (pto.barrier and barrier_sync order one core's pipes)",
		"dsb":      "a data synchronisation barrier for the scalar's GM writes; " + ptoOpsTd + " has none (pto.barrier takes a pipe)",
		"mgather":  "PTOAS's pto.mgather is A5-only (MGatherOp::verify, lib/PTO/IR/PTO.cpp at a56b18c3)",
		"mscatter": "PTOAS's pto.mscatter is A5-only (MScatterOp::verify, lib/PTO/IR/PTO.cpp at a56b18c3)",
	}
	for _, n := range []string{"tnotify", "twait", "ttest"} {
		m[n] = "a signal operation; PTOAS kernels run on one device and " + ptoOpsTd + " has no signal op"
	}
	for _, n := range []string{"tput", "tget", "tbroadcast", "tgather.comm", "tscatter.comm", "treduce", "tallgather"} {
		m[n] = "communication between ranks; PTOAS kernels run on one device and " + ptoOpsTd + " has no rank operand or collective (only tput_async/tget_async on flat GM through an SDMA session)"
	}
	for _, n := range []string{"setfmatrix", "set_img2col_padding", "set_img2col_rpt", "timg2col"} {
		m[n] = ptoOpsTd + " has no IMG2COL or FMATRIX op"
	}
	for _, n := range []string{"taddreluconv", "tadddeqrelu", "tpairreducesum"} {
		m[n] = ptoOpsTd + " has no such op"
	}
	for _, n := range []string{"talloc", "tpush.slot", "tpop.slot", "tfree"} {
		// pto-isa's GlobalData TPipe flow: the kernel stores into and
		// loads from the slot itself
		m[n] = "the fifo slot flow (a slot claimed, stored into and committed, or popped, loaded from and freed); PTOAS's tpush and tpop move a tile through the pipe, and " + ptoOpsTd + " has no talloc and no tile-less tpush or tpop"
	}
	return m
}()

// noForm refuses, at its position, the first construct of the launched
// kernels (in source order) that PTOAS has no form for at all, as opposed to
// a form this printer does not print yet: such a program cannot be handed to
// ptoas however it is printed. It reports whether it refused.
func (e *emitter) noForm() bool {
	refuse := func(sp asm.Span, format string, args ...any) bool {
		e.errf(sp, "--to mlir: "+format, args...)
		return true
	}
	for _, k := range e.launched() {
		for _, op := range k.Ops {
			name := op.Info.Name
			if why, ok := noFormOps[name]; ok {
				return refuse(op.Instr.OpSpan, "%s has no PTOAS form: %s", name, why)
			}
			if op.Unit != asm.UnitNone {
				// PTOAS's tstore has stPhase, but its mads have no
				// AccPhase: the hand-off cannot be written on both sides.
				return refuse(op.Instr.OpSpan, "%s #unit has no PTOAS form: the L0C unit flag is an attribute of no PTOAS mad (%s: tmatmul, tmatmul.acc, tgemv have no AccPhase; only tstore has stPhase)", name, ptoOpsTd)
			}
			if why := nzTransfer(op); why != "" {
				return refuse(op.Instr.OpSpan, "%s has no PTOAS form: %s", name, why)
			}
			for _, a := range op.Args {
				if a.Kind != asm.ArgGM || a.GM == nil {
					continue
				}
				switch {
				case a.HasRank:
					return refuse(a.Span, "%s has no PTOAS form: it addresses another rank's GM (@%s[rank=...]); PTOAS kernels run on one device (%s has no rank operand)", name, a.GM.Name, ptoOpsTd)
				case a.GM.Class == asm.TensorWindow || a.GM.Class == asm.TensorSignal:
					return refuse(a.Span, "%s has no PTOAS form: @%s is a %s tensor, shared by the ranks; PTOAS kernels run on one device (%s has no rank operand)", name, a.GM.Name, a.GM.Class, ptoOpsTd)
				case a.GM.Class == asm.TensorFIFO && !pipeSlots(a.GM):
					return refuse(op.Instr.OpSpan, "%s has no PTOAS form: fifo @%s has slots=%d, %s", name, a.GM.Name, a.GM.Attrs["slots"], slotsWhy)
				}
			}
		}
	}
	for _, t := range e.obj.Tensors {
		switch {
		case t.Class == asm.TensorWindow || t.Class == asm.TensorSignal:
			return refuse(t.Decl.Span, "a %s tensor (@%s) has no PTOAS form: it is shared by the ranks, and PTOAS kernels run on one device (%s has no rank operand)", t.Class, t.Name, ptoOpsTd)
		case t.Class == asm.TensorFIFO && !pipeSlots(t):
			return refuse(t.Decl.Span, "fifo @%s has no PTOAS form: it has slots=%d, %s", t.Name, t.Attrs["slots"], slotsWhy)
		}
	}
	return false
}

// slotsWhy says why a FIFO of other than 4 or 8 slots has no PTOAS pipe: the
// verifier takes no other slot_num, and slot_num is also the pipe's flow
// control (pto-isa's TPUSH first waits for a free slot at the SlotNum-th push,
// shouldWaitFree, and puts push k in slot k % SlotNum; local_slot_num only
// places the consumer's local copies, TPush.hpp), so a pipe of 4 or 8 would
// let the producer run further ahead into other GM slots.
const slotsWhy = "and PTOAS's pipes have 4 or 8 (verifyPipeShape, lib/PTO/IR/PTO.cpp at a56b18c3); slot_num is also the pipe's flow control (pto-isa's TPUSH waits for a free slot only from the slot_num-th push on and writes push k to slot k % slot_num: shouldWaitFree, include/pto/npu/a2a3/TPush.hpp at 3186c381), so a legal pipe would let the producer run further ahead into other slots"

func pipeSlots(t *asm.TensorInfo) bool {
	n := t.Attrs["slots"]
	return n == 4 || n == 8
}

// launched are the kernels the launch runs, in declaration order (all of
// them when there is no launch: launchKernels reports that).
func (e *emitter) launched() []*asm.KernelInfo {
	l := e.obj.Launch
	if l == nil {
		return nil
	}
	run := map[string]bool{}
	var walk func([]asm.LaunchStmt)
	walk = func(ss []asm.LaunchStmt) {
		for _, s := range ss {
			switch s := s.(type) {
			case *asm.Run:
				for _, st := range s.Streams {
					for _, n := range st.Kernels {
						run[n] = true
					}
				}
			case *asm.LaunchIf:
				walk(s.Then)
				walk(s.Else)
			}
		}
	}
	walk(l.Body)
	var ks []*asm.KernelInfo
	for _, k := range e.obj.Kernels {
		if run[k.Name] || len(run) == 0 {
			ks = append(ks, k)
		}
	}
	return ks
}

// nzTransfer says why a tload or tstore between an nz GM tensor and a vec or
// mat tile that is not itself NZ (col_major blocks of row_major boxes) has no
// PTOAS form: PTOAS lowers them to pto-isa's TLOAD/TSTORE, which take NZ GM
// only into or out of an NZ tile ("TLOAD(VecTile, GlobalTensor) only support
// ND2ND/DN2DN/NZ2NZ", and the Mat rule, include/pto/common/arch/memory/
// tload_common.hpp; tstore_common.hpp also lets a one-row or one-column tile
// through; pto-isa at 3186c381). "" when the transfer is not such a one.
func nzTransfer(op *asm.COp) string {
	name := op.Info.Name
	if (name != "tload" && name != "tstore") || len(op.Args) < 2 {
		return ""
	}
	g, t := op.Args[1], op.Args[0]
	if name == "tstore" {
		g, t = t, g
	}
	if g.Kind != asm.ArgGM || g.GM == nil || g.GM.Layout != asm.LayoutNZ || t.Kind != asm.ArgTile || t.Tile == nil {
		return ""
	}
	tt := t.Tile
	if tt.Loc != asm.LocVec && tt.Loc != asm.LocMat || tt.BLayout == "col" && tt.SLayout == "row" ||
		name == "tstore" && tt.Loc == asm.LocVec && (tt.Rows == 1 || tt.Cols == 1) {
		return ""
	}
	return fmt.Sprintf("@%s is nz and %%%s is a %s tile of blayout=%s_major, slayout=%s; PTOAS (a56b18c3) lowers it to pto-isa's %s, which moves NZ GM only to or from an NZ tile (blayout=col_major, slayout=row_major: include/pto/common/arch/memory/%s_common.hpp at 3186c381)",
		g.GM.Name, tt.Name, tt.Loc, tt.BLayout, slayoutNames[tt.SLayout], strings.ToUpper(name), name)
}
