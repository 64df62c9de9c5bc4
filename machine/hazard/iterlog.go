package hazard

import (
	"fmt"

	"github.com/ptoasm/ptoasm/machine"
)

// A core pipe's op has the loop iteration vector its scalar was in when it
// issued the op. The detector keeps it in each access it records (rec.iter):
// the intended order of two accesses on different cores (intendedBefore),
// which instance of a pair a finding names (laterPair, instLess) and the
// finding's text read it. It used to travel with every event, copied into
// the op's queue slot at issue, read back at completion and narrowed into
// the batch (1.2 M events on a linted 8-rank allgather_gemm at M=1024, a
// vector up to 7 deep). The machine now tells the detector the scalar's
// vector only when it changes (machine.IterLogger: once per change that
// an issue meets, about one issue in seven there), with the issue number
// from which it holds, and each core's log of them gives an op's vector
// by its issue number (Event.Issue), exactly as the slot did.
//
// The log is pruned with the machine's own watermark: with each entry
// comes the lowest issue number of an op still in one of the core's queues
// (low); every op below it has had all its events, so no later event
// looks up an entry that only covers numbers below it. A core keeps the
// entries of its ops in flight, and always its latest.

// iterEnt is one entry of a core's iteration log: the ops numbered from
// on, up to the next entry's from, were issued in iteration iter[:n] (as
// rec keeps vectors: narrowIter).
type iterEnt struct {
	from int64
	iter [maxIter]int32
	n    uint8
}

// iterLog is one core's log; ents[head:] are live, in order of from.
// base counts the entries dropped from the front of ents, so that base+i
// names ents[i] for as long as it lives (agentIter.at).
type iterLog struct {
	ents []iterEnt
	head int
	base int64
	// last is the newest entry's from (ents[len(ents)-1].from), beside
	// the header a note reads anyway: the entry itself was written a note
	// ago and is cold by the next, and its line is a load the note waited
	// on only to compare from.
	last int64
}

// agentIter is an agent's place in its core's log: the log (nil: not
// looked up yet), and where its last op's entry was. One pipe's ops
// come in issue order, so its next op's entry is that one or a later one:
// a step or none, where the newest entry back was three or four.
//
// It also keeps a copy of that entry (iter, n) with the numbers it is
// known to cover, from up to until: a pipe runs several ops of one entry,
// and a lookup that hits the copy reads this one line instead of the log,
// its entry and the next entry's number, each a miss on a core that ran
// no event since (the log's lines are the core's, the copy the agent's).
// until is the next entry's from when there was one, else one past the
// number looked up (an entry after it may come). A log that starts again
// (lower numbers) drops its core's copies (logIter).
//
// slog is, the same way, where the agent's last op found its scalar's
// issue state in the core's log of them (coreState.log, logIndexFrom).
// 64 bytes: one line.
type agentIter struct {
	log         *iterLog
	at          int64
	from, until int64
	iter        [maxIter]int32
	n           uint8
	slog        uint16
}

// slog holds an index of coreState.log, which holds at most maxLog entries.
var _ [1<<16 - maxLog]struct{}

// iterNote is an IterLogger call in a batch; its vector is in batch.iter.
type iterNote struct {
	from, low int64
	agent     machine.Agent
}

// ObserveIter implements machine.IterLogger. The entry goes where the
// events go (the batch being filled, the local batch, or at once when
// events are observed in place), so it meets them in the machine's order.
func (d *Detector) ObserveIter(a machine.Agent, from, low int64, iter []int64) {
	f := &d.front
	if p := f.pipe; p != nil {
		if !p.cur.addIter(a, from, low, iter) {
			p.handOff(d)
			p.cur.addIter(a, from, low, iter)
		}
		return
	}
	if f.batched {
		b := d.localBatch()
		if !b.addIter(a, from, low, iter) {
			d.replayLocal()
			b.addIter(a, from, low, iter)
		}
		return
	}
	var v [maxIter]int32
	n := narrowIter(&v, iter)
	d.logIter(a, from, low, v[:n])
}

// addIter adds an IterLogger call to the batch if it has room.
func (b *batch) addIter(a machine.Agent, from, low int64, iter []int64) bool {
	ni := min(len(iter), maxIter)
	if len(b.Recs) == cap(b.Recs) || len(b.notes) == cap(b.notes) || len(b.iter)+ni > cap(b.iter) {
		return false
	}
	b.Recs = append(b.Recs, item{Tag: tagNote, NIter: uint8(ni)})
	b.notes = append(b.notes, iterNote{from: from, low: low, agent: a})
	b.putIter(iter)
	return true
}

// replayNote logs the batch's note item it; iter0 and note0 are where its
// vector and note are, and move past them.
func (d *Detector) replayNote(b *batch, it *item, iter0, note0 *int) {
	nt := &b.notes[*note0]
	i0 := *iter0
	*iter0 += int(it.NIter)
	*note0++
	d.logIter(nt.agent, nt.from, nt.low, b.iter[i0:*iter0])
}

