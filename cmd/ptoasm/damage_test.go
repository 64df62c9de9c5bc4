package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	protocol "github.com/tliron/glsp/protocol_3_16"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/lsp"
	"github.com/ptoasm/ptoasm/lsp/lsptest"
	"github.com/ptoasm/ptoasm/machine"
	"github.com/ptoasm/ptoasm/memory"
)

// TestDamagedInputs damages real files deterministically (truncation at many
// offsets, byte flips, deleted and duplicated lines, huge literals, a very
// long line, NULs, CR line ends) and runs every command that reads them
// through the CLI: the shipped programs with their includes, PTOAS MLIR
// files of corpus/ (when present), the default profile, an .npy input, a
// suppressions file, sweep shards, a step script and -D values. Whatever the
// damage, each command ends in exit 0, 1 or 2, a 2 with a positioned error
// or a message naming the input (or a limit and its flag), never a panic,
// and no file it was not asked to write changes. `fmt -w` either rewrites
// the file to what `fmt` prints or leaves it byte for byte.
//
// It runs in process, one damage of each kind per file: under -short only
// the commands that parse (asm, fmt, fmt -w), the data files, special files
// and LSP documents; by default also lint, run, trace and lint --fix of the
// damaged programs. PTOASM_DAMAGE=full runs 24 damages of each kind, each
// in its own process under a 2-minute timeout with its peak memory checked. Each prints a tally
// (docs/cli.md, "Damaged inputs (session 16)").
func TestDamagedInputs(t *testing.T) {
	full := os.Getenv("PTOASM_DAMAGE") == "full"
	// One damage of each kind per file by default: with lint, run and
	// trace of each, four took cmd/ptoasm's tests from about 190 s to 420 s
	// on the 2-CPU host, too near go test's 10-minute limit for a package.
	n := 1
	if full {
		n = 24
	}
	r := &damageRunner{t: t, sub: full, deep: !testing.Short(), tally: map[string]int{}}
	r.programs(n)
	r.mlir(n, full)
	r.dataFiles(n)
	r.specialFiles()
	r.lsp(n)
	r.defines()
	t.Logf("%d runs of damaged inputs:%s", r.runs, tallyText(r.tally))
}

// tallyText is " key=count" for each key of tally, in order.
func tallyText(tally map[string]int) string {
	keys := make([]string, 0, len(tally))
	for k := range tally {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, " %s=%d", k, tally[k])
	}
	return b.String()
}

// damageRunner runs the CLI on damaged inputs and checks each answer.
type damageRunner struct {
	t     *testing.T
	sub   bool           // each run in its own process, memory checked
	deep  bool           // lint and run damaged programs too (not under -short)
	runs  int            // commands run
	tally map[string]int // "cmd exit N" -> count
}

// damagedExit2 is the first line of stderr on exit 2 for damaged input: a
// positioned error in some file, an error naming the file (or the flag or
// input) it is about, or a limit naming its flag.
var damagedExit2 = regexp.MustCompile(`^(\S+:\d+:\d+: error: .|(\S+|<command line>): error: .|ptoasm: .)`)

// panicked says stderr holds a Go panic or a runtime crash.
var panicked = regexp.MustCompile(`(?m)^(panic: |fatal error: |goroutine \d+ \[)`)

