package mlir

import (
	"strconv"
	"strings"

	"github.com/ptoasm/ptoasm/asm"
)

// Token-list helpers the lowering uses to read an op's operands: balanced
// groups, top-level splits, keyword lookups and attribute dictionaries.

// group returns the tokens inside the bracket group opening at ts[i] and the
// index after its closing bracket; ok is false when ts[i] is not an opening
// bracket or the group does not close.
func group(ts []Tok, i int) (inner []Tok, next int, ok bool) {
	if i >= len(ts) || ts[i].Kind != KPunct {
		return nil, i, false
	}
	switch ts[i].Text {
	case "(", "[", "{", "<":
	default:
		return nil, i, false
	}
	depth := 0
	for j := i; j < len(ts); j++ {
		t := ts[j]
		if t.Kind != KPunct {
			continue
		}
		switch t.Text {
		case "(", "[", "{", "<":
			depth++
		case ")", "]", "}", ">":
			depth--
			if depth == 0 {
				return ts[i+1 : j], j + 1, true
			}
		}
	}
	return nil, i, false
}

// splitTop splits ts at every top-level (depth 0) token with text sep.
func splitTop(ts []Tok, sep string) [][]Tok {
	if len(ts) == 0 {
		return nil
	}
	var out [][]Tok
	depth, start := 0, 0
	for j, t := range ts {
		if t.Kind == KPunct {
			switch t.Text {
			case "(", "[", "{", "<":
				depth++
			case ")", "]", "}", ">":
				depth--
			}
		}
		if depth == 0 && t.is(sep) && t.Kind == KPunct {
			out = append(out, ts[start:j])
			start = j + 1
		}
	}
	return append(out, ts[start:])
}

// cutTop splits ts at its first top-level sep.
func cutTop(ts []Tok, sep string) (before, after []Tok, found bool) {
	depth := 0
	for j, t := range ts {
		if t.Kind == KPunct {
			switch t.Text {
			case "(", "[", "{", "<":
				depth++
			case ")", "]", "}", ">":
				depth--
			}
		}
		if depth == 0 && t.Kind == KPunct && t.Text == sep {
			return ts[:j], ts[j+1:], true
		}
	}
	return ts, nil, false
}

// keyGroup finds the top-level keyword kw followed (after an optional `=`) by a
// bracket group and returns the group's contents: `ins(...)`, `shape = [...]`.
func keyGroup(ts []Tok, kw string) ([]Tok, bool) {
	depth := 0
	for j, t := range ts {
		if t.Kind == KPunct {
			switch t.Text {
			case "(", "[", "{", "<":
				depth++
			case ")", "]", "}", ">":
				depth--
			}
			continue
		}
		if depth != 0 || t.Kind != KIdent || t.Text != kw {
			continue
		}
		k := j + 1
		if k < len(ts) && ts[k].is("=") {
			k++
		}
		if inner, _, ok := group(ts, k); ok {
			return inner, true
		}
	}
	return nil, false
}

// keyValue finds the top-level `kw = tokens` and returns the tokens up to the
// next top-level comma (or the end): `addr = %c0`, `valid_row = %r`.
func keyValue(ts []Tok, kw string) ([]Tok, bool) {
	depth := 0
	for j, t := range ts {
		if t.Kind == KPunct {
			switch t.Text {
			case "(", "[", "{", "<":
				depth++
			case ")", "]", "}", ">":
				depth--
			}
			continue
		}
		if depth == 0 && t.Kind == KIdent && t.Text == kw && j+1 < len(ts) && ts[j+1].is("=") {
			end := j + 2
			d := 0
			for end < len(ts) {
				u := ts[end]
				if u.Kind == KPunct {
					switch u.Text {
					case "(", "[", "{", "<":
						d++
					case ")", "]", "}", ">":
						d--
					}
				}
				if d == 0 && u.Kind == KPunct && (u.Text == "," || u.Text == ":") {
					break
				}
				if d == 0 && u.Kind == KIdent && end+1 < len(ts) && ts[end+1].is("=") && end > j+2 {
					break
				}
				end++
			}
			return ts[j+2 : end], true
		}
	}
	return nil, false
}

