package main

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
	"github.com/ptoasm/ptoasm/machine/hazard"
	"github.com/ptoasm/ptoasm/machine/report"
	"github.com/ptoasm/ptoasm/machine/trace"
	"github.com/ptoasm/ptoasm/parser"
	"github.com/ptoasm/ptoasm/pipes"
)

// profileFlags select and adjust the timing profile.
type profileFlags struct {
	Profile string   `help:"Timing profile file (default: the embedded a2a3 profile)." type:"existingfile"`
	Set     []string `sep:"none" placeholder:"KEY=VALUE" help:"Override one profile parameter (repeatable)."`
}

func (p profileFlags) load(lim limits) (*pipes.Profile, error) {
	prof := pipes.DefaultProfile()
	if p.Profile != "" {
		b, err := asm.ReadFileLimit(p.Profile, lim.maxFileSize, "--max-file-size")
		if err != nil {
			return nil, err
		}
		// A byte-order mark or old Mac line ends, as an editor may save
		// them, read as in a program (the key was "\ufeffclock_hz").
		if prof, err = pipes.ParseProfile(p.Profile, parser.Normalize(b)); err != nil {
			return nil, err
		}
	}
	for _, kv := range p.Set {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, fmt.Errorf("--set %s: want KEY=VALUE", kv)
		}
		if err := prof.Set(strings.TrimSpace(k), strings.TrimSpace(v)); err != nil {
			return nil, fmt.Errorf("--set %s: %v", kv, err)
		}
	}
	return prof, nil
}

type runCmd struct {
	File       string   `arg:"" help:"Program file (- for standard input), or the short name of a program in programs/."`
	Format     string   `enum:"text,json,csv" default:"text" placeholder:"text|json|csv" help:"Report format: ${enum} (csv: one table, see --table)."`
	Table      string   `default:"summary" placeholder:"TABLE" help:"With --format csv, the table to write: summary, cores, pipes, bandwidth, links, collectives, hotspots, kernels, runs, checks, utilisation."`
	Detail     bool     `help:"Text report: every core's pipes, and every core group, link and hotspot (the default shows a summary)."`
	Stats      string   `enum:"auto,on,off" default:"auto" placeholder:"auto|on|off" help:"Collect hotspots, bandwidth per path and link, bus bandwidth, roofline and utilisation over time: ${enum} (auto: on, except with --timing-only, where it costs about 1.7x the CPU time)."`
	Report     string   `placeholder:"OUT.html" help:"Write an HTML report with charts: pipe utilisation over time, each kernel's roofline point, the tables of the text report."`
	TimingOnly bool     `help:"Skip data: time the program without computing values (for large shapes)."`
	Input      []string `sep:"none" placeholder:"TENSOR[@RANK]=FILE" help:"Initial contents of a tensor from a .npy or .bin file (repeatable)."`
	Output     []string `sep:"none" placeholder:"TENSOR[@RANK]=FILE.npy" help:"Write a tensor to a .npy file after the run (repeatable)."`
	NoLint     bool     `help:"Do not run the hazard detector alongside."`
	Trace      string   `placeholder:"OUT.json" help:"Write a Perfetto/Chrome trace of the run (open in ui.perfetto.dev)."`
	HTML       string   `name:"html" placeholder:"OUT.html" help:"Write an HTML timeline of the run with findings marked."`
	Print      string   `placeholder:"FILE" help:"Write what tprint instructions print to FILE (- for standard error); by default it is discarded."`
	guardFlags
	keptFlags
	defineFlags
	profileFlags
}

// tensorRank splits NAME[@RANK]; rank -1 means every rank (input) or rank 0 (output).
func tensorRank(s string) (string, int, error) {
	name, r, ok := strings.Cut(s, "@")
	if !ok {
		return name, -1, nil
	}
	n, err := strconv.Atoi(r)
	if err != nil || n < 0 {
		return "", 0, fmt.Errorf("%s: bad rank %q", s, r)
	}
	return name, n, nil
}

// hasErrors reports whether any finding is an error (warnings and notes do not fail a run).
func hasErrors(fs []hazard.Finding) bool {
	for _, f := range fs {
		if f.Severity == "error" {
			return true
		}
	}
	return false
}

