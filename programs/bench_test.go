package programs_test

import (
	"errors"
	"runtime"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
	"github.com/ptoasm/ptoasm/machine/hazard"
	"github.com/ptoasm/ptoasm/programs"
)

// BenchmarkPrograms runs every shipped program at its default size in the
// four modes a user meets: timing-only (`run --timing-only --no-lint`), with
// data (`run --no-lint`), with data and the detector (`run`), and
// timing-only with the detector (`lint`, without the static pass). It
// reports simulated instructions per second and the peak live heap.
//
//	go test ./programs -run '^$' -bench Programs -benchtime 3x
func BenchmarkPrograms(b *testing.B) {
	modes := []struct {
		name         string
		timing, lint bool
	}{{"timing", true, false}, {"data", false, false}, {"data+hazards", false, true}, {"timing+hazards", true, true}}
	for _, name := range programs.List() {
		path, _ := programs.Find(name)
		obj, errs := asm.Assemble(embedFrontend, path, nil)
		if errs.HasErrors() {
			b.Fatal(errs)
		}
		for _, md := range modes {
			b.Run(name+"/"+md.name, func(b *testing.B) {
				var instr int64
				var peak uint64
				for b.Loop() {
					opt := machine.Options{TimingOnly: md.timing}
					if md.lint {
						opt.Observers = []machine.Observer{hazard.New(hazard.Options{})}
					}
					m, err := machine.New(obj, opt)
					if err != nil {
						b.Fatal(err)
					}
					r, err := m.Run()
					var dl *machine.DeadlockError
					var f *machine.Fault
					if err != nil && !errors.As(err, &dl) && !errors.As(err, &f) {
						b.Fatal(err)
					}
					if r != nil {
						instr += r.Instructions
					}
					var ms runtime.MemStats
					runtime.ReadMemStats(&ms)
					peak = max(peak, ms.HeapInuse)
				}
				b.ReportMetric(float64(instr)/b.Elapsed().Seconds(), "instr/s")
				b.ReportMetric(float64(instr)/float64(b.N), "instr/op")
				b.ReportMetric(float64(peak)/(1<<20), "heap-MiB")
			})
		}
	}
}

// BenchmarkDataRunMemory runs the data runs whose memory once grew far
// past their tensors (docs/performance.md, session 24) and reports the
// bytes they allocate per run and the peak live heap, sampled every
// millisecond: fa_causal's golden intermediates and its mask's float64
// copy took 1.2 GB, topk's merge sorts allocated 490 MB of pair lists.
//
//	go test ./programs -run '^$' -bench DataRunMemory -benchtime 1x
func BenchmarkDataRunMemory(b *testing.B) {
	for _, name := range []string{"hazards/fa_causal", "topk", "hazards/layernorm_pair", "hazards/grouped_gemm"} {
		path, _ := programs.Find(name)
		obj, errs := asm.Assemble(embedFrontend, path, nil)
		if errs.HasErrors() {
			b.Fatal(errs)
		}
		b.Run(name, func(b *testing.B) {
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			stop := make(chan struct{})
			peak := make(chan uint64)
			go func() {
				s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
				var p uint64
				t := time.NewTicker(time.Millisecond)
				defer t.Stop()
				for {
					metrics.Read(s)
					p = max(p, s[0].Value.Uint64())
					select {
					case <-stop:
						peak <- p
						return
					case <-t.C:
					}
				}
			}()
			for b.Loop() {
				m, err := machine.New(obj, machine.Options{})
				if err != nil {
					b.Fatal(err)
				}
				r, err := m.Run()
				if err != nil {
					b.Fatal(err)
				}
				if r.Failed() {
					b.Fatalf("%s: a check failed", name)
				}
			}
			close(stop)
			p := <-peak
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/(1<<20), "alloc-MiB/op")
			b.ReportMetric(float64(p)/(1<<20), "peak-heap-MiB")
		})
	}
}
