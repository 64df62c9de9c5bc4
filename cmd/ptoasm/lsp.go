package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/lsp"
	"github.com/ptoasm/ptoasm/machine"
	"github.com/ptoasm/ptoasm/machine/hazard"
)

type lspCmd struct {
	Debounce time.Duration `default:"150ms" placeholder:"DURATION" help:"How long an edit waits for the next before the file is analysed again."`
	MaxTime  time.Duration `default:"30s" placeholder:"DURATION" help:"Stop one lint run after this much wall-clock time (its findings so far are shown)."`
	guardCycles
}

// guardCycles are the cycle guards of a lint run in the editor; the wall
// clock guard is lspCmd.MaxTime, shorter than the CLI's.
type guardCycles struct {
	MaxCycles     int64 `default:"0" placeholder:"N" help:"Stop a lint run after N simulated cycles (0: the default, 2^34)."`
	MaxIdleCycles int64 `default:"0" placeholder:"N" help:"Stop a lint run after N idle cycles (0: the default, 2^24; -1: no limit)."`
}

func (c *lspCmd) Run(e *env) error {
	g := guardFlags{MaxCycles: c.MaxCycles, MaxIdleCycles: c.MaxIdleCycles, MaxTime: c.MaxTime}
	var mopt machine.Options
	if err := g.options(&mopt); err != nil {
		return err
	}
	if c.Debounce < 0 {
		// A negative wait was taken as none: every keystroke analysed.
		return fmt.Errorf("--debounce %s: want a duration >= 0 (0: analyse at every edit)", c.Debounce)
	}
	mopt.MaxMemory = e.lim.maxMemory
	srv := lsp.New(lspOptions(e, mopt, c.Debounce))
	err := srv.Serve(context.Background(), stream{r: e.stdin.r, w: e.stdout})
	if errors.Is(err, lsp.ErrExitWithoutShutdown) {
		return exitError{1} // the specification's status; nothing to print
	}
	return err
}

// lspOptions wires the server to the CLI's frontend and lint: the editor
// shows what `ptoasm lint` prints.
func lspOptions(e *env, mopt machine.Options, debounce time.Duration) lsp.Options {
	return lsp.Options{
		ParseFile: parseFile,
		Lint: func(ctx context.Context, obj *asm.Object) ([]hazard.Finding, error) {
			return lintObject(ctx, obj, mopt)
		},
		Debounce:    debounce,
		MaxFileSize: e.lim.maxFileSize,
		Version:     version,
	}
}

// lintObject is `ptoasm lint` on an assembled program with no suppressions:
// the timing-only run with the detector, then the static pass. A guard's stop
// comes back as the error, with the findings up to it. Cancelling ctx stops
// the run (machine.Options.Cancel) and returns ctx's error.
//
// The static pass reads only the program, so it runs beside the run rather
// than after it: on allgather_gemm it is most of the work (its symbolic loop
// analysis), and an editor waits for the longer of the two, not their sum.
// The findings are those of staticFindings, merged as `ptoasm lint` merges.
func lintObject(ctx context.Context, obj *asm.Object, mopt machine.Options) ([]hazard.Finding, error) {
	mopt.Cancel = ctx.Done()
	static := make(chan []hazard.Finding, 1)
	go func() { static <- hazard.CheckObject(obj) }()
	dynamic, stopped, err := runDetector(obj, mopt, hazard.Options{})
	checked := <-static
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err != nil {
		return nil, err
	}
	findings := mergeStatic(checked, dynamic, nil, true)
	if stopped != nil {
		return findings, errors.New(firstLine(stopped.Error()))
	}
	return findings, nil
}

// stream is the server's connection: requests on standard input, replies
// and notifications on standard output.
type stream struct {
	r io.Reader
	w io.Writer
}

func (s stream) Read(p []byte) (int, error) {
	if s.r == nil {
		return 0, io.EOF
	}
	return s.r.Read(p)
}
func (s stream) Write(p []byte) (int, error) { return s.w.Write(p) }

// Close is the end of the session; standard input and output are the
// process's to close.
func (stream) Close() error { return nil }
