package hazard

// Adds that land after a wait. A satisfied wait on a word several agents
// add to is ordered after the meet, over the sets of landed adds that pass
// it, of their releases (meetWait). An add that lands later but is not
// ordered after the wait could, on another timing, have landed first and
// stood in for one the wait took: a peer a round ahead, its next arrival
// carrying less than a late rank's (testdata history: the session-17 limit
// arrival_rounds_interleaved, now hazards/arrival_rounds_interleaved). The
// wait cannot know such adds when it passes: whether the peer's next add is
// ordered after the wait is decided after the wait, and often after the
// accesses the wait orders (hazards/arrival_rounds_interleaved_gated, where
// it is, brings the detector the same events up to the owner's load). So
// the verdict is deferred to another pass of the same run.
//
// Each satisfied meetWait that acquires something is watched (lateWait):
// the word's landed adds as the wait saw them, and from then on every add
// to the word whose release does not hold the wait (the waiter's own count
// is raised at the wait, so any news of it carries a count no earlier
// release of the waiter had). An adder whose add holds the wait is closed:
// its later adds come after it in program order. When every adder is
// closed, or at the run's end, the meet is taken again with the late adds
// among the candidates; if it falls below what the wait acquired at some
// component, the wait's late adds are kept (Detector.Late), and the caller
// lints the same run again with them (Options.Late, Settle): that pass's
// wait takes them as candidates beside the landed ones. A release from the
// pass before holds at least what the same add's release holds in this
// pass (clocks only fall from pass to pass: waits acquire less), so a pass
// orders no less than the exact answer, and passes repeat until no wait's
// meet falls (at most maxLatePasses; past that the last pass's verdict
// stands, ordering more: a missed race, never a false one).
//
// Only waits on words several agents add to pay: the rest of the run, and
// every run without such a wait, is one pass as before.

// maxLatePasses bounds the lints of one verdict (Settle).
const maxLatePasses = 4

// maxLateAdds bounds the late adds one watched wait keeps of each adder:
// past it the later ones are not candidates (ordering more).
const maxLateAdds = maxPrefix

// waitKey names a satisfied wait on a word several agents add to in every
// pass of one run: its waiter, how many signal waits the waiter passed
// before it, and the word: the wait's access and the word's place in it
// (a wait over several words). It used to count only the waits on such
// words, but whether a word keeps such a history can follow the clocks,
// which fall from pass to pass (a word behind a racing store keeps one
// when an add raced the store, storecount.go), and one wait more or less
// named every later wait of the agent's late adds another's.
type waitKey struct {
	agent int32
	k     uint32
	acc   uint32
	word  uint32
}

// LateAdds is what the next pass of a lint gives its waits (Options.Late):
// by wait, the adds that landed after it, not ordered after it, with their
// releases from the pass that found them.
type LateAdds struct {
	waits map[waitKey][]lateAdd
}

// Waits is how many waits the next pass gives late adds to.
func (l *LateAdds) Waits() int {
	if l == nil {
		return 0
	}
	return len(l.waits)
}

// lateAdd is one add: its agent, release (through: the agent's sum of
// adds to the word through it, as the pass before counted them) and value.
type lateAdd struct {
	agent int32
	rel   multiRel
	val   int64
}

// lateWait is one watched wait (above).
type lateWait struct {
	key       waitKey
	a         int32  // the waiter
	n         uint32 // its own count at the wait
	gen       uint32
	cmp       string
	want      int64
	base      int64 // the word's value before the run's adds
	read      int64 // multiHist.read
	adders    []adderHist
	landed    []int  // len(adders[k].rels) at the wait
	closed    []bool // adder k's adds hold the wait now
	open      int
	acq       vclock // what the wait acquired
	finalized bool
}

// Settle runs lint, which lints one run with a fresh detector made from
// opt, and again with the late adds its detector found (Detector.Late)
// while there are any, up to maxLatePasses times; it returns the last
// pass's detector and error. A lint with no wait on a word several agents
// add to runs once.
func Settle(opt Options, lint func(Options) (*Detector, error)) (*Detector, error) {
	for pass := 1; ; pass++ {
		d, err := lint(opt)
		if d == nil || pass == maxLatePasses {
			return d, err
		}
		late, force := d.Late(), d.Forced()
		if late == nil && force == nil {
			return d, err
		}
		if late == nil && len(d.lateOut) > 0 {
			// Another pass for forced tests: its waits keep the late
			// adds this one found, though no meet fell with them.
			late = &LateAdds{waits: d.lateOut}
		}
		opt.Late = late
		if force != nil {
			opt.Force = force // with the earlier passes' (Forced)
		}
	}
}

