package hazard

import (
	"encoding/json"
	"io/fs"
	"math"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
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

// With one CPU the detector replays batches on the machine's goroutine
// (pushLocal); findings must be those of the event-by-event (Serial) path.
func TestBatchedInlineSameFindings(t *testing.T) {
	old := serialPrefix
	serialPrefix = 0
	defer func() { serialPrefix = old }()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	eachProgram(t, func(name string, obj *asm.Object) {
		want := lintTiming(t, obj, true)
		d := runLint(t, obj, false)
		if !d.front.batched || d.front.pipe != nil {
			t.Fatalf("%s: one CPU should batch on the machine's goroutine (batched %v, goroutine %v)", name, d.front.batched, d.front.pipe != nil)
		}
		b, err := json.Marshal(d.Findings())
		if err != nil {
			t.Fatal(err)
		}
		if got := string(b); got != want {
			t.Errorf("%s: findings differ with batches replayed inline (-serial +batched):\n%s", name, cmp.Diff(want, got))
		}
	})
}

// eachProgram assembles every shipped program, in either syntax, and calls fn.
func eachProgram(t *testing.T, fn func(name string, obj *asm.Object)) {
	t.Helper()
	for _, name := range programs.List() {
		fn(name, assembleProgram(t, name))
	}
}

// assembleProgram assembles shipped program name, in either syntax, with defs.
func assembleProgram(t testing.TB, name string, defs ...asm.Define) *asm.Object {
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
	return runLintWith(t, obj, Options{Serial: serial})
}

// runLintWith is runLint with the detector's options given whole.
func runLintWith(t *testing.T, obj *asm.Object, opt Options) *Detector {
	t.Helper()
	d := New(opt)
	lintRun(t, obj, d)
	return d
}

// lintRun runs obj timing-only with detector d attached, as lint does, and
// returns the run's result and error (which d has noted).
func lintRun(t *testing.T, obj *asm.Object, d *Detector) (*machine.Result, error) {
	t.Helper()
	m, err := machine.New(obj, machine.Options{TimingOnly: true, Observers: []machine.Observer{d}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := m.Run()
	if err != nil {
		d.NoteError(err)
	}
	return res, err
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
	d.front.pipe.cur.Recs = append(d.front.pipe.cur.Recs, item{Issue: 1 << 30, Tag: tagWhole})
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
			// Clocks of more than one group (70 ranks of 4 agents: 280
			// positions), which no program at its default size has: a
			// drain shares and a flush writes into trees of two groups.
			lintTiming(t, assembleProgram(t, "allreduce_ring/ring_final", asm.Define{Name: "RANKS", Value: "70"}), true)
			t.Logf("%d %s checked", *tc.count, tc.name)
			if *tc.count < 1000 {
				t.Errorf("only %d %s: the programs no longer exercise them", *tc.count, tc.name)
			}
		})
	}
}

// A batch item stays half a cache line: the machine writes it on one CPU
// and the detector reads it on the other (a 72-byte item spanned two
// lines; 64-byte items were 8% of a linted 8-rank run's machine goroutine).
func TestItemSize(t *testing.T) {
	if n := unsafe.Sizeof(item{}); n > 32 {
		t.Errorf("item is %d bytes, want at most 32", n)
	}
	// An agent's hot fields are its first two lines only if every agent
	// starts on a line.
	if n, end := unsafe.Sizeof(agentState{}), unsafe.Offsetof(agentState{}.rem)+unsafe.Sizeof(remPart{}); n%64 != 0 || end > 128 {
		t.Errorf("agentState is %d bytes with rem ending at %d: want whole lines, the hot fields in the first two", n, end)
	}
	if n := unsafe.Sizeof(coreState{}); n%64 != 0 || unsafe.Offsetof(coreState{}.used) >= 192 {
		t.Errorf("coreState is %d bytes with used at %d: want whole lines, the hot fields in the first three", n, unsafe.Offsetof(coreState{}.used))
	}
}

