package machine

import (
	"fmt"

	"github.com/ptoasm/ptoasm/asm"
)

// DefaultMaxMemory (768 MiB, leaving room under 1 GiB for the parser, the
// detector and the Go runtime) is the memory budget of a machine whose Options leave
// MaxMemory at 0: the storage of every GM tensor on every rank, every core's
// local buffers, and the scratch of initialising tensors and evaluating
// expected outputs. A 100-byte program can declare a 4 GiB tensor (or 4096
// ranks of one), so storage is checked against the budget before it is
// allocated rather than left to the operating system's out-of-memory killer.
const DefaultMaxMemory = 768 << 20

// BudgetError is a run refused because it would pass a resource limit that
// a flag raises. It is bad input, not a finding: the CLI exits 2.
type BudgetError struct {
	Pos  asm.Pos // the declaration that needs the memory, when there is one
	Msg  string
	Flag string // the flag that raises the limit: "--max-memory"
}

func (e *BudgetError) Error() string {
	s := ""
	if e.Pos.IsValid() {
		s = e.Pos.String() + ": error: "
	}
	return s + e.Msg + " (" + e.Flag + ")"
}

// budget is what a machine's storage has taken of its MaxMemory.
type budget struct {
	max, used int64
}

// take charges n bytes, or explains (via what) why they do not fit.
func (b *budget) take(n int64, pos asm.Pos, what func() string) error {
	if n < 0 || n > b.max-b.used {
		return b.over(n, pos, what)
	}
	b.used += n
	return nil
}

// fits checks that n bytes of scratch fit beside what is taken, without
// taking them: they are freed before the next scratch is needed.
func (b *budget) fits(n int64, pos asm.Pos, what func() string) error {
	if n < 0 || n > b.max-b.used {
		return b.over(n, pos, what)
	}
	return nil
}

func (b *budget) over(n int64, pos asm.Pos, what func() string) error {
	need := "more than " + asm.FormatBytes(b.max)
	if n >= 0 && n <= 1<<62-b.used {
		need = asm.FormatBytes(b.used + n)
	}
	return &BudgetError{Pos: pos, Flag: "--max-memory",
		Msg: fmt.Sprintf("%s: the run would need %s, over the memory budget of %s", what(), need, asm.FormatBytes(b.max))}
}

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
