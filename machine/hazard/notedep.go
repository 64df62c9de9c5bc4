package hazard

import "github.com/ptoasm/ptoasm/asm"

// What a noted wait's acquire was used for. A noted wait (onewait.go)
// whose meet falls once another agent's later add stands in changes the
// verdict only if something it ordered was ordered through the part that
// falls: an access of the waiter's core checked against an access of the
// adder's core that only the wait's acquire put before it, or a release of
// the waiter's core that carried that part on. Without that, the next pass
// lints the same run to the same verdict: allgather_gemm's compute waits on
// a summary word every comm block of its source adds to, and in lock step
// passes on one block's adds; another block's add stands in later, but
// each chunk's flag, polled before its tiles load, orders them, and the
// lint took two passes (twice its instructions) for one verdict.
//
// So while a noted wait's raise is live its core keeps, per adder's core,
// an entry with, per pipe of that core, lo, what the core holds of its
// component from acquires that are no noted wait's (a signal wait or load
// the one-agent rule did not decide, a meet), and hi, the most a noted
// wait raised it to, with the wait that did (ndEntry). A later noted wait
// from the same core takes lo as it stands: a component raised since by
// an acquire not tracked here makes a check look used (one pass more),
// never the reverse. Per pipe, not per component of every clock: a ring's
// every wait is a noted one, and reading the waiter's clock at each wait
// cost its 128-rank lint 2% of its instructions. A race check of an agent
// of the core that passes on an access at an epoch e of that component
// with lo < e <= hi used the raise (hb, ndUsed): the wait that raised it
// most records e. (Whichever noted waits raised it past e, the check fails
// in the next pass only if all of their meets fall below e, so the one
// that raised it most falling is the test.) A signal write of the core
// while an entry is live escapes: the wait is marked, and any fall of it
// then counts. A legit acquire that reaches hi drops the entry. At the
// run's end a noted wait's fall counts (finishLate) only where it was used
// at an epoch above the meet, or anywhere if it escaped.
//
// Left (ordering more, a missed race, never a false one; the same as
// before noted waits were watched): components of agents other than the
// adder's core that the wait's release carried; checks outside hb
// (storecount.go's); knowledge that leaves the core other than by a signal
// write (cross-core flags, unit flags, syncall); and an entry past
// maxNdEntries of one core, whose wait is marked as if it escaped.

// maxNdEntries bounds a core's live entries: past it the wait counts as
// escaped (every fall of it counts: one pass more, never a missed race).
const maxNdEntries = 64

// ndEntry is what noted waits raised on a waiting core of the components
// of the adder's core from, by pipe (above).
type ndEntry struct {
	from int32
	// escN counts the core's signal writes while the entry was live, since
	// the escN of a pipe's wait when it took the pipe: a wait escaped if
	// the count moved on while it held one (ndFlush). Counted, not marked
	// at each write: a ring's every rank adds after each wait, and marking
	// was 0.3% of its lint.
	escN   uint32
	lo, hi pipeVals
	since  pipeVals
	usedE  pipeVals            // the highest epoch a check used pipe s's wait at (ndUsed)
	u      [asm.NumPipes]int32 // 1 + the index in Detector.oneWaits of the wait that raised hi
}

// ndState is the detector's record of noted waits' raises (above).
type ndState struct {
	cores [][]ndEntry // by waiting core
	from  []uint16    // live entries by adder's core, over every waiting core
	live  int32
}

// ndUse is what one noted wait's raise was used for (above).
type ndUse struct {
	esc bool // a release of the waiting core carried it, or it was not tracked
	n   uint8
	pos [2]int32
	e   [2]uint32 // the highest epoch a check used it for at pos
}