func (c *runCmd) Run(e *env) error {
	if !slices.Contains(report.Tables, c.Table) {
		return fmt.Errorf("--table %s: want one of %s", c.Table, strings.Join(report.Tables, ", "))
	}
	obj, src, err := assemble(e, c.File, c.defineFlags)
	if err != nil {
		return err
	}
	outs := []output{{"--trace", c.Trace}, {"--html", c.HTML}, {"--print", c.Print}, {"--report", c.Report}}
	// --output files are written after the run as well: `--output
	// Z=k.pto` replaced the program with an .npy, exit 0, and a malformed
	// spec was refused only after a run that may have taken minutes.
	for _, spec := range c.Output {
		path, err := outputPath(spec)
		if err != nil {
			return err
		}
		outs = append(outs, output{"--output", path})
	}
	if err := checkOutputs(outs, append(append(programInputs(obj, src), dataInputs(c.Input)...), c.Profile)); err != nil {
		return err
	}
	prof, err := c.profileFlags.load(e.lim)
	if err != nil {
		return err
	}
	opt := machine.Options{Profile: prof, TimingOnly: c.TimingOnly, MaxMemory: e.lim.maxMemory, MaxHeap: e.lim.maxHeap()}
	if err := c.guardFlags.options(&opt); err != nil {
		return err
	}
	for _, in := range c.Input {
		t, path, ok := strings.Cut(in, "=")
		if !ok {
			return fmt.Errorf("--input %s: want TENSOR[@RANK]=FILE", in)
		}
		name, rank, err := tensorRank(t)
		if err != nil {
			return err
		}
		opt.Inputs = append(opt.Inputs, machine.Input{Tensor: name, Rank: rank, Path: path})
	}
	var det *hazard.Detector
	var m *machine.Machine
	// A timing-only run is for speed at large shapes; `ptoasm lint` runs the
	// detector timing-only when hazards are wanted.
	if !c.NoLint && !c.TimingOnly {
		hopt := hazard.Options{CoreName: func(rank, core int) string { return m.CoreName(rank, core) },
			Placement: func(run, rank, core int) (machine.Placement, bool) { return m.Placement(run, rank, core) }}
		if err := c.keptFlags.options(&hopt); err != nil {
			return err
		}
		det = hazard.New(hopt)
		opt.Observers = append(opt.Observers, det)
	}
	// The collector costs a timing-only run (built for speed at large
	// shapes) about 1.7x its CPU time, so there it is off unless asked for.
	var col *report.Collector
	if c.Stats == "on" || (c.Stats == "auto" && !c.TimingOnly) {
		col = report.NewCollector(obj)
		opt.Observers = append(opt.Observers, col)
	}
	var rec *trace.Recorder
	if c.Trace != "" || c.HTML != "" {
		rec = newTraceRecorder(&m)
		opt.Observers = append(opt.Observers, rec)
	}
	// A file is written whole after the run, as the other output files are.
	var printed bytes.Buffer
	switch c.Print {
	case "":
	case "-":
		opt.Print = e.stderr
	default:
		opt.Print = &printed
	}
	ui := startRunUI(e, &opt)
	m, err = machine.New(obj, opt)
	if err != nil {
		ui.stop()
		return err
	}
	res, runErr := m.Run()
	interrupted := ui.stop() && isCancelled(runErr)
	// A budget stops a run before its end with no report (bad input, exit
	// 2); a check that did not fit after the run's end (AfterRun) comes
	// after the run's report, its other checks and its outputs.
	var checkOver *machine.BudgetError
	if errors.As(runErr, &checkOver) {
		if !checkOver.AfterRun {
			return runErr
		}
		runErr = nil
	}
	var findings []hazard.Finding
	if det != nil {
		if runErr != nil {
			det.NoteError(runErr)
		}
		if !interrupted {
			det = settleRun(obj, opt, det)
		}
		findings = staticFindings(obj, det.Findings(), nil, true)
	}
	if rec != nil {
		if err := writeTraceFiles(rec, prof.ClockHz, c.Trace, c.HTML, filepath.Base(obj.Main), findings); err != nil {
			return err
		}
	}
	if c.Print != "" && c.Print != "-" {
		if err := writeFileAtomic(c.Print, printed.Bytes()); err != nil {
			return err
		}
	}
	if res != nil {
		if err := c.writeReport(e, res, obj, prof, m.Ranks(), col, findings, partialReason(runErr, interrupted, res)); err != nil {
			return err
		}
	}
	if interrupted {
		return interruptedError(e, res.Cycles)
	}
	if err := limitError(runErr); err != nil {
		return err
	}
	if le := (*machine.LaunchError)(nil); errors.As(runErr, &le) {
		return runErr // bad input: exit 2, after what ran before it
	}
	if runErr != nil {
		fmt.Fprintln(e.stderr, runErr)
		return exitError{1}
	}
	for _, out := range c.Output {
		if err := writeOutput(m, out); err != nil {
			return err
		}
	}
	if checkOver != nil {
		return checkOver
	}
	if res.Failed() || hasErrors(findings) {
		return exitError{1}
	}
	return nil
}

// outputPath checks an --output spec's form and returns its file.
func outputPath(spec string) (string, error) {
	t, path, ok := strings.Cut(spec, "=")
	if !ok {
		return "", fmt.Errorf("--output %s: want TENSOR[@RANK]=FILE.npy", spec)
	}
	if _, _, err := tensorRank(t); err != nil {
		return "", err
	}
	return path, nil
}

func writeOutput(m *machine.Machine, spec string) error {
	t, path, ok := strings.Cut(spec, "=")
	if !ok {
		return fmt.Errorf("--output %s: want TENSOR[@RANK]=FILE.npy", spec)
	}
	name, rank, err := tensorRank(t)
	if err != nil {
		return err
	}
	if rank < 0 {
		rank = 0
	}
	var buf bytes.Buffer
	if err := m.WriteTensorNPY(&buf, name, rank); err != nil {
		return err
	}
	return writeFileAtomic(path, buf.Bytes())
}

// settleRun is the run's detector det, or, when det found a wait on a count
// several agents add to that an add landing after it could have passed
// (hazard.Detector.Late), the detector of the same run made again with the
// detector alone attached until no such wait is left (hazard.Settle).
func settleRun(obj *asm.Object, opt machine.Options, det *hazard.Detector) *hazard.Detector {
	late := det.Late()
	if late == nil {
		return det
	}
	opt.Observers, opt.Print = nil, nil
	d, err := hazard.Settle(hazard.Options{Late: late}, func(ho hazard.Options) (*hazard.Detector, error) {
		var m *machine.Machine
		ho.CoreName = func(rank, core int) string { return m.CoreName(rank, core) }
		ho.Placement = func(run, rank, core int) (machine.Placement, bool) { return m.Placement(run, rank, core) }
		d := hazard.New(ho)
		o := opt
		o.Observers = []machine.Observer{d}
		m, err := machine.New(obj, o)
		if err != nil {
			return nil, err
		}
		if _, err := m.Run(); err != nil {
			d.NoteError(err)
		}
		return d, nil
	})
	if err != nil || d == nil {
		return det
	}
	return d
}