// logIter enters core a's vector v (as rec keeps vectors) for its ops
// numbered from on, and forgets the entries that cover only numbers below
// low.
func (d *Detector) logIter(a machine.Agent, from, low int64, v []int32) {
	if a.Core < 0 {
		return
	}
	l := d.iterIdx.get(a.Rank, int(a.Core))
	if l == nil {
		l = &iterLog{}
		d.ilog = append(d.ilog, l)
		*d.iterIdx.at(a.Rank, int(a.Core)) = l
	}
	if checkShortcuts && len(l.ents) > 0 && l.ents[len(l.ents)-1].from != l.last {
		panic(fmt.Sprintf("hazard: core %d/%d's iteration log says its newest entry starts at %d, it starts at %d", a.Rank, a.Core, l.last, l.ents[len(l.ents)-1].from))
	}
	switch last := len(l.ents) - 1; {
	case last >= l.head && from > l.last:
		l.ents = append(l.ents, iterEnt{})
	case last >= l.head && from == l.last:
		// No op took the number since: the vector moved again first.
	default:
		// The first entry, or the block runs on another physical core,
		// whose numbers are lower: the earlier entries are done with, and
		// so are the agents' copies (agentIter).
		l.base += int64(len(l.ents))
		l.ents, l.head = append(l.ents[:0], iterEnt{}), 0
		if c := d.coreIdx.get(a.Rank, int(a.Core)); c > 0 {
			for _, p := range d.cores[c-1].pipes {
				if p >= 0 && int(p) < len(d.ailog) {
					d.ailog[p].until = 0
				}
			}
		}
	}
	e := &l.ents[len(l.ents)-1]
	e.from, e.iter, e.n = from, [maxIter]int32{}, uint8(len(v))
	l.last = from
	for i, x := range v[:min(len(v), maxIter)] {
		e.iter[i] = x
	}
	// Only every eighth entry says low (the others 0, below every entry's
	// from): the others skip the read of the oldest entries, a line no
	// other lookup touches.
	for low > 0 && l.head+1 < len(l.ents) && l.ents[l.head+1].from <= low {
		l.head++
	}
	if l.head >= 32 && 2*l.head >= len(l.ents) {
		k := copy(l.ents, l.ents[l.head:])
		l.base += int64(l.head)
		l.ents, l.head = l.ents[:k], 0
	}
}

// iterOf sets r's iteration vector to that of op number k of agent a's
// core from the core's log, and reports whether the core has one (only
// when the machine keeps the log, machine.IterLogger, and then every
// numbered op of a core pipe is in it). The agent's last entry, or one
// after it, is the common answer (agentIter); iterSeek finds any other.
func (d *Detector) iterOf(a int32, k int64, r *rec) bool {
	if uint32(a) >= uint32(len(d.ailog)) {
		return d.iterAttach(a, k, r)
	}
	ai := &d.ailog[a]
	if k >= ai.from && k < ai.until {
		r.iter, r.niter = ai.iter, ai.n
		return true
	}
	l := ai.log
	if l == nil {
		return d.iterAttach(a, k, r)
	}
	ents := l.ents
	// The entry at ai.at starts at ai.from while it lives (entries move
	// only with base, and one rewritten in place keeps its from): the
	// copy's from spares a read of the old entry, a line the step to the
	// next entry does not otherwise touch.
	if i := ai.at - l.base; i >= int64(l.head) && i < int64(len(ents)) && ai.from <= k {
		if checkShortcuts && ents[i].from != ai.from {
			panic(fmt.Sprintf("hazard: agent %d's iteration copy starts at %d, its log entry %d at %d", a, ai.from, i, ents[i].from))
		}
		for i+1 < int64(len(ents)) && ents[i+1].from <= k {
			i++
		}
		d.iterHit(ai, l, int(i), k, r)
		return true
	}
	return d.iterSeek(ai, l, k, r)
}

// iterHit gives r the vector of entry i of log l, which holds op k, and
// makes it agent ai's, copy and all.
func (d *Detector) iterHit(ai *agentIter, l *iterLog, i int, k int64, r *rec) {
	e := &l.ents[i]
	r.iter, r.niter = e.iter, e.n
	ai.at = l.base + int64(i)
	ai.iter, ai.n, ai.from = e.iter, e.n, e.from
	if i+1 < len(l.ents) {
		ai.until = l.ents[i+1].from
	} else {
		ai.until = k + 1
	}
}

// iterAttach is iterOf for an agent not yet placed in its core's log.
func (d *Detector) iterAttach(a int32, k int64, r *rec) bool {
	if len(d.ilog) == 0 {
		return false // the machine sends vectors on the events
	}
	if int(a) >= len(d.ailog) {
		d.ailog = append(d.ailog, make([]agentIter, int(a)+1-len(d.ailog))...)
	}
	ai := &d.ailog[a]
	ag := &d.agents[a]
	if ai.log = d.iterIdx.get(ag.rank, int(ag.core)); ai.log == nil {
		return false
	}
	return d.iterSeek(ai, ai.log, k, r)
}

// iterSeek finds op k's entry in log l from agent ai's last one, either
// way, and makes it ai's.
func (d *Detector) iterSeek(ai *agentIter, l *iterLog, k int64, r *rec) bool {
	if l.head == len(l.ents) {
		return false
	}
	i := int(min(max(ai.at-l.base, int64(l.head)), int64(len(l.ents)-1)))
	for i+1 < len(l.ents) && l.ents[i+1].from <= k {
		i++
	}
	for l.ents[i].from > k {
		if i == l.head {
			d.iterMisses++ // never, by the machine's low (TestIterLog)
			return false
		}
		i--
	}
	d.iterHit(ai, l, i, k, r)
	return true
}
