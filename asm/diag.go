package asm

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Severity ranks a diagnostic.
type Severity int

const (
	SevError Severity = iota
	SevWarning
	SevNote
)

func (s Severity) String() string {
	switch s {
	case SevWarning:
		return "warning"
	case SevNote:
		return "note"
	}
	return "error"
}

// Diagnostic is one message tied to a source span. Notes point at related places
// (the other tile of an overlap, the declaration a use disagrees with).
type Diagnostic struct {
	Span     Span
	Severity Severity
	Msg      string
	Notes    []*Diagnostic
}

func (d *Diagnostic) Error() string {
	return fmt.Sprintf("%s: %s: %s", d.Span.Pos, d.Severity, clipWords(d.Msg))
}

// maxWord is the longest run of non-space bytes a printed message keeps:
// messages quote what they are about (a name, a literal), and a damaged
// file's 300 KB identifier or 5,000-digit integer made a 300 KB first
// line. A message's own words are far shorter, and so are file paths (a
// message may name one, and a build sandbox's run to a few hundred bytes).
const maxWord = 512

// clipWords cuts every run of non-space bytes in msg longer than maxWord
// to its head, "..." and its length.
func clipWords(msg string) string {
	if len(msg) <= maxWord {
		return msg
	}
	var b strings.Builder
	for len(msg) > 0 {
		i := strings.IndexFunc(msg, unicode.IsSpace)
		if i < 0 {
			i = len(msg)
		}
		word := msg[:i]
		if len(word) > maxWord {
			head := maxWord - 112
			for head > 0 && !utf8.RuneStart(word[head]) {
				head--
			}
			word = fmt.Sprintf("%s...(%d bytes)", word[:head], len(word))
		}
		b.WriteString(word)
		msg = msg[i:]
		j := strings.IndexFunc(msg, func(r rune) bool { return !unicode.IsSpace(r) })
		if j < 0 {
			j = len(msg)
		}
		b.WriteString(msg[:j])
		msg = msg[j:]
	}
	return b.String()
}

// ErrorList collects every problem in a file so a user sees them all at once,
// in the shape of go/scanner.ErrorList.
type ErrorList []*Diagnostic

// Add appends an error at span.
func (l *ErrorList) Add(sp Span, format string, args ...any) *Diagnostic {
	d := &Diagnostic{Span: sp, Severity: SevError, Msg: fmt.Sprintf(format, args...)}
	*l = append(*l, d)
	return d
}

// Note attaches a note at span to d.
func (d *Diagnostic) Note(sp Span, format string, args ...any) *Diagnostic {
	d.Notes = append(d.Notes, &Diagnostic{Span: sp, Severity: SevNote, Msg: fmt.Sprintf(format, args...)})
	return d
}

func (l ErrorList) Len() int { return len(l) }

// Sort orders by file, line, column, then message, so output is deterministic.
func (l ErrorList) Sort() {
	sort.SliceStable(l, func(i, j int) bool {
		a, b := l[i].Span.Pos, l[j].Span.Pos
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.Col != b.Col {
			return a.Col < b.Col
		}
		return l[i].Msg < l[j].Msg
	})
}

// RemoveMultiples sorts and drops exact repeats (same place, same message).
func (l *ErrorList) RemoveMultiples() {
	l.Sort()
	out := (*l)[:0]
	for i, d := range *l {
		if i > 0 && d.Span.Pos == (*l)[i-1].Span.Pos && d.Msg == (*l)[i-1].Msg {
			continue
		}
		out = append(out, d)
	}
	*l = out
}

// HasErrors reports whether any entry is an error rather than a warning.
func (l ErrorList) HasErrors() bool {
	for _, d := range l {
		if d.Severity == SevError {
			return true
		}
	}
	return false
}

func (l ErrorList) Error() string {
	switch len(l) {
	case 0:
		return "no errors"
	case 1:
		return l[0].Error()
	}
	return fmt.Sprintf("%s (and %d more errors)", l[0], len(l)-1)
}

