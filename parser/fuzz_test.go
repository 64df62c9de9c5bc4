package parser

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/internal/fuzzseed"
)

// FuzzParse: parsing never panics, printing whatever was parsed never panics,
// and a file that parsed cleanly prints to text that parses cleanly again.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.pto")
	more, _ := filepath.Glob("testdata/errors/*.pto")
	for _, name := range append(files, more...) {
		if src, err := os.ReadFile(name); err == nil {
			f.Add(src)
		}
	}
	f.Add([]byte("kernel k : aic {\n    tadd %d, %a, %b\n}\n"))
	// Every PTO-AS file of the repository: new instructions and syntax
	// (tile views, register valid regions, #unit, fifos) reach the corpus.
	for _, src := range fuzzseed.Files(f, 64<<10, fuzzseed.Bool(false), fuzzseed.Dirs...) {
		f.Add(src)
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		file, errs := ParseFile("fuzz.pto", src)
		if file == nil {
			t.Fatal("nil file")
		}
		var buf bytes.Buffer
		if err := asm.Fprint(&buf, file); err != nil {
			t.Fatal(err)
		}
		again, errs2 := ParseFile("fuzz.pto", buf.Bytes())
		if len(errs) == 0 && len(errs2) > 0 {
			t.Fatalf("printed form of a clean parse does not parse: %v\n--- printed:\n%s", errs2, buf.String())
		}
		if len(errs) == 0 {
			var buf2 bytes.Buffer
			_ = asm.Fprint(&buf2, again)
			if !bytes.Equal(buf.Bytes(), buf2.Bytes()) {
				t.Fatalf("fmt not idempotent:\n%s\n---\n%s", buf.String(), buf2.String())
			}
		}
	})
}

// bigProgram generates a kernel of at least n bytes in the style of the shipped
// programs: loops, flags, tile arrays, labelled instructions, comments.
func bigProgram(n int) []byte {
	var b strings.Builder
	b.WriteString("const M = 128\nconst K = 256\ngm A : f16 [M, K] = random(seed=1, lo=-1, hi=1)\n\n")
	for k := 0; b.Len() < n; k++ {
		fmt.Fprintf(&b, "kernel k%d : aic {\n", k)
		b.WriteString("    tile %a[2] : mat f16 [M, 64] @ 0x0 step 0x4000\n    tile %c : acc f32 [M, M]\n")
		b.WriteString("    for %i = 0 to K / 64 {\n        let %b = %i & 1 // buffer parity\n")
		for j := 0; j < 40; j++ {
			fmt.Fprintf(&b, "        wait_flag MTE1, MTE2, %%b\n    l%d: tload %%a[%%b], @A[0, %%i * 64 + %d]\n", j, j)
			b.WriteString("        set_flag MTE2, MTE1, (%b + 1) & 1\n        tmatmul.acc %c, %a[%b], %a[%b] #init=(%i == 0)\n")
		}
		b.WriteString("    }\n}\n\n")
	}
	return []byte(b.String())
}

func BenchmarkParse(b *testing.B) {
	src := bigProgram(1 << 20)
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		if _, errs := ParseFile("big.pto", src); len(errs) > 0 {
			b.Fatal(errs)
		}
	}
}

// BenchmarkParseParticiple is BenchmarkParse on the participle path alone
// (the fallback for files the fast parser gives up on), for comparison.
func BenchmarkParseParticiple(b *testing.B) {
	src := bigProgram(1 << 20)
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		var errs asm.ErrorList
		toks, deep := tokenize("big.pto", src)
		if deep >= 0 {
			b.Fatal("too deep")
		}
		tree, err := parseTokens(fileParser, toks)
		if err != nil {
			b.Fatal(err)
		}
		_ = newLowerer("big.pto", src, &errs).file_(tree)
		if len(errs) > 0 {
			b.Fatal(errs)
		}
	}
}

func BenchmarkFprint(b *testing.B) {
	src := bigProgram(1 << 20)
	f, errs := ParseFile("big.pto", src)
	if len(errs) > 0 {
		b.Fatal(errs)
	}
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		_ = asm.Fprint(&bytes.Buffer{}, f)
	}
}
