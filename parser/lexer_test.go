package parser

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/alecthomas/participle/v2/lexer"
	"github.com/google/go-cmp/cmp"

	"github.com/ptoasm/ptoasm/internal/fuzzseed"
)

// tokNames maps token types back to rule names for readable expectations.
func tokNames() map[int]string {
	out := map[int]string{}
	for name, tt := range lexDef.Symbols() {
		out[int(tt)] = name
	}
	return out
}

func TestLexer(t *testing.T) {
	names := tokNames()
	tests := []struct {
		src  string
		want []string // "Type:value", whitespace and the final EOL/EOF left out
	}{
		{"tmatmul.acc %c, %a", []string{"Ident:tmatmul.acc", "Reg:%c", "Punct:,", "Reg:%a"}},
		{"pto.tadd", []string{"Ident:pto.tadd"}},
		{"0x1e3 1e-3 1.5 1_024 0b101 2.", []string{"Int:0x1e3", "Float:1e-3", "Float:1.5", "Int:1_024", "Int:0b101", "Float:2."}},
		{"a // c", []string{"Ident:a", "Comment:// c"}},
		{"x/y", []string{"Ident:x", "Op:/", "Ident:y"}},
		{"-> - == = != ! <= << < >= >> > && & || |", []string{"Arrow:->", "Op:-", "Op:==", "Punct:=", "Op:!=", "Punct:!", "Op:<=", "Op:<<", "Op:<", "Op:>=", "Op:>>", "Op:>", "Op:&&", "Op:&", "Op:||", "Op:|"}},
		{": !pto.tile<loc=vec>", []string{"Punct::", "Type:!pto.tile", "Op:<", "Ident:loc", "Punct:=", "Ident:vec", "Op:>"}},
		{"!x", []string{"Punct:!", "Ident:x"}},
		{"@A[0] @ 0x10", []string{"Global:@A", "Punct:[", "Int:0", "Punct:]", "Punct:@", "Int:0x10"}},
		{"#init=1", []string{"Punct:#", "Ident:init", "Punct:=", "Int:1"}},
		{`"a\"b.npy"`, []string{`String:"a\"b.npy"`}},
		{"a $ b", []string{"Ident:a", "Invalid:$", "Ident:b"}},
		{`"open`, []string{`Invalid:"`, "Ident:open"}},
		// Newlines and comments inside brackets continue the line.
		{"f(a, // x\n b)\nc", []string{"Ident:f", "Punct:(", "Ident:a", "Punct:,", "Ident:b", "Punct:)", "EOL:\n", "Ident:c"}},
		// `;` ends a statement; the newline right after it adds nothing.
		{"a; b;\nc", []string{"Ident:a", "EOL:;", "Ident:b", "EOL:;", "Ident:c"}},
		// An unclosed bracket stops at the next brace.
		{"f(\n}\nx", []string{"Ident:f", "Punct:(", "Punct:}", "EOL:\n", "Ident:x"}},
	}
	for _, tt := range tests {
		toks := mustTokenize(t, "t", []byte(tt.src))
		var got []string
		for i, tok := range toks {
			if tok.Type == tWhitespace || tok.EOF() || (i == len(toks)-2 && tok.Type == tEOL) {
				continue
			}
			got = append(got, names[int(tok.Type)]+":"+tok.Value)
		}
		if d := cmp.Diff(tt.want, got); d != "" {
			t.Errorf("tokenize(%q) (-want +got):\n%s", tt.src, d)
		}
		if last := toks[len(toks)-1]; !last.EOF() || toks[len(toks)-2].Type != tEOL {
			t.Errorf("tokenize(%q) does not end in EOL, EOF", tt.src)
		}
	}
}

func TestLexerPositions(t *testing.T) {
	toks := mustTokenize(t, "t", []byte("a\n  %b"))
	var got []string
	for _, tok := range toks {
		if tok.Value == "%b" {
			got = append(got, tok.Pos.String())
		}
	}
	if strings.Join(got, "") != "t:2:3" {
		t.Errorf("position of %%b = %v, want t:2:3", got)
	}
}

// lexDefTokens lexes src with participle's regexp lexer, the specification
// scan must match.
func lexDefTokens(t testing.TB, src string) []lexer.Token {
	lx, err := lexDef.LexString("f", src)
	if err != nil {
		t.Fatal(err)
	}
	var out []lexer.Token
	for {
		tok, err := lx.Next()
		if err != nil {
			t.Fatalf("lexDef on %q: %v", src, err)
		}
		out = append(out, tok)
		if tok.EOF() {
			return out
		}
	}
}

func checkScan(t *testing.T, src string) {
	want := lexDefTokens(t, src)
	got := scan("f", src, true, nil)
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("scan(%q) differs from lexDef (-lexDef +scan):\n%s", src, d)
	}
	var spaceless []lexer.Token
	for _, tok := range got {
		if tok.Type != tWhitespace {
			spaceless = append(spaceless, tok)
		}
	}
	if d := cmp.Diff(spaceless, scan("f", src, false, nil)); d != "" {
		t.Fatalf("scan(%q) without whitespace differs (-want +got):\n%s", src, d)
	}
}

