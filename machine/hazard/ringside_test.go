package hazard

import (
	"testing"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
)

// BenchmarkMachineSideRing is BenchmarkMachineSide for ring_final at
// 128 and 384 ranks (issue 28's lint at many ranks): the machine's goroutine
// with no observer and observed the detector's way, without the
// detector. Under callgrind with GOMAXPROCS=1 it splits the lint's
// machine side from the detector's.
//
//	go test ./machine/hazard -run '^$' -bench MachineSideRing -benchtime 1x
func BenchmarkMachineSideRing(b *testing.B) {
	for _, ranks := range []string{"128", "384"} {
		b.Run("RANKS="+ranks, func(b *testing.B) { machineSideRing(b, ranks) })
	}
}

func machineSideRing(b *testing.B, ranks string) {
	obj := assembleProgram(b, "allreduce_ring/ring_final", asm.Define{Name: "RANKS", Value: ranks})
	for _, c := range []struct {
		name string
		obs  func() machine.Observer
	}{
		{"none", nil},
		{"stretched", func() machine.Observer {
			return stretchObserver{&recordObserver{copyObserver: &copyObserver{b: newBatch()}}}
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			t0 := cpuTime()
			for b.Loop() {
				runObserved(b, obj, c.obs)
			}
			b.ReportMetric((cpuTime()-t0).Seconds()/float64(b.N), "CPU-s/op")
		})
	}
}
