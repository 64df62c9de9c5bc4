package mlir

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/parser"
)

// corpusDir is filled by scripts/fetch-ptoas-corpus.sh; it is git-ignored.
const corpusDir = "../../corpus"

// runLine is one `// RUN:` line of a PTOAS lit test: how ptoas is invoked
// and which FileCheck prefix reads its output.
type runLine struct {
	not    bool   // `not ptoas`: ptoas must fail
	arch   string // --pto-arch, or "" (the module's pto.target_arch, else a3)
	prefix string // FileCheck's --check-prefix (CHECK by default)
}

var (
	runRe    = regexp.MustCompile(`(?m)^\s*//\s*RUN:\s*(.*)$`)
	archRe   = regexp.MustCompile(`--pto-arch[= ]\s*(\w+)`)
	prefixRe = regexp.MustCompile(`--check-prefix[= ]\s*([\w-]+)`)
	// targetArch is how ptoas reads the module's arch (tools/ptoas/ptoas.cpp,
	// detectTextualModuleArch).
	targetArch = regexp.MustCompile(`"?pto\.target_arch"?\s*=\s*"(\w+)"`)
	// opInCheck is the op a diagnostic names: `'pto.tsel' op expects ...`.
	opInCheck = regexp.MustCompile(`'([a-z_]+\.[a-z_.0-9]+)' op\b`)
)

func runLines(src []byte) []runLine {
	var out []runLine
	for _, m := range runRe.FindAllSubmatch(src, -1) {
		cmd := string(m[1])
		fields := strings.Fields(cmd)
		// `ptoas` or ./bin/ptoas, possibly after `not`
		var r runLine
		for i, f := range fields {
			if f == "not" && i+1 < len(fields) && strings.HasSuffix(fields[i+1], "ptoas") {
				r.not = true
			}
		}
		if a := archRe.FindStringSubmatch(cmd); a != nil {
			r.arch = strings.ToLower(a[1])
		}
		r.prefix = "CHECK"
		if p := prefixRe.FindStringSubmatch(cmd); p != nil {
			r.prefix = p[1]
		}
		out = append(out, r)
	}
	return out
}

// checkLines are the plain `// PREFIX: text` lines (not -NOT, -LABEL, ...).
func checkLines(src []byte, prefix string) []string {
	re := regexp.MustCompile(`(?m)^\s*//\s*` + regexp.QuoteMeta(prefix) + `:\s*(.*?)\s*$`)
	var out []string
	for _, m := range re.FindAllSubmatch(src, -1) {
		out = append(out, string(m[1]))
	}
	return out
}

// corpusWant is what a file's RUN lines ask of ptoasm, which models A2/A3:
// a kernel, a rejection (with the diagnostics the CHECK lines name), or a
// rejection because the file is for A5 only.
type corpusWant struct {
	kind   string   // "kernel", "reject", "a5"
	arch   string   // the --pto-arch the file is read with
	checks []string // diagnostics a rejection should agree with
}

func wantOf(src []byte) corpusWant {
	modArch := "a3"
	if m := targetArch.FindSubmatch(src); m != nil && strings.ToLower(string(m[1])) == "a5" {
		modArch = "a5"
	}
	runs := runLines(src)
	if len(runs) == 0 {
		if modArch == "a5" {
			return corpusWant{kind: "a5"}
		}
		return corpusWant{kind: "kernel"}
	}
	w := corpusWant{kind: "a5", arch: "a5"}
	for _, r := range runs {
		arch := r.arch
		if arch == "" {
			arch = modArch
		}
		if arch == "a5" {
			continue
		}
		if w.kind == "a5" {
			w = corpusWant{kind: "kernel", arch: r.arch}
		}
		// A diagnostic CHECKed on ptoas's output means a rejection even when
		// the RUN line lacks its `not` (tquant_verify_invalid pipes stderr
		// through FileCheck and lit only sees FileCheck's status).
		var errs []string
		for _, c := range checkLines(src, r.prefix) {
			if r.not || strings.Contains(c, "error:") {
				if i := strings.Index(c, "error:"); i >= 0 {
					c = c[i+len("error:"):]
				}
				errs = append(errs, strings.TrimSpace(c))
			}
		}
		if r.not || len(errs) > 0 {
			w.kind, w.arch = "reject", r.arch
			w.checks = append(w.checks, errs...)
		}
	}
	return w
}

func assembleFile(path string, src []byte) (*asm.Object, asm.ErrorList) {
	return assembleArch(path, src, "")
}

