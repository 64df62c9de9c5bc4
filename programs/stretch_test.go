package programs_test

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
	"github.com/ptoasm/ptoasm/machine/hazard"
	"github.com/ptoasm/ptoasm/pipes"
	"github.com/ptoasm/ptoasm/programs"
)

// lintStretched is lintWith (the detector's findings, the static pass
// left out: it does not run the machine) with stretches on or off
// (machine.Options.NoStretches), the run's result and error as text, and
// whether the run used stretches and was repeated without them.
func lintStretched(obj *asm.Object, prof *pipes.Profile, noStr bool) (out string, ran, reran bool, err error) {
	out, m, err := lintOptions(obj, machine.Options{Profile: prof, NoStretches: noStr})
	if err != nil {
		return "", false, false, err
	}
	ran, reran = m.Stretched()
	return out, ran, reran, nil
}

// lintOptions is lintWith under machine options opt (TimingOnly and the
// detector added): the findings, the run's result and error as text.
func lintOptions(obj *asm.Object, opt machine.Options) (string, *machine.Machine, error) {
	var m *machine.Machine
	det := hazard.New(hazard.Options{CoreName: func(rank, core int) string { return m.CoreName(rank, core) }})
	opt.Observers, opt.TimingOnly = []machine.Observer{det}, true
	m, err := machine.New(obj, opt)
	if err != nil {
		return "", nil, err
	}
	res, runErr := m.Run()
	if runErr != nil {
		det.NoteError(runErr)
	}
	b, err := json.MarshalIndent(det.Findings(), "", " ")
	if err != nil {
		return "", nil, err
	}
	r, err := json.Marshal(res)
	if err != nil {
		return "", nil, err
	}
	return fmt.Sprintf("%s\nresult: %s\nerr: %v", b, r, runErr), m, nil
}

// rankRE finds a program with a rank count to set, as
// scripts/lint-compare.sh does.
var rankRE = regexp.MustCompile(`\bRANKS\b`)

// rankedSizes is programSizes with, where the program has RANKS, a size
// for each of ranks added.
func rankedSizes(t *testing.T, name string, ranks ...string) (string, []asm.Define, [][]asm.Define) {
	t.Helper()
	path, defs, sizes, err := programSizes(name)
	if err != nil {
		t.Fatal(err)
	}
	src, err := programs.FS.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if rankRE.Match(src) {
		for _, r := range ranks {
			sizes = append(sizes, []asm.Define{{Name: "RANKS", Value: r}})
		}
	}
	return path, defs, sizes
}

// assembleSize assembles the program at path with defs and more.
func assembleSize(t *testing.T, path string, defs, more []asm.Define) *asm.Object {
	t.Helper()
	obj, errs := asm.Assemble(embedFrontend, path, append(slices.Clone(defs), more...))
	if errs.HasErrors() || obj == nil {
		t.Fatalf("assemble %s %v: %v", path, more, errs)
	}
	return obj
}

// TestStretchesKeepFindings lints every program (at its test sizes, and
// at 2 and 8 ranks where it has RANKS) with a core's local events run
// ahead of the clock (stretches, machine/stretch.go) and without, under
// the default profile and two that move the interleaving, and requires
// the same findings in every field (counts and named instances too) and
// the same result: the detector takes stretches (StretchObserver), so the
// order in which other cores' events reach it must not show. A run that
// ends in an error is repeated without stretches, and the detector must
// report on the repeat alone (Restart). Lint round 17,
// docs/performance.md.
func TestStretchesKeepFindings(t *testing.T) {
	if testing.Short() {
		t.Skip("lints every program six times")
	}
	var profs []*pipes.Profile
	profs = append(profs, nil)
	for _, p := range timingPerturbations {
		if p.name == "dma latency 0" || p.name == "slow scalar" {
			prof, err := p.apply()
			if err != nil {
				t.Fatal(err)
			}
			profs = append(profs, prof)
		}
	}
	type count struct{ runs, ran, reran int }
	counts := make(chan count, len(programs.List()))
	t.Run("programs", func(t *testing.T) {
		for _, name := range programs.List() {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				var n count
				defer func() { counts <- n }()
				path, defs, sizes := rankedSizes(t, name, "2", "8")
				for _, more := range sizes {
					obj := assembleSize(t, path, defs, more)
					for i, prof := range profs {
						want, _, _, err := lintStretched(obj, prof, true)
						if err != nil {
							t.Fatal(err)
						}
						got, ran, reran, err := lintStretched(obj, prof, false)
						if err != nil {
							t.Fatal(err)
						}
						n.runs++
						if ran {
							n.ran++
						}
						if reran {
							n.reran++
						}
						if diff := cmp.Diff(strings.Split(want, "\n"), strings.Split(got, "\n")); diff != "" {
							t.Errorf("%v, profile %d: without stretches (-) and with (+):\n%s", more, i, diff)
						}
					}
				}
			})
		}
	})
	close(counts)
	var all count
	for n := range counts {
		all.runs, all.ran, all.reran = all.runs+n.runs, all.ran+n.ran, all.reran+n.reran
	}
	t.Logf("%d lints, %d with stretches, %d of them repeated without", all.runs, all.ran, all.reran)
	if all.ran < all.runs/2 || all.reran == 0 {
		t.Fatalf("%d lints, %d with stretches, %d repeated: the test exercises too little", all.runs, all.ran, all.reran)
	}
}
