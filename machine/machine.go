package machine

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/memory"
	"github.com/ptoasm/ptoasm/pipes"
)

// Input overrides a GM tensor's initial contents with a .npy or raw .bin file.
type Input struct {
	Tensor string
	Rank   int // -1: every rank
	Path   string
}

// Options configure a Machine.
type Options struct {
	// Profile is the timing model; nil means pipes.DefaultProfile().
	Profile *pipes.Profile
	// TimingOnly skips every data effect that no scalar control flow reads,
	// for large shapes, performance studies and lint: signals, ld sources and
	// the instructions feeding them are still computed (slice.go), so the
	// run takes the same path as a full one; output checks are skipped.
	TimingOnly bool
	Observers  []Observer
	// MaxCycles stops a run that goes on longer; 0 means DefaultMaxCycles.
	MaxCycles int64
	// MaxIdleCycles stops a run once this many cycles have passed with no
	// instruction in flight on any pipe, no async copy under way and no
	// write to GM: nothing a scalar could be waiting for is going to
	// happen, so it spins for ever (`while 1 {}`, an ld poll of a signal
	// no one writes). 0 means DefaultMaxIdleCycles; negative, no limit.
	MaxIdleCycles int64
	// MaxTime stops Run after this much wall-clock time; 0, no limit. The
	// guard for a runaway that keeps the pipes busy (the cycle guards
	// are deterministic, this one is not).
	MaxTime time.Duration
	Inputs  []Input
	// MaxMemory is the budget in bytes for the machine's storage (see
	// DefaultMaxMemory, the value 0 stands for); a program that needs more
	// is refused with a *BudgetError before anything is allocated (GM) or
	// when a core first needs its buffers.
	MaxMemory int64
	// MaxHeap, when positive, stops Run with a *LimitError (LimitMemory)
	// once the Go heap's live bytes pass it: what grows with the run's work
	// rather than with its declarations, the hazard detector's records and
	// a trace's events, is bounded too (a racing loop that never ended once
	// took a lint past 1 GiB within a minute, long before MaxTime). The CLI
	// sets it to the process's memory limit (runtime/debug.SetMemoryLimit):
	// the collector works harder near that limit but cannot free what is
	// live, so past it the process would only grow. The heap is the
	// process's: only a process that runs one machine at a time sets it.
	// Checked with MaxTime.
	MaxHeap int64
	// Cancel, once closed, stops Run at its next wall-clock check (as
	// often as MaxTime's) with ErrCancelled: the language server drops a
	// lint run an edit has made stale.
	Cancel <-chan struct{}
	// Progress, when set, is called on the machine's goroutine with a
	// snapshot of the run about ten times a second of wall-clock time (at
	// the wall-clock checks, see MaxTime), for a progress line. It must
	// return quickly.
	Progress func(Progress)
	// Print receives what tprint instructions print, in simulated-time
	// order (nil: discarded). TimingOnly runs print nothing: no data.
	Print io.Writer
	// NoStretches runs every event in the global order, none of a core's
	// local events ahead of the clock (stretch.go). Results and observed
	// findings are the same either way: for tests that compare the two.
	NoStretches bool
	// NoAccessTemplates lists every observed op's accesses afresh, none
	// from its plan's template (acctmpl.go). Findings are the same either
	// way: for tests that compare the two.
	NoAccessTemplates bool
}

// The default run guards. DefaultMaxCycles is 2^34 cycles, 9.3 s of device
// time at 1.85 GHz: the largest shipped program (allgather_gemm on 8 ranks
// at 16384x4096x4096, its three runs) takes 26.7 M cycles, 640 times less.
// DefaultMaxIdleCycles is 2^24 cycles, 9 ms of device time in which no pipe
// of any core ran an instruction and nothing wrote GM; a kernel waiting
// that long for a peer is waiting for nothing. A scalar-only loop runs
// about 10^8 simulated cycles a second, so `while 1 {}` stops within a
// fraction of a second of wall time.
const (
	DefaultMaxCycles     = 1 << 34
	DefaultMaxIdleCycles = 1 << 24
)

// gmBase is where the first GM object of a rank starts; objects follow at
// gmAlign-aligned addresses so reports show plausible, stable addresses.
const (
	gmBase  = 0x1000
	gmAlign = 512
)

// gmObj is one GM tensor (window, signal, fifo) on one rank.
type gmObj struct {
	info *asm.TensorInfo
	buf  *memory.Buffer
	base int64
	size int64
}

type rankState struct {
	id    int
	gm    []gmObj // by TensorInfo.Index
	cores []*core // nAIC AICs then nAIV AIVs; created on first use
	// portBusy is when this rank's GM port is free again (GM bandwidth shared by
	// every core of the rank).
	portBusy int64
	// l2 is the die's L2 (nil when the profile has none); l2Busy is when its
	// port, shared like the GM port, is free again.
	l2     *l2Cache
	l2Busy int64
	// watchers are scalars spinning in twait on this rank's GM.
	watchers []*core
	// fifoDir is each fifo's direction once used: 1 AIC→AIV, 2 AIV→AIC.
	fifoDir []int8
}

