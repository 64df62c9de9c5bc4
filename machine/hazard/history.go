package hazard

import (
	"math"
	"math/bits"
	"slices"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
)

// How much history of one op site a cell keeps (putSite).
//
// A cell keeps an agent's earlier accesses of a site beside its latest
// while another agent's access may be meant to come between them
// (keepPrior): such an access races the earlier one the other way round,
// and landing late it must still meet it. Which accesses can still land is
// known for local memory: only the core's own pipes reach it, and each of
// their ops carries its issue number. An earlier instance i of a site, with
// j the next instance of that site, is needed only by an access issued
// between the two: any other access races i exactly when it races j (one
// agent's epochs only grow), in the same direction (intended order is
// issue order on one core), under the same pair of sites, and a finding
// names the later instance of a pair. So once every op issued before j has
// reached the detector, nothing that arrives later needs i, however slow
// its pipe was; until then i stays. GM is reached from other cores, whose
// intended order is by iteration, and keeps the fixed bound maxPrior.

// maxPriorLocal bounds the earlier instances of one site a local-memory
// cell keeps while ops issued between them have not landed (issueSeen): a
// pipe can lag its scalar by its queue (up to 16 ops) and another pipe can
// run a site that many times meanwhile (corpus qwen3_decode_incore_2: a
// cube slowed to a 20000-cycle head lands its mads after 15 MTE1 moves of
// each site; the fixed bound of 8 lost the RAW with the move before them,
// and the finding named an earlier iteration). Past the bound the oldest
// goes, as before.
const maxPriorLocal = 32

// seenWindow is how many issue numbers above a core's watermark issueSeen
// tracks: more than every queue of a core holds, so only a number that
// never reaches the detector (a composite's own, say) is given up, once
// the window has passed it.
const seenWindow = 512

// issueSeen records which of a core's issue numbers (machine.Event.Issue)
// have reached the detector: every number up to low, and those marked in
// bits, a ring over the window above low.
type issueSeen struct {
	low  int64
	gen  uint32
	bits [seenWindow / 64]uint64
}

// The ring: number k is bit k%64 of word k/64 mod the window's words
// (unsigned: numbers are positive, and signed division costs more).
func (s *issueSeen) set(k int64)   { s.bits[uint64(k)/64%(seenWindow/64)] |= 1 << (uint64(k) % 64) }
func (s *issueSeen) unset(k int64) { s.bits[uint64(k)/64%(seenWindow/64)] &^= 1 << (uint64(k) % 64) }

// mark records that op number k of the core reached the detector.
func (s *issueSeen) mark(k int64) {
	switch {
	case k == s.low+1:
		s.low = k // in order
	case k <= s.low:
		return
	case k-s.low > 2*seenWindow:
		// Numbering that starts far above (a block that runs on a core
		// after another): what lies below is not this core's.
		s.low, s.bits = k, [seenWindow / 64]uint64{}
		return
	default:
		for k-s.low > seenWindow {
			// A number that never came: give it up.
			s.low++
			s.unset(s.low)
		}
		s.set(k)
	}
	s.advance()
}

// quick is mark for the two common cases, and reports whether k was one:
// k right above the watermark with the next number not marked yet (the
// watermark moves to k), or k above that within the window (its bit is
// set). mark sets the same bit there and then calls advance for nothing:
// the number right above the watermark is never marked between calls
// (advance, and this function's first case, move past every marked one),
// so only k itself could move it. Small enough to inline where every pipe
// event passes (takeIssueOf): three flag events in four, and one exec in
// three, took the call of sawIssue and mark, about 70 instructions, on
// the 8-rank allgather_gemm. TestIssueSeenQuick holds it to mark.
func (s *issueSeen) quick(k int64) bool {
	if k == s.low+1 {
		n := uint64(k) + 1
		if s.bits[n/64%(seenWindow/64)]&(1<<(n%64)) != 0 {
			return false
		}
		s.low = k
		return true
	}
	if uint64(k-s.low-2) >= seenWindow-1 { // not 2 <= k-low <= seenWindow
		return false
	}
	s.set(k)
	return true
}

// advance moves the watermark over the numbers marked right above it, a
// word of the ring at a time.
func (s *issueSeen) advance() {
	for {
		n := uint64(s.low) + 1
		w := &s.bits[n/64%(seenWindow/64)]
		off := n % 64
		run := bits.TrailingZeros64(^(*w >> off)) // marked numbers from n on in this word
		if run == 0 {
			return
		}
		*w &^= (uint64(1)<<run - 1) << off
		s.low += int64(run)
		if off+uint64(run) < 64 {
			return
		}
	}
}

