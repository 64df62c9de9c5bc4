package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzRunLint drives the whole command line on arbitrary program text: run
// (with the hazard detector attached), run --timing-only, lint (timing-only
// run, detector and static pass) and the static lint alone, under small
// memory, file-size and cycle budgets. Whatever the text,
// each ends in exit 0, 1 or 2 with a message for 2, and never panics or runs
// away; the budgets keep every input within a few hundred MiB and a
// bounded number of simulated cycles. Seeded with testdata/hostile (read at
// run time) and testdata/fuzz/FuzzRunLint.
func FuzzRunLint(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(hostileDir, "*.pto"))
	for _, name := range files {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("const A = " + strings.Repeat("-", 300) + "1\nkernel k : aiv {\n    dsb\n}\nlaunch ranks=1 {\n    run k\n}\n"))
	f.Add([]byte("const A = 1\nconst A = 1\nconst A = 1\n"))
	f.Add([]byte("kernel k : aiv {\n    while 1 {\n        dsb\n    }\n}\nlaunch ranks=1 {\n    run k\n}\n"))
	limits := []string{"--max-memory", "32MiB", "--max-file-size", "64KiB"}
	f.Fuzz(func(t *testing.T, src []byte) {
		dir := t.TempDir()
		path := filepath.Join(dir, "f.pto")
		if err := os.WriteFile(path, src, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{
			{"run", path, "--max-cycles", "200000"},
			{"run", path, "--timing-only", "--max-cycles", "200000"},
			{"lint", path, "--max-cycles", "200000", "--max-idle-cycles", "100000"},
			{"lint", path, "--static"},
		} {
			var o, e bytes.Buffer
			code := realMain(append(args, limits...), &o, &e)
			switch {
			case code < 0 || code > 2:
				t.Fatalf("ptoasm %s: exit %d", args[0], code)
			case code == 2 && e.Len() == 0:
				t.Fatalf("ptoasm %s: exit 2 without a message", args[0])
			}
		}
	})
}
