package machine

import (
	"fmt"
	"slices"

	"github.com/ptoasm/ptoasm/asm"
)

// Access templates: an observed op with a GM operand (not lean: its
// accesses are listed on the machine's goroutine, listTo) lists the same
// accesses on every instance but for where its GM window starts and whose
// GM it is. The ring's tload @In[%c * CHUNK] on 384 ranks lists 1.3 M
// times, each about 500 instructions through operandAccesses, tileWindow
// and gmPieces (issue 28, docs/performance.md "Lint round 20"). So the
// plan keeps the last instance's list as a template, its GM accesses
// relative to the window's first byte, with every input the listing read
// that is not the window's start; an instance whose inputs match copies
// the template and moves the GM accesses to its own window.
//
// What the listing reads (operandAccesses): per operand its access, kind,
// tile and offset (a tile's element, its valid window, a textract's or
// tinsert's window from operands 2 and 3: Int), GM tensor, row stride and
// window shape (winR, winC: gmPieces), the owner rank (the window's base
// and Access.Rank), and the entry's atomic and xop. A GM window's pieces
// and read-only bound are offsets from base+Off except in the NZ layout
// (a box's column phase, Off % unit), which is not templated; neither is
// an op with two GM operands (which access came from which), an entry's
// own tile copy (a partial comm chunk: the same pointer with another
// valid region), nor a plan whose tiles' valid regions read registers.
// checkAccTmpl (tests) lists every hit afresh as well and panics on any
// difference (TestAccessTemplates); Options.NoAccessTemplates turns the
// templates off, for tests that compare findings (TestAccessTemplatesKeepFindings).

// accTmpl is one plan's template.
type accTmpl struct {
	ok     bool
	atomic bool
	n      uint8 // operands
	gm     int8  // the GM operand the GM accesses are relative to, -1 for none
	nused  uint8 // used's length
	// window says the op reads operands 2 and 3 as a tile window's
	// origin (textract, tinsert: tileWindow).
	window bool
	used   [maxArgs]uint8 // the operands with an access, in order
	access [maxArgs]asm.Access
	xop    *asm.COp
	args   [maxArgs]tmplArg // by operand; only used's are filled
	win    [2]int64         // operands 2 and 3's Int when window
	winT   [2]*asm.TileInfo // operands 0 and 1's tiles when window
	// acc is the listing, GM accesses (fromGM) relative to the window's
	// first byte and rank 0; a tile access's agent is written per
	// instance.
	acc    []Access
	fromGM uint64
}

// tmplArg is what the listing read of one operand with an access, but a
// GM window's start (Off) and owner rank.
type tmplArg struct {
	kind       asm.ArgKind
	tile       *asm.TileInfo
	gmT        *asm.TensorInfo
	off        int64 // a tile's offset; 0 for a GM window
	rowStride  int64
	winR, winC int32
}

// maxTmplAcc bounds a template's accesses (fromGM's bits).
const maxTmplAcc = 64

// checkAccTmpl makes every template hit list its accesses afresh too and
// panic on a difference; accTmplHits counts the hits checked (tests).
var (
	checkAccTmpl bool
	accTmplHits  int
)

// tmplAccesses is operandAccesses for a non-lean entry e of an observed
// run, through its plan's template when the inputs match.
func (m *Machine) tmplAccesses(rank, core int32, e *entry, out []Access) []Access {
	pl := e.plan
	if pl == nil || m.opt.NoAccessTemplates {
		return m.operandAccesses(&m.winMemo, rank, core, e, e.args, &e.access, out)
	}
	t := pl.accT
	if t != nil && t.ok && t.matches(e) {
		n0 := len(out)
		out = t.apply(m, rank, core, e, out)
		if checkAccTmpl {
			m.checkTmpl(rank, core, e, out[n0:])
		}
		return out
	}
	n0 := len(out)
	out = m.operandAccesses(&m.winMemo, rank, core, e, e.args, &e.access, out)
	if t == nil {
		t = &accTmpl{}
		pl.accT = t
	}
	t.fill(m, e, out[n0:])
	return out
}

