package hazard

import (
	"fmt"
	"slices"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
)

// ---- flags ----------------------------------------------------------------

func (d *Detector) chanOf(c int32, f machine.Flag) *flagChan {
	// The core's table of recent channels by hash (chanSlot) holds nearly
	// every lookup: one line of the core, and the channel's first line,
	// which the caller reads next anyway. The keys' search and the list
	// were two lines more at each of the millions of flag events.
	k := chanKey(f)
	cs := &d.cores[c]
	if ch := cs.chanHash[chanSlot(k)]; ch != nil && ch.key() == k {
		return ch
	}
	return d.newChan(cs, f, k)
}

// key is the channel's chanKey.
func (ch *flagChan) key() uint32 { return chanKey(machine.Flag{Src: ch.src, Dst: ch.dst, ID: ch.id}) }

// chanSlot is key k's slot in coreState.chanHash.
func chanSlot(k uint32) uint32 { return k * 2654435761 >> (32 - chanHashBits) }

// chanHashBits sizes coreState.chanHash: 16 slots, two lines.
const chanHashBits = 4

// newChan is chanOf for a channel not in its slot of the core's table:
// found in the list (or made), it takes the slot.
func (d *Detector) newChan(cs *coreState, f machine.Flag, k uint32) *flagChan {
	// The keys sit in their own small array, so a search reads a line or
	// two, not every channel it passes.
	for i, x := range cs.chanKeys {
		if x == k {
			ch := cs.chans[i]
			cs.chanHash[chanSlot(k)] = ch
			return ch
		}
	}
	ch := &flagChan{src: f.Src, dst: f.Dst, id: f.ID}
	cs.chans = append(cs.chans, ch)
	cs.chanKeys = append(cs.chanKeys, k)
	cs.chanHash[chanSlot(k)] = ch
	return ch
}

// useChan records that core c's program sets or waits on channel ch (flag
// f), once per channel: the core's used table is a line the flag events
// need not touch again.
func (d *Detector) useChan(c int32, ch *flagChan, f machine.Flag) {
	if !ch.used {
		ch.used = true
		d.cores[c].used[f.Src][f.Dst] |= 1 << f.ID
	}
}

// chanKey packs a flag's pipes and id into a key: two flags with one key
// are one channel.
func chanKey(f machine.Flag) uint32 {
	return uint32(f.Src)<<16 | uint32(f.Dst)<<8 | uint32(uint8(f.ID))
}

func validPipe(p asm.Pipe) bool { return p > asm.PipeInvalid && p < asm.PipeALL }