// sawIssue records that an op with issue number k of core c reached the
// detector (takeIssueOf: every pipe event of a numbered op, which tries
// quick first).
func (d *Detector) sawIssue(c int32, k int64) {
	if uint32(c) < uint32(len(d.seen)) {
		if s := &d.seen[c]; s.gen == d.gen {
			s.mark(k)
			return
		}
	}
	d.sawIssueNew(c, k)
}

// sawIssueNew is sawIssue for a core not seen yet in this run generation.
func (d *Detector) sawIssueNew(c int32, k int64) {
	if c < 0 || k <= 0 {
		return
	}
	if int(c) >= len(d.seen) {
		d.seen = append(d.seen, make([]issueSeen, int(c)+1-len(d.seen))...)
	}
	s := &d.seen[c]
	*s = issueSeen{gen: d.gen}
	s.mark(k)
}

// landed is the watermark of the core whose local memory access r of acc
// touches: every op of the core numbered up to it has reached the detector.
// -1 for GM, or when nothing is known.
func (d *Detector) landed(r *rec, acc *machine.Access) int64 {
	if acc.Space == asm.GM {
		return -1
	}
	c := d.agents[r.agent].coreIdx
	if c < 0 || int(c) >= len(d.seen) || d.seen[c].gen != d.gen {
		return -1
	}
	return d.seen[c].low
}

// issueOf is the issue number up to which every op was issued before the
// access of serial s (rec.serial: twice a queued op's number, twice the
// scalar's count plus one for the scalar's own), 0 when unknown.
func issueOf(s int64) int64 {
	return (s + 1) / 2
}

// prunePrior drops from list the earlier instances of r's site that no
// access still to land can need (see above): those whose next instance
// (the next in list, or r) was issued when every op numbered up to low had
// reached the detector. n is how many instances of the site list holds;
// the new count is returned.
func (d *Detector) prunePrior(c *cell, list []rec, r *rec, low int64, n int) ([]rec, int) {
	var drop uint64 // by index; a list past 64 entries keeps its tail
	prev := -1
	for i := range list {
		if !priorOf(&list[i], r) {
			continue
		}
		if prev >= 0 && prev < 64 && prunable(&list[prev], &list[i], low) {
			drop |= 1 << prev
		}
		prev = i
	}
	if prev >= 0 && prev < 64 && prunable(&list[prev], r, low) {
		drop |= 1 << prev
	}
	if drop == 0 {
		return list, n
	}
	out := list[:0]
	for i := range list {
		if i < 64 && drop&(1<<i) != 0 {
			d.leaves(c, &list[i])
			n--
			continue
		}
		out = append(out, list[i])
	}
	return out, n
}

// prunable reports whether instance e of a site, whose next instance is
// next, can go: every op issued before next has landed (low), so no access
// issued between the two can still arrive.
func prunable(e, next *rec, low int64) bool {
	return e.gen == next.gen && e.step == 0 && next.step == 0 && e.serial > 0 && next.serial > 0 &&
		issueOf(next.serial)-1 <= low
}

// priorOf reports whether a is an earlier instance of access r's site
// that putSite would keep beside it: the same agent, op and direction.
func priorOf(a, r *rec) bool {
	return sameReader(a, r) && a.write == r.write && !a.atomic && !a.shadowed()
}

// Writes overwritten in order (shadowed).
//
// A write w replaced by a later write r of its core ordered after it (a
// pipe_barrier V, an op's internal one, or a flag between them) leaves the
// cell: any access that races w races r too. But it races r under another
// pair of sites, and an access that landed between the two met w; landing
// after r it met r alone. So w stays, shadowed, while an op issued before r
// has not landed (issueSeen), and what meets it is told apart by when it
// was issued:
//
//   - An access issued before r counts its race with w (offerShadowed), as
//     it does landing before r, where the race stays when r arrives
//     (keepsRace): ordering it before r would not order it before w, so the
//     race is its own. Before this, such a race moved to r when the access
//     landed before r and was still in the cell, and was never met when it
//     landed after r, while an instance that had left the cell kept its
//     count: the finding came and went with the latency
//     (hazards/square_then_rescale, the shape of corpus
//     qwen3_decode_incore_11).
//   - An access issued after r offers the pair for the finding's name only:
//     landing before r, its race moved to r (a fix of that one orders it
//     after w too), and the name must not follow the order it landed in
//     (corpus qwen3_decode_incore_11 named iteration 57 of the load by
//     default and 63 under dma latency 0).
//
// Nothing moves to or from a shadowed write (raceRead, raceWrite and
// racesKept pass it by). Also where w's value was handed on (another
// agent's read kept in the cell is ordered after w, as in a kernel with its
// flags): whether that read had reached the detector when r did followed
// the timing, and a store racing an in-place op whose value the next store
// reads came and went with it (hazards/store_before_scratch). Only where
// w's agent's same-pipe races are reported (rec.lag is free then).