// matches reports whether e's inputs are the template's.
func (t *accTmpl) matches(e *entry) bool {
	if int(t.n) != len(e.args) || t.atomic != e.atomic || t.xop != e.xop || t.access != e.access {
		return false
	}
	if t.window && (e.args[2].Int != t.win[0] || e.args[3].Int != t.win[1] ||
		e.args[0].Tile != t.winT[0] || e.args[1].Tile != t.winT[1]) {
		return false
	}
	for _, i := range t.used[:t.nused] {
		a, k := &e.args[i], &t.args[i]
		if a.Kind != k.kind || a.Tile != k.tile || a.GM != k.gmT || a.RowStride != k.rowStride ||
			e.winR[i] != k.winR || e.winC[i] != k.winC || (int8(i) != t.gm && a.Off != k.off) {
			return false
		}
	}
	return true
}

// apply appends the template's accesses for e (which matches it) on the
// agent's rank and core, each written in place.
func (t *accTmpl) apply(m *Machine, rank, core int32, e *entry, out []Access) []Access {
	var shift int64
	var gr int32
	if t.gm >= 0 {
		a := &e.args[t.gm]
		gr = e.argRank[t.gm]
		shift = m.ranks[gr].gm[a.GM.Index].base + a.Off
	}
	n := len(out)
	out = slices.Grow(out, len(t.acc))[:n+len(t.acc)]
	dst := out[n:]
	for k := range dst {
		x := &dst[k]
		*x = t.acc[k]
		if t.fromGM>>k&1 != 0 {
			x.Lo, x.Hi, x.Rank = x.Lo+shift, x.Hi+shift, gr
		} else {
			x.Rank, x.Core = rank, core
		}
	}
	return out
}

// fill makes the template e's, whose listing is acc, or marks it unusable
// when e is one the template cannot stand for.
func (t *accTmpl) fill(m *Machine, e *entry, acc []Access) {
	t.ok = false
	if e.plan.varShape || len(e.args) > maxArgs || len(acc) > maxTmplAcc {
		return
	}
	t.n, t.atomic, t.xop, t.gm, t.access, t.nused = uint8(len(e.args)), e.atomic, e.xop, -1, e.access, 0
	code := asm.OpNone
	if e.xop != nil && e.xop.Info != nil {
		code = e.xop.Info.Op
	}
	if t.window = (code == asm.OpTextract || code == asm.OpTinsert) && len(e.args) >= 4; t.window {
		t.win = [2]int64{e.args[2].Int, e.args[3].Int}
		t.winT = [2]*asm.TileInfo{e.args[0].Tile, e.args[1].Tile}
	}
	for i := range e.args {
		if e.access[i] == asm.AccNone {
			continue
		}
		a := &e.args[i]
		t.used[t.nused], t.nused = uint8(i), t.nused+1
		k := &t.args[i]
		*k = tmplArg{kind: a.Kind, tile: a.Tile, gmT: a.GM, rowStride: a.RowStride, winR: e.winR[i], winC: e.winC[i]}
		switch {
		case a.Kind == asm.ArgGM && a.GM != nil:
			if t.gm >= 0 || a.GM.Layout == asm.LayoutNZ {
				return
			}
			t.gm = int8(i)
		case a.Tile == &e.tile, a.Kind == asm.ArgTile && a.Tile != nil && a.Tile.Space == asm.GM:
			return
		default:
			k.off = a.Off
		}
	}
	var shift int64
	if t.gm >= 0 {
		a := &e.args[t.gm]
		shift = m.ranks[e.argRank[t.gm]].gm[a.GM.Index].base + a.Off
	}
	t.acc, t.fromGM = append(t.acc[:0], acc...), 0
	for k := range t.acc {
		if x := &t.acc[k]; x.Space == asm.GM && x.Core < 0 && t.gm >= 0 {
			t.fromGM |= 1 << k
			x.Lo, x.Hi, x.Rank = x.Lo-shift, x.Hi-shift, 0
		}
	}
	t.ok = true
}

// checkTmpl panics unless got is what operandAccesses lists for e.
func (m *Machine) checkTmpl(rank, core int32, e *entry, got []Access) {
	accTmplHits++
	want := m.operandAccesses(&m.winMemo, rank, core, e, e.args, &e.access, nil)
	if len(want) != len(got) {
		panic(accTmplDiff(e, want, got))
	}
	for i := range want {
		if want[i] != got[i] {
			panic(accTmplDiff(e, want, got))
		}
	}
}

func accTmplDiff(e *entry, want, got []Access) string {
	return fmt.Sprintf("access template of %s: listed %+v, template gave %+v", e.op.Info.Name, want, got)
}
