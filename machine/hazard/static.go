package hazard

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

	"github.com/ptoasm/ptoasm/asm"
)

// Limits of the static pass. Loops with constant bounds up to maxUnroll trips
// are unrolled with the loop variable bound. Other loops with a constant step
// are peeled (see peeled): their first and last P trips run with the loop
// variable exact (relative to the bounds when those are not constants) and
// the trips between run until the flag state stops changing, with the loop
// variable a symbol known to lie strictly inside and its residue modulo the
// body's buffer count tracked, so `%k > 0`, `%k + 1 < N` and `%k & 1` are
// decided on every trip whatever the trip count. Loops with an unknown step
// run 0, 1, 2, ... times until the flag state stops changing (zero-trip
// included, PTOAS#533/#428); while loops split on their condition each trip
// and widen once it depends on unknowns. maxStates bounds the number of
// distinct paths kept.
const (
	maxUnroll   = 64
	maxFixpoint = 4
	maxStates   = 256
	// maxPeel bounds the trips peeled at each end of a loop: guards that
	// single out more than the first or last maxPeel trips are split per
	// path instead.
	maxPeel = 4
	// maxMod bounds the modulus whose residues a peeled loop tracks (its
	// buffer count: `%k & 1`, `%k % 4`).
	maxMod = 8
)

type checker struct {
	k       *asm.KernelInfo
	slots   map[string]int
	consts  map[string]int64
	out     []*finding
	byKey   map[findKey]*finding
	limited bool
	// work counts the pass's work (static_work.go); aborted is set once it
	// passes the budget, after which every block returns its input
	// unchanged.
	work    int
	aborted bool
	memo    map[memoKey]memoEntry
	// loopNums numbers the loops for memo keys; keyBuf is the scratch a key
	// is built in, so that a lookup that hits allocates nothing.
	loopNums map[memoLoop]uint32
	keyBuf   []byte
	// memoLog lists memo entries in the order they were made, so that a
	// peeling attempt that is redone takes its entries back (rollback).
	memoLog []memoKey
	deps    map[asm.Expr]exprDeps
	// pairs lists the (src, dst) pipe pairs the kernel's flags use; channel
	// pairIdx[pair]*numFlagIDs + id is the pair's event id.
	pairs   [][2]asm.Pipe
	pairIdx map[[2]asm.Pipe]int
	opPair  []int32 // by op ID: its pair, or -1
	// unchecked marks the pairs with an id the pass cannot evaluate on some
	// path; findPair is the pair a balance finding is about.
	unchecked []bool
	findPair  map[*finding]int
	// idRegs marks the registers a flag id depends on (directly or through
	// lets); the loop-head widening keeps two values of those exact.
	idRegs []bool
	// valRegs marks the registers whose values the pass reads (valueRegs);
	// demand is each one's residue demand and resSyms their residue symbols
	// (static_demand.go).
	valRegs []bool
	demand  []int64
	resSyms map[int]int32
	// lv lists the dead registers the pass forgets (static_live.go).
	lv *liveness

	// Symbols (static_sym.go): their ranges and dependencies, the term
	// table, and a pin count that keeps an active loop's symbols' facts.
	syms   []symInfo
	terms  map[string]int32
	pinned []int32
	ldSyms map[int]int32
	loops  map[*asm.CFor]*loopInfo
	// widenSyms holds the widening symbols (widener.apply).
	widenSyms map[widenKey]int32
	// active lists the loops whose middle trips are running, innermost
	// last: a split on one's loop variable near its ends asks for more
	// peeling.
	active []*loopCtx
	// npinned counts pin calls not yet undone: a peeled loop is running.
	npinned int
	// pinEpoch changes with every unpin (sstate.gcAt).
	pinEpoch uint32
	// joinGroups and joinNext are join's scratch; liveMark and liveGen gc's
	// (liveMark[s] == liveGen: a register holds s).
	joinGroups []joinGroup
	joinNext   []int32
	joinTable  []int32
	liveMark   []uint32
	liveGen    uint32
	// env is evalConst's.
	env asm.Env

	// Loop templates (static_frame.go).
	templateState
	// interned holds the memo states' parts by content (intern).
	interned map[uint64][]*sstate
}

// flagIDRegs finds the registers flag ids read, closed over the lets that
// compute them.
func (c *checker) flagIDRegs() []bool {
	return c.regsRead(func(mark func(asm.Expr)) {
		for _, op := range c.k.Ops {
			if op != nil && op.Info != nil && (op.Info.Op == asm.OpSetFlag || op.Info.Op == asm.OpWaitFlag) && len(op.Args) >= 3 {
				mark(op.Args[2].Val.Src)
			}
		}
	})
}

// valueRegs finds the registers whose values the pass reads: those a flag
// id, an if or while condition or a loop's bounds or step reads, closed over
// the lets that compute them. A let of any other register (a row count a
// notify sends, an address) stores no value (checker.block), so two paths
// that differ only in it merge. moe_combine's per-expert row count, incremented
// under a routing test the pass cannot decide, kept the paths of every
// routed token apart, and at 8 ranks the kernel passed the work limit.
func (c *checker) valueRegs() []bool {
	return c.regsRead(func(mark func(asm.Expr)) {
		for i, m := range c.idRegs {
			if m {
				mark(&asm.Ref{Name: c.k.Regs[i]})
			}
		}
		walkStmts(c.k.Body, func(st asm.CStmt) {
			switch st := st.(type) {
			case *asm.CIf:
				mark(st.Cond.Src)
			case *asm.CWhile:
				mark(st.Cond.Src)
			case *asm.CFor:
				mark(st.From.Src)
				mark(st.To.Src)
				mark(st.Step.Src)
			}
		})
	})
}

// regsRead marks the registers the expressions roots passes to mark read,
// then those the lets of marked registers read, until nothing grows.
func (c *checker) regsRead(roots func(mark func(asm.Expr))) []bool {
	marked := make([]bool, len(c.k.Regs))
	mark := func(e asm.Expr) bool {
		grew := false
		walkRefs(e, func(r *asm.Ref) {
			if slot, ok := c.slots[strings.TrimPrefix(r.Name, "%")]; ok && slot < len(marked) && !marked[slot] {
				marked[slot], grew = true, true
			}
		})
		return grew
	}
	roots(func(e asm.Expr) { mark(e) })
	var lets []*asm.CLet
	walkStmts(c.k.Body, func(s asm.CStmt) {
		if l, ok := s.(*asm.CLet); ok {
			lets = append(lets, l)
		}
	})
	for grew := true; grew; {
		grew = false
		for _, l := range lets {
			if l.Slot >= 0 && l.Slot < len(marked) && marked[l.Slot] && mark(l.X.Src) {
				grew = true
			}
		}
	}
	return marked
}