var scanSamples = []string{
	"", "a", "tmatmul.acc %c, %a", "a.b. a..b a.1 _x.y_z.", "0x1e3 1e-3 1.5 1_024 0b101 2. 1e 1e+ 1e_ 1.e5 0x 0b2 0X_ 1.2.3 007",
	"-> - == = != ! <= << < >= >> > && & || | ^ * / % %a %1 @ @a @1 # ? . ~",
	"!pto.tile<loc=vec> !pto. !pto.1 !ptox", "\"a\\\"b\" \"x\\\n\" \"open \"é\" \"\\é\"",
	"a // c é\r\nb;c\r\rd\t\f", "é ü \xff\xfe x\x00y $ `", "f(a, // x\n b)\nc", "\"tail\\",
}

func TestScanMatchesLexDef(t *testing.T) {
	for _, s := range scanSamples {
		checkScan(t, s)
	}
	files, _ := filepath.Glob("testdata/*.pto")
	more, _ := filepath.Glob("testdata/errors/*.pto")
	for _, name := range append(files, more...) {
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		checkScan(t, string(src))
	}
}

// FuzzScan: the hand-written scanner agrees with lexDef on every input.
func FuzzScan(f *testing.F) {
	for _, s := range scanSamples {
		f.Add(s)
	}
	for _, src := range fuzzseed.Files(f, 16<<10, nil, fuzzseed.Dirs...) {
		f.Add(string(src))
	}
	f.Fuzz(func(t *testing.T, src string) { checkScan(t, src) })
}

// mustTokenize is tokenize for inputs within the nesting limit.
func mustTokenize(t testing.TB, name string, src []byte) []lexer.Token {
	t.Helper()
	toks, deep := tokenize(name, src)
	if deep >= 0 {
		t.Fatalf("%s: nests too deeply at %v", name, toks[deep].Pos)
	}
	return toks
}

// TestNestingLimit: nesting beyond maxNesting is one ordinary diagnostic at
// the token that goes too deep, never a stack overflow, and nesting up to the
// limit parses.
func TestNestingLimit(t *testing.T) {
	parens := func(n int) string { return strings.Repeat("(", n) + "1" + strings.Repeat(")", n) }
	// blocks nests n blocks inside a kernel (itself a level).
	blocks := func(n int) string {
		return "kernel k : aic {\n" + strings.Repeat("if 1 {\n", n) + "dsb\n" + strings.Repeat("}\n", n) + "}\n"
	}
	// elifs is an if with n else-if links inside a kernel: the kernel's
	// block, the links and the innermost block are 2+n levels.
	elifs := func(n int) string {
		return "kernel k : aic {\n    if 1 {\n" + strings.Repeat("    } else if 1 {\n", n) + "    }\n}\n"
	}
	tests := []struct {
		name string
		src  string
		want string // the diagnostic, "" for none
	}{
		{"parens at limit", "const A = " + parens(maxNesting) + "\n", ""},
		{"parens over", "const A = " + parens(maxNesting+1) + "\n",
			`d.pto:1:267: error: nesting too deep: "(" opens level 257`},
		{"brackets over", "const A = %r" + strings.Repeat("[%r", maxNesting+1) + strings.Repeat("]", maxNesting+1) + "\n",
			`d.pto:1:781: error: nesting too deep: "["`},
		{"blocks at limit", blocks(maxNesting - 1), ""},
		{"blocks over", blocks(maxNesting), `d.pto:257:6: error: nesting too deep: "{"`},
		{"else-if at limit", elifs(maxNesting - 2), ""},
		{"else-if over", elifs(maxNesting - 1), `d.pto:257:17: error: nesting too deep: "{"`},
		{"blocks and parens", "kernel k : aic {\n" + strings.Repeat("if 1 {\n", 200) +
			"tadd " + parens(56) + "\n" + strings.Repeat("}\n", 201), `d.pto:202:61: error: nesting too deep: "("`},
		// Neither else-if chains one after the other nor brackets left open
		// on many lines add up.
		{"chains in sequence", "kernel k : aic {\n" + strings.Repeat("if 1 {\n} else if 2 {\n} else if 3 { dsb }\n", 300) + "}\n", ""},
		{"unclosed brackets", strings.Repeat("const A = (1\n", 300), "d.pto:1:13: error: unexpected end of line"},
		{"huge", "const A = " + parens(1<<20) + "\n", `d.pto:1:267: error: nesting too deep: "(" opens level 257`},
	}
	for _, tt := range tests {
		f, errs := ParseFile("d.pto", []byte(tt.src))
		if f == nil {
			t.Fatalf("%s: nil file", tt.name)
		}
		got := ""
		if len(errs) > 0 {
			got = errs[0].Error()
		}
		if tt.want == "" && got != "" || !strings.HasPrefix(got, tt.want) {
			t.Errorf("%s: first diagnostic %q, want prefix %q", tt.name, got, tt.want)
		}
		if tt.want != "" && strings.Contains(tt.want, "too deep") && len(errs) != 1 {
			t.Errorf("%s: %d diagnostics, want 1: %v", tt.name, len(errs), errs)
		}
	}
	if _, err := ParseExpr(parens(maxNesting)); err != nil {
		t.Errorf("ParseExpr at the limit: %v", err)
	}
	if _, err := ParseExpr(parens(1 << 16)); err == nil || !strings.Contains(err.Error(), "nesting too deep") {
		t.Errorf("ParseExpr(%d parens) = %v, want a nesting error", 1<<16, err)
	}
}