// attrDict collects `key = value` entries of every attribute dictionary in ts,
// at any depth (dictionaries sit after ops, inside ins(...), in `<{...}>`).
// Values are kept as token lists; the first entry of a key wins.
func attrDict(ts []Tok) map[string][]Tok {
	out := map[string][]Tok{}
	for j := 0; j < len(ts); j++ {
		if !ts[j].is("{") || ts[j].Kind != KPunct {
			continue
		}
		inner, _, ok := group(ts, j)
		if !ok {
			continue
		}
		for _, e := range splitTop(inner, ",") {
			if len(e) == 0 {
				continue
			}
			key := strings.Trim(e[0].Text, `"`)
			if _, dup := out[key]; dup {
				continue
			}
			if len(e) >= 2 && e[1].is("=") {
				out[key] = e[2:]
			} else {
				out[key] = nil
			}
		}
	}
	return out
}

// words returns every identifier in ts (enum words inside `#pto.pipe<PIPE_V>`,
// `<EVENT_ID0>`, `#pto<round_mode ROUND>`).
func words(ts []Tok) []Tok {
	var out []Tok
	for _, t := range ts {
		if t.Kind == KIdent {
			out = append(out, t)
		}
	}
	return out
}

func spanOf(ts []Tok) asm.Span {
	if len(ts) == 0 {
		return asm.Span{}
	}
	return asm.Span{Pos: ts[0].Span.Pos, End: ts[len(ts)-1].Span.End}
}

func text(ts []Tok) string {
	var b strings.Builder
	for i, t := range ts {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(t.Text)
	}
	return b.String()
}

// typeInfo is a decoded MLIR type: element type, dimensions, and for tile_buf
// and memref the location and layout.
type typeInfo struct {
	kind   string // ptr, tensor_view, partition_tensor_view, tile_buf, memref, scalar, pipe, other
	elem   string // MLIR element type (f16, i32, index, ...)
	dims   []int64
	loc    string
	vrow   int64 // -1: dynamic (`?`)
	vcol   int64
	bl, sl string
	frac   int64
}

// parseType decodes a type token list; ok is false for shapes it cannot read.
func parseType(ts []Tok) (typeInfo, bool) {
	var ti typeInfo
	if len(ts) == 0 {
		return ti, false
	}
	head := ts[0]
	var params []Tok
	switch {
	case head.Kind == KTypeAlias:
		ti.kind = strings.TrimPrefix(head.Text, "!pto.")
		if inner, _, ok := group(ts, 1); ok {
			params = inner
		}
	case head.Kind == KIdent && head.Text == "memref":
		ti.kind = "memref"
		inner, _, ok := group(ts, 1)
		if !ok {
			return ti, false
		}
		params = inner
	case head.is("<"):
		// An elided !pto. prefix: guess the kind from the parameters.
		inner, _, ok := group(ts, 0)
		if !ok {
			return ti, false
		}
		params = inner
		ti.kind = "tile_buf"
		if len(inner) == 1 {
			ti.kind = "ptr"
		} else if len(inner) >= 1 && inner[0].Kind == KDims {
			ti.kind = "partition_tensor_view"
		}
	case head.Kind == KIdent:
		ti.kind, ti.elem = "scalar", head.Text
		return ti, true
	default:
		return ti, false
	}
	switch ti.kind {
	case "ptr":
		if len(params) > 0 {
			ti.elem = params[0].Text
		}
		return ti, ti.elem != ""
	case "tensor_view", "partition_tensor_view", "memref", "tile":
		items := splitTop(params, ",")
		if len(items) == 0 {
			return ti, false
		}
		if !shapeOf(items[0], &ti) {
			return ti, false
		}
		if ti.kind == "memref" {
			ti.loc = "gm"
			for _, it := range items[1:] {
				for _, w := range words(it) {
					switch w.Text {
					case "gm", "vec", "mat", "left", "right", "acc", "bias", "scaling", "ub":
						ti.loc = w.Text
					}
				}
			}
			if ti.loc == "ub" {
				ti.loc = "vec"
			}
		}
		return ti, true
	case "tile_buf":
		return tileBuf(params, ti)
	}
	return ti, true
}

