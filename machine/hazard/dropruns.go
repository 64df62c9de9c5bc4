package hazard

import (
	"slices"
	"sort"
)

// Overwritten GM accesses past the bound (dropRun).
//
// A cell keeps up to maxKept overwritten accesses whole (olds). Past the
// bound the oldest leave, and an access of another core that lands after
// more ordered overwrites than that, meant between two of the oldest,
// used to lose its race with them: hazards/gm_store_late_past_olds at a
// drawn ROUNDS=12 lost WAR `ld, x` (sweep seed 27), and a kept-limit note
// said only that it may have. The ones that leave are summarised instead,
// in runs: the instances of one agent's op replaced by the instances of
// one op of another agent (or its own), each instance's iteration vector,
// issue serial and epoch, and those of the write that replaced it, a
// fixed step on from the last (a loop's rounds). A run is two records and
// two steps however many rounds it covers, so memory stays bounded by the
// ops and agents that reach a range, not by the trip count.
//
// An access r meets a run the way it would have met each instance still
// kept, but only the instances that can change the report: epochs grow
// along the run, so r is ordered after a prefix of it (hb) and races the
// rest; the program means r after a prefix of those (intendedBefore, by
// iteration then serial: monotone along a run whose step goes forward), so
// each race's kind is the same for every instance on either side of that
// boundary, and a finding names the latest instance of its pair (instLess,
// laterPair): the last instance meant before r, the first meant after it
// and the run's last. Those three, found by two binary searches, give the
// findings, counts and named instances that every instance would, at any
// chain length.
//
// A cell holds up to maxKept runs (maxRuns). An access that does not extend one (a
// step that changes, an op another agent's interleaves with) starts a
// new run; past the runs' bound it is remembered as the latest dropped of
// its agent and kind only (oldsMore.evicted), and an access not ordered
// after it raises the kept-limit note, as every dropped access did before.

// dropRun is a run of overwritten GM accesses a cell dropped past its
// bound: instance j of it is w and the write by that replaced it, each
// moved on j steps (dw, dby).
type dropRun struct {
	w, by   rec
	dw, dby recStep
	n       int32
}

// recStep is how far one instance of a run is from the one before: its
// iteration vector, issue serial and epoch.
type recStep struct {
	iter   [maxIter]int32
	serial int64
	epoch  uint32
}

// stepOf returns b less a.
func stepOf(a, b *rec) recStep {
	s := recStep{serial: b.serial - a.serial, epoch: b.epoch - a.epoch}
	for i := range s.iter {
		s.iter[i] = b.iter[i] - a.iter[i]
	}
	return s
}

// moved returns r moved on j steps s.
func moved(r *rec, s *recStep, j int32) rec {
	out := *r
	for i := range out.iter {
		out.iter[i] += int32(j) * s.iter[i]
	}
	out.serial += int64(j) * s.serial
	out.epoch += uint32(j) * s.epoch
	return out
}

// inst is instance j of run x: the access and the write that replaced it.
func (x *dropRun) inst(j int32) (w, by rec) {
	return moved(&x.w, &x.dw, j), moved(&x.by, &x.dby, j)
}

// sameSeries reports whether a and b are instances of one op of one agent
// in one run generation, in loops of one depth: the fields a run keeps of
// its first instance. (Gap, lag and raced follow the run's timing; no
// meeting of a dropped access reads them for another agent's access.)
func sameSeries(a, b *rec) bool {
	return a.agent == b.agent && a.gen == b.gen && a.op == b.op && a.step == b.step && a.niter == b.niter &&
		a.write == b.write && a.atomic == b.atomic
}

// forward reports whether step s keeps a run's intended order monotone:
// its epoch grows (a later instance of the agent), its serial does not
// fall and its iteration vector does not go back (iterForward).
func forward(s *recStep) bool {
	return s.epoch != 0 && s.epoch <= 1<<31 && s.serial >= 0 && iterForward(s)
}

// iterForward reports whether step s's iteration vector does not go back:
// the first level that moves goes up.
func iterForward(s *recStep) bool {
	for _, v := range s.iter {
		if v != 0 {
			return v > 0
		}
	}
	return true
}

// extends reports whether w, replaced by by, is the next instance of run x.
func (x *dropRun) extends(w, by *rec) bool {
	if !sameSeries(&x.w, w) || !sameSeries(&x.by, by) {
		return false
	}
	if x.n == 1 {
		dw, dby := stepOf(&x.w, w), stepOf(&x.by, by)
		// The replacing writes may repeat (one write over two reads of
		// a run), never go back: whether r is meant before one is
		// monotone along the run too.
		if !forward(&dw) || dby.epoch > 1<<31 || dby.serial < 0 || !iterForward(&dby) {
			return false
		}
		x.dw, x.dby = dw, dby
		x.n++
		return true
	}
	nw, nby := x.inst(x.n)
	if nw.epoch != w.epoch || nw.serial != w.serial || nw.iter != w.iter ||
		nby.epoch != by.epoch || nby.serial != by.serial || nby.iter != by.iter {
		return false
	}
	x.n++
	return true
}

