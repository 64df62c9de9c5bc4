package hazard

import (
	"slices"

	"github.com/ptoasm/ptoasm/machine"
)

// A wait on a word one agent adds to repeatedly (a cumulative counter: a
// ring's per-round Ready count, a generation) is ordered only after the
// adds it needed, not after every add that happened to land before it
// polled. `twait @Ready[0], %r #cmp=ge` in round r needs the notifier's
// first r adds; its (r+1)-th add, if it landed already, is not something
// the program waited for, and on a slower notifier the wait passes without
// it. Joining the whole word made the verdict follow the timing: a wait on
// the previous round's count hid the RAW with the round's put whenever the
// notify of the round came first (hazards/ring_slots_wrong_round, whose
// ranks run in lock step so the notify always came first).
//
// So while one agent's releases make up a word's clock (cell.sigFrom), the
// detector keeps that agent's earlier releases of the word, with the sum of
// the run's adds after each, and a satisfied single-word wait acquires the
// earliest release whose value already met the compare, in the
// notifier's own order (one scalar's adds land in program order: TNOTIFY
// ends with BAR ALL). Several notifiers of one word, or a plain store
// among them, keep the join of everything (Detector.signalCell).
//
// A wait over several words (`twait @Flag[0], n #count=NS`: one arrival
// word per split) compares each word with the same operand, so it is a
// one-word wait on each: the machine reports each word's value
// (Event.Words) and each word acquires only the adds its own compare
// needed. Joining each word whole made the verdict follow the timing: a
// wait one count short was ordered after the sequence it did not wait for
// whenever that sequence's adds had landed first, as under slow scalar GM
// loads (hazards/splitkv_flag_words).

// maxPrefix bounds the releases kept per word: a wait that needs an older
// one than the oldest kept is ordered after the oldest kept, which orders
// more than the program does (a missed race, never a false one).
const maxPrefix = 8

// sigPrefix is the earlier releases of the one agent whose latest release
// is a word's clock, oldest first, kept under that latest release's
// record number (cell.sigAt, unique in the detector's life): a cell split
// in two shares its history with its twin, and a word that changed its
// clock since is never found under the old number.
type sigPrefix struct {
	from int32  // the notifier, agent+1 (cell.sigFrom)
	gen  uint32 // the run generation the releases belong to
	rels []prefixRel
	// dropped says rels lost its oldest (maxPrefix): the value before
	// the first add is no longer known to be what it was.
	dropped bool
	// sets says the releases are the notifier's plain sets (setChain):
	// each prefixRel's cum is then the value its set wrote, and last the
	// value of the word's latest release.
	sets bool
	last int64
}

// prefixRel is one earlier release: the word's clock and relLoc as the
// agent's add left them, and the run's sum of adds to the word after it
// (sigHist.runAdd), so that the value the word had then is the value a
// wait read minus the adds that came after.
type prefixRel struct {
	cum    int64
	clock  vclock
	loc    pipeVals
	hasLoc bool
}

// waitCmp is the satisfied wait whose word signalAccess visits
// (Detector.signalWait): its compare, the value it compared with, and the
// value it read. A wait over several words compares each with want, so
// each is a one-word wait of its own: words holds what each read (from
// its lo, size bytes apart), and word sets on and value for the word
// being visited.
type waitCmp struct {
	on          bool
	cmp         string
	want, value int64
	words       []int64
	lo, size    int64
}

// waitFor is the wait of event e on access acc: off (every word joined
// whole) unless acc is one run of words the machine told the values of.
func waitFor(e *machine.Event, acc *machine.Access) waitCmp {
	if acc.NumRows() > 1 || acc.Tensor == nil || e.Op == nil || e.Op.Info == nil {
		return waitCmp{}
	}
	sz := int64(acc.Tensor.DType.Size())
	w := waitCmp{cmp: machine.SignalCmp(e.Op), want: e.Want}
	switch {
	case acc.Hi-acc.Lo == sz:
		w.on, w.value = true, e.Value
	case sz > 0 && len(e.Words) > 1 && acc.Hi-acc.Lo == int64(len(e.Words))*sz:
		w.words, w.lo, w.size = e.Words, acc.Lo, sz
	default:
		return waitCmp{}
	}
	return w
}

