package mlir

import (
	"strconv"
	"strings"

	"github.com/ptoasm/ptoasm/asm"
)

// The pto dialect: tiles, views, DPS tile ops, synchronisation, builtins and
// the cube↔vector FIFO.

// declTile declares a tile of type ti at an explicit address (addr) or the next
// free place of its buffer. vr/vc are dynamic valid-shape operands.
// isLayoutName says whether s is one identifier, as a layout value printed
// into PTO-AS must be (the assembler then checks it is a layout it knows).
func isLayoutName(s string) bool {
	for i, c := range s {
		if !(c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || i > 0 && '0' <= c && c <= '9') {
			return false
		}
	}
	return s != ""
}

func (k *kctx) declTile(sp asm.Span, hint string, ti typeInfo, addr, vr, vc *val) *val {
	dt, ok := dtypeName(ti.elem)
	if !ok {
		k.errf(sp, "tile element type %s is not supported", ti.elem)
		return &val{}
	}
	loc := ti.loc
	if loc == "ub" {
		loc = "vec"
	}
	l, ok := asm.ParseLoc(loc)
	if !ok {
		k.errf(sp, "tile location %s is not supported", ti.loc)
		return &val{}
	}
	rows, cols, padCols := tileShape(ti, dt)
	if rows <= 0 || cols <= 0 {
		k.errf(sp, "tile shape must be static")
		return &val{}
	}
	if padCols > 0 {
		ti.bl = ""
	}
	name := sanitize(hint)
	for k.tiles[name] {
		name += "_"
	}
	k.tiles[name] = true
	tv := &tileVal{name: name, loc: loc, dtype: dt, rows: rows, cols: cols, vrows: rows, vcols: cols,
		nd: (ti.sl == "" || ti.sl == "none_box" || ti.sl == "none") && ti.bl != "col_major", validStatic: ti.vrow != -1 && ti.vcol != -1,
		bl: ti.bl, sl: ti.sl}
	if k.section != "" {
		vecCore := k.kind == "aiv"
		if (l == asm.LocVec) != vecCore {
			tv.skip = true
			return &val{kind: vTile, tile: tv}
		}
	}
	d := &asm.TileDecl{Span: sp, Name: name, Loc: loc, DType: dt, Rows: num(sp, rows), Cols: num(sp, cols)}
	validDim := func(t int64, dyn *val, full int64) asm.Expr {
		switch {
		case t >= 1 && t < full:
			return num(sp, t)
		case t == -1 && dyn != nil && isLit(dyn) && dyn.v >= 1 && dyn.v < full:
			return num(sp, dyn.v)
		}
		// Any other dynamic valid dimension (`?`) is the full one: PTO-AS
		// valid shapes are static, and PTOAS's alias analysis uses rows×cols.
		return nil
	}
	if padCols > cols {
		d.Cols = num(sp, padCols)
		d.VRows, d.VCols = num(sp, rows), num(sp, cols)
		if v := validDim(ti.vrow, vr, rows); v != nil {
			d.VRows = v
		}
		if v := validDim(ti.vcol, vc, cols); v != nil {
			d.VCols = v
		}
		tv.cols = padCols
		tv.vrows, tv.vcols = d.VRows.(*asm.Num).Int, d.VCols.(*asm.Num).Int
	} else if len(ti.dims) == 2 {
		d.VRows = validDim(ti.vrow, vr, rows)
		d.VCols = validDim(ti.vcol, vc, cols)
		if d.VRows != nil || d.VCols != nil {
			if d.VRows == nil {
				d.VRows = num(sp, rows)
			}
			if d.VCols == nil {
				d.VCols = num(sp, cols)
			}
			tv.vrows, tv.vcols = d.VRows.(*asm.Num).Int, d.VCols.(*asm.Num).Int
		}
	}
	// Register valid regions: the tiles a set_validshape updates, and a
	// `?` dimension whose alloc operand is computed at run time (a loop's
	// select), so every instruction naming the tile covers the region the
	// path computed and the machine checks it against the tile.
	if padCols == 0 && len(ti.dims) == 2 && (k.setValid[hint] || computedValid(ti.vrow, vr) || computedValid(ti.vcol, vc)) {
		k.regValid(sp, tv, d, vr, vc)
	}
	for _, kv := range [][2]string{{"blayout", ti.bl}, {"slayout", ti.sl}} {
		switch {
		case kv[1] == "":
		case !isLayoutName(kv[1]):
			// The value becomes a PTO-AS name: one that is not (`non _box`,
			// two tokens) would print a translation that does not parse.
			k.errf(sp, "%s %s is not a layout name (none_box, row_major, col_major)", kv[0], kv[1])
		default:
			d.Attrs = append(d.Attrs, &asm.Attr{Span: sp, Key: kv[0], Val: &asm.Name{Span: sp, Name: kv[1]}})
		}
	}
	bytes := rows * tv.cols * int64(dtypeSize(dt))
	space := l.Space()
	switch {
	case addr != nil && addr.kind == vScalar && addr.static:
		d.Addr = addr.x
		tv.addr, tv.known, tv.addrV = addr.x, addr.known, addr.v
		if addr.known {
			k.next[space] = max(k.next[space], alignUp(addr.v+bytes, asm.SpaceAlign(space)))
		}
	default:
		a, planned := int64(0), false
		if op := k.cur; op != nil && allocOps[op.Name] && k.plan != nil {
			a, planned = k.plan.addr[op]
		}
		if !planned {
			// Not a buffer PlanMemory places: after everything it
			// placed, or at 0 when that runs past the end (documented).
			a = alignUp(k.next[space], asm.SpaceAlign(space))
			if a+bytes > asm.SpaceCapacity(space) {
				a = 0
			} else {
				k.next[space] = a + bytes
			}
		}
		d.Addr = num(sp, a)
		tv.addr, tv.known, tv.addrV = d.Addr, true, a
	}
	k.emit(d)
	return &val{kind: vTile, tile: tv}
}

// computedValid is whether a `?` valid dimension takes a value computed at
// run time (not a literal the tile type can hold).
func computedValid(t int64, dyn *val) bool {
	return t == -1 && dyn != nil && dyn.kind == vScalar && dyn.x != nil && !isLit(dyn)
}

// setValidTargets collects the values a pto.set_validshape in r updates,
// and the tiles a pto.tassign rebound into them: the rebinding is in place
// (the tassign case of pto), so the allocation carries the registers.
func setValidTargets(r *Region, out map[string]bool) {
	src := map[string]string{}
	var targets []string
	var walk func(r *Region)
	walk = func(r *Region) {
		if r == nil {
			return
		}
		for _, b := range r.Blocks {
			for _, op := range b.Ops {
				if len(op.Toks) > 0 && op.Toks[0].Kind == KValue {
					switch op.Name {
					case "pto.set_validshape":
						targets = append(targets, op.Toks[0].Text)
					case "pto.tassign":
						if len(op.Results) == 1 {
							src[op.Results[0].Name] = op.Toks[0].Text
						}
					}
				}
				for _, sub := range op.Regions {
					walk(sub)
				}
			}
		}
	}
	walk(r)
	for _, t := range targets {
		for n := 0; n <= len(src) && !out[t]; n++ {
			out[t] = true
			if s, ok := src[t]; ok {
				t = s
			}
		}
	}
}

// regValid gives tile tv a valid region in registers (docs/language.md
// "Tile views"): `valid [%vr, %vc]`, each register set here from the
// allocation's operand (the full dimension without one) and by every
// pto.set_validshape of the tile, so each instruction naming the tile sees
// the region last set on its path, as PTOAS's SetValidShape on the tile
// object gives it.
func (k *kctx) regValid(sp asm.Span, tv *tileVal, d *asm.TileDecl, vr, vc *val) {
	tv.vrReg, tv.vcReg = k.reg(tv.name+"_vrow"), k.reg(tv.name+"_vcol")
	init := func(dyn *val, full int64) asm.Expr {
		if dyn != nil && dyn.kind == vScalar && dyn.x != nil {
			return dyn.x
		}
		return num(sp, full)
	}
	k.emit(&asm.Let{Span: sp, Reg: tv.vrReg, X: init(vr, tv.rows)})
	k.emit(&asm.Let{Span: sp, Reg: tv.vcReg, X: init(vc, tv.cols)})
	d.VRows, d.VCols = &asm.Ref{Span: sp, Name: tv.vrReg}, &asm.Ref{Span: sp, Name: tv.vcReg}
	tv.vrows, tv.vcols = tv.rows, tv.cols
}