// Machine is one simulated system running one assembled program.
type Machine struct {
	obj  *asm.Object
	opt  Options
	prof *pipes.Profile
	// jit is the profile's per-unit skew, nil when jitter.seed is 0 (jitter.go).
	jit *jitter
	// scalarOp is max(prof.Scalar.Op, 1), the cycles of one scalar step,
	// read on every step.
	scalarOp int64
	nranks   int
	nAIC     int
	nAIV     int
	ranks    []*rankState
	steps    []launchStep
	// runPlaces holds each run's placement, by the run's EvRunStart ID.
	runPlaces []*runPlaces
	// links is the interconnect's busy-until state (link.go).
	links links

	// scheduler is the event order: the clock (now) and every agent's
	// pending wake-up (sched.go). Embedded, so the engine reads m.now and
	// calls m.schedule as the machine's own.
	scheduler

	// current run
	stepIdx  int
	running  bool
	runStart int64
	active   []*core // cores of the current run, in (rank, core) order
	streams  []*stream
	live     int // active cores not yet finished
	finished bool
	err      error
	// halted are the faults whose cores Run stopped while the others went
	// on (halt); haltDone says the run's end is being reported.
	halted   []*Fault
	haltDone bool
	// workEnd is when the last work ends that a spinning scalar could be
	// waiting for: an instruction in flight on a pipe, an async copy, a
	// GM write (the idle guard, Options.MaxIdleCycles).
	workEnd int64
	// Stretches (stretch.go): strOK says this run may use them, noStr
	// that it is a rerun without them, strRan that one ran and reran that
	// Run repeated the run, strObs that every observer takes them and can
	// start afresh for Run's repeat (StretchObserver); strT is the latest
	// event a stretch ran, aheadWE the latest end of work begun in one and
	// aheadAt the latest cycle that work began by (foldIdle).
	strOK, noStr, strRan, reran, strObs bool
	// waves says some core of the run has had a wave slot (core.slot):
	// until then strIdle need not read the slot (round 25).
	waves                  bool
	strT, aheadWE, aheadAt int64
	// strN counts the stretches of the current window and strEv the
	// events they ran; strPays judges a window of strProbeAt (strMinEv
	// events each on average) and pauses stretches until cycle strPause
	// for strPauseN cycles when it falls short, strPauses times in all
	// (strProbe, strMinEvents and strPauseCycles unless
	// TestStretchIsExact sets them).
	strN, strEv, strProbeAt, strMinEv int64
	strPause, strPauseN, strPauses    int64
	// guardN counts events down to the next wall-clock check (MaxInt
	// without a MaxTime); deadline is when MaxTime runs out.
	guardN   int
	deadline time.Time
	// progressAt is when Options.Progress was last called.
	progressAt time.Time

	ev       Event
	emitting bool
	// flagTimes is whether set_flag records when it fired (core.flagAt):
	// only a hand-off latency and the debugger's flag view read it, and the
	// write was a cache miss on every flag of an unobserved run (or one
	// whose observers decline it, FlagTimeFilter).
	flagTimes bool
	// stalls is whether any observer wants EvStall: a fifth of all events,
	// which the hazard detector ignores, so they are not built for it alone.
	stalls bool
	// skip[i] lists the kinds observer i declined (KindFilter).
	skip [][numKinds]bool
	// forcer, when not nil, decides failed TTESTs (TestForcer), and
	// tests counts each agent's TTESTs in the current run (runID).
	forcer    TestForcer
	tests     map[Agent]int32
	runID     int32
	wantTests bool // some observer takes EvSignalTest
	// compOnly[i] says observer i wants only composite instructions'
	// issues (IssueFilter), and plainIssues whether any observer wants the
	// others' (half of all events).
	compOnly    []bool
	plainIssues bool
	// synthetic ops for the internal steps of composite instructions.
	opTLoad, opTStore, opTAddV, opTMaxV, opTMinV *asm.COp

	res      Result
	runEndAt int64
	hostDone bool
	// sdma holds every async transfer: its completion cycle, by register value-1.
	sdma  []int64
	flops int64
	bytes [numPaths]int64
	// rings views each fifo's slot ring as a matrix (lookups only, never ranged).
	rings map[*asm.TensorInfo]*asm.TensorInfo
	// slice is what a timing-only run still computes (nil in a full run).
	slice *controlSlice
	// readOnly marks the GM tensors no instruction writes (Access.ReadOnly).
	readOnly []bool
	// winMemo holds each tile window's byte ranges (access.go).
	winMemo map[winKey][]winRange
	// leanAccess holds a lean entry's accesses while they are listed
	// (leanArgs), and leanPlans counts the lean plans (opPlan.leanID).
	leanAccess [maxArgs]asm.Access
	leanPlans  int32
	// deferAcc says every observer of EvExec lists a lean op's accesses
	// itself (AccessDeferrer): its exec events carry Event.Deferred only.
	deferAcc bool
	// pipeObs is the only observer when it takes a pipe's common events
	// as PipeEvents (PipeObserver), pev the one they are built in.
	pipeObs PipeObserver
	pev     PipeEvent
	// sink is where pipeFast writes those events as records, when the
	// observer takes them so (PipeRecorder): noSink otherwise.
	sink *PipeSink
	// iterLog says every observer of a core pipe's events takes their
	// iteration vectors from the scalars' logs (IterLogger), iterObs.
	iterLog bool
	iterObs []IterLogger
	// views holds the tile views resolved so far (sem_view.go), so an
	// instruction that names the same binding again reuses its view.
	views map[viewKey]*asm.TileInfo
	// plans caches each kernel's op plans (looked up once per core start).
	plans map[*asm.KernelInfo][]opPlan
	// starts counts core kernel starts (core.gen).
	starts uint32
	// codes caches each kernel's flat code.
	codes map[*asm.KernelInfo][]inst
	// mem is the storage taken of Options.MaxMemory.
	mem budget
	// vseen holds each (rank, virtual core) observers have been told of
	// (rank<<32 | vid), and vagents their agents (scalar and pipes): see
	// chargeVirtual.
	vseen   map[int64]struct{}
	vagents int64
	// exprInit spares the other ranks an expr init that does not use rank.
	exprInit exprInitCache
}

