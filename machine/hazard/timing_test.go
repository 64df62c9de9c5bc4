package hazard_test

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
	"github.com/ptoasm/ptoasm/machine/hazard"
	"github.com/ptoasm/ptoasm/parser"
	"github.com/ptoasm/ptoasm/pipes"
	"github.com/ptoasm/ptoasm/programs"
)

var embedFE = asm.Frontend{
	ParseFile: parser.ParseFile,
	ParseExpr: parser.ParseExpr,
	ReadFile:  func(name string) ([]byte, error) { return fs.ReadFile(programs.FS, filepath.ToSlash(name)) },
}

// orderProbe records when the racy writer finished and the racy reader
// started, from the machine's own event times.
type orderProbe struct {
	writerStep, readerOp string
	writerRank, readerRk int32
	writerEnd            int64
	readerStart          int64
}

func (p *orderProbe) Observe(e *machine.Event) {
	if e.Kind != machine.EvExec || e.Op == nil || e.Op.Info == nil {
		return
	}
	switch {
	case e.Agent.Rank == p.writerRank && e.Step == p.writerStep:
		p.writerEnd = e.End
	case e.Agent.Rank == p.readerRk && e.Step == "" && e.Op.Info.Name == p.readerOp:
		p.readerStart = e.Start
	}
}

// siteKey is what must not change between the two timings: kind and both
// sites (file, line, op, pipe, core, rank).
type siteKey struct {
	kind                   string
	f1, f2                 string
	l1, l2                 int
	op1, op2, pipe1, pipe2 string
	core1, core2           string
	rank1, rank2           int
}

func keyOf(f hazard.Finding) siteKey {
	return siteKey{kind: f.Kind, f1: f.First.File, f2: f.Second.File, l1: f.First.Line, l2: f.Second.Line,
		op1: f.First.Op, op2: f.Second.Op, pipe1: f.First.Pipe, pipe2: f.Second.Pipe,
		core1: f.First.Core, core2: f.Second.Core, rank1: f.First.Rank, rank2: f.Second.Rank}
}

// TestTimingIndependence runs racy programs under two profiles that put the
// two racing accesses in opposite orders in time, checks with the machine's
// event times that the order really flipped (and with the golden that the
// data is right in one order and wrong in the other), and requires the same
// findings, sites and all, from both runs: the detector reasons from
// happens-before edges, never from when things ran.
func TestTimingIndependence(t *testing.T) {
	for _, tc := range []struct {
		prog string
		// set is the --set override of the second profile; the first is the default.
		set [2]string
		// golden: the program has an output expectation, which must pass
		// exactly when the writer ran first.
		golden bool
	}{
		// Default: the remote store crosses the link (about 3500 cycles) while
		// rank 1 spends about 4000 cycles on vector fills: writer first, golden
		// passes. A 100k-cycle link puts the reader first: poison is read.
		{"hazards/cross_rank.pto", [2]string{"link.latency", "100000"}, true},
		// Default: the tnotify overtakes the slow remote store, rank 1 reads
		// poison. A 100k-cycle scalar GM load makes rank 1's twait poll so slow
		// that its load runs long after the store landed. (The program has no
		// golden: under the default profile it would fail.)
		{"hazards/h1_publish_without_fence.pto", [2]string{"scalar.gm_load", "100000"}, false},
	} {
		t.Run(tc.prog, func(t *testing.T) {
			var keys [2][]siteKey
			var readerFirst, correct [2]bool
			for i := range 2 {
				obj, errs := asm.Assemble(embedFE, tc.prog, nil)
				if errs.HasErrors() {
					t.Fatalf("assemble: %v", errs)
				}
				prof := pipes.DefaultProfile()
				if i == 1 {
					if err := prof.Set(tc.set[0], tc.set[1]); err != nil {
						t.Fatal(err)
					}
				}
				probe := &orderProbe{writerStep: "tput.store", readerOp: "tload", writerRank: 0, readerRk: 1,
					writerEnd: -1, readerStart: -1}
				det := hazard.New(hazard.Options{})
				m, err := machine.New(obj, machine.Options{Profile: prof, Observers: []machine.Observer{det, probe}})
				if err != nil {
					t.Fatal(err)
				}
				res, err := m.Run()
				if err != nil {
					t.Fatalf("run %d: %v", i, err)
				}
				if probe.writerEnd < 0 || probe.readerStart < 0 {
					t.Fatalf("run %d: writer end %d, reader start %d: probe saw neither", i, probe.writerEnd, probe.readerStart)
				}
				readerFirst[i] = probe.readerStart < probe.writerEnd
				correct[i] = len(res.Checks) > 0
				for _, c := range res.Checks {
					correct[i] = correct[i] && c.OK
				}
				for _, f := range det.Findings() {
					keys[i] = append(keys[i], keyOf(f))
				}
				t.Logf("profile %d: writer (tput.store) ends at %d, reader (tload) starts at %d; golden ok=%v; %d findings",
					i, probe.writerEnd, probe.readerStart, correct[i], len(keys[i]))
			}
			if readerFirst[0] == readerFirst[1] {
				t.Fatalf("the two profiles did not flip the order (reader first: %v, %v)", readerFirst[0], readerFirst[1])
			}
			if tc.golden {
				if correct[0] == correct[1] {
					t.Errorf("golden ok in both or neither ordering (%v, %v): the reorder should change the data", correct[0], correct[1])
				}
				for i := range 2 {
					if correct[i] == readerFirst[i] {
						t.Errorf("profile %d: golden ok=%v with reader first=%v", i, correct[i], readerFirst[i])
					}
				}
			}
			if len(keys[0]) != 1 || keys[0][0].kind != hazard.KindRAW {
				t.Fatalf("default profile: want exactly one RAW, got %+v", keys[0])
			}
			if len(keys[0]) != len(keys[1]) || keys[0][0] != keys[1][0] {
				t.Errorf("findings depend on timing:\n default: %+v\n flipped: %+v", keys[0], keys[1])
			}
		})
	}
}

