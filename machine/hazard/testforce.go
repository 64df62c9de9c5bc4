package hazard

import (
	"maps"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
)

// Tests another timing could pass: "the last block finishes". Each block
// adds 1 to a done count after its work and tests the count once (`ttest
// @Done[0], NB #cmp=ge`); with no fetch-and-add that returns a value
// (docs/hazards.md, "Check-then-act on a count"), every block whose test
// comes after the last add passes, and the blocks that pass do the final
// step together. Which blocks passed is a value of the run: in lock step
// 15 of 24 (programs/hazards/ln_bwd_last_block.pto, a limit in
// session 26), under some per-unit skews one, so
// the finishers' stores raced on some timings and on others nothing did.
// Happens-before decides which tests can pass, not which did: a test can
// read every add to its word that is not ordered after it (each could
// land before it), so it can pass when those adds, with the value it
// read, meet its compare.
//
// So the run is made again with those tests passing (Settle, as for the
// late adds of latewait.go). A failed test (EvSignalTest) of `>=` or `>`
// on one word is noted with the tester's own count raised (news of it
// then carries a count no earlier release had); every later positive add
// to the word whose release does not hold it adds its value, and a plain
// store to the word drops it. At the run's end a note whose sum meets its
// compare, on a word at least two agents wrote in the run (a count
// several agents add to: a one-adder count polled in a loop,
// hazards/poll_chunks, keeps its path), is forced in the next pass
// (Options.Force, machine.TestForcer): the machine holds the test as a
// twait until its word passes, the timing on which the test reads those
// adds, and the branch runs with the tester's own registers and
// addresses; the test is then an ordinary satisfied one (meetWait). Were
// that run to deadlock with a forced test waiting, the test fails
// instead. A tester polling late is a timing the hardware has, and a poll
// that fails when nothing else can move is one too, so a forced pass is a
// run of the kernel: no finding of it is one no timing shows. Forced
// tests accumulate over passes, and the verdict is the last pass's
// (maxLatePasses).

// maxFailedTests bounds the failed tests one run notes: past it, later
// ones are not forced (a polling loop's every poll is one).
const maxFailedTests = 4096

// testKey names a TTEST in every pass of one run: its agent, the run's
// number (EvRunStart ID) and how many TTESTs the agent completed before
// it in the run (machine.TestForcer counts the same).
type testKey struct {
	rank, core, run, n int32
}

// ForcedTests is the tests the next pass of a lint holds until they pass
// (Options.Force).
type ForcedTests struct {
	tests map[testKey]bool
}

// Tests is how many tests the next pass forces.
func (f *ForcedTests) Tests() int {
	if f == nil {
		return 0
	}
	return len(f.tests)
}

// has reports whether the next pass forces test k.
func (f *ForcedTests) has(k testKey) bool { return f != nil && f.tests[k] }

// failedTest is one noted failed test (above).
type failedTest struct {
	key     testKey
	a       int32  // the tester
	n       uint32 // its own count at the test
	rank    int32
	lo, hi  int64 // the word
	cmp     string
	value   int64    // what the test read
	want    int64    // its operand
	sum     int64    // the adds not ordered after it that landed after it
	writers [2]int32 // two agents that wrote the word in the run, -1 for none
	dead    bool
}

// ForcesTests says whether this detector's run forces tests (Options.Force).
func (d *Detector) ForcesTests() bool { return d.opt.Force.Tests() > 0 }

// ForceTest says whether the TTEST of agent a that n of its tests of run
// run came before waits for its word to pass. It is asked on the
// machine's goroutine and reads only Options.Force, which no pass writes.
func (d *Detector) ForceTest(a machine.Agent, run int32, n int32) bool {
	return d.opt.Force.has(testKey{rank: a.Rank, core: a.Core, run: run, n: n})
}

// isTest reports whether e is a TTEST's event.
func isTest(e *machine.Event) bool {
	return e.Op != nil && e.Op.Info != nil && e.Op.Info.Op == asm.OpTtest
}

// testKeyOf counts the TTEST of event e and names it.
func (d *Detector) testKeyOf(e *machine.Event) testKey {
	if d.testCount == nil {
		d.testCount = make(map[machine.Agent]int32)
	}
	n := d.testCount[e.Agent]
	d.testCount[e.Agent] = n + 1
	return testKey{rank: e.Agent.Rank, core: e.Agent.Core, run: d.run, n: n}
}