// Every event comes out of a batch with the fields the detector reads,
// whether it travelled compact or, its numbers too wide for an item, whole.
func TestBatchRoundTrip(t *testing.T) {
	op := &asm.COp{}
	acc := []machine.Access{{Space: asm.L1, Lo: 0, Hi: 64}, {Space: asm.L0A, Lo: 64, Hi: 128, Write: true}}
	deep := make([]int64, 300)
	for i := range deep {
		deep[i] = int64(i)
	}
	many := make([]machine.Access, 300)
	for i := range many {
		many[i] = machine.Access{Space: asm.GM, Lo: int64(i), Hi: int64(i) + 1}
	}
	ag := machine.Agent{Rank: 3, Core: 17, Pipe: asm.PipeM}
	sc := machine.Agent{Rank: 300, Core: 2, Pipe: asm.PipeS}
	f := machine.Flag{Src: asm.PipeMTE1, Dst: asm.PipeM, ID: 5}
	events := []machine.Event{
		{Kind: machine.EvExec, Agent: ag, Op: op, Accesses: acc, Iter: []int64{1, 2, 3, 4, 5, 6, 7}, Issue: 9, Issued: 12},
		{Kind: machine.EvFlagSet, Agent: ag, Op: op, Flag: f, Issue: 10, Issued: 12},
		{Kind: machine.EvFlagWait, Agent: ag, Op: op, Flag: machine.Flag{Src: asm.PipeMTE1, Dst: asm.PipeM, ID: 300}},
		{Kind: machine.EvFlagWait, Agent: ag, Op: op, Flag: machine.Flag{Src: asm.PipeMTE1, Dst: asm.PipeM, ID: -1}},
		{Kind: machine.EvExec, Agent: ag, Op: op, Accesses: acc, Issue: 1 << 33, Issued: 1 << 33},
		{Kind: machine.EvExec, Agent: machine.Agent{Rank: 70000, Core: 1, Pipe: asm.PipeV}, Op: op},
		{Kind: machine.EvExec, Agent: ag, Op: op, Iter: deep},
		{Kind: machine.EvFlagSet, Agent: ag, Op: op, Flag: f, Iter: []int64{-1 << 40, 1 << 40, 3}},
		{Kind: machine.EvExec, Agent: ag, Op: op, Accesses: many},
		{Kind: machine.EvExec, Agent: ag, Op: op, Accesses: acc, Step: "read"},
		{Kind: machine.EvExec, Agent: machine.Agent{Rank: 0, Core: -1, Pipe: asm.PipeInvalid}, Op: op, Accesses: acc, IssueCore: 2},
		{Kind: machine.EvExec, Agent: ag, Op: op, Accesses: acc[:1], Iter: []int64{4}},
		// 12-19: barriers, notifies and signal waits (tagSync items, but
		// for the last three: a word, a value and a cycle-free field no
		// item keeps).
		{Kind: machine.EvBarrier, Agent: sc, Op: op, Target: asm.PipeALL, Issued: 40, Iter: []int64{2, 1 << 40}},
		{Kind: machine.EvBarrier, Agent: ag, Op: op, Target: asm.PipeM, Issue: 11},
		{Kind: machine.EvNotify, Agent: sc, Op: op, Word: "add", Value: -7, Accesses: acc[:1], Issued: 41, Iter: []int64{3}},
		{Kind: machine.EvSignalWait, Agent: sc, Op: op, Value: 1 << 40, Want: -(1 << 35), Accesses: acc, Issued: 42},
		{Kind: machine.EvNotify, Agent: sc, Op: op, Word: "set", Value: 5, Accesses: acc[:1]},
		{Kind: machine.EvNotify, Agent: sc, Op: op, Word: "xor", Value: 5, Accesses: acc[:1]},
		{Kind: machine.EvBarrier, Agent: sc, Op: op, Target: asm.PipeALL, Value: 1},
		{Kind: machine.EvSignalWait, Agent: sc, Op: op, Accesses: acc, Reason: "why"},
	}
	b := newBatch()
	for i := range events {
		if !b.fits(&events[i]) {
			t.Fatalf("event %d does not fit an empty-enough batch", i)
		}
		b.add(&events[i])
	}
	var scratch machine.Event
	var acc0, iter0, def0 int
	for i := range b.Recs {
		got := *b.event(&b.Recs[i], &scratch, &acc0, &iter0, &def0)
		want := events[i]
		if b.Recs[i].Tag != tagWhole {
			// Compact items keep only what the detector reads of them: the
			// iteration vector as a rec keeps it.
			var r rec
			r.setIter(want.Iter)
			want = machine.Event{Kind: want.Kind, Agent: want.Agent, Op: want.Op, Flag: want.Flag,
				Accesses: want.Accesses, Iter: r.iters(), Issue: want.Issue, Issued: want.Issued,
				Target: want.Target, Word: want.Word, Value: want.Value, Want: want.Want}
		}
		if diff := cmp.Diff(want, got, cmpopts.EquateEmpty(), cmp.AllowUnexported(machine.Deferred{})); diff != "" {
			t.Errorf("event %d (whole %v) came back changed (-want +got):\n%s", i, b.Recs[i].Tag == tagWhole, diff)
		}
	}
	if w := b.Recs[0].Tag == tagWhole || b.Recs[1].Tag == tagWhole || b.Recs[6].Tag == tagWhole || b.Recs[7].Tag == tagWhole; w {
		t.Error("ordinary exec and flag events should travel compact, however deep their loop nest")
	}
	for _, i := range []int{2, 3, 4, 5, 8, 9, 10, 17, 18, 19} {
		if b.Recs[i].Tag != tagWhole {
			t.Errorf("event %d should travel whole", i)
		}
	}
	for i := 12; i < 17; i++ {
		if b.Recs[i].Tag != tagSync {
			t.Errorf("event %d should travel as a tagSync item", i)
		}
	}
	// A pipe's event (ObservePipe) travels as the same item, or not at all
	// when its numbers do not fit (Observe then takes it whole).
	pb := newBatch()
	for i := range events {
		e := &events[i]
		if e.Issued != 0 || e.Step != "" || e.IssueCore != 0 || e.Kind != machine.EvExec && e.Kind != machine.EvFlagSet && e.Kind != machine.EvFlagWait {
			continue // not a pipe's event
		}
		pe := machine.PipeEvent{Kind: e.Kind, Agent: e.Agent, Op: e.Op, Issue: e.Issue, Iter: e.Iter,
			Flag: e.Flag, Accesses: e.Accesses}
		var back machine.Event
		pe.Event(&back)
		if diff := cmp.Diff(*e, back, cmpopts.EquateEmpty(), cmp.AllowUnexported(machine.Deferred{})); diff != "" {
			t.Errorf("event %d as a PipeEvent and back (-want +got):\n%s", i, diff)
		}
		if got, want := pb.addPipe(&pe), b.Recs[i].Tag != tagWhole; got != want {
			t.Errorf("event %d: added as a pipe's %v, as an Event compact %v", i, got, want)
			continue
		}
		if b.Recs[i].Tag != tagWhole {
			if pb.Recs[len(pb.Recs)-1] != b.Recs[i] {
				t.Errorf("event %d: a pipe's item %+v, the Event's %+v", i, pb.Recs[len(pb.Recs)-1], b.Recs[i])
			}
		}
	}
	if len(pb.Recs) == 0 {
		t.Error("no event was a pipe's")
	}
}

