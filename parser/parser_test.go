package parser

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/ptoasm/ptoasm/asm"
	goldenfile "github.com/ptoasm/ptoasm/internal/golden"
)

var update = goldenfile.Update

// golden compares got with the file, or rewrites the file under UPDATE_GOLDEN=1.
func golden(t *testing.T, path string, got []byte) { goldenfile.Check(t, path, got) }

// ignoreSpans compares trees by content: positions differ after fmt, and a
// blank line fmt inserts between declaration kinds is not content.
var ignoreSpans = cmp.Options{
	cmpopts.IgnoreTypes(asm.Span{}, asm.Pos{}),
	cmpopts.IgnoreFields(asm.Comments{}, "Blank"),
	cmpopts.EquateEmpty(),
}

func format(t testing.TB, f *asm.File) []byte {
	var buf bytes.Buffer
	if err := asm.Fprint(&buf, f); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// ptoFiles lists the valid programs fmt must round-trip.
func ptoFiles(t *testing.T) []string {
	files, _ := filepath.Glob("testdata/*.pto")
	_ = filepath.WalkDir("../programs", func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".pto") {
			files = append(files, path)
		}
		return nil
	})
	if len(files) == 0 {
		t.Fatal("no .pto files")
	}
	return files
}

func TestFmtGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.pto")
	for _, name := range files {
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, errs := ParseFile(name, src)
		if len(errs) > 0 {
			t.Errorf("%s: %v", name, errs)
			continue
		}
		golden(t, strings.TrimSuffix(name, ".pto")+".golden", format(t, f))
	}
}

// TestFmtRoundTrip: fmt is idempotent and parse(fmt(x)) == parse(x).
func TestFmtRoundTrip(t *testing.T) {
	for _, name := range ptoFiles(t) {
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f1, errs := ParseFile(name, src)
		if len(errs) > 0 {
			// Programs under ../programs may be mid-edit or test errors on purpose.
			t.Logf("%s: skipped, does not parse: %v", name, errs)
			continue
		}
		out1 := format(t, f1)
		f2, errs := ParseFile(name, out1)
		if len(errs) > 0 {
			t.Errorf("%s: fmt output does not parse: %v\n%s", name, errs, out1)
			continue
		}
		if d := diffTrees(f1, f2, spanFreeEq, ignoreSpans); d != "" {
			t.Errorf("%s: tree changed by fmt (-orig +fmt):\n%s", name, d)
		}
		if out2 := format(t, f2); !bytes.Equal(out1, out2) {
			t.Errorf("%s: fmt not idempotent:\n%s", name, cmp.Diff(string(out1), string(out2)))
		}
	}
}

// TestRecoveryAgrees: the line-by-line recovery parser builds exactly the tree
// the whole-file parse builds, spans included, on every valid file.
func TestRecoveryAgrees(t *testing.T) {
	for _, name := range ptoFiles(t) {
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f1, errs := ParseFile(name, src)
		if len(errs) > 0 {
			continue
		}
		var errs2 asm.ErrorList
		f2 := parseRecover(newLowerer(name, src, &errs2), mustTokenize(t, name, src))
		f2.Span = f1.Span
		if len(errs2) > 0 {
			t.Errorf("%s: recovery parse reports %v", name, errs2)
		}
		if d := diffTrees(f1, f2, exactEq); d != "" {
			t.Errorf("%s: recovery tree differs (-full +recovery):\n%s", name, d)
		}
	}
}

