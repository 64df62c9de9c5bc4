package hazard

import (
	"strconv"
	"strings"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
)

// expectObject builds an object by hand: kernel k in main.pto includes
// lib.pto, whose kernel l labels line 7 `load`; main.pto labels line 20
// `load` too (labels are per kernel) and line 30 `use`.
func expectObject(expects ...*asm.Expect) *asm.Object {
	op := func(file string, line int, label string) *asm.COp {
		return &asm.COp{Instr: &asm.Instr{Span: asm.Span{Pos: asm.Pos{File: file, Line: line, Col: 5}}, Label: label}}
	}
	return &asm.Object{
		Main:   "main.pto",
		Consts: []asm.ConstVal{{Name: "CELLS", Val: 4}},
		Kernels: []*asm.KernelInfo{
			{Name: "k", Ops: []*asm.COp{op("main.pto", 20, "load"), op("main.pto", 30, "use"), op("main.pto", 31, "")}},
			{Name: "l", Ops: []*asm.COp{op("lib.pto", 7, "load"), op("lib.pto", 9, "only")}},
		},
		Expects: expects,
	}
}

func name(s string) asm.Expr { return &asm.Name{Name: s} }
func num(n int64) asm.Expr   { return &asm.Num{Int: n, Text: strconv.FormatInt(n, 10)} }

func expectFinding(kind string, count asm.Expr, sites ...asm.Expr) *asm.Expect {
	return &asm.Expect{Span: asm.Span{Pos: asm.Pos{File: "main.pto", Line: 50, Col: 1}}, Kind: "finding", Finding: kind, Sites: sites, Count: count}
}

func fnd(kind, sev string, count int, first, second Site) Finding {
	return Finding{Kind: kind, Severity: sev, Count: count, First: first, Second: second}
}

func at(file string, line int) Site { return Site{File: file, Line: line, Col: 5, Op: "op"} }

func TestCheckExpectations(t *testing.T) {
	times := &asm.Binary{Op: "*", X: num(2), Y: name("CELLS")}
	tests := []struct {
		name    string
		expects []*asm.Expect
		fs      []Finding
		want    []string // substrings, one per problem, in order
	}{
		{"nothing expected, nothing found", nil, nil, nil},
		{"notes never fail", nil, []Finding{fnd(KindRAW, "note", 3, at("main.pto", 30), at("main.pto", 31))}, nil},
		{"unexpected warning", nil, []Finding{fnd(KindUnpairedSet, "warning", 1, at("main.pto", 30), Site{})},
			[]string{"unexpected warning unpaired-set at main.pto:30:5"}},
		{"two sites by label",
			[]*asm.Expect{expectFinding(KindWAR, nil, name("use"), name("only"))},
			[]Finding{fnd(KindWAR, "error", 8, at("main.pto", 30), at("lib.pto", 9))}, nil},
		{"sites swapped",
			[]*asm.Expect{expectFinding(KindWAR, nil, name("only"), name("use"))},
			[]Finding{fnd(KindWAR, "error", 8, at("main.pto", 30), at("lib.pto", 9))},
			[]string{"no such finding (the WAR findings are: error WAR at main.pto:30:5, lib.pto:9:5", "unexpected error WAR"}},
		{"label resolves in the file that declares it",
			[]*asm.Expect{expectFinding(KindWAR, nil, name("only"))},
			[]Finding{fnd(KindWAR, "error", 1, at("main.pto", 9), Site{})},
			[]string{"no such finding", "unexpected"}},
		{"one site matches the first site of a pair",
			[]*asm.Expect{expectFinding(KindRAW, nil, name("use"))},
			[]Finding{fnd(KindRAW, "warning", 1, at("main.pto", 30), at("main.pto", 31))}, nil},
		{"line number in the expectation's file",
			[]*asm.Expect{expectFinding(KindRAW, nil, num(31))},
			[]Finding{fnd(KindRAW, "warning", 1, at("main.pto", 31), Site{})}, nil},
		{"a note does not satisfy an expectation",
			[]*asm.Expect{expectFinding(KindRAW, nil, num(31))},
			[]Finding{fnd(KindRAW, "note", 1, at("main.pto", 31), Site{})},
			[]string{"no such finding (no RAW finding at all)"}},
		{"count over constants",
			[]*asm.Expect{expectFinding(KindUnpairedSet, times, name("use"))},
			[]Finding{fnd(KindUnpairedSet, "warning", 8, at("main.pto", 30), Site{})}, nil},
		{"count mismatch",
			[]*asm.Expect{expectFinding(KindUnpairedSet, times, name("use"))},
			[]Finding{fnd(KindUnpairedSet, "warning", 2, at("main.pto", 30), Site{})},
			[]string{"count 2, expected 8 (2 * CELLS)"}},
		{"kind is case-insensitive",
			[]*asm.Expect{expectFinding("war", nil, name("use"))},
			[]Finding{fnd(KindWAR, "error", 1, at("main.pto", 30), at("main.pto", 31))}, nil},
		{"a label on two kernels matches either; two findings are ambiguous",
			[]*asm.Expect{expectFinding(KindRAW, nil, name("load"))},
			[]Finding{fnd(KindRAW, "error", 1, at("main.pto", 20), Site{}), fnd(KindRAW, "error", 1, at("lib.pto", 7), Site{})},
			[]string{"matched by 2 findings, want exactly one"}},
		{"unknown label",
			[]*asm.Expect{expectFinding(KindRAW, nil, name("nosuch"))}, nil,
			[]string{"no instruction is labelled nosuch"}},
		{"unknown constant in count",
			[]*asm.Expect{expectFinding(KindRAW, name("NOPE"), name("use"))},
			[]Finding{fnd(KindRAW, "error", 1, at("main.pto", 30), Site{})},
			[]string{"unknown name NOPE"}},
		{"no sites matches every finding of the kind",
			[]*asm.Expect{expectFinding(KindDeadlock, nil)},
			[]Finding{fnd(KindDeadlock, "error", 1, at("main.pto", 20), at("main.pto", 30)), fnd(KindDeadlock, "error", 1, at("main.pto", 31), Site{})}, nil},
		{"no sites, count is the total",
			[]*asm.Expect{expectFinding(KindDeadlock, num(3))},
			[]Finding{fnd(KindDeadlock, "error", 1, at("main.pto", 20), Site{}), fnd(KindDeadlock, "error", 1, at("main.pto", 31), Site{})},
			[]string{"2 in all, expected 3"}},
		{"no sites, none found",
			[]*asm.Expect{expectFinding(KindDeadlock, nil)}, nil,
			[]string{"no such finding (no deadlock finding at all)"}},
		{"output expectations are not ours",
			[]*asm.Expect{{Kind: "output"}, {Kind: "cycles"}}, nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := CheckExpectations(expectObject(tc.expects...), tc.fs)
			if len(got) != len(tc.want) {
				t.Fatalf("got %d problems, want %d:\n%s", len(got), len(tc.want), strings.Join(got, "\n"))
			}
			for i := range got {
				if !strings.Contains(got[i], tc.want[i]) {
					t.Errorf("problem %d = %q, want it to contain %q", i, got[i], tc.want[i])
				}
			}
		})
	}
	if got := CheckExpectations(nil, nil); got != nil {
		t.Errorf("nil object: %v", got)
	}
}