// noSink is the sink of a machine whose observer takes no records: its Buf
// stays nil.
var noSink PipeSink

// New prepares a machine: evaluates the launch section, allocates every GM
// object on every rank and applies initial contents and Inputs.
func New(obj *asm.Object, opt Options) (*Machine, error) {
	if obj == nil {
		return nil, fmt.Errorf("machine: no program")
	}
	m := &Machine{obj: obj, opt: opt, prof: opt.Profile}
	if m.prof == nil {
		m.prof = pipes.DefaultProfile()
	}
	if m.opt.MaxCycles <= 0 {
		m.opt.MaxCycles = DefaultMaxCycles
	}
	switch {
	case m.opt.MaxIdleCycles == 0:
		m.opt.MaxIdleCycles = DefaultMaxIdleCycles
	case m.opt.MaxIdleCycles < 0:
		m.opt.MaxIdleCycles = math.MaxInt64
	}
	m.guardN = math.MaxInt
	m.mem.b.Max = m.opt.MaxMemory
	if m.mem.b.Max <= 0 {
		m.mem.b.Max = DefaultMaxMemory
	}
	m.emitting = len(opt.Observers) > 0
	m.flagTimes = m.prof.Sync.FlagHandoff != 0
	for _, o := range opt.Observers {
		if f, ok := o.(FlagTimeFilter); !ok || !f.NoFlagTimes() {
			m.flagTimes = true
		}
	}
	m.skip = make([][numKinds]bool, len(opt.Observers))
	m.compOnly = make([]bool, len(opt.Observers))
	for i, o := range opt.Observers {
		f, ok := o.(KindFilter)
		for k := range EventKind(numKinds) {
			m.skip[i][k] = ok && !f.WantsKind(k)
		}
		// A failed test is news only to an observer that decides them
		// (traces keep their events).
		tf, forces := o.(TestForcer)
		m.skip[i][EvSignalTest] = !forces
		m.wantTests = m.wantTests || forces
		if forces && tf.ForcesTests() {
			m.forcer = tf
			m.tests = make(map[Agent]int32)
		}
		m.stalls = m.stalls || !m.skip[i][EvStall]
		if f, ok := o.(IssueFilter); ok {
			m.compOnly[i] = f.CompositeIssuesOnly()
		}
		m.plainIssues = m.plainIssues || !m.skip[i][EvIssue] && !m.compOnly[i]
	}
	if len(opt.Observers) == 1 {
		if o, ok := opt.Observers[0].(PipeObserver); ok && !m.skip[0][EvExec] && !m.skip[0][EvFlagSet] && !m.skip[0][EvFlagWait] {
			m.pipeObs = o
		}
	}
	m.deferAcc = m.emitting
	for i, o := range opt.Observers {
		if f, ok := o.(AccessDeferrer); !m.skip[i][EvExec] && (!ok || !f.DefersAccesses()) {
			m.deferAcc = false
		}
	}
	m.iterLog = m.emitting
	for i, o := range opt.Observers {
		if l, ok := o.(IterLogger); ok {
			m.iterObs = append(m.iterObs, l)
			continue
		}
		for _, k := range [...]EventKind{EvExec, EvFlagSet, EvFlagWait, EvBarrier, EvCrossSet, EvStall} {
			m.iterLog = m.iterLog && m.skip[i][k]
		}
	}
	m.strObs = m.emitting
	for _, o := range opt.Observers {
		if s, ok := o.(StretchObserver); !ok || !s.TakesStretches() {
			m.strObs = false
		}
	}
	m.sink = &noSink
	if r, ok := m.pipeObs.(PipeRecorder); ok && m.iterLog {
		m.sink = r.PipeRecords()
	}
	m.scalarOp = max(m.prof.Scalar.Op, 1)
	m.jit = newJitter(m.prof.Jitter)
	m.nAIC, m.nAIV = int(m.prof.AICPerRank), int(m.prof.AIVPerRank)
	if err := m.planLaunch(); err != nil {
		return nil, err
	}
	m.links.init(m.prof, m.nranks)
	// Wake-up keys pack the agent into the top 64-seqBits bits of waker.ord.
	if int64(m.nranks)*int64(m.nAIC+m.nAIV)*int64(asm.NumPipes)+2 >= 1<<(64-seqBits) {
		return nil, fmt.Errorf("machine: %d ranks x %d cores is more agents than the scheduler can order", m.nranks, m.nAIC+m.nAIV)
	}
	m.ranks = make([]*rankState, m.nranks)
	for r := range m.ranks {
		m.ranks[r] = &rankState{id: r, cores: make([]*core, m.nAIC+m.nAIV), l2: newL2(int64(float64(m.prof.L2.Size)*m.prof.L2.Usable), m.prof.L2.Line)}
	}
	if m.opt.TimingOnly {
		m.slice = newControlSlice(obj)
	}
	m.readOnly = readOnlyTensors(obj)
	if err := m.allocGM(); err != nil {
		return nil, err
	}
	m.opTLoad = synthOp(asm.OpTload, asm.PipeMTE2)
	m.opTStore = synthOp(asm.OpTstore, asm.PipeMTE3)
	m.opTAddV = synthOp(asm.OpTadd, asm.PipeV)
	m.opTMaxV = synthOp(asm.OpTmax, asm.PipeV)
	m.opTMinV = synthOp(asm.OpTmin, asm.PipeV)
	return m, nil
}

