package machine

import (
	"errors"
	"fmt"
	"runtime/metrics"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/memory"
)

// DefaultMaxMemory (768 MiB, leaving room under 1 GiB for the parser, the
// detector and the Go runtime) is the memory budget of a machine whose Options leave
// MaxMemory at 0: the GM pages the run touches on every rank, every core's
// local buffers, and the scratch of initialising tensors and evaluating
// expected outputs. A 100-byte program can declare a 4 GiB tensor (or 4096
// ranks of one): a large tensor is sparse (memory.NewGMBuffer) and costs the
// pages the run touches, which are charged as they are first touched, and
// everything else is checked against the budget before it is allocated,
// rather than left to the operating system's out-of-memory killer.
const DefaultMaxMemory = 768 << 20

// BudgetError is a run refused because it would pass a resource limit that
// a flag raises. It is bad input, not a finding: the CLI exits 2.
type BudgetError struct {
	Pos  asm.Pos // the declaration that needs the memory, when there is one
	Msg  string
	Flag string // the flag that raises the limit: "--max-memory"
	// AfterRun: a check's, evaluated after the run ended. The run's
	// result stands (its report, the checks that fit, its outputs); only
	// the check is missing, so the CLI reports the run before the error.
	AfterRun bool
}

func (e *BudgetError) Error() string {
	s := ""
	if e.Pos.IsValid() {
		s = e.Pos.String() + ": error: "
	}
	return s + e.Msg + " (" + e.Flag + ")"
}

// budget is what a machine's storage has taken of its MaxMemory. Its
// memory.Budget is shared with the sparse GM buffers, which take pages from
// it as the run first touches them.
type budget struct {
	b memory.Budget
}

// take charges n bytes, or explains (via what) why they do not fit.
func (b *budget) take(n int64, pos asm.Pos, what func() string) error {
	if !b.b.Take(n) {
		return b.over(n, pos, what)
	}
	return nil
}

// fits checks that n bytes of scratch fit beside what is taken, without
// taking them: they are freed before the next scratch is needed.
func (b *budget) fits(n int64, pos asm.Pos, what func() string) error {
	if n < 0 || n > b.b.Max-b.b.Used() {
		return b.over(n, pos, what)
	}
	return nil
}

func (b *budget) over(n int64, pos asm.Pos, what func() string) error {
	used := b.b.Used()
	need := "more than " + asm.FormatBytes(b.b.Max)
	if n >= 0 && n <= 1<<62-used {
		need = asm.FormatBytes(used + n)
	}
	return &BudgetError{Pos: pos, Flag: "--max-memory",
		Msg: fmt.Sprintf("%s: the run would need %s, over the memory budget of %s", what(), need, asm.FormatBytes(b.b.Max))}
}

// pageError turns a sparse GM buffer's *memory.PageError inside err into a
// *BudgetError at pos naming the tensor, after what ("tstore: "); nil when
// err holds none.
func (m *Machine) pageError(pos asm.Pos, what string, err error) error {
	var pe *memory.PageError
	if !errors.As(err, &pe) {
		return nil
	}
	for _, rs := range m.ranks {
		for _, o := range rs.gm {
			if o.buf == pe.Buf {
				return &BudgetError{Pos: pos, Flag: "--max-memory",
					Msg: fmt.Sprintf("%s%s: the pages rank %d has touched bring the run to %s, over the memory budget of %s",
						what, m.gmWhat(o.info, o.size), rs.id, asm.FormatBytes(pe.Need), asm.FormatBytes(pe.Max))}
			}
		}
	}
	return &BudgetError{Pos: pos, Flag: "--max-memory", Msg: pe.Error()}
}

// MaxDeclaredGM is how many times the memory budget the GM a program
// declares (over all ranks) may reach: sparse tensors cost only what is
// touched, but their page tables and the address space they reserve grow with
// the declaration.
const MaxDeclaredGM = 1024

// mulCap multiplies non-negative a and b, saturating at 1<<62 so that sizes
// of absurd declarations compare as too large instead of wrapping.
func mulCap(a, b int64) int64 {
	if a <= 0 || b <= 0 {
		return 0
	}
	if a > (1<<62)/b {
		return 1 << 62
	}
	return a * b
}

// execErr is what stops the run when op's data effect fails with err: a
// *BudgetError at op when a sparse tensor's pages would pass the memory
// budget (bad input, exit 2, like every other budget), otherwise a fault.
func (c *core) execErr(op *asm.COp, p asm.Pipe, err error) error {
	var pos asm.Pos
	name := ""
	if op != nil && op.Instr != nil {
		pos = op.Instr.Pos
	}
	if op != nil && op.Info != nil {
		name = op.Info.Name
	}
	if name != "" {
		name += ": "
	}
	if be := c.m.pageError(pos, name, err); be != nil {
		return be
	}
	return c.faultK(FaultExec, op, p, "%v", err)
}

// heapUse is what the MaxHeap guard reads of the Go runtime: the memory it
// has mapped and not released to the OS (the figure the process's memory
// limit holds down, runtime/debug.SetMemoryLimit: the heap's live objects,
// the garbage since the last collection, free spans not yet returned,
// stacks and the runtime's own), and the live heap as the last garbage
// collection marked it. Each is 0 where the runtime does not say.
func heapUse() (inUse, live int64) {
	s := [3]metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}, {Name: "/gc/heap/live:bytes"}}
	metrics.Read(s[:])
	v := func(i int) int64 {
		if s[i].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return int64(s[i].Value.Uint64())
	}
	return max(v(0)-v(1), 0), v(2)
}

// overHeap is the MaxHeap guard, at the wall-clock checks: it reports (and
// records as the run's error) that the runtime's memory in use has passed
// MaxHeap. The runtime holds that below the process's memory limit by
// collecting more often, until the live heap no longer leaves room for it:
// then it grows with the run. The live heap alone, known only as of the
// last collection, passed the limit late: a collection of a heap near 1 GiB
// takes seconds on a loaded host, and the garbage and free spans beside it
// brought a racing loop of 2^40 trips to 1.39 GB of RSS before the guard
// fired at the default limit of 1 GiB (docs/cli.md, "Limits").
func (m *Machine) overHeap() bool {
	if m.opt.MaxHeap <= 0 {
		return false
	}
	inUse, live := heapUse()
	if inUse <= m.opt.MaxHeap && live <= m.opt.MaxHeap {
		return false
	}
	e := m.limitError(LimitMemory, m.now).(*LimitError)
	e.MaxHeap, e.Heap, e.Live, e.MaxMemory = m.opt.MaxHeap, max(inUse, live), live, m.mem.b.Max
	m.err = e
	return true
}

// HeapExceeded is the MaxHeap guard for a caller that steps the machine
// one event at a time (Step, the debugger) instead of Run: true once the
// runtime's memory in use has grown past MaxHeap, the stop then being the error the
// next Step returns.
func (m *Machine) HeapExceeded() bool { return m.err == nil && m.overHeap() }
