package machine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/parser"
	"github.com/ptoasm/ptoasm/pipes"
)

// assemble assembles .pto source text (written to a temp dir so includes and
// file() inits resolve) and fails the test on any diagnostic.
func assemble(t testing.TB, src string, defines ...asm.Define) *asm.Object {
	t.Helper()
	dir := t.TempDir()
	name := filepath.Join(dir, "t.pto")
	if err := os.WriteFile(name, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return assembleFile(t, name, defines...)
}

func assembleFile(t testing.TB, name string, defines ...asm.Define) *asm.Object {
	t.Helper()
	fe := asm.Frontend{ParseFile: parser.ParseFile, ParseExpr: parser.ParseExpr, ReadFile: os.ReadFile}
	obj, errs := asm.Assemble(fe, name, defines)
	if len(errs) > 0 {
		var b strings.Builder
		for _, e := range errs {
			b.WriteString(e.Error())
			b.WriteByte('\n')
		}
		t.Fatalf("assemble %s:\n%s", name, b.String())
	}
	return obj
}

// assembleErrs assembles src and returns its diagnostics, one a line ("" if
// none): for a program the assembler must refuse.
func assembleErrs(t testing.TB, src string) string {
	t.Helper()
	name := filepath.Join(t.TempDir(), "t.pto")
	if err := os.WriteFile(name, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	fe := asm.Frontend{ParseFile: parser.ParseFile, ParseExpr: parser.ParseExpr, ReadFile: os.ReadFile}
	_, errs := asm.Assemble(fe, name, nil)
	var b strings.Builder
	for _, e := range errs {
		b.WriteString(e.Error())
		b.WriteByte('\n')
	}
	return b.String()
}

// runObj runs obj and returns the result and error.
func runObj(t testing.TB, obj *asm.Object, opt Options) (*Machine, *Result, error) {
	t.Helper()
	m, err := New(obj, opt)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	r, err := m.Run()
	return m, r, err
}

// bodyProfile is the default profile without the kernel's start-up
// (kernel.start = 0), for tests that pin a mechanism's exact cycles from the
// run's start.
func bodyProfile() *pipes.Profile {
	p := pipes.DefaultProfile().Clone()
	p.KernelStart = 0
	return p
}

// recorder keeps copies of selected events.
type recorder struct {
	kinds map[EventKind]bool
	evs   []Event
}

func (r *recorder) Observe(e *Event) {
	if r.kinds != nil && !r.kinds[e.Kind] {
		return
	}
	c := *e
	c.Accesses = append([]Access(nil), e.Accesses...)
	c.Iter = append([]int64(nil), e.Iter...)
	c.Peers = append([]int32(nil), e.Peers...)
	c.Flags = append([]Flag(nil), e.Flags...)
	c.Words = append([]int64(nil), e.Words...)
	r.evs = append(r.evs, c)
}
