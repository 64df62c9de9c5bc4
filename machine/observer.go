package machine

import "github.com/ptoasm/ptoasm/asm"

// Observers see everything the machine does through one hook: the hazard detector,
// the tracer, the debugger and statistics all ride on it. The machine reuses one
// Event value per call, so an observer must copy what it keeps.
type Observer interface {
	Observe(e *Event)
}

// KindFilter is implemented by an observer that wants only some kinds of
// event; the machine does not send it the others, and does not build an
// event nobody wants.
type KindFilter interface {
	WantsKind(k EventKind) bool
}

// TestForcer is implemented by an observer that decides, on a run made
// again, which TTESTs wait for their compare to hold instead of failing:
// a test that on another timing could have read a passing value (adds
// ordered neither before nor after it landing first), so the run takes
// the branch the hardware can take (the hazard detector, Settle). The
// test then polls as a TWAIT does; were the run to deadlock with such a
// test waiting, it fails instead, as it did. Such an observer also gets
// EvSignalTest, a test that failed. ForceTest is asked on the machine's
// goroutine at a failing TTEST, with its agent, the run's EvRunStart ID
// and how many TTESTs the agent completed before it in the run.
type TestForcer interface {
	ForcesTests() bool
	ForceTest(a Agent, run int32, n int32) bool
}

// WordFFTSSet is the Word of the EvIssue of an FFTS set (an ffts_set, or a
// fifo instruction's set step) sent to an IssueFilter observer, which also
// carries the set's ID and Mode.
const WordFFTSSet = "ffts_set"

// IssueFilter is implemented by an observer that may want EvIssue only for
// composite instructions (tput, tget, collectives, fifos, SDMA), whose one
// EvIssue stands for several steps, and for FFTS sets (an ffts_set, a
// fifo's set step: ID and Mode filled), whose place in the issue order
// their EvCrossSet, sent when the pipe reaches them, comes too late to
// tell: ordinary ops' issues, half of all events, can be told from the
// issue numbers events carry (Event.Issue, Event.Issued). The hazard
// detector is one.
type IssueFilter interface {
	CompositeIssuesOnly() bool
}

// FlagTimeFilter is implemented by an observer that may have no use for
// the cycle each set flag was set at (Machine.SetFlags, the debugger's flag
// view): when every observer says so (and the profile has no flag
// hand-off latency), set_flag does not record it, a write to a large
// per-core table that missed the cache on every flag. The hazard detector
// is one.
type FlagTimeFilter interface {
	NoFlagTimes() bool
}

// AccessDeferrer is implemented by an observer that can list an exec
// event's accesses itself, on its own goroutine, from Event.Deferred
// (AccessLister). When every observer that wants EvExec says so, a lean
// op's exec event (an op whose operands are its plan's template and a few
// dynamic values: most of a GEMM's) carries Deferred and no Accesses: the
// machine's goroutine neither lists them nor hands them over, and the
// observer lists them from a memo of its own. The hazard detector is one.
type AccessDeferrer interface {
	DefersAccesses() bool
}

// IterLogger is implemented by an observer that takes the loop iteration
// vector of a core pipe's events (every event of a core's pipe with an
// Issue number: EvExec, EvFlagSet, EvFlagWait, EvBarrier, EvCrossSet, a
// composite's steps) from a log of the scalar's instead of the event. When
// every observer that wants those kinds says so, those events (and EvStall)
// come with no Iter: the machine neither copies the scalar's vector into
// each queue slot at issue nor hands it over with each event (most of a
// linted allgather_gemm's events, with a vector 7 deep), and calls
// ObserveIter once per change of the vector that an issue meets instead.
// The hazard detector is one.
//
// ObserveIter(a, from, low, iter) says that the ops scalar a (Pipe S)
// numbers from from on were issued in iteration iter, until the next call
// for a's core: an op numbered n has the vector of the last call for its
// core, in order, whose from is at most n. from grows from one call to the
// next, or stays (no op took the number: the later call holds), unless the
// core starts afresh (a block on another physical core, numbered lower),
// and then the earlier calls are done with. Every op of the core numbered
// below low has had all its events (low is 0 when the machine did not
// look), so the observer can forget what only those needed. iter is the
// scalar's own slice: copy what is kept.
type IterLogger interface {
	ObserveIter(a Agent, from, low int64, iter []int64)
}

