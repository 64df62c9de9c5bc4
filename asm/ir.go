package asm

// This file is the syntax tree of a PTO-AS file, as the parser produces it and the
// printer writes it back. It keeps the author's spelling where `ptoasm fmt` must
// preserve it (result form vs destination-first form, comments) and nothing else.

// Node is anything with a source span. The method cannot be called Span: every
// node embeds a Span field, and a field shadows a promoted method of that name.
type Node interface{ NodeSpan() Span }

// Comment is a `//` comment (Text includes the slashes). A comment on the same
// line as a statement trails it; others stand alone before the next node.
// In a list of whole-line comments (Before, Close, Trailing) a Comment with
// empty Text stands for a blank line between comment groups.
type Comment struct {
	Span
	Text string
}

// File is one parsed source file. Includes are resolved by the assembler, which
// merges the included files' declarations into the Program.
type File struct {
	Span
	Name  string
	Decls []Decl
	// Trailing holds comments after the last declaration.
	Trailing []*Comment
}

// Decl is a top-level item: Const, Include, Tensor, Kernel, Launch, Expect.
type Decl interface {
	Node
	decl()
	Doc() *Comments
}

// Comments carries the comments attached to a node: Before are whole-line
// comments above it, After is a comment on its last line.
type Comments struct {
	Before []*Comment
	After  *Comment
	// Open is a comment after a block's opening `{` (kernel, launch, for,
	// while, if); nil for other nodes.
	Open *Comment
	// Blank records that the author left a blank line above the node (above
	// its Before comments); fmt keeps one.
	Blank bool
}

// Doc returns the node's comments; every Decl and Stmt embeds Comments.
func (c *Comments) Doc() *Comments { return c }

// Const is `const NAME = expr`; -D NAME=value overrides it.
type Const struct {
	Span
	Comments
	Name string
	Val  Expr
}

// Include is `include "path"`, relative to the including file.
type Include struct {
	Span
	Comments
	Path string
}

// TensorClass says how a GM object is shared between ranks.
type TensorClass uint8

const (
	TensorGM     TensorClass = iota // `gm`: private to each rank (each rank has its own copy)
	TensorWindow                    // `window`: symmetric; any rank addresses any rank's copy
	TensorSignal                    // `signal`: a symmetric window of int32 signals
	TensorFIFO                      // `fifo`: TPUSH/TPOP slot ring in GM between an AIC and its AIVs
)

var tensorClassNames = [...]string{"gm", "window", "signal", "fifo"}

func (c TensorClass) String() string { return tensorClassNames[c] }

// Tensor declares a GM object:
//
//	gm     A : f16 [M, K] nd = random(seed=19, lo=1, hi=4, int)
//	window W : f16 [RANKS, M, K] = poison
//	signal S : [RANKS, 16] = zero          (dtype is always i32)
//	fifo   gate : f32 [T, Fi] slots=2 id=0  (Attrs carry slots/id/dir)
type Tensor struct {
	Span
	Comments
	Class  TensorClass
	Name   string
	DType  string // as written; "" for signal (i32)
	Shape  []Expr
	Layout string // nd (default), dn, nz
	Attrs  []*Attr
	Init   *Init // nil: zero for signals, poison otherwise
}

// Init is a tensor's initial contents.
//
//	zero | poison | fill(1.5) | random(seed=1, lo=-1, hi=1[, int]) | file("a.npy")
//	| expr(i * K + j + rank)  (element indices i, j, … from the outermost dim)
type Init struct {
	Span
	Kind string // zero, poison, fill, random, file, expr
	Args []*Attr
	File string
	X    Expr
}

// Kernel is `kernel NAME : aic|aiv|unified { ... }`.
type Kernel struct {
	Span
	Comments
	Name string
	Kind string
	// KindSpan locates Kind for diagnostics.
	KindSpan Span
	Body     []Stmt
	// Close holds comments before the closing brace.
	Close []*Comment
}

// Stmt is a kernel statement.
type Stmt interface {
	Node
	stmt()
	Doc() *Comments
}

// TileDecl declares one tile or an array of tiles:
//
//	tile %a        : left f16 [128, 64]                       (automatic address)
//	tile %chunk[2] : mat f16 [T, F/4] @ 0xB000 step 0x1000   (explicit, aliasing allowed)
//	tile %h        : vec f32 [16, 64] valid [16, 60] layout(blayout=col, slayout=row, fractal=512)
type TileDecl struct {
	Span
	Comments
	Name  string
	Count Expr // nil for a single tile
	Loc   string
	DType string
	Rows  Expr
	Cols  Expr
	VRows Expr // nil: Rows
	VCols Expr // nil: Cols
	// Attrs holds blayout, slayout, fractal, pad as written in layout(...).
	Attrs []*Attr
	Addr  Expr // nil: placed automatically
	Step  Expr // nil: the tile size rounded up to 32 bytes
}