func alignUp(x, a int64) int64 { return (x + a - 1) / a * a }

// tileShape is a tile type's rows and columns (a rank > 2 shape folds into
// rows), and padCols > 0 when the tile is padded: an unboxed tile moves in
// 32-byte rows (columns when col-major); PTOAS accepts narrower ones (16 ×
// i8, 8 × 1 u8). They become row-major with the row padded to 32 bytes and
// the real shape as the valid shape, which covers at least the bytes the
// tile really has.
func tileShape(ti typeInfo, dt string) (rows, cols, padCols int64) {
	rows, cols = 1, 1
	switch {
	case len(ti.dims) == 1:
		cols = ti.dims[0]
	case len(ti.dims) >= 2:
		rows = asm.DimProduct(ti.dims[:len(ti.dims)-1])
		cols = ti.dims[len(ti.dims)-1]
	}
	// Past 2^40 the shape is refused as out of range; cols*es must not wrap
	// into a plausible padding first.
	sane := rows > 0 && cols > 0 && rows <= 1<<40 && cols <= 1<<40
	if unboxed := ti.sl == "" || ti.sl == "none_box" || ti.sl == "none"; unboxed && sane && len(ti.dims) == 2 {
		es := int64(dtypeSize(dt))
		major := cols
		if ti.bl == "col_major" {
			major = rows
		}
		if major*es%32 != 0 {
			padCols = alignUp(cols*es, 32) / es
		}
	}
	return rows, cols, padCols
}

func dtypeSize(dt string) int {
	d, ok := asm.ParseDType(dt)
	if !ok {
		return 1
	}
	return d.Size()
}

// alias declares a new tile over part of an existing one: subset, bind_tile,
// treshape, bitcast. off is the byte offset from the parent's address.
func (k *kctx) alias(op *Op, parent *val, ti typeInfo, off *val) *val {
	name, sp := k.result(op)
	if parent.kind != vTile {
		k.errf(op.Span, "%s: operand is not a tile", op.Name)
		return &val{}
	}
	p := parent.tile
	if p.skip {
		return &val{kind: vTile, tile: &tileVal{name: p.name, skip: true}}
	}
	addr := &val{kind: vScalar, x: p.addr, static: true, known: p.known, v: p.addrV}
	if off != nil {
		addr = addVal(addr, off)
	}
	if ti.loc == "" {
		ti.loc = p.loc
	}
	if ti.elem == "" {
		ti.elem = p.dtype
	}
	if len(ti.dims) == 0 {
		ti.dims = []int64{p.rows, p.cols}
	}
	if !addr.static {
		addr = &val{kind: vScalar, x: p.addr, static: true, known: p.known, v: p.addrV}
	}
	return k.declTile(sp, name, ti, addr, nil, nil)
}

// dps is a decoded `ins(...) outs(...)` operand list.
type dps struct {
	ins, outs   []*val
	inTok       []Tok
	outTok      []Tok
	attrs       map[string][]Tok
	hasOutsType bool
}

func (k *kctx) dps(op *Op) dps {
	d := dps{attrs: attrDict(op.Toks)}
	read := func(kw string) ([]*val, []Tok) {
		inner, ok := keyGroup(op.Toks, kw)
		if !ok {
			return nil, nil
		}
		// Both `ins(%a, %b : T, T)` and `ins(%a : T, %b : T)` occur: every
		// comma-separated part that starts with a value is an operand.
		var vs []*val
		var ts []Tok
		for _, it := range splitTop(inner, ",") {
			if len(it) == 0 || it[0].Kind != KValue {
				continue // a type, or an attribute dictionary standing as an operand
			}
			vs = append(vs, k.use(it[0]))
			ts = append(ts, it[0])
		}
		return vs, ts
	}
	d.ins, d.inTok = read("ins")
	d.outs, d.outTok = read("outs")
	if d.outs == nil {
		for i, t := range op.Toks {
			if t.Kind == KIdent && t.Text == "outs" && i+1 < len(op.Toks) && op.Toks[i+1].is(":") {
				d.hasOutsType = true
			}
		}
	}
	// keyword extras after the dictionaries: pad_value = %v : f32
	for _, kw := range []string{"pad_value"} {
		if v, ok := keyValue(op.Toks, kw); ok && len(v) > 0 && v[0].Kind == KValue {
			d.attrs[kw] = v
		}
	}
	return d
}

func (d dps) tiles(which []*val, toks []Tok) ([]*val, []Tok) {
	var vs []*val
	var ts []Tok
	for i, v := range which {
		if v.kind == vTile {
			vs = append(vs, v)
			ts = append(ts, toks[i])
		}
	}
	return vs, ts
}

func (d dps) scalars() []*val {
	var out []*val
	for _, v := range d.ins {
		if v.kind == vScalar {
			out = append(out, v)
		}
	}
	return out
}

func tileRef(v *val, t Tok) asm.Expr {
	return &asm.Ref{Span: t.Span, Name: v.tile.name, Index: v.tile.index}
}

func floatArg(sp asm.Span, v *val) asm.Expr {
	switch {
	case v == nil:
		return fnum(sp, DefaultFloatArg)
	case v.isF:
		return fnum(sp, v.f)
	case v.known:
		return fnum(sp, float64(v.v))
	}
	return fnum(sp, DefaultFloatArg)
}

// gmRef addresses the first element of view v for a transfer of tile tv. The
// tensor grows to hold the transfer's window at the default argument values.
func (k *kctx) gmRef(v *val, t Tok, tv *tileVal) asm.Expr {
	vw := v.view
	td := vw.tensor
	g := &asm.GMRef{Span: t.Span, Name: td.name}
	if !td.shaped {
		k.shapeTensor(td, vw, vw.shape, vw.strides, "")
	}
	lin := vw.lin
	if lin == nil {
		lin = lit(t.Span, 0)
	}
	td.refs = append(td.refs, gmUse{g: g, lin: lin, geo: viewGeo(vw, tv.vrows, tv.vcols), rows: tv.vrows, cols: tv.vcols})
	if lin.known && lin.v >= 0 {
		td.minExt = max(td.minExt, lin.v+tv.vrows*tv.vcols)
	}
	if n := len(td.dimV); vw.natural && n >= 2 && len(vw.idx) == n && vw.idx[n-2].known && vw.idx[n-1].known {
		if td.minDim == nil {
			td.minDim = make([]int64, n)
		}
		td.minDim[n-2] = max(td.minDim[n-2], vw.idx[n-2].v+tv.vrows)
		td.minDim[n-1] = max(td.minDim[n-1], vw.idx[n-1].v+tv.vcols)
	}
	if vw.natural && len(vw.idx) == len(td.dims) {
		for _, x := range vw.idx {
			g.Index = append(g.Index, x.x)
		}
		return g
	}
	td.flat = true
	n := len(td.dims)
	for d := 0; d < n; d++ {
		x := lin
		stride := lit(t.Span, 1)
		for j := d + 1; j < n; j++ {
			stride = mulVal(stride, &val{kind: vScalar, x: td.dims[j], static: true, known: true, v: td.dimV[j]})
		}
		if !(isLit(stride) && stride.v == 1) {
			x = binVal(t.Span, "/", x, stride)
		}
		if d > 0 {
			x = binVal(t.Span, "%", x, &val{kind: vScalar, x: td.dims[d], static: true, known: true, v: td.dimV[d]})
		}
		g.Index = append(g.Index, x.x)
	}
	return g
}

var syncOpPipe = map[string]string{"TLOAD": "MTE2", "TSTORE_VEC": "MTE3", "TSTORE_ACC": "FIX", "TMOV_M2L": "MTE1",
	"TMOV_M2B": "MTE1", "TMOV_M2S": "FIX", "TMOV_M2V": "V", "TMOV_V2M": "FIX", "TMATMUL": "M", "TVEC": "V", "TVECWAIT_EVENT": "V"}