// walkStmts calls f on every statement of b, nested ones included.
func walkStmts(b []asm.CStmt, f func(asm.CStmt)) {
	for _, s := range b {
		f(s)
		switch s := s.(type) {
		case *asm.CFor:
			walkStmts(s.Body, f)
		case *asm.CWhile:
			walkStmts(s.Body, f)
		case *asm.CIf:
			walkStmts(s.Then, f)
			walkStmts(s.Else, f)
		}
	}
}

// decidingExprs calls f on the expressions st decides with: an if's or a
// while's condition, a for's bounds and step, a set or wait's event id. The
// static pass keeps these values exact (static_loop.go's templates, the
// residue demand of static_demand.go), since a flag's fate follows them.
func decidingExprs(st asm.CStmt, f func(asm.CExpr)) {
	switch st := st.(type) {
	case *asm.CIf:
		f(st.Cond)
	case *asm.CWhile:
		f(st.Cond)
	case *asm.CFor:
		f(st.From)
		f(st.To)
		f(st.Step)
	case *asm.COp:
		if st.Info != nil && (st.Info.Op == asm.OpSetFlag || st.Info.Op == asm.OpWaitFlag) && len(st.Args) >= 3 {
			f(st.Args[2].Val)
		}
	}
}

// CheckFlags checks intra-core flag balance on every path through kernel k
// without running it: a wait_flag that can run with no set before it
// (deadlock), a set_flag that can run again before its wait (double-set), a
// set still pending when the kernel ends (unpaired-set), and ids outside 0-7.
// A (src, dst) pair with an id it cannot evaluate on some path is not checked
// at all (an unchecked-flag note at each such flag). Named constants in
// expressions the assembler did not fold are unknown here; CheckObject
// passes the object's.
func CheckFlags(k *asm.KernelInfo) []Finding { return checkFlags(k, nil) }

func checkFlags(k *asm.KernelInfo, consts map[string]int64) []Finding {
	if k == nil {
		return nil
	}
	c := &checker{k: k, slots: map[string]int{}, consts: consts, byKey: map[findKey]*finding{}, memo: map[memoKey]memoEntry{}, loopNums: map[memoLoop]uint32{},
		deps: map[asm.Expr]exprDeps{}, findPair: map[*finding]int{}, ldSyms: map[int]int32{}, loops: map[*asm.CFor]*loopInfo{},
		widenSyms: map[widenKey]int32{}}
	c.initSyms()
	for i, r := range k.Regs {
		c.slots[strings.TrimPrefix(r, "%")] = i
	}
	c.pairIdx = map[[2]asm.Pipe]int{}
	c.opPair = make([]int32, len(k.Ops))
	for i, op := range k.Ops {
		c.opPair[i] = -1
		if op == nil || op.Info == nil || (op.Info.Op != asm.OpSetFlag && op.Info.Op != asm.OpWaitFlag) ||
			len(op.Args) < 2 || op.Args[0].Kind != asm.ArgPipe || op.Args[1].Kind != asm.ArgPipe {
			continue
		}
		pr := [2]asm.Pipe{op.Args[0].Pipe, op.Args[1].Pipe}
		if _, ok := c.pairIdx[pr]; !ok {
			c.pairIdx[pr] = len(c.pairs)
			c.pairs = append(c.pairs, pr)
		}
		c.opPair[i] = int32(c.pairIdx[pr])
	}
	c.unchecked = make([]bool, len(c.pairs))
	c.idRegs = c.flagIDRegs()
	c.valRegs = c.valueRegs()
	c.demand = c.regDemands()
	c.lv = c.computeLiveness()
	nch := len(c.pairs) * numFlagIDs
	st := &sstate{counts: make([]uint8, nch), last: make([]int32, nch), regs: make([]int64, len(k.Regs)), syms: make([]int32, len(k.Regs)), own: ownAll}
	for i := range st.last {
		st.last[i] = -1
	}
	for i := range st.syms {
		st.syms[i] = symTop
	}
	st.h = st.partHash()
	// rank < nranks, block_idx < block_num.
	c.assume(st, builtinSyms["rank"], builtinSyms["nranks"], rng{negInf, -1})
	c.assume(st, builtinSyms["block_idx"], builtinSyms["block_num"], rng{negInf, -1})
	out, brk := c.block(k.Body, []*sstate{st})
	out = append(out, brk...)
	if c.aborted {
		// The end states are those of paths cut short, so a set pending in
		// them proves nothing; the findings reported on the way stand.
		out = nil
		c.report(KindUnchecked, SevNote, nil, asm.PipeInvalid, nil, nil, asm.PipeInvalid,
			fmt.Sprintf("kernel %s has too many paths for the static pass (nested loops with unknown trip counts, or conditions it cannot decide); it stopped when its work passed %d statement visits (larger states counting for more) and did not check unpaired sets", k.Name, maxWork),
			"run `ptoasm lint` on the program to check it dynamically")
	}
	for _, s := range out {
		for ch, n := range s.counts {
			if n == 0 {
				continue
			}
			src, dst, id := c.chanParts(ch)
			op := c.opByID(s.last[ch])
			c.reportPair(ch/numFlagIDs, KindUnpairedSet, SevWarning, op, src, s.iter, nil, asm.PipeInvalid,
				fmt.Sprintf("set_flag %s, %s, %d can still be set when kernel %s ends on some path: nothing waits for it", src, dst, id, k.Name),
				fmt.Sprintf("add `wait_flag %s, %s, %d` before the kernel ends on every path that sets it, or skip the set on the last iteration", src, dst, id))
		}
	}
	if c.limited {
		c.report(KindUnchecked, SevNote, nil, asm.PipeInvalid, nil, nil, asm.PipeInvalid,
			fmt.Sprintf("kernel %s has more than %d distinct flag paths; the rest were not checked", k.Name, maxStates), "")
	}
	fs := make([]Finding, 0, len(c.out))
	for _, f := range c.out {
		// A pair with an id the pass cannot evaluate is not checked at all:
		// counting its constant ids and skipping the others would report
		// the skipped ones' partners.
		if p, ok := c.findPair[f]; ok && c.unchecked[p] {
			continue
		}
		fs = append(fs, f.Finding)
	}
	SortFindings(fs)
	if staticDone != nil {
		staticDone(c)
	}
	return fs
}

