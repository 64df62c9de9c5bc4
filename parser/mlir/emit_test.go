package mlir

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
	"github.com/ptoasm/ptoasm/parser"
	"github.com/ptoasm/ptoasm/programs"
)

// programsFrontend reads the embedded programs, PTO-AS or MLIR by content, as
// the CLI does.
var programsFrontend = asm.Frontend{
	ParseFile: func(name string, src []byte) (*asm.File, asm.ErrorList) {
		if IsMLIR(parser.Normalize(src)) {
			return ParseFile(name, src)
		}
		return parser.ParseFile(name, src)
	},
	ParseExpr: parser.ParseExpr,
	ReadFile:  func(name string) ([]byte, error) { return fs.ReadFile(programs.FS, filepath.ToSlash(name)) },
}

// trace records, per agent (rank, core, pipe), what every instruction did
// in the order the pipe did it: the op, and each access by space, direction
// and byte range (GM ranges from the tensor's base, strided runs with their
// pitch); flag sets and waits with their ids. A pipe runs in order, so this
// does not depend on timing.
type trace struct {
	m      *machine.Machine
	agents map[machine.Agent]*strings.Builder
}

func (tr *trace) Observe(e *machine.Event) {
	b := tr.agents[e.Agent]
	if b == nil {
		b = &strings.Builder{}
		tr.agents[e.Agent] = b
	}
	switch e.Kind {
	case machine.EvExec:
		// An accumulation that starts from zero (#init) is the plain op
		// (PTOAS spells it so): its accumulator is written, not read.
		name := e.Op.Info.Name
		if len(e.Accesses) > 0 && e.Accesses[0].Write {
			name = strings.TrimSuffix(name, ".acc")
		}
		fmt.Fprintf(b, "%s%s", name, e.Step)
		for _, a := range e.Accesses {
			lo, where := a.Lo, a.Space.String()
			if a.Tensor != nil {
				base, _ := tr.m.TensorBase(a.Tensor.Name, int(a.Rank))
				lo, where = lo-base, "@"+a.Tensor.Name
			}
			fmt.Fprintf(b, " %s%s[%d,%d)x%d/%d", map[bool]string{true: "w", false: "r"}[a.Write], where, lo, lo+a.Hi-a.Lo, a.NumRows(), a.Pitch)
		}
		b.WriteByte('\n')
	case machine.EvFlagSet, machine.EvFlagWait:
		fmt.Fprintf(b, "%v %v\n", e.Kind == machine.EvFlagSet, e.Flag)
	case machine.EvBarrier:
		fmt.Fprintf(b, "barrier %s\n", e.Target)
	}
}

// stream runs o (timing only) and returns its trace, agent by agent.
func stream(t *testing.T, name string, o *asm.Object) string {
	tr := &trace{agents: map[machine.Agent]*strings.Builder{}}
	m, err := machine.New(o, machine.Options{Observers: []machine.Observer{tr}, TimingOnly: true, MaxTime: time.Minute})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	tr.m = m
	if _, err := m.Run(); err != nil {
		t.Logf("%s: run: %v", name, err) // a deadlocking hazard program stops; the trace up to there still counts
	}
	var keys []machine.Agent
	for a := range tr.agents {
		keys = append(keys, a)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.Rank != b.Rank {
			return a.Rank < b.Rank
		}
		if a.Core != b.Core {
			return a.Core < b.Core
		}
		return a.Pipe < b.Pipe
	})
	var b strings.Builder
	for _, a := range keys {
		fmt.Fprintf(&b, "== %d/%d/%s\n%s", a.Rank, a.Core, a.Pipe, tr.agents[a].String())
	}
	return b.String()
}

// blocks is the block count of the launch's one stream (the MLIR has no
// launch: the reader's BLOCKS is set to it).
func blocks(o *asm.Object) string {
	for _, s := range o.Launch.Body {
		if r, ok := s.(*asm.Run); ok && len(r.Streams) > 0 && r.Streams[0].Blocks != nil {
			if v, err := asm.EvalInt(r.Streams[0].Blocks, o.Const); err == nil {
				return fmt.Sprint(v)
			}
		}
	}
	return "1"
}

// translate prints o as MLIR and reads it back.
func translate(name string, o *asm.Object) (*asm.Object, string, error) {
	m, errs := Emit(o)
	if len(errs) > 0 {
		return nil, "", errs[0]
	}
	fe := asm.Frontend{ParseFile: ParseFile, ParseExpr: parser.ParseExpr,
		ReadFile: func(string) ([]byte, error) { return []byte(m), nil }}
	back, errs := asm.Assemble(fe, name, []asm.Define{{Name: "BLOCKS", Value: blocks(o)}})
	if back == nil || errs.HasErrors() {
		msg := "?"
		for i := len(errs) - 1; i >= 0; i-- {
			if errs[i].Severity == asm.SevError && errs[i].Span.Pos.File != "<command line>" {
				msg = errs[i].Msg // the reader's, not the -D BLOCKS that follows from it
			}
		}
		return nil, m, fmt.Errorf("--to mlir: the translation does not read back: %s", msg)
	}
	return back, m, nil
}