// pipeWord maps PIPE_X / op-type words to our pipe names.
func pipeWord(w string) (string, bool) {
	if p, ok := syncOpPipe[w]; ok {
		return p, true
	}
	if strings.HasPrefix(w, "VIRTUAL_PIPE_MTE2") {
		return "MTE2", true
	}
	p, ok := asm.ParsePipe(w)
	if !ok {
		return "", false
	}
	return p.String(), true
}

func (k *kctx) pipeArgs(op *Op, ts []Tok) (pipes []asm.Expr, event asm.Expr, ok bool) {
	for _, w := range words(ts) {
		if strings.HasPrefix(w.Text, "EVENT_ID") {
			n, err := strconv.Atoi(strings.TrimPrefix(w.Text, "EVENT_ID"))
			if err != nil || n < 0 || n > 15 {
				k.errf(w.Span, "bad event %s", w.Text)
				return nil, nil, false
			}
			event = num(w.Span, int64(n))
			continue
		}
		if strings.HasPrefix(w.Text, "pto.") || w.Text == "pto" {
			continue
		}
		p, okp := pipeWord(w.Text)
		if !okp {
			k.errf(w.Span, "%s: pipe %s is not an A2/A3 pipe", op.Name, w.Text)
			return nil, nil, false
		}
		pipes = append(pipes, &asm.Name{Span: w.Span, Name: p})
	}
	return pipes, event, true
}

