package hazard

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
)

// Finding kinds. RAW, WAR and WAW cover races between pipes, cores and ranks
// and same-pipe dependences without a pipe_barrier (told apart by Message and
// Hint); the others are flag-protocol, memory and comm faults.
const (
	KindRAW              = "RAW"
	KindWAR              = "WAR"
	KindWAW              = "WAW"
	KindDeadlock         = "deadlock"
	KindUnpairedSet      = "unpaired-set"
	KindDoubleSet        = "double-set"
	KindBadEventID       = "bad-event-id"
	KindUninitRead       = "uninit-read"
	KindOutOfBounds      = "out-of-bounds"
	KindResetRacesAtomic = "reset-races-atomic"
	// KindStaleSignal is a twait/ttest satisfied by a signal value that only
	// an earlier run's writes produced (no write in this run, no host reset
	// since): the barrier passes on leftovers (kernels.md §3(d) R1).
	KindStaleSignal = "stale-signal"
	// KindWaitOverwritten is a notify to a signal word, not ordered after a
	// wait that passed on the value another set left there, whose result
	// fails the wait's compare: it can land before the wait polls, and the
	// wait spins forever (eqwait.go).
	KindWaitOverwritten = "wait-overwritten"
	// KindFault is a runtime fault the machine reported that fits no other kind.
	KindFault = "fault"
	// KindUnchecked is a note from the static pass: a flag it could not evaluate.
	KindUnchecked = "unchecked-flag"
	// KindKeptLimit is a note of the dynamic detector: a GM range kept
	// fewer overwritten accesses than an access that landed late needed
	// (Options.MaxKept), so races with the dropped ones may be missing.
	KindKeptLimit = "kept-limit"
)

// Kinds lists every finding kind, for a suppression's KIND: a misspelt kind
// matched nothing and suppressed nothing, silently.
var Kinds = []string{KindRAW, KindWAR, KindWAW, KindDeadlock, KindUnpairedSet, KindDoubleSet,
	KindBadEventID, KindUninitRead, KindOutOfBounds, KindResetRacesAtomic, KindStaleSignal,
	KindWaitOverwritten, KindFault, KindUnchecked, KindKeptLimit}

// knownKind reports whether k names a kind as a suppression matches it
// (case-insensitively), or is "*".
func knownKind(k string) bool {
	if k == "*" {
		return true
	}
	for _, c := range Kinds {
		if strings.EqualFold(k, c) {
			return true
		}
	}
	return false
}

// Severity of a finding. The zero value means "the default for this check",
// so a zero SamePipe picks the documented defaults.
type Severity uint8

const (
	SevDefault Severity = iota
	SevOff              // not reported
	SevNote
	SevWarning
	SevError
)

func (s Severity) String() string {
	switch s {
	case SevOff:
		return "off"
	case SevNote:
		return "note"
	case SevWarning:
		return "warning"
	case SevError:
		return "error"
	}
	return "default"
}

// ParseSeverity accepts off, note, warning, error (and default).
func ParseSeverity(s string) (Severity, bool) {
	switch strings.ToLower(s) {
	case "default", "":
		return SevDefault, true
	case "off", "none":
		return SevOff, true
	case "note", "info":
		return SevNote, true
	case "warning", "warn":
		return SevWarning, true
	case "error":
		return SevError, true
	}
	return SevDefault, false
}

// SamePipe sets how a dependence between two ops of one pipe with no
// pipe_barrier between them is reported, per pipe. On A2/A3 CANN requires
// pipe_barrier(P) for every same-pipe dependence, but the pto-isa docs
// disagree for the DMA queues (machine-facts §2.2, open question 3), so the
// defaults follow the evidence per pipe; see docs/hazards.md.
type SamePipe struct {
	V    Severity // default warning: CANN example, manual kernels insert BAR V
	MTE3 Severity // default warning: same-address MTE3 stores may complete out of order
	MTE2 Severity // default note: documented as one in-order DMA queue
	MTE1 Severity // default note: no evidence either way
	// M defaults to off: the cube executes mads in issue order, and no
	// pto-isa GEMM separates the TMATMUL.ACC chain into one L0C tile with
	// pipe_barrier M, so reporting it is noise on every GEMM.
	M    Severity
	FIX  Severity // default note: no evidence either way
	SDMA Severity // default note: async engines, 48 channels
}

