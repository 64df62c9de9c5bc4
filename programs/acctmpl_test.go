package programs_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ptoasm/ptoasm/machine"
	"github.com/ptoasm/ptoasm/programs"
)

// TestAccessTemplatesKeepFindings lints every program (at its test sizes,
// and at 2, 3 and 8 ranks where it has RANKS) with an observed op's
// accesses listed from its plan's template (machine/acctmpl.go) and
// listed afresh (machine.Options.NoAccessTemplates), and requires the same
// findings in every field and the same result (lint round 20,
// docs/performance.md). machine.TestAccessTemplates checks each template
// hit access by access.
func TestAccessTemplatesKeepFindings(t *testing.T) {
	if testing.Short() {
		t.Skip("lints every program twice at several sizes")
	}
	for _, name := range programs.List() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path, defs, sizes := rankedSizes(t, name, "2", "3", "8")
			for _, more := range sizes {
				obj := assembleSize(t, path, defs, more)
				want, _, err := lintOptions(obj, machine.Options{NoAccessTemplates: true})
				if err != nil {
					t.Fatal(err)
				}
				got, _, err := lintOptions(obj, machine.Options{})
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(strings.Split(want, "\n"), strings.Split(got, "\n")); diff != "" {
					t.Errorf("%v: listed afresh (-) and from templates (+):\n%s", more, diff)
				}
			}
		})
	}
}
