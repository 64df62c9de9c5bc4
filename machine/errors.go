package machine

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ptoasm/ptoasm/asm"
)

// ErrCancelled is Run's error when Options.Cancel was closed.
var ErrCancelled = errors.New("run cancelled")

// Fault is a runtime error of the simulated program: an out-of-bounds GM window,
// a bad dynamic event id, a flag set twice, FIFO misuse. It names the op, its
// source position and the core.
type Fault struct {
	// Kind classifies the fault for tools (the hazard detector maps it to a
	// finding kind); Msg stays the human explanation.
	Kind  FaultKind
	Cycle int64
	Rank  int
	Core  int
	// CoreName is "r0.aic3"; empty for host-side faults.
	CoreName string
	Pipe     asm.Pipe
	Op       *asm.COp
	Msg      string
	// Others are the faults of other cores in the same run: a fault stops
	// its own core only (Machine.Run), so a run reports each core's first
	// fault, this one the least core's.
	Others []*Fault
}

func (f *Fault) Error() string {
	var b strings.Builder
	if f.Op != nil && f.Op.Instr != nil && f.Op.Instr.Pos.IsValid() {
		b.WriteString(f.Op.Instr.Pos.String())
		b.WriteString(": ")
	}
	b.WriteString("fault")
	if f.CoreName != "" {
		fmt.Fprintf(&b, " on %s", f.CoreName)
		if f.Pipe != asm.PipeInvalid {
			fmt.Fprintf(&b, " %s", f.Pipe)
		}
	}
	fmt.Fprintf(&b, " at cycle %d", f.Cycle)
	if f.Op != nil && f.Op.Info != nil {
		fmt.Fprintf(&b, " (%s)", f.Op.Info.Name)
	}
	b.WriteString(": ")
	b.WriteString(f.Msg)
	return b.String()
}

// FaultKind classifies a Fault. The values match the hazard finding kinds
// where one exists (bad-event-id, out-of-bounds).
type FaultKind string

const (
	FaultBadEventID   FaultKind = "bad-event-id"  // set/wait_flag id outside 0..7, FFTS id outside 0..15
	FaultOutOfBounds  FaultKind = "out-of-bounds" // GM window, rank or tile index outside its object
	FaultFIFO         FaultKind = "fifo"          // tpush/tpop misuse
	FaultOverflow     FaultKind = "overflow"      // a fault whose message says overflow (FFTS counters count past 15: their overflow is the detector's double-set, by ordering)
	FaultUnsupported  FaultKind = "unsupported"   // an op or mode this core or machine cannot run
	FaultBadOperand   FaultKind = "bad-operand"   // a malformed operand or attribute value
	FaultPrivateGM    FaultKind = "private-gm"    // a private gm tensor addressed on another rank
	FaultSync         FaultKind = "sync"          // an FFTS mode used outside the launch it needs
	FaultExec         FaultKind = "exec"          // the data effect failed (dtype, layout, range)
	FaultInternal     FaultKind = "internal"      // a machine bug surfaced as a fault
	FaultUnclassified FaultKind = "fault"         // made through core.fault without a kind
)

// classifyFault gives a kind to a fault made without one (call sites outside
// the engine files), from the words its message uses.
func classifyFault(msg string) FaultKind {
	m := strings.ToLower(msg)
	switch {
	case strings.Contains(m, "event id") || strings.Contains(m, "ffts id") || strings.Contains(m, "flag id"):
		return FaultBadEventID
	case strings.Contains(m, "fifo"):
		return FaultFIFO
	case strings.Contains(m, "overflow"):
		return FaultOverflow
	case strings.Contains(m, "not yet supported") || strings.Contains(m, "unsupported") || strings.Contains(m, " has no "):
		return FaultUnsupported
	case strings.Contains(m, "outside") || strings.Contains(m, "runs past") || strings.Contains(m, "out of bounds"):
		return FaultOutOfBounds
	case strings.Contains(m, "private gm"):
		return FaultPrivateGM
	}
	return FaultUnclassified
}

// LaunchError is a launch the machine cannot carry out as written, found
// when it gets there: a stream that finds no free core of its kind, a run
// that starts no cores, a host reset whose init fails. It is bad input, not
// a finding and not a run guard's stop: run, trace and lint report what ran
// before it and exit 2 (lint used to drop it and print "no hazards found").
type LaunchError struct {
	Pos asm.Pos // the launch statement or init, when there is one
	Msg string
	Err error // the cause, when there is one (errors.As finds a BudgetError through it)
}

func (e *LaunchError) Error() string {
	if e.Pos.IsValid() {
		return e.Pos.String() + ": error: " + e.Msg
	}
	return e.Msg
}

func (e *LaunchError) Unwrap() error { return e.Err }

