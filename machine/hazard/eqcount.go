package hazard

import (
	"fmt"
	"slices"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
)

// An `==` wait on a count several agents add to (a round count every
// follower adds 1 to, the leader waiting for (RANKS - 1) (r + 1) with
// `#cmp=eq`: hazards/counter_eq_overshoot) polls until the count equals its
// value (pto-isa include/pto/comm/a2a3/TWait.hpp at 3186c381: dcci, load,
// CompareSignalRuntime, again), and an add never goes back (TNotify.hpp,
// st_atomic ATOMIC_SUM): an add not ordered after the wait that lands
// between the count reaching the value and the poll moves it past, and the
// wait spins forever. That is wait-overwritten's fact (eqwait.go) on a word
// no set writes, and it is reported on every timing on which the wait
// passed or hung, as eqwait.go does for sets.
//
// Which adds: wait W pairs with add A when on some timing W's count is
// reached without A and A lands before W polls. The count is reached on
// the sets of adds that take of each agent a prefix of its adds (they land
// in program order: TNOTIFY ends with BAR ALL), at least those ordered
// before W by the program (its clock before it polled) and none ordered
// after it, summing to W's value less the word's value before the run's
// adds. A is paired when it is neither ordered before nor after W and some
// such set leaves it out (A is not needed): the set lands, A and whatever
// of its agent comes before it land, and W polls. A set that leaves A out
// holds no add ordered after A (one carrying A's release lands after it:
// eqAdd.carry). Whether A was needed is a subset sum over the other
// agents' prefixes, decided once every add of the run is known: at the
// run's end, or at a deadlock for the waits that passed and for the ones
// it blocked (a wait that hangs polled a count some add moved past; which
// adds the timing landed does not matter, so the blocked wait names the
// pairs a passing run would). What the wait acquired (the `==` meet,
// eqmeet.go) is not used: which adds a wait on one agent's adds takes
// follows how many agents had added when it passed (sigprefix.go's
// prefixFor, not watched for later adds), and the sets here are the ones
// that meet counts, with the happens-before they need said outright. The
// adds a word keeps are counted from the run's start: a word is kept when
// a kernel of the run waits on its signal with `==`, and only while no
// plain store or set of the run writes it (then eqwait.go's sets and
// storecount.go decide). The run's kernels are scanned at its start
// (EvRunStart's Kernels, eqRunStart): scanned when met, at a kernel's
// first add or wait (eqScan, which stays for a run that names none), a
// leader whose `==` wait was in a kernel of its own lost the adds before
// its first wait (hazards/counter_eq_overshoot_two_kernels: 6 of its 18
// pairs, a deadlock alone under some skews). Past eqCountMax adds a word stops
// counting and the report says so (eqMissed).

// eqCountMax bounds the adds one word keeps for its `==` waits.
const eqCountMax = 512

// eqCountWord is a word several agents may add to and some kernel waits
// on with `==`, in run generation gen: its adds, their sum, and its
// satisfied `==` waits.
type eqCountWord struct {
	gen   uint32
	mixed bool // a plain store or set of the run wrote it
	full  bool // past eqCountMax adds
	done  bool // its pairs are reported
	sum   int64
	adds  []eqAdd
	waits []eqCountWait
	// agents lists the adders in the order of their first add, and
	// byAgent each one's adds (indices into adds), in program order.
	agents  []int32
	byAgent [][]int
}

// eqAdd is one add to a word: its record, value, its adder's slot in
// eqCountWord.agents, and of each adder before it in that list (by slot)
// how many of its adds are ordered before this one (a prefix: each
// agent's adds are in program order).
type eqAdd struct {
	r     rec
	val   int64
	slot  int
	carry []int32
}

// eqCountWait is a satisfied (or, at a deadlock, blocked) `==` wait on a
// word: its record, the value it waits for, the word's value before the
// run's adds, its access and word, and of each add kept (by index) whether
// it is ordered before the wait (eqBefore) or after it (eqAfter).
type eqCountWait struct {
	r          rec
	want, base int64
	acc        machine.Access
	lo, hi     int64
	order      []uint8
}

const (
	eqNeither = iota
	eqBefore
	eqAfter
)

// eqScan notes the signals kernel k waits on with `==` (once a kernel).
func (d *Detector) eqScan(k *asm.KernelInfo) {
	if k == nil || k == d.eqLastKernel {
		return
	}
	d.eqLastKernel = k
	if slices.Contains(d.eqKernels, k) {
		return
	}
	d.eqKernels = append(d.eqKernels, k)
	for _, op := range k.Ops {
		if op.Info == nil || op.Info.Op != asm.OpTwait || machine.SignalCmp(op) != "eq" || len(op.Args) == 0 {
			continue
		}
		if t := op.Args[0].GM; t != nil && !slices.Contains(d.eqTensors, t) {
			d.eqTensors = append(d.eqTensors, t)
		}
	}
}

