package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/parser"
	"github.com/ptoasm/ptoasm/parser/mlir"
	"github.com/ptoasm/ptoasm/programs"
)

// source says where a program's files come from: the file system, or the
// programs embedded in the binary when FILE is a short name like allgather_gemm.
type source struct {
	main     string
	embedded bool
	maxFile  int64  // --max-file-size
	total    *int64 // bytes of source read so far, checked against maxFile
}

// resolve turns a FILE argument into a source. A path that exists wins; otherwise a
// short name of an embedded program.
func resolve(arg string, lim limits) (source, error) {
	if st, err := os.Stat(arg); err == nil && !st.IsDir() {
		return source{main: arg, maxFile: lim.maxFileSize, total: new(int64)}, nil
	}
	if p, ok := programs.Find(arg); ok {
		return source{main: p, embedded: true, maxFile: lim.maxFileSize}, nil
	}
	return source{}, fmt.Errorf("%s: no such file, and no program of that name (ptoasm list shows them)", arg)
}

func (s source) readFile(name string) ([]byte, error) {
	if s.embedded {
		return fs.ReadFile(programs.FS, path.Clean(name))
	}
	if name != s.main {
		// An include must be a regular file: `include "/dev/zero"` or a
		// FIFO would otherwise be read until the size cap, or forever.
		if ok, err := asm.IsRegularFile(name); err != nil {
			return nil, err
		} else if !ok {
			return nil, errors.New("not a regular file")
		}
	}
	b, err := asm.ReadFileLimit(name, s.maxFile, "--max-file-size")
	if err != nil {
		return nil, err
	}
	// The cap holds for the program's sources together, too: many includes
	// must not add up to what one file may not be.
	if s.total != nil {
		if *s.total += int64(len(b)); *s.total > s.maxFile {
			return nil, fmt.Errorf("the program's sources together are larger than the %s limit on input files (--max-file-size)", asm.FormatBytes(s.maxFile))
		}
	}
	return b, nil
}

func (s source) frontend(srcs asm.Sources) asm.Frontend {
	return asm.Frontend{
		ParseFile: parseFile,
		ParseExpr: parser.ParseExpr,
		ReadFile: func(name string) ([]byte, error) {
			b, err := s.readFile(name)
			if err == nil {
				// What diagnostics quote must have the line ends the parser saw.
				b = parser.Normalize(b)
				srcs[name] = b
			}
			return b, err
		},
	}
}

// parseFile reads PTO-AS, or a PTOAS .pto file (MLIR text) lowered to PTO-AS;
// the two are told apart by content, since both use the .pto extension.
func parseFile(name string, src []byte) (*asm.File, asm.ErrorList) {
	if mlir.IsMLIR(src) {
		return mlir.ParseFile(name, src)
	}
	return parser.ParseFile(name, src)
}

// defineFlags is the -D NAME=VALUE list shared by every command that assembles.
type defineFlags struct {
	Define []string `sep:"none" short:"D" name:"define" placeholder:"NAME=VALUE" help:"Override a constant (VALUE is an expression over the program's constants)."`
}

func (d defineFlags) defines() ([]asm.Define, error) {
	out := make([]asm.Define, 0, len(d.Define))
	for _, s := range d.Define {
		name, val, ok := strings.Cut(s, "=")
		if !ok || strings.TrimSpace(name) == "" {
			return nil, fmt.Errorf("-D %s: want NAME=VALUE", s)
		}
		out = append(out, asm.Define{Name: strings.TrimSpace(name), Value: strings.TrimSpace(val)})
	}
	return out, nil
}

// assemble loads, parses and assembles a program, printing every diagnostic to
// stderr. A nil Object means bad input (exit 2).
func assemble(e *env, file string, d defineFlags) (*asm.Object, source, error) {
	src, err := resolve(file, e.lim)
	if err != nil {
		return nil, src, err
	}
	defs, err := d.defines()
	if err != nil {
		return nil, src, err
	}
	srcs := asm.Sources{}
	obj, errs := asm.Assemble(src.frontend(srcs), src.main, defs)
	if len(errs) > 0 {
		errs.Fprint(e.stderr, srcs)
	}
	if errs.HasErrors() || obj == nil {
		return nil, src, exitError{2}
	}
	return obj, src, nil
}
