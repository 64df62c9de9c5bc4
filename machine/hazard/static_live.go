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
// after each statement (deadIn, deadOut: slots, nil when none) and at each
// loop's head (deadHead, by its statement; fixpoint's by its body's first
// statement).
type liveness struct {
	n        int
	deadIn   map[asm.CStmt][]int
	deadOut  map[asm.CStmt][]int
	deadHead map[any][]int
}

// computeLiveness finds the dead registers of c.k's body.
func (c *checker) computeLiveness() *liveness {
	lv := &liveness{n: len(c.k.Regs), deadIn: map[asm.CStmt][]int{}, deadOut: map[asm.CStmt][]int{}, deadHead: map[any][]int{}}
	c.liveBlock(lv, c.k.Body, newRegSet(lv.n), newRegSet(lv.n))
	return lv
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
// them and brk after the innermost loop, recording the dead sets. A loop
// body runs until its head's set stops growing; the sets the last round
// records are the fixpoint's.
func (c *checker) liveBlock(lv *liveness, stmts []asm.CStmt, out, brk regSet) regSet {
	live := out.clone()
	for i := len(stmts) - 1; i >= 0; i-- {
		s := stmts[i]
		lv.deadOut[s] = lv.dead(live)
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
			// The head: what leaves (out, less the variable the loop
			// leaves unknown), the bounds each trip reads and the body.
			after := live.clone()
			after.del(s.Slot)
			head := after.clone()
			c.readsInto(head, s.To)
			c.readsInto(head, s.Step)
			head.add(s.Slot)
			for {
				in := c.liveBlock(lv, s.Body, head, after)
				next := head.clone()
				next.union(in)
				if next.equal(head) {
					break
				}
				head = next
			}
			lv.deadHead[s] = lv.dead(head)
			if len(s.Body) > 0 {
				lv.deadHead[&s.Body[0]] = lv.deadHead[s]
			}
			live = head
			live.del(s.Slot)
			c.readsInto(live, s.From)
			c.readsInto(live, s.To)
			c.readsInto(live, s.Step)
		case *asm.CWhile:
			after := live.clone()
			head := after.clone()
			c.readsInto(head, s.Cond)
			for {
				in := c.liveBlock(lv, s.Body, head, after)
				next := head.clone()
				next.union(in)
				if next.equal(head) {
					break
				}
				head = next
			}
			lv.deadHead[s] = lv.dead(head)
			live = head
		case *asm.CBreak:
			live = brk.clone()
		}
		lv.deadIn[s] = lv.dead(live)
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
