package hazard

import (
	"fmt"
	"math"
	"slices"

	"github.com/ptoasm/ptoasm/machine"
)

// An agent rewriting a cell only it has touched (the cube's L0C chain).
//
// Each TMATMUL.ACC reads its L0C tile and writes it back in place, with no
// pipe_barrier M before the next: the write meets the cube's last mad (not
// ordered before it), the one before (kept beside it, ordered), the cube's
// own read of this mad and an early read of the chain. Every pair among
// them is of one agent whose same-pipe races are off (SamePipe.M), so the
// general write path (accessCell) reports nothing, notes nothing (selfRaced
// tells each pair from the accesses), moves nothing (raceKey has no key for
// such a pair) and keeps no ghost (leaves skips such pairs): of its 1 100
// instructions a mad, what changes is the cell's state. ownRewrite finds
// that case and rewriteOwn makes just that change; under checkShortcuts
// the general path runs and checkOwnRewrite compares the two.

// ownRewrite does accessCell's write of plain write r to cell c by
// rewriteOwn when it may, and reports whether it did: r's agent's
// same-pipe races are off (the caller asks first: most writes are not),
// its lag tells its own orderings (selfOrdered), no ghost waits and the
// cell keeps no uninitialised read nor shadowed read of another agent
// (sreads, which the general path meets), and every access the cell holds is a
// plain one of r's agent and run generation, no later than r, none kept
// shadowed.
func (d *Detector) ownRewrite(r *rec, acc *machine.Access, c *cell, g geo) bool {
	if r.atomic || r.lag == math.MaxUint16 || len(d.ghosts) > 0 || c.hasUninit() || c.hasSReads() {
		return false
	}
	if c.hasW && !ownPrior(&c.w, r) || c.hasR && !ownPrior(&c.read0, r) {
		return false
	}
	for x := range c.reads {
		if !ownPrior(&c.reads[x], r) {
			return false
		}
	}
	if c.lists != nil {
		for x, adds := 0, c.lists.adds; x < len(adds); x++ {
			if !ownPrior(&adds[x], r) || adds[x].shadowed() {
				return false
			}
		}
	}
	if checkShortcuts {
		if checkingRewrite {
			return false // the general path, for checkOwnRewrite
		}
		d.checkOwnRewrite(r, acc, c, g)
		return true
	}
	d.rewriteOwn(c, r, acc)
	return true
}

// ownPrior reports whether e is a plain access of r's agent and run
// generation no later than r.
func ownPrior(e, r *rec) bool {
	return e.agent == r.agent && e.gen == r.gen && e.epoch <= r.epoch && !e.atomic
}

// ownOrdered is ordered(e, r) for e with ownPrior(e, r) and r's lag not
// saturated: one instance, or covered by the agent's own component.
func ownOrdered(e, r *rec) bool {
	return e.epoch == r.epoch || r.epoch-uint32(r.lag) >= e.epoch
}

// rewriteOwn is accessCell's write path for plain write r of cell c when
// ownRewrite holds. What the general path still does then:
//
//   - Every read stays (its agent is r's: keep0 or kept), marked raced
//     once r races it or it is r's own instance's; a read marked already
//     stays marked, so racesKeptBy need not be asked.
//   - The other writes r is ordered after leave (shadows: a write of an
//     agent whose same-pipe races are off is never kept shadowed), those it
//     is not stay, and the last write joins them unless r is ordered after
//     it (putW, with its history bound and prune).
//
// Nothing else: each race, note, move and ghost of the general path is of
// a pair of r's agent.
func (d *Detector) rewriteOwn(c *cell, r *rec, acc *machine.Access) {
	after := c.hasW && ownOrdered(&c.w, r)
	if c.hasR && !c.read0.raced {
		c.read0.raced = !ownOrdered(&c.read0, r) || sameInstance(&c.read0, r)
	}
	for x := range c.reads {
		if rd := &c.reads[x]; !rd.raced {
			rd.raced = !ownOrdered(rd, r) || sameInstance(rd, r)
		}
	}
	first := c.firstW && !after // as the general path's
	n := 0
	if c.lists != nil {
		adds := c.lists.adds
		for x := range adds {
			if !ownOrdered(&adds[x], r) {
				adds[n] = adds[x]
				n++
			}
		}
		first = first && n == len(adds)
		c.setAdds(adds[:n])
	}
	if c.hasW && !after {
		c.setAdds(d.putW(c, c.adds(), &c.w, acc))
		first = first && len(c.adds()) == n+1
	}
	c.firstW = !c.written || first
	if c.lists != nil {
		c.lists.kept = false // (the writes it drops are not counted)
	}
	c.w, c.hasW, c.written = *r, true, true
}

// ownRewrites counts the writes checkOwnRewrite compared; checkingRewrite
// is set while it runs the general path.
var (
	ownRewrites     int
	checkingRewrite bool
)

// cellState is what accessCell leaves in a cell, for checkOwnRewrite.
type cellState struct {
	written, hasW, firstW, hasR bool
	w, read0                    rec
	reads, adds, sreads         []rec
}

func stateOf(c *cell) cellState {
	return cellState{c.written, c.hasW, c.firstW, c.hasR, c.w, c.read0, slices.Clone(c.reads), slices.Clone(c.adds()), slices.Clone(c.sreads())}
}

// checkOwnRewrite runs rewriteOwn on a copy of cell c, then the general
// write path on c itself, and panics unless both leave the same state and
// the general path reported, moved and kept as a ghost nothing.
func (d *Detector) checkOwnRewrite(r *rec, acc *machine.Access, c *cell, g geo) {
	shortcuts++
	ownRewrites++
	cp := &cell{lo: c.lo, hi: c.hi, written: c.written, hasW: c.hasW, firstW: c.firstW, hasR: c.hasR,
		w: c.w, read0: c.read0, reads: slices.Clone(c.reads)}
	cp.setAdds(slices.Clone(c.adds()))
	notes, moved := len(d.notes), len(d.moved)
	d.rewriteOwn(cp, r, acc)
	checkingRewrite = true
	lo, hi := int64(-1), int64(-1)
	d.accessCell(r, acc, c, g, &lo, &hi)
	checkingRewrite = false
	fast, slow := stateOf(cp), stateOf(c)
	if len(d.notes) != notes || len(d.moved) != moved || len(d.ghosts) > 0 {
		panic(fmt.Sprintf("hazard: agent %d's rewrite of a cell of its own reported %d races, moved %d and kept %d ghosts", r.agent, len(d.notes)-notes, len(d.moved)-moved, len(d.ghosts)))
	}
	if fmt.Sprint(fast) != fmt.Sprint(slow) {
		panic(fmt.Sprintf("hazard: agent %d's rewrite of a cell of its own at epoch %d:\nrewriteOwn %+v\naccessCell %+v", r.agent, r.epoch, fast, slow))
	}
}

// lastPruned counts the checks of checkLastPruned.
var lastPruned int

// checkLastPruned panics unless prunePrior, which took a list of k
// entries to k2 leaving n earlier instances of the site, dropped exactly
// the one instance putSite replaces in place when last holds.
func checkLastPruned(last bool, k, k2, n int) {
	if !last {
		return
	}
	shortcuts++
	lastPruned++
	if k2 != k-1 || n != 0 {
		panic(fmt.Sprintf("hazard: putSite would replace the last of %d entries in place; prunePrior left %d with %d instances", k, k2, n))
	}
}
