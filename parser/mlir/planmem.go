package mlir

import (
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/ptoasm/ptoasm/asm"
)

// Automatic placement of local buffers, as PTOAS's PlanMemory pass does it
// (lib/PTO/Transforms/PTOPlanMemory.cpp, OptMemPlanForPipeline.cpp and
// AllocToPointerCast.{h,cpp} at a56b18c3). Lint's verdict depends on the
// addresses: two buffers PlanMemory puts at the same bytes race where their
// uses are unordered, so the lowering places every buffer where PTOAS would.
// The pass runs once per function, on the function as PTOViewToMemref left
// it: every alloc_tile without an address is a memref.alloc (the buffer)
// followed by a bind_tile (its tile, an alias). In order:
//
//  1. Liveness by gen and kill (MemLivenessAnalysis): every op gets a time, in
//     pre-order; an scf.for gets one at its start and one at its end, an
//     scf.if one at the start, one before the else branch and one at the end.
//     A buffer's life starts at the first op that writes it (a DPS op's outs,
//     the written scratch operand of an op such as trowsum, set_validshape,
//     tgetval, a call or a pipe op's operands, or the start of a loop it is
//     live into) and ends at the first op, in the buffer's own block, after
//     which it and every alias of it are dead (MLIR's Liveness). A buffer last
//     used in a nested block no scf.for/scf.if end covers (an scf.while body,
//     a section, a branch that yields it) is never killed: PTOAS leaves its
//     free time at -1, so it conflicts with nothing and others may share its
//     bytes while it is live. That is PTOAS's behaviour and is kept.
//  2. One storage entry per buffer, in the order their lives start
//     (GenerateStorageEntry). In-place merging (MergeInplaceSE) and
//     multi-buffering (ExpandMultiBufferStorageEntry, spec level 1) are
//     no-ops at a56b18c3: inplacePairList and buffer2MultiNum are never
//     filled and IsReusePTOOp returns false, so no entry merges and none is
//     double-buffered; level 1 therefore never succeeds.
//  3. Per memory: one buffer goes at 0; buffers whose aligned sizes sum to
//     less than the capacity go side by side in entry order
//     (IsEnoughForBuffersNoReuse); otherwise entries are reordered (UB only:
//     buffers memref.load/store touch last, GetReorderRootStorageEntry; the
//     DMA set is never filled) and placed first fit over an outline of
//     bounds, each bound carrying the merged lives of everything placed in
//     it (SpecAlloc, UpdateOutline), trying level 2 (a scalar-touched buffer
//     never shares bytes with another kind, VerifyConflictStage2) before
//     level 0 (lives must not overlap). When nothing fits, earlier
//     placements are rolled back and retried at a lower level, then the
//     whole plan restarts with split bounds (ApplyFailStrategy); when that
//     fails too the function is rejected with PTOAS's overflow message.
//  4. A buffer no op ever writes has no entry; AllocToPointerCast gives it a
//     fallback address, 4 KiB-aligned past the highest planned offset, in
//     the order the rewrite driver visits allocs (last first).

// allocOps are the ops that allocate a local buffer.
var allocOps = map[string]bool{"pto.alloc_tile": true, "memref.alloc": true}

// memPlan returns the plan of a function body, computed once; an overflow
// is reported at the function, as PTOAS reports it.
func (l *lowerer) memPlan(body *Region, sp asm.Span) *memPlan {
	if p, ok := l.plans[body]; ok {
		return p
	}
	p := planMemory(body)
	l.plans[body] = p
	if p.err != "" {
		l.errf(sp, "%s", p.err)
	}
	return p
}

// pmSpec is PlanMemory's A2/A3 memory table (MemPlan::InitMemSpecsFromModule
// kA3, in bytes): capacity and alignment per memory.
func pmSpec(s asm.Space) (capacity, align uint64) {
	switch s {
	case asm.UB:
		return 196608, 32
	case asm.L1:
		return 524288, 32
	case asm.L0A, asm.L0B:
		return 65536, 512
	case asm.L0C:
		return 131072, 512
	case asm.BT:
		return 65536, 32
	case asm.FB:
		return 196608, 32
	}
	return uint64(asm.SpaceCapacity(s)), uint64(asm.SpaceAlign(s))
}

// pmOrder is the order memories are planned in; it matters only through the
// split-outline flag a failed plan leaves set for the next memory.
var pmOrder = []asm.Space{asm.UB, asm.L1, asm.L0A, asm.L0B, asm.L0C, asm.BT, asm.FB}

// memPlan is the result for one function: the address of each buffer's
// allocating op, and the overflow message when PTOAS would reject it.
type memPlan struct {
	addr map[*Op]int64
	end  map[asm.Space]int64 // past the last planned byte, per memory
	err  string
	// reserve is the base of the function's pto.reserve_buffer {auto =
	// true} (reserveHole).
	reserve map[*Op]int64
}

// ---- the function as PlanMemory sees it ----

type pmOp struct {
	op       *Op
	blk      *pmBlock
	idx      int
	operands []int
	results  []int
	bound    []int // values the op binds in its tokens (for: iv, iter_args)
	inits    []int // their initial values
	regions  [][]*pmBlock
	tokVal   map[asm.Span]int // the operand each value token names
}

type pmBlock struct {
	parent *pmOp
	ops    []*pmOp
	args   []int
	liveIn []int
	lvDone bool
}

