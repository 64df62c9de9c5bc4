package asm_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
	goldenfile "github.com/ptoasm/ptoasm/internal/golden"
	"github.com/ptoasm/ptoasm/parser"
)

var diskFrontend = asm.Frontend{ParseFile: parser.ParseFile, ParseExpr: parser.ParseExpr, ReadFile: os.ReadFile}

// memFrontend reads files from a map, for tests of includes and -D.
func memFrontend(files map[string]string) asm.Frontend {
	fe := diskFrontend
	fe.ReadFile = func(name string) ([]byte, error) {
		s, ok := files[filepath.ToSlash(name)]
		if !ok {
			return nil, os.ErrNotExist
		}
		return []byte(s), nil
	}
	return fe
}

func errText(errs asm.ErrorList, src asm.Sources) string {
	var b bytes.Buffer
	errs.Fprint(&b, src)
	return b.String()
}

func TestAssembleOK(t *testing.T) {
	files, _ := filepath.Glob("testdata/ok/*.pto")
	if len(files) == 0 {
		t.Fatal("no testdata/ok files")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			obj, errs := asm.Assemble(diskFrontend, f, nil)
			if errs.HasErrors() || obj == nil {
				src, _ := os.ReadFile(f)
				t.Fatalf("errors:\n%s", errText(errs, asm.Sources{f: src}))
			}
			var b bytes.Buffer
			obj.FprintListing(&b)
			golden(t, strings.TrimSuffix(f, ".pto")+".listing", b.Bytes())
		})
	}
}

func golden(t *testing.T, path string, got []byte) { goldenfile.Check(t, path, got) }

var errorComment = regexp.MustCompile(`// ERROR "([^"]*)"`)

// TestAssembleErrors checks testdata/errors/*.pto: every line with `// ERROR "re"`
// must get an error at that line matching re, and no other line may get one.
// Several ERROR comments on one line expect several errors there.
func TestAssembleErrors(t *testing.T) {
	files, _ := filepath.Glob("testdata/errors/*.pto")
	if len(files) == 0 {
		t.Fatal("no testdata/errors files")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			want := map[int][]*regexp.Regexp{}
			for i, line := range strings.Split(string(src), "\n") {
				for _, m := range errorComment.FindAllStringSubmatch(line, -1) {
					want[i+1] = append(want[i+1], regexp.MustCompile(m[1]))
				}
			}
			_, errs := asm.Assemble(diskFrontend, f, nil)
			got := map[int][]*asm.Diagnostic{}
			for _, d := range errs {
				if d.Severity != asm.SevError {
					continue
				}
				if d.Span.Pos.File != f {
					t.Errorf("error in another file: %s", d.Error())
					continue
				}
				got[d.Span.Pos.Line] = append(got[d.Span.Pos.Line], d)
			}
			var lines []int
			for l := range want {
				lines = append(lines, l)
			}
			for l := range got {
				if want[l] == nil {
					lines = append(lines, l)
				}
			}
			sort.Ints(lines)
			for _, l := range lines {
				res, ds := want[l], got[l]
				used := make([]bool, len(ds))
				for _, re := range res {
					found := false
					for i, d := range ds {
						if !used[i] && re.MatchString(d.Msg) {
							used[i], found = true, true
							break
						}
					}
					if !found {
						t.Errorf("%s:%d: no error matching %q; got %s", f, l, re, msgs(ds))
					}
				}
				for i, d := range ds {
					if !used[i] {
						t.Errorf("unexpected error %s", d.Error())
					}
				}
			}
		})
	}
}

func msgs(ds []*asm.Diagnostic) string {
	if len(ds) == 0 {
		return "none"
	}
	var parts []string
	for _, d := range ds {
		parts = append(parts, fmt.Sprintf("%d:%d %q", d.Span.Pos.Line, d.Span.Pos.Col, d.Msg))
	}
	return strings.Join(parts, "; ")
}