// synthOp builds the op handed to Execute for a composite instruction's
// internal step; events still carry the user's op for positions.
func synthOp(o asm.Opcode, p asm.Pipe) *asm.COp {
	info := o.Info()
	return &asm.COp{ID: -1, Info: info, Pipe: p, Cost: info.CostOn(p)}
}

// CoreName names a core: "r0.aic3", "r1.aiv7"; a virtual core (a block
// after a launch's first wave, virtualCore) by its block: "r0.b30.aic",
// "r0.b30.aiv1" (the AIV of subblock 1).
func (m *Machine) CoreName(rank, core int) string {
	switch n := m.nAIC + m.nAIV; {
	case core < m.nAIC:
		return fmt.Sprintf("r%d.aic%d", rank, core)
	case core < n:
		return fmt.Sprintf("r%d.aiv%d", rank, core-m.nAIC)
	default:
		b, pos := (core-n)/numVirtualPos, (core-n)%numVirtualPos
		return fmt.Sprintf("r%d.b%d.%s", rank, b, virtualPosNames[pos])
	}
}

// CoreIDs reads a core name as CoreName writes it and returns its rank and
// the observer ids (Event.Agent.Core) it stands for: one for a physical core;
// for a block after a first wave ("r0.b30.aic"), its virtual core in each
// position the name fits (the AIC of a mixed block and of an aic block are
// both "aic"). A block's name is known before the block starts, so a
// debugger breakpoint can name a block of a later wave. ok is false when the
// name is not a core of this program: its rank, core or block is beyond
// every launch, or no stream of the program has blocks of that position.
// A block of a first wave keeps its physical core's name (as in the
// detector's findings), so its block name matches nothing.
func (m *Machine) CoreIDs(name string) (rank int, ids []int, ok bool) {
	num := func(s string) (int, bool) {
		n, err := strconv.Atoi(s)
		return n, err == nil && n >= 0 && strconv.Itoa(n) == s
	}
	r, rest, found := strings.Cut(strings.TrimPrefix(name, "r"), ".")
	rank, okR := num(r)
	if !strings.HasPrefix(name, "r") || !found || !okR || rank >= m.nranks {
		return 0, nil, false
	}
	if b, pos, found := strings.Cut(rest, "."); found {
		blk, okB := num(strings.TrimPrefix(b, "b"))
		if !strings.HasPrefix(b, "b") || !okB {
			return 0, nil, false
		}
		for _, st := range m.steps {
			for _, sp := range st.streams {
				if blk >= sp.blocks {
					continue
				}
				var p int
				switch {
				case sp.aic != nil && sp.aiv != nil:
					p = slices.Index(virtualPosNames[:vpAIC], pos)
				case sp.aic != nil || sp.uni != nil:
					if p = -1; pos == virtualPosNames[vpAIC] {
						p = vpAIC
					}
				default:
					if p = -1; pos == virtualPosNames[vpAIV] {
						p = vpAIV
					}
				}
				if id := m.virtualCore(blk, p); p >= 0 && !slices.Contains(ids, id) {
					ids = append(ids, id)
				}
			}
		}
		slices.Sort(ids)
		return rank, ids, len(ids) > 0
	}
	for _, k := range []struct {
		prefix   string
		base, up int
	}{{"aic", 0, m.nAIC}, {"aiv", m.nAIC, m.nAIV}} {
		if n, ok := num(strings.TrimPrefix(rest, k.prefix)); strings.HasPrefix(rest, k.prefix) && ok && n < k.up {
			return rank, []int{k.base + n}, true
		}
	}
	return 0, nil, false
}

// A virtual core is one block, after the first wave, of a launch with more
// blocks than cores, in one of these positions. Within one run at most one
// stream waves in each position (a stream that waves takes every free core
// it can use, so a later stream of the same position finds none), so
// block and position name the virtual core, whatever physical core runs it
// and in whatever order the blocks started.
const (
	vpMixedAIC = iota // the AIC of a mixed (aic + aiv) block
	vpMixedAIV0
	vpMixedAIV1
	vpAIC // an aic or unified block
	vpAIV // an aiv block
	numVirtualPos
)

var virtualPosNames = [numVirtualPos]string{"aic", "aiv0", "aiv1", "aic", "aiv"}

// virtualCore is the observer id of block b in position pos.
func (m *Machine) virtualCore(b, pos int) int {
	return m.nAIC + m.nAIV + b*numVirtualPos + pos
}

// Ranks is the number of ranks.
func (m *Machine) Ranks() int { return m.nranks }

// Profile is the timing profile in use.
func (m *Machine) Profile() *pipes.Profile { return m.prof }

// Now is the current simulated cycle.
func (m *Machine) Now() int64 { return m.now }

// TensorData returns a GM object's storage on a rank (nil if unknown or the
// machine runs timing-only).
func (m *Machine) TensorData(name string, rank int) (*memory.Buffer, *asm.TensorInfo) {
	t := m.obj.Tensor(name)
	if t == nil || rank < 0 || rank >= m.nranks || t.Index < 0 || t.Index >= len(m.ranks[rank].gm) {
		return nil, t
	}
	return m.ranks[rank].gm[t.Index].buf, t
}

