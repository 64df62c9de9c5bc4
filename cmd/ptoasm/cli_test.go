package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/internal/golden"
	"github.com/ptoasm/ptoasm/internal/sarifcheck"
)

// runCLI runs the command line in-process.
func runCLI(args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = realMain(args, &o, &e)
	return code, o.String(), e.String()
}

const manyErrors = "../../testdata/errors/many.pto"

// Every command's output is pinned, with its exit status and stderr.
func TestGolden(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
	}{
		{"ops", []string{"ops"}, 0},
		{"version", []string{"version"}, 0},
		{"asm_vec_add", []string{"asm", "vec_add"}, 0},
		{"asm_json_gemm_db", []string{"asm", "--format", "json", "gemm_db"}, 0},
		{"fmt_messy", []string{"fmt", "testdata/messy.pto"}, 0},
		{"fmt_diff_messy", []string{"fmt", "-d", "testdata/messy.pto"}, 0},
		{"run_gemm_db", []string{"run", "gemm_db"}, 0},
		{"lint_gemm_db", []string{"lint", "gemm_db"}, 0},
		{"lint_unified_as_shipped", []string{"lint", "ffn_grid/unified_as_shipped"}, 1},
		{"lint_unified_fix_no_drain", []string{"lint", "ffn_grid/unified_fix_no_drain"}, 1},
		{"errors_many", []string{"asm", manyErrors}, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(tc.args...)
			if code != tc.code {
				t.Errorf("ptoasm %s: exit %d, want %d\nstderr:\n%s", strings.Join(tc.args, " "), code, tc.code, errOut)
			}
			golden.Check(t, "testdata/"+tc.name+".golden", fmt.Appendf(nil, "$ ptoasm %s\nexit %d\n-- stdout --\n%s-- stderr --\n%s", strings.Join(tc.args, " "), code, out, errOut))
		})
	}
}

// Bad input and usage exit 2 with a message on stderr and nothing on stdout.
func TestUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string // regexp on stderr
	}{
		{"nonexistent file", []string{"run", "testdata/nosuch.pto"}, `nosuch\.pto: no such file`},
		// Not "no such file": a directory, or a path through a file.
		{"directory", []string{"run", "testdata"}, `^ptoasm: testdata: is a directory, not a program file`},
		{"path through a file", []string{"asm", "testdata/messy.pto/x.pto"}, `^ptoasm: testdata/messy\.pto/x\.pto: not a directory\n$`},
		// Too large is not "at least 1MiB".
		{"huge --max-memory", []string{"run", "vec_add", "--max-memory", "9223372036854775807"}, `^ptoasm: --max-memory 9223372036854775807: want a size from 1MiB to 2\^62 bytes`},
		{"huge --max-file-size", []string{"asm", "vec_add", "--max-file-size", "99999999TiB"}, `^ptoasm: --max-file-size 99999999TiB: want a size from 1 byte to 2\^62 bytes`},
		{"huge --max-kept", []string{"lint", "vec_add", "--max-kept", "101"}, `^ptoasm: --max-kept 101: want a count from 1 to 100 \(0: the default, 16\)`},
		{"huge --max-kept of run", []string{"run", "vec_add", "--max-kept", "1000"}, `^ptoasm: --max-kept 1000: want a count from 1 to 100`},
		{"output in a missing directory", []string{"trace", "vec_add", "--to", "10", "--chrome", "testdata/nosuch/t.json"},
			`^ptoasm: writing testdata/nosuch/t\.json: directory testdata/nosuch: no such file or directory\n$`},
		{"unknown command", []string{"frob"}, `unexpected argument frob`},
		{"bad flag", []string{"run", "--bogus", "gemm_db"}, `unknown flag --bogus`},
		{"bad format", []string{"lint", "--format", "xml", "gemm_db"}, `--format must be one of`},
		{"missing argument", []string{"run"}, `expected "<file>"`},
		{"unknown constant", []string{"run", "-D", "NOPE=3", "gemm_db"}, `-D NOPE: the program declares no constant NOPE`},
		{"malformed define", []string{"asm", "-D", "K", "gemm_db"}, `-D K: want NAME=VALUE`},
		{"unknown profile key", []string{"run", "--set", "nope=1", "gemm_db"}, `unknown profile key "nope"`},
		{"malformed set", []string{"run", "--set", "nope", "gemm_db"}, `--set nope: want KEY=VALUE`},
		{"fmt -w on an embedded program", []string{"fmt", "-w", "gemm_db"}, `embedded program`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(tc.args...)
			if code != 2 {
				t.Errorf("exit %d, want 2\nstderr:\n%s", code, errOut)
			}
			if !regexp.MustCompile(tc.want).MatchString(errOut) {
				t.Errorf("stderr %q does not match %q", errOut, tc.want)
			}
			if strings.Contains(tc.name, "flag") && out != "" && !strings.Contains(out, "Usage") {
				t.Errorf("stdout: %q", out)
			}
		})
	}
}