// roundTrip takes a program through MLIR → PTO-AS → MLIR → PTO-AS (a PTO-AS
// program starts with its own translation to MLIR) and requires every
// stage's instruction stream to be the first's. A program the printer
// refuses returns the printer's error: it is excluded, for that reason.
func roundTrip(t *testing.T, name string, o *asm.Object, mlirSource bool) (excluded string) {
	t.Helper()
	objs := []*asm.Object{o}
	// From PTO-AS: PTO-AS → MLIR → PTO-AS → MLIR → PTO-AS; from MLIR the
	// first PTO-AS is the lowering itself.
	n := 2
	if mlirSource {
		n = 1
	}
	for i := 0; i < n; i++ {
		back, m, err := translate(fmt.Sprintf("%s.%d.mlir", name, i+1), objs[len(objs)-1])
		if err != nil {
			if i == 0 && (m == "" || mlirSource) {
				// The printer refuses, or (from MLIR) the lowering lost
				// what the reader's verifier needs back (tinsert_fp's
				// scaling tile): the file is excluded, with the reason.
				return err.Error()
			}
			t.Errorf("%s: stage %d: %v\n%s", name, i+1, err, m)
			return ""
		}
		objs = append(objs, back)
	}
	want := stream(t, name, objs[0])
	if !strings.Contains(want, "\n") {
		t.Errorf("%s: the run traced no instruction", name)
	}
	for i, b := range objs[1:] {
		if got := stream(t, name, b); got != want {
			t.Errorf("%s: the instruction stream after %d translation(s) differs:\n%s\n--- want\n%s", name, i+1, got, want)
		}
	}
	return ""
}

// testNoFormOps are, independently of the printer's own list, the
// instructions PTOAS has no form for on A2/A3 (include/PTO/IR/PTOOps.td at
// a56b18c3 has no rank operand, signal op, collective, grid barrier, dsb,
// IMG2COL, fused add-relu converts, pair reduction or slot-form fifo ops,
// and its mgather/mscatter verify only on A5).
var testNoFormOps = strings.Fields("syncall dsb tnotify twait ttest tput tget tbroadcast tgather.comm tscatter.comm treduce tallgather " +
	"mgather mscatter setfmatrix set_img2col_padding set_img2col_rpt timg2col taddreluconv tadddeqrelu tpairreducesum " +
	"talloc tpush.slot tpop.slot tfree")

// needsNoForm says, from the object alone, whether o uses a construct PTOAS
// has no form for: a launch on several ranks, a window or signal tensor, a
// FIFO of other than 4 or 8 slots (verifyPipeShape), another rank's GM, an
// L0C unit flag, an nz GM transfer of a tile that is not NZ, or one of
// testNoFormOps.
func needsNoForm(o *asm.Object) bool {
	for _, a := range o.Launch.Attrs {
		if v, err := asm.EvalInt(a.Val, o.Const); a.Key == "ranks" && (err != nil || v != 1) {
			return true
		}
	}
	for _, t := range o.Tensors {
		if t.Class == asm.TensorWindow || t.Class == asm.TensorSignal || t.Class == asm.TensorFIFO && t.Attrs["slots"] != 4 && t.Attrs["slots"] != 8 {
			return true
		}
	}
	for _, k := range o.Kernels {
		for _, op := range k.Ops {
			if slices.Contains(testNoFormOps, op.Info.Name) || op.Unit != asm.UnitNone {
				return true
			}
			for _, a := range op.Args {
				if a.Kind == asm.ArgGM && a.HasRank {
					return true
				}
			}
			// pto-isa moves NZ GM only to or from NZ tiles (or, storing,
			// a one-row or one-column vec tile)
			if n := op.Info.Name; (n == "tload" || n == "tstore") && len(op.Args) == 2 {
				g, tl := op.Args[1], op.Args[0].Tile
				if n == "tstore" {
					g, tl = op.Args[0], op.Args[1].Tile
				}
				nz := tl != nil && tl.BLayout == "col" && tl.SLayout == "row"
				line := n == "tstore" && tl != nil && tl.Loc == asm.LocVec && (tl.Rows == 1 || tl.Cols == 1)
				if g.GM != nil && g.GM.Layout == asm.LayoutNZ && tl != nil && (tl.Loc == asm.LocVec || tl.Loc == asm.LocMat) && !nz && !line {
					return true
				}
			}
		}
	}
	return false
}

// checkNoForm holds the printer to refusing exactly the programs that have no
// PTOAS form, with a positioned error that says so and cites PTOAS's source:
// a printer that produced MLIR for one of them, or refused one with a form as
// if it had none, fails here.
func checkNoForm(t *testing.T, name string, o *asm.Object, why string) {
	t.Helper()
	refused := strings.Contains(why, "has no PTOAS form")
	if want := needsNoForm(o); refused != want {
		t.Errorf("%s: needs a refusal for want of a PTOAS form: %v, the printer says %q", name, want, why)
		return
	}
	if refused && (!noFormPos.MatchString(why) || !strings.Contains(why, "a56b18c3")) {
		t.Errorf("%s: the refusal %q is not a positioned error citing PTOAS at a56b18c3", name, why)
	}
}

var noFormPos = regexp.MustCompile(`^[^:\s]+\.pto:\d+:\d+: error: --to mlir: `)

const (
	tableBegin = "<!-- round-trip table: generated by TestRoundTrip (UPDATE_GOLDEN=1) -->"
	tableEnd   = "<!-- end of round-trip table -->"
)