type pmValue struct {
	def   *pmOp    // nil for a block argument
	blk   *pmBlock // the block defining it
	users []*pmOp
	buf   *pmBuf // non-nil: a buffer PlanMemory plans
}

type pmBuf struct {
	op    *Op
	space asm.Space
	size  int64 // bytes the lowering's tile covers
	numel int64 // elements of the memref type
	elem  string
}

type pmBuilder struct {
	vals   []*pmValue
	scopes []map[string]int
}

func (b *pmBuilder) newVal(def *pmOp, blk *pmBlock) int {
	b.vals = append(b.vals, &pmValue{def: def, blk: blk})
	return len(b.vals) - 1
}

func (b *pmBuilder) define(name string, id int) { b.scopes[len(b.scopes)-1][name] = id }

func (b *pmBuilder) lookup(name string) (int, bool) {
	for i := len(b.scopes) - 1; i >= 0; i-- {
		if id, ok := b.scopes[i][name]; ok {
			return id, true
		}
	}
	if base, _, ok := strings.Cut(name, "#"); ok {
		return b.lookup(base)
	}
	return 0, false
}

func (b *pmBuilder) region(r *Region, parent *pmOp, bound []int, boundNames []string) []*pmBlock {
	b.scopes = append(b.scopes, map[string]int{})
	var blocks []*pmBlock
	for bi, bn := range r.Blocks {
		blk := &pmBlock{parent: parent}
		if bi == 0 {
			for i, id := range bound {
				b.vals[id].blk = blk
				blk.args = append(blk.args, id)
				b.define(boundNames[i], id)
			}
		}
		for _, a := range bn.Args {
			id := b.newVal(nil, blk)
			blk.args = append(blk.args, id)
			b.define(a.Name, id)
		}
		blocks = append(blocks, blk)
		for _, op := range bn.Ops {
			b.op(op, blk)
		}
	}
	b.scopes = b.scopes[:len(b.scopes)-1]
	return blocks
}

func (b *pmBuilder) op(op *Op, blk *pmBlock) {
	o := &pmOp{op: op, blk: blk, idx: len(blk.ops), tokVal: map[asm.Span]int{}}
	blk.ops = append(blk.ops, o)
	var boundNames []string
	for i := 0; i < len(op.Toks); i++ {
		t := op.Toks[i]
		if t.Kind != KValue {
			continue
		}
		if i+1 < len(op.Toks) && op.Toks[i+1].is("=") {
			// `%iv = %lb`, `iter_args(%a = %init)`: a block argument of
			// the op's first region, initialised from the next value.
			id := b.newVal(nil, nil)
			o.bound = append(o.bound, id)
			boundNames = append(boundNames, t.Text)
			init := -1
			if i+2 < len(op.Toks) && op.Toks[i+2].Kind == KValue {
				if v, ok := b.lookup(op.Toks[i+2].Text); ok {
					init = v
				}
			}
			o.inits = append(o.inits, init)
			continue
		}
		if id, ok := b.lookup(t.Text); ok {
			o.tokVal[t.Span] = id
			o.operands = append(o.operands, id)
			b.vals[id].users = append(b.vals[id].users, o)
		}
	}
	for i, r := range op.Regions {
		if i == 0 {
			o.regions = append(o.regions, b.region(r, o, o.bound, boundNames))
		} else {
			o.regions = append(o.regions, b.region(r, o, nil, nil))
		}
	}
	for _, r := range op.Results {
		for j := 0; j < r.Count; j++ {
			id := b.newVal(o, blk)
			o.results = append(o.results, id)
			if r.Count == 1 {
				b.define(r.Name, id)
			}
			b.define(r.Name+"#"+strconv.Itoa(j), id)
		}
	}
}

// pmBufferOf reads an allocating op's buffer: its memory and size (the
// lowering's footprint, rows padded to 32 bytes where it pads them).
func pmBufferOf(op *Op) *pmBuf {
	if !allocOps[op.Name] {
		return nil
	}
	if _, fixed := keyValue(op.Toks, "addr"); fixed {
		return nil
	}
	ti, ok := parseType(lastType(op.Toks))
	dt, okd := dtypeName(ti.elem)
	if !ok || !okd {
		return nil
	}
	loc := ti.loc
	if loc == "ub" {
		loc = "vec"
	}
	l, ok := asm.ParseLoc(loc)
	if !ok {
		return nil
	}
	rows, cols, pad := tileShape(ti, dt)
	if rows <= 0 || cols <= 0 {
		return nil
	}
	// No buffer holds 2^40 bytes: capped there, a shape past it overflows
	// its space, and the sums of a scope's sizes in bits cannot wrap.
	size := min(asm.DimProduct([]int64{rows, max(cols, pad), int64(dtypeSize(dt))}), 1<<40)
	return &pmBuf{op: op, space: l.Space(), size: size, numel: asm.DimProduct([]int64{rows, cols}), elem: ti.elem}
}

// ---- MLIR's Liveness on that structure ----

func (p *pmPlanner) ancestorIn(o *pmOp, b *pmBlock) *pmOp {
	for o != nil {
		if o.blk == b {
			return o
		}
		o = o.blk.parent
	}
	return nil
}