func (sp *SamePipe) level(p asm.Pipe, sdma bool) Severity {
	var s, def Severity
	switch {
	case sdma:
		s, def = sp.SDMA, SevNote
	case p == asm.PipeV:
		s, def = sp.V, SevWarning
	case p == asm.PipeMTE3:
		s, def = sp.MTE3, SevWarning
	case p == asm.PipeMTE2:
		s, def = sp.MTE2, SevNote
	case p == asm.PipeMTE1:
		s, def = sp.MTE1, SevNote
	case p == asm.PipeM:
		s, def = sp.M, SevOff
	case p == asm.PipeFIX:
		s, def = sp.FIX, SevNote
	default:
		// The scalar unit is ordered by construction (pipe_barrier(S) is illegal).
		return SevOff
	}
	if s == SevDefault {
		return def
	}
	return s
}

// Options configure a Detector.
type Options struct {
	SamePipe SamePipe
	Suppress []Suppression
	// CoreName names a core for reports ("r0.aic3"); the CLI passes the
	// machine's naming. Nil gives "r<rank>.c<core>".
	CoreName func(rank, core int) string
	// Placement says where a core ran in a run (EvRunStart's ID): its
	// stream, block and position, which a cross-core race's hint needs to
	// name a synchronisation that links the two cores. The CLI passes
	// Machine.Placement; it is asked only when findings are listed, after
	// the run. Nil gives a hint that lists the FFTS modes and lets the
	// reader pick.
	Placement func(run, rank, core int) (machine.Placement, bool)
	// MaxKept bounds the overwritten accesses a GM range keeps for an
	// access of another core meant between them and landing later
	// (docs/hazards.md, "GM writes overwritten in order"); 0 is
	// DefaultMaxKept, and more than MaxKeptLimit is MaxKeptLimit. Past it
	// the oldest leave, and the report says so in a KindKeptLimit note
	// when an access met a range not ordered after one that left.
	MaxKept int
	// Serial keeps the detector on the machine's goroutine. By default a
	// long run hands events to a goroutine of its own when more than one
	// CPU is available; findings are the same either way.
	Serial bool
	// Late is what the pass before found of adds that landed after a wait
	// they could have stood in for (Detector.Late, Settle); nil on a
	// first pass.
	Late *LateAdds
	// Force is the tests the pass before found another timing could pass
	// (Detector.Forced, Settle; testforce.go); nil on a first pass.
	Force *ForcedTests
}

// IsRace reports whether kind is a race (RAW, WAR, WAW, same-pipe ones
// included), whose Count is its pairs of agents, not instances.
func IsRace(kind string) bool { return kind == KindRAW || kind == KindWAR || kind == KindWAW }

// Finding is one reported hazard. First and Second are the two accesses,
// earlier first in the program's intended order (issue order on one core;
// iteration, then source position across cores), not in simulated time.
// Single-site findings leave Second zero.
type Finding struct {
	Kind     string
	Severity string
	Message  string
	First    Site
	Second   Site
	Buffer   string
	Range    [2]int64
	// Count is how many dynamic instances the finding stands for, over all
	// cores and ranks; for a race (IsRace), how many pairs of agents (a
	// pipe of a core and rank, an SDMA engine, the host) race at its two
	// sites, which, unlike its instances, the detector meets in every
	// order of the run (docs/hazards.md, "The count").
	Count int
	Hint  string
}

// Site is one dynamic instruction instance.
type Site struct {
	File string
	Line int
	Col  int
	Op   string
	Pipe string
	Core string
	Rank int
	// Iter is the loop iteration vector, outermost first.
	Iter []int64
}

// IsZero reports whether s names no site.
func (s Site) IsZero() bool { return s.File == "" && s.Line == 0 && s.Op == "" }

func (s Site) pos() string {
	if s.Line == 0 {
		return s.File
	}
	return fmt.Sprintf("%s:%d:%d", s.File, s.Line, s.Col)
}

