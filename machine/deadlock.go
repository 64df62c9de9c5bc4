package machine

import (
	"fmt"
	"slices"
	"sort"

	"github.com/ptoasm/ptoasm/asm"
)

// unforce lets every scalar waiting at a forced TTEST (TestForcer) fail
// the test instead, when nothing else can move: the adds it was to read
// come only after it on this run's path. It reports whether one did.
func (m *Machine) unforce() bool {
	any := false
	for _, c := range m.active {
		if c.forceWait && c.state == scSignal {
			c.forceWait, c.unforced = false, true
			c.t = max(c.t, m.now)
			c.sleep()
			any = true
		}
	}
	return any
}

// deadlock builds the report when nothing can move: every waiting scalar and
// every pipe whose head waits, each with the reason nothing will wake it.
func (m *Machine) deadlock() *DeadlockError {
	d := &DeadlockError{Cycle: m.now}
	var links []waitLink
	for _, c := range m.active {
		if c.state == scDone {
			continue
		}
		if c.state != scEnd && c.state != scQueueFull {
			d.Blocked = append(d.Blocked, Blocked{Agent: Agent{Rank: int32(c.rank.id), Core: int32(c.vid), Pipe: asm.PipeS},
				Op: c.waitOp, Reason: c.describeWait(), Signal: c.blockedSignal()})
			d.Names = append(d.Names, c.vname)
			links = append(links, waitLink{c: c, pipe: asm.PipeS})
		}
		for _, p := range c.plist {
			e := p.q.Head()
			if e != nil && p.waiting && e.kind == enExec && e.xop != nil && e.xop.Unit != asm.UnitNone {
				d.Blocked = append(d.Blocked, Blocked{Agent: Agent{Rank: int32(c.rank.id), Core: int32(c.vid), Pipe: p.p},
					Op: e.op, Reason: describeUnitWait(e, p.p)})
				d.Names = append(d.Names, c.vname)
				links = append(links, waitLink{c: c, pipe: p.p, head: e, unit: true})
				continue
			}
			if e == nil || !p.waiting || e.kind != enWaitFlag {
				continue
			}
			d.Blocked = append(d.Blocked, Blocked{Agent: Agent{Rank: int32(c.rank.id), Core: int32(c.vid), Pipe: p.p},
				Op: e.op, Reason: c.describeFlagWait(e.flag, e.seq)})
			d.Names = append(d.Names, c.vname)
			links = append(links, waitLink{c: c, pipe: p.p, head: e})
		}
		if c.state == scQueueFull || c.state == scEnd {
			// Report the scalar after the pipe that holds it. At kernel
			// end it waits at no instruction: waitOp is then whatever it
			// last stalled on (a full queue, a flag), which the latencies
			// chose, and a deadlock's second site moved with them.
			op := c.waitOp
			if c.state == scEnd {
				op = nil
			}
			d.Blocked = append(d.Blocked, Blocked{Agent: Agent{Rank: int32(c.rank.id), Core: int32(c.vid), Pipe: asm.PipeS},
				Op: op, Reason: c.describeWait()})
			d.Names = append(d.Names, c.vname)
			links = append(links, waitLink{c: c, pipe: asm.PipeS})
		}
	}
	d.rootFirst(links)
	if m.emitting {
		e := m.event(EvDeadlock, nil, asm.PipeInvalid, nil)
		e.Blocked = d.Blocked
		e.Reason = d.Error()
		m.emit()
	}
	return d
}

// waitLink says which agent a Blocked entry is: a core's scalar (head nil) or
// the head wait_flag of one of its pipes.
type waitLink struct {
	c    *core
	pipe asm.Pipe
	head *entry
	// unit: the head is a mad or FIX read waiting on an L0C unit flag
	// (head is that entry), which only the other of M and FIX can change.
	unit bool
}

