package hazard_test

import (
	"errors"
	"fmt"
	"runtime"
	"runtime/metrics"
	"strings"
	"testing"
	"time"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
	"github.com/ptoasm/ptoasm/machine/hazard"
	"github.com/ptoasm/ptoasm/programs"
)

// lint is what `ptoasm lint` does to one program at its default size:
// assemble, run timing-only with the detector attached, and merge in the
// static pass.
func lint(name string) ([]hazard.Finding, error) {
	path, ok := programs.Find(name)
	if !ok {
		return nil, errors.New("no such program")
	}
	obj, errs := asm.Assemble(embedFE, path, nil)
	if errs.HasErrors() {
		return nil, errs
	}
	det := hazard.New(hazard.Options{})
	m, err := machine.New(obj, machine.Options{Observers: []machine.Observer{det}, TimingOnly: true})
	if err != nil {
		return nil, err
	}
	if _, err := m.Run(); err != nil {
		var dl *machine.DeadlockError
		var f *machine.Fault
		if !errors.As(err, &dl) && !errors.As(err, &f) {
			return nil, err
		}
		det.NoteError(err)
	}
	return hazard.Merge(det.Findings(), hazard.CheckObject(obj)), nil
}

// BenchmarkLint times a whole lint of every shipped program; the budget is
// 100 ms per program (go test -bench Lint -run '^$' ./machine/hazard).
func BenchmarkLint(b *testing.B) {
	for _, name := range programs.List() {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if _, err := lint(name); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkStatic times the static flag-balance pass alone.
func BenchmarkStatic(b *testing.B) {
	for _, name := range programs.List() {
		path, _ := programs.Find(name)
		obj, errs := asm.Assemble(embedFE, path, nil)
		if errs.HasErrors() {
			b.Fatal(errs)
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				hazard.CheckObject(obj)
			}
		})
	}
}

// BenchmarkLintRanks lints the final ring allreduce (neighbour barrier beyond
// 16 ranks) at growing rank counts and reports the detector's cost against
// the same run without it: lint's CPU over timing-only CPU (the issue's
// budget is 3x at 384 ranks) and the peak heap in use (under 1 GiB).
//
//	go test ./machine/hazard -run '^$' -bench LintRanks -benchtime 1x
func BenchmarkLintRanks(b *testing.B) {
	for _, ranks := range []int{8, 64, 128, 384} {
		b.Run(fmt.Sprint(ranks), func(b *testing.B) {
			obj := assembleWith(b, "allreduce_ring/ring_final", fmt.Sprint("RANKS=", ranks))
			run := func(det *hazard.Detector) uint64 {
				opt := machine.Options{TimingOnly: true}
				if det != nil {
					opt.Observers = []machine.Observer{det}
				}
				runtime.GC()
				m, err := machine.New(obj, opt)
				if err != nil {
					b.Fatal(err)
				}
				peak := heapPeak(func() {
					if _, err := m.Run(); err != nil {
						b.Fatal(err)
					}
					if det != nil {
						if fs := det.Findings(); len(fs) != 0 {
							b.Fatalf("ring_final at %d ranks: %d findings, want none", ranks, len(fs))
						}
					}
				})
				return peak
			}
			var plain, linted time.Duration
			var peak uint64
			for b.Loop() {
				t0 := hazard.CPUTime()
				run(nil)
				t1 := hazard.CPUTime()
				p := run(hazard.New(hazard.Options{}))
				t2 := hazard.CPUTime()
				plain, linted, peak = plain+t1-t0, linted+t2-t1, max(peak, p)
			}
			reportLintCost(b, plain, linted, peak)
		})
	}
}

// BenchmarkLintAllgatherGEMM8 is issue 28's second lint budget: `ptoasm
// lint` of the 8-rank allgather_gemm (pipelined, BASE_M=128, 24 compute and
// 48 comm blocks, K=N=4096) at most 2.5x the CPU of its timing-only run.
// Each iteration runs the program timing-only, then as lint does (the
// detector attached, then the static pass), and reports both CPU times,
// their ratio and lint's peak heap. M=16384 is the shape; M=4096
// runs the same loops a quarter as often, for quicker comparisons.
//
//	go test ./machine/hazard -run '^$' -bench LintAllgatherGEMM8 -benchtime 1x
func BenchmarkLintAllgatherGEMM8(b *testing.B) {
	for _, m := range []int{4096, 16384} {
		b.Run(fmt.Sprintf("M=%d", m), func(b *testing.B) {
			obj := allgatherGEMM8(b, m)
			var plain, linted time.Duration
			var peak uint64
			for b.Loop() {
				runtime.GC()
				t0 := hazard.CPUTime()
				runTimingOnly(b, obj, nil)
				t1 := hazard.CPUTime()
				runtime.GC()
				t2 := hazard.CPUTime()
				p := heapPeak(func() {
					det := hazard.New(hazard.Options{})
					runTimingOnly(b, obj, det)
					hazard.Merge(det.Findings(), hazard.CheckObject(obj))
				})
				t3 := hazard.CPUTime()
				plain, linted, peak = plain+t1-t0, linted+t3-t2, max(peak, p)
			}
			reportLintCost(b, plain, linted, peak)
		})
	}
}

