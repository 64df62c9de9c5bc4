package machine

import (
	"fmt"

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
	xop    *asm.COp
	args   [maxArgs]tmplArg
	// acc is the listing, GM accesses (fromGM) relative to the window's
	// first byte and rank 0; a tile access's agent is written per
	// instance.
	acc    []Access
	fromGM uint64
}

// tmplArg is what the listing read of one operand, but a GM window's
// start (Off) and owner rank.
type tmplArg struct {
	acc        asm.Access
	kind       asm.ArgKind
	tile       *asm.TileInfo
	gmT        *asm.TensorInfo
	off        int64 // a tile's offset; 0 for a GM window
	rowStride  int64
	ival       int64
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
	if int(t.n) != len(e.args) || t.atomic != e.atomic || t.xop != e.xop {
		return false
	}
	for i := range e.args {
		a, k := &e.args[i], &t.args[i]
		if a.Kind != k.kind || a.Int != k.ival || e.access[i] != k.acc {
			return false
		}
		if k.acc == asm.AccNone {
			continue
		}
		if a.Tile != k.tile || a.GM != k.gmT || a.RowStride != k.rowStride ||
			e.winR[i] != k.winR || e.winC[i] != k.winC {
			return false
		}
		if int8(i) != t.gm && a.Off != k.off {
			return false
		}
	}
	return true
}

// apply appends the template's accesses for e (which matches it) on the
// agent's rank and core.
func (t *accTmpl) apply(m *Machine, rank, core int32, e *entry, out []Access) []Access {
	var shift int64
	var gr int32
	if t.gm >= 0 {
		a := &e.args[t.gm]
		gr = e.argRank[t.gm]
		shift = m.ranks[gr].gm[a.GM.Index].base + a.Off
	}
	for k := range t.acc {
		x := t.acc[k]
		if t.fromGM>>k&1 != 0 {
			x.Lo, x.Hi, x.Rank = x.Lo+shift, x.Hi+shift, gr
		} else {
			x.Rank, x.Core = rank, core
		}
		out = append(out, x)
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
	t.n, t.atomic, t.xop, t.gm = uint8(len(e.args)), e.atomic, e.xop, -1
	for i := range e.args {
		a := &e.args[i]
		t.args[i] = tmplArg{acc: e.access[i], kind: a.Kind, ival: a.Int}
		if e.access[i] == asm.AccNone {
			continue
		}
		k := &t.args[i]
		k.tile, k.gmT, k.rowStride, k.winR, k.winC = a.Tile, a.GM, a.RowStride, e.winR[i], e.winC[i]
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