func TestMerge(t *testing.T) {
	dynUnpaired := fnd(KindUnpairedSet, "warning", 8, at("a.pto", 118), Site{})
	dynDeadlock := fnd(KindDeadlock, "error", 1, at("a.pto", 10), at("a.pto", 12))
	dynDouble := fnd(KindDoubleSet, "error", 2, at("a.pto", 3), at("a.pto", 4))
	dynamic := []Finding{dynUnpaired, dynDeadlock, dynDouble}
	tests := []struct {
		name   string
		static Finding
		kept   bool
	}{
		{"same unpaired-set", fnd(KindUnpairedSet, "warning", 1, at("a.pto", 118), Site{}), false},
		{"unpaired-set elsewhere", fnd(KindUnpairedSet, "warning", 1, at("a.pto", 119), Site{}), true},
		{"deadlock at the second blocked op", fnd(KindDeadlock, "error", 1, at("a.pto", 12), Site{}), false},
		{"same double-set pair", fnd(KindDoubleSet, "error", 1, at("a.pto", 3), at("a.pto", 4)), false},
		{"double-set, other pair", fnd(KindDoubleSet, "error", 1, at("a.pto", 4), at("a.pto", 3)), true},
		{"same line, other file", fnd(KindUnpairedSet, "warning", 1, at("b.pto", 118), Site{}), true},
		{"same line, other kind", fnd(KindDeadlock, "error", 1, at("a.pto", 118), Site{}), true},
		{"unchecked-flag is static only", fnd(KindUnchecked, "note", 1, at("a.pto", 118), Site{}), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Merge(dynamic, []Finding{tc.static})
			want := len(dynamic)
			if tc.kept {
				want++
			}
			if len(got) != want {
				t.Fatalf("got %d findings, want %d: %+v", len(got), want, got)
			}
			for _, f := range got {
				if f.Kind == dynUnpaired.Kind && f.First.Line == 118 && f.First.File == "a.pto" && f.Count != 8 && !tc.kept {
					t.Errorf("the dynamic finding (count 8) should stand, got count %d", f.Count)
				}
			}
		})
	}
	// The dynamic findings come through untouched, sorted.
	got := Merge(dynamic, nil)
	if len(got) != 3 || got[0].Kind != KindDoubleSet || got[2].Kind != KindUnpairedSet {
		t.Errorf("Merge(dynamic, nil) = %+v", got)
	}
}

func TestEvalCount(t *testing.T) {
	obj := expectObject()
	tests := []struct {
		x    asm.Expr
		want int64
		err  bool
	}{
		{num(3), 3, false},
		{name("CELLS"), 4, false},
		{&asm.Paren{X: &asm.Binary{Op: "+", X: num(1), Y: name("CELLS")}}, 5, false},
		{&asm.Binary{Op: "/", X: num(1), Y: num(0)}, 0, true},
		{&asm.Call{Fn: "max", Args: []asm.Expr{num(2), name("CELLS")}}, 4, false},
		{&asm.Unary{Op: "-", X: num(2)}, -2, false},
		{&asm.Num{IsFloat: true, Float: 1.5, Text: "1.5"}, 0, true},
		{&asm.Str{Val: "x"}, 0, true},
		{nil, 0, true},
	}
	for i, tc := range tests {
		got, err := asm.EvalInt(tc.x, obj.Const)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("%d: EvalInt = %d, %v; want %d, err %v", i, got, err, tc.want, tc.err)
		}
	}
}
