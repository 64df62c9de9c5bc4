package programs_test

import (
	"bytes"
	"fmt"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/programs"
)

// kernelOrderPrograms are mixed-grid programs (an AIC and an AIV kernel in
// one launch) whose races are between the two kernels. Which access of such
// a race is meant first, so its kind and which way its hint points, must
// come from the program's synchronisation, not from which kernel is written
// first in the file (docs/hazards.md, "Intended order across kernels").
var kernelOrderPrograms = []string{
	"hazards/syncall_rounds_skip",
	"hazards/syncall_rounds_skip_vec_first",
	"hazards/grid_reuse_skip",
	"hazards/grid_tiles_skip",
	"hazards/grid_ffts_skip",
}

// TestKernelOrder lints each program as written and with its two kernel
// declarations exchanged, and requires the same findings: kind, the two
// sites (named by their source text, which the exchange moves but does not
// change), count and hint.
func TestKernelOrder(t *testing.T) {
	for _, name := range kernelOrderPrograms {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path, ok := programs.Find(name)
			if !ok {
				t.Fatalf("Find(%q) failed", name)
			}
			src, err := fs.ReadFile(programs.FS, path)
			if err != nil {
				t.Fatal(err)
			}
			swapped, err := swapKernels(path, src)
			if err != nil {
				t.Fatal(err)
			}
			as := orderFindings(t, path, src)
			bs := orderFindings(t, path, swapped)
			if len(as) == 0 {
				t.Fatal("no findings: the program tests nothing here")
			}
			if !slices.Equal(as, bs) {
				t.Errorf("the findings depend on the kernels' order in the file:\nas written:\n%s\nexchanged:\n%s", lines(as), lines(bs))
			}
		})
	}
}

func lines(s []string) string {
	var b bytes.Buffer
	for _, l := range s {
		fmt.Fprintf(&b, "  %s\n", l)
	}
	return b.String()
}

// swapKernels exchanges the text of the file's two kernel declarations.
func swapKernels(path string, src []byte) ([]byte, error) {
	f, errs := parseFile(path, src)
	if errs.HasErrors() {
		return nil, fmt.Errorf("parse %s: %v", path, errs)
	}
	var ks []asm.Span
	for _, d := range f.Decls {
		if k, ok := d.(*asm.Kernel); ok {
			ks = append(ks, k.Span)
		}
	}
	if len(ks) != 2 {
		return nil, fmt.Errorf("%s has %d kernels, want 2", path, len(ks))
	}
	a, b := ks[0], ks[1]
	var out []byte
	out = append(out, src[:a.Pos.Offset]...)
	out = append(out, src[b.Pos.Offset:b.End.Offset]...)
	out = append(out, src[a.End.Offset:b.Pos.Offset]...)
	out = append(out, src[a.Pos.Offset:a.End.Offset]...)
	out = append(out, src[b.End.Offset:]...)
	return out, nil
}

var hintLine = regexp.MustCompile(`\(line (\d+)\)`)

// orderFindings lints src as the program at path (timing-only, at its test
// size) and lists its findings with every line number replaced by that
// line's text.
func orderFindings(t *testing.T, path string, src []byte) []string {
	t.Helper()
	defs, err := testDefines(path)
	if err != nil {
		t.Fatal(err)
	}
	fe := embedFrontend
	fe.ReadFile = func(name string) ([]byte, error) {
		if filepath.ToSlash(name) == path {
			return src, nil
		}
		return fs.ReadFile(programs.FS, filepath.ToSlash(name))
	}
	obj, errs := asm.Assemble(fe, path, defs)
	if errs.HasErrors() || obj == nil {
		t.Fatalf("assemble %s:\n%v", path, errs)
	}
	o, err := runProgram(obj, true)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	text := bytes.Split(src, []byte("\n"))
	at := func(n int) string {
		if n < 1 || n > len(text) {
			return fmt.Sprint(n)
		}
		return string(bytes.TrimSpace(text[n-1]))
	}
	var out []string
	for _, f := range o.findings {
		hint := hintLine.ReplaceAllStringFunc(f.Hint, func(m string) string {
			var n int
			fmt.Sscanf(m, "(line %d)", &n)
			return "(" + at(n) + ")"
		})
		out = append(out, fmt.Sprintf("%s %q, %q count %d; hint: %s", f.Kind, at(f.First.Line), at(f.Second.Line), f.Count, hint))
	}
	slices.Sort(out)
	return out
}
