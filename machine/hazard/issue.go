package hazard

import (
	"fmt"
	"slices"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
)

// ---- issue ----------------------------------------------------------------

func isComposite(op *asm.COp) bool {
	return op != nil && op.Info != nil && op.Info.Pipe == asm.PipeS && op.Info.Family == asm.FamComm
}

// issue records EvIssue of op into pipe target's queue by agent's core; n
// is the machine's number for the issue, 0 if none.
func (d *Detector) issue(e *machine.Event) {
	agent, target, op, n := e.Agent, e.Target, e.Op, e.Issue
	if agent.Core < 0 {
		return
	}
	if e.Word == machine.WordFFTSSet {
		// Sent for the issue order alone (IssueFilter): the set's own
		// event (crossSet) is its edge.
		d.setIssued(e)
		return
	}
	s := d.agent(machine.Agent{Rank: agent.Rank, Core: agent.Core, Pipe: asm.PipeS})
	d.enter(s)
	cs := &d.cores[d.agents[s].coreIdx]
	cs.sawIssue = true
	cs.serial++
	if n > 0 {
		// Numbered: the intended order is the machine's count, which
		// includes the ops whose EvIssue the detector never sees.
		cs.serial = max(cs.serial, n)
	}
	comp := isComposite(op)
	if comp {
		// A composite's own number is no pipe's op: its steps have theirs.
		d.sawIssue(d.agents[s].coreIdx, n)
	}
	if n > 0 && isAsyncCopy(op) {
		d.copyIssued(d.agents[s].coreIdx, n)
	}
	snap, id := d.issueSnapshot(s)
	p := pending{
		op: op, target: target, serial: cs.serial * 2,
		clock: snap, snapID: id, scalar: s, epoch: d.agents[s].n, composite: comp,
	}
	if comp {
		for i := range cs.comp {
			if cs.comp[i].op == op {
				d.putBuf(cs.comp[i].steps)
				cs.comp = slices.Delete(cs.comp, i, i+1)
				break
			}
		}
		if len(cs.comp) >= maxPending {
			d.putBuf(cs.comp[0].steps)
			cs.comp = slices.Delete(cs.comp, 0, 1)
		}
		cs.comp = append(cs.comp, p)
		return
	}
	if len(cs.pending) >= maxPending {
		d.dropPending(cs, 0)
	}
	cs.pending = append(cs.pending, p)
}

func (d *Detector) dropPending(cs *coreState, i int) {
	d.putBuf(cs.pending[i].steps)
	cs.pending = slices.Delete(cs.pending, i, i+1)
}

// findPending returns core cs's pending entry for op, composite or the
// oldest ordinary one, and the latter's index (-1 for a composite).
func findPending(cs *coreState, op *asm.COp) (*pending, int) {
	for i := range cs.comp {
		if cs.comp[i].op == op {
			return &cs.comp[i], -1
		}
	}
	for i := range cs.pending {
		if cs.pending[i].op == op {
			return &cs.pending[i], i
		}
	}
	return nil, -1
}

// takeIssueOf is takeIssue for event e: by the issue number the machine
// gave the op when it carries one (the log of the scalar's states, below),
// else by matching EvIssue events. A composite's steps are numbered too;
// they still chain through the composite's EvIssue entry (comp).
func (d *Detector) takeIssueOf(a int32, e *machine.Event, step bool) (int64, *pending) {
	ag := &d.agents[a]
	if c := ag.coreIdx; e.Issue > 0 && ag.kind == akPipe &&
		(uint32(c) >= uint32(len(d.seen)) || d.seen[c].gen != d.gen || !d.seen[c].quick(e.Issue)) {
		d.sawIssue(c, e.Issue)
	}
	if e.Issue > 0 {
		c := ag.coreIdx
		if c >= 0 && !step && !isComposite(e.Op) && d.sameIssueState(ag, c, e.Issue) {
			if checkLocalJoins {
				d.checkHolds(a, &d.agents[d.cores[c].scalar].snap)
			}
			return 2 * e.Issue, nil
		}
		if c < 0 {
			if ag.kind != akSDMA {
				return 0, nil
			}
			return d.sdmaIssue(a, e, step) // as many lines as before: default.pgo
		}
		if st := d.issueState(a, c, e.Issue); st != nil {
			d.joinState(a, c, st)
			if step || isComposite(e.Op) {
				cs := &d.cores[c]
				for i := range cs.comp {
					if p := &cs.comp[i]; p.op == e.Op {
						d.acquire(a, &p.steps)
						return p.serial, p
					}
				}
			}
			return 2 * e.Issue, nil
		}
	}
	if ag.kind == akScalar && e.Issued > 0 {
		cs := &d.cores[ag.coreIdx]
		cs.serial = max(cs.serial, e.Issued)
	}
	return d.takeIssue(a, e.Op, step)
}