func assembleArch(path string, src []byte, arch string) (*asm.Object, asm.ErrorList) {
	fe := asm.Frontend{
		ParseFile: func(name string, src []byte) (*asm.File, asm.ErrorList) {
			return ParseFileWith(name, src, Options{Arch: arch})
		},
		ParseExpr: parser.ParseExpr,
		ReadFile:  func(string) ([]byte, error) { return src, nil }}
	return asm.Assemble(fe, path, nil)
}

// corpusFiles lists the fetched corpus's .pto files, relative to corpusDir.
func corpusFiles(t testing.TB) []string {
	if _, err := os.Stat(corpusDir); err != nil {
		t.Skip("no corpus/ (run scripts/fetch-ptoas-corpus.sh PTOAS_GIT_DIR)")
	}
	var files []string
	filepath.WalkDir(corpusDir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".pto") {
			rel, _ := filepath.Rel(corpusDir, p)
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	sort.Strings(files)
	if len(files) == 0 {
		t.Skip("corpus/ has no .pto files")
	}
	return files
}

// opLines are the lines (1-based) where op name is used as an operation.
func opLines(src []byte, name string) map[int]bool {
	re := regexp.MustCompile(`^\s*(?:%[\w#:, %]*=\s*)?"?` + regexp.QuoteMeta(name) + `"?(?:[^\w.]|$)`)
	out := map[int]bool{}
	for i, line := range strings.Split(string(src), "\n") {
		if re.MatchString(line) {
			out[i+1] = true
		}
	}
	return out
}

var stopWords = map[string]bool{"op": true, "the": true, "to": true, "be": true, "a": true, "an": true, "and": true, "or": true,
	"of": true, "in": true, "is": true, "when": true, "for": true, "expects": true, "expect": true, "expected": true, "requires": true, "must": true, "with": true}

// substance is a diagnostic's content words, lowercase, without the op name
// and filler: what two messages saying the same thing share.
func substance(msg string) []string {
	msg = opInCheck.ReplaceAllString(msg, "")
	var out []string
	for _, w := range regexp.MustCompile(`[a-z0-9_]+`).FindAllString(strings.ToLower(msg), -1) {
		if !stopWords[w] && len(w) > 1 {
			out = append(out, w)
		}
	}
	return out
}

// agrees reports whether one of our diagnostics says what check says: at
// least half of the check's content words occur in it.
func agrees(check string, ours []string) bool {
	words := substance(check)
	if len(words) == 0 {
		return true
	}
	for _, m := range ours {
		have := map[string]bool{}
		for _, w := range substance(m) {
			have[w] = true
		}
		n := 0
		for _, w := range words {
			if have[w] {
				n++
			}
		}
		if 2*n >= len(words) {
			return true
		}
	}
	return false
}

// corpusVerdict judges one file against its RUN lines; reason says why it
// failed, note what a pass or failure should mention in the table.
type corpusVerdict struct {
	want           corpusWant
	pass           bool
	reason         string
	checked, agree int // CHECK diagnostics compared, and agreeing
}

func judge(rel string, src []byte) (corpusVerdict, *asm.Object) {
	w := wantOf(src)
	v := corpusVerdict{want: w}
	obj, errs := assembleArch(rel, src, w.arch)
	kernel := obj != nil && !errs.HasErrors() && len(obj.Kernels) > 0 && obj.Launch != nil
	var msgs []string
	for _, e := range errs {
		if e.Severity == asm.SevError {
			msgs = append(msgs, e.Msg)
		}
	}
	first := ""
	if len(msgs) > 0 {
		first = errs[0].Error()
	}
	switch w.kind {
	case "kernel":
		v.pass = kernel
		switch {
		case kernel:
		case errs.HasErrors():
			v.reason = first
		default:
			v.reason = "assembles but yields no kernel"
		}
	case "a5":
		v.pass = errs.HasErrors() && strings.Contains(msgs[0], "A5")
		if !v.pass {
			v.reason = "an A5-only file is not rejected as A5: " + first
		}
	case "reject":
		if !errs.HasErrors() {
			v.reason = "ptoas rejects it; ptoasm yields a kernel"
			break
		}
		// Where the CHECK names the op, our error must be at one of its lines.
		v.pass = true
		for _, c := range w.checks {
			m := opInCheck.FindStringSubmatch(c)
			var at []string
			for _, e := range errs {
				if e.Severity == asm.SevError && (m == nil || opLines(src, m[1])[e.Span.Pos.Line]) {
					at = append(at, e.Msg)
				}
			}
			if m != nil && len(at) == 0 {
				v.pass = false
				v.reason = fmt.Sprintf("rejected, but not at a %s line (ptoas: %s): %s", m[1], c, first)
			}
			v.checked++
			if agrees(c, at) {
				v.agree++
			}
		}
	}
	return v, obj
}

// TestCorpus reads every file of the fetched PTOAS corpus the way its own
// lit RUN lines read it and holds ptoasm to them: a file ptoas must reject
// (`not ptoas`, or CHECKed `error:` lines) is rejected at the line of the op
// the diagnostic names; a file every RUN line compiles for A5 (or whose
// module says pto.target_arch = "a5") is rejected as A5; every other file
// yields a kernel and a launch. At least 97% of the files must pass; the
// agreement of our diagnostics with the CHECKed ones is reported.
func TestCorpus(t *testing.T) {
	files := corpusFiles(t)
	var n, pass, checked, agree int
	byKind := map[string][2]int{}
	var fails []string
	for _, rel := range files {
		src, err := os.ReadFile(filepath.Join(corpusDir, rel))
		if err != nil {
			t.Fatal(err)
		}
		v, obj := judge(rel, src)
		if obj != nil && len(obj.Kernels) > 0 {
			checkTranslation(t, rel, src)
		}
		k := byKind[v.want.kind]
		k[0]++
		if v.pass {
			k[1]++
		}
		byKind[v.want.kind] = k
		checked += v.checked
		agree += v.agree
		status := "pass"
		if !v.pass {
			status = "FAIL"
			fails = append(fails, rel+": "+v.reason)
		}
		t.Logf("%s\t%s\t%s\t%d/%d\t%s", status, rel, v.want.kind, v.agree, v.checked, v.reason)
		if !strings.HasPrefix(rel, "ptoas/") {
			continue // pto-dsl's files are extra, not PTOAS's corpus
		}
		n++
		if v.pass {
			pass++
		}
	}
	for _, f := range fails {
		t.Logf("FAIL %s", f)
	}
	for _, k := range []string{"kernel", "reject", "a5"} {
		t.Logf("want %s: %d/%d", k, byKind[k][1], byKind[k][0])
	}
	rate := float64(pass) / float64(max(n, 1))
	t.Logf("PTOAS files as their RUN lines expect: %d/%d (%.1f%%); CHECKed diagnostics our errors agree with: %d/%d", pass, n, 100*rate, agree, checked)
	if n > 0 && rate < 0.97 {
		t.Errorf("%.1f%% of the PTOAS files pass, below the 97%% target", 100*rate)
	}
}

// checkTranslation holds a file's PTO-AS translation (what `ptoasm fmt`
// prints) to being a PTO-AS program in canonical form that assembles to as
// many kernels and instructions as the MLIR file.
func checkTranslation(t *testing.T, name string, src []byte) {
	t.Helper()
	f, errs := ParseFile(name, src)
	if errs.HasErrors() {
		return
	}
	var b bytes.Buffer
	if err := asm.Fprint(&b, f); err != nil {
		t.Errorf("%s: print: %v", name, err)
		return
	}
	text := b.Bytes()
	g, errs := parser.ParseFile(name+".as", text)
	if errs.HasErrors() {
		t.Errorf("%s: the PTO-AS translation does not parse: %v\n%s", name, errs, text)
		return
	}
	var again bytes.Buffer
	if err := asm.Fprint(&again, g); err != nil || !bytes.Equal(again.Bytes(), text) {
		t.Errorf("%s: the PTO-AS translation is not in canonical form", name)
	}
	fe := asm.Frontend{ParseFile: parser.ParseFile, ParseExpr: parser.ParseExpr,
		ReadFile: func(string) ([]byte, error) { return text, nil }}
	want, _ := assembleFile(name, src)
	got, errs := asm.Assemble(fe, name+".as", nil)
	if got == nil || errs.HasErrors() {
		t.Errorf("%s: the PTO-AS translation does not assemble: %v", name, errs)
		return
	}
	count := func(o *asm.Object) (n int) {
		for _, k := range o.Kernels {
			n += len(k.Ops)
		}
		return n
	}
	if len(got.Kernels) != len(want.Kernels) || count(got) != count(want) {
		t.Errorf("%s: the translation has %d kernels, %d instructions; the MLIR file %d, %d", name, len(got.Kernels), count(got), len(want.Kernels), count(want))
	}
}

// BenchmarkParseLower parses and lowers the largest file of the fetched
// corpus (by bytes; A5 modules are read as A2/A3 kernels), the work
// `ptoasm asm|lint` does before assembling.
func BenchmarkParseLower(b *testing.B) {
	var name string
	var src []byte
	for _, rel := range corpusFiles(b) {
		s, err := os.ReadFile(filepath.Join(corpusDir, rel))
		if err == nil && len(s) > len(src) {
			name, src = rel, s
		}
	}
	if _, errs := ParseFileWith(name, src, Options{Arch: "a3"}); errs.HasErrors() {
		b.Fatalf("%s: %v", name, errs)
	}
	b.Logf("%s, %d bytes", name, len(src))
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		ParseFileWith(name, src, Options{Arch: "a3"})
	}
}