// opProbe records the order in which an observer meets the first
// execution of each named op: the order the detector takes them in.
type opProbe struct {
	seen map[string]int
	n    int
}

func (p *opProbe) Observe(e *machine.Event) {
	if e.Kind != machine.EvExec || e.Op == nil || e.Op.Info == nil || e.Step != "" {
		return
	}
	if _, ok := p.seen[e.Op.Info.Name]; !ok {
		p.seen[e.Op.Info.Name] = p.n
		p.n++
	}
}

// TestRaceSiteIgnoresTiming: a store racing a load and the scale ordered
// after it reaches the detector before the load under the default profile
// (the load's L2 miss), between the two with no miss latency, and after both
// with a slow store; the probe checks the three orders, and every run must
// name the scale, and only it.
func TestRaceSiteIgnoresTiming(t *testing.T) {
	want := map[string]string{
		"":                  "tload@1 tmuls@2 tstore@0 ",
		"l2.miss_latency":   "tload@0 tmuls@2 tstore@1 ",
		"dma.ub_gm.latency": "tload@0 tmuls@1 tstore@2 ",
	}
	for _, set := range [][2]string{{}, {"l2.miss_latency", "0"}, {"dma.ub_gm.latency", "20000"}} {
		obj, errs := asm.Assemble(embedFE, "hazards/store_races_two_writes.pto", nil)
		if errs.HasErrors() {
			t.Fatalf("assemble: %v", errs)
		}
		prof := pipes.DefaultProfile()
		if set[0] != "" {
			if err := prof.Set(set[0], set[1]); err != nil {
				t.Fatal(err)
			}
		}
		probe := &opProbe{seen: map[string]int{}}
		det := hazard.New(hazard.Options{})
		m, err := machine.New(obj, machine.Options{Profile: prof, Observers: []machine.Observer{det, probe}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := m.Run(); err != nil {
			t.Fatalf("%s=%s: %v", set[0], set[1], err)
		}
		order := ""
		for _, op := range []string{"tload", "tmuls", "tstore"} {
			order += fmt.Sprintf("%s@%d ", op, probe.seen[op])
		}
		if order != want[set[0]] {
			t.Errorf("%s=%s: the detector met the ops in the order %s, want %s", set[0], set[1], order, want[set[0]])
		}
		var keys []siteKey
		for _, f := range det.Findings() {
			keys = append(keys, keyOf(f))
		}
		if len(keys) != 1 || keys[0].kind != hazard.KindRAW || keys[0].op1 != "tmuls" || keys[0].op2 != "tstore" || keys[0].l1 != 26 || keys[0].l2 != 28 {
			t.Errorf("%s=%s (%s): want one RAW tmuls (26) -> tstore (28), got %+v", set[0], set[1], order, keys)
		}
	}
}
