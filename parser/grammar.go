package parser

import "github.com/alecthomas/participle/v2/lexer"

// The grammar tree. Every struct mirrors one production; Grammar() prints them
// as EBNF. Mnemonics and operand kinds are deliberately absent: an instruction
// is a generic `[label:] [%res =] mnemonic operand, ...` line that the assembler
// checks against the ISA table, as Go's assembler does.
//
// Block statements are split into a head production and a block so that the
// error-recovery path (parser.go) can parse a head on its own line and build
// the same trees as the whole-file parse.

// comment is a `//` comment, kept so fmt can put it back.
type comment struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Text   string `parser:"@Comment"`
}

type file struct {
	Lines []*topLine `parser:"@@*"`
}

// topLine is one line at file level: a declaration, a comment, both or neither.
type topLine struct {
	Decl    *decl    `parser:"( @@"`
	Comment *comment `parser:"  @@? | @@ )? EOL"`
}

type decl struct {
	Const   *constDecl   `parser:"  @@"`
	Include *includeDecl `parser:"| @@"`
	Tensor  *tensorDecl  `parser:"| @@"`
	Kernel  *kernelDecl  `parser:"| @@"`
	Launch  *launchDecl  `parser:"| @@"`
	Expect  *expectDecl  `parser:"| @@"`
}

type constDecl struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Name   string `parser:"'const' @Ident '='"`
	Val    *expr  `parser:"@@"`
}

type includeDecl struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Path   string `parser:"'include' @String"`
}

type tensorDecl struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Class  string    `parser:"@( 'gm' | 'window' | 'signal' | 'fifo' )"`
	Name   string    `parser:"@Ident ':'"`
	DType  string    `parser:"@Ident?"`
	Shape  []*expr   `parser:"'[' @@ ( ',' @@ )* ']'"`
	Layout string    `parser:"@( 'nd' | 'dn' | 'nz' )?"`
	Attrs  []*keyVal `parser:"@@*"`
	Init   *initSpec `parser:"( '=' @@ )?"`
}

// keyVal is `key=value` in declarations (fifo slots=2, launch ranks=4, layout(...)).
type keyVal struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Key    string `parser:"@Ident '='"`
	Val    *expr  `parser:"@@"`
}

// initSpec is zero | poison | fill(v) | random(...) | file("x") | expr(E).
type initSpec struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Kind   string `parser:"@Ident"`
	Call   bool   `parser:"( @'('"`
	Args   []*arg `parser:"  ( @@ ( ',' @@ )* )? ')' )?"`
}

// arg is a call or index argument, optionally named: seed=1, rank=r.
type arg struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Key    string `parser:"( @Ident '=' )?"`
	Val    *expr  `parser:"@@"`
}

type kernelHead struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Name   string    `parser:"'kernel' @Ident ':'"`
	Kind   *kindName `parser:"@@"`
}

// kindName is the core kind of a kernel: aic, aiv or unified.
type kindName struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Name   string `parser:"@Ident"`
}

type kernelDecl struct {
	Head *kernelHead `parser:"@@"`
	Body *block      `parser:"@@"`
}

// block is a kernel statement block. A block may also sit on one line,
// `{ stmt }`; fmt spreads it over three.
type block struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Open   *comment    `parser:"'{' ( @@? EOL"`
	Lines  []*stmtLine `parser:"  @@*"`
	Inline *stmt       `parser:"| @@ ) '}'"`
}

type stmtLine struct {
	Stmt    *stmt    `parser:"( @@"`
	Comment *comment `parser:"  @@? | @@ )? EOL"`
}

type stmt struct {
	Tile  *tileStmt  `parser:"  @@"`
	Let   *letStmt   `parser:"| @@"`
	For   *forStmt   `parser:"| @@"`
	While *whileStmt `parser:"| @@"`
	If    *ifStmt    `parser:"| @@"`
	Break *breakStmt `parser:"| @@"`
	Instr *instr     `parser:"| @@"`
}

type tileStmt struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Name   string    `parser:"'tile' @Reg"`
	Count  *expr     `parser:"( '[' @@ ']' )? ':'"`
	Loc    string    `parser:"@Ident"`
	DType  string    `parser:"@Ident"`
	Rows   *expr     `parser:"'[' @@ ','"`
	Cols   *expr     `parser:"@@ ']'"`
	VRows  *expr     `parser:"( 'valid' '[' @@ ','"`
	VCols  *expr     `parser:"  @@ ']' )?"`
	Layout bool      `parser:"( @'layout' '('"`
	Attrs  []*keyVal `parser:"  ( @@ ( ',' @@ )* )? ')' )?"`
	GAddr  *gAddr    `parser:"( ( @@"`
	Addr   *expr     `parser:"  | '@' @@ )"`
	Step   *expr     `parser:"  ( 'step' @@ )? )?"`
}

// gAddr is a tile address written without a space after `@` (`@BASE + 64`),
// which the lexer reads as a GM name.
type gAddr struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Name   string   `parser:"@Global"`
	Ops    []*binOp `parser:"@@*"`
}

type letStmt struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Reg    string `parser:"'let' @Reg '='"`
	X      *expr  `parser:"@@"`
}

type forHead struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Var    string `parser:"'for' @Reg '='"`
	From   *expr  `parser:"@@ 'to'"`
	To     *expr  `parser:"@@"`
	Step   *expr  `parser:"( 'step' @@ )?"`
}

type forStmt struct {
	Head *forHead `parser:"@@"`
	Body *block   `parser:"@@"`
}

type whileHead struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Cond   *expr `parser:"'while' @@"`
}

type whileStmt struct {
	Head *whileHead `parser:"@@"`
	Body *block     `parser:"@@"`
}

type ifHead struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Cond   *expr `parser:"'if' @@"`
}

