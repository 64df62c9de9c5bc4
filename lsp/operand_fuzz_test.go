package lsp

import (
	"strings"
	"testing"
)

// FuzzOperandAt: whatever line precedes the cursor, reading the instruction
// and operand under it never panics, and a slot it names is the op's.
func FuzzOperandAt(f *testing.F) {
	for _, s := range []string{
		"", "    ", "mm: tmatmul.acc %", "    set_flag M, FIX, ", "x: %r = ld @S[",
		"tcvt %a, %b #rnd=", "twait @R[0, %c], 1 #", "pto.tload ", "tadd %a, (%b, [%c,", "a:b:c",
		"%x = ", "tmov.m2l %a, %b,,,,", "wait_flag ))), ((", "set_flag MTE2, MTE1, %nb #",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		if strings.ContainsAny(line, "\n") {
			return
		}
		c := operandAt(line)
		if c.spec != nil && c.op == nil {
			t.Fatalf("%q: a slot without an op", line)
		}
		if c.op != nil && c.spec != nil && c.index < len(c.op.Operands) && c.spec != &c.op.Operands[c.index] {
			t.Fatalf("%q: slot %d is not the op's", line, c.index)
		}
		if c.op != nil && !c.attr && c.index == 2 && (c.op.Name == "set_flag" || c.op.Name == "wait_flag") {
			eventIDItems(nil, c, "")
		}
	})
}
