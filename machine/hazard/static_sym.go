package hazard

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

	"github.com/ptoasm/ptoasm/asm"
)

// The static pass's values. A register holds a constant, an unknown (top), or
// a symbol plus an offset. A symbol names one value the pass cannot compute
// but can reason about: a launch value (rank, block_idx, subblock_idx, ...),
// the value a scalar load returned, a loop variable in the middle of a loop
// of many or unknown trips, a loop bound, or a term — an expression over other
// symbols the pass cannot fold (%done >> %x, %f >= EPOCH, min(%a, %b)),
// numbered by its shape so that the same expression of the same values is the
// same symbol. Each path carries facts about its symbols: a range of a - b
// (b may be the constant zero), a - b != v, a ≡ r (mod m). A condition the
// pass cannot decide splits the path into one that holds it and one that
// does not, each with the fact that says so; a later condition on the same
// values is then decided on each path (two `if subblock_idx == 0` take the
// same branch).

const (
	symTop  int32 = -1
	symZero int32 = 0
	// posInf and negInf stand for unbounded ends of a range; arithmetic
	// saturates at them.
	posInf = int64(1) << 60
	negInf = -posInf
)

// Fact kinds.
const (
	factRange uint8 = iota // a - b in [lo, hi]
	factNE                 // a - b != lo
	factMod                // a ≡ lo (mod hi); b is zero
)

type fact struct {
	a, b   int32
	kind   uint8
	lo, hi int64
}

func factLess(x, y *fact) int {
	switch {
	case x.a != y.a:
		return int(x.a - y.a)
	case x.b != y.b:
		return int(x.b - y.b)
	case x.kind != y.kind:
		return int(x.kind) - int(y.kind)
	case x.lo != y.lo:
		if x.lo < y.lo {
			return -1
		}
		return 1
	}
	return 0
}

// symInfo describes one symbol: its range on every path and, for a term, the
// base symbols (loads, loop variables, bounds) it was computed from, so that
// rebinding one of those forgets the term too.
type symInfo struct {
	lo, hi int64
	deps   []int32
	// loopVar marks a loop variable's symbol.
	loopVar bool
	// divX and divD describe a term x / d (d > 0), whose residues follow
	// from x's: (x / d) mod m = (x mod d·m) / d when x >= 0.
	divX lin
	divD int64
}

// The launch values' symbols.
var builtinSyms = map[string]int32{"rank": 1, "nranks": 2, "block_idx": 3, "subblock_idx": 4, "block_num": 5}

const numBuiltinSyms = 5

func (c *checker) initSyms() {
	c.syms = []symInfo{
		{lo: 0, hi: 0},
		{lo: 0, hi: posInf}, // rank
		{lo: 1, hi: posInf}, // nranks
		{lo: 0, hi: posInf}, // block_idx
		{lo: 0, hi: 1},      // subblock_idx: 0 or 1 on the two AIVs
		{lo: 1, hi: posInf}, // block_num
	}
	c.terms = map[string]int32{}
	c.pinned = make([]int32, len(c.syms))
}

func (c *checker) newSym(lo, hi int64, deps []int32) int32 {
	c.syms = append(c.syms, symInfo{lo: lo, hi: hi, deps: deps})
	c.pinned = append(c.pinned, 0)
	return int32(len(c.syms) - 1)
}

// dependsOn reports whether symbol s is x or was computed from x.
func (c *checker) dependsOn(s, x int32) bool {
	return s == x || (s > 0 && slices.Contains(c.syms[s].deps, x))
}

// fromLoopVar reports whether l depends on a loop variable's symbol.
func (c *checker) fromLoopVar(l lin) bool {
	for i := range l.n {
		s := l.s[i]
		if c.syms[s].loopVar {
			return true
		}
		for _, d := range c.syms[s].deps {
			if c.syms[d].loopVar {
				return true
			}
		}
	}
	return false
}

// lin is an expression's value during evaluation: c + m[0]·s[0] + m[1]·s[1]
// over the first n symbols, or unknown.
type lin struct {
	top bool
	n   int
	s   [2]int32
	m   [2]int64
	c   int64
}

var topLin = lin{top: true}

func constLin(v int64) lin { return lin{c: v} }

func (l lin) isConst() bool { return !l.top && l.n == 0 }

func sat(x int64) int64 { return min(max(x, negInf), posInf) }