// rootFirst orders the report root first. It builds the wait-for graph from
// the state at deadlock: a wait whose set is queued, and was issued before
// the wait, waits for the pipe that holds the set (whose head waits); a
// scalar with a full queue waits for that pipe; a scalar at kernel end or at
// pipe_barrier ALL waits for its busy pipes; a wait whose set is not queued
// waits for its scalar when that scalar still has instructions to issue
// (stopped by a full queue). An L0C unit-flag wait (a FIX read before its
// final mad, a mad before the final FIX read that frees its tile) is a wait
// whose set is that entry on the other pipe (unitWait). Everything else is a
// root: a wait no set will ever satisfy (none queued and the scalar has
// nothing left to issue), a wait whose only queued set was issued after it
// (nothing primes it: the set is the next round's), or a wait on another core
// (ffts_wait, twait, syncall).
// Entries are then ordered by their distance to a root, ties in the report's
// core/pipe order; entries of a cycle that reaches no root stay last in that
// order. Everything read here (queue contents, issue order, scalar state) is
// fixed by the program, not by latencies, so the order does not depend on the
// run's timing.
func (d *DeadlockError) rootFirst(links []waitLink) {
	n := len(d.Blocked)
	if n < 2 || len(links) != n {
		if n == 1 {
			d.Blocked[0].Root = true
		}
		return
	}
	type key struct {
		c *core
		p asm.Pipe
	}
	idx := make(map[key]int, n)
	for i, l := range links {
		idx[key{l.c, l.pipe}] = i
	}
	edges := make([][]int, n)
	add := func(i int, c *core, p asm.Pipe) {
		if j, ok := idx[key{c, p}]; ok && j != i {
			edges[i] = append(edges[i], j)
		}
	}
	flagWait := func(i int, c *core, f Flag, seq int64) {
		sp := c.pipes[f.Src]
		if sp != nil {
			for k := 0; k < sp.q.Len(); k++ {
				if e := sp.q.At(k); e.kind == enSetFlag && e.flag == f {
					// A set issued after the wait is the next round's: nothing
					// issued before the wait sets it, so the wait is a root.
					if seq == 0 || e.seq < seq {
						add(i, c, f.Src)
					}
					return
				}
			}
		}
		// Not issued yet: only the scalar can still issue it, if a full
		// queue (not this wait's own) holds it up.
		if c.state == scQueueFull && c.waitPipe != nil && c.waitPipe.p != links[i].pipe {
			add(i, c, asm.PipeS)
		}
	}
	// unitWait is flagWait for an L0C unit flag (unitflag.go): a FIX read
	// waits for a final mad of its tile to publish it, a mad for a final FIX
	// read of its tile to release it. The hand-off is queued on the other
	// pipe when an entry of that kind for the same tile is; one issued after
	// the wait is the next round's (the wait reads a publication or release
	// meant to come before it), so the wait is a root, as a flag wait whose
	// only queued set was issued after it is.
	unitWait := func(i int, c *core, head *entry, p asm.Pipe) {
		other := asm.PipeFIX
		if p == asm.PipeFIX {
			other = asm.PipeM
		}
		key, _ := unitKey(head, p)
		if op := c.pipes[other]; op != nil {
			for k := 0; k < op.q.Len(); k++ {
				e := op.q.At(k)
				if e.kind != enExec || e.xop == nil || e.xop.Unit != asm.UnitFinal {
					continue
				}
				if ek, t := unitKey(e, other); t == nil || ek != key {
					continue
				}
				if head.seq == 0 || e.seq < head.seq {
					add(i, c, other)
				}
				return
			}
		}
		if c.state == scQueueFull && c.waitPipe != nil && c.waitPipe.p != p {
			add(i, c, asm.PipeS)
		}
	}
	for i, l := range links {
		c := l.c
		if l.unit {
			unitWait(i, c, l.head, l.pipe)
			continue
		}
		if l.head != nil {
			flagWait(i, c, l.head.flag, l.head.seq)
			continue
		}
		switch c.state {
		case scQueueFull:
			if c.waitPipe != nil {
				add(i, c, c.waitPipe.p)
			}
		case scEnd, scDrain:
			for _, p := range c.plist {
				if !p.idle() {
					add(i, c, p.p)
				}
			}
		case scFlag:
			flagWait(i, c, c.flagWait, c.issued+1)
		}
	}
	const far = 1 << 30
	depth := make([]int, n)
	for i := range depth {
		depth[i] = far
		if len(edges[i]) == 0 {
			depth[i] = 0
		}
	}
	for changed := true; changed; {
		changed = false
		for i := range depth {
			for _, j := range edges[i] {
				if depth[j] < far && depth[j]+1 < depth[i] {
					depth[i], changed = depth[j]+1, true
				}
			}
		}
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return depth[order[a]] < depth[order[b]] })
	bl := make([]Blocked, n)
	names := make([]string, n)
	for k, i := range order {
		bl[k] = d.Blocked[i]
		bl[k].Root = depth[i] == 0
		if i < len(d.Names) {
			names[k] = d.Names[i]
		}
	}
	d.Blocked, d.Names = bl, names
}