func (d *Detector) flagSet(e *machine.Event) {
	a, serial, ok := d.syncEvent(e)
	if !ok {
		return
	}
	r := d.mkrec(a, e, serial)
	c := d.agents[a].coreIdx
	f := e.Flag
	if !validPipe(f.Src) || !validPipe(f.Dst) || f.ID < 0 || f.ID >= numFlagIDs {
		d.single(KindBadEventID, SevError, &r, fmt.Sprintf("set_flag %s, %s, %d: event ids are 0-%d and pipes must be real pipes", f.Src, f.Dst, f.ID, numFlagIDs-1),
			fmt.Sprintf("use an id in 0-%d for %s->%s", numFlagIDs-1, f.Src, f.Dst))
		return
	}
	ch := d.chanOf(c, f)
	d.useChan(c, ch, f)
	ag := &d.agents[a]
	if ch.hasLast {
		if !d.quietSet(ch, a) {
			d.doubleSet(ch, &r, a)
		} else if checkShortcuts {
			d.checkQuiet(ch, a)
		}
	}
	switch {
	case ch.set:
		// Queued behind the pending set: its own wait acquires it.
		ch.queue = append(ch.queue, queuedSet{clock: d.release(a, vclock{}), rem: ag.remote()})
		ch.last = r
		return
	case ch.snapID != 0 && ch.snapGen == d.gen && ch.snapRver == ag.rver:
		// Only this core's components can have moved since the copy, and
		// they go to loc below. Whatever the copy's length: a component
		// past its end is 0 in the copy and, unless it is the core's
		// own, was 0 in the setter then (the copy was its clock or a
		// snapshot with its other-core components) and still is (rver).
		// The test of the lengths, from when a set wrote the core's
		// components into the copy itself, sent 162 000 of 188 000 sets
		// of the 8-rank allgather_gemm at M=1024 to a new full copy: a
		// pipe's clock reaches its core's positions (raiseLocal), the
		// scalar's snapshot it shares often does not. checkSetCopy holds
		// the copy to the setter's release.
		if r := ag.remote(); r.known() {
			ch.rem = r // the same part as the copy's, maybe by a later name
		}
	default:
		// A full copy. The core's components go to loc below, as a later
		// set's do: raising the setter's own in the copy would copy the
		// block the copy shares with the setter, four times a round at
		// every rank of a ring.
		if ch.shared {
			ch.clock, ch.shared = vclock{}, false
		}
		if snap, ok := d.remoteSnap(c, ag.remote()); ok {
			// The setter's other-core components are those of its
			// scalar's current issue snapshot, and loc holds the rest:
			// the snapshot, never written, serves as the copy. Copying
			// the setter's table instead cost one pointer per 32 agents
			// at every set after news from another core, and froze the
			// setter, whose next raise then copied a block.
			ch.clock, ch.shared = snap, true
		} else {
			d.flush(a)
			ch.clock.copyFrom(&ag.clock)
		}
		d.snapSeq++
		ch.snapID, ch.snapRver, ch.snapGen = d.snapSeq, ag.rver, d.gen
		ch.rem = ag.remote()
	}
	cs := &d.cores[c]
	ch.loc = ag.lc
	if s := ag.pipe; ch.loc[s] < ag.n {
		ch.loc[s] = ag.n
	}
	ch.locMask = cs.mask
	ch.locOnly = true
	ch.set, ch.last, ch.hasLast = true, r, true
	if checkLocalJoins {
		d.checkSetCopy(ch, a)
	}
}

// checkSetCopy panics unless channel ch, just set by agent a, holds a's
// release in every component: its copy with the local part in loc
// (checkLocalJoins).
func (d *Detector) checkSetCopy(ch *flagChan, a int32) {
	localJoins++
	want := d.exact(a)
	raise(&want, d.pos(a), d.agents[a].n)
	cp := ch.clock // cloning freezes the clone's source: not the channel's
	got := cp.clone()
	ch.local(&d.cores[d.agents[a].coreIdx]).into(&got, &d.cores[d.agents[a].coreIdx])
	for i := range max(got.size(), want.size()) {
		if g, w := get(got, i), get(want, i); g != w {
			panic(fmt.Sprintf("hazard: a set of %s->%s id %d holds %d at component %d, its setter's release %d", ch.src, ch.dst, ch.id, g, i, w))
		}
	}
}

// remoteSnap returns the issue snapshot of core c's scalar that other-core
// part r names, when it is the scalar's current one (the only one kept
// whole).
func (d *Detector) remoteSnap(c int32, r remPart) (vclock, bool) {
	s := d.cores[c].scalar
	if !r.known() || r.snap() == 0 || s < 0 {
		return vclock{}, false
	}
	sa := &d.agents[s]
	if sa.snapID != r.snap() || sa.gen != d.gen {
		return vclock{}, false
	}
	return sa.snap, true
}

