package hazard

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
)

// iterKind says whether e is one of the events whose iteration vector a core pipe's queue slot
// gave, and the scalar's log gives while observers keep it.
func iterKind(e *machine.Event) bool {
	switch e.Kind {
	case machine.EvExec, machine.EvFlagSet, machine.EvFlagWait, machine.EvBarrier, machine.EvCrossSet:
		return e.Issue > 0 && e.Agent.Core >= 0 && e.Agent.Pipe != asm.PipeS
	}
	return false
}

// iterEvents lists, for each event iterKind takes, its kind, agent, issue
// number and vector: from the event (vectorsOnEvents) or from the scalars'
// log as machine.IterLogger documents it (iterLogCheck).
type iterEvents struct {
	t    *testing.T
	name string
	got  []string
}

type vectorsOnEvents struct{ iterEvents }

func (o *vectorsOnEvents) Observe(e *machine.Event) {
	if iterKind(e) {
		o.got = append(o.got, fmt.Sprint(e.Kind, e.Agent, e.Issue, e.Iter))
	}
}

// iterLogCheck keeps every call in full (no pruning), and requires that no
// event comes with a vector, nor below the last low its core's scalar sent.
type iterLogCheck struct {
	iterEvents
	calls map[machine.Agent][]iterCall
	low   map[machine.Agent]int64
	n     int
}

type iterCall struct {
	from int64
	iter []int64
}

func (o *iterLogCheck) ObserveIter(a machine.Agent, from, low int64, iter []int64) {
	if a.Pipe != asm.PipeS || low > from {
		o.t.Fatalf("%s: ObserveIter(%v, %d, %d): not a scalar, or low above from", o.name, a, from, low)
	}
	if prev := o.calls[a]; len(prev) > 0 && from < prev[len(prev)-1].from {
		o.low[a] = 0 // the core starts afresh
	}
	if low > 0 { // 0: the machine did not look
		o.low[a] = low
	}
	o.calls[a] = append(o.calls[a], iterCall{from, slices.Clone(iter)})
	o.n++
}

func (o *iterLogCheck) Observe(e *machine.Event) {
	if !iterKind(e) {
		return
	}
	s := machine.Agent{Rank: e.Agent.Rank, Core: e.Agent.Core, Pipe: asm.PipeS}
	if len(e.Iter) > 0 {
		o.t.Fatalf("%s: %v at %v (issue %d) carries a vector while the log is kept", o.name, e.Kind, e.Agent, e.Issue)
	}
	if e.Issue < o.low[s] {
		o.t.Fatalf("%s: %v at %v has issue %d, below its scalar's low %d", o.name, e.Kind, e.Agent, e.Issue, o.low[s])
	}
	var it []int64
	found := false
	calls := o.calls[s]
	for i := len(calls) - 1; i >= 0; i-- {
		if calls[i].from <= e.Issue {
			it, found = calls[i].iter, true
			break
		}
	}
	if !found {
		o.t.Fatalf("%s: %v at %v, issue %d, is in no entry of its scalar's log", o.name, e.Kind, e.Agent, e.Issue)
	}
	o.got = append(o.got, fmt.Sprint(e.Kind, e.Agent, e.Issue, it))
}

// noIterLog is the detector as an observer that does not keep the
// scalars' logs: the machine sends each event its vector.
type noIterLog struct{ d *Detector }

func (o noIterLog) Observe(e *machine.Event)           { o.d.Observe(e) }
func (o noIterLog) ObservePipe(e *machine.PipeEvent)   { o.d.ObservePipe(e) }
func (o noIterLog) WantsKind(k machine.EventKind) bool { return o.d.WantsKind(k) }
func (o noIterLog) CompositeIssuesOnly() bool          { return o.d.CompositeIssuesOnly() }
func (o noIterLog) DefersAccesses() bool               { return o.d.DefersAccesses() }
func (o noIterLog) NoFlagTimes() bool                  { return o.d.NoFlagTimes() }
func (o noIterLog) Flush()                             { o.d.Flush() }

func findingsJSON(t *testing.T, d *Detector) string {
	t.Helper()
	b, err := json.Marshal(d.Findings())
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestIterLog runs every shipped program with an observer that keeps the
// scalars' iteration logs (machine.IterLogger) and one that takes the
// vector from each event, and requires the same vector for every event of
// a core pipe; then lints it with the detector keeping the logs and not,
// and requires the same findings, and no op missing from its core's log.
func TestIterLog(t *testing.T) {
	calls, logs := 0, 0
	eachProgram(t, func(name string, obj *asm.Object) {
		run := func(o machine.Observer) error {
			m, err := machine.New(obj, machine.Options{TimingOnly: true, Observers: []machine.Observer{o}})
			if err != nil {
				t.Fatal(err)
			}
			_, err = m.Run() // a program's own faults are its expectations' business
			return err
		}
		want := &vectorsOnEvents{iterEvents{t: t, name: name}}
		run(want)
		lc := &iterLogCheck{iterEvents: iterEvents{t: t, name: name}, calls: map[machine.Agent][]iterCall{}, low: map[machine.Agent]int64{}}
		run(lc)
		calls += lc.n
		if !slices.Equal(want.got, lc.got) {
			i := 0
			for i < min(len(want.got), len(lc.got)) && want.got[i] == lc.got[i] {
				i++
			}
			t.Fatalf("%s: %d events with vectors on them, %d from the log; first difference at %d", name, len(want.got), len(lc.got), i)
		}

		d := runLint(t, obj, false)
		if d.iterMisses != 0 {
			t.Errorf("%s: %d ops not found in their core's iteration log", name, d.iterMisses)
		}
		off := noIterLog{New(Options{})}
		if err := run(off); err != nil {
			off.d.NoteError(err)
		}
		if n := len(off.d.ilog); n != 0 {
			t.Errorf("%s: a detector that does not keep logs has %d", name, n)
		}
		logs += len(d.ilog)
		if got, want := findingsJSON(t, d), findingsJSON(t, off.d); got != want {
			t.Errorf("%s: findings differ with the iteration logs kept:\n%s\nwithout:\n%s", name, got, want)
		}
	})
	t.Logf("%d log entries; the detectors kept %d cores' logs", calls, logs)
	if calls < 1000 || logs < 100 {
		t.Errorf("only %d log entries, %d logs: the programs no longer exercise the log", calls, logs)
	}
}
