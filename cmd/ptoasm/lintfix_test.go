package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLintFix: `lint --fix` orders each race with the editor's quick fix and
// writes the file back; the result lints clean (notes aside), its run keeps
// its golden, it is a fmt fixed point, and a second --fix changes nothing.
// (fmt's output has LF line ends and no byte-order mark, so a file saved
// with them is checked for keeping them instead.)
// ffn_grid's races are across loop iterations (the double buffer's missing
// reverse flags): each gets a pre-set before the loop and a drain after it.
func TestLintFix(t *testing.T) {
	for _, c := range []struct {
		rel   string
		fixes int      // fixes applied
		want  []string // lines the fix adds (trimmed)
		dos   bool     // saved with a byte-order mark and CRLF line ends, which must stay
	}{
		{"hazards/war.pto", 1, nil, false},
		{"hazards/war.pto", 1, []string{"set_flag V, MTE2, 0", "wait_flag V, MTE2, 0"}, true},
		{"hazards/raw.pto", 1, nil, false},
		// PTOAS#1118: slot 1's V->MTE2 guard across iterations, which ptoas
		// left out; the fix is the one slot 0 has, on the next free id.
		{"hazards/ptoas/issue1118.pto", 1, []string{"set_flag V, MTE2, 1", "wait_flag V, MTE2, 1"}, false},
		{"hazards/overlapping_tile_array_race.pto", 1, nil, false},
		{"ffn_grid/unified_as_shipped.pto", 2, []string{
			"set_flag MTE1, MTE2, 0", "wait_flag MTE1, MTE2, 0", // M1, the reverse flag of hiddenChunkMat
			"set_flag M, MTE1, 0", "wait_flag M, MTE1, 0", // M2, aDown/bDown
		}, false},
	} {
		t.Run(c.rel, func(t *testing.T) {
			path := copyProgramDir(t, c.rel)
			orig, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if c.dos {
				orig = append([]byte("\ufeff"), strings.ReplaceAll(string(orig), "\n", "\r\n")...)
				if err := os.WriteFile(path, orig, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			code, out, stderr := runCLI("lint", "--fix", path)
			if code != 0 {
				t.Fatalf("lint --fix: exit %d\n%s%s", code, out, stderr)
			}
			if n := strings.Count(stderr, ": fixed: "); n != c.fixes {
				t.Errorf("%d fixes, want %d:\n%s", n, c.fixes, stderr)
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			fixed := string(b)
			if c.dos {
				if !strings.HasPrefix(fixed, "\ufeff") || strings.Count(fixed, "\n") != strings.Count(fixed, "\r\n") {
					t.Errorf("the fix lost the byte-order mark or mixed line ends:\n%q", fixed)
				}
				fixed = strings.ReplaceAll(strings.TrimPrefix(fixed, "\ufeff"), "\r\n", "\n")
				orig = []byte(strings.ReplaceAll(strings.TrimPrefix(string(orig), "\ufeff"), "\r\n", "\n"))
			}
			for _, w := range c.want {
				if countLine(fixed, w) <= countLine(string(orig), w) {
					t.Errorf("the fix added no line %q", w)
				}
			}
			if code, out, stderr := runCLI("lint", path); code != 0 {
				t.Errorf("lint after --fix: exit %d\n%s%s", code, out, stderr)
			}
			if code, out, stderr := runCLI("run", path); code != 0 || strings.Contains(out, "FAIL") {
				t.Errorf("run after --fix: exit %d\n%s%s", code, out, stderr)
			}
			if code, out, stderr := runCLI("fmt", "-d", path); !c.dos && (code != 0 || out != "") {
				t.Errorf("fixed file is not a fmt fixed point (exit %d):\n%s%s", code, out, stderr)
			}
			if code, _, stderr := runCLI("lint", "--fix", path); code != 0 || strings.Contains(stderr, "fixed:") {
				t.Errorf("second lint --fix: exit %d\n%s", code, stderr)
			}
			if b2, _ := os.ReadFile(path); !bytes.Equal(b2, b) {
				t.Error("second lint --fix changed the file")
			}
		})
	}
}

func TestLintFixUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"lint", "--fix", "gemm_db"}, "needs a file path"},
		{[]string{"lint", "--fix", "--static", "../../programs/hazards/war.pto"}, "cannot be used with --static"},
	} {
		if code, _, stderr := runCLI(c.args...); code != 2 || !strings.Contains(stderr, c.msg) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", c.args, code, stderr, c.msg)
		}
	}
}

// TestLintFixBadFile: --fix of a file that does not assemble leaves it
// as it was and reports exactly what lint does, a positioned error first.
func TestLintFixBadFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.pto")
	src := "kernel k : aiv {\n    tadd %a, \n}\n"
	os.WriteFile(path, []byte(src), 0o644)
	code, _, stderr := runCLI("lint", "--fix", path)
	_, _, want := runCLI("lint", path)
	if code != 2 || stderr != want || !strings.HasPrefix(stderr, path+":2:") {
		t.Errorf("lint --fix: exit %d\n%s\nwant exit 2 and lint's report:\n%s", code, stderr, want)
	}
	if b, _ := os.ReadFile(path); string(b) != src {
		t.Errorf("the file changed:\n%s", b)
	}
}

// TestLintFixTimeLimit: --max-time bounds the whole of --fix (a lint per
// fix, up to lsp.MaxFixes of them, each took the whole limit); past it the
// fixes that held are written, the file is otherwise left as it was, and
// the stop names the flag, exit 2.
func TestLintFixTimeLimit(t *testing.T) {
	src, err := os.ReadFile("../../programs/hazards/war.pto")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "war.pto")
	os.WriteFile(path, src, 0o644)
	code, _, stderr := runCLI("lint", "--fix", path, "--max-time", "1ns")
	want := path + ": --fix stopped before a fix held: fixing took longer than the time limit 1ns of wall-clock time; raise it with --max-time=DURATION (now 1ns; 0: no limit)"
	if first, _, _ := strings.Cut(stderr, "\n"); code != 2 || first != "ptoasm: "+want {
		t.Errorf("exit %d, stderr:\n%s\nwant exit 2 and ptoasm: %s", code, stderr, want)
	}
	if b, _ := os.ReadFile(path); !bytes.Equal(b, src) {
		t.Error("the file changed")
	}
}

func countLine(text, line string) int {
	n := 0
	for _, l := range strings.Split(text, "\n") {
		if strings.TrimSpace(l) == line {
			n++
		}
	}
	return n
}

// copyProgramDir copies the directory of programs/rel (its includes and
// data files beside it) to a temporary directory and returns rel's copy.
func copyProgramDir(t *testing.T, rel string) string {
	t.Helper()
	src := filepath.Join("..", "..", "programs", filepath.Dir(rel))
	dst := t.TempDir()
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dst, filepath.Base(rel))
}
