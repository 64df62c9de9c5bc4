package debug

import (
	"bytes"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/internal/golden"
	"github.com/ptoasm/ptoasm/machine"
	"github.com/ptoasm/ptoasm/parser"
	"github.com/ptoasm/ptoasm/pipes"
	"github.com/ptoasm/ptoasm/programs"
)

// load assembles an embedded program.
func load(t testing.TB, name string) *asm.Object {
	t.Helper()
	srcs := asm.Sources{}
	fe := asm.Frontend{
		ParseFile: parser.ParseFile,
		ParseExpr: parser.ParseExpr,
		ReadFile: func(n string) ([]byte, error) {
			b, err := fs.ReadFile(programs.FS, path.Clean(n))
			if err == nil {
				srcs[n] = b
			}
			return b, err
		},
	}
	obj, errs := asm.Assemble(fe, name, nil)
	if errs.HasErrors() || obj == nil {
		var b bytes.Buffer
		errs.Fprint(&b, srcs)
		t.Fatalf("assemble %s:\n%s", name, b.String())
	}
	return obj
}

// newFromScript reads the "# program:" and "# set:" header of a script.
func newFromScript(t *testing.T, script string) *Debugger {
	t.Helper()
	prog := ""
	prof := pipes.DefaultProfile()
	for _, l := range strings.Split(script, "\n") {
		if v, ok := strings.CutPrefix(l, "# program: "); ok {
			prog = strings.TrimSpace(v)
		}
		if v, ok := strings.CutPrefix(l, "# set: "); ok {
			k, val, _ := strings.Cut(strings.TrimSpace(v), "=")
			if err := prof.Set(k, val); err != nil {
				t.Fatal(err)
			}
		}
	}
	if prog == "" {
		t.Fatal("script has no # program: line")
	}
	d, err := New(load(t, prog), Options{Machine: machine.Options{Profile: prof}})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func transcript(t *testing.T, script string) string {
	t.Helper()
	d := newFromScript(t, script)
	var out bytes.Buffer
	d.Banner(&out)
	if err := d.Session(strings.NewReader(script), &out, true, false); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// TestGolden runs every script under testdata and compares the transcript.
func TestGolden(t *testing.T) {
	scripts, _ := filepath.Glob("testdata/*.cmd")
	if len(scripts) == 0 {
		t.Fatal("no scripts")
	}
	for _, s := range scripts {
		t.Run(filepath.Base(s), func(t *testing.T) {
			src, err := os.ReadFile(s)
			if err != nil {
				t.Fatal(err)
			}
			got := transcript(t, string(src))
			if again := transcript(t, string(src)); again != got {
				t.Fatalf("transcript is not deterministic:\n%s", cmp.Diff(got, again))
			}
			golden.Check(t, strings.TrimSuffix(s, ".cmd")+".golden", []byte(got))
		})
	}
}

// TestBreakLaterWave: a breakpoint names a block after the first wave by its
// block before the block has a core, and stops on that block whenever and
// wherever it starts: under the default profile and with block.start raised
// (the second wave starts 100000 cycles later).
func TestBreakLaterWave(t *testing.T) {
	for _, set := range []string{"", "# set: block.start=100000\n"} {
		tr := transcript(t, "# program: hazards/blocks_share_core.pto\n"+set+"break get core=r0.b60.aiv start\ncontinue\ncore\n")
		hit := section(tr, "continue")
		if !strings.Contains(hit, "breakpoint 1: get core=r0.b60.aiv start (start on r0.b60.aiv MTE2 at cycle ") {
			t.Errorf("%q: no hit on block 60:\n%s", set, hit)
		}
		if got := section(tr, "core"); got != "current core: r0.b60.aiv\n" {
			t.Errorf("%q: core after the hit: %q", set, got)
		}
		if set != "" && strings.Contains(hit, "at cycle 1252)") {
			t.Errorf("block.start=100000 did not move the second wave:\n%s", hit)
		}
	}
}

// section is the output of one echoed command in a transcript.
func section(tr, cmd string) string {
	_, after, ok := strings.Cut(tr, "(ptoasm) "+cmd+"\n")
	if !ok {
		return ""
	}
	out, _, _ := strings.Cut(after, "(ptoasm) ")
	return out
}

// TestRaceWalk checks the point of the walk-through: when the gather of
// iteration 1 starts on MTE2, the TMOV of iteration 0 is still in flight on
// MTE1 reading the same buffer, and the detector then reports the WAR.
func TestRaceWalk(t *testing.T) {
	src, err := os.ReadFile("testdata/ffn_race.cmd")
	if err != nil {
		t.Fatal(err)
	}
	tr := transcript(t, string(src))
	cont := section(tr, "continue")
	for _, want := range []string{"start      gather: tallgather %hiddenChunkMat[%nb]", "iter [1]", "breakpoint 1: gather start iter=1"} {
		if !strings.Contains(cont, want) {
			t.Errorf("continue output lacks %q:\n%s", want, cont)
		}
	}
	q := section(tr, "queues")
	mte1 := q[strings.Index(q, "  MTE1 "):strings.Index(q, "  MTE2 ")]
	for _, want := range []string{
		"* 0. consume: tmov %aDown, %hiddenChunkMat[%b]  (ffn_grid/unified_as_shipped.pto:124, iter [0])",
		"reads %hiddenChunkMat[0] (L1 0xb000..0xb400)  <- CONFLICT, both in flight: gather: tallgather on MTE2 writes it",
	} {
		if !strings.Contains(mte1, want) {
			t.Errorf("MTE1 queue lacks %q:\n%s", want, mte1)
		}
	}
	if !strings.Contains(q, "writes %hiddenChunkMat[0] (L1 0xb000..0xb400)  <- CONFLICT, both in flight: consume: tmov on MTE1 reads it") {
		t.Errorf("MTE2 queue does not show the gather writing the buffer being read:\n%s", q)
	}
	p := section(tr, "print %hiddenChunkMat[0]")
	if !strings.Contains(p, "%hiddenChunkMat[0] on r0.aic0: mat f16 [16, 32]") || strings.Count(p, "\n") < 17 {
		t.Errorf("print shows no table:\n%s", p)
	}
	if !strings.Contains(tr, "WAR") || !strings.Contains(tr, "gather") {
		t.Errorf("findings never report the WAR:\n%s", tr)
	}
}

// TestBackReplays checks that back lands exactly where stepping forward
// from the start to the same event number does.
func TestBackReplays(t *testing.T) {
	obj := load(t, "ffn_grid/unified_as_shipped.pto")
	d, err := New(obj, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var sink bytes.Buffer
	d.Exec("step 200", &sink)
	d.Exec("back 50", &sink)
	n := d.count
	var w1 bytes.Buffer
	d.Exec("where", &w1)
	d.Exec("queues all", &w1)

	e, err := New(obj, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for e.count < n {
		e.Exec("step", &sink)
	}
	if e.count != n {
		t.Fatalf("stepping forward passed event %d (at %d)", n, e.count)
	}
	var w2 bytes.Buffer
	e.Exec("where", &w2)
	e.Exec("queues all", &w2)
	if diff := cmp.Diff(w1.String(), w2.String()); diff != "" {
		t.Errorf("state after back differs from stepping forward (-back +forward):\n%s", diff)
	}
	if n > 150 || n < 100 {
		t.Errorf("back 50 from event ~200 landed at %d", n)
	}
}

func TestFields(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"print @T[0:4, 0:8] rank=1", []string{"print", "@T[0:4, 0:8]", "rank=1"}},
		{"  step   3 ", []string{"step", "3"}},
		{"break write %buf[ 1 ]", []string{"break", "write", "%buf[ 1 ]"}},
		{"print @T[0, 1", []string{"print", "@T[0, 1"}},
		{"", nil},
	}
	for _, tc := range tests {
		if diff := cmp.Diff(tc.want, fields(tc.in)); diff != "" {
			t.Errorf("fields(%q) (-want +got):\n%s", tc.in, diff)
		}
	}
}

func TestParseGM(t *testing.T) {
	d, err := New(load(t, "ffn_grid/unified_as_shipped.pto"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		in     string
		lo, hi []int64
		err    string
	}{
		{in: "@Win", lo: []int64{0, 0, 0}, hi: []int64{4, 16, 64}},
		{in: "@Win[1]", lo: []int64{1, 0, 0}, hi: []int64{2, 16, 64}},
		{in: "@Win[1, 2:4, :8]", lo: []int64{1, 2, 0}, hi: []int64{2, 4, 8}},
		{in: "@Ready[CELLS - 1, 0]", err: "not an integer"},
		{in: "@Ready[COLS, 0]", lo: []int64{2, 0}, hi: []int64{3, 1}},
		{in: "@Win[4]", err: "outside"},
		{in: "@Win[0, 3:2]", err: "outside 0..16 or empty"},
		{in: "@Win[9223372036854775807]", err: "range [9223372036854775807, 9223372036854775807) is outside 0..4 or empty"},
		{in: "@Win[0, 0, 0, 0]", err: "has 3 dimensions"},
		{in: "@Nope", err: "no GM tensor"},
		{in: "Win", err: "want a GM reference"},
	}
	for _, tc := range tests {
		g, err := d.parseGM(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("parseGM(%q) = %v, want error %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("parseGM(%q): %v", tc.in, err)
			continue
		}
		if !cmp.Equal(g.lo, tc.lo) || !cmp.Equal(g.hi, tc.hi) {
			t.Errorf("parseGM(%q) = %v..%v, want %v..%v", tc.in, g.lo, g.hi, tc.lo, tc.hi)
		}
	}
}

// TestNoPanics feeds odd input to every command.
func TestNoPanics(t *testing.T) {
	d, err := New(load(t, "vec_add/vec_add.pto"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	for _, l := range []string{"print", "print %", "print @", "print @[", "print @X[]", "print %a[-1]", "break write %",
		"break flag", "break signal", "break :", "break x:y", "break 0", "back 999999", "until", "until MTE2 nobody",
		"queues a b", "clocks nobody", "core", "delete x", "info", "step 0", "cycle -3", "signals @", "continue",
		"step", "back", "where", "findings", "continue"} {
		d.Exec(l, &out)
	}
	if !strings.Contains(out.String(), "error:") {
		t.Errorf("no errors reported:\n%s", out.String())
	}
}

// TestRowMajorRanges: the byte ranges of a region of a row-major tensor,
// found by walking only the dimensions that are not contiguous, are those a
// walk of every element finds.
func TestRowMajorRanges(t *testing.T) {
	shape := []int64{3, 4, 5}
	ten := &asm.TensorInfo{Name: "T", DType: asm.F32, Shape: shape, Layout: asm.LayoutND}
	for _, tc := range []struct{ lo, hi []int64 }{
		{[]int64{0, 0, 0}, []int64{3, 4, 5}},
		{[]int64{1, 0, 0}, []int64{2, 4, 5}},
		{[]int64{0, 1, 0}, []int64{3, 3, 5}},
		{[]int64{0, 0, 2}, []int64{3, 4, 3}},
		{[]int64{2, 3, 4}, []int64{3, 4, 5}},
		{[]int64{0, 0, 1}, []int64{3, 4, 5}},
		{[]int64{1, 2, 0}, []int64{3, 4, 5}},
	} {
		g := &gmRef{t: ten, lo: tc.lo, hi: tc.hi, text: "@T"}
		want, err := g.elementRanges()
		if err != nil {
			t.Fatal(err)
		}
		got, err := g.rowMajorRanges()
		if err != nil || !cmp.Equal(got, want) {
			t.Errorf("%v..%v: %v, %v; want %v", tc.lo, tc.hi, got, err, want)
		}
	}
}

// TestRegionBounds: a region too large for what a command does with it is
// refused with the limit named, at once, rather than walked for minutes (a
// signal breakpoint on a whole 4 GiB tensor of 8 ranks ran 300 s and past
// 5 GB); a write breakpoint on a whole tensor is one range and allowed.
func TestRegionBounds(t *testing.T) {
	d, err := New(load(t, "vec_add/vec_add.pto"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ cmd, want string }{
		{"break signal @Z", "error: @Z: 262144 elements, more than the 4096 a signal breakpoint watches; name a smaller region"},
		{"break signal @Z[0:17, 0:256]", "error: @Z[0:17, 0:256]: 4352 elements"},
		{"break signal @Z[0:16, 0:256]", "breakpoint 1: signal @Z[0:16, 0:256] changes"},
		{"signals @X", " (and 262080 more not 0)\n"}, // one line, not 260,000 values
		{"signals @X[0:1, 0:100]", " (and 36 more not 0)\n"},
		{"break write @Z", "breakpoint 2: a write to @Z"},
	} {
		var out bytes.Buffer
		d.Exec(tc.cmd, &out)
		if !strings.Contains(out.String(), tc.want) {
			t.Errorf("%s: %q, want %q", tc.cmd, out.String(), tc.want)
		}
	}
}

// TestBreakpointLimit: breakpoints past maxBreakpoints are refused with the
// limit named, and deleting makes room again.
func TestBreakpointLimit(t *testing.T) {
	d, err := New(load(t, "vec_add/vec_add.pto"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	for range maxBreakpoints {
		d.Exec("break cycle 5", &out)
	}
	for _, tc := range []struct{ cmd, want string }{
		{"break cycle 6", "error: 10000 breakpoints already, the most a session holds; delete some first\n"},
		{"delete 3", "deleted breakpoint 3\n"},
		{"break cycle 6", "breakpoint 10001: cycle 6\n"},
	} {
		out.Reset()
		d.Exec(tc.cmd, &out)
		if out.String() != tc.want {
			t.Errorf("%s: %q, want %q", tc.cmd, out.String(), tc.want)
		}
	}
}

// FuzzExec: any lines typed at the prompt give output or an error, never a
// panic, and a session runs them in bounded time (a few lines: a motion
// runs at most the whole program, a small one here so that the fuzzer's
// minimising of each new input, which reruns it hundreds of times, is not
// minutes). Seeds are the commands of the golden scripts with odd arguments.
func FuzzExec(f *testing.F) {
	obj := load(f, "hazards/war.pto")
	for _, s := range []string{
		"break 25 start\ncontinue\nwhere\nqueues\nprint %x",
		"break write @Y[0:16, 0:64] rank=0\ncontinue\nback 3\nfindings",
		"break signal @X[0, 0:8]\nsignals @X[0:1, 0:9]\ncycle 3000\nclocks",
		"until MTE3 r0.aiv0\nflags all\ncore aiv0\nstepi 4\nnext 2",
		"print @Y2[15:16, 63:64] rank=0\nbreak flag set MTE2 V 1\ninfo breaks\ndelete 1",
		"print @X[-1:5]\nbreak cycle 99999999999999999999\nstep 0x10\nback -1",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, script string) {
		lines := strings.Split(script, "\n")
		if len(lines) > 8 {
			return
		}
		d, err := New(obj, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range lines {
			if d.Exec(l, io.Discard) {
				return
			}
		}
	})
}
