package hazard

import (
	"slices"

	"github.com/ptoasm/ptoasm/machine"
)

// Counters behind a racing store. A plain store of the run to a signal word
// (a reset: `st @Sig[q], 0`) followed by adds it is not ordered before (a
// reset-races-atomic) took the whole join, so a wait there was ordered after
// every add that had landed when it polled: in
// allreduce_ring/ring_zero_at_entry a peer a round ahead hid R2's WARs, and
// in hazards/rs_ag_reset the all-gather wait was ordered after a peer's
// all-gather arrival that, on another timing, the re-arm erases while a
// late reduce-scatter arrival lands after it and stands in (RAW red,
// gather). Both verdicts followed the timing (programs.TestFindingsIgnoreSkew).
//
// The value a wait ordered after the store reads is the stored value plus
// the adds that landed after the store. An add can land after the store
// unless it is ordered before it, and each agent's adds land in its program
// order (TNOTIFY ends with BAR ALL), so on some timing the adds after the
// store are, of each agent, a prefix of its adds that are not ordered before
// the store: those that landed before the store on this timing (erased
// here, reported as reset-races-atomic) as much as those after it. So the
// word keeps, from the store on, the several-agent history of
// sigprefix.go (multiHist with store set) with each agent's adds counted
// from its first one not ordered before the store, and a wait takes the meet
// over those prefixes that meet its compare counted from the stored value
// (meetWait), whatever had landed, with later adds as candidates
// (latewait.go) where several agents add. Where one agent does, the wait
// takes its earliest release that meets the compare and is not watched:
// that agent's later adds hold it and lower nothing, and watching each of
// ring_zero_at_entry's waits (a copy of the kept releases) made its 64-rank
// lint seven times dearer; another agent's first add behind the store,
// landing after the wait, is then no candidate of it (ordering more).
// The wait holds the store already
// (only such a wait is decided so; another joins the whole word, ordering
// more), so what it reads never needs the store's release.
//
// The history is made at the store from what the word kept before it
// (storeCount): a several-agent history, one agent's counter (oneAdder), or
// nothing when no add of the run came before. When that is not known (an
// add whose value was not at hand, an earlier store whose history was lost)
// the word keeps the whole join as before; an agent whose kept releases lost
// an older one is counted from its second kept (ordering more).

// storeCount returns the several-agent history word c starts at plain store
// r, nil when the adds before it are not known. Call it before the store
// changes the word.
func (d *Detector) storeCount(c *cell, r *rec) *multiHist {
	if r.agent == d.host || r.gen != d.gen {
		return nil
	}
	h := c.hist
	x := &multiHist{gen: d.gen, store: true}
	if h != nil && h.runGen == d.gen {
		x.run0 = h.runAdd
	}
	id := d.sigID(c)
	stored := c.hasW && c.w.gen == d.gen && c.w.agent != d.host // an earlier store of the run
	added, one := false, c.sigFrom != 0
	for _, ad := range c.adds() {
		if ad.atomic && ad.gen == d.gen {
			added = true
			one = one && ad.agent == c.sigFrom-1
		}
	}
	var from []adderHist
	var reads []histRead
	switch m := d.multi[id]; {
	case m != nil && m.gen == d.gen && m.ver == c.sigVer && m.store == stored:
		from, reads = m.adders, m.reads
	case stored || !added:
		if stored {
			return nil // the earlier store's history was lost
		}
	case one && h != nil && h.runGen == d.gen:
		from = []adderHist{d.oneAdder(c)}
	default:
		return nil
	}
	need := d.readBefore(reads, r)
	for k := range from {
		ad := &from[k]
		// Its adds ordered before the store are a prefix (program order).
		j := len(ad.rels) - 1
		for j >= 0 && !d.relBefore(ad.agent, &ad.rels[j].clock, r.agent) {
			j--
		}
		if j == len(ad.rels)-1 {
			need -= ad.total
			continue // every kept add is ordered before the store
		}
		if j < 0 && ad.dropped {
			// Adds before the oldest kept may race the store too, and
			// the oldest's own value is not known: counting from the
			// second kept leaves adds out of every set, which orders
			// more (a missed race, never a false one).
			j = 0
			if len(ad.rels) == 1 {
				continue
			}
		}
		var off int64
		if j >= 0 {
			off = ad.rels[j].through
		}
		need -= off
		n := adderHist{agent: ad.agent, total: ad.total - off, rels: make([]multiRel, 0, len(ad.rels)-j-1)}
		for _, rl := range ad.rels[j+1:] {
			n.rels = append(n.rels, multiRel{through: rl.through - off, clock: rl.clock})
		}
		x.adders = append(x.adders, n)
	}
	if need > 0 && need <= maxEqSum {
		x.read = need
	}
	return x
}

