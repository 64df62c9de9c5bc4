package lsp

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"

	protocol "github.com/tliron/glsp/protocol_3_16"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine/hazard"
	"github.com/ptoasm/ptoasm/parser"
)

// analyze assembles text as d's file, then lints the program if it
// assembled; nil means a newer edit made the analysis stale. tooLarge is
// document.tooLarge: the editor's text is over the limit and not held.
func (s *Server) analyze(ctx context.Context, d *document, text []byte, tooLarge int64) (res *result) {
	if tooLarge > 0 {
		// The editor's text is held to the limit files read from disk are.
		return &result{text: text, diags: []protocol.Diagnostic{{
			Severity: ptr(protocol.DiagnosticSeverityError),
			Source:   ptr("ptoasm"),
			Message:  fmt.Sprintf("larger than the %s limit on input files (--max-file-size): not analysed", asm.FormatBytes(s.opt.MaxFileSize)),
		}}}
	}
	text = parser.Normalize(text)
	res = &result{text: text}
	defer func() {
		// A bug in the assembler or the machine is reported in the file,
		// not by ending the session.
		if r := recover(); r != nil {
			res.diags = append(res.diags, protocol.Diagnostic{
				Severity: ptr(protocol.DiagnosticSeverityError),
				Source:   ptr("ptoasm"),
				Message:  fmt.Sprintf("internal error (please report): %v", r),
			})
		}
	}()
	fe := asm.Frontend{
		ParseFile: func(name string, src []byte) (*asm.File, asm.ErrorList) {
			f, errs := s.opt.ParseFile(name, src)
			if name == d.path {
				res.file = f
			}
			return f, errs
		},
		ParseExpr: parser.ParseExpr,
		ReadFile: func(name string) ([]byte, error) {
			if name == d.path {
				return text, nil
			}
			b, err := s.readInclude(name)
			if err == nil {
				b = parser.Normalize(b)
			}
			return b, err
		},
	}
	obj, errs := asm.Assemble(fe, d.path, s.opt.Defines)
	errs.Sort()
	for _, e := range errs {
		res.diags = append(res.diags, s.asmDiagnostic(d, e))
	}
	if errs.HasErrors() || obj == nil || s.opt.Lint == nil {
		if res.diags == nil {
			res.diags = []protocol.Diagnostic{}
		}
		return res
	}
	res.obj = obj
	if ctx.Err() != nil {
		return nil // a newer edit is waiting; do not start the run
	}
	findings, err := s.opt.Lint(ctx, obj)
	if ctx.Err() != nil {
		return nil
	}
	for i := range findings {
		if dg, ok := s.findingDiagnostic(d, res.file, &findings[i]); ok {
			res.diags = append(res.diags, dg)
			if edits, title, ok := raceFix(res, &findings[i]); ok {
				res.fixes = append(res.fixes, flagFix{diag: dg, title: title, edits: edits})
			}
		}
	}
	if err != nil {
		// A run guard's stop or a budget: the findings so far stand; the
		// stop is said once, at the top of the file.
		res.diags = append(res.diags, protocol.Diagnostic{
			Range:    protocol.Range{},
			Severity: ptr(protocol.DiagnosticSeverityWarning),
			Source:   ptr("ptoasm lint"),
			Message:  err.Error(),
		})
	}
	if res.diags == nil {
		res.diags = []protocol.Diagnostic{}
	}
	return res
}

// sameFile says whether the assembler's file name names d's file.
func sameFile(d *document, name string) bool {
	return name == d.path || filepath.Clean(name) == filepath.Clean(d.path)
}

func (s *Server) asmDiagnostic(d *document, e *asm.Diagnostic) protocol.Diagnostic {
	dg := protocol.Diagnostic{
		Severity: ptr(lspSeverity(e.Severity.String())),
		Source:   ptr("ptoasm"),
		Message:  e.Msg,
	}
	if sameFile(d, e.Span.Pos.File) {
		dg.Range = spanRange(e.Span)
	} else {
		// An error in an include (or in -D) is shown at the top of the
		// file that pulled it in, naming where it is.
		dg.Message = fmt.Sprintf("%s: %s", e.Span.Pos, e.Msg)
	}
	for _, n := range e.Notes {
		dg.RelatedInformation = append(dg.RelatedInformation, protocol.DiagnosticRelatedInformation{
			Location: protocol.Location{URI: s.uriFor(d, n.Span.Pos.File), Range: spanRange(n.Span)},
			Message:  n.Msg,
		})
	}
	return dg
}

