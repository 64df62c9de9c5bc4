package programs_test

import (
	"errors"
	"runtime"
	"testing"

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