// doubleSet decides whether set r (agent a), the (k+1)-th of channel ch,
// can meet the k-th at the one-bit flag, from ordering alone: the sets and
// waits of a channel pair in program order (the k-th wait consumes the k-th
// set, pipes.FlagBits), so the verdict reads clocks, never which wait this
// run's timing let a set meet.
//
//   - error: r is not ordered after W(k-1), the wait that consumed the set
//     before the previous one. Nothing the consumer does holds the producer
//     back (a missing reverse flag): the producer can run any number of
//     sets ahead, and on the timings where the consumer is slower one set
//     is lost (FFN M1, kernels.md §2(d)).
//   - note: r is ordered after W(k-1) but not after W(k). The producer is
//     held to one set of slack: the set is lost only if the consumer, with
//     W(k) already queued, reaches it later than the producer finishes the
//     work between its two sets. pto-isa's own double-buffered GEMMs
//     (gemm_performance, allgather_gemm: one MTE2->MTE1 id for both L1
//     buffers) rely on exactly this, and CANN forbids only two sets with no
//     wait between them in program order, which the static pass checks.
//
// The first two sets of a channel (no W(k-1)) are held to the note rule.
func (d *Detector) doubleSet(ch *flagChan, r *rec, a int32) {
	sev, ok := d.doubleSetSev(ch, a)
	if !ok {
		return
	}
	d.reportDoubleSet(ch, r, sev)
}

// doubleSetSev is doubleSet's verdict for a set of agent a on channel ch:
// the severity, and whether there is anything to report.
func (d *Detector) doubleSetSev(ch *flagChan, a int32) (Severity, bool) {
	pending := len(ch.queue)
	if ch.set {
		pending++
	}
	// Which waits have run depends on timing; the verdict must not. A wait
	// that has not run yet is not ordered before r; one that has is judged
	// by the clocks. With p sets pending, the latest consumed wait (wait) is
	// W(k-p) and the one before it (wait0) W(k-p-1).
	var errWait, noteWait *waitMark // W(k-1) and W(k), when they have run
	switch pending {
	case 0:
		if ch.wait0.ok {
			errWait = &ch.wait0
		}
		if ch.wait.ok {
			noteWait = &ch.wait
		}
	case 1:
		if ch.wait.ok {
			errWait = &ch.wait
		}
	}
	switch {
	case pending >= 2 || (errWait != nil && !d.waitedFor(errWait, a)):
		// W(k-1) has not run yet, or ran unordered with r.
		return SevError, true
	case pending == 1 || (noteWait != nil && !d.waitedFor(noteWait, a)):
		// W(k) has not run yet, or ran unordered with r.
		return SevNote, true
	}
	return 0, false
}

// reportDoubleSet reports set r, the channel's next after ch.last, at
// severity sev, once per pair of sites (the memo counts the rest).
func (d *Detector) reportDoubleSet(ch *flagChan, r *rec, sev Severity) {
	m := ch.ds
	if m != nil && m.f != nil && m.first == ch.last.op && m.second == r.op && sev <= m.sev {
		m.f.Count++
		return
	}
	if m == nil {
		m = &dsMemo{}
		ch.ds = m
	}
	src, dst, id := ch.src, ch.dst, ch.id
	m.first, m.second, m.sev = ch.last.op, r.op, sev
	if sev == SevError {
		m.f = d.pair(KindDoubleSet, SevError, &ch.last, r,
			fmt.Sprintf("set_flag %s, %s, %d can fire again while the flag is still set: nothing %s does orders it after the wait_flag that consumed the set before the previous one, so %s can run sets ahead of %s and, the flag being one bit, on some timing a set is lost and a wait_flag hangs or passes early", src, dst, id, dst, src, dst),
			fmt.Sprintf("hold %s back with a reverse flag: `set_flag %s, %s, N` after %s's `wait_flag %s, %s, %d` (and its use of the data), `wait_flag %s, %s, N` before this set; or use a different event id for the second", src, dst, src, dst, src, dst, id, dst, src))
		return
	}
	m.f = d.pair(KindDoubleSet, SevNote, &ch.last, r,
		fmt.Sprintf("set_flag %s, %s, %d may fire again before %s's wait_flag consumes the previous set: %s is held back only up to the wait before it, so the flag (one bit) relies on %s reaching its queued wait before %s reaches this set", src, dst, id, dst, src, dst, src),
		fmt.Sprintf("to remove the slack, order this set after `wait_flag %s, %s, %d` (a reverse flag from %s), or alternate two event ids", src, dst, id, dst))
}