// run runs args (with the run guards that bound a damaged program) and
// checks the answer; it returns the exit status and stdout.
func (r *damageRunner) run(what string, args []string, stdin []byte) (int, string) {
	t := r.t
	t.Helper()
	r.runs++
	var code int
	var out, errOut string
	if r.sub {
		var rss int64
		code, out, errOut, rss = runHostile(t, args, stdin)
		if rss > 800<<20 {
			t.Errorf("%s: ptoasm %s: peak RSS %d MiB", what, strings.Join(args, " "), rss>>20)
		}
	} else {
		code, out, errOut = r.inProcess(args, stdin)
	}
	r.tally[fmt.Sprintf("%s:%d", args[0], code)]++
	first, _, _ := strings.Cut(errOut, "\n")
	switch {
	case panicked.MatchString(errOut):
		t.Errorf("%s: ptoasm %s: crashed:\n%.3000s", what, strings.Join(args, " "), errOut)
	case code < 0 || code > 2:
		t.Errorf("%s: ptoasm %s: exit %d\n%.2000s", what, strings.Join(args, " "), code, errOut)
	case strings.Contains(first, "unknown flag"):
		// The table's own mistake: the command did not run at all.
		t.Errorf("%s: ptoasm %s: %s", what, strings.Join(args, " "), first)
	case code == 2 && !damagedExit2.MatchString(first):
		t.Errorf("%s: ptoasm %s: exit 2 without a clear first line:\n%.2000s", what, strings.Join(args, " "), errOut)
	case len(first) > 4096:
		// A message quotes what it is about in part: a 5,000-digit
		// literal or a 300 KB name printed whole buries the message.
		t.Errorf("%s: ptoasm %s: a first line of %d bytes: %.300s...", what, strings.Join(args, " "), len(first), first)
	}
	return code, out
}

// inProcess is realMain with a panic turned into stderr text, so one
// crasher does not hide the others.
func (r *damageRunner) inProcess(args []string, stdin []byte) (code int, out, errOut string) {
	var o, e bytes.Buffer
	defer func() {
		if p := recover(); p != nil {
			code, out, errOut = 2, o.String(), fmt.Sprintf("panic: %v\n", p)
		}
	}()
	code = realMainIO(args, bytes.NewReader(stdin), &o, &e)
	return code, o.String(), e.String()
}

// guarded are the flags that bound a run of a damaged program: whatever the
// damage did to its loops and sizes, it ends within these.
var guarded = []string{"--max-memory", "256MiB", "--max-cycles", "20000000", "--max-time", "60s"}

// damaged is one damaged copy of a file.
type damaged struct {
	name string
	src  []byte
	at   int // byte offset of the damage (of the line, for line damage)
}

// damages are n deterministic damages of each kind to src: truncation
// (evenly spaced, and inside the first string, number and keyword), byte
// flips to bytes that matter to the syntax, deleted and duplicated lines,
// huge integer literals, a very long line, a NUL, CR line ends.
func damages(name string, src []byte, n int) []damaged {
	rng := rand.New(rand.NewPCG(uint64(len(src)), uint64(len(name))))
	var out []damaged
	add := func(kind string, at int, b []byte) {
		out = append(out, damaged{fmt.Sprintf("%s %s@%d", name, kind, at), b, at})
	}
	cut := func(at int) { add("trunc", at, bytes.Clone(src[:at])) }
	for i := 1; i <= n; i++ {
		cut(len(src) * i / (n + 1))
	}
	for _, re := range []string{`"[^"]`, `[0-9][0-9]`, `include|kernel|func\.func|launch|for |scf\.for`} {
		if loc := regexp.MustCompile(re).FindIndex(src); loc != nil {
			cut(loc[0] + 1)
		}
	}
	const nasty = "\x00\xff{}()[]\"%@,:=\n9-#<>/"
	for range n {
		at := rng.IntN(len(src))
		b := bytes.Clone(src)
		b[at] = nasty[rng.IntN(len(nasty))]
		add("flip", at, b)
	}
	lines := bytes.SplitAfter(src, []byte("\n"))
	for range n {
		i := rng.IntN(len(lines))
		add("delline", i+1, bytes.Join(append(append([][]byte{}, lines[:i]...), lines[i+1:]...), nil))
		i = rng.IntN(len(lines))
		add("dupline", i+1, bytes.Join(append(append(append([][]byte{}, lines[:i+1]...), lines[i]), lines[i+1:]...), nil))
	}
	nums := regexp.MustCompile(`\b[0-9]+\b`).FindAllIndex(src, -1)
	for k := 0; k < len(nums) && k < n; k++ {
		loc := nums[rng.IntN(len(nums))]
		for _, huge := range []string{"99999999999999999999999999", "9223372036854775807", "0x7fffffffffffffff"} {
			b := append(append(bytes.Clone(src[:loc[0]]), huge...), src[loc[1]:]...)
			add("huge", loc[0], b)
		}
	}
	long := append([]byte("const "+strings.Repeat("L", 300000)+" = 1\n"), src...)
	add("longline", 0, long)
	mid := len(src) / 2
	add("nul", mid, append(append(bytes.Clone(src[:mid]), 0), src[mid:]...))
	add("cr", 0, bytes.ReplaceAll(src, []byte("\n"), []byte("\r")))
	add("crlf", 0, bytes.ReplaceAll(src, []byte("\n"), []byte("\r\n")))
	return out
}