// pto lowers one pto.* op.
func (k *kctx) pto(op *Op) {
	name := strings.TrimPrefix(op.Name, "pto.")
	ts := op.Toks
	rname, rsp := k.result(op)
	switch name {
	// ---- tiles and views ----
	case "alloc_tile", "declare_tile", "declare_tile_memref":
		ti, ok := parseType(lastType(ts))
		if name != "alloc_tile" {
			ti, ok = parseType(afterArrow(ts))
		}
		if !ok {
			k.errf(op.Span, "%s: cannot read the tile type", op.Name)
			return
		}
		var addr, vr, vc *val
		if v, ok := keyValue(ts, "addr"); ok && len(v) == 1 {
			addr = k.use(v[0])
		}
		if v, ok := keyValue(ts, "valid_row"); ok && len(v) == 1 {
			vr = k.use(v[0])
		}
		if v, ok := keyValue(ts, "valid_col"); ok && len(v) == 1 {
			vc = k.use(v[0])
		}
		k.define(op, k.declTile(rsp, rname, ti, addr, vr, vc))
	case "pointer_cast":
		inner, next, ok := group(ts, 0)
		ti, okt := parseType(lastType(ts))
		if !ok || !okt || len(inner) == 0 {
			k.errf(op.Span, "pto.pointer_cast: expected `(%%addr) : memref<...>`")
			return
		}
		_ = next
		k.define(op, k.declTile(rsp, rname, ti, k.use(inner[0]), nil, nil))
	case "make_tensor_view":
		k.makeView(op)
	case "partition_view":
		k.partitionView(op)
	case "get_tensor_view_dim":
		if len(ts) >= 3 && ts[0].Kind == KValue && ts[2].Kind == KValue {
			v, d := k.use(ts[0]), k.use(ts[2])
			if v.kind == vView && d.known && int(d.v) < len(v.view.shape) && d.v >= 0 {
				k.define(op, v.view.shape[d.v])
				return
			}
		}
		k.errf(op.Span, "pto.get_tensor_view_dim: needs a view and a constant dimension")
	case "addptr":
		if len(ts) >= 3 && ts[0].Kind == KValue && ts[2].Kind == KValue {
			p, off := k.use(ts[0]), k.use(ts[2])
			if p.kind == vView && off.kind == vScalar {
				nv := *p.view
				nv.lin = addVal(orZero(nv.lin, rsp), off)
				nv.natural = false
				nv.idx = nil
				k.define(op, &val{kind: vView, view: &nv})
				return
			}
		}
		k.errf(op.Span, "pto.addptr: expected `%%ptr, %%offset`")
	case "subset":
		k.subset(op)
	case "bind_tile", "treshape", "bitcast", "tassign":
		if len(ts) == 0 || ts[0].Kind != KValue {
			k.errf(op.Span, "%s needs a tile operand", op.Name)
			return
		}
		parent := k.use(ts[0])
		ti, _ := parseType(afterArrow(ts))
		if name == "tassign" && len(ts) >= 3 && ts[2].Kind == KValue && parent.kind == vTile {
			// tassign gives the tile a new address.
			t := *parent.tile
			a := k.use(ts[2])
			if a.kind == vScalar && !a.static && !parent.tile.skip {
				// A run-time address (a loop's ring slot): the tile
				// object is rebound in place, as PTOAS's EmitC does
				// (TASSIGN on the same Tile), so the result is the
				// tile itself and every later use sees the binding.
				k.instr(op, "tassign", tileRef(parent, ts[0]), a.x)
				k.define(op, parent)
				return
			}
			if a.kind == vScalar && a.static {
				t.addr, t.known, t.addrV = a.x, a.known, a.v
			}
			k.define(op, k.alias(op, &val{kind: vTile, tile: &t}, typeInfo{loc: t.loc, elem: t.dtype, dims: []int64{t.rows, t.cols}}, nil))
			return
		}
		if ti.kind != "tile_buf" && ti.kind != "memref" {
			ti = typeInfo{}
		}
		k.define(op, k.alias(op, parent, ti, nil))
	case "set_validshape":
		// SetValidShape updates the tile object in place: the tile's
		// valid registers (regValid) take the new region.
		if len(ts) < 5 || ts[0].Kind != KValue || ts[2].Kind != KValue || ts[4].Kind != KValue {
			k.errf(op.Span, "pto.set_validshape: expected `%%tile, %%valid_row, %%valid_col`")
			return
		}
		t, r, c := k.use(ts[0]), k.use(ts[2]), k.use(ts[4])
		if t.kind != vTile || r.kind != vScalar || c.kind != vScalar {
			k.errf(op.Span, "pto.set_validshape: expected a tile and two index values")
			return
		}
		if t.tile.skip {
			return
		}
		if t.tile.vrReg == "" {
			k.errf(op.Span, "pto.set_validshape: %s is not a tile allocated with v_row=? and v_col=? in this function", ts[0].Text)
			return
		}
		k.emit(&asm.Let{Span: op.Span, Reg: t.tile.vrReg, X: r.x})
		k.emit(&asm.Let{Span: op.Span, Reg: t.tile.vcReg, X: c.x})
	// ---- builtins ----
	case "get_block_idx":
		k.l.readsBlock = true
		k.define(op, &val{kind: vScalar, x: &asm.Name{Span: rsp, Name: "block_idx"}})
	case "get_block_num":
		k.define(op, &val{kind: vScalar, x: &asm.Name{Span: rsp, Name: "block_num"}})
	case "get_subblock_idx":
		if k.mixed {
			k.define(op, &val{kind: vScalar, x: &asm.Name{Span: rsp, Name: "subblock_idx"}})
		} else {
			k.define(op, lit(rsp, 0))
		}
	case "get_subblock_num":
		if k.mixed && k.kind == "aiv" {
			k.define(op, lit(rsp, 2))
		} else {
			k.define(op, lit(rsp, 1))
		}
	// ---- synchronisation ----
	case "set_flag", "wait_flag", "set_flag_dyn", "wait_flag_dyn", "record_event", "wait_event":
		inner, _, ok := group(ts, 0)
		if !ok {
			k.errf(op.Span, "%s: expected [src, dst, event]", op.Name)
			return
		}
		parts := splitTop(inner, ",")
		if len(parts) != 3 {
			k.errf(op.Span, "%s: expected [src, dst, event]", op.Name)
			return
		}
		pipes, ev, ok := k.pipeArgs(op, append(append([]Tok{}, parts[0]...), parts[1]...))
		if !ok {
			return
		}
		if len(pipes) != 2 {
			k.errf(op.Span, "%s: expected two pipes", op.Name)
			return
		}
		if len(parts[2]) == 1 && parts[2][0].Kind == KValue {
			ev = k.use(parts[2][0]).x
		} else if _, e, ok := k.pipeArgs(op, parts[2]); ok && e != nil {
			ev = e
		}
		if ev == nil {
			k.errf(spanOf(parts[2]), "%s: bad event", op.Name)
			return
		}
		mn := "set_flag"
		if strings.HasPrefix(name, "wait") {
			mn = "wait_flag"
		}
		k.instr(op, mn, pipes[0], pipes[1], ev)
	case "barrier", "barrier_sync":
		pipes, _, ok := k.pipeArgs(op, ts)
		if !ok || len(pipes) != 1 {
			k.errf(op.Span, "%s: expected one pipe", op.Name)
			return
		}
		k.instr(op, "pipe_barrier", pipes[0])
	case "sync.set", "sync.wait":
		parts := splitTop(ts, ",")
		if len(parts) < 2 {
			k.errf(op.Span, "%s: expected <PIPE>, id", op.Name)
			return
		}
		pipes, _, ok := k.pipeArgs(op, parts[0])
		if !ok || len(pipes) != 1 {
			return
		}
		idTs := parts[1]
		if j := indexTok(idTs, "{"); j >= 0 {
			idTs = idTs[:j]
		}
		var id asm.Expr
		switch {
		case len(idTs) == 1 && idTs[0].Kind == KInt:
			v, _ := strconv.ParseInt(idTs[0].Text, 10, 64)
			id = num(idTs[0].Span, v)
		case len(idTs) == 1 && idTs[0].Kind == KValue:
			id = k.use(idTs[0]).x
		default:
			k.errf(spanOf(idTs), "%s: bad id", op.Name)
			return
		}
		if name == "sync.wait" {
			k.instr(op, "ffts_wait", id)
			return
		}
		mode := int64(2)
		if m, ok := attrDict(ts)["ffts_mode"]; ok && len(m) > 0 && m[0].Kind == KInt {
			mode, _ = strconv.ParseInt(m[0].Text, 10, 64)
		}
		in := k.instr(op, "ffts_set", pipes[0], id)
		in.Attrs = []*asm.Attr{{Span: op.Span, Key: "mode", Val: num(op.Span, mode)}}
	case "declare_eventid_array":
		ti, _ := parseType(afterArrow(ts))
		n := 8
		_ = ti
		if a := afterArrow(ts); len(a) >= 3 {
			if inner, _, ok := group(a, 1); ok && len(inner) == 1 {
				n, _ = strconv.Atoi(inner[0].Text)
			}
		}
		prefix := k.reg(rname)
		for i := 0; i < n && i < 64; i++ {
			k.emit(&asm.Let{Span: op.Span, Reg: prefix + "_" + strconv.Itoa(i), X: num(op.Span, 0)})
		}
		k.define(op, &val{kind: vEvents, events: prefix, nev: n})
	case "eventid_array_get", "eventid_array_set":
		if len(ts) < 2 || ts[0].Kind != KValue {
			k.errf(op.Span, "%s: expected %%array[%%i]", op.Name)
			return
		}
		arr := k.use(ts[0])
		inner, next, ok := group(ts, 1)
		if arr.kind != vEvents || !ok || len(inner) != 1 {
			k.errf(op.Span, "%s: expected %%array[%%i]", op.Name)
			return
		}
		idx := k.use(inner[0])
		if idx.kind != vScalar || idx.isF || (idx.known && (idx.v < 0 || idx.v >= int64(arr.nev))) {
			k.errf(inner[0].Span, "%s: the index must be an integer in 0..%d", op.Name, arr.nev-1)
			return
		}
		elem := func(i int) *val {
			return &val{kind: vScalar, x: &asm.Ref{Span: rsp, Name: arr.events + "_" + strconv.Itoa(i)}}
		}
		var set *val
		if name == "eventid_array_set" {
			rest := ts[next:]
			if len(rest) < 2 || !rest[0].is(",") || rest[1].Kind != KValue {
				k.errf(op.Span, "%s: expected , %%value", op.Name)
				return
			}
			if set = k.useInt(rest[1], op.Name); set == nil {
				return
			}
		}
		if idx.known {
			if set == nil {
				k.define(op, elem(int(idx.v)))
			} else {
				k.emit(&asm.Let{Span: op.Span, Reg: arr.events + "_" + strconv.FormatInt(idx.v, 10), X: set.x})
			}
			return
		}
		// A computed index selects among the element registers: a get is
		// Σ (idx == i)·e_i, a set rewrites every element with
		// (idx == i)·v + (idx != i)·e_i, so each path of the run (and of the
		// static pass, which splits on idx) uses the element it names.
		n := min(arr.nev, 64)
		if set == nil {
			var sum *val
			for i := 0; i < n; i++ {
				term := binVal(rsp, "*", binVal(rsp, "==", idx, lit(rsp, int64(i))), elem(i))
				if sum == nil {
					sum = term
				} else {
					sum = binVal(rsp, "+", sum, term)
				}
			}
			// bound now: a later set must not change what this get read
			r := k.reg(rname)
			k.emit(&asm.Let{Span: op.Span, Reg: r, X: sum.x})
			k.define(op, &val{kind: vScalar, x: &asm.Ref{Span: rsp, Name: r}})
			return
		}
		for i := 0; i < n; i++ {
			hit := binVal(op.Span, "==", idx, lit(op.Span, int64(i)))
			x := binVal(op.Span, "+", binVal(op.Span, "*", hit, set), binVal(op.Span, "*", binVal(op.Span, "-", lit(op.Span, 1), hit), elem(i)))
			k.emit(&asm.Let{Span: op.Span, Reg: arr.events + "_" + strconv.Itoa(i), X: x.x})
		}
	case "load_scalar", "store_scalar":
		k.scalarGM(op, name, rname, rsp)
	case "set_ffts", "tsync", "get_buf", "rls_buf", "print", "trap", "tgetval", "tsetval",
		"tfree_from_aic", "tfree_from_aiv", "tfree":
		// No A2/A3 hazard effect the model tracks (S-pipe scalar work, FFTS base
		// set-up, debug output); scalar results are opaque.
		if len(op.Results) > 0 {
			k.define(op, &val{kind: vScalar, x: num(rsp, 0), static: true, known: true})
		}
	// ---- SDMA async sessions ----
	case "build_async_session":
		// The session (scratch tile, GM workspace) is the SDMA engine's
		// bookkeeping; the copies below carry the effects.
		k.define(op, lit(rsp, 0))
	case "tput_async", "tget_async":
		k.asyncCopy(op, name, rname, rsp)
	case "wait_async_event":
		inner, ok := groupAt(ts, 0)
		if !ok || len(inner) == 0 || inner[0].Kind != KValue {
			k.errf(op.Span, "%s: expected (%%event, %%session)", op.Name)
			return
		}
		k.instr(op, "wait_async", k.use(inner[0]).x)
		k.define(op, lit(rsp, 1))
	case "test_async_event":
		// A poll orders nothing; "not done yet" keeps every later wait.
		k.define(op, lit(rsp, 0))
	// ---- cube <-> vector FIFO ----
	case "reserve_buffer", "import_reserved_buffer":
		k.define(op, k.reservedBase(op, name))
	case "aic_initialize_pipe", "aiv_initialize_pipe":
		// PTOAS lowers a frontend pipe to an l2g2l pipe of 8 slots, or 4
		// when one pipe carries both directions
		// (lib/PTO/Transforms/PTOLowerFrontendPipeOpsPass.cpp at a56b18c3,
		// lowerSingleDirectionFrontendInit / lowerBidirectionalFrontendInit).
		dir := intAttr(ts, "dir_mask", 1)
		slots := int64(8)
		if dir == 3 {
			slots = 4
		}
		var buf *val
		cons := map[int64]*val{}
		if g, ok := groupAt(ts, afterDict(ts)); ok {
			for _, it := range splitTop(g, ",") {
				if len(it) < 3 || !it[1].is("=") || it[2].Kind != KValue {
					continue
				}
				switch it[0].Text {
				case "gm_slot_buffer":
					buf = k.use(it[2])
				case "c2v_consumer_buf":
					cons[1] = k.use(it[2])
				case "v2c_consumer_buf":
					cons[2] = k.use(it[2])
				}
			}
		}
		for _, d := range []int64{1, 2} {
			if dir&d != 0 {
				k.l.frontFifo[d] = k.l.pipeFifo(d, slots, -1, buf)
				k.popSlots(op, k.l.frontFifo[d], cons[d], slots, intAttr(ts, "slot_size", 0))
			}
		}
	case "initialize_l2g2l_pipe", "initialize_l2l_pipe":
		dir := intAttr(ts, "dir_mask", 1)
		var buf *val
		if op.Name == "pto.initialize_l2g2l_pipe" {
			if vs, _, _, ok := k.parenValues(ts[afterDict(ts):]); ok && len(vs) > 0 {
				buf = vs[0]
			}
		}
		// The operands, with types between them or after them all:
		// `(%gm : T, %local : i32)` or `(%gm, %local : T, i32)`.
		var vs []*val
		if g, ok := groupAt(ts, afterDict(ts)); ok {
			for _, it := range splitTop(g, ",") {
				if len(it) > 0 && it[0].Kind == KValue {
					vs = append(vs, k.use(it[0]))
				}
			}
		}
		if op.Name == "pto.initialize_l2g2l_pipe" && len(vs) > 0 {
			vs = vs[1:] // the GM slot buffer; the local addresses follow
		}
		d := dir
		if d == 3 {
			d = 1 // one handle for both directions: its pushes go c2v
		}
		f := k.l.pipeFifo(d, intAttr(ts, "slot_num", 8), intAttr(ts, "flag_base", -1), buf)
		k.define(op, &val{kind: vFifo, fifo: f})
		// The consumer's local slots: local_addr serves the direction of
		// dir_mask 1 or 2; with 3 it is c2v's and peer_local_addr v2c's
		// (PTOResolveReservedBuffersPass.cpp at a56b18c3). One handle
		// carries both directions, so its pops are this kernel's side.
		local := int64(intAttr(ts, "slot_num", 8))
		if op.Name == "pto.initialize_l2g2l_pipe" {
			local = intAttr(ts, "local_slot_num", local)
		} else {
			local = 2 // EmitC's TPipe for l2l pipes
		}
		if len(vs) > 0 {
			c := vs[0]
			if dir == 3 && len(vs) > 1 && k.kind == "aic" {
				c = vs[1] // the cube consumes v2c
			}
			k.popSlots(op, f, c, local, intAttr(ts, "slot_size", 0))
		}
	case "tpush_to_aiv", "tpush_to_aic", "tpush":
		vs, vt, _, ok := k.parenValues(ts)
		if !ok {
			k.errf(op.Span, "%s: expected (%%tile : T)", op.Name)
			return
		}
		f := k.l.frontName(1)
		if name == "tpush_to_aic" {
			f = k.l.frontName(2)
		}
		if len(vs) == 2 && vs[1].kind == vFifo {
			f = vs[1].fifo
		}
		if len(vs) == 0 || vs[0].kind != vTile {
			k.errf(op.Span, "%s needs a tile", op.Name)
			return
		}
		if vs[0].tile.skip {
			return
		}
		k.fifo(f, vs[0].tile, op.Span)
		k.instr(op, "tpush", &asm.GMRef{Span: op.NameTok.Span, Name: f}, tileRef(vs[0], vt[0]))
	case "tpop_from_aic", "tpop_from_aiv":
		ti, ok := parseType(afterArrow(ts))
		if !ok {
			k.errf(op.Span, "%s: cannot read the result type", op.Name)
			return
		}
		t := k.declTile(rsp, rname, ti, nil, nil, nil)
		k.define(op, t)
		f := k.l.frontName(1)
		if name == "tpop_from_aiv" {
			f = k.l.frontName(2)
		}
		if t.kind == vTile && !t.tile.skip {
			k.fifo(f, t.tile, op.Span)
			k.popSlot(op, f, t, rsp)
			k.instr(op, "tpop", &asm.Ref{Span: rsp, Name: t.tile.name}, &asm.GMRef{Span: op.NameTok.Span, Name: f})
			k.popNext(op, f)
		}
	case "tpop":
		vs, vt, _, ok := k.parenValues(ts)
		if !ok {
			k.errf(op.Span, "pto.tpop: expected (%%tile, %%pipe : T, T)")
			return
		}
		if len(vs) != 2 || vs[0].kind != vTile || vs[1].kind != vFifo {
			k.errf(op.Span, "pto.tpop: expected a tile and a pipe")
			return
		}
		if !vs[0].tile.skip {
			k.fifo(vs[1].fifo, vs[0].tile, op.Span)
			k.popSlot(op, vs[1].fifo, vs[0], vt[0].Span)
			k.instr(op, "tpop", tileRef(vs[0], vt[0]), &asm.GMRef{Span: vt[1].Span, Name: vs[1].fifo})
			k.popNext(op, vs[1].fifo)
		}
	default:
		k.tileOp(op, name)
	}
}