// findingDiagnostic places a lint finding at its site in d (the first site,
// or the second when only it is in d), with the other site as related
// information and the hint in the message and in Data for a code action.
func (s *Server) findingDiagnostic(d *document, file *asm.File, f *hazard.Finding) (protocol.Diagnostic, bool) {
	at, other := f.First, f.Second
	if !sameFile(d, at.File) || at.Line == 0 {
		if !sameFile(d, other.File) || other.Line == 0 {
			return protocol.Diagnostic{}, false
		}
		at, other = other, at
	}
	msg := f.Message
	if f.Count > 1 && hazard.IsRace(f.Kind) {
		msg = fmt.Sprintf("%s (%d %s)", msg, f.Count, hazard.CountUnit(f))
	} else if f.Count > 1 {
		msg = fmt.Sprintf("%s (%d times)", msg, f.Count)
	}
	if f.Hint != "" {
		msg += "\nhint: " + f.Hint
	}
	dg := protocol.Diagnostic{
		Range:    siteRange(file, at),
		Severity: ptr(lspSeverity(f.Severity)),
		Code:     &protocol.IntegerOrString{Value: f.Kind},
		Source:   ptr("ptoasm lint"),
		Message:  msg,
	}
	if f.Hint != "" {
		dg.Data = map[string]string{"kind": f.Kind, "hint": f.Hint}
	}
	if !other.IsZero() && other.Line > 0 {
		dg.RelatedInformation = []protocol.DiagnosticRelatedInformation{{
			Location: protocol.Location{URI: s.uriFor(d, other.File), Range: siteRange(file, other)},
			Message:  fmt.Sprintf("the other access: %s on %s", other.Op, other.Pipe),
		}}
	}
	return dg, true
}

func lspSeverity(s string) protocol.DiagnosticSeverity {
	switch s {
	case "error":
		return protocol.DiagnosticSeverityError
	case "warning":
		return protocol.DiagnosticSeverityWarning
	case "note":
		return protocol.DiagnosticSeverityInformation
	}
	return protocol.DiagnosticSeverityHint
}

// uriFor names file name as a URI: d's own URI for d, a file: URI beside it
// for an include.
func (s *Server) uriFor(d *document, name string) string {
	if sameFile(d, name) {
		return d.uri
	}
	s.mu.Lock()
	for _, o := range s.docs {
		if o.path == name {
			s.mu.Unlock()
			return o.uri
		}
	}
	s.mu.Unlock()
	abs, err := filepath.Abs(name)
	if err != nil {
		abs = name
	}
	return "file://" + filepath.ToSlash(abs)
}

// position converts an assembler position (1-based line, byte column) to LSP.
func position(p asm.Pos) protocol.Position {
	line, col := p.Line-1, p.Col-1
	if line < 0 {
		line = 0
	}
	if col < 0 {
		col = 0
	}
	return protocol.Position{Line: protocol.UInteger(line), Character: protocol.UInteger(col)}
}

func spanRange(sp asm.Span) protocol.Range {
	r := protocol.Range{Start: position(sp.Pos), End: position(sp.End)}
	if !sp.End.IsValid() || sp.End.Offset <= sp.Pos.Offset {
		r.End = r.Start
		r.End.Character++
	}
	return r
}

// siteRange is a finding's site: the linter reports the line and column
// where the instruction starts (its label, if any), so the range is that
// instruction's when file has it, else the op's name's length.
func siteRange(file *asm.File, st hazard.Site) protocol.Range {
	if file != nil && st.File == file.Name {
		var found *asm.Instr
		v := &visitor{fn: func(n asm.Node, _ *asm.Instr, _ *asm.Kernel) {
			if in, ok := n.(*asm.Instr); ok && found == nil && in.Span.Pos.Line == st.Line && in.Span.Pos.Col == st.Col {
				found = in
			}
		}}
		v.file(file)
		if found != nil {
			return spanRange(found.Span)
		}
	}
	start := position(asm.Pos{Line: st.Line, Col: st.Col})
	end := start
	end.Character += protocol.UInteger(max(len(st.Op), 1))
	return protocol.Range{Start: start, End: end}
}

// offsetOf converts an LSP position to a byte offset in text, clamped.
// Lines are found with bytes.IndexByte: a range edit's cost is a scan of the
// text at memory speed, not a byte loop.
func offsetOf(text []byte, p protocol.Position) int {
	i := 0
	for line := 0; line < int(p.Line); line++ {
		nl := bytes.IndexByte(text[i:], '\n')
		if nl < 0 {
			i = len(text)
			break
		}
		i += nl + 1
	}
	for c := 0; c < int(p.Character) && i < len(text) && text[i] != '\n'; c++ {
		i++
	}
	return i
}
