package hazard_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
	"github.com/ptoasm/ptoasm/machine/hazard"
	"github.com/ptoasm/ptoasm/pipes"
)

// TestBlocksBeyondCoresIgnoreSharing: which blocks of a launch with more
// blocks than cores share a physical core follows the timing; the findings
// must not. Under three profiles that land the second wave on different
// cores (checked: the last block each core ran differs), the detector
// reports the same RAW between block k and block 48 + k, all 48 of them,
// including the pairs that ran on one core one after the other.
func TestBlocksBeyondCoresIgnoreSharing(t *testing.T) {
	profiles := []struct {
		name string
		set  func(k string) string // the new value of key k, "" to keep it
	}{
		{"default", func(string) string { return "" }},
		{"slow dma", func(k string) string {
			if strings.HasPrefix(k, "dma.gm_") && strings.HasSuffix(k, ".bw") {
				return "4"
			}
			return ""
		}},
		{"slow vector heads", func(k string) string {
			if strings.HasPrefix(k, "vec.") && strings.HasSuffix(k, ".head") {
				return "20000"
			}
			return ""
		}},
	}
	obj, errs := asm.Assemble(fe, "testdata/waves_mapping.pto", nil)
	if errs.HasErrors() {
		t.Fatalf("assemble: %v", errs)
	}
	var reports, mappings []string
	for _, p := range profiles {
		prof := pipes.DefaultProfile()
		for _, k := range prof.Keys() {
			if v := p.set(k); v != "" {
				if err := prof.Set(k, v); err != nil {
					t.Fatal(err)
				}
			}
		}
		d := hazard.New(hazard.Options{})
		m, err := machine.New(obj, machine.Options{Profile: prof, TimingOnly: true, Observers: []machine.Observer{d}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := m.Run(); err != nil {
			t.Fatalf("%s: %v", p.name, err)
		}
		var b strings.Builder
		for _, f := range d.Findings() {
			fmt.Fprintf(&b, "%s %s:%d %s:%d count %d\n", f.Kind, f.First.File, f.First.Line, f.Second.File, f.Second.Line, f.Count)
		}
		reports = append(reports, b.String())
		var blocks []int64
		for c := 24; c < 24+48; c++ {
			v, ok := m.CoreAt(0, c)
			if !ok {
				t.Fatalf("%s: AIV %d ran nothing", p.name, c-24)
			}
			blocks = append(blocks, v.Block)
		}
		mappings = append(mappings, fmt.Sprint(blocks))
		t.Logf("%s: last block per AIV %v", p.name, blocks)
	}
	if want := "RAW testdata/waves_mapping.pto:31 testdata/waves_mapping.pto:33 count 48\n"; reports[0] != want {
		t.Errorf("default profile findings:\n%s\nwant:\n%s", reports[0], want)
	}
	for i := 1; i < len(profiles); i++ {
		if reports[i] != reports[0] {
			t.Errorf("%s findings differ from the default profile's:\n%s\nwant:\n%s", profiles[i].name, reports[i], reports[0])
		}
	}
	slices.Sort(mappings)
	if len(slices.Compact(mappings)) < 2 {
		t.Errorf("every profile put the second wave on the same cores (%s): the test shows nothing", mappings[0])
	}
}
