package machine

import (
	"cmp"
	"slices"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/memory"
)

// What an executed entry touched, as the observers see it (Event.Accesses).

// accesses lists the byte ranges an entry touched: whole tiles (the hazard
// model's granularity) and GM windows, strided (Access.Rows) unless the rows
// are contiguous.
func (c *core) accesses(e *entry, out []Access) []Access {
	return c.accessesAs(c.m, int32(c.rank.id), int32(c.vid), e, out)
}

// accessesAs is accesses with the core's machine and agent ids given (a
// pipe's event has them: pipeEvent), so that it reads none of the core's
// lines.
func (c *core) accessesAs(m *Machine, rank, core int32, e *entry, out []Access) []Access {
	if e.lean == leanNone {
		return m.tmplAccesses(rank, core, e, out)
	}
	// A lean entry's accesses are a function of its plan, its dynamic
	// operands and #init (leanOperands), and of the agent, which every
	// one of them (a tile's) names: an op cycles through a few
	// (double-buffered tiles, a K loop's windows), so they are memoised
	// per plan and the agent written in.
	k := leanKey{dyn: e.ldyn, kind: e.lean}
	mm := &e.plan.leanMemo
	if rs, ok := k.find(mm); ok {
		for _, a := range rs {
			a.Rank, a.Core = rank, core
			out = append(out, a)
		}
		return out
	}
	args, access := leanArgs(e.plan, &e.ldyn, e.lean, &e.plan.leanArgs, &m.leanAccess)
	n := len(out)
	out = m.operandAccesses(&m.winMemo, rank, core, e, args, access, out)
	rs := append(mm.spare(), out[n:]...)
	if rs == nil {
		rs = []Access{} // no access is a list too
	}
	mm.keep(k, rs)
	return out
}

// Deferred is a lean op's exec event's accesses, not yet listed: the op's
// plan, its dynamic operands' values and whether #init held
// (leanOperands). The plan's template, dynamic operand table and accesses
// do not change once planned, so another goroutine may list them
// (AccessLister) while the machine runs on.
type Deferred struct {
	plan *opPlan
	dyn  [maxLeanDyn]int32
	kind leanKind
}

// Pending reports whether the event's accesses were deferred.
func (d *Deferred) Pending() bool { return d.plan != nil }

// AccessLister lists deferred accesses (Event.Deferred) with memos of its
// own, so an observer can use it on its goroutine while the machine lists
// other events' accesses on its own. Its zero value is ready to use; one
// lister serves one goroutine.
type AccessLister struct {
	// plans is a memo per lean plan, by its number (opPlan.leanID), and
	// win the window ranges computed so far.
	plans  []listerPlan
	win    map[winKey][]winRange
	access [maxArgs]asm.Access
	e      entry // the plan's op, for tileWindow
}

// listerPlan is a plan's operands with dynamic values written in, and its
// last few access lists.
type listerPlan struct {
	pl   *opPlan
	args []Operand
	memo leanMemo
}

// Accesses is e's accesses: Event.Accesses, or those Deferred names, with
// e's agent. A deferred list is the lister's own and valid until its next
// call; the caller must not keep or change it.
func (l *AccessLister) Accesses(e *Event) []Access {
	d := &e.Deferred
	pl := d.plan
	if pl == nil || len(e.Accesses) > 0 {
		return e.Accesses
	}
	id := int(pl.leanID)
	if id >= len(l.plans) {
		l.plans = append(l.plans, make([]listerPlan, id+1-len(l.plans))...)
	}
	s := &l.plans[id]
	if s.pl != pl { // another machine's plan of the same number
		*s = listerPlan{pl: pl}
	}
	k := leanKey{dyn: d.dyn, kind: d.kind}
	rs, ok := k.find(&s.memo)
	if !ok {
		args, access := leanArgs(pl, &d.dyn, d.kind, &s.args, &l.access)
		l.e.xop = pl.op
		// nil machine: a lean op has no GM operand, the only kind that
		// reads the machine's state.
		rs = (*Machine)(nil).operandAccesses(&l.win, 0, 0, &l.e, args, access, s.memo.spare())
		if rs == nil {
			rs = []Access{}
		}
		s.memo.keep(k, rs)
	}
	// The list is this lister's: the agent is written in place.
	for i := range rs {
		rs[i].Rank, rs[i].Core = e.Agent.Rank, e.Agent.Core
	}
	return rs
}

