package programs_test

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/pipes"
	"github.com/ptoasm/ptoasm/programs"
)

// skew is one per-unit perturbation (the profile's jitter.* keys): unlike
// timingPerturbations, which move every unit of a kind together, it slows
// each pipe, scalar and SDMA queue of each core by its own factor and
// starts each core late by its own delay, so one AIV runs behind its twin,
// one rank starts late, one MTE2 crawls.
type skew struct {
	seed  int
	max   string // jitter.max: the largest slow-down of one unit
	start string // jitter.start: the largest start delay of a core, cycles
}

func (s skew) String() string {
	return fmt.Sprintf("--set jitter.seed=%d --set jitter.max=%s --set jitter.start=%s", s.seed, s.max, s.start)
}

func (s skew) profile() (*pipes.Profile, error) {
	prof := pipes.DefaultProfile()
	for k, v := range map[string]string{"jitter.seed": strconv.Itoa(s.seed), "jitter.max": s.max, "jitter.start": s.start} {
		if err := prof.Set(k, v); err != nil {
			return nil, err
		}
	}
	return prof, nil
}

// skewShapes are the kinds of skew each seed is drawn in: moderate
// factors with late starts, one unit far behind (a factor up to 50), and a
// late start alone (a late rank or core, no slow unit).
var skewShapes = []skew{{max: "8", start: "10000"}, {max: "50", start: "0"}, {max: "1", start: "200000"}}

// skews lists the skews of a run: the shapes at seeds 1..n (n = 1 by
// default; PTOASM_SKEW=N asks for N seeds each).
func skews(n int) []skew {
	var out []skew
	for seed := 1; seed <= n; seed++ {
		for _, sh := range skewShapes {
			sh.seed = seed
			out = append(out, sh)
		}
	}
	return out
}

// skewMovers are the programs whose verdict still moves under a skew, each
// with why (docs/hazards.md, "What each verdict depends on"). The list only
// shrinks: a program that moves and is not here fails, and so does one here
// that no longer moves at the skews that found it.
// Those marked wide move only at a size the wide mode draws.
var skewMovers = map[string]string{}

// TestFindingsIgnoreSkew lints every program at its sizes (programSizes)
// under per-unit skews and holds it to TestFindingsIgnoreTiming's rule
// (sameReport): the same findings, and on the same path the same named
// instances. By default each program runs under the three skew shapes of one
// seed; PTOASM_SKEW=N runs N seeds each, and PTOASM_SKEW_CORPUS=1 adds
// the PTOAS corpus (corpus/). PTOASM_SKEW_RUN=RE keeps the programs (and
// corpus files, as corpus/PATH) whose name matches RE.
func TestFindingsIgnoreSkew(t *testing.T) {
	n := envInt("PTOASM_SKEW", 1)
	wide := os.Getenv("PTOASM_SKEW") != ""
	t.Cleanup(func() {
		t.Logf("%d skews: %d cases (program or kernel x size), %d skewed lints, %d stopped at a limit, %d moved",
			len(skews(n)), skewCount.cases.Load(), skewCount.lints.Load(), skewCount.limited.Load(), skewCount.moved.Load())
	})
	ss := skews(n)
	profs := make([]*pipes.Profile, len(ss))
	for i, s := range ss {
		prof, err := s.profile()
		if err != nil {
			t.Fatal(err)
		}
		profs[i] = prof
	}
	only := func(string) bool { return true }
	if re := os.Getenv("PTOASM_SKEW_RUN"); re != "" {
		only = regexp.MustCompile(re).MatchString
	}
	for _, name := range programs.List() {
		if !only(name) {
			continue
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path, defs, sizes, err := programSizes(name)
			if err != nil {
				t.Fatal(err)
			}
			own := len(sizes)
			if wide {
				// The sweep's sizes too: allgather_gemm's modes, the rings
				// at 2-8 ranks, and drawn loop and rank counts.
				sizes = append(sizes, sweepExtraSizes[name]...)
				sizes = append(sizes, drawSizes(sweepSeed(1, name), sweepConsts(path), 4)...)
			}
			var moved []string
			for i, more := range sizes {
				obj, errs := asm.Assemble(embedFrontend, path, append(slices.Clone(defs), more...))
				if errs.HasErrors() || obj == nil {
					if i >= own {
						continue // a drawn size the program's constraints reject
					}
					t.Fatalf("assemble %s at %v: %v", path, more, errs)
				}
				moved = append(moved, skewCase(t, obj, fmt.Sprintf("%v", more), ss, profs)...)
			}
			checkMovers(t, name, moved)
		})
	}
	if os.Getenv("PTOASM_SKEW_CORPUS") == "" {
		return
	}
	eachCorpusKernel(t, only, func(t *testing.T, rel string, obj *asm.Object) {
		checkMovers(t, "corpus/"+rel, skewCase(t, obj, "", ss, profs))
	})
}

// skewCase lints obj unperturbed and under each skew and returns what
// moved, one line per skew. A run that meets the CPU budget (a poll loop a
// skew made spin for long) is skipped, not compared.
func skewCase(t *testing.T, obj *asm.Object, size string, ss []skew, profs []*pipes.Profile) []string {
	const limit = 60 * time.Second
	base, basePath, ok, err := sweepLint(obj, nil, limit)
	if err != nil || !ok {
		t.Logf("at %s: default profile: skipped (%v)", size, err)
		return nil
	}
	skewCount.cases.Add(1)
	var moved []string
	for i, prof := range profs {
		fs, fsPath, ok, err := sweepLint(obj, prof, limit)
		skewCount.lints.Add(1)
		if err != nil {
			t.Errorf("at %s under %s: %v", size, ss[i], err)
			continue
		}
		if !ok {
			skewCount.limited.Add(1)
			t.Logf("at %s under %s: stopped at the %v limit", size, ss[i], limit)
			continue
		}
		b, fs := lostWakeup(base, fs)
		if m := sameReport(b, fs, basePath, fsPath); m != "" {
			skewCount.moved.Add(1)
			moved = append(moved, fmt.Sprintf("at %s under %s %s", size, ss[i], m))
		}
	}
	return moved
}

// skewCount counts what TestFindingsIgnoreSkew covered.
var skewCount struct{ cases, lints, limited, moved atomic.Int64 }

// checkMovers holds a program's moves to skewMovers.
func checkMovers(t *testing.T, name string, moved []string) {
	why, listed := skewMovers[name]
	switch {
	case len(moved) > 0 && !listed:
		t.Errorf("the verdict moves with a per-unit skew:\n%s", strings.Join(moved, "\n"))
	case len(moved) > 0:
		t.Logf("moves, as listed (%s):\n%s", why, strings.Join(moved, "\n"))
	case listed && os.Getenv("PTOASM_SKEW") == "" && !strings.HasPrefix(why, "wide: "):
		t.Errorf("skewMovers lists %s (%s), which no longer moves: take it off the list", name, why)
	}
}