// word makes w the one-word wait on word c, off when c is not one of
// w.words (a cell wider than a word is joined whole).
func (w *waitCmp) word(c *cell) {
	k := (c.lo - w.lo) / w.size
	w.on = c.hi-c.lo == w.size && c.lo >= w.lo && (c.lo-w.lo)%w.size == 0 && k < int64(len(w.words))
	if w.on {
		w.value = w.words[k]
	}
}

// keepPrefix is called when agent a's add is about to replace a's earlier
// release as word c's clock: it moves the word's history, with that
// release appended, to the side (d.movedPrefix) for keptPrefix to file
// under the new release's number.
func (d *Detector) keepPrefix(c *cell) {
	var p *sigPrefix
	if len(d.prefixes) > 0 {
		if p = d.prefixes[c.sigAt]; p != nil {
			delete(d.prefixes, c.sigAt)
			if p.from != c.sigFrom || p.gen != d.gen {
				p = nil
			}
		}
	}
	if p == nil || p.sets {
		// A chain of sets the add follows is no count of adds.
		p = &sigPrefix{from: c.sigFrom, gen: d.gen}
	}
	var cum int64
	if h := c.hist; h != nil && h.runGen == d.gen {
		cum = h.runAdd
	}
	p.keep(d.wordRelease(c, cum))
	d.movedPrefix = p
}

// wordRelease copies word c's clock and relLoc into a kept release of
// value (or sum of adds) cum.
func (d *Detector) wordRelease(c *cell, cum int64) prefixRel {
	ent := prefixRel{cum: cum}
	if h := c.hist; h != nil && h.hasLoc {
		ent.loc, ent.hasLoc = h.relLoc, true
	}
	// A root table of its own: sharing the word's would take the word's
	// (and so, at the replacing copy, the notifier's) ownership of its
	// root, and the notifier's next raise would copy it.
	ent.clock.g, ent.clock.mine = make([]*vgroup, 0, len(c.sig.g)), true
	ent.clock.copyFrom(&c.sig)
	return ent
}

// keep appends release ent, dropping the oldest past maxPrefix.
func (p *sigPrefix) keep(ent prefixRel) {
	if len(p.rels) == maxPrefix {
		copy(p.rels, p.rels[1:])
		p.rels = p.rels[:maxPrefix-1]
		p.dropped = true
	}
	p.rels = append(p.rels, ent)
}

// A status word one agent sets again and again (a decoupled look-back's
// flag: 1 when the block's aggregate is published, 2 when its inclusive
// prefix is) holds each value from its set's landing to the next's, and
// one scalar's sets land in program order (TNOTIFY ends with BAR ALL). A
// wait that read a later set could have polled while an earlier one was
// the word's value, so it needs only the earliest set of the chain whose
// value met its compare: `twait @Flag[j], 1 #cmp=ge` that read 2 did not
// wait for the prefix the second set publishes. Acquiring the set it read
// ordered the reader after the prefix whenever the second set came first,
// and the race of a reader that takes the prefix on the aggregate's flag
// came and went with the timing (hazards/lookback_scan_agg_flag).

// setChain returns the chain word c holds once plain notify r (of value
// d.note.val) replaces its release: r's alone, or the earlier sets of r's
// agent with r's after them; nil when r is no TNOTIFY set of one word of
// this run. Call it before the store changes the word.
func (d *Detector) setChain(c *cell, r *rec) *sigPrefix {
	if !d.note.on || r.agent == d.host || r.gen != d.gen {
		return nil
	}
	p := &sigPrefix{from: r.agent + 1, gen: d.gen, sets: true, last: d.note.val}
	if c.sigGen != d.gen || c.sigFrom != r.agent+1 || !c.hasW || c.w.agent != r.agent || c.w.gen != d.gen || len(c.adds()) > 0 {
		return p // the word's release is not r's agent's own earlier set
	}
	if old := d.prefixes[c.sigAt]; old != nil && old.sets && old.from == p.from && old.gen == d.gen {
		p.rels, p.dropped = append(p.rels, old.rels...), old.dropped
		p.keep(d.wordRelease(c, old.last))
	}
	return p
}