// leanKey is what a lean entry's accesses depend on besides its plan.
type leanKey struct {
	dyn  [maxLeanDyn]int32
	kind leanKind
}

// leanMemo is a plan's last few lean accesses lists (accessesAs).
type leanMemo = memo8[leanKey, Access]

// find returns the accesses w keeps for k, if any. (A generic find calling
// a key method was not inlined: 5% more instructions in an observed run.)
func (k leanKey) find(w *leanMemo) ([]Access, bool) {
	for i := range w.ks {
		if x := &w.ks[i]; x.dyn == k.dyn && x.kind == k.kind && w.rs[i] != nil {
			return w.rs[i], true
		}
	}
	return nil, false
}

// memo8 is the last eight values some K gave, the oldest replaced first:
// an op cycles through a handful of windows or operand values, and a scan
// of eight keys costs less than a hash. Keys are compared field by field
// (find): comparing the structs called memequal, 1% of an observed run's
// instructions.
type memo8[K any, V any] struct {
	ks   [8]K
	rs   [8][]V
	next int
}

// keep remembers k's values in place of the oldest entry.
func (w *memo8[K, V]) keep(k K, rs []V) {
	w.ks[w.next], w.rs[w.next] = k, rs
	w.next = (w.next + 1) % len(w.ks)
}

// spare is the array keep will replace next, emptied, for the caller to
// fill instead of allocating.
func (w *memo8[K, V]) spare() []V { return w.rs[w.next][:0] }

// operandAccesses is accessesAs for operands args with accesses access,
// window ranges memoised in wm (and the entry's plan, when it has one).
// m is nil for an AccessLister's lean ops, which have no GM operand.
func (m *Machine) operandAccesses(wm *map[winKey][]winRange, rank, core int32, e *entry, args []Operand, access *[maxArgs]asm.Access, out []Access) []Access {
	for i := range args {
		a := &args[i]
		acc := access[i]
		if acc == asm.AccNone {
			continue
		}
		switch a.Kind {
		case asm.ArgTile:
			if a.Tile == nil {
				continue
			}
			el := elemOf(a.Tile, a.Off)
			if row, col, rows, cols, ok := tileWindow(e, args, i); ok {
				// textract reads, tinsert writes only a window of the
				// tile; every op touches only a tile's valid region.
				proto := Access{Space: a.Tile.Space, Rank: rank, Core: core,
					Write: acc&asm.AccWrite != 0, Tile: a.Tile, Elem: el}
				if a.Tile == &e.tile {
					// A partial comm chunk's tile is the entry's own copy
					// (smaller valid region), and the slot is reused for
					// other tiles: the memo, keyed by the tile, would
					// hand a later one this one's ranges.
					if out, ok = windowAccesses(out, proto, a, row, col, rows, cols); ok {
						continue
					}
				} else if out, ok = windowAccessesMemo(wm, out, proto, a, row, col, rows, cols, e.plan); ok {
					continue
				}
			}
			sz := a.Tile.Bytes
			w := acc&asm.AccWrite != 0
			if acc&asm.AccRead != 0 {
				out = append(out, Access{Space: a.Tile.Space, Rank: rank, Core: core,
					Lo: a.Off, Hi: a.Off + sz, Tile: a.Tile, Elem: el})
			}
			if w {
				out = append(out, Access{Space: a.Tile.Space, Rank: rank, Core: core,
					Lo: a.Off, Hi: a.Off + sz, Write: true, Tile: a.Tile, Elem: el})
			}
		case asm.ArgGM:
			if a.GM == nil || m == nil {
				continue
			}
			r := int(e.argRank[i])
			base := m.ranks[r].gm[a.GM.Index].base
			esz := int64(a.GM.DType.Size())
			ps, np := gmPieces(a, int64(e.winR[i]), int64(e.winC[i]))
			pieces := ps[:np]
			atomic := e.atomic && acc&asm.AccWrite != 0
			lo := base + a.Off
			if acc == asm.AccRead && m.readOnly[a.GM.Index] {
				hi := lo + esz
				for _, p := range pieces {
					hi = max(hi, lo+p.off+(p.runs-1)*p.pitch+p.n)
				}
				out = append(out, Access{Space: asm.GM, Rank: int32(r), Core: -1, Lo: lo, Hi: hi,
					Tensor: a.GM, ReadOnly: true})
				continue
			}
			for _, p := range pieces {
				// One range when the runs are contiguous, else one strided
				// access: rows of an ND window narrower than the tensor,
				// columns of a DN window shorter than the tensor's columns.
				plo := lo + p.off
				x := Access{Space: asm.GM, Rank: int32(r), Core: -1, Lo: plo, Hi: plo + max(p.n, esz), Tensor: a.GM, Rows: p.runs, Pitch: p.pitch}
				if p.runs <= 1 || p.pitch == p.n {
					x.Hi, x.Rows, x.Pitch = plo+max((p.runs-1)*p.pitch+p.n, esz), 0, 0
				}
				if acc&asm.AccRead != 0 && !atomic {
					out = append(out, x)
				}
				if acc&asm.AccWrite != 0 {
					x.Write, x.Atomic = true, atomic
					out = append(out, x)
				}
			}
		}
	}
	return out
}