// PipeObserver is implemented by an observer that takes the events that
// are most of a run's, a core pipe's EvExec, EvFlagSet and EvFlagWait (not
// a composite's steps, nor a double set), as a PipeEvent: when it is the
// only observer, the machine sends them so, without emptying and filling
// the whole shared Event and calling Observe through the observer list
// (what that cost is in docs/performance.md, lint round 7). The hazard
// detector is one.
type PipeObserver interface {
	ObservePipe(e *PipeEvent)
}

// PipeEvent is such an event: the fields of Event it has (Event makes it
// one). The machine reuses one PipeEvent, and Iter and Accesses are views
// into its state: an observer copies what it keeps.
type PipeEvent struct {
	Kind       EventKind
	Agent      Agent
	Op         *asm.COp
	Start, End int64
	Issue      int64
	Iter       []int64
	Flag       Flag     // EvFlagSet, EvFlagWait
	Accesses   []Access // EvExec
	Deferred   Deferred // EvExec
}

// PipeRecorder is implemented by a PipeObserver that takes those events
// as PipeRecords the machine writes straight into the observer's buffer
// (PipeSink): no PipeEvent is filled and no method called per event. It
// is used only with the observer alone and keeping the scalars' logs
// (IterLogger), since a record has no iteration vector. PipeRecords is
// asked once, when the machine is made; the observer points the sink's
// Buf at the buffer being filled, or at nil to take events as PipeEvents.
// When the buffer has no room for an event the machine sends it to
// ObservePipe, which may hand the buffer on and point Buf at another.
// The hazard detector is one (docs/performance.md, lint round 14).
type PipeRecorder interface {
	PipeRecords() *PipeSink
}

// PipeSink is where the machine writes a PipeRecorder's records.
type PipeSink struct {
	Buf *PipeBuf
}

// PipeBuf is a run of records and their arenas. The machine appends a
// record to Recs while it has room, a lean exec's deferred accesses to
// Defs (there must be room for one per record Recs has room for) and
// another exec's listed accesses to Acc (which may grow; the recorder
// takes the slices it hands on from Acc once the machine is done with
// the buffer).
type PipeBuf struct {
	Recs []PipeRecord
	Defs []Deferred
	Acc  []Access
}

// PipeRecord is a PipeEvent, half a cache line: what the hazard detector
// reads of one (not Start, End or Iter). Its accesses follow the previous
// record's in Acc (NAcc of them), its deferred accesses are the next of
// Defs (Deferred). Issued, NIter and Tag are the recorder's own: records
// the machine writes have them zero, but for a scalar's pipe_barrier ALL
// (RecSync).
type PipeRecord struct {
	Op         *asm.COp
	Issue      uint32
	Issued     uint32
	Rank, Core uint16
	Pipe       asm.Pipe
	Kind       EventKind
	Src, Dst   asm.Pipe
	ID         uint8
	NAcc       uint8
	NIter      uint8
	Deferred   bool
	Tag        uint8
}

// RecSync is the Tag of the record the machine writes for a scalar's
// pipe_barrier ALL: Kind EvBarrier, Issued the scalar's (Event.Issued),
// Src its Target (PipeALL), and no Iter, which the hazard detector does
// not read of a barrier. The recorder's own tags are the other values.
const RecSync = 3

// Event fills e with p as an Event, with p's slices (Cycle is Start).
func (p *PipeEvent) Event(e *Event) {
	*e = Event{Kind: p.Kind, Cycle: p.Start, Start: p.Start, End: p.End, Agent: p.Agent, Op: p.Op,
		Iter: p.Iter, Accesses: p.Accesses, Deferred: p.Deferred, Flag: p.Flag, Issue: p.Issue}
}