// sdmaIssue is takeIssueOf for SDMA agent a's copy e: the state of its
// issue on its issuing core, and its own issue's serial, not the composite
// entry's, which the core's next issue of the op replaces while the copy
// may still be in flight (the copy then took the later trip's place in
// intended order, and its release). An async copy has no steps to chain.
func (d *Detector) sdmaIssue(a int32, e *machine.Event, step bool) (int64, *pending) {
	c := d.core(d.agents[a].rank, d.agents[a].core) // the issuing core (sdmaAgent)
	if st := d.issueState(a, c, e.Issue); st != nil {
		d.joinState(a, c, st)
		return 2 * e.Issue, nil
	}
	return d.takeIssue(a, e.Op, step)
}

// sameIssueState is takeIssueOf's common case, decided without building
// the state: op e of agent ag, on ag's core c, was issued after the
// scalar's last event (its state is the current one), the scalar's current
// snapshot is the one ag joined last, and ag's lc already holds the
// scalar's epoch. Joining that state changes nothing, so nothing more is
// read: on the 8-rank allgather_gemm nearly every op of a pipe is such.
// A composite op chains through its entry and takes the slow path (its
// caller's test, which keeps this function small enough to inline: the
// call was about 15 of its 46 instructions at every flag event).
func (d *Detector) sameIssueState(ag *agentState, c int32, issue int64) bool {
	cs := &d.cores[c]
	s := cs.scalar
	if issue <= cs.marked || s < 0 {
		return false
	}
	sa := &d.agents[s]
	return sa.gen == d.gen && sa.snapID != 0 && sa.snapVer == sa.ver &&
		ag.lastSnap == sa.snapID && ag.lc[asm.PipeS] >= sa.n
}

// issueState is a scalar's state as the ops it issued up to number to saw
// it: its clock (a shared snapshot) and its own op count.
type issueState struct {
	to     int64
	clock  vclock
	snapID uint64
	epoch  uint32
	gen    uint32
	rver   uint64 // the scalar's rver+1 when clock was taken
}

// maxLog bounds a core's log of scalar states; an op older than the log
// takes the oldest state kept, which is later than its own: that can hide a
// race, never invent one.
const maxLog = 256

// mark logs the scalar's state before a scalar event of core c changes it:
// the ops numbered up to issued (those issued before the event) saw it. The
// scalar changes state only at its own events, so this replaces an EvIssue
// per op.
func (d *Detector) mark(c int32, issued int64) {
	cs := &d.cores[c]
	if issued <= cs.marked {
		return
	}
	s := d.scalarOf(c)
	d.enter(s)
	snap, id := d.issueSnapshot(s)
	ep := d.agents[s].n
	cs = &d.cores[c]
	cs.marked = issued
	if n := len(cs.log); n > 0 {
		if l := &cs.log[n-1]; l.snapID == id && l.epoch == ep && l.gen == d.gen {
			l.to, cs.logTo[n-1] = issued, issued
			return
		}
	}
	if len(cs.log) >= maxLog {
		k := copy(cs.log, cs.log[maxLog/2:])
		clear(cs.log[k:])
		cs.log = cs.log[:k]
		cs.logTo = cs.logTo[:copy(cs.logTo, cs.logTo[maxLog/2:])]
	}
	if len(cs.log) == cap(cs.log) {
		cs.growLog()
	}
	cs.log = append(cs.log, issueState{to: issued, clock: snap, snapID: id, epoch: ep, gen: d.gen, rver: d.agents[s].snapRver})
	cs.logTo = append(cs.logTo, issued)
}

// logStart is the room a core's log of scalar states starts with.
const logStart = 32

// growLog gives core cs's full log more room: logStart entries, then
// maxLog at once, which it keeps (mark compacts it in place). Doubling
// from one left seven smaller arrays behind for each core whose log
// filled (12.6 MB allocated on the 8-rank allgather_gemm lint, 20 MB at
// 384 ranks of ring_final, about half of it garbage).
func (cs *coreState) growLog() {
	n := logStart
	if cap(cs.log) >= logStart {
		n = maxLog
	}
	log := make([]issueState, len(cs.log), n)
	copy(log, cs.log)
	to := make([]int64, len(cs.logTo), n)
	copy(to, cs.logTo)
	cs.log, cs.logTo = log, to
}