// Let sets a scalar register: `let %x = expr`. Registers are kernel-scoped int64.
type Let struct {
	Span
	Comments
	Reg string
	X   Expr
}

// For is `for %i = from to limit [step s] { ... }`: %i takes from, from+s, … while < limit.
type For struct {
	Span
	Comments
	Var   string
	From  Expr
	To    Expr
	Step  Expr // nil: 1
	Body  []Stmt
	Close []*Comment
}

// If is `if cond { ... } [else if ... | else { ... }]`.
type If struct {
	Span
	Comments
	Cond  Expr
	Then  []Stmt
	Else  []Stmt // an `else if` is a single *If here with Elif set on it
	Elif  bool   // Else is exactly one *If written as `else if`
	Close []*Comment
	// ElseClose holds comments before the closing brace of the else block.
	ElseClose []*Comment
}

// While is `while cond { ... }`, for polling loops.
type While struct {
	Span
	Comments
	Cond  Expr
	Body  []Stmt
	Close []*Comment
}

// Break leaves the innermost for or while loop.
type Break struct {
	Span
	Comments
}

// Instr is one instruction:
//
//	[label:] [%res =] [pto.]mnemonic[.variant] operand, ... [: type] [#key=value ...]
type Instr struct {
	Span
	Comments
	Label  string
	Result Expr // nil unless written in result form `%d = op ...`
	Prefix bool // written with a `pto.` prefix
	Op     string
	OpSpan Span
	Args   []Expr
	Type   *TypeAnn
	Attrs  []*Attr
	// StandIn marks an instruction the MLIR importer made to stand in for
	// an op the ISA lacks (parser/mlir standIn): it carries that op's reads
	// and writes, and its element types are that op's, which PTOAS checks,
	// so its own op's element-type rules do not apply (a tgather compare
	// form's u8 tmp read by a tcvt into its i32 dst). The MLIR printer
	// refuses one its rules would refuse: it would not read back. The
	// importer writes it as the bare attribute #standin, which any op
	// takes, so the PTO-AS it prints assembles as the import did.
	StandIn bool
}

// Operands is the destination-first operand list (Result, if any, then Args).
func (in *Instr) Operands() []Expr {
	if in.Result == nil {
		return in.Args
	}
	out := make([]Expr, 0, len(in.Args)+1)
	out = append(out, in.Result)
	return append(out, in.Args...)
}

// Attr is `#key=value` on an instruction, or `key=value` inside a declaration.
// A bare `#key` has Val nil and means true.
type Attr struct {
	Span
	Key string
	Val Expr
}

// TypeAnn is `!pto.tile<loc=vec, f32, 16, 16>` or a list of such types. Params keep
// each comma-separated item: Key is empty for positional items.
type TypeAnn struct {
	Span
	Types []*Type
}

// Type is one `!pto.kind<params>` type.
type Type struct {
	Span
	Kind   string // tile, tile_buf, memref, ...
	Params []TypeParam
}

// TypeParam is one item of a type's parameter list.
type TypeParam struct {
	Key string
	Val string
}

func (*Const) decl()   {}
func (*Include) decl() {}
func (*Tensor) decl()  {}
func (*Kernel) decl()  {}
func (*Launch) decl()  {}
func (*Expect) decl()  {}

func (*TileDecl) stmt() {}
func (*Let) stmt()      {}
func (*For) stmt()      {}
func (*If) stmt()       {}
func (*While) stmt()    {}
func (*Break) stmt()    {}
func (*Instr) stmt()    {}

// Launch is the host side: how many ranks, which kernels start together and
// which one after another, and what the host writes between runs.
//
//	launch ranks=RANKS topology=mesh {
//	    run "pipelined" comm blocks=COMM_BLOCKS, compute blocks=COMPUTE_BLOCKS
//	    reset @flags = zero
//	    if MODE == 1 { run compute blocks=24 }
//	}
type Launch struct {
	Span
	Comments
	Attrs []*Attr // ranks, topology, ...
	Body  []LaunchStmt
	Close []*Comment
}

// LaunchStmt is Run, Reset or LaunchIf.
type LaunchStmt interface {
	Node
	launchStmt()
	Doc() *Comments
}