// liveIn is the values used inside b (at any depth) but defined outside it.
func (p *pmPlanner) liveIn(b *pmBlock) []int {
	if b.lvDone {
		return b.liveIn
	}
	b.lvDone = true
	defined := map[int]bool{}
	used := map[int]bool{}
	var walk func(bl *pmBlock)
	walk = func(bl *pmBlock) {
		for _, a := range bl.args {
			defined[a] = true
		}
		for _, o := range bl.ops {
			for _, v := range o.operands {
				used[v] = true
			}
			for _, v := range o.results {
				defined[v] = true
			}
			for _, r := range o.regions {
				for _, rb := range r {
					walk(rb)
				}
			}
		}
	}
	walk(b)
	for v := range used {
		if !defined[v] {
			b.liveIn = append(b.liveIn, v)
		}
	}
	sort.Ints(b.liveIn)
	return b.liveIn
}

// endOp is LivenessBlockInfo::getEndOperation (no value is live-out: every
// block here ends its region).
func (p *pmPlanner) endOp(v int, b *pmBlock, start *pmOp) *pmOp {
	if last := p.lastUse(v, b); last != nil && start.idx < last.idx {
		return last
	}
	return start
}

// lastUse is the last op of b that uses v or holds a use of it, nil when
// none does; cached, since every kill asks for it again.
func (p *pmPlanner) lastUse(v int, b *pmBlock) *pmOp {
	m := p.uses[b]
	if m == nil {
		m = map[int]*pmOp{}
		p.uses[b] = m
	}
	if last, ok := m[v]; ok {
		return last
	}
	var last *pmOp
	for _, u := range p.vals[v].users {
		if a := p.ancestorIn(u, b); a != nil && (last == nil || last.idx < a.idx) {
			last = a
		}
	}
	m[v] = last
	return last
}

// currentlyLive is LivenessBlockInfo::currentlyLiveValues(op): the block's
// arguments and live-ins (live from its first op), then the results of its
// ops up to op, each kept when op lies in its range in the block.
func (p *pmPlanner) currentlyLive(op *pmOp) []int {
	b := op.blk
	r := p.ranges[b]
	if r == nil {
		r = &pmRanges{}
		seen := map[int]bool{}
		add := func(v int, start *pmOp) {
			if seen[v] || start == nil {
				return
			}
			seen[v] = true
			r.vals = append(r.vals, v)
			r.lo = append(r.lo, start.idx)
			r.hi = append(r.hi, p.endOp(v, b, start).idx)
		}
		for _, a := range b.args {
			add(a, b.ops[0])
		}
		for _, v := range p.liveIn(b) {
			add(v, b.ops[0])
		}
		for _, o := range b.ops {
			for _, v := range o.results {
				add(v, o)
			}
		}
		p.ranges[b] = r
	}
	var out []int
	for i, v := range r.vals {
		if r.lo[i] <= op.idx && op.idx <= r.hi[i] {
			out = append(out, v)
		}
	}
	return out
}

// pmRanges are the live ranges of a block's values, as op indices.
type pmRanges struct {
	vals   []int
	lo, hi []int
}

func (p *pmPlanner) deadAfter(v int, op *pmOp) bool { return p.endOp(v, op.blk, op) == op }

// ---- MemLivenessAnalysis ----

const (
	pmDefined = iota + 1
	pmGened
	pmKilled
)

type pmTime struct{ gen, kill []int }

type pmPlanner struct {
	vals      []*pmValue
	alias     map[int][]int
	status    map[int]int
	times     []*pmTime
	conflicts map[[2]int]bool
	scalar    map[int]bool
	split     bool
	uses      map[*pmBlock]map[int]*pmOp
	ranges    map[*pmBlock]*pmRanges
}

func (p *pmPlanner) aliasesWith(v int) []int {
	return append(append([]int(nil), p.alias[v]...), v)
}

func pmInsert(set []int, v int) []int {
	for _, x := range set {
		if x == v {
			return set
		}
	}
	return append(set, v)
}

// updateAlias is MemLivenessAnalysis::UpdateBufferAlias: every member of
// the union aliases every other, in the union's order.
func (p *pmPlanner) updateAlias(buf, aliasBuf int) {
	var u []int
	for _, v := range p.alias[aliasBuf] {
		u = pmInsert(u, v)
	}
	for _, v := range p.alias[buf] {
		u = pmInsert(u, v)
	}
	u = pmInsert(u, buf)
	u = pmInsert(u, aliasBuf)
	for _, b := range u {
		var rest []int
		for _, x := range u {
			if x != b {
				rest = append(rest, x)
			}
		}
		p.alias[b] = rest
	}
}

func (p *pmPlanner) linear() *pmTime {
	t := &pmTime{}
	p.times = append(p.times, t)
	return t
}

func (p *pmPlanner) gen(t *pmTime, vs []int) {
	for _, v := range vs {
		for _, b := range p.aliasesWith(v) {
			if p.status[b] == pmDefined {
				t.gen = append(t.gen, b)
				p.status[b] = pmGened
			}
		}
	}
}

// kill is OpKillHandle: a buffer dies at op when op is in the buffer's own
// block and the buffer and all its aliases are dead after it. The alias
// walk stops at the first alias that is not a buffer, as PTOAS's does.
func (p *pmPlanner) kill(t *pmTime, op *pmOp) {
	for _, v := range p.currentlyLive(op) {
		as := p.aliasesWith(v)
		for _, ab := range as {
			st, ok := p.status[ab]
			if !ok {
				break
			}
			if st == pmGened && p.vals[ab].blk == op.blk && p.allDeadAfter(op, as) {
				t.kill = append(t.kill, ab)
				p.status[ab] = pmKilled
			}
		}
	}
}

