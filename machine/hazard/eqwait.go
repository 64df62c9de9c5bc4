package hazard

import (
	"fmt"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
)

// A wait that passes on the value one plain store (a `#op=set` notify) left
// in a signal word polls until its compare holds (pto-isa
// include/pto/comm/a2a3/TWait.hpp at 3186c381, TWAIT_IMPL: dcci and load
// the word, CompareSignalRuntime, again): the value is seen only if it is
// still there at a poll. Another notify to the word that is not ordered
// after the wait, and whose result fails the compare, can land between the
// store and the poll; if nothing writes the value back, the wait spins
// forever. Whether it lands there follows the timing, so the deadlock does
// (testdata: hazards/butterfly_eq_signal, one word for every step of a
// butterfly, each step's partner setting its value and the rank waiting
// with `==`: clean in lock step, a deadlock under jitter). The fact behind
// it does not: happens-before says such a write may land there on some
// timing, and the detector reports it as wait-overwritten on every timing
// on which the wait passed, in whichever order the three arrived:
//
//   - the write arrives after the wait: it checks the satisfied waits the
//     word kept (eqWord.waits), each with the store it read;
//   - the write arrives before the store the wait read, which overwrote it:
//     a store lists the word's earlier sets not ordered before it
//     (eqWord.racing), and the wait checks those. A set ordered before the
//     store always lands before it.
//
// It cannot arrive between the two: the wait would have read it. On a
// timing where it did, the wait hangs, and the deadlock checks the waits
// it blocked against the sets their words kept (eqBlocked): the pair is
// reported whether the run passed the wait or hung on it.
//
// Which writes count: a plain set whose value fails the compare (any
// compare: `==` is un-satisfied by any other value, `>=` by a set back
// below it); an atomic add whose sum with the value the wait read fails
// it (any non-zero add un-satisfies `==`, a positive one never `>=`), when
// the add is ordered after the store the wait read (an add racing that
// store is the reset-races-atomic already reported for the pair). A set of
// a value that passes (two producers setting one ready word to 1,
// notify_set_two_ranks) changes nothing the wait needs. Only notifies take
// part, since only their values are known: a scalar `st` of a computed
// value to a signal word is a read-modify-write's (rmw.go), and a wait
// that passed on adds alone (a counter) is not checked here; the counters'
// own rules (sigprefix.go, storecount.go, eqcount.go) order those waits.
// An `==` wait that passed on the word's value at the run's start (its
// initial or a host-written value) takes that value as a set ordered
// before the run (eqinit.go).

// eqKept bounds the waits and the sets a word keeps: --max-kept, the GM
// ranges' bound (default 16), at most 64 (eqStore.racy's bits). Past it
// the oldest go, and the word keeps of them only the latest of each agent
// (eqWord.goneSets, goneWaits). A set that is not ordered after the
// latest set of an agent that left may race one that left, which its
// racing list then lacks (eqStore.lost), and a write that is not ordered
// after the latest wait of an agent that left may land before that wait
// polled: a pair may then be missed, and its count follow the order the
// two arrived in, so the report says so (eqMissed: a kept-limit note
// naming the word and the bound) where a wait reads such a set, or such a
// write lands. One ordered after them is ordered after every one of that
// agent that left, and misses nothing. A wait blocked at a deadlock on a
// word that dropped a set says so too (eqBlocked checks the sets kept).
func (d *Detector) eqKept() int { return min(d.maxKept(), 64) }

type eqKey struct {
	sm *shadowMem
	lo int64
}

// eqStore is a notify to a word with the value it wrote or added; a set
// kept in eqWord.sets has its place among the word's sets (seq) and the
// earlier kept sets it is not ordered after (racy: bit k for the set of
// seq-1-k), which a blocked wait checks (eqBlocked).
type eqStore struct {
	r    rec
	val  int64
	seq  uint32
	racy uint64
	// lost: a set that left at the bound may have raced it, and is not on
	// its racing list (eqKept).
	lost bool
}

