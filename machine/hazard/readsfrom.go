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
	visit := func(c *cell) { d.readFrom(w, c.hasW, &c.w, c.lo) }
	for n := range acc.NumRows() {
		lo, end := acc.Run(n)
		if t, i := sm.tableWord(lo, end); t != nil {
			// A table word read in place: no cell to stand for it.
			if sw := t.at(i); sw != nil {
				d.readFrom(w, sw.hasW, t.wordW(i, sw), lo)
			} else {
				d.readFrom(w, true, &t.host, lo)
			}
			continue
		}
		d.eachSigCell(sm, lo, end, sigRead, false, visit)
	}
}

// readFrom adds to the fingerprint that waiter w read the word at lo
// holding plain store s (when hasW).
func (d *Detector) readFrom(w *agentState, hasW bool, s *rec, lo int64) {
	if !hasW || s.gen != d.gen {
		return // no plain store of this run: adds commute
	}
	sa := &d.agents[s.agent]
	d.readsFrom += mix64(uint64(uint32(w.rank))<<32|uint64(uint32(w.core))<<8|uint64(w.pipe)) ^
		mix64(uint64(uint32(sa.rank))<<40|uint64(uint32(sa.core))<<16|uint64(sa.pipe)<<8|1) ^
		mix64(uint64(s.epoch)<<32|uint64(uint32(lo))^uint64(s.gen)<<56)
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
