package golden

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// recorder is a testing.TB that keeps failures instead of stopping the test.
type recorder struct {
	testing.TB
	failed []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.failed = append(r.failed, fmt.Sprintf(format, args...))
}
func (r *recorder) Fatalf(format string, args ...any) { r.Errorf(format, args...) }
func (r *recorder) Fatal(args ...any)                 { r.failed = append(r.failed, fmt.Sprint(args...)) }

// step is one call under a setting of UPDATE_GOLDEN: whether it fails and
// what the file holds afterwards.
type step struct {
	name   string
	update bool
	got    string
	fails  bool
	stored string
}

// runSteps makes the calls in order, each with a recorder, and checks each
// outcome and the file at path.
func runSteps(t *testing.T, path string, steps []step, call func(r *recorder, got string)) {
	t.Helper()
	for _, tc := range steps {
		if tc.update {
			t.Setenv("UPDATE_GOLDEN", "1")
		} else {
			t.Setenv("UPDATE_GOLDEN", "")
		}
		r := &recorder{TB: t}
		call(r, tc.got)
		if (len(r.failed) > 0) != tc.fails {
			t.Errorf("%s: failures %q, want failing=%v", tc.name, r.failed, tc.fails)
		}
		b, _ := os.ReadFile(path)
		if string(b) != tc.stored {
			t.Errorf("%s: file holds %q, want %q", tc.name, b, tc.stored)
		}
	}
}

func TestCheck(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "x.golden")
	runSteps(t, path, []step{
		{"missing file fails", false, "a\n", true, ""},
		{"update creates the directory and file", true, "a\n", false, "a\n"},
		{"equal passes", false, "a\n", false, "a\n"},
		{"different fails and leaves the file", false, "b\n", true, "a\n"},
		{"update rewrites", true, "b\n", false, "b\n"},
	}, func(r *recorder, got string) { Check(r, path, []byte(got)) })
}

func TestSection(t *testing.T) {
	path := filepath.Join(t.TempDir(), "doc.md")
	const doc = "intro\n<!-- b -->\nold\n<!-- e -->\nrest\n"
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	section := func(r *recorder, got string) { Section(r, path, "<!-- b -->\n", "<!-- e -->", got) }
	runSteps(t, path, []step{
		{"equal passes", false, "old\n", false, doc},
		{"different fails and leaves the file", false, "new\n", true, doc},
		{"update replaces only the section", true, "new\n", false, "intro\n<!-- b -->\nnew\n<!-- e -->\nrest\n"},
	}, section)
	// A document without the markers fails even under UPDATE_GOLDEN=1.
	if err := os.WriteFile(path, []byte("no markers\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	runSteps(t, path, []step{{"no markers fails", true, "x\n", true, "no markers\n"}}, section)
}