// StretchObserver is implemented by an observer that can take a core's
// local events ahead of the clock (stretches, stretch.go): its results do
// not depend on how the events of different cores interleave, as long as
// each core's events come in the core's own order and every event that
// reaches outside its core comes in the global order. Under observers
// the machine keeps that second half by holding for the global order, as
// well as what a timing-only stretch holds, every completion of an op
// with a GM operand (a read too: its order against other cores' GM writes
// is what a race check reads). When every observer takes stretches (and
// says so), a run uses them. A run with stretches that ends in an error is
// repeated without them (Run), and Restart is called between the two:
// the observer forgets the first run and takes the repeat as if it were
// the only one. The hazard detector is one (docs/performance.md, lint
// round 17).
type StretchObserver interface {
	TakesStretches() bool
	Restart()
}

// Flusher is implemented by an observer that works behind the machine (the
// hazard detector on its own goroutine): Run calls Flush before it returns,
// so the observer is finished and idle when the run is.
type Flusher interface {
	Flush()
}

// Agent is one in-order execution stream: a pipe of a core of a rank. The scalar
// unit is the agent with Pipe == asm.PipeS. SDMA engines and the host use Core = -1
// and Pipe = asm.PipeInvalid with Host/SDMA set in the event kind.
type Agent struct {
	Rank int32
	Core int32 // core index within the rank: AICs are 0..nAIC-1, AIVs follow (see Machine.CoreName)
	Pipe asm.Pipe
}

// EventKind says what happened.
type EventKind uint8

const (
	EvNone EventKind = iota
	// EvIssue: the scalar unit of Agent's core issued Op into pipe Target's queue.
	// Everything the scalar has observed happens before the op.
	EvIssue
	// EvExec: Op ran on Agent from Start to End and touched Accesses. For composite
	// ops (tput, tget, collectives) the machine emits one EvExec per internal step,
	// each on the pipe that really does it (MTE2 read, MTE3 write, V add), with Step
	// naming it.
	EvExec
	// EvFlagSet: set_flag(Src, Dst, ID) fired on the src pipe (Agent) at Start,
	// after every earlier op of that pipe completed.
	EvFlagSet
	// EvFlagWait: wait_flag(Src, Dst, ID) was satisfied on the dst pipe (Agent) at Start.
	EvFlagWait
	// EvBarrier: pipe_barrier(Target) completed on Agent's core; Target == PipeALL
	// drained every pipe and the scalar (Agent.Pipe == PipeS) continues after it.
	EvBarrier
	// EvCrossSet: an FFTS cross-core set (ID, Mode) fired on Agent's pipe;
	// Peers lists the cores whose counters it incremented.
	EvCrossSet
	// EvCrossWait: a cross-core wait (ID) on Agent's core was satisfied.
	EvCrossWait
	// EvNotify: a TNOTIFY store (Word "set" or "add", Value) to a signal at Accesses[0];
	// Want is the word's value before it.
	EvNotify
	// EvSignalWait: a TWAIT (or a TTEST that returned true) observed the signals in
	// Accesses satisfying its condition (Value compared against Want); it acquires
	// every notify that contributed.
	EvSignalWait
	// EvSyncAll: Agent's core passed a syncall barrier (every participant arrived).
	EvSyncAll
	// EvHostWrite: the host wrote Accesses between runs (initial contents, reset,
	// input file). Every GM object gets one at the start, covering all of it;
	// Word is "poison" when the contents start poisoned (uninitialised: a read
	// before a write is an uninit-read) and "init" otherwise.
	EvHostWrite
	// EvRunStart / EvRunEnd bracket one `run` of the launch section; the host
	// synchronises every stream at a run boundary. EvRunStart's ID numbers
	// the run from 0, for Machine.Placement.
	EvRunStart
	EvRunEnd
	// EvKernelEnd: a core finished its kernel. Flags lists flags still set
	// (unconsumed), a flag once per pending set (pipes.FlagBits counts them).
	EvKernelEnd
	// EvStall: Agent could not make progress from Start to End; Reason explains.
	// Scalars report "queue full", "pipe_barrier ALL", "wait_flag", "ffts_wait",
	// "syncall", "twait", "wait_async"; pipes report a head wait_flag as
	// "wait_flag SRC->DST #ID" (blocked until the flag was set and handed over).
	EvStall
	// EvDeadlock: nothing can move; Blocked lists every waiting agent and what it waits for.
	EvDeadlock
	// EvSignalTest: a TTEST that returned false, with EvSignalWait's fields
	// (Value what the signal held). Only a TestForcer observer gets it: a
	// test another timing could pass is what it decides (testforce.go).
	EvSignalTest

	numKinds
)