// issueState returns the scalar state op number k of core c was issued in,
// for agent a, nil if none: an entry of the core's log, or the current
// state in the detector's scratch (stNow), valid until the next call. By
// pointer: the 72-byte state went by value into a result and an argument,
// and was copied about five times at each of the ops issued before their
// scalar's last event (one pipe event in five on the 8-rank allgather_gemm).
func (d *Detector) issueState(a, c int32, k int64) *issueState {
	cs := &d.cores[c]
	if k > cs.marked {
		// No scalar event since the issue: the state is the current one.
		// (Its own component needs no raise: joinState raises it from epoch.)
		s := d.scalarOf(c)
		if d.agents[s].gen != d.gen {
			d.enter(s)
		}
		snap, id := d.issueSnapshot(s)
		d.stNow = issueState{to: k, clock: snap, snapID: id, epoch: d.agents[s].n, gen: d.gen, rver: d.agents[s].snapRver}
		return &d.stNow
	}
	if checkShortcuts {
		checkLogTo(cs)
	}
	var i int
	if uint32(a) < uint32(len(d.ailog)) && d.agents[a].coreIdx == c {
		i = d.logIndexFrom(&d.ailog[a], cs.logTo, k)
	} else {
		i = logIndex(cs.logTo, k)
	}
	if i == len(cs.log) || cs.log[i].gen != d.gen {
		return nil
	}
	return &cs.log[i]
}

// checkLogTo panics unless core cs's logTo holds its log's to, entry by
// entry (the self-checks).
func checkLogTo(cs *coreState) {
	if len(cs.logTo) != len(cs.log) {
		panic(fmt.Sprintf("hazard: a core's log of scalar states has %d entries, its numbers %d", len(cs.log), len(cs.logTo)))
	}
	for i := range cs.log {
		if cs.log[i].to != cs.logTo[i] {
			panic(fmt.Sprintf("hazard: a core's log entry %d ends at %d, its number says %d", i, cs.log[i].to, cs.logTo[i]))
		}
	}
}

// logIndex is the index of the first entry of a core's log whose ops reach
// number k (len(to) if none), by the entries' to (coreState.logTo), which
// only grow.
func logIndex(to []int64, k int64) int {
	i, j := 0, len(to)
	for i < j {
		h := int(uint(i+j) >> 1)
		if to[h] >= k {
			j = h
		} else {
			i = h + 1
		}
	}
	return i
}

// logIndexFrom is logIndex for an agent of the log's core, ai its place.
// One pipe's ops come in issue order, so the entry of its last answer, or
// one a step or two after it, is the common answer: the search read about
// six entries of 72 bytes, each a miss, for the ops issued before their
// scalar's last event (one in five of a pipe's ops on the 8-rank
// allgather_gemm). The place is a hint: it is taken only when the entry
// before it ends below k, so the answer is logIndex's whatever the log did
// since (compacted, cleared at a run boundary).
func (d *Detector) logIndexFrom(ai *agentIter, to []int64, k int64) int {
	if h := int(ai.slog); h <= len(to) && (h == 0 || to[h-1] < k) {
		for i := h; i < len(to) && i < h+4; i++ {
			if to[i] >= k {
				ai.slog = uint16(i)
				return i
			}
		}
	}
	i := logIndex(to, k)
	ai.slog = uint16(i)
	return i
}

// joinState gives agent a the scalar state st of core c an op was issued in.
// Nothing it calls writes a core's log or the scratch st may be.
func (d *Detector) joinState(a, c int32, st *issueState) {
	if checkLocalJoins && d.agents[a].lastSnap == st.snapID {
		d.checkHolds(a, &st.clock)
	}
	if ag := &d.agents[a]; ag.lastSnap != st.snapID {
		was := ag.remote()
		switch {
		case ag.coreIdx == c && ag.lastSnapRver == st.rver:
			// The scalar's components of other cores are those of the
			// snapshot joined last (its rver has not moved): only its
			// core's own can differ. On 8 ranks each new snapshot otherwise
			// joined ≈2 900 components into every pipe.
			d.joinLocal(a, c, &st.clock)
		case ag.coreIdx == c && was.within(knownRem(st.snapID)):
			// The pipe's news of other cores is an earlier snapshot's of
			// the same scalar, which this one contains.
			d.acquireAbove(a, c, &st.clock)
		default:
			d.acquire(a, &st.clock)
		}
		ag = &d.agents[a]
		ag.lastSnap, ag.lastSnapRver = st.snapID, st.rver
		if ag.coreIdx == c && ag.kind != akScalar {
			// The pipe's other-core part is now the snapshot's if it held
			// an earlier snapshot's or none. (An SDMA agent is of no
			// core: coreIdx -1.)
			ag.setRemote(was.joined(knownRem(st.snapID)))
		}
	}
	s := d.cores[c].scalar
	if ag := &d.agents[a]; ag.coreIdx != c {
		d.raiseIn(a, s, st.epoch)
	} else if ag.lc[asm.PipeS] < st.epoch {
		// raiseIn's own test (mate): a is of c, whose scalar's slot is S.
		// Most of these states are snapshots a holds, and a look at lc
		// is all the raise does.
		d.raiseLocal(a, s, asm.PipeS, st.epoch)
	}
	if checkLocalJoins {
		d.checkEpoch(a, s, st.epoch)
	}
}

