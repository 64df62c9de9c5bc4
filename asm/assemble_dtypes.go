package asm

import (
	"fmt"
	"slices"
	"strings"
)

// checkDTypes refuses tile element types no rule of the op's DTypes accepts
// (pto-isa's a2a3 static_asserts): at the first operand no rule takes, or,
// when each operand alone is taken but no rule takes them together, at the
// last operand a rule restricts. args are the op's, tile(i) operand i's tile
// or nil.
func checkDTypes(info *OpInfo, nargs int, tile func(int) *TileInfo, bad func(int, string, ...any) *Diagnostic) {
	last := -1
	for i := 0; i < nargs; i++ {
		t := tile(i)
		if t == nil {
			continue
		}
		var union []DType
		taken := false
		for _, r := range info.DTypes {
			taken = taken || r.Allows(i, t.DType)
			if i < len(r) {
				for _, dt := range r[i] {
					if !slices.Contains(union, dt) {
						union = append(union, dt)
					}
				}
			}
		}
		if !taken {
			bad(i, "%s: %%%s is %s; a2a3 takes %s only (pto-isa %s static_asserts)", info.Name, t.Name, t.DType, dtypeList(union, ", "), info.DTypeSource)
			return
		}
		if union != nil {
			last = i
		}
	}
	for _, r := range info.DTypes {
		all := true
		for i := 0; i < nargs; i++ {
			if t := tile(i); t != nil && !r.Allows(i, t.DType) {
				all = false
				break
			}
		}
		if all {
			return
		}
	}
	var have []string
	for i := 0; i < nargs; i++ {
		if t := tile(i); t != nil && restricted(info.DTypes, i) {
			have = append(have, fmt.Sprintf("%%%s is %s", t.Name, t.DType))
		}
	}
	bad(last, "%s: %s; a2a3 takes %s only (pto-isa %s static_asserts)", info.Name, strings.Join(have, ", "), rulesString(info), info.DTypeSource)
}

// restricted reports whether some rule limits operand i.
func restricted(rules []DTypeRule, i int) bool {
	for _, r := range rules {
		if i < len(r) && r[i] != nil {
			return true
		}
	}
	return false
}

func dtypeList(ts []DType, sep string) string {
	names := make([]string, len(ts))
	for i, t := range ts {
		names[i] = t.String()
	}
	return strings.Join(names, sep)
}

// rulesString spells an op's rules for messages and docs/isa.md: a rule
// that restricts one operand is its types ("f16, f32" for the destination,
// "a: i32, f16, f32" for another); several operands are "(dst f32, a
// f16|f32)", several rules joined by " or ".
func rulesString(info *OpInfo) string {
	var out []string
	for _, r := range info.DTypes {
		var parts []string
		for i, ts := range r {
			if ts == nil {
				continue
			}
			name := fmt.Sprint(i)
			if i < len(info.Operands) {
				name = info.Operands[i].Name
			}
			parts = append(parts, name+" "+dtypeList(ts, "|"))
		}
		if len(r) == 1 && len(info.DTypes) == 1 {
			return dtypeList(r[0], ", ")
		}
		if len(parts) == 1 && len(info.DTypes) == 1 {
			return strings.Replace(parts[0], " ", ": ", 1)
		}
		out = append(out, "("+strings.Join(parts, ", ")+")")
	}
	return strings.Join(out, " or ")
}

// AllowsDType reports whether some rule of the op's DTypes accepts dt for
// operand i (every type when the op has none).
func (info *OpInfo) AllowsDType(i int, dt DType) bool {
	if info.DTypes == nil {
		return true
	}
	for _, r := range info.DTypes {
		if r.Allows(i, dt) {
			return true
		}
	}
	return false
}