// snapshot is the content hash of every file under dir, to find files a
// command changed, created or deleted.
func snapshot(t *testing.T, dir string) map[string][32]byte {
	t.Helper()
	m := map[string][32]byte{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			b, _ := os.ReadFile(p)
			m[p] = sha256.Sum256(b)
		}
		return nil
	})
	return m
}

// unchanged fails the test if files under dir differ from before, except
// the paths in allowed.
func unchanged(t *testing.T, what, dir string, before map[string][32]byte, allowed ...string) {
	t.Helper()
	after := snapshot(t, dir)
	ok := map[string]bool{}
	for _, a := range allowed {
		ok[a] = true
	}
	for p, h := range before {
		if h2, found := after[p]; !found {
			t.Errorf("%s: %s was deleted", what, p)
		} else if h2 != h && !ok[p] {
			t.Errorf("%s: %s was modified", what, p)
		}
	}
	for p := range after {
		if _, found := before[p]; !found && !ok[p] {
			t.Errorf("%s: %s was created", what, p)
		}
	}
}

// program is a shipped program and the files it includes, by name within
// programs/.
type program struct {
	dir   string
	main  string
	files []string // main first
}

var damagedPrograms = []program{
	{"allgather_gemm", "allgather_gemm.pto", []string{"allgather_gemm.pto", "common.pto"}},
	{"ffn_grid", "unified_as_shipped.pto", []string{"unified_as_shipped.pto", "ffn_common.pto"}},
	{"topk", "topk.pto", []string{"topk.pto"}},
}

// programs damages each file of each program in turn (the others intact)
// and runs asm, fmt, fmt -w, lint and run on the main file.
func (r *damageRunner) programs(n int) {
	for _, p := range damagedPrograms {
		orig := map[string][]byte{}
		for _, f := range p.files {
			b, err := os.ReadFile(filepath.Join("../../programs", p.dir, f))
			if err != nil {
				r.t.Fatal(err)
			}
			orig[f] = b
		}
		for _, f := range p.files {
			for _, d := range damages(p.dir+"/"+f, orig[f], n) {
				dir := r.t.TempDir()
				for g, b := range orig {
					if g == f {
						b = d.src
					}
					os.WriteFile(filepath.Join(dir, g), b, 0o644)
				}
				r.source(d.name, dir, filepath.Join(dir, p.main), true)
			}
		}
	}
}

// source runs the commands that read a program on main (in dir, with its
// includes): asm, fmt, fmt -w, and for PTO-AS a lint and a run.
func (r *damageRunner) source(what, dir, main string, run bool) {
	before := snapshot(r.t, dir)
	r.run(what, []string{"asm", main}, nil)
	fmtCode, formatted := r.run(what, []string{"fmt", main}, nil)
	var traceOut string
	if run && r.deep {
		r.run(what, append([]string{"lint", main}, guarded...), nil)
		r.run(what, append([]string{"run", main, "--no-lint"}, guarded...), nil)
		// A trace file, when written, is whole JSON.
		traceOut = filepath.Join(dir, "t.json")
		r.run(what, append([]string{"trace", main, "--to", "3000", "--pipe", "MTE2", "--chrome", traceOut}, guarded...), nil)
		if b, err := os.ReadFile(traceOut); err == nil && !json.Valid(b) {
			r.t.Errorf("%s: trace --chrome wrote %d bytes that are not JSON", what, len(b))
		}
	}
	unchanged(r.t, what, dir, before, traceOut)
	src, _ := os.ReadFile(main)
	code, _ := r.run(what, []string{"fmt", "-w", main}, nil)
	after, _ := os.ReadFile(main)
	switch {
	case !run && code == 2:
		// fmt -w refuses PTOAS MLIR: its canonical form is the PTO-AS
		// translation, which would replace the source.
		if !bytes.Equal(after, src) {
			r.t.Errorf("%s: fmt -w refused and changed the file", what)
		}
	case code != fmtCode:
		r.t.Errorf("%s: fmt exit %d, fmt -w exit %d", what, fmtCode, code)
	case code == 0 && string(after) != formatted:
		r.t.Errorf("%s: fmt -w wrote other than what fmt printed", what)
	case code != 0 && !bytes.Equal(after, src):
		r.t.Errorf("%s: fmt -w failed (exit %d) and changed the file", what, code)
	}
	unchanged(r.t, what+" (fmt -w)", dir, before, main, traceOut)
	if run && r.deep {
		// lint --fix writes the file back only when a fix held; a file
		// that does not assemble stays as it was.
		src, _ := os.ReadFile(main)
		before := snapshot(r.t, dir)
		code, _ := r.run(what, append([]string{"lint", "--fix", main}, guarded...), nil)
		if after, _ := os.ReadFile(main); code == 2 && !bytes.Equal(after, src) {
			r.t.Errorf("%s: lint --fix exit 2 changed the file", what)
		}
		unchanged(r.t, what+" (lint --fix)", dir, before, main, traceOut)
	}
}

