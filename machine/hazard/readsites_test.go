package hazard_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
	"github.com/ptoasm/ptoasm/machine/hazard"
	"github.com/ptoasm/ptoasm/pipes"
)

// before counts the reader's instances that started before the writer
// finished.
func (p *lineProbe) before() int {
	n := 0
	for _, s := range p.readerStarts {
		if s < p.writerEnd {
			n++
		}
	}
	return n
}

// TestLateWriteMeetsEveryReadSite: a tload races the vector unit's reads of
// its tile at two sites in a loop (hazards/late_load_two_readers.pto).
// Whether the load lands before the first read, between the iterations or
// after all of them, the findings are the same pairs of sites, each naming
// the same instance (the latest iteration): a cell used to keep one read
// per agent, so a load landing after both sites' reads met only the later
// site and the RAW with the earlier one depended on the load's latency.
func TestLateWriteMeetsEveryReadSite(t *testing.T) {
	const prog = "hazards/late_load_two_readers.pto"
	const ld, a = 22, 25 // the tload and the first reader
	want := []string{"RAW 22>25 iter [2]", "RAW 22>27 iter [2]"}
	seen := map[int]bool{}
	for _, tc := range []struct {
		name string
		set  [][2]string
	}{
		{"default", nil},
		{"dma latency 0", [][2]string{{"dma.gm_ub.latency", "0"}}},
		{"dma and l2 latency 0", [][2]string{{"dma.gm_ub.latency", "0"}, {"l2.miss_latency", "0"}}},
		{"scalar op 40", [][2]string{{"scalar.op", "40"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			probe := &lineProbe{writer: ld, reader: a}
			det := lintProfile(t, prog, tc.set, probe)
			seen[probe.before()] = true
			var got []string
			for _, f := range det.Findings() {
				got = append(got, fmt.Sprintf("%s %d>%d iter %v", f.Kind, f.First.Line, f.Second.Line, f.Second.Iter))
			}
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("%d of 3 reads at line %d started before the load ended: findings %q, want %q", probe.before(), a, got, want)
			}
		})
	}
	// The profiles must land the load both after every read and among them.
	if !seen[3] || len(seen) < 2 {
		t.Errorf("reads started before the load ended, per profile: %v; want all 3 in one and fewer in another", seen)
	}
}

// lintProfile runs program prog under the default profile with the
// overrides set, the detector and probe observing, and returns the
// detector.
func lintProfile(t *testing.T, prog string, set [][2]string, probe machine.Observer) *hazard.Detector {
	t.Helper()
	obj, errs := asm.Assemble(embedFE, prog, nil)
	if errs.HasErrors() {
		t.Fatalf("assemble: %v", errs)
	}
	prof := pipes.DefaultProfile()
	for _, kv := range set {
		if err := prof.Set(kv[0], kv[1]); err != nil {
			t.Fatal(err)
		}
	}
	det := hazard.New(hazard.Options{})
	m, err := machine.New(obj, machine.Options{Profile: prof, Observers: []machine.Observer{det, probe}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Run(); err != nil {
		t.Fatal(err)
	}
	return det
}
