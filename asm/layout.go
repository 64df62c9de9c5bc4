package asm

import (
	"sort"
	"strings"
)

// Tile layout: every tile has a byte range in its location's buffer. Explicit
// addresses (`@ 0x1000`) are honoured as written, overlaps included (aliasing is
// how hand-written kernels share buffers, and the listing shows each overlap).
// Tiles without `@` are placed after the explicit ones, first fit in declaration
// order: 32-byte aligned in UB, BT and FB (the vector block size), 512-byte
// aligned in L1, L0A, L0B and L0C (one fractal, so cube tiles start on a fractal).

// SpaceCapacity is a buffer's size in bytes on A2/A3 (machine-facts §3.1).
func SpaceCapacity(s Space) int64 {
	switch s {
	case UB:
		return 192 << 10
	case L1:
		return 512 << 10
	case L0A, L0B:
		return 64 << 10
	case L0C:
		return 128 << 10
	case BT:
		return 1 << 10
	case FB:
		return 7 << 10
	}
	return 0
}

// SpaceAlign is the alignment of automatically placed tiles in s.
func SpaceAlign(s Space) int64 {
	switch s {
	case L1, L0A, L0B, L0C:
		return 512
	}
	return 32
}

func alignUp(x, a int64) int64 { return (x + a - 1) / a * a }

// Extent is the bytes a tile (all elements of an array) covers: from Addr[0] to
// the end of its last element.
func (t *TileInfo) Extent() (lo, hi int64) {
	if len(t.Addr) == 0 {
		return 0, 0
	}
	lo, hi = t.Addr[0], t.Addr[0]+t.Bytes
	for _, x := range t.Addr {
		lo, hi = min(lo, x), max(hi, x+t.Bytes)
	}
	return lo, hi
}

// defaultLayout gives the (blayout, slayout, fractal) a location has when the
// declaration does not say: A2/A3's standard TileLeft/TileRight/TileAcc
// aliases for the cube buffers, row-major unboxed elsewhere.
func defaultLayout(l Loc) (string, string, int) {
	switch l {
	case LocLeft:
		return "row", "row", 512
	case LocRight:
		return "row", "col", 512
	case LocAcc:
		return "col", "row", 1024
	}
	return "row", "none", 512
}

// declareTile resolves a tile declaration (no address yet for automatic ones).
// tileScope evaluates a tile declaration's shape, valid region, layout and
// address: constants only, since a tile's placement is fixed at assembly.
var tileScope = &scope{what: "tile declaration"}

