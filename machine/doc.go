// Package machine is the cycle-approximate model of ranks × cores × pipes that
// `ptoasm run` executes assembled programs on.
//
// Each core's scalar unit interprets its kernel's compiled statement tree with an
// explicit frame stack and issues every instruction, in program order, into the
// bounded in-order queue of the pipe that executes it; a full queue stalls the
// scalar. Each pipe runs its queue head one op at a time and applies the op's
// data effect when it completes, so a missing synchronisation shows as wrong data
// as well as in the hazard report. Flags, FFTS counters, signals and the comm
// ops' internal steps are modelled the way the A2/A3 library executes them
// (machine-facts §2, kernels.md §0.3) so that observers see every hidden access.
//
// The engine is a discrete-event loop over (cycle, agent, seq) wake-ups, which
// the scheduler (sched.go: a timing wheel for the near future, a heap beyond
// it) hands out in order: idle pipes cost nothing, a scalar runs ahead of the global clock
// until it touches shared state, and same-cycle events run in a fixed order so
// every run is deterministic. When the heap empties while something still waits,
// the machine stops at once with a DeadlockError that explains every wait.
package machine
