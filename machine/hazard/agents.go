package hazard

import (
	"fmt"
	"slices"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
)

// ---- agents and cores -----------------------------------------------------

// agent is agent a's index, made when a is new. Every event looks its
// agent up, so a core agent already made is found inline: the call with
// the junk keys' tests was about 46 instructions an event. A row and key
// the table holds are dense ones, so the answer is newAgent's.
func (d *Detector) agent(a machine.Agent) int32 {
	if rows := d.agentIdx.rows; uint32(a.Rank) < uint32(len(rows)) && a.Core >= 0 && a.Pipe < asm.NumPipes {
		row := rows[a.Rank]
		if k := uint(a.Core+1)*uint(asm.NumPipes) + uint(a.Pipe); k < uint(len(row)) {
			if i := row[k]; i > 0 {
				return i - 1
			}
		}
	}
	return d.newAgent(a)
}

// newAgent is agent for an agent the inline lookup does not find: new,
// of no core, or junk.
func (d *Detector) newAgent(a machine.Agent) int32 {
	if a.Pipe >= asm.NumPipes {
		a.Pipe = asm.PipeInvalid
	}
	if a.Core < -1 {
		// Junk: an agent of its own, apart from every real agent, keyed
		// by the whole agent (a dense key would not fit a 32-bit int).
		if i, ok := d.junkIdx[a]; ok {
			return i
		}
		i := d.addAgent(a)
		if d.junkIdx == nil {
			d.junkIdx = map[machine.Agent]int32{}
		}
		d.junkIdx[a] = i
		return i
	}
	key := int(a.Core+1)*int(asm.NumPipes) + int(a.Pipe)
	if i := d.agentIdx.get(a.Rank, key); i > 0 {
		return i - 1
	}
	i := d.addAgent(a)
	*d.agentIdx.at(a.Rank, key) = i + 1
	return i
}

// sdmaAgent is the agent of the SDMA copies that core issuer of rank hands
// over, made when new. There is one per issuing core, not per rank: a
// core's wait_async waits for its own copies only (the machine's
// core.waitAsync; pto-isa's SdmaWaitEvent checks the done records of the
// waiting session's own channel group, by default its block's), so it must
// join no other core's. The agent's core is issuer; it belongs to no core
// (coreIdx -1), as its copies run beside the core's pipes, not in them.
func (d *Detector) sdmaAgent(rank, issuer int32) int32 {
	if i := d.sdmaIdx.get(rank, int(issuer)); i > 0 {
		return i - 1
	}
	d.core(rank, issuer) // intendedBefore orders the copies by its issues
	i := d.addAgent(machine.Agent{Rank: rank, Core: -1, Pipe: asm.PipeInvalid})
	d.agents[i].core = issuer
	*d.sdmaIdx.at(rank, int(issuer)) = i + 1
	return i
}

// sdmaOf is core c's SDMA agent, -1 when the core has handed over no copy.
func (d *Detector) sdmaOf(c int32) int32 {
	cs := &d.cores[c]
	return d.sdmaIdx.get(cs.rank, int(cs.core)) - 1
}

// addAgent makes the state of new agent a (pipe already checked) and
// returns its index; the caller indexes it.
func (d *Detector) addAgent(a machine.Agent) int32 {
	st := agentState{rank: a.Rank, core: a.Core, pipe: a.Pipe, coreIdx: -1, gen: d.gen}
	st.setRemote(knownRem(0)) // no clock yet: no news of other cores
	switch {
	case a.Core < 0:
		st.kind = akSDMA
	case a.Pipe == asm.PipeS:
		st.kind = akScalar
	}
	i := int32(len(d.agents))
	d.keptSeq++ // an agent more for orderedForAll
	if a.Core >= 0 {
		c := d.core(a.Rank, a.Core)
		st.coreIdx = c
		d.place(i, &d.cfill[c])
		cs := &d.cores[c]
		if a.Pipe == asm.PipeS {
			cs.scalar = i
		} else {
			cs.pipes[a.Pipe] = i
		}
		cs.listLocals()
		for k, l := range cs.locals[:cs.nlocals] {
			cs.lpos[k] = d.apos[l]
		}
	} else {
		d.place(i, &d.miscFill)
	}
	d.agents = append(d.agents, st)
	d.aloc = append(d.aloc, uint32(st.coreIdx+1)<<4|uint32(st.pipe))
	d.soff = append(d.soff, d.opt.SamePipe.level(st.pipe, st.kind == akSDMA) == SevOff)
	return i
}

