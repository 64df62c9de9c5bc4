package hazard

import (
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"strings"
	"unicode"

	"github.com/ptoasm/ptoasm/asm"
)

func asmSeverity(s string) asm.Severity {
	switch s {
	case "warning":
		return asm.SevWarning
	case "note":
		return asm.SevNote
	}
	return asm.SevError
}

func spanOf(s Site) asm.Span {
	return asm.Span{Pos: asm.Pos{File: s.File, Line: s.Line, Col: s.Col}}
}

// WriteText prints findings compiler-style: the first site with the message,
// the source line and a caret, the second site as a note, then the hint.
func WriteText(w io.Writer, fs []Finding, src asm.Sources) {
	p := asm.NewDiagPrinter(src)
	for i := range fs {
		f := &fs[i]
		msg := f.Message
		if f.Count > 1 {
			msg += fmt.Sprintf(" [%d %s]", f.Count, CountUnit(f))
		}
		dg := &asm.Diagnostic{Span: spanOf(f.First), Severity: asmSeverity(f.Severity), Msg: msg}
		if !f.Second.IsZero() {
			dg.Note(spanOf(f.Second), "%s", "second access: "+f.Second.where())
		}
		p.Print(w, dg)
		if f.Hint != "" {
			fmt.Fprintf(w, "    hint: %s\n", f.Hint)
		}
	}
}

// CountUnit says what f.Count counts: a race its pairs of agents ("pipe
// pairs"), a same-pipe race, whose two accesses are of one agent, its
// "pipes"; any other kind its instances ("hazards").
func CountUnit(f *Finding) string {
	switch {
	case !IsRace(f.Kind):
		return "hazards"
	case f.First.Pipe == f.Second.Pipe && f.First.Core == f.Second.Core && f.First.Rank == f.Second.Rank:
		return "pipes"
	}
	return "pipe pairs"
}

type jsonSite struct {
	File string  `json:"file"`
	Line int     `json:"line"`
	Col  int     `json:"col"`
	Op   string  `json:"op"`
	Pipe string  `json:"pipe"`
	Core string  `json:"core"`
	Rank int     `json:"rank"`
	Iter []int64 `json:"iter,omitempty"`
}

type jsonFinding struct {
	Kind     string    `json:"kind"`
	Severity string    `json:"severity"`
	Message  string    `json:"message"`
	First    *jsonSite `json:"first"`
	Second   *jsonSite `json:"second,omitempty"`
	Buffer   string    `json:"buffer,omitempty"`
	Range    [2]int64  `json:"range"`
	Count    int       `json:"count"`
	Hint     string    `json:"hint,omitempty"`
}

func toJSONSite(s Site) *jsonSite {
	if s.IsZero() {
		return nil
	}
	return &jsonSite{File: s.File, Line: s.Line, Col: s.Col, Op: s.Op, Pipe: s.Pipe, Core: s.Core, Rank: s.Rank, Iter: s.Iter}
}

// JSONFindings converts findings to the lint JSON shape (docs/cli.md, `ptoasm lint`):
// kind, severity, message, first, second, buffer, range, count, hint. The run
// command embeds the same value under "findings".
func JSONFindings(fs []Finding) any {
	out := make([]jsonFinding, 0, len(fs))
	for _, f := range fs {
		first := toJSONSite(f.First)
		if first == nil {
			first = &jsonSite{}
		}
		out = append(out, jsonFinding{Kind: f.Kind, Severity: f.Severity, Message: f.Message, First: first,
			Second: toJSONSite(f.Second), Buffer: f.Buffer, Range: f.Range, Count: f.Count, Hint: f.Hint})
	}
	return out
}

// WriteJSON writes {"findings": [...]}, indented.
func WriteJSON(w io.Writer, fs []Finding) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(struct {
		Findings any `json:"findings"`
	}{JSONFindings(fs)})
}

// SARIF 2.1.0 (OASIS, errata 01), with what GitHub code scanning reads: a
// driver with its own version field, rules with short and full descriptions,
// help text and an absolute helpUri, results with a location and
// partialFingerprints. testdata/sarif-schema-2.1.0.json is the official schema
// the tests validate against.
const (
	sarifSchema = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
	// HomeURI is the project's home; rule help points into its docs.
	HomeURI = "https://github.com/ptoasm/ptoasm"
	docBase = HomeURI + "/blob/main/docs/"
)