// pairOf is the pair index of flag op's pipes (src, dst): from opPair for
// a kernel op, which lists the pairs of the op's own pipe operands.
func (c *checker) pairOf(op *asm.COp, src, dst asm.Pipe) int {
	if op.ID >= 0 && op.ID < len(c.opPair) && c.k.Ops[op.ID] == op && c.opPair[op.ID] >= 0 {
		return int(c.opPair[op.ID])
	}
	return c.pairIdx[[2]asm.Pipe{src, dst}]
}

func (c *checker) chanParts(ch int) (asm.Pipe, asm.Pipe, int) {
	pr := c.pairs[ch/numFlagIDs]
	return pr[0], pr[1], ch % numFlagIDs
}

func (c *checker) opByID(id int32) *asm.COp {
	if id >= 0 && int(id) < len(c.k.Ops) {
		return c.k.Ops[id]
	}
	return nil
}

func (c *checker) report(kind string, sev Severity, op *asm.COp, pipe asm.Pipe, iter []int64, second *asm.COp, pipe2 asm.Pipe, msg, hint string) *finding {
	first := c.site(op, pipe, iter)
	var sec Site
	if second != nil {
		sec = c.site(second, pipe2, iter)
	}
	k := findKey{kind: kind, first: siteKey(first), second: siteKey(sec)}
	if f := c.byKey[k]; f != nil {
		return f
	}
	f := &finding{Finding: Finding{Kind: kind, Severity: sev.String(), Message: msg, First: first, Second: sec, Count: 1, Hint: hint}}
	c.byKey[k] = f
	c.out = append(c.out, f)
	return f
}

// reportPair reports a balance finding about pipe pair p.
func (c *checker) reportPair(p int, kind string, sev Severity, op *asm.COp, pipe asm.Pipe, iter []int64, second *asm.COp, pipe2 asm.Pipe, msg, hint string) {
	f := c.report(kind, sev, op, pipe, iter, second, pipe2, msg, hint)
	c.findPair[f] = p
}

// snapshot and rollback take back the findings and memo entries of a peeling
// attempt that is redone with more peeled trips.
type snapshot struct {
	out, memo int
	unchecked []bool
}

func (c *checker) snapshot() snapshot {
	return snapshot{len(c.out), len(c.memoLog), append([]bool(nil), c.unchecked...)}
}

func (c *checker) rollback(s snapshot) {
	for _, f := range c.out[s.out:] {
		delete(c.byKey, findKey{kind: f.Kind, first: siteKey(f.First), second: siteKey(f.Second)})
		delete(c.findPair, f)
	}
	c.out = c.out[:s.out]
	for _, k := range c.memoLog[s.memo:] {
		delete(c.memo, k)
	}
	c.memoLog = c.memoLog[:s.memo]
	copy(c.unchecked, s.unchecked)
}

func (c *checker) site(op *asm.COp, pipe asm.Pipe, iter []int64) Site {
	s := Site{Core: c.k.Name}
	if op == nil && c.k.Decl != nil {
		// A finding about the whole kernel points at its declaration.
		s.File, s.Line, s.Col = c.k.Decl.Pos.File, c.k.Decl.Pos.Line, c.k.Decl.Pos.Col
		s.Op = "kernel"
	}
	if op != nil {
		if op.Instr != nil {
			s.File, s.Line, s.Col = op.Instr.Pos.File, op.Instr.Pos.Line, op.Instr.Pos.Col
			s.Op = op.Instr.Op
		}
		if op.Info != nil {
			s.Op = op.Info.Name
		}
	}
	if pipe != asm.PipeInvalid {
		s.Pipe = pipe.String()
	}
	if len(iter) > 0 {
		s.Iter = append([]int64(nil), iter...)
	}
	return s
}

func (c *checker) cap(states []*sstate) []*sstate { return c.capRecalled(states, nil) }

// recalled describes a state a while loop's memo entry gave without a copy
// (memo: the memo's own state) and the iteration of the path it stands for.
// Most of those are merged away at once by join (88% in allgather_gemm's
// polling loop), so only the ones join keeps are copied.
type recalled struct {
	iter []int64
	memo bool
}

// capRecalled is cap of states, of which those from marks memo are the
// memo's own, read only until join keeps them (copied then).
func (c *checker) capRecalled(states []*sstate, from []recalled) []*sstate {
	for i, s := range states {
		if from != nil && from[i].memo {
			if c.gcClean(s) {
				continue
			}
			states[i], from[i].memo = s.recalledCopy(from[i].iter), false
		}
		c.gc(states[i])
	}
	states = c.join(states, from)
	if len(states) > maxStates {
		c.limited = c.limited || !c.aborted
		states = states[:maxStates]
	}
	return states
}