func (p *pmPlanner) allDeadAfter(op *pmOp, as []int) bool {
	for _, v := range as {
		if !p.deadAfter(v, op) {
			return false
		}
	}
	return true
}

// pmAliasOps are the ops whose result is a view of their first operand once
// PTOViewToMemref has run (getOperationAliasInfo, bind_tile).
var pmAliasOps = map[string]bool{"pto.bind_tile": true, "pto.subset": true, "pto.treshape": true, "pto.bitcast": true,
	"pto.tassign": true, "memref.subview": true, "memref.reinterpret_cast": true, "memref.cast": true,
	"memref.collapse_shape": true, "memref.expand_shape": true, "memref.view": true, "memref.reshape": true}

// pmGenAll are the ops whose every operand is generated (written) by them.
var pmGenAll = map[string]bool{"pto.tgetval": true, "func.call": true, "pto.tpush": true, "pto.tfree": true,
	"pto.tpush_to_aiv": true, "pto.tpush_to_aic": true, "pto.tfree_from_aic": true, "pto.tfree_from_aiv": true,
	"pto.initialize_l2l_pipe": true, "pto.initialize_l2g2l_pipe": true, "pto.build_async_session": true,
	"pto.tput_async": true, "pto.tget_async": true}

func (p *pmPlanner) groupVals(o *pmOp, kw string) []int {
	inner, ok := keyGroup(dpsToks(o.op), kw)
	if !ok {
		return nil
	}
	var out []int
	for _, it := range splitTop(inner, ",") {
		if len(it) == 0 || it[0].Kind != KValue {
			continue
		}
		if id, ok := o.tokVal[it[0].Span]; ok {
			out = append(out, id)
		}
	}
	return out
}

// dpsToks are an op's tokens in the DPS form: the generic form of pto.tmov
// reads as `ins(...) outs(%dst)`, as the lowering reads it.
func dpsToks(op *Op) []Tok {
	if op.Generic {
		return genericDPS(op).Toks
	}
	return op.Toks
}

func (p *pmPlanner) recordConflict(a, b int) {
	for _, x := range p.aliasesWith(a) {
		for _, y := range p.aliasesWith(b) {
			if x != y {
				p.conflicts[[2]int{min(x, y), max(x, y)}] = true
			}
		}
	}
}

func (p *pmPlanner) blocks(bs []*pmBlock) {
	for _, b := range bs {
		for _, o := range b.ops {
			p.visit(o)
		}
	}
}

// visit is MemLivenessAnalysis::RecursionIR for one op and what it holds.
func (p *pmPlanner) visit(o *pmOp) {
	name := o.op.Name
	switch name {
	case "scf.for":
		p.forOp(o)
		return
	case "scf.if":
		p.ifOp(o)
		return
	}
	t := p.linear()
	short := strings.TrimPrefix(name, "pto.")
	_, hasOuts := keyGroup(dpsToks(o.op), "outs")
	switch {
	case allocOps[name]:
		if len(o.results) == 0 {
			break
		}
		if buf := pmBufferOf(o.op); buf != nil {
			// memref.alloc M (the buffer) + bind_tile T (the tile).
			m := o.results[0]
			if name == "pto.alloc_tile" {
				m = len(p.vals)
				p.vals = append(p.vals, &pmValue{def: o, blk: o.blk})
				p.updateAlias(o.results[0], m)
			}
			p.vals[m].buf = buf
			p.status[m] = pmDefined
		}
	case pmAliasOps[name]:
		if len(o.results) > 0 && len(o.operands) > 0 {
			p.updateAlias(o.results[0], o.operands[0])
		}
	case name == "memref.load" || name == "pto.tprint":
		if name == "memref.load" && len(o.operands) > 0 {
			p.markScalar(o.operands[0])
		}
		p.kill(t, o)
	case name == "pto.set_validshape":
		if len(o.operands) > 0 {
			p.gen(t, o.operands[:1])
		}
		p.kill(t, o)
	case name == "memref.store":
		if len(o.operands) > 1 {
			p.markScalar(o.operands[1])
			p.gen(t, o.operands[1:2])
		}
		p.kill(t, o)
	case pmGenAll[name]:
		p.gen(t, o.operands)
		p.kill(t, o)
	case name == "arith.select":
		if len(o.results) > 0 && len(o.operands) == 3 {
			p.updateAlias(o.results[0], o.operands[1])
			p.updateAlias(o.results[0], o.operands[2])
		}
		p.kill(t, o)
	case hasOuts && strings.HasPrefix(name, "pto."):
		outs := p.groupVals(o, "outs")
		gens := append([]int(nil), outs...)
		var scratch []int
		if base, ok := scratchIns[short]; ok {
			if ins := p.groupVals(o, "ins"); len(ins) > base {
				scratch = ins[len(ins)-1:]
			}
		}
		gens = append(gens, scratch...)
		p.gen(t, gens)
		for _, s := range scratch {
			for _, d := range outs {
				if s != d {
					p.recordConflict(s, d)
				}
			}
		}
		p.kill(t, o)
	}
	for _, r := range o.regions {
		p.blocks(r)
	}
}

func (p *pmPlanner) markScalar(v int) {
	for _, b := range p.aliasesWith(v) {
		if p.vals[b].buf != nil {
			p.scalar[b] = true
		}
	}
}

