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
			waitFor(t, stderr, "cycles/s")
			if err := cmd.Process.Signal(os.Interrupt); err != nil {
				t.Fatal(err)
			}
			if code := wait(); code != exitInterrupted {
				t.Errorf("exit %d, want %d\nstderr: %s", code, exitInterrupted, stderr)
			}
			if !strings.Contains(stderr.String(), "interrupted (Ctrl-C) at cycle") {
				t.Errorf("stderr does not say the run was interrupted:\n%s", stderr)
			}
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
