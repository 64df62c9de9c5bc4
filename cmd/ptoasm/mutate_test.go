package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestMutatedInputs applies structured damage of the kinds fuzzers do not
// make to every PTOAS MLIR file of corpus/ and every shipped .pto program:
// truncation at each sixteenth, a deleted, duplicated or swapped line, one
// number made 0, -1, 2^31, 2^63, NaN or 1e309, an SSA value renamed (one
// use, or its definition), an unbalanced brace, a byte-order mark, CRLF
// line ends. Each damaged file goes through asm, fmt, fmt -w, lint, run and
// trace in a process of its own under a 90-second timeout (past --max-time 60s) and a cap on its
// address space (prlimit --as), and every answer is checked: exit 0, 1 or
// 2, no Go panic or runtime error, a 2 with a clear first line, no timeout,
// and fmt -w leaves the file whole when it fails.
//
// It takes tens of minutes, so it runs only when PTOASM_MUTATE is set:
// PTOASM_MUTATE=all runs every command on every damage; a number N runs
// asm and fmt on every damage and lint, run and trace on every Nth
// (scripts/hostile-mutate.sh). PTOASM_MUTATE_BIN names the ptoasm binary
// to run (default: this test binary as ptoasm); PTOASM_MUTATE_JOBS the
// processes at once (default 1).
func TestMutatedInputs(t *testing.T) {
	mode := os.Getenv("PTOASM_MUTATE")
	if mode == "" {
		t.Skip("PTOASM_MUTATE not set (scripts/hostile-mutate.sh)")
	}
	deepEvery := 1
	if mode != "all" {
		n, err := strconv.Atoi(mode)
		if err != nil || n < 1 {
			t.Fatalf("PTOASM_MUTATE=%s: want all or a number >= 1", mode)
		}
		deepEvery = n
	}
	jobs, _ := strconv.Atoi(os.Getenv("PTOASM_MUTATE_JOBS"))
	m := &mutator{t: t, bin: os.Getenv("PTOASM_MUTATE_BIN"), tally: map[string]int{}}
	var files []string
	for _, root := range []string{"../../corpus", "../../programs"} {
		filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".pto") {
				files = append(files, p)
			}
			return nil
		})
	}
	sort.Strings(files)
	if f := os.Getenv("PTOASM_MUTATE_FILTER"); f != "" {
		re := regexp.MustCompile(f)
		files = slicesFilter(files, re.MatchString)
	}
	work := make(chan func(), 64)
	var wg sync.WaitGroup
	for range max(jobs, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for w := range work {
				w()
			}
		}()
	}
	k := 0
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range mutations(f, src) {
			deep := k%deepEvery == 0
			k++
			work <- func() { m.check(f, d, deep) }
		}
	}
	// The data files, through the command that reads each.
	for _, d := range mutatedData(t) {
		work <- func() {
			dir := t.TempDir()
			f := filepath.Join(dir, d.file)
			os.WriteFile(f, d.src, 0o644)
			if d.other != nil {
				os.WriteFile(filepath.Join(dir, "other.json"), d.other, 0o644)
			}
			args := make([]string, len(d.args))
			for i, a := range d.args {
				args[i] = strings.NewReplacer("{f}", f, "{dir}", dir).Replace(a)
			}
			m.run(d.name, args, "")
		}
		k++
	}
	// The inputs that are not damaged text: an empty file, a directory,
	// /dev/zero as standard input ("-").
	for _, args := range [][]string{{"asm"}, {"fmt"}, {"fmt", "-w"}, {"lint"}, {"run"}, {"trace"}} {
		work <- func() {
			dir := t.TempDir()
			empty := filepath.Join(dir, "empty.pto")
			os.WriteFile(empty, nil, 0o644)
			m.run("empty", append(args, empty), "")
			m.run("directory", append(args, dir), "")
			m.run("/dev/zero as -", append(args, "-"), "/dev/zero")
		}
	}
	close(work)
	wg.Wait()
	t.Logf("%d files, %d damaged copies, %d runs:%s", len(files), k, m.runs, tallyText(m.tally))
}

func slicesFilter(s []string, keep func(string) bool) []string {
	var out []string
	for _, x := range s {
		if keep(x) {
			out = append(out, x)
		}
	}
	return out
}

// mutator runs ptoasm on damaged files in processes of their own.
type mutator struct {
	t     *testing.T
	bin   string     // ptoasm to run; "": this test binary
	mu    sync.Mutex // guards runs and tally
	inMu  sync.Mutex // one in-process run at a time
	runs  int
	tally map[string]int // "cmd:exit" -> count
}

// mutateAS caps each run's address space: what a damaged file may make a
// run reserve, well above the 768 MiB default memory budget.
const mutateAS = "4294967296"

// mutateTimeout is how long a run may take: past guarded's --max-time of
// 60 s, which a run that does not end must report.
const mutateTimeout = 90 * time.Second