func terminator(bs []*pmBlock) *pmOp {
	if len(bs) == 0 || len(bs[0].ops) == 0 {
		return nil
	}
	last := bs[0].ops[len(bs[0].ops)-1]
	if last.op.Name != "scf.yield" {
		return nil
	}
	return last
}

// forOp is RecursiveForOp.
func (p *pmPlanner) forOp(o *pmOp) {
	begin := p.linear()
	var live []int
	for _, v := range p.currentlyLive(o) {
		for _, b := range p.aliasesWith(v) {
			if _, ok := p.status[b]; ok {
				live = append(live, b)
			}
		}
	}
	p.gen(begin, live)
	// bound[0] is the induction variable; the rest are iter_args.
	for i := 1; i < len(o.bound); i++ {
		if o.inits[i] >= 0 {
			p.updateAlias(o.bound[i], o.inits[i])
		}
	}
	if len(o.regions) > 0 {
		p.blocks(o.regions[0])
		if y := terminator(o.regions[0]); y != nil && len(o.results) > 0 {
			for i, v := range y.operands {
				if i+1 < len(o.bound) {
					p.updateAlias(v, o.bound[i+1])
				}
			}
			for i, v := range y.operands {
				if i < len(o.results) {
					p.updateAlias(o.results[i], v)
				}
			}
		}
	}
	end := p.linear()
	p.kill(end, o)
}

// ifOp is RecursiveIfOp.
func (p *pmPlanner) ifOp(o *pmOp) {
	p.linear()
	if len(o.regions) > 0 {
		p.blocks(o.regions[0])
	}
	end := p.linear()
	p.ifAlias(o, 0)
	if len(o.regions) > 1 && len(o.regions[1]) > 0 && len(o.regions[1][0].ops) > 0 {
		p.blocks(o.regions[1])
		end = p.linear()
		p.ifAlias(o, 1)
	}
	p.kill(end, o)
}

func (p *pmPlanner) ifAlias(o *pmOp, branch int) {
	if len(o.results) == 0 || branch >= len(o.regions) {
		return
	}
	if y := terminator(o.regions[branch]); y != nil {
		for i, v := range y.operands {
			if i < len(o.results) {
				p.updateAlias(o.results[i], v)
			}
		}
	}
}

// ---- MemPlan ----

type pmLife struct {
	buf         int
	alloc, free int64
}

type pmEntry struct {
	buf      int
	b        *pmBuf
	lives    []*pmLife
	aligned  uint64
	off      uint64
	childIdx int
}

type pmBound struct {
	lives    []*pmLife
	off, ext uint64
	last     *pmEntry
}

type pmRecord struct {
	level, childIdx int
	tailed          bool
	splitNums       int
	entry           *pmEntry
	allExtent       uint64
	first           *pmBound
	replaced        []*pmBound
}

type pmSpecInfo struct {
	maxLevel, minLevel, specLevel, childIdx, specStartIdx, rollbackIdx int
	rollbackAddr                                                       uint64
}

func newSpecInfo() pmSpecInfo {
	return pmSpecInfo{maxLevel: 2, minLevel: 0, specLevel: 2, childIdx: -1, rollbackIdx: -1, rollbackAddr: math.MaxUint64}
}

// mergeLives is MemPlan::MergeBufferVec.
func mergeLives(ls []*pmLife) []*pmLife {
	if len(ls) == 0 {
		return nil
	}
	sort.SliceStable(ls, func(i, j int) bool {
		if ls[i].alloc == ls[j].alloc {
			return ls[i].free < ls[j].free
		}
		return ls[i].alloc < ls[j].alloc
	})
	var out []*pmLife
	cur := *ls[0]
	for _, l := range ls[1:] {
		if l.alloc <= cur.free+1 {
			cur.free = max(cur.free, l.free)
		} else {
			c := cur
			out = append(out, &c)
			cur = *l
		}
	}
	return append(out, &cur)
}

// overlap is GetOverlapBufferLife being non-empty.
func overlap(b1, b2 []*pmLife) bool {
	i, j := 0, 0
	for i < len(b1) && j < len(b2) {
		if max(b1[i].alloc, b2[j].alloc) <= min(b1[i].free, b2[j].free) {
			return true
		}
		if b1[i].free < b2[j].free {
			i++
		} else {
			j++
		}
	}
	return false
}

func (p *pmPlanner) semantic(e *pmEntry, ls []*pmLife) bool {
	for _, l := range ls {
		if l.buf != e.buf && p.conflicts[[2]int{min(e.buf, l.buf), max(e.buf, l.buf)}] {
			return true
		}
	}
	return false
}

func (p *pmPlanner) conflict0(e *pmEntry, b *pmBound) bool {
	return p.semantic(e, b.lives) || overlap(e.lives, b.lives)
}

func (p *pmPlanner) pipeConflict(a, b *pmEntry) bool {
	if a == nil || b == nil {
		return false
	}
	return p.scalar[a.buf] != p.scalar[b.buf]
}

