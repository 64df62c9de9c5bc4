package parser

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/ptoasm/ptoasm/internal/fuzzseed"
)

// grammarTrees compares grammar trees field by field, positions included;
// a nil and an empty slice are the same tree.
var grammarTrees = cmp.Options{
	cmp.Exporter(func(reflect.Type) bool { return true }),
	cmpopts.EquateEmpty(),
}

// checkFast holds the fast parser to participle on src: where the fast parser
// succeeds, participle succeeds with the same tree. It reports whether the
// fast parser succeeded.
func checkFast(t *testing.T, name string, src []byte) bool {
	t.Helper()
	ftoks, deep := tokenizeFast(string(src))
	if deep >= 0 {
		return false // too deep for participle; TestNestingLimit
	}
	fast, ok := fastParse(name, string(src), ftoks)
	slow, err := parseTokens(fileParser, mustTokenize(t, name, src))
	if !ok {
		return false
	}
	if err != nil {
		t.Fatalf("%s: fast parser accepts what participle rejects (%v):\n%s", name, err, src)
	}
	if d := diffTrees(slow, fast, grammarEq, grammarTrees); d != "" {
		t.Fatalf("%s: fast parser tree differs (-participle +fast):\n%s\n--- source:\n%s", name, d, src)
	}
	return true
}

// TestFastMatchesParticiple: on every test and shipped program the fast
// parser builds participle's tree, and on every one participle accepts it
// does not give up (or files would silently take the slow path).
func TestFastMatchesParticiple(t *testing.T) {
	files := ptoFiles(t)
	more, _ := filepath.Glob("testdata/errors/*.pto")
	for _, name := range append(files, more...) {
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		ok := checkFast(t, name, src)
		if _, err := parseTokens(fileParser, mustTokenize(t, name, src)); err == nil && !ok {
			t.Errorf("%s: fast parser gives up on a file participle accepts", name)
		}
	}
	for _, src := range fastSamples {
		checkFast(t, "sample", []byte(src))
	}
}

// fastSamples are the corners where participle backtracks or stops, each of
// which the fast parser must either get right or leave to participle.
var fastSamples = []string{
	"kernel\nfor",
	"kernel k : aic {\nfor\n}\n",
	"kernel k : aic {\n    tile: tadd %a\n    for: dsb\n    if: nop\n    let: x\n    break\n    else\n}\n",
	"kernel k : aic {\n    %d tadd\n    x : y\n    tadd %a +\n    tadd %a, \n}\n",
	"kernel k : aic { dsb }\nkernel k : aic {}\n",
	"gm A : f16 [4] nd=1\ngm B : [4] nd x=1 y=2 = random(seed=1, int)\ngm C : [4] foo\n",
	"launch ranks=2 blocks=3 {\n    run \"x\" a + b blocks=2, c\n    run a + 1\n    run a blocks\n    reset @S[rank=1][0] = fill(1)\n}\n",
	"expect finding a-b-c at 1, 2 count 3\nexpect finding a - at 1\nexpect cycles 10\nexpect @C == f(@A) tol 1e-3\nexpect @C = 1\n",
	"expect @S == softmax(@X) rtol 1e-3 atol 1e-6\nexpect @S == @X atol 2\nexpect @S == @X rtol 1 tol 2\nexpect @S == @X atol 1 rtol 2\n",
	"kernel k : aic {\n    tadd %a : !pto.t<a=b, c d, e=>, !pto.u<>\n    tadd : !pto.t<,>\n    tadd : !pto.t<x // c\n}\n",
	"kernel k : aic {\n    tile %t[2] : vec f16 [1, 2] valid [1, 1] layout() @A + 1 step 2\n    tile %u : vec f16 [1, 2] layout(a=1, b=2) @ 0 step 1\n    tile %v : vec f16 [1, 2] valid 3\n}\n",
	"kernel k : aic {\n    if 1 { dsb } else if 2 { dsb } else { dsb }\n    while %x { break }\n    for %i = 0 to 4 step 2 {\n    }\n}\n",
	"const A = ((((1))))\nconst B = - - ! ~ 1\nconst C = f(a=1, 2)[0]\nconst D = %r[1][2]\nconst E = @G[rank=1][1, 2][3]\n",
	"const A = 1 ; const B = 2;\n\n// c\ninclude \"x\" // d\n",
}

// FuzzFastParse is the differential fuzz target for the fast parser.
func FuzzFastParse(f *testing.F) {
	for _, s := range fastSamples {
		f.Add([]byte(s))
	}
	files, _ := filepath.Glob("testdata/*.pto")
	for _, name := range files {
		if src, err := os.ReadFile(name); err == nil {
			f.Add(src)
		}
	}
	for _, src := range fuzzseed.Files(f, 64<<10, fuzzseed.Bool(false), fuzzseed.Dirs...) {
		f.Add(src)
	}
	f.Fuzz(func(t *testing.T, src []byte) { checkFast(t, "fuzz.pto", src) })
}
