// Package hazard finds synchronisation hazards in PTO programs: data races
// between pipes, cores and ranks (RAW, WAR, WAW), same-pipe dependences without
// a pipe_barrier, deadlocks, flag misuse (unpaired, double and out-of-range
// sets), reads of uninitialised memory, out-of-bounds accesses and plain stores
// racing atomic adds on signal words.
//
// The dynamic detector is a machine.Observer. It keeps a vector clock per agent
// (rank, core, pipe) and derives happens-before only from synchronisation
// (issue order from the scalar unit, flags, barriers, cross-core flags,
// signals, syncall, run boundaries), never from simulated time, so a race is
// reported even when this run's latencies happened to order the two accesses
// (peers.md §5). Shadow state is an interval map per buffer keyed by the byte
// ranges instructions touch, so its cost grows with instructions, not bytes.
//
// CheckFlags is a static pass over a kernel's statement tree that checks flag
// balance on every path, zero-trip loops included, without running anything.
// It is symbolic: conditions on values it cannot compute split paths with a
// fact each (static_sym.go), and loops of many or unknown trips are peeled so
// their guards are decided on every trip (static_loop.go).
//
// The finding kinds, with an example and a fix for each, are catalogued in
// docs/hazards.md.
package hazard