func addSat(a, b int64) int64 {
	if a <= negInf || b <= negInf {
		if a >= posInf || b >= posInf {
			return 0
		}
		return negInf
	}
	if a >= posInf || b >= posInf {
		return posInf
	}
	return sat(a + b)
}

func mulSat(a, m int64) int64 {
	switch {
	case m == 0 || a == 0:
		return 0
	case a >= posInf || a <= negInf:
		if (a > 0) == (m > 0) {
			return posInf
		}
		return negInf
	}
	if abs64(a) > posInf/abs64(m) {
		if (a > 0) == (m > 0) {
			return posInf
		}
		return negInf
	}
	return a * m
}

func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// linAdd is x + k·y, or ok=false when more than two symbols would remain.
func linAdd(x, y lin, k int64) (lin, bool) {
	if x.top || y.top {
		return topLin, true
	}
	out := x
	out.c += k * y.c
	for i := range y.n {
		j := 0
		for j < out.n && out.s[j] != y.s[i] {
			j++
		}
		if j == out.n {
			if out.n == 2 {
				return lin{}, false
			}
			out.s[j] = y.s[i]
			out.n++
		}
		out.m[j] += k * y.m[i]
	}
	n := 0
	for i := range out.n {
		if out.m[i] != 0 {
			out.s[n], out.m[n] = out.s[i], out.m[i]
			n++
		}
	}
	out.n = n
	return out, true
}

func linScale(x lin, k int64) lin {
	if x.top {
		return x
	}
	x.c *= k
	for i := range x.n {
		x.m[i] *= k
	}
	if k == 0 {
		x.n = 0
	}
	return x
}

// regLin is register slot's value on path st.
func regLin(st *sstate, slot int) lin {
	if slot < 0 || slot >= len(st.syms) {
		return topLin
	}
	switch s := st.syms[slot]; s {
	case symTop:
		return topLin
	case symZero:
		return constLin(st.regs[slot])
	default:
		return lin{n: 1, s: [2]int32{s}, m: [2]int64{1}, c: st.regs[slot]}
	}
}

// store writes l to register slot, as a term when it is not one symbol plus
// an offset.
func (c *checker) store(st *sstate, slot int, l lin) {
	if slot < 0 || slot >= len(st.regs) {
		return
	}
	switch {
	case l.top:
		st.setReg(slot, symTop, 0)
	case l.n == 0:
		st.setReg(slot, symZero, l.c)
	case l.n == 1 && l.m[0] == 1:
		st.setReg(slot, l.s[0], l.c)
	default:
		r := c.rangeOfLin(st, l)
		t := c.term("lin", r.lo, r.hi, l)
		st.setReg(slot, t.s[0], 0)
	}
}

// term is the symbol for op over args, the same symbol for the same shape.
func (c *checker) term(op string, lo, hi int64, args ...lin) lin {
	for _, a := range args {
		if a.top {
			return topLin
		}
	}
	b := make([]byte, 0, 8+len(op)+len(args)*40)
	b = append(b, op...)
	var deps []int32
	for _, a := range args {
		b = append(b, '|', byte(a.n))
		b = binary.LittleEndian.AppendUint64(b, uint64(a.c))
		for i := range a.n {
			b = binary.LittleEndian.AppendUint32(b, uint32(a.s[i]))
			b = binary.LittleEndian.AppendUint64(b, uint64(a.m[i]))
			s := a.s[i]
			if int(s) > numBuiltinSyms {
				if len(c.syms[s].deps) > 0 {
					for _, d := range c.syms[s].deps {
						if !slices.Contains(deps, d) {
							deps = append(deps, d)
						}
					}
				} else if !slices.Contains(deps, s) {
					deps = append(deps, s)
				}
			}
		}
	}
	k := string(b)
	s, ok := c.terms[k]
	if !ok {
		s = c.newSym(lo, hi, deps)
		c.terms[k] = s
	}
	return lin{n: 1, s: [2]int32{s}, m: [2]int64{1}}
}

// rng is a closed range; negInf/posInf stand for unbounded.
type rng struct{ lo, hi int64 }

func (r rng) empty() bool { return r.lo > r.hi }

func (r rng) meet(o rng) rng { return rng{max(r.lo, o.lo), min(r.hi, o.hi)} }

func (r rng) single() bool { return r.lo == r.hi }

// findFact is the index of fact (a, b, kind) on st, or -1.
func findFact(st *sstate, a, b int32, kind uint8) int {
	for i := range st.facts {
		f := &st.facts[i]
		if f.a == a && f.b == b && f.kind == kind {
			return i
		}
		if f.a > a {
			break
		}
	}
	return -1
}