// Late returns the late adds a next pass of this run must give its waits,
// nil when no wait's meet falls with them (the verdict is final). Call it
// once the run has ended.
func (d *Detector) Late() *LateAdds {
	d.drain()
	for _, ps := range d.lateWatch {
		for _, p := range ps {
			d.finishLate(p)
		}
	}
	d.lateWatch = nil
	if !d.lateFalls {
		return nil
	}
	return &LateAdds{waits: d.lateOut}
}

// countWait counts a signal wait of agent a (waitKey).
func (d *Detector) countWait(a int32) {
	if int(a) >= len(d.lateCount) {
		d.lateCount = append(d.lateCount, make([]uint32, int(a)+1-len(d.lateCount))...)
	}
	d.lateCount[a]++
}

// nextWaitKey names the satisfied wait agent a is passing on word c, which
// several agents add to, and raises a's own count: a release of a that
// holds the wait then holds a count no release before it had.
func (d *Detector) nextWaitKey(a int32, c *cell) waitKey {
	k := waitKey{agent: a, acc: d.waitAcc}
	if int(a) < len(d.lateCount) {
		k.k = d.lateCount[a]
	}
	if w := &d.wait; w.words != nil && w.size > 0 {
		k.word = uint32((c.lo - w.lo) / w.size)
	}
	d.agents[a].n++
	d.raiseOwn(a)
	return k
}

// withLate returns m with the late adds of the pass before appended to
// its adders (a new history; m is the word's and stays as it is). A late
// add is placed by its agent's own count in its release, not by the sum
// the pass before counted: an agent's adds behind a racing store are
// counted from its first one not ordered before the store (storecount.go),
// which a pass whose waits acquire less may find earlier.
func (d *Detector) withLate(m *multiHist, late []lateAdd) *multiHist {
	x := &multiHist{gen: m.gen, ver: m.ver, store: m.store, run0: m.run0, read: m.read, adders: make([]adderHist, len(m.adders))}
	for k := range m.adders {
		x.adders[k] = m.adders[k]
		x.adders[k].rels = append([]multiRel(nil), m.adders[k].rels...)
	}
	for _, l := range late {
		k := 0
		for k < len(x.adders) && x.adders[k].agent != l.agent {
			k++
		}
		if k == len(x.adders) {
			x.adders = append(x.adders, adderHist{agent: l.agent})
		}
		ad := &x.adders[k]
		// An adder with no add in this pass yet may be an agent this pass
		// has not met (no position yet): its late adds, listed in its own
		// order, are all new here, the second as much as the first
		// (a2a_grid_one_word under a skew indexed past d.apos here).
		if n := len(ad.rels); n == 0 || int(l.agent) >= len(d.apos) || get(l.rel.clock, d.pos(l.agent)) > get(ad.rels[n-1].clock, d.pos(l.agent)) {
			ad.total += l.val
			ad.rels = append(ad.rels, multiRel{through: ad.total, clock: l.rel.clock})
		}
	}
	return x
}

// watchLate starts watching the wait key of agent a on word id, which saw
// the landed adds of m and acquired acq (above).
func (d *Detector) watchLate(key waitKey, a int32, id *sigCore, m *multiHist, base int64, acq vclock) {
	w := &d.wait
	p := &lateWait{key: key, a: a, n: d.ownComp(a), gen: d.gen, cmp: w.cmp, want: w.want, base: base, read: m.read, acq: acq,
		adders: make([]adderHist, len(m.adders)), landed: make([]int, len(m.adders)), closed: make([]bool, len(m.adders))}
	for k := range m.adders {
		p.adders[k] = m.adders[k]
		p.adders[k].rels = append([]multiRel(nil), m.adders[k].rels...)
		p.landed[k] = len(m.adders[k].rels)
	}
	p.open = len(p.adders)
	if d.lateWatch == nil {
		d.lateWatch = make(map[*sigCore][]*lateWait)
	}
	d.lateWatch[id] = append(d.lateWatch[id], p)
}