// TestRoundTrip holds every program in programs/ to the round trip, and
// docs/mlir.md's table of the programs excluded, with the reason, to what
// the printer says (UPDATE_GOLDEN=1 rewrites the table).
func TestRoundTrip(t *testing.T) {
	var rows []string
	pass := 0
	names := programs.List()
	for _, name := range names {
		path, _ := programs.Find(name)
		o, errs := asm.Assemble(programsFrontend, path, nil)
		if o == nil || errs.HasErrors() {
			t.Errorf("%s: %v", name, errs)
			continue
		}
		src, _ := fs.ReadFile(programs.FS, path)
		why := roundTrip(t, name, o, IsMLIR(parser.Normalize(src)))
		checkNoForm(t, name, o, why)
		if why == "" {
			pass++
			continue
		}
		why = strings.ReplaceAll(strings.Replace(why, "--to mlir: ", "", 1), "|", `\|`)
		rows = append(rows, fmt.Sprintf("| %s | %s |", name, why))
	}
	table := fmt.Sprintf("%s\n%d of %d programs round-trip; the printer refuses the other %d:\n\n| program | why (the printer's error) |\n|---|---|\n%s\n%s",
		tableBegin, pass, len(names), len(names)-pass, strings.Join(rows, "\n"), tableEnd)
	const doc = "../../docs/mlir.md"
	text, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	s := string(text)
	i, j := strings.Index(s, tableBegin), strings.Index(s, tableEnd)
	if i < 0 || j < i {
		t.Fatalf("%s has no round-trip table (%q ... %q)", doc, tableBegin, tableEnd)
	}
	if s[i:j+len(tableEnd)] == table {
		return
	}
	if os.Getenv("UPDATE_GOLDEN") == "" {
		t.Fatalf("%s: the round-trip table is stale (UPDATE_GOLDEN=1 rewrites it); now:\n%s", doc, table)
	}
	if err := os.WriteFile(doc, []byte(s[:i]+table+s[j+len(tableEnd):]), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestRoundTripCorpus takes every corpus kernel through MLIR → PTO-AS →
// MLIR → PTO-AS; the kernels the printer refuses are counted by reason, and
// only a missing PTOAS form or a window outside its view may be one.
func TestRoundTripCorpus(t *testing.T) {
	files := corpusFiles(t)
	why := map[string][]string{}
	pass, n := 0, 0
	for _, rel := range files {
		src, err := os.ReadFile(filepath.Join(corpusDir, rel))
		if err != nil {
			t.Fatal(err)
		}
		o, errs := assembleFile(rel, src)
		if o == nil || errs.HasErrors() || len(o.Kernels) == 0 {
			continue
		}
		n++
		if r := roundTrip(t, rel, o, true); r != "" {
			// Only two refusals are allowed: no PTOAS form, and a window
			// outside its view at the reader's default argument values
			// (the file faults as read; PTOAS rejects such a partition).
			if !strings.Contains(r, "has no PTOAS form") && !strings.Contains(r, "does not fit @") {
				t.Errorf("%s: the printer refuses a corpus kernel: %s", rel, r)
			}
			if k := strings.Index(r, "--to mlir: "); k >= 0 {
				r = r[k+len("--to mlir: "):]
			}
			why[r] = append(why[r], rel)
			continue
		}
		pass++
	}
	var reasons []string
	for r, fs := range why {
		reasons = append(reasons, fmt.Sprintf("%4d  %s: %s", len(fs), r, strings.Join(fs, ", ")))
	}
	sort.Strings(reasons)
	t.Logf("%d of %d corpus kernels round-trip; the printer refuses:\n%s", pass, n, strings.Join(reasons, "\n"))
}

// Each construct PTOAS has no equivalent for is refused at its position,
// naming it.
func TestEmitErrors(t *testing.T) {
	const head = "gm X : f32 [16, 16] = zero\n"
	const launch = "launch ranks=1 {\n    run k blocks=1\n}\n"
	for _, tt := range []struct{ name, src, want string }{
		{"no launch", head + "kernel k : aiv {\n    tile %t : vec f32 [16, 16]\n}\n",
			"e.pto:1:1: error: --to mlir: the program has no launch, so no kernel to print"},
		{"ranks", head + "kernel k : aiv {\n    tile %t : vec f32 [16, 16]\n}\nlaunch ranks=2 {\n    run k blocks=1\n}\n",
			"e.pto:5:8: error: --to mlir: a launch on several ranks has no PTOAS form: PTOAS kernels run on one device (include/PTO/IR/PTOOps.td at a56b18c3"},
		{"signal", head + "signal S : [1]\nkernel k : aiv {\n    tile %t : vec f32 [16, 16]\n}\n" + launch,
			"e.pto:2:1: error: --to mlir: a signal tensor (@S) has no PTOAS form"},
		{"twait", head + "signal S : [1]\nkernel k : aiv {\n    tile %t : vec f32 [16, 16]\n    tload %t, @X[0, 0]\n    twait @S[0], 1 #cmp=eq\n}\n" + launch,
			"e.pto:6:5: error: --to mlir: twait has no PTOAS form: a signal operation"},
		{"syncall first", head + "kernel k : aiv {\n    tile %t : vec f32 [16, 16]\n    syncall\n    dsb\n}\n" + launch,
			"e.pto:4:5: error: --to mlir: syncall has no PTOAS form: a barrier across the launch's blocks; include/PTO/IR/PTOOps.td at a56b18c3 has none"},
		{"dsb", head + "kernel k : aiv {\n    tile %t : vec f32 [16, 16]\n    dsb\n}\n" + launch,
			"e.pto:4:5: error: --to mlir: dsb has no PTOAS form"},
		{"rank operand", head + "window W : f32 [16, 16]\nkernel k : aiv {\n    tile %t : vec f32 [16, 16]\n    tload %t, @W[rank=1][0, 0]\n}\nlaunch ranks=2 {\n    run k blocks=1\n}\n",
			"e.pto:5:15: error: --to mlir: tload has no PTOAS form: it addresses another rank's GM (@W[rank=...])"},
		{"tsubview of a closed rebinding", head + "kernel k : aiv {\n    tile %r : vec f32 [16, 16]\n    tile %d : vec f32 [8, 8]\n    for %i = 0 to 2 {\n        tassign %r, %i * 1024\n    }\n    tsubview %d, %r, 0, 8\n}\n" + launch,
			"e.pto:8:5: error: --to mlir: tsubview: %r was rebound inside a region that has closed"},
		{"wait_async after the copy's region", head + "gm Y : f32 [16, 16] = zero\nkernel k : aiv {\n    tile %t : vec f32 [16, 16]\n    for %i = 0 to 2 {\n        %e = tput_async @Y[%i, 0], @X[%i, 0] #rows=1 #cols=16\n    }\n    wait_async %e\n}\n" + launch,
			"e.pto:8:5: error: --to mlir: wait_async of %e is not printed"},
		{"fifo of one slot", head + "fifo F : f32 [16, 16] slots=1 id=0\nkernel c : aic {\n    tile %m : mat f32 [16, 16]\n    tpop %m, @F\n}\nkernel v : aiv {\n    tile %t : vec f32 [16, 16]\n    tpush @F, %t\n}\nlaunch ranks=1 {\n    run c + v blocks=1\n}\n",
			"e.pto:5:5: error: --to mlir: tpop has no PTOAS form: fifo @F has slots=1, and PTOAS's pipes have 4 or 8 (verifyPipeShape"},
		{"break in a for", head + "kernel k : aiv {\n    tile %t : vec f32 [16, 16]\n    for %i = 0 to 4 {\n        break\n    }\n}\n" + launch,
			"e.pto:5:9: error: --to mlir: a break out of a for loop has no scf equivalent"},
		{"valid-shape array", head + "kernel k : aiv {\n    tile %t[2] : vec f32 [16, 16] valid [16, 8] layout(blayout=col_major)\n    tload %t[0], @X[0, 0]\n}\n" + launch,
			"e.pto:3:5: error: --to mlir: tile array %t: only evenly spaced arrays"},
		{"fifo slots", head + "fifo F : f32 [16, 16] slots=2 id=0\nkernel k : aiv {\n    tile %t : vec f32 [16, 16]\n}\n" + launch,
			"e.pto:2:1: error: --to mlir: fifo @F has no PTOAS form: it has slots=2, and PTOAS's pipes have 4 or 8"},
		{"nz tensor", "gm X : f32 [16, 16] nz = zero\nkernel k : aiv {\n    tile %t : vec f32 [16, 16]\n}\n" + launch,
			"e.pto:1:1: error: --to mlir: @X: only 1-D and 2-D nd or dn GM tensors and 3-D nd ones are printed"},
	} {
		src := []byte(tt.src)
		fe := asm.Frontend{ParseFile: parser.ParseFile, ParseExpr: parser.ParseExpr,
			ReadFile: func(string) ([]byte, error) { return src, nil }}
		o, errs := asm.Assemble(fe, "e.pto", nil)
		if o == nil || errs.HasErrors() {
			t.Errorf("%s: %v", tt.name, errs)
			continue
		}
		_, errs = Emit(o)
		if len(errs) == 0 || !strings.HasPrefix(errs[0].Error(), tt.want) {
			t.Errorf("%s: got %v, want %q", tt.name, errs, tt.want)
		}
	}
}

// A while loop whose body breaks from inside an if, code after the break
// point, a loop result read after the loop, a nested while with its own break
// and a for inside: the scf.while form (break rewritten into the condition
// region) must give the original's instruction stream.
func TestRoundTripWhile(t *testing.T) {
	const src = `gm X : f32 [16, 16] = zero
gm Y : f32 [64, 16] = zero
kernel k : aiv {
    tile %t : vec f32 [16, 16]
    tile %u : vec f32 [16, 16]
    let %n = 0
    let %m = 0
    while %n < 4 {
        tload %t, @Y[%n * 16, 0]
        if %n == 2 {
            let %m = 7
            break
        }
        set_flag MTE2, V, 0
        wait_flag MTE2, V, 0
        let %j = 0
        while 1 {
            for %i = 0 to 2 {
                tadd %u, %t, %t
            }
            if %j >= %n {
                break
            }
            let %j = %j + 1
        }
        set_flag V, MTE3, 0
        wait_flag V, MTE3, 0
        tstore @X[0, 0], %u
        set_flag MTE3, MTE2, 0
        wait_flag MTE3, MTE2, 0
        let %n = %n + 1
    }
    tload %t, @Y[%m, 0]
}
launch ranks=1 {
    run k blocks=1
}
`
	o := roundTripSource(t, "w.pto", src)
	// The trace must hold the loads of three iterations and the one after.
	if n := strings.Count(stream(t, "w.pto", o), "tload"); n != 4 {
		t.Fatalf("the program ran %d tloads, want 4", n)
	}
}

// FIFOs in both directions print as PTOAS pipes (initialize_l2g2l_pipe over
// a GM slot buffer argument, tpush/tpop with the split the popped tile's
// shape says) and come back with their slots, flag base and name.
func TestRoundTripFifo(t *testing.T) {
	const src = `gm X : f32 [16, 16] = zero
fifo Down : f32 [16, 16] slots=8 id=0
fifo Up : f32 [16, 16] slots=4 id=4
kernel c : aic {
    tile %m : mat f32 [16, 16]
    tile %acc : acc f32 [16, 16]
    for %i = 0 to 3 {
        tpop %m, @Up
        tpush @Down, %acc
    }
}
kernel v : aiv {
    tile %h : vec f32 [8, 16]
    tile %w : vec f32 [16, 16]
    for %i = 0 to 3 {
        tpush @Up, %w
        tpop %h, @Down
        set_flag MTE2, MTE3, 0
        wait_flag MTE2, MTE3, 0
        tstore @X[subblock_idx * 8, 0], %h
    }
}
launch ranks=1 {
    run c + v blocks=1
}
`
	o := roundTripSource(t, "f.pto", src)
	back, m, err := translate("f.pto", o)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"dir_mask = 1, slot_size = 1024, slot_num = 8, flag_base = 0", "dir_mask = 2, slot_size = 1024, slot_num = 4, flag_base = 4", "{split = 1}"} {
		if !strings.Contains(m, want) {
			t.Errorf("the MLIR lacks %q:\n%s", want, m)
		}
	}
	for _, ti := range back.Tensors {
		if ti.Class == asm.TensorFIFO && (ti.Name == "Down" && (ti.Attrs["slots"] != 8 || ti.Attrs["id"] != 0) || ti.Name == "Up" && (ti.Attrs["slots"] != 4 || ti.Attrs["id"] != 4)) {
			t.Errorf("fifo @%s came back with %v", ti.Name, ti.Attrs)
		}
	}
	if len(back.Tensors) != len(o.Tensors) {
		t.Errorf("%d tensors came back, want %d (the slot buffers are the fifos)", len(back.Tensors), len(o.Tensors))
	}
}

// Every lowering test file (parser/mlir/testdata: i1 arguments, subsets,
// scf.if tiles, liveness placement, ...) survives MLIR → PTO-AS → MLIR →
// PTO-AS with its instruction stream; the printer may refuse none of them
// but the ones listed, for the reason given.
func TestRoundTripTestdata(t *testing.T) {
	refused := map[string]string{
		// tgather's compare form stands in as a tcvt of its u8 tmp into
		// its i32 dst, a pair pto.tcvt refuses (TCvt.hpp at 3186c381).
		"standin_one_op.pto": "stands in for an op the ISA lacks, in element types pto.tcvt refuses: it has no PTOAS form",
	}
	files, _ := filepath.Glob("testdata/*.pto")
	for _, path := range files {
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		o, errs := assembleFile(path, src)
		if o == nil || errs.HasErrors() {
			t.Errorf("%s: %v", path, errs)
			continue
		}
		why := roundTrip(t, path, o, true)
		if want, ok := refused[filepath.Base(path)]; ok {
			if !strings.Contains(why, want) {
				t.Errorf("%s: the printer says %q, want a refusal naming %q", path, why, want)
			}
		} else if why != "" {
			t.Errorf("%s: %s", path, why)
		}
	}
}

// printedHas holds a PTO-AS program to the round trip and returns its
// translation's reading back and its MLIR, which must contain each of wants.
func printedHas(t *testing.T, name, src string, wants ...string) (*asm.Object, string) {
	t.Helper()
	back, m, err := translate(name, roundTripSource(t, name, src))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range wants {
		if !strings.Contains(m, want) {
			t.Errorf("the MLIR lacks %q:\n%s", want, m)
		}
	}
	return back, m
}

// roundTripSource assembles a PTO-AS program and holds it to the round trip.
func roundTripSource(t *testing.T, name, src string) *asm.Object {
	t.Helper()
	fe := asm.Frontend{ParseFile: parser.ParseFile, ParseExpr: parser.ParseExpr,
		ReadFile: func(string) ([]byte, error) { return []byte(src), nil }}
	o, errs := asm.Assemble(fe, name, nil)
	if o == nil || errs.HasErrors() {
		t.Fatal(errs)
	}
	if why := roundTrip(t, name, o, false); why != "" {
		t.Fatal(why)
	}
	return o
}

// A GM operand without indices (`tload %t, @E`) is the window at the
// tensor's first element; it prints as a partition_view with an explicit
// zero offset per dimension of its view (PTOAS has no empty form), for 1-D,
// 2-D and 3-D tensors alike, and reads back to the same accesses.
func TestRoundTripWholeTensor(t *testing.T) {
	for _, tc := range []struct {
		name, decl, tile string
		want             []string
	}{
		{"2d", "f32 [16, 16]", "[16, 16]", []string{"offsets = [%c0, %c0], sizes = [%c16, %c16] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<16x16xf32>"}},
		{"2d_part", "f16 [32, 64]", "[16, 32]", []string{"offsets = [%c0, %c0], sizes = [%c16, %c32] : !pto.tensor_view<?x?xf16> -> !pto.partition_tensor_view<16x32xf16>"}},
		{"1d", "f32 [64]", "[1, 64]", []string{"offsets = [%c0, %c0], sizes = [%c1, %c64] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<1x64xf32>"}},
		{"3d", "f32 [2, 8, 32]", "[8, 32]", []string{"offsets = [%c0, %c0, %c0], sizes = [%c1, %c8, %c32] : !pto.tensor_view<?x?x?xf32> -> !pto.partition_tensor_view<1x8x32xf32>"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dt, _, _ := strings.Cut(tc.decl, " ")
			src := fmt.Sprintf(`gm E : %s = random(seed=1, lo=-1, hi=1)
gm F : %s = zero
kernel k : aiv {
    tile %%t : vec %s %s
    tload %%t, @E
    set_flag MTE2, MTE3, 0
    wait_flag MTE2, MTE3, 0
    tstore @F, %%t
}
launch ranks=1 {
    run k blocks=1
}
`, tc.decl, tc.decl, dt, tc.tile)
			_, m := printedHas(t, tc.name+".pto", src, tc.want...)
			if n := strings.Count(m, "pto.partition_view"); n != 2 {
				t.Errorf("%d partition views printed, want 2:\n%s", n, m)
			}
		})
	}
}

// A 3-D GM tensor is printed as a rank-3 view with [1, R, C] partitions,
// which the reader folds into rows a last-dimension pitch apart; `st` and
// `ld` are store_scalar and load_scalar, and the loaded value (the fill
// travels as ptoasm.fill) still steers the loop.
func TestRoundTripRank3Scalar(t *testing.T) {
	const src = `gm A : f32 [4, 16, 64] = random(seed=1, lo=-1, hi=1)
gm B : f32 [4, 16, 64] = zero
gm N : i32 [2, 4] = fill(3)
kernel k : aiv {
    tile %x : vec f32 [8, 32]
    %n = ld @N[1, 2]
    for %i = 0 to %n {
        tload %x, @A[%i, 8, 32]
        set_flag MTE2, MTE3, 0
        wait_flag MTE2, MTE3, 0
        tstore @B[%i, 0, 0], %x
        set_flag MTE3, MTE2, 0
        wait_flag MTE3, MTE2, 0
    }
    st @N[0, 1], %n + 1
}
launch ranks=1 {
    run k blocks=1
}
`
	o := roundTripSource(t, "r3.pto", src)
	_, m, err := translate("r3.pto", o)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"!pto.tensor_view<?x?x?xf32>", "!pto.partition_tensor_view<1x8x32xf32>", "{ptoasm.fill = 3 : i64}",
		"pto.load_scalar %N[", "pto.store_scalar "} {
		if !strings.Contains(m, want) {
			t.Errorf("the MLIR lacks %q:\n%s", want, m)
		}
	}
}