// orderCore is the core whose issue order is agent a's intended order: its
// own, or an SDMA agent's issuing core (-1 for none, the host).
func (d *Detector) orderCore(a int32) int32 {
	if ag := &d.agents[a]; ag.kind == akSDMA {
		return d.coreIdx.get(ag.rank, int(ag.core)) - 1
	}
	return d.agents[a].coreIdx
}

// Clocks index agents by position, not by agent number: positions come in
// groups of posGroup, each core's agents fill groups of their own, and the
// host and SDMA engines share groups. A core's agents then sit in one clock
// block (clock.go), so the joins, raises and copy-on-write copies of its
// own components, the most frequent by far, touch one block, not one per
// agent spread over the clock as agents appear.
const posGroup = 4

// posFill is the group a core (or the agents of no core) fills next: its
// first position and the positions used.
type posFill struct{ base, used int32 }

// place gives new agent i the next position of f, opening a group when f is
// full.
func (d *Detector) place(i int32, f *posFill) {
	if f.used == 0 || f.used == posGroup {
		f.base, f.used = d.npos, 0
		d.npos += posGroup
		for range posGroup {
			d.pagent = append(d.pagent, -1)
		}
	}
	p := f.base + f.used
	f.used++
	d.apos = append(d.apos, p)
	d.pagent[p] = i
}

// pos is agent a's component in clocks.
func (d *Detector) pos(a int32) int32 { return d.apos[a] }

// localPos reports whether the agent at position i runs on agent a's core.
func (d *Detector) localPos(a, i int32) bool {
	c := d.agents[a].coreIdx
	if c < 0 || int(i) >= len(d.pagent) {
		return false
	}
	o := d.pagent[i]
	return o >= 0 && d.agents[o].coreIdx == c
}

func (d *Detector) core(rank, core int32) int32 {
	if i := d.coreIdx.get(rank, int(core)); i > 0 {
		return i - 1
	}
	cs := coreState{rank: rank, core: core, scalar: -1}
	for p := range cs.pipes {
		cs.pipes[p] = -1
	}
	i := int32(len(d.cores))
	d.cores = append(d.cores, cs)
	d.cfill = append(d.cfill, posFill{})
	*d.coreIdx.at(rank, int(core)) = i + 1
	return i
}

// scalarOf returns the scalar agent of a core, creating it on first need.
func (d *Detector) scalarOf(c int32) int32 {
	if s := d.cores[c].scalar; s >= 0 {
		return s
	}
	return d.agent(machine.Agent{Rank: d.cores[c].rank, Core: d.cores[c].core, Pipe: asm.PipeS})
}

func (d *Detector) pipeOf(c int32, p asm.Pipe) int32 {
	if p >= asm.NumPipes || p == asm.PipeInvalid || p == asm.PipeALL {
		return -1
	}
	if a := d.cores[c].pipes[p]; a >= 0 || p == asm.PipeS {
		if p == asm.PipeS {
			return d.scalarOf(c)
		}
		return a
	}
	return d.agent(machine.Agent{Rank: d.cores[c].rank, Core: d.cores[c].core, Pipe: p})
}

// enter prepares agent a for an event: clocks from an earlier run generation
// are dropped (a run boundary orders everything before it), and its core is
// marked live for syncall.
func (d *Detector) enter(a int32) *agentState {
	ag := &d.agents[a]
	if ag.gen != d.gen {
		ag.clock.reset()
		ag.lc, ag.dirty = pipeVals{}, false
		ag.gen = d.gen
		ag.ver++
		ag.rver++
		ag.lastSnap, ag.lastSnapRver = 0, 0
		ag.setRemote(knownRem(0))
	}
	if ag.coreIdx >= 0 {
		if cs := &d.cores[ag.coreIdx]; !cs.live {
			cs.live = true
		}
	}
	if ag.kind == akScalar {
		d.raiseOwn(a)
	}
	if checkLocalJoins {
		d.checkMirror(a)
	}
	return ag
}

// raiseOwn raises agent a's own component to its op count: every earlier
// op of a is then known complete (a barrier, or any op of the scalar).
func (d *Detector) raiseOwn(a int32) {
	ag := &d.agents[a]
	if ag.coreIdx < 0 {
		raise(&ag.clock, d.pos(a), ag.n)
		return
	}
	if ag.lc[ag.pipe] < ag.n {
		ag.lc[ag.pipe] = ag.n
		if n := d.pos(a) + 1; n > ag.clock.n {
			ag.clock.extend(n)
		}
		ag.dirty = true
	}
}

// flush writes agent a's lc into its clock, which is then its whole
// value: before the clock is copied or joined from or into.
func (d *Detector) flush(a int32) {
	if ag := &d.agents[a]; ag.dirty {
		d.flushLocal(ag)
	}
}