// TestSelfRacedAllPipesOff runs every shipped program with every pipe's
// same-pipe races off, so each pipe's accesses race themselves unreported
// the way the cube's TMATMUL.ACC chain does by default, and requires each
// such race told from the two accesses (selfRaced) to be one noteRaced
// recorded (checkSelfRaced panics otherwise).
func TestSelfRacedAllPipesOff(t *testing.T) {
	checkShortcuts, selfRaceChecks = true, 0
	defer func() { checkShortcuts = false }()
	off := SamePipe{V: SevOff, MTE3: SevOff, MTE2: SevOff, MTE1: SevOff, M: SevOff, FIX: SevOff, SDMA: SevOff}
	eachProgram(t, func(name string, obj *asm.Object) {
		runLintWith(t, obj, Options{SamePipe: off, Serial: true}).Findings()
	})
	t.Logf("%d races of an agent with itself checked", selfRaceChecks)
	if selfRaceChecks == 0 {
		t.Error("no race of an agent with itself was checked: the programs no longer exercise selfRaced")
	}
}

// selfRaced tells a race from the later access's lag behind its own
// epoch, and says when a saturated lag cannot tell.
func TestSelfRacedLag(t *testing.T) {
	sat := uint16(math.MaxUint16)
	for _, tc := range []struct {
		name                 string
		early, late          rec
		raced, told, swapped bool
	}{
		{"own clock covers the earlier", rec{epoch: 10, gen: 1}, rec{epoch: 20, lag: 5, gen: 1}, false, true, false},
		{"own clock just covers it", rec{epoch: 10, gen: 1}, rec{epoch: 20, lag: 10, gen: 1}, false, true, false},
		{"own clock below it", rec{epoch: 10, gen: 1}, rec{epoch: 20, lag: 11, gen: 1}, true, true, false},
		{"either order", rec{epoch: 10, gen: 1}, rec{epoch: 20, lag: 11, gen: 1}, true, true, true},
		{"saturated, near", rec{epoch: 10, gen: 1}, rec{epoch: 20, lag: sat, gen: 1}, true, true, false},
		{"saturated, far", rec{epoch: 1, gen: 1}, rec{epoch: 70000, lag: sat, gen: 1}, false, false, false},
		{"far, not saturated", rec{epoch: 1, gen: 1}, rec{epoch: 70000, lag: 100, gen: 1}, false, true, false},
		{"one instance", rec{epoch: 7, gen: 1}, rec{epoch: 7, lag: 3, gen: 1}, false, true, false},
		{"another run", rec{epoch: 10, gen: 1}, rec{epoch: 20, lag: 20, gen: 2}, false, true, false},
	} {
		x, y := &tc.early, &tc.late
		if tc.swapped {
			x, y = y, x
		}
		raced, told := selfRaced(x, y)
		if raced != tc.raced || told != tc.told {
			t.Errorf("%s: selfRaced = %v, %v; want %v, %v", tc.name, raced, told, tc.raced, tc.told)
		}
	}
}

