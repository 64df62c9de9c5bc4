package hazard

// Same-pipe pairs: the nearest write only.
//
// The writes of one pipe with no pipe_barrier between them are not
// ordered, so a cell keeps one per site (putSite), and an access of that
// pipe meets all of them: n writes of a tile at n sites made n(n-1)/2
// same-pipe WAWs (a corpus-style kernel of 500 `pto.tmov`s: 124 750
// findings, 100 s and 852 MB), and a read after them a RAW with each. A
// `pipe_barrier` between an access and its pipe's nearest conflicting
// write before it is between the access and every earlier write too, so
// that pair is the one a fix needs: an access of a pipe whose same-pipe
// races are reported meets only the latest plain write of its own agent
// kept in the cell (for a write, the WAW; for a read, the RAW). Earlier
// writes stay in the cell for other agents, whose races with each site
// are reported as before. An agent's reads were already met latest only
// (superseded), so a WAR is that write's nearest read.
//
// This does not follow timing: an agent's accesses reach the detector in
// its order, so the same own writes are before r in every run, and
// another agent's write takes them out of the cell only when it is
// ordered after them, which is then true of the earlier ones as well (an
// agent's epochs grow): the latest never leaves while an earlier one
// stays, unless both are kept shadowed, and shadowed ones count here too.
//
// Another agent's read meets each of the pipe's writes still: which of
// them reached the detector before it follows timing, so its nearest is
// not a property of the run (docs/hazards.md, "Same-pipe RAW / WAR /
// WAW").

// nearOwn is, for one access visiting one cell, the epoch of its agent's
// latest plain write kept there, looked up when a write of that agent
// first asks (most accesses never do: their agent wrote nothing the cell
// keeps, or is ordered after it).
type nearOwn struct {
	latest uint32
	known  bool
}

// passed reports whether plain write w of cell c is not access r's nearest
// write on r's own pipe: a later plain write of r's agent is kept in c.
// Agents whose same-pipe races are off are left as they were (selfOff:
// their pairs are never reported, and the shortcuts that tell them apart
// read every pair).
func (n *nearOwn) passed(d *Detector, c *cell, w, r *rec) bool {
	if w.agent != r.agent || w.gen != r.gen || w.atomic || d.soff[r.agent] {
		return false
	}
	if !n.known {
		n.latest, n.known = ownLatest(c, r), true
	}
	return w.epoch < n.latest
}

// ownLatest is the epoch of the latest plain write of r's agent and run
// generation kept in c before r (0: none), shadowed ones included.
func ownLatest(c *cell, r *rec) uint32 {
	var latest uint32
	own := func(w *rec) {
		if w.agent == r.agent && w.gen == r.gen && !w.atomic && w.epoch < r.epoch && w.epoch > latest {
			latest = w.epoch
		}
	}
	if c.hasW {
		own(&c.w)
	}
	for x, adds := 0, c.adds(); x < len(adds); x++ {
		own(&adds[x])
	}
	return latest
}