// lateAddTo tells the waits watched on word id of agent a's add (its full
// release rel, a's core components written in), whatever the word's history
// (a plain store since the wait does not stop it: the add could still have
// landed before the wait). An add whose value is not at hand (a notify of
// several words) is left out (ordering more). A wait every adder of which
// holds it, or of an earlier run, is finished.
func (d *Detector) lateAddTo(id *sigCore, a int32, rel *vclock) {
	ps := d.lateWatch[id]
	if ps == nil || !d.note.on || d.note.val <= 0 {
		return
	}
	kept := ps[:0]
	for _, p := range ps {
		if p.gen == d.gen {
			if d.lateAdd(p, a, rel, d.note.val) {
				kept = append(kept, p)
				continue
			}
		}
		d.finishLate(p)
	}
	clear(ps[len(kept):])
	if len(kept) == 0 {
		delete(d.lateWatch, id)
		return
	}
	d.lateWatch[id] = kept
}

// lateAdd records add rel of agent a, of value val, in wait p and reports
// whether p is still open.
func (d *Detector) lateAdd(p *lateWait, a int32, rel *vclock, val int64) bool {
	k := 0
	for k < len(p.adders) && p.adders[k].agent != a {
		k++
	}
	if k == len(p.adders) {
		p.adders = append(p.adders, adderHist{agent: a})
		p.landed = append(p.landed, 0)
		p.closed = append(p.closed, false)
		p.open++
	}
	ad := &p.adders[k]
	if p.closed[k] {
		return p.open > 0
	}
	if get(*rel, d.pos(p.a)) >= p.n {
		p.closed[k] = true // a's adds from here on come after the wait
		p.open--
		return p.open > 0
	}
	ad.total += val
	if len(ad.rels)-p.landed[k] < maxLateAdds {
		ad.rels = append(ad.rels, multiRel{through: ad.total, clock: *rel})
	}
	return true
}

// finishLate takes wait p's meet again with its late adds among the
// candidates, notes whether it falls below what the wait acquired, and
// keeps them for the next pass. Every wait's are kept, not only those of
// the waits whose meet falls: a wait given late adds in this pass and not
// given them in the next would acquire more there than here, and the
// passes would not settle (clocks must only fall from pass to pass).
func (d *Detector) finishLate(p *lateWait) {
	if p.finalized {
		return
	}
	p.finalized = true
	late := false
	for k := range p.adders {
		if len(p.adders[k].rels) > p.landed[k] {
			late = true
		}
	}
	if !late {
		return
	}
	m := &multiHist{adders: p.adders, read: p.read}
	falls := false
	var col []uint32
	p.acq.each(func(i int32, v uint32) {
		if falls || !p.lateBelow(i, v) {
			return
		}
		col = col[:0]
		top := uint32(0)
		for k := range p.adders {
			for r := range p.adders[k].rels {
				x := get(p.adders[k].rels[r].clock, i)
				col = append(col, x)
				top = max(top, x)
			}
		}
		falls = d.meetAt(m, p.base, col, 0, top, p.cmp, p.want) < v
	})
	d.lateFalls = d.lateFalls || falls
	var out []lateAdd
	for k := range p.adders {
		rels := p.adders[k].rels
		for r := p.landed[k]; r < len(rels); r++ {
			val := rels[r].through
			if r > 0 {
				val -= rels[r-1].through
			}
			out = append(out, lateAdd{agent: p.adders[k].agent, rel: rels[r], val: val})
		}
	}
	if d.lateOut == nil {
		d.lateOut = make(map[waitKey][]lateAdd)
	}
	d.lateOut[p.key] = out
}

// lateBelow reports whether some late add of wait p holds less than v at
// component i. If none does, the meet there stays at least v: the
// prefixes whose releases are all below v are those the wait saw, which
// did not pass it below v. (An adder's late adds come in its program
// order, so its first holds the least.)
func (p *lateWait) lateBelow(i int32, v uint32) bool {
	for k := range p.adders {
		if rels := p.adders[k].rels; len(rels) > p.landed[k] && get(rels[p.landed[k]].clock, i) < v {
			return true
		}
	}
	return false
}
