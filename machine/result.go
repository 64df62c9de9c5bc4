package machine

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"text/tabwriter"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/memory"
	"github.com/ptoasm/ptoasm/pipes"
)

// Byte-count paths beyond the profile's DMA paths.
const (
	pathRemoteRead  = int(pipes.NumDMAPaths) + iota // remote GM read by TGET/tallgather
	pathRemoteWrite                                 // remote GM write by TPUT
	pathSDMA                                        // async SDMA payload
	numPaths
)

var pathNames = [numPaths]string{
	"GM->UB", "GM->L1", "UB->GM", "L1->GM", "UB->UB", "L0C->GM", "L0C->L1", "L1->L0A", "L1->L0B",
	"L1->BT", "L1->FB", "L1 fill", "remote GM->local", "local->remote GM", "SDMA",
}

// RunStat is one `run` of the launch section.
type RunStat struct {
	Name   string  `json:"name"`
	Start  int64   `json:"start"`
	End    int64   `json:"end"`
	TimeUS float64 `json:"time_us"`
}

// PipeStat is one pipe (or the scalar, pipe "S") of one core that ran.
type PipeStat struct {
	Rank         int     `json:"rank"`
	Core         string  `json:"core"`
	Pipe         string  `json:"pipe"`
	BusyCycles   int64   `json:"busy_cycles"`
	Instructions int64   `json:"instructions"`
	Utilisation  float64 `json:"utilisation"`
}

// PathStat counts the bytes moved on one data path.
type PathStat struct {
	Path  string `json:"path"`
	Bytes int64  `json:"bytes"`
}

// Check is one expectation's outcome.
type Check struct {
	Name      string  `json:"name"`
	OK        bool    `json:"ok"`
	MaxAbsErr float64 `json:"max_abs_err"`
	// Msg explains a failure or why the check was skipped.
	Msg string `json:"message,omitempty"`
	// Skipped: the check did not run (a timing-only run has no data); OK is
	// true so it fails nothing, and the report says "skip", never "ok".
	Skipped bool `json:"skipped,omitempty"`
	// Warning says the check cannot fail: every expected value is within
	// tolerance of zero or of the poison value, so a kernel that wrote zeros
	// or nothing would pass too.
	Warning string `json:"warning,omitempty"`
}

// Result is what a run measured.
type Result struct {
	Cycles   int64
	TimeUS   float64
	FLOPs    int64
	TFLOPS   float64
	Runs     []RunStat
	Pipes    []PipeStat
	Bytes    []PathStat
	Checks   []Check
	Faults   []string
	Findings []any // filled by the CLI
	// Instructions is the number of simulated instructions: every one the
	// scalars executed, whether they ran it themselves (let, a loop's step,
	// if, scalar GM access, a wait) or issued it into a pipe. Pipes[i] has
	// each pipe's own count.
	Instructions int64
}

func (m *Machine) result() *Result {
	r := &Result{Runs: m.res.Runs, Faults: m.res.Faults}
	r.Cycles = m.now
	for _, run := range r.Runs {
		r.Cycles = max(r.Cycles, run.End)
	}
	r.TimeUS = m.prof.Seconds(r.Cycles) * 1e6
	r.FLOPs = m.flops
	if r.TimeUS > 0 {
		r.TFLOPS = float64(r.FLOPs) / (r.TimeUS * 1e-6) / 1e12
	}
	for _, rs := range m.ranks {
		for _, c := range rs.cores {
			if c == nil || !c.ran {
				continue
			}
			util := func(b int64) float64 {
				if r.Cycles == 0 {
					return 0
				}
				return float64(b) / float64(r.Cycles)
			}
			busy, ops := c.scalarStats()
			r.Pipes = append(r.Pipes, PipeStat{Rank: rs.id, Core: c.name, Pipe: "S", BusyCycles: busy,
				Instructions: ops, Utilisation: util(busy)})
			r.Instructions += ops
			for _, p := range c.plist {
				r.Pipes = append(r.Pipes, PipeStat{Rank: rs.id, Core: c.name, Pipe: p.p.String(), BusyCycles: p.busyCycles,
					Instructions: p.instrs, Utilisation: util(p.busyCycles)})
			}
		}
	}
	for i, b := range m.bytes {
		if b > 0 {
			r.Bytes = append(r.Bytes, PathStat{Path: pathNames[i], Bytes: b})
		}
	}
	r.Checks = m.res.Checks
	return r
}