// gmPiece is part of a GM window: runs contiguous runs of n bytes, pitch
// bytes apart, from off bytes past the window's first element.
type gmPiece struct{ off, runs, n, pitch int64 }

// gmPieces is how a rows×cols window of GM operand a lies in memory. An ND
// window is a run per row, the tensor's row stride apart; a DN
// (column-major) window is a run per column, rows elements long, the
// matrix's column length apart (the layout memory.GMLayout gives the
// machine's data path). An NZ matrix holds each column block (a box's width
// of columns) as its rows one box row after another, the blocks one after
// another (memory.Layout2D's NZ offsets): a window is the part of its first
// block it covers (a row of it per box row, when it starts inside the
// block), then its whole blocks (a run of rows box rows per block, a block
// apart), then the part of its last block.
func gmPieces(a *Operand, rows, cols int64) (ps [3]gmPiece, n int) {
	esz := int64(a.GM.DType.Size())
	switch a.GM.Layout {
	case asm.LayoutND:
		ps[0] = gmPiece{0, rows, cols * esz, a.RowStride}
		return ps, 1
	case asm.LayoutDN:
		l := memory.GMLayout(a.GM)
		ps[0] = gmPiece{0, cols, rows * esz, int64(l.Rows) * esz}
		return ps, 1
	case asm.LayoutNZ:
		l := memory.GMLayout(a.GM)
		br, bc := l.Box()
		unit := int64(bc) * esz
		if unit <= 0 || esz <= 0 {
			break
		}
		block := int64((l.Rows+br-1)/br*br) * unit
		off, rem := int64(0), cols
		if p := a.Off % unit / esz; p != 0 {
			w := min(int64(bc)-p, rem)
			ps[n], n = gmPiece{0, rows, w * esz, unit}, n+1
			off, rem = block-p*esz, rem-w
		}
		if full := rem / int64(bc); full > 0 {
			ps[n], n = gmPiece{off, full, rows * unit, block}, n+1
			off, rem = off+full*block, rem-full*int64(bc)
		}
		if rem > 0 {
			ps[n], n = gmPiece{off, rows, rem * esz, unit}, n+1
		}
		return ps, n
	}
	ps[0] = gmPiece{0, 1, rows * cols * esz, 0}
	return ps, 1
}

// elemOf is the element of t's array that sits at off, the address the
// operand resolved to (Tile.Addr[idx]). Elements are ADDR + n*STEP, so the
// index is one division; a step smaller than the tile makes elements
// overlap, and only the operand's own address says which one was named.
func elemOf(t *asm.TileInfo, off int64) int32 {
	n := int64(len(t.Addr))
	if n <= 1 {
		return 0
	}
	if step := t.Addr[1] - t.Addr[0]; step != 0 {
		if d := off - t.Addr[0]; d%step == 0 {
			if k := d / step; k >= 0 && k < n && t.Addr[k] == off {
				return int32(k)
			}
		}
	}
	for k, a := range t.Addr {
		if a == off {
			return int32(k)
		}
	}
	return 0
}

