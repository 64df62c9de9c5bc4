package main

import (
	"errors"
	"fmt"

	"github.com/ptoasm/ptoasm/asm"

	"github.com/ptoasm/ptoasm/machine"
	"github.com/ptoasm/ptoasm/machine/hazard"
)

type lintCmd struct {
	File     string `arg:"" help:"Program file (- for standard input), or the short name of a program in programs/."`
	Format   string `enum:"text,json,sarif" default:"text" placeholder:"text|json|sarif" help:"Report format: ${enum}."`
	Suppress string `type:"existingfile" help:"Suppressions file: lines of 'KIND file:line', # comments."`
	Static   bool   `help:"Only the static flag-balance pass; do not run the program."`
	guardFlags
	defineFlags
	profileFlags
}

func (c *lintCmd) Run(e *env) error {
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
	opt := hazard.Options{}
	if c.Suppress != "" {
		b, err := asm.ReadFileLimit(c.Suppress, e.lim.maxFileSize, "--max-file-size")
		if err != nil {
			return err
		}
		if opt.Suppress, err = hazard.ParseSuppressions(b); err != nil {
			return fmt.Errorf("%s: %v", c.Suppress, err)
		}
	}
	var dynamic []hazard.Finding
	// stopped is a run guard's stop: the findings so far are still
	// reported (each is a real hazard), then the stop, exit 2.
	var stopped error
	if !c.Static {
		prof, err := c.profileFlags.load(e.lim)
		if err != nil {
			return err
		}
		mopt := machine.Options{Profile: prof, MaxMemory: e.lim.maxMemory}
		if err := c.guardFlags.options(&mopt); err != nil {
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
	var static []hazard.Finding
	for _, f := range hazard.CheckObject(obj) {
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
// fault ends the run and becomes a finding; a run guard's stop is returned
// as stopped (limitError), with the findings up to it; any other error is
// returned as err.
func runDetector(obj *asm.Object, mopt machine.Options, opt hazard.Options) (findings []hazard.Finding, stopped, err error) {
	var m *machine.Machine
	opt.CoreName = func(rank, core int) string { return m.CoreName(rank, core) }
	det := hazard.New(opt)
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
		det.NoteError(err)
	}
	return det.Findings(), stopped, nil
}