// Err returns l as an error, or nil when it holds no errors.
func (l ErrorList) Err() error {
	if !l.HasErrors() {
		return nil
	}
	return l
}

// Sources maps a file name to its text so diagnostics can quote the line.
type Sources map[string][]byte

// MaxPrinted is how many diagnostics Fprint prints before it stops with
// "too many errors": a file of 40,000 duplicate constants is fixed from the
// top, and printing all of them only buries the first.
const MaxPrinted = 50

// maxQuote is how much of a source line a diagnostic quotes: a file with no
// newlines (a binary, a minified file) must not be echoed whole.
const maxQuote = 160

// Fprint writes every diagnostic as `file:line:col: error: msg`, the source line
// and a caret under the column, then its notes the same way; after
// MaxPrinted diagnostics it says how many more there are instead. It takes
// time linear in the sources and the diagnostics.
func (l ErrorList) Fprint(w io.Writer, src Sources) {
	p := NewDiagPrinter(src)
	for i, d := range l {
		if i == MaxPrinted {
			fmt.Fprintf(w, "too many errors: %d more not shown\n", len(l)-i)
			return
		}
		p.Print(w, d)
	}
}

// DiagPrinter prints diagnostics one at a time as Fprint does (without its
// MaxPrinted cut), finding each file's line starts once: the hazard
// report, which prints its findings one by one, scanned the whole file for
// each (a file of 20,000 racing lines took minutes to lint).
type DiagPrinter struct {
	src   Sources
	lines map[string][]int
}

// NewDiagPrinter is a printer quoting the lines of src.
func NewDiagPrinter(src Sources) *DiagPrinter {
	return &DiagPrinter{src: src, lines: map[string][]int{}}
}

// Print writes d and its notes.
func (p *DiagPrinter) Print(w io.Writer, d *Diagnostic) {
	printDiag(w, d, p.src, p.lines)
	for _, n := range d.Notes {
		printDiag(w, n, p.src, p.lines)
	}
}

func printDiag(w io.Writer, d *Diagnostic, src Sources, lines map[string][]int) {
	fmt.Fprintln(w, d.Error())
	file := d.Span.Pos.File
	starts, ok := lines[file]
	if !ok {
		starts = lineStarts(src[file])
		lines[file] = starts
	}
	line := sourceLine(src[file], starts, d.Span.Pos.Line)
	if line == "" && d.Span.Pos.Line == 0 {
		return
	}
	col := d.Span.Pos.Col
	if col < 1 {
		col = 1
	}
	// Quote a window of a long line around the column.
	prefix := ""
	if len(line) > maxQuote {
		from := max(0, min(col-1-maxQuote/2, len(line)-maxQuote))
		for from > 0 && !utf8.RuneStart(line[from]) {
			from--
		}
		to := min(len(line), from+maxQuote)
		for to < len(line) && !utf8.RuneStart(line[to]) {
			to++
		}
		suffix := ""
		if to < len(line) {
			suffix = "..."
		}
		if from > 0 {
			prefix = "..."
		}
		line = prefix + line[from:to] + suffix
		col = col - from + len(prefix)
	}
	fmt.Fprintf(w, "    %s\n", line)
	var pad strings.Builder
	for i := 0; i < col-1 && i < len(line); i++ {
		if line[i] == '\t' {
			pad.WriteByte('\t')
		} else {
			pad.WriteByte(' ')
		}
	}
	fmt.Fprintf(w, "    %s^\n", pad.String())
}

// lineStarts is the offset of each line's first byte.
func lineStarts(text []byte) []int {
	starts := []int{0}
	for i, c := range text {
		if c == '\n' {
			starts = append(starts, i+1)
		}
	}
	return starts
}

func sourceLine(text []byte, starts []int, line int) string {
	if line < 1 || line > len(starts) || starts[line-1] > len(text) {
		return ""
	}
	start := starts[line-1]
	end := len(text)
	if line < len(starts) {
		end = starts[line] - 1
	}
	return strings.TrimRight(string(text[start:end]), "\r")
}
