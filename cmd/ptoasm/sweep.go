package main

// ptoasm sweep: run one program over a grid of profile parameters and
// constants, and compare the points in one table (docs/sweep.md). The grid,
// the jobs, shards, merge, best points and the table are package
// machine/sweep's; this file reads the flags, assembles a point's program and
// writes the output.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
	"github.com/ptoasm/ptoasm/machine/report"
	"github.com/ptoasm/ptoasm/machine/sweep"
)

type sweepCmd struct {
	Grid  sweepGridCmd  `cmd:"" default:"withargs" help:"Run FILE at every point of the grid (the word grid may be left out: ptoasm sweep FILE --set ...)."`
	Merge sweepMergeCmd `cmd:"" help:"Join the JSON of sweep shards into the unsharded table (or JSON)."`
}

type sweepGridCmd struct {
	File       string   `arg:"" help:"Program file (- for standard input), or the short name of a program in programs/."`
	Set        []string `sep:"none" placeholder:"KEY=V1,V2,..." help:"Sweep one profile parameter over a list of values (repeatable; each is one axis of the grid)."`
	Define     []string `sep:"none" short:"D" name:"define" placeholder:"NAME=V1,V2,..." help:"Sweep one constant over a list of values (repeatable; each is one axis). Commas inside parentheses do not split."`
	Profile    string   `help:"Base timing profile file (default: the embedded a2a3 profile)." type:"existingfile"`
	TimingOnly bool     `help:"Skip data: time each point without computing values; output checks are skipped."`
	// The run guards, for each point, with run's ranges (guardFlags.options):
	// any value was taken, and --max-idle-cycles=-7 turned the idle guard
	// off. The wall clock is off unless asked for, so that what a sweep
	// reports does not depend on the host (docs/cli.md "Run guards"); a
	// point that keeps a pipe busy runs to --max-cycles, minutes or more.
	MaxCycles     int64         `default:"0" placeholder:"N" help:"Stop a point with an error after N simulated cycles (0: the default, 2^34)."`
	MaxIdleCycles int64         `default:"0" placeholder:"N" help:"Stop a point with an error after N cycles in which no pipe ran an instruction and nothing wrote GM (0: the default, 2^24; --max-idle-cycles=-1: no limit)."`
	MaxTime       time.Duration `default:"0" placeholder:"DURATION" help:"Stop a point with an error after this much wall-clock time, e.g. 5m (default 0: no limit, so that the report does not depend on the host)."`
	Jobs          int           `default:"0" help:"Points run in parallel (0: one per CPU). The output does not depend on it."`
	Format        string        `enum:"text,json" default:"text" placeholder:"text|json" help:"Report format: ${enum} (a shard always writes JSON)."`
	Shard         string        `placeholder:"I/N" help:"Run only the points whose index modulo N is I (0 <= I < N) and write JSON for sweep merge."`
	Report        string        `placeholder:"OUT.html" help:"Write an HTML page with the metric best chooses by against each swept parameter."`

	stdin *stdinSrc // the program when File is "-", read once for every point

	// read holds the files the points' programs were assembled from (the
	// main file and its includes): the report must not go over one.
	readMu sync.Mutex
	read   []string
}

type sweepMergeCmd struct {
	Files  []string `arg:"" type:"existingfile" help:"Shard JSON files written by ptoasm sweep --shard."`
	Format string   `enum:"text,json" default:"text" placeholder:"text|json" help:"Report format: ${enum}."`
	Report string   `placeholder:"OUT.html" help:"Write an HTML page with the metric best chooses by against each swept parameter."`
}

