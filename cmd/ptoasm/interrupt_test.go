//go:build unix

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/ptoasm/ptoasm/machine/sweep"
)

// lockedBuffer collects a subprocess's output while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// waitFor polls until buf holds want, or fails the test after a minute.
func waitFor(t *testing.T, buf *lockedBuffer, want string) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if strings.Contains(buf.String(), want) {
			return
		}
	}
	t.Fatalf("no %q after a minute; so far:\n%s", want, buf.String())
}

// subprocess starts the CLI (the test binary, see TestMain) with stdout
// collected, stderr on a pseudo-terminal when tty (so the progress line
// shows), else collected too.
func subprocess(t *testing.T, tty bool, args ...string) (cmd *exec.Cmd, stdout, stderr *lockedBuffer, wait func() int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	cmd = exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(os.Environ(), "PTOASM_TEST_MAIN=1")
	stdout, stderr = &lockedBuffer{}, &lockedBuffer{}
	cmd.Stdout = stdout
	var ptmx, tt *os.File
	copied := make(chan struct{})
	if tty {
		var err error
		if ptmx, tt, err = pty.Open(); err != nil {
			t.Skipf("no pseudo-terminal: %v", err)
		}
		cmd.Stderr = tt
		go func() {
			// Ends when the child and our copy of the terminal side are
			// closed and everything written is read (EIO on Linux).
			io.Copy(stderr, ptmx)
			close(copied)
		}()
	} else {
		cmd.Stderr = stderr
		close(copied)
	}
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	wait = func() int {
		defer cancel()
		err := cmd.Wait()
		if tt != nil {
			// Close our terminal side first and read what the child wrote
			// last (the "interrupted" line) before closing the master.
			tt.Close()
			select {
			case <-copied:
			case <-time.After(10 * time.Second):
			}
			ptmx.Close()
		}
		if ctx.Err() != nil {
			t.Fatalf("ptoasm %s: still running after 2 minutes", strings.Join(args, " "))
		}
		if ee, ok := err.(*exec.ExitError); ok {
			if !ee.Exited() {
				t.Fatalf("ptoasm %s: %v (not an exit: the signal was not handled)", strings.Join(args, " "), err)
			}
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	}
	return cmd, stdout, stderr, wait
}

// interruptAt waits until the terminal shows shown, sends Ctrl-C (SIGINT)
// and checks the command exits 130 saying said on stderr.
func interruptAt(t *testing.T, cmd *exec.Cmd, stderr *lockedBuffer, wait func() int, shown, said string) {
	t.Helper()
	waitFor(t, stderr, shown)
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if code := wait(); code != exitInterrupted {
		t.Errorf("exit %d, want %d\nstderr: %s", code, exitInterrupted, stderr)
	}
	if !strings.Contains(stderr.String(), said) {
		t.Errorf("stderr does not say %q:\n%s", said, stderr)
	}
}

// TestInterruptRun: a run that never ends shows a progress line on a
// terminal; Ctrl-C (SIGINT) then stops it, and it prints the report so far
// marked partial, in text and in JSON that still follows the schema, with
// exit status 130.
func TestInterruptRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs subprocesses for over a second each")
	}
	for _, format := range []string{"text", "json"} {
		t.Run(format, func(t *testing.T) {
			cmd, stdout, stderr, wait := subprocess(t, true, "run", "--format", format, "--max-time=0", "testdata/busy_forever.pto")
			// The progress line appears after a second of running, once
			// Ctrl-C is handled: simulated cycles, their rate and the ETA.
			interruptAt(t, cmd, stderr, wait, "cycles/s", "interrupted (Ctrl-C) at cycle")
			out := stdout.String()
			switch format {
			case "text":
				if !strings.HasPrefix(out, "partial report: interrupted (Ctrl-C) at cycle ") ||
					!strings.Contains(out, "checks: not run") || !strings.Contains(out, "pipes (over every core") {
					t.Errorf("text report is not a partial report:\n%s", out)
				}
			case "json":
				var r struct {
					Partial string `json:"partial"`
					Cycles  int64  `json:"cycles"`
				}
				if err := json.Unmarshal([]byte(out), &r); err != nil {
					t.Fatalf("%v\n%s", err, out)
				}
				if !strings.HasPrefix(r.Partial, "interrupted") || r.Cycles <= 0 {
					t.Errorf("partial %q, cycles %d", r.Partial, r.Cycles)
				}
				validateRunReport(t, []byte(out))
			}
		})
	}
}