// stage2 is VerifyConflictStage2: a bound is usable only when no planned
// buffer of the other pipe kind (scalar / not) overlaps its bytes.
func (p *pmPlanner) stage2(his []pmRecord, e *pmEntry, start int, outline []*pmBound) (int, bool) {
	for it := start; it < len(outline); it++ {
		off := outline[it].off
		c := false
		for _, r := range his {
			if r.first.off+r.allExtent > off && r.first.off < off+e.aligned && p.pipeConflict(r.entry, e) {
				c = true
				break
			}
		}
		if c || (it == len(outline)-1 && outline[it].ext < e.aligned) {
			continue
		}
		if it != start {
			return it - 1, true
		}
		return start, false
	}
	return start, true
}

func (p *pmPlanner) specAlloc(outline *[]*pmBound, his *[]pmRecord, e *pmEntry, si *pmSpecInfo, level int) bool {
	for _, r := range *his {
		if r.entry == e {
			return true
		}
	}
	ol := *outline
	for start := 0; start < len(ol); start++ {
		var size uint64
		allocOff := ol[start].off
		for end := start; end < len(ol); end++ {
			last := ol[end]
			size += last.ext
			if (e.childIdx == si.rollbackIdx && allocOff == si.rollbackAddr) || p.conflict0(e, last) {
				start = end
				break
			}
			if size < e.aligned {
				continue
			}
			if level == 1 {
				// VerifyConflictStage1 needs a double-buffered entry;
				// none exists at a56b18c3 (see the top of this file).
				break
			}
			if level == 2 {
				if ns, c := p.stage2(*his, e, start, ol); c {
					start = ns
					break
				}
			}
			e.off = allocOff
			p.updateOutline(outline, his, e, start, end, size, level)
			return true
		}
	}
	return false
}

func (p *pmPlanner) updateOutline(outline *[]*pmBound, his *[]pmRecord, e *pmEntry, start, end int, size uint64, level int) {
	ol := *outline
	res := size - e.aligned
	last := ol[end]
	endEx := end + 1
	var split []*pmBound
	if p.split {
		for it := start; it < endEx; it++ {
			ls := mergeLives(append(append([]*pmLife(nil), e.lives...), ol[it].lives...))
			sz := ol[it].ext
			if it == endEx-1 {
				sz = e.off + e.aligned - ol[it].off
			}
			split = append(split, &pmBound{lives: ls, off: ol[it].off, ext: sz, last: e})
		}
	} else {
		ls := append([]*pmLife(nil), e.lives...)
		for _, b := range ol[start:endEx] {
			ls = append(ls, b.lives...)
		}
		split = []*pmBound{{lives: mergeLives(ls), off: e.off, ext: e.aligned, last: e}}
	}
	replaced := append([]*pmBound(nil), ol[start:endEx]...)
	n := append(append([]*pmBound(nil), ol[:start]...), split...)
	if res > 0 {
		n = append(n, &pmBound{lives: last.lives, off: last.off + last.ext - res, ext: res, last: last.last})
	}
	*outline = append(n, ol[endEx:]...)
	*his = append(*his, pmRecord{level: level, childIdx: e.childIdx, tailed: res > 0, splitNums: len(split),
		entry: e, allExtent: e.aligned, first: split[0], replaced: replaced})
}

func (p *pmPlanner) rollbackOutline(outline *[]*pmBound, his *[]pmRecord) pmRecord {
	h := *his
	r := h[len(h)-1]
	*his = h[:len(h)-1]
	ol := *outline
	i := 0
	for i < len(ol) && ol[i] != r.first {
		i++
	}
	n := r.splitNums
	if r.tailed {
		n++
	}
	n = min(i+n, len(ol))
	*outline = append(append(append([]*pmBound(nil), ol[:i]...), r.replaced...), ol[n:]...)
	return r
}

func (p *pmPlanner) multiSpec(si *pmSpecInfo, outline *[]*pmBound, his *[]pmRecord, e *pmEntry) bool {
	for i := si.specLevel; i >= si.minLevel; i-- {
		if p.specAlloc(outline, his, e, si, i) {
			if si.childIdx == si.specStartIdx {
				si.specLevel = si.maxLevel
			}
			si.childIdx++
			return true
		}
	}
	return false
}

const (
	pmContinue = iota
	pmRestart
	pmFailed
)

// applyFail is ApplyFailStrategy with RollBackForAllocFail.
func (p *pmPlanner) applyFail(si *pmSpecInfo, outline *[]*pmBound, his *[]pmRecord, children []*pmEntry, need, capacity uint64) int {
	enough := false
	for !enough && len(*his) > 0 && len(*outline) > 0 {
		if si.childIdx > si.specStartIdx {
			si.specStartIdx = si.childIdx
		}
		for len(*his) > 0 {
			r := p.rollbackOutline(outline, his)
			si.childIdx, si.specLevel = r.childIdx, r.level
			if si.specLevel > si.minLevel {
				si.rollbackAddr = math.MaxUint64
				if si.childIdx >= 0 && si.childIdx < len(children) {
					si.rollbackAddr = children[si.childIdx].off
				}
				si.rollbackIdx = si.childIdx
				if si.rollbackAddr+need > capacity { // wraps for the root, as in PTOAS
					continue
				}
				enough = true
				break
			}
		}
	}
	if si.specLevel > 0 && si.childIdx >= 0 {
		si.specLevel--
		return pmContinue
	}
	if !p.split {
		p.split = true
		return pmRestart
	}
	return pmFailed
}

