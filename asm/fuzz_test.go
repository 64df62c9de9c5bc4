package asm_test

import (
	"bytes"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/internal/fuzzseed"
)

// FuzzAssemble: parsing and assembling arbitrary text never panics, and whatever
// assembles can be listed and round-tripped through JSON.
func FuzzAssemble(f *testing.F) {
	f.Add([]byte("kernel k : aiv {\n tile %t : vec f32 [16, 16]\n tadd %t, %t, %t\n}\n"))
	// Every PTO-AS file of the repository, so recent instructions (mgather,
	// timg2col, quantised moves, tile views, sorts, fifos) are in the corpus.
	for _, src := range fuzzseed.Files(f, 32<<10, fuzzseed.Bool(false), fuzzseed.Dirs...) {
		f.Add(src)
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		fe := memFrontend(map[string]string{"main.pto": string(src), "inc.pto": "const INC = 1\n"})
		// Parser panics are the parser's FuzzParse's business; here they would
		// stop the fuzzer from reaching the assembler.
		parse := fe.ParseFile
		fe.ParseFile = func(name string, src []byte) (f *asm.File, errs asm.ErrorList) {
			defer func() {
				if recover() != nil {
					f = nil
					errs.Add(asm.Span{}, "parser panicked")
				}
			}()
			return parse(name, src)
		}
		obj, errs := asm.Assemble(fe, "main.pto", []asm.Define{{Name: "INC", Value: "2"}})
		// Every diagnostic has a position (a file and a line), so that the
		// CLI prints it as FILE:LINE:COL: error:.
		for _, d := range errs {
			if p := d.Span.Pos; p.File == "" || p.Line < 1 && p.File != "<command line>" {
				t.Fatalf("diagnostic without a position: %q at %v", d.Msg, d.Span.Pos)
			}
		}
		var b bytes.Buffer
		errs.Fprint(&b, asm.Sources{"main.pto": src})
		if obj == nil {
			if !errs.HasErrors() {
				t.Fatal("no object and no errors")
			}
			return
		}
		obj.FprintListing(&b)
		for _, k := range obj.Kernels {
			env := &asm.Env{Regs: make([]int64, len(k.Regs))}
			for _, op := range k.Ops {
				for _, a := range op.Args {
					a.Val.Eval(env)
					a.TileIdx.Eval(env)
					for _, x := range a.Idx {
						x.Eval(env)
					}
				}
			}
		}
		for _, fl := range obj.Files {
			data, err := asm.MarshalFile(fl)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := asm.UnmarshalFile(data); err != nil {
				t.Fatal(err)
			}
		}
	})
}
