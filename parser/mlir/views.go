package mlir

import (
	"strconv"

	"github.com/ptoasm/ptoasm/asm"
)

// Strided views. A GM transfer moves the tile's rows × cols window of a
// view: element (r, c) of the window sits at the view's origin plus the
// strides of its dimensions (the rows are every dimension but the last,
// folded; the columns the last). The machine knows two such shapes, and
// reports each as the byte runs the DMA touches (machine.gmRuns):
//
//   - nd: rows `pitch` elements apart, each row contiguous (a tensor
//     `[N / pitch, pitch]`, window at [lin / pitch, lin % pitch]);
//   - dn: columns `pitch` elements apart, each column contiguous (a tensor
//     `[pitch, N / pitch] dn`, window at [lin % pitch, lin / pitch]).
//
// A view that is not a plain window of its tensor's declared shape (other
// strides, a column-major layout, rank > 2, an addptr'd base) makes the
// tensor strided: it is declared in the layout and pitch of its transfers,
// so the detector and the bounds check see the addresses the hardware
// would touch, where a flat 1-D tensor saw each window as one range.

// refGeo is how one transfer's window lies in memory.
type refGeo struct {
	kind  string // "nd" or "dn"
	pitch int64  // elements between rows (nd) or columns (dn); 0: one row or column, any pitch fits
	ok    bool   // false: no single pitch describes the window
	// px is the pitch's expression when a kernel argument gives it (a
	// constant -D overrides): the declaration keeps it, so the machine and
	// the linter use the argument's value, not pitch (its default).
	px asm.Expr
}

func (g refGeo) key() string {
	k := g.kind + strconv.FormatInt(g.pitch, 10)
	if g.px != nil {
		k += "=" + asm.ExprString(g.px)
	}
	return k
}

// symbolic says a stride is a constant expression of kernel arguments
// (static, but not a literal): its value is the launch's, not the default.
func symbolic(v *val) bool { return v != nil && v.static && !isLit(v) }

// viewGeo is the geometry of a rows × cols transfer through view vw. The
// window's rows are the view's dimensions but the last, of size > 1, and
// must nest (each outer stride is the inner stride times the inner size)
// to be rows of one pitch; its columns are the last dimension.
func viewGeo(vw *viewVal, rows, cols int64) refGeo {
	n := len(vw.shape)
	if n == 0 || len(vw.strides) != n {
		return refGeo{kind: "nd", ok: rows <= 1}
	}
	known := func(v *val) (int64, bool) {
		if v != nil && v.known {
			return v.v, true
		}
		return 0, false
	}
	cs, csOK := known(vw.strides[n-1])
	rs, rsOK := int64(0), true
	var rsV *val
	prevS, prevZ, prevZOK := int64(0), int64(0), false
	for d := n - 2; d >= 0; d-- {
		z, zk := known(vw.shape[d])
		if zk && z == 1 {
			continue
		}
		s, sk := known(vw.strides[d])
		if !sk || s <= 0 {
			rsOK = false
			break
		}
		if rs == 0 {
			rs, rsV = s, vw.strides[d]
		} else if !prevZOK || s != prevS*prevZ {
			rsOK = false
			break
		}
		prevS, prevZ, prevZOK = s, z, zk
	}
	if rows <= 1 {
		rs, rsOK = 0, true
	}
	if cols <= 1 {
		cs, csOK = 1, true
	}
	if rows <= 1 && cols <= 1 {
		return refGeo{kind: "nd", ok: true}
	}
	nd := refGeo{kind: "nd", pitch: rs, ok: csOK && cs == 1 && rsOK && (rows <= 1 || rs > 0)}
	dn := refGeo{kind: "dn", ok: rsOK && (rows <= 1 || rs == 1) && csOK && (cs > 1 || cols <= 1)}
	if rows > 1 && symbolic(rsV) {
		nd.px = rsV.x
	}
	if cols > 1 {
		dn.pitch = cs
		if symbolic(vw.strides[n-1]) {
			dn.px = vw.strides[n-1].x
		}
	}
	switch {
	case nd.ok && dn.ok:
		// A single contiguous row or column: the constrained reading wins
		// (it fixes the tensor's pitch), then the view's layout.
		if (nd.pitch == 0) != (dn.pitch == 0) {
			if nd.pitch != 0 {
				return nd
			}
			return dn
		}
		if vw.layout == "dn" {
			return dn
		}
		return nd
	case nd.ok:
		return nd
	case dn.ok:
		return dn
	}
	return refGeo{kind: "nd", ok: false, pitch: rs}
}

