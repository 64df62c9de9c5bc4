package hazard

import (
	"slices"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
)

// Races that move on part of their bytes (spans).
//
// A race of access a with write old moves to a later write r ordered after
// old (raceRead, raceWrite, settleGhosts) because a landing after r would
// have met r alone. That holds on the bytes r covers. Where old's bytes
// that a raced reach past r, a landing after r still meets old there, and
// its race with old counts; so a race taken back as a whole when r covered
// part of it was dropped when a landed before r and kept when it landed
// after (TestPartialMoveKeepsRace: a store racing a load and a scale that
// covers half of the load's bytes lost its RAW with the load when it
// landed first; the limit docs/hazards.md named in session 19).
//
// So each counted race remembers the bytes it was met on, by access
// instance and finding (raced), and each move the bytes of the cell it
// moved on (moved). Findings takes a count back only where the moved
// bytes cover the raced ones: several later writes may share the cover,
// as a landing after all of them meets them on their own bytes. Only
// racing kernels record anything.

// span is the bytes of one cell of one buffer: rows [r0, r1) of pitch
// bytes from base, byte columns [c0, c1) of each (one row, base and
// pitch 0, for a byte-range cell).
type span struct {
	key                         shadowKey
	base, pitch, r0, r1, c0, c1 int64
	// all stands for every byte: a move made where no cell was known.
	all bool
}

// curCell is the cell accessCell is visiting, for the spans of the races
// and moves it makes (cellSpan).
type curCell struct {
	acc *machine.Access
	c   *cell
	g   geo
}

// cellSpan is the span of the cell accessCell is visiting.
func (d *Detector) cellSpan() (span, bool) {
	cc := &d.cur
	if cc.acc == nil || cc.c == nil {
		return span{}, false
	}
	s := span{key: keyOf(cc.acc), c0: cc.c.lo, c1: cc.c.hi, r1: 1}
	if cc.g.pitch != 0 {
		if cc.acc.Space == asm.GM && cc.acc.Tensor != nil {
			s.key = gmKey(cc.acc)
		}
		s.base, s.pitch, s.r0, s.r1 = cc.g.base, cc.g.pitch, cc.g.r0, cc.g.r1
	}
	return s, true
}

// sameGrid reports whether a and b are of one buffer and one geometry, so
// that their rows and columns compare.
func sameGrid(a, b *span) bool {
	return a.key == b.key && a.base == b.base && a.pitch == b.pitch
}

// intersect is the bytes of a that b covers too, false when none or when
// the two are of different geometries (a cell of a buffer before and
// after it took a 2-D view: no move there, the race stays).
func intersect(a, b *span) (span, bool) {
	if !sameGrid(a, b) {
		return span{}, false
	}
	s := *a
	s.r0, s.r1 = max(a.r0, b.r0), min(a.r1, b.r1)
	s.c0, s.c1 = max(a.c0, b.c0), min(a.c1, b.c1)
	return s, s.r0 < s.r1 && s.c0 < s.c1
}

// covered reports whether the spans of by cover every byte of s. Spans of
// another geometry are not compared: s is covered only by those of its
// own (see intersect).
func covered(s *span, by []span) bool {
	if slices.ContainsFunc(by, func(b span) bool { return b.all }) {
		return true
	}
	var parts []span
	for i := range by {
		if p, ok := intersect(s, &by[i]); ok {
			parts = append(parts, p)
		}
	}
	if len(parts) == 0 {
		return false
	}
	// Cut s at every part's edges; each piece is inside a part or
	// outside all of them.
	rows := []int64{s.r0, s.r1}
	cols := []int64{s.c0, s.c1}
	for _, p := range parts {
		rows = append(rows, p.r0, p.r1)
		cols = append(cols, p.c0, p.c1)
	}
	slices.Sort(rows)
	slices.Sort(cols)
	rows, cols = slices.Compact(rows), slices.Compact(cols)
	for i := 0; i+1 < len(rows); i++ {
		for j := 0; j+1 < len(cols); j++ {
			in := func(p span) bool {
				return p.r0 <= rows[i] && rows[i+1] <= p.r1 && p.c0 <= cols[j] && cols[j+1] <= p.c1
			}
			if !slices.ContainsFunc(parts, in) {
				return false
			}
		}
	}
	return true
}

// noteRacedSpan records that instance k's race, counted, was met on span s.
func (d *Detector) noteRacedSpan(k movedKey, s span) {
	if d.raced == nil {
		d.raced = map[movedKey][]span{}
	}
	d.raced[k] = append(d.raced[k], s)
}