// maxShadowed bounds the shadowed writes a cell keeps, the oldest dropped
// first. A shadowed write leaves as soon as every op issued before its
// overwrite has landed (needShadowed), so the list holds the overwrites
// issued while some op is still to land, and those are as many as the
// scalar issues in the meantime: in qwen3_decode_incore_11 the vector unit
// writes the tile a dozen times per trip of the second loop while the last
// loads of the first are in flight. With 4 the squaring they race was gone
// again when they landed; with 16, a load queue of 32 or 64 entries (the
// wide sweep) let the WAW name the load of trip 49 or 53 instead of 63, and
// hazards/square_then_rescale at N = M = 64 named trip 58 by default. The
// bound only guards memory: 8-rank allgather_gemm lint at M=1024 took
// 2 227.75 M instructions with 16, 2 228.51 M with this.
const maxShadowed = 4096

// shadowed reports whether write record r is kept shadowed: raced marks
// reads that raced a write, and a write kept past an ordered overwrite.
// lag then holds how many issue numbers later that overwrite was issued
// (overwrite).
func (r *rec) shadowed() bool { return r.write && r.raced }

// overwrite is the issue number of the write that shadowed write w.
func (w *rec) overwrite() int64 { return issueOf(w.serial) + int64(w.lag) }

// shadows reports whether plain write w of cell c (its last, or one kept
// beside it), which write r is ordered after, stays shadowed.
// (handoff spells it out, so that each half inlines where shadows would
// not.)
func (d *Detector) shadows(w, r *rec, acc *machine.Access) bool {
	return d.shadowPair(w, r) && d.unlanded(r, acc)
}

// unlanded reports whether an op issued before r is still to land (landed).
func (d *Detector) unlanded(r *rec, acc *machine.Access) bool {
	low := d.landed(r, acc)
	return low >= 0 && low < issueOf(r.serial)-1
}

// shadowPair reports whether write r, ordered after write w, can shadow
// it: both plain, numbered, of one core and run generation, r issued
// after w, no composite's step, and w's agent's same-pipe races reported.
func (d *Detector) shadowPair(w, r *rec) bool {
	return !r.atomic && !w.atomic && w.gen == r.gen && w.step == 0 && r.step == 0 &&
		w.serial > 0 && r.serial > w.serial && !d.selfOff(w, w) &&
		(w.agent == r.agent || d.agents[w.agent].coreIdx == d.agents[r.agent].coreIdx)
}

// keepsRace reports whether access a's race with write old, which write r
// of cell c is ordered after, stays when r races a too, instead of moving
// to r (moveRace): a was issued before r, and old stays shadowed past r for
// as long as an access issued before r is still to land (shadows, whose
// watermark test a passes in every order it can land in), so that landing
// after r, a counts the race there too.
//
// In GM the same holds by intended order (olds): a meant before r keeps its
// race with old, which stays in the cell past r (keepOld) for an access
// meant between them that lands later.
func (d *Detector) keepsRace(old, a, r *rec, acc *machine.Access) bool {
	if acc.Space == asm.GM {
		return old.gen == r.gen && !r.atomic && !sameInstance(old, r) && d.intendedBefore(a, r)
	}
	return issueOf(a.serial) < issueOf(r.serial) && d.shadowPair(old, r) && d.landed(r, acc) >= 0
}

// shadowOf is write w, overwritten in order by r, kept shadowed.
func shadowOf(w, r *rec) rec {
	sw := *w
	sw.raced = true
	sw.lag = uint16(min(issueOf(r.serial)-issueOf(w.serial), math.MaxUint16))
	return sw
}

// trimShadowed drops the oldest shadowed writes of list past maxShadowed.
func trimShadowed(list []rec) []rec {
	n := 0
	for i := range list {
		if list[i].shadowed() {
			n++
		}
	}
	for i := 0; n > maxShadowed; i++ {
		if list[i].shadowed() {
			list = slices.Delete(list, i, i+1)
			i--
			n--
		}
	}
	return list
}

// needShadowed reports whether shadowed write w must stay: an op issued
// before the write that overwrote it has not landed (low, the core's
// watermark; -1 unknown keeps nothing). Every access that meets w asks,
// reads too (accessCell), so w leaves a read-mostly cell once it is done.
func needShadowed(w *rec, low int64) bool {
	return low >= 0 && low < w.overwrite()-1
}