// join merges the states that differ only in facts about symbols no active
// loop holds: the merged state keeps what all of them know (a range's hull,
// a residue or a disequality they share). The paths agree on every flag and
// register, so a later condition on those symbols still splits them, and the
// flag checks see the same outcomes; only the correlation between two of
// their facts is lost. Without it a loop's trip-count facts (zero trips, one,
// two, many) multiply the paths of every loop around it.
func (c *checker) join(states []*sstate, from []recalled) []*sstate {
	if len(states) <= 1 {
		if len(states) == 1 && from != nil && from[0].memo {
			states[0] = states[0].recalledCopy(from[0].iter)
		}
		return states
	}
	if c.aborted {
		// The pass has given up and drops its states at the end: merging
		// them (up to their number squared comparisons) is not worth it.
		for k := range states {
			if from != nil && from[k].memo {
				states[k] = states[k].recalledCopy(from[k].iter)
			}
		}
		return states
	}
	// keep accepts the facts about pinned symbols; nil when nothing is
	// pinned (outside peeled loops), and then no fact tells states apart.
	var keep func(*fact) bool
	if c.npinned > 0 {
		keep = func(f *fact) bool { return c.pinned[f.a] > 0 || c.pinned[f.b] > 0 }
	}
	// sameAs is an equivalence, so the states alike are grouped: a state is
	// compared with one of each group of its hash, then tried against that
	// group's members in order, which is where a scan of every earlier
	// state would have merged it. The groups are found by a scan, or for
	// many states through a map of their hashes.
	gs, next := c.joinGroups[:0], c.joinNext[:0]
	var table []int32 // open addressing by hash: a group of each hash, +1
	if len(states) > joinScan {
		n := 64
		for n < 2*len(states) {
			n *= 2
		}
		if cap(c.joinTable) < n {
			c.joinTable = make([]int32, n)
		}
		table = c.joinTable[:n]
		clear(table)
	}
	out := states[:0]
	for k, s := range states {
		h := s.hash(keep)
		g := int32(-1)
		var slot *int32
		if table != nil {
			slot = joinSlot(table, gs, h)
			for x := *slot - 1; x >= 0 && g < 0; x = gs[x].same {
				c.scan(s.size())
				if out[gs[x].first].sameAs(s, keep) {
					g = x
				}
			}
		} else {
			for x := range gs {
				if gs[x].h == h {
					c.scan(s.size())
					if out[gs[x].first].sameAs(s, keep) {
						g = int32(x)
						break
					}
				}
			}
		}
		if g >= 0 && c.joinMember(out, next, gs[g].first, s) {
			continue
		}
		if from != nil && from[k].memo {
			s = s.recalledCopy(from[k].iter)
		}
		i := int32(len(out))
		out, next = append(out, s), append(next, -1)
		switch {
		case g >= 0:
			next[gs[g].last], gs[g].last = i, i
		case table != nil:
			gs = append(gs, joinGroup{h: h, first: i, last: i, same: *slot - 1})
			*slot = int32(len(gs))
		default:
			gs = append(gs, joinGroup{h: h, first: i, last: i, same: -1})
		}
	}
	c.joinGroups, c.joinNext = gs, next
	return out
}

// joinScan is the most states join groups with a scan of the groups.
const joinScan = 32

// joinSlot is hash h's slot in join's open-addressing table (linear
// probing; a slot holds 1 + the newest group of its hash, 0 when empty).
func joinSlot(table []int32, gs []joinGroup, h uint64) *int32 {
	mask := uint64(len(table) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		if table[i] == 0 || gs[table[i]-1].h == h {
			return &table[i]
		}
	}
}

// joinGroup is a group of states alike (join): their hash, the first and
// last member (indices in join's output, chained by joinNext) and the next
// group of the same hash (-1: none).
type joinGroup struct {
	h                 uint64
	first, last, same int32
}

// joinMember merges s into the first member of the group from first that
// it can join, and reports whether there was one.
func (c *checker) joinMember(out []*sstate, next []int32, first int32, s *sstate) bool {
	for i := first; i >= 0; i = next[i] {
		c.scan(factBytes * (len(out[i].facts) + len(s.facts)))
		if joinFacts(out[i], s.facts) {
			return true
		}
	}
	return false
}

// joinFacts is the facts of the union of two paths that agree on flags,
// registers and pinned facts, when that union is exact: the facts are the
// same but for one fact only one path has (the other path's set contains the
// first's: drop it), or one range of the same pair that overlaps or touches
// the other's (the hull). Anything else — the union of a disjunction — stays
// two paths: merging `B ≤ 1 ∧ R ≥ 1` with `B ≥ 2` would let a later
// `B ≤ 1 ∧ R = 0` through. It makes st's facts the union's (x: st's, y: the
// other path's) and reports whether that was exact.
func joinFacts(st *sstate, y []fact) bool {
	x := st.facts
	if sameSlice(x, y) {
		return true // the same facts, shared
	}
	i, j := 0, 0
	diff := -1 // the index in x of the differing fact, or len(x) if only y has one
	var hull fact
	for i < len(x) || j < len(y) {
		switch {
		case i < len(x) && j < len(y) && x[i] == y[j]:
			i, j = i+1, j+1
			continue
		case diff >= 0:
			return false
		}
		if i < len(x) && j < len(y) && x[i].a == y[j].a && x[i].b == y[j].b && x[i].kind == factRange && y[j].kind == factRange {
			f, g := x[i], y[j]
			if f.hi < g.lo-1 || g.hi < f.lo-1 {
				return false
			}
			hull = fact{a: f.a, b: f.b, kind: factRange, lo: min(f.lo, g.lo), hi: max(f.hi, g.hi)}
			diff = i
			i, j = i+1, j+1
			continue
		}
		// One fact only one side has: which side is the one past the other
		// in the sort order decides.
		if j == len(y) || (i < len(x) && factLess(&x[i], &y[j]) < 0) {
			diff, hull = i, fact{kind: 0xff} // drop x[i]
			i++
		} else {
			diff, hull = len(x), fact{kind: 0xff} // y[j] is dropped: x stays
			j++
		}
	}
	if diff < 0 || diff == len(x) {
		return true
	}
	st.writeFacts()
	if hull.kind == 0xff {
		st.facts = append(st.facts[:diff], st.facts[diff+1:]...)
	} else if st.facts[diff] != hull {
		st.facts[diff] = hull
	}
	return true
}