func orZero(v *val, sp asm.Span) *val {
	if v == nil {
		return lit(sp, 0)
	}
	return v
}

// parenValues reads the operand group `(%a, %b : T, U)` that opens ts: the
// values, their tokens and the type list after the colon.
func (k *kctx) parenValues(ts []Tok) (vs []*val, toks []Tok, types []Tok, ok bool) {
	inner, ok := groupAt(ts, 0)
	if !ok {
		return nil, nil, nil, false
	}
	items, types, _ := cutTop(inner, ":")
	for _, it := range splitTop(items, ",") {
		if len(it) == 1 && it[0].Kind == KValue {
			vs = append(vs, k.use(it[0]))
			toks = append(toks, it[0])
		}
	}
	return vs, toks, types, true
}

func groupAt(ts []Tok, i int) ([]Tok, bool) {
	inner, _, ok := group(ts, i)
	return inner, ok
}

// afterArrow returns the tokens after the last top-level `->`.
func afterArrow(ts []Tok) []Tok {
	depth, at := 0, -1
	for j, t := range ts {
		if t.Kind == KPunct {
			switch t.Text {
			case "(", "[", "{", "<":
				depth++
			case ")", "]", "}", ">":
				depth--
			}
		}
		if depth == 0 && t.Kind == KArrow {
			at = j
		}
	}
	if at < 0 {
		return nil
	}
	return ts[at+1:]
}

// fifoSpec is what a pipe's initialisation says about its FIFO.
type fifoSpec struct {
	slots, id int64
}

// pipeFifo names the FIFO of a pipe initialisation for direction dir (1
// c2v, 2 v2c) and records its slot count and flag base (-1: PTOAS's
// default, the direction's 0 or 2). A pipe whose GM slot buffer is a kernel
// argument is named after it (the FIFO is that buffer, so the argument is
// not declared as a tensor of its own); otherwise it is the direction's
// FIFO, c2v or v2c.
func (l *lowerer) pipeFifo(dir, slots, flagBase int64, buf *val) string {
	name := map[int64]string{1: "c2v", 2: "v2c"}[dir]
	if buf != nil && buf.kind == vView && buf.view != nil && buf.view.tensor != nil && isZero(buf.view.lin) &&
		len(buf.view.tensor.refs) == 0 {
		td := buf.view.tensor
		td.fifoBuf = true
		name = td.name
		if dir == 2 && l.fifoSpecs[name].slots != 0 && l.fifoDir[name] == 1 {
			name += "_v2c" // one buffer, both directions
		}
	}
	if flagBase < 0 {
		flagBase = map[int64]int64{1: 0, 2: 2}[dir]
	}
	l.fifoSpecs[name] = fifoSpec{slots: slots, id: flagBase}
	l.fifoDir[name] = dir
	return name
}

// frontName is the FIFO the frontend ops (tpush_to_aiv, tpop_from_aic, ...)
// of direction dir use: the one the kernel's aic/aiv_initialize_pipe set up.
func (l *lowerer) frontName(dir int64) string {
	if n, ok := l.frontFifo[dir]; ok {
		return n
	}
	return map[int64]string{1: "c2v", 2: "v2c"}[dir]
}

func isZero(v *val) bool { return v != nil && v.known && v.v == 0 && v.static }

// intAttr reads an integer attribute of the op's dictionary.
func intAttr(ts []Tok, key string, def int64) int64 {
	if d, ok := attrDict(ts)[key]; ok && len(d) > 0 && d[0].Kind == KInt {
		if v, err := strconv.ParseInt(d[0].Text, 10, 64); err == nil {
			return v
		}
	}
	return def
}

