package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
	"github.com/ptoasm/ptoasm/machine/hazard"
	"github.com/ptoasm/ptoasm/machine/report"
	"github.com/ptoasm/ptoasm/pipes"
)

// partialReason says why res covers only part of the run, or "" when the
// run reached its end.
func partialReason(runErr error, interrupted bool, res *machine.Result) string {
	var le *machine.LimitError
	switch {
	case runErr == nil:
		return ""
	case interrupted:
		return fmt.Sprintf("interrupted (Ctrl-C) at cycle %d", res.Cycles)
	case errors.As(runErr, &le):
		return fmt.Sprintf("a run guard stopped the run at cycle %d", le.Cycle)
	}
	var de *machine.DeadlockError
	if errors.As(runErr, &de) {
		return fmt.Sprintf("deadlock at cycle %d", res.Cycles)
	}
	return fmt.Sprintf("the run stopped at cycle %d", res.Cycles)
}

// writeReport prints the run's report in the chosen format, and writes the
// HTML report when asked.
func (c *runCmd) writeReport(e *env, res *machine.Result, obj *asm.Object, prof *pipes.Profile, ranks int,
	col *report.Collector, findings []hazard.Finding, partial string) error {
	fb, err := json.Marshal(hazard.JSONFindings(findings))
	if err != nil {
		return err
	}
	rep := report.Build(report.Input{Program: obj.Main, Result: res, Collector: col, Profile: prof, Ranks: ranks,
		Modes: modesOf(res, obj), Partial: partial, Findings: fb})
	if c.Report != "" {
		var buf bytes.Buffer
		if err := rep.WriteHTML(&buf, report.HTMLOptions{Title: filepath.Base(obj.Main)}); err != nil {
			return err
		}
		if err := writeFileAtomic(c.Report, buf.Bytes()); err != nil {
			return err
		}
	}
	switch c.Format {
	case "json":
		// Program and file names are shown as they are ("<stdin>").
		enc := json.NewEncoder(e.stdout)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	case "csv":
		return rep.WriteCSV(e.stdout, c.Table)
	}
	rep.WriteText(e.stdout, c.Detail)
	// Notes are for lint; a run report shows only what fails it.
	var failing []hazard.Finding
	for _, f := range findings {
		if hazard.Failing(&f) {
			failing = append(failing, f)
		}
	}
	if len(failing) > 0 {
		fmt.Fprintf(e.stdout, "\nhazards (%d):\n", len(failing))
		hazard.WriteText(e.stdout, failing, obj.Sources)
	}
	if n := len(findings) - len(failing); n > 0 {
		fmt.Fprintf(e.stdout, "\n(%d lint notes; ptoasm lint shows them)\n", n)
	}
	return nil
}
