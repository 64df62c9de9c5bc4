package main

import (
	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
	"github.com/ptoasm/ptoasm/machine/report"
)

// Mode report: the benchmark view of a communication/compute overlap program,
// printed the way pto-isa's allgather_gemm host program prints it. A program
// opts in by naming its runs (see programs/allgather_gemm/README.md):
//
//	run "compute_only" ...   compute alone, every input already in place
//	run "seq_comm" ...       communication alone ...
//	run "seq_compute" ...    ... then compute alone: the sequential mode
//	run "pipelined" ...      both in one run, on two streams
//
// Any subset prints what it can; speed-up and overlap efficiency need both the
// sequential pair and the pipelined run. An optional constant FLOPS (the useful
// work of one rank in one mode) adds a per-rank TFLOPS column. Runs with other
// names (host preparation) are left out.

// modesOf is the speed-up block of res's mode runs for the report, or nil
// when it has none.
func modesOf(res *machine.Result, obj *asm.Object) *report.Modes {
	t, ok := report.FindModes(res.Runs)
	if !ok {
		return nil
	}
	if obj != nil {
		if f, ok := obj.Const("FLOPS"); ok && f > 0 {
			t.FLOPs = f
		}
	}
	return report.NewModes(t)
}