// The fixpipe's quantising forms PTOAS has (tmov.fp, textract_fp,
// tinsert_fp, tstore_fp: an ACC source and a scaling tile) print and read
// back with their scaling tile (machine/testdata/quant.pto's paths).
func TestRoundTripQuant(t *testing.T) {
	const src = `gm A : f16 [16, 16] = expr((i * 5 + j * 3) % 17 - 8)
gm P : u64 [1, 16] = fill(0)
gm Q2 : i8 [16, 32] = fill(0)
gm Q5 : i8 [16, 32] = fill(0)
gm Q6 : i8 [16, 32] = fill(0)
gm Q7 : i8 [16, 32] = fill(0)
kernel q : aic {
    tile %am : mat f16 [16, 16]
    tile %pm : mat u64 [1, 16]
    tile %fp : scaling u64 [1, 16]
    tile %a : left f16 [16, 16]
    tile %b : right f16 [16, 16]
    tile %c : acc f32 [16, 16]
    tile %m1 : mat i8 [16, 32] valid [16, 16]
    tile %m2 : mat i8 [16, 32] valid [16, 8]
    tile %m3 : mat i8 [16, 32]
    tload %am, @A[0, 0]
    tload %pm, @P[0, 0]
    set_flag MTE2, MTE1, 0
    wait_flag MTE2, MTE1, 0
    tmov %a, %am
    tmov %b, %am
    set_flag MTE2, FIX, 0
    wait_flag MTE2, FIX, 0
    tmov %fp, %pm
    pipe_barrier FIX
    set_flag MTE1, M, 0
    wait_flag MTE1, M, 0
    tmatmul %c, %a, %b
    set_flag M, FIX, 0
    wait_flag M, FIX, 0
    tstore.fp @Q2[0, 0], %c, %fp
    tmov.fp %m1, %c, %fp
    textract.fp %m2, %c, %fp, 0, 8
    tinsert.fp %m3, %c, %fp, 0, 8
    set_flag FIX, MTE3, 0
    wait_flag FIX, MTE3, 0
    tstore @Q5[0, 0], %m1
    tstore @Q6[0, 0], %m2
    tstore @Q7[0, 0], %m3
}
launch ranks=1 {
    run q blocks=1
}
`
	printedHas(t, "q.pto", src, "pto.tstore_fp ins(%c, %fp :", "pto.tmov.fp ins(%c, %fp :", "pto.textract_fp ins(%c, %fp, %c0, %c8 :",
		"pto.tinsert_fp ins(%c, %fp, %c0, %c8 :", "dtype=ui64")
}

