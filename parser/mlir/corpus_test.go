package mlir

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/parser"
)

// corpusDir is filled by scripts/fetch-ptoas-corpus.sh; it is git-ignored.
const corpusDir = "../../corpus"

// legacy files use syntax PTOAS itself no longer accepts (ptoas.md §1.4).
var legacy = map[string]bool{
	"ptoas/test/samples/MatMul/0.pto":        true,
	"ptoas/test/samples/Subset/Subset.pto":   true,
	"ptoas/test/samples/MatMul/tmatmulk.pto": true,
}

var (
	notPtoas = regexp.MustCompile(`RUN:.*\bnot\s+ptoas\b`)
	archA5   = regexp.MustCompile(`--pto-arch[= ]a5|pto\.target_arch"?\s*=\s*"a5"|Ascend950`)
)

func assembleFile(path string, src []byte) (*asm.Object, asm.ErrorList) {
	fe := asm.Frontend{ParseFile: ParseFile, ParseExpr: parser.ParseExpr,
		ReadFile: func(string) ([]byte, error) { return src, nil }}
	return asm.Assemble(fe, path, nil)
}

// TestCorpus parses and assembles every .pto file of the fetched corpus and
// reports the pass rate: a file passes when it yields at least one kernel. Files PTOAS's own tests expect it to reject (`RUN: not
// ptoas`, or `_invalid` tests that FileCheck the error) are counted apart; the 95% target is over the other non-legacy files.
func TestCorpus(t *testing.T) {
	if _, err := os.Stat(corpusDir); err != nil {
		t.Skip("no corpus/ (run scripts/fetch-ptoas-corpus.sh)")
	}
	var files []string
	filepath.WalkDir(corpusDir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".pto") {
			files = append(files, p)
		}
		return nil
	})
	sort.Strings(files)
	var valid, validOK, invalid, invalidRejected, a5, a5OK int
	var fails []string
	for _, p := range files {
		rel, _ := filepath.Rel(corpusDir, p)
		rel = filepath.ToSlash(rel)
		if legacy[rel] {
			continue
		}
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		obj, errs := assembleFile(rel, src)
		if obj != nil && !errs.HasErrors() {
			checkTranslation(t, rel, src)
		}
		// A file passes only when it yields a kernel and a launch: an
		// empty program (a kernel body dropped) assembles but checks
		// nothing.
		ok := obj != nil && !errs.HasErrors() && len(obj.Kernels) > 0 && obj.Launch != nil
		reason := ""
		switch {
		case !ok && len(errs) > 0 && errs.HasErrors():
			var b bytes.Buffer
			b.WriteString(errs[0].Error())
			reason = b.String()
		case !ok:
			reason = rel + ": assembles but yields no kernel"
		}
		isA5 := archA5.Match(src)
		switch {
		case notPtoas.Match(src) || strings.Contains(filepath.Base(rel), "invalid"):
			invalid++
			if !ok {
				invalidRejected++
			}
			continue
		case isA5:
			a5++
			if ok {
				a5OK++
			}
		}
		valid++
		if ok {
			validOK++
		} else {
			fails = append(fails, reason)
		}
	}
	for _, f := range fails {
		t.Logf("FAIL %s", f)
	}
	if valid == 0 {
		t.Skip("corpus has no files")
	}
	rate := float64(validOK) / float64(valid)
	t.Logf("valid non-legacy files: %d/%d assemble (%.1f%%); A5 among them: %d/%d; expected-invalid (RUN: not ptoas): %d, rejected %d",
		validOK, valid, 100*rate, a5OK, a5, invalid, invalidRejected)
	if rate < 0.95 {
		t.Errorf("pass rate %.1f%% below the 95%% target", 100*rate)
	}
}

// checkTranslation holds a file's PTO-AS translation (what `ptoasm fmt`
// prints) to being a PTO-AS program in canonical form that assembles to as
// many kernels and instructions as the MLIR file.
func checkTranslation(t *testing.T, name string, src []byte) {
	t.Helper()
	f, errs := ParseFile(name, src)
	if errs.HasErrors() {
		return
	}
	var b bytes.Buffer
	if err := asm.Fprint(&b, f); err != nil {
		t.Errorf("%s: print: %v", name, err)
		return
	}
	text := b.Bytes()
	g, errs := parser.ParseFile(name+".as", text)
	if errs.HasErrors() {
		t.Errorf("%s: the PTO-AS translation does not parse: %v\n%s", name, errs, text)
		return
	}
	var again bytes.Buffer
	if err := asm.Fprint(&again, g); err != nil || !bytes.Equal(again.Bytes(), text) {
		t.Errorf("%s: the PTO-AS translation is not in canonical form", name)
	}
	fe := asm.Frontend{ParseFile: parser.ParseFile, ParseExpr: parser.ParseExpr,
		ReadFile: func(string) ([]byte, error) { return text, nil }}
	want, _ := assembleFile(name, src)
	got, errs := asm.Assemble(fe, name+".as", nil)
	if got == nil || errs.HasErrors() {
		t.Errorf("%s: the PTO-AS translation does not assemble: %v", name, errs)
		return
	}
	count := func(o *asm.Object) (n int) {
		for _, k := range o.Kernels {
			n += len(k.Ops)
		}
		return n
	}
	if len(got.Kernels) != len(want.Kernels) || count(got) != count(want) {
		t.Errorf("%s: the translation has %d kernels, %d instructions; the MLIR file %d, %d", name, len(got.Kernels), count(got), len(want.Kernels), count(want))
	}
}