// checkEpoch panics unless agent a's clock holds scalar s's component at
// epoch ep at least, as joinState leaves it (checkLocalJoins): no finding
// of the shipped programs depends on that raise, so a missed one would
// otherwise pass their tests.
func (d *Detector) checkEpoch(a, s int32, ep uint32) {
	localJoins++
	if got := get(d.exact(a), d.pos(s)); got < ep {
		panic(fmt.Sprintf("hazard: agent %d holds its scalar's component at %d after joining an issue state of epoch %d", a, got, ep))
	}
}

// takeIssue joins the issue-time clock of op into agent a and returns the
// op's intended-order serial. A composite op's entry stays until it is issued
// again so that each of its steps sees it; it is returned for step chaining.
func (d *Detector) takeIssue(a int32, op *asm.COp, step bool) (int64, *pending) {
	ag := &d.agents[a]
	if ag.coreIdx < 0 {
		if c := d.orderCore(a); ag.kind == akSDMA && op != nil && c >= 0 {
			// An SDMA copy the machine did not number: the pending
			// entry of its op on its issuing core, whose session's
			// copies the agent runs (sdmaAgent); another core's entry
			// of the op is another session's copy.
			//
			// (As many lines as the loop over the rank's cores that
			// this replaced: default.pgo names takeIssue's call sites
			// by their line in it.)
			if p, _ := findPending(&d.cores[c], op); p != nil {
				d.joinIssue(a, p)
				return p.serial, p
			}
		}
		return 0, nil
	}
	cs := &d.cores[ag.coreIdx]
	if op != nil {
		if p, i := findPending(cs, op); p != nil {
			d.joinIssue(a, p)
			serial := p.serial
			if p.composite || step {
				return serial, p
			}
			// Queues are in order: older entries for this pipe already ran.
			tgt := p.target
			d.dropPending(cs, i)
			for j := i - 1; j >= 0; j-- {
				if cs.pending[j].target == tgt {
					d.dropPending(cs, j)
				}
			}
			return serial, nil
		}
	}
	if ag.kind == akScalar {
		return cs.serial*2 + 1, nil
	}
	if step || isComposite(op) || !cs.sawIssue {
		// A blocking composite run by the scalar itself: the scalar's
		// current clock is its clock at issue. Without EvIssue events the
		// same approximation serves every op; it can miss a race where the
		// scalar synchronised after issuing the op, never invent one.
		if s := cs.scalar; s >= 0 {
			d.enter(s)
			d.flush(s)
			d.acquire(a, &d.agents[s].clock)
			d.raiseIn(a, s, d.agents[s].n)
		}
	}
	return cs.serial * 2, nil
}

// stepIndex interns a step name (a handful per machine).
func (d *Detector) stepIndex(s string) uint8 {
	for i, x := range d.steps {
		if x == s {
			return uint8(i)
		}
	}
	if len(d.steps) == 0 {
		d.steps = append(d.steps, "")
	}
	if len(d.steps) >= 255 {
		return 255 // saturated: later steps share a name, in reports only
	}
	d.steps = append(d.steps, s)
	return uint8(len(d.steps) - 1)
}

func (d *Detector) mkrec(a int32, e *machine.Event, serial int64) rec {
	ag := &d.agents[a]
	r := rec{agent: a, epoch: ag.n, gen: d.gen, serial: serial, op: e.Op, gap: ag.gaps}
	if e.Step != "" {
		r.step = d.stepIndex(e.Step)
	}
	// A core pipe's numbered op has its vector in the scalar's log, when
	// the machine keeps one (iterlog.go), and none on the event.
	if e.Issue > 0 && ag.kind == akPipe && d.iterOf(a, e.Issue, &r) {
		return r
	}
	r.setIter(e.Iter)
	return r
}
