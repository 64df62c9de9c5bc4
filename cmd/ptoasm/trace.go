package main

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
	"github.com/ptoasm/ptoasm/machine/hazard"
	"github.com/ptoasm/ptoasm/machine/trace"
)

// coreName is what --core accepts: a core of every rank, or of one.
// coreName matches a core's name, or a block's after a launch's first wave
// (b30.aic, b30.aiv1: blocks beyond cores, machine.Machine.CoreName).
var coreName = regexp.MustCompile(`^(r[0-9]+\.)?((aic|aiv)[0-9]+|b[0-9]+\.(aic|aiv[01]?))$`)

// traceFilterFlags select what a trace shows.
type traceFilterFlags struct {
	Rank   []int    `help:"Only these ranks (repeatable)."`
	Core   []string `help:"Only these cores, by name: aic0, aiv3 or r1.aic0; a block after the first wave of a launch with more blocks than cores by its block: b30.aic, b30.aiv1 (repeatable)."`
	Pipe   []string `help:"Only these pipes: S MTE2 MTE1 M FIX V MTE3 (repeatable)."`
	From   int64    `default:"0" help:"Only events that end at or after this cycle."`
	To     int64    `default:"0" help:"Only events that start before this cycle (0: to the end)."`
	Issues bool     `help:"Also show when the scalar issued each instruction into its pipe's queue."`
}

func (f traceFilterFlags) filter() (trace.Filter, error) {
	out := trace.Filter{Ranks: f.Rank, Cores: f.Core, From: f.From, To: f.To, Issues: f.Issues}
	for _, s := range f.Core {
		// A name that can match no core filtered everything out and printed
		// an empty trace, exit 0.
		if !coreName.MatchString(s) {
			return out, fmt.Errorf("--core %s: not a core name (aic0, aiv3, r1.aic0, b30.aic)", s)
		}
	}
	for _, r := range f.Rank {
		if r < 0 {
			return out, fmt.Errorf("--rank %d: ranks count from 0", r)
		}
	}
	for _, s := range f.Pipe {
		p, ok := asm.ParsePipe(s)
		if !ok || p == asm.PipeALL {
			return out, fmt.Errorf("--pipe %s: not a pipe (S MTE2 MTE1 M FIX V MTE3)", s)
		}
		out.Pipes = append(out.Pipes, p)
	}
	// A negative bound matched every event, as 0 does, without a word.
	if f.From < 0 || f.To < 0 {
		return out, fmt.Errorf("--from %d --to %d: want cycles >= 0 (--to 0: to the end)", f.From, f.To)
	}
	if f.To > 0 && f.To <= f.From {
		return out, fmt.Errorf("--from %d --to %d: empty window", f.From, f.To)
	}
	return out, nil
}

type traceCmd struct {
	File string `arg:"" help:"Program file (- for standard input), or the short name of a program in programs/."`
	traceFilterFlags
	Chrome string `placeholder:"OUT.json" help:"Also write a Perfetto/Chrome trace (filtered the same way)."`
	HTML   string `name:"html" placeholder:"OUT.html" help:"Also write an HTML timeline (filtered the same way)."`
	// The guards of run: a guard's stop names the flag that raises it,
	// and trace had none of them (a busy loop ran until its events filled
	// the memory limit).
	guardFlags
	defineFlags
	profileFlags
}