// fileSetChain files chain p, from setChain, under word c's new release.
func (d *Detector) fileSetChain(c *cell, p *sigPrefix) {
	if p == nil {
		return
	}
	if d.prefixes == nil {
		d.prefixes = make(map[uint64]*sigPrefix)
	}
	d.prefixes[c.sigAt] = p
}

// keptPrefix files the history keepPrefix set aside under word c's new
// release number.
func (d *Detector) keptPrefix(c *cell) {
	if d.movedPrefix == nil {
		return
	}
	if d.prefixes == nil {
		d.prefixes = make(map[uint64]*sigPrefix)
	}
	d.prefixes[c.sigAt] = d.movedPrefix
	d.movedPrefix = nil
}

// dropPrefix forgets word c's history: its clock stops being one agent's
// releases (another agent's add, a plain store, a new run).
func (d *Detector) dropPrefix(c *cell) {
	if len(d.prefixes) > 0 && c.sigFrom != 0 {
		delete(d.prefixes, c.sigAt)
	}
}

// prefixFor tells what of word c the wait being visited needed: nothing
// (none: the value before the notifier's first add of the run already met
// the compare), an earlier release (ent), or the latest (nil, false: the
// whole word is joined, as it is whenever the detector cannot tell).
func (d *Detector) prefixFor(c *cell) (ent *prefixRel, none bool) {
	w := &d.wait
	h := c.hist
	if !w.on || c.sigFrom == 0 || h == nil || h.runGen != d.gen {
		return nil, false
	}
	var p *sigPrefix
	if len(d.prefixes) > 0 {
		if p = d.prefixes[c.sigAt]; p != nil && (p.from != c.sigFrom || p.gen != d.gen) {
			p = nil
		}
	}
	if p != nil && p.sets {
		// The earliest set of the chain whose value met the compare
		// (setChain); the latest when none earlier did.
		for i := range p.rels {
			if machine.CompareSignal(w.cmp, p.rels[i].cum, w.want) {
				return &p.rels[i], false
			}
		}
		return nil, false
	}
	// The value before the run's first add: every add of the run is the
	// notifier's (another agent's would have made sigFrom 0) unless a plain
	// store of the run came between, and runAdd sums them all.
	if (p == nil || !p.dropped) && !(c.hasW && c.w.gen == d.gen && c.w.agent != d.host) &&
		machine.CompareSignal(w.cmp, w.value-h.runAdd, w.want) {
		return nil, true
	}
	if p == nil {
		return nil, false
	}
	for i := range p.rels {
		if machine.CompareSignal(w.cmp, w.value-(h.runAdd-p.rels[i].cum), w.want) {
			return &p.rels[i], false
		}
	}
	return nil, false
}

// acquirePrefix joins the earlier release ent of word c's notifier into
// agent a (acquireSig for one that is no longer the word's clock).
func (d *Detector) acquirePrefix(a int32, c *cell, ent *prefixRel) {
	d.acquire(a, &ent.clock)
	if ent.hasLoc {
		d.acquireLoc(a, d.coreOf(c.sigFrom-1), &ent.loc)
	}
}