// afterDict is the index just past the op's leading attribute dictionary
// (`{dir_mask = 1, ...}`), or 0.
func afterDict(ts []Tok) int {
	if len(ts) > 0 && ts[0].is("{") {
		if _, next, ok := group(ts, 0); ok {
			return next
		}
	}
	return 0
}

// fifo declares the module's FIFO on first use; its slot shape is the first
// tile pushed or popped through it, its slots and flag base what the pipe's
// initialisation said (PTOAS's defaults without one: 8 slots, ids 0 / 2).
func (k *kctx) fifo(name string, t *tileVal, sp asm.Span) {
	for _, f := range k.l.fifos {
		if f.Name == name {
			return
		}
	}
	spec, ok := k.l.fifoSpecs[name]
	if !ok {
		spec = fifoSpec{slots: 8}
		if name == "v2c" {
			spec.id = 2
		}
	}
	k.l.fifos = append(k.l.fifos, &asm.Tensor{Span: sp, Class: asm.TensorFIFO, Name: name, DType: t.dtype,
		Shape: []asm.Expr{num(sp, t.rows), num(sp, t.cols)},
		Attrs: []*asm.Attr{{Span: sp, Key: "slots", Val: num(sp, spec.slots)}, {Span: sp, Key: "id", Val: num(sp, spec.id)}}})
}

// makeView: `%v = pto.make_tensor_view %ptr, shape = [...], strides = [...] {layout} : T`.
func (k *kctx) makeView(op *Op) {
	ts := op.Toks
	if len(ts) == 0 || ts[0].Kind != KValue {
		k.errf(op.Span, "pto.make_tensor_view needs a pointer")
		return
	}
	p := k.use(ts[0])
	if p.kind != vView {
		k.errf(ts[0].Span, "pto.make_tensor_view: %s is not a GM pointer", ts[0].Text)
		return
	}
	shapeTs, ok1 := keyGroup(ts, "shape")
	strideTs, ok2 := keyGroup(ts, "strides")
	if !ok1 || !ok2 {
		k.errf(op.Span, "pto.make_tensor_view: expected shape = [...], strides = [...]")
		return
	}
	shape, ok1 := k.valList(shapeTs, "pto.make_tensor_view")
	strides, ok2 := k.valList(strideTs, "pto.make_tensor_view")
	if !ok1 || !ok2 {
		return
	}
	if shape == nil || strides == nil || len(shape) != len(strides) {
		k.errf(op.Span, "pto.make_tensor_view: shape and strides must be value lists of one length")
		return
	}
	layout := ""
	if l, ok := attrDict(ts)["layout"]; ok {
		for _, w := range words(l) {
			switch w.Text {
			case "dn", "nz", "nd":
				layout = w.Text
			}
		}
	}
	k.strideDefaults(shape, strides, layout)
	vw := &viewVal{tensor: p.view.tensor, lin: p.view.lin, layout: layout}
	zero := lit(op.Span, 0)
	for range shape {
		vw.idx = append(vw.idx, zero)
	}
	if vw.lin != nil && !(vw.lin.known && vw.lin.v == 0) {
		// an addptr'd base: linearised addressing only
		k.shapeTensor(vw.tensor, vw, shape, strides, layout)
		vw.natural = false
	} else {
		k.shapeTensor(vw.tensor, vw, shape, strides, layout)
	}
	k.define(op, &val{kind: vView, view: vw})
}

// strideDefaults gives an integer argument that is a view's stride, and
// would default to 0 (no size uses it), the stride a dense view of that
// shape has: a stride of 0 folds every row onto the first. The argument stays
// a constant, so -D gives the launch's value, and the view keeps it
// symbolically (views.go).
func (k *kctx) strideDefaults(shape, strides []*val, layout string) {
	for d, st := range strides {
		nm, ok := st.x.(*asm.Name)
		if !ok || !k.l.offsetArgs[nm.Name] {
			continue
		}
		dense, ok := int64(1), true
		lo, hi := d+1, len(shape)
		if layout == "dn" && len(shape) == 2 {
			lo, hi = 0, d // column-major: the columns are the rows' length apart
		}
		for _, z := range shape[lo:hi] {
			ok = ok && z.known && z.v > 0
			dense *= max(z.v, 1)
		}
		if !ok || dense <= 1 {
			continue
		}
		delete(k.l.offsetArgs, nm.Name)
		for _, c := range k.l.consts {
			if c.Name == nm.Name {
				c.Val = num(c.Span, dense)
			}
		}
		st.v = dense
	}
}

// valList reads a bracketed list of integers and SSA integers (shapes,
// strides, offsets, sizes). A bad element is reported there and the list
// is nil with ok false; a list of the wrong form is nil with ok true, for
// the caller to report.
func (k *kctx) valList(ts []Tok, what string) (out []*val, ok bool) {
	for _, it := range splitTop(ts, ",") {
		if len(it) != 1 {
			return nil, true
		}
		switch it[0].Kind {
		case KValue:
			v := k.useInt(it[0], what)
			if v == nil {
				return nil, false
			}
			out = append(out, v)
		case KInt:
			v, err := strconv.ParseInt(it[0].Text, 10, 64)
			if err != nil {
				k.errf(it[0].Span, "%s: integer %s out of range", what, it[0].Text)
				return nil, false
			}
			out = append(out, lit(it[0].Span, v))
		default:
			return nil, true
		}
	}
	return out, true
}

// partitionView: `%p = pto.partition_view %v, offsets = [...], sizes = [...] : T -> T`.
func (k *kctx) partitionView(op *Op) {
	ts := op.Toks
	if len(ts) == 0 || ts[0].Kind != KValue {
		k.errf(op.Span, "pto.partition_view needs a view")
		return
	}
	v := k.use(ts[0])
	offTs, ok1 := keyGroup(ts, "offsets")
	sizeTs, ok2 := keyGroup(ts, "sizes")
	if v.kind != vView || !ok1 || !ok2 {
		k.errf(op.Span, "pto.partition_view: expected a view, offsets = [...], sizes = [...]")
		return
	}
	offs, ok1 := k.valList(offTs, "pto.partition_view")
	sizes, ok2 := k.valList(sizeTs, "pto.partition_view")
	if !ok1 || !ok2 {
		return
	}
	if offs == nil || sizes == nil || len(offs) != len(sizes) {
		k.errf(op.Span, "pto.partition_view: offsets and sizes must be value lists of one length")
		return
	}
	src := v.view
	// A partition lies inside its view: a size computed from kernel
	// arguments (16 by default) is at most the view's static extent past
	// the offset, so the default arguments give a window of the view.
	for i, z := range sizes {
		if isLit(z) || !z.known || i >= len(src.shape) || !isLit(src.shape[i]) || !offs[i].known {
			continue
		}
		if room := src.shape[i].v - offs[i].v; room >= 1 && z.v > room {
			sizes[i] = callVal(op.Span, "min", z, lit(op.Span, room))
		}
	}
	nv := &viewVal{tensor: src.tensor, shape: sizes, strides: src.strides, natural: src.natural, layout: src.layout}
	lin := orZero(src.lin, op.Span)
	for i, o := range offs {
		if i < len(src.strides) {
			lin = addVal(lin, mulVal(o, src.strides[i]))
		}
	}
	nv.lin = lin
	td := src.tensor
	ext := int64(1)
	for _, z := range sizes {
		if z.known && z.v > 0 {
			ext *= z.v
		}
	}
	if lin.known && lin.v >= 0 {
		td.minExt = max(td.minExt, lin.v+ext)
	}
	if src.natural && len(src.idx) == len(offs) && len(td.dimV) == len(offs) {
		if td.minDim == nil {
			td.minDim = make([]int64, len(offs))
		}
		for i, z := range sizes {
			o := src.idx[i]
			if z.known && offs[i].known && o.known {
				td.minDim[i] = max(td.minDim[i], o.v+offs[i].v+z.v)
			}
		}
	}
	if src.natural && len(src.idx) == len(offs) {
		for i, o := range offs {
			nv.idx = append(nv.idx, addVal(src.idx[i], o))
		}
	} else {
		nv.natural = false
	}
	k.define(op, &val{kind: vView, view: nv})
}

