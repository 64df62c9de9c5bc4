package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/lsp"

	"github.com/ptoasm/ptoasm/machine"
	"github.com/ptoasm/ptoasm/machine/hazard"
	"github.com/ptoasm/ptoasm/parser"
)

type lintCmd struct {
	File     string `arg:"" help:"Program file (- for standard input), or the short name of a program in programs/."`
	Format   string `enum:"text,json,sarif" default:"text" placeholder:"text|json|sarif" help:"Report format: ${enum}."`
	Suppress string `type:"existingfile" help:"Suppressions file: lines of 'KIND file:line[:col]', # comments."`
	Static   bool   `help:"Only the static flag-balance pass; do not run the program."`
	Fix      bool   `help:"First order each race that has a quick fix (a set_flag/wait_flag pair on a free event id, as the editor's code action inserts), writing the file back; then lint the result."`
	guardFlags
	keptFlags
	defineFlags
	profileFlags
}

func (c *lintCmd) Run(e *env) error {
	if c.Fix {
		if err := c.fix(e); err != nil {
			return err
		}
	}
	obj, diags, src, err := assembleDiags(e, c.File, c.defineFlags)
	sarifTool := hazard.SARIFTool{Name: "ptoasm", Version: version, Main: src.main}
	if err != nil {
		if c.Format == "sarif" && diags.HasErrors() {
			// Code scanning shows a file that does not assemble through
			// its errors; the exit status stays 2.
			if werr := hazard.WriteSARIF(e.stdout, nil, diags, sarifTool); werr != nil {
				return werr
			}
		}
		return err
	}
	sup, err := c.suppressions(e)
	if err != nil {
		return err
	}
	opt := hazard.Options{Suppress: sup}
	if err := c.keptFlags.options(&opt); err != nil {
		return err
	}
	var dynamic []hazard.Finding
	// stopped is a run guard's stop: the findings so far are still
	// reported (each is a real hazard), then the stop, exit 2.
	var stopped error
	if !c.Static {
		mopt, err := c.machineOptions(e)
		if err != nil {
			return err
		}
		ui := startRunUI(e, &mopt)
		dynamic, stopped, err = runDetector(obj, mopt, opt)
		if ui.stop() && stopped == nil && err == nil {
			// Ctrl-C: the findings so far, then exit 130.
			stopped = errInterrupted
		}
		if err != nil {
			return err
		}
	}
	findings := staticFindings(obj, dynamic, opt.Suppress, !c.Static)
	switch c.Format {
	case "json":
		err = hazard.WriteJSON(e.stdout, findings)
	case "sarif":
		err = hazard.WriteSARIF(e.stdout, findings, diags, sarifTool)
	default:
		hazard.WriteText(e.stdout, findings, obj.Sources)
		switch {
		case len(findings) > 0:
		case stopped != nil:
			fmt.Fprintf(e.stdout, "%s: no hazards found before the run was stopped\n", obj.Main)
		default:
			fmt.Fprintf(e.stdout, "%s: no hazards found\n", obj.Main)
		}
	}
	if err != nil {
		return err
	}
	if stopped == errInterrupted {
		return interruptedError(e, -1)
	}
	if stopped != nil {
		return stopped
	}
	// Notes are printed but never fail a lint (docs/hazards.md).
	for i := range findings {
		if hazard.Failing(&findings[i]) {
			return exitError{1}
		}
	}
	return nil
}

// staticFindings adds the static flag-balance pass to the detector's findings,
// dropping the static ones the run already reported (hazard.Merge) and the
// suppressed ones.
//
// ran says the program was run with the detector: a note that the static
// pass could not check something then says the run did, for this launch,
// instead of telling the user to run what they just ran.
func staticFindings(obj *asm.Object, dynamic []hazard.Finding, sup []hazard.Suppression, ran bool) []hazard.Finding {
	return mergeStatic(hazard.CheckObject(obj), dynamic, sup, ran)
}

// mergeStatic is staticFindings with the static pass's findings given.
func mergeStatic(checked, dynamic []hazard.Finding, sup []hazard.Suppression, ran bool) []hazard.Finding {
	var static []hazard.Finding
	for _, f := range checked {
		if hazard.Suppressed(sup, &f) {
			continue
		}
		if ran && f.Kind == hazard.KindUnchecked {
			f.Hint = "the run checked the flags it used dynamically; other launch shapes (-D) are not covered"
		}
		static = append(static, f)
	}
	return hazard.Merge(dynamic, static)
}

// runDetector runs obj timing-only under mopt's profile and guards with the
// hazard detector attached: the detector needs accesses and happens-before
// edges, not values, and the timing-only machine still computes every value
// control flow reads, so the run takes the full run's path. A deadlock or
// fault ends the run and becomes a finding; a run guard's stop and a launch
// the machine cannot carry on (machine.LaunchError) are returned as stopped,
// with the findings up to them; any other error is returned as err.
func runDetector(obj *asm.Object, mopt machine.Options, opt hazard.Options) (findings []hazard.Finding, stopped, err error) {
	// A wait on a count several agents add to is decided once the adds
	// that landed after it are known: hazard.Settle runs the same run
	// again with them when one could have stood in for an add it took.
	det, err := hazard.Settle(opt, func(opt hazard.Options) (*hazard.Detector, error) {
		var e error
		var det *hazard.Detector
		det, stopped, e = runDetectorOnce(obj, mopt, opt)
		return det, e
	})
	if err != nil {
		return nil, nil, err
	}
	return det.Findings(), stopped, nil
}