func (d *Detector) flushLocal(ag *agentState) {
	// A core's agents' positions share a block or two (place): write
	// what lags, making a block writable once.
	cs := &d.cores[ag.coreIdx]
	var b *vblock
	for i, l := range cs.lpos[:cs.nlocals] {
		if v := ag.lc[cs.slots[i]]; get(ag.clock, l) < v {
			if b == nil || b != ag.clock.g[l>>(blkBits+grpBits)].b[(l>>blkBits)&grpMask] {
				b = ag.clock.own(int(l >> blkBits))
			}
			b.v[l&blkMask] = v
		}
	}
	ag.dirty = false
}

// exact returns a copy of agent a's whole clock, lc included, for the
// self-checks, leaving a's clock as it is.
func (d *Detector) exact(a int32) vclock {
	ag := &d.agents[a]
	cp := ag.clock // cloning freezes the clone's source: not a's clock itself
	c := cp.clone()
	if ag.coreIdx >= 0 {
		cs := &d.cores[ag.coreIdx]
		for i, l := range cs.lpos[:cs.nlocals] {
			raise(&c, l, ag.lc[cs.slots[i]])
		}
	}
	return c
}

// ownComp is agent a's own component of its clock: from lc for an agent of a
// core (every access asks, and the block behind the clock's table was two
// more lines per access).
func (d *Detector) ownComp(a int32) uint32 {
	if ag := &d.agents[a]; ag.coreIdx >= 0 {
		return ag.lc[ag.pipe]
	}
	return get(d.agents[a].clock, d.pos(a))
}

// syncLocal reloads agent a's lc from its clock after a join changed it.
func (d *Detector) syncLocal(a int32) {
	ag := &d.agents[a]
	if ag.coreIdx < 0 {
		return
	}
	cs := &d.cores[ag.coreIdx]
	for i, l := range cs.lpos[:cs.nlocals] {
		ag.lc[cs.slots[i]] = get(ag.clock, l)
	}
}

// checkMirror panics unless agent a's lc is its clock's components of its
// core's agents, and 0 in the slots no agent fills (checkLocalJoins).
func (d *Detector) checkMirror(a int32) {
	ag := &d.agents[a]
	if ag.coreIdx < 0 {
		return
	}
	cs := &d.cores[ag.coreIdx]
	var want pipeVals
	ahead := false
	for i, l := range cs.lpos[:cs.nlocals] {
		want[cs.slots[i]] = get(ag.clock, l)
		ahead = ahead || ag.lc[cs.slots[i]] > want[cs.slots[i]]
	}
	for sl := range want {
		if want[sl] > ag.lc[sl] || (cs.mask&(1<<sl) == 0 && ag.lc[sl] != 0) || (ahead && !ag.dirty) {
			panic(fmt.Sprintf("hazard: agent %d's local components %v (dirty %v), its clock holds %v", a, ag.lc, ag.dirty, want))
		}
	}
}

// release returns a scratch copy of a's clock with its own component set to
// its op count: what a set_flag (which fires after every earlier op of the
// pipe completed) publishes.
func (d *Detector) release(a int32, buf vclock) vclock {
	d.flush(a)
	ag := &d.agents[a]
	buf.copyFrom(&ag.clock)
	raise(&buf, d.pos(a), ag.n)
	return buf
}

// acquire joins src into agent a's clock.
func (d *Detector) acquire(a int32, src *vclock) {
	d.flush(a)
	ag := &d.agents[a]
	changed, remote := adoptAbove(&ag.clock, src, nil, int(d.pos(a)>>blkBits), func(i int32) bool { return d.localPos(a, i) })
	if changed {
		ag.ver++
		d.syncLocal(a)
	}
	if remote {
		ag.rver++
	}
}

// acquireAbove is acquire from a src that holds at least agent a's value of
// every component of an agent on another core than c, a's: the blocks
// without c's agents are src's, taken unread.
func (d *Detector) acquireAbove(a, c int32, src *vclock) {
	cs := &d.cores[c]
	ct := cert{kind: certAllBut}
	for _, l := range cs.lpos[:cs.nlocals] {
		if b := l >> blkBits; !slices.Contains(ct.keep[:ct.nkeep], b) {
			ct.keep[ct.nkeep] = b
			ct.nkeep++
		}
	}
	d.acquireCert(a, src, &ct)
}

// acquireCert is acquire from a src that holds at least agent a's value of
// every component of the blocks ct vouches for, which it takes unread
// (adoptAbove); checkLocalJoins checks the result against the full join.
func (d *Detector) acquireCert(a int32, src *vclock, ct *cert) {
	var want vclock
	if checkLocalJoins {
		want = d.exact(a)
		join(&want, src)
	}
	d.flush(a)
	ag := &d.agents[a]
	changed, remote := adoptAbove(&ag.clock, src, ct, int(d.pos(a)>>blkBits), func(i int32) bool { return d.localPos(a, i) })
	if changed {
		ag.ver++
		d.syncLocal(a)
	}
	if remote {
		ag.rver++
	}
	if checkLocalJoins {
		localJoins++
		d.checkJoin(a, want)
	}
}

