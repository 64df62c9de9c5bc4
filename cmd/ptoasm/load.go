package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"sync"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/parser"
	"github.com/ptoasm/ptoasm/parser/mlir"
	"github.com/ptoasm/ptoasm/programs"
)

// source says where a program's files come from: the file system, or the
// programs embedded in the binary when FILE is a short name like allgather_gemm,
// or standard input for FILE "-" (its includes and data files are then read
// relative to the working directory).
type source struct {
	main     string
	embedded bool
	stdin    []byte // the main file's text when FILE is "-"
	maxFile  int64  // --max-file-size
	total    *int64 // bytes of source read so far, checked against maxFile
	arch     string // --pto-arch, for PTOAS MLIR files
}

// stdinName names standard input in diagnostics (file:line:col).
const stdinName = "<stdin>"

// stdinSrc is standard input, read whole the first time a command asks for
// it: a sweep assembles the program once per point.
type stdinSrc struct {
	r    io.Reader
	once sync.Once
	data []byte
	err  error
}

// bytes reads standard input once, no more than max bytes: a program piped
// in is held to --max-file-size like one read from a file.
func (s *stdinSrc) bytes(max int64) ([]byte, error) {
	if s == nil || s.r == nil {
		return nil, fmt.Errorf("-: no standard input to read the program from")
	}
	s.once.Do(func() {
		s.data, s.err = io.ReadAll(io.LimitReader(s.r, max+1))
		if s.err == nil && int64(len(s.data)) > max {
			s.err = fmt.Errorf("larger than the %s limit on input files (--max-file-size)", asm.FormatBytes(max))
		}
	})
	if s.err != nil {
		return nil, fmt.Errorf("-: reading standard input: %v", s.err)
	}
	return s.data, nil
}

// resolve turns a FILE argument into a source: "-" is standard input; else a
// path that exists wins; otherwise a short name of an embedded program.
func resolve(e *env, arg string) (source, error) {
	lim := e.lim
	if arg == "-" {
		data, err := e.stdin.bytes(lim.maxFileSize)
		if err != nil {
			return source{}, err
		}
		return source{main: stdinName, stdin: data, maxFile: lim.maxFileSize, total: new(int64)}, nil
	}
	st, statErr := os.Stat(arg)
	if statErr == nil && !st.IsDir() {
		return source{main: arg, maxFile: lim.maxFileSize, total: new(int64)}, nil
	}
	if p, ok := programs.Find(arg); ok {
		return source{main: p, embedded: true, maxFile: lim.maxFileSize}, nil
	}
	// Say what is there: "no such file" for a directory, or for a path
	// that cannot be looked at (permission, a file used as a directory),
	// sent the user looking for a typo.
	var pe *fs.PathError
	switch {
	case statErr == nil:
		return source{}, fmt.Errorf("%s: is a directory, not a program file (nor the name of a program: ptoasm list shows them)", arg)
	case errors.As(statErr, &pe) && !errors.Is(statErr, fs.ErrNotExist):
		return source{}, fmt.Errorf("%s: %v", arg, pe.Err)
	}
	return source{}, fmt.Errorf("%s: no such file, and no program of that name (ptoasm list shows them)", arg)
}

func (s source) readFile(name string) ([]byte, error) {
	if s.stdin != nil && name == s.main {
		return s.stdin, nil
	}
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
		ParseFile: func(name string, src []byte) (*asm.File, asm.ErrorList) {
			return parseFileArch(name, src, s.arch)
		},
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
	return parseFileArch(name, src, "")
}

// parseFileArch is parseFile for a PTOAS target architecture (--pto-arch;
// empty: the module's own pto.target_arch, else a3, as ptoas decides).
func parseFileArch(name string, src []byte, arch string) (*asm.File, asm.ErrorList) {
	if arch != "" && !mlir.IsMLIR(src) {
		// The flag is documented for PTOAS MLIR files (docs/cli.md); on
		// PTO-AS it was dropped without a word, so a user asking for one
		// target got another's reading.
		var errs asm.ErrorList
		p := asm.Pos{File: name, Line: 1, Col: 1}
		errs.Add(asm.Span{Pos: p, End: p}, "--pto-arch=%s applies to PTOAS MLIR files; this is PTO-AS, which names no target (drop the flag)", arch)
		return nil, errs
	}
	return mlir.ParseAny(name, src, mlir.Options{Arch: arch})
}

// defineFlags is the -D NAME=VALUE list shared by every command that
// assembles, and --pto-arch, ptoas's flag of the same name for MLIR files.
type defineFlags struct {
	Define []string `sep:"none" short:"D" name:"define" placeholder:"NAME=VALUE" help:"Override a constant (VALUE is an expression over the program's constants)."`
	Arch   string   `name:"pto-arch" placeholder:"a3|a5" help:"PTOAS MLIR files: the target, as ptoas's --pto-arch (default: the module's pto.target_arch, else a3). ptoasm models A2/A3, so A5 files are rejected; --pto-arch=a3 reads one as an A2/A3 kernel."`
}

func (d defineFlags) defines() ([]asm.Define, error) {
	out := make([]asm.Define, 0, len(d.Define))
	first := map[string]string{}
	for _, s := range d.Define {
		name, val, ok := strings.Cut(s, "=")
		if !ok || strings.TrimSpace(name) == "" {
			return nil, fmt.Errorf("-D %s: want NAME=VALUE", s)
		}
		name = strings.TrimSpace(name)
		// A second -D of a name took the last without a word (a sweep
		// script's -D after a default one): which was meant is not ours
		// to guess.
		if prev, ok := first[name]; ok {
			return nil, fmt.Errorf("-D %s: %s is already set by -D %s; give each name once", s, name, prev)
		}
		first[name] = s
		out = append(out, asm.Define{Name: name, Value: strings.TrimSpace(val)})
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
	src, err := resolve(e, file)
	if err != nil {
		return nil, nil, src, err
	}
	defs, err := d.defines()
	if err != nil {
		return nil, nil, src, err
	}
	src.arch = d.Arch
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
