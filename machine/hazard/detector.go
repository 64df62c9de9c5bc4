package hazard

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
)

const (
	numFlagIDs  = asm.NumEventIDs   // intra-core event ids per pipe pair on A2/A3
	numCrossIDs = asm.NumFFTSIDs    // FFTS flag ids
	userCrossID = asm.FFTSSyncAllLo // the ids from here to FFTSSyncAllHi are syncall's
	maxPending  = 1024
)

type agentKind uint8

const (
	akPipe agentKind = iota
	akScalar
	akSDMA
	akHost
)

// agentState is one in-order stream. clock is what the agent's next op is
// known to happen after; for a pipe its own component moves only at a
// barrier or when a round trip through another pipe proves completion, which
// is how same-pipe dependences without pipe_barrier become visible.
type agentState struct {
	// Every event of the agent reads the first two cache lines (the
	// struct is padded to four, so each agent starts on a line of its own);
	// the scalar's snapshot and the signal memo come after.
	rank, core int32
	pipe       asm.Pipe
	kind       agentKind
	coreIdx    int32 // -1 for SDMA and the host
	clock      vclock
	n          uint32 // ops so far (the agent's epoch counter)
	gen        uint32
	// ver counts changes to clock other than the agent's own component;
	// a scalar's issue snapshot (snap, taken at version snapVer) is shared
	// by every op it issues until then, so issuing costs no clock copy.
	ver uint64
	// rver counts changes to the components of agents on other cores (or
	// none): a flag set whose source's rver is unchanged since the channel's
	// last full copy refreshes only the core's own few components.
	rver uint64
	// lastSnap is the issue snapshot this agent joined last: joining it
	// again changes nothing (clocks only grow within a run). lastSnapRver
	// is its scalar's rver+1 then, and snapRver, for a scalar, its own
	// rver+1 when it took snap: a later snapshot with the same rver differs
	// only in its core's own components (joinState).
	lastSnap     uint64
	lastSnapRver uint64
	// rem names the other-core part of a pipe's clock, while remRver is
	// rver+1 (see remote).
	rem      remPart
	remRver  uint64
	snapID   uint64
	snapVer  uint64
	snapRver uint64
	snap     vclock
	// sigs remembers the signal words (and their versions, in run
	// generations) the agent joined last: a waiter polling words nobody
	// changed since has joined them already (signalCell).
	sigs    [sigMemo]sigSeen
	sigNext uint8
	_       [7]byte
}

// remPart says what the other-core components of a pipe's clock are: those
// of its scalar's issue snapshot snap (0: none at all). A pipe learns of
// other cores almost only through the snapshots it joins, and a scalar's
// snapshots only grow, so two parts named this way compare by their
// snapshot ids without reading a component. After a remote notify reaches
// a core, every flag between its pipes otherwise copied and joined the whole
// clock (one component per agent of the system) until the next one.
type remPart struct {
	snap  uint64
	known bool
}

// remote returns the agent's remPart, unknown once anything else changed
// its other-core components (rver moved).
func (ag *agentState) remote() remPart {
	if ag.remRver != ag.rver+1 {
		return remPart{}
	}
	return ag.rem
}

// setRemote records the agent's other-core part as of now.
func (ag *agentState) setRemote(r remPart) { ag.rem, ag.remRver = r, ag.rver+1 }

// within reports whether part r is contained in part o (both known).
func (r remPart) within(o remPart) bool { return r.known && o.known && r.snap <= o.snap }

// joined is the part of a clock joining r and o, when one contains the other.
func (r remPart) joined(o remPart) remPart {
	switch {
	case r.within(o):
		return o
	case o.within(r):
		return r
	}
	return remPart{}
}

// pending is an op the scalar issued that its pipe has not run yet: the
// scalar's clock at issue flows into the op (docs/hazards.md, "How it decides").
type pending struct {
	op        *asm.COp
	target    asm.Pipe
	serial    int64
	clock     vclock // the scalar's snapshot at issue (shared, never modified)
	snapID    uint64 // which snapshot clock is
	scalar    int32  // the issuing scalar and its epoch at issue
	epoch     uint32
	steps     vclock // release of earlier steps of a composite op
	composite bool
}

type flagChan struct {
	// Every set and wait reads the first two lines (what they need to
	// decide how much of a clock moves, and the local part); last, written
	// by every set for a double-set report, comes after them.
	src, dst asm.Pipe
	set      bool
	hasLast  bool
	locOnly  bool
	locMask  uint16
	id       int32
	snapGen  uint32
	clock    vclock
	// snapID names the other-core part of clock: a full copy of the
	// source's clock at its rver snapRver gets a new id; seenID is the id
	// the destination pipe last joined in full. Flags ping-pong between
	// the pipes of one core far more often than other cores' news arrives,
	// so most sets and waits touch a handful of components, not one per
	// agent of the system.
	snapID, seenID uint64
	snapRver       uint64
	// rem names clock's other-core part while set (agentState.rem).
	rem remPart
	// loc holds the core's own components, by pipe slot (coreState.slots),
	// for the slots in locMask, when locOnly: a set whose other-core part is
	// the copy's writes only these few words of one line, not a scattered
	// component per local agent in clock, which stays valid for the rest
	// (settle writes loc back before anything reads clock whole).
	loc  [asm.NumPipes + 1]uint32
	last rec // the latest set_flag on this channel
	// queue holds the sets that fired while the flag was already set,
	// oldest first: the machine counts them (pipes.FlagBits), so the k-th
	// wait consumes the k-th set's release and the pairing never depends on
	// timing. Empty unless the program double-sets.
	queue []queuedSet
	// wait is the wait_flag that consumed the latest consumed set and wait0
	// the one before it (flagSet's double-set rule).
	wait, wait0       rec
	hasWait, hasWait0 bool
	// ds memoises the double-set finding of the last pair of set ops: a
	// loop repeats one pair thousands of times, and each instance is a
	// count, not a new message to format.
	dsFirst, dsSecond *asm.COp
	ds                *finding
}

// queuedSet is a set waiting behind the channel's pending one.
type queuedSet struct {
	clock vclock
	rem   remPart
}

// settle writes the local part kept in loc back into clock.
func (ch *flagChan) settle(cs *coreState) {
	if ch.locOnly {
		ch.local(cs).into(&ch.clock, cs)
		ch.locOnly = false
	}
}

// local is the channel's local part: loc while locOnly, else none.
func (ch *flagChan) local(cs *coreState) localPart {
	if !ch.locOnly {
		return localPart{}
	}
	return localPart{vals: &ch.loc, mask: ch.locMask}
}

// localPart is a core's own components by pipe slot (coreState.slots), for
// the slots in mask, taking the place of a clock's (flagChan.loc).
type localPart struct {
	vals *[asm.NumPipes + 1]uint32
	mask uint16
}

// at is component l (a position, Detector.pos), the agent in slot s, of
// clock with p in place.
func (p localPart) at(clock vclock, l int32, s uint8) uint32 {
	if p.mask&(1<<s) != 0 {
		return p.vals[s]
	}
	return get(clock, l)
}

// into writes p into clock.
func (p localPart) into(clock *vclock, cs *coreState) {
	for i, l := range cs.lpos[:cs.nlocals] {
		if s := cs.slots[i]; p.mask&(1<<s) != 0 {
			if l < clock.size() {
				clock.set(l, p.vals[s])
			} else if p.vals[s] > 0 {
				raise(clock, l, p.vals[s])
			}
		}
	}
}

type coreState struct {
	// The fields flag events and issue lookups read come first, in the
	// first three cache lines (the struct is padded to whole lines).
	//
	// locals lists the core's agents that exist, scalar first;
	// slots[i] is locals[i]'s pipe, fixed once the agent exists; mask has
	// a bit per slot in use.
	locals   [asm.NumPipes + 1]int32
	slots    [asm.NumPipes + 1]uint8
	mask     uint16
	nlocals  uint8
	live     bool
	sawIssue bool // false until the engine emits EvIssue for this core; until then pipe ops take the scalar's current clock (see takeIssue)
	scalar   int32
	rank     int32
	core     int32
	chans    []*flagChan
	chanKeys []uint32 // chanKey of chans[i]
	// log holds the scalar's states by issue number (mark), marked the
	// highest number logged.
	log    []issueState
	marked int64
	serial int64
	used   [asm.NumPipes][asm.NumPipes]uint8 // event ids seen per pipe pair
	pipes  [asm.NumPipes]int32
	// pending holds the ordinary ops issued and not yet run, oldest first,
	// for a producer that sends EvIssue without issue numbers (the machine
	// numbers its issues, so this stays empty in its runs); comp the
	// composite ops, whose steps run on several pipes.
	pending   []pending
	comp      []pending
	crossUsed uint16
	syncCount int
	// drained is, per pipe, the pipe's rver+1 when the scalar last took its
	// whole clock in a drain, and fed the scalar's rver+1 when the pipe last
	// took the scalar's (generation drainGen; 0: never): with the source's
	// rver unchanged since, only the core's own components can differ
	// (drainCore).
	drained, fed [asm.NumPipes]uint64
	drainGen     uint32
	// lpos[i] is locals[i]'s component in clocks (Detector.pos).
	lpos [asm.NumPipes + 1]int32
	_    [40]byte
}

type crossKey struct{ rank, core, id int32 }

// accKey names one FFTS counter that collects contributions before it
// fires: per rank, id and mode, and per block in modes 1 and 2, whose
// counters are the block's own.
type accKey struct{ rank, id, mode, group int32 }

type hintScope uint8

const (
	scopeNone hintScope = iota
	scopeSamePipe
	scopeCrossPipe
	scopeCrossCore
	scopeCrossRank
	scopeAsync
)

// finding is a Finding plus what its hint needs, filled in at Findings time
// when every event id the kernel uses is known.
type finding struct {
	Finding
	sev      Severity
	scope    hintScope
	src, dst asm.Pipe
	coreIdx  int32
	// secondCore is the second access's core for cross-core hints.
	secondCore int32
	seq        int
}

