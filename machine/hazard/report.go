package hazard

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"

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
	for i := range fs {
		f := &fs[i]
		msg := f.Message
		if f.Count > 1 {
			msg += fmt.Sprintf(" [%d hazards]", f.Count)
		}
		dg := &asm.Diagnostic{Span: spanOf(f.First), Severity: asmSeverity(f.Severity), Msg: msg}
		if !f.Second.IsZero() {
			dg.Note(spanOf(f.Second), "%s", "second access: "+f.Second.where())
		}
		asm.ErrorList{dg}.Fprint(w, src)
		if f.Hint != "" {
			fmt.Fprintf(w, "    hint: %s\n", f.Hint)
		}
	}
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

// JSONFindings converts findings to the lint JSON shape (architecture.md):
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

// SARIF 2.1.0, the subset code-scanning tools read.
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
	InformationURI string      `json:"informationUri,omitempty"`
	Rules          []sarifRule `json:"rules"`
}

type sarifRule struct {
	ID               string       `json:"id"`
	ShortDescription sarifMessage `json:"shortDescription"`
	HelpURI          string       `json:"helpUri,omitempty"`
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

var ruleText = map[string]string{
	KindRAW:              "read after write with no synchronisation ordering the two",
	KindWAR:              "write after read with no synchronisation ordering the two",
	KindWAW:              "two writes with no synchronisation ordering them",
	KindDeadlock:         "a wait nothing will satisfy",
	KindUnpairedSet:      "a flag or FFTS counter still set when the kernel ends",
	KindDoubleSet:        "a flag set again before it was waited for",
	KindBadEventID:       "an event or flag id outside the hardware range",
	KindUninitRead:       "a read of memory nothing wrote in this launch",
	KindOutOfBounds:      "an access outside its declared tile or tensor",
	KindResetRacesAtomic: "a plain store racing an atomic add on a signal (lost wakeup)",
	KindStaleSignal:      "a signal wait satisfied by values an earlier run left",
	KindFault:            "a runtime fault",
	KindUnchecked:        "a flag the static pass could not evaluate",
}

func sarifLoc(s Site, msg string) sarifLocation {
	l := sarifLocation{PhysicalLocation: sarifPhysicalLocation{ArtifactLocation: sarifArtifact{URI: filepath.ToSlash(s.File)}}}
	if s.Line > 0 {
		l.PhysicalLocation.Region = &sarifRegion{StartLine: s.Line, StartColumn: s.Col}
	}
	if msg != "" {
		l.Message = &sarifMessage{Text: msg}
	}
	return l
}

func sarifLevel(sev string) string {
	switch sev {
	case "warning", "note", "error":
		return sev
	}
	return "error"
}

// WriteSARIF writes a SARIF 2.1.0 log with one rule per finding kind.
func WriteSARIF(w io.Writer, fs []Finding, tool string) error {
	var rules []sarifRule
	ruleIdx := map[string]int{}
	results := make([]sarifResult, 0, len(fs))
	for _, f := range fs {
		idx, ok := ruleIdx[f.Kind]
		if !ok {
			idx = len(rules)
			ruleIdx[f.Kind] = idx
			text := ruleText[f.Kind]
			if text == "" {
				text = f.Kind
			}
			rules = append(rules, sarifRule{ID: f.Kind, ShortDescription: sarifMessage{Text: text}, HelpURI: "docs/hazards.md"})
		}
		msg := f.Message
		if f.Hint != "" {
			msg += " Hint: " + f.Hint
		}
		r := sarifResult{
			RuleID: f.Kind, RuleIndex: idx, Level: sarifLevel(f.Severity), Message: sarifMessage{Text: msg},
			Locations:  []sarifLocation{sarifLoc(f.First, "")},
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
			rl := sarifLoc(f.Second, "second access: "+f.Second.where())
			rl.ID = 1
			r.RelatedLocations = []sarifLocation{rl}
		}
		results = append(results, r)
	}
	if rules == nil {
		rules = []sarifRule{}
	}
	log := sarifLog{
		Schema:  "https://json.schemastore.org/sarif-2.1.0.json",
		Version: "2.1.0",
		Runs:    []sarifRun{{Tool: sarifTool{Driver: sarifDriver{Name: tool, Rules: rules}}, Results: results}},
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(log)
}
