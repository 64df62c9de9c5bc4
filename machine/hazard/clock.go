package hazard

import (
	"sync/atomic"

	"github.com/ptoasm/ptoasm/asm"
)

// Vector clocks are indexed by agent; a missing entry is 0, so a clock grows
// only when it learns about a newer agent.
//
// A clock is a three-level tree: a root table of pointers to groups of grp
// blocks, each block blk components. Blocks, groups and root tables are
// shared between clocks copy-on-write. Copying a clock (a release into a
// flag or a signal word, a scalar's issue snapshot) shares its root: one
// pointer, whatever the clock's length. A join adopts the source's group
// or block whenever it holds at least every component of the
// destination's, so knowledge that travels unchanged through many agents
// is stored once, and two clocks holding the same group or block compare
// equal without reading it. A raise into a shared part copies the path to
// its component: the root table, one group and one block.
//
// On a 384-rank ring every signal word holds the clock of its notifier and
// every wait brings news of every rank: one dense copy per word was 4 GB;
// with a flat table of blocks each copy, join and snapshot still handled
// one pointer per 32 agents (docs/performance.md, lint rounds 1 to 6).

const (
	// blkBits: 16 components a block, 64 bytes, one cache line: four
	// cores' agents (posGroup). A ring rank's wait copies the path to its
	// core's block once a round, and the word it notifies next keeps that
	// version: with blocks of 32 the path was 272 bytes at 384 ranks,
	// with 16 it is 256, and a 128-rank ring's 232 is 192, for the same
	// instructions (docs/performance.md, round 15 at many ranks).
	blkBits = 4
	blk     = 1 << blkBits
	blkMask = blk - 1

	// grpBits: 8 blocks a group, 128 components: a 32-rank ring's clock
	// is one group, a 384-rank one 13. Groups of 16 blocks cost 2.5%
	// more instructions at 128 ranks (docs/performance.md).
	grpBits = 3
	grp     = 1 << grpBits
	grpMask = grp - 1
)

// vgroup is grp blocks (nil: all zero), made by the clock whose id is
// owner. Only that clock writes it in place, and only while its id is
// unchanged: a clock takes a new id whenever another may hold its blocks
// or groups (freeze), and a clock that writes a group it did not make
// copies it first (group). Bit k of made says the owner made block b[k]
// in this group since (ownCopy), so it may write that block in place too;
// a block taken from another clock clears it (adoptAbove).
type vgroup struct {
	owner uint64
	b     [grp]*vblock
	made  uint8
}

// vblock is blk components, owned through the group that holds it
// (vgroup.made). It carries no owner of its own: 64 bytes, a size class
// whose objects start on a cache line, so a block is one line. With an
// owner id a block of 32 was 136 bytes in the 144-byte class, three lines
// for most blocks, and 16 bytes more at every copy-on-write copy of a
// block, one per signal wait of a ring's rank (docs/performance.md, round
// 15 at many ranks).
type vblock struct {
	v [blk]uint32
}

// noGroup is every all-zero group of every root table: a root has no nil
// entries, so get reads a component with one test less (it is small
// enough to inline into the detector's happens-before checks). Its owner
// is 0, which is no clock's id, so no clock writes it.
var noGroup vgroup

// fillNone points every entry of r at noGroup.
func fillNone(r []*vgroup) {
	for i := range r {
		r[i] = &noGroup
	}
}

// vclock is a vector clock: n components in groups of blocks, noGroup
// groups and nil blocks all zero. g is the root table; mine says no other clock holds
// it, so c may write it in place (a copy shares the root and clears mine
// on both sides). Like a slice, a vclock value aliases its root table:
// copies made by assignment may see each other's writes, while copyFrom
// and clone give an independent clock that shares the tree copy-on-write.
// id is 0 until the clock makes a group or block.
type vclock struct {
	g    []*vgroup
	n    int32
	mine bool
	id   uint64
}

// clockIDs hands out clock ids; 64 bits never wrap.
var clockIDs atomic.Uint64

// freeze makes c's groups and blocks read-only to c: another clock may
// hold them.
func (c *vclock) freeze() {
	if c.id != 0 {
		c.id = clockIDs.Add(1)
	}
}

func nblocks(n int32) int { return int((n + blk - 1) >> blkBits) }

func ngroups(n int32) int { return (nblocks(n) + grp - 1) >> grpBits }

// size returns the clock's length in components.
func (c *vclock) size() int32 { return c.n }

// extend makes c at least n components long.
func (c *vclock) extend(n int32) {
	if n <= c.n {
		return
	}
	if k := ngroups(n); k > len(c.g) {
		c.grow(k)
	}
	c.n = n
}

// grow makes c's root table k groups long, its own.
func (c *vclock) grow(k int) {
	if c.mine && k <= cap(c.g) {
		old := len(c.g)
		c.g = c.g[:k]
		fillNone(c.g[old:])
		return
	}
	// A clock growing from nothing takes the length asked for at once and
	// rarely grows again.
	room := k
	if len(c.g) > 0 {
		room += k/2 + 1
	}
	ng := make([]*vgroup, k, room)
	fillNone(ng[copy(ng, c.g):])
	c.g, c.mine = ng, true
}

