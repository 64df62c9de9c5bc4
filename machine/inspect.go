package machine

import (
	"fmt"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/memory"
)

// Read-only views of the engine's state for the stepping debugger
// (machine/debug). Nothing here changes what the machine does; the views
// allocate, which is fine because they are built on request between steps,
// never per event.

// CoreView is one core of the current (or last) run.
type CoreView struct {
	Rank, Core int
	Name       string
	Kind       asm.CoreKind
	Kernel     *asm.KernelInfo
	Block      int64
	// Done is true once the kernel finished and every pipe drained.
	Done bool
	// Waiting says what the scalar is blocked on ("" when it is runnable).
	Waiting string
	// Next is the statement the scalar runs next (nil at the end of the
	// body); NextPos is its position. A blocked scalar retries Next.
	Next    asm.CStmt
	NextPos asm.Pos
	// Iter is the loop iteration vector of the scalar, outermost first.
	Iter []int64
	// T is the scalar's local time; it may run ahead of the machine clock.
	T     int64
	Pipes []PipeView
}

// PipeView is one pipe of a core: the op in flight and the queue behind it.
type PipeView struct {
	Pipe asm.Pipe
	Cap  int
	// Busy is true while Queue[0] runs from Start to End.
	Busy       bool
	Start, End int64
	// Waiting explains why the head cannot start ("" when it can).
	Waiting string
	Queue   []QueueEntry
}

// QueueEntry is one queued instruction; Queue[0] is the head.
type QueueEntry struct {
	// Kind is "exec", "set_flag", "wait_flag", "barrier" or "ffts_set".
	Kind string
	Op   *asm.COp
	Step string // composite-op step
	// Iter is the scalar's iteration vector at issue; entries keep it only
	// while observers listen (the debugger always has one).
	Iter  []int64
	Ready int64 // when the scalar issued it
	Flag  Flag  // set_flag / wait_flag
	// Accesses are the byte ranges the entry reads and writes, resolved at
	// issue (tiles whole, GM windows by row).
	Accesses []Access
}

var entryKindNames = [...]string{enExec: "exec", enSetFlag: "set_flag", enWaitFlag: "wait_flag", enBarrier: "barrier", enFFTSSet: "ffts_set"}

// Cores lists the cores of the current run (or the last one, after it
// ended) in (rank, core) order.
func (m *Machine) Cores() []CoreView {
	out := make([]CoreView, 0, len(m.active))
	for _, c := range m.active {
		out = append(out, c.view())
	}
	return out
}

// CoreAt returns core `core` of rank `rank` if it ran a kernel.
func (m *Machine) CoreAt(rank, core int) (CoreView, bool) {
	c := m.coreOf(rank, core)
	if c == nil || c.kernel == nil {
		return CoreView{}, false
	}
	return c.view(), true
}

// coreOf returns core `core` of rank `rank`: a physical core, or the core
// running virtual core `core` (a block after a launch's first wave) now.
func (m *Machine) coreOf(rank, core int) *core {
	if rank < 0 || rank >= len(m.ranks) || core < 0 {
		return nil
	}
	cores := m.ranks[rank].cores
	if core < len(cores) {
		return cores[core]
	}
	for _, c := range cores {
		if c != nil && c.vid == core {
			return c
		}
	}
	return nil
}

func (c *core) view() CoreView {
	v := CoreView{Rank: c.rank.id, Core: c.vid, Name: c.vname, Kind: c.kind, Kernel: c.kernel, Block: c.env.Block,
		Done: c.state == scDone, Iter: append([]int64(nil), c.iter...), T: c.t}
	switch c.state {
	case scRunning, scDone, scIdle:
	case scFlag:
		v.Waiting = c.liveFlagWait(c.flagWait)
	case scQueueFull:
		v.Waiting = "issue: the queue is full"
		if c.waitPipe != nil {
			v.Waiting = fmt.Sprintf("issue: the %s queue is full (%d entries)", c.waitPipe.p, c.waitPipe.q.Cap())
		}
	default:
		v.Waiting = c.describeWait()
	}
	if next := c.nextStmt(); next != nil {
		v.Next = next
		v.NextPos = cstmtPos(v.Next)
	}
	if c.mi < len(c.micro) && c.micro[c.mi].e.op != nil {
		// A composite instruction is half issued: the scalar is still on it.
		v.Next = c.micro[c.mi].e.op
		v.NextPos = cstmtPos(v.Next)
	}
	for _, p := range c.plist {
		pv := PipeView{Pipe: p.p, Cap: p.q.Cap(), Busy: p.busy, Start: p.start, End: p.end}
		for i := 0; i < p.q.Len(); i++ {
			e := p.q.At(i)
			qe := QueueEntry{Kind: entryKindNames[e.kind], Op: e.op, Step: e.stepName(), Iter: append([]int64(nil), e.iterVec()...),
				Ready: e.ready, Flag: e.flag}
			if e.kind == enExec {
				qe.Accesses = c.accesses(e, nil)
			}
			pv.Queue = append(pv.Queue, qe)
		}
		if h := p.q.Head(); h != nil && !p.busy && h.kind == enWaitFlag {
			if p.waiting {
				pv.Waiting = c.liveFlagWait(h.flag)
			} else if p.stalled {
				pv.Waiting = fmt.Sprintf("wait_flag %s->%s #%d: set, handing over", h.flag.Src, h.flag.Dst, h.flag.ID)
			}
		} else if h != nil && !p.busy && h.ready > c.m.now {
			pv.Waiting = fmt.Sprintf("issued for cycle %d", h.ready)
		}
		v.Pipes = append(v.Pipes, pv)
	}
	return v
}