// eqCountAt returns the count record of word lo of sm in this run, made
// when mk is set; nil when there is none.
func (d *Detector) eqCountAt(sm *shadowMem, lo int64, mk bool) *eqCountWord {
	w := d.eqCount[eqKey{sm, lo}]
	if w == nil {
		if !mk {
			return nil
		}
		if d.eqCount == nil {
			d.eqCount = make(map[eqKey]*eqCountWord)
		}
		w = &eqCountWord{gen: d.gen}
		d.eqCount[eqKey{sm, lo}] = w
		d.eqCountList = append(d.eqCountList, w)
	}
	if w.gen != d.gen {
		*w = eqCountWord{gen: d.gen, adds: w.adds[:0], waits: w.waits[:0], agents: w.agents[:0], byAgent: w.byAgent[:0]}
	}
	return w
}

// eqCountWrite is notify or store r (of value val, an add when r.atomic)
// to acc: an add to a word an `==` wait of the run's kernels polls is kept,
// and each kept wait learns whether it is ordered after it; any other
// write leaves the word to eqwait.go.
func (d *Detector) eqCountWrite(r *rec, acc *machine.Access, val int64) {
	if r.atomic && r.op != nil {
		d.eqScan(r.op.Kernel)
	}
	if len(d.eqTensors) == 0 || acc.Tensor == nil || !slices.Contains(d.eqTensors, acc.Tensor) {
		return
	}
	sm := d.shadowFor(acc)
	eqWords(acc, func(lo, hi int64) {
		w := d.eqCountAt(sm, lo, r.atomic)
		if w == nil || w.mixed || w.full {
			return
		}
		if !r.atomic || val <= 0 {
			w.mixed = true // a store's value, or an add that takes back
			return
		}
		if len(w.adds) == eqCountMax {
			w.full = true
			d.eqMissed(r, acc, lo)
			return
		}
		for i := range w.waits {
			wt := &w.waits[i]
			past := wt.r
			past.epoch++ // what the waiter releases after the wait
			o := uint8(eqNeither)
			if d.hbOrSame(&past, r) {
				o = eqAfter
			}
			wt.order = append(wt.order, o)
		}
		slot := slices.Index(w.agents, r.agent)
		if slot < 0 {
			slot = len(w.agents)
			w.agents = append(w.agents, r.agent)
			w.byAgent = append(w.byAgent, nil)
		}
		ad := eqAdd{r: *r, val: val, slot: slot, carry: make([]int32, len(w.agents))}
		for o, idx := range w.byAgent {
			if o == slot {
				continue
			}
			// The adds of o ordered before r: a prefix of its adds.
			n, _ := slices.BinarySearchFunc(idx, true, func(i int, _ bool) int {
				if d.hbOrSame(&w.adds[i].r, r) {
					return -1
				}
				return 1
			})
			ad.carry[o] = int32(n)
		}
		w.byAgent[slot] = append(w.byAgent[slot], len(w.adds))
		w.adds = append(w.adds, ad)
		w.sum += val
	})
}

// eqCountWaitOn keeps satisfied `==` wait r (event e) on the count words
// of acc, with the order of the adds that landed before it: ordered before
// it (by the program: called before the wait acquires) or neither.
func (d *Detector) eqCountWaitOn(r *rec, acc *machine.Access, e *machine.Event) {
	d.eqScan(e.Op.Kernel)
	if len(d.eqCount) == 0 || machine.SignalCmp(e.Op) != "eq" {
		return
	}
	d.eqCountWaits(r, acc, e.Want, e.Value, e.Words)
}

// eqCountWaits keeps wait r of agent r.agent, waiting on acc for want and
// reading value (words: each word's, for a wait over several), on each
// count word of acc.
func (d *Detector) eqCountWaits(r *rec, acc *machine.Access, want, value int64, words []int64) {
	sm := d.shadowFor(acc)
	k := 0
	eqWords(acc, func(lo, hi int64) {
		v := value
		if len(words) > 1 && k < len(words) {
			v = words[k]
		}
		k++
		w := d.eqCountAt(sm, lo, false)
		if w == nil || w.mixed || w.full || w.done {
			return
		}
		if len(w.waits) == d.eqKept() {
			d.eqMissed(r, acc, lo)
			return
		}
		wt := eqCountWait{r: *r, want: want, base: v - w.sum, acc: *acc, lo: lo, hi: hi, order: make([]uint8, len(w.adds))}
		for i := range w.adds {
			if d.hb(&w.adds[i].r, r.agent) {
				wt.order[i] = eqBefore
			}
		}
		w.waits = append(w.waits, wt)
	})
}

