package programs_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ptoasm/ptoasm/asm"
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
			path, defs, sizes, err := programSizes(name)
			if err != nil {
				t.Fatal(err)
			}
			src, err := programs.FS.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if rankRE.Match(src) {
				for _, r := range []string{"2", "3", "8"} {
					sizes = append(sizes, []asm.Define{{Name: "RANKS", Value: r}})
				}
			}
			for _, more := range sizes {
				obj, errs := asm.Assemble(embedFrontend, path, append(slices.Clone(defs), more...))
				if errs.HasErrors() || obj == nil {
					t.Fatalf("assemble %s %v: %v", path, more, errs)
				}
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