// tileWindow is the (row, col, rows, cols) window of tile operand i of e
// (whose operands are args) that the op touches, or ok == false when it
// touches the whole tile: a textract reads the dst-sized window of its source (operand 1), a tinsert
// writes the src-sized window of its destination (operand 0), and every
// other op touches only its operands' valid regions ([VRows, VCols] at
// (0, 0): exec.go's tileView), so a tile declared with a valid region
// smaller than its shape (a sub-tile view: a column half of a row-major
// buffer, say, `[R, C] valid [R, C/2]` at an offset inside it) covers
// exactly that window. Only a gather's source and a scatter's destination
// are indexed over the tile's whole storage (exec_vec.go's flatView).
func tileWindow(e *entry, args []Operand, i int) (row, col, rows, cols int, ok bool) {
	code := asm.OpNone
	if e.xop != nil && e.xop.Info != nil {
		code = e.xop.Info.Op
	}
	var other *asm.TileInfo
	switch {
	case code == asm.OpTextract && i == 1 && len(args) >= 4:
		other = args[0].Tile
	case code == asm.OpTinsert && i == 0 && len(args) >= 4:
		other = args[1].Tile
	case code == asm.OpTgather && i == 1, code == asm.OpTscatter && i == 0:
		return 0, 0, 0, 0, false
	default:
		t := args[i].Tile
		if t == nil || t.VRows <= 0 || t.VCols <= 0 || (t.VRows >= t.Rows && t.VCols >= t.Cols) {
			return 0, 0, 0, 0, false
		}
		return 0, 0, t.VRows, t.VCols, true
	}
	r, c := args[2].Int, args[3].Int
	if other == nil || r < 0 || c < 0 || r > 1<<30 || c > 1<<30 {
		return 0, 0, 0, 0, false
	}
	return int(r), int(c), other.VRows, other.VCols, true
}

// winMemo is an op's last few windows and their byte ranges (opPlan.win).
// A textract in a K loop moves its window every step (gemm_db reads four
// column windows in turn): a single entry missed on every instance and fell
// back to the machine's map, whose hash of the 40-byte key was 3% of the
// machine's time with the detector attached.
type winMemo = memo8[winKey, winRange]

// find returns the ranges w keeps for k, if any.
func (k winKey) find(w *winMemo) ([]winRange, bool) {
	for i := range w.ks {
		if x := &w.ks[i]; x.t == k.t && x.row == k.row && x.col == k.col && x.rows == k.rows && x.cols == k.cols && w.rs[i] != nil {
			return w.rs[i], true
		}
	}
	return nil, false
}

// winRange is one access of a window relative to the tile's address: a
// byte range, strided when rows > 1 (Access.Rows, Access.Pitch).
type winRange struct{ lo, hi, rows, pitch int64 }

// winKey names one window of one tile declaration: its byte ranges relative
// to the tile's address are the same on every instance.
type winKey struct {
	t                    *asm.TileInfo
	row, col, rows, cols int
}

// windowAccessesMemo is windowAccesses with the ranges computed once per
// window: a fractal window is a range per box row, sorted and merged, and
// computing it on every textract was most of the detector's time in a GEMM.
// wm is the machine's map (or an AccessLister's), pl the op's plan (nil for
// none, or for a lister: its per-plan memo is the machine's).
func windowAccessesMemo(wm *map[winKey][]winRange, out []Access, proto Access, a *Operand, row, col, rows, cols int, pl *opPlan) ([]Access, bool) {
	k := winKey{a.Tile, row, col, rows, cols}
	if a.Tile.Of != nil {
		// A view's ranges relative to its address are its declaration's.
		k.t = a.Tile.Of
	}
	var rs []winRange
	ok := false
	if pl != nil && pl.win != nil {
		rs, ok = k.find(pl.win)
	}
	if ok {
		return appendWindow(out, proto, a, rs), true
	}
	rs, ok = (*wm)[k]
	if !ok {
		zero := *a
		zero.Off = 0
		var tmp []Access
		if tmp, ok = windowAccesses(nil, Access{}, &zero, row, col, rows, cols); ok {
			rs = make([]winRange, len(tmp))
			for i, x := range tmp {
				rs[i] = winRange{x.Lo, x.Hi, x.Rows, x.Pitch}
			}
		}
		if *wm == nil {
			*wm = map[winKey][]winRange{}
		}
		(*wm)[k] = rs
	}
	if rs != nil && pl != nil {
		// An op's windows repeat instance after instance: skip the hash.
		if pl.win == nil {
			pl.win = &winMemo{}
		}
		pl.win.keep(k, rs)
	}
	if rs == nil {
		return out, false
	}
	return appendWindow(out, proto, a, rs), true
}