// TensorBase returns the GM address of a tensor on a rank.
func (m *Machine) TensorBase(name string, rank int) (int64, bool) {
	t := m.obj.Tensor(name)
	if t == nil || rank < 0 || rank >= m.nranks || t.Index < 0 || t.Index >= len(m.ranks[rank].gm) {
		return 0, false
	}
	return m.ranks[rank].gm[t.Index].base, true
}

func (m *Machine) lookupConst(name string) (int64, bool) {
	if v, ok := m.obj.Const(name); ok {
		return v, true
	}
	if name == "nranks" && m.nranks > 0 {
		return int64(m.nranks), true
	}
	return 0, false
}

// lookupFloat resolves a golden expression's name: a float or integer
// constant, or nranks.
func (m *Machine) lookupFloat(name string) (float64, bool) {
	if v, ok := m.obj.FloatConst(name); ok {
		return v, true
	}
	v, ok := m.lookupConst(name)
	return float64(v), ok
}

// gmSize is the bytes a tensor takes on one rank: sized alike in both modes
// so addresses in reports agree.
func (m *Machine) gmSize(t *asm.TensorInfo) int64 {
	if t.Class == asm.TensorFIFO {
		return fifoBytes(t, m.nAIC)
	}
	return max(t.Bytes, memory.TensorBytes(t))
}

// chargeGM checks the GM the program declares on all ranks against
// MaxDeclaredGM × the memory budget, and that the scratch of the largest
// initialisation fits beside the storage taken so far.
// (Storage itself is charged as it is allocated, or, for a sparse tensor, as
// its pages are touched.) An error names the largest tensor, the one to
// shrink, at its declaration.
func (m *Machine) chargeGM() error {
	var big, scratchT *asm.TensorInfo
	var bigSize, total, scratch int64
	for _, t := range m.obj.Tensors {
		if m.opt.TimingOnly && !m.slice.tensors[t.Index] {
			continue
		}
		size := m.gmSize(t)
		if big == nil || size > bigSize {
			big, bigSize = t, size
		}
		total = min(total+mulCap(size, int64(m.nranks)), 1<<62)
		// Expression, file and laid-out fill inits hold the tensor as float64
		// values (fillLogical, memory.ReadDataFile); the tensor's own pages
		// are touched whole then too. (A golden check charges what it holds
		// as it evaluates: outputChecks.)
		if in := initOf(t); (in.Kind == "expr" || in.Kind == "file" || in.Kind == "fill" && t.Layout != asm.LayoutND) && mulCap(t.Elems(), 8) > scratch {
			scratch, scratchT = mulCap(t.Elems(), 8), t
		}
	}
	if big == nil {
		return nil
	}
	if lim := mulCap(m.mem.b.Max, MaxDeclaredGM); total > lim {
		return &BudgetError{Pos: big.Decl.Span.Pos, Flag: "--max-memory",
			Msg: fmt.Sprintf("%s: the run would declare %s of GM, over %d x the memory budget of %s",
				m.gmWhat(big, bigSize), asm.FormatBytes(total), MaxDeclaredGM, asm.FormatBytes(m.mem.b.Max))}
	}
	if scratchT == nil {
		return nil
	}
	return m.mem.fits(scratch+m.gmSize(scratchT), scratchT.Decl.Span.Pos, func() string {
		return fmt.Sprintf("initialising %s uses %s of float64 values", m.gmWhat(scratchT, m.gmSize(scratchT)), asm.FormatBytes(scratch))
	})
}

// gmWhat names a tensor and its storage for a budget error.
func (m *Machine) gmWhat(t *asm.TensorInfo, size int64) string {
	dims := make([]string, len(t.Shape))
	for i, d := range t.Shape {
		dims[i] = strconv.FormatInt(d, 10)
	}
	s := fmt.Sprintf("@%s %s [%s] takes %s", t.Name, t.DType, strings.Join(dims, ", "), asm.FormatBytes(size))
	if m.nranks > 1 {
		s += fmt.Sprintf(" on each of %d ranks", m.nranks)
	}
	return s
}

func (m *Machine) allocGM() error {
	for _, t := range m.obj.Tensors {
		if t.Index < 0 {
			return fmt.Errorf("machine: tensor %s has no index", t.Name)
		}
	}
	n := 0
	for _, t := range m.obj.Tensors {
		n = max(n, t.Index+1)
	}
	if err := m.chargeGM(); err != nil {
		return err
	}
	for _, rs := range m.ranks {
		rs.gm = make([]gmObj, n)
		addr := int64(gmBase)
		for _, t := range m.obj.Tensors {
			size := m.gmSize(t)
			o := gmObj{info: t, base: addr, size: size}
			if !m.opt.TimingOnly || m.slice.tensors[t.Index] {
				name := fmt.Sprintf("GM @%s[rank=%d]", t.Name, rs.id)
				buf, ok := memory.NewGMBuffer(name, size, t.DType.Size(), &m.mem.b)
				if !ok {
					return m.mem.over(size, t.Decl.Span.Pos, func() string { return m.gmWhat(t, size) })
				}
				o.buf = buf
			}
			rs.gm[t.Index] = o
			addr += (size + gmAlign - 1) / gmAlign * gmAlign
		}
	}
	for _, t := range m.obj.Tensors {
		for r := range m.ranks {
			if err := m.initTensor(t, r, initOf(t)); err != nil {
				if be := m.pageError(t.Decl.Span.Pos, "initialising ", err); be != nil {
					return be
				}
				return err
			}
		}
	}
	m.exprInit = exprInitCache{}
	for _, in := range m.opt.Inputs {
		t := m.obj.Tensor(in.Tensor)
		if t == nil {
			return fmt.Errorf("input %s: no GM tensor @%s", in.Path, in.Tensor)
		}
		if in.Rank >= m.nranks {
			return fmt.Errorf("input %s: rank %d of @%s, but the program runs %d rank(s)", in.Path, in.Rank, in.Tensor, m.nranks)
		}
		if m.ranks[0].gm[t.Index].buf == nil {
			// Timing-only, and no control flow reads it; a missing file is
			// still a mistake to report.
			if _, err := os.Stat(in.Path); err != nil {
				return fmt.Errorf("input for @%s: %v", in.Tensor, err)
			}
			continue
		}
		data, err := readDataFile(in.Path, t)
		if err != nil {
			return fmt.Errorf("input for @%s: %v", in.Tensor, err)
		}
		for r := range m.ranks {
			if in.Rank >= 0 && in.Rank != r {
				continue
			}
			if err := m.storeFile(t, r, in.Path, data); err != nil {
				return err
			}
		}
	}
	return nil
}

