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
		if code != 2 || !strings.Contains(errOut, ": the file is PTOAS MLIR: fmt prints its PTO-AS translation") {
			t.Errorf("fmt %s on MLIR: exit %d, stderr %q", flag, code, errOut)
		}
	}
}

// fmt --to mlir prints a PTO-AS program as PTOAS MLIR (pinned) that reads
// back to a program linting like the original; a construct PTOAS lacks is a
// file:line:col error, exit 2; --to pto-as is plain fmt.
func TestFmtToMLIR(t *testing.T) {
	code, out, errOut := runCLI("fmt", "--to", "mlir", "hazards/raw")
	if code != 0 {
		t.Fatalf("fmt --to mlir: exit %d\n%s", code, errOut)
	}
	golden.Check(t, "testdata/fmt_to_mlir_raw.golden", []byte(out))
	path := filepath.Join(t.TempDir(), "raw_mlir.pto")
	if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	_, lintAS, _ := runCLI("lint", "hazards/raw")
	_, lintMLIR, _ := runCLI("lint", path)
	kinds := func(s string) (ks []string) {
		for _, l := range strings.Split(s, "\n") {
			if i := strings.Index(l, ": error: "); i >= 0 {
				ks = append(ks, strings.Fields(l[i+len(": error: "):])[0])
			}
		}
		return ks
	}
	if a, m := kinds(lintAS), kinds(lintMLIR); strings.Join(a, " ") != strings.Join(m, " ") || len(a) == 0 {
		t.Errorf("lint differs: PTO-AS %v, its MLIR %v\n%s", a, m, lintMLIR)
	}
	code, _, errOut = runCLI("fmt", "--to", "mlir", "tget_bw")
	if code != 2 || !strings.Contains(errOut, ": error: --to mlir: tget_async has no PTOAS form: ") || !strings.Contains(errOut, "PTOOps.td at a56b18c3") {
		t.Errorf("fmt --to mlir tget_bw: exit %d, stderr %q", code, errOut)
	}
	_, plain, _ := runCLI("fmt", "testdata/dn_mlir.pto")
	if code, as, errOut := runCLI("fmt", "--to", "pto-as", "testdata/dn_mlir.pto"); code != 0 || as != plain {
		t.Errorf("fmt --to pto-as differs from fmt: exit %d %s", code, errOut)
	}
}