// ndWait records, before its acquire, what the noted wait agent a is
// passing on word c raises: src and loc are the release it acquires (or
// joined already). Where it holds as much as an entry's hi the pipe is this
// wait's, the latest such wait being the one kept: a flag polled after a
// summary wait, itself decided by one agent's adds, carries the chunk's
// store as the summary's release did, and the summary wait falling then
// takes nothing back. nw is the wait, appended to Detector.oneWaits next.
func (d *Detector) ndWait(a int32, c *cell, nw *notedWait, src *vclock, loc *pipeVals) {
	core, k := d.agents[a].coreIdx, int32(d.aloc[c.sigFrom-1]>>4)-1 // coreOf
	if core < 0 || k < 0 || k == core {
		nw.use.esc = true // an adder on the waiter's core, or no core: not tracked
		return
	}
	u := int32(len(d.oneWaits)) + 1
	cs := &d.cores[k]
	if int(core) >= len(d.nd.cores) {
		d.nd.cores = append(d.nd.cores, make([][]ndEntry, int(core)+1-len(d.nd.cores))...)
	}
	es := d.nd.cores[core]
	for j := range es {
		if e := &es[j]; e.from == k {
			if loc != nil {
				// By slot, unread slots 0 (a ring's every wait
				// comes here: its cost is the ring's).
				for s, hi := range loc {
					if hi >= e.hi[s] && hi > e.lo[s] {
						e.take(d, uint8(s), hi, u)
					}
				}
				return
			}
			for i, s := range cs.slots[:cs.nlocals] {
				if hi := get(*src, cs.lpos[i]); hi >= e.hi[s] && hi > e.lo[s] {
					e.take(d, s, hi, u)
				}
			}
			return
		}
	}
	e := ndEntry{from: k}
	raised := false
	for i, s := range cs.slots[:cs.nlocals] {
		lo, hi := get(d.agents[a].clock, cs.lpos[i]), srcVal(src, loc, cs.lpos[i], s)
		e.lo[s], e.hi[s] = lo, lo
		if hi > lo {
			e.hi[s], e.u[s], raised = hi, u, true
		}
	}
	if !raised {
		return
	}
	if len(es) >= maxNdEntries {
		nw.use.esc = true
		return
	}
	d.nd.cores[core] = append(es, e)
	if int(k) >= len(d.nd.from) {
		d.nd.from = append(d.nd.from, make([]uint16, int(k)+1-len(d.nd.from))...)
	}
	d.nd.from[k]++
	d.nd.live++
}

// take gives pipe s of entry e to wait u, which raised it to hi.
func (e *ndEntry) take(d *Detector, s uint8, hi uint32, u int32) {
	d.ndFlush(e, s)
	e.hi[s], e.u[s], e.since[s], e.usedE[s] = hi, u, e.escN, 0
}

// srcVal is a release's component p, of pipe slot s of the adder's core:
// loc's when the release has one (an agent's lc is ahead of its clock).
func srcVal(src *vclock, loc *pipeVals, p int32, s uint8) uint32 {
	if loc != nil {
		return loc[s]
	}
	return get(*src, p)
}

// ndUsed is hb's note that agent a's check of access x's epoch e, at
// component p, passed: a raise of a noted wait on a's core that it needed
// is used (above).
func (d *Detector) ndUsed(a, x, p int32, e uint32) {
	lx := d.aloc[x]
	k := int32(lx>>4) - 1
	if k < 0 || int(k) >= len(d.nd.from) || d.nd.from[k] == 0 {
		return
	}
	core := d.agents[a].coreIdx
	if core < 0 || int(core) >= len(d.nd.cores) {
		return
	}
	s := lx & 15
	for j := range d.nd.cores[core] {
		if en := &d.nd.cores[core][j]; en.from == k {
			if en.lo[s] < e && e <= en.hi[s] && e > en.usedE[s] {
				en.usedE[s] = e
				d.oneWaits[en.u[s]-1].use.add(p, e)
			}
			return
		}
	}
}

// add records a check at epoch e of component p.
func (u *ndUse) add(p int32, e uint32) {
	for i := range u.n {
		if u.pos[i] == p {
			u.e[i] = max(u.e[i], e)
			return
		}
	}
	if int(u.n) == len(u.pos) {
		u.esc = true // more components than kept: every fall counts
		return
	}
	u.pos[u.n], u.e[u.n] = p, e
	u.n++
}

