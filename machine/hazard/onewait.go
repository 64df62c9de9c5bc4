package hazard

import "slices"

// Waits the one-agent rule decided. A `>=` or `>` wait on a word only one
// agent has added to so far in the run (sigprefix.go, prefixFor) acquires
// that agent's earliest release that met its compare, or the word whole.
// Another agent's add that lands later, not ordered after the wait, could
// on another timing have landed first and passed the wait in its place,
// exactly as a late add does on a word several agents add to (latewait.go):
// a binomial tree whose levels share one arrival word and whose receives
// wait `>= 1` (hazards/tree_allreduce_one_word) passes the level-0 wait of
// a parent with several children on whichever child's add comes first. In
// lock step the level-0 child's add was the only one landed, the wait was
// decided by the one-agent rule and never watched, so the other children's
// adds never stood in and that child's race came and went with the
// timing.
//
// Watching such a wait as meetWait's are (a copy of the adder's kept
// releases at each wait) is what a ring pays at every round for a word no
// other agent ever adds to: ring_zero_at_entry at 64 ranks was seven times
// dearer when its waits were watched so. So the wait is only noted here
// (noteWait): its name, the waiter's raised count, its compare and the
// adder's sums at the wait and through the release it acquired, a few
// words and no clock, appended to the run's list (Detector.oneWaits) and
// chained from the word's history (sigHist.noted, in its padding: a map by
// word cost a ring's 128-rank lint 2% more instructions, each round's wait
// being on a new word). The adder's releases stay kept on the word
// (sigPrefix, maxPrefix of them), so when another agent's add first
// reaches the word (startNoted) each noted wait whose acquired release is
// still kept becomes a watched lateWait, the adder's releases up to the
// wait as its landed adds, and the rest is latewait.go's: the other
// agents' adds not ordered after the wait are its candidates, and a next
// pass gives them to it (oneMeet, then meetHist over the adder's history
// and them).
//
// A wait is noted also when an earlier wait of its agent joined the word
// already (it acquires nothing of its own): taken back at the earlier wait
// in the next pass, the word is this one's to acquire, and unnoted it would
// be found one pass later (tree_allreduce_one_word's levels: a pass each).
//
// What the wait acquired beyond what the waiter held is not known then,
// so the watched wait counts the whole release it acquired: a meet that
// falls only where the waiter held as much already asks for one pass more
// (which decides that wait through meetHist, whose acquired part is
// exact), never for a different verdict. The adder's own later adds are
// no candidates: they come after the adds it had landed in its program
// order, so a set with them holds a set without them that passes.

// maxNoted bounds the noted waits of one word that another agent's add
// turns into watched ones, the latest first: the older are unwatched
// (ordering more, a missed race, never a false one).
const maxNoted = 4 * maxPrefix

// notedWait is a noted wait (above).
type notedWait struct {
	key  waitKey
	id   *sigCore // the word (Detector.sigID)
	prev int32    // 1 + the index of the word's previous noted wait, 0: none
	n    uint32   // the waiter's own count at the wait (nextWaitKey raised it: not 0)
	gen  uint32
	from int32 // the word's one adder, agent+1 (cell.sigFrom)
	gt   bool  // the compare is `>`, else `>=`
	want int64
	base int64 // the word's value before the run's adds
	// landed is the adder's sum at the wait (sigHist.runAdd), thru its sum
	// through the release the wait acquired.
	landed, thru int64
	// use is what its raise was used for (notedep.go).
	use ndUse
}

// notable reports whether the satisfied wait being visited on word c is
// one the one-agent rule decides and may be noted: a `>=` or `>` compare
// on the word's own value, adds of this run by the one agent c.sigFrom
// names and no plain store of the run (a store has storecount.go's rules).
func (d *Detector) notable(c *cell) bool {
	w := &d.wait
	h := c.hist
	return w.on && c.sigFrom != 0 && (w.cmp == "ge" || w.cmp == "gt") && h != nil && h.runGen == d.gen &&
		h.runAdd > 0 && !(c.hasW && c.w.gen == d.gen && c.w.agent != d.host)
}

