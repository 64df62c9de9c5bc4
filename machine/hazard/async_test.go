package hazard

import (
	"encoding/json"
	"io/fs"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
	"github.com/ptoasm/ptoasm/parser"
	"github.com/ptoasm/ptoasm/parser/mlir"
	"github.com/ptoasm/ptoasm/programs"
)

// TestParallelSameFindings runs every shipped program with the detector on
// the machine's goroutine and on its own (every event through the batches,
// from the first), timing-only as lint runs it, and requires identical
// findings: the hand-off must lose, reorder or alias nothing. The data mode
// sends the same events (programs_test holds the two modes' findings equal).
func TestParallelSameFindings(t *testing.T) {
	old := serialPrefix
	serialPrefix = 0
	defer func() { serialPrefix = old }()
	pipelined := 0
	eachProgram(t, func(name string, obj *asm.Object) {
		want := lintTiming(t, obj, true)
		if New(Options{}).parallel() {
			pipelined++
		}
		if got := lintTiming(t, obj, false); got != want {
			t.Errorf("%s: findings differ with the detector on its own goroutine (-serial +parallel):\n%s", name, cmp.Diff(want, got))
		}
	})
	if pipelined == 0 {
		t.Log("one CPU: the parallel path fell back to serial")
	}
}

// eachProgram assembles every shipped program, in either syntax, and calls fn.
func eachProgram(t *testing.T, fn func(name string, obj *asm.Object)) {
	t.Helper()
	for _, name := range programs.List() {
		fn(name, assembleProgram(t, name))
	}
}

// assembleProgram assembles shipped program name, in either syntax, with defs.
func assembleProgram(t *testing.T, name string, defs ...asm.Define) *asm.Object {
	t.Helper()
	fe := asm.Frontend{
		ParseFile: func(name string, src []byte) (*asm.File, asm.ErrorList) {
			if mlir.IsMLIR(src) {
				return mlir.ParseFile(name, src)
			}
			return parser.ParseFile(name, src)
		},
		ParseExpr: parser.ParseExpr,
		ReadFile:  func(name string) ([]byte, error) { return fs.ReadFile(programs.FS, filepath.ToSlash(name)) },
	}
	path, _ := programs.Find(name)
	obj, errs := asm.Assemble(fe, path, defs)
	if errs.HasErrors() {
		t.Fatalf("%s: %v", name, errs)
	}
	return obj
}

// runLint runs obj timing-only with a detector attached, as lint does,
// inline or on its own goroutine, and returns the detector.
func runLint(t *testing.T, obj *asm.Object, serial bool) *Detector {
	t.Helper()
	d := New(Options{Serial: serial})
	m, err := machine.New(obj, machine.Options{TimingOnly: true, Observers: []machine.Observer{d}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Run(); err != nil {
		d.NoteError(err)
	}
	return d
}

// lintTiming is runLint's findings as JSON.
func lintTiming(t *testing.T, obj *asm.Object, serial bool) string {
	t.Helper()
	d := runLint(t, obj, serial)
	if !serial && d.front.pipe != nil {
		t.Fatal("the detector's goroutine is still running after Run")
	}
	b, err := json.Marshal(d.Findings())
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A panic on the detector's goroutine reaches the caller at the next drain,
// as it would from an inline detector, and the machine is never left
// blocked on a full hand-off.
func TestParallelPanicReachesCaller(t *testing.T) {
	old := serialPrefix
	serialPrefix = 0
	defer func() { serialPrefix = old }()
	d := New(Options{})
	if !d.parallel() {
		t.Skip("one CPU: the detector runs inline")
	}
	// No event makes the detector panic (the fuzz tests see to that), so
	// plant a batch item that indexes past its batch.
	d.Observe(&machine.Event{Kind: machine.EvRunStart})
	d.front.pipe.cur.items = append(d.front.pipe.cur.items, item{acc0: 1 << 30, nacc: -1})
	for range 3 * batchEvents {
		d.Observe(&machine.Event{Kind: machine.EvRunStart})
	}
	defer func() {
		if recover() == nil {
			t.Error("the goroutine's panic was lost")
		}
	}()
	d.Flush()
}

// TestSelfChecks runs every shipped program with each of the detector's
// shortcuts checked against the work it skips: local-only joins (drains,
// issue snapshots, flag waits) against the full join, cached cells against
// the page lookup, skipped signal joins against the clock.
func TestSelfChecks(t *testing.T) {
	for _, tc := range []struct {
		name  string
		check *bool
		count *int
	}{
		{"local joins", &checkLocalJoins, &localJoins},
		{"shortcuts", &checkShortcuts, &shortcuts},
	} {
		t.Run(tc.name, func(t *testing.T) {
			*tc.check, *tc.count = true, 0
			defer func() { *tc.check = false }()
			eachProgram(t, func(_ string, obj *asm.Object) { lintTiming(t, obj, true) })
			t.Logf("%d %s checked", *tc.count, tc.name)
			if *tc.count < 1000 {
				t.Errorf("only %d %s: the programs no longer exercise them", *tc.count, tc.name)
			}
		})
	}
}

// A batch item stays one cache line: the machine writes it on one CPU and
// the detector reads it on the other (a 72-byte item spanned two lines).
func TestItemSize(t *testing.T) {
	if n := unsafe.Sizeof(item{}); n > 64 {
		t.Errorf("item is %d bytes, want at most 64", n)
	}
	// An agent's hot fields are its first two lines only if every agent
	// starts on a line.
	if n := unsafe.Sizeof(agentState{}); n%64 != 0 || unsafe.Offsetof(agentState{}.snapID) >= 128 {
		t.Errorf("agentState is %d bytes with snapID at %d: want whole lines, the hot fields in the first two", n, unsafe.Offsetof(agentState{}.snapID))
	}
	if n := unsafe.Sizeof(coreState{}); n%64 != 0 || unsafe.Offsetof(coreState{}.used) >= 192 {
		t.Errorf("coreState is %d bytes with used at %d: want whole lines, the hot fields in the first three", n, unsafe.Offsetof(coreState{}.used))
	}
}