// block runs stmts on every state and returns the states that fall through
// and those that left the innermost loop with break.
func (c *checker) block(stmts []asm.CStmt, in []*sstate) (out, brk []*sstate) {
	cur := in
	for _, s := range stmts {
		if len(cur) == 0 {
			break
		}
		c.charge(visitWork * len(cur))
		if c.aborted {
			return cur, brk
		}
		switch s := s.(type) {
		case *asm.COp:
			// Most ops leave each path one path: no new slice then.
			var next []*sstate
			forked := false
			for i, st := range cur {
				res, alone := c.op(s, st)
				if alone {
					if forked {
						next = append(next, st)
					}
					continue
				}
				if !forked {
					next, forked = append(next, cur[:i]...), true
				}
				next = append(next, res...)
			}
			if forked {
				cur = c.cap(next)
			}
		case *asm.CLet:
			if s.Slot >= 0 && s.Slot < len(c.valRegs) && !c.valRegs[s.Slot] {
				// Nothing the pass reads depends on it (valueRegs).
				for _, st := range cur {
					c.store(st, s.Slot, topLin)
				}
				continue
			}
			cur = c.let(s, cur)
		case *asm.CIf:
			var next []*sstate
			for _, st := range cur {
				t, f := c.split(s.Cond, st)
				if len(t) > 0 {
					o, b := c.block(s.Then, t)
					next, brk = append(next, o...), append(brk, b...)
				}
				if len(f) > 0 {
					o, b := c.block(s.Else, f)
					next, brk = append(next, o...), append(brk, b...)
				}
			}
			c.forget(next, c.lv.deadOut[s])
			cur = c.cap(next)
		case *asm.CFor:
			c.forget(cur, c.lv.deadIn[s])
			var next []*sstate
			for _, st := range cur {
				next = append(next, c.forLoop(s, st)...)
			}
			c.forget(next, c.lv.deadOut[s])
			cur = c.cap(next)
		case *asm.CWhile:
			c.forget(cur, c.lv.deadIn[s])
			var next []*sstate
			var from []recalled
			for _, st := range cur {
				res, memo := c.whileLoop(s, st, !cowOff)
				for range res {
					from = append(from, recalled{st.iter, memo})
				}
				next = append(next, res...)
			}
			cur = c.capRecalled(next, from)
		case *asm.CBreak:
			brk = append(brk, cur...)
			cur = nil
		}
	}
	return cur, brk
}

// let runs let s on every state of cur and returns the states after it.
func (c *checker) let(s *asm.CLet, cur []*sstate) []*sstate {
	m := int64(0)
	if s.Slot >= 0 && s.Slot < len(c.demand) {
		m = c.demand[s.Slot]
	}
	// A let of a condition splits like an if, so a later test of the
	// register agrees with the facts of its branch.
	condSplit := s.X.Src != nil && !s.X.Const && isCond(s.X.Src) && !c.allConst(s.X.Src, cur[0])
	if m <= 0 && !condSplit {
		for _, st := range cur {
			c.store(st, s.Slot, c.value(s.X, st))
		}
		return cur
	}
	var next []*sstate
	for _, st := range cur {
		switch {
		case m > 0 && c.storeResidue(st, s.Slot, m, c.value(s.X, st)):
			// Only a residue is read (regDemands): paths that differ in
			// the rest are one path.
			next = append(next, st)
		case !condSplit || c.allConst(s.X.Src, st):
			c.store(st, s.Slot, c.value(s.X, st))
			next = append(next, st)
		default:
			t, f := c.split(s.X, st)
			for _, x := range t {
				c.store(x, s.Slot, constLin(1))
			}
			for _, x := range f {
				c.store(x, s.Slot, constLin(0))
			}
			next = append(append(next, t...), f...)
		}
	}
	if condSplit {
		return c.cap(next)
	}
	return next
}

// setLoopVar binds loop variable slot to v on x for one trip.
func (c *checker) setLoopVar(x *sstate, li *loopInfo, slot int, v lin, parent []int64) {
	c.retire(x, li.k)
	c.store(x, slot, v)
	if v.isConst() {
		x.iter = append(append([]int64(nil), parent...), v.c)
	} else {
		x.iter = parent
	}
}

func (c *checker) forLoop(s *asm.CFor, st *sstate) []*sstate {
	lo := c.value(s.From, st)
	hi := c.value(s.To, st)
	step, stepOK := int64(1), true
	if s.Step.Fn != nil || s.Step.Val != 0 || s.Step.Const {
		v := c.value(s.Step, st)
		step, stepOK = v.c, v.isConst()
	}
	if lo.isConst() && hi.isConst() && stepOK && step > 0 && asm.ForTrips(lo.c, hi.c, step) <= maxUnroll {
		cur := []*sstate{st}
		var exits []*sstate
		parent := st.iter
		for v, more := lo.c, lo.c < hi.c; more && len(cur) > 0; v, more = asm.ForNext(v, hi.c, step) {
			it := append(append([]int64(nil), parent...), v)
			for _, x := range cur {
				c.store(x, s.Slot, constLin(v))
				x.iter = it
			}
			var b []*sstate
			cur, b = c.block(s.Body, cur)
			exits = append(exits, b...)
			c.forget(cur, c.lv.deadHead[s])
			cur = c.cap(cur)
		}
		out := append(cur, exits...)
		for _, x := range out {
			x.iter = parent
			c.store(x, s.Slot, topLin)
		}
		return out
	}
	if !stepOK || step <= 0 {
		// Unknown step: the loop may run any number of times, zero
		// included, with the loop variable unknown.
		c.store(st, s.Slot, topLin)
		return c.fixpoint(s.Body, st, true)
	}
	return c.peeled(s, st, lo, hi, step)
}

// whileLoop runs a while loop: each trip the condition splits the paths
// into those that leave and those that run the body, so the body always sees
// the condition true. While the condition is decided the trips are exact (up
// to maxUnroll); once it depends on unknowns (a polling loop) the loop head
// widens as in fixpoint and the trips stop when no new state appears, after
// at most maxFixpoint more.
//
// With shared, a memo entry's states come back as they are, not copied
// (memo true: see capRecalled).
func (c *checker) whileLoop(s *asm.CWhile, st *sstate, shared bool) (res []*sstate, memo bool) {
	// Like fixpoint, remember the loop's result per entry state.
	c.gc(st)
	return c.memoized(memoLoop{s, -1}, c.loopTouch(s, s.Body, s.Cond), st, shared, func() []*sstate { return c.whileRun(s, st) })
}

func (c *checker) whileRun(s *asm.CWhile, st *sstate) []*sstate {
	cur := []*sstate{st}
	var out []*sstate
	var w *widener
	var seen map[string]bool
	left := maxUnroll
	for len(cur) > 0 && left > 0 {
		left--
		var body []*sstate
		for _, x := range cur {
			t, f := c.split(s.Cond, x)
			if len(t) > 0 && len(f) > 0 && w == nil {
				w, seen = c.newWidener(s, x), map[string]bool{}
				if s.Cond.Src != nil {
					w.cond = c.exprDepsOf(s.Cond.Src).slots
				}
				left = min(left, maxFixpoint)
			}
			out, body = append(out, f...), append(body, t...)
		}
		if len(body) == 0 {
			cur = nil
			break
		}
		var b []*sstate
		cur, b = c.block(s.Body, body)
		out = append(out, b...)
		c.forget(cur, c.lv.deadHead[s])
		cur = c.cap(cur)
		if w != nil {
			var fresh []*sstate
			cur = c.widenNew(w, cur, seen, &fresh)
		}
	}
	if w != nil {
		for _, x := range out {
			w.apply(x)
		}
	}
	out = append(out, cur...)
	// Here, not in block: the result is the memo's, shared with the paths
	// that recall it.
	c.forget(out, c.lv.deadOut[s])
	return c.cap(out)
}