// appendWindow appends a window's ranges, relative to the tile, as accesses
// of operand a.
func appendWindow(out []Access, proto Access, a *Operand, rs []winRange) []Access {
	for _, r := range rs {
		x := proto
		x.Lo, x.Hi, x.Rows, x.Pitch = a.Off+r.lo, a.Off+r.hi, r.rows, r.pitch
		out = append(out, x)
	}
	return out
}

// windowAccesses appends the byte ranges of the rows×cols window at (row, col)
// of tile operand a, each a copy of proto with Lo/Hi set: one range per
// contiguous run (a full-width ND window is one range, a narrower one a range
// per row), merged where runs touch. It returns out unchanged and false when
// the window does not fit the tile, so the caller reports the whole tile.
func windowAccesses(out []Access, proto Access, a *Operand, row, col, rows, cols int) ([]Access, bool) {
	t := a.Tile
	if rows <= 0 || cols <= 0 || row+rows > t.Rows || col+cols > t.Cols {
		return out, false
	}
	l := memory.TileLayout(t)
	sz := int64(t.DType.Size())
	start := len(out)
	add := func(o, n int64) {
		if k := len(out) - 1; k >= start && out[k].Hi == a.Off+o {
			out[k].Hi += n
			return
		}
		x := proto
		x.Lo, x.Hi = a.Off+o, a.Off+o+n
		out = append(out, x)
	}
	switch l.Kind {
	case memory.ND, memory.DN:
		// Row-major (column-major): each row (column) of the window is one
		// run, the runs a pitch apart: one strided access, whatever the
		// count, so observers pay per instruction and see the exact bytes.
		runs, n, pitch := int64(rows), int64(cols)*sz, l.Offset(1, 0)-l.Offset(0, 0)
		if l.Kind == memory.DN {
			runs, n, pitch = int64(cols), int64(rows)*sz, l.Offset(0, 1)-l.Offset(0, 0)
		}
		lo := l.Offset(row, col)
		if runs == 1 || n == pitch {
			add(lo, (runs-1)*pitch+n)
			return out, true
		}
		x := proto
		x.Lo, x.Hi, x.Rows, x.Pitch = a.Off+lo, a.Off+lo+n, runs, pitch
		return append(out, x), true
	default:
		for r := row; r < row+rows; r++ {
			for c := col; c < col+cols; {
				n := min(runLen(l, c), col+cols-c)
				add(l.Offset(r, c), int64(n)*sz)
				c += n
			}
		}
	}
	if len(out)-start > maxWindowRanges {
		// Fractal layouts visit boxes out of address order: sort and merge.
		w := out[start:]
		slices.SortFunc(w, func(x, y Access) int { return cmp.Compare(x.Lo, y.Lo) })
		k := 0
		for i := 1; i < len(w); i++ {
			if w[i].Lo <= w[k].Hi {
				w[k].Hi = max(w[k].Hi, w[i].Hi)
				continue
			}
			k++
			w[k] = w[i]
		}
		out = out[:start+k+1]
	}
	if len(out)-start > maxWindowRanges {
		// Too scattered: the bounding range. Every layout's offset grows with
		// the row and with the column, so the corners bound it.
		out = out[:start]
		x := proto
		x.Lo, x.Hi = a.Off+l.Offset(row, col), a.Off+l.Offset(row+rows-1, col+cols-1)+sz
		out = append(out, x)
	}
	return out, true
}

// runLen is how many elements from column c onward are contiguous in a row
// of fractal layout l (Z-inner boxes: the rest of the box row; column-major
// boxes: one).
func runLen(l memory.Layout2D, c int) int {
	switch l.Kind {
	case memory.NZ, memory.ZZ:
		_, bc := l.Box()
		return bc - c%bc
	}
	return 1
}