// checks evaluates the program's expectations (output and cycles) into r.
// A check that does not fit the memory budget stops only itself: it is in
// r as skipped, the other checks still run, and the first such
// *BudgetError (marked AfterRun) is returned after them, so that the run's
// result is reported before the error.
func (m *Machine) checks(r *Result) error {
	var over *BudgetError
	for _, x := range m.obj.Expects {
		switch x.Kind {
		case "cycles":
			want, err := asm.EvalInt(x.Cycles, m.lookupConst)
			if err != nil {
				return err
			}
			c := Check{Name: "cycles", OK: r.Cycles == want, MaxAbsErr: math.Abs(float64(r.Cycles - want))}
			if !c.OK {
				c.Msg = fmt.Sprintf("%d cycles, expected %d", r.Cycles, want)
			}
			r.Checks = append(r.Checks, c)
		case "output":
			cs, err := m.outputChecks(x)
			var be *BudgetError
			if errors.As(err, &be) {
				if over == nil {
					over = be
				}
			} else if err != nil {
				return err
			}
			r.Checks = append(r.Checks, cs...)
		}
	}
	if over != nil {
		over.AfterRun = true
		return over
	}
	return nil
}

// goldenBand is how many elements of two ranks' tensors sameTensor decodes
// at a time.
const goldenBand = 1 << 18

// sameTensor reports whether x and y hold the same values (float64 bits, as
// a golden reads them): two ranks' copies of a tensor by their bytes, else
// a band of rows at a time.
func sameTensor(x, y memory.Tensor) (bool, error) {
	if gx, ok := x.(gmTensor); ok {
		if gy, ok := y.(gmTensor); ok && gx.t == gy.t {
			// Equal bytes decode to equal values, and a compare of the
			// stored bytes decodes nothing (it was 7% of the 8-rank
			// allgather_gemm's data run). Bytes that differ where the
			// values do not (a padding byte) only cost the golden again.
			return memory.SameStored(gx.buf, gy.buf, 0, memory.TensorBytes(gx.t))
		}
	}
	shape := x.Shape()
	if len(shape) != 2 || !slices.Equal(shape, y.Shape()) {
		a, err := x.Load()
		if err != nil {
			return false, err
		}
		b, err := y.Load()
		if err != nil {
			return false, err
		}
		return sameArray(a, b), nil
	}
	step := max(1, goldenBand/max(shape[1], 1))
	for r0 := 0; r0 < shape[0]; r0 += step {
		r1 := min(r0+step, shape[0])
		a, err := x.Rows(r0, r1)
		if err != nil {
			return false, err
		}
		b, err := y.Rows(r0, r1)
		if err != nil {
			return false, err
		}
		if !sameArray(a, b) {
			return false, nil
		}
	}
	return true, nil
}

func sameArray(x, y *memory.Array) bool {
	if len(x.Data) != len(y.Data) || len(x.Shape) != len(y.Shape) {
		return false
	}
	for i := range x.Shape {
		if x.Shape[i] != y.Shape[i] {
			return false
		}
	}
	for i, v := range x.Data {
		if math.Float64bits(v) != math.Float64bits(y.Data[i]) {
			return false
		}
	}
	return true
}