// Every error of many.pto is reported as file:line:col, then the source line,
// then a caret under the column.
func TestErrorsHaveCarets(t *testing.T) {
	code, out, errOut := runCLI("asm", manyErrors)
	if code != 2 || out != "" {
		t.Fatalf("exit %d, stdout %q", code, out)
	}
	src, err := os.ReadFile(manyErrors)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(src), "\n")
	wantErrs := strings.Count(string(src), `// ERROR "`)
	diag := regexp.MustCompile(`^` + regexp.QuoteMeta(manyErrors) + `:(\d+):(\d+): (error|note|warning): `)
	out2 := strings.Split(errOut, "\n")
	errs := 0
	for i := 0; i < len(out2); i++ {
		m := diag.FindStringSubmatch(out2[i])
		if m == nil {
			continue
		}
		var ln, col int
		fmt.Sscan(m[1], &ln)
		fmt.Sscan(m[2], &col)
		if m[3] == "error" {
			errs++
		}
		if i+2 >= len(out2) {
			t.Fatalf("%s: no source line and caret after it", out2[i])
		}
		if !strings.Contains(out2[i+1], strings.TrimSpace(lines[ln-1])) {
			t.Errorf("%s: next line %q is not source line %d", out2[i], out2[i+1], ln)
		}
		caret := out2[i+2]
		if strings.TrimSpace(caret) != "^" {
			t.Errorf("%s: no caret line: %q", out2[i], caret)
			continue
		}
		// The caret sits under column col of the quoted line (which may be indented).
		indent := strings.Index(out2[i+1], strings.TrimRight(lines[ln-1], " "))
		if indent < 0 || strings.Index(caret, "^") != indent+col-1 {
			t.Errorf("%s: caret at %d, want under column %d", out2[i], strings.Index(caret, "^"), col)
		}
	}
	if errs != wantErrs {
		t.Errorf("%d errors reported, many.pto marks %d:\n%s", errs, wantErrs, errOut)
	}
}

// asm --format json round-trips: unmarshalled and printed, it is what fmt prints.
func TestAsmJSONRoundTrip(t *testing.T) {
	code, js, errOut := runCLI("asm", "--format", "json", "gemm_db")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	f, err := asm.UnmarshalFile([]byte(js))
	if err != nil {
		t.Fatal(err)
	}
	var printed bytes.Buffer
	if err := asm.Fprint(&printed, f); err != nil {
		t.Fatal(err)
	}
	code, formatted, _ := runCLI("fmt", "gemm_db")
	if code != 0 {
		t.Fatalf("fmt: exit %d", code)
	}
	if printed.String() != formatted {
		t.Errorf("JSON → Fprint differs from fmt:\n%s\n---\n%s", printed.String(), formatted)
	}
}

// fmt -w rewrites a file in place; fmt is idempotent and -d is then empty.
func TestFmtWrite(t *testing.T) {
	src, err := os.ReadFile("testdata/messy.pto")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "messy.pto")
	if err := os.WriteFile(path, src, 0o644); err != nil {
		t.Fatal(err)
	}
	_, want, _ := runCLI("fmt", path)
	if code, out, errOut := runCLI("fmt", "-w", path); code != 0 || out != "" {
		t.Fatalf("fmt -w: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("fmt -w wrote\n%s\nwant\n%s", got, want)
	}
	if _, again, _ := runCLI("fmt", path); again != want {
		t.Errorf("fmt is not idempotent:\n%s", again)
	}
	if code, d, _ := runCLI("fmt", "-d", path); code != 0 || d != "" {
		t.Errorf("fmt -d on a formatted file: exit %d, %q", code, d)
	}
}