// fixpoint runs body 0, 1, 2, ... times from st until no new flag state
// appears (counts are bits, so this ends quickly) and returns every
// state after some number of trips, including zero.
//
// Registers the body keeps changing would make every trip a new state: a
// counter (%gk, %processed) never repeats, and nested loops of unknown trip
// count then multiply paths until the work budget runs out (allgather_gemm's
// compute kernel did). So the loop head widens (widener): a register the body
// changes holds the loop's symbol for it on every path from then on, except
// that a register a flag id depends on keeps two values exact, so a toggle
// such as `%b = 1 - %b` (double-buffered ids) is still checked; a third value
// widens it too.
//
// Without withEntry the loop runs at least once: the entry state is not a
// result unless some number of trips leads back to it.
func (c *checker) fixpoint(body []asm.CStmt, st *sstate, withEntry bool) []*sstate {
	// The result depends only on the body and the entry state's key, and a
	// loop nested in loops of unknown trip count is entered from the same
	// state over and over: remember it.
	if len(body) == 0 {
		return c.fixpointRun(body, st, withEntry)
	}
	c.gc(st)
	loop := memoLoop{&body[0], len(body)}
	if !withEntry {
		loop.n = -len(body)
	}
	res, _ := c.memoized(loop, c.loopTouch(&body[0], body), st, false, func() []*sstate { return c.fixpointRun(body, st, withEntry) })
	return res
}

// memoLoop names a loop for the memo: its statement (fixpoint: the first of
// its body) and n (fixpoint: the body's length, negative without the
// zero-trip entry; while and peeled loops: -1).
type memoLoop struct {
	stmt any
	n    int
}

// memoKey names one loop entered in one flag/register state: the loop's
// number (loopNums) and the state's key.
type memoKey = string

// memoEntry is a memo entry: its key and the loop's result.
type memoEntry struct {
	key memoKey
	res []*sstate
}

// memoKeyOf builds loop's key for st in c.keyBuf.
func (c *checker) memoKeyOf(loop memoLoop, st *sstate) []byte {
	id, ok := c.loopNums[loop]
	if !ok {
		id = uint32(len(c.loopNums))
		c.loopNums[loop] = id
	}
	c.keyBuf = binary.LittleEndian.AppendUint32(c.keyBuf[:0], id)
	c.keyBuf = st.appendKey(c.keyBuf, nil)
	c.charge(len(c.keyBuf))
	return c.keyBuf
}

// recall returns clones of memo entry e's states, in st's iteration.
func (c *checker) recall(e memoEntry, st *sstate) []*sstate {
	c.noteHit(e)
	out := make([]*sstate, len(e.res))
	for i, x := range e.res {
		out[i] = x.recalledCopy(st.iter)
	}
	return out
}

// noteHit logs a memo hit for the template runs under way.
func (c *checker) noteHit(e memoEntry) {
	if c.recording > 0 {
		c.hitLog = append(c.hitLog, e.key)
	}
}

func (c *checker) remember(mk memoKey, res []*sstate) {
	if c.aborted {
		return
	}
	saved := make([]*sstate, len(res))
	for i, x := range res {
		saved[i] = x.clone()
		c.intern(saved[i])
		c.charge(x.size())
	}
	c.memo[mk] = memoEntry{mk, saved}
	c.memoLog = append(c.memoLog, mk)
}

func (c *checker) fixpointRun(body []asm.CStmt, st *sstate, withEntry bool) []*sstate {
	w := c.newWidener(&body[0], st)
	seen := map[string]bool{}
	var out []*sstate
	if withEntry {
		k := st.key()
		c.charge(len(k))
		seen[k] = true
		out = append(out, st)
	}
	cur := []*sstate{st.clone()}
	for n := 0; n < maxFixpoint && len(cur) > 0; n++ {
		next, brk := c.block(body, cur)
		out = append(out, brk...)
		c.forget(next, c.lv.deadHead[&body[0]])
		next = c.cap(next)
		cur = c.widenNew(w, next, seen, &out)
	}
	for _, x := range out {
		w.apply(x)
	}
	return c.cap(out)
}

// widenNew widens next at a loop head and returns clones of the states not
// seen before, which it also appends to out.
func (c *checker) widenNew(w *widener, next []*sstate, seen map[string]bool, out *[]*sstate) []*sstate {
	for _, x := range next {
		w.observe(x)
	}
	var cur []*sstate
	for _, x := range next {
		w.apply(x)
		c.gc(x)
		k := x.key()
		c.charge(len(k))
		if !seen[k] {
			seen[k] = true
			*out = append(*out, x)
			cur = append(cur, x.clone())
		}
	}
	return cur
}

// widener tracks, per register, the distinct known values seen at one loop
// head (up to two) and which registers have been widened. A widened register
// holds the loop's widening symbol for it, not an unknown: its value changes
// from trip to trip, but within a trip two tests of it still agree
// (`while %i < %n { if %i < %n { ... } }`).
type widener struct {
	c       *checker
	loop    any
	vals    [][2]wval
	nvals   []uint8
	widened []bool
	keep    []bool // flag-id registers: two values stay exact
	// cond lists the registers a while loop's condition reads: a counter
	// widened from a constant keeps its distance to their values.
	cond []int
}

type wval struct {
	sym int32
	off int64
}

// newWidener starts the widening of the loop named by loop (its statement)
// at state st.
func (c *checker) newWidener(loop any, st *sstate) *widener {
	c.charge(20 * len(st.regs)) // vals, nvals, widened
	w := &widener{c: c, loop: loop, vals: make([][2]wval, len(st.regs)), nvals: make([]uint8, len(st.regs)), widened: make([]bool, len(st.regs)), keep: c.idRegs}
	w.observe(st)
	return w
}