// tsubview and treshape rebind a tile at run time from another tile's
// current address (a static one, one tassign gave, or inside a loop); they
// print as PTOAS's level3 tassign of the address they compute, so every
// instruction after them touches the bytes the original did.
func TestRoundTripViews(t *testing.T) {
	const src = `gm X : f32 [64, 64] = random(seed=1, lo=-1, hi=1)
gm Y : f32 [64, 64] = zero
kernel k : aiv {
    tile %s : vec f32 [32, 64] @ 0
    tile %r : vec f32 [32, 64]
    tile %d : vec f32 [8, 16]
    tile %w : vec f32 [64, 32]
    tload %s, @X[0, 0]
    set_flag MTE2, MTE3, 0
    wait_flag MTE2, MTE3, 0
    for %i = 0 to 4 {
        tsubview %d, %s, %i * 8, 16
        tstore @Y[%i * 8, 0], %d
    }
    tassign %r, 8192
    treshape %w, %s
    tstore @Y[0, 32], %w
    for %j = 0 to 2 {
        tassign %r, 8192 * (%j + 1)
        tsubview %d, %r, 4, %j * 8
        set_flag MTE3, MTE2, 0
        wait_flag MTE3, MTE2, 0
        tload %d, @X[32, 0]
        set_flag MTE2, MTE3, 1
        wait_flag MTE2, MTE3, 1
        tstore @Y[40 + %j * 8, 16], %d
    }
}
launch ranks=1 {
    run k blocks=1
}
`
	_, m := printedHas(t, "v.pto", src)
	if n := strings.Count(m, "pto.tassign"); n != 5 {
		t.Errorf("%d tassigns printed, want 5:\n%s", n, m)
	}
}