// rangeOf is symbol s's range on st.
func (c *checker) rangeOf(st *sstate, s int32) rng {
	if s == symZero {
		return rng{0, 0}
	}
	r := rng{c.syms[s].lo, c.syms[s].hi}
	if i := findFact(st, s, symZero, factRange); i >= 0 {
		r = r.meet(rng{st.facts[i].lo, st.facts[i].hi})
	}
	return r
}

// diffRange is the range of a - b on st: its own fact, met with what the two
// symbols' ranges give.
func (c *checker) diffRange(st *sstate, a, b int32) rng {
	if a == b {
		return rng{0, 0}
	}
	flip := a < b
	if flip {
		a, b = b, a
	}
	ra, rb := c.rangeOf(st, a), c.rangeOf(st, b)
	r := rng{addSat(ra.lo, -rb.hi), addSat(ra.hi, -rb.lo)}
	if b != symZero {
		if i := findFact(st, a, b, factRange); i >= 0 {
			r = r.meet(rng{st.facts[i].lo, st.facts[i].hi})
		}
	}
	if flip {
		r = rng{-r.hi, -r.lo}
	}
	return r
}

// rangeOfLin is l's range on st.
func (c *checker) rangeOfLin(st *sstate, l lin) rng {
	if l.top {
		return rng{negInf, posInf}
	}
	if l.n == 2 && l.m[0] == -l.m[1] && (l.m[0] == 1 || l.m[0] == -1) {
		d := c.diffRange(st, l.s[0], l.s[1])
		if l.m[0] < 0 {
			d = rng{-d.hi, -d.lo}
		}
		return rng{addSat(d.lo, l.c), addSat(d.hi, l.c)}
	}
	r := rng{l.c, l.c}
	for i := range l.n {
		s := c.rangeOf(st, l.s[i])
		a, b := mulSat(s.lo, l.m[i]), mulSat(s.hi, l.m[i])
		if a > b {
			a, b = b, a
		}
		r = rng{addSat(r.lo, a), addSat(r.hi, b)}
	}
	return r
}

// modOf is l mod m in [0, m) when the residues of l's symbols say it.
func (c *checker) modOf(st *sstate, l lin, m int64) (int64, bool) {
	if l.top || m <= 0 {
		return 0, false
	}
	v := l.c % m
	for i := range l.n {
		k := l.m[i] % m
		if k == 0 {
			continue
		}
		r, ok := c.symMod(st, l.s[i], m)
		if !ok {
			return 0, false
		}
		v += k * r
	}
	v %= m
	if v < 0 {
		v += m
	}
	return v, true
}

// symMod is symbol s mod m when st's facts say it: a residue fact, or s a
// quotient x / d of a non-negative x whose residue mod d·m is known.
func (c *checker) symMod(st *sstate, s int32, m int64) (int64, bool) {
	if j := findFact(st, s, symZero, factMod); j >= 0 && st.facts[j].hi%m == 0 {
		return st.facts[j].lo % m, true
	}
	if d := c.syms[s].divD; d > 0 && d <= maxMod && c.rangeOfLin(st, c.syms[s].divX).lo >= 0 {
		if r, ok := c.modOf(st, c.syms[s].divX, d*m); ok {
			return (r / d) % m, true
		}
	}
	return 0, false
}

// addFactRaw inserts f into st's sorted facts, replacing the fact of the same
// pair and kind (disequalities of one pair accumulate).
func addFactRaw(st *sstate, f fact) {
	if f.kind != factNE {
		if i := findFact(st, f.a, f.b, f.kind); i >= 0 {
			if st.facts[i] != f {
				st.writeFacts()
				st.facts[i] = f
			}
			return
		}
	}
	i, found := slices.BinarySearchFunc(st.facts, f, func(x, y fact) int { return factLess(&x, &y) })
	if found {
		return
	}
	st.writeFacts()
	st.facts = slices.Insert(st.facts, i, f)
	st.gcAt = 0 // a fact about a symbol no register holds goes at the next gc
}

