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

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "x.golden")
	tests := []struct {
		name   string
		update bool
		got    string
		fails  bool
		stored string
	}{
		{"missing file fails", false, "a\n", true, ""},
		{"update creates the directory and file", true, "a\n", false, "a\n"},
		{"equal passes", false, "a\n", false, "a\n"},
		{"different fails and leaves the file", false, "b\n", true, "a\n"},
		{"update rewrites", true, "b\n", false, "b\n"},
	}
	for _, tc := range tests {
		if tc.update {
			t.Setenv("UPDATE_GOLDEN", "1")
		} else {
			t.Setenv("UPDATE_GOLDEN", "")
		}
		r := &recorder{TB: t}
		Check(r, path, []byte(tc.got))
		if (len(r.failed) > 0) != tc.fails {
			t.Errorf("%s: failures %q, want failing=%v", tc.name, r.failed, tc.fails)
		}
		b, _ := os.ReadFile(path)
		if string(b) != tc.stored {
			t.Errorf("%s: file holds %q, want %q", tc.name, b, tc.stored)
		}
	}
}

func TestSection(t *testing.T) {
	path := filepath.Join(t.TempDir(), "doc.md")
	const doc = "intro\n<!-- b -->\nold\n<!-- e -->\nrest\n"
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		update bool
		got    string
		fails  bool
		stored string
	}{
		{"equal passes", false, "old\n", false, doc},
		{"different fails and leaves the file", false, "new\n", true, doc},
		{"update replaces only the section", true, "new\n", false, "intro\n<!-- b -->\nnew\n<!-- e -->\nrest\n"},
	}
	for _, tc := range tests {
		if tc.update {
			t.Setenv("UPDATE_GOLDEN", "1")
		} else {
			t.Setenv("UPDATE_GOLDEN", "")
		}
		r := &recorder{TB: t}
		Section(r, path, "<!-- b -->\n", "<!-- e -->", tc.got)
		if (len(r.failed) > 0) != tc.fails {
			t.Errorf("%s: failures %q, want failing=%v", tc.name, r.failed, tc.fails)
		}
		b, _ := os.ReadFile(path)
		if string(b) != tc.stored {
			t.Errorf("%s: file holds %q, want %q", tc.name, b, tc.stored)
		}
	}
	// A document without the markers fails even under UPDATE_GOLDEN=1.
	t.Setenv("UPDATE_GOLDEN", "1")
	if err := os.WriteFile(path, []byte("no markers\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := &recorder{TB: t}
	Section(r, path, "<!-- b -->\n", "<!-- e -->", "x\n")
	if len(r.failed) == 0 {
		t.Errorf("a document without markers passed")
	}
}
