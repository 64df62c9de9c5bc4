package sweep

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
	"github.com/ptoasm/ptoasm/machine/report"
	"github.com/ptoasm/ptoasm/pipes"
)

// Config is one sweep: the program, its grid and how to run the points.
type Config struct {
	File       string // the program as the user named it, for the report's header
	Base       *pipes.Profile
	Axes       []Axis
	TimingOnly bool
	// MaxCycles, MaxIdleCycles and MaxTime are each point's
	// machine.Options guards.
	MaxCycles, MaxIdleCycles int64
	MaxTime                  time.Duration
	// MaxMemory is the whole --max-memory budget (0: machine.DefaultMaxMemory),
	// shared by the jobs that run together.
	MaxMemory int64
	Jobs      int    // points run in parallel (0: one per CPU)
	Shard     string // I/N: run only the points whose index modulo N is I; "": all
	// Assemble assembles the program with one point's defines (NAME=VALUE)
	// under a memory budget. It runs concurrently for different points. Its
	// error's text is the point's error.
	Assemble func(defines []string, maxMemory int64) (*asm.Object, error)
	// Cancel (Ctrl-C) stops handing out points and cancels the running ones.
	Cancel <-chan struct{}
	// Progress, when set, hears how many of the sweep's points have ended:
	// once with none when the points are known, then as each ends (from the
	// job that ran it, one call at a time; a point run again alone is not
	// counted twice).
	Progress func(ended, of int)
}

// Run runs the points of c's grid (of its shard) and returns their report.
// An error is a usage error, found before any point runs; a point's own
// failure is in its row. When Cancel cut the sweep short, the report holds
// the points that ran to the end and says so in Partial.
func Run(c Config) (*Report, error) {
	rep := &Report{File: c.File, Profile: c.Base.Name, TimingOnly: c.TimingOnly,
		Grid: make([]string, len(c.Axes)), Values: make([][]string, len(c.Axes))}
	for i, a := range c.Axes {
		rep.Grid[i], rep.Values[i] = a.Name, a.Values
	}
	var err error
	if rep.Total, err = GridSize(rep.Values); err != nil {
		return nil, err
	}
	shardI, shardN := 0, 1
	if c.Shard != "" {
		if shardI, shardN, err = ParseShard(c.Shard); err != nil {
			return nil, err
		}
		rep.Shard = fmt.Sprintf("%d/%d", shardI, shardN)
	}
	var idxs []int
	// k + shardN must not wrap: --shard 1/9223372036854775807 went on at a
	// negative index.
	for k := shardI; k < rep.Total; k += min(shardN, rep.Total) {
		idxs = append(idxs, k)
	}
	rep.Points = make([]Point, len(idxs))
	jobs := c.Jobs
	if jobs <= 0 {
		jobs = runtime.NumCPU()
	}
	jobs = max(min(jobs, len(idxs)), 1)
	// The jobs share one --max-memory: each gets its part while they run
	// together. A point that passes its part runs again alone with the whole
	// budget, so what a point reports does not depend on --jobs (the budget
	// changes no cycle count, only whether a run fits).
	shared := c.MaxMemory
	if jobs > 1 {
		total := shared
		if total <= 0 {
			total = machine.DefaultMaxMemory
		}
		shared = max(total/int64(jobs), 1)
	}
	// ended counts under a lock, so Progress hears the counts in order.
	var mu sync.Mutex
	ended := 0
	if c.Progress != nil {
		c.Progress(0, len(idxs))
	}
	done := make([]bool, len(idxs))
	run := func(slot int, maxMemory int64) {
		pt, cancelled := c.point(rep.Grid, rep.Values, idxs[slot], maxMemory)
		if !cancelled {
			rep.Points[slot], done[slot] = pt, true
		}
	}
	next := make(chan int)
	var wg sync.WaitGroup
	for range jobs {
		wg.Go(func() {
			for slot := range next {
				run(slot, shared)
				mu.Lock()
				if ended++; c.Progress != nil {
					c.Progress(ended, len(idxs))
				}
				mu.Unlock()
			}
		})
	}
dispatch:
	for slot := range idxs {
		select {
		case next <- slot:
		case <-c.Cancel:
			break dispatch
		}
	}
	close(next)
	wg.Wait()
	for slot := range idxs {
		if jobs > 1 && done[slot] && rep.Points[slot].overBudget {
			done[slot] = false
			run(slot, c.MaxMemory)
		}
	}
	// Only a cancelled point has no outcome, so a Ctrl-C that came after
	// the last point ended cut nothing short.
	if slices.Contains(done, false) {
		kept := rep.Points[:0]
		for slot, p := range rep.Points {
			if done[slot] {
				kept = append(kept, p)
			}
		}
		rep.Points = kept
		rep.Partial = fmt.Sprintf("interrupted (Ctrl-C) after %d of %d points", len(kept), len(idxs))
	}
	return rep, nil
}