// quietSet is doubleSet's common verdict, nothing to report, decided
// inline: no set pending and setter a ordered after the channel's last two
// waits (each that ran in this run generation). On the 8-rank
// allgather_gemm nearly every set of the GEMM's hand-offs is such, and
// doubleSet's call and switches cost a set about 70 instructions. Under
// checkShortcuts doubleSet's own verdict is checked to agree (checkQuiet).
func (d *Detector) quietSet(ch *flagChan, a int32) bool {
	if ch.set || len(ch.queue) > 0 {
		return false
	}
	lc := &d.agents[a].lc
	return (!ch.wait.ok || ch.wait.gen != d.gen || lc[ch.wait.slot] >= ch.wait.epoch) &&
		(!ch.wait0.ok || ch.wait0.gen != d.gen || lc[ch.wait0.slot] >= ch.wait0.epoch)
}

// checkQuiet panics unless doubleSet finds nothing to report for a set of
// agent a on channel ch (quietSet's self-check).
func (d *Detector) checkQuiet(ch *flagChan, a int32) {
	shortcuts++
	if sev, ok := d.doubleSetSev(ch, a); ok {
		panic(fmt.Sprintf("hazard: a set of %s->%s id %d skipped doubleSet, which reports a %v", ch.src, ch.dst, ch.id, sev))
	}
}

// waitedFor is hb for wait w of a channel of agent a's core: whether a's
// next op happens after it.
func (d *Detector) waitedFor(w *waitMark, a int32) bool {
	return w.gen != d.gen || d.agents[a].lc[w.slot] >= w.epoch
}

// listLocals refreshes cs.locals after an agent of the core appeared: flag
// sets and local joins walk the list millions of times, agents appear a
// few times per core.
func (cs *coreState) listLocals() {
	n := 0
	if cs.scalar >= 0 {
		cs.locals[n], cs.slots[n] = cs.scalar, uint8(asm.PipeS)
		n++
	}
	for pp, p := range cs.pipes {
		if p >= 0 && p != cs.scalar {
			cs.locals[n], cs.slots[n] = p, uint8(pp)
			n++
		}
	}
	cs.nlocals = uint8(n)
	cs.mask = 0
	for _, sl := range cs.slots[:n] {
		cs.mask |= 1 << sl
	}
}

func (d *Detector) flagWait(e *machine.Event) {
	a, _, ok := d.syncEvent(e)
	if !ok {
		return
	}
	f := e.Flag
	if !validPipe(f.Src) || !validPipe(f.Dst) || f.ID < 0 || f.ID >= numFlagIDs {
		r := d.mkrec(a, e, 0)
		d.single(KindBadEventID, SevError, &r, fmt.Sprintf("wait_flag %s, %s, %d: event ids are 0-%d", f.Src, f.Dst, f.ID, numFlagIDs-1), "")
		return
	}
	c := d.agents[a].coreIdx
	ch := d.chanOf(c, f)
	d.useChan(c, ch, f)
	if ch.set {
		w := d.agents[a].remote()
		switch {
		case ch.snapID != 0 && ch.seenID == ch.snapID && ch.snapGen == d.gen && d.agents[a].gen == d.gen,
			// The other-core part is the copy this pipe joined last time.
			ch.rem.within(w):
			// The setter's news of other cores came from a snapshot of
			// the scalar no later than the one this pipe has.
			if cs := &d.cores[c]; !checkLocalJoins && ch.locOnly && ch.locMask&cs.mask == cs.mask {
				d.raiseLocals(a, cs, &ch.loc)
			} else {
				d.waitLocal(a, c, ch)
			}
		default:
			ch.settle(&d.cores[c])
			d.acquire(a, &ch.clock)
			ch.seenID = ch.snapID
			if ag := &d.agents[a]; ag.kind != akScalar {
				ag.setRemote(w.joined(ch.rem))
			}
		}
	}
	// The wait is an event of its own on its pipe, so that a later set
	// knows whether it saw this wait or only what came before it.
	ag := &d.agents[a]
	ag.n++
	if ag.kind == akScalar {
		d.raiseOwn(a)
	}
	ch.wait0 = ch.wait
	ch.wait = waitMark{epoch: ag.n, gen: d.gen, slot: uint8(ag.pipe), ok: true}
	ch.set = false
	if len(ch.queue) > 0 {
		q := ch.queue[0]
		ch.queue = slices.Delete(ch.queue, 0, 1)
		ch.locOnly, ch.shared = false, false
		ch.clock = q.clock
		ch.snapID = 0 // a release copy no source version names
		ch.rem = q.rem
		ch.set = true
	}
}

