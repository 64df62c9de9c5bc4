package hazard

import "github.com/ptoasm/ptoasm/machine"

// A batch replayed core by core (docs/performance.md, lint round 31).
//
// The machine emits events in simulated-time order across all cores, and
// on the 8-rank allgather_gemm (576 cores) a batch of 2048 holds a few
// events per core: between two events of one core the detector touched
// the state of hundreds of others (its agents, flag channels, cells,
// access memos, issue and iteration logs), which had left the host's L2
// by the time the core's next event came. grouped replays each segment of
// a batch core by core instead, each core's items in their own order.
//
// Why the findings are the same. A segment holds no item that carries
// happens-before between cores or touches detector-wide order-sensitive
// state: it ends before every whole event (tagWhole: cross-core flags,
// syncall, SDMA, host writes, run and kernel boundaries, deadlocks,
// composite steps, anything that did not travel compact) and every notify
// and signal wait (tagSync but for a barrier). What is left is execs, flag
// sets and waits (between the pipes of one core), a scalar's barrier and
// iteration notes (its own log), which read and write their core's state
// and, for GM accesses, the GM shadow. Two items of different cores in a
// segment are therefore unordered by happens-before except through edges
// earlier segments made, which every order of the segment sees alike: the
// core-by-core order is another linearisation of the same happens-before
// order, of the kind the machine's stretches (lint round 17) and every
// timing change deliver, and the detector's findings do not depend on
// which one it sees (TestFindingsIgnoreTiming; TestGroupedReplay compares
// the two orders directly).

// groupSlots is the size of the hash table that gives a core its group in
// a segment; a segment ends early when it has groupMax cores, so the table
// stays at most a quarter full (ending a segment early is always exact).
const (
	groupSlots = 1 << 12
	groupMax   = groupSlots / 4
)

// itemAt is where an item's slices start in its batch's arenas: Acc and
// Defs for a compact item, iter for any, and for a tagSync item its
// Value in vals, for a tagNote item its note.
type itemAt struct {
	acc, iter, def, aux uint32
}

// groupSlot is a core's entry in the hash table: its key (rank<<16 |
// core), the stamp of the segment it was made in, and its group there.
type groupSlot struct {
	key, stamp, grp uint32
}

// grouper holds the grouped replay's scratch, on the detector's side.
type grouper struct {
	at    []itemAt // by item of the batch
	grp   []uint32 // by item of the batch: its group in its segment
	order []uint32 // a segment's items, core by core
	cnt   [groupMax]uint32
	ng    uint32 // groups in the current segment
	stamp uint32 // the current segment's
	slots [groupSlots]groupSlot
}

// replayGrouped replays b core by core within segments. One pass finds
// every item's arena offsets (the in-order replay's cursors), its core's
// group and the segments' ends; each segment is replayed when its end is
// found, while its items are still in the cache.
func (d *Detector) replayGrouped(b *batch) {
	g := &d.group
	n := len(b.Recs)
	if cap(g.at) < n {
		g.at, g.grp, g.order = make([]itemAt, cap(b.Recs)), make([]uint32, cap(b.Recs)), make([]uint32, cap(b.Recs))
	}
	at, grp := g.at[:n], g.grp[:n]
	var acc, iter, def, val, note uint32
	s := 0
	g.newSegment()
	for i := range b.Recs {
		it := &b.Recs[i]
		key, alone := uint32(it.Rank)<<16|uint32(it.Core), false
		switch it.Tag {
		case tagCompact:
			at[i] = itemAt{acc: acc, iter: iter, def: def}
			acc += uint32(it.NAcc)
			iter += uint32(it.NIter)
			if it.Deferred {
				def++
			}
		case tagSync:
			at[i] = itemAt{acc: acc, iter: iter, aux: val}
			acc += uint32(it.NAcc)
			iter += uint32(it.NIter)
			if it.Kind != machine.EvBarrier {
				val += 2
				alone = true
			}
		case tagNote:
			at[i] = itemAt{iter: iter, aux: note}
			iter += uint32(it.NIter)
			a := b.notes[note].agent
			note++
			key = uint32(a.Rank)<<16 | uint32(a.Core)
			// A note of no core (logIter ignores it) or of numbers that
			// do not fit the key stays in its place.
			alone = uint32(a.Rank)|uint32(a.Core) > 0xffff
		default:
			at[i], alone = itemAt{}, true
		}
		if alone {
			if gstatsOn {
				gst.alone++
			}
			d.replaySegment(b, s, i)
			d.replayAt(b, i)
			s = i + 1
			continue
		}
		if g.ng == groupMax && !g.has(key) {
			d.replaySegment(b, s, i)
			s = i
		}
		grp[i] = g.group(key)
	}
	d.replaySegment(b, s, n)
	d.scratch = machine.Event{}
}

// newSegment starts a segment: no core has a group in it.
func (g *grouper) newSegment() {
	g.ng = 0
	g.stamp++
	if g.stamp == 0 { // wrapped: stamps of 4G segments ago would match
		g.slots = [groupSlots]groupSlot{}
		g.stamp = 1
	}
}

// slot is key's entry in the table: its own, or the free one it would
// take.
func (g *grouper) slot(key uint32) *groupSlot {
	h := (key * 0x9e3779b1) >> (32 - 12)
	for {
		sl := &g.slots[h]
		if sl.stamp != g.stamp || sl.key == key {
			return sl
		}
		h = (h + 1) & (groupSlots - 1)
	}
}

// has reports whether key has a group in the segment.
func (g *grouper) has(key uint32) bool { return g.slot(key).stamp == g.stamp }

// group is key's group in the segment, made if it has none, with one more
// item counted.
func (g *grouper) group(key uint32) uint32 {
	sl := g.slot(key)
	if sl.stamp != g.stamp {
		*sl = groupSlot{key: key, stamp: g.stamp, grp: g.ng}
		g.cnt[g.ng] = 0
		g.ng++
	}
	g.cnt[sl.grp]++
	return sl.grp
}

// replaySegment replays items [s, e) of b core by core: the cores in the
// order they first appear, each core's items in their order; and starts
// the next segment.
func (d *Detector) replaySegment(b *batch, s, e int) {
	g := &d.group
	ng := g.ng
	if gstatsOn {
		gstatsSeg(g, s, e)
	}
	g.newSegment()
	if ng <= 1 {
		for i := s; i < e; i++ {
			d.replayAt(b, i)
		}
		return
	}
	next := uint32(0)
	for k, n := range g.cnt[:ng] {
		g.cnt[k] = next
		next += n
	}
	order := g.order[:e-s]
	for i, k := range g.grp[s:e] {
		order[g.cnt[k]] = uint32(s + i)
		g.cnt[k]++
	}
	for _, i := range order {
		d.replayAt(b, int(i))
	}
}

// replayAt replays item i of b, its slices where replayGrouped found them.
func (d *Detector) replayAt(b *batch, i int) {
	it, at := &b.Recs[i], &d.group.at[i]
	acc0, iter0, def0 := int(at.acc), int(at.iter), int(at.def)
	if it.Tag == tagNote {
		note0 := int(at.aux)
		d.replayNote(b, it, &iter0, &note0)
		return
	}
	b.vnext = int(at.aux)
	d.observe(b.event(it, &d.scratch, &acc0, &iter0, &def0))
}
