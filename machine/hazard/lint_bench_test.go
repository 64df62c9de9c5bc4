package hazard_test

import (
	"errors"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
	"github.com/ptoasm/ptoasm/machine/hazard"
	"github.com/ptoasm/ptoasm/programs"
)

// lint is what `ptoasm lint` does to one program at its default size:
// assemble, run timing-only with the detector attached, and merge in the
// static pass.
func lint(name string) ([]hazard.Finding, error) {
	path, ok := programs.Find(name)
	if !ok {
		return nil, errors.New("no such program")
	}
	obj, errs := asm.Assemble(embedFE, path, nil)
	if errs.HasErrors() {
		return nil, errs
	}
	det := hazard.New(hazard.Options{})
	m, err := machine.New(obj, machine.Options{Observers: []machine.Observer{det}, TimingOnly: true})
	if err != nil {
		return nil, err
	}
	if _, err := m.Run(); err != nil {
		var dl *machine.DeadlockError
		var f *machine.Fault
		if !errors.As(err, &dl) && !errors.As(err, &f) {
			return nil, err
		}
		det.NoteError(err)
	}
	return hazard.Merge(det.Findings(), hazard.CheckObject(obj)), nil
}

// BenchmarkLint times a whole lint of every shipped program; the budget is
// 100 ms per program (go test -bench Lint -run '^$' ./machine/hazard).
func BenchmarkLint(b *testing.B) {
	for _, name := range programs.List() {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if _, err := lint(name); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkStatic times the static flag-balance pass alone.
func BenchmarkStatic(b *testing.B) {
	for _, name := range programs.List() {
		path, _ := programs.Find(name)
		obj, errs := asm.Assemble(embedFE, path, nil)
		if errs.HasErrors() {
			b.Fatal(errs)
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				hazard.CheckObject(obj)
			}
		})
	}
}
