package hazard

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
	switch m := d.multi[id]; {
	case m != nil && m.gen == d.gen && m.ver == c.sigVer && m.store == stored:
		from = m.adders
	case stored || !added:
		if stored {
			return nil // the earlier store's history was lost
		}
	case one && h != nil && h.runGen == d.gen:
		from = []adderHist{d.oneAdder(c)}
	default:
		return nil
	}
	for k := range from {
		ad := &from[k]
		// Its adds ordered before the store are a prefix (program order).
		j := len(ad.rels) - 1
		for j >= 0 && !d.relBefore(ad.agent, &ad.rels[j].clock, r.agent) {
			j--
		}
		if j == len(ad.rels)-1 {
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
		n := adderHist{agent: ad.agent, total: ad.total - off, rels: make([]multiRel, 0, len(ad.rels)-j-1)}
		for _, rl := range ad.rels[j+1:] {
			n.rels = append(n.rels, multiRel{through: rl.through - off, clock: rl.clock})
		}
		x.adders = append(x.adders, n)
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