// waitLocal is the join of a wait whose waiter a holds channel ch's
// other-core part, when ch's loc does not hold every component of core
// c's (a queued set took the set's place): only c's own components move,
// by joinLocalPart. A channel whose set left them all in loc, every set
// does but such, raises a's lc from loc in one pass, which flagWait does
// itself: joinLocalPart's checks and call cost a wait about 70
// instructions more, and a call of this function about 20.
func (d *Detector) waitLocal(a, c int32, ch *flagChan) {
	d.joinLocalPart(a, c, &ch.clock, ch.local(&d.cores[c]))
}

func (d *Detector) barrier(e *machine.Event) {
	a, _, ok := d.syncEvent(e)
	if !ok {
		return
	}
	c := d.agents[a].coreIdx
	if e.Target != asm.PipeALL {
		p := d.pipeOf(c, e.Target)
		if p < 0 {
			return
		}
		d.enter(p)
		if p != a {
			d.flush(a)
			d.acquire(p, &d.agents[a].clock)
		}
		d.raiseOwn(p)
		return
	}
	d.drainCore(c, vclock{})
}

// drainCore joins every stream of core c (and extra, if any) into its scalar
// and then into each of its pipes, each of which is then ordered after its
// own earlier ops: the effect of pipe_barrier(PIPE_ALL).
func (d *Detector) drainCore(c int32, extra vclock) {
	s := d.scalarOf(c)
	d.enter(s)
	cs := &d.cores[c]
	if cs.drainGen != d.gen {
		cs.drained, cs.fed, cs.drainGen = [asm.NumPipes]uint64{}, [asm.NumPipes]uint64{}, d.gen
	}
	if extra.size() == 0 && !noLocalDrain && d.drainLocal(s, cs) {
		return
	}
	// The core's pipes are its locals after the scalar (listLocals), in
	// the order of cs.pipes, without the slots no pipe fills.
	for k := 1; k < int(cs.nlocals); k++ {
		p, i := cs.locals[k], cs.slots[k]
		d.enter(p)
		d.joinAgent(s, p, c, &cs.drained[i])
		d.raiseIn(s, p, d.agents[p].n)
	}
	if extra.size() > 0 {
		// (A join of nothing changes nothing, but flushes the scalar.)
		d.acquire(s, &extra)
	}
	for k := 1; k < int(cs.nlocals); k++ {
		p, i := cs.locals[k], cs.slots[k]
		d.takeScalar(p, s, c, &cs.fed[i])
		d.raiseOwn(p)
	}
}

// drainLocal is drainCore (no extra) for a drain whose first half takes
// joinAgent's local paths: every pipe of core cs is in this run generation
// (its enter changes nothing) and the scalar s holds its other-core
// components. Then s takes the maximum of every lc and each pipe's op
// count in one raise, and each pipe takes s's lc in one more when it
// holds s's other-core components (takeScalar's fed; s's rver is
// unchanged by a local join), else takeScalar's copy. The general path
// spent about 1 900 instructions a drain at every pipe_barrier ALL of a
// ring (two a round) in four enters, three joinAgent and three takeScalar
// calls and their joins. It reports false, having changed nothing, when
// some pipe needs the general path.
func (d *Detector) drainLocal(s int32, cs *coreState) bool {
	sa := &d.agents[s]
	n := int(cs.nlocals)
	for k := 1; k < n; k++ {
		pa, i := &d.agents[cs.locals[k]], cs.slots[k]
		if pa.gen != d.gen || (cs.drained[i] != pa.rver+1 && !pa.remote().known()) {
			return false
		}
	}
	var want vclock
	if checkLocalJoins {
		want = d.drainWant(s, cs)
	}
	m := sa.lc
	for k := 1; k < n; k++ {
		pa, i := &d.agents[cs.locals[k]], cs.slots[k]
		for _, sl := range cs.slots[:n] {
			m[sl] = max(m[sl], pa.lc[sl])
		}
		m[i] = max(m[i], pa.n)
		cs.drained[i] = pa.rver + 1
	}
	d.raiseLocals(s, cs, &m)
	c := d.agents[s].coreIdx
	for k := 1; k < n; k++ {
		p, i := cs.locals[k], cs.slots[k]
		if cs.fed[i] == d.agents[s].rver+1 {
			d.raiseLocals(p, cs, &d.agents[s].lc)
		} else {
			d.takeScalar(p, s, c, &cs.fed[i])
		}
	}
	if checkLocalJoins {
		localDrains++
		for k := range n {
			localJoins++
			d.checkMirror(cs.locals[k])
			d.checkJoin(cs.locals[k], want)
		}
	}
	return true
}

