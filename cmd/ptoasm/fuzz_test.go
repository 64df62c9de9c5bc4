package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/internal/fuzzseed"
	"github.com/ptoasm/ptoasm/memory"
)

// FuzzRunLint drives the whole command line on arbitrary program text: run
// (with the hazard detector attached), run --timing-only, lint (timing-only
// run, detector and static pass) and the static lint alone, under small
// memory, file-size and cycle budgets. Whatever the text,
// each ends in exit 0, 1 or 2 with a message for 2, and never panics or runs
// away; the budgets keep every input within a few hundred MiB and a
// bounded number of simulated cycles. Seeded with testdata/hostile (read at
// run time) and testdata/fuzz/FuzzRunLint.
func FuzzRunLint(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(hostileDir, "*.pto"))
	for _, name := range files {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("const A = " + strings.Repeat("-", 300) + "1\nkernel k : aiv {\n    dsb\n}\nlaunch ranks=1 {\n    run k\n}\n"))
	f.Add([]byte("const A = 1\nconst A = 1\nconst A = 1\n"))
	f.Add([]byte("kernel k : aiv {\n    while 1 {\n        dsb\n    }\n}\nlaunch ranks=1 {\n    run k\n}\n"))
	// The small files of the repository, PTO-AS and MLIR: every recent
	// instruction and feature, and the MLIR lowering, in the CLI's paths.
	for _, src := range fuzzseed.Files(f, 8<<10, nil, fuzzseed.Dirs...) {
		f.Add(src)
	}
	limits := []string{"--max-memory", "32MiB", "--max-file-size", "64KiB"}
	// A fortieth of the cycle budgets when fuzzing: a mutated loop bound or
	// block count runs to the budget, three times an input, and a run of
	// hundreds of blocks on every core to 20000 cycles took seconds.
	cycles, idle := "200000", "100000"
	if fuzzseed.Fuzzing() {
		cycles, idle = "5000", "2500"
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		dir := t.TempDir()
		path := filepath.Join(dir, "f.pto")
		if err := os.WriteFile(path, src, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{
			{"run", path, "--max-cycles", cycles},
			{"run", path, "--timing-only", "--max-cycles", cycles},
			{"lint", path, "--max-cycles", cycles, "--max-idle-cycles", idle},
			{"lint", path, "--static"},
		} {
			var o, e bytes.Buffer
			code := realMain(append(args, limits...), &o, &e)
			switch {
			case code < 0 || code > 2:
				t.Fatalf("ptoasm %s: exit %d", args[0], code)
			case code == 2:
				checkExit2(t, args, e.String())
			}
		}
	})
}

// exit2 is what the first line of stderr says when ptoasm exits 2 on a
// program: a positioned error (in the file or one it includes), a file past
// the size limit naming its flag, or a run guard's stop naming the flag
// that raises it, or what is wrong with the program as a whole, naming its
// file (`the program has no launch section`).
var exit2 = regexp.MustCompile(`^(\S+:\d+:\d+: error: .|ptoasm: \S+\.pto: .|\S+: error: \S+: larger than .*\(--max-file-size\)$|ptoasm: stopped at cycle \d+: .*raise it with --max-[a-z-]+=)`)

func checkExit2(t *testing.T, args []string, stderr string) {
	t.Helper()
	first, _, _ := strings.Cut(stderr, "\n")
	if !exit2.MatchString(first) {
		t.Fatalf("ptoasm %s: exit 2, but stderr does not start with a positioned error or a limit and its flag:\n%.2000s", strings.Join(args, " "), stderr)
	}
}