// offerShadowed is access r meeting shadowed write w: an access issued
// before w's overwrite counts the race, one issued after it offers the pair
// for the finding's name, as it met w landing before the overwrite, where
// the count moved to the overwrite (raceWrite).
func (d *Detector) offerShadowed(w, r *rec, acc *machine.Access, lo, hi int64) {
	if d.hbOrSame(w, r) {
		return
	}
	sw := *w
	sw.raced, sw.lag = false, 0
	d.raceNamed(&sw, r, issueOf(r.serial) >= w.overwrite(), acc, lo, hi)
}

// Reads overwritten in order (sreads).
//
// A read rd of another agent that a write r of its core, ordered after it,
// takes out of local memory races every write that is ordered with neither
// (a vector squaring of the tile, issued before a load that waits for the
// store rd). Landing before r, that write met rd in the cell and raced it
// (WAR); landing after r, it met r alone, and the WAR came and went with
// its latency (hazards/rmsnorm_overlapping_slots: a slow squaring lost
// WAR `st, sq` and `sc, sq`). So rd stays, shadowed, as a write does
// (above), while an op issued before r is still to land, and what meets it
// is told apart by when it was issued:
//
//   - a write issued before r counts its race with rd (meetSReads), as it
//     does landing before r, where the race stays when r arrives;
//   - a write issued after r passes rd by: ordering it after r, the fix of
//     its race with r, orders it after rd too, so landing before r its
//     race with rd moves to r when r arrives (moveReadRaces), and the
//     finding names r whichever order the three ran in.
//
// GM keeps such reads in olds, by intended order (keepOld, meetOlds).

// readShadows reports whether read rd, which write r of cell c takes out
// of local memory (r is ordered after it), stays shadowed: both of one
// core and run generation, numbered, r issued after rd, no composite's
// step, and an op issued before r still to land.
func (d *Detector) readShadows(rd, r *rec, acc *machine.Access) bool {
	return sameCoreShadows(rd, r) && d.agents[rd.agent].coreIdx == d.agents[r.agent].coreIdx && d.unlanded(r, acc)
}

// sameCoreShadows is readShadows for a read rd of r's core, an op issued
// before r still to land.
func sameCoreShadows(rd, r *rec) bool {
	return !r.atomic && !rd.write && rd.gen == r.gen && rd.step == 0 && r.step == 0 &&
		rd.serial > 0 && r.serial > rd.serial
}

// shadowReads keeps, shadowed in cell c, the reads write r takes out of it
// (d.dropped, and read0 when with0) that readShadows keeps.
func (d *Detector) shadowReads(c *cell, r *rec, with0 bool, acc *machine.Access) {
	if with0 && d.readShadows(&c.read0, r, acc) {
		c.addSRead(shadowOf(&c.read0, r))
	}
	for x := range d.dropped {
		if rd := &d.dropped[x]; d.readShadows(rd, r, acc) {
			c.addSRead(shadowOf(rd, r))
		}
	}
}

// addSRead adds shadowed read sr to cell c's, the oldest dropped past
// maxShadowed.
func (c *cell) addSRead(sr rec) {
	if c.lists == nil {
		c.lists = new(cellLists)
	}
	l := c.lists.sreads
	if len(l) >= maxShadowed {
		l = l[:copy(l, l[1:])]
	}
	c.lists.sreads = append(l, sr)
}

// meetSReads checks plain or atomic write r of local cell c against the
// reads c keeps past their ordered overwrite: those the core's watermark
// has passed leave; a race with one counts when r was issued before its
// overwrite (above), met before the watermark drops it, as offerShadowed
// is. It returns warred, set when a read r races is meant
// to come before r (accessCell).
func (d *Detector) meetSReads(c *cell, r *rec, warred bool, acc *machine.Access, lo, hi int64) bool {
	l, n := c.sreads(), 0
	low := d.landed(r, acc)
	for x := range l {
		sr := &l[x]
		if issueOf(r.serial) < sr.overwrite() && !d.ordered(sr, r) {
			rd := *sr
			rd.raced, rd.lag = false, 0
			d.race(&rd, r, acc, lo, hi)
			warred = warred || d.intendedBefore(&rd, r)
		}
		if !needShadowed(sr, low) {
			continue // (r, the last to land, may be what it waited for)
		}
		if n != x {
			l[n] = *sr
		}
		n++
	}
	if n < len(l) {
		c.setSReads(l[:n])
	}
	return warred
}