func (a *assembler) declareTile(ks *kernelScope, d *TileDecl) *TileInfo {
	if prev := ks.tiles[d.Name]; prev != nil {
		a.errs.Add(d.Span, "tile %%%s redeclared", d.Name).Note(prev.Decl.Span, "previous declaration")
		return nil
	}
	t := &TileInfo{Decl: d, Index: len(ks.k.Tiles), Name: d.Name, Count: 1}
	ok := true
	loc, okl := ParseLoc(d.Loc)
	if !okl {
		a.errs.Add(d.Span, "unknown tile location %q (have vec, mat, left, right, acc, bias, scaling)", d.Loc)
		ok = false
	} else if !ks.k.Kind.HasSpace(loc.Space()) && ks.k.Kind != CoreInvalid {
		a.errs.Add(d.Span, "%s tiles live in %s, which a %s core does not have", loc, loc.Space(), ks.k.Kind)
		ok = false
	}
	t.Loc, t.Space = loc, loc.Space()
	dt, okd := ParseDType(d.DType)
	if !okd {
		a.errs.Add(d.Span, "unknown dtype %q", d.DType)
		ok = false
	}
	t.DType = dt
	dim := func(e Expr, what string, limit int64) int {
		if e == nil {
			return 0
		}
		v, okv := a.staticInt(e, tileScope, what)
		if !okv {
			ok = false
			return 0
		}
		if v < 1 || v > limit {
			a.errs.Add(e.NodeSpan(), "%s %d out of range 1..%d%s", what, v, limit, evaluates(e, v))
			ok = false
			return 0
		}
		return int(v)
	}
	t.Rows = dim(d.Rows, "rows", 16384)
	t.Cols = dim(d.Cols, "cols", 16384)
	t.VRows, t.VCols = t.Rows, t.Cols
	// A valid region that reads registers is compiled once the kernel's
	// registers are known (dynValid); until then the declared shape bounds it.
	// A placeholder marks it for the instructions' checks meanwhile.
	if d.VRows != nil && readsReg(d.VRows) {
		ks.dynValid = append(ks.dynValid, t)
		t.DynVRows = &CExpr{}
	} else if d.VRows != nil {
		t.VRows = dim(d.VRows, "valid rows", 16384)
		if t.VRows > t.Rows && t.Rows > 0 {
			a.errs.Add(d.VRows.NodeSpan(), "valid rows %d exceed rows %d", t.VRows, t.Rows)
			ok = false
		}
	}
	if d.VCols != nil && readsReg(d.VCols) {
		if len(ks.dynValid) == 0 || ks.dynValid[len(ks.dynValid)-1] != t {
			ks.dynValid = append(ks.dynValid, t)
		}
		t.DynVCols = &CExpr{}
	} else if d.VCols != nil {
		t.VCols = dim(d.VCols, "valid cols", 16384)
		if t.VCols > t.Cols && t.Cols > 0 {
			a.errs.Add(d.VCols.NodeSpan(), "valid cols %d exceed cols %d", t.VCols, t.Cols)
			ok = false
		}
	}
	t.BLayout, t.SLayout, t.Fractal = defaultLayout(loc)
	for _, at := range d.Attrs {
		word := ""
		if n, isName := at.Val.(*Name); isName {
			word = strings.ToLower(n.Name)
		}
		switch at.Key {
		case "blayout":
			switch word {
			case "row", "row_major", "rowmajor":
				t.BLayout = "row"
			case "col", "col_major", "colmajor":
				t.BLayout = "col"
			default:
				a.errs.Add(at.Span, "blayout must be row or col")
			}
		case "slayout":
			switch word {
			case "none", "none_box", "nonebox":
				t.SLayout = "none"
			case "row", "row_major", "rowmajor":
				t.SLayout = "row"
			case "col", "col_major", "colmajor":
				t.SLayout = "col"
			default:
				a.errs.Add(at.Span, "slayout must be none, row or col")
			}
		case "fractal":
			if v, okv := a.staticInt(at.Val, tileScope, "fractal"); okv {
				if v != 512 && v != 1024 {
					a.errs.Add(at.Val.NodeSpan(), "fractal must be 512 or 1024")
				}
				t.Fractal = int(v)
			}
		case "pad":
			// pad policy (null, zero, max, min or a value) is accepted and ignored.
		default:
			a.errs.Add(at.Span, "unknown tile layout attribute %s (have blayout, slayout, fractal, pad)", at.Key)
		}
	}
	if ok {
		t.Bytes = int64(t.Rows) * int64(t.Cols) * int64(dt.Size())
		// Unboxed tiles move in 32-byte blocks per row (column when col-major).
		if t.SLayout == "none" {
			if t.BLayout == "row" && t.Cols*dt.Size()%32 != 0 {
				a.errs.Add(d.Cols.NodeSpan(), "row of %%%s is %d bytes (%d × %s); a row-major tile row must be a multiple of 32 bytes",
					d.Name, t.Cols*dt.Size(), t.Cols, dt)
				ok = false
			} else if t.BLayout == "col" && t.Rows*dt.Size()%32 != 0 {
				a.errs.Add(d.Rows.NodeSpan(), "column of %%%s is %d bytes; a col-major tile column must be a multiple of 32 bytes",
					d.Name, t.Rows*dt.Size())
				ok = false
			}
		}
	}
	if d.Count != nil {
		t.IsArray = true
		if v, okv := a.staticInt(d.Count, tileScope, "tile array length"); okv {
			if v < 1 || v > 1024 {
				a.errs.Add(d.Count.NodeSpan(), "tile array length %d out of range 1..1024%s", v, evaluates(d.Count, v))
				ok = false
			} else {
				t.Count = int(v)
			}
		} else {
			ok = false
		}
	}
	ks.tiles[d.Name] = t
	ks.k.Tiles = append(ks.k.Tiles, t)
	if !ok {
		ks.bad[t] = true
	}
	return t
}