// stridedDecls declares strided tensor t: each transfer's geometry fixes a
// layout and pitch; transfers that agree share one declaration (named after
// the argument), and a transfer of another layout or pitch (the same
// argument read both row- and column-major) gets a tensor of its own,
// NAME_dn32 say: the two views are then not checked against each other.
// It returns nil, leaving t flat, when no transfer fixes a pitch.
func (l *lowerer) stridedDecls(t *tensorDecl, i int) []*asm.Tensor {
	sp := t.span
	type group struct {
		geo  refGeo
		uses []gmUse
	}
	var groups []*group
	byKey := map[string]*group{}
	var free []gmUse // one row or column: any pitch
	for _, u := range t.refs {
		g := u.geo
		if !g.ok && u.rows > 1 && u.cols > 1 {
			// Strided in both dimensions (strides [256, 8192]): no nd or
			// dn pitch holds the window, and a flat tensor would pitch
			// the tile's rows by the whole tensor, a false out-of-bounds
			// read and an uninitialised one where the DMA stays inside
			// the view. Say so instead.
			l.errf(u.g.Span, "a %d × %d window of a view strided in both dimensions (no row or column of it is contiguous): ptoasm models row-major (nd) and column-major (dn) views only (docs/mlir.md)", u.rows, u.cols)
			continue
		}
		if !g.ok || g.pitch <= 0 {
			free = append(free, u)
			continue
		}
		gr := byKey[g.key()]
		if gr == nil {
			gr = &group{geo: g}
			byKey[g.key()] = gr
			groups = append(groups, gr)
		}
		gr.uses = append(gr.uses, u)
	}
	if len(groups) == 0 {
		return nil
	}
	// Free transfers (one row, or one column) fit any pitch of their kind
	// as long as their row (column) does: they join the first group of
	// their kind that holds them. A contiguous row is not a window of a dn
	// tensor (nor a column of an nd one): one that fits no group gets a
	// group of its own kind, pitched to hold it.
	for _, u := range free {
		var target *group
		need := u.cols
		if u.geo.kind == "dn" {
			need = u.rows
		}
		for _, gr := range groups {
			if gr.geo.kind == u.geo.kind && need <= gr.geo.pitch {
				target = gr
				break
			}
		}
		if target == nil {
			g := refGeo{kind: u.geo.kind, pitch: max(need, 1), ok: true}
			if target = byKey[g.key()]; target == nil {
				target = &group{geo: g}
				byKey[g.key()] = target
				groups = append(groups, target)
			}
		}
		target.uses = append(target.uses, u)
	}
	// The elements the first view reaches (its shape and strides).
	viewExt := int64(1)
	for _, d := range t.dimV {
		viewExt *= max(d, 1)
	}
	var out []*asm.Tensor
	for gi, gr := range groups {
		p := gr.geo.pitch
		ext := max(viewExt, t.minExt)
		for _, u := range gr.uses {
			if !u.lin.known || u.lin.v < 0 {
				continue
			}
			var reach int64
			if gr.geo.kind == "dn" {
				reach = u.lin.v + (max(u.cols, 1)-1)*p + u.rows
			} else {
				reach = u.lin.v + (max(u.rows, 1)-1)*p + u.cols
			}
			ext = max(ext, reach)
		}
		outer := (ext + p - 1) / p
		pl, outerX := lit(sp, p), asm.Expr(num(sp, outer))
		if gr.geo.px != nil {
			// The pitch is an argument's: the tensor holds what every
			// transfer reaches at the launch's value of it.
			pl = &val{kind: vScalar, x: gr.geo.px, static: true, known: true, v: p}
			reach := asm.Expr(num(sp, max(viewExt, t.minExt)))
			for _, u := range gr.uses {
				if !u.lin.static {
					continue
				}
				a, b := max(u.rows, 1)-1, u.cols
				if gr.geo.kind == "dn" {
					a, b = max(u.cols, 1)-1, u.rows
				}
				r := addVal(addVal(u.lin, binVal(sp, "*", lit(sp, a), pl)), lit(sp, b))
				reach = &asm.Call{Span: sp, Fn: "max", Args: []asm.Expr{reach, r.x}}
			}
			outerX = &asm.Call{Span: sp, Fn: "ceildiv", Args: []asm.Expr{reach, paren(pl.x)}}
		}
		name := t.name
		if gi > 0 {
			name = t.name + "_" + gr.geo.key()
			for l.used[name] {
				name += "_"
			}
			l.used[name] = true
		}
		decl := &asm.Tensor{Span: sp, Class: asm.TensorGM, Name: name, DType: t.dtype, Init: randomInit(sp, int64(i+1), t.dtype)}
		for _, u := range gr.uses {
			u.g.Name = name
			lin := u.lin
			q, r := binVal(sp, "/", lin, pl), binVal(sp, "%", lin, pl)
			if gr.geo.kind == "dn" {
				u.g.Index = []asm.Expr{r.x, q.x}
			} else {
				u.g.Index = []asm.Expr{q.x, r.x}
			}
		}
		if gr.geo.kind == "dn" {
			decl.Shape = []asm.Expr{pl.x, outerX}
			decl.Layout = "dn"
		} else {
			decl.Shape = []asm.Expr{outerX, pl.x}
		}
		out = append(out, decl)
	}
	return out
}

