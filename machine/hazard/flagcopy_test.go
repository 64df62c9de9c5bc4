package hazard

import (
	"os"
	"testing"
	"unsafe"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
	"github.com/ptoasm/ptoasm/parser"
)

// TestFlagCarriesRemoteNews: flag sets between two pipes of one core copy
// only the core's own components while nothing from other cores has arrived
// (flagChan.snapID). Here MTE2 and MTE1 of rank 1 ping-pong a flag, then the
// scalar waits for rank 0's notify and MTE2 (through an op issued after the
// wait) learns of rank 0's store; the next MTE2->MTE1 set must hand that to
// MTE1, whose read was issued before the wait. No race; a set that refreshed
// only the local components would report a RAW.
func TestFlagCarriesRemoteNews(t *testing.T) {
	p := &prog{}
	setOp := p.op("set_flag", 10, S)
	waitOp := p.op("wait_flag", 11, S)
	st := p.op("tstore", 20, MTE3)
	bar := p.op("pipe_barrier", 21, S)
	nt := p.op("tnotify", 22, S)
	tw := p.op("twait", 30, S)
	ld := p.op("tload", 31, MTE2)
	rd := p.op("tload", 32, MTE1)
	s := newSim(Options{})
	s.hostInit(winW, 1, 0x1000)
	s.hostInit(sigS, 1, 0x3000)
	s.ev(machine.Event{Kind: machine.EvRunStart})
	// Each ping-pong uses an id of its own: nothing orders a set after the
	// previous wait of its id here, which would be a double set.
	pingPong := func(id int32) {
		s.issue(1, 0, setOp, MTE2)
		s.issue(1, 0, waitOp, MTE1)
		s.set(1, 0, MTE2, MTE1, id, setOp)
		s.wait(1, 0, MTE2, MTE1, id, waitOp)
	}
	// Rank 0 stores first, so its agents exist (and every clock below is
	// long enough to hold them) before the ping-pong starts.
	s.issue(0, 0, st, MTE3)
	s.exec(ag(0, 0, MTE3), st, nil, gmAcc(winW, 1, 0x1000, 0x1100, true))
	s.barrier(0, 0, ALL, bar)
	pingPong(0)
	pingPong(1)
	// MTE1's wait and read are issued before the scalar hears from rank 0.
	s.issue(1, 0, waitOp, MTE1)
	s.issue(1, 0, rd, MTE1)
	// Rank 0 publishes its store.
	s.ev(machine.Event{Kind: machine.EvNotify, Agent: ag(0, 0, S), Op: nt, Word: "add", Value: 1,
		Accesses: []machine.Access{gmAcc(sigS, 1, 0x3000, 0x3004, true)}})
	s.ev(machine.Event{Kind: machine.EvSignalWait, Agent: ag(1, 0, S), Op: tw,
		Accesses: []machine.Access{gmAcc(sigS, 1, 0x3000, 0x3004, false)}})
	// MTE2 learns of it through an op issued after the wait, then sets.
	s.issue(1, 0, ld, MTE2)
	s.exec(ag(1, 0, MTE2), ld, nil, tileAcc(ubX, 1, 0, 0, true))
	s.issue(1, 0, setOp, MTE2)
	s.set(1, 0, MTE2, MTE1, 2, setOp)
	s.wait(1, 0, MTE2, MTE1, 2, waitOp)
	s.exec(ag(1, 0, MTE1), rd, nil, gmAcc(winW, 1, 0x1000, 0x1100, false))
	if fs := s.d.Findings(); len(fs) != 0 {
		t.Fatalf("the flag carries rank 0's store to MTE1, got %v", kinds(fs))
	}
}

// TestFlagCarriesSnapshotNews: a flag wait joins only the core's own
// components when the setter's news of other cores came from a scalar
// snapshot no later than the waiter's (agentState.remote). Here the waiter's
// ops were issued before the scalar's twait and the setter's after it, so
// the wait must take the setter's whole clock: a local join would report a
// RAW on rank 0's put.
func TestFlagCarriesSnapshotNews(t *testing.T) {
	fe := asm.Frontend{ParseFile: parser.ParseFile, ParseExpr: parser.ParseExpr, ReadFile: os.ReadFile}
	obj, errs := asm.Assemble(fe, "testdata/news_through_flag.pto", nil)
	if errs.HasErrors() {
		t.Fatal(errs)
	}
	d := New(Options{Serial: true})
	m, err := machine.New(obj, machine.Options{Observers: []machine.Observer{d}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Run(); err != nil {
		t.Fatal(err)
	}
	if fs := d.Findings(); len(fs) != 0 {
		t.Fatalf("the flag carries rank 0's put to MTE2, got %v", kinds(fs))
	}
}

// Flag events read few lines: a channel is 256 bytes (a size class whose
// objects start on cache lines) with what every set and wait decides on in
// its first two, and a core's fields that every event reads (enter, an
// op's issue state) sit in its first line.
func TestSyncLayout(t *testing.T) {
	if n := unsafe.Sizeof(flagChan{}); n > 256 {
		t.Errorf("flagChan is %d bytes, want at most 256", n)
	}
	if end := unsafe.Offsetof(flagChan{}.queue) + 16; end > 128 {
		t.Errorf("flagChan.queue's length ends at %d, want it (and loc before it) in the first two lines", end)
	}
	if off := unsafe.Offsetof(flagChan{}.last); off%64 != 0 {
		t.Errorf("flagChan.last is at %d, want it on a line of its own", off)
	}
	if end := unsafe.Offsetof(coreState{}.marked) + 8; end > 64 {
		t.Errorf("coreState.marked ends at %d, want it in the first line", end)
	}
	if end := unsafe.Offsetof(agentState{}.lc) + unsafe.Sizeof(pipeVals{}); end > 64 {
		t.Errorf("agentState.lc ends at %d, want it in the first line", end)
	}
	if end := unsafe.Offsetof(agentState{}.lastIssue) + 4; end > 64 || unsafe.Offsetof(agentState{}.gaps) >= 64 {
		t.Errorf("agentState.gaps and lastIssue end at %d, want them in the first line (every op's record reads them)", end)
	}
	if end := unsafe.Offsetof(coreState{}.lpos) + unsafe.Sizeof(coreState{}.lpos); end > 64 || unsafe.Offsetof(coreState{}.slots)+unsafe.Sizeof(coreState{}.slots) > 64 {
		t.Errorf("coreState.lpos ends at %d, want it in the first line with slots (a flag wait's join reads both)", end)
	}
	if end := unsafe.Offsetof(agentState{}.lastSnap) + 8; end > 64 {
		t.Errorf("agentState.lastSnap ends at %d, want it in the first line (every op's issue state reads it)", end)
	}
	if a, b := unsafe.Offsetof(agentState{}.rver)/64, unsafe.Offsetof(agentState{}.remRver)/64; a != b || unsafe.Offsetof(agentState{}.rem)/64 != a {
		t.Errorf("agentState.rver, remRver and rem are on lines %d, %d and %d, want one (remote reads the three)", a, b, unsafe.Offsetof(agentState{}.rem)/64)
	}
	if off := unsafe.Offsetof(coreState{}.chanHash); off%64 != 0 {
		t.Errorf("coreState.chanHash is at %d, want it on whole lines (a lookup reads one)", off)
	}
	if n := unsafe.Sizeof(agentIter{}); n != 64 {
		t.Errorf("agentIter is %d bytes, want one line", n)
	}
}
