package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestSlurmSweep runs scripts/slurm-sweep.sh: a one-node Slurm (munged,
// slurmctld, slurmd) started for the test, a sweep submitted as an array job
// of --shard tasks, the shards merged and compared byte for byte with one
// process's output (table and JSON). The CLI is this test binary
// (PTOASM_TEST_MAIN=1, see TestMain), which the job's tasks inherit through
// sbatch's environment. It skips where Slurm cannot run: .ci/run installs
// slurm-wlm and munge.
func TestSlurmSweep(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Slurm cluster: not with -short")
	}
	for _, cmd := range []string{"munged", "mungekey", "slurmctld", "slurmd", "sbatch", "sinfo"} {
		if _, err := exec.LookPath(cmd); err != nil {
			t.Skipf("%s not found: install slurm-wlm and munge (apt-get install slurm-wlm munge; .ci/run does)", cmd)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "../../scripts/slurm-sweep.sh", "3")
	cmd.Env = append(os.Environ(), "PTOASM="+os.Args[0], "PTOASM_TEST_MAIN=1")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	// The script stops its daemons on SIGTERM; give it time to.
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 10 * time.Second
	start := time.Now()
	err := cmd.Run()
	t.Logf("slurm-sweep.sh took %.1f s", time.Since(start).Seconds())
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee) && ee.ExitCode() == 77:
		t.Skip(strings.TrimSpace(errOut.String()))
	default:
		t.Fatalf("slurm-sweep.sh: %v\nstderr:\n%s\nstdout:\n%s", err, errOut.String(), out.String())
	}
	if !strings.Contains(errOut.String(), "3 shards merged (json) = one process, byte for byte") ||
		!strings.Contains(out.String(), "sweep gemm_db: 6 points") {
		t.Fatalf("unexpected output:\nstderr:\n%s\nstdout:\n%s", errOut.String(), out.String())
	}
}