type findKey struct {
	kind          string
	first, second string
}

// raceNote is a race found during one event, merged across cells and
// accesses before it is counted so one instruction instance counts once.
type raceNote struct {
	kind     string
	prev     rec // first in intended order; unused when single
	cur      rec
	acc      machine.Access
	lo, hi   int64
	samePipe bool
	single   bool   // one site: uninit-read, out-of-bounds
	msg      string // set for single-site notes
}

// Detector is the dynamic happens-before hazard detector; it implements
// machine.Observer. It is not safe for concurrent use.
type Detector struct {
	opt    Options
	agents []agentState
	// agentIdx and coreIdx hold index+1 of each agent, by (rank, (core+1)
	// * NumPipes + pipe), and of each core, by (rank, core).
	agentIdx table[int32]
	host     int32
	cores    []coreState
	coreIdx  table[int32]
	gen      uint32

	cross    map[crossKey][]vclock
	crossAcc map[accKey]vclock
	// crossIncs holds the set behind each pending increment of cross, in
	// the same order, and accArr the arrivals behind crossAcc, so a counter
	// still raised when the run ends is reported at the set that left it
	// (ffts.go).
	crossIncs map[crossKey][]crossInc
	accArr    map[accKey]accArrivals
	// shadow holds each buffer's shadow by (rank, (core+1) * NumSpaces +
	// space); GM is core -1.
	shadow  table[*shadowMem]
	snapSeq uint64 // issue snapshots taken (agentState.snapID)
	// gm2d holds the 2-D shadow of each plain row-major GM tensor, by
	// (rank, tensor index); rects is scratch for its rectangles.
	gm2d  table[*shadow2D]
	rects []rect
	// lastKey/lastMem cache the buffer looked up last.
	lastKey shadowKey
	lastMem *shadowMem
	// cells remembers the cell each recent byte range landed on.
	cells cellCache
	// tensorBase learns where each (rank, tensor) lives in GM from the host
	// writes of whole tensors, for out-of-bounds checks.
	tensorBase table[tensorAt]
	syncRounds map[int32][]vclock

	// steps interns composite step names for rec.step; steps[0] is "".
	steps   []string
	scratch machine.Event
	spare   []*batch
	front   front

	findings []*finding
	byKey    map[findKey]*finding
	notes    []raceNote
	// retracted holds the uninit-read notes of run generation retractedGen
	// already taken back (retractUninit).
	retracted    map[retractKey]struct{}
	retractedGen uint32
	pool         []vclock
	tmp          vclock
	relSeen      []relSeen // by agent (acquireSig)
	// apos holds each agent's position in clocks and pagent the agent at
	// each position (-1: none); npos is the number of positions, miscFill
	// the group the agents of no core fill (place).
	apos     []int32
	pagent   []int32
	npos     int32
	miscFill posFill
	cfill    []posFill // by core
	relSeq   uint64    // releases recorded in signal words (cell.sigAt)
}

// New returns a detector with the given options.
func New(opt Options) *Detector {
	d := &Detector{
		opt:        opt,
		gen:        1,
		cross:      map[crossKey][]vclock{},
		crossAcc:   map[accKey]vclock{},
		syncRounds: map[int32][]vclock{},
		byKey:      map[findKey]*finding{},
	}
	d.host = int32(len(d.agents))
	d.agents = append(d.agents, agentState{rank: -1, core: -1, pipe: asm.PipeInvalid, kind: akHost, coreIdx: -1, gen: d.gen})
	d.place(d.host, &d.miscFill)
	return d
}

var _ machine.Observer = (*Detector)(nil)

// Observe implements machine.Observer.
func (d *Detector) Observe(e *machine.Event) {
	if e == nil {
		return
	}
	f := &d.front
	if f.pipe != nil {
		d.push(e)
		return
	}
	if f.events >= serialPrefix && !f.inline {
		if d.parallel() {
			d.push(e)
			return
		}
		f.inline = true // decided once: parallel asks the runtime under a lock
	}
	f.events++
	d.observe(e)
}

func (d *Detector) observe(e *machine.Event) {
	if e.Issued > 0 && e.Agent.Pipe == asm.PipeS && e.Agent.Core >= 0 && e.Kind != machine.EvIssue {
		d.mark(d.core(e.Agent.Rank, e.Agent.Core), e.Issued)
	}
	d.notes = d.notes[:0]
	switch e.Kind {
	case machine.EvIssue:
		d.issue(e)
	case machine.EvExec:
		d.exec(e)
	case machine.EvFlagSet:
		d.flagSet(e)
	case machine.EvFlagWait:
		d.flagWait(e)
	case machine.EvBarrier:
		d.barrier(e)
	case machine.EvCrossSet:
		d.crossSet(e)
	case machine.EvCrossWait:
		d.crossWait(e)
	case machine.EvNotify:
		d.notify(e)
	case machine.EvSignalWait:
		d.signalWait(e)
	case machine.EvSyncAll:
		d.syncAll(e)
	case machine.EvHostWrite:
		d.hostWrite(e)
	case machine.EvRunStart:
		d.runBoundary(true)
	case machine.EvRunEnd:
		d.crossLeftovers()
		d.runBoundary(false)
	case machine.EvKernelEnd:
		d.kernelEnd(e)
	case machine.EvDeadlock:
		d.deadlock(e.Blocked, nil)
	}
	d.flushNotes()
}

// ---- agents and cores -----------------------------------------------------

func (d *Detector) agent(a machine.Agent) int32 {
	if a.Pipe >= asm.NumPipes {
		a.Pipe = asm.PipeInvalid
	}
	key := int(a.Core+1)*int(asm.NumPipes) + int(a.Pipe)
	if a.Core < -1 {
		// Junk: a negative key of its own, apart from every real agent.
		key = -1 - ((int(a.Core)+1<<31)<<8 | int(a.Pipe))
	}
	if i := d.agentIdx.get(a.Rank, key); i > 0 {
		return i - 1
	}
	st := agentState{rank: a.Rank, core: a.Core, pipe: a.Pipe, coreIdx: -1, gen: d.gen}
	st.setRemote(remPart{known: true}) // no clock yet: no news of other cores
	switch {
	case a.Core < 0:
		st.kind = akSDMA
	case a.Pipe == asm.PipeS:
		st.kind = akScalar
	}
	i := int32(len(d.agents))
	if a.Core >= 0 {
		c := d.core(a.Rank, a.Core)
		st.coreIdx = c
		d.place(i, &d.cfill[c])
		cs := &d.cores[c]
		if a.Pipe == asm.PipeS {
			cs.scalar = i
		} else {
			cs.pipes[a.Pipe] = i
		}
		cs.listLocals()
		for k, l := range cs.locals[:cs.nlocals] {
			cs.lpos[k] = d.apos[l]
		}
	} else {
		d.place(i, &d.miscFill)
	}
	d.agents = append(d.agents, st)
	*d.agentIdx.at(a.Rank, key) = i + 1
	return i
}

// Clocks index agents by position, not by agent number: positions come in
// groups of posGroup, each core's agents fill groups of their own, and the
// host and SDMA engines share groups. A core's agents then sit in one clock
// block (clock.go), so the joins, raises and copy-on-write copies of its
// own components, the most frequent by far, touch one block, not one per
// agent spread over the clock as agents appear.
const posGroup = 4

// posFill is the group a core (or the agents of no core) fills next: its
// first position and the positions used.
type posFill struct{ base, used int32 }

// place gives new agent i the next position of f, opening a group when f is
// full.
func (d *Detector) place(i int32, f *posFill) {
	if f.used == 0 || f.used == posGroup {
		f.base, f.used = d.npos, 0
		d.npos += posGroup
		for range posGroup {
			d.pagent = append(d.pagent, -1)
		}
	}
	p := f.base + f.used
	f.used++
	d.apos = append(d.apos, p)
	d.pagent[p] = i
}

// pos is agent a's component in clocks.
func (d *Detector) pos(a int32) int32 { return d.apos[a] }

// localPos reports whether the agent at position i runs on agent a's core.
func (d *Detector) localPos(a, i int32) bool {
	c := d.agents[a].coreIdx
	if c < 0 || int(i) >= len(d.pagent) {
		return false
	}
	o := d.pagent[i]
	return o >= 0 && d.agents[o].coreIdx == c
}

func (d *Detector) core(rank, core int32) int32 {
	if i := d.coreIdx.get(rank, int(core)); i > 0 {
		return i - 1
	}
	cs := coreState{rank: rank, core: core, scalar: -1}
	for p := range cs.pipes {
		cs.pipes[p] = -1
	}
	i := int32(len(d.cores))
	d.cores = append(d.cores, cs)
	d.cfill = append(d.cfill, posFill{})
	*d.coreIdx.at(rank, int(core)) = i + 1
	return i
}

// scalarOf returns the scalar agent of a core, creating it on first need.
func (d *Detector) scalarOf(c int32) int32 {
	if s := d.cores[c].scalar; s >= 0 {
		return s
	}
	return d.agent(machine.Agent{Rank: d.cores[c].rank, Core: d.cores[c].core, Pipe: asm.PipeS})
}

func (d *Detector) pipeOf(c int32, p asm.Pipe) int32 {
	if p >= asm.NumPipes || p == asm.PipeInvalid || p == asm.PipeALL {
		return -1
	}
	if a := d.cores[c].pipes[p]; a >= 0 || p == asm.PipeS {
		if p == asm.PipeS {
			return d.scalarOf(c)
		}
		return a
	}
	return d.agent(machine.Agent{Rank: d.cores[c].rank, Core: d.cores[c].core, Pipe: p})
}