// liveFlagWait explains a wait_flag in a machine that is still running: the
// set_flag may be queued, or not issued yet.
func (c *core) liveFlagWait(f Flag) string {
	where := fmt.Sprintf("wait_flag %s->%s #%d", f.Src, f.Dst, f.ID)
	if sp := c.pipes[f.Src]; sp != nil {
		for i := 0; i < sp.q.Len(); i++ {
			e := sp.q.At(i)
			if e.kind == enSetFlag && e.flag == f {
				if i == 0 {
					return fmt.Sprintf("%s: its set_flag is at the head of %s", where, f.Src)
				}
				h := sp.q.Head()
				what := "an entry"
				if h != nil && h.op != nil && h.op.Info != nil {
					what = h.op.Info.Name
					if p := opPos(h.op); p != "" {
						what += " at " + p
					}
				}
				state := "queued"
				if sp.busy {
					state = "running"
				}
				return fmt.Sprintf("%s: its set_flag is queued on %s behind %d entries (head: %s, %s)", where, f.Src, i, what, state)
			}
		}
	}
	return fmt.Sprintf("%s: no set_flag %s->%s #%d is queued on %s yet", where, f.Src, f.Dst, f.ID, c.vname)
}

func cstmtPos(s asm.CStmt) asm.Pos {
	switch x := s.(type) {
	case *asm.COp:
		if x.Instr != nil {
			return x.Instr.Pos
		}
	case *asm.CLet:
		return stmtPos(x.Let)
	case *asm.CFor:
		return stmtPos(x.For)
	case *asm.CIf:
		return stmtPos(x.If)
	case *asm.CWhile:
		return stmtPos(x.While)
	case *asm.CBreak:
		return stmtPos(x.Break)
	}
	return asm.Pos{}
}

// SetFlags lists a core's set intra-core flags with the cycle each was set
// (recorded while an observer listens that does not decline it, as the
// debugger's do, or when the profile has a flag hand-off latency; 0
// otherwise: FlagTimeFilter).
func (m *Machine) SetFlags(rank, core int) (flags []Flag, at []int64) {
	c := m.coreOf(rank, core)
	if c == nil {
		return nil, nil
	}
	c.flags.Each(func(src, dst asm.Pipe, id int) {
		flags = append(flags, Flag{Src: src, Dst: dst, ID: int32(id)})
		at = append(at, c.flagAt[src][dst][id])
	})
	return flags, at
}

// LocalBuffer is a core's storage for one on-chip space (nil when the core
// never ran or the machine is timing-only).
func (m *Machine) LocalBuffer(rank, core int, s asm.Space) *memory.Buffer {
	c := m.coreOf(rank, core)
	if c == nil || s >= asm.NumSpaces {
		return nil
	}
	return c.bufs[s]
}

// NextAt is the cycle of the next pending wake-up; ok is false when nothing
// is scheduled (between runs, at the end, or in a deadlock).
func (m *Machine) NextAt() (at int64, ok bool) {
	return m.nextAt()
}

// Started describes an instruction that the last Step began on a pipe.
type Started struct {
	Agent      Agent
	Op         *asm.COp
	Step       string
	Iter       []int64 // a view: copy it to keep it
	Start, End int64
	Accesses   []Access
}

// LastStarted reports the instruction (an exec entry, not a flag or barrier)
// that the last Step started, if it started one. Only a pipe's own wake-up
// begins its ops, and a pipe that began a non-empty op re-arms its waker at
// the op's end while it is the current waker, which parks it in m.front:
// so the answer is that pipe, checked against its state.
func (m *Machine) LastStarted() (Started, bool) {
	w := m.front
	if w == nil || m.nAIC+m.nAIV == 0 {
		return Started{}, false
	}
	key := int(w.ord>>seqBits) - 1
	if key < 0 {
		return Started{}, false
	}
	order, pipe := key/int(asm.NumPipes), asm.Pipe(key%int(asm.NumPipes))
	per := m.nAIC + m.nAIV
	c := m.coreOf(order/per, order%per)
	if c == nil || pipe <= asm.PipeS || pipe >= asm.PipeALL {
		return Started{}, false
	}
	p := c.pipes[pipe]
	if p == nil || &p.wake.w != w || !p.busy || p.start != m.now {
		return Started{}, false
	}
	e := p.q.Head()
	if e == nil || e.kind != enExec {
		return Started{}, false
	}
	return Started{Agent: Agent{Rank: int32(c.rank.id), Core: int32(c.vid), Pipe: pipe}, Op: e.op, Step: e.stepName(),
		Iter: e.iterVec(), Start: p.start, End: p.end, Accesses: c.accesses(e, nil)}, true
}