// orderedBefore says whether kept set a, which came before kept set b, is
// ordered before it.
func (b *eqStore) orderedBefore(a *eqStore) bool {
	return b.racy&(1<<(b.seq-a.seq-1)) == 0
}

// eqWait is a satisfied wait on a word: its compare, the value it
// compared with, the value it read and the set that left it (by).
type eqWait struct {
	r, by       rec
	cmp         string
	want, value int64
}

// eqWord is what a word some set notify wrote keeps for wait-overwritten,
// in run generation gen: its last set, whether an add landed since, its
// latest sets (the last one included), the earlier ones not ordered before
// the last, and the waits that passed on a set's value.
type eqWord struct {
	gen     uint32
	last    eqStore
	hasLast bool
	added   bool
	n       uint32 // the sets to the word this run
	sets    []eqStore
	// goneSets and goneWaits are, per agent, the latest of its sets and
	// of its waits (the wait's record with its count after it) that left
	// at the bound (eqKept).
	goneSets  []rec
	goneWaits []rec
	racing    []eqStore
	waits     []eqWait
}

// word returns the record of the word at lo of sm, made when make is set
// and cleared when it belongs to an earlier run; nil when there is none.
func (d *Detector) eqWordAt(sm *shadowMem, lo int64, make bool) *eqWord {
	w := d.eq[eqKey{sm, lo}]
	if w == nil {
		if !make {
			return nil
		}
		w = &eqWord{gen: d.gen}
		d.eq[eqKey{sm, lo}] = w
	}
	if w.gen != d.gen {
		*w = eqWord{gen: d.gen, sets: w.sets[:0], racing: w.racing[:0], waits: w.waits[:0],
			goneSets: w.goneSets[:0], goneWaits: w.goneWaits[:0]}
	}
	return w
}

// eqWords calls f with the start of each word acc covers.
func eqWords(acc *machine.Access, f func(lo, hi int64)) {
	sz := int64(4)
	if acc.Tensor != nil && acc.Tensor.DType.Size() > 0 {
		sz = int64(acc.Tensor.DType.Size())
	}
	for n := range acc.NumRows() {
		lo, end := acc.Run(n)
		for w := lo; w+sz <= end; w += sz {
			f(w, w+sz)
		}
	}
}

// eqNotify checks notify r (of value val) to acc against the waits its
// words kept, and records it.
func (d *Detector) eqNotify(r *rec, acc *machine.Access, val int64) {
	if r.atomic && len(d.eq) == 0 {
		return // no set has written a word: nothing an add can un-satisfy
	}
	if d.eq == nil {
		d.eq = make(map[eqKey]*eqWord)
	}
	sm := d.shadowFor(acc)
	eqWords(acc, func(lo, hi int64) {
		if w := d.eqWordAt(sm, lo, !r.atomic); w != nil {
			d.eqWrite(w, r, acc, lo, hi, val)
		}
	})
}