// eqCountBlocked keeps the `==` twaits blocked at a deadlock as waits of
// their count words (nothing is ordered after a wait that never passed).
func (d *Detector) eqCountBlocked(bl []machine.Blocked) {
	if len(d.eqCount) == 0 {
		return
	}
	for i := range bl {
		b := &bl[i]
		if b.Signal == nil || b.Op == nil || machine.SignalCmp(b.Op) != "eq" {
			continue
		}
		a := d.agent(b.Agent)
		r := rec{agent: a, epoch: d.agents[a].n, gen: d.gen, op: b.Op}
		r.setIter(b.Signal.Iter)
		acc := b.Signal.Access
		d.eqCountWaits(&r, &acc, b.Signal.Want, b.Signal.Value, nil)
	}
}

// eqCountEnd reports the pairs of every kept wait (above), once a run: at
// its end, or at the deadlock that stops it.
func (d *Detector) eqCountEnd() {
	// In the order the words were made (the events'), not the map's.
	for _, w := range d.eqCountList {
		if w.gen != d.gen || w.done || w.mixed {
			continue
		}
		w.done = true
		for i := range w.waits {
			d.eqCountPairs(w, &w.waits[i])
		}
	}
}

// eqCountPairs notes wait wt of word w with each add it pairs with.
func (d *Detector) eqCountPairs(w *eqCountWord, wt *eqCountWait) {
	target := wt.want - wt.base
	if target < 0 || target > maxEqSum {
		return
	}
	// Each agent's prefixes a passing set may take: thru[j] is the sum of
	// its first j adds, from its adds ordered before the wait (lo) to
	// those not ordered after it (hi).
	n := len(w.agents)
	thru := make([][]int64, n)
	lo, hi := make([]int, n), make([]int, n)
	for s, idx := range w.byAgent {
		thru[s] = append(thru[s], 0)
		for j, i := range idx {
			thru[s] = append(thru[s], thru[s][j]+w.adds[i].val)
			switch wt.order[i] {
			case eqBefore:
				lo[s], hi[s] = j+1, j+1
			case eqNeither:
				if hi[s] == j {
					hi[s] = j + 1
				}
			}
		}
	}
	words := int(target>>6) + 1
	reach, tmp := make([]uint64, words), make([]uint64, words)
	capOf := make([]int, n)
	for s, idx := range w.byAgent {
		for j := lo[s]; j < hi[s]; j++ {
			// Add j of agent s: a set leaving it out takes at most j of
			// s's adds, and of each other agent the adds before its
			// first one ordered after it.
			for o := range n {
				capOf[o] = hi[o]
				if o == s {
					continue
				}
				for c, i := range w.byAgent[o][:hi[o]] {
					if a := &w.adds[i]; s < len(a.carry) && int(a.carry[s]) > j {
						capOf[o] = c
						break
					}
				}
			}
			clear(reach)
			reach[0] = 1
			ok := true
			for o := range n {
				if o == s {
					continue
				}
				if capOf[o] < lo[o] {
					ok = false // it must take an add ordered after j
					break
				}
				clear(tmp)
				for p := lo[o]; p <= capOf[o]; p++ {
					if v := thru[o][p]; v <= target {
						orShifted(tmp, reach, int(v))
					}
				}
				reach, tmp = tmp, reach
			}
			left := false
			for p := lo[s]; p <= j && ok && !left; p++ {
				v := target - thru[s][p]
				left = v >= 0 && reach[v>>6]>>(v&63)&1 != 0
			}
			if !left {
				continue
			}
			add := &w.adds[idx[j]]
			msg := fmt.Sprintf("%s passes only while the count several agents add to is %s %d; %s adds %d with nothing ordering it after the wait, and the wait reaches its value without it on some timing, so it can land before the wait polls, move the count past the value, and the wait spins forever",
				d.site(&wt.r).where(), asm.CmpSymbol("eq"), wt.want, d.site(&add.r).where(), add.val)
			d.recordNote(&raceNote{kind: KindWaitOverwritten, prev: wt.r, cur: add.r, acc: wt.acc, lo: wt.lo, hi: wt.hi, msg: msg})
		}
	}
}
