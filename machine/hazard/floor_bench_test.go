package hazard_test

import (
	"testing"
	"time"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
	"github.com/ptoasm/ptoasm/machine/hazard"
)

// BenchmarkLintFloor measures the machine's side of issue 28's two lints
// alone: the run with an observer that asks for every event the detector
// asks for, the way it asks (records written into its buffer, accesses
// deferred, iteration vectors logged, stretches), and does nothing with
// them. Its CPU over the timing-only run's is the part of lint's budget no
// detector can spend; the rest (2.5x or 3x less this floor) is what the
// detector's own work may cost (docs/performance.md, known limits).
//
//	GOMAXPROCS=1 taskset -c 0 go test ./machine/hazard -run '^$' -bench LintFloor -benchtime 3x
func BenchmarkLintFloor(b *testing.B) {
	for _, c := range []struct {
		name string
		obj  func(b *testing.B) *asm.Object
	}{
		{"allgather_gemm", func(b *testing.B) *asm.Object { return allgatherGEMM8(b, 16384) }},
		{"ring_final-384", func(b *testing.B) *asm.Object {
			return assembleWith(b, "allreduce_ring/ring_final", "RANKS=384")
		}},
	} {
		b.Run(c.name, func(b *testing.B) { floorBench(b, c.obj(b)) })
	}
}

func floorBench(b *testing.B, obj *asm.Object) {
	var plain, floor time.Duration
	events := 0
	for b.Loop() {
		t0 := hazard.CPUTime()
		runTimingOnly(b, obj, nil)
		t1 := hazard.CPUTime()
		o := newFloorObs()
		runTimingOnly(b, obj, o)
		t2 := hazard.CPUTime()
		plain, floor, events = plain+t1-t0, floor+t2-t1, o.n
	}
	b.ReportMetric(plain.Seconds()/float64(b.N), "timing-cpu-s")
	b.ReportMetric(floor.Seconds()/float64(b.N), "floor-cpu-s")
	b.ReportMetric(float64(floor)/float64(plain), "floor/timing")
	b.ReportMetric(float64(events), "events")
}

// floorObs takes what the detector takes and keeps nothing but a count.
type floorObs struct {
	sink machine.PipeSink
	buf  machine.PipeBuf
	n    int
}

func newFloorObs() *floorObs {
	f := &floorObs{}
	f.buf.Recs = make([]machine.PipeRecord, 0, 2048)
	f.buf.Defs = make([]machine.Deferred, 0, 2048)
	f.buf.Acc = make([]machine.Access, 0, 4096)
	f.sink.Buf = &f.buf
	return f
}

func (f *floorObs) Observe(*machine.Event)                           { f.n++ }
func (f *floorObs) WantsKind(k machine.EventKind) bool               { return k != machine.EvStall }
func (f *floorObs) CompositeIssuesOnly() bool                        { return true }
func (f *floorObs) DefersAccesses() bool                             { return true }
func (f *floorObs) NoFlagTimes() bool                                { return true }
func (f *floorObs) TakesStretches() bool                             { return true }
func (f *floorObs) Restart()                                         {}
func (f *floorObs) Flush()                                           { f.n += len(f.buf.Recs) }
func (f *floorObs) PipeRecords() *machine.PipeSink                   { return &f.sink }
func (f *floorObs) ObserveIter(machine.Agent, int64, int64, []int64) {}

// ObservePipe is called with the event that did not fit: the buffer is
// full, and is emptied as the detector hands a full batch on.
func (f *floorObs) ObservePipe(*machine.PipeEvent) {
	f.n += len(f.buf.Recs) + 1
	f.buf.Recs, f.buf.Defs, f.buf.Acc = f.buf.Recs[:0], f.buf.Defs[:0], f.buf.Acc[:0]
}