// eqWrite is notify r of value val landing on word w (bytes lo..hi).
func (d *Detector) eqWrite(w *eqWord, r *rec, acc *machine.Access, lo, hi, val int64) {
	if d.eqGone(w.goneWaits, r) {
		d.eqMissed(r, acc, lo)
	}
	for i := range w.waits {
		wt := &w.waits[i]
		// A wait's record carries its agent's count before it (mkrec);
		// what the agent releases after the wait carries more.
		past := wt.r
		past.epoch++
		if d.hbOrSame(&past, r) {
			continue // meant after the wait, and it is
		}
		left := val
		if r.atomic {
			if !d.hbOrSame(&wt.by, r) {
				continue // it races the store: reset-races-atomic
			}
			left = wt.value + val
		}
		if !machine.CompareSignal(wt.cmp, left, wt.want) {
			d.eqNote(wt, r, acc, lo, hi, left, r.atomic)
		}
	}
	if r.atomic {
		w.added = true
		return
	}
	// The sets before r that r is not ordered after: any of them may land
	// after r. One ordered before r may still race a later set, so the
	// word keeps its sets (up to eqKept), not only the ones racing its
	// last: the first of two sets of one notifier races a third agent's
	// set as much as the second does.
	w.racing = w.racing[:0]
	var racy uint64
	for i := range w.sets {
		if !d.hbOrSame(&w.sets[i].r, r) {
			w.racing = append(w.racing, w.sets[i])
			racy |= 1 << (w.n - w.sets[i].seq - 1)
		}
	}
	// Before the oldest leaves: it is on r's racing list if it races r.
	lost := d.eqGone(w.goneSets, r)
	if len(w.sets) >= d.eqKept() {
		w.goneSets = eqLeave(w.goneSets, w.sets[0].r)
		w.sets = w.sets[:copy(w.sets, w.sets[1:])]
	}
	s := eqStore{r: *r, val: val, seq: w.n, racy: racy, lost: lost}
	w.n++
	w.sets = append(w.sets, s)
	w.last, w.hasLast, w.added = s, true, false
}

// eqBlocked checks the twaits blocked at a deadlock against the sets their
// words kept, so that a write able to overwrite the value a wait needs is
// reported whether the run passed the wait (eqWaitOn, eqWrite) or hung on
// it, as it does when that write landed between the set and the poll.
// Blocked wait W names write S2, a set whose value fails W's compare, when
// some kept set S1 whose value passes it could be what W reads, with S2
// landing after it on some timing:
//
//   - S2 can land after S1: S2 came later, or came earlier and S1 is not
//     ordered after it (as the racing list S1 kept, which a wait that read
//     S1 checks);
//   - W can read S1: no kept set S1 is ordered before is ordered before W
//     too (it would overwrite S1 before W's first poll, on every timing).
//
// Nothing is ordered after a wait that never passed, so every S2 could
// land after W's poll of S1 on the timing where W read it: the pairs are
// the ones a run on that timing reports. A wait whose words kept no such
// S1 hangs on every timing as far as the sets tell, and is the deadlock
// alone. An `==` wait takes the word's value at the run's start as such
// an S1 too, before every set (eqStartSet).
func (d *Detector) eqBlocked(bl []machine.Blocked) {
	if len(d.eq) == 0 {
		return
	}
	for i := range bl {
		b := &bl[i]
		sg := b.Signal
		if sg == nil || b.Op == nil {
			continue
		}
		a := d.agent(b.Agent)
		r := rec{agent: a, epoch: d.agents[a].n, gen: d.gen, op: b.Op}
		r.setIter(sg.Iter)
		cmp := machine.SignalCmp(b.Op)
		acc := sg.Access
		sm := d.shadowFor(&acc)
		eqWords(&acc, func(lo, hi int64) {
			w := d.eqWordAt(sm, lo, false)
			if w == nil {
				return
			}
			if len(w.goneSets) > 0 {
				d.eqMissed(&r, &acc, lo)
			}
			// The run's start value, when the wait could have read it
			// (eqinit.go): every set lands after it.
			st, fromStart := eqStore{}, false
			if cmp == "eq" {
				st, fromStart = d.eqStartSet(w, &acc, sm, lo, a, sg.Want)
			}
			for j := range w.sets {
				s2 := &w.sets[j]
				if machine.CompareSignal(cmp, s2.val, sg.Want) {
					continue
				}
				by := d.eqReadable(w, s2, a, cmp, sg.Want)
				if by == nil && fromStart {
					by = &st
				}
				if by != nil {
					wt := eqWait{r: r, by: by.r, cmp: cmp, want: sg.Want, value: by.val}
					d.eqNote(&wt, &s2.r, &acc, lo, hi, s2.val, false)
				}
			}
		})
	}
}