// maxSplit bounds how many transfers one split MLIR transfer becomes.
const maxSplit = 64

// splitTransfer lowers a transfer whose window rows do not nest (a rank > 2
// partition such as sizes [16, 16, 16] of strides [1M, 1024, 1]: 16 blocks
// of 16 rows, the blocks 1M elements apart and the rows 1024) as one
// transfer per block, each between a block of whole rows of the tile (an
// alias at the block's address) and the block's window, which nests. That
// is what the DMA does: a 2-D transfer per outer index. It emits them with
// emit and reports true, or reports false (nothing emitted) when the view
// nests already, or the tile is not row-major, or the blocks are too many
// or not static.
func (k *kctx) splitTransfer(op *Op, v *val, t Tok, tile *val, emit func(*val, asm.Expr)) bool {
	if v == nil || v.kind != vView || tile == nil || tile.kind != vTile {
		return false
	}
	vw, tv := v.view, tile.tile
	if tv.skip || !tv.nd || !tv.known || tv.vrows != tv.rows || tv.vcols != tv.cols || viewGeo(vw, tv.vrows, tv.vcols).ok {
		return false
	}
	n := len(vw.shape)
	if n < 3 || len(vw.strides) != n {
		return false
	}
	for d := 0; d < n; d++ {
		if !vw.shape[d].known || !vw.strides[d].known || vw.shape[d].v <= 0 {
			return false
		}
	}
	// The inner block: row dimensions from n-2 outward while they nest.
	br := int64(1)
	cut := n - 1
	prevS, prevZ := int64(0), int64(0)
	for d := n - 2; d >= 0; d-- {
		z, s := vw.shape[d].v, vw.strides[d].v
		if z == 1 {
			cut = d
			continue
		}
		if prevS != 0 && s != prevS*prevZ {
			break
		}
		br *= z
		prevS, prevZ = s, z
		cut = d
	}
	if vw.shape[n-1].v != tv.cols || tv.rows%br != 0 {
		return false
	}
	nb := tv.rows / br
	outer := int64(1)
	for d := 0; d < cut; d++ {
		outer *= vw.shape[d].v
	}
	if nb < 2 || nb > maxSplit || outer != nb {
		return false
	}
	// Enumerate the outer indices (dimensions before cut), innermost fastest.
	sp := op.Span
	es := int64(dtypeSize(tv.dtype))
	idx := make([]int64, cut)
	for b := int64(0); b < nb; b++ {
		off := int64(0)
		for d := 0; d < cut; d++ {
			off += idx[d] * vw.strides[d].v
		}
		nv := *vw
		nv.shape = append([]*val(nil), vw.shape...)
		for d := 0; d < cut; d++ {
			nv.shape[d] = lit(sp, 1)
		}
		nv.lin = addVal(orZero(vw.lin, sp), lit(sp, off))
		nv.natural, nv.idx = false, nil
		addr := lit(sp, tv.addrV+b*br*tv.cols*es)
		sub := k.declTile(sp, tv.name+"_blk"+strconv.FormatInt(b, 10), typeInfo{loc: tv.loc, elem: tv.dtype, dims: []int64{br, tv.cols}}, addr, nil, nil)
		if sub.kind != vTile {
			return true
		}
		emit(sub, k.gmRef(&val{kind: vView, view: &nv}, t, sub.tile))
		for d := cut - 1; d >= 0; d-- {
			idx[d]++
			if idx[d] < vw.shape[d].v {
				break
			}
			idx[d] = 0
		}
	}
	return true
}
