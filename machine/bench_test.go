package machine_test

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
	"github.com/ptoasm/ptoasm/machine/hazard"
)

// The engine benchmarks (docs/performance.md). Each reports simulated
// instructions per second of wall time and per CPU-second (every instruction
// a scalar unit issued: queue entries, scalar GM accesses and waits), the
// peak live heap and the bytes allocated per run.
//
//	go test ./machine -run '^$' -bench 'GEMM|Scaling' -benchtime 5x

type mode int

const (
	timingOnly mode = iota
	timingData
	withHazards
	// timingHazards is what `ptoasm lint` does: timing-only with the
	// detector attached (issue 9: at most 2× timingOnly).
	timingHazards
)

var modes = []struct {
	name string
	m    mode
}{{"timing", timingOnly}, {"data", timingData}, {"hazards", withHazards}, {"timing+hazards", timingHazards}}

func runBench(b *testing.B, obj *asm.Object, md mode) {
	b.Helper()
	var instr, ops int64
	var peak uint64
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuSeconds()
	for b.Loop() {
		opt := machine.Options{TimingOnly: md == timingOnly || md == timingHazards}
		var det *hazard.Detector
		if md == withHazards || md == timingHazards {
			det = hazard.New(hazard.Options{})
			opt.Observers = []machine.Observer{det}
		}
		m, err := machine.New(obj, opt)
		if err != nil {
			b.Fatal(err)
		}
		r, err := m.Run()
		if err != nil {
			b.Fatal(err)
		}
		for _, c := range r.Checks {
			if !c.OK {
				b.Fatalf("check %s: %s", c.Name, c.Msg)
			}
		}
		if det != nil {
			_ = det.Findings()
		}
		instr += r.Instructions
		for _, p := range r.Pipes {
			if p.Pipe != "S" {
				ops += p.Instructions
			}
		}
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		peak = max(peak, ms.HeapInuse)
	}
	b.StopTimer()
	cpu := cpuSeconds() - cpu0
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(instr)/b.Elapsed().Seconds(), "instr/s")
	// CPU time includes the GC's other threads; on a loaded machine it is
	// the steadier measure.
	if cpu > 0 {
		b.ReportMetric(float64(instr)/cpu, "instr/CPU-s")
		// Only the ops the pipes executed: the kernel's tile instructions,
		// without its scalar loop control and address arithmetic.
		b.ReportMetric(float64(ops)/cpu, "ops/CPU-s")
		// The figure issue 22 bounds for the 8-rank allgather_gemm (≤ 2 s
		// from the CLI, timing only), GC threads included.
		b.ReportMetric(cpu/float64(b.N), "CPU-s/op")
	}
	b.ReportMetric(float64(instr)/float64(b.N), "instr/op")
	b.ReportMetric(float64(peak)/(1<<20), "heap-MiB")
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/(1<<20), "alloc-MiB/op")
}

// gemmK is the K of each benchmark mode: long enough that the steady state
// dominates, short enough that the data path finishes in seconds.
var gemmK = map[mode]string{timingOnly: "65536", timingData: "1024", withHazards: "1024", timingHazards: "65536"}

// BenchmarkGEMM24Core is gemm_db spread over the 24 AICs of one rank.
func BenchmarkGEMM24Core(b *testing.B) {
	for _, md := range modes {
		b.Run(md.name, func(b *testing.B) {
			obj := machine.Gemm24(b, 24, asm.Define{Name: "K", Value: gemmK[md.m]})
			runBench(b, obj, md.m)
		})
	}
}

// BenchmarkGemmDB is programs/gemm_db as shipped (one AIC, K=1024).
func BenchmarkGemmDB(b *testing.B) {
	for _, md := range modes {
		b.Run(md.name, func(b *testing.B) {
			runBench(b, machine.AssembleFile(b, machine.GemmDBPath), md.m)
		})
	}
}

// BenchmarkScaling runs the 24-core GEMM at 1×, 4× and 16× the work (K):
// time per run should grow linearly and instr/s stay flat.
func BenchmarkScaling(b *testing.B) {
	for _, md := range modes {
		base := 4096
		if md.m == timingData || md.m == withHazards {
			base = 256
		}
		for _, f := range []int{1, 4, 16} {
			b.Run(fmt.Sprintf("%s/K=%dx%d", md.name, base, f), func(b *testing.B) {
				obj := machine.Gemm24(b, 24, asm.Define{Name: "K", Value: fmt.Sprint(base * f)})
				runBench(b, obj, md.m)
			})
		}
	}
}

// BenchmarkCores runs the same timing-only GEMM work (K·cores = 24·65536,
// ≈209 000 instructions) on 1 to 24 AICs of one rank. Throughput falls as
// more cores interleave cycle by cycle: each core's queues, pipes and plans
// have left L1 (and partly L2) by the time its next event comes
// (docs/performance.md, round 9).
func BenchmarkCores(b *testing.B) {
	for _, n := range []int{1, 4, 8, 16, 24} {
		b.Run(fmt.Sprintf("AIC=%d", n), func(b *testing.B) {
			obj := machine.Gemm24(b, n, asm.Define{Name: "K", Value: fmt.Sprint(65536 * 24 / n)})
			runBench(b, obj, timingOnly)
		})
	}
}

// BenchmarkTimingOnly is the timing-only throughput the performance issues
// track: the 24-core GEMM (K=65536) and the 8-rank allgather_gemm at the
// README's large shape (16384×4096×4096, pipelined), each alone and with the
// hazard detector attached (the cost of `ptoasm lint` over a timing run).
//
//	go test ./machine -run '^$' -bench TimingOnly -benchmem -count 5
func BenchmarkTimingOnly(b *testing.B) {
	for _, md := range []mode{timingOnly, timingHazards} {
		suffix := ""
		if md == timingHazards {
			suffix = "+hazards"
		}
		b.Run("GEMM24"+suffix, func(b *testing.B) {
			runBench(b, machine.Gemm24(b, 24, asm.Define{Name: "K", Value: "65536"}), md)
		})
		b.Run("AllgatherGEMM8"+suffix, func(b *testing.B) {
			obj := machine.AssembleFile(b, machine.AllgatherGEMMPath,
				asm.Define{Name: "RANKS", Value: "8"}, asm.Define{Name: "M", Value: "16384"},
				asm.Define{Name: "K", Value: "4096"}, asm.Define{Name: "N", Value: "4096"},
				asm.Define{Name: "BASE_M", Value: "128"}, asm.Define{Name: "COMPUTE_BLOCKS", Value: "24"},
				asm.Define{Name: "COMM_BLOCKS", Value: "48"}, asm.Define{Name: "MODE", Value: "pipelined"})
			runBench(b, obj, md)
		})
	}
}
