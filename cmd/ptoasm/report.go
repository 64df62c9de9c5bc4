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

// modeTimes holds the time of each named mode run; ok says which were found.
type modeTimes struct {
	computeOnly, comm, compute, pipelined         float64
	hasComputeOnly, hasComm, hasCompute, hasPiped bool
}

// findModes picks the mode runs out of res.Runs by name. The first run of a
// name counts, so a program that repeats a phase reports its first instance.
func findModes(runs []machine.RunStat) (modeTimes, bool) {
	var mt modeTimes
	for _, r := range runs {
		switch {
		case r.Name == "compute_only" && !mt.hasComputeOnly:
			mt.computeOnly, mt.hasComputeOnly = r.TimeUS, true
		case r.Name == "seq_comm" && !mt.hasComm:
			mt.comm, mt.hasComm = r.TimeUS, true
		case r.Name == "seq_compute" && !mt.hasCompute:
			mt.compute, mt.hasCompute = r.TimeUS, true
		case r.Name == "pipelined" && !mt.hasPiped:
			mt.pipelined, mt.hasPiped = r.TimeUS, true
		}
	}
	seq := mt.hasComm && mt.hasCompute
	return mt, mt.hasComputeOnly || seq || mt.hasPiped
}

// modesOf is the speed-up block of res's mode runs for the report, or nil
// when it has none.
func modesOf(res *machine.Result, obj *asm.Object) *report.Modes {
	mt, ok := findModes(res.Runs)
	if !ok {
		return nil
	}
	var t report.ModeTimes
	if obj != nil {
		if f, ok := obj.Const("FLOPS"); ok && f > 0 {
			t.FLOPs = f
		}
	}
	if mt.hasComputeOnly {
		t.ComputeOnly = &mt.computeOnly
	}
	if mt.hasComm && mt.hasCompute {
		t.Comm, t.Compute = &mt.comm, &mt.compute
	}
	if mt.hasPiped {
		t.Pipelined = &mt.pipelined
	}
	return report.NewModes(t)
}