// root makes c's root table writable: its own copy if it shares one.
func (c *vclock) root() {
	if !c.mine {
		// make and copy, not an append to nil: growslice's size
		// arithmetic was a third of a copy's instructions, and a root is
		// copied at every write after a copy.
		ng := make([]*vgroup, len(c.g))
		copy(ng, c.g)
		c.g, c.mine = ng, true
	}
}

// group returns group gi of c, writable (see own): c's root is its own
// after.
func (c *vclock) group(gi int) *vgroup {
	if c.id == 0 {
		c.id = clockIDs.Add(1)
	}
	c.root()
	g := c.g[gi]
	if g.owner != c.id { // noGroup's 0 too
		ng := &vgroup{owner: c.id, b: g.b}
		c.g[gi] = ng
		g = ng
	}
	return g
}

// own returns block i of c, writable: a nil block becomes a zero block of
// c's own, one c did not make a private copy, and so does every group and
// root table on the way to it.
func (c *vclock) own(i int) *vblock {
	// Most writes are to a block c made since it was last copied: its
	// group's bit says so without reading the block. (Groups have
	// non-zero owners, so a c with id 0 fails.)
	if c.mine {
		if g := c.g[i>>grpBits]; g.owner == c.id && g.made&(1<<(i&grpMask)) != 0 {
			return g.b[i&grpMask]
		}
	}
	return c.ownCopy(i)
}

// ownCopy is own for a block that must be made or copied first.
func (c *vclock) ownCopy(i int) *vblock {
	g := c.group(i >> grpBits)
	k := i & grpMask
	if g.made&(1<<k) == 0 {
		nb := new(vblock)
		if b := g.b[k]; b != nil {
			nb.v = b.v
		}
		g.b[k] = nb
		g.made |= 1 << k
	}
	return g.b[k]
}

// take puts src's block b, shared, at k of c's writable group g: c may
// not write it in place.
func (g *vgroup) take(k int, b *vblock) {
	g.b[k] = b
	g.made &^= 1 << k
}