// Run starts kernels together, each on its own stream, and waits for all of them.
// Consecutive Runs execute one after another. A Stream naming two kernels joined
// by `+` is a mixed launch: the aic kernel on each block's AIC and the aiv kernel on
// both of its AIVs.
type Run struct {
	Span
	Comments
	Name    string // optional phase name, reported with its own time
	Streams []*Stream
}

// Stream is `kernel[+kernel] blocks=expr`.
type Stream struct {
	Span
	Kernels []string
	Blocks  Expr // nil: 1
}

// Reset rewrites a tensor's contents from the host between runs:
// `reset @flags = zero`, `reset @W[rank=1] = poison`.
type Reset struct {
	Span
	Comments
	Target *GMRef
	Init   *Init
}

// LaunchIf is a host-side branch on constants.
type LaunchIf struct {
	Span
	Comments
	Cond  Expr
	Then  []LaunchStmt
	Else  []LaunchStmt
	Elif  bool
	Close []*Comment
	// ElseClose holds comments before the closing brace of the else block.
	ElseClose []*Comment
}

func (*Run) launchStmt()      {}
func (*Reset) launchStmt()    {}
func (*LaunchIf) launchStmt() {}

// Expect is an expectation checked by `ptoasm run` and `go test`:
//
//	expect @C == matmul(@A, @B) tol 1e-3           output against a golden expression
//	expect @S == softmax(@X) rtol 1e-3 atol 1e-6    numpy allclose bounds
//	expect @C[rank=1] == file("c1.npy") tol 0      one rank's copy
//	expect finding WAR at load, mmad               a hazard between two labelled (or numbered) lines
//	expect finding unpaired-set at 118 count 2
//	expect cycles 54                               exact cycle count (cost-model tests)
type Expect struct {
	Span
	Comments
	Kind    string // output, finding, cycles
	Target  *GMRef // output
	Golden  Expr   // output
	Tol     Expr   // output: |got − want| ≤ tol·max(1, |want|); nil: 0
	RTol    Expr   // output: |got − want| ≤ atol + rtol·|want|; nil: 0
	ATol    Expr   // output; nil: 0
	Finding string // finding kind: RAW, WAR, WAW, deadlock, unpaired-set, ...
	Sites   []Expr // finding: labels (Name) or line numbers (Num)
	Count   Expr   // finding: nil means any count ≥ 1
	Cycles  Expr   // cycles
}

// Expr is a scalar or tensor expression, or an instruction operand.
type Expr interface {
	Node
	expr()
}

// Num is a numeric literal. Text keeps the spelling (0x1000, 1e-3) for fmt.
type Num struct {
	Span
	Text    string
	Int     int64
	Float   float64
	IsFloat bool
}

// Str is a string literal (file names in golden expressions and inits).
type Str struct {
	Span
	Val string
}

// Name is a bare identifier: a constant, a builtin (rank, nranks, block_idx,
// subblock_idx, block_num), a pipe (MTE2, PIPE_V), an enum word (add, ge, rint).
type Name struct {
	Span
	Name string
}

// Ref is `%name` or `%name[index]`: a scalar register, a loop variable, a tile or
// an element of a tile array; the assembler decides which from the declarations.
type Ref struct {
	Span
	Name  string
	Index Expr
}

// GMRef is `@name`, `@name[i, j]`, `@name[rank=r][i, j]` or `@name[rank=r]`.
// Index addresses the element where a tile's window starts; a missing index is
// the whole tensor (golden expressions, resets).
type GMRef struct {
	Span
	Name  string
	Rank  Expr
	Index []Expr
}

// Unary is -x, !x, ~x.
type Unary struct {
	Span
	Op string
	X  Expr
}

// Binary is x op y with op one of || && == != < <= > >= | ^ & << >> + - * / %.
type Binary struct {
	Span
	Op string
	X  Expr
	Y  Expr
}

// Paren keeps the author's parentheses so fmt does not move them.
type Paren struct {
	Span
	X Expr
}

// Call is fn(args): min, max, abs, ceildiv, align in scalar expressions; matmul,
// prelu, lrelu, relu, exp, cast, transpose, concat, file, … in golden expressions.
// Named arguments (seed=1) are KeyVal nodes.
type Call struct {
	Span
	Fn   string
	Args []Expr
}

// KeyVal is `key=value` inside a call's argument list.
type KeyVal struct {
	Span
	Key string
	Val Expr
}

func (*Num) expr()    {}
func (*Str) expr()    {}
func (*Name) expr()   {}
func (*Ref) expr()    {}
func (*GMRef) expr()  {}
func (*Unary) expr()  {}
func (*Binary) expr() {}
func (*Paren) expr()  {}
func (*Call) expr()   {}
func (*KeyVal) expr() {}
