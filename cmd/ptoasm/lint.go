package main

import (
	"errors"
	"fmt"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/pipes"

	"github.com/ptoasm/ptoasm/machine"
	"github.com/ptoasm/ptoasm/machine/hazard"
)

type lintCmd struct {
	File     string `arg:"" help:"Program file, or the short name of a program in programs/."`
	Format   string `enum:"text,json,sarif" default:"text" help:"Report format."`
	Suppress string `type:"existingfile" help:"Suppressions file: lines of 'KIND file:line', # comments."`
	Static   bool   `help:"Only the static flag-balance pass; do not run the program."`
	defineFlags
	profileFlags
}

func (c *lintCmd) Run(e *env) error {
	obj, _, err := assemble(e, c.File, c.defineFlags)
	if err != nil {
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
	if !c.Static {
		prof, err := c.profileFlags.load(e.lim)
		if err != nil {
			return err
		}
		if dynamic, err = runDetector(obj, prof, opt, e.lim); err != nil {
			return err
		}
	}
	findings := staticFindings(obj, dynamic, opt.Suppress, !c.Static)
	switch c.Format {
	case "json":
		err = hazard.WriteJSON(e.stdout, findings)
	case "sarif":
		err = hazard.WriteSARIF(e.stdout, findings, "ptoasm "+version)
	default:
		hazard.WriteText(e.stdout, findings, obj.Sources)
		if len(findings) == 0 {
			fmt.Fprintf(e.stdout, "%s: no hazards found\n", obj.Main)
		}
	}
	if err != nil {
		return err
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

// runDetector runs obj timing-only with the hazard detector attached: the
// detector needs accesses and happens-before edges, not values, and the
// timing-only machine still computes every value control flow reads, so the
// run takes the full run's path. A deadlock or fault ends the run and becomes
// a finding; any other error is returned.
func runDetector(obj *asm.Object, prof *pipes.Profile, opt hazard.Options, lim limits) ([]hazard.Finding, error) {
	var m *machine.Machine
	opt.CoreName = func(rank, core int) string { return m.CoreName(rank, core) }
	det := hazard.New(opt)
	m, err := machine.New(obj, machine.Options{Profile: prof, Observers: []machine.Observer{det}, TimingOnly: true, MaxMemory: lim.maxMemory})
	if err != nil {
		return nil, err
	}
	if _, err := m.Run(); err != nil {
		var be *machine.BudgetError
		if errors.As(err, &be) {
			return nil, err // bad input, not a finding
		}
		det.NoteError(err)
	}
	return det.Findings(), nil
}
