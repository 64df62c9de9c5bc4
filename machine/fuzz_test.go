package machine_test

import (
	"io/fs"
	"path"
	"strings"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/internal/fuzzseed"
	"github.com/ptoasm/ptoasm/machine"
	"github.com/ptoasm/ptoasm/machine/hazard"
	"github.com/ptoasm/ptoasm/parser"
	"github.com/ptoasm/ptoasm/pipes"
	"github.com/ptoasm/ptoasm/programs"
)

// FuzzRun feeds arbitrary programs through the whole pipeline — parse, assemble,
// run with the hazard detector attached — which must report errors, never panic.
// The seeds are the small embedded programs; the corpus lives in testdata/fuzz.
func FuzzRun(f *testing.F) {
	for _, name := range programs.List() {
		// Whole programs are test cases; fuzzing starts from fuzzseed's
		// few small ones (fuzzseed.Files).
		if fuzzseed.Fuzzing() || !strings.HasPrefix(name, "hazards/") && name != "vec_add" && !strings.HasPrefix(name, "ffn_grid/unified") {
			continue
		}
		p, _ := programs.Find(name)
		src, err := fs.ReadFile(programs.FS, p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(src))
	}
	// The small PTO-AS files of the repository: the recent instructions and
	// features (gathers through index tiles, im2col, quantised stores, tile
	// views, fifos, #unit, sorts, waves of blocks) in a run.
	for _, src := range fuzzseed.Files(f, 12<<10, fuzzseed.Bool(false), "programs/hazards", "programs/gemm_unit",
		"programs/vec_ring", "programs/conv", "machine/testdata", "asm/testdata/ok") {
		f.Add(string(src))
	}
	prof := pipes.DefaultProfile()
	// A fortieth of the tests' cycle budget when fuzzing: a mutated loop
	// bound or block count runs to the budget, twice an input, and a run of
	// hundreds of blocks on every core to 20000 cycles took seconds.
	maxCycles := int64(200_000)
	if fuzzseed.Fuzzing() {
		maxCycles = 5_000
	}
	f.Fuzz(func(t *testing.T, src string) {
		const main = "fuzz.pto"
		fe := asm.Frontend{
			ParseFile: parser.ParseFile,
			ParseExpr: parser.ParseExpr,
			ReadFile: func(name string) ([]byte, error) {
				if name == main {
					return []byte(src), nil
				}
				// Includes resolve against the embedded programs, so seeds that
				// include a common file still assemble.
				return fs.ReadFile(programs.FS, path.Clean(path.Join("ffn_grid", path.Base(name))))
			},
		}
		obj, errs := asm.Assemble(fe, main, nil)
		if errs.HasErrors() || obj == nil {
			return
		}
		// Both the full run and what `ptoasm lint` does (timing-only, with
		// the control slice).
		for _, timing := range []bool{false, true} {
			det := hazard.New(hazard.Options{})
			m, err := machine.New(obj, machine.Options{Profile: prof, MaxCycles: maxCycles, TimingOnly: timing,
				Observers: []machine.Observer{det}})
			if err != nil {
				return
			}
			if _, err := m.Run(); err != nil {
				det.NoteError(err)
			}
			det.Findings()
		}
	})
}
