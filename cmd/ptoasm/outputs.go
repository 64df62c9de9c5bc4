package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/ptoasm/ptoasm/asm"
)

// output is an output flag and the path it names.
type output struct{ flag, path string }

// checkOutputs refuses an output that is the same file as one of the
// command's inputs. Outputs are written when the run ends, over whatever the
// path holds: `run k.pto --trace k.pto` (a slip of the shell's completion)
// replaced the program with its trace. A path that does not exist yet, or
// "-", is no input. A compiler refuses the same (gcc: "input file is the
// same as output file").
func checkOutputs(outs []output, inputs []string) error {
	for _, o := range outs {
		if o.path == "" || o.path == "-" {
			continue
		}
		ost, err := os.Stat(o.path)
		if err != nil {
			continue
		}
		for _, in := range inputs {
			if ist, err := os.Stat(in); err == nil && os.SameFile(ost, ist) {
				return fmt.Errorf("%s %s: that is %s, an input of this command; refusing to write over it", o.flag, o.path, in)
			}
		}
	}
	return nil
}

// programInputs are the files on disk a program was assembled from: the
// main file and its includes (none for a shipped program or standard input).
func programInputs(obj *asm.Object, src source) []string {
	if src.embedded || src.stdin != nil {
		return nil
	}
	var out []string
	for _, f := range obj.Files {
		out = append(out, f.Name)
	}
	return out
}

// dataInputs are the files of --input TENSOR[@RANK]=FILE flags.
func dataInputs(flags []string) []string {
	var out []string
	for _, in := range flags {
		if _, path, ok := strings.Cut(in, "="); ok {
			out = append(out, path)
		}
	}
	return out
}

// argFiles are the paths the command line may name, for an output created
// before the command knows its inputs (--cpuprofile): every argument and
// the value after its last '=' (--profile=F, --input X=F), but not the
// value of the output's own flag. That value is skipped by its place, not
// by comparing it with the flag's parsed path: kong makes a path flag
// absolute, so `--cpuprofile cpu.prof` once found the relative
// "cpu.prof" among the inputs and refused to write over an existing
// profile (every second profiling run).
func argFiles(args []string, flag string) []string {
	var out []string
	for i, a := range args {
		if i > 0 && args[i-1] == flag || strings.HasPrefix(a, flag+"=") {
			continue
		}
		out = append(out, a)
		if k := strings.LastIndexByte(a, '='); k >= 0 {
			out = append(out, a[k+1:])
		}
	}
	return out
}