// readDataFile reads a .npy or .bin file for tensor t, capped at what a file
// of t's elements can hold (8-byte elements and a generous .npy header): a
// larger file is wrong anyway, and must not be read whole to find that out.
func readDataFile(path string, t *asm.TensorInfo) ([]byte, error) {
	return asm.ReadFileLimit(path, min(mulCap(t.Elems(), 8), 1<<62-1<<16)+1<<16, "")
}

// fifoBytes sizes a FIFO's slot ring: one ring per block (AIC), slots × the
// declared slot tensor.
func fifoBytes(t *asm.TensorInfo, blocks int) int64 {
	slots := t.Attrs["slots"]
	if slots <= 0 {
		slots = 2
	}
	return int64(blocks) * slots * t.Bytes
}

func initOf(t *asm.TensorInfo) *asm.Init {
	if t.Decl != nil && t.Decl.Init != nil {
		return t.Decl.Init
	}
	if t.Class == asm.TensorSignal {
		return &asm.Init{Kind: "zero"}
	}
	return &asm.Init{Kind: "poison"}
}

func (m *Machine) storeFile(t *asm.TensorInfo, r int, path string, data []byte) error {
	o := &m.ranks[r].gm[t.Index]
	a, err := memory.ReadDataFile(path, data, t.DType)
	if err != nil {
		return err
	}
	shape := intShape(t.Shape)
	if int64(len(a.Data)) != t.Elems() {
		return fmt.Errorf("%s: %d values for @%s of %d elements", path, len(a.Data), t.Name, t.Elems())
	}
	// A .npy says its shape: [64, 16] for a [16, 64] tensor has the right
	// count and the wrong meaning (a raw .bin says nothing, and is read in
	// the tensor's order).
	if strings.HasSuffix(strings.ToLower(path), ".npy") && !slices.Equal(a.Shape, shape) {
		return fmt.Errorf("%s: shape %v, but @%s is %v", path, a.Shape, t.Name, shape)
	}
	return memory.StoreArray(o.buf, 0, t.DType, shape, t.Layout, a, memory.RoundRint)
}

func intShape(s []int64) []int {
	out := make([]int, len(s))
	for i, d := range s {
		out[i] = int(d)
	}
	return out
}

