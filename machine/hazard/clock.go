package hazard

import (
	"sync/atomic"

	"github.com/ptoasm/ptoasm/asm"
)

// Vector clocks are indexed by agent; a missing entry is 0, so a clock grows
// only when it learns about a newer agent.
//
// A clock is split into blocks of blk components that clocks share
// copy-on-write. Copying a clock (a release into a flag or a signal word, a
// scalar's issue snapshot) copies one pointer per block, and a join adopts
// the source's block whenever that block holds at least every component of
// the destination's, so knowledge that travels unchanged through many agents
// is stored once. A clock writes in place only the blocks it made itself
// since it was last copied (vblock.owner, vclock.id), so a copy touches
// nothing but the block table. On a 384-rank ring every signal word holds the clock of
// its notifier: one dense copy each was 4 GB, most of it identical blocks
// passed on round after round. Two clocks holding the same block compare
// equal without reading it, so the joins that hand one piece of news to
// every pipe of a core skip whatever they already share.

const (
	blkBits = 5
	blk     = 1 << blkBits
	blkMask = blk - 1
)

// vblock is blk components, made by the clock whose id is owner. Only that
// clock writes it in place, and only while its id is unchanged: a clock
// takes a new id whenever another may hold its blocks (freeze), and a clock
// that writes a block it did not make copies it first (own).
type vblock struct {
	owner uint64
	v     [blk]uint32
}

// vclock is a vector clock: n components in blocks, nil blocks all zero.
// Like a slice, a vclock value aliases its block table: copies made by
// assignment see each other's writes, while copyFrom and clone give an
// independent clock that shares blocks copy-on-write. id is 0 until the
// clock makes a block.
type vclock struct {
	b  []*vblock
	n  int32
	id uint64
}

// clockIDs hands out clock ids; 64 bits never wrap.
var clockIDs atomic.Uint64

// freeze makes c's blocks read-only to c: another clock may hold them.
func (c *vclock) freeze() {
	if c.id != 0 {
		c.id = clockIDs.Add(1)
	}
}

func nblocks(n int32) int { return int((n + blk - 1) >> blkBits) }

// size returns the clock's length in components.
func (c *vclock) size() int32 { return c.n }

// extend makes c at least n components long.
func (c *vclock) extend(n int32) {
	if n <= c.n {
		return
	}
	if k := nblocks(n); k > len(c.b) {
		if k <= cap(c.b) {
			old := len(c.b)
			c.b = c.b[:k]
			clear(c.b[old:])
		} else {
			// A clock growing from nothing (a signal word's first
			// release) takes its source's length at once and rarely
			// grows again: room to grow would be a third of a 384-rank
			// lint's block tables.
			room := k
			if len(c.b) > 0 {
				room += k/2 + 2
			}
			nb := make([]*vblock, k, room)
			copy(nb, c.b)
			c.b = nb
		}
	}
	c.n = n
}

// own returns block i of c, writable: a nil block becomes a zero block of
// c's own, one c did not make a private copy.
func (c *vclock) own(i int) *vblock {
	if c.id == 0 {
		c.id = clockIDs.Add(1)
	}
	b := c.b[i]
	switch {
	case b == nil:
		b = &vblock{owner: c.id}
		c.b[i] = b
	case b.owner != c.id:
		nb := &vblock{owner: c.id, v: b.v}
		c.b[i] = nb
		b = nb
	}
	return b
}

// copyFrom makes c a copy of src, reusing c's block table and sharing
// src's blocks, which neither writes in place from now on.
func (c *vclock) copyFrom(src *vclock) {
	// Only the entries past src's length need clearing (for the collector):
	// the append overwrites the rest. Clearing the whole table was a third
	// of a flag set's copy at 384 ranks.
	if len(c.b) > len(src.b) {
		clear(c.b[len(src.b):])
	}
	c.b = append(c.b[:0], src.b...)
	c.n, c.id = src.n, 0
	src.freeze()
}

// clone returns an independent copy of c.
func (c *vclock) clone() vclock {
	var n vclock
	n.copyFrom(c)
	return n
}

// reset zeroes every component, keeping the length.
func (c *vclock) reset() { clear(c.b) }

// truncate empties c, keeping its block table for reuse.
func (c *vclock) truncate() {
	clear(c.b)
	c.b, c.n = c.b[:0], 0
}

// set writes component i.
func (c *vclock) set(i int32, v uint32) {
	if get(*c, i) == v {
		return
	}
	c.extend(i + 1)
	c.own(int(i >> blkBits)).v[i&blkMask] = v
}