// tolerance evaluates the check's tol, rtol and atol.
func (m *Machine) tolerance(x *asm.Expect) (memory.Tolerance, error) {
	var t memory.Tolerance
	for _, f := range []struct {
		e   asm.Expr
		dst *float64
	}{{x.Tol, &t.Tol}, {x.RTol, &t.RTol}, {x.ATol, &t.ATol}} {
		if f.e == nil {
			continue
		}
		v, err := m.evalFloat(f.e)
		if err != nil {
			return t, err
		}
		*f.dst = v
	}
	return t, nil
}

// gmTensor is one rank's GM tensor as a golden expression reads it: whole
// or a band of rows at a time, decoded when read.
type gmTensor struct {
	buf *memory.Buffer
	t   *asm.TensorInfo
}

func (g gmTensor) Shape() []int { return intShape(g.t.Shape) }

func (g gmTensor) Load() (*memory.Array, error) {
	return memory.LoadArray(g.buf, 0, g.t.DType, intShape(g.t.Shape), g.t.Layout)
}

func (g gmTensor) Rows(r0, r1 int) (*memory.Array, error) {
	return memory.LoadRows(g.buf, 0, g.t.DType, intShape(g.t.Shape), g.t.Layout, r0, r1)
}

func (m *Machine) goldenTensor(name string, rank int) (memory.Tensor, error) {
	buf, t := m.TensorData(name, rank)
	if t == nil {
		return nil, fmt.Errorf("no GM tensor @%s", name)
	}
	if buf == nil {
		return nil, fmt.Errorf("@%s[rank=%d] has no data", name, rank)
	}
	return gmTensor{buf: buf, t: t}, nil
}

func (m *Machine) loadArray(name string, rank int) (*memory.Array, error) {
	buf, t := m.TensorData(name, rank)
	if t == nil {
		return nil, fmt.Errorf("no GM tensor @%s", name)
	}
	if buf == nil {
		return nil, fmt.Errorf("@%s[rank=%d] has no data", name, rank)
	}
	return memory.LoadArray(buf, 0, t.DType, intShape(t.Shape), t.Layout)
}

// Failed reports whether a check failed or a fault was recorded.
func (r *Result) Failed() bool {
	for _, c := range r.Checks {
		if !c.OK {
			return true
		}
	}
	return len(r.Faults) > 0
}

// Fprint writes the human report.
func (r *Result) Fprint(w io.Writer) {
	fmt.Fprintf(w, "cycles   %d\n", r.Cycles)
	fmt.Fprintf(w, "time     %.3f us\n", r.TimeUS)
	if r.FLOPs > 0 {
		fmt.Fprintf(w, "flops    %d, all ranks and runs (%.3f TFLOPS aggregate over the launch)\n", r.FLOPs, r.TFLOPS)
	}
	if len(r.Runs) > 1 {
		FprintRuns(w, r.Runs)
	}
	FprintPipes(w, "pipes", r.Pipes)
	FprintBytes(w, r.Bytes)
	FprintChecks(w, r.Checks)
	for _, f := range r.Faults {
		fmt.Fprintf(w, "fault: %s\n", f)
	}
}

// FprintRuns writes the runs section of the human report.
func FprintRuns(w io.Writer, runs []RunStat) {
	fmt.Fprintln(w, "\nruns:")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "name\tstart\tend\ttime_us\t")
	for _, run := range runs {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.3f\t\n", run.Name, run.Start, run.End, run.TimeUS)
	}
	tw.Flush()
}

// FprintPipes writes a table of every core's pipes that did something,
// under title.
func FprintPipes(w io.Writer, title string, pipes []PipeStat) {
	if len(pipes) == 0 {
		return
	}
	fmt.Fprintf(w, "\n%s:\n", title)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "core\tpipe\tbusy\tinstr\tutil\t")
	for _, p := range pipes {
		if p.Instructions == 0 && p.BusyCycles == 0 {
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%.1f%%\t\n", p.Core, p.Pipe, p.BusyCycles, p.Instructions, 100*p.Utilisation)
	}
	tw.Flush()
}