var (
	checkConst = regexp.MustCompile(`CHECK(?:-DAG)?:\s*%(?:\[\[)?(\w+?)(?::\.\*\]\])?\s*=\s*arith\.constant\s+(\d+)\s*:\s*i64`)
	checkCast  = regexp.MustCompile(`CHECK(?:-DAG)?:.*pto\.pointer_cast\(%(?:\[\[)?(\w+?)(?:\]\])?\)`)
	// checkReserve is a reserve_buffer as PlanMemory left it: its name and base.
	checkReserve = regexp.MustCompile(`CHECK(?:-DAG)?:.*pto\.reserve_buffer\s*\{name = "(\w+)".*base = (\d+)\}`)
)

// TestReserveCorpus holds reserve_buffer placement to the bases the
// corpus's CHECK lines give (pto.reserve_buffer{..., base = N} after
// PlanMemory).
func TestReserveCorpus(t *testing.T) {
	checked := 0
	for _, rel := range corpusFiles(t) {
		src, err := os.ReadFile(filepath.Join(corpusDir, rel))
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]int64{}
		for _, m := range checkReserve.FindAllStringSubmatch(string(src), -1) {
			want[m[1]], _ = strconv.ParseInt(m[2], 10, 64)
		}
		if len(want) == 0 {
			continue
		}
		m, errs := Parse(rel, src)
		if errs.HasErrors() {
			t.Fatalf("%s: %v", rel, errs)
		}
		got := map[string]int64{}
		for _, op := range m.Ops {
			visitTop(op, func(fn *Op) {
				plan := planMemory(fn.Regions[0])
				for r, base := range plan.reserve {
					got[attrString(attrDict(r.Toks)["name"])] = base
				}
			})
		}
		for n, b := range want {
			checked++
			if g, ok := got[n]; !ok || g != b {
				t.Errorf("%s: reserve_buffer %q at %d (placed: %v), its CHECK line says %d", rel, n, g, ok, b)
			}
		}
	}
	t.Logf("%d reserve_buffer bases in CHECK lines", checked)
	if checked == 0 {
		t.Skip("no CHECKed reserve_buffer base in the corpus")
	}
}

