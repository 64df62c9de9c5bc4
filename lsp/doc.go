// Package lsp is ptoasm's language server: the Language Server Protocol over
// a byte stream (stdio for `ptoasm lsp`), on the protocol types and dispatch
// of github.com/tliron/glsp and the JSON-RPC framing of
// github.com/sourcegraph/jsonrpc2.
//
// It serves PTO-AS and PTOAS MLIR .pto files through the same assembler
// frontend as the command line (Options.ParseFile), and offers:
//
//   - diagnostics on open and on change: assembler errors first, then the
//     linter's findings (Options.Lint), debounced within bursts of edits
//     (an edit after a pause is analysed at once), with at most one analysis
//     in flight per document; an edit that arrives while one runs cancels it
//     (Options.Lint gets a cancelled context; its result is dropped) and
//     the next analysis starts when it ends;
//   - hover on an instruction (pipe, operands, attributes, cost key) and on a
//     tile (location, address range, shape, dtype);
//   - go to definition and find references of tiles, tensors, constants
//     and labels, and the document's symbols;
//   - a quick fix for a race between two pipes of one core: the
//     set_flag/wait_flag pair on a free event id, pre-set before and drained
//     after a loop when the race is across its iterations (FixRaces applies
//     them for `ptoasm lint --fix`);
//   - rename of tiles and constants; semantic tokens;
//   - completion of mnemonics, of operands by the ISA table's slot (tiles of
//     the allowed locations, registers, tensors, pipes, a flag's free event
//     ids), of attribute keys and words, and of constants;
//   - inlay hints with each instruction's pipe (LSP 3.17, lsp/inlay.go);
//   - formatting through asm.Fprint, the printer of `ptoasm fmt`.
//
// Positions: the assembler counts columns in bytes and LSP in UTF-16 code
// units; PTO-AS is ASCII outside comments, so the two agree wherever a
// position can point.
package lsp
