package machine_test

import (
	"testing"
	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
)

type noopObs struct{ n int }

func (c *noopObs) Observe(e *machine.Event) { c.n++ }
func (c *noopObs) WantsKind(k machine.EventKind) bool { return k != machine.EvStall }

func BenchmarkZZNoop(b *testing.B) {
	obj := machine.Gemm24(b, 24, asm.Define{Name: "K", Value: "65536"})
	for b.Loop() {
		m, _ := machine.New(obj, machine.Options{TimingOnly: true, Observers: []machine.Observer{&noopObs{}}})
		m.Run()
	}
}