// place assigns addresses: explicit tiles first, then automatic ones first fit.
func (a *assembler) place(ks *kernelScope) {
	type used struct{ lo, hi int64 }
	var taken [NumSpaces][]used
	step := func(t *TileInfo) (int64, bool) {
		if t.Decl.Step == nil {
			return alignUp(t.Bytes, 32), true
		}
		v, ok := a.staticInt(t.Decl.Step, tileScope, "step")
		if ok && (v < 0 || v%32 != 0) {
			a.errs.Add(t.Decl.Step.NodeSpan(), "step %#x must be a non-negative multiple of 32", v)
			return 0, false
		}
		if capacity := SpaceCapacity(t.Space); ok && t.Count > 1 && v > capacity {
			// Larger is past the end anyway, and addr + n*step could wrap.
			a.errs.Add(t.Decl.Step.NodeSpan(), "step %#x of %%%s is larger than %s (%#x bytes)", v, t.Name, t.Space, capacity)
			return 0, false
		}
		if ok && v < t.Bytes && t.Count > 1 {
			// Overlapping array elements are legal aliasing; the listing shows them.
		}
		return v, ok
	}
	for _, t := range ks.k.Tiles {
		if ks.bad[t] || t.Decl.Addr == nil {
			continue
		}
		base, ok := a.staticInt(t.Decl.Addr, tileScope, "tile address")
		st, oks := step(t)
		if !ok || !oks {
			ks.bad[t] = true
			continue
		}
		if base < 0 || base%32 != 0 {
			a.errs.Add(t.Decl.Addr.NodeSpan(), "tile address %#x must be a non-negative multiple of 32", base)
			ks.bad[t] = true
			continue
		}
		// Past the buffer's end from the start: caught here, before
		// base + n*step can wrap around int64 and look in range.
		if capacity := SpaceCapacity(t.Space); base >= capacity {
			a.errs.Add(t.Decl.Addr.NodeSpan(), "tile %%%s at %#x lies past the end of %s (%d KiB = %#x bytes)",
				t.Name, base, t.Space, capacity>>10, capacity)
			ks.bad[t] = true
			continue
		}
		for n := 0; n < t.Count; n++ {
			t.Addr = append(t.Addr, base+int64(n)*st)
		}
		a.checkCapacity(t)
		lo, hi := t.Extent()
		taken[t.Space] = append(taken[t.Space], used{lo, hi})
	}
	for _, t := range ks.k.Tiles {
		if ks.bad[t] || t.Decl.Addr != nil {
			continue
		}
		if t.Unplaced {
			// Bound at run time only (tassign and friends): it takes no
			// bytes, and Addr keeps the element count for the machine.
			t.Addr = make([]int64, t.Count)
			continue
		}
		st, ok := step(t)
		if !ok {
			ks.bad[t] = true
			continue
		}
		size := st*int64(t.Count-1) + t.Bytes
		al := SpaceAlign(t.Space)
		us := taken[t.Space]
		sort.Slice(us, func(i, j int) bool { return us[i].lo < us[j].lo })
		at := int64(0)
		for _, u := range us {
			if at+size <= u.lo {
				break
			}
			at = max(at, alignUp(u.hi, al))
		}
		t.Auto = true
		for n := 0; n < t.Count; n++ {
			t.Addr = append(t.Addr, at+int64(n)*st)
		}
		a.checkCapacity(t)
		taken[t.Space] = append(us, used{at, at + size})
	}
}

func (a *assembler) checkCapacity(t *TileInfo) {
	capacity := SpaceCapacity(t.Space)
	for n, x := range t.Addr {
		if x > capacity-t.Bytes { // x+t.Bytes > capacity, without overflow
			name := "%" + t.Name
			if t.IsArray {
				name = "%" + t.Name + "[" + itoa(n) + "]"
			}
			sp := t.Decl.Span
			if t.Decl.Addr != nil {
				sp = t.Decl.Addr.NodeSpan()
			}
			how := "placed automatically"
			if !t.Auto {
				how = "at its explicit address"
			}
			a.errs.Add(sp, "tile %s [%#x,%#x) (%d bytes, %s) runs past the end of %s (%d KiB = %#x bytes)",
				name, x, x+t.Bytes, t.Bytes, how, t.Space, capacity>>10, capacity)
			return
		}
	}
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	neg := n < 0
	if neg {
		n = -n
	}
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}

// TileOverlap is a pair of tile elements of one kernel whose byte ranges in the
// same buffer intersect.
type TileOverlap struct {
	A, B       *TileInfo
	AIdx, BIdx int // array element, 0 for single tiles
	Lo, Hi     int64
}

// MaxOverlaps bounds Overlaps: a step-0 array of a thousand elements would
// otherwise list half a million pairs.
const MaxOverlaps = 4096

// Overlaps lists overlapping pairs of tile elements in k (elements of one array
// included), ordered by the earlier element's declaration, at most MaxOverlaps.
func (k *KernelInfo) Overlaps() []TileOverlap {
	type elem struct {
		t      *TileInfo
		ti, n  int
		lo, hi int64
	}
	var es []elem
	for i, t := range k.Tiles {
		if t.Unplaced {
			continue // no bytes until the machine binds it
		}
		for n, x := range t.Addr {
			if t.Bytes > 0 {
				es = append(es, elem{t, i, n, x, x + t.Bytes})
			}
		}
	}
	// Sweep by start address per space; pairs come out sorted afterwards.
	sort.SliceStable(es, func(i, j int) bool {
		if es[i].t.Space != es[j].t.Space {
			return es[i].t.Space < es[j].t.Space
		}
		return es[i].lo < es[j].lo
	})
	var out []TileOverlap
	for i := 0; i < len(es) && len(out) < MaxOverlaps; i++ {
		for j := i + 1; j < len(es) && es[j].t.Space == es[i].t.Space && es[j].lo < es[i].hi; j++ {
			x, y := es[i], es[j]
			if y.ti < x.ti || (y.ti == x.ti && y.n < x.n) {
				x, y = y, x
			}
			out = append(out, TileOverlap{A: x.t, B: y.t, AIdx: x.n, BIdx: y.n, Lo: max(x.lo, y.lo), Hi: min(x.hi, y.hi)})
			if len(out) == MaxOverlaps {
				break
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.A.Index != b.A.Index {
			return a.A.Index < b.A.Index
		}
		if a.AIdx != b.AIdx {
			return a.AIdx < b.AIdx
		}
		if a.B.Index != b.B.Index {
			return a.B.Index < b.B.Index
		}
		return a.BIdx < b.BIdx
	})
	return out
}
