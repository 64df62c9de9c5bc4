// Command ptoasm assembles, runs, lints and shows PTO kernels for Ascend A2/A3.
//
// Exit status: 0 success; 1 the program ran but something is wrong (a lint
// finding, a failed check, a deadlock, a fault); 2 bad input or usage, or a
// run guard (--max-cycles, --max-idle-cycles, --max-time) stopped the run.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"

	"github.com/alecthomas/kong"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
	"github.com/ptoasm/ptoasm/programs"
)

// version is set by the release build with -ldflags; a plain build says "dev".
var version = "dev"

// exitError carries an exit status through kong's Run plumbing.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

type cli struct {
	Asm     asmCmd     `cmd:"" help:"Assemble a program and print its listing (or its syntax tree as JSON)."`
	Fmt     fmtCmd     `cmd:"" help:"Print a program in canonical form."`
	Run     runCmd     `cmd:"" help:"Run a program on the cycle-approximate machine and check its expectations."`
	Lint    lintCmd    `cmd:"" help:"Find synchronisation hazards: races, deadlocks, flag misuse."`
	Trace   traceCmd   `cmd:"" help:"Run a program and print what every pipe did, one event a line (or write Perfetto/HTML traces)."`
	Step    stepCmd    `cmd:"" help:"Step through a program interactively: breakpoints, queues, flags, tiles, step back."`
	Ops     opsCmd     `cmd:"" help:"Print the instruction table: pipes, operands, attributes."`
	List    listCmd    `cmd:"" help:"List the programs embedded in ptoasm (run them by short name)."`
	Lsp     lspCmd     `cmd:"" help:"Serve the Language Server Protocol on standard input and output, for editors: diagnostics, hover, definitions, symbols, formatting."`
	Sweep   sweepCmd   `cmd:"" help:"Run a program over a grid of profile parameters and constants and compare the points (sharded for clusters)."`
	Version versionCmd `cmd:"" help:"Print the version."`

	CPUProfile string `name:"cpuprofile" type:"path" placeholder:"FILE" help:"Write a CPU profile of the command to FILE, for go tool pprof (scripts/pgo.sh makes cmd/ptoasm/default.pgo from such profiles)."`
	MemProfile string `name:"memprofile" type:"path" placeholder:"FILE" help:"Write a heap profile of the command to FILE when it ends, for go tool pprof (-sample_index=alloc_space: every allocation by site)."`

	MaxMemory   string `name:"max-memory" default:"768MiB" placeholder:"SIZE" help:"Memory budget of a run: the GM pages it touches on every rank, core buffers, initialisation and check scratch (KiB, MiB, GiB suffixes)."`
	MaxFileSize string `name:"max-file-size" default:"1MiB" placeholder:"SIZE" help:"Largest source file (and all of a program's sources together), profile or suppressions file read; sweep shards may be 64 times larger."`
}

type env struct {
	stdout io.Writer
	stderr io.Writer
	stdin  *stdinSrc // a program given as "-"
	lim    limits
}

// limits bound what hostile input can make ptoasm use (docs/cli.md "Limits").
type limits struct {
	maxMemory   int64 // --max-memory: machine.Options.MaxMemory
	maxFileSize int64 // --max-file-size: every text file read
}

// parseLimits reads the limit flags; a bad value is a usage error.
func (c *cli) parseLimits() (limits, error) {
	var l limits
	var err error
	if l.maxMemory, err = asm.ParseBytes(c.MaxMemory); err != nil || l.maxMemory < 1<<20 {
		return l, fmt.Errorf("--max-memory %s: want a size from 1MiB to 2^62 bytes, such as 512MiB or 4GiB", c.MaxMemory)
	}
	if l.maxFileSize, err = asm.ParseBytes(c.MaxFileSize); err != nil || l.maxFileSize < 1 {
		return l, fmt.Errorf("--max-file-size %s: want a size from 1 byte to 2^62 bytes, such as 64KiB or 16MiB", c.MaxFileSize)
	}
	return l, nil
}

// ownProcess says realMain runs as the process, not inside a test or a
// fuzzer, whose own heap must not be squeezed under a run's budget.
var ownProcess bool

func main() {
	ownProcess = true
	os.Exit(realMain(os.Args[1:], os.Stdout, os.Stderr))
}

// createProfile creates a profile's file for flag, refusing a path that is
// one of the command's inputs (a profile never replaces what it profiles).
func createProfile(flag, path string, args []string) (*os.File, error) {
	if err := checkOutputs([]output{{flag, path}}, argFiles(args, flag)); err != nil {
		return nil, err
	}
	f, err := os.Create(path)
	if err != nil {
		// Name the flag, as a failed write does: `open DIR: is a directory`
		// alone did not say which of the command's files it was.
		return nil, fmt.Errorf("%s %s: %v", flag, path, err)
	}
	return f, nil
}

// realMain is main without the process exit, so tests can drive the CLI.
func realMain(args []string, stdout, stderr io.Writer) (code int) {
	return realMainIO(args, os.Stdin, stdout, stderr)
}