// describeFlagWait explains a wait_flag nobody will satisfy; seq is the
// wait's issue number (0 when unknown).
func (c *core) describeFlagWait(f Flag, seq int64) string {
	where := fmt.Sprintf("wait_flag %s->%s #%d", f.Src, f.Dst, f.ID)
	if sp := c.pipes[f.Src]; sp != nil {
		for i := 0; i < sp.q.Len(); i++ {
			e := sp.q.At(i)
			if e.kind == enSetFlag && e.flag == f {
				h := sp.q.Head()
				what := "a blocked entry"
				if h != nil && h.op != nil && h.op.Info != nil {
					what = h.op.Info.Name
					if h.kind == enWaitFlag {
						what = fmt.Sprintf("wait_flag %s->%s #%d", h.flag.Src, h.flag.Dst, h.flag.ID)
					}
					if p := opPos(h.op); p != "" {
						what += " at " + p
					}
				}
				if seq != 0 && e.seq > seq {
					return fmt.Sprintf("%s: no set_flag is issued before it (the one queued on %s behind %s was issued after it)", where, f.Src, what)
				}
				return fmt.Sprintf("%s: its set_flag is queued on %s behind %s, which waits", where, f.Src, what)
			}
		}
	}
	return fmt.Sprintf("%s: no set_flag %s->%s #%d is queued or pending on %s", where, f.Src, f.Dst, f.ID, c.vname)
}

// describeWait explains what a scalar waits for.
func (c *core) describeWait() string {
	m := c.m
	switch c.state {
	case scRunning:
		return "running"
	case scQueueFull:
		if c.waitPipe != nil {
			return fmt.Sprintf("the scalar cannot issue: the %s queue is full (%d entries) and its head cannot start", c.waitPipe.p, c.waitPipe.q.Cap())
		}
	case scDrain:
		var busy []string
		for _, p := range c.plist {
			if !p.idle() {
				busy = append(busy, p.p.String())
			}
		}
		return fmt.Sprintf("pipe_barrier ALL: waits for pipes %v to drain", busy)
	case scFlag:
		return c.describeFlagWait(c.flagWait, c.issued+1)
	case scCross:
		return fmt.Sprintf("ffts_wait %d: counter %d, no ffts_set that would raise it is queued or pending", c.crossID, c.cross.Value(c.crossID))
	case scSyncAll:
		s := c.strm
		r := c.rank.id
		msg := fmt.Sprintf("syncall: %d of %d cores of the stream arrived on rank %d", s.syncall[r], s.nAICs+s.nAIVs, r)
		if left := s.plan.blocks - s.next[r]; left > 0 {
			msg += fmt.Sprintf("; %d of its %d blocks have no core to run on until a block ends (blocks beyond cores)", left, s.plan.blocks)
		}
		return msg
	case scSignal:
		op := c.waitOp
		if op == nil || len(op.Args) < 2 {
			return "twait"
		}
		a := &op.Args[0]
		cmp := SignalCmp(op)
		want := argInt(c, op, 1)
		count := int64(1)
		if at, ok := op.Attr("count"); ok {
			count = at.Val.Eval(&c.env)
		}
		cur := "unknown"
		if r, ok := c.gmRankQuiet(a); ok {
			if off, err := c.gmOffsetQuiet(a); err == nil {
				o := &m.ranks[r].gm[a.GM.Index]
				if o.buf != nil {
					_, v, err := c.checkSignal(o, off, count, cmp, want)
					if err == nil {
						cur = fmt.Sprint(v)
					}
				}
			}
		}
		return fmt.Sprintf("twait @%s%s %s %d on rank %d: current value %s, no notify or store to it is pending",
			a.GM.Name, idxString(c, a), asm.CmpSymbol(cmp), want, c.sigRank, cur)
	case scAsync:
		return "wait_async: transfers still in flight"
	case scEnd:
		var busy []string
		for _, p := range c.plist {
			if !p.idle() {
				busy = append(busy, p.p.String())
			}
		}
		return fmt.Sprintf("kernel end: waits for pipes %v to drain", busy)
	}
	return "waiting"
}