// Several notifiers. A word several agents add to (an all-to-all arrival
// counter: every rank adds 1 to the owner's word, which waits for `>=` the
// rank count) was joined whole at a wait, so the wait was ordered after
// every add that had landed, needed or not. With a compare one short
// (`>= RANKS - 1`), a wait reached after every add had landed was ordered
// after all of them and the kernel linted clean, while one rank slowed by
// other work made it report the race with that rank's data: the verdict
// followed the ranks' relative speed (testdata/limits/rs_count_one_short
// before this rule).
//
// The adds that landed before the wait could have landed in any order that
// happens-before allows, and the wait passes on any set of them whose sum
// meets its compare. Each agent's adds land in its program order (TNOTIFY
// ends with BAR ALL), so such a set is a prefix of each agent's adds, and
// the wait is ordered after a component of another agent's clock only as
// far as every such set carries it: the meet, over the sets that satisfy
// the compare, of the join of their releases. An add that lands after an
// add it is ordered after (its agent waited on something that carried the
// first) contributes the first's clock through its own, so a peer a round
// ahead, whose add stands in for a late one, orders the wait after
// whatever the late one's data write was ordered before on its way (no
// false alarm), and a set that leaves out an add the waiter is ordered
// after by another path is covered by the waiter's own clock.
//
// Component by component the meet needs no enumeration of sets: the meet
// is below v at component i exactly when the largest prefixes whose
// releases all stay below v (one per agent) already satisfy the compare,
// since the compare is monotone in the sum for `>=` and `>` over positive
// adds. So meetWait scans, per component, the values the kept releases
// hold there in increasing order, and takes the first v at which the
// prefixes below v+1 satisfy it.
//
// Adds that had not landed when the wait passed are not among the sets
// here (a later add that could have stood in for one the wait took is not
// known yet); latewait.go watches the wait for them and has the run linted
// again with them as candidates (Settle). Which instances a race names can
// still follow the timing, and ReadsFrom folds what each such wait saw into
// its fingerprint.
// An `==` wait takes the same meet over the sets that reach its value
// exactly (eqmeet.go). Other compares, a non-positive add, a plain store of the run (but for
// adds that race it, counted from it: storecount.go), more than maxAdders
// agents, or a history that lost its oldest releases beyond what
// is kept keep the whole join (ordering more: a missed race, never a false
// one).

// maxAdders bounds the agents whose releases one word keeps: past it the
// wait joins every landed add (a verdict that can move with timing), below
// it a wait costs about adders × 8 reads a component it does not hold.
const maxAdders = 64

// multiHist is the releases of the agents that add to one word in this
// run (gen), valid while the word's sigVer is ver.
type multiHist struct {
	gen    uint32
	ver    uint32
	adders []adderHist
	// store says the adds are counted from the word's plain store of the
	// run (storecount.go): each adder's releases start at its first add
	// not ordered before the store, their sums counted from there, and
	// run0 is the word's sigHist.runAdd at the store.
	store bool
	run0  int64
	// read is, for a history counted from a store, the least sum of its
	// adds that the storer's wait before the store read on every timing
	// (storecount.go, "What the earlier wait read"); reads is the
	// satisfied waits on the word that tell it, of each agent the one
	// that needed most.
	read  int64
	reads []histRead
}

// adderHist is one agent's adds to a word: their sum in this run, and its
// latest maxPrefix releases, oldest first (dropped: older ones were lost).
type adderHist struct {
	agent   int32
	total   int64
	rels    []multiRel
	dropped bool
}

// multiRel is one release: the agent's sum of adds through it, and its
// clock with the agent's core components written in (relLoc).
type multiRel struct {
	through int64
	clock   vclock
}

// fullRelease returns a copy of release rel of agent a with loc, its
// components of a's core (relLoc), written in.
func (d *Detector) fullRelease(a int32, rel *vclock, loc *pipeVals) vclock {
	var c vclock
	c.g, c.mine = make([]*vgroup, 0, len(rel.g)), true
	c.copyFrom(rel)
	if loc != nil {
		cs := &d.cores[d.coreOf(a)]
		for i, l := range cs.lpos[:cs.nlocals] {
			raise(&c, l, loc[cs.slots[i]])
		}
	}
	return c
}