// Run prints the text trace: one line per event in time order.
func (c *traceCmd) Run(e *env) error {
	obj, src, err := assemble(e, c.File, c.defineFlags)
	if err != nil {
		return err
	}
	if err := checkOutputs([]output{{"--chrome", c.Chrome}, {"--html", c.HTML}}, append(programInputs(obj, src), c.Profile)); err != nil {
		return err
	}
	prof, err := c.profileFlags.load(e.lim)
	if err != nil {
		return err
	}
	f, err := c.traceFilterFlags.filter()
	if err != nil {
		return err
	}
	var m *machine.Machine
	rec := trace.New(trace.Options{CoreName: func(r, k int) string { return m.CoreName(r, k) }, Filter: f})
	opt := machine.Options{Profile: prof, Observers: []machine.Observer{rec}, MaxMemory: e.lim.maxMemory, MaxHeap: e.lim.maxHeap()}
	if err := c.guardFlags.options(&opt); err != nil {
		return err
	}
	// Ctrl-C stops the run; the trace up to there is printed, as after an
	// error, and the exit is 130 (docs/cli.md "Interrupting a run").
	ui := startRunUI(e, &opt)
	m, err = machine.New(obj, opt)
	if err != nil {
		ui.stop()
		return err
	}
	// A rank the program does not have (a typo, or the rank count of
	// another -D) filtered every event out: an empty trace, exit 0.
	for _, r := range f.Ranks {
		if r >= m.Ranks() {
			ui.stop()
			if m.Ranks() == 1 {
				return fmt.Errorf("--rank %d: the program has one rank, 0", r)
			}
			return fmt.Errorf("--rank %d: the program has %d ranks, 0 to %d", r, m.Ranks(), m.Ranks()-1)
		}
	}
	// A core the machine does not have (aiv99, or a block no launch has)
	// filtered every event out: an empty trace, exit 0.
	for _, name := range c.Core {
		full := name
		if !strings.HasPrefix(name, "r") {
			full = "r0." + name
		}
		if _, _, ok := m.CoreIDs(full); !ok {
			ui.stop()
			p := m.Profile()
			ranks := "one rank, 0"
			if m.Ranks() > 1 {
				ranks = fmt.Sprintf("%d ranks, 0 to %d", m.Ranks(), m.Ranks()-1)
			}
			return fmt.Errorf("--core %s: no such core: a rank has aic0 to aic%d and aiv0 to aiv%d, the program %s, and a block after a launch's first wave is named by its block (b30.aic)",
				name, p.AICPerRank-1, p.AIVPerRank-1, ranks)
		}
	}
	res, runErr := m.Run()
	interrupted := ui.stop() && isCancelled(runErr)
	// A check that did not fit after the run's end (AfterRun) comes after
	// the trace; any other budget is bad input before it: exit 2.
	var checkOver *machine.BudgetError
	if errors.As(runErr, &checkOver) {
		if !checkOver.AfterRun {
			return runErr
		}
		runErr = nil
	}
	if err := rec.WriteText(e.stdout, trace.Filter{Issues: true}); err != nil {
		return err
	}
	if err := writeTraceFiles(rec, prof.ClockHz, c.Chrome, c.HTML, filepath.Base(obj.Main), nil); err != nil {
		return err
	}
	if interrupted {
		cycle := int64(-1)
		if res != nil {
			cycle = res.Cycles
		}
		return interruptedError(e, cycle)
	}
	if err := limitError(runErr); err != nil {
		return err // the trace up to the stop is printed; exit 2, as run
	}
	if le := (*machine.LaunchError)(nil); errors.As(runErr, &le) {
		return runErr // bad input: exit 2, after what ran before it
	}
	if runErr != nil {
		fmt.Fprintln(e.stderr, runErr)
		return exitError{1}
	}
	if checkOver != nil {
		return checkOver
	}
	return nil
}

// newTraceRecorder is the recorder `run --trace/--html` attaches.
func newTraceRecorder(m **machine.Machine) *trace.Recorder {
	return trace.New(trace.Options{CoreName: func(r, k int) string { return (*m).CoreName(r, k) }})
}

// writeTraceFiles writes the Chrome trace to tracePath and the HTML timeline
// to htmlPath (either may be empty), marking findings on the timeline.
func writeTraceFiles(rec *trace.Recorder, clockHz float64, tracePath, htmlPath, title string, findings []hazard.Finding) error {
	if tracePath != "" {
		var b bytes.Buffer
		if err := rec.WriteChrome(&b, clockHz); err != nil {
			return err
		}
		if err := writeFileAtomic(tracePath, b.Bytes()); err != nil {
			return err
		}
	}
	if htmlPath != "" {
		var b bytes.Buffer
		opt := trace.HTMLOptions{Title: title, ClockHz: clockHz, Markers: findingMarkers(findings)}
		if err := rec.WriteHTML(&b, opt); err != nil {
			return err
		}
		if err := writeFileAtomic(htmlPath, b.Bytes()); err != nil {
			return err
		}
	}
	return nil
}

// findingMarkers marks both sites of each finding.
func findingMarkers(fs []hazard.Finding) []trace.Marker {
	var out []trace.Marker
	for _, f := range fs {
		for _, s := range []hazard.Site{f.First, f.Second} {
			if s.IsZero() || s.Line == 0 {
				continue
			}
			out = append(out, trace.Marker{File: s.File, Line: s.Line, Severity: f.Severity,
				Message: fmt.Sprintf("%s: %s", f.Kind, f.Message)})
		}
	}
	return out
}
