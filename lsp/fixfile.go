package lsp

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"

	protocol "github.com/tliron/glsp/protocol_3_16"
)

// ErrNotAssembled is FixRaces' error for a text that does not assemble: no
// fix was tried. The command line's lint that follows prints the errors
// themselves (positioned, exit 2), so it does not print this one; printed
// too it put a line without `error:` (and with the editor's UTF-16
// column) above them.
var ErrNotAssembled = errors.New("does not assemble")

// MaxFixes bounds FixRaces: each fix removes at least the race it orders,
// so a program needing more is one whose fixes do not converge.
const MaxFixes = 64

// FixRaces applies, one at a time, the quick fixes the editor offers for
// the races Options.Lint finds in the file at path (text is its contents),
// assembling and linting again after each, until no finding has a fix: the
// command line's `ptoasm lint --fix`. One at a time because fixes interact:
// the flag pair that orders one race often orders its neighbours too (a
// wait before a tmov also covers the textract after it on that pipe), and
// a second pair would be dead weight.
//
// It returns the new text and the title of each fix applied, in order. An
// error means the text does not assemble (ErrNotAssembled), or a fix did not remove its race
// or did not leave fewer errors and warnings than before (it is undone, and
// the text before it returned with the fixes that did hold), or ctx ended
// (the fixes checked before it are returned: the command line gives its
// --max-time to the whole of --fix).
func FixRaces(ctx context.Context, opt Options, path string, text []byte) ([]byte, []string, error) {
	s := New(opt)
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	d := &document{uri: "file://" + filepath.ToSlash(abs), path: path}
	var titles []string
	var lastFixed string // the message of the race the last fix ordered
	var before []byte    // the text before the last fix
	failingBefore := 0   // its errors and warnings
	for {
		res := s.analyze(ctx, d, text, s.overLimit(len(text)))
		if res == nil {
			// Cancelled, or past ctx's deadline: the last fix is not
			// checked yet, so it is undone.
			if len(titles) > 0 {
				return before, titles[:len(titles)-1], ctx.Err()
			}
			return text, titles, ctx.Err()
		}
		if len(titles) > 0 {
			// A fix must remove its race and leave fewer problems than it
			// found (a pair that deadlocks would trade a race for worse);
			// else it is undone and named.
			undo := ""
			if n := failing(res.diags); n >= failingBefore {
				undo = fmt.Sprintf("left %d errors and warnings where there were %d", n, failingBefore)
			}
			for _, dg := range res.diags {
				if dg.Message == lastFixed {
					undo = "did not remove its race"
				}
			}
			if undo != "" {
				return before, titles[:len(titles)-1], fmt.Errorf("%s: %q %s; not applied", path, titles[len(titles)-1], undo)
			}
		}
		if res.obj == nil {
			for _, dg := range res.diags {
				if dg.Severity != nil && *dg.Severity == protocol.DiagnosticSeverityError {
					return text, titles, fmt.Errorf("%s:%d:%d: %s: %w", path, dg.Range.Start.Line+1, dg.Range.Start.Character+1, dg.Message, ErrNotAssembled)
				}
			}
			return text, titles, fmt.Errorf("%s: %w", path, ErrNotAssembled)
		}
		if len(res.fixes) == 0 {
			return text, titles, nil
		}
		if len(titles) == MaxFixes {
			return text, titles, fmt.Errorf("%s: still races to fix after %d fixes", path, MaxFixes)
		}
		fx := res.fixes[0]
		before, failingBefore = text, failing(res.diags)
		// The edits' positions are in the text the assembler read; parser.Normalize
		// moves no byte, so their offsets apply to the file as it is (a
		// byte-order mark or lone CRs stay).
		text = applyEditsAt(res.text, text, fx.edits)
		titles = append(titles, fx.title)
		lastFixed = fx.diag.Message
	}
}

// failing counts the errors and warnings among diags: what fails a lint.
func failing(diags []protocol.Diagnostic) int {
	n := 0
	for _, dg := range diags {
		if dg.Severity != nil && *dg.Severity <= protocol.DiagnosticSeverityWarning {
			n++
		}
	}
	return n
}

// ApplyEdits applies non-overlapping edits of text as an editor applies a
// WorkspaceEdit: positions are in the original text, and insertions at one
// position land in the order given.
func ApplyEdits(text []byte, edits []protocol.TextEdit) []byte {
	return applyEditsAt(text, text, edits)
}

// applyEditsAt applies edits whose positions are in posText to dst, a text
// with the same byte offsets.
func applyEditsAt(posText, dst []byte, edits []protocol.TextEdit) []byte {
	type span struct {
		lo, hi, i int
		s         string
	}
	ss := make([]span, len(edits))
	for i, e := range edits {
		lo, hi := offsetOf(posText, e.Range.Start), offsetOf(posText, e.Range.End)
		if hi < lo {
			lo, hi = hi, lo
		}
		ss[i] = span{lo, hi, i, e.NewText}
	}
	// Last first, so earlier offsets stay valid; at one offset, the later
	// edit first, so the earlier ends up in front of it.
	sort.Slice(ss, func(i, j int) bool {
		if ss[i].lo != ss[j].lo {
			return ss[i].lo > ss[j].lo
		}
		return ss[i].i > ss[j].i
	})
	out := append([]byte(nil), dst...)
	for _, s := range ss {
		out = append(append(append([]byte(nil), out[:s.lo]...), s.s...), out[s.hi:]...)
	}
	return out
}
