package mlir_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
	"github.com/ptoasm/ptoasm/machine/hazard"
	"github.com/ptoasm/ptoasm/parser"
	"github.com/ptoasm/ptoasm/parser/mlir"
)

// expectLine is a testdata file's expected finding: `// expect: KIND LINE
// [LINE]` (the first and second site's lines), or `// expect: clean`.
var expectLine = regexp.MustCompile(`(?m)^//\s*expect:\s*(.*?)\s*$`)

// defineLine is a testdata file's `// define: NAME=VALUE`: the launch's
// value of a kernel argument, as `-D NAME=VALUE` gives it.
var defineLine = regexp.MustCompile(`(?m)^//\s*define:\s*(\w+)=(\S+)\s*$`)

func defines(src []byte) []asm.Define {
	var ds []asm.Define
	for _, m := range defineLine.FindAllSubmatch(src, -1) {
		ds = append(ds, asm.Define{Name: string(m[1]), Value: string(m[2])})
	}
	return ds
}

// TestLoweringFindings lints every MLIR file under testdata (one per
// lowering fix, with its buggy twin) and requires exactly the warnings and
// errors its `// expect:` lines name, by kind and source lines.
func TestLoweringFindings(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.pto")
	if len(files) == 0 {
		t.Fatal("no testdata/*.pto")
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, m := range expectLine.FindAllSubmatch(src, -1) {
				if e := string(m[1]); e != "clean" {
					want = append(want, e)
				}
			}
			fe := asm.Frontend{ParseFile: mlir.ParseFile, ParseExpr: parser.ParseExpr,
				ReadFile: func(string) ([]byte, error) { return src, nil }}
			obj, errs := asm.Assemble(fe, path, defines(src))
			if errs.HasErrors() {
				t.Fatal(errs)
			}
			var m *machine.Machine
			det := hazard.New(hazard.Options{CoreName: func(rank, core int) string { return m.CoreName(rank, core) }})
			m, err = machine.New(obj, machine.Options{Observers: []machine.Observer{det}, TimingOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := m.Run(); err != nil {
				det.NoteError(err)
			}
			var got []string
			for _, f := range hazard.Merge(det.Findings(), hazard.CheckObject(obj)) {
				if f.Severity == "note" {
					continue
				}
				s := fmt.Sprintf("%s %d", f.Kind, f.First.Line)
				if f.Second.Line != 0 {
					s += fmt.Sprintf(" %d", f.Second.Line)
				}
				got = append(got, s)
			}
			slices.Sort(got)
			got = slices.Compact(got)
			slices.Sort(want)
			if strings.Join(got, "; ") != strings.Join(want, "; ") {
				t.Errorf("findings:\n got %q\nwant %q", got, want)
			}
		})
	}
}
