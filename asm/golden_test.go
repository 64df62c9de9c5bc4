package asm_test

import (
	"strings"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/internal/golden"
)

// TestGoldenExpectChecks: the assembler checks golden calls against the one
// function table (name, arity, argument kinds) and the tolerances of a check.
func TestGoldenExpectChecks(t *testing.T) {
	head := "const N = 4\ngm A : f32 [N, 8] = zero\ngm B : f32 [N, 8] = zero\n"
	tests := []struct {
		expect string
		err    string // "" means it assembles
	}{
		{"expect @B == rowsum(@A) + colmax(@A) tol 1e-3", ""},
		{"expect @B == rsqrt(@A) * sigmoid(@A) rtol 1e-3 atol 1e-6", ""},
		{"expect @B == softmax(@A) rtol 1e-2", ""},
		{"expect @B == @A atol 0.5", ""},
		{"expect @B == cast(slice(@A, 0, N, 0, 8), bf16, floor)", ""},
		{"expect @B == rowsums(@A)", "unknown golden function rowsums (did you mean rowsum?)"},
		{"expect @B == rowsum(@A, @A)", "rowsum takes 1 arguments, got 2: rowsum(a)"},
		{"expect @B == concat(@A)", "concat takes 2 or 3 arguments, got 1"},
		{"expect @B == slice(@A, 0, M, 0, 8)", "undefined"},
		{"expect @B == cast(@A, f8)", "unknown dtype f8"},
		{"expect @B == file(A)", "file takes a string"},
		{"expect @B == @A tol 1e-3 rtol 1e-3", "tol and rtol/atol do not mix"},
		{"expect @B == @A rtol -1", "a tolerance is ≥ 0"},
	}
	for _, tc := range tests {
		_, errs := assembleText(t, head+tc.expect+"\n")
		text := errText(errs, nil)
		if tc.err == "" {
			if errs.HasErrors() {
				t.Errorf("%s: %s", tc.expect, text)
			}
			continue
		}
		if !strings.Contains(text, tc.err) {
			t.Errorf("%s: errors %q, want %q", tc.expect, text, tc.err)
		}
	}
}

// TestGoldenDocs keeps docs/language.md's function table equal to the one the
// assembler and the evaluator share.
func TestGoldenDocs(t *testing.T) {
	var b strings.Builder
	asm.WriteGoldenDoc(&b)
	golden.Section(t, "../docs/language.md", "<!-- golden-funcs:begin -->\n", "<!-- golden-funcs:end -->", b.String())
}
