package hazard

import (
	"slices"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
)

// An `==` wait can pass on the value its word held when the run started:
// the signal's initial value, one the host wrote, or an earlier run's. A
// split-K epilogue at KS = 1 waits for the turnstile `== KS − 1`, the word's
// initial 0 before split 0's hand-off sets 1 (hazards/splitk_turn_epi_initial).
// It sees 0 only if it polls before that set lands, and nothing orders the
// set after the wait: wait-overwritten, as for a set of the run (eqwait.go),
// with the run's start value as a set ordered before every agent of the run
// (the host's, whose record every agent is ordered after: hb). Both sides
// of eqwait.go take it:
//
//   - a satisfied `==` wait on a word no write of the run had reached when
//     it polled read the start value (eqWaitOn keeps it as a wait on that
//     value, and the writes to come check it as they check any kept wait);
//   - a blocked `==` wait whose compare the start value passes could have
//     read it, unless a write of the run ordered before the wait overwrote
//     it on every timing (eqBlocked).
//
// Before this, the first was not checked ("not passed on a set's value")
// and the second was the deadlock alone, so the epilogue's verdict followed
// whether it started before the hand-off (a RAW alone) or after (a
// deadlock). Whether a write of the run reached a word, and the value
// before the first, are kept only for the signals a kernel of the run
// waits on with `==` (Event.Kernels at EvRunStart; eqRunWord), so a run
// without such a wait pays a length test per signal write. The value
// before the first write comes from the machine (a notify's Event.Want);
// a word whose first write is no notify has no known start value, and one
// that any write but a notify set reached has a value the kept sets do not
// tell, so the blocked side leaves both alone (a missed pair, never a
// false one). Other compares keep eqwait.go's rule: the words they poll
// are not tracked (a ring's every word would be), and a `>=` wait passing
// on a start value is stale-signal's, or a host-initialised count's.

// eqRunWord is what the run's writes did to a word of a signal some kernel
// of run generation gen waits on with `==`: the value before the first
// (start, when known: the first was a notify), and whether every write was
// a notify set.
type eqRunWord struct {
	gen   uint32
	start int64
	known bool
	sets  bool
}

// eqRunStart notes, at run start, the signals the run's kernels wait on
// with `==`: their words' writes are tracked from the run's first event.
func (d *Detector) eqRunStart(ks []*asm.KernelInfo) {
	d.eqRunTensors = d.eqRunTensors[:0]
	for _, k := range ks {
		d.eqScan(k)
		eqWaitTensors(k, func(t *asm.TensorInfo) {
			if !slices.Contains(d.eqRunTensors, t) {
				d.eqRunTensors = append(d.eqRunTensors, t)
			}
		})
	}
}

// eqWaitTensors calls f with each signal kernel k waits on with `==`.
func eqWaitTensors(k *asm.KernelInfo, f func(*asm.TensorInfo)) {
	for _, op := range k.Ops {
		if op.Info == nil || op.Info.Op != asm.OpTwait || machine.SignalCmp(op) != "eq" || len(op.Args) == 0 {
			continue
		}
		if t := op.Args[0].GM; t != nil {
			f(t)
		}
	}
}

// eqTracked says whether the words of acc's signal are tracked this run.
func (d *Detector) eqTracked(acc *machine.Access) bool {
	return len(d.eqRunTensors) > 0 && acc.Tensor != nil && slices.Contains(d.eqRunTensors, acc.Tensor)
}

// eqTouch records write r to acc, a notify (set or add) when notify is
// set, whose word held old before it.
func (d *Detector) eqTouch(r *rec, acc *machine.Access, notify bool, old int64) {
	if !d.eqTracked(acc) {
		return
	}
	if d.eqRun == nil {
		d.eqRun = make(map[eqKey]eqRunWord)
	}
	sm := d.shadowFor(acc)
	set := notify && !r.atomic
	eqWords(acc, func(lo, hi int64) {
		k := eqKey{sm, lo}
		w := d.eqRun[k]
		if w.gen != d.gen {
			w = eqRunWord{gen: d.gen, start: old, known: notify && acc.NumRows() <= 1, sets: true}
		}
		w.sets = w.sets && set
		d.eqRun[k] = w
	})
}

// eqUntouched says whether no write of the run has reached word lo of sm
// (of acc's signal), as far as it is tracked.
func (d *Detector) eqUntouched(acc *machine.Access, sm *shadowMem, lo int64) bool {
	return d.eqTracked(acc) && d.eqRun[eqKey{sm, lo}].gen != d.gen
}

// eqStartSet returns the run's start value of word lo of sm as a set
// blocked `==` wait (agent a, want) could have read: only notify sets of
// the run wrote the word, the first telling the value before it, the word
// kept all of them (none left at the bound), and none is ordered before
// the wait. ok is false otherwise.
func (d *Detector) eqStartSet(w *eqWord, acc *machine.Access, sm *shadowMem, lo int64, a int32, want int64) (s eqStore, ok bool) {
	if !d.eqTracked(acc) || len(w.goneSets) > 0 {
		return eqStore{}, false
	}
	rw := d.eqRun[eqKey{sm, lo}]
	if rw.gen != d.gen || !rw.known || !rw.sets || rw.start != want {
		return eqStore{}, false
	}
	for i := range w.sets {
		if d.hb(&w.sets[i].r, a) {
			return eqStore{}, false // overwritten before the wait's first poll
		}
	}
	return eqStore{r: d.eqStartRec(), val: rw.start}, true
}

// eqStartRec is the record of the run's start value as a set: the host's,
// ordered before every agent of the run.
func (d *Detector) eqStartRec() rec {
	return rec{agent: d.host, gen: d.gen}
}

// eqFromStart says whether set record by is the run's start value.
func (d *Detector) eqFromStart(by *rec) bool {
	return by.agent == d.host
}
