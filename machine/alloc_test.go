package machine_test

import (
	"runtime"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
	"github.com/ptoasm/ptoasm/machine/hazard"
)

// nopObserver makes the machine build every event (Event.Iter included)
// without doing anything with them.
type nopObserver struct{}

func (nopObserver) Observe(*machine.Event) {}

// TestRunAllocs holds the engine to its rule of no allocation per simulated
// instruction: what a run allocates once setup is done grows with the
// program's distinct state (queues, schedules, shadow pages), not with the
// instructions it runs. allgather_gemm's compute loop nest is 7 deep, deeper
// than a queue entry keeps inline; an earlier change allocated the iteration
// vector on every issue there (596 MiB per 8-rank run), and no wall-time
// benchmark failed.
func TestRunAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("runs allgather_gemm at two sizes")
	}
	if raceEnabled {
		t.Skip("the race detector allocates for its own bookkeeping")
	}
	ag := func(m, k string) *asm.Object {
		return machine.AssembleFile(t, machine.AllgatherGEMMPath, asm.Define{Name: "RANKS", Value: "2"},
			asm.Define{Name: "M", Value: m}, asm.Define{Name: "K", Value: k}, asm.Define{Name: "N", Value: "256"},
			asm.Define{Name: "MODE", Value: "pipelined"})
	}
	agS, agL := ag("1024", "2048"), ag("1024", "8192")
	// The data path multiplies for real: a smaller shape.
	agdS, agdL := ag("512", "256"), ag("512", "2048")
	gS, gL := machine.Gemm24(t, 24, asm.Define{Name: "K", Value: "2048"}), machine.Gemm24(t, 24, asm.Define{Name: "K", Value: "8192"})
	timing := func() machine.Options { return machine.Options{TimingOnly: true} }
	events := func() machine.Options {
		return machine.Options{TimingOnly: true, Observers: []machine.Observer{nopObserver{}}}
	}
	data := func() machine.Options { return machine.Options{} }
	detector := func() machine.Options {
		return machine.Options{TimingOnly: true, Observers: []machine.Observer{hazard.New(hazard.Options{Serial: true})}}
	}
	for _, tc := range []struct {
		name         string
		small, large *asm.Object
		opt          func() machine.Options
		// max is the allowed allocations per extra instruction. Some state
		// grows with how far a run reaches, not with its length: the
		// detector's shadow with the memory touched (the larger
		// allgather_gemm's K is 4× longer), the data path's written spans and
		// the first use of each queue slot, and the sparse GM pages (64 KiB,
		// memory/sparse.go) a data run commits as it first touches them.
		// Those bounds are looser, but
		// still catch an allocation per issue (about 1) or per large matmul
		// (0.28 on the data run, when each band was a new goroutine).
		max float64
	}{
		{"allgather_gemm/timing", agS, agL, timing, 0.002},
		{"allgather_gemm/events", agS, agL, events, 0.002},
		{"allgather_gemm/data", agdS, agdL, data, 0.08},
		{"allgather_gemm/detector", agS, agL, detector, 0.25},
		{"gemm24/timing", gS, gL, timing, 0.002},
		{"gemm24/detector", gS, gL, detector, 0.002},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a0, i0 := runAllocs(t, tc.small, tc.opt())
			a1, i1 := runAllocs(t, tc.large, tc.opt())
			if i1 < i0+2000 {
				t.Fatalf("%d and %d instructions: too close to tell", i0, i1)
			}
			// The larger run repeats the same loops more often: what it
			// allocates beyond the smaller one is what instructions cost.
			per := float64(int64(a1)-int64(a0)) / float64(i1-i0)
			t.Logf("%d allocations over %d instructions, %d over %d: %.5f per extra instruction", a0, i0, a1, i1, per)
			if per > tc.max {
				t.Errorf("%.5f allocations per simulated instruction, want at most %g", per, tc.max)
			}
		})
	}
}

// runAllocs runs obj and returns the allocations of Run alone and the
// instructions it simulated.
func runAllocs(t *testing.T, obj *asm.Object, opt machine.Options) (uint64, int64) {
	t.Helper()
	m, err := machine.New(obj, opt)
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	r, err := m.Run()
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	return after.Mallocs - before.Mallocs, r.Instructions
}