// eqReadable returns the latest set w kept whose value passes the compare
// (cmp, want) of a wait of agent a blocked on the word, that the wait
// could read and that set s2 can land after (eqBlocked); nil when there is
// none.
func (d *Detector) eqReadable(w *eqWord, s2 *eqStore, a int32, cmp string, want int64) *eqStore {
	for i := len(w.sets) - 1; i >= 0; i-- {
		s1 := &w.sets[i]
		if s1 == s2 || !machine.CompareSignal(cmp, s1.val, want) {
			continue
		}
		if s2.seq < s1.seq && s1.orderedBefore(s2) {
			continue // s2 always lands first
		}
		hidden := false
		for j := i + 1; j < len(w.sets) && !hidden; j++ {
			later := &w.sets[j]
			hidden = later.orderedBefore(s1) && d.hb(&later.r, a)
		}
		if !hidden {
			return s1
		}
	}
	return nil
}

// eqWaitOn checks satisfied wait r on acc (event e) against the sets its
// words kept as racing the set it read, and keeps it for the writes to
// come; an `==` wait on a word no write of the run had reached is kept as
// a wait on the run's start value (eqinit.go).
func (d *Detector) eqWaitOn(r *rec, acc *machine.Access, e *machine.Event) {
	if len(d.eq) == 0 && len(d.eqRunTensors) == 0 {
		return // no set landed and no `==` signal is tracked: a ring's every wait
	}
	if e.Op == nil || e.Op.Info == nil || e.Op.Info.Op != asm.OpTwait {
		// A ttest that returned true passed on the value; one that
		// finds it overwritten returns false, and what the program does
		// then is its own (a polling loop spins as a twait would).
		return
	}
	cmp, want := machine.SignalCmp(e.Op), e.Want
	start := cmp == "eq" && d.eqTracked(acc)
	if len(d.eq) == 0 && !start {
		return
	}
	sm := d.shadowFor(acc)
	k := 0
	eqWords(acc, func(lo, hi int64) {
		v := e.Value
		if len(e.Words) > 1 && k < len(e.Words) {
			v = e.Words[k]
		}
		k++
		if start && d.eqUntouched(acc, sm, lo) {
			// No write of the run has reached the word: the wait read
			// its value at the run's start (eqinit.go).
			if d.eq == nil {
				d.eq = make(map[eqKey]*eqWord)
			}
			d.eqKeepWait(d.eqWordAt(sm, lo, true), eqWait{r: *r, by: d.eqStartRec(), cmp: cmp, want: want, value: v})
			return
		}
		w := d.eqWordAt(sm, lo, false)
		if w == nil || !w.hasLast || w.added || !d.holdsSet(sm, lo, hi, &w.last.r) ||
			!machine.CompareSignal(cmp, w.last.val, want) {
			return // not passed on a set's value, as far as is known
		}
		if w.last.lost {
			d.eqMissed(r, acc, lo)
		}
		wt := eqWait{r: *r, by: w.last.r, cmp: cmp, want: want, value: w.last.val}
		for i := range w.racing {
			if s := &w.racing[i]; !machine.CompareSignal(cmp, s.val, want) {
				d.eqNote(&wt, &s.r, acc, lo, hi, s.val, false)
			}
		}
		d.eqKeepWait(w, wt)
	})
}

// eqKeepWait keeps satisfied wait wt on word w for the writes to come.
func (d *Detector) eqKeepWait(w *eqWord, wt eqWait) {
	if len(w.waits) >= d.eqKept() {
		past := w.waits[0].r
		past.epoch++
		w.goneWaits = eqLeave(w.goneWaits, past)
		w.waits = w.waits[:copy(w.waits, w.waits[1:])]
	}
	w.waits = append(w.waits, wt)
}

