package hazard

import (
	"strings"

	"github.com/ptoasm/ptoasm/asm"
)

// Peeling. A loop `for %k = lo to hi step s` with s a constant but more than
// maxUnroll trips, or a trip count the pass does not know (a bound loaded
// from memory, rank-dependent, a loop variable of an outer loop), is run as
//
//	zero trips                      (hi - lo <= 0)
//	front trips  k = lo, lo+s, ..., each followed by an exit when the trip
//	             count may be exactly that many
//	middle trips lo + P·s <= k <= hi - P·s - 1, until the state repeats
//	back trips   k = hi - P·s, ..., hi - s (step 1; exact when both bounds
//	             are constants)
//
// with up to 2P front trips for the trip counts up to 2P and, for more,
// P front, at least one middle and P back trips. Front and back trips have k
// exact, or exact relative to a bound, so guards such as `%k > 0`,
// `%k + 1 < KT`, `%k < %n - 1` or `%k != N - 1` are decided on each; in the
// middle k is a symbol with those ranges, so they are decided there too.
// A guard the middle still splits near one end (`%k > 1` with P = 1) asks
// for more peeling: the loop is run again with a larger P (up to maxPeel),
// after taking back what the attempt reported. The middle also tracks k's
// residue modulo the moduli the body applies to k (`%k & 1`, `%k % 4`), so a
// double-buffered id is exact on every trip, and the first back trip takes
// only the middle states whose residue leads to it.

// loopInfo holds one loop's symbols: its variable in the middle trips, its
// bounds when they are not a symbol plus an offset, and the modulus of its
// variable's residue.
type loopInfo struct {
	k, lb, hb int32
	mod       int64
	// relevant is set when the body decides something with the loop
	// variable: a condition, a flag id or an inner loop's bound reads it
	// (directly or through lets). Other loops need no peeling.
	relevant bool
}

// loopCtx is a loop whose middle trips are running.
type loopCtx struct {
	k          int32
	lo, hi     bound
	step       int64
	peel, want int
}

// bound is a loop bound: symbol plus offset (symbol zero: a constant).
type bound struct {
	sym int32
	off int64
}

func (b bound) lin(add int64) lin {
	if b.sym == symZero {
		return constLin(b.off + add)
	}
	return lin{n: 1, s: [2]int32{b.sym}, m: [2]int64{1}, c: b.off + add}
}

func (c *checker) loopInfo(s *asm.CFor) *loopInfo {
	li := c.loops[s]
	if li == nil {
		li = &loopInfo{k: c.newSym(negInf, posInf, nil), lb: c.newSym(negInf, posInf, nil), hb: c.newSym(negInf, posInf, nil)}
		c.syms[li.k].loopVar = true
		li.mod, li.relevant = c.loopMod(s)
		c.loops[s] = li
	}
	return li
}

// boundOf writes l as a bound: itself when it is a constant or a symbol plus
// an offset, else a term for it, else (unknown) the loop's own symbol sym.
func (c *checker) boundOf(st *sstate, l lin, sym int32) bound {
	switch {
	case l.isConst():
		return bound{symZero, l.c}
	case !l.top && l.n == 1 && l.m[0] == 1:
		return bound{l.s[0], l.c}
	case !l.top:
		r := c.rangeOfLin(st, l)
		t := c.term("lin", r.lo, r.hi, l)
		return bound{t.s[0], 0}
	}
	return bound{sym, 0}
}

func (c *checker) pin(syms ...int32) {
	for _, s := range syms {
		c.pinned[s]++
	}
	c.npinned++
}

func (c *checker) unpin(syms ...int32) {
	for _, s := range syms {
		c.pinned[s]--
	}
	c.npinned--
	c.pinEpoch++ // gc may drop more now (sstate.gcAt)
}