// moveReadRaces is, for write r arriving at local cell c and ordered after
// read rd, which raced a write of c (raced), the move of that race to r
// when the write is issued after r and races r too: ordering it after r
// orders it after rd, and landing after r it meets r alone (above). wOrdered
// says r is ordered after c's last write. A read of r's own agent is not
// moved from: it stays in the cell past r (accessCell, shadow0), and a
// write landing after r meets it there and counts the race
// (hazards/late_load_outer_loop: WAR `a, ld`, which moved to `c`, the
// in-place rescale of the same pipe, under some profiles).
func (d *Detector) moveReadRaces(c *cell, rd, r *rec, wOrdered bool) {
	move := func(x *rec) {
		if x.atomic || x.shadowed() || r.serial <= 0 || x.serial <= r.serial || x.gen != r.gen || !d.hasRaced(rd, x) {
			return
		}
		if ko, ok := d.raceKey(rd, x); ok {
			d.moveRace(rd, x, ko)
		}
	}
	if c.hasW && !wOrdered {
		move(&c.w)
	}
	for x, adds := 0, c.adds(); x < len(adds); x++ {
		if w := &adds[x]; !d.ordered(w, r) {
			move(w)
		}
	}
}

// Races of accesses that left the cell (ghosts).
//
// A race that moves to a later write (raceRead, raceWrite) moves when that
// write arrives, for the accesses still in the cell then. An access can
// leave before: a later instance of its site replaces it, or the history
// bound drops it (putSite, prunePrior). Its count then stayed, while in an
// order where it was still there, or landed after the later write, it
// moved or never counted, and a finding whose every count moves came and
// went with the latency (a store meant before a scratch write of its tile
// raced the next iteration's in-place op, whose value the next store reads:
// the race moves to the next scratch write, unless the next store landed
// first and replaced the store in the cell). So an access that leaves a
// cell while it has raced a write still there is kept beside that write, by
// instance, and the write that moves the races of the accesses still in the
// cell moves its race too (settleGhosts). Only racing accesses are kept,
// until that write leaves the cell: nothing is kept in a kernel without
// races.

// ghost is an access that left a cell having raced a write still there,
// and the cell it left (spans): a later write moves its race on the bytes
// of that cell it covers.
type ghost struct {
	r  rec
	sp span
}

// instKey names an access instance by agent, epoch and run generation.
type instKey struct {
	agent      int32
	epoch, gen uint32
}

// leaves records access e leaving cell c (ghosts): kept, by the writes of c
// it raced, for settleGhosts.
func (d *Detector) leaves(c *cell, e *rec) {
	if d.racedWith == nil || c == nil || e.atomic || e.shadowed() || !e.write && !e.raced {
		return
	}
	sp, ok := d.cellSpan()
	if !ok {
		sp = span{all: true}
	}
	keep := func(w *rec) {
		if w.atomic || w.shadowed() || sameInstance(w, e) || d.selfOff(w, e) || !d.racedPair(e, w) {
			return
		}
		if d.ghosts == nil {
			d.ghosts = map[instKey][]ghost{}
		}
		k := instKey{w.agent, w.epoch, w.gen}
		d.ghosts[k] = append(d.ghosts[k], ghost{*e, sp})
	}
	if c.hasW {
		keep(&c.w)
	}
	for x, adds := 0, c.adds(); x < len(adds); x++ {
		keep(&adds[x])
	}
}

// settleGhosts is, for plain write r arriving at cell c (after: r is
// ordered after c's last write), the move of raceRead and raceWrite for the
// accesses that left c having raced a write r is ordered after: each that
// r races moves its race with that write to r, as it would have still in
// the cell. It moves them on the bytes of c only (spans): a ghost that
// left a wider cell, since split, stays for the rest until a write covers
// it all.
func (d *Detector) settleGhosts(c *cell, r *rec, after bool, acc *machine.Access) {
	here, known := d.cellSpan()
	settle := func(old *rec) {
		k := instKey{old.agent, old.epoch, old.gen}
		gs, ok := d.ghosts[k]
		if !ok {
			return
		}
		n := 0
		for i := range gs {
			gh := &gs[i]
			on, some := intersect(&gh.sp, &here)
			switch {
			case gh.sp.all || !known:
				on, some = span{all: true}, true
			case !covered(&gh.sp, []span{here}):
				gs[n] = *gh // the rest of its cell is elsewhere
				n++
			}
			g := &gh.r
			if !some || sameInstance(g, r) || d.ordered(g, r) {
				continue // r does not race g here: nothing moves
			}
			ko, okOld := d.raceKey(old, g)
			kw, okNew := d.raceKey(r, g)
			if !okOld || okNew && ko == kw || d.keepsRace(old, g, r, acc) {
				continue
			}
			d.moveRaceOn(g, old.agent, ko, on)
		}
		if n == 0 {
			delete(d.ghosts, k)
		} else {
			d.ghosts[k] = gs[:n]
		}
	}
	d.orderedWrites(c, r, after, settle)
}