// SDMA copies print through an async session whose scratch tile (above the
// kernel's vec tiles) and GM workspace the printer adds; read back, they are
// a tile and a tensor no instruction names, which the next translation
// reuses, so the program is a fixed point after one round.
func TestRoundTripSDMA(t *testing.T) {
	const src = `gm A : f32 [4, 128] = random(seed=1, lo=-1, hi=1)
gm B : f32 [4, 128] = zero
kernel k : aiv {
    tile %t : vec f32 [1, 128]
    for %i = 0 to 4 {
        %e = tput_async @B[%i, 0], @A[%i, 0] #rows=1 #cols=128
        wait_async %e
        tload %t, @B[%i, 0]
    }
    %g = tget_async @A[0, 0], @B[3, 0] #rows=1 #cols=64
    wait_async %g
}
launch ranks=1 {
    run k blocks=1
}
`
	back, _ := printedHas(t, "s.pto", src, "%sdma_workspace: !pto.ptr<i8>", "%sdma_scratch = pto.alloc_tile addr = %c512_i64",
		"pto.build_async_session(%sdma_scratch, %sdma_workspace", "pto.tput_async(", "pto.tget_async(", "pto.wait_async_event(")
	_, m2, err := translate("s2.pto", back)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(m2, "pto.alloc_tile") != 2 || strings.Count(m2, ": !pto.ptr<i8>") != 1 {
		t.Errorf("the second translation added a session tile or workspace:\n%s", m2)
	}
}

