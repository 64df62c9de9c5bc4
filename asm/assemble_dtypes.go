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
			bad(i, "%s: %%%s is %s; a2a3 takes %s only (pto-isa %s %s)", info.Name, t.Name, t.DType, dtypeList(union, ", "), info.DTypeSource, info.dtypeWhy())
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
	bad(last, "%s: %s; a2a3 takes %s only (pto-isa %s %s)", info.Name, strings.Join(have, ", "), rulesString(info), info.DTypeSource, info.dtypeWhy())
}

func (info *OpInfo) dtypeWhy() string {
	if info.DTypeWhy != "" {
		return info.DTypeWhy
	}
	return "static_asserts"
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

// DTypesAllow reports whether some rule of op's DTypes takes the element
// types of all its tile operands (true when the op has none): what the
// assembler checks, for an instruction it did not (Instr.StandIn).
func DTypesAllow(op *COp) bool {
	if op.Info == nil || op.Info.DTypes == nil {
		return true
	}
	for _, r := range op.Info.DTypes {
		all := true
		for i, a := range op.Args {
			if a.Kind == ArgTile && a.Tile != nil && !r.Allows(i, a.Tile.DType) {
				all = false
				break
			}
		}
		if all {
			return true
		}
	}
	return false
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

// checkLocDTypes refuses a move whose destination and source types the
// pto-isa path its locations select does not take (locDTypeRows). It
// reports whether a row decided the pair, so chkMove's same-dtype rule
// gives way to a path that converts (mat→bias widens f16 to f32).
func checkLocDTypes(d *opDef, op *COp, bad func(int, string, ...any) *Diagnostic) (decided bool) {
	args := op.Args
	if len(args) < 2 {
		return false
	}
	type end struct {
		name string
		loc  Loc // LocInvalid: GM
		dt   DType
	}
	ends := [2]end{}
	for i := range ends {
		switch a := args[i]; {
		case a.Kind == ArgTile && a.Tile != nil:
			ends[i] = end{"%" + a.Tile.Name, a.Tile.Loc, a.Tile.DType}
		case a.Kind == ArgGM && a.GM != nil:
			ends[i] = end{"@" + a.GM.Name, LocInvalid, a.GM.DType}
		default:
			return false
		}
	}
	atomic := false
	if a, ok := op.Attr("atomic"); ok && a.IsWord && a.Word == "add" {
		atomic = true
	}
	for _, r := range d.locDTypes {
		if r.atomic && !atomic || r.dst != LocInvalid && r.dst != ends[0].loc || r.src != LocInvalid && r.src != ends[1].loc {
			continue
		}
		decided = decided || !r.atomic
		ok, dstOK := false, false
		for _, rule := range r.rules {
			dstOK = dstOK || rule.Allows(0, ends[0].dt)
			ok = ok || rule.Allows(0, ends[0].dt) && rule.Allows(1, ends[1].dt)
		}
		if ok {
			continue
		}
		at := 1
		if !dstOK {
			at = 0
		}
		where := func(e end) string {
			if e.loc == LocInvalid {
				return "GM"
			}
			return e.loc.String()
		}
		what := ""
		if r.atomic {
			what = " #atomic=add"
		}
		bad(at, "%s%s: %s %s is %s, %s %s is %s; a2a3 takes %s only (pto-isa %s at 3186c381 static_asserts)",
			op.Info.Name, what, where(ends[0]), ends[0].name, ends[0].dt, where(ends[1]), ends[1].name, ends[1].dt,
			locRulesString(r.rules), r.source)
		return true
	}
	return decided
}

// locRulesString spells a location row's rules as rulesString does, with
// the operands named dst and src.
func locRulesString(rules []DTypeRule) string {
	info := &OpInfo{DTypes: rules, Operands: []OperandSpec{{Name: "dst"}, {Name: "src"}}}
	return rulesString(info)
}

// checkQuantOffset: tquant's i8 destination is pto-isa's INT8_SYM, which
// has no offset, and its u8 one INT8_ASYM, which adds the offset tile
// (TQuant.hpp:29-32, 44-45: TROWEXPANDADD of *offset, a null pointer when
// none is given). The element types alone are DTypes'.
func checkQuantOffset(op *COp, bad func(int, string, ...any) *Diagnostic) {
	args := op.Args
	if len(args) < 1 || args[0].Kind != ArgTile || args[0].Tile == nil {
		return
	}
	d := args[0].Tile
	hasOff := len(args) > 4 && args[4].Kind == ArgTile
	switch {
	case d.DType == U8 && !hasOff:
		bad(0, "tquant: %%%s is u8, the asymmetric form (INT8_ASYM), which adds an offset tile: give it after tmp (pto-isa include/pto/npu/a2a3/TQuant.hpp:31-32, 44-45 at 3186c381)", d.Name)
	case d.DType == I8 && hasOff:
		bad(4, "tquant: %%%s is i8, the symmetric form (INT8_SYM), which takes no offset: a u8 destination is the form with one (pto-isa include/pto/npu/a2a3/TQuant.hpp:29-32, 44-45 at 3186c381)", d.Name)
	}
}
