package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/signal"

	"golang.org/x/term"

	"github.com/ptoasm/ptoasm/machine"
	"github.com/ptoasm/ptoasm/machine/debug"
)

// stepCmd is the stepping debugger. Commands come from --script, or from
// stdin: on a terminal with line editing and history (golang.org/x/term),
// otherwise line by line.
type stepCmd struct {
	File      string `arg:"" help:"Program file (- for standard input, with --script), or the short name of a program in programs/."`
	Script    string `placeholder:"FILE" help:"Read commands from FILE (one a line, # comments) and echo each before its output."`
	MaxCycles int64  `default:"0" help:"Stop with an error after this many cycles (0: the machine's default guard)."`
	// The debugger's user stops a run with Ctrl-C, so it has no wall-clock
	// guard; the idle guard still ends a spin a continue would never leave.
	MaxIdleCycles int64 `default:"0" placeholder:"N" help:"Stop with an error after N cycles in which no pipe ran an instruction and nothing wrote GM (0: the default, 2^24; --max-idle-cycles=-1: no limit)."`
	defineFlags
	profileFlags
}

func (c *stepCmd) Run(e *env) error {
	if c.File == "-" && c.Script == "" {
		// Both would be read from standard input.
		return fmt.Errorf("step -: the program is on standard input, so the commands need --script FILE")
	}
	// The guards' ranges are run's (no wall clock, above): any negative
	// value was taken, and --max-idle-cycles=-7 turned the idle guard off,
	// so a script's continue into a spin never returned.
	mopt := machine.Options{MaxMemory: e.lim.maxMemory, MaxHeap: e.lim.maxHeap()}
	if err := (guardFlags{MaxCycles: c.MaxCycles, MaxIdleCycles: c.MaxIdleCycles}).options(&mopt); err != nil {
		return err
	}
	obj, _, err := assemble(e, c.File, c.defineFlags)
	if err != nil {
		return err
	}
	prof, err := c.profileFlags.load(e.lim)
	if err != nil {
		return err
	}
	mopt.Profile = prof
	d, err := debug.New(obj, debug.Options{Machine: mopt})
	if err != nil {
		return err
	}
	var lines debug.LineReader
	out := e.stdout
	echo := true
	from := "standard input"
	switch fd := int(os.Stdin.Fd()); {
	case c.Script != "":
		f, err := os.Open(c.Script)
		if err != nil {
			return err
		}
		defer f.Close()
		lines, from = debug.NewScanLines(skipBOM(f), nil), c.Script
	case term.IsTerminal(fd):
		t := term.NewTerminal(struct {
			io.Reader
			io.Writer
		}{os.Stdin, e.stdout}, debug.Prompt)
		if w, h, err := term.GetSize(fd); err == nil && w > 0 && h > 0 {
			t.SetSize(w, h)
		}
		// Commands run with the terminal cooked again (see rawLines), so
		// their output goes straight to stdout.
		lines, echo = &rawLines{fd: fd, t: t}, false
	default:
		lines = debug.NewScanLines(os.Stdin, nil)
	}
	d.Banner(out)
	defer interruptMotions(d)()
	if err := d.Loop(lines, out, echo); err != nil {
		return fmt.Errorf("reading commands from %s: %v", from, err)
	}
	return nil
}

// skipBOM is r without a leading UTF-8 byte-order mark, which some editors
// write: the script's first command was read as "\ufeffbreak", unknown.
// The script is read as a stream (it may be a pipe an editor feeds), so
// it is not normalized whole as a program is.
func skipBOM(r io.Reader) io.Reader {
	br := bufio.NewReader(r)
	if b, err := br.Peek(3); err == nil && bytes.Equal(b, []byte("\ufeff")) {
		br.Discard(3)
	}
	return br
}

// interruptMotions makes Ctrl-C (SIGINT) stop a running motion (a long
// `continue`) and return to the prompt instead of ending the session. At
// the prompt of a terminal Ctrl-C arrives as a key (raw mode) and ends the
// session; a SIGINT while no motion runs (commands from a pipe) ends it as
// before. The returned function stops the handling.
func interruptMotions(d *debug.Debugger) func() {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt)
	go func() {
		for range sigs {
			if !d.Interrupt() {
				signal.Reset(os.Interrupt)
				if p, err := os.FindProcess(os.Getpid()); err == nil {
					p.Signal(os.Interrupt)
				}
				return
			}
		}
	}()
	return func() {
		signal.Stop(sigs)
		close(sigs)
	}
}

// rawLines reads one line at a time with the terminal in raw mode (arrow
// keys for editing and history reach term.Terminal), and restores the
// terminal's mode after each line, whatever happens: while a command runs
// the terminal is cooked, so Ctrl-C interrupts a long `continue` and a crash
// does not leave the shell in raw mode.
type rawLines struct {
	fd int
	t  *term.Terminal
}

func (r *rawLines) ReadLine() (string, error) {
	st, err := term.MakeRaw(r.fd)
	if err != nil {
		return "", err
	}
	defer term.Restore(r.fd, st)
	return r.t.ReadLine()
}
