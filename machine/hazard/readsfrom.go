package hazard

import (
	"github.com/ptoasm/ptoasm/machine"
)

// Which plain store a signal wait read is a value of the run, not an edge
// the program fixes: a word that two unordered plain stores set (both AIVs
// of an ffn_grid cell store one ready count) releases to a waiter whichever
// of them it held when the wait passed, since a plain store replaces the
// word's release. The acquired edge, and so which of the two stores a later
// access races, then follows the run, like the path a scalar takes
// (docs/hazards.md, "Which store a wait reads"). ReadsFrom fingerprints
// these choices, so that two runs can be told to have read the same stores.

// noteReadsFrom adds to the fingerprint the plain store each word of acc
// holds as wait r passes on it. The sum is over (waiter, store) pairs, so
// it does not depend on the order the waits reached the detector in; a
// store is named by its agent and the agent's own count (rec.epoch), which
// the path fixes.
func (d *Detector) noteReadsFrom(r *rec, acc *machine.Access) {
	sm := d.shadowFor(acc)
	w := &d.agents[r.agent]
	visit := func(c *cell) {
		if !c.hasW || c.w.gen != d.gen {
			return // no plain store of this run: adds commute
		}
		s := &d.agents[c.w.agent]
		d.readsFrom += mix64(uint64(uint32(w.rank))<<32|uint64(uint32(w.core))<<8|uint64(w.pipe)) ^
			mix64(uint64(uint32(s.rank))<<40|uint64(uint32(s.core))<<16|uint64(s.pipe)<<8|1) ^
			mix64(uint64(c.w.epoch)<<32|uint64(uint32(c.lo))^uint64(c.w.gen)<<56)
	}
	for n := range acc.NumRows() {
		lo, end := acc.Run(n)
		d.eachSigCell(sm, lo, end, false, visit)
	}
}

// mix64 is splitmix64's finaliser: a fingerprint term per field.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// ReadsFrom is a fingerprint of which plain store every satisfied signal
// wait of the run read (noteReadsFrom): equal in two runs that took the
// same path and read the same stores. programs/perturb_test.go compares
// the instances findings name only between such runs.
func (d *Detector) ReadsFrom() uint64 {
	d.drain()
	return d.readsFrom
}
