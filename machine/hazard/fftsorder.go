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
	op  *asm.COp
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
	return fftsSide{log: d.ffts[c], k: k, op: r.op}, true
}

// fftsBefore orders accesses a and b of an AIC kernel and an AIV kernel of
// one launch by the FFTS rendezvous of their cores. For an id the one
// kernel sets (mode 2) and the other waits for, with p the setter's sets
// before its access and q the waiter's waits before its own:
//
//   - p < q: the setter's access comes before its set p+1, which pays the
//     waiter's wait p+1 <= q, passed before its access. On the cores of one
//     block that is an edge, and the race (there is one, or no one would
//     ask) is of pipes the set does not cover: the setter's access first
//     (fifo_slot_c2v: the AIC's MTE3 store before a FIX ready). Between
//     blocks or ranks, whose counters are their own, it is the same
//     program's same phase (ffts_mode2_cross_block).
//   - q < p: the setter is past rendezvous p, the waiter still short of it:
//     the setter's access is meant after the waiter's. Nothing orders them
//     (the waiter can get there later); which came first is the program's
//     phase, not an edge. Only a counter both kernels use in the loop
//     bodies that hold the two accesses says so (loops of one depth whose
//     iteration compared equal): its rendezvous then fall within those
//     iterations (fa_cv_preload_no_p_credit: the cube's load of P tile t-2
//     has passed the wait for tile t-2 and the AIV's store of tile t the
//     set of tile t-1: WAR load, store. The cube's free credits for P,
//     waited for only after the AIV's loop, would say the opposite, and
//     relate no iteration of it).
//
// Edges decide first; phases only when every counter that has one agrees.
// ok is false when nothing relates the two, or the counters disagree.
func (d *Detector) fftsBefore(a, b *rec, phase bool) (before, ok bool) {
	if a.op == nil || b.op == nil || a.op.Kernel == nil || b.op.Kernel == nil || a.op.Kernel.Kind == b.op.Kernel.Kind {
		return false, false
	}
	sa, oka := d.fftsSide(a)
	sb, okb := d.fftsSide(b)
	if !oka || !okb {
		return false, false
	}
	var ua, ub, owna, ownb uint16
	if phase {
		ua, ub = d.fftsScope(a.op), d.fftsScope(b.op)
	}
	owna, ownb = d.fftsOwn(a.op.Kernel), d.fftsOwn(b.op.Kernel)
	var edge, vote int // +1: a first, -1: b first, 2: the counters disagree
	add := func(v *int, x int) {
		if *v == 0 {
			*v = x
		} else if *v != x {
			*v = 2
		}
	}
	for id := range numCrossIDs {
		bit := uint16(1) << id
		inScope := phase && ua&bit != 0 && ub&bit != 0
		// a's kernel sets, b's waits (b's counter fed by a's kernel alone).
		if ownb&bit == 0 && len(sa.log.sets[id]) > 0 && len(sb.log.waits[id]) > 0 {
			p, q := countBelow(sa.log.sets[id], sa.k), countBelow(sb.log.waits[id], sb.k)
			switch {
			case p < q:
				add(&edge, 1)
			case q < p && inScope:
				add(&vote, -1)
			}
		}
		// b's kernel sets, a's waits.
		if owna&bit == 0 && len(sb.log.sets[id]) > 0 && len(sa.log.waits[id]) > 0 {
			p, q := countBelow(sb.log.sets[id], sb.k), countBelow(sa.log.waits[id], sa.k)
			switch {
			case p < q:
				add(&edge, -1)
			case q < p && inScope:
				add(&vote, 1)
			}
		}
	}
	switch {
	case edge == 1 || edge == -1:
		return edge == 1, true
	case edge == 0 && (vote == 1 || vote == -1):
		return vote == 1, true
	}
	return false, false
}

// fftsScope is the set of FFTS ids the kernel of op uses (sets or waits,
// directly or through a fifo) in the body of op's innermost loop, or
// anywhere when op is in none.
func (d *Detector) fftsScope(op *asm.COp) uint16 {
	var loop *asm.Loop
	if n := len(op.Loops); n > 0 {
		loop = op.Loops[n-1]
	}
	key := fftsScopeKey{op.Kernel, loop}
	if m, ok := d.fftsScopes[key]; ok {
		return m
	}
	var m uint16
	for _, o := range op.Kernel.Ops {
		if loop == nil || slices.Contains(o.Loops, loop) {
			m |= fftsIDs(o)
		}
	}
	if d.fftsScopes == nil {
		d.fftsScopes = map[fftsScopeKey]uint16{}
	}
	d.fftsScopes[key] = m
	return m
}

type fftsScopeKey struct {
	k    *asm.KernelInfo
	loop *asm.Loop
}

// fftsOwn is the set of FFTS ids whose counters a kernel's own cores feed
// (a set in mode 0 or 1, or in a mode or with an id known only at run
// time): on those, the k-th wait is not the k-th set of the kernel across.
func (d *Detector) fftsOwn(k *asm.KernelInfo) uint16 {
	key := fftsScopeKey{k: k}
	if m, ok := d.fftsOwns[key]; ok {
		return m
	}
	var m uint16
	for _, o := range k.Ops {
		if o.Info == nil || o.Info.Op != asm.OpFftsSet {
			continue
		}
		if a, ok := o.Attr("mode"); !ok || !a.Val.Const || a.Val.Val != 2 {
			m |= fftsIDs(o)
		}
	}
	if d.fftsOwns == nil {
		d.fftsOwns = map[fftsScopeKey]uint16{}
	}
	d.fftsOwns[key] = m
	return m
}

// fftsIDs is the set of FFTS ids op sets or waits for: every id when the
// id is known only at run time; a fifo's two (ready and free).
func fftsIDs(op *asm.COp) uint16 {
	if op.Info == nil {
		return 0
	}
	idArg := -1
	switch op.Info.Op {
	case asm.OpFftsSet:
		idArg = 1
	case asm.OpFftsWait:
		idArg = 0
	case asm.OpTpush, asm.OpTpop, asm.OpTalloc, asm.OpTfree, asm.OpTpushSlot, asm.OpTpopSlot:
		for _, a := range op.Args {
			if a.Kind == asm.ArgGM && a.GM != nil && a.GM.Class == asm.TensorFIFO {
				id := a.GM.Attrs["id"]
				if id < 0 || id+1 >= numCrossIDs {
					return 0
				}
				return 3 << id
			}
		}
		return 0
	default:
		return 0
	}
	if idArg >= len(op.Args) {
		return 0
	}
	if v := op.Args[idArg].Val; v.Const {
		if v.Val < 0 || v.Val >= numCrossIDs {
			return 0
		}
		return 1 << v.Val
	}
	return 0xFFFF
}