// checkJoin panics unless agent a's clock is want (checkLocalJoins).
func (d *Detector) checkJoin(a int32, want vclock) {
	got := d.exact(a)
	for i := range max(got.size(), want.size()) {
		if get(got, int32(i)) != get(want, int32(i)) {
			panic(fmt.Sprintf("hazard: a local join of agent %d missed component %d: %d, the full join gives %d", a, i, get(got, int32(i)), get(want, int32(i))))
		}
	}
}

// checkHolds panics unless agent a's clock holds at least src in every
// component: a join of src that a shortcut skips would change nothing
// (checkLocalJoins).
func (d *Detector) checkHolds(a int32, src *vclock) {
	localJoins++
	got := d.exact(a)
	for i := range src.size() {
		if get(got, i) < get(*src, i) {
			panic(fmt.Sprintf("hazard: agent %d skipped a join of a clock it does not hold: component %d is %d, the clock's %d", a, i, get(got, i), get(*src, i)))
		}
	}
}

// mate returns agent i's pipe slot when it runs on agent a's core.
func (d *Detector) mate(a, i int32) (asm.Pipe, bool) {
	la := d.aloc[a]
	if la < 1<<4 || int(i) >= len(d.aloc) {
		return 0, false
	}
	li := d.aloc[i]
	return asm.Pipe(li & 15), li>>4 == la>>4
}

// raiseIn is raise on agent a's clock, keeping its versions.
func (d *Detector) raiseIn(a, i int32, v uint32) {
	if s, ok := d.mate(a, i); ok {
		d.raiseLocal(a, i, s, v)
		return
	}
	ag := &d.agents[a]
	if get(ag.clock, d.pos(i)) >= v {
		return
	}
	raise(&ag.clock, d.pos(i), v)
	if i != a {
		ag.ver++
		ag.rver++
	}
}

// raiseLocal is raiseIn for agent i of a's own core, in pipe slot s: a
// look at a's lc, and nothing more when it already holds v, the case of
// nearly every op of a pipe (its scalar's epoch at issue) and every flag
// between a core's pipes that brings nothing new.
func (d *Detector) raiseLocal(a, i int32, s asm.Pipe, v uint32) {
	ag := &d.agents[a]
	if ag.lc[s] >= v {
		return
	}
	ag.lc[s] = v
	if n := d.pos(i) + 1; n > ag.clock.n {
		ag.clock.extend(n)
	}
	ag.dirty = true
	if i != a {
		ag.ver++
	}
}

// joinIssue gives agent a the clock its pending op p was issued with.
func (d *Detector) joinIssue(a int32, p *pending) {
	ag := &d.agents[a]
	if ag.lastSnap != p.snapID {
		d.acquire(a, &p.clock)
		d.agents[a].lastSnap = p.snapID
	}
	d.raiseIn(a, p.scalar, p.epoch)
	d.acquire(a, &p.steps)
}

// issueSnapshot returns scalar s's clock for the ops it issues now, copying
// it only when it changed since the last issue.
func (d *Detector) issueSnapshot(s int32) (vclock, uint64) {
	sa := &d.agents[s]
	if sa.snapID == 0 || sa.snapVer != sa.ver {
		d.flush(s)
		sa.snap = sa.clock.clone()
		sa.snapVer = sa.ver
		sa.snapRver = sa.rver + 1
		d.snapSeq++
		sa.snapID = d.snapSeq
	}
	return sa.snap, sa.snapID
}

func (d *Detector) getBuf() vclock {
	if n := len(d.pool); n > 0 {
		b := d.pool[n-1]
		d.pool = d.pool[:n-1]
		return b
	}
	return vclock{}
}

func (d *Detector) putBuf(b vclock) {
	if b.g != nil && len(d.pool) < 4096 {
		b.truncate()
		d.pool = append(d.pool, b)
	}
}

// hb reports whether access r happens before the next op of agent a.
func (d *Detector) hb(r *rec, a int32) bool {
	if r.gen != d.gen || r.agent == d.host {
		return true
	}
	if s, ok := d.mate(a, r.agent); ok {
		// A core-mate's component (most accesses race only the pipes of
		// their own core): the agent's first line, not its clock's block.
		return d.agents[a].lc[s] >= r.epoch
	}
	return get(d.agents[a].clock, d.pos(r.agent)) >= r.epoch
}