// noLocalDrain turns drainLocal off, and localDrains counts the drains it
// took while checkLocalJoins is on (tests: TestLocalDrain).
var (
	noLocalDrain bool
	localDrains  int
)

// drainWant is what a drain of core cs (scalar s) leaves in each of its
// agents, by full joins: every clock of the core, each pipe's own
// component at its op count (the self-checks of drainLocal).
func (d *Detector) drainWant(s int32, cs *coreState) vclock {
	want := d.exact(s)
	for _, p := range cs.locals[1:cs.nlocals] {
		w := d.exact(p)
		join(&want, &w)
		raise(&want, d.pos(p), d.agents[p].n)
	}
	return want
}

// takeScalar joins scalar s's clock into pipe p of core c in the second
// half of a drain, where s holds at least p's clock in every component
// (joinAgent); seen is as for joinAgent. p's clock becomes a copy of s's, sharing its
// tree (one root table of pointers), instead of a join walking it. The
// pipe writes its own core's components in lc alone, so it copies
// nothing of the tree until news of other cores reaches it not through
// its scalar. The join walked every group of the clock and merged the
// core's block, at every pipe of every core twice a round of a ring.
func (d *Detector) takeScalar(p, s, c int32, seen *uint64) {
	sa := &d.agents[s]
	if *seen == sa.rver+1 {
		// p's other-core components are s's already.
		d.joinLocalPart(p, c, &sa.clock, localPart{vals: &sa.lc, mask: d.cores[c].mask})
		return
	}
	var want vclock
	if checkLocalJoins {
		want = d.exact(p)
		w := d.exact(s)
		join(&want, &w)
	}
	// Name the pipe's other-core part: the scalar's snapshot now, which
	// differs from the scalar's clock in the scalar's component alone.
	_, id := d.issueSnapshot(s)
	d.flush(s)
	sa, pa := &d.agents[s], &d.agents[p]
	pa.clock.copyFrom(&sa.clock)
	pa.lc, pa.dirty = sa.lc, false
	// Whether anything changed is not known without the walk: say it
	// did (a later flag set or drain then copies or joins a little more).
	pa.ver++
	pa.rver++
	pa.setRemote(knownRem(id))
	// The pipe now holds the snapshot (taken from, or no later than, the
	// clock it copied): its next op, issued in it, joins nothing
	// (joinState). Without this the first op of every pipe after the
	// drain joined it again, by acquireAbove's walk of the clock's
	// groups: once per pipe per round of a ring.
	pa.lastSnap, pa.lastSnapRver = id, sa.snapRver
	*seen = sa.rver + 1
	if checkLocalJoins {
		localJoins++
		d.checkJoin(p, want)
	}
}