// shapeOf reads `16x16xf16`, `?x?xf32` or `f32` into ti.dims and ti.elem; a
// dynamic dimension is -1.
func shapeOf(ts []Tok, ti *typeInfo) bool {
	if len(ts) == 1 && ts[0].Kind == KIdent {
		ti.elem = ts[0].Text
		return true
	}
	if len(ts) != 2 || ts[0].Kind != KDims || ts[1].Kind != KIdent {
		return false
	}
	for _, d := range strings.Split(strings.TrimSuffix(ts[0].Text, "x"), "x") {
		if d == "?" {
			ti.dims = append(ti.dims, -1)
			continue
		}
		v, err := strconv.ParseInt(d, 10, 64)
		if err != nil {
			return false
		}
		ti.dims = append(ti.dims, v)
	}
	ti.elem = ts[1].Text
	return true
}

// tileBuf reads the legacy key=value form (`loc=vec, dtype=f32, rows=16, ...`)
// or the compact form (`vec, 16x16xf32, valid=16x?`).
func tileBuf(params []Tok, ti typeInfo) (typeInfo, bool) {
	ti.kind = "tile_buf"
	ti.vrow, ti.vcol = -2, -2 // -2: not given, defaults to the full shape
	num := func(ts []Tok) int64 {
		if len(ts) == 1 && ts[0].is("?") {
			return -1
		}
		if len(ts) == 1 && ts[0].Kind == KInt {
			v, _ := strconv.ParseInt(ts[0].Text, 10, 64)
			return v
		}
		return -3
	}
	for i, item := range splitTop(params, ",") {
		if len(item) >= 2 && item[1].is("=") {
			v := item[2:]
			switch item[0].Text {
			case "loc":
				ti.loc = text(v)
			case "dtype":
				ti.elem = text(v)
			case "rows":
				ti.dims = append(ti.dims[:0:0], num(v), colsOr(ti.dims))
			case "cols":
				ti.dims = []int64{rowsOr(ti.dims), num(v)}
			case "v_row":
				ti.vrow = num(v)
			case "v_col":
				ti.vcol = num(v)
			case "blayout":
				ti.bl = text(v)
			case "slayout":
				ti.sl = text(v)
			case "fractal":
				ti.frac = num(v)
			case "valid":
				// compact `valid=16x?`: Dims "16x" then "?" or an Int.
				if len(v) == 2 && v[0].Kind == KDims {
					r := strings.TrimSuffix(v[0].Text, "x")
					if r == "?" {
						ti.vrow = -1
					} else {
						ti.vrow, _ = strconv.ParseInt(r, 10, 64)
					}
					ti.vcol = num(v[1:])
				}
			}
			continue
		}
		// compact positional items: location, then shape.
		switch {
		case i == 0 && len(item) == 1 && item[0].Kind == KIdent:
			ti.loc = item[0].Text
		case len(item) == 2 && item[0].Kind == KDims:
			var sh typeInfo
			if shapeOf(item, &sh) && len(sh.dims) == 2 {
				ti.dims, ti.elem = sh.dims, sh.elem
			}
		}
	}
	if len(ti.dims) != 2 || ti.dims[0] <= 0 || ti.dims[1] <= 0 || ti.loc == "" || ti.elem == "" {
		return ti, false
	}
	return ti, true
}

func rowsOr(d []int64) int64 {
	if len(d) > 0 {
		return d[0]
	}
	return 0
}

func colsOr(d []int64) int64 {
	if len(d) > 1 {
		return d[1]
	}
	return 0
}

// dtypeName maps an MLIR element type to a PTO-AS dtype.
func dtypeName(e string) (string, bool) {
	switch e {
	case "f16", "bf16", "f32", "i8", "i16", "i32", "i64":
		return e, true
	case "ui8", "u8":
		return "u8", true
	case "ui16", "u16":
		return "u16", true
	case "ui32", "u32":
		return "u32", true
	case "ui64", "u64":
		return "u64", true
	case "si8":
		return "i8", true
	case "si16":
		return "i16", true
	case "si32":
		return "i32", true
	}
	if strings.HasPrefix(e, "f8") || strings.HasPrefix(e, "f4") {
		// FP8 (A5 mx formats): a byte type with the same footprint; values
		// are not modelled.
		return "u8", true
	}
	return "", false
}