// copyFrom makes c a copy of src sharing src's groups and blocks, which
// neither writes in place from now on. A c whose root table is its own
// and large enough copies src's root into it (one pointer per group): c
// is a scratch copy about to be written, or a signal word reused, and src
// keeps its root. Otherwise c shares src's root, and whichever of the two
// writes first copies it.
func (c *vclock) copyFrom(src *vclock) {
	if c.mine && cap(c.g) >= len(src.g) {
		// Only the entries past src's length need clearing (for the
		// collector): the append overwrites the rest.
		if len(c.g) > len(src.g) {
			clear(c.g[len(src.g):])
		}
		c.g = append(c.g[:0], src.g...)
	} else {
		c.g, c.mine, src.mine = src.g, false, false
	}
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
func (c *vclock) reset() {
	if !c.mine && len(c.g) > 0 {
		c.g, c.mine = make([]*vgroup, len(c.g)), true
	}
	fillNone(c.g)
}

// truncate empties c, keeping its root table for reuse if it is c's own.
func (c *vclock) truncate() {
	if c.mine {
		clear(c.g)
		c.g = c.g[:0]
	} else {
		c.g = nil
	}
	c.n = 0
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
// a copy of a clock that is written later (a group or block dst takes from
// src freezes src), unless src is never written again.
func join(dst *vclock, src *vclock) bool {
	changed, _ := adoptAbove(dst, src, nil, -1, nil)
	return changed
}

// cert names the blocks of a join's destination that its source is known
// to hold at least (adoptAbove): none; every block but keep[:nkeep] (a
// core's own, acquireAbove); or every block the destination still shares
// with prev, the root of an earlier release of the same agent
// (acquireSig). It is a value, not a callback: adoptAbove asks it once per
// group and block of the clock, and an indirect call per block was a
// tenth of a 384-rank lint's joins.
type cert struct {
	kind  uint8
	nkeep uint8
	keep  [asm.NumPipes + 1]int32
	prev  []*vgroup
}

const (
	certNone   = iota
	certAllBut // every block but keep[:nkeep]
	certShared // every block shared with prev
)

// holdsGroup reports whether c vouches for every block of the
// destination's group gi, dg.
func (c *cert) holdsGroup(gi int, dg *vgroup) bool {
	switch c.kind {
	case certAllBut:
		for _, k := range c.keep[:c.nkeep] {
			if int(k>>grpBits) == gi {
				return false
			}
		}
		return true
	case certShared:
		return gi < len(c.prev) && dg == c.prev[gi] && dg != &noGroup
	}
	return false
}

// holds reports whether c vouches for block bi of the destination, db;
// pg is prev's group of bi (certShared).
func (c *cert) holds(bi int, db *vblock, pg *vgroup) bool {
	switch c.kind {
	case certAllBut:
		for _, k := range c.keep[:c.nkeep] {
			if int(k) == bi {
				return false
			}
		}
		return true
	case certShared:
		return pg != nil && db == pg.b[bi&grpMask] && db != nil
	}
	return false
}

// adoptAbove joins src into dst, reporting whether a component changed and
// whether one that changed is not local (local nil: none is), for a src
// known to hold at least dst's value of every component of a block that
// ct vouches for (nil: none): it takes
// those blocks of src without reading them, and joins the others
// componentwise. An adopted block counts as changed (and not local)
// whenever it is another block, unread. A group ct vouches for as a
// whole, or one dst has none of, is taken whole (src's group, shared),
// and a vouched group counts as changed whenever it is another group.
// local (nil: none) says which components are local, for remote.
//
// home is the block dst writes next (an agent's own core's block; -1:
// none): when dst may write it in place, src's is merged into it rather
// than taken, even where src's holds at least every component. A drain's
// pipes took their scalar's core block and copied it back at their next
// raise, and so did the scalar, frozen by the taking: a third of a
// 384-rank lint's block copies.
func adoptAbove(dst *vclock, src *vclock, ct *cert, home int, local func(i int32) bool) (changed, remote bool) {
	dst.extend(src.n)
	adopted := false
	for gi, sg := range src.g {
		dg := dst.g[gi]
		if sg == &noGroup || sg == dg {
			continue
		}
		if dg == &noGroup {
			// Adopt: every non-zero component of sg is news.
			dst.root()
			dst.g[gi] = sg
			adopted = true
			if changed && (remote || local == nil) {
				continue
			}
			for k, sb := range sg.b {
				if sb != nil {
					changed, remote = news(sb, (gi<<grpBits+k)<<blkBits, changed, remote, local)
				}
			}
			continue
		}
		if ct != nil && ct.holdsGroup(gi, dg) {
			// Every block of dg is at most sg's: take sg unread, as a
			// vouched-for block is taken, and count it as changed. (A
			// block of dg where sg has none is all zero.) Reading the
			// two groups to tell whether any block differs was a
			// fifth of a 384-rank lint's joins, in cache misses.
			dst.root()
			dst.g[gi] = sg
			adopted = true
			changed, remote = true, true
			continue
		}
		var wg *vgroup // dst's group gi, once made writable
		var pg *vgroup // prev's group gi (certShared)
		if ct != nil && ct.kind == certShared && gi < len(ct.prev) {
			pg = ct.prev[gi]
		}
		for k, sb := range sg.b {
			if wg != nil {
				dg = wg
			}
			db := dg.b[k]
			if sb == nil || sb == db {
				continue
			}
			bi := gi<<grpBits + k
			if ct != nil && ct.holds(bi, db, pg) {
				if wg == nil {
					wg = dst.group(gi)
				}
				wg.take(k, sb)
				adopted = true
				changed, remote = true, true
				continue
			}
			if db == nil {
				// Adopt: every non-zero component of sb is news.
				if wg == nil {
					wg = dst.group(gi)
				}
				wg.take(k, sb)
				adopted = true
				if changed && (remote || local == nil) {
					continue
				}
				changed, remote = news(sb, bi<<blkBits, changed, remote, local)
				continue
			}
			if bi == home && dg.owner == dst.id && dg.made&(1<<k) != 0 && dst.mine {
				// dst's own block, written in place: one pass that
				// merges and tells what changed.
				for j, v := range sb.v {
					if v > db.v[j] {
						db.v[j] = v
						changed = true
						if local != nil && !remote && !local(int32(bi<<blkBits+j)) {
							remote = true
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
				for j, v := range sb.v {
					if v > db.v[j] && !local(int32(bi<<blkBits+j)) {
						remote = true
						break
					}
				}
			}
			if wg == nil {
				wg = dst.group(gi)
			}
			if !lt {
				wg.take(k, sb)
				adopted = true
				continue
			}
			nb := dst.own(bi)
			for j, v := range sb.v {
				if v > nb.v[j] {
					nb.v[j] = v
				}
			}
		}
	}
	if adopted {
		src.freeze()
	}
	return changed, remote
}

// news reports, for a block sb adopted at component base into a place
// that held nothing, whether it brings a change and whether a changed
// component is not local, continuing from changed and remote.
func news(sb *vblock, base int, changed, remote bool, local func(i int32) bool) (bool, bool) {
	if changed && (remote || local == nil) {
		return changed, remote
	}
	for k, v := range sb.v {
		if v > 0 {
			changed = true
			if local == nil {
				break
			}
			if !local(int32(base + k)) {
				remote = true
				break
			}
		}
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
	if uint32(i) < uint32(c.n) { // and i >= 0
		if b := c.g[i>>(blkBits+grpBits)].b[(i>>blkBits)&grpMask]; b != nil {
			return b.v[i&blkMask]
		}
	}
	return 0
}

// each calls f on every non-zero component of c, in order.
func (c vclock) each(f func(i int32, v uint32)) {
	for gi, g := range c.g {
		for k, b := range g.b {
			if b == nil {
				continue
			}
			base := (gi<<grpBits + k) << blkBits
			for j, v := range b.v {
				if v > 0 {
					f(int32(base+j), v)
				}
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
