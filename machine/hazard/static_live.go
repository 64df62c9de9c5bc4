package hazard

import (
	"strings"

	"github.com/ptoasm/ptoasm/asm"
)

// Dead registers. A register whose value no later statement reads before a
// let, a load or a loop overwrites it cannot change anything the pass
// decides, yet two paths that differ only there stay two paths, and a loop
// entered with it is a new memo entry. grouped_gemm's expert loop came back
// to its head with the last expert's row count, tile count, ragged row count
// and slot id in registers (and the facts about them), each overwritten
// before it is read again: 23 states at the head of each expert where the
// flags and the live registers allow 2. So the pass forgets (makes unknown)
// the dead registers where paths meet: before a loop (its memo key), after
// an if or a loop, and at a loop's head after each trip.
//
// Reads are those of the pass (valueRegs): flag ids, conditions, loop
// bounds and the lets of live registers. A loop variable is live at the end
// of its body (its next value is computed from it).

// regSet is a set of register slots.
type regSet []uint64

func newRegSet(n int) regSet { return make(regSet, (n+63)/64) }

func (s regSet) has(i int) bool { return s[i/64]&(1<<(i%64)) != 0 }

func (s regSet) add(i int) {
	if i >= 0 && i/64 < len(s) {
		s[i/64] |= 1 << (i % 64)
	}
}

func (s regSet) del(i int) {
	if i >= 0 && i/64 < len(s) {
		s[i/64] &^= 1 << (i % 64)
	}
}

func (s regSet) union(o regSet) {
	for i := range s {
		s[i] |= o[i]
	}
}

func (s regSet) clone() regSet { return append(regSet(nil), s...) }

func (s regSet) equal(o regSet) bool {
	for i := range s {
		if s[i] != o[i] {
			return false
		}
	}
	return true
}

// liveness holds the dead registers where the pass forgets them: before and
// after each loop and if (deadIn, deadOut: slots, nil when none) and at each
// loop's head (deadHead, by its statement; fixpoint's by its body's first
// statement). The computation records the live sets (liveIn, liveOut,
// liveHead) and keeps heads, the registers live at each loop's head so far.
type liveness struct {
	n               int
	deadIn, deadOut map[asm.CStmt][]int
	deadHead        map[any][]int
	liveIn, liveOut map[asm.CStmt]regSet
	liveHead, heads map[any]regSet
	changed         bool
}

// maxLivePasses bounds the passes over the body computeLiveness makes; past
// it every register is live (nothing is forgotten).
const maxLivePasses = 64

// computeLiveness finds the dead registers of c.k's body. Each pass walks
// the body once, backwards, taking each loop's head set from the pass
// before, and the passes repeat until no head set grows (one more than the
// loops nest, usually): a loop that iterated its own body to a fixpoint
// would walk a body nested d deep 2^d times.
func (c *checker) computeLiveness() *liveness {
	n := len(c.k.Regs)
	lv := &liveness{n: n, heads: map[any]regSet{}, deadIn: map[asm.CStmt][]int{}, deadOut: map[asm.CStmt][]int{}, deadHead: map[any][]int{}}
	for range maxLivePasses {
		lv.liveIn, lv.liveOut, lv.liveHead = map[asm.CStmt]regSet{}, map[asm.CStmt]regSet{}, map[any]regSet{}
		lv.changed = false
		c.liveBlock(lv, c.k.Body, newRegSet(n), newRegSet(n))
		if !lv.changed {
			for s, l := range lv.liveIn {
				lv.deadIn[s] = lv.dead(l)
			}
			for s, l := range lv.liveOut {
				lv.deadOut[s] = lv.dead(l)
			}
			for s, l := range lv.liveHead {
				lv.deadHead[s] = lv.dead(l)
			}
			break
		}
	}
	lv.liveIn, lv.liveOut, lv.liveHead, lv.heads = nil, nil, nil, nil
	return lv
}