// assume adds a - b in r to st and reports whether the path is still
// possible.
func (c *checker) assume(st *sstate, a, b int32, r rng) bool {
	if a == b {
		return r.lo <= 0 && 0 <= r.hi
	}
	if a < b {
		a, b = b, a
		r = rng{-r.hi, -r.lo}
	}
	cur := c.diffRange(st, a, b)
	n := cur.meet(r)
	if n.empty() {
		return false
	}
	// A point that a disequality rules out.
	if n.single() {
		for i := range st.facts {
			f := &st.facts[i]
			if f.a == a && f.b == b && f.kind == factNE && f.lo == n.lo {
				return false
			}
		}
		if b == symZero {
			if j := findFact(st, a, symZero, factMod); j >= 0 {
				m := st.facts[j].hi
				if ((n.lo%m)+m)%m != st.facts[j].lo {
					return false
				}
			}
		}
	}
	if n != cur {
		addFactRaw(st, fact{a: a, b: b, kind: factRange, lo: n.lo, hi: n.hi})
	}
	return true
}

// assumeNE adds a - b != v to st and reports whether the path is possible.
func (c *checker) assumeNE(st *sstate, a, b int32, v int64) bool {
	if a == b {
		return v != 0
	}
	if a < b {
		a, b, v = b, a, -v
	}
	cur := c.diffRange(st, a, b)
	switch {
	case v < cur.lo || v > cur.hi:
		return true
	case cur.single():
		return false
	case v == cur.lo:
		return c.assume(st, a, b, rng{v + 1, cur.hi})
	case v == cur.hi:
		return c.assume(st, a, b, rng{cur.lo, v - 1})
	}
	addFactRaw(st, fact{a: a, b: b, kind: factNE, lo: v})
	return true
}

// assumeMod adds s ≡ r (mod m) and reports whether the path is possible.
func (c *checker) assumeMod(st *sstate, s int32, m, r int64) bool {
	if m <= 1 {
		return true
	}
	r = ((r % m) + m) % m
	if s == symZero {
		return r == 0
	}
	if j := findFact(st, s, symZero, factMod); j >= 0 {
		f := st.facts[j]
		g := gcd(f.hi, m)
		if f.lo%g != r%g {
			return false
		}
		if f.hi%m == 0 {
			return true
		}
		// Keep the larger modulus; the other is a weaker fact.
		if (m%f.hi == 0 || m > f.hi) && (f.lo != r || f.hi != m) {
			st.writeFacts()
			st.facts[j].lo, st.facts[j].hi = r, m
		}
		return true
	}
	if rs := c.rangeOf(st, s); rs.single() {
		return ((rs.lo%m)+m)%m == r
	}
	addFactRaw(st, fact{a: s, b: symZero, kind: factMod, lo: r, hi: m})
	return true
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return abs64(a)
}

// retire forgets symbol x on st — a load runs again, a loop variable takes
// its next value — with every register and fact that depends on it.
func (c *checker) retire(st *sstate, x int32) {
	if x <= symZero {
		return
	}
	for i, s := range st.syms {
		if s > symZero && c.dependsOn(s, x) {
			st.setReg(i, symTop, 0)
		}
	}
	st.dropFacts(func(f *fact) bool { return c.dependsOn(f.a, x) || (f.b > symZero && c.dependsOn(f.b, x)) })
}

// dropFacts drops the facts drop accepts from st, copying them first only
// when one goes.
func (st *sstate) dropFacts(drop func(*fact) bool) {
	i := 0
	for i < len(st.facts) && !drop(&st.facts[i]) {
		i++
	}
	if i == len(st.facts) {
		return
	}
	st.writeFacts()
	out := st.facts[:i]
	for j := i + 1; j < len(st.facts); j++ {
		if !drop(&st.facts[j]) {
			out = append(out, st.facts[j])
		}
	}
	st.facts = out
}

// gc drops the facts about symbols no register holds, so that two paths that
// differ only there are one state.
func (c *checker) gc(st *sstate) {
	if !c.gcClean(st) {
		st.dropFacts(c.deadFact)
		st.gcAt = c.pinEpoch + 1
	}
}

// gcClean reports whether gc has nothing to drop from st (and notes it in
// st.gcAt, which changes no content). When not, deadFacts has marked st's
// live symbols for deadFact.
func (c *checker) gcClean(st *sstate) bool {
	if len(st.facts) == 0 {
		return true
	}
	if st.gcAt == c.pinEpoch+1 {
		if checkGC && c.deadFacts(st) {
			panic(fmt.Sprintf("static pass: kernel %s: gc skipped a state with facts to drop", c.k.Name))
		}
		return true
	}
	if c.deadFacts(st) {
		return false
	}
	st.gcAt = c.pinEpoch + 1
	return true
}

