package machine

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/memory"
)

// outputChecks checks one `expect @T == golden` on every rank it names. The
// expected values are compared with the output a band of rows at a time
// (memory.EvalGoldenBands), so neither is held whole as float64, and what
// the golden holds is charged to the memory budget as it evaluates: a
// golden that would pass the budget stops the run with a *BudgetError at
// the sub-expression, never an out-of-memory kill. The checks of ranks
// before that error are returned with it, the rest as skipped.
func (m *Machine) outputChecks(x *asm.Expect) ([]Check, error) {
	if x.Target == nil {
		return nil, nil
	}
	name := "@" + x.Target.Name
	ranks := make([]int, 0, m.nranks)
	hasRank := x.Target.Rank != nil
	if hasRank {
		v, err := asm.EvalInt(x.Target.Rank, m.lookupConst)
		if err != nil || v < 0 || v >= int64(m.nranks) {
			return []Check{{Name: name, Msg: fmt.Sprintf("%s: bad rank in expectation", x.Pos)}}, nil
		}
		ranks = append(ranks, int(v))
	} else {
		for i := 0; i < m.nranks; i++ {
			ranks = append(ranks, i)
		}
	}
	out := make([]Check, len(ranks))
	for i, rk := range ranks {
		out[i].Name = name
		if hasRank || m.nranks > 1 {
			out[i].Name = fmt.Sprintf("%s[rank=%d]", name, rk)
		}
		if m.opt.TimingOnly {
			out[i] = Check{Name: out[i].Name, OK: true, Skipped: true, Msg: "timing-only run: no data to check"}
		}
	}
	if m.opt.TimingOnly {
		return out, nil
	}
	for i := 0; i < len(ranks); {
		n, err := m.checkRanks(x, ranks[i:], out[i:])
		if err != nil {
			var be *BudgetError
			if !errors.As(err, &be) {
				return nil, err
			}
			// The ranks checked stand; the rest are reported as not
			// checked (their golden is as large), then the error.
			for j := i; j < len(out); j++ {
				out[j] = Check{Name: out[j].Name, OK: true, Skipped: true,
					Msg: "not checked: " + be.Msg + " (" + be.Flag + ")"}
			}
			return out, err
		}
		i += n
	}
	return out, nil
}

// rankCheck is one rank's comparison of its output with the expected
// values.
type rankCheck struct {
	rank  int
	got   memory.Tensor
	shape []int
	n     int // its elements
	cmp   *memory.Comparison
	first float64          // its element 0, for a count mismatch
	want0 float64          // the golden's element 0, for a count mismatch
	whole *memory.Array    // the output decoded whole, when it has no rows
	err   error            // why it cannot be checked (the check's message)
	check *Check           // where the outcome goes
	tol   memory.Tolerance // for the message
}

// checkRanks checks the expectation on ranks[0] and on every following rank
// whose golden reads the same values (replicated inputs: every rank of
// allgather_gemm checks the same matmul), evaluating the golden once: each
// band of expected values is compared with each of those ranks' outputs.
// The golden is a pure function of the tensors it reads, so this changes
// no result. It returns how many ranks it checked.
func (m *Machine) checkRanks(x *asm.Expect, ranks []int, out []Check) (int, error) {
	dt := m.obj.Tensor(x.Target.Name).DType
	tol, tolErr := m.tolerance(x)
	group := []*rankCheck{m.newRankCheck(x, ranks[0], &out[0], tol, dt)}
	if group[0].err != nil {
		out[0].Msg = group[0].err.Error()
		return 1, m.checkError(x, group[0].err)
	}
	var memo goldenMemo
	memo.start(ranks[0])
	var wantShape []int
	wantN := 0
	scratch := m.checkScratch(group[0])
	src := memory.GoldenSource{
		Lookup: func(n string, r int, has bool) (memory.Tensor, error) {
			if !has {
				r = ranks[0]
			}
			t, err := m.goldenTensor(n, r)
			memo.read(n, r, has, err)
			return t, err
		},
		Consts: m.lookupFloat,
		ReadFile: func(path string) (*memory.Array, error) {
			memo.valid = false // keep it simple: files are not memoised
			if !filepath.IsAbs(path) {
				path = filepath.Join(filepath.Dir(x.Pos.File), path)
			}
			t := m.obj.Tensor(x.Target.Name)
			data, err := readDataFile(path, t)
			if err != nil {
				return nil, err
			}
			return memory.ReadDataFile(path, data, t.DType)
		},
		Limit: max(1, m.mem.b.Max-m.mem.b.Used()-scratch),
	}
	ready := func(shape []int) error {
		wantShape, wantN = shape, elemsOf(shape)
		for _, rk := range ranks[1:] {
			if !memo.same(m.goldenTensor, rk) {
				break
			}
			c := m.newRankCheck(x, rk, &out[len(group)], tol, dt)
			if c.err != nil {
				if err := m.checkError(x, c.err); err != nil {
					return err
				}
			}
			group = append(group, c)
		}
		return nil
	}
	visit := func(off int, want *memory.Array) error {
		if tolErr != nil {
			return nil
		}
		for _, c := range group {
			if c.err == nil {
				if err := m.compareBand(c, wantShape, wantN, off, want); err != nil {
					return err
				}
			}
		}
		return nil
	}
	err := memory.EvalGoldenBands(x.Golden, src, ready, visit)
	if err != nil {
		var le *memory.GoldenLimitError
		if errors.As(err, &le) {
			return 0, m.mem.over(scratch+le.Held, le.At.NodeSpan().Pos, func() string {
				return fmt.Sprintf("checking @%s: %s", x.Target.Name, le.What())
			})
		}
		if be := m.checkError(x, err); be != nil {
			return 0, be
		}
	}
	for _, c := range group {
		c.finish(err, tolErr, wantN, dt)
	}
	return len(group), nil
}