// The generators and the simple vector ops PTOAS spells as the ISA does
// (tconcat, tgatherb, taxpy, tci with #descending, ttri with #upper) print
// and read back as themselves.
func TestRoundTripVectorForms(t *testing.T) {
	const src = `gm X : f32 [1, 64] = random(seed=1, lo=-1, hi=1)
gm Y : i32 [32, 32] = zero
kernel k : aiv {
    tile %a : vec f32 [1, 32]
    tile %b : vec f32 [1, 32] @ 128
    tile %c : vec f32 [1, 64] @ 256
    tile %i : vec i32 [1, 32] @ 512
    tile %g : vec f32 [1, 32] @ 640
    tile %m : vec i32 [32, 32] @ 1024
    tload %a, @X[0, 0]
    tload %b, @X[0, 32]
    set_flag MTE2, V, 0
    wait_flag MTE2, V, 0
    tconcat %c, %a, %b
    tci %i, 3 #descending=1
    pipe_barrier V
    tmuls %i, %i, 4
    pipe_barrier V
    tgatherb %g, %a, %i
    pipe_barrier V
    taxpy %g, %b, 0.5
    ttri %m, 2 #upper=1
    set_flag V, MTE3, 0
    wait_flag V, MTE3, 0
    tstore @Y[0, 0], %m
}
launch ranks=1 {
    run k blocks=1
}
`
	printedHas(t, "g.pto", src, "pto.tconcat ins(%a, %b :", "pto.tci ins(%c3_i32 {descending = true} : i32)", "pto.tgatherb ins(%a, %i :",
		"pto.taxpy ins(%b, %cst", "pto.ttri ins(%c2_i32 {upperOrLower = 1 : i32} : i32)")
}

// A kernel run twice (a warm-up run, then the timed one) prints as one
// function per run, the second named k_run2: the reader runs each function
// once, in order, so both runs come back.
func TestRoundTripRunTwice(t *testing.T) {
	const src = `gm X : f32 [16, 16] = random(seed=1, lo=-1, hi=1)
gm Y : f32 [16, 16] = zero
kernel k : aiv {
    tile %a : vec f32 [16, 16]
    tload %a, @X[0, 0]
    set_flag MTE2, MTE3, 0
    wait_flag MTE2, MTE3, 0
    tstore @Y[0, 0], %a #atomic=add
}
launch ranks=1 {
    run k blocks=1
    run k blocks=1
}
`
	back, _ := printedHas(t, "twice.pto", src, "func.func @k(", "func.func @k_run2(")
	if n := strings.Count(stream(t, "twice.pto", back), "tstore"); n != 2 {
		t.Errorf("the read-back program stored %d times, want 2", n)
	}
}