type ifStmt struct {
	Head   *ifHead `parser:"@@"`
	Body   *block  `parser:"@@"`
	ElseIf *ifStmt `parser:"( 'else' ( @@"`
	Else   *block  `parser:"  | @@ ) )?"`
}

type breakStmt struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Break  bool `parser:"@'break'"`
}

// instr is the generic instruction line.
type instr struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Label  string     `parser:"( @Ident ':' )?"`
	Result *resReg    `parser:"( @@ '=' )?"`
	Op     *mnemonic  `parser:"@@"`
	Args   []*expr    `parser:"( @@ ( ',' @@ )* )?"`
	Types  []*typeRef `parser:"( ':' @@ ( ',' @@ )* )?"`
	Attrs  []*attr    `parser:"@@*"`
}

type resReg struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Name   string `parser:"@Reg"`
}

type mnemonic struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Name   string `parser:"@Ident"`
}

// typeRef is `!pto.kind<param, key=param, ...>`.
type typeRef struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Kind   string       `parser:"@Type '<'"`
	Params []*typeParam `parser:"( @@ ( ',' @@ )* )? '>'"`
}

type typeParam struct {
	Key string `parser:"( @Ident '=' )?"`
	Val string `parser:"@~( ',' | '>' | EOL )+"`
}

// attr is `#key` or `#key=value`.
type attr struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Key    string `parser:"'#' @Ident"`
	Val    *expr  `parser:"( '=' @@ )?"`
}

type launchHead struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Attrs  []*keyVal `parser:"'launch' @@*"`
}

type launchDecl struct {
	Head *launchHead  `parser:"@@"`
	Body *launchBlock `parser:"@@"`
}

type launchBlock struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Open   *comment      `parser:"'{' ( @@? EOL"`
	Lines  []*launchLine `parser:"  @@*"`
	Inline *launchStmt   `parser:"| @@ ) '}'"`
}

type launchLine struct {
	Stmt    *launchStmt `parser:"( @@"`
	Comment *comment    `parser:"  @@? | @@ )? EOL"`
}

type launchStmt struct {
	Run   *runStmt   `parser:"  @@"`
	Reset *resetStmt `parser:"| @@"`
	If    *launchIf  `parser:"| @@"`
}

type runStmt struct {
	Pos     lexer.Position
	EndPos  lexer.Position
	Name    string    `parser:"'run' @String?"`
	Streams []*stream `parser:"@@ ( ',' @@ )*"`
}

// stream is `kernel[+kernel] [blocks=expr]`.
type stream struct {
	Pos     lexer.Position
	EndPos  lexer.Position
	Kernels []string `parser:"@Ident ( '+' @Ident )*"`
	Blocks  *expr    `parser:"( 'blocks' '=' @@ )?"`
}

type resetStmt struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Target *gmRef    `parser:"'reset' @@ '='"`
	Init   *initSpec `parser:"@@"`
}

type launchIf struct {
	Head   *ifHead      `parser:"@@"`
	Body   *launchBlock `parser:"@@"`
	ElseIf *launchIf    `parser:"( 'else' ( @@"`
	Else   *launchBlock `parser:"  | @@ ) )?"`
}

type expectDecl struct {
	Pos     lexer.Position
	EndPos  lexer.Position
	Finding *findingExp `parser:"'expect' ( @@"`
	Cycles  *expr       `parser:"  | 'cycles' @@"`
	Output  *outputExp  `parser:"  | @@ )"`
}

type findingExp struct {
	Kind  string  `parser:"'finding' @Ident ( @'-' @Ident )*"`
	Sites []*expr `parser:"( 'at' @@ ( ',' @@ )* )?"`
	Count *expr   `parser:"( 'count' @@ )?"`
}

type outputExp struct {
	Target *gmRef `parser:"@@ '=='"`
	Golden *expr  `parser:"@@"`
	Tol    *expr  `parser:"( 'tol' @@ )?"`
	RTol   *expr  `parser:"( 'rtol' @@ )?"`
	ATol   *expr  `parser:"( 'atol' @@ )?"`
}

// expr is a flat operand/operator list; lower.go builds the tree by
// precedence climbing, which keeps the grammar small and its lookahead low.
type expr struct {
	X   *unary   `parser:"@@"`
	Ops []*binOp `parser:"@@*"`
}

type binOp struct {
	Op string `parser:"@Op"`
	Y  *unary `parser:"@@"`
}

type unary struct {
	Ops []*unOp  `parser:"@@*"`
	X   *primary `parser:"@@"`
}

type unOp struct {
	Pos lexer.Position
	Op  string `parser:"@( '-' | '!' | '~' )"`
}

// primary lists its alternatives most frequent first: each failed
// alternative costs a parser branch.
type primary struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Reg    *regRef `parser:"  @@"`
	Call   *call   `parser:"| @@"`
	Int    string  `parser:"| @Int"`
	GM     *gmRef  `parser:"| @@"`
	Paren  *expr   `parser:"| '(' @@ ')'"`
	Float  string  `parser:"| @Float"`
	Str    string  `parser:"| @String"`
}

type regRef struct {
	Name  string `parser:"@Reg"`
	Index *expr  `parser:"( '[' @@ ']' )?"`
}

// gmRef is `@name` followed by bracket groups: `[rank=r]` and/or `[i, j]`.
type gmRef struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Name   string     `parser:"@Global"`
	Groups []*bracket `parser:"@@*"`
}

type bracket struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Args   []*arg `parser:"'[' @@ ( ',' @@ )* ']'"`
}

// call is a bare name, or a function call when parentheses follow.
type call struct {
	Name string `parser:"@Ident"`
	Call bool   `parser:"( @'('"`
	Args []*arg `parser:"  ( @@ ( ',' @@ )* )? ')' )?"`
}