// checkError is err as the run's error when it is a budget's (a sparse
// tensor's pages past the budget): bad input, exit 2, as everywhere else.
func (m *Machine) checkError(x *asm.Expect, err error) error {
	if be := m.pageError(x.Pos, "checking @"+x.Target.Name+": ", err); be != nil {
		return be
	}
	var be *BudgetError
	if errors.As(err, &be) {
		return be
	}
	return nil
}

func (m *Machine) newRankCheck(x *asm.Expect, rk int, out *Check, tol memory.Tolerance, dt asm.DType) *rankCheck {
	c := &rankCheck{rank: rk, check: out, tol: tol, cmp: memory.NewComparison(tol, 0, memory.PoisonValue(dt))}
	c.got, c.err = m.goldenTensor(x.Target.Name, rk)
	if c.err == nil {
		c.shape = c.got.Shape()
		c.n = elemsOf(c.shape)
		if len(c.shape) != 2 {
			// No rows to read by: decoded whole.
			c.err = m.mem.fits(int64(c.n)*8, x.Pos, func() string {
				return fmt.Sprintf("checking @%s: decoding its %d elements", x.Target.Name, c.n)
			})
			if c.err == nil {
				c.whole, c.err = c.got.Load()
			}
		}
	}
	return c
}

// checkScratch is what a check holds beside the golden: a band of one
// rank's output at a time, or the whole output when it has no rows.
func (m *Machine) checkScratch(c *rankCheck) int64 {
	if c.whole != nil || len(c.shape) != 2 {
		return int64(c.n) * 8
	}
	return int64(min(c.n, gotBandRows(c.shape)*c.shape[1])) * 8
}

// gotBandRows is how many rows of an output a check decodes at a time.
func gotBandRows(shape []int) int { return max(1, goldenBand/max(shape[1], 1)) }

// elemsOf is shape's element count, saturating for a golden's analysed
// shape that no one could hold.
func elemsOf(shape []int) int {
	n := 1
	for _, d := range shape {
		if d > 0 && n > (1<<62)/d {
			return 1 << 62
		}
		n *= d
	}
	return n
}

// compareBand compares the expected values want, elements [off,
// off+len) of the golden, with the same elements of c's output.
func (m *Machine) compareBand(c *rankCheck, wantShape []int, wantN, off int, want *memory.Array) error {
	if c.n != wantN {
		// Compare fails a count mismatch at element 0 and compares nothing.
		if off == 0 && len(want.Data) > 0 && c.n > 0 {
			v, err := c.element0()
			if err != nil {
				return c.gotError(m, err)
			}
			c.first, c.want0 = v, want.Data[0]
		}
		c.cmp.AddWant(want.Data)
		return nil
	}
	if c.whole != nil {
		c.cmp.Add(c.whole.Data[off:], want.Data)
		return nil
	}
	cols := max(c.shape[1], 1)
	if off%cols != 0 || len(want.Data)%cols != 0 {
		// The golden's bands are not the output's rows (a [64, 32] output
		// of a [32, 64] golden): decode it whole.
		if err := m.mem.fits(int64(c.n)*8, asm.Pos{}, func() string { return "decoding the output" }); err != nil {
			return err
		}
		var err error
		if c.whole, err = c.got.Load(); err != nil {
			return c.gotError(m, err)
		}
		c.cmp.Add(c.whole.Data[off:], want.Data)
		return nil
	}
	step := gotBandRows(c.shape)
	r0, r1 := off/cols, (off+len(want.Data))/cols
	for r := r0; r < r1; r += step {
		e := min(r+step, r1)
		g, err := c.got.Rows(r, e)
		if err != nil {
			return c.gotError(m, err)
		}
		c.cmp.Add(g.Data, want.Data[(r-r0)*cols:(e-r0)*cols])
	}
	return nil
}