// noteWait notes the satisfied wait on word c that p names (its key and
// the waiter's count after nextWaitKey raised it), which acquired the
// adder's release through the sum thru (notable said it may be noted).
func (d *Detector) noteWait(c *cell, p *notedWait, thru int64) {
	w := &d.wait
	h := c.hist
	p.id, p.gen, p.from, p.gt = d.sigID(c), d.gen, c.sigFrom, w.cmp == "gt"
	p.want, p.base, p.landed, p.thru = w.want, w.value-h.runAdd, h.runAdd, thru
	if d.noteAt(h.noted, p.id) != nil {
		p.prev = h.noted
	}
	d.oneWaits = append(d.oneWaits, *p)
	h.noted = int32(len(d.oneWaits))
}

// noteAt is the noted wait at i (1 + its index) if it is one of word id in
// this run, else nil: a history keeps its index across runs (oneWaits starts
// again at each) and a cell's split twin shares it.
func (d *Detector) noteAt(i int32, id *sigCore) *notedWait {
	if i <= 0 || int(i) > len(d.oneWaits) {
		return nil
	}
	if p := &d.oneWaits[i-1]; p.id == id && p.gen == d.gen {
		return p
	}
	return nil
}

// dropNoted forgets the waits noted on word c: a plain store replaces its
// one adder's history (the waits before it are unwatched, ordering more).
func (d *Detector) dropNoted(c *cell) {
	if h := c.hist; h != nil {
		h.noted = 0
	}
}

// startNoted turns the waits noted on word c, whose one adder's release is
// still its clock, into watched waits (latewait.go) as another agent's add
// is about to reach it.
func (d *Detector) startNoted(c *cell) {
	h := c.hist
	if h == nil || h.noted == 0 {
		return
	}
	id := d.sigID(c)
	i := h.noted
	h.noted = 0
	if h.runGen != d.gen {
		return
	}
	var one adderHist
	var ws []*lateWait
	for k := 0; k < maxNoted; k++ {
		p := d.noteAt(i, id)
		if p == nil {
			break
		}
		at := i // its use record's (notedep.go)
		i = p.prev
		if p.from != c.sigFrom {
			continue
		}
		if one.rels == nil {
			one = d.oneAdder(c)
		}
		j, n := -1, 0
		for r := range one.rels {
			if one.rels[r].through <= p.landed {
				n = r + 1
			}
			if one.rels[r].through == p.thru {
				j = r
			}
		}
		if j < 0 {
			continue // the release it acquired is no longer kept
		}
		cmp := "ge"
		if p.gt {
			cmp = "gt"
		}
		ws = append(ws, &lateWait{key: p.key, a: p.key.agent, n: p.n, gen: p.gen, cmp: cmp, want: p.want, base: p.base, noted: true, u: at,
			acq:    one.rels[j].clock,
			adders: []adderHist{{agent: one.agent, total: p.landed, rels: one.rels[:n:n], dropped: one.dropped}},
			landed: []int{n}, closed: []bool{true}}) // the adder's later adds lower nothing (above)
	}
	if len(ws) == 0 {
		return
	}
	slices.Reverse(ws) // in the order they passed
	if d.lateWatch == nil {
		d.lateWatch = make(map[*sigCore][]*lateWait)
	}
	d.lateWatch[id] = append(d.lateWatch[id], ws...)
}

// oneMeet decides a satisfied wait on word c, whose adds so far are one
// agent's (c.sigFrom), through meetHist over that agent's history: an
// `==` wait always (watched for other agents' adds eagerly: eqmeet.go),
// a `>=` or `>` one when the pass before found it other agents' late adds
// (Options.Late). False leaves the word to prefixFor.
func (d *Detector) oneMeet(a int32, c *cell) bool {
	w := &d.wait
	switch w.cmp {
	case "eq":
	case "ge", "gt":
		if late := d.opt.Late; late == nil || late.waits[d.waitKeyOf(a, c)] == nil {
			return false
		}
	default:
		return false
	}
	h := c.hist
	if h == nil || h.runGen != d.gen || c.hasW && c.w.gen == d.gen && c.w.agent != d.host {
		return false // no add of this run, or a plain store of it
	}
	if p := d.prefixes[c.sigAt]; w.cmp == "eq" && p != nil && p.from == c.sigFrom && p.gen == d.gen && p.dropped {
		return false // the subset sums start at the run's first add
	}
	return d.meetHist(a, c, &multiHist{gen: d.gen, ver: c.sigVer, adders: []adderHist{d.oneAdder(c)}})
}