// blockedSignal is the word a scalar spinning in a twait polls, for the
// deadlock report (Blocked.Signal); nil when it is not in one, or the
// word cannot be told.
func (c *core) blockedSignal() *BlockedSignal {
	op := c.waitOp
	if c.state != scSignal || op == nil || op.Info == nil || op.Info.Op != asm.OpTwait || len(op.Args) < 2 {
		return nil
	}
	a := &op.Args[0]
	if a.Kind != asm.ArgGM || a.GM == nil {
		return nil
	}
	count := int64(1)
	if at, ok := op.Attr("count"); ok {
		count = at.Val.Eval(&c.env)
	}
	r, ok := c.gmRankQuiet(a)
	if !ok || count < 1 {
		return nil
	}
	off, err := c.gmOffsetQuiet(a)
	if err != nil {
		return nil
	}
	o := &c.m.ranks[r].gm[a.GM.Index]
	want := argInt(c, op, 1)
	bs := &BlockedSignal{Want: want, Iter: slices.Clone(c.iter)}
	if o.buf != nil {
		_, bs.Value, _ = c.checkSignal(o, off, count, SignalCmp(op), want)
	}
	sz := int64(o.info.DType.Size())
	bs.Access = Access{Space: asm.GM, Rank: int32(r), Core: -1, Lo: o.base + off, Hi: o.base + off + count*sz, Tensor: o.info}
	return bs
}

func (c *core) gmRankQuiet(a *asm.Arg) (int, bool) {
	r := c.rank.id
	if a.HasRank {
		v := a.Rank.Eval(&c.env)
		if v < 0 || v >= int64(c.m.nranks) {
			return 0, false
		}
		r = int(v)
	}
	return r, true
}

func (c *core) gmOffsetQuiet(a *asm.Arg) (int64, error) {
	n := len(a.GM.Shape)
	idx := make([]int64, n)
	k := n - len(a.Idx)
	for j, x := range a.Idx {
		if k+j >= 0 && k+j < n {
			idx[k+j] = x.Eval(&c.env)
		}
	}
	return GMOffset(a.GM, idx)
}

func idxString(c *core, a *asm.Arg) string {
	s := ""
	if a.HasRank {
		s = fmt.Sprintf("[rank=%d]", a.Rank.Eval(&c.env))
	}
	if len(a.Idx) > 0 {
		s += "["
		for i, x := range a.Idx {
			if i > 0 {
				s += ", "
			}
			s += fmt.Sprint(x.Eval(&c.env))
		}
		s += "]"
	}
	return s
}

// describeUnitWait explains a mad or FIX read stuck on an L0C unit flag.
func describeUnitWait(e *entry, p asm.Pipe) string {
	name := "the acc tile"
	if k, t := unitKey(e, p); t != nil && k >= 0 {
		name = "%" + t.Name
	}
	if p == asm.PipeM {
		return fmt.Sprintf("#unit: waits until a FIX read of %s with #unit=final releases it (a final tmatmul published it; a store or move without #unit, or with #unit=partial, does not release it)", name)
	}
	return fmt.Sprintf("#unit: waits until a tmatmul with #unit=final publishes %s (a mad without it, or #unit=partial, does not)", name)
}