// TestExprDepthLimit: every operator is a level of an expression's tree, not
// only brackets, so long operator chains are one diagnostic at the
// expression's start, never a stack overflow later; up to the limit they
// parse.
func TestExprDepthLimit(t *testing.T) {
	chain := func(n int) string { return strings.Repeat("1 + ", n) + "1" }
	tests := []struct {
		name string
		src  string
		want string // the diagnostic, "" for none
	}{
		{"chain at limit", "const A = " + chain(maxExprDepth) + "\n", ""},
		{"chain over", "const A = " + chain(maxExprDepth+1) + "\n",
			"d.pto:1:11: error: expression too deep: 257 levels of operators, brackets and calls (at most 256)"},
		{"minus at limit", "const A = " + strings.Repeat("-", maxExprDepth) + "1\n", ""},
		{"minus over", "const A = " + strings.Repeat("-", 700000) + "1\n",
			"d.pto:1:11: error: expression too deep: 700000 levels"},
		{"long chain", "const A = " + chain(990000) + "\n", "d.pto:1:11: error: expression too deep: 990000 levels"},
		// Operators inside brackets add to the brackets around them.
		{"chains in parens at limit", "const A = " + strings.Repeat("(1 + ", 128) + "2" + strings.Repeat(")", 128) + "\n", ""},
		{"chains in parens", "const A = " + strings.Repeat("(1 + ", 128) + "2" + strings.Repeat(")", 128) + " * 3\n",
			"d.pto:1:11: error: expression too deep: 257 levels"},
		{"operands", "kernel k : aiv {\n    tadds %x, %x, " + chain(300) + "\n}\n", "d.pto:2:19: error: expression too deep: 300 levels"},
	}
	for _, tt := range tests {
		f, errs := ParseFile("d.pto", []byte(tt.src))
		if f == nil {
			t.Fatalf("%s: nil file", tt.name)
		}
		got := ""
		if len(errs) > 0 {
			got = errs[0].Error()
		}
		if tt.want == "" && got != "" || !strings.HasPrefix(got, tt.want) {
			t.Errorf("%s: first diagnostic %q, want prefix %q", tt.name, got, tt.want)
		}
		if tt.want != "" && len(errs) != 1 {
			t.Errorf("%s: %d diagnostics, want 1: %v", tt.name, len(errs), errs)
		}
	}
	if _, err := ParseExpr(chain(maxExprDepth)); err != nil {
		t.Errorf("ParseExpr at the limit: %v", err)
	}
	if _, err := ParseExpr(strings.Repeat("-", 1<<16) + "1"); err == nil || !strings.Contains(err.Error(), "expression too deep") {
		t.Errorf("ParseExpr(%d minus signs) = %v, want a depth error", 1<<16, err)
	}
}

// TestNormalize: a byte-order mark and old Mac line ends (a lone CR) parse
// as the file means them, at the same byte offsets; CRLF is unchanged.
func TestNormalize(t *testing.T) {
	tests := []struct {
		name, src string
		want      string // first diagnostic, "" for none
	}{
		{"bom", "\ufeffconst A = 1\n", ""},
		{"cr only", "const A = 1\rconst B = 2\r", ""},
		{"cr only, error on line 2", "const A = 1\rconst B = )\r", "d.pto:2:11: error: "},
		{"crlf", "const A = 1\r\nconst B = )\r\n", "d.pto:2:11: error: "},
		{"bom, error", "\ufeffconst A = )\n", "d.pto:1:14: error: "},
	}
	for _, tt := range tests {
		f, errs := ParseFile("d.pto", []byte(tt.src))
		got := ""
		if len(errs) > 0 {
			got = errs[0].Error()
		}
		if tt.want == "" && got != "" || !strings.HasPrefix(got, tt.want) {
			t.Errorf("%s: first diagnostic %q, want prefix %q", tt.name, got, tt.want)
		}
		if tt.want == "" && (f == nil || len(f.Decls) == 0) {
			t.Errorf("%s: nothing parsed", tt.name)
		}
		if n := Normalize([]byte(tt.src)); len(n) != len(tt.src) {
			t.Errorf("%s: Normalize changed the length", tt.name)
		}
	}
	if src := []byte("const A = 1\r\n"); &Normalize(src)[0] != &src[0] {
		t.Error("Normalize copied a file it had nothing to change in")
	}
}