// dropOld drops entry o of cell c's overwritten accesses: into a run
// (dropRun), or past the runs' bound as an evicted access. It reports
// whether it went into a run: a write in a run is still one the cell
// keeps for the uninit-read check (cellLists.kept, runsAfter).
func (d *Detector) dropOld(c *cell, o gmOld) bool {
	var w, by rec
	w, by = *d.oldRec(c, o.w, &w), *d.oldRec(c, o.by, &by)
	m := c.lists.olds.moreRoom()
	for x := len(m.runs) - 1; x >= 0; x-- {
		if m.runs[x].extends(&w, &by) {
			return true
		}
	}
	if len(m.runs) < d.maxRuns() {
		m.runs = append(m.runs, dropRun{w: w, by: by, n: 1})
		return true
	}
	d.evict(c, o.w)
	return false
}

// runsAfter reports whether read r is meant before every write in cell
// c's runs and ordered after none of them (beforeEveryKept): each run's
// first instance decides for the run. Epochs grow along a run, so r
// ordered after a later instance is ordered after the first; the run's
// step goes forward, so r meant before the first is meant before each.
// A write that left into a run used to clear the cell's kept flag: a
// read meant before every write of a range that more than --max-kept
// ordered overwrites reached first read poison all the same, and its
// uninit-read came and went with its lateness (docs/hazards.md,
// "uninit-read").
func (d *Detector) runsAfter(c *cell, r *rec) bool {
	for _, x := range c.runs() {
		if w := &x.w; w.write && (w.gen != r.gen || d.filled(w, r) || !d.intendedBefore(r, w)) {
			return false
		}
	}
	return true
}

// maxRuns is the bound on a cell's runs of dropped accesses: maxKept, and
// at least oldsInline, so that a bound of one still holds the two runs of
// an in-place update (its loads and its stores).
func (d *Detector) maxRuns() int { return max(d.maxKept(), oldsInline) }

// runSpan returns the instances of run x that access r is not ordered
// after, [u, n), and the first of them r is not meant after, a (n when
// none): u, a and n as the run counts them.
func (d *Detector) runSpan(x *dropRun, r *rec) (u, a int32) {
	n := x.n
	u = int32(sort.Search(int(n), func(j int) bool {
		w, _ := x.inst(int32(j))
		return !d.hbOrSame(&w, r)
	}))
	a = u + int32(sort.Search(int(n-u), func(j int) bool {
		w, _ := x.inst(u + int32(j))
		return !d.intendedBefore(&w, r)
	}))
	return u, a
}

// runInsts calls f with the instances of run x that decide access r's
// races with the run (the package comment above): the last r is meant
// after, the first it is meant before, and the run's last, each once,
// among those r is not ordered after. It reports whether there were any.
func (d *Detector) runInsts(x *dropRun, r *rec, f func(w, by *rec)) bool {
	if last, _ := x.inst(x.n - 1); d.hbOrSame(&last, r) {
		return false
	}
	u, a := d.runSpan(x, r)
	js := [3]int32{a - 1, a, x.n - 1}
	for i, j := range js {
		if j < u || j >= x.n || i > 0 && j == js[0] || i == 2 && j == js[1] {
			continue
		}
		w, by := x.inst(j)
		f(&w, &by)
	}
	return true
}

// sameDropped reports whether cells a and b keep the same runs and
// evicted accesses (sameOlds).
func sameDropped(a, b *cell) bool {
	ma, mb := a.oldsMore(), b.oldsMore()
	if ma == nil || mb == nil {
		return (ma == nil || len(ma.runs)+len(ma.evicted) == 0) && (mb == nil || len(mb.runs)+len(mb.evicted) == 0)
	}
	return slices.Equal(ma.runs, mb.runs) && slices.Equal(ma.evicted, mb.evicted)
}

// oldsMore returns c's rare part of its overwritten accesses, nil if none.
func (c *cell) oldsMore() *oldsMore {
	if c.lists == nil || c.lists.olds == nil {
		return nil
	}
	return c.lists.olds.more
}

// runs returns cell c's runs of dropped accesses.
func (c *cell) runs() []dropRun {
	if c.lists == nil || c.lists.olds == nil || c.lists.olds.more == nil {
		return nil
	}
	return c.lists.olds.more.runs
}

// keepRunsOf drops the runs of c not of run generation gen (meetOlds).
func (c *cell) keepRunsOf(gen uint32) {
	rs, n := c.runs(), 0
	for x := range rs {
		if rs[x].w.gen == gen {
			rs[n] = rs[x]
			n++
		}
	}
	if n < len(rs) {
		c.lists.olds.more.runs = rs[:n]
	}
}