// check writes d beside copies of the files the original includes and
// runs the commands on it; fmt -w must rewrite the file to what fmt printed
// or leave it as it was.
func (m *mutator) check(orig string, d damaged, deep bool) {
	dir, err := os.MkdirTemp("", "ptoasm-mutate")
	if err != nil {
		m.t.Error(err)
		return
	}
	defer os.RemoveAll(dir)
	// Includes are relative to the file: copy its directory's .pto files.
	sibs, _ := filepath.Glob(filepath.Join(filepath.Dir(orig), "*.pto"))
	for _, s := range sibs {
		if b, err := os.ReadFile(s); err == nil && len(b) < 1<<20 {
			os.WriteFile(filepath.Join(dir, filepath.Base(s)), b, 0o644)
		}
	}
	f := filepath.Join(dir, filepath.Base(orig))
	os.WriteFile(f, d.src, 0o644)
	// asm and fmt in this process (thousands of runs; their input is
	// bounded by --max-file-size), the runs of the program in processes
	// of their own.
	m.inProcess(d.name, []string{"asm", f})
	fmtCode, formatted := m.inProcess(d.name, []string{"fmt", f})
	if deep {
		m.run(d.name, append([]string{"lint", f}, guarded...), "")
		m.run(d.name, append([]string{"run", f, "--no-lint"}, guarded...), "")
		m.run(d.name, append([]string{"trace", f, "--to", "2000"}, guarded...), "")
	}
	code, _ := m.inProcess(d.name, []string{"fmt", "-w", f})
	after, err := os.ReadFile(f)
	switch {
	case err != nil:
		m.t.Errorf("%s: fmt -w lost the file: %v", d.name, err)
	case code == 0 && fmtCode == 0 && string(after) != formatted:
		m.t.Errorf("%s: fmt -w wrote other than what fmt printed", d.name)
	case code != 0 && !bytes.Equal(after, d.src):
		m.t.Errorf("%s: fmt -w failed (exit %d) and changed the file (%d bytes, was %d)", d.name, code, len(after), len(d.src))
	}
}

// inProcess runs ptoasm args in this process, one at a time, and checks
// the answer as run does; a run past mutateTimeout fails the test.
func (m *mutator) inProcess(what string, args []string) (int, string) {
	m.inMu.Lock()
	defer m.inMu.Unlock()
	timer := time.AfterFunc(mutateTimeout, func() {
		m.t.Errorf("%s: ptoasm %s: still running after %v", what, strings.Join(args, " "), mutateTimeout)
	})
	defer timer.Stop()
	r := damageRunner{t: m.t}
	code, out, errOut := r.inProcess(args, nil)
	m.check1(what, args, code, errOut, false)
	return code, out
}

// run runs ptoasm args (stdin from the file named, when set) and checks
// the answer as damageRunner.run does, with a timeout and an address-space
// cap.
func (m *mutator) run(what string, args []string, stdin string) (int, string, string) {
	t := m.t
	ctx, cancel := context.WithTimeout(context.Background(), mutateTimeout)
	defer cancel()
	bin := m.bin
	if bin == "" {
		bin = os.Args[0]
	}
	cmd := exec.CommandContext(ctx, "prlimit", append([]string{"--as=" + mutateAS, "--", bin}, args...)...)
	cmd.Env = append(os.Environ(), "PTOASM_TEST_MAIN=1")
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	if stdin != "" {
		in, err := os.Open(stdin)
		if err != nil {
			t.Error(err)
			return -1, "", ""
		}
		defer in.Close()
		cmd.Stdin = in
	}
	err := cmd.Run()
	code := 0
	if ctx.Err() != nil {
		code = -1
	} else if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Errorf("%s: ptoasm %s: %v", what, strings.Join(args, " "), err)
		return -1, "", ""
	}
	m.check1(what, args, code, e.String(), ctx.Err() != nil)
	return code, o.String(), e.String()
}

// check1 counts one answer and checks it.
func (m *mutator) check1(what string, args []string, code int, errOut string, timedOut bool) {
	t := m.t
	m.mu.Lock()
	m.runs++
	m.tally[fmt.Sprintf("%s:%d", args[0], code)]++
	m.mu.Unlock()
	first, _, _ := strings.Cut(errOut, "\n")
	line := "ptoasm " + strings.Join(args, " ")
	switch {
	case timedOut:
		t.Errorf("%s: %s: still running after %v, no limit message", what, line, mutateTimeout)
	case panicked.MatchString(errOut) || strings.Contains(errOut, "runtime error"):
		t.Errorf("%s: %s: crashed:\n%.3000s", what, line, errOut)
	case code < 0 || code > 2:
		t.Errorf("%s: %s: exit %d\n%.2000s", what, line, code, errOut)
	case code == 2 && !damagedExit2.MatchString(first):
		t.Errorf("%s: %s: exit 2 without a clear first line:\n%.2000s", what, line, errOut)
	}
}