func (w *widener) observe(x *sstate) {
	for i, v := range x.regs {
		if i >= len(w.vals) || x.syms[i] == symTop || w.widened[i] {
			continue
		}
		wv := wval{x.syms[i], v}
		n := w.nvals[i]
		if (n >= 1 && w.vals[i][0] == wv) || (n >= 2 && w.vals[i][1] == wv) {
			continue
		}
		limit := uint8(1)
		if i < len(w.keep) && w.keep[i] {
			limit = 2
		}
		if n < limit {
			w.vals[i][n] = wv
			w.nvals[i]++
			continue
		}
		w.widened[i] = true
	}
}

func (w *widener) apply(x *sstate) {
	for i := range x.syms {
		if i >= len(w.widened) || !w.widened[i] {
			continue
		}
		s := w.c.widenSym(w.loop, i)
		switch {
		case x.syms[i] == s && x.regs[i] == 0:
			// Still this trip's value: keep what the path knows of it.
		case x.syms[i] == s:
			// The body added d (`%i = %i + 1`): the next trip's symbol is
			// the old one plus d, so its facts against other values shift.
			w.c.shiftSym(x, s, x.regs[i])
		default:
			// A new value v: what the path knows of v against other
			// symbols carries over as facts of the symbol.
			v := regLin(x, i)
			w.c.retire(x, s)
			x.setReg(i, s, 0)
			w.c.relate(x, s, v, w.condSyms(x, i))
		}
	}
}

// shiftSym rebinds symbol s to s + d on x: registers holding s + e now hold
// s + (e - d), facts about s shift by d, terms computed from s are forgotten,
// and a range of s alone keeps only the end s moves away from, so that a
// counter's facts converge at the loop head (`%i >= 1`, and its relation to
// the loop's bound, stay).
func (c *checker) shiftSym(x *sstate, s int32, d int64) {
	// A register holds s (the caller saw it): the facts change too.
	x.writeFacts()
	for i := range x.syms {
		if x.syms[i] > symZero && x.syms[i] != s && c.dependsOn(x.syms[i], s) {
			x.setReg(i, symTop, 0)
		} else if x.syms[i] == s {
			x.setReg(i, s, x.regs[i]-d)
		}
	}
	out := x.facts[:0]
	for _, f := range x.facts {
		switch {
		case (f.a != s && c.dependsOn(f.a, s)) || (f.b > symZero && f.b != s && c.dependsOn(f.b, s)):
			continue
		case f.a == s && f.b == symZero && f.kind == factRange:
			// A counter's range keeps the end it moves away from: every
			// later trip's value is past it too (interval widening).
			if d > 0 {
				f.hi = posInf
			} else {
				f.lo = negInf
			}
			if f.lo <= negInf && f.hi >= posInf {
				continue
			}
		case f.a == s && f.b == symZero && f.kind == factNE:
			continue
		case f.a == s && f.kind == factMod:
			f.lo = ((f.lo+d)%f.hi + f.hi) % f.hi
		case f.a == s:
			f.lo, f.hi = addSat(f.lo, d), addSat(f.hi, d)
		case f.b == s:
			f.lo, f.hi = addSat(f.lo, -d), addSat(f.hi, -d)
		}
		out = append(out, f)
	}
	x.facts = out
}

// condSyms lists the symbols the registers of the loop's condition hold on
// x, when register i is one of them (a counter the condition tests); nil
// otherwise, and relate then records nothing for a constant.
func (w *widener) condSyms(x *sstate, i int) []int32 {
	if !slices.Contains(w.cond, i) {
		return nil
	}
	out := []int32{}
	for _, slot := range w.cond {
		if slot < len(x.syms) && x.syms[slot] > symZero {
			out = append(out, x.syms[slot])
		}
	}
	return out
}

// relate records s = v on x. When v is another symbol t plus an offset: s - t
// and t's ranges against other symbols, shifted. When v is a constant and rel
// is not nil (s is a counter the loop condition tests): s = v, and s's
// distance to each symbol in rel (the condition's) from that symbol's range.
func (c *checker) relate(x *sstate, s int32, v lin, rel []int32) {
	if v.top || v.n > 1 || (v.n == 1 && v.m[0] != 1) {
		return
	}
	if v.n == 0 {
		if rel == nil {
			return
		}
		c.assume(x, s, symZero, rng{v.c, v.c})
		for _, a := range rel {
			if a == s {
				continue
			}
			if r := c.rangeOf(x, a); r.lo > negInf || r.hi < posInf {
				c.assume(x, s, a, rng{addSat(v.c, -r.hi), addSat(v.c, -r.lo)})
			}
		}
		return
	}
	if v.n == 1 {
		// s = t + c: s - t = c, and t's ranges against other symbols hold
		// for s shifted by c (the pass does not chain facts itself).
		t := v.s[0]
		var copied []fact
		for _, f := range x.facts {
			if f.kind == factRange && (f.a == t || f.b == t) && f.a != s && f.b != s {
				copied = append(copied, f)
			}
		}
		c.assume(x, s, t, rng{v.c, v.c})
		for _, f := range copied {
			if f.a == t {
				c.assume(x, s, f.b, rng{addSat(f.lo, v.c), addSat(f.hi, v.c)})
			} else {
				c.assume(x, f.a, s, rng{addSat(f.lo, -v.c), addSat(f.hi, -v.c)})
			}
		}
	}
}

// widenSym is the symbol a register widened at a loop's head holds, one per
// loop and register so that entering the loop again gives the same keys.
func (c *checker) widenSym(loop any, slot int) int32 {
	k := widenKey{loop, slot}
	s, ok := c.widenSyms[k]
	if !ok {
		s = c.newSym(negInf, posInf, nil)
		c.syms[s].loopVar = true // it changes from trip to trip
		c.widenSyms[k] = s
	}
	return s
}

type widenKey struct {
	loop any
	slot int
}