// join raises dst to at least src, componentwise, growing dst as needed, and
// reports whether any component changed. src must be the clock itself, not
// a copy of a clock that is written later (a block dst takes from src
// freezes src), unless src is never written again.
func join(dst *vclock, src *vclock) bool {
	changed, _ := joinTrack(dst, src, nil)
	return changed
}

// joinTrack is join that also reports whether a component that changed is
// not local (local nil: none is).
func joinTrack(dst *vclock, src *vclock, local func(i int32) bool) (changed, remote bool) {
	return adoptAbove(dst, src, nil, local)
}

// cert names the blocks of a join's destination that its source is known
// to hold at least (adoptAbove): none; every block but keep[:nkeep] (a
// core's own, acquireAbove); or every block the destination still shares
// with prev (an earlier release of the same agent, acquireSig). It is a
// value, not a callback: adoptAbove asks it once per block of the clock,
// and an indirect call per block was a tenth of a 384-rank lint's joins.
type cert struct {
	kind  uint8
	nkeep uint8
	keep  [asm.NumPipes + 1]int32
	prev  []*vblock
}

const (
	certNone   = iota
	certAllBut // every block but keep[:nkeep]
	certShared // every block shared with prev
)

// holds reports whether c vouches for block bi of the destination, db.
func (c *cert) holds(bi int, db *vblock) bool {
	switch c.kind {
	case certAllBut:
		for _, k := range c.keep[:c.nkeep] {
			if int(k) == bi {
				return false
			}
		}
		return true
	case certShared:
		return bi < len(c.prev) && db == c.prev[bi] && db != nil
	}
	return false
}

// adoptAbove is joinTrack for a src known to hold at least dst's value of
// every component of a block that ct vouches for (nil: none): it takes
// those blocks of src without reading them, and joins the others
// componentwise. An adopted block counts as changed (and not local)
// whenever it is another block, unread.
func adoptAbove(dst *vclock, src *vclock, ct *cert, local func(i int32) bool) (changed, remote bool) {
	dst.extend(src.n)
	adopted := false
	for bi, sb := range src.b {
		db := dst.b[bi]
		if sb == nil || sb == db {
			continue
		}
		if ct != nil && ct.holds(bi, db) {
			dst.b[bi] = sb
			adopted = true
			changed, remote = true, true
			continue
		}
		if db == nil {
			// Adopt: every non-zero component of sb is news.
			dst.b[bi] = sb
			adopted = true
			if changed && (remote || local == nil) {
				continue
			}
			for k, v := range sb.v {
				if v > 0 {
					changed = true
					if local == nil {
						break
					}
					if !local(int32(bi<<blkBits + k)) {
						remote = true
						break
					}
				}
			}
			continue
		}
		gt, lt := order(sb, db)
		if !gt {
			continue
		}
		changed = true
		if local != nil && !remote {
			for k, v := range sb.v {
				if v > db.v[k] && !local(int32(bi<<blkBits+k)) {
					remote = true
					break
				}
			}
		}
		if !lt {
			dst.b[bi] = sb
			adopted = true
			continue
		}
		nb := dst.own(bi)
		for k, v := range sb.v {
			if v > nb.v[k] {
				nb.v[k] = v
			}
		}
	}
	if adopted {
		src.freeze()
	}
	return changed, remote
}

// raise sets component i of c to at least v.
func raise(c *vclock, i int32, v uint32) {
	if get(*c, i) >= v {
		return
	}
	c.extend(i + 1)
	c.own(int(i >> blkBits)).v[i&blkMask] = v
}

func get(c vclock, i int32) uint32 {
	if i < 0 || i >= c.n {
		return 0
	}
	if b := c.b[i>>blkBits]; b != nil {
		return b.v[i&blkMask]
	}
	return 0
}

// each calls f on every non-zero component of c, in order.
func (c vclock) each(f func(i int32, v uint32)) {
	for bi, b := range c.b {
		if b == nil {
			continue
		}
		for k, v := range b.v {
			if v > 0 {
				f(int32(bi<<blkBits+k), v)
			}
		}
	}
}

// order reports whether some component of a is greater than b's, and
// whether some is smaller, without branching on the data.
func order(a, b *vblock) (gt, lt bool) {
	var g, l uint64
	for k := range a.v {
		x, y := uint64(a.v[k]), uint64(b.v[k])
		g |= y - x
		l |= x - y
	}
	return g>>63 != 0, l>>63 != 0
}
