package hazard_test

import (
	"fmt"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
	"github.com/ptoasm/ptoasm/machine/hazard"
)

// Two accesses of one kernel in loops of two depths are ordered by the
// loops around both, as accesses of one depth are (exec.go,
// intendedBefore): a2a_grid_no_free's load of round it sits in the round
// loop's body, the puts of round it + 1 into the same slot in a loop over
// destinations inside it, and with the Free wait dropped the two race.
// Round 0's load is meant before round 1's put: WAR `ld, put`. Compared by
// source only (the puts are written first) it was RAW `put, ld`, the hint
// pointing the wrong way. NI = 1 has no second round: clean.
func TestOneKernelLoopsOfTwoDepths(t *testing.T) {
	for _, defs := range [][]asm.Define{
		{{Name: "RANKS", Value: "4"}, {Name: "NB", Value: "2"}},
		{{Name: "RANKS", Value: "3"}, {Name: "NB", Value: "1"}, {Name: "NI", Value: "3"}},
		{{Name: "RANKS", Value: "2"}, {Name: "NB", Value: "2"}, {Name: "NI", Value: "1"}},
	} {
		t.Run(fmt.Sprint(defs), func(t *testing.T) {
			obj, errs := asm.Assemble(fe, "../../programs/hazards/a2a_grid_no_free.pto", defs)
			if errs.HasErrors() {
				t.Fatalf("assemble: %v", errs)
			}
			d := runDetector(t, obj, machine.Options{TimingOnly: true})
			fs := d.Findings()
			ni := defs[len(defs)-1]
			for _, f := range fs {
				if f.Kind == hazard.KindRAW {
					t.Errorf("RAW at lines %d, %d: round it's load is meant before round it + 1's put", f.First.Line, f.Second.Line)
				}
			}
			if ni.Name == "NI" && ni.Value == "1" {
				if len(fs) != 0 {
					t.Errorf("one round: want clean, got %d findings, the first %s", len(fs), fs[0].Kind)
				}
				return
			}
			// WAR `ld, put`, NB RANKS (RANKS - 1) pipe pairs, and nothing else.
			for _, p := range hazard.CheckExpectations(obj, fs) {
				t.Error(p)
			}
		})
	}
}