// deadFacts marks the symbols st's registers hold (liveMark, under a new
// generation) and reports whether a fact of st is about a symbol no register
// holds and none is pinned (deadFact).
func (c *checker) deadFacts(st *sstate) bool {
	c.liveGen++
	if c.liveGen == 0 || len(c.liveMark) < len(c.syms) {
		c.liveMark = make([]uint32, len(c.syms)+len(c.syms)/2)
		c.liveGen = 1
	}
	for _, s := range st.syms {
		if s > numBuiltinSyms {
			c.liveMark[s] = c.liveGen
		}
	}
	for i := range st.facts {
		if c.deadFact(&st.facts[i]) {
			return true
		}
	}
	return false
}

func (c *checker) deadFact(f *fact) bool { return !c.live(f.a) || !c.live(f.b) }

// live reports whether s is a launch value, pinned or held by a register of
// the state deadFacts marked last.
func (c *checker) live(s int32) bool {
	return s <= numBuiltinSyms || c.pinned[s] > 0 || c.liveMark[s] == c.liveGen
}

// value evaluates x on path st.
func (c *checker) value(x asm.CExpr, st *sstate) lin {
	if x.Fn == nil || x.Const {
		return constLin(x.Val)
	}
	if x.Src == nil {
		return topLin
	}
	if c.allConst(x.Src, st) {
		v, ok := c.evalConst(x, st)
		if ok {
			return constLin(v)
		}
		return topLin
	}
	return c.symValue(x.Src, st)
}

// allConst reports whether every register e reads holds a constant on st and
// e reads no launch value: then the compiled closure gives its value.
func (c *checker) allConst(e asm.Expr, st *sstate) bool {
	deps, ok := c.deps[e]
	if !ok {
		deps = c.exprDeps(e)
		c.deps[e] = deps
	}
	if deps.opaque {
		return false
	}
	for _, slot := range deps.slots {
		if slot >= len(st.syms) || st.syms[slot] != symZero {
			return false
		}
	}
	return true
}

func (c *checker) evalConst(x asm.CExpr, st *sstate) (v int64, ok bool) {
	defer func() {
		if recover() != nil {
			v, ok = 0, false
		}
	}()
	// One Env for every call: the compiled closure keeps no reference.
	c.env.Regs = st.regs
	return x.Fn(&c.env), true
}

// cmpOps are the comparisons a condition may split on.
var cmpOps = map[string]bool{"<": true, "<=": true, ">": true, ">=": true, "==": true, "!=": true}

// isCond reports whether e is a comparison or a logical expression: a let of
// one splits the path like an if.
func isCond(e asm.Expr) bool {
	switch e := e.(type) {
	case *asm.Paren:
		return isCond(e.X)
	case *asm.Unary:
		return e.Op == "!"
	case *asm.Binary:
		return cmpOps[e.Op] || e.Op == "&&" || e.Op == "||"
	}
	return false
}

// symValue evaluates e symbolically.
func (c *checker) symValue(e asm.Expr, st *sstate) lin {
	switch e := e.(type) {
	case *asm.Num:
		if e.IsFloat {
			return topLin
		}
		return constLin(e.Int)
	case *asm.Paren:
		return c.symValue(e.X, st)
	case *asm.Name:
		if s, ok := builtinSyms[strings.ToLower(e.Name)]; ok {
			return lin{n: 1, s: [2]int32{s}, m: [2]int64{1}}
		}
		if v, ok := c.consts[e.Name]; ok {
			return constLin(v)
		}
		return topLin
	case *asm.Ref:
		slot, ok := c.slots[strings.TrimPrefix(e.Name, "%")]
		if !ok || e.Index != nil {
			return topLin
		}
		return regLin(st, slot)
	case *asm.Unary:
		x := c.symValue(e.X, st)
		switch {
		case x.top:
			return x
		case e.Op == "-":
			return linScale(x, -1)
		case x.isConst():
			v, _ := binopInt(e.Op, 0, x.c, true)
			return constLin(v)
		case e.Op == "!":
			return c.boolValue(x, "==", st)
		}
		return c.term("u"+e.Op, negInf, posInf, x)
	case *asm.Binary:
		x := c.symValue(e.X, st)
		y := c.symValue(e.Y, st)
		return c.binValue(e.Op, x, y, st)
	case *asm.Call:
		args := make([]lin, len(e.Args))
		allc := true
		for i, a := range e.Args {
			args[i] = c.symValue(a, st)
			if args[i].top {
				return topLin
			}
			allc = allc && args[i].isConst()
		}
		if allc {
			if v, ok := callInt(e.Fn, args); ok {
				return constLin(v)
			}
			return topLin
		}
		if (e.Fn == "min" || e.Fn == "max") && len(args) >= 1 {
			// Pick the argument the facts say is smallest (largest).
			best := args[0]
			for _, a := range args[1:] {
				d, ok := linAdd(a, best, -1)
				if !ok {
					return c.callTerm(e.Fn, args, st)
				}
				r := c.rangeOfLin(st, d)
				switch {
				case e.Fn == "min" && r.hi <= 0, e.Fn == "max" && r.lo >= 0:
					best = a
				case e.Fn == "min" && r.lo >= 0, e.Fn == "max" && r.hi <= 0:
				default:
					return c.callTerm(e.Fn, args, st)
				}
			}
			return best
		}
		return c.callTerm(e.Fn, args, st)
	}
	return topLin
}

