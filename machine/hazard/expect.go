package hazard

import (
	"fmt"
	"strings"

	"github.com/ptoasm/ptoasm/asm"
)

// CheckObject runs the static flag-balance pass (CheckFlags) on every kernel
// of obj and returns the findings sorted.
func CheckObject(obj *asm.Object) []Finding {
	if obj == nil {
		return nil
	}
	consts := make(map[string]int64, len(obj.Consts))
	for _, c := range obj.Consts {
		consts[c.Name] = c.Val
	}
	var out []Finding
	for _, k := range obj.Kernels {
		out = append(out, checkFlags(k, consts)...)
	}
	SortFindings(out)
	return out
}

// Merge combines the dynamic detector's findings with the static pass's and
// returns them sorted. A static finding that restates a dynamic one — same
// kind, and its site(s) among the dynamic finding's sites — is dropped, so
// the dynamic one (with its dynamic count, rank and iteration) stands for
// both and an expectation matches it once. A single-site static finding
// (unpaired-set, deadlock at a wait) duplicates a dynamic finding of its kind
// at either of that finding's sites, because a dynamic deadlock names the
// blocked ops in wait-for order rather than the wait the static pass found.
// Static findings the run did not reproduce (a path it did not take) stay.
func Merge(dynamic, static []Finding) []Finding {
	out := make([]Finding, 0, len(dynamic)+len(static))
	out = append(out, dynamic...)
	ix := indexLines(dynamic)
	for _, s := range static {
		i := ix.restated(&s, dynamic)
		switch {
		case i < 0:
			out = append(out, s)
		case Failing(&s) && !Failing(&dynamic[i]):
			// The run saw only a note where the program's own order is
			// already wrong (two sets with no wait between them on some
			// path: a double-set note of the run's first two sets): the
			// static verdict stands in its place.
			out[i] = s
		}
	}
	SortFindings(out)
	return out
}

// lineKey is a finding's kind and one of its sites' lines.
type lineKey struct {
	kind, file string
	line       int
}

// lineIndex lists, by kind and line, the dynamic findings whose first
// (second) site is there, in order: Merge looked every static finding up
// by a scan of them all, and a file of 20,000 racing lines, as many
// findings of each, took minutes.
type lineIndex struct{ first, second map[lineKey][]int }

func indexLines(dynamic []Finding) lineIndex {
	ix := lineIndex{map[lineKey][]int{}, map[lineKey][]int{}}
	for i := range dynamic {
		d := &dynamic[i]
		k := lineKey{d.Kind, d.First.File, d.First.Line}
		ix.first[k] = append(ix.first[k], i)
		if !d.Second.IsZero() {
			k := lineKey{d.Kind, d.Second.File, d.Second.Line}
			ix.second[k] = append(ix.second[k], i)
		}
	}
	return ix
}

// restated returns the index of the first dynamic finding that reports
// static finding s again, or -1: one of its kind at s's line (first or
// second site) when s has one site, at both of s's lines when it has two.
func (ix lineIndex) restated(s *Finding, dynamic []Finding) int {
	k := lineKey{s.Kind, s.First.File, s.First.Line}
	if s.Second.IsZero() {
		a, b := ix.first[k], ix.second[k]
		switch {
		case len(a) == 0 && len(b) == 0:
			return -1
		case len(a) == 0:
			return b[0]
		case len(b) == 0:
			return a[0]
		}
		return min(a[0], b[0])
	}
	for _, i := range ix.first[k] {
		if sameLine(s.Second, dynamic[i].Second) {
			return i
		}
	}
	return -1
}

func sameLine(a, b Site) bool { return a.Line == b.Line && a.File == b.File }

// Failing reports whether f fails a lint: warnings and errors do, notes and
// findings turned off do not.
func Failing(f *Finding) bool { return f.Severity == "warning" || f.Severity == "error" }

