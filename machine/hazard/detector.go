package hazard

import (
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
	// Every event of a pipe reads the first cache line, a flag set or
	// wait the second too (the struct is padded to whole lines, so each
	// agent starts on a line of its own); a scalar's issue snapshot comes
	// in the third, the signal memo after.
	pipe asm.Pipe
	kind agentKind
	// dirty says some component of lc is ahead of clock's (see lc).
	dirty bool
	// gaps counts, modulo 256, the places where the agent's queued ops
	// skip an issue number of their core: another agent's op was issued
	// there, so a write of that agent may be meant to come between the
	// agent's reads on either side (rec.gap, keepPrior). lastIssue (below
	// lc) is the issue number of its last op, truncated. Both in the first
	// line, which every op's record reads anyway: in the last they cost
	// every op a line more.
	gaps    uint8
	coreIdx int32  // -1 for SDMA (whose core is the issuing one) and the host
	n       uint32 // ops so far (the agent's epoch counter)
	gen     uint32
	// lc holds the agent's components of its own core's agents, by pipe
	// slot (coreState.slots; 0 where the core has no such agent): the
	// components that flag sets and waits between the core's pipes, and
	// each op's issue state, read and raise millions of times. In clock
	// they sit in a block behind two table pointers, and a raise there
	// copies the path whenever the clock was copied since. So lc is the
	// agent's value of them and clock's may lag behind (dirty): raises
	// of them write lc alone (raiseOwn, raiseLocal), and flush writes lc
	// into clock before anything reads clock whole (a copy, a join from
	// it or into it). Joins into clock reload lc (syncLocal);
	// checkMirror verifies both in the self-checks.
	lc        pipeVals
	lastIssue uint32
	// lastSnap is the issue snapshot this agent joined last: joining it
	// again changes nothing (clocks only grow within a run). lastSnapRver
	// is its scalar's rver+1 then, and snapRver, for a scalar, its own
	// rver+1 when it took snap: a later snapshot with the same rver differs
	// only in its core's own components (joinState). In the first line:
	// every op's issue state compares it (sameIssueState), and an exec
	// reads nothing else of the second (round 19 of lint).
	lastSnap uint64
	// rver counts changes to the components of agents on other cores (or
	// none): a flag set whose source's rver is unchanged since the channel's
	// last full copy refreshes only the core's own few components. Beside
	// remRver and rem, which remote reads with it.
	rver uint64
	// rem names the other-core part of a pipe's clock, while remRver is
	// rver+1 (see remote).
	remRver uint64
	clock   vclock
	rem     remPart
	// ver counts changes to clock other than the agent's own component;
	// a scalar's issue snapshot (snap, taken at version snapVer) is shared
	// by every op it issues until then, so issuing costs no clock copy.
	snapID       uint64
	snapVer      uint64
	ver          uint64
	snapRver     uint64
	lastSnapRver uint64
	rank, core   int32
	snap         vclock
	// sigs remembers the signal words (and their versions, in run
	// generations) the agent joined last: a waiter polling words nobody
	// changed since has joined them already (signalCell).
	sigs    [sigMemo]sigSeen
	sigNext uint8
	_       [39]byte
}

// pipeVals holds one component per pipe slot (a pipe's number; S for the
// scalar) of one core's agents. An agent's pipe is any number below
// NumPipes (agent), so every one has a slot.
type pipeVals [asm.NumPipes]uint32

// remPart says what the other-core components of a pipe's clock are: those
// of its scalar's issue snapshot snap (0: none at all). A pipe learns of
// other cores almost only through the snapshots it joins, and a scalar's
// snapshots only grow, so two parts named this way compare by their
// snapshot ids without reading a component. After a remote notify reaches
// a core, every flag between its pipes otherwise copied and joined the whole
// clock (one component per agent of the system) until the next one.
type remPart struct {
	v uint64 // 0: unknown; else the snapshot's id + 1 (1: no news at all)
}

// knownRem is the part named by snapshot snap (0: none).
func knownRem(snap uint64) remPart { return remPart{snap + 1} }