// mlir damages PTOAS MLIR files of corpus/ (a spread of sizes; all of them
// when full) and runs asm, fmt and lint on each.
func (r *damageRunner) mlir(n int, full bool) {
	var files []string
	filepath.WalkDir("../../corpus", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".pto") {
			files = append(files, p)
		}
		return nil
	})
	if len(files) == 0 {
		r.t.Log("no corpus/: MLIR damage skipped")
		return
	}
	sort.Strings(files)
	step := len(files) / 6
	if full {
		step = len(files) / 24
	}
	for i := 0; i < len(files); i += max(step, 1) {
		src, err := os.ReadFile(files[i])
		if err != nil {
			r.t.Fatal(err)
		}
		for _, d := range damages(filepath.Base(files[i]), src, max(n/3, 2)) {
			dir := r.t.TempDir()
			main := filepath.Join(dir, "k.pto")
			os.WriteFile(main, d.src, 0o644)
			r.source(d.name, dir, main, false)
			if r.deep {
				r.run(d.name, append([]string{"lint", main}, guarded...), nil)
			}
		}
	}
}

// dataFiles damages the other inputs: the default profile (--profile), an
// .npy (--input), a suppressions file (--suppress), sweep shards (sweep
// merge) and a step script (--script).
func (r *damageRunner) dataFiles(n int) {
	t := r.t
	prof, err := os.ReadFile("../../pipes/profiles/a2a3.txt")
	if err != nil {
		t.Fatal(err)
	}
	var npy bytes.Buffer
	memory.WriteArrayNPY(&npy, &memory.Array{Shape: []int{1024, 256}, Data: make([]float64, 1024*256)}, asm.F32)
	supp := []byte("# allgather_gemm's notes\ndouble-set common.pto:225\ndouble-set common.pto:227\n* common.pto:244\n")
	script := []byte("break 30\ncontinue\nwhere\nqueues all\nflags\nprint %t\nstep 5\nback 2\nclocks\nfindings\ncycle 100\nquit\n")
	dir := t.TempDir()
	other := filepath.Join(dir, "other.json")
	var shards [][]byte
	for i := range 2 {
		code, out, errOut := runCLI("sweep", "vec_add", "--set", "dma.gm_ub.bw=100,200", "--timing-only", "--jobs", "1", "--shard", fmt.Sprintf("%d/2", i))
		if code != 0 {
			t.Fatalf("sweep shard: exit %d\n%s", code, errOut)
		}
		shards = append(shards, []byte(out))
	}
	os.WriteFile(other, shards[1], 0o644)
	cases := []struct {
		name string
		src  []byte
		args func(f string) []string
	}{
		{"a2a3.txt", prof, func(f string) []string { return []string{"run", "vec_add", "--timing-only", "--profile", f} }},
		{"x.npy", npy.Bytes(), func(f string) []string { return []string{"run", "vec_add", "--input", "X=" + f} }},
		{"supp.txt", supp, func(f string) []string { return []string{"lint", "allgather_gemm", "--suppress", f} }},
		{"shard.json", shards[0], func(f string) []string { return []string{"sweep", "merge", f, other} }},
		{"step.cmd", script, func(f string) []string { return []string{"step", "vec_add", "--script", f} }},
	}
	for _, c := range cases {
		for _, d := range damages(c.name, c.src, n) {
			if c.name == "x.npy" && strings.Contains(d.name, "longline") {
				continue // a 300 KB header, the same as a truncated one
			}
			f := filepath.Join(dir, c.name)
			os.WriteFile(f, d.src, 0o644)
			before := snapshot(t, dir)
			r.run(d.name, c.args(f), nil)
			unchanged(t, d.name, dir, before)
		}
	}
}