// orderedWrites calls f with each plain write of cell c, shadowed ones
// aside, that write r is ordered after (after: r is ordered after c's last
// write), the ones whose races r takes over (raceWrite, settleGhosts).
func (d *Detector) orderedWrites(c *cell, r *rec, after bool, f func(*rec)) {
	if c.hasW && after {
		f(&c.w)
	}
	for x, adds := 0, c.adds(); x < len(adds); x++ {
		if old := &adds[x]; !old.atomic && !old.shadowed() && d.ordered(old, r) {
			f(old)
		}
	}
}

// GM writes overwritten in order (olds).
//
// A GM cell is reached from other cores and ranks, whose intended order is
// by iteration, not issue, and no watermark says when their accesses have
// all landed. A write w that a later write by, ordered after it, replaces
// as the cell's last is kept beside it (cell.olds) with by: an access x of
// another core meant between the two races w one way round and by the
// other (a load meant between two rounds' stores is a RAW with the first
// and a WAR with the second). Landing before by it met w in the cell, and
// its race stays when by arrives (keepsRace); landing after by, it meets
// the kept w and counts the race there too (meetOlds). Before this, the
// cell kept by alone, and the RAW came and went with the latency
// (hazards/grid_read_between_writes). An access meant after by only
// offers the pair with w for the finding's name: ordering it after by
// orders it after w, so its race with w moves to by, as when it landed
// first (raceRead).
//
// Every access that races w races by as well (by is ordered after w), so
// the kept write changes which pairs are named, never whether a race is
// found.
//
// It leaves the cell when no access can still race it and be meant
// before by: with the cell's next host write, with a new run generation,
// or once maxKept later entries have come (the oldest first). Past the
// bound an access landing after more than maxKept ordered overwrites of
// the cell, meant between two of the oldest, would meet only the ones
// still kept, and its race with a dropped one came and went with the
// timing (a store of another core meant in round 1 of six in-place
// updates, hazards/gm_store_late_past_olds, lost its WAR when it landed
// last, with a bound of 4, and at 12 rounds with the bound of 16). So what
// leaves is summarised in runs (dropRun, dropruns.go) that a later access
// meets as it would the instances themselves. Past the runs' bound the
// cell remembers, per agent and kind of access, the latest access dropped
// (oldsMore.evicted), and an access not ordered after one of them is
// counted (keptMissed): the report then says, in a note, that races may
// have been missed and names the flag that raises the bound
// (Options.MaxKept, --max-kept; docs/hazards.md).

// DefaultMaxKept is the bound on the overwritten GM accesses a cell keeps
// (Options.MaxKept). Rounds of a kernel overwrite a cell once a round, often
// after another core's read of it (two entries a round: the write and the
// read), and an access of another core can lag them by as many rounds as
// nothing orders it after them. Four entries (two rounds) are held inline in
// the cell's box (oldsInline); more move behind a pointer, paid only by the
// cells that keep them. Sixteen cover an access meant eight rounds of such
// a range back: the store of hazards/gm_store_late_past_olds lags five, and
// a ring's chunk at 8 ranks (allreduce_ring/ring_skeleton under a skewed
// profile) needed more than four.
const DefaultMaxKept = 16

// MaxKeptLimit is the largest bound Options.MaxKept takes: an entry names
// its records by a byte.
const MaxKeptLimit = 100

// maxKept is the detector's bound on a cell's overwritten GM accesses.
func (d *Detector) maxKept() int {
	if n := d.opt.MaxKept; n > 0 {
		return min(n, MaxKeptLimit)
	}
	return DefaultMaxKept
}

// keepOld records in GM cell c that write r, ordered after access w of the
// cell (its last write, a racing one kept beside it, or another agent's
// read), replaces it: w stays beside r for accesses meant between the two
// (olds). Two instances of one op (an in-place op's phases) are one.
//
// It reports whether every write that left the cell is still kept (in olds
// or in a run): false when w is a write not kept, or the bound pushed one
// past the runs (cellLists.kept).
func (d *Detector) keepOld(c *cell, w, r *rec) bool {
	if sameInstance(w, r) {
		return true // r, kept as the cell's write, stands for it
	}
	if w.gen != r.gen || w.agent == d.host {
		return !w.write // (every agent is ordered after the host's writes)
	}
	l := c.oldsRoom(&d.oldsBoxes)
	all := true
	if int(l.n) >= d.maxKept() {
		d.dropOrdered(c, l, r)
	}
	if int(l.n) >= d.maxKept() {
		o := l.entries()[0]
		// A write that leaves into a run is still kept (runsAfter); one
		// evicted past the runs is not.
		wrote := c.oldWrite(o.w)
		all = d.dropOld(c, o) || !wrote
		l.popOldest()
		d.keptAged++
	}
	l.packOldRecs()
	wi := d.oldPlace(l, w)
	l.push(gmOld{w: wi, by: d.oldPlace(l, r)})
	return all
}