// ndLegit raises the entries of agent a's core to what an acquire that no
// noted wait decided brought: src, with loc (by pipe slot) for the agents
// of core locCore when not nil. An entry every pipe of which reaches its hi
// is dropped.
func (d *Detector) ndLegit(a int32, src *vclock, loc *pipeVals, locCore int32) {
	core := d.agents[a].coreIdx
	if core < 0 || int(core) >= len(d.nd.cores) || len(d.nd.cores[core]) == 0 {
		return
	}
	es := d.nd.cores[core]
	kept := es[:0]
	for _, e := range es {
		cs := &d.cores[e.from]
		var l *pipeVals
		if e.from == locCore {
			l = loc
		}
		live := false
		for i, s := range cs.slots[:cs.nlocals] {
			v := get(*src, cs.lpos[i])
			if l != nil {
				v = max(v, l[s])
			}
			if v >= e.hi[s] {
				d.ndFlush(&e, s)
			}
			e.lo[s] = max(e.lo[s], v)
			live = live || e.lo[s] < e.hi[s]
		}
		if !live {
			d.nd.from[e.from]--
			d.nd.live--
			continue
		}
		kept = append(kept, e)
	}
	d.nd.cores[core] = kept
}

// ndEscape marks the noted waits whose raise agent a's core holds live as
// escaped: a's signal write releases it.
func (d *Detector) ndEscape(a int32) {
	core := d.agents[a].coreIdx
	if core < 0 || int(core) >= len(d.nd.cores) {
		return
	}
	for j := range d.nd.cores[core] {
		d.nd.cores[core][j].escN++
	}
}

// ndFlush marks the wait holding pipe s of entry e escaped if the core
// wrote a signal since it took the pipe (ndEntry.escN).
func (d *Detector) ndFlush(e *ndEntry, s uint8) {
	if e.lo[s] < e.hi[s] && e.escN != e.since[s] && int(e.u[s]) <= len(d.oneWaits) {
		d.oneWaits[e.u[s]-1].use.esc = true
	}
}

// ndFlushAll is ndFlush for every pipe of every entry.
func (d *Detector) ndFlushAll() {
	for _, es := range d.nd.cores {
		for j := range es {
			for s := range es[j].u {
				d.ndFlush(&es[j], uint8(s))
			}
		}
	}
}

// ndMatters reports whether noted wait u's (1 + its index in oneWaits)
// meet falling to meet at component i changes what it ordered (above).
func (d *Detector) ndMatters(u int32, i int32, meet uint32) bool {
	if u <= 0 || int(u) > len(d.oneWaits) {
		return true // not kept: count it
	}
	x := &d.oneWaits[u-1].use
	if x.esc {
		return true
	}
	if d.nd.live != 0 {
		d.ndFlushAll() // a watched wait finished while its run goes on
		if x.esc {
			return true
		}
	}
	for k := range x.n {
		if x.pos[k] == i && x.e[k] > meet {
			return true
		}
	}
	return false
}

// ndRunEnd forgets the entries at a run's boundary (everything is ordered
// across it).
func (d *Detector) ndRunEnd() {
	d.ndFlushAll()
	for i := range d.nd.cores {
		d.nd.cores[i] = d.nd.cores[i][:0]
	}
	clear(d.nd.from)
	d.nd.live = 0
}

// entLoc is prefix ent's lc, nil when it has none.
func (d *Detector) entLoc(ent *prefixRel) *pipeVals {
	if !ent.hasLoc {
		return nil
	}
	return &ent.loc
}

// histLoc is word c's relLoc, nil when it has none.
func (d *Detector) histLoc(c *cell) *pipeVals {
	if h := c.hist; h != nil && h.hasLoc {
		return &h.relLoc
	}
	return nil
}

// fromCore is the core of word c's one adder, -1 for none.
func (d *Detector) fromCore(c *cell) int32 {
	if c.sigFrom == 0 {
		return -1
	}
	return d.coreOf(c.sigFrom - 1)
}