// gotError records that c's output could not be decoded (its check's
// message, as when the output was decoded whole before the golden), or
// returns err when a budget stops the run.
func (c *rankCheck) gotError(m *Machine, err error) error {
	if be := m.pageError(asm.Pos{}, "", err); be != nil {
		return be
	}
	c.err = err
	return nil
}

// element0 is the output's first element.
func (c *rankCheck) element0() (float64, error) {
	if c.whole != nil {
		return c.whole.Data[0], nil
	}
	g, err := c.got.Rows(0, 1)
	if err != nil {
		return 0, err
	}
	return g.Data[0], nil
}

// finish writes the check's outcome: the message of the first error (the
// output's, the golden's, the tolerance's), else the comparison's.
func (c *rankCheck) finish(evalErr, tolErr error, wantN int, dt asm.DType) {
	out := c.check
	switch {
	case c.err != nil:
		out.Msg = c.err.Error()
		return
	case evalErr != nil:
		out.Msg = evalErr.Error()
		return
	case tolErr != nil:
		out.Msg = tolErr.Error()
		return
	}
	if c.n != wantN {
		out.OK, out.MaxAbsErr = false, math.Inf(1)
		if c.n > 0 && wantN > 0 {
			out.Msg = fmt.Sprintf("element 0 is %g, expected %g (%s)", c.first, c.want0, c.tol)
		} else {
			out.Msg = fmt.Sprintf("%d elements, expected %d", c.n, wantN)
		}
	} else {
		out.OK, out.MaxAbsErr = c.cmp.OK(), c.cmp.MaxAbsErr
		if !out.OK {
			out.Msg = fmt.Sprintf("element %d is %g, expected %g (%s)", c.cmp.FirstBad, c.cmp.BadGot, c.cmp.BadWant, c.tol)
		}
	}
	out.Warning = cannotFail(c.cmp, wantN, c.tol, dt)
}

// cannotFail explains why a check under tol cannot fail (cmp has seen its
// wantN expected values, asking about 0 and dt's poison value), or is "".
func cannotFail(cmp *memory.Comparison, wantN int, tol memory.Tolerance, dt asm.DType) string {
	if wantN == 0 {
		return "the check cannot fail: it compares no elements"
	}
	// The output is wrong yet passes: a constant 0 or poison that the
	// tolerance lets through (an expected constant itself is no warning).
	if cmp.CannotFail(0) {
		return fmt.Sprintf("the check cannot fail: every expected value is within %s of 0, so an all-zero output passes (tighten the tolerance, e.g. rtol without atol)", tol)
	}
	if cmp.CannotFail(1) {
		return fmt.Sprintf("the check cannot fail: every expected value is within %s of the poison value %g, so an output never written passes", tol, memory.PoisonValue(dt))
	}
	return ""
}

// goldenMemo remembers which tensors one rank's golden read (by name and
// resolved rank; "own" when the reference named no rank).
type goldenMemo struct {
	valid bool
	rank  int
	reads []goldenRead
}

type goldenRead struct {
	name string
	rank int
	own  bool
}

// start begins remembering rank rk's golden.
func (g *goldenMemo) start(rk int) {
	*g = goldenMemo{valid: true, rank: rk}
}

func (g *goldenMemo) read(n string, r int, has bool, err error) {
	if err != nil {
		g.valid = false
		return
	}
	g.reads = append(g.reads, goldenRead{name: n, rank: r, own: !has})
}

// same reports whether every tensor the golden read holds the same values
// on rank rk (the ones the reference named a rank for: on that rank), so
// that rk's golden is the same. The expression reads tensors in a fixed
// order and is otherwise a pure function of constants, so equal inputs
// give an equal result.
func (g *goldenMemo) same(tensor func(name string, rank int) (memory.Tensor, error), rk int) bool {
	if !g.valid {
		return false
	}
	for _, rd := range g.reads {
		if !rd.own || rd.rank == rk {
			continue // the same rank's tensor both times
		}
		x, err := tensor(rd.name, rd.rank)
		if err != nil {
			return false
		}
		y, err := tensor(rd.name, rk)
		if err != nil {
			return false
		}
		if same, err := sameTensor(x, y); err != nil || !same {
			return false
		}
	}
	return true
}