// dropOrdered drops from cell c's list l, at the bound, the entries whose
// access every agent that can still reach the cell is ordered after
// (orderedForAll), before the oldest: no access still to come from an
// agent the detector knows can race it, so it names no pair. Only a list
// at the bound asks (the ring's chunks and allgather_gemm's GM never get
// there: at most four entries), so the scan of every agent costs nothing
// on the common path. Each dropped one goes into a run as one dropped by
// age does (dropOld): the rule cannot know the agents not seen yet (a
// core's agents are made at its first event, with no clock; an SDMA
// engine's at its first copy), and one of those not ordered after it
// meets it there. Asked earlier, when a list outgrows its box, it
// kept every shipped benchmark at four but made the note come and go with
// the timing below the bound (hazards/tput_async_src_reuse at 8 trips: the
// SDMA engine's first copy landing after the entries went or before).
func (d *Detector) dropOrdered(c *cell, l *oldsList, r *rec) {
	ents, n := l.entries(), 0
	for x := range ents {
		o := ents[x]
		if d.orderedForAll(d.oldRec(c, o.w, &d.oldW), r) {
			d.dropOld(c, o) // every agent is after it: it fills any read to come
			continue
		}
		ents[n] = o
		n++
	}
	if n < int(l.n) {
		l.n, l.stale = uint8(n), true
		d.keptOrdered += int(len(ents) - n)
	}
}

// orderedForAll reports whether every agent that may still access GM is
// ordered after access w (hb): those of this run generation whose core
// has not ended (endedAgent), the host aside; an agent this run has not
// met yet (an earlier generation's) answers no, as its clock starts empty.
// One answer per access instance and overwrite r (orderedMemo): a write
// over many cells asks of the same few accesses in each, and no clock
// moves while it is checked.
func (d *Detector) orderedForAll(w, r *rec) bool {
	if w.gen != d.gen {
		return true
	}
	m := &d.orderedMemo
	if m.ok && m.w == (instKey{w.agent, w.epoch, w.gen}) && m.r == (instKey{r.agent, r.epoch, r.gen}) && m.step == r.step && m.seq == d.keptSeq {
		return m.v
	}
	v := true
	for a := range d.agents {
		ag := &d.agents[a]
		if int32(a) == d.host || ag.gen == d.gen && d.endedAgent(int32(a)) {
			continue
		}
		if ag.gen != d.gen || !d.hb(w, int32(a)) {
			v = false
			break
		}
	}
	*m = keptMemo{ok: true, w: instKey{w.agent, w.epoch, w.gen}, r: instKey{r.agent, r.epoch, r.gen}, step: r.step, seq: d.keptSeq, v: v}
	return v
}

// keptMemo is orderedForAll's last answer: for access instance w and
// overwrite r (its step too), while the detector's keptSeq is seq.
type keptMemo struct {
	ok   bool
	w, r instKey
	step uint8
	seq  uint64
	v    bool
}

// endedAgent reports whether agent a's core has ended its kernel
// (kernelEnd) and a has run nothing since: it will access nothing more
// unless its core runs another block, whose ops move its count.
func (d *Detector) endedAgent(a int32) bool {
	if int(a) >= len(d.agentEnd) {
		return false
	}
	e := d.agentEnd[a]
	return e.gen == d.gen && e.n == d.agents[a].n
}

// agentEndMark is an agent's op count when its core's kernel ended, in run
// generation gen (0: never).
type agentEndMark struct{ gen, n uint32 }

// markEnded records that core c's kernel ended: its agents, as of now,
// access nothing more (endedAgent).
func (d *Detector) markEnded(c int32) {
	cs := &d.cores[c]
	for _, a := range cs.locals[:cs.nlocals] {
		if int(a) >= len(d.agentEnd) {
			d.agentEnd = append(d.agentEnd, make([]agentEndMark, int(a)+1-len(d.agentEnd))...)
		}
		d.agentEnd[a] = agentEndMark{gen: d.gen, n: d.agents[a].n}
	}
	d.keptSeq++
}

// evict records in cell c that its access at place i is dropped past the
// runs' bound (oldsMore.evicted): the latest of its agent and kind.
func (d *Detector) evict(c *cell, i uint8) {
	w := d.oldRec(c, i, &d.oldW)
	m := c.lists.olds.moreRoom()
	for x := range m.evicted {
		if e := &m.evicted[x]; e.agent == w.agent && e.write == w.write && e.atomic == w.atomic {
			if e.gen != w.gen || e.epoch < w.epoch {
				e.epoch, e.gen = w.epoch, w.gen
			}
			return
		}
	}
	m.evicted = append(m.evicted, evictedOld{agent: w.agent, epoch: w.epoch, gen: w.gen, write: w.write, atomic: w.atomic})
}

