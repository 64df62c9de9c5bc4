package programs_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/parser/mlir"
	"github.com/ptoasm/ptoasm/pipes"
)

// corpusDirs are where scripts/fetch-ptoas-corpus.sh leaves the PTOAS
// corpus (git-ignored): this checkout's corpus/ (parser/mlir's corpus test
// reads the same directory; a worktree can link it).
var corpusDirs = []string{"../corpus"}

// corpusPerturbations is the part of timingPerturbations that moves an
// AIV/AIC kernel of one rank and one block, the shape of every corpus
// kernel: DMA, vector, cube and scalar speeds and flag hand-offs.
var corpusPerturbations = []string{"dma latency 0", "dma latency x2", "vector heads 20000", "cube head 20000", "flag hand-off 1000", "slow scalar"}

// corpusMovers are the corpus kernels whose findings still move with
// timing, each with what moves (docs/hazards.md, "What each verdict
// depends on"). The list only shrinks: a kernel that moves and is not
// here fails, and so does one here that no longer moves.
var corpusMovers = map[string]string{}

// corpusFrontend reads a corpus kernel from disk, PTOAS MLIR as an A2/A3
// kernel (as scripts/ptoas-corpus-report.sh does) and PTO-AS as itself.
func corpusFrontend() asm.Frontend { return mlir.Frontend(mlir.Options{Arch: "a3"}) }

// TestCorpusFindingsIgnoreTiming lints every kernel of the PTOAS corpus
// (read as an A2/A3 kernel, as scripts/ptoas-corpus-report.sh does) under
// corpusPerturbations and holds it to TestFindingsIgnoreTiming's rule: the
// same findings, and on the same path the same named instances. The corpus
// is unsynchronised code in loops, where a late write meeting only the
// latest read of a site used to add or drop a WAR (ControlFlow/
// control_flow_nested_vec.pto); at 2a2e115, 58 of the 201 kernels moved.
// The kernels of corpusMovers still do. Skipped when the corpus is not
// fetched.
func TestCorpusFindingsIgnoreTiming(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the corpus is linted under six profiles")
	}
	dir := ""
	for _, d := range corpusDirs {
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			dir = d
			break
		}
	}
	if dir == "" {
		t.Skip("no PTOAS corpus in corpus/ (scripts/fetch-ptoas-corpus.sh fetches it)")
	}
	var profs []*pipes.Profile
	for _, name := range corpusPerturbations {
		i := slices.IndexFunc(timingPerturbations, func(p perturbation) bool { return p.name == name })
		if i < 0 {
			t.Fatalf("%q is not in timingPerturbations", name)
		}
		prof, err := timingPerturbations[i].apply()
		if err != nil {
			t.Fatal(err)
		}
		profs = append(profs, prof)
	}
	fe := corpusFrontend()
	var files []string
	filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err == nil && !e.IsDir() && strings.HasSuffix(p, ".pto") {
			files = append(files, p)
		}
		return nil
	})
	linted := 0
	for _, f := range files {
		obj, errs := asm.Assemble(fe, f, nil)
		if errs.HasErrors() || obj == nil || len(obj.Kernels) == 0 || obj.Launch == nil {
			continue // TestCorpus judges what does not assemble to a kernel
		}
		linted++
		rel, _ := filepath.Rel(dir, f)
		t.Run(rel, func(t *testing.T) {
			t.Parallel()
			base, basePath, err := lintWith(obj, nil)
			if err != nil {
				t.Skip(err)
			}
			why, known := corpusMovers[filepath.ToSlash(rel)]
			moves := false
			for i, prof := range profs {
				fs, fsPath, err := lintWith(obj, prof)
				if err != nil {
					t.Errorf("%s: %v", corpusPerturbations[i], err)
					continue
				}
				if moved := sameReport(base, fs, basePath, fsPath); moved != "" {
					moves = true
					if known {
						t.Logf("known (%s): under %q %s", why, corpusPerturbations[i], moved)
					} else {
						t.Errorf("under %q %s", corpusPerturbations[i], moved)
					}
				}
			}
			if known && !moves {
				t.Errorf("no longer moves with timing: take it out of corpusMovers")
			}
		})
	}
	t.Logf("%d corpus kernels linted under %d profiles", linted, len(profs))
}