// takenBack is how many counts each finding loses to moves: one per access
// instance whose race under it moved on every byte it was met on.
func (d *Detector) takenBack() map[findKey]int {
	if len(d.moved) == 0 {
		return nil
	}
	out := map[findKey]int{}
	for mk, by := range d.moved {
		if d.movedWhole(mk, by) {
			out[mk.ko]++
		}
	}
	return out
}

// movedWhole reports whether the moves of instance mk's race, on spans by,
// cover every span it was counted on. A race counted without a span (no
// cell: none is known) moves as a whole, as before spans.
func (d *Detector) movedWhole(mk movedKey, by []span) bool {
	for _, s := range d.raced[mk] {
		if !covered(&s, by) {
			return false
		}
	}
	return true
}

// A pair of agents a race met (recordRace), for the pair count.
//
// A finding's count is its pairs of agents (docs/hazards.md, "The count"),
// which holds while every pair met in one order of the run is met in all.
// A move breaks that: an access that raced an earlier write of a site and
// then a later write ordered after it has its race moved to the later
// write (moveRace), because landing after both it would have met the later
// one alone. The instance count was taken back (takenBack), but the pair
// stayed, so a pair whose only race moved counted in the orders where the
// access met the earlier write and not in the others
// (hazards/grouped_gemm_tail_no_reverse at SC = 2: a ragged tile's store,
// the next ragged tile's matmul and a full tile's after it on one cube:
// WAR `stt, mmt` counted 2 or 1 pipe pairs with a per-unit skew).
type pairArrival struct {
	f    *finding
	pair [2]int32
	back bool
}

// notePairArrival records that finding f met agent pair p at access
// instances first and second (at sites sf and ss), once per such triple:
// a move takes back the arrivals of the instance that moved, and the pair
// stays while another instance pair met it. The instances' keys, whose
// site names cost a Sprintf each, are made for a new arrival only.
func (d *Detector) notePairArrival(f *finding, p [2]int32, first, second *rec, sf, ss Site) {
	ak := arrivalKey{f, first.epoch, first.gen, second.epoch, second.gen, p}
	if _, ok := d.arrivalSeen[ak]; ok {
		return
	}
	if d.arrivalOf == nil {
		d.arrivalOf, d.arrivalSeen = map[movedKey][]int32{}, map[arrivalKey]struct{}{}
	}
	d.arrivalSeen[ak] = struct{}{}
	k := findKey{kind: f.Kind, first: siteKey(sf), second: siteKey(ss)}
	k1, k2 := movedKey{first.agent, first.epoch, first.gen, k}, movedKey{second.agent, second.epoch, second.gen, k}
	i := int32(len(d.arrivals))
	d.arrivals = append(d.arrivals, pairArrival{f: f, pair: p})
	d.arrivalOf[k1] = append(d.arrivalOf[k1], i)
	d.arrivalOf[k2] = append(d.arrivalOf[k2], i)
}

// arrivalKey names an arrival: its finding, the epochs and generations of
// its two access instances, and their agents (p).
type arrivalKey struct {
	f      *finding
	e1, g1 uint32
	e2, g2 uint32
	p      [2]int32
}

// livePairs is how many agent pairs each race finding keeps: those with an
// arrival neither of whose instances had its race moved on every byte it
// was met on (movedWhole), the rule takenBack applies to the instances.
func (d *Detector) livePairs() map[*finding]int {
	for mk, by := range d.moved {
		if !d.movedWhole(mk, by) {
			continue
		}
		for _, i := range d.arrivalOf[mk] {
			// Only the arrivals with an agent whose race with mk moved:
			// a race of the same instance with another agent's write,
			// which the later write is not ordered after, stays.
			a := &d.arrivals[i]
			other := a.pair[0]
			if other == mk.ra {
				other = a.pair[1]
			}
			if slices.Contains(d.movedFrom[mk], other) {
				a.back = true
			}
		}
	}
	live := map[*finding]map[[2]int32]struct{}{}
	for i := range d.arrivals {
		a := &d.arrivals[i]
		if a.back {
			continue
		}
		if live[a.f] == nil {
			live[a.f] = map[[2]int32]struct{}{}
		}
		live[a.f][a.pair] = struct{}{}
	}
	out := make(map[*finding]int, len(live))
	for f, ps := range live {
		out[f] = len(ps)
	}
	return out
}