// failedTest notes the failed TTEST of event e (EvSignalTest).
func (d *Detector) failedTest(e *machine.Event) {
	k := d.testKeyOf(e)
	a := d.agent(e.Agent)
	d.enter(a)
	d.takeIssueOf(a, e, false)
	// Passing in another pass, it is a wait there: the waits after it
	// keep their names (waitKey counts the agent's waits).
	d.countWait(a)
	ag := &d.agents[a]
	ag.n++
	if ag.kind == akScalar {
		d.raiseOwn(a)
	}
	if len(e.Accesses) != 1 || len(d.failed) >= maxFailedTests {
		return
	}
	acc := e.Accesses[0]
	cmp := machine.SignalCmp(e.Op)
	if cmp != "ge" && cmp != "gt" || acc.NumRows() > 1 || acc.Tensor == nil ||
		acc.Hi-acc.Lo != int64(acc.Tensor.DType.Size()) {
		return // only these a later positive add cannot un-satisfy: the largest sum is the test's best
	}
	ft := &failedTest{key: k, a: a, n: ag.n, rank: acc.Rank, lo: acc.Lo, hi: acc.Hi, cmp: cmp,
		value: e.Value, want: e.Want, writers: [2]int32{-1, -1}}
	d.eachSigCell(d.shadowFor(&acc), acc.Lo, acc.Hi, sigRead, false, func(c *cell) {
		if h := c.hist; h != nil && h.hasLast && h.last.gen == d.gen {
			ft.wrote(h.last.agent)
		}
	})
	d.failed = append(d.failed, ft)
}

// wrote notes that agent w wrote the test's word.
func (ft *failedTest) wrote(w int32) {
	switch {
	case ft.writers[0] < 0:
		ft.writers[0] = w
	case ft.writers[0] != w && ft.writers[1] < 0:
		ft.writers[1] = w
	}
}

// testNotify shows write r (value val, an add when atomic: a notify; a
// store otherwise) to the failed tests on its word.
func (d *Detector) testNotify(r *rec, acc *machine.Access, val int64) {
	if acc.NumRows() > 1 {
		return
	}
	have := false
	for _, ft := range d.failed {
		if ft.dead || ft.rank != acc.Rank || acc.Hi <= ft.lo || ft.hi <= acc.Lo {
			continue
		}
		if !r.atomic || acc.Lo != ft.lo || acc.Hi != ft.hi {
			ft.dead = true // a store, or words written together: the value is not a sum at hand
			continue
		}
		ft.wrote(r.agent)
		if r.agent == ft.a || val <= 0 {
			continue
		}
		if !have {
			d.ftRel = d.release(r.agent, d.ftRel)
			have = true
		}
		if get(d.ftRel, d.pos(ft.a)) >= ft.n {
			continue // ordered after the test
		}
		ft.sum += val
	}
}

// testsEnd decides the run's failed tests (above) into d.forceOut.
func (d *Detector) testsEnd() {
	for _, ft := range d.failed {
		if ft.dead || ft.sum == 0 || ft.writers[1] < 0 || !machine.CompareSignal(ft.cmp, ft.value+ft.sum, ft.want) {
			continue
		}
		if d.forceOut == nil {
			d.forceOut = make(map[testKey]bool)
		}
		d.forceOut[ft.key] = true
	}
	d.failed = d.failed[:0]
}

// Forced returns the tests the next pass of this run must force, with
// those of Options.Force, nil when this pass found no new one. Call it
// once the run has ended.
func (d *Detector) Forced() *ForcedTests {
	d.drain()
	d.testsEnd() // a run a deadlock stopped
	grew := false
	for k := range d.forceOut {
		if !d.opt.Force.has(k) {
			grew = true
			break
		}
	}
	if !grew {
		return nil
	}
	out := &ForcedTests{tests: make(map[testKey]bool)}
	if d.opt.Force != nil {
		maps.Copy(out.tests, d.opt.Force.tests)
	}
	maps.Copy(out.tests, d.forceOut)
	return out
}