// reorder is GetReorderRootStorageEntry: in UB, buffers memref.load/store
// touch go last.
func (p *pmPlanner) reorder(es []*pmEntry) []*pmEntry {
	if len(es) == 0 || es[0].b.space != asm.UB {
		return es
	}
	var out, sc []*pmEntry
	for _, e := range es {
		if p.scalar[e.buf] {
			sc = append(sc, e)
		} else {
			out = append(out, e)
		}
	}
	return append(out, sc...)
}

// planScope places one memory's entries; ok is false on overflow, with the
// bytes PlanMemory would have needed.
func (p *pmPlanner) planScope(es []*pmEntry, capacity, align uint64) (bool, uint64) {
	alignUp := func(x uint64) uint64 { return (x + align - 1) / align * align }
	if len(es) == 1 {
		es[0].aligned = alignUp(uint64(es[0].b.size))
		es[0].off = 0
		return es[0].aligned <= capacity, es[0].aligned
	}
	var required uint64
	for _, e := range es {
		required += alignUp(uint64(e.b.size))
	}
	if required < capacity {
		var off uint64
		for _, e := range es {
			e.aligned = alignUp(uint64(e.b.size))
			e.off = off
			off += e.aligned
		}
		return true, required
	}
	es = p.reorder(es)
	if p.run(es, capacity, align, newSpecInfo(), true) {
		return true, 0
	}
	// PlanMemAddressForLevel0: how much a level-0 plan without a bound needs.
	es = p.reorder(es)
	si := newSpecInfo()
	si.specLevel, si.maxLevel = 0, 0
	p.run(es, math.MaxUint64, align, si, false)
	need := es[0].aligned
	for _, e := range es[1:] {
		need = max(need, e.off+e.aligned)
	}
	return false, need
}

// run is the planning loop of PlanMemAddressOfWholeLocalBuffer.
func (p *pmPlanner) run(es []*pmEntry, capacity, align uint64, si pmSpecInfo, retry bool) bool {
	root, children := es[0], es[1:]
	outline := []*pmBound{{off: 0, ext: capacity}}
	var his []pmRecord
	cur := root
	// The loop ends in PTOAS; the bound only guards against a port bug.
	for guard := 0; si.childIdx < len(children); guard++ {
		if guard > 64*(len(es)+1)*(len(es)+1) {
			return false
		}
		cur.aligned = (uint64(cur.b.size) + align - 1) / align * align
		cur.childIdx = si.childIdx
		if !p.multiSpec(&si, &outline, &his, cur) {
			if !retry {
				si.childIdx++
			} else {
				switch p.applyFail(&si, &outline, &his, children, cur.aligned, capacity) {
				case pmRestart:
					si = newSpecInfo()
					cur = root
					continue
				case pmFailed:
					return false
				}
			}
		}
		if si.childIdx >= len(children) {
			break
		}
		if si.childIdx < 0 {
			cur = root
			continue
		}
		cur = children[si.childIdx]
	}
	return true
}

// planMemory plans one function body.
func planMemory(body *Region) *memPlan {
	mp := &memPlan{addr: map[*Op]int64{}, end: map[asm.Space]int64{}, reserve: map[*Op]int64{}}
	if body == nil {
		return mp
	}
	b := &pmBuilder{scopes: []map[string]int{{}}}
	blocks := b.region(body, nil, nil, nil)
	p := &pmPlanner{vals: b.vals, alias: map[int][]int{}, status: map[int]int{}, conflicts: map[[2]int]bool{}, scalar: map[int]bool{},
		uses: map[*pmBlock]map[int]*pmOp{}, ranges: map[*pmBlock]*pmRanges{}}
	p.blocks(blocks)
	// GenerateBufferLife and GenerateStorageEntry.
	lives := map[int]*pmLife{}
	for t, tm := range p.times {
		for _, g := range tm.gen {
			lives[g] = &pmLife{buf: g, alloc: int64(t), free: -1}
		}
		for _, k := range tm.kill {
			if l := lives[k]; l != nil {
				l.free = int64(t)
			}
		}
	}
	byScope := map[asm.Space][]*pmEntry{}
	planned := map[int]bool{}
	for _, tm := range p.times {
		for _, g := range tm.gen {
			if buf := p.vals[g].buf; buf != nil && !planned[g] {
				planned[g] = true
				byScope[buf.space] = append(byScope[buf.space], &pmEntry{buf: g, b: buf, lives: []*pmLife{lives[g]}})
			}
		}
	}
	var maxOff uint64
	for _, sp := range pmOrder {
		es := byScope[sp]
		if len(es) == 0 {
			continue
		}
		capacity, align := pmSpec(sp)
		ok, need := p.planScope(es, capacity, align)
		if !ok {
			if mp.err == "" {
				mp.err = pmScopeName(sp) + " overflow, requires " + strconv.FormatUint(need*8, 10) + " bits while " +
					strconv.FormatUint(capacity*8, 10) + " bits avaliable! (PTOAS PlanMemory)"
			}
			continue
		}
		for _, e := range es {
			mp.addr[e.b.op] = int64(e.off)
			mp.end[sp] = max(mp.end[sp], int64(e.off+e.aligned))
			maxOff = max(maxOff, e.off)
		}
	}
	if mp.err == "" {
		mp.reserveHole(body, byScope)
	}
	// AllocToPointerCast's fallback for buffers nothing writes: 4 KiB
	// strides past the highest planned offset, the last alloc first.
	var unplanned []*pmValue
	for i, v := range p.vals {
		if v.buf != nil && !planned[i] {
			unplanned = append(unplanned, v)
		}
	}
	next := (maxOff + 4095) / 4096 * 4096
	for i := len(unplanned) - 1; i >= 0; i-- {
		v := unplanned[i]
		bytes := uint64(4096)
		if eb := pmElemBytes(v.buf.elem); eb > 0 {
			bytes = uint64(min(v.buf.numel, 1<<40)) * eb // as pmBuf.size: no wrap
		}
		stride := max((bytes+4095)/4096*4096, 4096)
		// Past the end of the A2/A3 memory (PTOAS's table is larger for
		// BIAS and SCALING) the lowering places the tile itself.
		if int64(next)+v.buf.size <= asm.SpaceCapacity(v.buf.space) {
			mp.addr[v.buf.op] = int64(next)
			mp.end[v.buf.space] = max(mp.end[v.buf.space], int64(next)+v.buf.size)
		}
		next += stride
	}
	return mp
}