// runDetectorOnce is one pass of runDetector: the detector after the run,
// and what stopped it.
func runDetectorOnce(obj *asm.Object, mopt machine.Options, opt hazard.Options) (det *hazard.Detector, stopped, err error) {
	var m *machine.Machine
	opt.CoreName = func(rank, core int) string { return m.CoreName(rank, core) }
	opt.Placement = func(run, rank, core int) (machine.Placement, bool) { return m.Placement(run, rank, core) }
	det = hazard.New(opt)
	mopt.Observers = []machine.Observer{det}
	mopt.TimingOnly = true
	m, err = machine.New(obj, mopt)
	if err != nil {
		return nil, nil, err
	}
	if _, err := m.Run(); err != nil {
		var be *machine.BudgetError
		if errors.As(err, &be) {
			return nil, nil, err // bad input, not a finding
		}
		stopped = limitError(err)
		var le *machine.LaunchError
		if errors.As(err, &le) {
			// A launch that cannot go on is bad input too, but what ran
			// before it is reported: the findings so far, then the error.
			stopped = err
		}
		det.NoteError(err)
	}
	return det, stopped, nil
}

// suppressions reads --suppress, if given.
func (c *lintCmd) suppressions(e *env) ([]hazard.Suppression, error) {
	if c.Suppress == "" {
		return nil, nil
	}
	b, err := asm.ReadFileLimit(c.Suppress, e.lim.maxFileSize, "--max-file-size")
	if err != nil {
		return nil, err
	}
	// Errors are positioned in the file, as a profile's are; what an
	// editor saves (a byte-order mark, old Mac line ends) reads as in a
	// program.
	return hazard.ParseSuppressions(c.Suppress, parser.Normalize(b))
}

// machineOptions is the run's profile and guards.
func (c *lintCmd) machineOptions(e *env) (machine.Options, error) {
	prof, err := c.profileFlags.load(e.lim)
	if err != nil {
		return machine.Options{}, err
	}
	mopt := machine.Options{Profile: prof, MaxMemory: e.lim.maxMemory, MaxHeap: e.lim.maxHeap()}
	err = c.guardFlags.options(&mopt)
	return mopt, err
}

// fix is --fix: lsp.FixRaces with this command's lint (profile, guards,
// suppressions, -D), the file written back if a fix applied. Each fix is
// named on standard error; the lint that follows reports what is left.
func (c *lintCmd) fix(e *env) error {
	if c.Static {
		return fmt.Errorf("--fix needs the run's findings: it cannot be used with --static")
	}
	src, err := resolve(e, c.File)
	if err != nil {
		return err
	}
	if src.embedded || src.stdin != nil {
		return fmt.Errorf("%s: --fix writes the file back; it needs a file path, not an embedded program or standard input", c.File)
	}
	raw, err := src.readFile(src.main)
	if err != nil {
		return err
	}
	defs, err := c.defineFlags.defines()
	if err != nil {
		return err
	}
	mopt, err := c.machineOptions(e)
	if err != nil {
		return err
	}
	sup, err := c.suppressions(e)
	if err != nil {
		return err
	}
	hopt := hazard.Options{Suppress: sup}
	if err := c.keptFlags.options(&hopt); err != nil {
		return err
	}
	opt := lspOptions(e, mopt, 0)
	opt.Defines = defs
	opt.Lint = func(ctx context.Context, obj *asm.Object) ([]hazard.Finding, error) {
		mopt := mopt
		mopt.Cancel = ctx.Done()
		dynamic, stopped, err := runDetector(obj, mopt, hopt)
		if err == nil {
			err = stopped
		}
		return staticFindings(obj, dynamic, sup, true), err
	}
	// --max-time bounds the whole of --fix, not each of its lints: a file
	// with many races is linted once per fix (up to lsp.MaxFixes times).
	ctx := context.Background()
	if mopt.MaxTime > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, mopt.MaxTime)
		defer cancel()
	}
	fixed, titles, ferr := lsp.FixRaces(ctx, opt, src.main, raw)
	for _, t := range titles {
		fmt.Fprintf(e.stderr, "%s: fixed: %s\n", src.main, t)
	}
	if len(titles) > 0 {
		if err := writeFileAtomic(src.main, fixed); err != nil {
			return err
		}
	}
	if errors.Is(ferr, context.DeadlineExceeded) {
		done := "before a fix held"
		if len(titles) > 0 {
			done = fmt.Sprintf("after %d fixes, which are written", len(titles))
		}
		return fmt.Errorf("%s: --fix stopped %s: fixing took longer than the time limit %s of wall-clock time; raise it with --max-time=DURATION (now %s; 0: no limit)",
			src.main, done, mopt.MaxTime, mopt.MaxTime)
	}
	if ferr != nil && !errors.Is(ferr, lsp.ErrNotAssembled) {
		// A fix that did not hold was undone; the lint below reports
		// what is left (or why the file does not assemble), and its
		// exit status stands.
		fmt.Fprintf(e.stderr, "%v\n", ferr)
	}
	return nil
}