// op applies one instruction to st: a flag set or wait, or a scalar load
// (its register becomes the load's symbol). A flag id the facts bound to a
// few values in 0-7 (subblock_idx, a masked term) splits the path per value:
// then it returns the paths; alone says st is still the one path.
func (c *checker) op(op *asm.COp, st *sstate) (paths []*sstate, alone bool) {
	if op.Info == nil {
		return nil, true
	}
	set := op.Info.Op == asm.OpSetFlag
	if !set && op.Info.Op != asm.OpWaitFlag {
		for _, a := range op.Args {
			if a.Kind == asm.ArgReg {
				s := c.ldSym(op.ID)
				c.retire(st, s)
				c.store(st, a.Slot, lin{n: 1, s: [2]int32{s}, m: [2]int64{1}})
			}
		}
		return nil, true
	}
	if len(op.Args) < 3 || op.Args[0].Kind != asm.ArgPipe || op.Args[1].Kind != asm.ArgPipe {
		return nil, true
	}
	src, dst := op.Args[0].Pipe, op.Args[1].Pipe
	where := dst
	if set {
		where = src
	}
	id := c.value(op.Args[2].Val, st)
	if id.isConst() {
		c.flag(op, set, src, dst, where, id.c, st)
		return nil, true
	}
	// A few values: one path per value. Not for a value computed from a
	// loop variable: each trip rebinds it, so the paths of consecutive
	// trips would pair every value with every other.
	if r := c.rangeOfLin(st, id); !id.top && r.lo >= 0 && r.hi < numFlagIDs && !c.fromLoopVar(id) {
		var out []*sstate
		for v := r.lo; v <= r.hi; v++ {
			x := st
			if v < r.hi {
				x = c.fork(st)
			}
			if c.assumeCmp(x, linAddConst(id, -v), "==") {
				c.flag(op, set, src, dst, where, v, x)
				out = append(out, x)
			}
		}
		return out, false
	}
	p := c.pairOf(op, src, dst)
	c.unchecked[p] = true
	c.report(KindUnchecked, SevNote, op, where, st.iter, nil, asm.PipeInvalid,
		fmt.Sprintf("%s %s, %s: the event id depends on values the static pass cannot know (rank, block index or a register set from memory); flag balance on the %s->%s pair (every id) is not checked", op.Info.Name, src, dst, src, dst),
		"run `ptoasm lint` on the program to check it dynamically")
	return nil, true
}

func linAddConst(l lin, v int64) lin {
	l.c += v
	return l
}

func (c *checker) ldSym(id int) int32 {
	s, ok := c.ldSyms[id]
	if !ok {
		s = c.newSym(negInf, posInf, nil)
		c.ldSyms[id] = s
	}
	return s
}

// flag applies a set or wait of channel (src, dst, id) to st.
func (c *checker) flag(op *asm.COp, set bool, src, dst, where asm.Pipe, id int64, st *sstate) {
	if !validPipe(src) || !validPipe(dst) || id < 0 || id >= numFlagIDs {
		c.report(KindBadEventID, SevError, op, where, st.iter, nil, asm.PipeInvalid,
			fmt.Sprintf("%s %s, %s, %d: event ids are 0-%d and both pipes must be real pipes", op.Info.Name, src, dst, id, numFlagIDs-1),
			fmt.Sprintf("use an id in 0-%d", numFlagIDs-1))
		return
	}
	p := c.pairOf(op, src, dst)
	ch := p*numFlagIDs + int(id)
	if set {
		if st.counts[ch] >= 1 {
			c.reportPair(p, KindDoubleSet, SevError, c.opByID(st.last[ch]), src, st.iter, op, src,
				fmt.Sprintf("set_flag %s, %s, %d can run again before its wait_flag on some path: the flag is one bit, so one set is lost", src, dst, id),
				fmt.Sprintf("wait for the first set (`wait_flag %s, %s, %d`) before setting it again, or use a second event id", src, dst, id))
		}
		// The flag is one bit: a second set is lost, not counted.
		st.setFlag(ch, 1, int32(op.ID))
		return
	}
	if st.counts[ch] == 0 {
		c.reportPair(p, KindDeadlock, SevError, op, dst, st.iter, nil, asm.PipeInvalid,
			fmt.Sprintf("wait_flag %s, %s, %d can run with no set_flag before it on some path (a loop that runs zero times, an untaken branch, or one wait too many): pipe %s would wait forever", src, dst, id, dst),
			fmt.Sprintf("make every path reaching this wait run `set_flag %s, %s, %d` first (prime it before the loop), or drop the wait on the paths without a set", src, dst, id))
		return
	}
	st.setFlag(ch, st.counts[ch]-1, st.last[ch])
}

// walkRefs calls f on every register reference in e.
func walkRefs(e asm.Expr, f func(*asm.Ref)) {
	switch e := e.(type) {
	case *asm.Ref:
		f(e)
		walkRefs(e.Index, f)
	case *asm.Unary:
		walkRefs(e.X, f)
	case *asm.Binary:
		walkRefs(e.X, f)
		walkRefs(e.Y, f)
	case *asm.Paren:
		walkRefs(e.X, f)
	case *asm.Call:
		for _, a := range e.Args {
			walkRefs(a, f)
		}
	case *asm.KeyVal:
		walkRefs(e.Val, f)
	}
}

var builtins = map[string]bool{"rank": true, "nranks": true, "block_idx": true, "block_num": true, "subblock_idx": true}

// exprDepsOf is exprDeps, cached.
func (c *checker) exprDepsOf(e asm.Expr) exprDeps {
	d, ok := c.deps[e]
	if !ok {
		d = c.exprDeps(e)
		c.deps[e] = d
	}
	return d
}

// exprDeps lists the registers e reads; opaque when it reads something the
// static pass never knows (a builtin, a float, an unknown name).
type exprDeps struct {
	slots  []int
	opaque bool
}

func (c *checker) exprDeps(e asm.Expr) exprDeps {
	var d exprDeps
	var walk func(e asm.Expr)
	walk = func(e asm.Expr) {
		switch e := e.(type) {
		case nil:
		case *asm.Num:
			d.opaque = d.opaque || e.IsFloat
		case *asm.Name:
			d.opaque = d.opaque || builtins[strings.ToLower(e.Name)]
		case *asm.Ref:
			slot, ok := c.slots[strings.TrimPrefix(e.Name, "%")]
			if !ok {
				d.opaque = true
				return
			}
			d.slots = append(d.slots, slot)
			walk(e.Index)
		case *asm.Unary:
			walk(e.X)
		case *asm.Binary:
			walk(e.X)
			walk(e.Y)
		case *asm.Paren:
			walk(e.X)
		case *asm.Call:
			for _, a := range e.Args {
				walk(a)
			}
		case *asm.KeyVal:
			walk(e.Val)
		default:
			d.opaque = true
		}
	}
	walk(e)
	return d
}
