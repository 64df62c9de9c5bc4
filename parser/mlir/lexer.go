package mlir

import (
	"strings"

	"github.com/alecthomas/participle/v2/lexer"

	"github.com/ptoasm/ptoasm/asm"
)

// lexDef is the token grammar of MLIR text. participle's simple lexer takes the
// first rule that matches, not the longest, so the order is load-bearing:
//   - Comment before Punct, or `//` lexes as two slashes;
//   - Value takes `%name#0` whole, so a result-group use stays one token;
//   - Hex before Dims and Int, or `0x3F800000` lexes as the dimension `0x`;
//   - Dims (`16x16x`, `?x?x`) before Float, Int and Ident: with first-match
//     rules `16x16xf16` would otherwise be `16` then the identifier `x16xf16`;
//     the element type after the last `x` lexes as its own Ident;
//   - Float before Int, or `1.5` lexes as `1` `.5`;
//   - Arrow before Punct, or `->` lexes as `-` `>`;
//   - Invalid catches any other character so lexing never stops; the parser
//     reports it with its position.
var lexDef = lexer.MustSimple([]lexer.SimpleRule{
	{Name: "Comment", Pattern: `//[^\n]*`},
	{Name: "Whitespace", Pattern: `[ \t\r\n\f]+`},
	{Name: "Value", Pattern: `%[A-Za-z0-9_$.\-]+(?:#[0-9]+)?`},
	{Name: "Symbol", Pattern: `@[A-Za-z_][A-Za-z0-9_$.\-]*|@"(?:\\.|[^"\\\n])*"`},
	{Name: "Block", Pattern: `\^[A-Za-z0-9_$.\-]+`},
	{Name: "AttrAlias", Pattern: `#[A-Za-z_][A-Za-z0-9_$.\-]*`},
	{Name: "TypeAlias", Pattern: `![A-Za-z_][A-Za-z0-9_$.\-]*`},
	{Name: "String", Pattern: `"(?:\\.|[^"\\\n])*"`},
	{Name: "Hex", Pattern: `0x[0-9A-Fa-f]+`},
	{Name: "Dims", Pattern: `(?:(?:[0-9]+|\?)x)+`},
	{Name: "Float", Pattern: `[-+]?[0-9]+\.[0-9]*(?:[eE][-+]?[0-9]+)?|[-+]?[0-9]+[eE][-+]?[0-9]+`},
	{Name: "Int", Pattern: `-?[0-9]+`},
	{Name: "Ident", Pattern: `[A-Za-z_][A-Za-z0-9_$.]*`},
	{Name: "Arrow", Pattern: `->`},
	{Name: "Punct", Pattern: `[-+*/(){}\[\]<>=,:?!#|]`},
	{Name: "Invalid", Pattern: `(?s).`},
})

// Kind is a token class.
type Kind uint8

// Token classes; KRegion is not lexed but marks where an op's region sits in
// its token list (Tok.Text holds nothing, Tok.Region the index in Op.Regions).
const (
	KEOF Kind = iota
	KValue
	KSymbol
	KBlock
	KAttrAlias
	KTypeAlias
	KString
	KHex
	KDims
	KFloat
	KInt
	KIdent
	KArrow
	KPunct
	KInvalid
	KRegion
)

var kindNames = [...]string{"end of file", "value", "symbol", "block label", "attribute", "type", "string", "hex number",
	"dimension list", "float", "integer", "identifier", "->", "punctuation", "invalid character", "region"}

func (k Kind) String() string { return kindNames[k] }

// Tok is one token with its source span.
type Tok struct {
	Kind   Kind
	Text   string
	Span   asm.Span
	Region int
}

func (t Tok) is(text string) bool { return t.Kind != KString && t.Kind != KRegion && t.Text == text }

var symKind = func() map[lexer.TokenType]Kind {
	s := lexDef.Symbols()
	return map[lexer.TokenType]Kind{
		s["Value"]: KValue, s["Symbol"]: KSymbol, s["Block"]: KBlock, s["AttrAlias"]: KAttrAlias,
		s["TypeAlias"]: KTypeAlias, s["String"]: KString, s["Hex"]: KHex, s["Dims"]: KDims,
		s["Float"]: KFloat, s["Int"]: KInt, s["Ident"]: KIdent, s["Arrow"]: KArrow, s["Punct"]: KPunct,
		s["Invalid"]: KInvalid,
	}
}()

var (
	tWhitespace = lexDef.Symbols()["Whitespace"]
	tComment    = lexDef.Symbols()["Comment"]
)

// tokenize lexes src into tokens without whitespace and comments. Spans use
// byte columns (asm.Pos); MLIR outside strings and comments is ASCII. No
// token spans a line, so each line is lexed on its own: the regexp
// backtracker clears state in proportion to its input for every token, and
// the line bounds that input (BenchmarkParseLower: 166 → 118 ms of CPU).
func tokenize(filename string, src []byte) []Tok {
	var out []Tok
	text := string(src)
	for line, off := 1, 0; off < len(text); line++ {
		end := len(text)
		if i := strings.IndexByte(text[off:], '\n'); i >= 0 {
			end = off + i + 1
		}
		lx, err := lexDef.LexString(filename, text[off:end])
		if err != nil {
			return nil
		}
		for {
			t, err := lx.Next()
			if err != nil || t.EOF() {
				break
			}
			if t.Type == tWhitespace || t.Type == tComment {
				continue
			}
			p := asm.Pos{File: filename, Offset: off + t.Pos.Offset, Line: line, Col: t.Pos.Column}
			e := advance(p, t.Value)
			out = append(out, Tok{Kind: symKind[t.Type], Text: t.Value, Span: asm.Span{Pos: p, End: e}})
		}
		off = end
	}
	end := endPos(filename, src)
	return append(out, Tok{Kind: KEOF, Span: asm.Span{Pos: end, End: end}})
}

func advance(p asm.Pos, s string) asm.Pos {
	for i := 0; i < len(s); i++ {
		p.Offset++
		if s[i] == '\n' {
			p.Line++
			p.Col = 1
		} else {
			p.Col++
		}
	}
	return p
}

func endPos(filename string, src []byte) asm.Pos {
	return advance(asm.Pos{File: filename, Line: 1, Col: 1}, string(src))
}
