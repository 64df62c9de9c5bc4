// Package golden is the one golden-file helper the tests share: output that
// is pinned byte for byte lives in a file under version control (testdata/,
// or a generated part of docs/), and `UPDATE_GOLDEN=1 go test ./...` rewrites
// those files instead of comparing, so an intended change is accepted by
// reviewing the diff rather than by editing expectations by hand.
package golden

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Update reports whether UPDATE_GOLDEN is set, that is whether tests should
// rewrite their golden files rather than compare with them.
func Update() bool { return os.Getenv("UPDATE_GOLDEN") != "" }

// Check compares got with the file at path and reports a line diff when they
// differ; under UPDATE_GOLDEN=1 it writes got to path instead, creating the
// directory if needed.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if Update() {
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
		t.Errorf("%s differs from the output; run with UPDATE_GOLDEN=1 and review the diff (-want +got):\n%s", path, d)
	}
}

// Section checks that the file at path holds got between the markers begin
// and end (a generated table inside a hand-written document); under
// UPDATE_GOLDEN=1 it first replaces whatever the markers enclose. The markers
// themselves are never written, so a document without them fails either way.
func Section(t testing.TB, path, begin, end, got string) {
	t.Helper()
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(doc)
	i, j := strings.Index(s, begin), strings.Index(s, end)
	if Update() && i >= 0 && j > i {
		s = s[:i+len(begin)] + got + s[j:]
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if !strings.Contains(s, begin+got+end) {
		t.Errorf("%s does not hold the generated text between %q and %q; run with UPDATE_GOLDEN=1 and review the diff", path, begin, end)
	}
}
