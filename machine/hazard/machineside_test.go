package hazard

import (
	"testing"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
)

// nullObserver declines what the detector declines and does nothing with
// the rest: what the machine pays for being observed.
type nullObserver struct{}

func (nullObserver) Observe(*machine.Event)             {}
func (nullObserver) ObservePipe(*machine.PipeEvent)     {}
func (nullObserver) WantsKind(k machine.EventKind) bool { return k != machine.EvStall }
func (nullObserver) CompositeIssuesOnly() bool          { return true }
func (nullObserver) NoFlagTimes() bool                  { return true }
func (nullObserver) DefersAccesses() bool               { return true }

// copyObserver also copies each event into a batch, as the detector's push
// does, on the machine's goroutine: the hand-off's share.
type copyObserver struct{ b *batch }

func (o *copyObserver) Observe(e *machine.Event) {
	if travelsCompact(e) && o.b.addCompact(e) {
		return
	}
	if !o.b.fits(e) {
		o.b.reset()
	}
	o.b.add(e)
}

func (o *copyObserver) ObservePipe(pe *machine.PipeEvent) {
	if o.b.addPipe(pe) {
		return
	}
	var e machine.Event
	pe.Event(&e)
	o.Observe(&e)
}

func (o *copyObserver) WantsKind(k machine.EventKind) bool { return nullObserver{}.WantsKind(k) }
func (o *copyObserver) CompositeIssuesOnly() bool          { return true }
func (o *copyObserver) NoFlagTimes() bool                  { return true }
func (o *copyObserver) DefersAccesses() bool               { return true }

// BenchmarkMachineSide runs the 8-rank allgather_gemm (pipelined,
// BASE_M=128, M=4096, K=1024: a sixteenth of issue 28's lint) timing-only
// with no observer, with nullObserver and with copyObserver, to split a
// lint's machine goroutine into the run, being observed and the hand-off
// (docs/performance.md, "Round 6 of lint: the machine side"); under
// cachegrind with GOMAXPROCS=1 it gives their instructions and misses.
//
//	go test ./machine/hazard -run '^$' -bench MachineSide -benchtime 3x
func BenchmarkMachineSide(b *testing.B) {
	var defs []asm.Define
	for _, kv := range [][2]string{{"RANKS", "8"}, {"M", "4096"}, {"K", "1024"}, {"N", "4096"},
		{"BASE_M", "128"}, {"COMPUTE_BLOCKS", "24"}, {"COMM_BLOCKS", "48"}, {"MODE", "pipelined"}} {
		defs = append(defs, asm.Define{Name: kv[0], Value: kv[1]})
	}
	obj := assembleProgram(b, "allgather_gemm", defs...)
	for _, c := range []struct {
		name string
		obs  func() machine.Observer
	}{
		{"none", nil},
		{"null", func() machine.Observer { return nullObserver{} }},
		{"copy", func() machine.Observer { return &copyObserver{b: newBatch()} }},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				opt := machine.Options{TimingOnly: true}
				if c.obs != nil {
					opt.Observers = []machine.Observer{c.obs()}
				}
				m, err := machine.New(obj, opt)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := m.Run(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