func (c *checker) callTerm(fn string, args []lin, st *sstate) lin {
	lo, hi := negInf, posInf
	if fn == "min" || fn == "max" {
		for i, a := range args {
			r := c.rangeOfLin(st, a)
			if i == 0 {
				lo, hi = r.lo, r.hi
			} else if fn == "min" {
				lo, hi = min(lo, r.lo), min(hi, r.hi)
			} else {
				lo, hi = max(lo, r.lo), max(hi, r.hi)
			}
		}
	}
	return c.term("f"+fn, lo, hi, args...)
}

// binopInt folds a binary or unary (unary: x unused) operator on constants.
func binopInt(op string, x, y int64, unary bool) (int64, bool) {
	if unary {
		switch op {
		case "-":
			return -y, true
		case "!":
			if y == 0 {
				return 1, true
			}
			return 0, true
		case "~":
			return ^y, true
		}
		return y, true
	}
	return asm.EvalBinop(op, x, y)
}

func callInt(fn string, args []lin) (int64, bool) {
	xs := make([]int64, len(args))
	for i, a := range args {
		xs[i] = a.c
	}
	switch fn {
	case "min":
		return slices.Min(xs), len(xs) > 0
	case "max":
		return slices.Max(xs), len(xs) > 0
	case "abs":
		return abs64(xs[0]), len(xs) == 1
	case "ceildiv", "align":
		if len(xs) != 2 || xs[1] == 0 {
			return 0, false
		}
		q, r := xs[0]/xs[1], xs[0]%xs[1]
		if r != 0 && (r > 0) == (xs[1] > 0) {
			q++
		}
		if fn == "align" {
			return q * xs[1], true
		}
		return q, true
	}
	return 0, false
}

// binValue is x op y.
func (c *checker) binValue(op string, x, y lin, st *sstate) lin {
	if x.top || y.top {
		return topLin
	}
	if x.isConst() && y.isConst() {
		v, ok := binopInt(op, x.c, y.c, false)
		if !ok {
			return topLin
		}
		return constLin(v)
	}
	switch op {
	case "+", "-":
		k := int64(1)
		if op == "-" {
			k = -1
		}
		if l, ok := linAdd(x, y, k); ok {
			return l
		}
	case "*":
		if y.isConst() {
			return linScale(x, y.c)
		}
		if x.isConst() {
			return linScale(y, x.c)
		}
	case "<<":
		if y.isConst() && y.c >= 0 && y.c < 32 {
			return linScale(x, 1<<uint(y.c))
		}
	case "&":
		if x.isConst() {
			x, y = y, x
		}
		if y.isConst() && y.c >= 0 {
			if y.c&(y.c+1) == 0 {
				// A low-bit mask is a residue: exact when the symbols'
				// residues are known (%k & 1 in a peeled loop).
				if v, ok := c.modOf(st, x, y.c+1); ok {
					return constLin(v)
				}
			}
			return c.term("&", 0, y.c, x, y)
		}
	case "/":
		if y.isConst() && y.c > 0 {
			t := c.term("/", negInf, posInf, x, y)
			if c.syms[t.s[0]].divD == 0 {
				c.syms[t.s[0]].divX, c.syms[t.s[0]].divD = x, y.c
			}
			return t
		}
	case "%":
		if y.isConst() && y.c > 0 {
			r := c.rangeOfLin(st, x)
			if v, ok := c.modOf(st, x, y.c); ok && (r.lo >= 0 || v == 0) {
				return constLin(v)
			}
			if r.lo >= 0 {
				return c.term("%", 0, y.c-1, x, y)
			}
			return c.term("%", 1-y.c, y.c-1, x, y)
		}
	case "<", "<=", ">", ">=", "==", "!=":
		d, ok := linAdd(x, y, -1)
		if ok {
			return c.boolValue(d, op, st)
		}
		return c.term(op, 0, 1, x, y)
	case "&&", "||":
		return c.term(op, 0, 1, c.boolValue(x, "!=", st), c.boolValue(y, "!=", st))
	}
	return c.term(op, negInf, posInf, x, y)
}

