package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptoasm/ptoasm/internal/golden"
)

// fmt on a PTOAS MLIR file prints its PTO-AS translation (pinned), which is
// itself a canonical PTO-AS program that assembles and lints like the MLIR
// file; -w and -d, which would replace or diff the MLIR source, are refused
// with exit 2.
func TestFmtMLIR(t *testing.T) {
	const src = "testdata/dn_mlir.pto"
	code, out, errOut := runCLI("fmt", src)
	if code != 0 {
		t.Fatalf("fmt: exit %d\n%s", code, errOut)
	}
	golden.Check(t, "testdata/fmt_dn_mlir.golden", []byte(out))
	path := filepath.Join(t.TempDir(), "dn.pto")
	if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, d, errOut := runCLI("fmt", "-d", path); code != 0 || d != "" {
		t.Errorf("the translation is not a fmt fixed point: exit %d, %q %s", code, d, errOut)
	}
	_, lintMLIR, _ := runCLI("lint", src)
	_, lintAS, _ := runCLI("lint", path)
	if strings.TrimPrefix(lintMLIR, src) != strings.TrimPrefix(lintAS, path) {
		t.Errorf("lint differs between the MLIR file and its translation:\n%s\n---\n%s", lintMLIR, lintAS)
	}
	for _, flag := range []string{"-w", "-d"} {
		code, _, errOut := runCLI("fmt", flag, src)
		if code != 2 || !strings.Contains(errOut, "is PTOAS MLIR: fmt prints its PTO-AS translation") {
			t.Errorf("fmt %s on MLIR: exit %d, stderr %q", flag, code, errOut)
		}
	}
}