// DeadlockError reports that nothing could move while some agent still waited.
type DeadlockError struct {
	Cycle   int64
	Blocked []Blocked
	// Names holds the core name of each Blocked entry ("r0.aic0").
	Names []string
}

func (d *DeadlockError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "deadlock at cycle %d: %d agent(s) wait and nothing will wake them", d.Cycle, len(d.Blocked))
	for i, bl := range d.Blocked {
		b.WriteString("\n  ")
		if bl.Root && len(d.Blocked) > 1 {
			// The others block behind it: name it as the one to fix.
			b.WriteString("root: ")
		}
		if i < len(d.Names) {
			b.WriteString(d.Names[i])
		}
		fmt.Fprintf(&b, " %s", bl.Agent.Pipe)
		if bl.Op != nil && bl.Op.Instr != nil && bl.Op.Instr.Pos.IsValid() {
			fmt.Fprintf(&b, " at %s", bl.Op.Instr.Pos)
		}
		b.WriteString(": ")
		b.WriteString(bl.Reason)
	}
	return b.String()
}

// LimitKind says which guard stopped a run.
type LimitKind uint8

const (
	LimitCycles LimitKind = iota // Options.MaxCycles
	LimitIdle                    // Options.MaxIdleCycles
	LimitTime                    // Options.MaxTime
	LimitMemory                  // Options.MaxHeap
)

// LimitError reports that a run guard stopped the run, usually a loop that
// never sees its condition (a livelock the deadlock detector cannot prove).
type LimitError struct {
	Kind  LimitKind
	Cycle int64
	// MaxCycles, MaxIdleCycles and MaxTime are the limits in force.
	MaxCycles     int64
	MaxIdleCycles int64
	MaxTime       time.Duration
	// IdleSince is when the last work ended (LimitIdle).
	IdleSince int64
	// MaxHeap is Options.MaxHeap, Heap the runtime's memory in use that
	// passed it, Live the live heap at the last collection, and MaxMemory
	// the memory budget, which --max-memory raises (LimitMemory).
	MaxHeap, Heap, Live, MaxMemory int64
	// Waiting lists what was still running or waiting, one line each.
	Waiting []string
}

// Raise names the command-line flag that raises the limit the run hit
// (run, lint, step and sweep share the guard flags, docs/cli.md "Run
// guards"), for the first line of the message that reports the stop.
func (e *LimitError) Raise() string {
	switch e.Kind {
	case LimitIdle:
		return fmt.Sprintf("raise it with --max-idle-cycles=N (now %d; -1: no limit)", e.MaxIdleCycles)
	case LimitTime:
		return fmt.Sprintf("raise it with --max-time=DURATION (now %s; 0: no limit)", e.MaxTime)
	case LimitMemory:
		return fmt.Sprintf("raise it with --max-memory=SIZE (now %s)", asm.FormatBytes(e.MaxMemory))
	default:
		return fmt.Sprintf("raise it with --max-cycles=N (now %d)", e.MaxCycles)
	}
}

// WithRaise is the error's message with Raise appended to its first line.
func (e *LimitError) WithRaise() string {
	first, rest, _ := strings.Cut(e.Error(), "\n")
	s := first + "; " + e.Raise()
	if rest != "" {
		s += "\n" + rest
	}
	return s
}

func (e *LimitError) Error() string {
	var s string
	switch e.Kind {
	case LimitIdle:
		s = fmt.Sprintf("stopped at cycle %d: the run exceeded the idle limit %d: for %d cycles (since cycle %d) no pipe ran an instruction, no async copy was under way and nothing wrote GM (a loop that never ends, or a poll nothing will satisfy?)",
			e.Cycle, e.MaxIdleCycles, e.Cycle-e.IdleSince, e.IdleSince)
	case LimitTime:
		s = fmt.Sprintf("stopped at cycle %d: the run exceeded the time limit %s of wall-clock time (a loop that never ends?)", e.Cycle, e.MaxTime)
	case LimitMemory:
		s = fmt.Sprintf("stopped at cycle %d: the Go runtime's memory in use reached %s (live heap %.1fMiB at the last collection), past the process's memory limit of %s (the memory budget of %s, a quarter more and 64MiB): what grows with the run's work, the hazard detector's records of races and a trace's events, with the GM it touched (a loop that never ends, racing or traced?)",
			e.Cycle, asm.FormatBytes(e.Heap), float64(e.Live)/(1<<20), asm.FormatBytes(e.MaxHeap), asm.FormatBytes(e.MaxMemory))
	default:
		s = fmt.Sprintf("stopped at cycle %d: the run exceeded the cycle limit %d (a polling loop that never succeeds?)", e.Cycle, e.MaxCycles)
	}
	for _, w := range e.Waiting {
		s += "\n  " + w
	}
	return s
}

func opPos(op *asm.COp) string {
	if op == nil || op.Instr == nil {
		return ""
	}
	return op.Instr.Pos.String()
}