// where describes the agent and iteration for messages.
func (s Site) where() string {
	var b strings.Builder
	b.WriteString(s.Op)
	b.WriteString(" (")
	sep := ""
	if s.Pipe != "" {
		b.WriteString(s.Pipe)
		sep = ", "
	}
	if s.Core != "" {
		b.WriteString(sep + s.Core)
		sep = ", "
	}
	if len(s.Iter) > 0 {
		b.WriteString(sep + "iter " + iterString(s.Iter))
	}
	b.WriteString(")")
	return b.String()
}

func iterString(it []int64) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, v := range it {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strconv.FormatInt(v, 10))
	}
	b.WriteByte(']')
	return b.String()
}

func siteLess(a, b Site) int {
	if a.File != b.File {
		return strings.Compare(a.File, b.File)
	}
	if a.Line != b.Line {
		return cmpInt(a.Line, b.Line)
	}
	if a.Col != b.Col {
		return cmpInt(a.Col, b.Col)
	}
	return 0
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Suppression silences findings of Kind ("*" for any) whose first or second
// site is at File:Line, and at column Col when it is not 0. File matches
// exactly or by its trailing path elements.
type Suppression struct {
	Kind string
	File string
	Line int
	Col  int
}

// ParseSuppressions reads lines `KIND file:line` or `KIND file:line:col` of
// the file name (KIND one of Kinds, any case, or *): a site copied from a
// report, column and all, suppresses that site (it was read as a file named
// `file:line` and suppressed nothing, silently); `#` starts a comment and blank lines are skipped. Errors are positioned
// (name:line:col: error: ...), one per bad line. Lines have no length limit
// of their own: the file's size is the caller's to bound (--max-file-size);
// a bufio.Scanner refused a line over 64 KiB with "token too long".
func ParseSuppressions(name string, src []byte) ([]Suppression, error) {
	var out []Suppression
	var errs asm.ErrorList
	for n, line := range bytes.Split(src, []byte("\n")) {
		if i := bytes.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		f := strings.Fields(string(line))
		if len(f) == 0 {
			continue
		}
		at := func(field string) asm.Span {
			col := bytes.Index(line, []byte(field)) + 1
			return asm.Span{Pos: asm.Pos{File: name, Line: n + 1, Col: col}}
		}
		if len(f) != 2 {
			errs.Add(at(f[0]), "want `KIND file:line`, got %q", strings.TrimSpace(string(line)))
			continue
		}
		i := strings.LastIndexByte(f[1], ':')
		if i <= 0 {
			errs.Add(at(f[1]), "%q: want file:line", f[1])
			continue
		}
		if !knownKind(f[0]) {
			errs.Add(at(f[0]), "unknown kind %q: want * or one of %s", f[0], strings.Join(Kinds, ", "))
			continue
		}
		ln, err := strconv.Atoi(f[1][i+1:])
		if err != nil || ln < 1 {
			errs.Add(at(f[1]), "%q: bad line number", f[1])
			continue
		}
		s := Suppression{Kind: f[0], File: f[1][:i], Line: ln}
		// file:line:col: the number before the last colon is the line.
		if j := strings.LastIndexByte(s.File, ':'); j > 0 {
			if l2, err := strconv.Atoi(s.File[j+1:]); err == nil {
				if l2 < 1 {
					errs.Add(at(f[1]), "%q: bad line number", f[1])
					continue
				}
				s.File, s.Line, s.Col = s.File[:j], l2, ln
			}
		}
		out = append(out, s)
	}
	if err := errs.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

func (s Suppression) matches(f *Finding) bool {
	if s.Kind != "*" && !strings.EqualFold(s.Kind, f.Kind) {
		return false
	}
	return s.matchSite(f.First) || (!f.Second.IsZero() && s.matchSite(f.Second))
}

func (s Suppression) matchSite(st Site) bool {
	if st.Line != s.Line || (s.Col != 0 && st.Col != s.Col) {
		return false
	}
	if st.File == s.File {
		return true
	}
	a, b := filepath.ToSlash(st.File), filepath.ToSlash(s.File)
	return strings.HasSuffix(a, "/"+b) || strings.HasSuffix(b, "/"+a)
}

// Suppressed reports whether any suppression in list silences f.
func Suppressed(list []Suppression, f *Finding) bool {
	for _, s := range list {
		if s.matches(f) {
			return true
		}
	}
	return false
}