// CheckExpectations matches obj's `expect finding` declarations against fs,
// the merged findings of a run (see Merge), and returns one human-readable
// problem per mismatch, in declaration order, then finding order; nil means
// the findings are exactly the expected ones.
//
// An expectation `expect finding KIND at S1[, S2] [count N]` must be matched
// by exactly one finding of that kind with severity warning or error whose
// first site is S1 and, when S2 is given, whose second site is S2. Without
// sites (`expect finding deadlock`) it matches every warning or error of its
// kind, at least one, and `count` is their total: a hang is reported by the
// run at the blocked ops and by the static pass at the wait, sites a program
// cannot always name in advance. A site is
// a label (every instruction carrying it, in the file that declares it: a
// label may appear once per kernel) or a line number (in the file that holds
// the expectation). With `count`, the finding's Count must equal N, which is
// evaluated over obj's constants (after -D). Every warning or error must be
// matched by some expectation; notes never fail and never match.
func CheckExpectations(obj *asm.Object, fs []Finding) []string {
	if obj == nil {
		return nil
	}
	var problems []string
	matched := make([]bool, len(fs))
	for _, x := range obj.Expects {
		if x == nil || x.Kind != "finding" {
			continue
		}
		desc := expectString(x)
		sites := make([][]lineRef, len(x.Sites))
		bad := false
		for i, s := range x.Sites {
			refs, err := resolveSite(obj, x, s)
			if err != nil {
				problems = append(problems, fmt.Sprintf("%s: %s: %v", x.Pos, desc, err))
				bad = true
			}
			sites[i] = refs
		}
		if bad {
			continue
		}
		if len(sites) > 2 {
			problems = append(problems, fmt.Sprintf("%s: %s: want at most two sites", x.Pos, desc))
			continue
		}
		var hits []int
		for i := range fs {
			f := &fs[i]
			if !Failing(f) || !strings.EqualFold(f.Kind, x.Finding) {
				continue
			}
			if len(sites) > 0 && !atAny(f.First, sites[0]) {
				continue
			}
			if len(sites) == 2 && !atAny(f.Second, sites[1]) {
				continue
			}
			hits = append(hits, i)
		}
		switch {
		case len(hits) == 0:
			problems = append(problems, fmt.Sprintf("%s: %s: no such finding%s", x.Pos, desc, nearMiss(fs, x.Finding)))
			continue
		case len(hits) == 1 || len(sites) == 0:
		default:
			var at []string
			for _, i := range hits {
				at = append(at, findingString(&fs[i]))
			}
			problems = append(problems, fmt.Sprintf("%s: %s: matched by %d findings, want exactly one: %s", x.Pos, desc, len(hits), strings.Join(at, "; ")))
		}
		for _, i := range hits {
			matched[i] = true
		}
		if x.Count != nil {
			want, err := asm.EvalInt(x.Count, obj.Const)
			if err != nil {
				problems = append(problems, fmt.Sprintf("%s: %s: count: %v", x.Pos, desc, err))
				continue
			}
			if len(sites) == 0 {
				// A site-less expectation counts every instance of its kind.
				n := 0
				for _, i := range hits {
					n += fs[i].Count
				}
				if int64(n) != want {
					problems = append(problems, fmt.Sprintf("%s: %s: %d in all, expected %d (%s)", x.Pos, desc, n, want, asm.ExprString(x.Count)))
				}
				continue
			}
			for _, i := range hits {
				if int64(fs[i].Count) != want {
					problems = append(problems, fmt.Sprintf("%s: %s: count %d, expected %d (%s)", x.Pos, desc, fs[i].Count, want, asm.ExprString(x.Count)))
				}
			}
		}
	}
	for i := range fs {
		if Failing(&fs[i]) && !matched[i] {
			problems = append(problems, "unexpected "+findingString(&fs[i]))
		}
	}
	return problems
}

// lineRef is a source line a site resolves to.
type lineRef struct {
	file string
	line int
}

func atAny(s Site, refs []lineRef) bool {
	for _, r := range refs {
		if s.Line == r.line && s.File == r.file {
			return true
		}
	}
	return false
}

func resolveSite(obj *asm.Object, x *asm.Expect, s asm.Expr) ([]lineRef, error) {
	switch s := s.(type) {
	case *asm.Name:
		var refs []lineRef
		for _, k := range obj.Kernels {
			for _, op := range k.Ops {
				if op == nil || op.Instr == nil || op.Instr.Label != s.Name {
					continue
				}
				r := lineRef{op.Instr.Pos.File, op.Instr.Pos.Line}
				if !containsRef(refs, r) {
					refs = append(refs, r)
				}
			}
		}
		if len(refs) == 0 {
			return nil, fmt.Errorf("no instruction is labelled %s", s.Name)
		}
		return refs, nil
	case *asm.Num:
		if s.IsFloat || s.Int < 1 {
			return nil, fmt.Errorf("site %s is not a line number", s.Text)
		}
		return []lineRef{{x.Pos.File, int(s.Int)}}, nil
	}
	return nil, fmt.Errorf("a site is a label or a line number")
}

func containsRef(refs []lineRef, r lineRef) bool {
	for _, x := range refs {
		if x == r {
			return true
		}
	}
	return false
}

func expectString(x *asm.Expect) string {
	var b strings.Builder
	b.WriteString("expect finding ")
	b.WriteString(x.Finding)
	for i, s := range x.Sites {
		if i == 0 {
			b.WriteString(" at ")
		} else {
			b.WriteString(", ")
		}
		b.WriteString(asm.ExprString(s))
	}
	if x.Count != nil {
		b.WriteString(" count ")
		b.WriteString(asm.ExprString(x.Count))
	}
	return b.String()
}

func findingString(f *Finding) string {
	s := fmt.Sprintf("%s %s at %s", f.Severity, f.Kind, f.First.pos())
	if !f.Second.IsZero() {
		s += ", " + f.Second.pos()
	}
	if f.Count > 1 {
		s += fmt.Sprintf(" (count %d)", f.Count)
	}
	return s
}

// nearMiss lists the failing findings of the wanted kind, so a wrong label or
// swapped sites shows what the detector did report.
func nearMiss(fs []Finding, kind string) string {
	var at []string
	for i := range fs {
		if Failing(&fs[i]) && strings.EqualFold(fs[i].Kind, kind) {
			at = append(at, findingString(&fs[i]))
		}
	}
	if len(at) == 0 {
		return fmt.Sprintf(" (no %s finding at all)", kind)
	}
	return " (the " + kind + " findings are: " + strings.Join(at, "; ") + ")"
}