// point assembles and runs one point in its own machine. It never panics out:
// a panic in the engine becomes the point's error, so one bad point cannot take
// down a sweep of thousands. cancelled: Cancel was closed before the point
// ran to the end, so it has no outcome.
func (c *Config) point(grid []string, values [][]string, idx int, maxMemory int64) (pt Point, cancelled bool) {
	pt = Point{Index: idx, Params: PointParams(grid, values, idx), Runs: []machine.RunStat{}}
	defer func() {
		if r := recover(); r != nil {
			pt = Point{Index: idx, Params: pt.Params, Runs: []machine.RunStat{},
				Error: fmt.Sprintf("internal error: %v", r)}
			cancelled = false
		}
	}()
	select {
	case <-c.Cancel:
		return pt, true // handed out as Ctrl-C came
	default:
	}
	prof := c.Base.Clone()
	var defs []string
	for a, p := range pt.Params {
		if c.Axes[a].Define {
			defs = append(defs, p.Name+"="+p.Value)
		} else if err := prof.Set(p.Name, p.Value); err != nil {
			pt.Error = err.Error()
			return pt, false
		}
	}
	obj, err := c.Assemble(defs, maxMemory)
	if err != nil {
		if pt.Error = err.Error(); pt.Error == "" {
			pt.Error = "assembly failed"
		}
		return pt, false
	}
	var be *machine.BudgetError
	m, err := machine.New(obj, machine.Options{Profile: prof, TimingOnly: c.TimingOnly, MaxCycles: c.MaxCycles, MaxIdleCycles: c.MaxIdleCycles, MaxTime: c.MaxTime, MaxMemory: maxMemory, Cancel: c.Cancel})
	if err != nil {
		pt.Error, pt.overBudget = err.Error(), errors.As(err, &be)
		return pt, false
	}
	res, err := m.Run()
	if errors.Is(err, machine.ErrCancelled) {
		return pt, true
	}
	if err != nil {
		pt.Error, pt.overBudget = err.Error(), errors.As(err, &be)
		if le := (*machine.LimitError)(nil); errors.As(err, &le) {
			// A point stopped by a guard names the flag that raises it,
			// as run and lint do.
			pt.Error = le.WithRaise()
		}
		return pt, false
	}
	if res == nil {
		pt.Error = "the machine returned no result"
		return pt, false
	}
	pt.Cycles, pt.TimeUS, pt.TFLOPS = res.Cycles, res.TimeUS, res.TFLOPS
	if res.Runs != nil {
		pt.Runs = res.Runs
	}
	if t, ok := report.FindModes(res.Runs); ok {
		m := report.NewModes(t)
		pt.Speedup, pt.Overlap = m.SpeedUp, m.OverlapEff
	}
	pt.OK = true
	pt.Skipped = len(res.Checks) > 0
	for _, ck := range res.Checks {
		pt.Skipped = pt.Skipped && ck.Skipped
		if !ck.OK {
			pt.OK = false
			pt.Error = "check " + ck.Name + " failed"
			if ck.Msg != "" {
				pt.Error += ": " + ck.Msg
			}
			return pt, false
		}
	}
	if len(res.Faults) > 0 {
		pt.OK = false
		pt.Error = "fault: " + res.Faults[0]
	}
	return pt, false
}