// Access is one contiguous byte range an op read or wrote.
type Access struct {
	// Fields are ordered to pack into one cache line (64 bytes): a run
	// reports one per operand of every instruction.
	Space asm.Space
	Write bool
	// Atomic marks an atomic read-modify-write (TSTORE #atomic=add, TNOTIFY add).
	Atomic bool
	// ReadOnly marks a read of a GM tensor no instruction of the program
	// writes: only the host does, between runs, so the read cannot race. A
	// window of such a tensor is reported as one bounding range, not row by
	// row.
	ReadOnly bool
	Rank     int32 // owner rank of the GM (for remote accesses, the remote rank)
	Core     int32 // owner core of a local buffer; -1 for GM
	// Elem is the element of Tile's array the operand named (Tile.Addr[Elem]).
	// Elements may overlap (a step smaller than the tile): the address alone
	// does not say which element an access went through.
	Elem int32
	Lo   int64 // byte offset within the space (GM: the machine's global address of the rank)
	Hi   int64 // one past the last byte
	// Tile or Tensor names what was accessed, for reports.
	Tile   *asm.TileInfo
	Tensor *asm.TensorInfo
	// Rows > 1 with a positive Pitch makes the access strided: Rows runs of
	// Hi-Lo bytes, the k-th at [Lo+k*Pitch, Hi+k*Pitch) (Run): a GM window
	// narrower than its tensor's rows, or a column window of a row-major
	// tile. One access instead of a range per row keeps the observers' cost
	// per instruction, not per row.
	Rows  int64
	Pitch int64
}

// NumRows is how many runs the access has: Rows when strided (Rows > 1
// and a positive Pitch), else 1.
func (a *Access) NumRows() int64 {
	if a.Pitch <= 0 {
		return 1
	}
	return max(a.Rows, 1)
}

// Bytes is how many bytes the access touches.
func (a *Access) Bytes() int64 { return a.NumRows() * (a.Hi - a.Lo) }

// Run is the k-th run of the access (0 <= k < NumRows): [Lo, Hi) moved k
// pitches on.
func (a *Access) Run(k int64) (lo, hi int64) {
	return a.Lo + k*a.Pitch, a.Hi + k*a.Pitch
}

// Bounds is the smallest range holding every byte of the access.
func (a *Access) Bounds() (lo, hi int64) {
	return a.Lo, a.Hi + (a.NumRows()-1)*a.Pitch
}

