package programs_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"strings"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
	"github.com/ptoasm/ptoasm/machine/hazard"
	"github.com/ptoasm/ptoasm/parser"
	"github.com/ptoasm/ptoasm/parser/mlir"
	"github.com/ptoasm/ptoasm/programs"
)

// testHint is the `// test: -D NAME=VALUE ...` convention (programs/README.md):
// a comment line in a program's main file that shrinks it for `go test`.
var testHint = regexp.MustCompile(`^\s*//\s*test:(.*)$`)

// testDefines collects the -D overrides of every `// test:` line of the file
// at path in the embedded FS.
func testDefines(path string) ([]asm.Define, error) {
	src, err := fs.ReadFile(programs.FS, path)
	if err != nil {
		return nil, err
	}
	var defs []asm.Define
	sc := bufio.NewScanner(bytes.NewReader(src))
	for n := 1; sc.Scan(); n++ {
		m := testHint.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		f := strings.Fields(m[1])
		for i := 0; i < len(f); i++ {
			arg := f[i]
			switch {
			case arg == "-D" && i+1 < len(f):
				i++
				arg = f[i]
			case strings.HasPrefix(arg, "-D"):
				arg = arg[2:]
			default:
				return nil, fmt.Errorf("%s:%d: `// test:` takes only -D NAME=VALUE, got %q", path, n, arg)
			}
			name, val, ok := strings.Cut(arg, "=")
			if !ok || name == "" || val == "" {
				return nil, fmt.Errorf("%s:%d: -D %s: want NAME=VALUE", path, n, arg)
			}
			defs = append(defs, asm.Define{Name: name, Value: val})
		}
	}
	return defs, sc.Err()
}

func TestTestDefines(t *testing.T) {
	// Every program's hints parse; a broken hint would silently run the full size.
	for _, name := range programs.List() {
		path, _ := programs.Find(name)
		if _, err := testDefines(path); err != nil {
			t.Error(err)
		}
	}
}

// outcome is one run of a program: its result, the merged findings and the
// error the machine stopped with, if any.
type outcome struct {
	res      *machine.Result
	findings []hazard.Finding
	err      error
}

func runProgram(obj *asm.Object, timingOnly bool) (outcome, error) {
	var res *machine.Result
	var runErr error
	// hazard.Settle: a wait on a count several agents add to is decided
	// once the adds landing after it are known, in a second pass.
	det, err := hazard.Settle(hazard.Options{}, func(ho hazard.Options) (*hazard.Detector, error) {
		var m *machine.Machine
		ho.CoreName = func(rank, core int) string { return m.CoreName(rank, core) }
		ho.Placement = func(run, rank, core int) (machine.Placement, bool) { return m.Placement(run, rank, core) }
		det := hazard.New(ho)
		m, err := machine.New(obj, machine.Options{Observers: []machine.Observer{det}, TimingOnly: timingOnly})
		if err != nil {
			return nil, err
		}
		res, runErr = m.Run()
		if runErr != nil {
			var dl *machine.DeadlockError
			var f *machine.Fault
			if !errors.As(runErr, &dl) && !errors.As(runErr, &f) {
				// A cycle limit or a setup error is not a finding a program can expect.
				return nil, runErr
			}
			det.NoteError(runErr)
		}
		return det, nil
	})
	if err != nil {
		return outcome{}, err
	}
	return outcome{res: res, findings: hazard.Merge(det.Findings(), hazard.CheckObject(obj)), err: runErr}, nil
}

// reportJSON is what `ptoasm run --format json` prints, for the determinism check.
func reportJSON(o outcome) ([]byte, error) {
	r := *o.res
	r.Findings = []any{hazard.JSONFindings(o.findings)}
	return json.Marshal(&r)
}