func (c *sweepGridCmd) Run(e *env) error {
	var guards machine.Options
	if err := (guardFlags{MaxCycles: c.MaxCycles, MaxIdleCycles: c.MaxIdleCycles, MaxTime: c.MaxTime}).options(&guards); err != nil {
		return err
	}
	src, err := resolve(e, c.File)
	if err != nil {
		return err
	}
	// Each point reads the program again: its includes are not known
	// here, the main file and the profile are.
	ins := []string{c.Profile}
	if !src.embedded && src.stdin == nil {
		ins = append(ins, src.main)
	}
	if err := checkOutputs([]output{{"--report", c.Report}}, ins); err != nil {
		return err
	}
	// Every point assembles the program again; a program on standard
	// input was read once by resolve and is shared.
	c.stdin = e.stdin
	base, err := profileFlags{Profile: c.Profile}.load(e.lim)
	if err != nil {
		return err
	}
	axes, err := sweep.Axes(c.Set, c.Define, base)
	if err != nil {
		return err
	}
	// Ctrl-C stops handing out points and cancels the running ones; the
	// report then has the points that ran to the end, marked partial.
	ui := startInterruptUI()
	var finished, total atomic.Int64
	if w, ok := terminal(e.stderr); ok {
		ui.startProgress(w, func(elapsed time.Duration) (string, float64) {
			return sweepProgressText(int(finished.Load()), int(total.Load()), elapsed)
		})
	}
	rep, err := sweep.Run(sweep.Config{File: c.File, Base: base, Axes: axes, TimingOnly: c.TimingOnly,
		MaxCycles: guards.MaxCycles, MaxIdleCycles: guards.MaxIdleCycles, MaxTime: guards.MaxTime, MaxMemory: e.lim.maxMemory,
		Jobs: c.Jobs, Shard: c.Shard, Cancel: ui.cancel,
		Assemble: c.assemble(e), Progress: func(ended, of int) { finished.Store(int64(ended)); total.Store(int64(of)) }})
	if err != nil {
		ui.stop()
		return err
	}
	interrupted := ui.stop() && rep.Partial != ""
	if c.Report != "" {
		// The includes are known only now, from the points' programs: a
		// report over one is refused, the sweep's own output still printed.
		c.readMu.Lock()
		clash := checkOutputs([]output{{"--report", c.Report}}, c.read)
		c.readMu.Unlock()
		if clash != nil {
			_ = writeSweep(e, rep, c.Format == "json" || c.Shard != "")
			return clash
		}
		if err := writeSweepReport(c.Report, rep); err != nil {
			return err
		}
	}
	err = writeSweep(e, rep, c.Format == "json" || c.Shard != "")
	if interrupted {
		return interruptedError(e, -1)
	}
	return err
}

// assemble is the sweep's way to assemble a point's program: with the point's
// defines and memory budget, its diagnostics in a buffer of its own (points
// run concurrently), the first of them the point's error.
func (c *sweepGridCmd) assemble(e *env) func(defs []string, maxMemory int64) (*asm.Object, error) {
	return func(defs []string, maxMemory int64) (*asm.Object, error) {
		var diag bytes.Buffer
		lim := e.lim
		lim.maxMemory = maxMemory
		obj, src, err := assemble(&env{stdout: io.Discard, stderr: &diag, stdin: c.stdin, lim: lim}, c.File, defineFlags{Define: defs})
		if obj != nil {
			c.noteRead(programInputs(obj, src))
		}
		var ee exitError
		if errors.As(err, &ee) {
			return nil, errors.New(firstLine(diag.String()))
		}
		return obj, err
	}
}

// noteRead adds files a point's program was assembled from to c.read.
func (c *sweepGridCmd) noteRead(files []string) {
	c.readMu.Lock()
	defer c.readMu.Unlock()
	for _, f := range files {
		if !slices.Contains(c.read, f) {
			c.read = append(c.read, f)
		}
	}
}

// sweepProgressText is the sweep's progress line: points done, their rate
// and the ETA at that rate.
func sweepProgressText(done, total int, elapsed time.Duration) (string, float64) {
	f := float64(done) / float64(max(total, 1))
	s := fmt.Sprintf("points %d/%d", done, total)
	if sec := elapsed.Seconds(); sec > 0 {
		s += fmt.Sprintf(", %.2f points/s", float64(done)/sec)
	}
	if done == 0 {
		f = 0 // no point has ended: no rate to extrapolate
	}
	return s + etaText(f, elapsed), f
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// writeSweep prints the report and returns exit 1 when a point failed.
func writeSweep(e *env, rep *sweep.Report, asJSON bool) error {
	if asJSON {
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return err
		}
		e.stdout.Write(append(b, '\n'))
	} else {
		sweep.WriteTable(e.stdout, rep)
	}
	if failed := rep.Failed(); failed > 0 {
		fmt.Fprintf(e.stderr, "ptoasm sweep: %d of %d points failed\n", failed, len(rep.Points))
		return exitError{1}
	}
	return nil
}

// writeSweepReport writes the sweep's HTML page to path.
func writeSweepReport(path string, rep *sweep.Report) error {
	var buf bytes.Buffer
	if err := report.WriteSweepHTML(&buf, sweep.Page(rep, "ptoasm sweep "+filepath.Base(rep.File))); err != nil {
		return err
	}
	return writeFileAtomic(path, buf.Bytes())
}

func (c *sweepMergeCmd) Run(e *env) error {
	rep, err := sweep.Merge(c.Files, func(name string) ([]byte, error) {
		// Shards are JSON, cheap to decode, and grow with the grid.
		return asm.ReadFileLimit(name, asm.ScaledLimit(e.lim.maxFileSize, 64), "64 x --max-file-size")
	})
	if err != nil {
		return err
	}
	if c.Report != "" {
		if err := writeSweepReport(c.Report, rep); err != nil {
			return err
		}
	}
	return writeSweep(e, rep, c.Format == "json")
}
