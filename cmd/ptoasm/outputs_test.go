package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOutputOverInput: an output flag that names one of the command's inputs
// (the program, an include, a data file, the profile) is a usage error before
// anything runs, and every input is left as it was. `run k.pto --trace k.pto`
// replaced the program with its trace (exit 1, nothing said), and
// `--cpuprofile k.pto` truncated it before it was read.
func TestOutputOverInput(t *testing.T) {
	war, err := os.ReadFile("../../programs/hazards/war.pto")
	if err != nil {
		t.Fatal(err)
	}
	main := strings.Replace(string(war), "const R = 16\n", "include \"inc.pto\"\n", 1)
	if main == string(war) {
		t.Fatal("war.pto no longer declares const R = 16")
	}
	prof, err := os.ReadFile("../../pipes/profiles/a2a3.txt")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{"k.pto": []byte(main), "inc.pto": []byte("const R = 16\n"), "p.txt": prof}
	for _, tc := range []struct {
		name string
		args []string // {dir} is the directory of files
		want string   // stderr's first line, {dir} as above
	}{
		{"run --trace over the program", []string{"run", "{dir}/k.pto", "--trace", "{dir}/k.pto"}, "ptoasm: --trace {dir}/k.pto: that is {dir}/k.pto, an input of this command; refusing to write over it"},
		{"run --html over an include", []string{"run", "{dir}/k.pto", "--html", "{dir}/inc.pto"}, "ptoasm: --html {dir}/inc.pto: that is {dir}/inc.pto, an input of this command; refusing to write over it"},
		{"run --report over the profile", []string{"run", "{dir}/k.pto", "--profile", "{dir}/p.txt", "--report", "{dir}/p.txt"}, "ptoasm: --report {dir}/p.txt: that is {dir}/p.txt, an input of this command; refusing to write over it"},
		{"run --print by another name", []string{"run", "{dir}/k.pto", "--print", "{dir}/../" + "{base}/k.pto"}, "ptoasm: --print {dir}/../{base}/k.pto: that is {dir}/k.pto, an input of this command; refusing to write over it"},
		{"trace --chrome over the program", []string{"trace", "{dir}/k.pto", "--chrome", "{dir}/k.pto"}, "ptoasm: --chrome {dir}/k.pto: that is {dir}/k.pto, an input of this command; refusing to write over it"},
		{"sweep --report over the program", []string{"sweep", "{dir}/k.pto", "--set", "dma.gm_ub.bw=1,2", "--report", "{dir}/k.pto"}, "ptoasm: --report {dir}/k.pto: that is {dir}/k.pto, an input of this command; refusing to write over it"},
		{"sweep --report over an include", []string{"sweep", "{dir}/k.pto", "--set", "dma.gm_ub.bw=1,2", "--report", "{dir}/inc.pto"}, "ptoasm: --report {dir}/inc.pto: that is {dir}/inc.pto, an input of this command; refusing to write over it"},
		{"--cpuprofile over the program", []string{"--cpuprofile", "{dir}/k.pto", "run", "{dir}/k.pto"}, "ptoasm: --cpuprofile {dir}/k.pto: that is {dir}/k.pto, an input of this command; refusing to write over it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, b := range files {
				if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			sub := strings.NewReplacer("{dir}", dir, "{base}", filepath.Base(dir))
			var args []string
			for _, a := range tc.args {
				args = append(args, sub.Replace(a))
			}
			code, _, errOut := runCLI(args...)
			first, _, _ := strings.Cut(errOut, "\n")
			if want := sub.Replace(tc.want); code != 2 || first != want {
				t.Errorf("exit %d, stderr %q; want 2, %q", code, first, want)
			}
			for name, b := range files {
				if got, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(got) != string(b) {
					t.Errorf("%s changed (%v)", name, err)
				}
			}
		})
	}
}