// known reports whether the part is named; snap is its snapshot.
func (r remPart) known() bool  { return r.v != 0 }
func (r remPart) snap() uint64 { return r.v - 1 }

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
func (r remPart) within(o remPart) bool { return r.known() && o.known() && r.v <= o.v }

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
	// 256 bytes, so that every channel starts on a line: the first two
	// lines hold what every set and wait reads to decide how much of a
	// clock moves (and the wait marks the double-set rule reads, and the
	// queue's length); clock comes next, last, written by every set, fills
	// the fourth.
	src, dst asm.Pipe
	set      bool
	hasLast  bool
	locOnly  bool
	shared   bool // clock is a scalar's issue snapshot, which nothing writes (flagSet)
	used     bool // counted in coreState.used (never cleared there either)
	locMask  uint16
	id       int32
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
	// wait is the wait_flag that consumed the latest consumed set and wait0
	// the one before it (flagSet's double-set rule), each as far as that
	// rule reads them: a whole rec (its iteration vector copied at every
	// wait) took two more lines per wait.
	wait, wait0 waitMark
	// loc holds the core's own components, by pipe slot (coreState.slots),
	// for the slots in locMask, when locOnly: a set whose other-core part is
	// the copy's writes only these few words of one line, not a scattered
	// component per local agent in clock, which stays valid for the rest
	// (settle writes loc back before anything reads clock whole).
	loc     pipeVals
	snapGen uint32 // the run generation of snapID
	// queue holds the sets that fired while the flag was already set,
	// oldest first: the machine counts them (pipes.FlagBits), so the k-th
	// wait consumes the k-th set's release and the pairing never depends on
	// timing. Empty unless the program double-sets. (Its length, which
	// every wait reads, ends the second line.)
	queue []queuedSet
	clock vclock
	// ds memoises the double-set finding of the last pair of set ops: a
	// loop repeats one pair thousands of times, and each instance is a
	// count, not a new message to format.
	ds   *dsMemo
	_    [8]byte
	last rec // the latest set_flag on this channel, in the last line
}

// dsMemo is a channel's last double-set finding, f, the set ops of the
// pair it was for, and the severity of the instance that made it. That
// severity, not f's: f is shared with the other cores' channels, and
// whether another core's error had raised it before this channel's first
// error instance followed timing (and with it which instance f named).
type dsMemo struct {
	first, second *asm.COp
	f             *finding
	sev           Severity
}

// waitMark is a wait_flag as the double-set rule sees it: the waiter's
// epoch after the wait, in run generation gen, and its pipe slot on the
// channel's core, whose agents' components the setter (on that core too)
// keeps in agentState.lc. ok is false until the channel has such a wait.
type waitMark struct {
	epoch, gen uint32
	slot       uint8
	ok         bool
}

// queuedSet is a set waiting behind the channel's pending one.
type queuedSet struct {
	clock vclock
	rem   remPart
}

