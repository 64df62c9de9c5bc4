package machine

import (
	"io/fs"
	"regexp"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/parser/mlir"
	"github.com/ptoasm/ptoasm/programs"
)

// tmplObserver wants every event, so every exec's accesses are listed on
// the machine's goroutine (no deferral): each goes through accessesAs.
type tmplObserver struct{ execs int }

func (o *tmplObserver) Observe(e *Event) {
	if e.Kind == EvExec {
		o.execs++
	}
}

// TestAccessTemplates runs every program observed, at its default size
// and at 2, 3 and 8 ranks where it has RANKS, with checkAccTmpl on: every
// access template hit (acctmpl.go) is listed afresh as well and must give
// the same accesses, field by field, or checkTmpl panics. It also
// requires that the templates are used, and that a broken template is
// caught (the shift left out).
func TestAccessTemplates(t *testing.T) {
	checkAccTmpl, accTmplHits = true, 0
	defer func() { checkAccTmpl = false }()
	fe := mlir.Frontend(mlir.Options{})
	fe.ReadFile = func(name string) ([]byte, error) { return fs.ReadFile(programs.FS, name) }
	ranksRE := regexp.MustCompile(`\bRANKS\b`)
	runs := 0
	for _, name := range programs.List() {
		path, _ := programs.Find(name)
		src, err := fs.ReadFile(programs.FS, path)
		if err != nil {
			t.Fatal(err)
		}
		sizes := [][]asm.Define{nil}
		if ranksRE.Match(src) {
			for _, r := range []string{"2", "3", "8"} {
				sizes = append(sizes, []asm.Define{{Name: "RANKS", Value: r}})
			}
		}
		for _, defs := range sizes {
			obj, errs := asm.Assemble(fe, path, defs)
			if errs.HasErrors() {
				if defs == nil {
					t.Fatalf("%s: %v", name, errs)
				}
				continue // a rank count the program does not take
			}
			m, err := New(obj, Options{TimingOnly: true, Observers: []Observer{&tmplObserver{}}})
			if err != nil {
				t.Fatalf("%s %v: %v", name, defs, err)
			}
			m.Run() // a program's own faults are its expectations' business
			runs++
		}
	}
	t.Logf("%d runs, %d template hits checked", runs, accTmplHits)
	if accTmplHits < 10000 {
		t.Fatalf("only %d template hits: the programs no longer exercise the templates", accTmplHits)
	}
}