// boolValue is d op 0 as a value: decided when the facts say, else a term.
func (c *checker) boolValue(d lin, op string, st *sstate) lin {
	if v, ok := c.decide(st, d, op); ok {
		if v {
			return constLin(1)
		}
		return constLin(0)
	}
	return c.term("c"+op, 0, 1, d)
}

// decide says whether d op 0 holds on every path st stands for, when it can.
func (c *checker) decide(st *sstate, d lin, op string) (bool, bool) {
	if d.top {
		return false, false
	}
	r := c.rangeOfLin(st, d)
	switch op {
	case "<":
		return r.hi < 0, r.hi < 0 || r.lo >= 0
	case "<=":
		return r.hi <= 0, r.hi <= 0 || r.lo > 0
	case ">":
		return r.lo > 0, r.lo > 0 || r.hi <= 0
	case ">=":
		return r.lo >= 0, r.lo >= 0 || r.hi < 0
	case "==", "!=":
		eq, ok := false, false
		switch {
		case r.lo == 0 && r.hi == 0:
			eq, ok = true, true
		case r.lo > 0 || r.hi < 0:
			eq, ok = false, true
		default:
			if a, b, v, okp := pairOf(d); okp && c.hasNE(st, a, b, v) {
				eq, ok = false, true
			} else if d.n == 1 {
				if m := c.modFact(st, d.s[0]); m > 0 && d.m[0] != 0 {
					if res, okm := c.modOf(st, d, m); okm && res != 0 {
						eq, ok = false, true
					}
				}
			}
		}
		if op == "!=" {
			eq = !eq
		}
		return eq, ok
	}
	return false, false
}

func (c *checker) modFact(st *sstate, s int32) int64 {
	if j := findFact(st, s, symZero, factMod); j >= 0 {
		return st.facts[j].hi
	}
	return 0
}

func (c *checker) hasNE(st *sstate, a, b int32, v int64) bool {
	if a < b {
		a, b, v = b, a, -v
	}
	for i := range st.facts {
		f := &st.facts[i]
		if f.a == a && f.b == b && f.kind == factNE && f.lo == v {
			return true
		}
	}
	return false
}

// pairOf writes d (d op 0) as a - b op v when it is one symbol or a
// difference of two.
func pairOf(d lin) (a, b int32, v int64, ok bool) {
	switch {
	case d.top:
	case d.n == 1 && d.m[0] == 1:
		return d.s[0], symZero, -d.c, true
	case d.n == 2 && d.m[0] == 1 && d.m[1] == -1:
		return d.s[0], d.s[1], -d.c, true
	case d.n == 2 && d.m[0] == -1 && d.m[1] == 1:
		return d.s[1], d.s[0], -d.c, true
	}
	return 0, 0, 0, false
}