// storeRaced reports whether word c's history since its plain store of the
// run holds adds that raced the store (they landed before it): a later add
// is counted with them (keepAdders), even one ordered after the store or
// of the storer, which would otherwise make the word its counter from the
// store on (addAfterStore) and leave them out.
func (d *Detector) storeRaced(c *cell) bool {
	if len(d.multi) == 0 || !c.hasW || c.w.gen != d.gen || c.w.agent == d.host {
		return false
	}
	m := d.multi[d.sigID(c)]
	return m != nil && m.store && m.gen == d.gen && m.ver == c.sigVer && len(m.adders) > 0
}

// fileStoreCount makes x, from storeCount, word c's history after its store
// (none when nil).
func (d *Detector) fileStoreCount(c *cell, x *multiHist) {
	id := d.sigID(c)
	if x == nil {
		if d.multi[id] != nil {
			delete(d.multi, id)
		}
		return
	}
	x.ver = c.sigVer
	if d.multi == nil {
		d.multi = make(map[*sigCore]*multiHist)
	}
	d.multi[id] = x
}

// relBefore reports whether release rel of agent b (its core's components
// written in, fullRelease) is ordered before agent a now: a holds b's own
// count at it.
func (d *Detector) relBefore(b int32, rel *vclock, a int32) bool {
	e := get(*rel, d.pos(b))
	if s, ok := d.mate(a, b); ok {
		return d.agents[a].lc[s] >= e
	}
	return get(d.agents[a].clock, d.pos(b)) >= e
}

// storeBase is the value word c's store wrote, as waiter a's wait tells it
// (the value it read less the adds of the run since), for history m; false
// when a is not ordered after the store (the word is then joined whole).
func (d *Detector) storeBase(a int32, c *cell, m *multiHist) (int64, bool) {
	if !c.hasW || c.w.gen != d.gen || c.w.agent == d.host || !d.hb(&c.w, a) {
		return 0, false
	}
	run := int64(0)
	if h := c.hist; h != nil && h.runGen == d.gen {
		run = h.runAdd
	}
	return d.wait.value - (run - m.run0), true
}

// What the earlier wait read. A store that re-arms a word its own agent
// waited on before (hazards/ar2d_grid_reset_reuse: `rst` after the phase-1
// wait `w1`, the word reused for phase 3's adds and `w3`) follows a wait
// that, on every timing where it passed, read at least the sum its compare
// needed, all of it landed before the store. The adds not ordered before
// the store are the store's candidates (above), so the candidates that
// wait read sum to at least what it needed less the adds ordered before
// the store (multiHist.read): of each agent a prefix of its candidates
// (program order), erased by the store, the rest of them the ones a wait
// after the store can count. The waiter of both (the storer's agent, or one
// ordered after the store and so after the earlier wait) is ordered after
// the adds either wait read, so the later wait takes the meet over the
// pairs of sets: of each agent, a prefix the earlier wait read and the
// adds after it that the later one counted, the first summing to at least
// what the earlier needed and the second meeting the later compare
// (afterRead). Counted alone, the later wait took a late phase-1 add (one
// the meet of `w1` does not hold, since a phase-3 add could have stood in
// for it) in place of a peer's phase-3 add, and was ordered after no
// single peer's phase-3 put: RAW `ag, ld` on a kernel whose every
// completing run orders each put before the loads, through `w1` (which
// read the peer's phase-3 add) or `w3`. Adds a store erases without the
// earlier wait having read them (landed between the wait and the store)
// count in neither set, which orders no more. An `==` wait after such a
// store, several agents behind it, takes its sets without the earlier
// wait's (eqReaches: ordering less, as before the rule).