// enter prepares agent a for an event: clocks from an earlier run generation
// are dropped (a run boundary orders everything before it), and its core is
// marked live for syncall.
func (d *Detector) enter(a int32) *agentState {
	ag := &d.agents[a]
	if ag.gen != d.gen {
		ag.clock.reset()
		ag.gen = d.gen
		ag.ver++
		ag.rver++
		ag.lastSnap, ag.lastSnapRver = 0, 0
		ag.setRemote(remPart{known: true})
	}
	if ag.coreIdx >= 0 {
		if cs := &d.cores[ag.coreIdx]; !cs.live {
			cs.live = true
		}
	}
	if ag.kind == akScalar {
		raise(&ag.clock, d.pos(a), ag.n)
	}
	return ag
}

// release returns a scratch copy of a's clock with its own component set to
// its op count: what a set_flag (which fires after every earlier op of the
// pipe completed) publishes.
func (d *Detector) release(a int32, buf vclock) vclock {
	ag := &d.agents[a]
	buf.copyFrom(&ag.clock)
	raise(&buf, d.pos(a), ag.n)
	return buf
}

// acquire joins src into agent a's clock.
func (d *Detector) acquire(a int32, src *vclock) {
	ag := &d.agents[a]
	changed, remote := joinTrack(&ag.clock, src, func(i int32) bool { return d.localPos(a, i) })
	if changed {
		ag.ver++
	}
	if remote {
		ag.rver++
	}
}

// acquireAbove is acquire from a src that holds at least agent a's value of
// every component of an agent on another core than c, a's: the blocks
// without c's agents are src's, taken unread.
func (d *Detector) acquireAbove(a, c int32, src *vclock) {
	cs := &d.cores[c]
	var keep [asm.NumPipes + 1]int32
	n := 0
	for _, l := range cs.lpos[:cs.nlocals] {
		if b := l >> blkBits; !slices.Contains(keep[:n], b) {
			keep[n] = b
			n++
		}
	}
	d.acquireCert(a, src, func(bi int, _ *vblock) bool { return !slices.Contains(keep[:n], int32(bi)) })
}

// acquireCert is acquire from a src that holds at least agent a's value of
// every component of the blocks above accepts, which it takes unread
// (adoptAbove); checkLocalJoins checks the result against the full join.
func (d *Detector) acquireCert(a int32, src *vclock, above func(bi int, db *vblock) bool) {
	ag := &d.agents[a]
	var want vclock
	if checkLocalJoins {
		want = ag.clock.clone()
		join(&want, src)
	}
	changed, remote := adoptAbove(&ag.clock, src, above, func(i int32) bool { return d.localPos(a, i) })
	if changed {
		ag.ver++
	}
	if remote {
		ag.rver++
	}
	if checkLocalJoins {
		localJoins++
		d.checkJoin(a, want)
	}
}

// checkJoin panics unless agent a's clock is want (checkLocalJoins).
func (d *Detector) checkJoin(a int32, want vclock) {
	got := d.agents[a].clock
	for i := range max(got.size(), want.size()) {
		if get(got, int32(i)) != get(want, int32(i)) {
			panic(fmt.Sprintf("hazard: a local join of agent %d missed component %d: %d, the full join gives %d", a, i, get(got, int32(i)), get(want, int32(i))))
		}
	}
}

// local reports whether agent i runs on agent a's core.
func (d *Detector) local(a, i int32) bool {
	c := d.agents[a].coreIdx
	return c >= 0 && int(i) < len(d.agents) && d.agents[i].coreIdx == c
}

// raiseIn is raise on agent a's clock, keeping its versions.
func (d *Detector) raiseIn(a, i int32, v uint32) {
	ag := &d.agents[a]
	if get(ag.clock, d.pos(i)) >= v {
		return
	}
	raise(&ag.clock, d.pos(i), v)
	if i != a {
		ag.ver++
		if !d.local(a, i) {
			ag.rver++
		}
	}
}

// joinIssue gives agent a the clock its pending op p was issued with.
func (d *Detector) joinIssue(a int32, p *pending) {
	ag := &d.agents[a]
	if ag.lastSnap != p.snapID {
		d.acquire(a, &p.clock)
		d.agents[a].lastSnap = p.snapID
	}
	d.raiseIn(a, p.scalar, p.epoch)
	d.acquire(a, &p.steps)
}

// issueSnapshot returns scalar s's clock for the ops it issues now, copying
// it only when it changed since the last issue.
func (d *Detector) issueSnapshot(s int32) (vclock, uint64) {
	sa := &d.agents[s]
	if sa.snapID == 0 || sa.snapVer != sa.ver {
		sa.snap = sa.clock.clone()
		sa.snapVer = sa.ver
		sa.snapRver = sa.rver + 1
		d.snapSeq++
		sa.snapID = d.snapSeq
	}
	return sa.snap, sa.snapID
}

func (d *Detector) getBuf() vclock {
	if n := len(d.pool); n > 0 {
		b := d.pool[n-1]
		d.pool = d.pool[:n-1]
		return b
	}
	return vclock{}
}

func (d *Detector) putBuf(b vclock) {
	if b.b != nil && len(d.pool) < 4096 {
		b.truncate()
		d.pool = append(d.pool, b)
	}
}

// hb reports whether access r happens before the next op of agent a.
func (d *Detector) hb(r *rec, a int32) bool {
	if r.gen != d.gen || r.agent == d.host {
		return true
	}
	return get(d.agents[a].clock, d.pos(r.agent)) >= r.epoch
}

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
	if e.Issue > 0 {
		c := ag.coreIdx
		if c < 0 {
			if ag.kind != akSDMA {
				return 0, nil
			}
			c = d.core(ag.rank, e.IssueCore)
		}
		if st, ok := d.issueState(c, e.Issue); ok {
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
			l.to = issued
			return
		}
	}
	if len(cs.log) >= maxLog {
		k := copy(cs.log, cs.log[maxLog/2:])
		clear(cs.log[k:])
		cs.log = cs.log[:k]
	}
	cs.log = append(cs.log, issueState{to: issued, clock: snap, snapID: id, epoch: ep, gen: d.gen, rver: d.agents[s].snapRver})
}

// issueState returns the scalar state op number k of core c was issued in.
func (d *Detector) issueState(c int32, k int64) (issueState, bool) {
	cs := &d.cores[c]
	if k > cs.marked {
		// No scalar event since the issue: the state is the current one.
		// (Its own component needs no raise: joinState raises it from epoch.)
		s := d.scalarOf(c)
		if d.agents[s].gen != d.gen {
			d.enter(s)
		}
		snap, id := d.issueSnapshot(s)
		return issueState{to: k, clock: snap, snapID: id, epoch: d.agents[s].n, gen: d.gen, rver: d.agents[s].snapRver}, true
	}
	i, j := 0, len(cs.log)
	for i < j {
		h := int(uint(i+j) >> 1)
		if cs.log[h].to >= k {
			j = h
		} else {
			i = h + 1
		}
	}
	if i == len(cs.log) || cs.log[i].gen != d.gen {
		return issueState{}, false
	}
	return cs.log[i], true
}

// joinState gives agent a the scalar state st of core c an op was issued in.
func (d *Detector) joinState(a, c int32, st issueState) {
	if ag := &d.agents[a]; ag.lastSnap != st.snapID {
		was := ag.remote()
		switch {
		case ag.coreIdx == c && ag.lastSnapRver == st.rver:
			// The scalar's components of other cores are those of the
			// snapshot joined last (its rver has not moved): only its
			// core's own can differ. On 8 ranks each new snapshot otherwise
			// joined ≈2 900 components into every pipe.
			d.joinLocal(a, c, st.clock)
		case ag.coreIdx == c && was.within(remPart{snap: st.snapID, known: true}):
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
			// an earlier snapshot's or none. (An SDMA engine runs copies
			// of any core: its part is not one core's.)
			ag.setRemote(was.joined(remPart{snap: st.snapID, known: true}))
		}
	}
	d.raiseIn(a, d.cores[c].scalar, st.epoch)
}