// initTensor writes a tensor's initial (or reset) contents on rank r.
func (m *Machine) initTensor(t *asm.TensorInfo, r int, in *asm.Init) error {
	o := &m.ranks[r].gm[t.Index]
	if o.buf == nil {
		return nil
	}
	fail := func(err error) error {
		return &LaunchError{Pos: in.Pos, Msg: fmt.Sprintf("initialising @%s on rank %d: %v", t.Name, r, err), Err: err}
	}
	n := t.Elems()
	switch in.Kind {
	case "", "zero":
		return o.buf.Zero(0, o.size)
	case "poison":
		o.buf.Poison(0, o.size)
		return nil
	case "fill":
		v, err := m.initArg(in, "value", 0, 0)
		if err != nil {
			return fail(err)
		}
		if t.Layout != asm.LayoutND {
			return m.fillLogical(t, r, in, func([]int64) float64 { return v })
		}
		if err := o.buf.Fill(t.DType, 0, n, v); err != nil {
			return fail(err)
		}
		return nil
	case "random":
		seed, err := m.initArg(in, "seed", 0, 0)
		if err != nil {
			return fail(err)
		}
		lo, err := m.initArg(in, "lo", 1, -1)
		if err != nil {
			return fail(err)
		}
		hi, err := m.initArg(in, "hi", 2, 1)
		if err != nil {
			return fail(err)
		}
		integers := false
		for _, a := range in.Args {
			if a.Key == "int" || (a.Val != nil && isName(a.Val, "int")) {
				integers = true
			}
		}
		// Each rank draws its own numbers: rank r uses seed+r*7919 so rank 0
		// matches a single-rank run.
		s := uint64(int64(seed)) + uint64(r)*7919
		if err := memory.FillRandom(o.buf, 0, t.DType, n, s, lo, hi, integers); err != nil {
			return fail(err)
		}
		return nil
	case "file":
		name := in.File
		if name == "" {
			return fail(fmt.Errorf("file init without a file name"))
		}
		if !filepath.IsAbs(name) {
			name = filepath.Join(filepath.Dir(in.Pos.File), name)
		}
		data, err := readDataFile(name, t)
		if err != nil {
			return fail(err)
		}
		if err := m.storeFile(t, r, name, data); err != nil {
			return fail(err)
		}
		return nil
	case "expr":
		// Ranks are initialised one after another, tensor by tensor: when
		// the previous rank's evaluation of this init never looked at
		// `rank`, its values hold here too (the evaluation is a pure
		// function of the index, the constants and rank), so its stored
		// bytes are copied.
		if c := &m.exprInit; c.in == in && c.t == t && c.rank != r {
			src := m.ranks[c.rank].gm[t.Index].buf
			if err := memory.CopyStored(o.buf, src, 0, t.DType, intShape(t.Shape), t.Layout); err != nil {
				return fmt.Errorf("%s: %w", in.Pos, err)
			}
			return nil
		}
		m.exprInit = exprInitCache{}
		var evalErr error
		usesRank := false
		f := func(idx []int64) float64 {
			v, err := asm.EvalInt(in.X, func(name string) (int64, bool) {
				if name == "rank" {
					usesRank = true
					return int64(r), true
				}
				if len(name) == 1 && name[0] >= 'i' && int(name[0]-'i') < len(idx) {
					return idx[name[0]-'i'], true
				}
				return m.lookupConst(name)
			})
			if err != nil && evalErr == nil {
				evalErr = err
			}
			return float64(v)
		}
		if len(t.Shape) != 2 {
			a := logicalArray(t, f)
			if evalErr != nil {
				return fail(evalErr)
			}
			if err := m.storeLogical(t, r, in, a); err != nil {
				return err
			}
		} else {
			// A band of rows at a time: a [4096, 4096] mask is 128 MiB
			// of float64 values, which the whole run used to keep.
			rows, cols := int(t.Shape[0]), int(t.Shape[1])
			step := max(1, initBand/max(cols, 1))
			for r0 := 0; r0 < rows; r0 += step {
				r1 := min(r0+step, rows)
				a := logicalRows(t, r0, r1, f)
				if evalErr != nil {
					return fail(evalErr)
				}
				if err := memory.StoreRows(o.buf, 0, t.DType, intShape(t.Shape), t.Layout, r0, a, memory.RoundRint); err != nil {
					return fmt.Errorf("%s: %w", in.Pos, err)
				}
			}
		}
		if !usesRank {
			m.exprInit = exprInitCache{in: in, t: t, rank: r}
		}
		return nil
	}
	return fail(fmt.Errorf("unknown init %q", in.Kind))
}

// exprInitCache is the last expr init that did not use rank and the rank
// it was stored on, while the other ranks are initialised (one tensor at a
// time); cleared when they are, since a launch then writes that rank.
type exprInitCache struct {
	in   *asm.Init
	t    *asm.TensorInfo
	rank int
}

// initBand is how many elements of an expr init are computed at a time.
const initBand = 1 << 16

func isName(e asm.Expr, s string) bool {
	n, ok := e.(*asm.Name)
	return ok && n.Name == s
}

// fillLogical writes f(index vector) for every element in logical row-major
// order through memory.StoreArray, which applies the tensor's layout.
func (m *Machine) fillLogical(t *asm.TensorInfo, r int, in *asm.Init, f func([]int64) float64) error {
	return m.storeLogical(t, r, in, logicalArray(t, f))
}

// storeLogical writes a (the tensor's values in logical row-major order) to
// rank r's copy of t.
func (m *Machine) storeLogical(t *asm.TensorInfo, r int, in *asm.Init, a *memory.Array) error {
	o := &m.ranks[r].gm[t.Index]
	if err := memory.StoreArray(o.buf, 0, t.DType, a.Shape, t.Layout, a, memory.RoundRint); err != nil {
		return fmt.Errorf("%s: %w", in.Pos, err) // %w: a page error becomes the budget error (pageError)
	}
	return nil
}

// logicalArray is f(index vector) for every element of t in logical
// row-major order.
func logicalArray(t *asm.TensorInfo, f func([]int64) float64) *memory.Array {
	if len(t.Shape) == 2 {
		return logicalRows(t, 0, int(t.Shape[0]), f)
	}
	n := t.Elems()
	a := &memory.Array{Shape: intShape(t.Shape), Data: make([]float64, n)}
	idx := make([]int64, len(t.Shape))
	for k := int64(0); k < n; k++ {
		a.Data[k] = f(idx)
		for d := len(idx) - 1; d >= 0; d-- {
			idx[d]++
			if idx[d] < t.Shape[d] {
				break
			}
			idx[d] = 0
		}
	}
	return a
}

// logicalRows is f(i, j) for rows [r0, r1) of a rank-2 t, row-major.
func logicalRows(t *asm.TensorInfo, r0, r1 int, f func([]int64) float64) *memory.Array {
	cols := int(t.Shape[1])
	a := &memory.Array{Shape: []int{r1 - r0, cols}, Data: make([]float64, (r1-r0)*cols)}
	idx := make([]int64, 2)
	k := 0
	for i := r0; i < r1; i++ {
		for j := 0; j < cols; j++ {
			idx[0], idx[1] = int64(i), int64(j)
			a.Data[k] = f(idx)
			k++
		}
	}
	return a
}

// initArg reads a numeric init argument by key (seed=) or else by position
// among the unnamed arguments.
func (m *Machine) initArg(in *asm.Init, key string, pos int, def float64) (float64, error) {
	var e asm.Expr
	for _, a := range in.Args {
		if key != "" && a.Key == key && a.Val != nil {
			e = a.Val
			break
		}
	}
	if e == nil {
		i := 0
		for _, a := range in.Args {
			if a.Key != "" || a.Val == nil || isName(a.Val, "int") {
				continue
			}
			if i == pos {
				e = a.Val
				break
			}
			i++
		}
	}
	if e == nil && key == "value" {
		for _, a := range in.Args {
			if a.Key == "v" && a.Val != nil {
				e = a.Val
			}
		}
		if e == nil {
			e = in.X
		}
	}
	if e == nil {
		return def, nil
	}
	return m.evalFloat(e)
}