// peeled runs loop s from st with the loop variable symbolic (see above).
func (c *checker) peeled(s *asm.CFor, st *sstate, lo, hi lin, step int64) []*sstate {
	li := c.loopInfo(s)
	if !li.relevant {
		return c.counted(s, li, st, lo, hi)
	}
	c.gc(st)
	res, _ := c.memoized(memoLoop{s, -1}, c.loopTouch(s, s.Body, s.From, s.To, s.Step), st, false, func() []*sstate {
		for p := 1; ; {
			snap := c.snapshot()
			out, want := c.peelRun(s, li, st.clone(), lo, hi, step, p)
			if want <= p || p >= maxPeel || c.aborted {
				return c.cap(out)
			}
			c.rollback(snap)
			p = min(want, maxPeel)
		}
	})
	return res
}

// counted runs a loop whose body decides nothing with its variable: zero
// trips (with hi - lo <= 0 assumed), or one or more with hi - lo > 0 and the
// variable unknown, until the state repeats.
func (c *checker) counted(s *asm.CFor, li *loopInfo, st *sstate, lo, hi lin) []*sstate {
	c.retire(st, li.lb)
	c.retire(st, li.hb)
	loB := c.boundOf(st, lo, li.lb)
	hiB := c.boundOf(st, hi, li.hb)
	d, _ := linAdd(hiB.lin(0), loB.lin(0), -1)
	zero, more := c.splitD(d, []*sstate{st}, 0)
	out := zero
	for _, x := range more {
		c.store(x, s.Slot, topLin)
		out = append(out, c.fixpoint(s.Body, x, false)...)
	}
	for _, x := range out {
		c.store(x, s.Slot, topLin)
	}
	return out
}

// splitD splits states on hi - lo <= v (first result) and hi - lo > v.
func (c *checker) splitD(d lin, states []*sstate, v int64) (le, gt []*sstate) {
	for _, x := range states {
		y := c.fork(x)
		if c.assumeCmp(x, linAddConst(d, -v), "<=") {
			le = append(le, x)
		}
		if c.assumeCmp(y, linAddConst(d, -v), ">") {
			gt = append(gt, y)
		}
	}
	return le, gt
}