var negated = map[string]string{"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "!=", "!=": "=="}

// assumeCmp adds d op 0 to st and reports whether the path is possible.
func (c *checker) assumeCmp(st *sstate, d lin, op string) bool {
	if d.top {
		return true
	}
	if d.n == 0 {
		v, _ := binopInt(op, d.c, 0, false)
		return v != 0
	}
	if d.n == 1 && d.m[0] != 1 && d.m[0] != -1 {
		return c.assumeScaled(st, d.s[0], d.m[0], d.c, op)
	}
	if d.n == 1 && d.m[0] == -1 {
		d = linScale(d, -1)
		op = map[string]string{"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}[op]
	}
	a, b, v, ok := pairOf(d)
	if !ok {
		// A shape with no fact of its own: the comparison is a term, true on
		// one side and false on the other.
		t := c.term("c"+op, 0, 1, d)
		return c.assume(st, t.s[0], symZero, rng{1, 1})
	}
	switch op {
	case "<":
		return c.assume(st, a, b, rng{negInf, v - 1})
	case "<=":
		return c.assume(st, a, b, rng{negInf, v})
	case ">":
		return c.assume(st, a, b, rng{v + 1, posInf})
	case ">=":
		return c.assume(st, a, b, rng{v, posInf})
	case "==":
		return c.assume(st, a, b, rng{v, v})
	case "!=":
		return c.assumeNE(st, a, b, v)
	}
	return true
}

// assumeScaled adds m·x + c op 0 (m != ±1) to st as a range of x: `%i * NK +
// 5 < 40` is x <= 4 for NK = 8.
func (c *checker) assumeScaled(st *sstate, x int32, m, k int64, op string) bool {
	if m == 0 {
		v, _ := binopInt(op, k, 0, false)
		return v != 0
	}
	// m·x op -k.
	t := -k
	switch op {
	case "<":
		op, t = "<=", t-1
	case ">":
		op, t = ">=", t+1
	}
	switch op {
	case "<=", ">=":
		if (op == "<=") == (m > 0) {
			return c.assume(st, x, symZero, rng{negInf, floorDiv(t, m)})
		}
		return c.assume(st, x, symZero, rng{ceilDiv(t, m), posInf})
	case "==":
		if t%m != 0 {
			return false
		}
		return c.assume(st, x, symZero, rng{t / m, t / m})
	case "!=":
		if t%m != 0 {
			return true
		}
		return c.assumeNE(st, x, symZero, t/m)
	}
	return true
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func ceilDiv(a, b int64) int64 { return -floorDiv(-a, b) }

// splitCmp splits st on d op 0.
func (c *checker) splitCmp(st *sstate, d lin, op string) (t, f []*sstate) {
	if v, ok := c.decide(st, d, op); ok {
		if v {
			return []*sstate{st}, nil
		}
		return nil, []*sstate{st}
	}
	if d.top {
		return []*sstate{c.fork(st)}, []*sstate{st}
	}
	if !pairable(d) {
		// d's own term: assuming it true on one side and false on the other
		// keeps the two sides correlated with a later test of the same d.
		tm := c.term("c"+op, 0, 1, d)
		return c.splitCmp(st, tm, "!=")
	}
	ts := c.fork(st)
	if c.assumeCmp(ts, d, op) {
		t = []*sstate{ts}
	}
	if c.assumeCmp(st, d, negated[op]) {
		f = []*sstate{st}
	}
	if len(t) > 0 && len(f) > 0 {
		c.noteSplit(d, t[0], f[0])
	}
	return t, f
}

func pairable(d lin) bool {
	if d.n == 1 && d.m[0] != 0 {
		return true
	}
	_, _, _, ok := pairOf(d)
	return ok
}

// split splits st on the truth of condition e.
func (c *checker) split(e asm.CExpr, st *sstate) (t, f []*sstate) {
	if e.Fn == nil || e.Const || (e.Src != nil && c.allConst(e.Src, st)) {
		v := c.value(e, st)
		if v.top {
			return []*sstate{st.clone()}, []*sstate{st}
		}
		if v.c != 0 {
			return []*sstate{st}, nil
		}
		return nil, []*sstate{st}
	}
	return c.splitExpr(e.Src, st)
}

func (c *checker) splitExpr(e asm.Expr, st *sstate) (t, f []*sstate) {
	switch x := e.(type) {
	case *asm.Paren:
		return c.splitExpr(x.X, st)
	case *asm.Unary:
		if x.Op == "!" {
			f, t = c.splitExpr(x.X, st)
			return t, f
		}
	case *asm.Binary:
		switch {
		case x.Op == "&&":
			xt, xf := c.splitExpr(x.X, st)
			for _, s := range xt {
				yt, yf := c.splitExpr(x.Y, s)
				t, xf = append(t, yt...), append(xf, yf...)
			}
			return t, xf
		case x.Op == "||":
			xt, xf := c.splitExpr(x.X, st)
			for _, s := range xf {
				yt, yf := c.splitExpr(x.Y, s)
				xt, f = append(xt, yt...), append(f, yf...)
			}
			return xt, f
		case cmpOps[x.Op]:
			l := c.symValue(x.X, st)
			r := c.symValue(x.Y, st)
			if d, ok := linAdd(l, r, -1); ok {
				return c.splitCmp(st, d, x.Op)
			}
			return c.splitCmp(st, c.term(x.Op, 0, 1, l, r), "!=")
		}
	}
	return c.splitCmp(st, c.symValue(e, st), "!=")
}