// takeIssue joins the issue-time clock of op into agent a and returns the
// op's intended-order serial. A composite op's entry stays until it is issued
// again so that each of its steps sees it; it is returned for step chaining.
func (d *Detector) takeIssue(a int32, op *asm.COp, step bool) (int64, *pending) {
	ag := &d.agents[a]
	if ag.coreIdx < 0 {
		if ag.kind == akSDMA && op != nil {
			// The SDMA engine runs copies any core of its rank handed over.
			for c := range d.cores {
				cs := &d.cores[c]
				if cs.rank != ag.rank {
					continue
				}
				if p, _ := findPending(cs, op); p != nil {
					d.joinIssue(a, p)
					return p.serial, p
				}
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
	r := rec{agent: a, epoch: d.agents[a].n, gen: d.gen, serial: serial, op: e.Op}
	if e.Step != "" {
		r.step = d.stepIndex(e.Step)
	}
	r.setIter(e.Iter)
	return r
}

// ---- exec -----------------------------------------------------------------

func (d *Detector) exec(e *machine.Event) {
	a := d.agent(e.Agent)
	d.enter(a)
	serial, p := d.takeIssueOf(a, e, e.Step != "")
	ag := &d.agents[a]
	ag.n++
	if ag.kind == akScalar {
		raise(&ag.clock, d.pos(a), ag.n)
	}
	r := d.mkrec(a, e, serial)
	for i := range e.Accesses {
		d.access(&r, &e.Accesses[i])
	}
	if p != nil && (p.composite || e.Step != "") {
		// Later steps of the op see this one. The scalar does not: it waits
		// only where the expansion drains (TPut.hpp's BAR ALL before each
		// store, seen as an EvBarrier), never for the final store, so a
		// tnotify right after a tput can overtake the data (kernels.md §1(d)
		// H1) unless the program fences first.
		d.tmp = d.release(a, d.tmp)
		join(&p.steps, &d.tmp)
	}
	if ag.kind == akScalar && e.Op != nil && e.Op.Info != nil && e.Op.Info.Op == asm.OpWaitAsync {
		// wait_async drains every earlier transfer of the session ("quiet").
		for i := range d.agents {
			if o := &d.agents[i]; o.kind == akSDMA && o.rank == ag.rank && o.gen == d.gen {
				d.tmp = d.release(int32(i), d.tmp)
				d.acquire(a, &d.tmp)
			}
		}
	}
}

func isSignal(acc *machine.Access) bool {
	return acc.Tensor != nil && acc.Tensor.Class == asm.TensorSignal
}

func (d *Detector) shadowFor(acc *machine.Access) *shadowMem {
	k := keyOf(acc)
	if k == d.lastKey && d.lastMem != nil {
		return d.lastMem
	}
	slot := d.shadow.at(k.rank, int(k.core+1)*int(asm.NumSpaces)+int(k.space))
	m := *slot
	if m == nil {
		m = newShadowMem()
		*slot = m
	}
	d.lastKey, d.lastMem = k, m
	return m
}

// access checks one access of r against the shadow state and records it.
func (d *Detector) access(r *rec, acc *machine.Access) {
	if acc.Hi <= acc.Lo {
		return
	}
	if acc.Rows > maxRuns {
		// No tile has this many rows: junk from another producer than the
		// machine. Bound the work run-by-run paths do.
		clamped := *acc
		clamped.Rows = maxRuns
		acc = &clamped
	}
	d.checkBounds(r, acc)
	r.write, r.atomic = acc.Write, acc.Atomic && acc.Write
	if isSignal(acc) {
		d.signalAccess(r, acc, acc.Write)
		return
	}
	if g := d.gmShadowFor(acc); g != nil {
		d.access2d(r, acc, g)
		return
	}
	strided := acc.NumRows() > 1
	cacheable := !strided && !(acc.ReadOnly && !acc.Write) && acc.Lo>>pageShift == (acc.Hi-1)>>pageShift
	var slot *cellSlot
	key := keyOf(acc)
	if cacheable {
		slot = d.cells.slot(key, acc.Lo, acc.Hi)
		if c := slot.c; c != nil && c.lo == acc.Lo && c.hi == acc.Hi && slot.key == key {
			if checkShortcuts {
				d.checkCachedCell(acc, c)
			}
			uninitLo, uninitHi := int64(-1), int64(-1)
			d.accessCell(r, acc, c, geo{}, &uninitLo, &uninitHi)
			d.noteUninit(r, acc, uninitLo, uninitHi)
			return
		}
	}
	sm := d.shadowFor(acc)
	if sm.grid == nil && strided && acc.Space != asm.GM {
		d.toGrid(sm, key, acc)
	}
	if sm.grid != nil {
		d.access2d(r, acc, sm.grid)
		return
	}
	uninitLo, uninitHi := int64(-1), int64(-1)
	// A strided access with no 2-D shadow (a GM tensor that is not plain
	// row-major) goes run by run.
	for k := range acc.NumRows() {
		for lo, end := acc.Run(k); lo < end; {
			m, hi := sm.page(lo, end)
			if acc.ReadOnly && !acc.Write {
				// Only the host writes it: nothing to race, so nothing to
				// record; the read only needs initialised bytes.
				if ulo, uhi, ok := m.unwritten(lo, hi); ok {
					if uninitLo < 0 {
						uninitLo = ulo
					}
					uninitHi = uhi
				}
				lo = hi
				continue
			}
			i, j := m.span(lo, hi)
			lo = hi
			if slot != nil && j == i+1 {
				*slot = cellSlot{key: key, c: m.cells[i]}
			}
			d.accessCells(r, acc, m, i, j, geo{}, &uninitLo, &uninitHi)
		}
	}
	d.noteUninit(r, acc, uninitLo, uninitHi)
}

// maxRuns bounds a strided access's row count: a window narrower than its
// tile leaves at least two columns of 2-byte elements per row, so a tile in
// 1 MiB has at most 2^18 rows.
const maxRuns = 1 << 18

// gridSpan is how many bytes of a local buffer its 2-D view covers: more
// than any local memory, so every address maps to a row.
const gridSpan = 1 << 40

// toGrid switches local buffer sm to a 2-D view (rows of acc.Pitch bytes)
// at its first strided access, moving the cells it has so far. A textract
// of a column window of a row-major L1 tile reads a run per row: in a byte
// map that is a cell per row, split off and merged back on every K step
// (allgather_gemm at BASE_M=64 spent 29 s of an 8-rank lint on it, against
// 6.5 s of simulation), where the 2-D view keeps the tile one band with a
// cell per window. Rows line up with the tile acc reads, so its windows
// are single rectangles; any other access maps to at most three.
func (d *Detector) toGrid(sm *shadowMem, k shadowKey, acc *machine.Access) {
	base := int64(0)
	if t := acc.Tile; t != nil {
		if el, ok := elemAt(acc); ok {
			// Addresses below the aligned base would map to negative
			// rows: start the view a row earlier.
			if base = t.Addr[el] % acc.Pitch; base > 0 {
				base -= acc.Pitch
			}
		}
	}
	g := &shadow2D{base: base, pitch: acc.Pitch, rows: gridSpan / acc.Pitch}
	move := func(m *imap) {
		for _, c := range m.cells {
			if slot := d.cells.slot(k, c.lo, c.hi); slot.c == c {
				*slot = cellSlot{}
			}
			d.rects = g.linear(d.rects[:0], c.lo-g.base, c.hi-g.base)
			for _, q := range d.rects {
				i, j := g.span(q.r0, q.r1)
				for _, b := range g.bands[i:j] {
					ci, cj := b.cols.span(q.c0, q.c1)
					for _, t := range b.cols.cells[ci:cj] {
						lo, hi := t.lo, t.hi
						c.copyTo(t)
						t.lo, t.hi = lo, hi
					}
				}
			}
		}
	}
	for _, m := range sm.dense {
		if m != nil {
			move(m)
		}
	}
	// Local buffers are far below densePages; sparse pages only come from
	// fuzzed addresses, taken in address order all the same.
	for _, p := range slices.Sorted(maps.Keys(sm.sparse)) {
		move(sm.sparse[p])
	}
	*sm = shadowMem{last: -1, grid: g}
}

// noteUninit notes an uninitialised read of [lo, hi) (lo < 0: none).
func (d *Detector) noteUninit(r *rec, acc *machine.Access, lo, hi int64) {
	if lo >= 0 {
		d.notes = append(d.notes, raceNote{kind: KindUninitRead, cur: *r, acc: *acc, lo: lo, hi: hi, single: true})
	}
}

// keepSplits is how many cells a plain write leaves as they are rather
// than merging: a tile read in windows (textract, a half for each L0 buffer)
// and then rewritten whole would otherwise be split and merged again every
// iteration, the costliest step of the shadow; a few cells in the same state
// cost less to walk.
const keepSplits = 4

// accessCells is access on cells [i, j) of one page.
func (d *Detector) accessCells(r *rec, acc *machine.Access, m *imap, i, j int, g geo, uninitLo, uninitHi *int64) {
	for k := i; k < j; k++ {
		d.accessCell(r, acc, m.cells[k], g, uninitLo, uninitHi)
	}
	if acc.Write && !acc.Atomic && j-i > keepSplits {
		m.collapse(i, j)
	}
}

// accessCell is access on one cell.
func (d *Detector) accessCell(r *rec, acc *machine.Access, c *cell, g geo, uninitLo, uninitHi *int64) {
	lo, hi := g.bytes(c.lo, c.hi)
	if !acc.Write {
		// Bytes nothing wrote, or whose only write this read was meant to
		// precede and is not ordered after: had the run's timing let the
		// read go first, it would have read poison, so it is an
		// uninitialised read either way (beside the WAR).
		if !c.written || c.firstW && !d.hbOrSame(&c.w, r) && d.intendedBefore(r, &c.w) {
			if *uninitLo < 0 {
				*uninitLo = lo
			}
			*uninitHi = hi
		}
		if c.hasW && !d.hbOrSame(&c.w, r) {
			d.race(&c.w, r, acc, lo, hi)
		}
		for x := range c.adds {
			if !d.hbOrSame(&c.adds[x], r) {
				d.race(&c.adds[x], r, acc, lo, hi)
			}
		}
		if !c.written {
			c.uninit = putUninit(c.uninit, r, acc)
		}
		switch {
		case !c.hasR:
			c.read0, c.hasR = *r, true
		case c.read0.agent == r.agent:
			c.read0 = *r
		default:
			c.reads = putRec(c.reads, r)
		}
		return
	}
	// A write that races a read of the previous value is reported as
	// that WAR only: the WAW with the previous writer has the same fix.
	warred := false
	if c.hasR && !d.hbOrSame(&c.read0, r) {
		d.race(&c.read0, r, acc, lo, hi)
		warred = true
	}
	for x := range c.reads {
		if rd := &c.reads[x]; !d.hbOrSame(rd, r) {
			d.race(rd, r, acc, lo, hi)
			warred = true
		}
	}
	if len(c.uninit) > 0 {
		d.explainUninit(c, r)
	}
	if c.hasW && !warred && !d.hbOrSame(&c.w, r) {
		d.race(&c.w, r, acc, lo, hi)
	}
	if acc.Atomic {
		// Atomic adds commute with each other; they still race plain accesses.
		c.adds = putRec(c.adds, r)
		c.written = true
		return
	}
	for x := range c.adds {
		if !warred && !d.hbOrSame(&c.adds[x], r) {
			d.race(&c.adds[x], r, acc, lo, hi)
		}
	}
	c.firstW = !c.written
	c.w, c.hasW, c.written = *r, true, true
	c.adds = c.adds[:0]
	c.reads, c.hasR = c.reads[:0], false
}

// putUninit adds read r of acc to a cell's uninitialised reads, once per
// instance and buffer (one instance may read a cell through two operands).
func putUninit(list []uninitRead, r *rec, acc *machine.Access) []uninitRead {
	for i := range list {
		u := &list[i]
		if u.r.agent == r.agent && u.r.epoch == r.epoch && u.r.gen == r.gen && u.tile == acc.Tile && u.tensor == acc.Tensor {
			return list
		}
	}
	if len(list) >= maxUninit {
		return list
	}
	return append(list, uninitRead{r: *r, tile: acc.Tile, tensor: acc.Tensor})
}

// explainUninit settles the uninitialised reads of c at its first write w.
// A read w races and was meant to come after w (the intended order: issue
// order on a core, else iteration and source line) read poison only
// because this run's timing let it overtake w: the race is the report, and
// its fix (order w first) is the read's fix, so its uninit-read is
// retracted (docs/hazards.md, uninit-read). A read ordered before w, or
// meant to come first (a WAR), did read bytes nothing was meant to write
// before it, and keeps its finding.
func (d *Detector) explainUninit(c *cell, w *rec) {
	for i := range c.uninit {
		if u := &c.uninit[i]; !d.hbOrSame(&u.r, w) && d.intendedBefore(w, &u.r) {
			d.retractUninit(u)
		}
	}
	c.uninit = c.uninit[:0]
}

// gmShadowFor returns the 2-D shadow of the GM tensor acc touches, or nil
// when the tensor is kept in byte ranges.
func (d *Detector) gmShadowFor(acc *machine.Access) *shadow2D {
	if acc.Space != asm.GM || acc.Tensor == nil {
		return nil
	}
	return d.gm2d.get(acc.Rank, acc.Tensor.Index)
}

// access2d is access on a 2-D tensor shadow, rectangle by rectangle.
func (d *Detector) access2d(r *rec, acc *machine.Access, s *shadow2D) {
	uninitLo, uninitHi := int64(-1), int64(-1)
	d.rects = s.rects(acc, d.rects[:0])
	for _, q := range d.rects {
		if acc.ReadOnly && !acc.Write {
			if lo, hi, ok := s.unwritten(q); ok {
				if uninitLo < 0 {
					uninitLo = lo
				}
				uninitHi = hi
			}
			continue
		}
		i, j := s.span(q.r0, q.r1)
		for _, b := range s.bands[i:j] {
			ci, cj := b.cols.span(q.c0, q.c1)
			d.accessCells(r, acc, &b.cols, ci, cj, geo{s.base, s.pitch, b.lo, b.hi}, &uninitLo, &uninitHi)
		}
	}
	if uninitLo >= 0 {
		d.notes = append(d.notes, raceNote{kind: KindUninitRead, cur: *r, acc: *acc, lo: uninitLo, hi: uninitHi, single: true})
	}
}

// hbOrSame is hb, except that an op never races itself (an in-place tadd
// reads and writes one tile in a single instance).
func (d *Detector) hbOrSame(prev, cur *rec) bool {
	if prev.agent == cur.agent && prev.epoch == cur.epoch && prev.gen == cur.gen {
		return true
	}
	return d.hb(prev, cur.agent)
}

func putRec(list []rec, r *rec) []rec {
	for i := range list {
		if list[i].agent == r.agent {
			list[i] = *r
			return list
		}
	}
	return append(list, *r)
}

// signalAccess handles a store, atomic add or read of a signal word. Signal
// words are synchronisation, not data: polling them does not race, but a
// plain store racing an atomic add loses the add (kernels.md §3(d) R5), and a
// read acquires every notify since the last plain store.
func (d *Detector) signalAccess(r *rec, acc *machine.Access, write bool) {
	sm := d.shadowFor(acc)
	a := r.agent
	if write {
		d.tmp = d.release(a, d.tmp)
	}
	uninitLo, uninitHi := int64(-1), int64(-1)
	for n := range acc.NumRows() { // several: a column of a signal matrix
		for lo, end := acc.Run(n); lo < end; {
			m, hi := sm.page(lo, end)
			i, j := m.span(lo, hi)
			lo = hi
			for k := i; k < j; k++ {
				d.signalCell(r, acc, m.cells[k], write, &uninitLo, &uninitHi)
			}
		}
	}
	if uninitLo >= 0 {
		d.notes = append(d.notes, raceNote{kind: KindUninitRead, cur: *r, acc: *acc, lo: uninitLo, hi: uninitHi, single: true})
	}
}

func (d *Detector) signalCell(r *rec, acc *machine.Access, c *cell, write bool, uninitLo, uninitHi *int64) {
	a := r.agent
	if c.sigGen != d.gen {
		c.sig.truncate()
		c.sigFrom = 0
		c.sigGen = d.gen
		c.sigVer++
	}
	switch {
	case !write:
		if !c.written {
			if *uninitLo < 0 {
				*uninitLo = c.lo
			}
			*uninitHi = c.hi
		}
		// A waiter polling an unchanged word has joined it already.
		if checkShortcuts && d.agents[a].joinedSig(c, d.gen) {
			d.checkJoinedSig(a, c)
		}
		if !d.agents[a].joinedSig(c, d.gen) {
			d.acquireSig(a, c)
			ag := &d.agents[a]
			ag.sigs[ag.sigNext] = sigSeen{c, c.sigVer, d.gen}
			ag.sigNext = (ag.sigNext + 1) % sigMemo
		}
	case r.atomic:
		if c.hasW && !d.hbOrSame(&c.w, r) {
			d.resetRace(&c.w, r, acc, c.lo, c.hi)
		}
		c.adds = putRec(c.adds, r)
		if c.sig.size() == 0 || c.sigFrom == a+1 {
			// Alone or after its own earlier releases, a's release is
			// the word's whole clock (a's clock only grows).
			d.relSeq++
			c.sigFrom, c.sigAt = a+1, d.relSeq
		} else {
			c.sigFrom = 0
		}
		join(&c.sig, &d.tmp)
		c.sigVer++
		c.written = true
	default:
		for x := range c.adds {
			if !d.hbOrSame(&c.adds[x], r) {
				d.resetRace(r, &c.adds[x], acc, c.lo, c.hi)
			}
		}
		c.adds = c.adds[:0]
		c.w, c.hasW, c.written = *r, true, true
		c.sig.copyFrom(&d.tmp)
		d.relSeq++
		c.sigFrom, c.sigAt = a+1, d.relSeq
		c.sigVer++
	}
}

// relSeen is the last release of one agent that an agent joined from a
// signal word: from (agent+1, 0: none) recorded at at (Detector.relSeq),
// generation gen, with its blocks as they were (tab, a private copy of the
// table).
type relSeen struct {
	tab  []*vblock
	at   uint64
	from int32
	gen  uint32
}

// acquireSig joins signal word c's clock into agent a. A word whose clock is
// one agent's release, later than a release of the same agent that a
// joined before (relSeen), holds at least that release in every component:
// a block a still shares with the earlier release is taken unread. On a
// ring of P ranks each wait brings news of all P ranks, and reading every
// block of both clocks was most of a 384-rank lint.
func (d *Detector) acquireSig(a int32, c *cell) {
	if int(a) >= len(d.relSeen) {
		d.relSeen = append(d.relSeen, make([]relSeen, int(a)+1-len(d.relSeen))...)
	}
	m := &d.relSeen[a]
	if c.sigFrom != 0 && m.from == c.sigFrom && m.gen == d.gen && m.at <= c.sigAt {
		prev := m.tab
		d.acquireCert(a, &c.sig, func(bi int, db *vblock) bool { return bi < len(prev) && db == prev[bi] && db != nil })
	} else {
		d.acquire(a, &c.sig)
	}
	if c.sigFrom != 0 {
		m = &d.relSeen[a]
		m.tab = append(m.tab[:0], c.sig.b...)
		m.from, m.at, m.gen = c.sigFrom, c.sigAt, d.gen
	}
}

// sigMemo is how many signal words an agent remembers joining: a consumer
// polls the flags of several chunks round-robin (allgather_gemm's compute
// scalar scans a row group's chunks), and remembering only the last word
// joined every other word's whole clock again at each poll.
const sigMemo = 4

// sigSeen is a signal word at version ver of run generation gen.
type sigSeen struct {
	c        *cell
	ver, gen uint32
}

// joinedSig reports whether the agent has joined c's current clock.
func (ag *agentState) joinedSig(c *cell, gen uint32) bool {
	for _, s := range ag.sigs {
		if s.c == c && s.ver == c.sigVer && s.gen == gen {
			return true
		}
	}
	return false
}

func (d *Detector) resetRace(plain, add *rec, acc *machine.Access, lo, hi int64) {
	d.notes = append(d.notes, raceNote{kind: KindResetRacesAtomic, prev: *plain, cur: *add, acc: *acc, lo: lo, hi: hi})
}

// race queues a conflict between an earlier-seen access prev and cur; the
// kind comes from their intended order, not from which one ran first.
func (d *Detector) race(prev, cur *rec, acc *machine.Access, lo, hi int64) {
	first, second := prev, cur
	if !d.intendedBefore(prev, cur) {
		first, second = cur, prev
	}
	kind := KindWAW
	switch {
	case first.write && !second.write:
		kind = KindRAW
	case !first.write && second.write:
		kind = KindWAR
	}
	same := prev.agent == cur.agent
	if same && d.opt.SamePipe.level(d.agents[cur.agent].pipe, d.agents[cur.agent].kind == akSDMA) == SevOff {
		return
	}
	d.notes = append(d.notes, raceNote{kind: kind, prev: *first, cur: *second, acc: *acc, lo: lo, hi: hi, samePipe: same})
}

// intendedBefore orders two accesses the way the program means them: issue
// order on one core; across cores and ranks, the loop iteration, then the
// source position, and only then the order they were seen.
func (d *Detector) intendedBefore(a, b *rec) bool {
	ca, cb := d.agents[a.agent].coreIdx, d.agents[b.agent].coreIdx
	if ca >= 0 && ca == cb && a.serial != b.serial {
		return a.serial < b.serial
	}
	if a.niter == b.niter {
		for i := 0; i < int(a.niter); i++ {
			if a.iter[i] != b.iter[i] {
				return a.iter[i] < b.iter[i]
			}
		}
	}
	pa, pb := opPos(a.op), opPos(b.op)
	if pa.File == pb.File && pa.Line != pb.Line && pa.Line > 0 && pb.Line > 0 {
		return pa.Line < pb.Line
	}
	return true
}

func opPos(op *asm.COp) asm.Pos {
	if op == nil || op.Instr == nil {
		return asm.Pos{}
	}
	return op.Instr.Pos
}

// ---- flags ----------------------------------------------------------------

func (d *Detector) chanOf(c int32, f machine.Flag) *flagChan {
	cs := &d.cores[c]
	// The keys sit in their own small array, so the search reads one or two
	// cache lines instead of every channel it passes (it was 4% of the
	// detector's time on 8 ranks).
	k := chanKey(f)
	for i, x := range cs.chanKeys {
		if x == k {
			return cs.chans[i]
		}
	}
	ch := &flagChan{src: f.Src, dst: f.Dst, id: f.ID}
	cs.chans = append(cs.chans, ch)
	cs.chanKeys = append(cs.chanKeys, k)
	return ch
}

// chanKey packs a flag's pipes and id (validated by the callers) into the
// key of cs.chanKeys.
func chanKey(f machine.Flag) uint32 {
	return uint32(f.Src)<<16 | uint32(f.Dst)<<8 | uint32(uint8(f.ID))
}

func validPipe(p asm.Pipe) bool { return p > asm.PipeInvalid && p < asm.PipeALL }

func (d *Detector) flagSet(e *machine.Event) {
	if e.Agent.Core < 0 {
		return
	}
	a := d.agent(e.Agent)
	d.enter(a)
	serial, _ := d.takeIssueOf(a, e, false)
	r := d.mkrec(a, e, serial)
	c := d.agents[a].coreIdx
	f := e.Flag
	if !validPipe(f.Src) || !validPipe(f.Dst) || f.ID < 0 || f.ID >= numFlagIDs {
		d.single(KindBadEventID, SevError, &r, fmt.Sprintf("set_flag %s, %s, %d: event ids are 0-%d and pipes must be real pipes", f.Src, f.Dst, f.ID, numFlagIDs-1),
			fmt.Sprintf("use an id in 0-%d for %s->%s", numFlagIDs-1, f.Src, f.Dst))
		return
	}
	d.cores[c].used[f.Src][f.Dst] |= 1 << f.ID
	ch := d.chanOf(c, f)
	ag := &d.agents[a]
	if ch.hasLast {
		d.doubleSet(ch, &r, a)
	}
	switch {
	case ch.set:
		// Queued behind the pending set: its own wait acquires it.
		ch.queue = append(ch.queue, queuedSet{clock: d.release(a, vclock{}), rem: ag.remote()})
		ch.last = r
		return
	case ch.snapID != 0 && ch.snapGen == d.gen && ch.snapRver == ag.rver && ch.clock.size() >= ag.clock.size():
		// Only this core's components can have moved since the copy.
		cs := &d.cores[c]
		for i, l := range cs.lpos[:cs.nlocals] {
			ch.loc[cs.slots[i]] = get(ag.clock, l)
		}
		if s := uint8(e.Agent.Pipe); ch.loc[s] < ag.n {
			ch.loc[s] = ag.n
		}
		ch.locMask = cs.mask
		ch.locOnly = true
		if r := ag.remote(); r.known {
			ch.rem = r // the same part as the copy's, maybe by a later name
		}
	default:
		ch.locOnly = false
		ch.clock.copyFrom(&ag.clock)
		raise(&ch.clock, d.pos(a), ag.n)
		d.snapSeq++
		ch.snapID, ch.snapRver, ch.snapGen = d.snapSeq, ag.rver, d.gen
		ch.rem = ag.remote()
	}
	ch.set, ch.last, ch.hasLast = true, r, true
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
	pending := len(ch.queue)
	if ch.set {
		pending++
	}
	// Which waits have run depends on timing; the verdict must not. A wait
	// that has not run yet is not ordered before r; one that has is judged
	// by the clocks. With p sets pending, the latest consumed wait (wait) is
	// W(k-p) and the one before it (wait0) W(k-p-1).
	var errWait, noteWait *rec // W(k-1) and W(k), when they have run
	switch pending {
	case 0:
		if ch.hasWait0 {
			errWait = &ch.wait0
		}
		if ch.hasWait {
			noteWait = &ch.wait
		}
	case 1:
		if ch.hasWait {
			errWait = &ch.wait
		}
	}
	var sev Severity
	switch {
	case pending >= 2 || (errWait != nil && !d.hb(errWait, a)):
		// W(k-1) has not run yet, or ran unordered with r.
		sev = SevError
	case pending == 1 || (noteWait != nil && !d.hb(noteWait, a)):
		// W(k) has not run yet, or ran unordered with r.
		sev = SevNote
	default:
		return
	}
	if f := ch.ds; f != nil && ch.dsFirst == ch.last.op && ch.dsSecond == r.op && sev <= f.sev {
		f.Count++
		return
	}
	src, dst, id := ch.src, ch.dst, ch.id
	ch.dsFirst, ch.dsSecond = ch.last.op, r.op
	if sev == SevError {
		ch.ds = d.pair(KindDoubleSet, SevError, &ch.last, r,
			fmt.Sprintf("set_flag %s, %s, %d can fire again while the flag is still set: nothing %s does orders it after the wait_flag that consumed the set before the previous one, so %s can run sets ahead of %s and, the flag being one bit, on some timing a set is lost and a wait_flag hangs or passes early", src, dst, id, dst, src, dst),
			fmt.Sprintf("hold %s back with a reverse flag: `set_flag %s, %s, N` after %s's `wait_flag %s, %s, %d` (and its use of the data), `wait_flag %s, %s, N` before this set; or use a different event id for the second", src, dst, src, dst, src, dst, id, dst, src))
		return
	}
	ch.ds = d.pair(KindDoubleSet, SevNote, &ch.last, r,
		fmt.Sprintf("set_flag %s, %s, %d may fire again before %s's wait_flag consumes the previous set: %s is held back only up to the wait before it, so the flag (one bit) relies on %s reaching its queued wait before %s reaches this set", src, dst, id, dst, src, dst, src),
		fmt.Sprintf("to remove the slack, order this set after `wait_flag %s, %s, %d` (a reverse flag from %s), or alternate two event ids", src, dst, id, dst))
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
	if e.Agent.Core < 0 {
		return
	}
	a := d.agent(e.Agent)
	d.enter(a)
	d.takeIssueOf(a, e, false)
	f := e.Flag
	if !validPipe(f.Src) || !validPipe(f.Dst) || f.ID < 0 || f.ID >= numFlagIDs {
		r := d.mkrec(a, e, 0)
		d.single(KindBadEventID, SevError, &r, fmt.Sprintf("wait_flag %s, %s, %d: event ids are 0-%d", f.Src, f.Dst, f.ID, numFlagIDs-1), "")
		return
	}
	c := d.agents[a].coreIdx
	d.cores[c].used[f.Src][f.Dst] |= 1 << f.ID
	ch := d.chanOf(c, f)
	if ch.set {
		w := d.agents[a].remote()
		switch {
		case ch.snapID != 0 && ch.seenID == ch.snapID && ch.snapGen == d.gen && d.agents[a].gen == d.gen:
			// The other-core part is the copy this pipe joined last time.
			d.joinLocalPart(a, c, ch.clock, ch.local(&d.cores[c]))
		case ch.rem.within(w):
			// The setter's news of other cores came from a snapshot of
			// the scalar no later than the one this pipe has.
			d.joinLocalPart(a, c, ch.clock, ch.local(&d.cores[c]))
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
		raise(&ag.clock, d.pos(a), ag.n)
	}
	ch.wait0, ch.hasWait0 = ch.wait, ch.hasWait
	ch.wait, ch.hasWait = d.mkrec(a, e, 0), true
	ch.set = false
	if len(ch.queue) > 0 {
		q := ch.queue[0]
		ch.queue = slices.Delete(ch.queue, 0, 1)
		ch.locOnly = false
		ch.clock = q.clock
		ch.snapID = 0 // a release copy no source version names
		ch.rem = q.rem
		ch.set = true
	}
}

func (d *Detector) barrier(e *machine.Event) {
	if e.Agent.Core < 0 {
		return
	}
	a := d.agent(e.Agent)
	d.enter(a)
	d.takeIssueOf(a, e, false)
	c := d.agents[a].coreIdx
	if e.Target != asm.PipeALL {
		p := d.pipeOf(c, e.Target)
		if p < 0 {
			return
		}
		ag := d.enter(p)
		if p != a {
			d.acquire(p, &d.agents[a].clock)
		}
		raise(&ag.clock, d.pos(p), ag.n)
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
	for i, p := range cs.pipes {
		if p >= 0 && p != s {
			d.enter(p)
			d.joinAgent(s, p, c, &cs.drained[i])
			d.raiseIn(s, p, d.agents[p].n)
		}
	}
	d.acquire(s, &extra)
	for i, p := range cs.pipes {
		if p >= 0 && p != s {
			d.joinAgent(p, s, c, &d.cores[c].fed[i])
			raise(&d.agents[p].clock, d.pos(p), d.agents[p].n)
		}
	}
}

// joinAgent joins agent src's clock into dst's, both agents of core c. seen
// holds src's rver+1 when dst last took src's whole clock: if src's rver is
// unchanged since, src's components of other cores are too (every change
// to them bumps rver), dst still holds them (clocks only grow within a
// generation), and only the core's own components need joining. On 8 ranks
// a drain otherwise joined ≈2 900 components a pipe, twice.
//
// A pipe whose other-core part is a snapshot of its scalar (remote) holds
// no news of other cores the scalar lacks: into the scalar only the core's
// own components need joining, and from the scalar the blocks without them
// are the scalar's (acquireAbove).
func (d *Detector) joinAgent(dst, src, c int32, seen *uint64) {
	sa := &d.agents[src]
	s := d.cores[c].scalar
	switch {
	case *seen == sa.rver+1:
		d.joinLocal(dst, c, sa.clock)
		return
	case dst == s && sa.remote().known:
		d.joinLocal(dst, c, sa.clock)
	case src == s && d.agents[dst].remote().known:
		d.acquireAbove(dst, c, &sa.clock)
		// Name the pipe's other-core part: the scalar's now.
		_, id := d.issueSnapshot(s)
		d.agents[dst].setRemote(remPart{snap: id, known: true})
	default:
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
func (d *Detector) joinLocal(dst, c int32, src vclock) {
	d.joinLocalPart(dst, c, src, localPart{})
}

// joinLocalPart is joinLocal from src with the local part p in place of
// src's own (a flag channel's loc).
func (d *Detector) joinLocalPart(dst, c int32, src vclock, p localPart) {
	cs := &d.cores[c]
	var want vclock
	if checkLocalJoins {
		full := src.clone()
		p.into(&full, cs)
		want = d.agents[dst].clock.clone()
		join(&want, &full)
	}
	for i, l := range cs.locals[:cs.nlocals] {
		if v := p.at(src, cs.lpos[i], cs.slots[i]); v > get(d.agents[dst].clock, cs.lpos[i]) {
			d.raiseIn(dst, l, v)
		}
	}
	if checkLocalJoins {
		localJoins++
		d.checkJoin(dst, want)
	}
}

// ---- cross-core flags -----------------------------------------------------

func (d *Detector) crossSet(e *machine.Event) {
	if e.Agent.Core < 0 {
		return
	}
	a := d.agent(e.Agent)
	d.enter(a)
	serial, _ := d.takeIssueOf(a, e, false)
	c := d.agents[a].coreIdx
	if e.ID < 0 || e.ID >= numCrossIDs {
		r := d.mkrec(a, e, serial)
		d.single(KindBadEventID, SevError, &r, fmt.Sprintf("ffts_set id %d: FFTS flag ids are 0-%d (11-14 are reserved for syncall)", e.ID, numCrossIDs-1), "use an id in 0-10")
		return
	}
	d.cores[c].crossUsed |= 1 << e.ID
	rel := d.release(a, d.getBuf())
	k := accKey{rank: e.Agent.Rank, id: e.ID, mode: e.Mode, group: e.Group}
	r := d.mkrec(a, e, serial)
	d.noteCrossSet(k, &r, e)
	if len(e.Peers) == 0 {
		// A contribution that did not complete a mode-0/mode-2 reduction yet:
		// keep it for the set that does.
		acc := d.crossAcc[k]
		join(&acc, &rel)
		d.crossAcc[k] = acc
		d.putBuf(rel)
		return
	}
	if acc, ok := d.crossAcc[k]; ok {
		join(&rel, &acc)
		delete(d.crossAcc, k)
	}
	for i, peer := range e.Peers {
		ck := crossKey{rank: e.Agent.Rank, core: peer, id: e.ID}
		v := rel
		if i < len(e.Peers)-1 {
			v = d.getBuf()
			v.copyFrom(&rel)
		}
		d.cross[ck] = append(d.cross[ck], v)
	}
}

func (d *Detector) crossWait(e *machine.Event) {
	if e.Agent.Core < 0 {
		return
	}
	a := d.agent(e.Agent)
	d.enter(a)
	d.takeIssueOf(a, e, false)
	c := d.agents[a].coreIdx
	if e.ID >= 0 && e.ID < numCrossIDs {
		d.cores[c].crossUsed |= 1 << e.ID
	}
	ck := crossKey{rank: e.Agent.Rank, core: e.Agent.Core, id: e.ID}
	q := d.cross[ck]
	if len(q) == 0 {
		return
	}
	v := q[0]
	d.cross[ck] = q[1:]
	d.noteCrossWait(ck)
	d.acquire(a, &v)
	// On A2/A3 the wait stalls the whole core: the scalar issues nothing
	// until it passes.
	if s := d.scalarOf(c); s != a {
		d.enter(s)
		d.acquire(s, &v)
	}
	d.putBuf(v)
}

// ---- signals --------------------------------------------------------------

func (d *Detector) notify(e *machine.Event) {
	if len(e.Accesses) == 0 {
		return
	}
	a := d.agent(e.Agent)
	d.enter(a)
	serial, _ := d.takeIssueOf(a, e, false)
	ag := &d.agents[a]
	ag.n++
	if ag.kind == akScalar {
		raise(&ag.clock, d.pos(a), ag.n)
	}
	r := d.mkrec(a, e, serial)
	acc := e.Accesses[0]
	acc.Write = true
	acc.Atomic = e.Word == "add"
	if acc.Hi <= acc.Lo {
		return
	}
	d.checkBounds(&r, &acc)
	r.write, r.atomic = true, acc.Atomic
	d.signalAccess(&r, &acc, true)
	sm := d.shadowFor(&acc)
	for lo := acc.Lo; lo < acc.Hi; {
		m, hi := sm.page(lo, acc.Hi)
		i, j := m.span(lo, hi)
		lo = hi
		for _, c := range m.cells[i:j] {
			if c.hist == nil {
				c.hist = &sigHist{}
			}
			h := c.hist
			h.wrote(&r)
			if h.runGen != d.gen {
				h.runAdd, h.runGen = 0, d.gen
			}
			if acc.Atomic {
				h.runAdd += e.Value
			}
		}
	}
}

func (d *Detector) signalWait(e *machine.Event) {
	a := d.agent(e.Agent)
	d.enter(a)
	serial, _ := d.takeIssueOf(a, e, false)
	r := d.mkrec(a, e, serial)
	for i := range e.Accesses {
		acc := e.Accesses[i]
		if acc.Hi <= acc.Lo {
			continue
		}
		acc.Write = false
		d.checkBounds(&r, &acc)
		d.staleCheck(&r, &acc, e)
		d.signalAccess(&r, &acc, false)
	}
}

// staleCheck notes a satisfied wait whose condition holds on the part of the
// signal's value that earlier runs left: writes of an earlier run with no
// host write after them (kernels.md §3(d) R1). Signal memory survives a
// launch, so such a wait passes whatever this run's peers do, which makes the
// verdict independent of whether a peer's notify of this run happened to land
// first. The machine reports the value of the last element it compared, so a
// multi-element wait is checked on that element. The wait is checked against
// the value it compared with at run time (Event.Want), so a generation
// computed in a register (loaded from GM, or from a loop variable) that
// restarts every launch is caught like a constant one.
func (d *Detector) staleCheck(r *rec, acc *machine.Access, e *machine.Event) {
	if e.Op == nil || e.Op.Info == nil {
		return
	}
	cmp, want := machine.SignalCmp(e.Op), e.Want
	lo := acc.Lo
	if acc.Tensor != nil {
		if sz := int64(acc.Tensor.DType.Size()); sz > 0 && acc.Hi-sz > lo {
			lo = acc.Hi - sz
		}
	}
	sm := d.shadowFor(acc)
	for lo < acc.Hi {
		m, hi := sm.page(lo, acc.Hi)
		i, j := m.span(lo, hi)
		lo = hi
		for _, c := range m.cells[i:j] {
			d.staleCell(r, acc, e, c, cmp, want)
		}
	}
}

func (d *Detector) staleCell(r *rec, acc *machine.Access, e *machine.Event, c *cell, cmp string, want int64) {
	if c.hasW && c.w.agent != d.host && c.w.gen == d.gen {
		return // a plain store of this run set the value
	}
	src, current := c.hist.stale(d.gen)
	if src == nil {
		return
	}
	left := e.Value
	if current && c.hist.runGen == d.gen {
		left -= c.hist.runAdd
	}
	if machine.CompareSignal(cmp, left, want) {
		d.notes = append(d.notes, raceNote{kind: KindStaleSignal, prev: *src, cur: *r, acc: *acc, lo: c.lo, hi: c.hi})
	}
}

// ---- syncall, host, runs --------------------------------------------------

func (d *Detector) syncAll(e *machine.Event) {
	if e.Agent.Core < 0 {
		return
	}
	a := d.agent(e.Agent)
	d.enter(a)
	c := d.agents[a].coreIdx
	cs := &d.cores[c]
	rounds := d.syncRounds[cs.rank]
	k := cs.syncCount
	if k >= len(rounds) {
		// Every participant has arrived when the first one passes, so the
		// round's clock is the join of every live core of the rank now.
		var clk vclock
		for i := range d.cores {
			o := &d.cores[i]
			if o.rank != cs.rank || !o.live {
				continue
			}
			if o.scalar >= 0 {
				d.enter(o.scalar)
				d.tmp = d.release(o.scalar, d.tmp)
				join(&clk, &d.tmp)
			}
			for _, p := range o.pipes {
				if p >= 0 {
					d.enter(p)
					d.tmp = d.release(p, d.tmp)
					join(&clk, &d.tmp)
				}
			}
		}
		rounds = append(rounds, clk)
		d.syncRounds[cs.rank] = rounds
	}
	cs.syncCount++
	d.drainCore(c, rounds[k])
}

func (d *Detector) hostWrite(e *machine.Event) {
	h := d.host
	d.agents[h].n++
	r := rec{agent: h, epoch: d.agents[h].n, gen: d.gen, write: true}
	for i := range e.Accesses {
		acc := &e.Accesses[i]
		if acc.Hi <= acc.Lo {
			continue
		}
		if acc.Tensor != nil && acc.Hi-acc.Lo == acc.Tensor.Bytes {
			*d.tensorBase.at(acc.Rank, acc.Tensor.Index) = tensorAt{acc.Lo, true}
			if g := d.gm2d.at(acc.Rank, acc.Tensor.Index); *g == nil || (*g).base != acc.Lo {
				if ng := newGMShadow(acc.Tensor, acc.Lo); ng != nil {
					*g = ng
				}
			}
		}
		poison := e.Word == "poison"
		if g := d.gmShadowFor(acc); g != nil {
			d.rects = g.rects(acc, d.rects[:0])
			for _, q := range d.rects {
				i, j := g.span(q.r0, q.r1)
				for _, b := range g.bands[i:j] {
					ci, cj := b.cols.span(q.c0, q.c1)
					for _, c := range b.cols.cells[ci:cj] {
						c.hostWrite(&r, poison)
					}
					b.cols.collapse(ci, cj)
				}
			}
			continue
		}
		sm := d.shadowFor(acc)
		for lo := acc.Lo; lo < acc.Hi; {
			m, hi := sm.page(lo, acc.Hi)
			i0, j0 := m.span(lo, hi)
			lo = hi
			for _, c := range m.cells[i0:j0] {
				c.hostWrite(&r, poison)
			}
			m.collapse(i0, j0)
		}
	}
}

func (d *Detector) runBoundary(start bool) {
	d.gen++
	for i := range d.cores {
		cs := &d.cores[i]
		for j := range cs.pending {
			d.putBuf(cs.pending[j].steps)
		}
		cs.pending = cs.pending[:0]
		for j := range cs.comp {
			d.putBuf(cs.comp[j].steps)
		}
		cs.comp = cs.comp[:0]
		clear(cs.log)
		cs.log = cs.log[:0]
		for _, ch := range cs.chans {
			ch.set, ch.queue = false, nil
		}
		cs.live = false
		cs.syncCount = 0
	}
	clear(d.cross)
	clear(d.crossAcc)
	clear(d.crossIncs)
	clear(d.accArr)
	clear(d.syncRounds)
	if start {
		// Local buffers do not carry data from one launch to the next.
		for _, row := range d.shadow.rows {
			for i := range row {
				if i >= int(asm.NumSpaces) {
					row[i] = nil
				}
			}
		}
		clear(d.shadow.odd)
		d.lastMem = nil
		d.cells.reset()
	}
}

func (d *Detector) kernelEnd(e *machine.Event) {
	if e.Agent.Core < 0 {
		return
	}
	c := d.core(e.Agent.Rank, e.Agent.Core)
	cs := &d.cores[c]
	report := func(ch *flagChan) {
		msg := fmt.Sprintf("set_flag %s, %s, %d is never consumed: the kernel ends with the flag still set, which corrupts the flag state the next kernel on this core sees", ch.src, ch.dst, ch.id)
		hint := fmt.Sprintf("add `wait_flag %s, %s, %d` before the kernel ends (the drain of an INIT/DRAIN pair), or do not set it on the last iteration", ch.src, ch.dst, ch.id)
		if ch.hasLast {
			d.single(KindUnpairedSet, SevWarning, &ch.last, msg, hint)
			return
		}
		var r rec
		r.agent = d.agent(machine.Agent{Rank: cs.rank, Core: cs.core, Pipe: ch.src})
		d.single(KindUnpairedSet, SevWarning, &r, msg, hint)
	}
	for _, f := range e.Flags {
		if !validPipe(f.Src) || !validPipe(f.Dst) {
			continue
		}
		ch := d.chanOf(c, f)
		report(ch) // once per pending set: the machine lists each
		ch.set, ch.queue = false, nil
	}
	for _, ch := range cs.chans {
		for ; ch.set; ch.set = len(ch.queue) > 0 {
			report(ch)
			if len(ch.queue) > 0 {
				ch.queue = ch.queue[1:]
			}
		}
	}
}

// ---- deadlocks and machine errors ----------------------------------------

func (d *Detector) deadlock(bl []machine.Blocked, names []string) {
	if len(bl) == 0 {
		return
	}
	var recs []rec
	var parts []string
	for i, b := range bl {
		a := d.agent(b.Agent)
		r := rec{agent: a, gen: d.gen, op: b.Op}
		recs = append(recs, r)
		who := d.coreName(&d.agents[a])
		if i < len(names) && names[i] != "" {
			who = names[i]
		}
		at := ""
		if p := opPos(b.Op); p.IsValid() {
			at = " at " + p.String()
		}
		root := ""
		if b.Root && len(bl) > 1 {
			root = "root: "
		}
		parts = append(parts, fmt.Sprintf("%s%s %s%s: %s", root, who, pipeName(&d.agents[a]), at, b.Reason))
	}
	msg := "nothing can move: " + strings.Join(parts, "; ")
	hint := "every wait needs a producer that is not itself waiting: add the missing set_flag/ffts_set/tnotify on every path before the wait, or break the cycle"
	for _, b := range bl {
		if strings.Contains(b.Reason, "wait_flag") {
			hint = "a wait_flag whose set_flag never runs on this path: add the set on every path before the wait (prime it before a loop whose first iteration waits), or remove the wait"
			break
		}
	}
	// The machine lists the root wait first, so it is the finding's site; the
	// second site is the first agent blocked behind it that has a position (a
	// scalar waiting at kernel end has none, and a "?" site says nothing).
	for i := 1; i < len(recs); i++ {
		if opPos(recs[i].op).IsValid() {
			d.pair(KindDeadlock, SevError, &recs[0], &recs[i], msg, hint)
			return
		}
	}
	d.single(KindDeadlock, SevError, &recs[0], msg, hint)
}

// NoteError turns an error a machine run returned into findings: a deadlock
// (when no EvDeadlock was observed) or a runtime fault, classified by its
// message as bad-event-id, out-of-bounds or fault (a double set is no fault:
// the machine counts it and the detector decides it from ordering). Other errors
// are ignored and the caller reports them.
func (d *Detector) NoteError(err error) {
	d.drain()
	d.notes = d.notes[:0]
	switch x := err.(type) {
	case *machine.DeadlockError:
		for _, f := range d.findings {
			if f.Kind == KindDeadlock {
				return
			}
		}
		d.deadlock(x.Blocked, x.Names)
	case *machine.Fault:
		a := d.agent(machine.Agent{Rank: int32(x.Rank), Core: int32(x.Core), Pipe: x.Pipe})
		r := rec{agent: a, gen: d.gen, op: x.Op}
		kind := KindFault
		m := strings.ToLower(x.Msg)
		switch {
		case strings.Contains(m, "event id") || strings.Contains(m, "flag id"):
			kind = KindBadEventID
		case strings.Contains(m, "out of bounds") || strings.Contains(m, "out-of-bounds") || strings.Contains(m, "outside"):
			kind = KindOutOfBounds
		}
		d.single(kind, SevError, &r, x.Msg, "")
	}
	d.flushNotes()
}

// ---- bounds ---------------------------------------------------------------

// tensorAt is where a rank's copy of a tensor lives in GM, once the host
// wrote it whole.
type tensorAt struct {
	base int64
	ok   bool
}

func (d *Detector) checkBounds(r *rec, acc *machine.Access) {
	// A strided access's runs all lie within its bounds: checking those
	// covers its last row, which Hi alone does not.
	lo, hi := acc.Bounds()
	if t := acc.Tile; t != nil && acc.Space != asm.GM && t.Bytes > 0 {
		// The element the operand named, not the first one holding lo:
		// elements of an array with a step below the tile size overlap on
		// purpose, and element 1's access starts inside element 0.
		el, ok := elemAt(acc)
		if !ok {
			if len(t.Addr) > 0 {
				d.oob(r, acc, fmt.Sprintf("%s %s [%#x, %#x) outside every element of tile %s", verb(acc), acc.Space, lo, hi, tileName(t, -1)))
			}
			return
		}
		if base := t.Addr[el]; lo < base || hi > base+t.Bytes {
			where := "past the end of"
			if lo < base {
				where = "before the start of"
			}
			d.oob(r, acc, fmt.Sprintf("%s %s [%#x, %#x), %s tile %s [%#x, %#x)", verb(acc), acc.Space, lo, hi, where, elemName(t, el), base, base+t.Bytes))
		}
		return
	}
	if t := acc.Tensor; t != nil && acc.Space == asm.GM {
		at := d.tensorBase.get(acc.Rank, t.Index)
		base := at.base
		if at.ok && (lo < base || hi > base+t.Bytes) {
			d.oob(r, acc, fmt.Sprintf("%s bytes [%d, %d) of %s, which has %d bytes", verb(acc), lo-base, hi-base, tensorName(t, acc.Rank), t.Bytes))
		}
	}
}

// elemAt is the element of acc's tile array the access went through:
// Access.Elem, which the machine sets from the operand, or, for an access
// whose Elem does not name an element holding its first byte (one built by
// hand), the first element that does.
func elemAt(acc *machine.Access) (int, bool) {
	t := acc.Tile
	if e := int(acc.Elem); e >= 0 && e < len(t.Addr) && acc.Lo >= t.Addr[e] && acc.Lo < t.Addr[e]+t.Bytes {
		return e, true
	}
	for i, base := range t.Addr {
		if acc.Lo >= base && acc.Lo < base+t.Bytes {
			return i, true
		}
	}
	return 0, false
}

// verb is what the access did, for out-of-bounds messages.
func verb(acc *machine.Access) string {
	switch {
	case acc.Atomic && acc.Write:
		return "atomically adds to"
	case acc.Write:
		return "writes"
	}
	return "reads"
}

func (d *Detector) oob(r *rec, acc *machine.Access, msg string) {
	w := *r
	w.write = acc.Write
	lo, hi := acc.Bounds()
	d.notes = append(d.notes, raceNote{kind: KindOutOfBounds, cur: w, acc: *acc, lo: lo, hi: hi, single: true, msg: msg})
}

// WantsKind implements machine.KindFilter: the detector ignores stalls.
func (d *Detector) WantsKind(k machine.EventKind) bool { return k != machine.EvStall }