func (c *checker) peelRun(s *asm.CFor, li *loopInfo, st *sstate, lo, hi lin, step int64, p int) (out []*sstate, want int) {
	c.retire(st, li.k)
	c.retire(st, li.lb)
	c.retire(st, li.hb)
	loB := c.boundOf(st, lo, li.lb)
	hiB := c.boundOf(st, hi, li.hb)
	c.pin(li.k, li.lb, li.hb)
	defer c.unpin(li.k, li.lb, li.hb)
	parent := st.iter
	d, _ := linAdd(hiB.lin(0), loB.lin(0), -1)
	ps := int64(p) * step

	m := li.mod
	starts := []*sstate{st}
	if _, ok := c.modOf(st, loB.lin(0), m); m > 1 && !ok {
		// lo's residue is unknown: one path per residue, before the front
		// trips, so `%k & 1` is exact on those too.
		starts = nil
		for r := range m {
			y := c.fork(st)
			if c.assumeMod(y, loB.sym, m, r-loB.off) {
				starts = append(starts, y)
			}
		}
	}
	zero, cur := c.splitD(d, starts, 0)
	out = append(out, zero...)
	var mid []*sstate
	for i := 0; i < 2*p && len(cur) > 0; i++ {
		if i == p {
			cur, mid = c.splitD(d, cur, 2*ps)
			if len(cur) == 0 {
				break
			}
		}
		for _, x := range cur {
			c.setLoopVar(x, li, s.Slot, loB.lin(int64(i)*step), parent)
		}
		o, b := c.block(s.Body, cur)
		out = append(out, b...)
		c.forget(o, c.lv.deadHead[s])
		var ex []*sstate
		ex, cur = c.splitD(d, c.cap(o), int64(i+1)*step)
		out = append(out, ex...)
	}
	if len(mid) == 0 {
		return c.endLoop(li, s.Slot, out, parent), p
	}

	// Middle trips: the residue of the first one's k is that of lo + P·s.
	var in []*sstate
	var res []int64
	for _, x := range mid {
		r, ok := c.modOf(x, loB.lin(ps), m)
		if m <= 1 || !ok {
			r = -1
		}
		in, res = append(in, x), append(res, r)
	}
	ctx := &loopCtx{k: li.k, lo: loB, hi: hiB, step: step, peel: p, want: p}
	c.active = append(c.active, ctx)
	after, brk := c.middle(s, li, in, res, loB, hiB, step, p, parent)
	c.active = c.active[:len(c.active)-1]
	out = append(out, brk...)

	// Back trips, from the states after at least one middle trip; rs is
	// each one's residue of k on the first back trip (-1: not tracked).
	cur = nil
	var rs []int64
	for _, x := range after {
		r := int64(-1)
		if m > 1 {
			if j := findFact(x, li.k, symZero, factMod); j >= 0 {
				r = (x.facts[j].lo + step) % m
			}
		}
		k0 := c.backK(li, loB, hiB, step, p, 0)
		ok := true
		if r >= 0 {
			switch {
			case k0.isConst():
				ok = ((k0.c%m)+m)%m == r
			case k0.s[0] != li.k:
				ok = c.assumeMod(x, k0.s[0], m, r-k0.c)
			}
		}
		if ok {
			cur, rs = append(cur, x), append(rs, r)
		}
	}
	for j := 0; j < p && len(cur) > 0; j++ {
		var next []*sstate
		var nrs []int64
		kv := c.backK(li, loB, hiB, step, p, j)
		for i, x := range cur {
			c.setLoopVar(x, li, s.Slot, kv, parent)
			ok := true
			if !kv.isConst() && kv.s[0] == li.k {
				// k is the loop's symbol: bind it to this trip.
				ok = c.assume(x, li.k, hiB.sym, rng{hiB.off - int64(p-j)*step, hiB.off - int64(p-j-1)*step - 1}) &&
					c.assume(x, li.k, loB.sym, rng{loB.off + int64(p+1+j)*step, posInf})
				if ok && rs[i] >= 0 {
					ok = c.assumeMod(x, li.k, m, rs[i]+int64(j)*step)
				}
			}
			if ok {
				next, nrs = append(next, x), append(nrs, rs[i])
			}
		}
		o, b := c.block(s.Body, next)
		out = append(out, b...)
		c.forget(o, c.lv.deadHead[s])
		if len(o) != len(next) {
			nrs = nil // the body split or dropped paths: residues no longer line up
		}
		cur, rs = o, nrs
		if rs == nil {
			rs = make([]int64, len(cur))
			for i := range rs {
				rs[i] = -1
			}
		}
	}
	out = append(out, cur...)
	return c.endLoop(li, s.Slot, out, parent), ctx.want
}

// backK is k on back trip j: hi - (P - j)·s for step 1 or constant bounds,
// else the loop's symbol (bound by the caller).
func (c *checker) backK(li *loopInfo, loB, hiB bound, step int64, p, j int) lin {
	switch {
	case loB.sym == symZero && hiB.sym == symZero:
		n := (hiB.off - loB.off + step - 1) / step
		return constLin(loB.off + (n-1-int64(p-1-j))*step)
	case step == 1:
		return hiB.lin(-int64(p - j))
	}
	return lin{n: 1, s: [2]int32{li.k}, m: [2]int64{1}}
}

// endLoop leaves the loop variable unknown after the loop.
func (c *checker) endLoop(li *loopInfo, slot int, out []*sstate, parent []int64) []*sstate {
	for _, x := range out {
		c.retire(x, li.k)
		c.store(x, slot, topLin)
		x.iter = parent
	}
	return out
}