// missedEvicted reports whether access r of cell c may race an access
// dropped from c past the runs' bound: one of r's run generation, a write or r a write,
// not both atomic adds, and r not ordered after it.
func (d *Detector) missedEvicted(c *cell, r *rec) bool {
	m := c.lists.olds.more
	if m == nil {
		return false
	}
	for x := range m.evicted {
		e := &m.evicted[x]
		if e.gen != r.gen || !e.write && !r.write || e.atomic && r.atomic {
			continue
		}
		if !d.hbOrSame(&rec{agent: e.agent, epoch: e.epoch, gen: e.gen}, r) {
			return true
		}
	}
	return false
}

// keptMissed counts access r, which may have raced an access the bound
// dropped (missedEvicted), and names the first such access and buffer, for
// the report's note (keptLimitNote).
func (d *Detector) keptMissed(r *rec) {
	d.keptMisses++
	if d.keptMisses > 1 {
		return
	}
	d.keptMissSite = d.site(r)
	if acc := d.cur.acc; acc != nil && acc.Tensor != nil {
		d.keptMissAt = tensorName(acc.Tensor, acc.Rank)
	}
}

// meetOlds checks access r of GM cell c against the overwritten accesses
// c keeps. A write meets the reads first: a race with one counts (no race
// with a read moves to a later write, so it counted when r landed before
// the overwrite too), and one r is meant to follow stands for the WAW with
// the write that read saw, as a read still in the cell does (warred, which
// it returns). Then the writes: a race with one r is meant before the
// overwrite of counts (r races the overwrite the other way round, a pair
// of its own), one with r meant after it only offers the pair for the
// finding's name, as the race moved to the overwrite when r landed before
// it (keepsRace). The runs of dropped entries are met the same way, at the
// instances of each that decide the report (runInsts). Entries and runs of
// an earlier run generation leave. all reports whether r is ordered after
// every entry kept that it could race.
func (d *Detector) meetOlds(c *cell, r *rec, warred bool, acc *machine.Access, lo, hi int64) (all, warredOut bool) {
	olds, n := c.olds(), 0
	all = true
	if d.missedEvicted(c, r) {
		all = false
		d.keptMissed(r)
	}
	c.keepRunsOf(r.gen)
	runs := c.runs()
	if r.write {
		meetRead := func(w, _ *rec) {
			all = false
			d.race(w, r, acc, lo, hi)
			warred = warred || d.intendedBefore(w, r)
		}
		for x := range olds {
			if w := d.oldRec(c, olds[x].w, &d.oldW); !w.write && w.gen == r.gen && !d.hbOrSame(w, r) {
				meetRead(w, nil)
			}
		}
		for x := range runs {
			if !runs[x].w.write {
				d.runInsts(&runs[x], r, meetRead)
			}
		}
	}
	meetWrite := func(w, by *rec) {
		all = false
		if !warred || d.intendedBefore(r, w) {
			// A race with an atomic add, or with a write an atomic
			// add overwrote, never moves (raceRead): it counts.
			moves := !w.atomic && !by.atomic
			d.raceNamed(w, r, moves && !d.intendedBefore(r, by), acc, lo, hi)
		}
	}
	for x := range runs {
		if w := &runs[x].w; w.write && !(w.atomic && r.atomic) {
			d.runInsts(&runs[x], r, meetWrite)
		}
	}
	for x := range olds {
		o := olds[x]
		w := d.oldRec(c, o.w, &d.oldW)
		if w.gen != r.gen {
			continue
		}
		if w.write && !(w.atomic && r.atomic) && !d.hbOrSame(w, r) {
			meetWrite(w, d.oldRec(c, o.by, &d.oldBy))
		}
		olds[n] = o
		n++
	}
	c.setOldsLen(n)
	return all, warred
}

// sameOlds reports whether cells keep the same overwritten GM writes, so
// that merging them into the first (imap.collapse) loses none.
func sameOlds(cells []*cell) bool {
	f := cells[0]
	first := f.olds()
	for _, c := range cells[1:] {
		o := c.olds()
		if len(o) != len(first) || !sameDropped(f, c) {
			return false
		}
		for x := range o {
			a1, e1, g1 := c.oldIdent(o[x].w)
			a2, e2, g2 := f.oldIdent(first[x].w)
			b1, f1, h1 := c.oldIdent(o[x].by)
			b2, f2, h2 := f.oldIdent(first[x].by)
			if a1 != a2 || e1 != e2 || g1 != g2 || b1 != b2 || f1 != f2 || h1 != h2 {
				return false
			}
		}
	}
	return true
}