// mutatedData is each structured damage of the data files: the default
// profile (--profile), a suppressions file (--suppress), a sweep shard
// (sweep merge, beside the other shard) and a step script (--script).
func mutatedData(t *testing.T) []struct {
	name, file string
	src, other []byte
	args       []string
} {
	prof, err := os.ReadFile("../../pipes/profiles/a2a3.txt")
	if err != nil {
		t.Fatal(err)
	}
	supp := []byte("# allgather_gemm's notes\ndouble-set common.pto:225\ndouble-set common.pto:227\n* common.pto:244\n")
	script := []byte("break 30\ncontinue\nwhere\nqueues all\nflags\nprint %t\nstep 5\nback 2\nclocks\nfindings\ncycle 100\nquit\n")
	shard0, shard1 := []byte(hostileShard(0)), []byte(hostileShard(1))
	type data = struct {
		name, file string
		src, other []byte
		args       []string
	}
	var out []data
	for _, c := range []data{
		{file: "a2a3.txt", src: prof, args: []string{"run", "vec_add", "--timing-only", "--profile", "{f}"}},
		{file: "supp.txt", src: supp, args: []string{"lint", "allgather_gemm", "--suppress", "{f}"}},
		{file: "shard.json", src: shard0, other: shard1, args: []string{"sweep", "merge", "{f}", "{dir}/other.json"}},
		{file: "step.cmd", src: script, args: []string{"step", "vec_add", "--script", "{f}"}},
	} {
		for _, d := range mutations(c.file, c.src) {
			c.name, c.src = d.name, d.src
			out = append(out, c)
		}
	}
	return out
}

// mutations are the structured damages of src: truncation at each
// sixteenth, two deleted, duplicated and swapped lines each, one number
// made each of the extreme values, two SSA values renamed (a use, then the
// definition), an unbalanced brace each way, a byte-order mark and CRLF.
func mutations(name string, src []byte) []damaged {
	rng := rand.New(rand.NewPCG(uint64(len(src)), uint64(len(name))))
	var out []damaged
	add := func(kind string, at int, b []byte) {
		out = append(out, damaged{fmt.Sprintf("%s %s@%d", name, kind, at), b, at})
	}
	if len(src) == 0 {
		return nil
	}
	for i := 1; i < 16; i++ {
		at := len(src) * i / 16
		add("trunc", at, bytes.Clone(src[:at]))
	}
	lines := bytes.SplitAfter(src, []byte("\n"))
	join := func(ls ...[][]byte) []byte {
		var b []byte
		for _, l := range ls {
			b = append(b, bytes.Join(l, nil)...)
		}
		return b
	}
	for range 2 {
		i := rng.IntN(len(lines))
		add("delline", i+1, join(lines[:i], lines[i+1:]))
		i = rng.IntN(len(lines))
		add("dupline", i+1, join(lines[:i+1], lines[i:]))
		i, j := rng.IntN(len(lines)), rng.IntN(len(lines))
		if i > j {
			i, j = j, i
		}
		if i != j {
			sw := append([][]byte{}, lines...)
			sw[i], sw[j] = sw[j], sw[i]
			add(fmt.Sprintf("swap%d", j+1), i+1, join(sw))
		}
	}
	// Numbers: a dimension, a count, an offset or a constant made extreme.
	nums := regexp.MustCompile(`\b[0-9]+(\.[0-9]+)?\b`).FindAllIndex(src, -1)
	if len(nums) > 0 {
		for _, v := range []string{"0", "-1", "2147483648", "9223372036854775808", "NaN", "1e309"} {
			loc := nums[rng.IntN(len(nums))]
			add("num="+v, loc[0], splice(src, loc[0], loc[1], v))
		}
	}
	// SSA values: rename one use (it no longer names anything), then the
	// first occurrence, its definition (every use dangles).
	ssa := regexp.MustCompile(`%[A-Za-z_][A-Za-z0-9_]*|%[0-9]+`).FindAllIndex(src, -1)
	if len(ssa) > 0 {
		loc := ssa[rng.IntN(len(ssa))]
		add("renameuse", loc[0], splice(src, loc[0], loc[1], "%renamed_x"))
		loc = ssa[0]
		add("renamedef", loc[0], splice(src, loc[0], loc[1], "%renamed_y"))
	}
	if i := bytes.LastIndexByte(src, '}'); i >= 0 {
		add("dropbrace", i, splice(src, i, i+1, ""))
	}
	if i := bytes.IndexByte(src, '{'); i >= 0 {
		add("extrabrace", i, splice(src, i, i, "{"))
		add("extraclose", i, splice(src, i+1, i+1, "}"))
	}
	add("bom", 0, append([]byte("\ufeff"), src...))
	add("bommid", len(src)/2, splice(src, len(src)/2, len(src)/2, "\ufeff"))
	add("crlf", 0, bytes.ReplaceAll(src, []byte("\n"), []byte("\r\n")))
	return out
}

// splice is src with [i, j) replaced by s.
func splice(src []byte, i, j int, s string) []byte {
	b := append(bytes.Clone(src[:i]), s...)
	return append(b, src[j:]...)
}