// listCheck is an observer that does not defer accesses, so the machine
// lists every lean op's accesses and sends Deferred beside them: it lists
// them again from Deferred with an AccessLister of its own and requires
// the same list.
type listCheck struct {
	t        *testing.T
	name     string
	lister   machine.AccessLister
	deferred int
}

func (c *listCheck) Observe(e *machine.Event) {
	if e.Kind != machine.EvExec || !e.Deferred.Pending() {
		return
	}
	c.deferred++
	x := *e
	x.Accesses = nil
	got := c.lister.Accesses(&x)
	if !slices.Equal(e.Accesses, got) {
		diff := cmp.Diff(e.Accesses, got, cmpopts.EquateEmpty())
		c.t.Errorf("%s: %s at %v: accesses listed from Deferred differ (-machine +lister):\n%s", c.name, e.Op.Info.Name, e.Agent, diff)
	}
}

// deferCheck defers accesses as the detector does, and requires every
// deferred exec event to come without a list.
type deferCheck struct {
	t        *testing.T
	deferred int
}

func (c *deferCheck) DefersAccesses() bool { return true }

func (c *deferCheck) Observe(e *machine.Event) {
	if e.Kind == machine.EvExec && e.Deferred.Pending() {
		c.deferred++
		if len(e.Accesses) > 0 {
			c.t.Fatalf("%s: a deferred exec event came with its accesses listed", e.Op.Info.Name)
		}
	}
}

// TestDeferredAccesses runs every shipped program with an observer that
// lists each lean op's accesses itself (AccessLister) beside one that
// takes the machine's list, and requires the same accesses; and with
// observers that all defer, that the machine lists none of them.
func TestDeferredAccesses(t *testing.T) {
	total := 0
	eachProgram(t, func(name string, obj *asm.Object) {
		c := &listCheck{t: t, name: name}
		m, err := machine.New(obj, machine.Options{TimingOnly: true, Observers: []machine.Observer{c}})
		if err != nil {
			t.Fatal(err)
		}
		m.Run() // a program's own faults are its expectations' business
		total += c.deferred
		dc := &deferCheck{t: t}
		if m, err = machine.New(obj, machine.Options{TimingOnly: true, Observers: []machine.Observer{dc}}); err != nil {
			t.Fatal(err)
		}
		m.Run()
		if dc.deferred != c.deferred {
			t.Errorf("%s: %d exec events deferred with a deferring observer, %d carried Deferred beside a list", name, dc.deferred, c.deferred)
		}
	})
	t.Logf("%d lean exec events listed both ways", total)
	if total < 1000 {
		t.Errorf("only %d deferred exec events: the programs no longer exercise the lister", total)
	}
}
