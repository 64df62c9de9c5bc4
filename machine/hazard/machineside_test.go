package hazard

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
)

// nullObserver declines what the detector declines and does nothing with
// the rest: what the machine pays for being observed.
type nullObserver struct{}

func (nullObserver) Observe(*machine.Event)                           {}
func (nullObserver) ObservePipe(*machine.PipeEvent)                   {}
func (nullObserver) WantsKind(k machine.EventKind) bool               { return k != machine.EvStall }
func (nullObserver) CompositeIssuesOnly() bool                        { return true }
func (nullObserver) NoFlagTimes() bool                                { return true }
func (nullObserver) DefersAccesses() bool                             { return true }
func (nullObserver) ObserveIter(machine.Agent, int64, int64, []int64) {}

// copyObserver also copies each event into a batch, as the detector's push
// does, on the machine's goroutine: the hand-off's share. full, if set,
// sees each batch before it is emptied.
type copyObserver struct {
	b    *batch
	full func(*batch)
}

func (o *copyObserver) Observe(e *machine.Event) {
	if o.b.addItem(e) {
		return
	}
	if !o.b.fits(e) {
		o.flush()
	}
	o.b.add(e)
}

func (o *copyObserver) flush() {
	if o.full != nil {
		o.full(o.b)
	}
	o.b.reset()
}

func (o *copyObserver) ObserveIter(a machine.Agent, from, low int64, iter []int64) {
	if !o.b.addIter(a, from, low, iter) {
		o.flush()
		o.b.addIter(a, from, low, iter)
	}
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

// recordObserver is copyObserver taking a core pipe's events as records
// the machine writes into the batch (machine.PipeRecorder), as the
// detector does.
type recordObserver struct {
	*copyObserver
	sink machine.PipeSink
}

func (o *recordObserver) PipeRecords() *machine.PipeSink {
	o.sink.Buf = &o.b.PipeBuf
	return &o.sink
}

// stretchObserver is recordObserver taking stretches
// (machine.StretchObserver), as the detector does (lint round 17).
type stretchObserver struct{ *recordObserver }

func (stretchObserver) TakesStretches() bool { return true }
func (stretchObserver) Restart()             {}

// BenchmarkMachineSide runs the 8-rank allgather_gemm (pipelined,
// BASE_M=128, M=4096, K=1024: a sixteenth of issue 28's lint) timing-only
// with no observer, with nullObserver, with copyObserver, with
// recordObserver and with stretchObserver (the detector's way), to split a lint's machine goroutine
// into the run, being observed and the hand-off (docs/performance.md,
// "Round 6 of lint: the machine side", round 14); under cachegrind with
// GOMAXPROCS=1 it gives their instructions and misses.
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
		{"record", func() machine.Observer { return &recordObserver{copyObserver: &copyObserver{b: newBatch()}} }},
		{"stretched", func() machine.Observer {
			return stretchObserver{&recordObserver{copyObserver: &copyObserver{b: newBatch()}}}
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				runObserved(b, obj, c.obs)
			}
		})
	}
}

// runObserved runs obj timing-only once, observed by obs() (nil: none).
func runObserved(b *testing.B, obj *asm.Object, obs func() machine.Observer) {
	opt := machine.Options{TimingOnly: true}
	if obs != nil {
		opt.Observers = []machine.Observer{obs()}
	}
	m, err := machine.New(obj, opt)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := m.Run(); err != nil {
		b.Fatal(err)
	}
}

// TestPipeRecords runs every program with the batch filled by the machine
// (recordObserver) and by ObservePipe's addPipe (copyObserver), and
// requires the same events from both, accesses listed (round 14 of lint).
func TestPipeRecords(t *testing.T) {
	records, barriers := 0, 0
	eachProgram(t, func(name string, obj *asm.Object) {
		var got [2][]string
		for i := range got {
			var l machine.AccessLister
			c := &copyObserver{b: newBatch(), full: func(b *batch) {
				var scratch machine.Event
				var acc0, iter0, def0, note0 int
				for k := range b.Recs {
					it := &b.Recs[k]
					if it.Tag == tagNote {
						nt := &b.notes[note0]
						i0 := iter0
						iter0 += int(it.NIter)
						note0++
						got[i] = append(got[i], fmt.Sprint("note ", *nt, b.iter[i0:iter0]))
						continue
					}
					e := b.event(it, &scratch, &acc0, &iter0, &def0)
					if i == 0 && it.Tag == tagCompact {
						records++
					}
					if i == 0 && it.Tag == tagSync && it.Kind == machine.EvBarrier && it.NIter == 0 {
						barriers++ // (the machine's, or one with no vector)
					}
					iter := e.Iter
					if e.Kind == machine.EvBarrier {
						// The machine's record of a scalar's barrier
						// has none (machine.RecSync): the detector reads
						// none (TestParallelSameFindings and
						// TestBatchedInlineSameFindings hold findings
						// from Events with it equal).
						iter = nil
					}
					got[i] = append(got[i], fmt.Sprintf("%v %v %v %p %v %v %v %v %v %v %v %v %v %v", e.Kind, e.Agent, e.Flag, e.Op,
						e.Issue, e.Issued, iter, e.Step, e.Word, e.Value, e.Want, e.Target, e.Peers, accessText(l.Accesses(e))))
				}
			}}
			var o machine.Observer = c
			if i == 0 {
				o = &recordObserver{copyObserver: c}
			}
			m, err := machine.New(obj, machine.Options{TimingOnly: true, Observers: []machine.Observer{o}})
			if err != nil {
				t.Fatal(err)
			}
			m.Run() // a program's own faults are its expectations' business
			c.flush()
		}
		if diff := cmp.Diff(got[1], got[0]); diff != "" {
			t.Errorf("%s: events from PipeEvents (-) and from records (+) differ:\n%s", name, diff)
		}
	})
	if records < 10000 || barriers < 100 {
		t.Errorf("only %d compact items, %d barrier records: the programs no longer exercise the records", records, barriers)
	}
}

// accessText is accs with tiles and tensors by name: a machine resolves
// tile views of its own.
func accessText(accs []machine.Access) string {
	var sb strings.Builder
	for _, a := range accs {
		tile, tensor := "", ""
		if a.Tile != nil {
			tile = a.Tile.Name
		}
		if a.Tensor != nil {
			tensor = a.Tensor.Name
		}
		a.Tile, a.Tensor = nil, nil
		fmt.Fprintf(&sb, "%v %s %s; ", a, tile, tensor)
	}
	return sb.String()
}