// specialFiles are files that are not damaged text: empty, binary, a
// directory, a missing or cyclic include, an include of a directory, a
// dangling symlink.
func (r *damageRunner) specialFiles() {
	t := r.t
	dir := t.TempDir()
	bin := make([]byte, 4096)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range bin {
		bin[i] = byte(rng.Uint32())
	}
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(s), 0o644)
		return p
	}
	files := map[string]string{
		"empty":          write("empty.pto", ""),
		"binary":         write("binary.pto", string(bin)),
		"directory":      dir,
		"missing":        filepath.Join(dir, "nosuch.pto"),
		"missing inc":    write("mi.pto", "include \"nosuch.pto\"\n"),
		"include cycle":  write("ca.pto", "include \"cb.pto\"\nconst A = 1\n"),
		"self include":   write("self.pto", "include \"self.pto\"\n"),
		"include dir":    write("incdir.pto", "include \".\"\n"),
		"include binary": write("incbin.pto", "include \"binary.pto\"\n"),
		"include empty":  write("incempty.pto", "include \"empty.pto\"\n"),
		"include abs":    write("incabs.pto", "include \"/\"\n"),
		"include nul":    write("incnul.pto", "include \"a\x00b\"\n"),
	}
	write("cb.pto", "include \"ca.pto\"\n")
	os.Symlink(filepath.Join(dir, "gone.pto"), filepath.Join(dir, "dangling.pto"))
	files["dangling"] = filepath.Join(dir, "dangling.pto")
	names := make([]string, 0, len(files))
	for k := range files {
		names = append(names, k)
	}
	sort.Strings(names)
	// fmt reads only the file itself: an include it cannot read is
	// asm's business, and fmt -w may rewrite the file.
	fmtOK := map[string]bool{"empty": true, "missing inc": true, "include cycle": true, "self include": true,
		"include dir": true, "include binary": true, "include empty": true, "include abs": true, "include nul": true}
	for _, k := range names {
		f := files[k]
		before := snapshot(t, dir)
		for _, args := range [][]string{{"asm", f}, {"lint", f}, {"run", f}, {"trace", f}, {"fmt", f}, {"fmt", "-w", f}} {
			code, _ := r.run(k, args, nil)
			if k == "directory" && code == 2 {
				// It is there: "no such file" sent users looking for a typo.
				if _, _, errOut := runCLI(args...); strings.Contains(errOut, "no such file") {
					t.Errorf("%s: ptoasm %s: %s", k, strings.Join(args, " "), errOut)
				}
			}
			if code == 0 && !((k == "include empty" || k == "empty") && args[0] == "asm") && !(args[0] == "fmt" && fmtOK[k]) {
				t.Errorf("%s: ptoasm %s: exit 0", k, strings.Join(args, " "))
			}
		}
		unchanged(t, k, dir, before, f)
		before = snapshot(t, dir)
		for _, flag := range []string{"--profile", "--suppress"} {
			r.run(k, []string{"lint", "vec_add", flag, f}, nil)
		}
		r.run(k, []string{"run", "vec_add", "--input", "X=" + f}, nil)
		r.run(k, []string{"step", "vec_add", "--script", f}, nil)
		r.run(k, []string{"sweep", "merge", f}, nil)
		unchanged(t, k, dir, before)
	}
}