// FprintBytes writes the bytes moved per data path.
func FprintBytes(w io.Writer, bytes []PathStat) {
	if len(bytes) == 0 {
		return
	}
	fmt.Fprintln(w, "\nbytes:")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	for _, b := range bytes {
		fmt.Fprintf(tw, "%s\t%d\t\n", b.Path, b.Bytes)
	}
	tw.Flush()
}

// FprintChecks writes the checks section of the human report: ok, FAIL or
// skip, the largest error, the message and any warning.
func FprintChecks(w io.Writer, checks []Check) {
	if len(checks) > 0 {
		fmt.Fprintln(w, "\nchecks:")
		for _, c := range checks {
			status := "ok  "
			switch {
			case c.Skipped:
				status = "skip"
			case !c.OK:
				status = "FAIL"
			}
			line := fmt.Sprintf("  %s %s", status, c.Name)
			if c.Name != "cycles" && !c.Skipped {
				line += fmt.Sprintf(" max_abs_err=%g", c.MaxAbsErr)
			}
			if c.Msg != "" {
				line += ": " + c.Msg
			}
			fmt.Fprintln(w, line)
			if c.Warning != "" {
				fmt.Fprintf(w, "       warning: %s\n", c.Warning)
			}
		}
	}
}

type jsonPipe struct {
	Rank         int    `json:"rank"`
	Core         string `json:"core"`
	Pipe         string `json:"pipe"`
	BusyCycles   int64  `json:"busy_cycles"`
	Instructions int64  `json:"instructions"`
}

type jsonCheck struct {
	Name      string   `json:"name"`
	OK        bool     `json:"ok"`
	MaxAbsErr *float64 `json:"max_abs_err"` // null when not finite
	Msg       string   `json:"message,omitempty"`
	Skipped   bool     `json:"skipped,omitempty"`
	Warning   string   `json:"warning,omitempty"`
}

// MarshalJSON writes the run's JSON report (docs/cli.md, `ptoasm run` JSON report).
func (r *Result) MarshalJSON() ([]byte, error) {
	type out struct {
		Cycles   int64       `json:"cycles"`
		TimeUS   float64     `json:"time_us"`
		FLOPs    int64       `json:"flops"`
		TFLOPS   float64     `json:"tflops"`
		Runs     []RunStat   `json:"runs"`
		Pipes    []jsonPipe  `json:"pipes"`
		Bytes    []PathStat  `json:"bytes"`
		Checks   []jsonCheck `json:"checks"`
		Faults   []string    `json:"faults,omitempty"`
		Findings []any       `json:"findings"`
	}
	o := out{Cycles: r.Cycles, TimeUS: r.TimeUS, FLOPs: r.FLOPs, TFLOPS: r.TFLOPS,
		Runs: r.Runs, Bytes: r.Bytes, Faults: r.Faults, Findings: r.Findings}
	if o.Runs == nil {
		o.Runs = []RunStat{}
	}
	if o.Bytes == nil {
		o.Bytes = []PathStat{}
	}
	if o.Findings == nil {
		o.Findings = []any{}
	}
	o.Pipes = make([]jsonPipe, 0, len(r.Pipes))
	for _, p := range r.Pipes {
		o.Pipes = append(o.Pipes, jsonPipe{p.Rank, p.Core, p.Pipe, p.BusyCycles, p.Instructions})
	}
	o.Checks = make([]jsonCheck, 0, len(r.Checks))
	for _, c := range r.Checks {
		jc := jsonCheck{Name: c.Name, OK: c.OK, Msg: c.Msg, Skipped: c.Skipped, Warning: c.Warning}
		if v := c.MaxAbsErr; !math.IsInf(v, 0) && !math.IsNaN(v) {
			jc.MaxAbsErr = &v
		}
		o.Checks = append(o.Checks, jc)
	}
	return json.Marshal(o)
}