// middle runs the middle trips from in (res: each one's residue of k, -1
// when not tracked) until no new state appears, widening at the loop head,
// and returns the distinct states after one or more trips, and those that
// left with break.
func (c *checker) middle(s *asm.CFor, li *loopInfo, in []*sstate, res []int64, loB, hiB bound, step int64, p int, parent []int64) (after, brk []*sstate) {
	m := li.mod
	ps := int64(p) * step
	bind := func(states []*sstate, res []int64) []*sstate {
		var out []*sstate
		for i, x := range states {
			c.setLoopVar(x, li, s.Slot, lin{n: 1, s: [2]int32{li.k}, m: [2]int64{1}}, parent)
			ok := c.assume(x, li.k, loB.sym, rng{loB.off + ps, posInf}) &&
				c.assume(x, li.k, hiB.sym, rng{negInf, hiB.off - ps - 1})
			if ok && res[i] >= 0 {
				ok = c.assumeMod(x, li.k, m, res[i])
			}
			if ok {
				out = append(out, x)
			}
		}
		return out
	}
	if len(in) == 0 {
		return nil, nil
	}
	cur := bind(in, res)
	if len(cur) == 0 {
		return nil, nil
	}
	w := c.newWidener(s, cur[0])
	for _, x := range cur[1:] {
		w.observe(x)
	}
	seen := map[string]bool{}
	limit := maxFixpoint + 2*int(max(m, 1))
	for n := 0; n < limit && len(cur) > 0; n++ {
		next, b := c.block(s.Body, cur)
		brk = append(brk, b...)
		c.forget(next, c.lv.deadHead[s])
		next = c.cap(next)
		fresh := c.widenNew(w, next, seen, &after)
		res = res[:0]
		for _, x := range fresh {
			r := int64(-1)
			if m > 1 {
				if j := findFact(x, li.k, symZero, factMod); j >= 0 {
					r = (x.facts[j].lo + step) % m
				}
			}
			res = append(res, r)
		}
		cur = bind(fresh, res)
	}
	for _, x := range after {
		w.apply(x)
	}
	return after, brk
}

// noteSplit is called when a condition splits a path on d: if d is about the
// loop variable of a loop in its middle trips and one side is within a few
// trips of either end, that loop asks to be peeled deeper.
func (c *checker) noteSplit(d lin, t, f *sstate) {
	for _, ctx := range c.active {
		if !(d.n >= 1 && d.s[0] == ctx.k) && !(d.n == 2 && d.s[1] == ctx.k) {
			continue
		}
		s := ctx.step
		ps := int64(ctx.peel) * s
		for _, x := range []*sstate{t, f} {
			lo := c.diffRange(x, ctx.k, ctx.lo.sym)
			if lo.hi < posInf {
				if n := lo.hi - ctx.lo.off - ps; n >= 0 && n < maxPeel*s {
					ctx.want = max(ctx.want, ctx.peel+int(n/s)+1)
				}
			}
			hi := c.diffRange(x, ctx.k, ctx.hi.sym)
			if hi.lo > negInf {
				if n := (hiOffEnd(ctx, ps)) - hi.lo; n >= 0 && n < maxPeel*s {
					ctx.want = max(ctx.want, ctx.peel+int(n/s)+1)
				}
			}
		}
	}
}

// hiOffEnd is the largest k - hi.sym of a middle trip.
func hiOffEnd(ctx *loopCtx, ps int64) int64 { return ctx.hi.off - ps - 1 }