// runTimingOnly runs obj timing-only with observer o, if not nil.
func runTimingOnly(b *testing.B, obj *asm.Object, o machine.Observer) {
	opt := machine.Options{TimingOnly: true}
	if o != nil {
		opt.Observers = []machine.Observer{o}
	}
	m, err := machine.New(obj, opt)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := m.Run(); err != nil {
		b.Fatal(err)
	}
}

// allgatherGEMM8 assembles issue 28's allgather_gemm shape with M rows.
func allgatherGEMM8(b *testing.B, m int) *asm.Object {
	return assembleWith(b, "allgather_gemm", "RANKS=8", fmt.Sprint("M=", m), "K=4096", "N=4096",
		"BASE_M=128", "COMPUTE_BLOCKS=24", "COMM_BLOCKS=48", "MODE=pipelined")
}

// assembleWith assembles a shipped program with NAME=VALUE defines.
func assembleWith(b *testing.B, name string, defs ...string) *asm.Object {
	path, ok := programs.Find(name)
	if !ok {
		b.Fatalf("no program %s", name)
	}
	var ds []asm.Define
	for _, d := range defs {
		k, v, _ := strings.Cut(d, "=")
		ds = append(ds, asm.Define{Name: k, Value: v})
	}
	obj, errs := asm.Assemble(embedFE, path, ds)
	if errs.HasErrors() {
		b.Fatal(errs)
	}
	return obj
}

// reportLintCost reports the CPU of b.N timing-only runs and of as many
// lints, their ratio (the budgets) and lint's peak heap.
func reportLintCost(b *testing.B, plain, linted time.Duration, peak uint64) {
	b.ReportMetric(plain.Seconds()/float64(b.N), "timing-cpu-s")
	b.ReportMetric(linted.Seconds()/float64(b.N), "lint-cpu-s")
	b.ReportMetric(float64(linted)/float64(plain), "lint/timing")
	b.ReportMetric(float64(peak)/(1<<20), "lint-heap-MiB")
}

// heapPeak runs f and returns the most heap in live objects seen while it
// ran, sampled every 5 ms (runtime/metrics does not stop the world).
func heapPeak(f func()) uint64 {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
	done := make(chan struct{})
	res := make(chan uint64)
	go func() {
		peak := read()
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				res <- max(peak, read())
				return
			case <-t.C:
				peak = max(peak, read())
			}
		}
	}()
	f()
	close(done)
	return <-res
}

// BenchmarkLintRepeatedTmov lints a PTOAS kernel whose one pto.tmov is
// repeated 500 times without a pipe_barrier (session 26's fuzzing: 124 750
// same-pipe WAWs, 100 s and 852 MB through the CLI; the budget is seconds
// and 200 MB) and reports its CPU, findings and peak heap.
//
//	go test ./machine/hazard -run '^$' -bench RepeatedTmov -benchtime 1x
func BenchmarkLintRepeatedTmov(b *testing.B) {
	obj, errs := asm.Assemble(hazard.MLIRFE(map[string]string{"t.pto": hazard.TmovMLIR(500)}), "t.pto", nil)
	if errs.HasErrors() {
		b.Fatal(errs)
	}
	var n int
	var cpu time.Duration
	var peak uint64
	for b.Loop() {
		runtime.GC()
		t0 := hazard.CPUTime()
		peak = max(peak, heapPeak(func() {
			det := hazard.New(hazard.Options{})
			m, err := machine.New(obj, machine.Options{TimingOnly: true, Observers: []machine.Observer{det}})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := m.Run(); err != nil {
				b.Fatal(err)
			}
			n = len(det.Findings())
		}))
		cpu += hazard.CPUTime() - t0
	}
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s")
	b.ReportMetric(float64(n), "findings")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
}