// Overlaps reports whether the access touches any byte of [lo, hi).
func (a *Access) Overlaps(lo, hi int64) bool {
	if a.NumRows() == 1 {
		return a.Lo < hi && lo < a.Hi
	}
	w := a.Hi - a.Lo
	if w <= 0 || hi <= lo {
		return false
	}
	// Run k is [Lo+k*Pitch, Lo+k*Pitch+w): the first run ending after lo is
	// the only candidate that can start before hi first.
	k := max(floorDiv(lo-w-a.Lo, a.Pitch)+1, 0)
	return k < a.Rows && a.Lo+k*a.Pitch < hi
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// Flag identifies an intra-core flag.
type Flag struct {
	Src, Dst asm.Pipe
	ID       int32
}

// Blocked is one waiting agent in a deadlock report.
type Blocked struct {
	Agent  Agent
	Op     *asm.COp
	Reason string // "wait_flag MTE2->MTE1 #1: nobody will set it", "twait @S[3] >= 1: value 0", ...
	// Root marks a wait the others block behind, directly or transitively,
	// and that itself waits for nothing in the report (see rootFirst); the
	// report lists roots first.
	Root bool
	// Signal is, for a scalar spinning in a twait, the word it polls and
	// the value it waits for; nil for every other wait.
	Signal *BlockedSignal
}

// BlockedSignal is what a twait blocked at a deadlock polls: the words
// (Access), its compare's operand (Want), the value the last poll read
// (Value, the first word that fails) and the scalar's loop iteration
// vector, outermost first. The hazard detector checks it against the
// notifies the word met (wait-overwritten), so that a write able to
// overwrite the value the wait needs is reported whether the run passed
// the wait or hung on it.
type BlockedSignal struct {
	Access Access
	Want   int64
	Value  int64
	Iter   []int64
}

// Event is one observation. Fields beyond Kind, Cycle and Agent are set only where
// the kind says so.
type Event struct {
	Kind   EventKind
	Cycle  int64 // when it happened (Start for ranged events)
	Start  int64
	End    int64
	Agent  Agent
	Target asm.Pipe
	Op     *asm.COp
	// Iter is the loop iteration vector of the op's dynamic instance, outermost first
	// (a view into machine state: copy it to keep it). Empty on a core pipe's
	// events while every observer keeps the scalars' logs instead (IterLogger).
	// An SDMA copy's (Agent.Core -1) is always there: its issue's, not the
	// issuing scalar's vector when the copy completes.
	Iter     []int64
	Step     string // composite-op internal step, e.g. "tput.load", "tput.store"
	Accesses []Access
	// Deferred is, for an EvExec of a lean op, what its accesses are
	// listed from (AccessLister.Accesses); when every observer defers them
	// (AccessDeferrer), Accesses is empty and this is how to get them.
	Deferred Deferred
	Flag     Flag
	ID       int32
	Mode     int32
	// Group is, for EvCrossSet in mode 1 or 2, the block whose counter the
	// set counts toward (-1 in mode 0, where the counter is rank-wide).
	Group int32
	Peers []int32
	Word  string
	// Value is, for EvNotify, the value it writes or adds, for
	// EvSignalWait what the signal held (see Want); for the EvExec of a wait_async, the issue number (Issue) of
	// the newest copy of its core the wait covered, 0 when an earlier wait
	// covered them all (core.waitAsync).
	Value   int64
	Flags   []Flag
	Reason  string
	Blocked []Blocked
	RunName string
	// Kernels is, for EvRunStart, the kernels the run starts (each once,
	// in the order its streams name them): an observer that must know
	// before the first instruction what a kernel of the run does later
	// (the hazard detector keeps the adds to a signal some kernel waits on
	// with `==` from the run's first add) reads them here.
	Kernels []*asm.KernelInfo
	// Issue is, for EvIssue and for an event of an op the scalar queued
	// (EvExec, EvFlagSet, EvFlagWait, EvCrossSet, EvBarrier of a pipe), the
	// op's issue number
	// on its core: the n-th op the scalar issued (a composite's steps and
	// its SDMA copy share the composite's). 0 when unknown. IssueCore is
	// the issuing core of an SDMA copy (Agent.Core is -1 there): its
	// wait_async waits for that core's copies only (core.waitAsync).
	Issue     int64
	IssueCore int32
	// Issued is, for every event of a core's scalar, how many ops it had
	// issued when it happened (0 on its pipes' events, which carry Issue).
	// With Issue it tells which scalar events came before an op's issue,
	// without an EvIssue per op.
	Issued int64
	// Want is, for EvSignalWait, the value the wait compared the signal
	// against: its operand as evaluated at run time, a constant or a
	// register (loaded from GM, or computed from a loop variable or an
	// epoch). Value is what the signal held. For EvNotify it is what the
	// word held before the notify landed, so an observer knows a word's
	// value at the run's start from its first write (0 when the machine
	// keeps no values).
	Want int64
	// Words is, for an EvSignalWait over several elements (#count), what
	// each held when the wait passed, in order (Value is the last): a
	// wait is ordered after the adds each word's compare needed, which
	// the detector reads off each word's value (a view into machine
	// state, like Accesses: copy it to keep it). Empty for one element
	// and when the machine keeps no values (timing only).
	Words []int64
}