func TestGrammarDocs(t *testing.T) {
	g := Grammar() + "\n"
	golden(t, "../docs/grammar.ebnf", []byte(g))
	const begin, end = "<!-- grammar:begin -->\n```ebnf\n", "```\n<!-- grammar:end -->"
	doc, err := os.ReadFile("../docs/language.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(doc)
	i, j := strings.Index(s, begin), strings.Index(s, end)
	if update && i >= 0 && j > i {
		s = s[:i+len(begin)] + g + s[j:]
		if err := os.WriteFile("../docs/language.md", []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if !strings.Contains(s, begin+g+end) {
		t.Errorf("docs/language.md does not contain parser.Grammar() between %q and %q; run UPDATE_GOLDEN=1 go test ./parser", begin, end)
	}
}

func TestParseExpr(t *testing.T) {
	tests := []struct{ src, want string }{
		{"1 + 2 * 3", "1 + 2 * 3"},
		{"(1 + 2) * 3", "(1 + 2) * 3"},
		{"a || b && c == d + e * -f", "a || b && c == d + e * -f"},
		{"0x1000", "0x1000"},
		{"-5", "-5"},
		{"min(M, 4) << 2", "min(M, 4) << 2"},
		{"@W[rank=r][i, j]", "@W[rank=r][i, j]"},
		{"%chunk[(%j + 1) & 1]", "%chunk[(%j + 1) & 1]"},
		{"1.5e3", "1.5e3"},
	}
	for _, tt := range tests {
		x, err := ParseExpr(tt.src)
		if err != nil {
			t.Errorf("ParseExpr(%q): %v", tt.src, err)
			continue
		}
		if got := asm.ExprString(x); got != tt.want {
			t.Errorf("ParseExpr(%q) prints %q, want %q", tt.src, got, tt.want)
		}
	}
	for _, bad := range []string{"", "1 +", "(1", "1 2", "$"} {
		if _, err := ParseExpr(bad); err == nil {
			t.Errorf("ParseExpr(%q) succeeded", bad)
		}
	}
}

// TestPrecedence checks the tree shape, not just the printing.
func TestPrecedence(t *testing.T) {
	tests := []struct{ src, want string }{
		{"a + b * c", "(a + (b * c))"},
		{"a * b + c", "((a * b) + c)"},
		{"a - b - c", "((a - b) - c)"},
		{"a | b & c", "(a | (b & c))"},
		{"a == b || c < d && e", "((a == b) || ((c < d) && e))"},
		{"-a * b", "(-a * b)"},
		{"a << 1 + 2", "((a << 1) + 2)"},
	}
	var show func(e asm.Expr) string
	show = func(e asm.Expr) string {
		switch e := e.(type) {
		case *asm.Binary:
			return "(" + show(e.X) + " " + e.Op + " " + show(e.Y) + ")"
		case *asm.Unary:
			return e.Op + show(e.X)
		}
		return asm.ExprString(e)
	}
	for _, tt := range tests {
		x, err := ParseExpr(tt.src)
		if err != nil {
			t.Fatal(err)
		}
		if got := show(x); got != tt.want {
			t.Errorf("%q parsed as %s, want %s", tt.src, got, tt.want)
		}
	}
}

func TestSpans(t *testing.T) {
	src := "const X = 1\nkernel k : aiv {\n    tadd %d, %a, %b // c\n    %x = ld @S[0]\n}\n"
	f, errs := ParseFile("s.pto", []byte(src))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	k := f.Decls[1].(*asm.Kernel)
	in := k.Body[0].(*asm.Instr)
	ld := k.Body[1].(*asm.Instr)
	tests := []struct {
		name string
		got  asm.Span
		want string // pos-end line:col
	}{
		{"const", f.Decls[0].NodeSpan(), "1:1-1:12"},
		{"kernel", k.Span, "2:1-5:2"},
		{"kind", k.KindSpan, "2:12-2:15"},
		{"tadd", in.Span, "3:5-3:20"},
		{"op", in.OpSpan, "3:5-3:9"},
		{"arg", in.Args[1].NodeSpan(), "3:14-3:16"},
		{"comment", in.After.Span, "3:21-3:25"},
		{"result", ld.Result.NodeSpan(), "4:5-4:7"},
		{"gmref", ld.Args[0].NodeSpan(), "4:13-4:18"},
	}
	for _, tt := range tests {
		got := spanString(tt.got)
		if got != tt.want {
			t.Errorf("%s span = %s, want %s", tt.name, got, tt.want)
		}
	}
	if off := in.Span.Pos.Offset; src[off:in.Span.End.Offset] != "tadd %d, %a, %b" {
		t.Errorf("tadd offsets cover %q", src[off:in.Span.End.Offset])
	}
}

func spanString(s asm.Span) string {
	return itoa(s.Pos.Line) + ":" + itoa(s.Pos.Col) + "-" + itoa(s.End.Line) + ":" + itoa(s.End.Col)
}

func itoa(i int) string {
	var b [20]byte
	n := len(b)
	if i == 0 {
		return "0"
	}
	for i > 0 {
		n--
		b[n] = byte('0' + i%10)
		i /= 10
	}
	return string(b[n:])
}

func TestTreeShapes(t *testing.T) {
	src := `gm A : f16 [4, 4] nd = random(seed=1, lo=-1, hi=1, int)
kernel k : aic {
    mm: %d = pto.tmatmul.acc %c, %a[1] : !pto.tile<loc=acc, f32, 16x16> #init=(%k == 0) #flag
    tile %t[2] : vec f16 [16, 16] valid [16, 8] layout(blayout=row) @ 0x100 step 512
}
`
	f, errs := ParseFile("t.pto", []byte(src))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	num := func(text string, v int64) *asm.Num { return &asm.Num{Text: text, Int: v} }
	want := &asm.File{Name: "t.pto", Decls: []asm.Decl{
		&asm.Tensor{Class: asm.TensorGM, Name: "A", DType: "f16", Shape: []asm.Expr{num("4", 4), num("4", 4)}, Layout: "nd",
			Init: &asm.Init{Kind: "random", Args: []*asm.Attr{
				{Key: "seed", Val: num("1", 1)},
				{Key: "lo", Val: &asm.Unary{Op: "-", X: num("1", 1)}},
				{Key: "hi", Val: num("1", 1)},
				{Key: "int"},
			}}},
		&asm.Kernel{Name: "k", Kind: "aic", Body: []asm.Stmt{
			&asm.Instr{Label: "mm", Result: &asm.Ref{Name: "d"}, Prefix: true, Op: "tmatmul.acc",
				Args: []asm.Expr{&asm.Ref{Name: "c"}, &asm.Ref{Name: "a", Index: num("1", 1)}},
				Type: &asm.TypeAnn{Types: []*asm.Type{{Kind: "tile", Params: []asm.TypeParam{{Key: "loc", Val: "acc"}, {Val: "f32"}, {Val: "16x16"}}}}},
				Attrs: []*asm.Attr{
					{Key: "init", Val: &asm.Paren{X: &asm.Binary{Op: "==", X: &asm.Ref{Name: "k"}, Y: num("0", 0)}}},
					{Key: "flag"},
				}},
			&asm.TileDecl{Name: "t", Count: num("2", 2), Loc: "vec", DType: "f16", Rows: num("16", 16), Cols: num("16", 16),
				VRows: num("16", 16), VCols: num("8", 8), Attrs: []*asm.Attr{{Key: "blayout", Val: &asm.Name{Name: "row"}}},
				Addr: num("0x100", 256), Step: num("512", 512)},
		}},
	}}
	if d := cmp.Diff(want, f, ignoreSpans); d != "" {
		t.Errorf("tree (-want +got):\n%s", d)
	}
}