// defines are -D values out of any sane range on real programs: each ends
// in a run, a positioned error or a limit naming its flag.
func (r *damageRunner) defines() {
	defs := []string{
		"RANKS=1<<40", "RANKS=0", "RANKS=-1", "RANKS=65536", "RANKS=99999999999999999999",
		"M=1<<62", "M=-128", "M=0", "M=1e30", "M=3", "K=1<<40", "K=-1", "K=0",
		"N=9223372036854775807", "M=(", "M=" + strings.Repeat("9", 5000), "M=" + strings.Repeat("(", 300) + "1" + strings.Repeat(")", 300),
	}
	if !r.deep {
		defs = []string{"RANKS=65536", "M=" + strings.Repeat("9", 5000)}
	}
	for _, d := range defs {
		for _, args := range [][]string{
			append([]string{"run", "allgather_gemm", "-D", d}, guarded...),
			append([]string{"lint", "allgather_gemm", "-D", d}, guarded...),
		} {
			r.run("-D "+d[:min(len(d), 40)], args, nil)
		}
	}
}

// lsp opens damaged documents in one editor session with the CLI's lint:
// allgather_gemm with its main file or its include damaged, and MLIR files.
// Every query (hover, definition, references, completion around the damage;
// tokens, symbols, inlay hints, code actions, formatting of the whole) must
// answer, and the analysis of every version must be published.
func (r *damageRunner) lsp(n int) {
	t := r.t
	dir := t.TempDir()
	cl := lsptest.Start(t, func(ctx context.Context, rw io.ReadWriteCloser) error {
		opt := lspOptions(&env{lim: limits{maxMemory: 256 << 20, maxFileSize: 1 << 20}}, machine.Options{MaxTime: time.Minute}, time.Millisecond)
		return lsp.New(opt).Serve(ctx, rw)
	})
	version := map[string]int32{}
	open := func(what, path string, text []byte, at int) {
		uri := "file://" + path
		version[uri]++
		var err error
		if version[uri] == 1 {
			err = cl.Open(uri, string(text))
		} else {
			err = cl.Change(uri, version[uri], string(text))
		}
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if _, err := cl.WaitDiagnostics(uri, 2*time.Minute, lsptest.Version(version[uri])); err != nil {
			t.Errorf("%s: %v", what, err)
			return
		}
		r.runs++
		r.tally["lsp"]++
		line := bytes.Count(text[:min(at, len(text))], []byte("\n"))
		for _, pos := range []protocol.Position{{Line: protocol.UInteger(line)}, {Line: protocol.UInteger(line), Character: 5},
			{Line: protocol.UInteger(line), Character: 40}, {Line: protocol.UInteger(line + 1), Character: 8}} {
			if err := cl.AskAt(uri, pos); err != nil {
				t.Errorf("%s: %v", what, err)
			}
		}
		if err := cl.AskWhole(uri, bytes.Count(text, []byte("\n"))); err != nil {
			t.Errorf("%s: %v", what, err)
		}
	}
	p := damagedPrograms[0]
	orig := map[string][]byte{}
	for _, f := range p.files {
		orig[f], _ = os.ReadFile(filepath.Join("../../programs", p.dir, f))
		os.WriteFile(filepath.Join(dir, f), orig[f], 0o644)
	}
	main := filepath.Join(dir, p.main)
	for _, f := range p.files {
		for _, d := range damages(p.dir+"/"+f, orig[f], max(n/2, 1)) {
			if f == p.main {
				open(d.name, main, d.src, d.at)
				continue
			}
			// The include on disk is damaged; the editor holds the main
			// file as it was.
			os.WriteFile(filepath.Join(dir, f), d.src, 0o644)
			open(d.name, main, orig[p.main], 0)
			os.WriteFile(filepath.Join(dir, f), orig[f], 0o644)
		}
	}
	mlirFile := filepath.Join(dir, "k.pto")
	for _, name := range []string{"../../cmd/ptoasm/testdata/dn_mlir.pto"} {
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range damages(filepath.Base(name), src, max(n/2, 1)) {
			open(d.name, mlirFile, d.src, d.at)
		}
	}
}
