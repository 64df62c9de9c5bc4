// Package fuzzseed collects the repository's .pto files as seeds for the fuzz
// targets, so that every instruction and feature a program or a test file
// uses (new ones included) is in each target's corpus without a hand-kept
// list going stale.
package fuzzseed

import (
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// Root is the module's root directory, found by walking up from the working
// directory (a package's tests run in its own directory) to go.mod.
func Root(tb testing.TB) string {
	tb.Helper()
	dir, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		up := filepath.Dir(dir)
		if up == dir {
			tb.Fatal("fuzzseed: no go.mod above the working directory")
		}
		dir = up
	}
}

// Files returns the contents of every .pto file under the given directories
// (relative to the module root), sorted by path, skipping files larger than
// max bytes (a seed the fuzzer mutates should be small). mlir selects PTOAS
// MLIR files (true), PTO-AS files (false), or both (nil).
//
// When fuzzing (Fuzzing) it keeps at most FuzzSeeds files of at most FuzzMax
// bytes, spread evenly over the sorted paths: the fuzzer runs every seed
// before it mutates any, and the whole repository's programs kept it there
// for the whole of a minute's -fuzztime (FuzzFmt, FuzzRunLint never
// mutated). Under plain go test every file is a test case.
func Files(tb testing.TB, max int, mlir *bool, dirs ...string) [][]byte {
	tb.Helper()
	fuzzing := Fuzzing()
	if fuzzing {
		max = min(max, FuzzMax)
	}
	root := Root(tb)
	var paths []string
	for _, d := range dirs {
		filepath.WalkDir(filepath.Join(root, d), func(p string, e fs.DirEntry, err error) error {
			if err == nil && !e.IsDir() && strings.HasSuffix(p, ".pto") {
				paths = append(paths, p)
			}
			return nil
		})
	}
	sort.Strings(paths)
	var out [][]byte
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil || len(b) > max {
			continue
		}
		if mlir != nil && IsMLIR(b) != *mlir {
			continue
		}
		out = append(out, b)
	}
	if fuzzing && len(out) > FuzzSeeds {
		spread := make([][]byte, FuzzSeeds)
		for i := range spread {
			spread[i] = out[i*len(out)/FuzzSeeds]
		}
		out = spread
	}
	return out
}

// FuzzSeeds and FuzzMax bound Files when fuzzing: a couple of dozen small
// programs, enough to start every target's mutation within seconds.
const (
	FuzzSeeds = 24
	FuzzMax   = 4 << 10
)

// Fuzzing reports whether the test binary is fuzzing (go test -fuzz), not
// running its seeds as tests.
func Fuzzing() bool {
	f := flag.Lookup("test.fuzz")
	return f != nil && f.Value.String() != ""
}

// IsMLIR is a cheap test for PTOAS MLIR text (parser/mlir.IsMLIR is the
// real one; this package imports nothing of the module's).
func IsMLIR(src []byte) bool {
	s := string(src)
	return strings.Contains(s, "func.func") || strings.HasPrefix(strings.TrimSpace(s), "module")
}

// Bool is a pointer to b, for Files' mlir argument.
func Bool(b bool) *bool { return &b }

// Dirs are the directories holding .pto files: the shipped programs and every
// package's testdata.
var Dirs = []string{"programs", "testdata", "asm/testdata", "machine/testdata", "parser/testdata",
	"parser/mlir/testdata", "cmd/ptoasm/testdata", "lsp/testdata"}

// Corpus holds the real PTOAS MLIR kernels (git-ignored: absent from a
// fresh clone, where it adds no seeds). Parser-level fuzzers seed from it
// too; the CLI-level ones, which replay every seed through four commands,
// do not.
const Corpus = "corpus"