// histRead is a satisfied wait on a word several agents add to: the
// waiter's place (r: its agent and count there) and the sum of the
// history's adds its compare needed.
type histRead struct {
	r    rec
	need int64
}

// noteRead records that waiter a's wait, which passed on word history m
// with base the value before its adds, needed their sum to reach its
// compare's least passing value (`>`: want + 1).
func (d *Detector) noteRead(a int32, m *multiHist, base int64) {
	w := &d.wait
	need := w.want - base
	if w.cmp == "gt" {
		need++
	}
	if need <= 0 {
		return
	}
	r := rec{agent: a, epoch: d.agents[a].n, gen: d.gen}
	for i := range m.reads {
		if m.reads[i].r.agent == a {
			if need >= m.reads[i].need {
				m.reads[i] = histRead{r, need}
			}
			return
		}
	}
	if len(m.reads) < maxAdders {
		m.reads = append(m.reads, histRead{r, need})
	}
}

// readBefore is the most any wait of reads ordered before store r needed.
func (d *Detector) readBefore(reads []histRead, r *rec) int64 {
	need := int64(0)
	for i := range reads {
		if reads[i].need > need && d.hbOrSame(&reads[i].r, r) {
			need = reads[i].need
		}
	}
	return need
}

// readPrefix is the sum of adder ad's first adds that make up read
// alone (the least of its sums at or past it), its total when none does:
// with one agent behind the store, the adds the earlier wait read.
func readPrefix(ad *adderHist, read int64) int64 {
	if read <= 0 {
		return 0
	}
	for r := range ad.rels {
		if ad.rels[r].through >= read {
			return ad.rels[r].through
		}
	}
	return ad.total
}

// afterRead is meetAt's test for a history counted from a store whose
// storer read at least m.read of its adds before it (`>=`, `>`): whether,
// taking of each adder its releases at most u in col, a prefix the earlier
// wait read (summing to at least m.read over the adders) and the rest
// counted after the store can reach the compare. The after-store sum is
// the sum of those releases less what the earlier wait read, so the least
// read sum at or past m.read decides: a knapsack over the adders' prefix
// sums, by the read sum up to m.read.
func (d *Detector) afterRead(m *multiHist, col []uint32, u uint32, base int64, cmp string, want int64) bool {
	need := int(m.read)
	const inf = int64(1) << 62
	dp := slices.Grow(d.readCost[:0], 2*(need+1))[:2*(need+1)]
	d.readCost = dp
	cur, next := dp[:need+1], dp[need+1:]
	for i := range cur {
		cur[i] = inf
	}
	cur[0] = 0
	sum, off := base, 0
	for k := range m.adders {
		rels := m.adders[k].rels
		c, _ := slices.BinarySearch(col[off:off+len(rels)], u+1) // releases <= u
		off += len(rels)
		have := int64(0)
		if c > 0 {
			have = rels[c-1].through
		}
		sum += have
		copy(next, cur) // the earlier wait read none of its adds
		for i := range c {
			e := rels[i].through
			for s, v := range cur {
				if v == inf {
					continue
				}
				t := min(need, s+int(min(e, int64(need))))
				next[t] = min(next[t], v+e)
			}
		}
		cur, next = next, cur
	}
	if cur[need] == inf {
		return false // the candidates cannot make it up: the wait orders it all
	}
	return machine.CompareSignal(cmp, sum-cur[need], want)
}
