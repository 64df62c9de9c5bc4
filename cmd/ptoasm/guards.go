package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/ptoasm/ptoasm/machine"
	"github.com/ptoasm/ptoasm/machine/hazard"
)

// guardFlags are the run guards of run and lint (docs/cli.md, "Run guards").
//
// MaxTime, the wall-clock guard, defaults to 10 minutes. The cycle guards
// stop a loop that does nothing deterministically (MaxIdleCycles: `while 1
// {}` stops in a fraction of a second); this one stops a runaway that keeps
// the pipes busy, whose simulated time may advance too slowly for a cycle
// limit to come within hours. It must not stop a real program on a loaded
// machine: the largest shipped program, the 8-rank 16384x4096x4096
// allgather_gemm, lints in about 5 s on an idle machine, but took 122 s of
// wall time (38 s of CPU) on two CPUs shared with six busy processes, where
// a 2-minute guard stopped it.
type guardFlags struct {
	MaxCycles     int64         `default:"0" placeholder:"N" help:"Stop with an error after N simulated cycles (0: the default, 2^34)."`
	MaxIdleCycles int64         `default:"0" placeholder:"N" help:"Stop with an error after N cycles in which no pipe ran an instruction and nothing wrote GM, a loop waiting for nothing (0: the default, 2^24; --max-idle-cycles=-1: no limit)."`
	MaxTime       time.Duration `default:"10m" placeholder:"DURATION" help:"Stop with an error after this much wall-clock time, e.g. 30s, 1h (default 10m; 0: no limit)."`
}

// options sets the guards in opt; a negative limit is a usage error.
func (g guardFlags) options(opt *machine.Options) error {
	switch {
	case g.MaxCycles < 0:
		return fmt.Errorf("--max-cycles %d: want a cycle count >= 0 (0: the default, %d)", g.MaxCycles, int64(machine.DefaultMaxCycles))
	case g.MaxIdleCycles < -1:
		return fmt.Errorf("--max-idle-cycles %d: want a cycle count >= 0 (0: the default, %d), or -1 for no limit", g.MaxIdleCycles, int64(machine.DefaultMaxIdleCycles))
	case g.MaxTime < 0:
		return fmt.Errorf("--max-time %s: want a duration >= 0 (0: no limit)", g.MaxTime)
	}
	opt.MaxCycles = g.MaxCycles
	opt.MaxIdleCycles = g.MaxIdleCycles
	opt.MaxTime = g.MaxTime
	return nil
}

// limitError turns a run guard's stop into the command's error (exit 2:
// the program could not be judged within the limits), its first line naming
// the flag that raises the limit; nil when err is not a guard's stop.
func limitError(err error) error {
	var le *machine.LimitError
	if !errors.As(err, &le) {
		return nil
	}
	return errors.New(le.WithRaise())
}

// memoryLimit is the process's memory limit for a budget of maxMemory
// (runtime/debug.SetMemoryLimit): the budget, a quarter more and 64 MiB for
// the parser, the detector and the Go runtime.
func memoryLimit(maxMemory int64) int64 { return maxMemory + maxMemory/4 + 64<<20 }

// maxHeap is machine.Options.MaxHeap for a run of this command: the
// process's memory limit: the runtime holds its memory in use below it
// while it can, and past it the live heap keeps the process growing
// (machine.Options.MaxHeap reads the memory in use). The heap is the process's: a test or a fuzzer that
// drives realMain in process holds its own heap in it, so there the guard
// is off.
func (l limits) maxHeap() int64 {
	if !ownProcess {
		return 0
	}
	return memoryLimit(l.maxMemory)
}

// keptFlags is the hazard detector's bound on the overwritten GM accesses a
// range keeps (hazard.Options.MaxKept; docs/hazards.md, "GM writes
// overwritten in order"), and on the runs the dropped ones are kept in:
// past those the report says, in a kept-limit note, that races may have
// been missed, and names this flag.
type keptFlags struct {
	MaxKept int `default:"0" placeholder:"N" help:"Hazard detector: keep up to N overwritten accesses per GM range for an access of another core that lands after them (0: the default, 16; at most 100). The report notes when the bound dropped one an access needed."`
}

// options sets the bound in opt; one outside 0..MaxKeptLimit is a usage
// error.
func (k keptFlags) options(opt *hazard.Options) error {
	if k.MaxKept < 0 || k.MaxKept > hazard.MaxKeptLimit {
		return fmt.Errorf("--max-kept %d: want a count from 1 to %d (0: the default, %d)", k.MaxKept, hazard.MaxKeptLimit, hazard.DefaultMaxKept)
	}
	opt.MaxKept = k.MaxKept
	return nil
}
