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
// first in the file (docs/hazards.md, "Intended order across kernels"):
// grid barriers (the syncall ones), FFTS flags and fifos (cross_core has
// neither: the write first), and both kinds of loop (fa_cv_preload_no_p_credit,
// whose cube runs two tiles ahead, and result_handoff_behind, named by the
// step its load starts at). TestKernelOrder requires findings of
// these; TestKernelOrderAll lints every other program with two kernels too.
var kernelOrderPrograms = []string{
	"hazards/syncall_rounds_skip",
	"hazards/syncall_rounds_skip_vec_first",
	"hazards/grid_reuse_skip",
	"hazards/grid_tiles_skip",
	"hazards/grid_ffts_skip",
	"hazards/cross_core",
	"hazards/cross_core_consumer_first",
	"hazards/ffts_mode2_cross_block",
	"hazards/fifo_slot_c2v",
	"hazards/fa_cv_preload_no_p_credit",
	"hazards/result_handoff_behind",
}

// TestKernelOrder lints each program as written and with its kernel
// declarations in reverse order, and requires the same findings: kind, the
// two sites (named by their source text, which the exchange moves but does
// not change), count and hint.
func TestKernelOrder(t *testing.T) {
	for _, name := range kernelOrderPrograms {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			as, bs := kernelOrderFindings(t, name)
			if len(as) == 0 {
				t.Fatal("no findings: the program tests nothing here")
			}
			if !slices.Equal(as, bs) {
				t.Errorf("the findings depend on the kernels' order in the file:\nas written:\n%s\nexchanged:\n%s", lines(as), lines(bs))
			}
		})
	}
}

// TestKernelOrderAll is TestKernelOrder for every program that declares
// two kernels or more, in its own file or one it includes, findings or
// none: exchanging declarations must change nothing a program reports.
func TestKernelOrderAll(t *testing.T) {
	n := 0
	for _, name := range programs.List() {
		path, ok := programs.Find(name)
		if !ok {
			t.Fatalf("Find(%q) failed", name)
		}
		if slices.Contains(kernelOrderPrograms, name) || !readsKernels(t, path) {
			continue
		}
		n++
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			as, bs := kernelOrderFindings(t, name)
			if !slices.Equal(as, bs) {
				t.Errorf("the findings depend on the kernels' order in the file:\nas written:\n%s\nexchanged:\n%s", lines(as), lines(bs))
			}
		})
	}
	if n == 0 {
		t.Fatal("no program with two kernels: the test tests nothing")
	}
}

// readsKernels says whether the program at path reads a file with two
// kernel declarations or more.
func readsKernels(t *testing.T, path string) bool {
	t.Helper()
	multi := false
	fe := embedFrontend
	fe.ReadFile = func(name string) ([]byte, error) {
		src, err := fs.ReadFile(programs.FS, filepath.ToSlash(name))
		if err == nil && len(kernelSpans(name, src)) >= 2 {
			multi = true
		}
		return src, err
	}
	defs, err := testDefines(path)
	if err != nil {
		t.Fatal(err)
	}
	asm.Assemble(fe, path, defs)
	return multi
}

// kernelOrderFindings lints program name as written and with the kernel
// declarations of every file it reads reversed.
func kernelOrderFindings(t *testing.T, name string) (as, bs []string) {
	t.Helper()
	path, ok := programs.Find(name)
	if !ok {
		t.Fatalf("Find(%q) failed", name)
	}
	return orderFindings(t, path, false), orderFindings(t, path, true)
}

func lines(s []string) string {
	var b bytes.Buffer
	for _, l := range s {
		fmt.Fprintf(&b, "  %s\n", l)
	}
	return b.String()
}

// kernelSpans lists the spans of a file's kernel declarations, nil when it
// does not parse.
func kernelSpans(path string, src []byte) []asm.Span {
	f, errs := parseFile(path, src)
	if errs.HasErrors() || f == nil {
		return nil
	}
	var ks []asm.Span
	for _, d := range f.Decls {
		if k, ok := d.(*asm.Kernel); ok {
			ks = append(ks, k.Span)
		}
	}
	return ks
}

// reverseKernels writes the file's kernel declarations in reverse order,
// leaving everything between and around them in place.
func reverseKernels(path string, src []byte) []byte {
	ks := kernelSpans(path, src)
	if len(ks) < 2 {
		return src
	}
	var out []byte
	out = append(out, src[:ks[0].Pos.Offset]...)
	for i := range ks {
		k := ks[len(ks)-1-i]
		out = append(out, src[k.Pos.Offset:k.End.Offset]...)
		if i+1 < len(ks) {
			out = append(out, src[ks[i].End.Offset:ks[i+1].Pos.Offset]...)
		}
	}
	return append(out, src[ks[len(ks)-1].End.Offset:]...)
}

var hintLine = regexp.MustCompile(`\(line (\d+)\)`)

// orderFindings lints the program at path (timing-only, at its test size),
// with every file's kernels reversed if asked, and lists its findings with
// every line number replaced by that line's text.
func orderFindings(t *testing.T, path string, reverse bool) []string {
	t.Helper()
	defs, err := testDefines(path)
	if err != nil {
		t.Fatal(err)
	}
	texts := map[string][][]byte{}
	fe := embedFrontend
	fe.ReadFile = func(name string) ([]byte, error) {
		src, err := fs.ReadFile(programs.FS, filepath.ToSlash(name))
		if err != nil {
			return nil, err
		}
		if reverse {
			src = reverseKernels(name, src)
		}
		texts[filepath.ToSlash(name)] = bytes.Split(src, []byte("\n"))
		return src, nil
	}
	obj, errs := asm.Assemble(fe, path, defs)
	if errs.HasErrors() || obj == nil {
		t.Fatalf("assemble %s:\n%v", path, errs)
	}
	o, err := runProgram(obj, true)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	at := func(file string, n int) string {
		text, ok := texts[filepath.ToSlash(file)]
		if !ok {
			text = texts[path]
		}
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
			file := path
			if n == f.Second.Line && f.Second.File != "" {
				file = f.Second.File
			}
			if n == f.First.Line && f.First.File != "" {
				file = f.First.File
			}
			return "(" + at(file, n) + ")"
		})
		out = append(out, fmt.Sprintf("%s %q, %q count %d; hint: %s", f.Kind, at(f.First.File, f.First.Line), at(f.Second.File, f.Second.Line), f.Count, hint))
	}
	slices.Sort(out)
	return out
}
