package trace

import (
	"io/fs"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
	"github.com/ptoasm/ptoasm/parser"
	"github.com/ptoasm/ptoasm/programs"
)

// assembleProgram assembles an embedded program.
func assembleProgram(t testing.TB, name string, defines ...asm.Define) *asm.Object {
	t.Helper()
	p, ok := programs.Find(name)
	if !ok {
		t.Fatalf("no program %s", name)
	}
	fe := asm.Frontend{ParseFile: parser.ParseFile, ParseExpr: parser.ParseExpr,
		ReadFile: func(n string) ([]byte, error) { return fs.ReadFile(programs.FS, n) }}
	obj, errs := asm.Assemble(fe, p, defines)
	if errs.HasErrors() {
		t.Fatalf("assemble %s: %v", name, errs)
	}
	return obj
}

// runProgram runs an embedded program with a Recorder attached.
func runProgram(t testing.TB, name string, opt Options, defines ...asm.Define) (*Recorder, *machine.Machine) {
	t.Helper()
	obj := assembleProgram(t, name, defines...)
	var m *machine.Machine
	if opt.CoreName == nil {
		opt.CoreName = func(r, c int) string { return m.CoreName(r, c) }
	}
	rec := New(opt)
	m, err := machine.New(obj, machine.Options{Observers: []machine.Observer{rec}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Run(); err != nil {
		t.Fatalf("run %s: %v", name, err)
	}
	return rec, m
}