// The run report's JSON carries the documented fields (docs/cli.md).
func TestRunJSON(t *testing.T) {
	code, out, errOut := runCLI("run", "--format", "json", "gemm_db")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var r struct {
		Cycles *int64   `json:"cycles"`
		TimeUS *float64 `json:"time_us"`
		FLOPs  *int64   `json:"flops"`
		TFLOPS *float64 `json:"tflops"`
		Pipes  []map[string]any
		Checks []map[string]any
		Find   *[]any `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if r.Cycles == nil || *r.Cycles <= 0 || r.TimeUS == nil || *r.TimeUS <= 0 || r.FLOPs == nil || *r.FLOPs != 2*128*256*1024 || r.TFLOPS == nil || *r.TFLOPS <= 0 {
		t.Errorf("cycles/time_us/flops/tflops: %s", out)
	}
	if r.Find == nil {
		t.Errorf("no findings array")
	}
	if len(r.Pipes) == 0 {
		t.Fatal("no pipes")
	}
	for _, p := range r.Pipes {
		for _, k := range []string{"rank", "core", "pipe", "busy_cycles", "instructions"} {
			if _, ok := p[k]; !ok {
				t.Errorf("pipe %v lacks %s", p, k)
			}
		}
	}
	if len(r.Checks) == 0 {
		t.Fatal("no checks")
	}
	for _, c := range r.Checks {
		for _, k := range []string{"name", "ok", "max_abs_err"} {
			if _, ok := c[k]; !ok {
				t.Errorf("check %v lacks %s", c, k)
			}
		}
		if c["ok"] != true {
			t.Errorf("check failed: %v", c)
		}
	}
	// Deterministic: a second run prints the same bytes.
	if _, out2, _ := runCLI("run", "--format", "json", "gemm_db"); out2 != out {
		t.Error("two runs printed different JSON")
	}
}

// lint's JSON and SARIF are valid and name the FFN mock's WAR at the right lines.
func TestLintFormats(t *testing.T) {
	code, out, _ := runCLI("lint", "--format", "json", "ffn_grid/unified_as_shipped")
	if code != 1 {
		t.Errorf("lint --format json: exit %d, want 1", code)
	}
	var j struct {
		Findings []struct {
			Kind     string
			Severity string
			First    struct {
				File string
				Line int
				Pipe string
			}
			Second struct {
				File string
				Line int
				Pipe string
			}
			Count int
		}
	}
	if err := json.Unmarshal([]byte(out), &j); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	// M1 (consume → gather on hiddenChunkMat) and M2 (mm → consume, mm → extract).
	want := map[string]bool{
		"WAR 124 MTE1 118 MTE2": false,
		"WAR 128 M 124 MTE1":    false,
		"WAR 128 M 125 MTE1":    false,
	}
	for _, f := range j.Findings {
		if f.Severity == "note" {
			continue
		}
		k := fmt.Sprintf("%s %d %s %d %s", f.Kind, f.First.Line, f.First.Pipe, f.Second.Line, f.Second.Pipe)
		if _, ok := want[k]; !ok {
			t.Errorf("unexpected finding %s", k)
		}
		want[k] = true
	}
	for k, seen := range want {
		if !seen {
			t.Errorf("missing finding %s in\n%s", k, out)
		}
	}

	code, out, _ = runCLI("lint", "--format", "sarif", "ffn_grid/unified_as_shipped")
	if code != 1 {
		t.Errorf("lint --format sarif: exit %d, want 1", code)
	}
	var s struct {
		Version string `json:"version"`
		Runs    []struct {
			Results []map[string]any `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("sarif: %v", err)
	}
	errs := 0
	if len(s.Runs) == 1 {
		for _, r := range s.Runs[0].Results {
			if r["level"] == "error" {
				errs++
			}
		}
	}
	// The three WARs are errors; the double-set slack is reported as notes.
	if s.Version != "2.1.0" || len(s.Runs) != 1 || errs != 3 {
		t.Errorf("sarif: version %q, %d runs, %d error results, want 2.1.0 with 3:\n%s", s.Version, len(s.Runs), errs, out)
	}
	if err := sarifcheck.Validate([]byte(out)); err != nil {
		t.Errorf("lint --format sarif is not valid SARIF for code scanning:\n%v", err)
	}

	// A clean program: exit 0, and JSON with an empty list.
	code, out, _ = runCLI("lint", "--format", "json", "gemm_db")
	if code != 0 || !json.Valid([]byte(out)) {
		t.Errorf("lint --format json gemm_db: exit %d, %s", code, out)
	}
}

