// Package golden is the golden-file check every package's tests share:
// compare output with a file under testdata, or rewrite the file when
// UPDATE_GOLDEN is set (docs: "Tests" in programs/README.md).
package golden

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Update is true when UPDATE_GOLDEN is set: Check then rewrites the files
// instead of comparing. A test binary may also bind it to a flag.
var Update = os.Getenv("UPDATE_GOLDEN") != ""

// Check compares got with the file at path, or with Update writes it
// (creating its directory). A difference fails the test with a line diff.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if Update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with UPDATE_GOLDEN=1 to create it)", err)
	}
	if d := cmp.Diff(string(want), string(got)); d != "" {
		t.Errorf("%s differs from the output (-want +got; UPDATE_GOLDEN=1 rewrites it):\n%s", path, d)
	}
}
