package hazard

import (
	"slices"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
)

// Intended order across kernels by FFTS flags (docs/hazards.md, "Intended
// order across kernels").
//
// An FFTS counter is a count: a core's wait passes once the counter is
// positive and takes one (machine/sync.go, crossWait; pto-isa's
// wait_flag_dev), and in mode 2 every set of an AIC adds one to each AIV
// of its block, the sets of both AIVs one to their AIC (fireCross). So
// the k-th wait of an id on a core is paid by the k-th set of that id of
// the kernel across, whatever the timing: a program fact, given the path
// each core takes. Each core's sets and waits are logged by issue number
// (a set when the scalar issues it, Event.Word machine.WordFFTSSet, not
// when its pipe fires it), so the count before any access is known when
// the access is.

// fftsLog is one core's mode-2 FFTS sets and its waits in one run, per id:
// a set's issue number, a wait's Event.Issued (how many ops the scalar had
// issued before it).
type fftsLog struct {
	gen   uint32
	sets  [numCrossIDs][]int64
	waits [numCrossIDs][]int64
}

// fftsOf is core c's log for this run, made or emptied as needed.
func (d *Detector) fftsOf(c int32) *fftsLog {
	if int(c) >= len(d.ffts) {
		d.ffts = append(d.ffts, make([]*fftsLog, int(c)+1-len(d.ffts))...)
	}
	l := d.ffts[c]
	if l == nil {
		l = &fftsLog{gen: d.gen}
		d.ffts[c] = l
	}
	if l.gen != d.gen {
		for i := range l.sets {
			l.sets[i], l.waits[i] = l.sets[i][:0], l.waits[i][:0]
		}
		l.gen = d.gen
	}
	return l
}

// setIssued logs the issue of an FFTS set (EvIssue with Word
// machine.WordFFTSSet). Only mode 2 crosses between an AIC and its AIVs,
// the two kernels of a mixed launch; modes 0 and 1 stay among one kind.
func (d *Detector) setIssued(e *machine.Event) {
	if e.Agent.Core < 0 || e.Mode != 2 || e.ID < 0 || e.ID >= numCrossIDs || e.Issue <= 0 {
		return
	}
	l := d.fftsOf(d.core(e.Agent.Rank, e.Agent.Core))
	l.sets[e.ID] = append(l.sets[e.ID], e.Issue)
}

// waitPassed logs a passed FFTS wait of core c.
func (d *Detector) waitPassed(c int32, e *machine.Event) {
	if c < 0 || e.ID < 0 || e.ID >= numCrossIDs {
		return
	}
	l := d.fftsOf(c)
	l.waits[e.ID] = append(l.waits[e.ID], e.Issued)
}

// countBelow counts the entries of list (ascending) below issue number k.
func countBelow(list []int64, k int64) int64 {
	n, _ := slices.BinarySearch(list, k)
	return int64(n)
}

// fftsSide is one access of a pair as the FFTS counts see it: its core's
// log and its op's issue number there.
type fftsSide struct {
	log *fftsLog
	k   int64
}

func (d *Detector) fftsSide(r *rec) (fftsSide, bool) {
	c := d.orderCore(r.agent)
	if c < 0 || r.serial <= 0 || r.op == nil || r.op.Kernel == nil || int(c) >= len(d.ffts) || d.ffts[c] == nil || d.ffts[c].gen != d.gen {
		return fftsSide{}, false
	}
	// serial is twice the issue number. A composite's steps share the
	// composite's, k: a fifo's own wait comes before its load or store
	// (Issued k at the wait, the step numbered past it), its own set
	// after (numbered past the step).
	k := (r.serial + 1) / 2
	if r.step != 0 {
		k++
	}
	return fftsSide{log: d.ffts[c], k: k}, true
}

// fftsBefore orders accesses a and b of an AIC kernel and an AIV kernel of
// one launch by the FFTS rendezvous of their cores. For an id the one
// kernel sets (mode 2) and the other waits for, with p the setter's sets
// before its access and q the waiter's waits before its own, p < q says
// the setter's access comes before its set p+1, which pays the waiter's
// wait p+1 <= q, passed before its access. On the cores of one block that
// is an edge, and the race (there is one, or no one would ask) is of pipes
// the set does not cover: the setter's access first (fifo_slot_c2v: the
// AIC's MTE3 store before a FIX ready). Between blocks or ranks, whose
// counters are their own, it is the same program's same phase
// (ffts_mode2_cross_block).
//
// q < p says only that the setter is past a rendezvous the waiter has not
// reached, which a credit counter's slack (the first waits of a double
// buffer skipped) shifts by the slots: it does not order the two. ok is
// false when no counter relates them, or two disagree.
func (d *Detector) fftsBefore(a, b *rec) (before, ok bool) {
	if a.op == nil || b.op == nil || a.op.Kernel == nil || b.op.Kernel == nil || a.op.Kernel.Kind == b.op.Kernel.Kind {
		return false, false
	}
	sa, oka := d.fftsSide(a)
	sb, okb := d.fftsSide(b)
	if !oka || !okb {
		return false, false
	}
	owna, ownb := d.fftsOwn(a.op.Kernel), d.fftsOwn(b.op.Kernel)
	aFirst, bFirst := false, false
	for id := range numCrossIDs {
		bit := uint16(1) << id
		// a's kernel sets, b's waits (b's counter fed by a's kernel alone).
		if ownb&bit == 0 && len(sa.log.sets[id]) > 0 && countBelow(sa.log.sets[id], sa.k) < countBelow(sb.log.waits[id], sb.k) {
			aFirst = true
		}
		// b's kernel sets, a's waits.
		if owna&bit == 0 && len(sb.log.sets[id]) > 0 && countBelow(sb.log.sets[id], sb.k) < countBelow(sa.log.waits[id], sa.k) {
			bFirst = true
		}
	}
	if aFirst == bFirst {
		return false, false
	}
	return aFirst, true
}

// fftsOwn is the set of FFTS ids whose counters a kernel's own cores feed
// (a set in mode 0 or 1, or in a mode or with an id known only at run
// time): on those, the k-th wait is not the k-th set of the kernel across.
func (d *Detector) fftsOwn(k *asm.KernelInfo) uint16 {
	if m, ok := d.fftsOwns[k]; ok {
		return m
	}
	var m uint16
	for _, o := range k.Ops {
		if o.Info == nil || o.Info.Op != asm.OpFftsSet {
			continue
		}
		if a, ok := o.Attr("mode"); !ok || !a.Val.Const || a.Val.Val != 2 {
			m |= fftsSetIDs(o)
		}
	}
	if d.fftsOwns == nil {
		d.fftsOwns = map[*asm.KernelInfo]uint16{}
	}
	d.fftsOwns[k] = m
	return m
}

// fftsSetIDs is the set of FFTS ids an ffts_set op sets: every id when
// its id is known only at run time.
func fftsSetIDs(op *asm.COp) uint16 {
	if len(op.Args) < 2 {
		return 0
	}
	if v := op.Args[1].Val; v.Const {
		if v.Val < 0 || v.Val >= numCrossIDs {
			return 0
		}
		return 1 << v.Val
	}
	return 0xFFFF
}