// keepAdders records agent a's add (release rel, with a's lc loc beside it
// when not nil) to word c, whose clock is another agent's release or
// already the join of several: it starts the word's history from its one
// notifier's (sigPrefix) or extends it. It is called before the word's
// clock is joined with rel.
func (d *Detector) keepAdders(c *cell, a int32, rel *vclock, loc *pipeVals) {
	id := d.sigID(c)
	h := c.hist
	stored := c.hasW && c.w.gen == d.gen && c.w.agent != d.host
	ok := d.note.on && d.note.val > 0 && h != nil && h.runGen == d.gen && !stored
	m := d.multi[id]
	if stored {
		// After a plain store of the run the history goes on only from
		// the one storeCount made at the store (the add races it: the
		// word's clock is still the store's, or the join since).
		if !d.note.on || d.note.val <= 0 || m == nil || !m.store || m.gen != d.gen || m.ver != c.sigVer {
			if m != nil {
				delete(d.multi, id)
			}
			return
		}
	} else if c.sigFrom != 0 && ok {
		m = &multiHist{gen: d.gen}
		m.adders = append(m.adders, d.oneAdder(c))
		if d.multi == nil {
			d.multi = make(map[*sigCore]*multiHist)
		}
		d.multi[id] = m
	} else if !ok || m == nil || m.gen != d.gen || m.ver != c.sigVer || m.store {
		if m != nil {
			delete(d.multi, id)
		}
		return
	}
	k := 0
	for k < len(m.adders) && m.adders[k].agent != a {
		k++
	}
	if k == len(m.adders) {
		if k == maxAdders {
			delete(d.multi, id)
			return
		}
		m.adders = append(m.adders, adderHist{agent: a})
	}
	ad := &m.adders[k]
	ad.total += d.note.val
	full := d.lateRel // the copy signalCell made for a watched word
	if full.g == nil {
		full = d.fullRelease(a, rel, loc)
	}
	ad.add(multiRel{through: ad.total, clock: full})
	d.multiAdd = m
}

// oneAdder is the history of word c's one notifier (c.sigFrom), whose adds
// are every add of the run to c (no plain store of the run): its kept
// earlier releases (sigPrefix) and the word's clock, with the run's sum
// of adds through each.
func (d *Detector) oneAdder(c *cell) adderHist {
	h := c.hist
	first := adderHist{agent: c.sigFrom - 1, total: h.runAdd}
	if p := d.prefixes[c.sigAt]; p != nil && p.from == c.sigFrom && p.gen == d.gen && !p.sets {
		for i := range p.rels {
			var pl *pipeVals
			if p.rels[i].hasLoc {
				pl = &p.rels[i].loc
			}
			first.rels = append(first.rels, multiRel{through: p.rels[i].cum, clock: d.fullRelease(first.agent, &p.rels[i].clock, pl)})
		}
		first.dropped = p.dropped
	}
	var hl *pipeVals
	if h.hasLoc {
		hl = &h.relLoc
	}
	first.add(multiRel{through: h.runAdd, clock: d.fullRelease(first.agent, &c.sig, hl)})
	return first
}

// add appends release r, dropping the oldest past maxPrefix.
func (ad *adderHist) add(r multiRel) {
	if len(ad.rels) == maxPrefix {
		copy(ad.rels, ad.rels[1:])
		ad.rels = ad.rels[:maxPrefix-1]
		ad.dropped = true
	}
	ad.rels = append(ad.rels, r)
}

// meetWait orders agent a, whose satisfied wait visits word c,
// after what every set of the landed adds that meets its compare carries
// (above), and reports whether it did; false leaves the word to the whole
// join.
func (d *Detector) meetWait(a int32, c *cell) bool {
	w := &d.wait
	if !w.on || len(d.multi) == 0 || c.sigFrom != 0 || (w.cmp != "ge" && w.cmp != "gt" && w.cmp != "eq") {
		return false
	}
	m := d.multi[d.sigID(c)]
	if m == nil || m.gen != d.gen || m.ver != c.sigVer {
		return false
	}
	return d.meetHist(a, c, m)
}