// joinAgent joins pipe src's clock into its scalar dst's, both agents of
// core c (the first half of a drain; takeScalar is the second). seen
// holds src's rver+1 when dst last took src's whole clock: if src's rver is
// unchanged since, src's components of other cores are too (every change
// to them bumps rver), dst still holds them (clocks only grow within a
// generation), and only the core's own components need joining. On 8 ranks
// a drain otherwise joined ≈2 900 components a pipe, twice.
//
// A pipe whose other-core part is a snapshot of its scalar (remote) holds
// no news of other cores the scalar lacks: only the core's own components
// need joining.
func (d *Detector) joinAgent(dst, src, c int32, seen *uint64) {
	sa := &d.agents[src]
	// src's own core's components are its lc: the joins read no block.
	own := localPart{vals: &sa.lc, mask: d.cores[c].mask}
	switch {
	case *seen == sa.rver+1:
		d.joinLocalPart(dst, c, &sa.clock, own)
		return
	case sa.remote().known():
		d.joinLocalPart(dst, c, &sa.clock, own)
	default:
		d.flush(src)
		d.acquire(dst, &sa.clock)
	}
	*seen = d.agents[src].rver + 1
}

// checkLocalJoins makes joinLocal verify, in tests, that joining only the
// core's own components gave what the full join would; localJoins counts
// the joins it checked.
var (
	checkLocalJoins = false
	localJoins      int
)

// joinLocal joins the components of core c's agents from src into agent
// dst: the full join when dst is known to hold src's other components
// (drains and issue snapshots by rver, flag waits by the channel's copy).
func (d *Detector) joinLocal(dst, c int32, src *vclock) {
	d.joinLocalPart(dst, c, src, localPart{})
}

// joinLocalPart is joinLocal from src with the local part p in place of
// src's own (a flag channel's loc).
func (d *Detector) joinLocalPart(dst, c int32, src *vclock, p localPart) {
	cs := &d.cores[c]
	var want vclock
	if checkLocalJoins {
		cp := *src // cloning freezes the clone's source: not src itself
		full := cp.clone()
		p.into(&full, cs)
		want = d.exact(dst)
		join(&want, &full)
	}
	// dst is an agent of core c: its lc holds the components compared.
	if p.mask&cs.mask == cs.mask {
		d.raiseLocals(dst, cs, p.vals)
	} else {
		lc := &d.agents[dst].lc
		for i, l := range cs.locals[:cs.nlocals] {
			s := cs.slots[i]
			var v uint32
			if p.mask&(1<<s) != 0 {
				v = p.vals[s]
			} else {
				v = get(*src, cs.lpos[i]) // a channel without every slot: rare
			}
			if v > lc[s] {
				d.raiseLocal(dst, l, asm.Pipe(s), v)
			}
		}
	}
	if checkLocalJoins {
		localJoins++
		d.checkJoin(dst, want)
	}
}

// raiseLocals is raiseLocal of every agent of core cs, dst's, to vals (by
// pipe slot) in one pass: the joins of a drain and of most flag waits take
// every component from an lc, and a call per component was most of their
// cost. ver moves once for all (only whether it moved is read).
func (d *Detector) raiseLocals(dst int32, cs *coreState, vals *pipeVals) {
	ag := &d.agents[dst]
	hi := int32(-1) // the highest position raised
	other := false  // a component of another agent than dst was
	for i, s := range cs.slots[:cs.nlocals] {
		if v := vals[s]; v > ag.lc[s] {
			ag.lc[s] = v
			hi = max(hi, cs.lpos[i])
			other = other || asm.Pipe(s) != ag.pipe
		}
	}
	if hi < 0 {
		return
	}
	if hi >= ag.clock.n {
		ag.clock.extend(hi + 1)
	}
	ag.dirty = true
	if other {
		ag.ver++
	}
}

// syncEvent opens a core's synchronisation event (a flag set or wait, a
// barrier, a cross-core set or wait): its agent, entered, and the serial of
// the issue it completes. ok is false for the host, which synchronises
// through none of these.
func (d *Detector) syncEvent(e *machine.Event) (a int32, serial int64, ok bool) {
	if e.Agent.Core < 0 {
		return 0, 0, false
	}
	a = d.agent(e.Agent)
	d.enter(a)
	serial, _ = d.takeIssueOf(a, e, false)
	return a, serial, true
}
