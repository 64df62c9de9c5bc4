package machine

import (
	"strings"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
)

// TestSequenceCharge runs the ops pipes/chain.go charges through the ISA
// table and the machine: each as pto-isa's a2a3 code issues it (3186c381),
// against what the one-intrinsic stand-in charged before. Cycles are the
// op's busy time and tail (opLatency).
func TestSequenceCharge(t *testing.T) {
	p := bodyProfile()
	flags := 2 * (p.Sync.SetFlag + p.Sync.WaitFlag)
	tests := []struct {
		name  string
		tiles string // declarations, one a line
		op    string
		want  int64
	}{
		// TDivS.hpp DivSOp: vector_dup 11+32+13, barrier 1, vdiv 11+32·4+19.
		{"float tdivs: dup, barrier, vdiv", "tile %d : vec f32 [32, 64]\ntile %a : vec f32 [32, 64]", "tdivs %d, %a, 2.0", 11 + 32 + 13 + 1 + 11 + 128 + 19},
		// In place DivSOp multiplies by the reciprocal: vmuls 11+32+15.
		{"float tdivs in place: vmuls", "tile %d : vec f32 [32, 64]", "tdivs %d, %d, 2.0", 11 + 32 + 15},
		// TSDiv's SDivOp: the same dup, barrier and vdiv, in place too (it
		// has no reciprocal form), and PTO-AS's operand order reads as it.
		{"float tsdivs: dup, barrier, vdiv", "tile %d : vec f32 [32, 64]\ntile %a : vec f32 [32, 64]", "tsdivs %d, 2.0, %a", 11 + 32 + 13 + 1 + 11 + 128 + 19},
		{"float tsdivs in place: still dup and vdiv", "tile %d : vec f32 [32, 64]", "tsdivs %d, 2.0, %d", 11 + 32 + 13 + 1 + 11 + 128 + 19},
		{"tdivs scalar first reads as tsdivs", "tile %d : vec f32 [32, 64]", "tdivs %d, 2.0, %d", 11 + 32 + 13 + 1 + 11 + 128 + 19},
		// TSDiv_naive: the same scalar loop.
		{"integer tsdivs: scalar loop", "tile %d : vec i32 [31, 128]\ntile %a : vec i32 [31, 128]", "tsdivs %d, 3, %a", 3*31*128 + flags},
		// TDivs_naive: load, divide, store per element, between flag pairs.
		{"integer tdivs: scalar loop", "tile %d : vec i32 [31, 128]\ntile %a : vec i32 [31, 128]", "tdivs %d, %a, 3", 3*31*128 + flags},
		// TCI.hpp without tmp: the value and its store per element.
		{"tci: scalar loop", "tile %d : vec i32 [1, 64]", "tci %d, 5", 2 * 64},
		// TAxpy.hpp f16 into f32: a repeat a row (16), vaxpy 6/2/0.
		{"mixed taxpy: row by row", "tile %d : vec f32 [16, 16]\ntile %a : vec f16 [16, 16]", "taxpy %d, %a, 2.0", 6 + 16*2},
		// One dtype, static and whole: one flat run of 4 repeats.
		{"taxpy one dtype: flat", "tile %d : vec f32 [16, 16]\ntile %a : vec f32 [16, 16]", "taxpy %d, %a, 2.0", 6 + 4*2},
	}
	for _, tt := range tests {
		src := "kernel k : aiv {\n" + indent(tt.tiles) + "    " + tt.op + "\n    pipe_barrier V\n}\n\nlaunch ranks=1 {\n    run k blocks=1\n}\n"
		obj, msg := tryAssemble(t, src)
		if obj == nil {
			t.Fatalf("%s: %s", tt.name, msg)
		}
		if got := opLatency(t, obj); got != tt.want {
			t.Errorf("%s: %d cycles, want %d", tt.name, got, tt.want)
		}
	}
}

// indent puts each declaration on its own line of the kernel body.
func indent(lines string) string {
	return "    " + strings.ReplaceAll(lines, "\n", "\n    ") + "\n"
}

// TestPowSDynamicCols: TPOWS's float passes go through TBinSInstr, so a
// tile whose valid columns come from registers takes its row-by-row
// lowering (asm.OpInfo.RowsIfDynCols): f32 7×448 is ColVLAlign's 7 calls
// instead of one flat call, and each further call pays both passes' fixed
// part again: the heads of vabs, vln, vmuls, vexp, vln, vmuls, vexp and the
// tails and barriers between them (TPow.hpp PowSOp, TBinSOp.hpp).
func TestPowSDynamicCols(t *testing.T) {
	p := bodyProfile()
	run := func(valid string) int64 {
		src := "kernel k : aiv {\n    let %vr = 7\n    let %vc = 448\n" +
			"    tile %d : vec f32 [7, 448]" + valid + "\n    tile %a : vec f32 [7, 448]" + valid +
			"\n    tile %t : vec f32 [7, 448]" + valid + "\n    tpows %d, %a, 2.0, %t\n    pipe_barrier V\n}\n\nlaunch ranks=1 {\n    run k blocks=1\n}\n"
		obj, msg := tryAssemble(t, src)
		if obj == nil {
			t.Fatal(msg)
		}
		return opLatency(t, obj)
	}
	v := func(k asm.CostKey) int64 { return p.Vec[k].Head }
	tb := func(k asm.CostKey) int64 { return p.Vec[k].Tail + p.Sync.Barrier }
	fixed := v(asm.CostVAbs) + v(asm.CostVLn) + v(asm.CostVMulS) + v(asm.CostVExp) + tb(asm.CostVAbs) + tb(asm.CostVLn) + tb(asm.CostVMulS) +
		v(asm.CostVLn) + v(asm.CostVMulS) + v(asm.CostVExp) + tb(asm.CostVLn) + tb(asm.CostVMulS)
	static, dyn := run(""), run(" valid [%vr, %vc]")
	if dyn-static != 6*fixed {
		t.Errorf("tpows f32 7×448: dynamic valid %d, static %d: %d more, want 6 calls × %d", dyn, static, dyn-static, fixed)
	}
}