// pmElemBytes is the element size AllocToPointerCast's estimate knows
// (f16, f32, integers); 0 otherwise.
func pmElemBytes(elem string) uint64 {
	switch {
	case elem == "f16":
		return 2
	case elem == "f32":
		return 4
	case strings.HasPrefix(elem, "i") || strings.HasPrefix(elem, "ui") || strings.HasPrefix(elem, "si"):
		w, err := strconv.Atoi(strings.TrimLeft(elem, "usi"))
		if err == nil {
			return uint64(w / 8)
		}
	}
	return 0
}

func pmScopeName(s asm.Space) string {
	switch s {
	case asm.UB:
		return "VEC"
	case asm.L1:
		return "MAT"
	case asm.L0A:
		return "LEFT"
	case asm.L0B:
		return "RIGHT"
	case asm.L0C:
		return "ACC"
	case asm.BT:
		return "BIAS"
	case asm.FB:
		return "SCALING"
	}
	return s.String()
}

// reserveHole places the function's pto.reserve_buffer {auto = true} as
// PTOAS does after planning (assignAutoReserveBufferBase and
// analyzeReserveBufferPlan, PTOPlanMemory.cpp at a56b18c3): every planned
// buffer of the reserve's memory occupies [offset, offset + size rounded up
// to 256 bytes) whatever its life; the ranges are merged and the reserve
// takes the first 256-byte-aligned hole from 0 that holds its size. The
// memories are getLocalMemSpec's: vec 192 KiB, mat 512 KiB (A2/A3), both at
// 256 bytes; any other location, a second reserve in the function or no hole
// is PTOAS's error. Buffers AllocToPointerCast places later (never written)
// are not in the plan and do not count.
func (mp *memPlan) reserveHole(body *Region, byScope map[asm.Space][]*pmEntry) {
	rs := opsNamed(body, "pto.reserve_buffer")
	if len(rs) == 0 {
		return
	}
	if len(rs) > 1 {
		mp.err = "expects at most one pto.reserve_buffer per function (PTOAS PlanMemory)"
		return
	}
	r := rs[0]
	d := attrDict(r.Toks)
	if a, ok := d["auto"]; !ok || len(a) == 0 || a[0].Text != "true" {
		return // a fixed base: the lowering reads it
	}
	var space asm.Space
	var capacity int64
	switch loc := reserveLoc(d["location"]); loc {
	case "vec":
		space, capacity = asm.UB, 196608
	case "mat":
		space, capacity = asm.L1, 524288
	default:
		mp.err = "pto.reserve_buffer: unsupported reserve_buffer location " + loc + " (PTOAS PlanMemory)"
		return
	}
	const align = 256
	size := intAttr(r.Toks, "size", 0)
	type rng struct{ b, e int64 }
	var occ []rng
	for _, e := range byScope[space] {
		occ = append(occ, rng{int64(e.off), int64(e.off) + alignUp(e.b.size, align)})
	}
	sort.Slice(occ, func(i, j int) bool { return occ[i].b < occ[j].b })
	var merged []rng
	for _, o := range occ {
		if len(merged) == 0 || o.b > merged[len(merged)-1].e {
			merged = append(merged, o)
			continue
		}
		merged[len(merged)-1].e = max(merged[len(merged)-1].e, o.e)
	}
	base := int64(0)
	for _, o := range merged {
		base = alignUp(base, align)
		if base+size <= o.b {
			break
		}
		base = max(base, o.e)
	}
	base = alignUp(base, align)
	if base+size > capacity {
		mp.err = "pto.reserve_buffer: failed to allocate local memory hole for reserve_buffer (PTOAS PlanMemory)"
		return
	}
	mp.reserve[r] = base
}

// reserveLoc is the address space word of a `location = #pto.address_space<vec>`
// attribute (or its short form `<vec>`).
func reserveLoc(ts []Tok) string {
	for _, t := range ts {
		switch t.Text {
		case "vec", "mat", "acc", "left", "right", "bias", "scaling", "gm":
			return t.Text
		}
	}
	return "?"
}

// opsNamed lists the ops called name in r, at any depth, in pre-order.
func opsNamed(r *Region, name string) []*Op {
	var out []*Op
	if r == nil {
		return nil
	}
	for _, b := range r.Blocks {
		for _, op := range b.Ops {
			if op.Name == name {
				out = append(out, op)
			}
			for _, sub := range op.Regions {
				out = append(out, opsNamed(sub, name)...)
			}
		}
	}
	return out
}