// realMainIO is realMain with standard input, for a program given as "-".
func realMainIO(args []string, stdin io.Reader, stdout, stderr io.Writer) (code int) {
	var c cli
	exited := false
	parser, err := kong.New(&c,
		kong.Name("ptoasm"),
		kong.Description("A toolchain for PTO kernels on Ascend A2/A3: assemble, run, lint, look inside."),
		kong.Writers(stdout, stderr),
		kong.Exit(func(code int) { exited = true; panic(exitError{code}) }),
		kong.UsageOnError(),
	)
	if err != nil {
		fmt.Fprintln(stderr, "ptoasm:", err)
		return 2
	}
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(exitError); ok && exited {
				code = e.code
				if code == 1 { // kong reports usage errors with 1; ours is 2
					code = 2
				}
				return
			}
			panic(r)
		}
	}()
	ctx, err := parser.Parse(args)
	if err != nil {
		fmt.Fprintln(stderr, "ptoasm:", err)
		return 2
	}
	lim, err := c.parseLimits()
	if err != nil {
		fmt.Fprintln(stderr, "ptoasm:", err)
		return 2
	}
	if ownProcess {
		// The Go heap collects harder as it nears the budget, so what a run
		// frees (init and check scratch, parser trees) is returned before
		// the process grows past it.
		debug.SetMemoryLimit(memoryLimit(lim.maxMemory))
		// Most of a lint's heap is the detector's shadow and clocks, live
		// to the end, so each collection re-marks what the last one kept:
		// collecting at 3x the live heap instead of 2x cut a 128-rank
		// ring lint's instructions by 7% (docs/performance.md; a pace
		// that followed survival was measured and dropped there). The
		// limit above still bounds the process. GOGC, when set, wins.
		if os.Getenv("GOGC") == "" {
			debug.SetGCPercent(200)
		}
		// The linker turns heap sampling off in a binary that cannot
		// write a heap profile; --memprofile made this one able to, and
		// every run then paid for the samples' stack walks (runtime.pcvalue
		// and step: +0.8% of a timing-only run's instructions, session 24).
		// Sampling is on only when a profile is asked for.
		if c.MemProfile == "" {
			runtime.MemProfileRate = 0
		}
	}
	if c.MemProfile != "" {
		// The default rate, also after an in-process run (a test) that set 0.
		runtime.MemProfileRate = 512 * 1024
	}
	if c.CPUProfile != "" {
		// The profile is created now, before the command reads anything.
		f, err := createProfile("--cpuprofile", c.CPUProfile, args)
		if err != nil {
			fmt.Fprintln(stderr, "ptoasm:", err)
			return 2
		}
		// The profiler drops its writer's errors, so they are kept here:
		// `--cpuprofile /dev/full` (or a full disk) exited 0 with no profile.
		pw := &errWriter{w: f}
		if err := pprof.StartCPUProfile(pw); err != nil {
			f.Close()
			fmt.Fprintln(stderr, "ptoasm:", err)
			return 2
		}
		defer func() {
			pprof.StopCPUProfile()
			err := pw.err
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil { // a lost output fails the command whatever it found
				fmt.Fprintf(stderr, "ptoasm: --cpuprofile %s: %v\n", c.CPUProfile, err)
				code = 2
			}
		}()
	}
	if c.MemProfile != "" {
		// Created now, like the CPU profile, so a bad path fails before the
		// command runs; written when it ends.
		f, err := createProfile("--memprofile", c.MemProfile, args)
		if err != nil {
			fmt.Fprintln(stderr, "ptoasm:", err)
			return 2
		}
		defer func() {
			// The profile holds what the last completed collection had
			// seen: without one here, a run's last allocations (its
			// output checks) were missing.
			runtime.GC()
			pw := &errWriter{w: f}
			err := pprof.Lookup("allocs").WriteTo(pw, 0)
			if err == nil {
				err = pw.err
			}
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				fmt.Fprintf(stderr, "ptoasm: --memprofile %s: %v\n", c.MemProfile, err)
				code = 2
			}
		}()
	}
	out := &errWriter{w: stdout}
	err = ctx.Run(&env{stdout: out, stderr: stderr, stdin: &stdinSrc{r: stdin}, lim: lim})
	if out.err != nil {
		// The report is lost (a full disk, a closed pipe, /dev/full): that
		// is a failure whatever the command found.
		fmt.Fprintln(stderr, "ptoasm: writing standard output:", out.err)
		return 2
	}
	var ee exitError
	var be *machine.BudgetError
	var le *machine.LaunchError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.code
	case errors.As(err, &be) && be.Pos.IsValid():
		// Already file:line:col: error: ...
		fmt.Fprintln(stderr, be)
		return 2
	case errors.As(err, &le) && le.Pos.IsValid():
		fmt.Fprintln(stderr, le) // file:line:col: error: ... as well
		return 2
	default:
		fmt.Fprintln(stderr, "ptoasm:", err)
		return 2
	}
}

// errWriter remembers the first write error on stdout and drops what
// follows, so every command's report is checked in one place: `run ... >
// /dev/full` exited 0.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	e.err = err
	return n, err
}

type versionCmd struct{}

func (versionCmd) Run(e *env) error {
	fmt.Fprintf(e.stdout, "ptoasm %s\n", version)
	return nil
}

type listCmd struct{}

func (listCmd) Run(e *env) error {
	for _, name := range programs.List() {
		fmt.Fprintln(e.stdout, name)
	}
	return nil
}
