package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ptoasm/ptoasm/machine"
)

// A program that never ends is stopped by a run guard: exit 2, stdout the
// report up to the stop, stderr a first line that says which limit stopped
// it and names the flag that raises it, then what every core was doing. The
// cycle guards are deterministic: the stop comes within one scalar budget
// (4096 statements) of the limit, however fast the host is.
func TestRunGuards(t *testing.T) {
	const idle = machine.DefaultMaxIdleCycles
	tests := []struct {
		name  string
		args  []string
		first string // regexp on stderr's first line
		limit int64  // the cycle limit the stop must be within (0: not a cycle guard)
		out   string // substring of stdout
	}{
		{name: "lint while 1 {}, default guards", args: []string{"lint", "testdata/spin_forever.pto"},
			first: `^ptoasm: stopped at cycle (\d+): the run exceeded the idle limit 16777216: for \d+ cycles \(since cycle \d+\) no pipe ran an instruction, .*; raise it with --max-idle-cycles=N \(now 16777216; -1: no limit\)$`,
			limit: idle, out: "testdata/spin_forever.pto: no hazards found before the run was stopped\n"},
		{name: "run while 1 {}, default guards", args: []string{"run", "testdata/spin_forever.pto"},
			first: `^ptoasm: stopped at cycle (\d+): the run exceeded the idle limit 16777216: .*--max-idle-cycles=N`,
			limit: idle, out: "cycles "},
		{name: "lint an ld poll of a signal no one sets", args: []string{"lint", "testdata/spin_signal.pto"},
			first: `^ptoasm: stopped at cycle (\d+): the run exceeded the idle limit 16777216: .*--max-idle-cycles=N`,
			limit: idle, out: "no hazards found before the run was stopped"},
		{name: "lint with a smaller idle limit", args: []string{"lint", "--max-idle-cycles", "100000", "testdata/spin_signal.pto"},
			first: `^ptoasm: stopped at cycle (\d+): the run exceeded the idle limit 100000: .*\(now 100000; -1: no limit\)$`,
			limit: 100000},
		{name: "lint, idle guard off, cycle guard", args: []string{"lint", "--max-idle-cycles=-1", "--max-cycles", "1000000", "testdata/spin_forever.pto"},
			first: `^ptoasm: stopped at cycle (\d+): the run exceeded the cycle limit 1000000 .*; raise it with --max-cycles=N \(now 1000000\)$`,
			limit: 1000000},
		{name: "lint a busy loop, cycle guard", args: []string{"lint", "--max-cycles", "200000", "testdata/busy_forever.pto"},
			first: `^ptoasm: stopped at cycle (\d+): the run exceeded the cycle limit 200000 .*--max-cycles=N`,
			limit: 200000},
		// A wall-clock stop is checked every few thousand events, so a
		// nanosecond stops the busy loop at its first check.
		{name: "lint a busy loop, wall-clock guard", args: []string{"lint", "--max-time", "1ns", "testdata/busy_forever.pto"},
			first: `^ptoasm: stopped at cycle \d+: the run exceeded the time limit 1ns of wall-clock time .*; raise it with --max-time=DURATION \(now 1ns; 0: no limit\)$`},
		{name: "run a busy loop, wall-clock guard", args: []string{"run", "--max-time", "1ns", "testdata/busy_forever.pto"},
			first: `^ptoasm: stopped at cycle \d+: the run exceeded the time limit 1ns .*--max-time=DURATION`},
		// trace stops where run does, and takes the flags its stops name
		// (it had none: "raise it with --max-idle-cycles=N" named a flag
		// trace refused, and a busy loop ran until 1.4 GB of events).
		{name: "trace while 1 {}, default guards", args: []string{"trace", "testdata/spin_forever.pto", "--to", "10"},
			first: `^ptoasm: stopped at cycle (\d+): the run exceeded the idle limit 16777216: .*--max-idle-cycles=N`, limit: idle},
		{name: "trace with a smaller idle limit", args: []string{"trace", "--max-idle-cycles", "100000", "testdata/spin_signal.pto", "--to", "10"},
			first: `^ptoasm: stopped at cycle (\d+): the run exceeded the idle limit 100000: .*\(now 100000; -1: no limit\)$`, limit: 100000},
		{name: "trace a busy loop, cycle guard", args: []string{"trace", "--max-cycles", "200000", "testdata/busy_forever.pto", "--to", "10"},
			first: `^ptoasm: stopped at cycle (\d+): the run exceeded the cycle limit 200000 .*--max-cycles=N`, limit: 200000},
		{name: "trace a busy loop, wall-clock guard", args: []string{"trace", "--max-time", "1ns", "testdata/busy_forever.pto", "--to", "10"},
			first: `^ptoasm: stopped at cycle \d+: the run exceeded the time limit 1ns .*--max-time=DURATION`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(tc.args...)
			if code != 2 {
				t.Errorf("exit %d, want 2\nstderr:\n%s", code, errOut)
			}
			first, rest, _ := strings.Cut(errOut, "\n")
			m := regexp.MustCompile(tc.first).FindStringSubmatch(first)
			if m == nil {
				t.Fatalf("stderr's first line\n%s\ndoes not match %s", first, tc.first)
			}
			if !strings.Contains(rest, "r0.aiv0: ") {
				t.Errorf("stderr does not say what r0.aiv0 was doing:\n%s", errOut)
			}
			if tc.limit > 0 {
				// An idle limit counts from the last work.
				at, _ := strconv.ParseInt(m[1], 10, 64)
				var since int64
				if s := regexp.MustCompile(`since cycle (\d+)`).FindStringSubmatch(first); s != nil {
					since, _ = strconv.ParseInt(s[1], 10, 64)
				}
				if d := at - since; d <= tc.limit || d > tc.limit+4096 {
					t.Errorf("stopped %d cycles after cycle %d, want within one scalar budget past the limit %d", d, since, tc.limit)
				}
			}
			if !strings.Contains(out, tc.out) {
				t.Errorf("stdout does not contain %q:\n%s", tc.out, out)
			}
		})
	}
}