// Exit statuses of run and lint follow docs/cli.md.
func TestExitCodes(t *testing.T) {
	tests := []struct {
		args []string
		code int
	}{
		{[]string{"run", "gemm_db"}, 0},
		{[]string{"run", "ffn_grid/unified_fixed"}, 0},
		// Error-severity races fail a run even though the output matches.
		{[]string{"run", "ffn_grid/unified_as_shipped"}, 1},
		// A warning (unpaired-set) does not fail a run, the M2 errors do.
		{[]string{"run", "ffn_grid/unified_fix_no_drain"}, 1},
		{[]string{"run", "--no-lint", "ffn_grid/unified_as_shipped"}, 0},
		{[]string{"lint", "ffn_grid/unified_fixed"}, 0},
		{[]string{"lint", "--static", "ffn_grid/unified_as_shipped"}, 0},
		// The static pass alone sees the leftover sets: a warning fails lint.
		{[]string{"lint", "--static", "ffn_grid/unified_fix_no_drain"}, 1},
		// A failed output check fails a run.
		{[]string{"run", "testdata/messy.pto"}, 1},
	}
	for _, tc := range tests {
		if code, _, errOut := runCLI(tc.args...); code != tc.code {
			t.Errorf("ptoasm %s: exit %d, want %d\n%s", strings.Join(tc.args, " "), code, tc.code, errOut)
		}
	}
}

// A flag the static pass cannot evaluate is a note whose hint depends on
// whether the program ran: lint tells the user what the run covered, and
// `lint --static`, which ran nothing, to run it.
func TestUncheckedHint(t *testing.T) {
	for _, tc := range []struct {
		args []string
		hint string
	}{
		{[]string{"lint", "hazards/bad_event_id"}, "hint: the run checked the flags it used dynamically"},
		{[]string{"lint", "--static", "hazards/bad_event_id"}, "hint: run `ptoasm lint` on the program to check it dynamically"},
	} {
		_, out, _ := runCLI(tc.args...)
		if !strings.Contains(out, "the static pass cannot know") {
			t.Fatalf("%v: no unchecked-flag note:\n%s", tc.args, out)
		}
		if got := strings.Count(out, tc.hint); got != 2 {
			t.Errorf("%v: %d notes with %q, want 2:\n%s", tc.args, got, tc.hint, out)
		}
	}
}

// --cpuprofile and --memprofile write a pprof profile (gzipped protobuf) of
// any command, the input of scripts/pgo.sh and of a memory hunt; an
// unwritable path is a usage error.
func TestProfiles(t *testing.T) {
	for _, flag := range []string{"--cpuprofile", "--memprofile"} {
		t.Run(flag, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x.prof")
			if code, _, errOut := runCLI("run", "gemm_db", flag, path); code != 0 {
				t.Fatalf("run %s: exit %d: %s", flag, code, errOut)
			}
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			zr, err := gzip.NewReader(f)
			if err != nil {
				t.Fatalf("the profile is not gzipped: %v", err)
			}
			if b, err := io.ReadAll(zr); err != nil || len(b) == 0 {
				t.Fatalf("the profile is empty or corrupt: %d bytes, %v", len(b), err)
			}
			bad := filepath.Join(t.TempDir(), "no", "such", "dir", "x.prof")
			if code, _, errOut := runCLI("run", "gemm_db", flag, bad); code != 2 || !strings.Contains(errOut, "no such file") {
				t.Errorf("unwritable %s: exit %d, stderr %q", flag, code, errOut)
			}
		})
	}
}