type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool    sarifTool     `json:"tool"`
	Results []sarifResult `json:"results"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	Version        string      `json:"version,omitempty"`
	InformationURI string      `json:"informationUri,omitempty"`
	Rules          []sarifRule `json:"rules"`
}

type sarifRule struct {
	ID                   string         `json:"id"`
	Name                 string         `json:"name"`
	ShortDescription     sarifMessage   `json:"shortDescription"`
	FullDescription      sarifMessage   `json:"fullDescription"`
	Help                 sarifHelp      `json:"help"`
	HelpURI              string         `json:"helpUri"`
	DefaultConfiguration sarifRuleConf  `json:"defaultConfiguration"`
	Properties           map[string]any `json:"properties,omitempty"`
}

type sarifRuleConf struct {
	Level string `json:"level"`
}

type sarifHelp struct {
	Text     string `json:"text"`
	Markdown string `json:"markdown,omitempty"`
}

type sarifMessage struct {
	Text string `json:"text"`
}

type sarifResult struct {
	RuleID           string            `json:"ruleId"`
	RuleIndex        int               `json:"ruleIndex"`
	Level            string            `json:"level"`
	Message          sarifMessage      `json:"message"`
	Locations        []sarifLocation   `json:"locations"`
	RelatedLocations []sarifLocation   `json:"relatedLocations,omitempty"`
	Properties       map[string]any    `json:"properties,omitempty"`
	Fingerprints     map[string]string `json:"partialFingerprints,omitempty"`
}

type sarifLocation struct {
	ID               int                   `json:"id,omitempty"`
	PhysicalLocation sarifPhysicalLocation `json:"physicalLocation"`
	Message          *sarifMessage         `json:"message,omitempty"`
}

type sarifPhysicalLocation struct {
	ArtifactLocation sarifArtifact `json:"artifactLocation"`
	Region           *sarifRegion  `json:"region,omitempty"`
}

type sarifArtifact struct {
	URI string `json:"uri"`
}

type sarifRegion struct {
	StartLine   int `json:"startLine"`
	StartColumn int `json:"startColumn,omitempty"`
}

// ruleDoc is a rule's one-line and full description and its section of
// docs/hazards.md (a GitHub heading anchor).
type ruleDoc struct {
	short, full, doc string
}

const raceFull = "Two accesses to overlapping bytes, at least one a write, with no happens-before edge between them: no flag, barrier, FFTS counter or signal orders them, so the order depends on timing. Order them with a set/wait pair between the two pipes (pipe_barrier within one pipe), an FFTS flag across cores, or the publish protocol across ranks."

var ruleDocs = map[string]ruleDoc{
	KindRAW:              {"read after write with no synchronisation ordering the two", raceFull, "hazards.md#raw--war--waw--race-between-pipes-cores-or-ranks"},
	KindWAR:              {"write after read with no synchronisation ordering the two", raceFull, "hazards.md#raw--war--waw--race-between-pipes-cores-or-ranks"},
	KindWAW:              {"two writes with no synchronisation ordering them", raceFull, "hazards.md#raw--war--waw--race-between-pipes-cores-or-ranks"},
	KindDeadlock:         {"a wait nothing will satisfy", "A wait_flag, ffts_wait or signal wait that no set or notify will satisfy on some path, so the kernel hangs. Set the flag (or notify) on every path before the wait, prime it before a loop whose first iteration waits, or remove the wait.", "hazards.md#deadlock"},
	KindUnpairedSet:      {"a flag or FFTS counter still set when the kernel ends", "A set_flag or ffts_set whose token no wait consumes before the kernel ends; the leaked token corrupts the next kernel's flag state. Drain the flag after the loop, or skip the set on the last iteration.", "hazards.md#unpaired-set"},
	KindDoubleSet:        {"a flag set again before it was waited for", "A set_flag that can reach its one-bit flag before the consumer's wait took the previous set, so a set is lost. Order the set after the consumer's wait with a reverse flag, or use another event id.", "hazards.md#double-set"},
	KindBadEventID:       {"an event or flag id outside the hardware range", "A set_flag/wait_flag id outside 0-7, an FFTS id outside 0-15 (11-14 are reserved for syncall), or a pipe that is not a real pipe.", "hazards.md#bad-event-id"},
	KindUninitRead:       {"a read of memory nothing wrote in this launch", "A read of bytes nothing wrote in this launch: a poisoned GM tensor or a local buffer read before any load filled it. Initialise the tensor, or write the buffer first.", "hazards.md#uninit-read"},
	KindOutOfBounds:      {"an access outside its declared tile or tensor", "An access that runs past the end of its tile, tensor, window or signal array.", "hazards.md#out-of-bounds"},
	KindResetRacesAtomic: {"a plain store racing an atomic add on a signal (lost wakeup)", "A plain store to a signal that races a peer's atomic add, so the add can be lost and its waiter never wakes. Reset signals where no peer can be adding to them.", "hazards.md#reset-races-atomic"},
	KindStaleSignal:      {"a signal wait satisfied by values an earlier run left", "A signal wait that a value left by an earlier launch or round satisfies, so it passes before this round's notify. Re-initialise the signal between runs, or compare against a generation count.", "hazards.md#stale-signal"},
	KindWaitOverwritten:  {"a signal write that can overwrite the value a wait needs before it polls", "A notify to a signal word that nothing orders after a wait which passes only on the value another set left there: it can land first, the wait never sees its value, and it spins forever. Give each step its own word, or count with atomic adds and wait with >= on the total.", "hazards.md#wait-overwritten"},
	KindFault:            {"a runtime fault", "The machine stopped the run on a fault (a bad address, a misaligned access, an operand the instruction does not accept).", "hazards.md#fault"},
	KindKeptLimit:        {"races with GM accesses the detector dropped were not checked", "A GM range keeps the accesses overwritten in order (up to --max-kept per range) for an access of another core meant between them that lands later. An access met a range not ordered after one the bound had dropped, so its race with that access may be missing from the report. Lint again with a larger --max-kept.", "hazards.md#kept-limit-note"},
	KindUnchecked:        {"a flag the static pass could not evaluate", "The static flag-balance pass could not decide a flag's id or a branch for this launch; the run checks what it executed, other launch shapes are not covered.", "hazards.md#unchecked-flag-static-pass-note"},
	// Assembly diagnostics: a file that does not assemble still gets a log.
	ruleAssembly: {"the program does not assemble", "An error or warning from the parser or the assembler. A file with errors is not run, so no hazard was looked for in it: fix the errors and lint again.", "language.md"},
}

// ruleAssembly is the rule of assembler diagnostics in a SARIF log.
const ruleAssembly = "assembly"

func sarifRuleFor(kind string) sarifRule {
	d, ok := ruleDocs[kind]
	if !ok {
		d = ruleDoc{kind, kind, "hazards.md#kinds"}
	}
	uri := docBase + d.doc
	level := "error"
	if kind == KindUnchecked || kind == KindKeptLimit {
		level = "note"
	}
	tags := []string{"synchronisation", "correctness"}
	if kind == ruleAssembly {
		tags = []string{"syntax"}
	}
	return sarifRule{
		ID: kind, Name: ruleName(kind),
		ShortDescription: sarifMessage{Text: d.short},
		FullDescription:  sarifMessage{Text: d.full},
		Help: sarifHelp{
			Text:     d.full + " See " + uri,
			Markdown: d.full + " See [the documentation](" + uri + ").",
		},
		HelpURI:              uri,
		DefaultConfiguration: sarifRuleConf{Level: level},
		Properties:           map[string]any{"tags": tags, "precision": "high", "problem.severity": problemSeverity(level)},
	}
}

// ruleName is the kind in PascalCase, SARIF's convention for rule names.
func ruleName(kind string) string {
	var b strings.Builder
	up := true
	for _, r := range kind {
		if r == '-' {
			up = true
			continue
		}
		if up {
			b.WriteRune(unicode.ToUpper(r))
		} else {
			b.WriteRune(r)
		}
		up = false
	}
	return b.String()
}

func problemSeverity(level string) string {
	if level == "note" {
		return "recommendation"
	}
	return level
}

func sarifLoc(s Site, main, msg string) sarifLocation {
	file := s.File
	if file == "" {
		// A finding with no source site (a run-wide fault) still needs a
		// location for code scanning: the program's main file.
		file = main
	}
	l := sarifLocation{PhysicalLocation: sarifPhysicalLocation{ArtifactLocation: sarifArtifact{URI: sarifURI(file)}}}
	if s.Line > 0 {
		l.PhysicalLocation.Region = &sarifRegion{StartLine: s.Line, StartColumn: max(s.Col, 0)}
	}
	if msg != "" {
		l.Message = &sarifMessage{Text: msg}
	}
	return l
}

// sarifURI makes a path a relative URI reference (code scanning resolves it
// against the checkout): forward slashes, and characters a URI does not
// allow escaped.
func sarifURI(path string) string {
	u := url.URL{Path: filepath.ToSlash(path)}
	return u.EscapedPath()
}

func sarifLevel(sev string) string {
	switch sev {
	case "warning", "note", "error":
		return sev
	}
	return "error"
}

// SARIFTool names the producer of a SARIF log. Main is the program's main
// file, the location of a finding that has no source site.
type SARIFTool struct {
	Name, Version, Main string
}

// sentence ends s with a full stop unless it ends with punctuation already.
func sentence(s string) string {
	s = strings.TrimSpace(s)
	if s == "" || strings.ContainsAny(s[len(s)-1:], ".!?:)") {
		return s
	}
	return s + "."
}

// WriteSARIF writes a SARIF 2.1.0 log with one rule per finding kind and one
// result per finding, and the assembler's diagnostics (a file that does not
// assemble) as results of the rule "assembly".
func WriteSARIF(w io.Writer, fs []Finding, diags asm.ErrorList, tool SARIFTool) error {
	var rules []sarifRule
	ruleIdx := map[string]int{}
	rule := func(kind string) int {
		idx, ok := ruleIdx[kind]
		if !ok {
			idx = len(rules)
			ruleIdx[kind] = idx
			rules = append(rules, sarifRuleFor(kind))
		}
		return idx
	}
	results := make([]sarifResult, 0, len(fs)+len(diags))
	for _, d := range diags {
		site := Site{File: d.Span.Pos.File, Line: d.Span.Pos.Line, Col: d.Span.Pos.Col}
		r := sarifResult{
			RuleID: ruleAssembly, RuleIndex: rule(ruleAssembly), Level: sarifLevel(d.Severity.String()),
			Message:   sarifMessage{Text: d.Msg},
			Locations: []sarifLocation{sarifLoc(site, tool.Main, "")},
			Fingerprints: map[string]string{
				"primaryLocationLineHash": fmt.Sprintf("%s:%s:%d:%d:%s", ruleAssembly, site.File, site.Line, site.Col, d.Msg),
			},
		}
		for i, n := range d.Notes {
			ns := Site{File: n.Span.Pos.File, Line: n.Span.Pos.Line, Col: n.Span.Pos.Col}
			rl := sarifLoc(ns, tool.Main, n.Msg)
			rl.ID = i + 1
			r.RelatedLocations = append(r.RelatedLocations, rl)
		}
		results = append(results, r)
	}
	for _, f := range fs {
		msg := f.Message
		if f.Hint != "" {
			msg = sentence(msg) + " Hint: " + f.Hint
		}
		r := sarifResult{
			RuleID: f.Kind, RuleIndex: rule(f.Kind), Level: sarifLevel(f.Severity), Message: sarifMessage{Text: msg},
			Locations:  []sarifLocation{sarifLoc(f.First, tool.Main, "")},
			Properties: map[string]any{"count": f.Count},
			Fingerprints: map[string]string{
				"primaryLocationLineHash": fmt.Sprintf("%s:%s:%d:%s:%d", f.Kind, f.First.File, f.First.Line, f.Second.File, f.Second.Line),
			},
		}
		if f.Buffer != "" {
			r.Properties["buffer"] = f.Buffer
			r.Properties["range"] = f.Range
		}
		if !f.Second.IsZero() {
			rl := sarifLoc(f.Second, tool.Main, "second access: "+f.Second.where())
			rl.ID = 1
			r.RelatedLocations = []sarifLocation{rl}
		}
		results = append(results, r)
	}
	if rules == nil {
		rules = []sarifRule{}
	}
	log := sarifLog{
		Schema:  sarifSchema,
		Version: "2.1.0",
		Runs: []sarifRun{{
			Tool:    sarifTool{Driver: sarifDriver{Name: tool.Name, Version: tool.Version, InformationURI: HomeURI, Rules: rules}},
			Results: results,
		}},
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(log)
}