// TestInterruptStep: Ctrl-C during a `continue` that would never end stops
// it and returns to the prompt: the next command runs and the session ends
// normally.
func TestInterruptStep(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a subprocess")
	}
	script := filepath.Join(t.TempDir(), "cmds")
	if err := os.WriteFile(script, []byte("continue\ninfo breaks\nquit\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd, stdout, stderr, wait := subprocess(t, false, "step", "--script", script, "testdata/busy_forever.pto")
	waitFor(t, stdout, "(ptoasm) continue")
	// Let the motion start (the echo comes just before it): a SIGINT
	// while no motion runs ends the session, as it did before.
	time.Sleep(time.Second)
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if code := wait(); code != 0 {
		t.Errorf("exit %d, want 0\nstderr: %s", code, stderr)
	}
	out := stdout.String()
	rest := out
	for _, want := range []string{"(ptoasm) continue", "interrupted", "stopped at cycle", "(ptoasm) info breaks", "(ptoasm) quit"} {
		i := strings.Index(rest, want)
		if i < 0 {
			t.Fatalf("missing %q (in order) in:\n%s", want, out)
		}
		rest = rest[i+len(want):]
	}
}

// TestInterruptSweep: a sweep whose point #1 never ends shows the points
// progress line on a terminal; Ctrl-C then cancels the running point, and
// the sweep prints the point that ended (#0) marked partial, in text and in
// JSON, with exit status 130; the partial JSON is refused by sweep merge.
func TestInterruptSweep(t *testing.T) {
	if testing.Short() {
		t.Skip("runs subprocesses for over a second each")
	}
	for _, format := range []string{"text", "json"} {
		t.Run(format, func(t *testing.T) {
			cmd, stdout, stderr, wait := subprocess(t, true, "sweep", "--format", format, "--jobs", "1",
				"-D", "FOREVER=0,1", "testdata/sweep_forever.pto")
			// Point #0 ends within the first second, so the line counts it.
			waitFor(t, stderr, "points 1/2")
			interruptAt(t, cmd, stderr, wait, "points/s", "ptoasm: interrupted (Ctrl-C): the report is partial")
			out := stdout.String()
			const why = "interrupted (Ctrl-C) after 1 of 2 points"
			switch format {
			case "text":
				lines := strings.Split(out, "\n")
				if len(lines) < 5 || lines[1] != "partial report: "+why ||
					!strings.Contains(out, "  0        0 ") || strings.Contains(out, "FAIL") {
					t.Errorf("text is not the partial table of point #0:\n%s", out)
				}
			case "json":
				var r sweep.Report
				if err := json.Unmarshal([]byte(out), &r); err != nil {
					t.Fatalf("%v\n%s", err, out)
				}
				if r.Partial != why || r.Total != 2 || len(r.Points) != 1 || r.Points[0].Index != 0 || !r.Points[0].OK {
					t.Errorf("partial %q, total %d, points %+v", r.Partial, r.Total, r.Points)
				}
				shard := filepath.Join(t.TempDir(), "partial.json")
				if err := os.WriteFile(shard, []byte(out), 0o644); err != nil {
					t.Fatal(err)
				}
				code, mout, merr := runCLI("sweep", "merge", shard)
				if code != 2 || mout != "" || !strings.Contains(merr, "a partial shard ("+why+")") {
					t.Errorf("merge of a partial report: exit %d, stdout %q, stderr %q", code, mout, merr)
				}
			}
		})
	}
}

// TestInterruptTrace: trace runs the machine like run: a progress line on a
// terminal, and Ctrl-C prints the events so far and exits 130.
func TestInterruptTrace(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a subprocess for over a second")
	}
	cmd, stdout, stderr, wait := subprocess(t, true, "trace", "testdata/busy_forever.pto")
	interruptAt(t, cmd, stderr, wait, "cycles/s", "interrupted (Ctrl-C) at cycle")
	if !strings.Contains(stdout.String(), "texpands") {
		t.Errorf("no events of the run so far:\n%.2000s", stdout)
	}
}