// A file that does not assemble still gets a SARIF log, with its errors as
// results, and the exit status of bad input.
func TestLintSARIFAssemblyErrors(t *testing.T) {
	file := manyErrors
	code, out, stderr := runCLI("lint", "--format", "sarif", file)
	if code != 2 {
		t.Errorf("exit %d, want 2", code)
	}
	if !strings.Contains(stderr, "error:") {
		t.Errorf("stderr lacks the errors: %s", stderr)
	}
	if err := sarifcheck.Validate([]byte(out)); err != nil {
		t.Fatalf("not valid SARIF for code scanning:\n%v\n%s", err, out)
	}
	var s struct {
		Runs []struct {
			Results []struct {
				RuleID    string `json:"ruleId"`
				Locations []struct {
					PhysicalLocation struct {
						ArtifactLocation struct{ URI string }
						Region           struct{ StartLine int }
					}
				}
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatal(err)
	}
	n := strings.Count(stderr, ": error: ")
	if len(s.Runs) != 1 || len(s.Runs[0].Results) < n || n == 0 {
		t.Fatalf("%d errors on stderr, SARIF %+v", n, s)
	}
	for _, r := range s.Runs[0].Results {
		loc := r.Locations[0].PhysicalLocation
		if r.RuleID != "assembly" || !strings.HasSuffix(loc.ArtifactLocation.URI, "many.pto") || loc.Region.StartLine < 1 {
			t.Errorf("result %+v", r)
		}
	}
	// Text and JSON formats print no log: the errors are on stderr.
	if code, out, _ := runCLI("lint", file); code != 2 || out != "" {
		t.Errorf("lint (text): exit %d, stdout %q", code, out)
	}
}

// A program given as "-" is read from standard input by every command that
// takes a file; diagnostics name it <stdin>.
func TestStdinProgram(t *testing.T) {
	vecAdd, err := os.ReadFile("../../programs/vec_add/vec_add.pto")
	if err != nil {
		t.Fatal(err)
	}
	softmax, err := os.ReadFile("../../programs/softmax/softmax.pto")
	if err != nil {
		t.Fatal(err)
	}
	run := func(stdin []byte, args ...string) (int, string, string) {
		var o, e bytes.Buffer
		code := realMainIO(args, bytes.NewReader(stdin), &o, &e)
		return code, o.String(), e.String()
	}
	tests := []struct {
		name   string
		stdin  []byte
		args   []string
		code   int
		stdout string // substring
		stderr string // substring
	}{
		{"run", vecAdd, []string{"run", "-"}, 0, "ok   @Z", ""},
		{"run json", softmax, []string{"run", "--format", "json", "-"}, 0, `"checks"`, ""},
		{"lint", vecAdd, []string{"lint", "-"}, 0, "<stdin>: no hazards found", ""},
		{"asm", vecAdd, []string{"asm", "-"}, 0, "vadd", ""},
		{"fmt", vecAdd, []string{"fmt", "-"}, 0, "kernel vadd : aiv {", ""},
		{"trace", vecAdd, []string{"trace", "--pipe", "MTE3", "-"}, 0, "tstore", ""},
		{"sweep", vecAdd, []string{"sweep", "--timing-only", "-D", "BLOCKS=4,8", "-"}, 0, "BLOCKS=8", ""},
		{"syntax error", []byte("kernel k : aiv {\n    tadd %x,\n}\n"), []string{"lint", "-"}, 2, "", "<stdin>:2:"},
		{"sarif of a syntax error", []byte("kernel k : aiv {\n    tadd %x,\n}\n"), []string{"lint", "--format", "sarif", "-"}, 2, `"uri": "%3Cstdin%3E"`, ""},
		{"fmt -w", vecAdd, []string{"fmt", "-w", "-"}, 2, "", "standard input cannot be written back"},
		{"step without a script", vecAdd, []string{"step", "-"}, 2, "", "need --script"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := run(tc.stdin, tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d\nstderr: %s", code, tc.code, errOut)
			}
			if !strings.Contains(out, tc.stdout) {
				t.Errorf("stdout lacks %q:\n%s", tc.stdout, out)
			}
			if !strings.Contains(errOut, tc.stderr) {
				t.Errorf("stderr lacks %q:\n%s", tc.stderr, errOut)
			}
		})
	}
	// The same program from a file and from standard input gives the same
	// report, but for the name of the file.
	const path = "../../programs/vec_add/vec_add.pto"
	_, fromFile, _ := runCLI("run", "--format", "json", path)
	_, fromStdin, _ := run(vecAdd, "run", "--format", "json", "-")
	if fromFile = strings.ReplaceAll(fromFile, path, "<stdin>"); fromFile != fromStdin {
		t.Errorf("run - differs from run FILE:\n%s\n%s", fromStdin, fromFile)
	}
}

// -h lists the values each --format takes.
func TestHelpListsFormats(t *testing.T) {
	for cmd, want := range map[string]string{
		"run":        "--format=text|json",
		"lint":       "--format=text|json|sarif",
		"asm":        "--format=text|json",
		"sweep grid": "--format=text|json",
	} {
		_, out, _ := runCLI(append(strings.Fields(cmd), "-h")...)
		if !strings.Contains(out, want) || !strings.Contains(out, strings.ReplaceAll(strings.TrimPrefix(want, "--format="), "|", ",")) {
			t.Errorf("%s -h does not list the formats (%s):\n%s", cmd, want, out)
		}
	}
}