// subset: `%s = pto.subset %t[%r, %c] sizes [R, C] : T`.
func (k *kctx) subset(op *Op) {
	ts := op.Toks
	if len(ts) < 2 || ts[0].Kind != KValue {
		k.errf(op.Span, "pto.subset: expected %%tile[%%r, %%c] sizes [R, C]")
		return
	}
	parent := k.use(ts[0])
	offTs, _, ok := group(ts, 1)
	sizeTs, ok2 := keyGroup(ts, "sizes")
	if !ok || !ok2 || parent.kind != vTile {
		k.errf(op.Span, "pto.subset: expected %%tile[%%r, %%c] sizes [R, C]")
		return
	}
	offs, ok1 := k.valList(offTs, "pto.subset")
	sizes, ok2 := k.valList(sizeTs, "pto.subset")
	if !ok1 || !ok2 {
		return
	}
	if len(offs) != 2 || len(sizes) != 2 || !sizes[0].known || !sizes[1].known {
		k.errf(op.Span, "pto.subset: needs two offsets and two constant sizes")
		return
	}
	p := parent.tile
	if p.skip {
		k.define(op, &val{kind: vTile, tile: &tileVal{name: p.name, skip: true}})
		return
	}
	// A subset of rows R and columns C at (r, c) of a row-major tile is
	// strided: R runs of C elements, a parent row apart. It becomes an alias
	// of R full parent rows starting at element r*cols + c with valid shape
	// [R, C], so the machine touches exactly those runs (an op accesses its
	// tiles' valid regions) and two disjoint column halves do not overlap.
	// Tiles start on 32-byte boundaries: an unaligned start moves down to
	// the boundary (by less than 32 bytes; the shape stays, since the ops'
	// operands must agree in shape).
	es := int64(dtypeSize(p.dtype))
	R, C := sizes[0].v, sizes[1].v
	boxH, boxW := fractalBox(p.sl, es)
	dims, vr, vc := []int64{R, C}, int64(-2), int64(-2)
	if R > 1 && C < p.cols && p.nd {
		dims, vr, vc = []int64{R, p.cols}, R, C
	}
	off := binVal(op.Span, "*", addVal(mulVal(offs[0], lit(op.Span, p.cols)), offs[1]), lit(op.Span, es))
	if p.bl == "col_major" && (p.sl == "" || p.sl == "none_box" || C%boxW == 0) && isLit(offs[0]) && offs[0].v == 0 && dims[0] == p.rows {
		// A band of whole columns of a column-major tile starts c columns
		// of `rows` elements in.
		off = binVal(op.Span, "*", mulVal(offs[1], lit(op.Span, p.rows)), lit(op.Span, es))
		if off.static {
			down := binVal(op.Span, "*", binVal(op.Span, "/", off, lit(op.Span, 32)), lit(op.Span, 32))
			k.define(op, k.alias(op, parent, typeInfo{loc: p.loc, elem: p.dtype, dims: dims, vrow: vr, vcol: vc, bl: p.bl, sl: p.sl}, down))
			return
		}
	}
	if off.static {
		// kept as an expression: it may name arguments -D overrides
		down := binVal(op.Span, "*", binVal(op.Span, "/", off, lit(op.Span, 32)), lit(op.Span, 32))
		k.define(op, k.alias(op, parent, typeInfo{loc: p.loc, elem: p.dtype, dims: dims, vrow: vr, vcol: vc}, down))
		return
	}
	// A computed offset (a loop's column block): the alias is element
	// off/32 of an array of aliases 32 bytes apart over the parent, as
	// many as fit in the space from the parent's address.
	if p.index != nil || !p.known || off.kind != vScalar || off.isF {
		k.errf(op.Span, "pto.subset: a computed offset into a tile at a computed address is not supported")
		return
	}
	l, _ := asm.ParseLoc(p.loc)
	elemBytes := dims[0] * dims[1] * es
	wholeRows := p.nd || (p.bl != "col_major" && R%boxH == 0)
	wholeCols := p.bl == "col_major" && (p.sl == "" || p.sl == "none_box" || C%boxW == 0)
	// Whole rows at a computed row (a buffer of a stacked double buffer, as
	// `fmt --to mlir` prints tile arrays), or whole columns of a
	// column-major (or nz) tile at a computed column: the aliases are one
	// parent row (column) apart, lie inside the parent and keep its layout,
	// and the index is the row (column) offset itself.
	whole := typeInfo{loc: p.loc, elem: p.dtype, dims: dims, vrow: vr, vcol: vc, bl: p.bl, sl: p.sl}
	if rowBytes := p.cols * es; wholeRows && isLit(offs[1]) && offs[1].v == 0 && dims[1] == p.cols && rowBytes%32 == 0 && R <= p.rows && p.rows-R < 1024 {
		k.aliasArray(op, p, whole, p.rows-R+1, rowBytes, offs[0].x)
		return
	}
	if colBytes := p.rows * es; wholeCols && isLit(offs[0]) && offs[0].v == 0 && dims[0] == p.rows && colBytes%32 == 0 && C <= p.cols && p.cols-C < 1024 {
		k.aliasArray(op, p, whole, p.cols-C+1, colBytes, offs[1].x)
		return
	}
	n := min((p.rows*p.cols*es+31)/32, (asm.SpaceCapacity(l.Space())-p.addrV-elemBytes)/32+1)
	if n < 1 {
		k.errf(op.Span, "pto.subset: the subset does not fit after its parent's address")
		return
	}
	name, sp := k.result(op)
	ti := typeInfo{loc: p.loc, elem: p.dtype, dims: dims, vrow: vr, vcol: vc}
	t := k.declTile(sp, name, ti, &val{kind: vScalar, x: p.addr, static: true, known: true, v: p.addrV}, nil, nil)
	if t.kind != vTile {
		return
	}
	if d, ok := (*k.out)[len(*k.out)-1].(*asm.TileDecl); ok && d.Name == t.tile.name {
		d.Count, d.Step = num(sp, n), num(sp, 32)
	}
	t.tile.index = binVal(sp, "/", off, lit(sp, 32)).x
	k.define(op, t)
}

// aliasArray defines the subset op's result as element index of an array
// of n aliases of type ti, step bytes apart from parent p's address.
func (k *kctx) aliasArray(op *Op, p *tileVal, ti typeInfo, n, step int64, index asm.Expr) {
	name, sp := k.result(op)
	t := k.declTile(sp, name, ti, &val{kind: vScalar, x: p.addr, static: true, known: true, v: p.addrV}, nil, nil)
	if t.kind != vTile {
		return
	}
	if d, ok := (*k.out)[len(*k.out)-1].(*asm.TileDecl); ok && d.Name == t.tile.name {
		d.Count, d.Step = num(sp, n), num(sp, step)
	}
	t.tile.index = index
	k.define(op, t)
}

// fractalBox is the rows and columns of one fractal box of a boxed tile:
// 16 rows of 32 bytes (slayout row_major), or 32 bytes of rows by 16
// columns (col_major); 1 x 1 for an unboxed tile.
func fractalBox(sl string, es int64) (rows, cols int64) {
	switch sl {
	case "row_major":
		return 16, 32 / es
	case "col_major":
		return 32 / es, 16
	}
	return 1, 1
}