func (m *Machine) evalFloat(e asm.Expr) (float64, error) {
	switch x := e.(type) {
	case *asm.Num:
		if x.IsFloat {
			return x.Float, nil
		}
		return float64(x.Int), nil
	case *asm.Unary:
		if x.Op == "-" {
			v, err := m.evalFloat(x.X)
			return -v, err
		}
	case *asm.Paren:
		return m.evalFloat(x.X)
	}
	v, err := asm.EvalInt(e, m.lookupConst)
	return float64(v), err
}

// ---- launch plan ----

type launchStep struct {
	run     *asm.Run
	name    string
	streams []streamPlan
	reset   *asm.Reset
	rank    int // reset: -1 for every rank
	tensor  *asm.TensorInfo
	// kernels are the run's kernels, in the order its streams name them
	// (Event.Kernels).
	kernels []*asm.KernelInfo
	// places is where the run put each core (Placement), made the first
	// time the step runs with observers.
	places *runPlaces
}

type streamPlan struct {
	aic, aiv, uni *asm.KernelInfo
	blocks        int
	span          asm.Span
}

func (m *Machine) planLaunch() error {
	l := m.obj.Launch
	if l == nil {
		return fmt.Errorf("%s: the program has no launch section", m.obj.Main)
	}
	m.nranks = 1
	for _, a := range l.Attrs {
		switch a.Key {
		case "ranks":
			v, err := asm.EvalInt(a.Val, m.lookupConst)
			if err != nil {
				return err
			}
			if v < 1 || v > 4096 {
				return fmt.Errorf("%s: ranks=%d: want 1..4096", a.Pos, v)
			}
			m.nranks = int(v)
		case "topology":
			if n, ok := a.Val.(*asm.Name); ok {
				// The machine's own copy: Options.Profile is the caller's,
				// who may run other programs with it, side by side too (a
				// test's perturbed profiles; the launch of one program
				// set another's topology, and raced its reads).
				p := m.prof.Clone()
				if err := p.Set("link.topology", n.Name); err != nil {
					return fmt.Errorf("%s: %v", a.Pos, err)
				}
				m.prof = p
			}
		}
	}
	return m.planStmts(l.Body)
}

func (m *Machine) planStmts(body []asm.LaunchStmt) error {
	for _, s := range body {
		switch x := s.(type) {
		case *asm.Run:
			st := launchStep{run: x, name: x.Name}
			for _, sp := range x.Streams {
				p := streamPlan{blocks: 1, span: sp.Span}
				if sp.Blocks != nil {
					v, err := asm.EvalInt(sp.Blocks, m.lookupConst)
					if err != nil {
						return err
					}
					if v < 1 {
						return fmt.Errorf("%s: blocks=%d: want at least 1", sp.Pos, v)
					}
					p.blocks = int(v)
				}
				for _, kn := range sp.Kernels {
					k := m.obj.Kernel(kn)
					if k == nil {
						return fmt.Errorf("%s: no kernel %q", sp.Pos, kn)
					}
					var slot **asm.KernelInfo
					switch k.Kind {
					case asm.CoreAIC:
						slot = &p.aic
					case asm.CoreAIV:
						slot = &p.aiv
					case asm.CoreUnified:
						slot = &p.uni
					default:
						return fmt.Errorf("%s: kernel %s has no core kind", sp.Pos, kn)
					}
					if *slot != nil {
						return fmt.Errorf("%s: a stream takes at most one %s kernel", sp.Pos, k.Kind)
					}
					*slot = k
					if !slices.Contains(st.kernels, k) {
						st.kernels = append(st.kernels, k)
					}
				}
				if p.uni != nil && (p.aic != nil || p.aiv != nil) {
					return fmt.Errorf("%s: a unified kernel cannot share a stream", sp.Pos)
				}
				st.streams = append(st.streams, p)
			}
			if st.name == "" {
				var names []string
				for _, sp := range x.Streams {
					names = append(names, strings.Join(sp.Kernels, "+"))
				}
				st.name = strings.Join(names, ",")
			}
			m.steps = append(m.steps, st)
		case *asm.Reset:
			if x.Target == nil {
				return fmt.Errorf("%s: reset without a target", x.Pos)
			}
			t := m.obj.Tensor(x.Target.Name)
			if t == nil {
				return fmt.Errorf("%s: reset of unknown tensor @%s", x.Pos, x.Target.Name)
			}
			st := launchStep{reset: x, rank: -1, tensor: t}
			if x.Target.Rank != nil {
				v, err := asm.EvalInt(x.Target.Rank, m.lookupConst)
				if err != nil {
					return err
				}
				if v < 0 || v >= int64(m.nranks) {
					return fmt.Errorf("%s: reset of rank %d of %d", x.Pos, v, m.nranks)
				}
				st.rank = int(v)
			}
			m.steps = append(m.steps, st)
		case *asm.LaunchIf:
			v, err := asm.EvalInt(x.Cond, m.lookupConst)
			if err != nil {
				return err
			}
			if v != 0 {
				err = m.planStmts(x.Then)
			} else {
				err = m.planStmts(x.Else)
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}