// eqOneMeet is meetWait for an `==` wait on a word one agent has added to
// so far (c.sigFrom): its history is that agent's (oneAdder), and the wait
// is watched for other agents' adds landing later, which may stand in
// (eqmeet.go); false leaves the word to prefixFor. A `>=` wait there keeps
// prefixFor's earliest release and is not watched (a ring's every round
// waits so).
func (d *Detector) eqOneMeet(a int32, c *cell) bool {
	h := c.hist
	if h == nil || h.runGen != d.gen || c.hasW && c.w.gen == d.gen && c.w.agent != d.host {
		return false // no add of this run, or a plain store of it
	}
	if p := d.prefixes[c.sigAt]; p != nil && p.from == c.sigFrom && p.gen == d.gen && p.dropped {
		return false
	}
	return d.meetHist(a, c, &multiHist{gen: d.gen, ver: c.sigVer, adders: []adderHist{d.oneAdder(c)}})
}

// meetHist is meetWait on history m of word c.
func (d *Detector) meetHist(a int32, c *cell, m *multiHist) bool {
	w := &d.wait
	if !machine.CompareSignal(w.cmp, w.value, w.want) {
		return false
	}
	base := w.value
	n := int32(0)
	for k := range m.adders {
		ad := &m.adders[k]
		base -= ad.total
		for r := range ad.rels {
			n = max(n, ad.rels[r].clock.size())
		}
	}
	if m.store {
		// Counted from the store: the value it wrote is what the wait
		// read less the adds that landed since (storecount.go).
		var ok bool
		if base, ok = d.storeBase(a, c, m); !ok {
			return false
		}
	}
	if w.cmp == "eq" && w.want-base > maxEqSum {
		return false // past the sums eqReaches tracks: the whole join
	}
	d.noteRead(a, m, base)
	d.readsFrom += d.sawAdds(a, c, m)
	if machine.CompareSignal(w.cmp, base, w.want) {
		return true // the value before the run's adds met it already
	}
	if m.store && len(m.adders) == 1 {
		// One agent adds behind the store (ring_zero_at_entry's words):
		// the meet is its earliest release that meets the compare, and
		// its later adds, holding that one, lower nothing, so the wait is
		// not watched (storecount.go: an agent whose first add comes
		// after the wait is no candidate of it).
		ad := &m.adders[0]
		gone := readPrefix(ad, m.read) // its first adds the earlier wait read
		for r := range ad.rels {
			if machine.CompareSignal(w.cmp, base+max(0, ad.rels[r].through-gone), w.want) {
				d.acquire(a, &ad.rels[r].clock)
				return true
			}
		}
		return false
	}
	landed := m
	key := d.nextWaitKey(a, c)
	if late := d.opt.Late; late != nil && late.waits[key] != nil {
		m = d.withLate(m, late.waits[key])
		for k := range m.adders {
			for r := range m.adders[k].rels {
				n = max(n, m.adders[k].rels[r].clock.size())
			}
		}
	}
	var meet vclock
	got := false
	d.flush(a) // its clock holds its core's components too
	own := &d.agents[a].clock
	// Block by block: each kept release's block is read once, not once a
	// component (at 64 adders a component's 512 reads through the tables
	// were most of a wait's cost).
	bs, ns, col := d.meetBlocks[:0], d.meetNs[:0], d.meetCol[:0]
	for bi := int32(0); bi<<blkBits < n; bi++ {
		bs, ns = bs[:0], ns[:0]
		same := true
		for k := range m.adders {
			for r := range m.adders[k].rels {
				rc := &m.adders[k].rels[r].clock
				b := blockAt(rc, bi)
				same = same && (len(bs) == 0 || b == bs[0])
				bs, ns = append(bs, b), append(ns, rc.size())
			}
		}
		i0 := bi << blkBits
		if same {
			// Every release holds this block: each component's meet
			// is its value (some release is in every passing set).
			if b := bs[0]; b != nil {
				for k, v := range b.v {
					if v > 0 {
						meet.set(i0+int32(k), v)
						got = true
					}
				}
			}
			continue
		}
		for k := int32(0); k < blk; k++ {
			col = col[:0]
			top := uint32(0)
			for j, b := range bs {
				v := uint32(0)
				if b != nil && i0+k < ns[j] { // as get reads it
					v = b.v[k]
				}
				col = append(col, v)
				top = max(top, v)
			}
			have := get(*own, i0+k)
			if top <= have {
				continue // nothing here the waiter does not hold already
			}
			if v := d.meetAt(m, base, col, have, top, w.cmp, w.want); v > 0 {
				meet.set(i0+k, v)
				got = true
			}
		}
	}
	d.meetBlocks, d.meetNs, d.meetCol = bs, ns, col
	if got {
		// Watched for adds landing later (latewait.go): only what the
		// waiter did not hold already can be taken back.
		var acq vclock
		meet.each(func(i int32, v uint32) {
			if v > get(*own, i) {
				acq.set(i, v)
			}
		})
		if acq.size() > 0 {
			d.watchLate(key, a, d.sigID(c), landed, base, acq)
		}
	}
	d.acquire(a, &meet)
	return true
}