// tquant and tdequant both ways: PTOAS's tquant has no tmp, so a tquant in
// place (tmp = src, the form PTOAS emits) prints plain, and one with a tmp
// of its own (here an element of a tile array) names it by ptoasm.tmp; the
// offset makes INT8_ASYM. A PTOAS tquant without ptoasm.tmp reads back in
// place.
func TestRoundTripTquant(t *testing.T) {
	const src = `gm X : f32 [16, 64] = random(seed=1, lo=-1, hi=1)
gm S : f32 [16, 1] = random(seed=2, lo=1, hi=2)
gm Q : i8 [16, 64] = zero
gm U : u8 [16, 64] = zero
gm Y : f32 [16, 64] = zero
kernel k : aiv {
    tile %x : vec f32 [16, 64]
    tile %x2 : vec f32 [16, 64]
    tile %t[2] : vec i32 [16, 64]
    tile %q : vec i8 [16, 64]
    tile %u : vec u8 [16, 64]
    tile %y : vec f32 [16, 64]
    tile %s : vec f32 [16, 1] layout(blayout=col)
    tile %o : vec f32 [16, 1] layout(blayout=col)
    tload %x, @X[0, 0]
    tload %x2, @X[0, 0]
    tload %s, @S[0, 0]
    set_flag MTE2, V, 0
    wait_flag MTE2, V, 0
    texpands %o, 3.0
    pipe_barrier V
    tquant %q, %x, %s, %x
    tquant %u, %x2, %s, %t[1], %o
    tdequant %y, %q, %s, %o
    set_flag V, MTE3, 0
    wait_flag V, MTE3, 0
    tstore @Q[0, 0], %q
    tstore @U[0, 0], %u
    tstore @Y[0, 0], %y
}
launch ranks=1 {
    run k blocks=1
}
`
	_, m := printedHas(t, "q.pto", src, "{quant_type = #pto<quant_type INT8_SYM>}\n",
		"pto.tquant ins(%x2, %s, %o :", `{quant_type = #pto<quant_type INT8_ASYM>, ptoasm.tmp = "%e`, "pto.tdequant ins(%q, %s, %o :")
	if strings.Count(m, "ptoasm.tmp") != 1 {
		t.Errorf("ptoasm.tmp printed %d times, want once (for the tmp of its own):\n%s", strings.Count(m, "ptoasm.tmp"), m)
	}
	// PTOAS's own form (test/basic/tquant.pto): no tmp, so src is.
	const ptoas = `func.func @k() attributes {pto.kernel_kind = #pto.kernel_kind<vector>} {
  %src = memref.alloc() : memref<16x16xf32, #pto.address_space<vec>>
  %fp = memref.alloc() : memref<16x16xf32, #pto.address_space<vec>>
  %offset = memref.alloc() : memref<16x16xf32, #pto.address_space<vec>>
  %dst = memref.alloc() : memref<16x16xui8, #pto.address_space<vec>>
  pto.tquant ins(%src, %fp, %offset : memref<16x16xf32, #pto.address_space<vec>>, memref<16x16xf32, #pto.address_space<vec>>, memref<16x16xf32, #pto.address_space<vec>>) outs(%dst : memref<16x16xui8, #pto.address_space<vec>>) {quant_type = #pto<quant_type INT8_ASYM>}
  return
}
`
	f, errs := ParseFile("q.mlir", []byte(ptoas))
	if errs.HasErrors() {
		t.Fatal(errs)
	}
	var b strings.Builder
	asm.Fprint(&b, f)
	if want := "tquant %dst, %src, %fp, %src, %offset"; !strings.Contains(b.String(), want) {
		t.Errorf("PTOAS's tquant lowers without %q:\n%s", want, b.String())
	}
	for _, c := range []struct{ attr, want string }{
		{`ptoasm.tmp = 3`, `q.mlir:6:282: error: ptoasm.tmp: expected the tmp tile's SSA name as a string ("%v")`},
		{`ptoasm.tmp = "%nope"`, "q.mlir:6:282: error: undefined value %nope"},
	} {
		bad := strings.Replace(ptoas, "INT8_ASYM>}", "INT8_ASYM>, "+c.attr+"}", 1)
		_, errs := ParseFile("q.mlir", []byte(bad))
		if len(errs) == 0 || errs[0].Error() != c.want {
			t.Errorf("%s: got %v, want %s", c.attr, errs, c.want)
		}
	}
}

// tprint is PTOAS's tprint ins(src) both ways (a2a3 TPRINT_IMPL drains every
// pipe, then prints from the scalar), no longer a V-pipe stand-in.
func TestRoundTripTprint(t *testing.T) {
	const src = `gm X : f32 [16, 16] = random(seed=1, lo=-1, hi=1)
kernel k : aiv {
    tile %x : vec f32 [16, 16]
    tload %x, @X[0, 0]
    tprint %x
    tadds %x, %x, 1.0
    tprint %x
}
launch ranks=1 {
    run k blocks=1
}
`
	back, _ := printedHas(t, "p.pto", src, "pto.tprint ins(%x : !pto.tile_buf<loc=vec, dtype=f32")
	if n := strings.Count(stream(t, "p.pto", back), "tprint"); n != 2 {
		t.Errorf("the read-back program printed %d times, want 2", n)
	}
}