// lint --format json still writes a valid report of the findings up to a
// guard's stop, then exits 2.
func TestRunGuardJSON(t *testing.T) {
	code, out, errOut := runCLI("lint", "--format", "json", "testdata/spin_forever.pto")
	if code != 2 || !strings.Contains(errOut, "--max-idle-cycles") {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	var r struct {
		Findings []json.RawMessage `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || r.Findings == nil || len(r.Findings) != 0 {
		t.Errorf("stdout is not an empty findings report (%v):\n%s", err, out)
	}
}

// A negative limit is a usage error; a syncall hand-off that terminates
// is not stopped by the default guards.
func TestRunGuardFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"lint", "--max-time=-1s", "gemm_db"}, 2, "--max-time -1s: want a duration >= 0"},
		{[]string{"run", "--max-cycles=-5", "gemm_db"}, 2, "--max-cycles -5: want a cycle count >= 0"},
		{[]string{"lint", "--max-idle-cycles=-2", "gemm_db"}, 2, "--max-idle-cycles -2: want a cycle count >= 0"},
		{[]string{"lint", "--max-time", "soon", "gemm_db"}, 2, "--max-time"},
		{[]string{"lint", "hazards/syncall"}, 0, ""},
		{[]string{"run", "hazards/syncall"}, 0, ""},
	} {
		code, _, errOut := runCLI(tc.args...)
		if code != tc.code || !strings.Contains(errOut, tc.want) {
			t.Errorf("ptoasm %s: exit %d, stderr %q; want exit %d and %q", strings.Join(tc.args, " "), code, errOut, tc.code, tc.want)
		}
	}
}

// sweep (a failing point's row) and step (its stop message) name the flag
// that raises the guard they hit, as run and lint do.
func TestGuardFlagNamedInSweepAndStep(t *testing.T) {
	code, out, _ := runCLI("sweep", "testdata/spin_forever.pto", "--max-idle-cycles", "100000", "--set", "cube.head=1,2")
	if code != 1 || !strings.Contains(out, "the run exceeded the idle limit 100000") ||
		!strings.Contains(out, "raise it with --max-idle-cycles=N (now 100000; -1: no limit)") {
		t.Errorf("sweep: exit %d, a stopped point does not name its flag:\n%s", code, out)
	}
	script := filepath.Join(t.TempDir(), "s.cmd")
	if err := os.WriteFile(script, []byte("continue\nquit\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI("step", "testdata/spin_forever.pto", "--script", script, "--max-cycles", "1000000", "--max-idle-cycles=-1")
	if code != 0 || !strings.Contains(out, "raise it with --max-cycles=N (now 1000000)") {
		t.Errorf("step: exit %d, the stop does not name its flag:\n%s\n%s", code, out, errOut)
	}
}