// loopHead is loop's head set for this pass: the last pass's, with base
// (what leaves the loop and what each trip's test reads); the body's live
// set in, once walked, grows it for the next pass.
func (lv *liveness) loopHead(loop any, base regSet) regSet {
	h := base.clone()
	if old, ok := lv.heads[loop]; ok {
		h.union(old)
	}
	return h
}

func (lv *liveness) growHead(loop any, head, in regSet) regSet {
	next := head.clone()
	next.union(in)
	if old, ok := lv.heads[loop]; !ok || !old.equal(next) {
		lv.heads[loop] = next
		lv.changed = true
	}
	return next
}

// dead lists the slots not in s.
func (lv *liveness) dead(s regSet) []int {
	var out []int
	for i := range lv.n {
		if !s.has(i) {
			out = append(out, i)
		}
	}
	return out
}

// readsInto adds the registers x reads to s.
func (c *checker) readsInto(s regSet, x asm.CExpr) {
	if x.Src == nil || x.Const {
		return
	}
	walkRefs(x.Src, func(r *asm.Ref) {
		if slot, ok := c.slots[strings.TrimPrefix(r.Name, "%")]; ok {
			s.add(slot)
		}
	})
}

// liveBlock returns the registers live before stmts when out is live after
// them and brk after the innermost loop, recording the dead sets.
func (c *checker) liveBlock(lv *liveness, stmts []asm.CStmt, out, brk regSet) regSet {
	live := out.clone()
	for i := len(stmts) - 1; i >= 0; i-- {
		s := stmts[i]
		compound := false
		switch s.(type) {
		case *asm.CIf, *asm.CFor, *asm.CWhile:
			compound = true
			lv.liveOut[s] = live.clone()
		}
		switch s := s.(type) {
		case *asm.COp:
			if s.Info != nil && (s.Info.Op == asm.OpSetFlag || s.Info.Op == asm.OpWaitFlag) {
				if len(s.Args) >= 3 {
					c.readsInto(live, s.Args[2].Val)
				}
				break
			}
			for _, a := range s.Args {
				if s.Info != nil && a.Kind == asm.ArgReg {
					live.del(a.Slot) // a load writes it (checker.op)
				}
			}
		case *asm.CLet:
			if s.Slot >= 0 && s.Slot < lv.n && live.has(s.Slot) {
				live.del(s.Slot)
				c.readsInto(live, s.X)
			}
		case *asm.CIf:
			t := c.liveBlock(lv, s.Then, live, brk)
			e := c.liveBlock(lv, s.Else, live, brk)
			live = t
			live.union(e)
			c.readsInto(live, s.Cond)
		case *asm.CFor:
			// The head: what leaves (less the variable, which the loop
			// leaves unknown), the bounds each trip reads, the variable
			// (its next value) and what the body reads first.
			after := live.clone()
			after.del(s.Slot)
			base := after.clone()
			c.readsInto(base, s.To)
			c.readsInto(base, s.Step)
			base.add(s.Slot)
			head := lv.loopHead(s, base)
			head = lv.growHead(s, head, c.liveBlock(lv, s.Body, head, after))
			lv.liveHead[s] = head
			if len(s.Body) > 0 {
				lv.liveHead[&s.Body[0]] = head
			}
			live = head.clone()
			live.del(s.Slot)
			c.readsInto(live, s.From)
			c.readsInto(live, s.To)
			c.readsInto(live, s.Step)
		case *asm.CWhile:
			after := live.clone()
			base := after.clone()
			c.readsInto(base, s.Cond)
			head := lv.loopHead(s, base)
			head = lv.growHead(s, head, c.liveBlock(lv, s.Body, head, after))
			lv.liveHead[s] = head
			live = head.clone()
		case *asm.CBreak:
			live = brk.clone()
		}
		if compound {
			lv.liveIn[s] = live.clone()
		}
	}
	return live
}

// forget makes the registers dead lists unknown on every state of states.
func (c *checker) forget(states []*sstate, dead []int) {
	if len(dead) == 0 || c.lv == nil {
		return
	}
	for _, st := range states {
		for _, i := range dead {
			if st.syms[i] != symTop {
				st.setReg(i, symTop, 0)
			}
		}
	}
}
