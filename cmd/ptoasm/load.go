package main

import (
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
}

// resolve turns a FILE argument into a source. A path that exists wins; otherwise a
// short name of an embedded program.
func resolve(arg string) (source, error) {
	if st, err := os.Stat(arg); err == nil && !st.IsDir() {
		return source{main: arg}, nil
	}
	if p, ok := programs.Find(arg); ok {
		return source{main: p, embedded: true}, nil
	}
	return source{}, fmt.Errorf("%s: no such file, and no program of that name (ptoasm list shows them)", arg)
}

func (s source) readFile(name string) ([]byte, error) {
	if s.embedded {
		return fs.ReadFile(programs.FS, path.Clean(name))
	}
	return os.ReadFile(name)
}

func (s source) frontend(srcs asm.Sources) asm.Frontend {
	return asm.Frontend{
		ParseFile: parseFile,
		ParseExpr: parser.ParseExpr,
		ReadFile: func(name string) ([]byte, error) {
			b, err := s.readFile(name)
			if err == nil {
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
	Define []string `short:"D" name:"define" placeholder:"NAME=VALUE" help:"Override a constant (VALUE is an expression over the program's constants)."`
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
	obj, _, src, err := assembleDiags(e, file, d)
	return obj, src, err
}

// assembleDiags is assemble that also returns the diagnostics, for reports
// that carry them (lint --format sarif).
func assembleDiags(e *env, file string, d defineFlags) (*asm.Object, asm.ErrorList, source, error) {
	src, err := resolve(file)
	if err != nil {
		return nil, nil, src, err
	}
	defs, err := d.defines()
	if err != nil {
		return nil, nil, src, err
	}
	srcs := asm.Sources{}
	obj, errs := asm.Assemble(src.frontend(srcs), src.main, defs)
	if len(errs) > 0 {
		errs.Fprint(e.stderr, srcs)
	}
	if errs.HasErrors() || obj == nil {
		return nil, errs, src, exitError{2}
	}
	return obj, errs, src, nil
}
