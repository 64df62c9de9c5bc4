package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestFmtWriteFullDisk: fmt -w on a disk that fills up mid-write fails with
// the path, exit 2, and leaves the source exactly as it was, with no
// temporary file behind; when the write succeeds the file keeps its mode.
func TestFmtWriteFullDisk(t *testing.T) {
	dir := t.TempDir()
	src, err := os.ReadFile("testdata/messy.pto")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "messy.pto")
	if err := os.WriteFile(path, src, 0o640); err != nil {
		t.Fatal(err)
	}
	// A full disk takes the first 64 bytes, then refuses.
	full := func(f *os.File, data []byte) error {
		f.Write(data[:64])
		return syscall.ENOSPC
	}
	defer func(w func(*os.File, []byte) error) { writeTemp = w }(writeTemp)
	writeTemp = full
	code, out, errOut := runCLI("fmt", "-w", path)
	if code != 2 || out != "" {
		t.Errorf("exit %d, stdout %q, want 2 and nothing", code, out)
	}
	if want := "ptoasm: writing " + path + ": no space left on device\n"; errOut != want {
		t.Errorf("stderr %q, want %q", errOut, want)
	}
	if got, _ := os.ReadFile(path); string(got) != string(src) {
		t.Errorf("the source changed on a failed write: %d bytes, was %d", len(got), len(src))
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("files left behind: %v", ents)
	}

	writeTemp = func(f *os.File, data []byte) error { _, err := f.Write(data); return err }
	if code, _, errOut := runCLI("fmt", "-w", path); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	got, _ := os.ReadFile(path)
	want, _ := os.ReadFile("testdata/fmt_messy.golden")
	if !strings.Contains(string(want), string(got)) || len(got) == 0 {
		t.Errorf("fmt -w wrote %q, not the formatted file", got)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want 0640 kept", st.Mode().Perm())
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("files left behind: %v", ents)
	}
}

// TestFmtWriteSymlink: fmt -w on a symbolic link formats the file it names
// and keeps the link; renaming over the link replaced it with a regular file
// holding the result and left the real source unformatted.
func TestFmtWriteSymlink(t *testing.T) {
	dir := t.TempDir()
	src, err := os.ReadFile("testdata/messy.pto")
	if err != nil {
		t.Fatal(err)
	}
	real := filepath.Join(dir, "src", "messy.pto")
	os.Mkdir(filepath.Dir(real), 0o755)
	if err := os.WriteFile(real, src, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.pto")
	if err := os.Symlink("src/messy.pto", link); err != nil {
		t.Skip(err)
	}
	if code, _, errOut := runCLI("fmt", "-w", link); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link is gone: %v, %v", st.Mode(), err)
	}
	_, want, _ := runCLI("fmt", "testdata/messy.pto")
	if got, _ := os.ReadFile(real); string(got) != want {
		t.Errorf("the file the link names was not formatted:\n%s", got)
	}
	if ents, _ := os.ReadDir(filepath.Dir(real)); len(ents) != 1 {
		t.Errorf("files left behind: %v", ents)
	}
}
