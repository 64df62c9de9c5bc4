package main

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/parser"
	"github.com/ptoasm/ptoasm/parser/mlir"
)

type asmCmd struct {
	File   string `arg:"" help:"Program file (- for standard input), or the short name of a program in programs/."`
	Format string `enum:"text,json" default:"text" placeholder:"text|json" help:"Output format: ${enum} (text: the listing; json: the syntax tree)."`
	defineFlags
}

func (c *asmCmd) Run(e *env) error {
	obj, _, err := assemble(e, c.File, c.defineFlags)
	if err != nil {
		return err
	}
	if c.Format == "json" {
		for _, f := range obj.Files {
			b, err := asm.MarshalFile(f)
			if err != nil {
				return err
			}
			e.stdout.Write(b)
			fmt.Fprintln(e.stdout)
		}
		return nil
	}
	obj.FprintListing(e.stdout)
	return nil
}

type fmtCmd struct {
	File  string `arg:"" help:"Program file (- for standard input)."`
	Write bool   `short:"w" help:"Write the result back to the file instead of printing it."`
	Diff  bool   `short:"d" help:"Print a diff of the change instead of the result."`
	Arch  string `name:"pto-arch" placeholder:"a3|a5" help:"PTOAS MLIR files: the target, as ptoas's --pto-arch (default: the module's pto.target_arch, else a3)."`
	To    string `name:"to" enum:",pto-as,mlir" default:"" placeholder:"pto-as|mlir" help:"Translate: pto-as prints the PTO-AS form (of an MLIR file, or the canonical form of a PTO-AS file); mlir prints PTOAS-dialect MLIR for a PTO-AS program (docs/mlir.md)."`
}

func (c *fmtCmd) Run(e *env) error {
	if c.To == "mlir" {
		return c.toMLIR(e)
	}
	src, err := resolve(e, c.File)
	if err != nil {
		return err
	}
	raw, err := src.readFile(src.main)
	if err != nil {
		return err
	}
	text := parser.Normalize(raw)
	isMLIR := mlir.IsMLIR(text)
	if isMLIR && (c.Write || c.Diff) {
		// The canonical form of a PTOAS file is its PTO-AS translation:
		// writing it back would replace the MLIR source.
		return fmt.Errorf("%s: the file is PTOAS MLIR: fmt prints its PTO-AS translation; -w and -d are for PTO-AS files (redirect the output to keep the translation)", c.File)
	}
	f, errs := parseFileArch(src.main, text, c.Arch)
	if len(errs) > 0 {
		errs.Fprint(e.stderr, asm.Sources{src.main: text})
		if errs.HasErrors() {
			return exitError{2}
		}
	}
	var out bytes.Buffer
	if isMLIR {
		fmt.Fprintf(&out, "// PTO-AS translation of the PTOAS MLIR file %s (ptoasm fmt; docs/mlir.md)\n", filepath.Base(src.main))
	}
	if err := asm.Fprint(&out, f); err != nil {
		return err
	}
	switch {
	case c.Write:
		if src.embedded {
			return fmt.Errorf("%s is an embedded program; fmt -w needs a file path", c.File)
		}
		if src.stdin != nil {
			return fmt.Errorf("fmt -w -: standard input cannot be written back; fmt - prints the result")
		}
		if bytes.Equal(out.Bytes(), raw) {
			return nil
		}
		return writeFileAtomic(src.main, out.Bytes())
	case c.Diff:
		writeDiff(e.stdout, src.main, string(text), out.String())
		return nil
	}
	_, err = e.stdout.Write(out.Bytes())
	return err
}

// toMLIR prints the PTOAS MLIR translation of a program (mlir.Emit); a
// construct PTOAS has no equivalent for is a file:line:col error, exit 2.
func (c *fmtCmd) toMLIR(e *env) error {
	if c.Write || c.Diff {
		return fmt.Errorf("fmt --to mlir prints the translation; -w and -d rewrite or diff a PTO-AS file in place")
	}
	obj, _, err := assemble(e, c.File, defineFlags{Arch: c.Arch})
	if err != nil {
		return err
	}
	out, errs := mlir.Emit(obj)
	if len(errs) > 0 {
		errs.Fprint(e.stderr, obj.Sources)
		return exitError{2}
	}
	_, err = io.WriteString(e.stdout, out)
	return err
}

type opsCmd struct{}

func (opsCmd) Run(e *env) error {
	asm.FprintISA(e.stdout)
	return nil
}