// asyncCopy lowers `pto.tput_async(%dst, %src, %session : T, T, S) ->
// !pto.async_event` (and tget_async) to the SDMA copy `%e = tput_async
// @dst, @src #rows=1 #cols=N`. PTOAS requires both sides to be static flat
// 1-D GM memrefs (TPutAsyncOp/TGetAsyncOp::verify in lib/PTO/IR/PTO.cpp).
func (k *kctx) asyncCopy(op *Op, name, rname string, rsp asm.Span) {
	vs, toks, types, ok := k.parenValues(op.Toks)
	tys := splitTop(types, ",")
	if !ok || len(vs) < 2 || len(tys) < 2 {
		k.errf(op.Span, "pto.%s: expected (%%dst, %%src, %%session : types)", name)
		return
	}
	n := int64(0)
	for i, side := range []string{"dst", "src"} {
		// a 1-D GM memref, or a tensor or partition view of static shape
		// [1, ..., 1, N] (verifyAsyncFlatContiguous1DGMViewLike)
		ti, ok := parseType(tys[i])
		flat := ok && vs[i].kind == vView && len(ti.dims) > 0 && (ti.kind == "memref" && ti.loc == "gm" && len(ti.dims) == 1 ||
			ti.kind == "partition_tensor_view" || ti.kind == "tensor_view")
		for j, d := range ti.dims {
			flat = flat && d > 0 && (d == 1 || j == len(ti.dims)-1)
		}
		if !flat {
			k.errf(op.Span, "pto.%s: expects %s to be a static flat contiguous logical 1D GM memref or view", name, side)
			return
		}
		if i == 0 {
			n = ti.dims[len(ti.dims)-1]
		}
	}
	g := &tileVal{vrows: 1, vcols: n}
	r := k.reg(rname)
	k.emit(&asm.Instr{Span: op.Span, Op: name, OpSpan: op.NameTok.Span, Result: &asm.Ref{Span: rsp, Name: r},
		Args:  []asm.Expr{k.gmRef(vs[0], toks[0], g), k.gmRef(vs[1], toks[1], g)},
		Attrs: []*asm.Attr{{Span: op.Span, Key: "rows", Val: num(op.Span, 1)}, {Span: op.Span, Key: "cols", Val: num(op.Span, n)}}})
	k.define(op, &val{kind: vScalar, x: &asm.Ref{Span: rsp, Name: r}})
}

// scalarGM lowers PTOAS's scalar GM access (LoadScalarOp, StoreScalarOp in
// include/PTO/IR/PTOOps.td at a56b18c3: `%v = pto.load_scalar %ptr[%off] :
// !pto.ptr<T> -> T`, `pto.store_scalar %v, %ptr[%off] : !pto.ptr<T>, T`) to
// `ld` / `st` of the element, so the kernel's GM data steer it as they do
// on the device and the detector sees the scalar's GM access. A float
// element is S-pipe work on data the model does not track: dropped, its
// result 0.
func (k *kctx) scalarGM(op *Op, name, rname string, rsp asm.Span) {
	ts := op.Toks
	ptr, off := -1, -1
	for i := 0; i+3 < len(ts); i++ {
		if ts[i].Kind == KValue && ts[i+1].is("[") && ts[i+2].Kind == KValue && ts[i+3].is("]") {
			ptr, off = i, i+2
			break
		}
	}
	if ptr < 0 || (name == "store_scalar" && (ptr < 2 || ts[0].Kind != KValue)) {
		k.errf(op.Span, "pto.%s: expected %s", name, map[string]string{"load_scalar": "`%ptr[%offset] : T -> T`", "store_scalar": "`%value, %ptr[%offset] : T, T`"}[name])
		return
	}
	p, o := k.use(ts[ptr]), k.use(ts[off])
	if p.kind != vView || o.kind != vScalar || isFloatType(p.view.tensor.dtype) {
		if len(op.Results) > 0 {
			k.define(op, &val{kind: vScalar, x: num(rsp, 0), static: true, known: true})
		}
		return
	}
	g := &asm.GMRef{Span: ts[ptr].Span, Name: p.view.tensor.name}
	td := p.view.tensor
	lin := addVal(orZero(p.view.lin, op.Span), o)
	td.scalars = append(td.scalars, gmUse{g: g, lin: lin})
	if lin.known && lin.v >= 0 {
		td.minExt = max(td.minExt, lin.v+1)
	}
	if name == "load_scalar" {
		r := k.reg(rname)
		in := k.instr(op, "ld", g)
		in.Result = &asm.Ref{Span: rsp, Name: r}
		k.define(op, &val{kind: vScalar, x: &asm.Ref{Span: rsp, Name: r}})
		return
	}
	v := k.use(ts[0])
	if v.kind != vScalar || v.x == nil {
		k.errf(ts[0].Span, "pto.store_scalar: the value must be an integer")
		return
	}
	k.instr(op, "st", g, v.x)
}

// reservedBase is the local address a pto.reserve_buffer or
// pto.import_reserved_buffer stands for after PTOResolveReservedBuffers: the
// base PlanMemory gave the reserve (memPlan.reserveHole), its fixed `base`
// with auto = false, and for an import the base of the peer function's
// reserve of that name. The value is marked as a reserved buffer, so the
// pipes it feeds place their popped tiles in its slots (popSlots).
func (k *kctx) reservedBase(op *Op, name string) *val {
	sp := op.Span
	if len(op.Results) > 0 {
		sp = op.Results[0].Span
	}
	v := lit(sp, 0)
	v.reserved = true
	body, rop := k.fn.body, op
	if name == "import_reserved_buffer" {
		d := attrDict(op.Toks)
		peer := ""
		if p, ok := d["peer_func"]; ok && len(p) > 0 {
			peer = strings.Trim(strings.TrimPrefix(p[0].Text, "@"), `"`)
		}
		fi := k.l.funcs[peer]
		if fi == nil {
			k.errf(op.Span, "pto.import_reserved_buffer: expects 'peer_func' to reference an existing func.func")
			return v
		}
		rop = nil
		want := attrString(d["name"])
		for _, r := range opsNamed(fi.body, "pto.reserve_buffer") {
			if attrString(attrDict(r.Toks)["name"]) == want {
				rop = r
			}
		}
		if rop == nil {
			k.errf(op.Span, "pto.import_reserved_buffer: expects matching peer reserve_buffer to exist")
			return v
		}
		body = fi.body
		k.l.memPlan(fi.body, fi.op.NameTok.Span)
	}
	if base, ok := k.l.plans[body].reserve[rop]; ok {
		v.v, v.x = base, num(sp, base)
	} else if b := intAttr(rop.Toks, "base", -1); b >= 0 {
		v.v, v.x = b, num(sp, b)
	}
	return v
}

func attrString(ts []Tok) string {
	if len(ts) == 0 {
		return ""
	}
	return strings.Trim(ts[0].Text, `"`)
}

// slotRing is where a pipe puts the tiles this kernel pops: pto-isa's TPOP
// assigns the popped tile to consumer_buf + (tileIndex % LocalSlotNum) *
// SlotSize before loading it (popVecTileFromGMFiFo / popMatTileFromGMFiFo,
// include/pto/npu/a2a3/TPush.hpp at 3186c381). cnt is the register counting
// this kernel's pops.
type slotRing struct {
	base        int64
	slots, size int64
	cnt         string
}

// popSlots records the slot ring of FIFO f when its consumer buffer comes
// from a reserve_buffer or import_reserved_buffer (a base PlanMemory and
// PTOResolveReservedBuffers fix). A local address given any other way (a
// constant, a kernel argument) is left alone: the popped tile keeps the place
// the lowering gives it.
func (k *kctx) popSlots(op *Op, f string, cons *val, slots, size int64) {
	if cons == nil || !cons.reserved || slots <= 0 || size <= 0 {
		return
	}
	if k.rings == nil {
		k.rings = map[string]*slotRing{}
	}
	r := &slotRing{base: cons.v, slots: slots, size: size, cnt: k.reg(f + "_popped")}
	k.rings[f] = r
	k.emit(&asm.Let{Span: op.Span, Reg: r.cnt, X: num(op.Span, 0)})
}

// popSlot binds tile t to its slot before a pop of FIFO f: `tassign %t,
// base + (n % slots) * size`, evaluated when it issues, so a pop in a loop
// moves through the ring as on the device.
func (k *kctx) popSlot(op *Op, f string, t *val, sp asm.Span) {
	r := k.rings[f]
	if r == nil || t.kind != vTile {
		return
	}
	n := &asm.Ref{Span: sp, Name: r.cnt}
	slot := &asm.Binary{Span: sp, Op: "%", X: n, Y: num(sp, r.slots)}
	addr := &asm.Binary{Span: sp, Op: "+", X: num(sp, r.base), Y: &asm.Binary{Span: sp, Op: "*", X: slot, Y: num(sp, r.size)}}
	k.instr(op, "tassign", &asm.Ref{Span: sp, Name: t.tile.name}, addr)
}

func (k *kctx) popNext(op *Op, f string) {
	if r := k.rings[f]; r != nil {
		k.emit(&asm.Let{Span: op.Span, Reg: r.cnt, X: &asm.Binary{Span: op.Span, Op: "+", X: &asm.Ref{Span: op.Span, Name: r.cnt}, Y: num(op.Span, 1)}})
	}
}