// settle writes the local part kept in loc back into clock.
func (ch *flagChan) settle(cs *coreState) {
	if ch.locOnly {
		if ch.shared {
			ch.clock, ch.shared = ch.clock.clone(), false
		}
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
	vals *pipeVals
	mask uint16
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
	// The fields every event of the core reads (enter, an op's issue
	// state) fill the first cache line, those flag events read the first
	// three (the struct is padded to whole lines).
	//
	// locals (below) lists the core's agents that exist, scalar first
	// (the scalar and a pipe for every other number: at most NumPipes);
	// slots[i] is locals[i]'s pipe, fixed once the agent exists, and
	// lpos[i] its component in clocks (Detector.pos); mask has a bit per
	// slot in use. A flag wait's join raises components by slot and
	// extends the clock to their positions (raiseLocals), and flushes
	// write them by position: lpos shares the first line with slots,
	// locals (agent numbers, read by drains and signal joins) is further
	// on. In the seventh line lpos cost a wait that raised anything a line.
	lpos     [asm.NumPipes]int32
	slots    [asm.NumPipes]uint8
	nlocals  uint8
	mask     uint16
	live     bool
	sawIssue bool // false until the engine emits EvIssue for this core; until then pipe ops take the scalar's current clock (see takeIssue)
	scalar   int32
	// log holds the scalar's states by issue number (mark), marked the
	// highest number logged.
	marked int64
	// logTo holds each log entry's to, in step with log: the search for
	// an op's entry (logIndexFrom) reads eight numbers a line, not one
	// entry of 72 bytes per number it compares.
	logTo  []int64
	serial int64
	rank   int32
	core   int32
	log    []issueState
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
	locals       [asm.NumPipes]int32
	_            [16]byte
	// chanHash holds recent flag channels by chanSlot of their key
	// (chanOf): a flag event reads one of its two lines, not the list.
	chanHash [1 << chanHashBits]*flagChan
	chanKeys []uint32    // chanKey of chans[i]
	chans    []*flagChan // in the order they appeared (chanHash above)
	_        [16]byte
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
	// secondCore is the second access's core for cross-core hints, and
	// run the run both accesses were in (Options.Placement).
	secondCore int32
	run        int32
	seq        int
	// canon says whether the instance add last counted is the one the
	// finding names (add).
	canon bool
	// pairs holds a race's agent pairs (first access's agent, second's)
	// with an instance pair met: the count a race reports (Findings).
	// Count, until then, counts arrivals, which follow timing (an access
	// that lands after several instances of the other side meets only
	// those its cell keeps); every agent pair with a race is met in every
	// order of the run, as the finding itself is (docs/hazards.md, "The
	// count").
	pairs map[[2]int32]struct{}
	// live holds an uninit-read's instances counted and not taken back
	// (retractUninit), so that the finding names the first of those by
	// instLess; liveLost says some were not kept (maxLiveUninit).
	live     []uninitInst
	liveLost bool
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
	// named offers an instance of a pair whose race is already counted
	// (raceRead): the finding may name it (instLess), its count stays.
	named bool
	// accFirst says acc is the first access's (it arrived after the
	// second): the buffer is named from the second's operand (raceBuffer).
	accFirst bool
	// sp is the cell the race was met on (spans), when hasSp.
	sp    span
	hasSp bool
}

// Detector is the dynamic happens-before hazard detector; it implements
// machine.Observer. It is not safe for concurrent use.
type Detector struct {
	opt    Options
	agents []agentState
	// agentIdx and coreIdx hold index+1 of each agent, by (rank, (core+1)
	// * NumPipes + pipe), and of each core, by (rank, core).
	agentIdx table[int32]
	// junkIdx holds the index of each agent of a malformed event (core
	// below -1), by the whole agent.
	junkIdx map[machine.Agent]int32
	// sdmaIdx holds index+1 of each SDMA agent, by (rank, issuing core).
	sdmaIdx table[int32]
	// sdmaOrd is, by core index, the order its SDMA copies run in
	// (sdmaorder.go); nil for a core that issued none.
	sdmaOrd []*sdmaOrder
	host    int32
	cores   []coreState
	coreIdx table[int32]
	// seen is, by core, which issue numbers reached the detector
	// (history.go).
	seen []issueSeen
	// stNow is issueState's answer for the current state of a scalar.
	stNow issueState
	// ilog is, by core, the scalar's iteration vectors by issue number
	// (iterlog.go), also by (rank, core) in iterIdx, and ailog each
	// agent's place in its core's. iterMisses counts the ops not found in
	// their core's.
	ilog       []*iterLog
	iterIdx    table[*iterLog]
	ailog      []agentIter
	iterMisses int
	gen        uint32
	// run is the current run's number (EvRunStart's ID), which
	// Options.Placement answers by.
	run int32
	// testCount counts each agent's TTESTs in the run, failed the
	// run's failed tests still noted, forceOut the tests the next pass
	// forces, and ftRel is a scratch release (testforce.go).
	testCount map[machine.Agent]int32
	failed    []*failedTest
	forceOut  map[testKey]bool
	ftRel     vclock

	cross map[crossKey][]vclock
	// pending holds each reduction's arrivals that have not fired yet
	// (ffts.go, takeArrivals).
	pending map[accKey][]pendingSet
	// ffts logs each core's FFTS sets and waits by issue number, by core
	// index, and fftsOwns caches which ids a kernel's own sets feed: the
	// intended order across kernels (fftsorder.go).
	ffts     []*fftsLog
	fftsOwns map[*asm.KernelInfo]uint16
	// firsts holds each core's first step of each op, by core index: a
	// read of two kernels' loops that starts no later than the write it
	// races is a hand-off (firststep.go).
	firsts []firstSteps
	// firstNow is the first step being recorded by the event in hand (nil
	// when the event is not its op's first instance on its core), for
	// firstStep.filled.
	firstNow *firstStep
	// units holds the L0C unit flags' hand-offs (unitflag.go).
	units map[unitKey]*unitClocks
	// crossIncs holds the set behind each pending increment of cross, in
	// the same order, so a counter still raised when the run ends is
	// reported at the set that left it (ffts.go).
	crossIncs map[crossKey][]crossInc
	// crossCnt counts each counter's increments and waits in the run, for
	// the overflow check (ffts.go, checkOverflow).
	crossCnt map[crossKey]*crossCount
	// shadow holds each buffer's shadow by (rank, (core+1) * NumSpaces +
	// space); GM is core -1.
	shadow  table[*shadowMem]
	slab    cellSlab // makes the shadow's cells
	snapSeq uint64   // issue snapshots taken (agentState.snapID)
	// gm2d holds the 2-D shadow of each plain row-major GM tensor, by
	// (rank, tensor index); rects is scratch for its rectangles.
	gm2d  table[*shadow2D]
	rects []rect
	// gm2dAny says gm2d holds a shadow: until then gmShadowFor answers
	// without the table, whose rank row is a cache miss per GM access at
	// hundreds of ranks (a 1-D ring has none).
	gm2dAny bool
	// histGen is the run generation of the first notify (0: none yet):
	// until a later run, no signal word's history holds a write of an
	// earlier run, and a wait has no stale signal to look for (staleCheck).
	histGen uint32
	// note is the notify whose words signalAccess visits (histNote).
	note histNote
	// wait is the satisfied wait whose word signalAccess visits (waitCmp);
	// prefixes holds the earlier releases of words one agent adds to, by
	// the word's latest release number, and movedPrefix one on its way
	// from the old number to the new (sigprefix.go).
	wait     waitCmp
	prefixes map[uint64]*sigPrefix
	// rmw holds this run's signal words a candidate read-modify-write
	// loaded, rmwOps which `ld` ops are candidates, and rmwLastOp and
	// rmwLastIs the last one asked (rmw.go).
	rmw       map[rmwKey]*rmwWord
	rmwOps    map[*asm.COp]bool
	rmwLastOp *asm.COp
	rmwLastIs bool
	// dataLoad is set while signalAccess visits the words of a
	// read-modify-write's load, which acquires nothing.
	dataLoad    bool
	movedPrefix *sigPrefix
	// multi holds the releases of words several agents add to, by the
	// word's release id, and multiAdd the history the add being visited
	// extended, whose version signalCell sets once it has counted the add
	// (sigprefix.go, "several notifiers").
	multi    map[*sigCore]*multiHist
	multiAdd *multiHist
	// meetBlocks, meetNs and meetCol are meetWait's scratch: the kept
	// releases' blocks at one block index, their sizes, one component, its
	// values above the waiter's.
	meetBlocks []*vblock
	meetNs     []int32
	meetCol    []uint32
	meetVals   []uint32
	// eqReach is eqReaches' scratch: the sums the adds can make.
	eqReach []uint64
	// readCost is afterRead's scratch: the least sum read, by sum needed.
	readCost []int64
	// lateWatch holds the watched waits by word, lateOut the late adds
	// a next pass must give its waits, lateFalls whether some wait's meet
	// fell with them, lateCount each agent's signal waits so far and
	// waitAcc the access of the one being visited (waitKey, latewait.go).
	lateWatch map[*sigCore][]*lateWait
	lateOut   map[waitKey][]lateAdd
	lateFalls bool
	lateCount []uint32
	waitAcc   uint32
	// lateRel is the full release of the add being visited while a wait
	// watches its word (signalCell), shared with keepAdders' copy.
	lateRel vclock
	// lastKey/lastMem cache the buffer looked up last.
	lastKey shadowKey
	lastMem *shadowMem
	// cells remembers the cell each recent byte range landed on; hit is
	// the entry of a local buffer the current event's previous access hit
	// (access), nil for none.
	cells cellCache
	hit   *cellSlot
	// tensorBase learns where each (rank, tensor) lives in GM from the host
	// writes of whole tensors, for out-of-bounds checks.
	tensorBase table[tensorAt]
	syncRounds map[int32][]vclock

	// steps interns composite step names for rec.step; steps[0] is "".
	steps   []string
	scratch machine.Event
	// lister lists the accesses of lean ops' exec events, which the
	// machine sends unlisted (DefersAccesses), on this goroutine.
	lister machine.AccessLister
	spare  []*batch
	front  front

	findings []*finding
	byKey    map[findKey]*finding
	notes    []raceNote
	// eq holds, by word, what wait-overwritten keeps of the signal words
	// set notifies wrote (eqwait.go); nil until the first set.
	eq map[eqKey]*eqWord
	// eqCount holds the count words an `==` wait of the run's kernels
	// polls (eqcount.go), eqCountList them in the order made; eqKernels
	// the kernels scanned for such waits (eqLastKernel the latest), and
	// eqTensors the signals they wait on.
	eqCount      map[eqKey]*eqCountWord
	eqCountList  []*eqCountWord
	eqKernels    []*asm.KernelInfo
	eqLastKernel *asm.KernelInfo
	eqTensors    []*asm.TensorInfo
	// eqRunTensors are the signals a kernel of the run waits on with `==`
	// (EvRunStart's kernels), eqRun what the run's writes did to their
	// words (eqinit.go).
	eqRunTensors []*asm.TensorInfo
	eqRun        map[eqKey]eqRunWord
	// retracted holds the uninit-read notes of run generation retractedGen
	// already taken back (retractUninit).
	retracted    map[retractKey]struct{}
	retractedGen uint32
	// moved holds the (access instance, finding) pairs whose race moved to
	// a later write (moveRace), with the cells it moved on, and raced the
	// cells each such pair counted its race on (movespan.go): a count is
	// taken back where the first cover the second.
	moved map[movedKey][]span
	raced map[movedKey][]span
	// movedFrom holds, for each moved pair, the agents of the accesses
	// whose races with it moved: the agent pairs a move takes back
	// (livePairs).
	movedFrom map[movedKey][]int32
	// cur is the cell accessCell is visiting, and noteSpans scratch for
	// flushNotes (the spans of the counted notes it merges).
	cur       curCell
	noteSpans []span
	// counted holds the (access instance, finding) pairs a race note added
	// a count for, either side: a move takes back only such a count. One
	// note stands for every instance of its two sites that one access
	// met (flushNotes), so moving each of them took back counts never
	// added, and a finding whose instances a late write met together
	// vanished in one order of the run and not in another.
	counted map[movedKey]struct{}

	// arrivals holds each agent pair a race met, once per access
	// instance and finding (either side, arrivalOf), so that a pair whose
	// every instance moved to a later write is not counted (livePairs).
	arrivals    []pairArrival
	arrivalOf   map[movedKey][]int32
	arrivalSeen map[arrivalKey]struct{}

	pool    []vclock
	tmp     vclock
	relSeen []relSeen // by agent (acquireSig)
	sigSlab sigSlab   // signal words' cells, histories and add lists (sigword.go)
	// oldsBoxes makes the boxes of the cells that keep overwritten GM
	// accesses (cell.oldsRoom).
	oldsBoxes slab[oldsBox]
	// wordScratch stands for table word wordCur while the signal code
	// has it (wordCell).
	wordScratch cell
	wordCur     *sigWord
	wordLists   cellLists // wordScratch's: its other writes (sigWord.adds)
	wordAdd1    [1]rec    // their array while they are none or one

	// oldOps is the table of the ops of kept overwritten GM accesses,
	// by their place in packedRec (olds.go); oldOpIdx, with a one-entry
	// cache, finds an op's place.
	oldOps     []*asm.COp
	oldOpIdx   map[*asm.COp]uint32
	oldOpCache [1 << oldOpCacheBits]oldOpSlot
	// oldW and oldBy hold the kept records meetOlds and beforeEveryKept
	// unpack.
	oldW, oldBy rec
	// keptMisses counts the accesses that met a GM range not ordered
	// after an access the bound dropped from it (keptMissed);
	// keptMissSite and keptMissAt name the first one and its buffer: the
	// report's KindKeptLimit note.
	keptMisses   int
	keptMissSite Site
	keptMissAt   string
	// eqMisses, eqMissSite and eqMissAt are the same for the signal
	// words wait-overwritten keeps (eqMissed, eqKeptNote).
	eqMisses   int
	eqMissSite Site
	eqMissAt   string
	// keptOrdered counts the overwritten GM accesses dropped at the bound
	// because every agent was ordered after them (dropOrdered), keptAged
	// those dropped as the oldest; agentEnd marks the agents
	// of ended cores, orderedMemo is orderedForAll's last answer, valid
	// while keptSeq (moved by every kernel end) holds.
	keptOrdered int
	keptAged    int
	agentEnd    []agentEndMark
	orderedMemo keptMemo
	keptSeq     uint64

	// racedWith holds the instance pairs (a read or write, then a write)
	// whose race was counted, so a later write ordered after the second can
	// take the race over (raceRead, raceWrite, noteRaced).
	racedWith map[moveKey]struct{}
	// ghosts holds, by write instance, the accesses that left a cell
	// having raced that write (history.go, leaves).
	ghosts map[instKey][]ghost
	// dropped is scratch for accessCell: the reads of a GM cell a write
	// takes out of it, to keep beside the write (keepOld).
	dropped []rec
	// apos holds each agent's position in clocks and pagent the agent at
	// each position (-1: none); npos is the number of positions, miscFill
	// the group the agents of no core fill (place).
	apos   []int32
	pagent []int32
	npos   int32
	// aloc is each agent's core index + 1 (0: none) and pipe slot, as
	// coreIdx<<4 | slot: whether an agent is another's core-mate, and
	// where the other's lc keeps it, read without the agent's own lines.
	aloc []uint32
	// soff says, by agent, whether the agent's races with itself are off
	// (SamePipe at SevOff: selfOff), asked for most pairs an access meets.
	soff     []bool
	miscFill posFill
	cfill    []posFill // by core
	relSeq   uint64    // releases recorded in signal words (cell.sigAt)
	// readsFrom fingerprints the plain store each satisfied signal wait
	// read (readsfrom.go).
	readsFrom uint64
	// handingCopy is set while checkHandoff runs handoff on a cell's copy,
	// so that the copy takes handoff's own change, unchecked.
	handingCopy bool
}

// New returns a detector with the given options.
func New(opt Options) *Detector {
	d := &Detector{
		opt:        opt,
		gen:        1,
		cross:      map[crossKey][]vclock{},
		syncRounds: map[int32][]vclock{},
		byKey:      map[findKey]*finding{},
	}
	d.wordScratch.sigBox = new(sigBox)
	d.host = int32(len(d.agents))
	d.agents = append(d.agents, agentState{rank: -1, core: -1, pipe: asm.PipeInvalid, kind: akHost, coreIdx: -1, gen: d.gen})
	d.place(d.host, &d.miscFill)
	d.aloc = append(d.aloc, 0)
	d.soff = append(d.soff, d.opt.SamePipe.level(asm.PipeInvalid, false) == SevOff)
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
		f.batched = !d.opt.Serial
	}
	if f.batched {
		d.pushLocal(e)
		return
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
		if isTest(e) {
			d.testKeyOf(e) // counted, as the machine does (TestForcer)
		}
		d.signalWait(e)
	case machine.EvSignalTest:
		d.failedTest(e)
	case machine.EvSyncAll:
		d.syncAll(e)
	case machine.EvHostWrite:
		d.hostWrite(e)
	case machine.EvRunStart:
		d.runBoundary(true) // what the last run held first
		d.run = e.ID
		d.eqRunStart(e.Kernels)
		clear(d.testCount)
	case machine.EvRunEnd:
		d.testsEnd()
		d.eqCountEnd()
		d.runHeld()
		d.crossLeftovers()
		d.runBoundary(false)
	case machine.EvKernelEnd:
		d.kernelEnd(e)
	case machine.EvDeadlock:
		d.deadlock(e.Blocked, nil)
	}
	if len(d.notes) > 0 { // a call per event otherwise, for the few with notes
		d.flushNotes()
	}
}