// TestPrograms holds every shipped program to its own expectations: it runs
// with the hazard detector and the static pass, every output and cycle check
// passes (and could fail: no check warns that zeros would pass), and the
// findings are exactly the `expect finding` ones (faults and
// deadlocks included: an unexpected one fails). A second run must give a
// byte-identical report.
func TestPrograms(t *testing.T) {
	for _, name := range programs.List() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path, ok := programs.Find(name)
			if !ok {
				t.Fatalf("Find(%q) failed", name)
			}
			defs, err := testDefines(path)
			if err != nil {
				t.Fatal(err)
			}
			obj, errs := asm.Assemble(embedFrontend, path, defs)
			if errs.HasErrors() || obj == nil {
				t.Fatalf("assemble %s %v:\n%v", path, defs, errs)
			}
			o, err := runProgram(obj, false)
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			if le := (*machine.LaunchError)(nil); errors.As(o.err, &le) {
				// Not a finding: the launch cannot be carried out as written.
				t.Fatalf("run: %v", o.err)
			}
			if o.err != nil {
				// The run stopped early, so the output checks never ran; the
				// stop itself is a finding and must be expected below.
				t.Logf("run stopped: %v", o.err)
			}
			for _, c := range o.res.Checks {
				if !c.OK {
					t.Errorf("check %s failed (max_abs_err %g): %s", c.Name, c.MaxAbsErr, c.Msg)
				}
				if c.Warning != "" {
					// A shipped check must be able to fail a wrong kernel.
					t.Errorf("check %s: %s", c.Name, c.Warning)
				}
			}
			if o.err == nil {
				for _, x := range obj.Expects {
					if x.Kind == "output" || x.Kind == "cycles" {
						if len(o.res.Checks) == 0 {
							t.Errorf("%s: the program has %s expectations but the run produced no checks", path, x.Kind)
						}
						break
					}
				}
			}
			for _, p := range hazard.CheckExpectations(obj, o.findings) {
				t.Error(p)
			}
			if len(o.res.Faults) > 0 && o.err == nil {
				t.Errorf("faults without a stopped run: %q", o.res.Faults)
			}
			if t.Failed() {
				var b strings.Builder
				hazard.WriteText(&b, o.findings, obj.Sources)
				t.Logf("findings:\n%s", b.String())
				return
			}

			// `ptoasm lint` runs timing-only (the data slice keeps only what
			// control flow reads); it must find exactly what the full run finds.
			ot, err := runProgram(obj, true)
			if err != nil {
				t.Fatalf("timing-only run: %v", err)
			}
			fj, err1 := json.Marshal(hazard.JSONFindings(o.findings))
			tj, err2 := json.Marshal(hazard.JSONFindings(ot.findings))
			if err1 != nil || err2 != nil {
				t.Fatalf("json: %v, %v", err1, err2)
			}
			if !bytes.Equal(fj, tj) {
				t.Errorf("timing-only findings differ from the full run's:\n%s\n%s", fj, tj)
			}
			if ot.res.Cycles != o.res.Cycles {
				t.Errorf("timing-only run took %d cycles, the full run %d", ot.res.Cycles, o.res.Cycles)
			}

			// Determinism: a fresh assembly and run gives the same report.
			if testing.Short() {
				return
			}
			obj2, _ := asm.Assemble(embedFrontend, path, defs)
			o2, err := runProgram(obj2, false)
			if err != nil {
				t.Fatalf("second run: %v", err)
			}
			j1, err1 := reportJSON(o)
			j2, err2 := reportJSON(o2)
			if err1 != nil || err2 != nil {
				t.Fatalf("json: %v, %v", err1, err2)
			}
			if !bytes.Equal(j1, j2) {
				t.Errorf("two runs gave different reports:\n%s\n%s", j1, j2)
			}
		})
	}
}

// TestProgramsFmtFixedPoint: formatting a formatted program changes nothing,
// for every .pto file, included files too.
func TestProgramsFmtFixedPoint(t *testing.T) {
	_ = fs.WalkDir(programs.FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".pto") {
			return err
		}
		src, err := fs.ReadFile(programs.FS, p)
		if err != nil {
			t.Fatal(err)
		}
		if mlir.IsMLIR(src) {
			return nil // ptoasm fmt prints PTO-AS; PTOAS files are not its input
		}
		once, err := format(p, src)
		if err != nil {
			t.Errorf("%s: %v", p, err)
			return nil
		}
		twice, err := format(p, once)
		if err != nil {
			t.Errorf("%s: formatted text does not parse: %v", p, err)
			return nil
		}
		if !bytes.Equal(once, twice) {
			t.Errorf("%s: fmt is not a fixed point", p)
		}
		return nil
	})
}

func format(name string, src []byte) ([]byte, error) {
	f, errs := parser.ParseFile(name, src)
	if errs.HasErrors() {
		return nil, errs
	}
	var b bytes.Buffer
	if err := asm.Fprint(&b, f); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