// loopMod is the modulus of loop s's variable whose residue the middle trips
// track: the lcm of the moduli (`& 1`, `& 3`, `% 4`) the body applies to
// expressions of the variable, directly or through lets, up to maxMod.
//
// relevant says whether a condition, a flag id or an inner loop bound reads
// the variable.
func (c *checker) loopMod(s *asm.CFor) (mod int64, relevant bool) {
	derived := map[int]bool{s.Slot: true}
	reads := func(e asm.Expr) bool {
		found := false
		walkRefs(e, func(r *asm.Ref) {
			if slot, ok := c.slots[strings.TrimPrefix(r.Name, "%")]; ok && derived[slot] {
				found = true
			}
		})
		return found
	}
	var lets []*asm.CLet
	var exprs, decisive []asm.Expr
	add := func(x asm.CExpr) {
		if x.Src != nil && !x.Const {
			exprs = append(exprs, x.Src)
		}
	}
	decides := func(x asm.CExpr) {
		add(x)
		if x.Src != nil && !x.Const {
			decisive = append(decisive, x.Src)
		}
	}
	walkStmts(s.Body, func(st asm.CStmt) {
		switch st := st.(type) {
		case *asm.CLet:
			lets = append(lets, st)
			add(st.X)
			if st.X.Src != nil && isCond(st.X.Src) {
				decisive = append(decisive, st.X.Src)
			}
		case *asm.CIf, *asm.CWhile, *asm.CFor:
			decidingExprs(st, decides)
		case *asm.COp:
			decidingExprs(st, decides)
			for _, a := range st.Args {
				add(a.Val)
				add(a.TileIdx)
				add(a.Rank)
				for _, x := range a.Idx {
					add(x)
				}
			}
			for _, a := range st.Attrs {
				add(a.Val)
			}
		}
	})
	for grew := true; grew; {
		grew = false
		for _, l := range lets {
			if !derived[l.Slot] && l.X.Src != nil && reads(l.X.Src) {
				derived[l.Slot], grew = true, true
			}
		}
	}
	m := int64(1)
	relevant = false
	var walk func(e asm.Expr)
	walk = func(e asm.Expr) {
		switch e := e.(type) {
		case *asm.Paren:
			walk(e.X)
		case *asm.Unary:
			walk(e.X)
		case *asm.Call:
			for _, a := range e.Args {
				walk(a)
			}
		case *asm.Binary:
			walk(e.X)
			walk(e.Y)
			var mod int64
			if v, ok := c.constOf(e.Y); ok && reads(e.X) {
				switch {
				case e.Op == "&" && v > 0 && v&(v+1) == 0:
					mod = (v + 1) * c.divisor(e.X)
				case e.Op == "%" && v > 1:
					mod = v * c.divisor(e.X)
				}
			} else if v, ok := c.constOf(e.X); ok && e.Op == "&" && v > 0 && v&(v+1) == 0 && reads(e.Y) {
				mod = (v + 1) * c.divisor(e.Y)
			}
			if mod > 1 && mod <= maxMod {
				if l := m / gcd(m, mod) * mod; l <= maxMod {
					m = l
				}
			}
		}
	}
	for _, e := range exprs {
		walk(e)
	}
	for _, e := range decisive {
		relevant = relevant || reads(e)
	}
	return m, relevant
}

// divisor is d when e is x / d with d a positive constant (the residue of
// (x / d) mod m needs x's mod d·m), else 1.
func (c *checker) divisor(e asm.Expr) int64 {
	for {
		p, ok := e.(*asm.Paren)
		if !ok {
			break
		}
		e = p.X
	}
	if b, ok := e.(*asm.Binary); ok && b.Op == "/" {
		if d, ok := c.constOf(b.Y); ok && d > 0 {
			return d * c.divisor(b.X)
		}
	}
	return 1
}

// constOf is e's value when it is a number or a named constant.
func (c *checker) constOf(e asm.Expr) (int64, bool) {
	switch e := e.(type) {
	case *asm.Num:
		return e.Int, !e.IsFloat
	case *asm.Paren:
		return c.constOf(e.X)
	case *asm.Name:
		v, ok := c.consts[e.Name]
		return v, ok
	case *asm.Binary:
		x, okx := c.constOf(e.X)
		y, oky := c.constOf(e.Y)
		if okx && oky {
			return binopInt(e.Op, x, y, false)
		}
	}
	return 0, false
}