// blockAt is clock c's block bi, nil when it has none.
func blockAt(c *vclock, bi int32) *vblock {
	gi := int(bi >> grpBits)
	if gi >= len(c.g) || c.g[gi] == nil {
		return nil
	}
	return c.g[gi].b[bi&grpMask]
}

// meetAt is the meet at one component: col holds each kept release's
// value there, adder by adder in m's order, oldest first (so increasing
// within an adder), and top the largest. It is the least u such that the
// largest prefixes whose releases are all at most u satisfy the wait's
// compare; the sum of those prefixes grows with u and changes only at the
// values col holds, so the least integer u that passes is one of them (or
// 0), and a binary search over [0, top] finds it without sorting them.
// The waiter holds have there already, so a meet at or below it is
// returned as 0 (nothing to acquire) and the search starts above it.
func (d *Detector) meetAt(m *multiHist, base int64, col []uint32, have, top uint32, cmp string, want int64) uint32 {
	passes := func(u uint32) bool {
		if cmp == "eq" {
			return d.eqReaches(m, col, u, want-base)
		}
		if m.read > 0 {
			return d.afterRead(m, col, u, base, cmp, want)
		}
		sum, off := base, 0
		for k := range m.adders {
			rels := m.adders[k].rels
			c, _ := slices.BinarySearch(col[off:off+len(rels)], u+1) // releases <= u
			if c > 0 {
				sum += rels[c-1].through
			}
			off += len(rels)
		}
		return machine.CompareSignal(cmp, sum, want)
	}
	if passes(have) {
		return 0
	}
	// The least u in (have, top] that passes; top passes (every kept
	// release is at most it), and a wait that passed proves it. It is
	// one of col's values there: search them when they are few (sorted,
	// log of their count steps), else the integers (log of the span).
	cand := d.meetVals[:0]
	for _, v := range col {
		if v > have {
			cand = append(cand, v)
		}
	}
	d.meetVals = cand
	if len(cand) <= 64 {
		slices.Sort(cand)
		cand = slices.Compact(cand)
		lo, hi := 0, len(cand)-1
		for lo < hi {
			mid := lo + (hi-lo)/2
			if passes(cand[mid]) {
				hi = mid
			} else {
				lo = mid + 1
			}
		}
		return cand[lo]
	}
	lo, hi := have+1, top
	for lo < hi {
		mid := lo + (hi-lo)/2
		if passes(mid) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

// sawAdds is a wait's term of the ReadsFrom fingerprint for a word several
// agents add to: which of their adds had landed (each agent's sum), which
// decides what the wait is ordered after.
func (d *Detector) sawAdds(a int32, c *cell, m *multiHist) uint64 {
	wa := &d.agents[a]
	x := mix64(uint64(uint32(wa.rank))<<32|uint64(uint32(wa.core))<<8|uint64(wa.pipe)) ^ mix64(uint64(c.lo)|uint64(d.gen)<<48)
	for k := range m.adders {
		sa := &d.agents[m.adders[k].agent]
		x += mix64(uint64(uint32(sa.rank))<<40|uint64(uint32(sa.core))<<16|uint64(sa.pipe)<<8|2) ^ mix64(uint64(m.adders[k].total))
	}
	return mix64(x)
}