// TestPlanMemoryCorpus holds automatic placement to PTOAS's PlanMemory where
// the corpus's plan_memory tests give addresses: each FileCheck line
// `pto.pointer_cast(%cN)` names a buffer PlanMemory put at N, so the lowered
// kernel must have at least as many tiles at N as the CHECK lines name.
func TestPlanMemoryCorpus(t *testing.T) {
	files := corpusFiles(t)
	checked := 0
	for _, rel := range files {
		if !strings.Contains(rel, "plan_memory_") {
			continue
		}
		src, err := os.ReadFile(filepath.Join(corpusDir, rel))
		if err != nil {
			t.Fatal(err)
		}
		consts := map[string]int64{}
		for _, m := range checkConst.FindAllStringSubmatch(string(src), -1) {
			v, _ := strconv.ParseInt(m[2], 10, 64)
			consts[m[1]] = v
		}
		want := map[int64]int{}
		for _, m := range checkCast.FindAllStringSubmatch(string(src), -1) {
			if v, ok := consts[m[1]]; ok {
				want[v]++
			}
		}
		if len(want) == 0 {
			continue
		}
		o, errs := assembleFile(rel, src)
		if o == nil || errs.HasErrors() {
			t.Errorf("%s: %v", rel, errs)
			continue
		}
		got := map[int64]int{}
		for _, k := range o.Kernels {
			for _, ti := range k.Tiles {
				if ti.IsArray || ti.Space != asm.UB {
					continue
				}
				got[ti.Addr[0]]++
			}
		}
		checked++
		for a, n := range want {
			if got[a] < n {
				t.Errorf("%s: PlanMemory puts %d buffer(s) at %d (its CHECK lines); the lowering puts %d there (all: %v)", rel, n, a, got[a], got)
			}
		}
	}
	t.Logf("%d plan_memory files with addresses in their CHECK lines", checked)
}
