package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestNeovimSession is the editor session in a real editor: Neovim,
// headless, with its built-in LSP client configured by editors/nvim/ptoasm.lua
// (the README's snippet), driven by editors/nvim/session.lua. It edits a copy
// of ffn_grid's shipped kernel, since the session applies a code action.
func TestNeovimSession(t *testing.T) {
	nvim, err := exec.LookPath("nvim")
	if err != nil {
		t.Skip("nvim is not installed: the Neovim session is not run (.ci/run installs Debian's neovim)")
	}
	if testing.Short() {
		t.Skip("-short: the Neovim session is skipped")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	file := copyProgramDir(t, "ffn_grid/unified_as_shipped.pto")
	out := filepath.Join(t.TempDir(), "session.txt")
	lspCmd, _ := json.Marshal([]string{os.Args[0], "lsp", "--debounce=1ms"})
	cmd := exec.Command(nvim, "--headless", "--clean", "-c", "luafile "+filepath.Join(root, "editors", "nvim", "session.lua"))
	cmd.Env = append(os.Environ(),
		"PTOASM_TEST_MAIN=1", // os.Args[0] is this test binary: run as ptoasm
		"PTOASM_CMD="+string(lspCmd),
		"PTOASM_CONFIG="+filepath.Join(root, "editors", "nvim", "ptoasm.lua"),
		"PTOASM_FILE="+file,
		"PTOASM_OUT="+out,
	)
	cmd.Dir = t.TempDir()
	done := make(chan error, 1)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(5 * time.Minute):
		cmd.Process.Kill()
		err = <-done
		t.Errorf("nvim did not finish in 5 minutes")
	}
	b, _ := os.ReadFile(out)
	report := string(b)
	t.Logf("nvim session:\n%s", report)
	if err != nil {
		t.Errorf("nvim: %v\n%s", err, stderr.String())
	}
	if !strings.HasSuffix(report, "done\n") || strings.Contains(report, "FAIL") || strings.Count(report, "ok ") < 9 {
		t.Errorf("the session failed or did not finish")
	}
}