// FuzzFmt: `fmt` of any text that formats is a fixed point of fmt; `fmt -w`
// writes what `fmt` prints or leaves the file as it was; `fmt --to
// mlir` of any program that prints as MLIR gives MLIR that ptoasm reads back
// and assembles; a refusal (exit 2) is a positioned error. Seeded with the
// repository's small files.
func FuzzFmt(f *testing.F) {
	for _, src := range fuzzseed.Files(f, 8<<10, nil, fuzzseed.Dirs...) {
		f.Add(src)
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		dir := t.TempDir()
		in := filepath.Join(dir, "f.pto")
		if err := os.WriteFile(in, src, 0o644); err != nil {
			t.Fatal(err)
		}
		limits := []string{"--max-memory", "32MiB", "--max-file-size", "64KiB"}
		cli := func(args ...string) (int, string, string) {
			var o, e bytes.Buffer
			code := realMain(append(args, limits...), &o, &e)
			if code == 2 {
				checkExit2(t, args, e.String())
			} else if code != 0 {
				t.Fatalf("ptoasm %s: exit %d\n%s", strings.Join(args, " "), code, e.String())
			}
			return code, o.String(), e.String()
		}
		code, out, _ := cli("fmt", in)
		// fmt -w is all or nothing: the file becomes what fmt printed, or
		// stays byte for byte (a refusal, an MLIR file).
		w := filepath.Join(dir, "w.pto")
		os.WriteFile(w, src, 0o644)
		codeW, _, _ := cli("fmt", "-w", w)
		switch got, _ := os.ReadFile(w); {
		case codeW == 0 && string(got) != out:
			t.Fatalf("fmt -w exit 0 wrote other than fmt printed:\n%s\n---\n%s", got, out)
		case codeW != 0 && !bytes.Equal(got, src):
			t.Fatalf("fmt -w exit %d changed the file", codeW)
		}
		if code == 0 {
			again := filepath.Join(dir, "g.pto")
			os.WriteFile(again, []byte(out), 0o644)
			code2, out2, errOut := cli("fmt", again)
			if code2 != 0 || out2 != out {
				t.Fatalf("fmt output is not a fmt fixed point: exit %d %s\n%s\n---\n%s", code2, errOut, out, out2)
			}
		}
		if code, out, _ := cli("fmt", "--to", "mlir", in); code == 0 {
			m := filepath.Join(dir, "m.pto")
			os.WriteFile(m, []byte(out), 0o644)
			if code, _, errOut := cli("asm", m); code != 0 {
				t.Fatalf("the MLIR fmt --to mlir printed does not assemble: %s\n%s", errOut, out)
			}
		}
	})
}

// FuzzInput is `run --input X=FILE` with any bytes as a .npy or .bin file:
// exit 0 with the data read (written back by --output as it was read, in
// the tensor's dtype) or exit 2 naming the input, never a panic or a
// silent misreading.
func FuzzInput(f *testing.F) {
	var npy bytes.Buffer
	memory.WriteArrayNPY(&npy, &memory.Array{Shape: []int{2, 8}, Data: make([]float64, 16)}, asm.F32)
	f.Add(npy.Bytes(), true)
	f.Add(make([]byte, 64), false)
	f.Add(npy.Bytes()[:40], true)
	f.Add([]byte("\x93NUMPY\x01\x00\x76\x00{'descr': '<f8', 'fortran_order': True, 'shape': (8, 2), }"), true)
	const prog = "gm X : f32 [2, 8] = zero\n\nkernel k : aiv {\n    tile %t : vec f32 [2, 8]\n    tload %t, @X[0, 0]\n}\n\nlaunch ranks=1 {\n    run k\n}\n"
	f.Fuzz(func(t *testing.T, data []byte, isNPY bool) {
		dir := t.TempDir()
		src, in, out := filepath.Join(dir, "p.pto"), filepath.Join(dir, "x.bin"), filepath.Join(dir, "o.npy")
		if isNPY {
			in = filepath.Join(dir, "x.npy")
		}
		os.WriteFile(src, []byte(prog), 0o644)
		os.WriteFile(in, data, 0o644)
		var o, e bytes.Buffer
		code := realMain([]string{"run", src, "--no-lint", "--input", "X=" + in, "--output", "X=" + out, "--max-memory", "32MiB"}, &o, &e)
		switch code {
		case 2:
			if first, _, _ := strings.Cut(e.String(), "\n"); !strings.HasPrefix(first, "ptoasm: ") || !strings.Contains(first, in) {
				t.Fatalf("exit 2 without a message naming the input:\n%s", e.String())
			}
			return
		case 0:
		default:
			t.Fatalf("exit %d\n%s", code, e.String())
		}
		want, err := memory.ReadDataFile(in, data, asm.F32)
		if err != nil {
			t.Fatalf("run took an input ReadDataFile refuses: %v", err)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		n, err := memory.ReadNPY(b)
		if err != nil {
			t.Fatal(err)
		}
		got := n.Array()
		if len(got.Data) != 16 || len(want.Data) != 16 {
			t.Fatalf("read %d values, wrote %d, for a [2, 8] tensor", len(want.Data), len(got.Data))
		}
		for i, w := range want.Data {
			w32, g32 := float32(w), float32(got.Data[i])
			if w32 != g32 && (w32 == w32 || g32 == g32) {
				t.Fatalf("element %d: read %v, written back as %v", i, w32, g32)
			}
		}
	})
}