// holdsSet says whether the word lo..hi of sm holds plain store s with no
// add after it (a store the notifies did not show, a scalar `st`, or an
// add of another kind, make the word's value unknown here).
func (d *Detector) holdsSet(sm *shadowMem, lo, hi int64, s *rec) bool {
	same := func(hasW bool, w *rec) bool {
		return hasW && w.agent == s.agent && w.epoch == s.epoch && w.gen == s.gen
	}
	if t, i := sm.tableWord(lo, hi); t != nil {
		sw := t.at(i)
		return sw != nil && same(sw.hasW, t.wordW(i, sw)) && sw.adds&addsMask == addsNone
	}
	held := false
	d.eachSigCell(sm, lo, hi, sigRead, false, func(c *cell) {
		held = same(c.hasW, &c.w) && len(c.adds()) == 0
	})
	return held
}

// eqNote records wait-overwritten for wait wt and write s, which leaves
// left in the word.
func (d *Detector) eqNote(wt *eqWait, s *rec, acc *machine.Access, lo, hi, left int64, add bool) {
	what := fmt.Sprintf("sets it to %d", left)
	if add {
		what = fmt.Sprintf("adds to it (%d after the set)", left)
	}
	by := "the value " + d.site(&wt.by).where() + " set"
	if d.eqFromStart(&wt.by) {
		by = "the value it held when the run started (initial or host-written)"
		if add {
			what = fmt.Sprintf("adds to it (%d after that)", left)
		}
	}
	msg := fmt.Sprintf("%s passes only while the word holds %s %d, %s; %s %s with nothing ordering it after the wait, so it can land before the wait polls, and the wait spins forever",
		d.site(&wt.r).where(), asm.CmpSymbol(wt.cmp), wt.want, by, d.site(s).where(), what)
	// Recorded at once: the notes of one event that name the same two
	// sites are merged (flushNotes), and a wait meets two sets of one
	// notifier's site on its racing list where, arriving after it, they
	// are two events: the count would follow the arrival order.
	d.recordNote(&raceNote{kind: KindWaitOverwritten, prev: wt.r, cur: *s, acc: *acc, lo: lo, hi: hi, msg: msg})
}

// eqLeave records in gone, the latest of each agent, r leaving at the bound.
func eqLeave(gone []rec, r rec) []rec {
	for i := range gone {
		if gone[i].agent == r.agent {
			gone[i] = r // a later one of its agent: its program order
			return gone
		}
	}
	return append(gone, r)
}

// eqGone says whether r is not ordered after one of gone: it may make a
// pair with an entry that left.
func (d *Detector) eqGone(gone []rec, r *rec) bool {
	for i := range gone {
		if !d.hbOrSame(&gone[i], r) {
			return true
		}
	}
	return false
}

// eqMissed counts op r, which met signal word lo of acc not ordered after an
// entry the bound (eqKept) dropped (eqGone), and names
// the first such op and word, for the report's note (eqKeptNote).
func (d *Detector) eqMissed(r *rec, acc *machine.Access, lo int64) {
	d.eqMisses++
	if d.eqMisses > 1 {
		return
	}
	d.eqMissSite = d.site(r)
	d.eqMissAt = fmt.Sprintf("%s (%s 0x%X)", bufferName(acc, lo), spaceLabel(acc), lo)
}

// eqKeptNote is the report's note that a signal word dropped a set or a
// wait at the bound that a pair of wait-overwritten may have needed.
func (d *Detector) eqKeptNote() (Finding, bool) {
	if d.eqMisses == 0 {
		return Finding{}, false
	}
	return Finding{Kind: KindKeptLimit, Severity: SevNote.String(), First: d.eqMissSite, Buffer: d.eqMissAt, Count: d.eqMisses,
		Message: fmt.Sprintf("%s met signal %s past the %d sets and satisfied waits the detector keeps per signal word for wait-overwritten, not ordered after one it dropped: a wait-overwritten pair with that one, if any, was not checked (nor those of the other ops the count includes)",
			d.eqMissSite.Op, d.eqMissAt, d.eqKept()),
		Hint: fmt.Sprintf("lint again with a larger bound: --max-kept N (now %d; signal words keep at most 64)", d.maxKept())}, true
}
