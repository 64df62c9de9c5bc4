package hazard_test

import (
	"os"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
	"github.com/ptoasm/ptoasm/machine/hazard"
	"github.com/ptoasm/ptoasm/parser"
)

var fe = asm.Frontend{ParseFile: parser.ParseFile, ParseExpr: parser.ParseExpr, ReadFile: os.ReadFile}

// runDetector runs obj with a detector attached and returns it; a run error
// is the detector's to report.
func runDetector(t *testing.T, obj *asm.Object, opt machine.Options) *hazard.Detector {
	t.Helper()
	d := hazard.New(hazard.Options{})
	opt.Observers = append(opt.Observers, d)
	m, err := machine.New(obj, opt)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Run(); err != nil {
		d.NoteError(err)
	}
	return d
}

// End to end: assemble a program, run it on the machine with the detector
// attached, and hold the verdict to the program's sync.
func TestEndToEnd(t *testing.T) {
	for _, tc := range []struct {
		fixed string
		want  []string
	}{{"0", []string{hazard.KindRAW}}, {"1", nil}} {
		t.Run("FIXED="+tc.fixed, func(t *testing.T) {
			obj, errs := asm.Assemble(fe, "testdata/e2e_raw.pto", []asm.Define{{Name: "FIXED", Value: tc.fixed}})
			if errs.HasErrors() {
				t.Fatalf("assemble: %v", errs)
			}
			d := runDetector(t, obj, machine.Options{})
			var got []string
			for _, f := range d.Findings() {
				got = append(got, f.Kind)
			}
			if len(got) != len(tc.want) || (len(got) > 0 && got[0] != tc.want[0]) {
				t.Errorf("got %v, want %v", d.Findings(), tc.want)
			}
			for _, k := range obj.Kernels {
				if fs := hazard.CheckFlags(k); len(fs) != 0 {
					t.Errorf("static: %+v", fs)
				}
			}
		})
	}
}
