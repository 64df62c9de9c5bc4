package hazard

import (
	"maps"
	"math"
	"math/bits"
	"slices"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
)

// ---- exec -----------------------------------------------------------------

func (d *Detector) exec(e *machine.Event) {
	if e.Agent.Core != -1 {
		d.execOp(e)
		return
	}
	// An SDMA copy: in its core's issue order (sdmaorder.go).
	if !d.holdCopy(e) {
		d.execOp(e)
		d.copyRan(e)
	}
}

// execOp records exec event e of its agent.
func (d *Detector) execOp(e *machine.Event) {
	a := d.execAgent(e) // one line: default.pgo names exec's call sites by line
	d.enter(a)
	serial, p := d.takeIssueOf(a, e, e.Step != "")
	ag := &d.agents[a]
	ag.n++
	// A skipped issue number is an op of another agent of the core
	// issued between this agent's last op and this one (rec.gap); an
	// unknown number may hide one. A composite's steps share a number.
	if iss := uint32(e.Issue); iss == 0 || iss != ag.lastIssue+1 && iss != ag.lastIssue {
		ag.gaps++
		ag.lastIssue = iss
	} else {
		ag.lastIssue = iss
	}
	if ag.kind == akScalar {
		d.raiseOwn(a)
	}
	uk, unit := d.unitAcquire(a, e)
	r, accs := d.mkrec(a, e, serial), d.lister.Accesses(e) // one line: default.pgo's call sites
	// The agent's own component, and so rec.lag, stays put while the
	// event's accesses are checked (a signal read may join news:
	// access takes it again after one).
	r.lag = d.selfLag(&r)
	d.noteStep(&r, accs)
	d.hit = nil
	if vb := internalBarrier(e); vb != nil && ag.kind == akPipe {
		d.splitAtBarrier(a, &r, e, accs, vb)
	} else {
		for i := range accs {
			d.access(&r, &accs[i])
		}
	}
	if unit {
		d.unitRelease(a, e, uk)
	}
	if p != nil && (p.composite || e.Step != "") {
		// Later steps of the op see this one. The scalar does not: it waits
		// only where the expansion drains (TPut.hpp's BAR ALL before each
		// store, seen as an EvBarrier), never for the final store, so a
		// tnotify right after a tput can overtake the data (kernels.md §1(d)
		// H1) unless the program fences first.
		d.tmp = d.release(a, d.tmp)
		join(&p.steps, &d.tmp)
	}
	if ag.kind == akScalar && e.Op != nil && e.Op.Info != nil && e.Op.Info.Op == asm.OpWaitAsync {
		// wait_async covers its event's copy and the core's earlier ones,
		// the core's own, not its rank's (sdmaAgent), not later ones.
		d.waitCopies(a, e)
	}
}

// execAgent is the agent of exec event e: its own, or for an SDMA copy (of
// no core) the agent of its issuing core's copies.
func (d *Detector) execAgent(e *machine.Event) int32 {
	if e.Agent.Core == -1 {
		return d.sdmaAgent(e.Agent.Rank, e.IssueCore)
	}
	return d.agent(e.Agent)
}

// internalBarrier is the pipe_barrier(PIPE_V) inside the op e executes
// (asm.VBarrier), nil when the op has none on its operands' path.
func internalBarrier(e *machine.Event) *asm.VBarrier {
	if e.Step != "" || e.Op == nil || e.Op.Info == nil || e.Op.Info.VBar == nil || !e.Op.Info.VBar.Applies(e.Op) {
		return nil
	}
	return e.Op.Info.VBar
}

// splitAtBarrier records the accesses of an op with an internal barrier as
// the library executes them: those before the barrier at the op's epoch,
// then the barrier (the pipe's own clock moves past every earlier op and
// this op's first part, as pipe_barrier does), then those after it at a new
// epoch, which later ops see only through their own barrier or flag, or
// through the op's closing barrier when it has one (vb.Tail).
func (d *Detector) splitAtBarrier(a int32, r *rec, e *machine.Event, accs []machine.Access, vb *asm.VBarrier) {
	ag := &d.agents[a]
	phase := func(acc *machine.Access) uint8 {
		var pre, post bool
		for i := range e.Op.Args {
			if i >= 8 || e.Op.Args[i].Tile != acc.Tile || acc.Tile == nil {
				continue
			}
			want := asm.AccRead
			if acc.Write {
				want = asm.AccWrite
			}
			if specs := e.Op.Info.Operands; len(specs) > 0 && specs[min(i, len(specs)-1)].Access&want == 0 {
				continue
			}
			pre = pre || vb.Pre&(1<<i) != 0
			post = post || vb.Post&(1<<i) != 0
		}
		if !pre && !post {
			// Not an operand the table places: on both sides, the
			// conservative choice.
			return 3
		}
		var ph uint8
		if pre {
			ph |= 1
		}
		if post {
			ph |= 2
		}
		return ph
	}
	for i := range accs {
		if phase(&accs[i])&1 != 0 {
			d.access(r, &accs[i])
		}
	}
	d.raiseOwn(a)
	if vb.Post == 0 {
		return
	}
	ag.n++
	r2 := d.mkrec(a, e, r.serial)
	r2.lag = d.selfLag(&r2)
	d.hit = nil
	for i := range accs {
		if phase(&accs[i])&2 != 0 {
			d.access(&r2, &accs[i])
		}
	}
	if vb.Tail {
		d.raiseOwn(a)
	}
}

func isSignal(acc *machine.Access) bool {
	return acc.Tensor != nil && acc.Tensor.Class == asm.TensorSignal
}

func (d *Detector) shadowFor(acc *machine.Access) *shadowMem {
	k := keyOf(acc)
	if k == d.lastKey && d.lastMem != nil {
		return d.lastMem
	}
	slot := d.shadow.at(k.rank, int(k.core+1)*int(asm.NumSpaces)+int(k.space))
	m := *slot
	if m == nil {
		m = newShadowMem(pageShiftOf(k.space), &d.slab)
		*slot = m
	}
	d.lastKey, d.lastMem = k, m
	return m
}

// access checks one access of r against the shadow state and records it.
func (d *Detector) access(r *rec, acc *machine.Access) {
	if acc.Hi <= acc.Lo || d.hitMemo(r, acc) {
		return
	}
	if acc.Rows > maxRuns {
		// No tile has this many rows (junk): bound the run-by-run work.
		clamped := *acc
		clamped.Rows = maxRuns
		acc = &clamped
	}
	inBounds := d.checkBounds(r, acc)
	r.write, r.atomic = acc.Write, acc.Atomic && acc.Write
	// Only a cache hit leaves d.hit set, for the event's next access.
	prev := d.takeHit()
	if d.hitLocal(r, acc, prev, inBounds) {
		return
	}
	if isSignal(acc) {
		d.signalAccess(r, acc, acc.Write)
		r.lag = d.selfLag(r) // a read may have joined the agent's own news
		return
	}
	if acc.Space == asm.GM && acc.Tensor != nil {
		// A read of a row-major GM tensor that instructions write (a
		// GEMM's gathered A) may hit its cell: filed under the tensor,
		// since two tensors may alias one range. Writes take the view
		// (shadow2D.wrote).
		var slot, si = (*cellSlot)(nil), 0 // one line: default.pgo names the call sites below by line
		key := gmKey(acc)
		if !acc.Write && !acc.ReadOnly && d.gm2dAny { // only access2d fills a tensor's entries (noGMGrid)
			rows, pitch := shape(acc)
			slot, si = d.cells.slot(key, acc.Lo, acc.Hi, rows, pitch)
			if d.hitCached(r, acc, key, slot, rows, pitch) {
				return
			}
		}
		if g := d.gmShadowFor(acc); g != nil {
			d.access2d(r, acc, g, key, slot, si)
			return
		} else if checkShortcuts && !d.gm2dAny && !acc.Write && !acc.ReadOnly {
			d.checkNoGMGrid(acc)
		}
	}
	var ent **cell // acc's entry in its tensor's chunk index (gmindex.go)
	if acc.Space == asm.GM && acc.Tensor != nil {
		if acc.ReadOnly && !acc.Write && d.gmInitialised(acc) {
			return // nothing to record, and every byte is initialised
		}
		if ent = d.gmEntryOf(acc); ent != nil && d.hitGM(r, acc, *ent) {
			return
		}
	}
	strided := acc.NumRows() > 1
	// A range on one page, or across one page boundary (a 192 KiB UB
	// tile may fill two), is cacheable, and so is any access of a local
	// buffer, which may be in its 2-D view.
	shift := pageShiftOf(acc.Space)
	pages := (acc.Hi-1)>>shift - acc.Lo>>shift + 1
	cacheable := !(acc.ReadOnly && !acc.Write) && (!strided && pages <= 2 || acc.Space != asm.GM)
	var slot, si = (*cellSlot)(nil), 0
	key := keyOf(acc)
	if cacheable && ent == nil {
		rows, pitch := shape(acc)
		if prev != nil && prev.matches(key, acc, rows, pitch) {
			// The same bytes as the event's previous access, which hit
			// this slot: an in-place op's write after its read (a mad's
			// L0C). Visiting a cached cell splits and merges nothing, so
			// the slot still holds exactly these cells.
			d.visitSlot(r, acc, prev, rows, pitch)
			d.hit = prev
			return
		}
		slot, si = d.cells.slot(key, acc.Lo, acc.Hi, rows, pitch)
		if d.hitCached(r, acc, key, slot, rows, pitch) {
			if acc.Space != asm.GM {
				d.hit = d.cells.visited
			}
			return
		}
	}
	sm := d.shadowFor(acc)
	if sm.grid == nil && strided && acc.Space != asm.GM {
		d.toGrid(sm, key, acc)
	}
	if sm.grid != nil {
		d.access2d(r, acc, sm.grid, key, slot, si)
		return
	}
	if strided || pages > 2 {
		slot = nil // a byte-range entry holds one run over at most two pages
	}
	uninitLo, uninitHi := int64(-1), int64(-1)
	// found collects the cells of a cacheable range, one per page.
	var found [2]*cell
	nfound := 0
	// A strided access with no 2-D shadow (a GM tensor that is not plain
	// row-major) goes run by run.
	for k := range acc.NumRows() {
		lo, end := acc.Run(k)
		if acc.ReadOnly && !acc.Write && lo >= 0 && acc.Space == asm.GM && (end-1)>>shift-lo>>shift >= maxRegionPages {
			if ulo, uhi, ok := sm.unwrittenWide(lo, end); ok {
				if uninitLo < 0 {
					uninitLo = ulo
				}
				uninitHi = uhi
			}
			continue
		}
		for lo < end {
			m, hi := sm.page(lo, end)
			if acc.ReadOnly && !acc.Write {
				// Only the host writes it: nothing to race, so nothing to
				// record; the read only needs initialised bytes.
				if ulo, uhi, ok := m.unwritten(lo, hi); ok {
					if uninitLo < 0 {
						uninitLo = ulo
					}
					uninitHi = uhi
				}
				lo = hi
				continue
			}
			i, j := m.span(lo, hi)
			lo = hi
			if slot != nil || ent != nil {
				if j == i+1 && nfound < len(found) {
					found[nfound] = m.cells[i]
					nfound++
				} else {
					slot, ent = nil, nil // more cells than an entry holds
				}
			}
			d.accessCells(r, acc, m, i, j, geo{}, &uninitLo, &uninitHi)
		}
	}
	// accessCells splits and merges nothing for a single cell, so the
	// cells found are still those of the range.
	switch {
	case ent != nil && nfound == 1:
		*ent = found[0]
	case slot != nil && nfound > 0:
		d.cells.fill(slot, key, acc, found[0], found[1])
	}
	d.noteUninit(r, acc, uninitLo, uninitHi)
}

// hitCached does access on the cells of acc's bytes in buffer key when
// the cache holds them, still exactly acc's, and reports whether it did:
// a contiguous range on one cell is looked up in the sets (hitSet), any
// other in slot, the slot it hashes to (a run of cells is hitRun's). The
// entry visited is left in cells.visited. (Kept apart, the rest stays
// small enough to inline.)
func (d *Detector) hitCached(r *rec, acc *machine.Access, key shadowKey, slot *cellSlot, rows, pitch int64) bool {
	if inSets(key, rows) && d.hitSet(r, acc, key) {
		return true
	}
	if oneGMPage(key, acc, rows) {
		if checkShortcuts {
			d.checkNoSlot(acc, key, slot, rows, pitch)
		}
		return false // only the sets hold its entry (oneGMPage)
	}
	if !slot.matches(key, acc, rows, pitch) || !slot.valid() {
		return false
	}
	d.cells.visited = slot
	d.visitSlot(r, acc, slot, rows, pitch)
	return true
}

// hitSet does access on the cell of acc's bytes (contiguous) in buffer
// key when the sets hold it, and reports whether it did. The entry it
// visits through (cellCache.hit) serves the event's next access of the
// same bytes as a slot would (Detector.hit).
func (d *Detector) hitSet(r *rec, acc *machine.Access, key shadowKey) bool {
	set, t := d.cells.setOf(d.cells.h) // the slot's hash, taken just before
	c := set.find(key, t, acc.Lo, acc.Hi)
	if c == nil {
		return false
	}
	// Only these fields change: rows is 1, the rest zero (setOf, reset).
	e := &d.cells.hit
	e.key, e.lo, e.hi, e.c = key, acc.Lo, acc.Hi, c
	d.cells.visited = e
	if checkShortcuts {
		d.checkHitSet(acc, key, e)
	}
	uninitLo, uninitHi := int64(-1), int64(-1)
	d.visitCell(r, acc, c, geo{}, &uninitLo, &uninitHi)
	d.noteUninit(r, acc, uninitLo, uninitHi)
	return true
}

// hitRun does access on the n cells of run, the cache entry of an access
// of a local buffer's 2-D view over several cells, when they are still
// exactly acc's: what access2d does, without the view's band and cell
// searches.
func (d *Detector) hitRun(r *rec, acc *machine.Access, run *gridRun, n int) bool {
	if !run.valid(n) {
		return false
	}
	if checkShortcuts {
		d.checkCachedRun(acc, run, n)
	}
	uninitLo, uninitHi := int64(-1), int64(-1)
	for k := range run.cells[:n] {
		rc := &run.cells[k]
		d.visitCell(r, acc, rc.c, geo{run.base, run.pitch, int64(rc.r0), int64(rc.r1)}, &uninitLo, &uninitHi)
	}
	d.noteUninit(r, acc, uninitLo, uninitHi)
	return true
}

// visitSlot does access on the cells of slot, which hold exactly acc's
// bytes.
func (d *Detector) visitSlot(r *rec, acc *machine.Access, slot *cellSlot, rows, pitch int64) {
	if checkShortcuts {
		d.checkCachedCell(acc, slot)
	}
	uninitLo, uninitHi := int64(-1), int64(-1)
	g := geo{}
	if slot.w > 0 {
		g = exactGeo(slot.c, acc.Lo, acc.Hi+(rows-1)*pitch)
	}
	d.visitCell(r, acc, slot.c, g, &uninitLo, &uninitHi)
	if slot.c2 != nil {
		d.accessCell(r, acc, slot.c2, geo{}, &uninitLo, &uninitHi)
	}
	d.noteUninit(r, acc, uninitLo, uninitHi)
}

// maxRuns bounds a strided access's row count: a window narrower than its
// tile leaves at least two columns of 2-byte elements per row, so a tile in
// 1 MiB has at most 2^18 rows.
const maxRuns = 1 << 18

// gridSpan is how many bytes of a local buffer its 2-D view covers: more
// than any local memory, so every address maps to a row.
const gridSpan = 1 << 40

// toGrid switches local buffer sm to a 2-D view (rows of acc.Pitch bytes)
// at its first strided access, moving the cells it has so far. A textract
// of a column window of a row-major L1 tile reads a run per row: in a byte
// map that is a cell per row, split off and merged back on every K step
// (allgather_gemm at BASE_M=64 spent 29 s of an 8-rank lint on it, against
// 6.5 s of simulation), where the 2-D view keeps the tile one band with a
// cell per window. Rows line up with the tile acc reads, so its windows
// are single rectangles; any other access maps to at most three.
func (d *Detector) toGrid(sm *shadowMem, k shadowKey, acc *machine.Access) {
	base := int64(0)
	if t := acc.Tile; t != nil {
		if el, ok := elemAt(acc); ok {
			// Addresses below the aligned base would map to negative
			// rows: start the view a row earlier.
			if base = t.Addr[el] % acc.Pitch; base > 0 {
				base -= acc.Pitch
			}
		}
	}
	g := &shadow2D{base: base, pitch: acc.Pitch, rows: gridSpan / acc.Pitch}
	move := func(m *imap) {
		for _, c := range m.cells {
			if slot, _ := d.cells.slot(k, c.lo, c.hi, 1, 0); slot.c == c {
				*slot = cellSlot{}
			}
			d.rects = g.linear(d.rects[:0], c.lo-g.base, c.hi-g.base)
			for _, q := range d.rects {
				i, j := g.span(q.r0, q.r1)
				for _, b := range g.bands[i:j] {
					ci, cj := b.cols.span(q.c0, q.c1)
					for _, t := range b.cols.cells[ci:cj] {
						lo, hi := t.lo, t.hi
						c.copyTo(t)
						t.lo, t.hi = lo, hi
					}
				}
			}
			// A cache slot of a range across two pages is filed under
			// the range, not under either cell's: the old cell must
			// not match it any more (cellSlot.covers).
			c.lo, c.hi = 0, 0
		}
	}
	for _, m := range sm.dense {
		if m != nil {
			move(m)
		}
	}
	// Local buffers are far below densePages; sparse pages only come from
	// fuzzed addresses, taken in address order all the same.
	for _, p := range slices.Sorted(maps.Keys(sm.sparse)) {
		move(sm.sparse[p])
	}
	*sm = shadowMem{grid: g, shift: sm.shift, slab: sm.slab}
}

// noteUninit notes an uninitialised read of [lo, hi) (lo < 0: none).
func (d *Detector) noteUninit(r *rec, acc *machine.Access, lo, hi int64) {
	if lo >= 0 {
		d.notes = append(d.notes, raceNote{kind: KindUninitRead, cur: *r, acc: *acc, lo: lo, hi: hi, single: true})
	}
}

// keepSplits is how many cells a plain write leaves as they are rather
// than merging: a tile read in windows (textract, a half for each L0 buffer)
// and then rewritten whole would otherwise be split and merged again every
// iteration, the costliest step of the shadow; a few cells in the same state
// cost less to walk.
const keepSplits = 4

// accessCells is access on cells [i, j) of one page.
func (d *Detector) accessCells(r *rec, acc *machine.Access, m *imap, i, j int, g geo, uninitLo, uninitHi *int64) {
	for k := i; k < j; k++ {
		d.accessCell(r, acc, m.cells[k], g, uninitLo, uninitHi)
	}
	if acc.Write && !acc.Atomic && j-i > keepSplits {
		m.collapseSame(i, j)
	}
}

// accessCell is access on one cell.
func (d *Detector) accessCell(r *rec, acc *machine.Access, c *cell, g geo, uninitLo, uninitHi *int64) {
	lo, hi := g.bytes(c.lo, c.hi)
	d.cur = curCell{acc, c, g}
	if !acc.Write {
		if acc.Space == asm.GM {
			d.noteFilled(c, r) // what two kernels race on: GM (their cores' own buffers are apart)
		}
		// Bytes nothing wrote, or whose only write this read was meant to
		// precede and is not ordered after: had the run's timing let the
		// read go first, it would have read poison, so it is an
		// uninitialised read either way (beside the WAR).
		//
		// The read waits in c.uninit() either way, so that a later write
		// meant to come before it and racing it takes its uninit-read
		// back in every order the run meets them in (explainUninit).
		//
		// Past an ordered overwrite (firstW false) the earlier writes
		// may still all be kept (keptAll): a read ordered after none of
		// them read poison too, whether it landed before the overwrite
		// or after. A read ordered after the last write is after each.
		raced := c.hasW && !d.ordered(&c.w, r)
		if !c.written || c.firstW && d.beforeEveryWrite(c, r) || raced && c.keptAll() && d.beforeEveryKept(c, r) {
			if *uninitLo < 0 {
				*uninitLo = lo
			}
			*uninitHi = hi
			c.setUninit(d.putUninit(c, r, acc))
		}
		if raced {
			d.race(&c.w, r, acc, lo, hi)
			d.noteRaced(r, &c.w)
		}
		adds, n := c.adds(), 0
		low := int64(-2) // the core's watermark, looked up on first need
		var near nearOwn
		for x := range adds {
			if w := &adds[x]; w.shadowed() {
				if !near.passed(d, c, w, r) {
					d.offerShadowed(w, r, acc, lo, hi)
				}
				if low == -2 {
					low = d.landed(r, acc)
				}
				if !needShadowed(w, low) {
					continue // as the write path drops it: fewer to meet
				}
			} else if !d.ordered(w, r) && !near.passed(d, c, w, r) {
				d.race(w, r, acc, lo, hi)
				// A race with a write kept beside the last one moves
				// to a later write too (raceRead), as one with the
				// last write does.
				raced = true
				d.noteRaced(r, w)
			}
			if n != x {
				adds[n] = adds[x]
			}
			n++
		}
		if n < len(adds) {
			c.setAdds(adds[:n])
		}
		if c.hasOlds() && (raced || !c.lists.oldsBefore) {
			d.meetOlds(c, r, false, acc, lo, hi) // (warred is a write's)
		}
		if raced {
			rr := *r
			rr.raced = true
			r = &rr
		}
		switch {
		case !c.hasR:
			c.read0, c.hasR = *r, true
		case sameReader(&c.read0, r) && !keepPrior(&c.read0, r, acc):
			d.leaves(c, &c.read0)
			c.read0 = *r
		default:
			c.reads = d.putRead(c, c.reads, r, acc)
		}
		return
	}
	gm := acc.Space == asm.GM
	d.dropped = d.dropped[:0]
	// (GM keeps the writes a rewrite replaces in order: olds.)
	if d.soff[r.agent] && !gm && d.ownRewrite(r, acc, c, g) {
		return // a cell only r's agent touched, its same-pipe races off
	}
	// A write that races a read of the previous value (a WAR) is reported
	// as that WAR only: the WAW with the previous writer has the same fix.
	warred := false
	// The reads r races stay in the cell (raced), since a later write may
	// race them too. When r is ordered after the cell's last write, a read
	// that raced that write and races r moves its race to r: a read
	// arriving after both would find r alone, so the finding names r
	// whichever order the three ran in (moveRace).
	// Each ordering is looked up once: nothing below changes a clock.
	wOrdered := c.hasW && d.ordered(&c.w, r)
	after := wOrdered && !r.atomic
	keep0 := false
	// An in-place op's own read (tmuls %x, %x) stays past its write: a
	// later write racing the op races its read as well, a WAR, and must
	// find it whether it landed between the op's read and write or after
	// both (sameInstance).
	//
	// A read ordered before r by its own agent (r is that agent's write
	// after a barrier) stays as well, unmarked (shadowed): another agent's
	// write racing the read may land after r, and must meet it as it does
	// when it lands before r; FastTrack drops the read and reports only
	// the WAW with r, the WAR (a late tload of the next iteration against
	// this one's reads) or RAW came and went with the latency
	// (hazards/late_load_outer_loop). A write ordered after the read, by
	// any agent other than the reader's, drops it.
	shadow0 := false
	// Which of c's writes stay past r is the same for every read r meets
	// (racesKept), looked up at the first read that asks.
	var kw keptWrites
	if c.hasR {
		own0 := sameInstance(&c.read0, r)
		ordered0 := own0 || d.ordered(&c.read0, r)
		if ordered0 && !own0 && c.read0.raced && c.read0.agent != r.agent && !gm {
			d.moveReadRaces(c, &c.read0, r, wOrdered)
		}
		if own0 && !r.atomic || !ordered0 || c.read0.raced && d.racesKeptBy(c, &kw, &c.read0, r, after) {
			if !ordered0 && !d.superseded(c, &c.read0, r) {
				d.raceRead(c, &c.read0, r, after, acc, lo, hi)
				warred = warred || d.intendedBefore(&c.read0, r)
			}
			keep0 = true
		} else if c.read0.agent == r.agent && !r.atomic {
			keep0, shadow0 = true, true
		}
	}
	kept := 0
	for x := range c.reads {
		rd := &c.reads[x]
		own := sameInstance(rd, r)
		// ordered(rd, r), its commonest case inline: on an L0C
		// accumulator most reads are the cube's own.
		ordered, told := selfOrdered(rd, r)
		if own {
			ordered = true
		} else if !told || checkShortcuts {
			ordered = d.ordered(rd, r)
		}
		if ordered && !own && rd.raced && rd.agent != r.agent && !gm {
			d.moveReadRaces(c, rd, r, wOrdered)
		}
		keepRaced := !ordered || own || rd.raced && d.racesKeptBy(c, &kw, rd, r, after)
		if !keepRaced && rd.agent != r.agent && !r.atomic {
			d.dropped = append(d.dropped, *rd) // kept past r (olds, sreads)
		}
		if keepRaced || rd.agent == r.agent {
			if !ordered && !d.superseded(c, rd, r) {
				d.raceRead(c, rd, r, after, acc, lo, hi)
				// A read meant to come after r (a RAW) did not read the
				// previous value: the WAW stands beside it.
				warred = warred || d.intendedBefore(rd, r)
			}
			if !r.atomic { // an atomic add leaves the reads as they are
				if kept != x {
					c.reads[kept] = *rd
				}
				c.reads[kept].raced = c.reads[kept].raced || keepRaced
			}
			kept++
		}
	}
	if len(d.ghosts) > 0 && !r.atomic {
		d.settleGhosts(c, r, wOrdered, acc)
	}
	if len(c.uninit()) > 0 {
		if r.atomic {
			d.explainUninit(c, r, c.hasR, c.reads, acc, lo, hi)
		} else {
			d.explainUninit(c, r, keep0, c.reads[:kept], acc, lo, hi)
		}
	}
	// Whether r is ordered after every overwritten GM access kept: then so
	// is the next access ordered after r (cellLists.oldsBefore). The reads
	// kept among them count for warred, as the cell's own do.
	oldsBefore := true
	if c.hasOlds() && !(wOrdered && c.lists.oldsBefore) {
		oldsBefore, warred = d.meetOlds(c, r, warred, acc, lo, hi)
	}
	if !gm && c.hasSReads() {
		warred = d.meetSReads(c, r, warred, acc, lo, hi)
	}
	if c.hasW && !wOrdered {
		switch {
		case !r.atomic:
			d.raceWrite(c, &c.w, r, after, warred, acc, lo, hi)
		case !warred:
			d.race(&c.w, r, acc, lo, hi)
		}
	}
	// lost: a write of these bytes leaves the cell unkept here
	// (cellLists.kept).
	lost := false
	if acc.Atomic {
		// Atomic adds commute with each other; they still race plain
		// accesses, the racing plain writes kept in adds included.
		for x, adds := 0, c.adds(); x < len(adds); x++ {
			if w := &adds[x]; !w.atomic && !w.shadowed() && !warred && !d.ordered(w, r) {
				d.race(w, r, acc, lo, hi)
			}
		}
		c.setAdds(d.putW(c, c.adds(), r, acc))
		c.written = true
		return
	}
	if gm {
		// The other agents' reads r is ordered after leave the cell;
		// they stay beside r for a write meant between them and r.
		if c.hasR && !keep0 {
			lost = !d.keepOld(c, &c.read0, r) || lost
		}
		for x := range d.dropped {
			lost = !d.keepOld(c, &d.dropped[x], r) || lost
		}
	} else if c.hasR && !keep0 && c.read0.agent != r.agent || len(d.dropped) > 0 {
		// In local memory they stay while an op issued before r is
		// still to land (sreads).
		d.shadowReads(c, r, c.hasR && !keep0 && c.read0.agent != r.agent, acc)
	}
	// The writes r does not follow stay beside it: a later read races
	// each of them, whichever ran last.
	others := 0
	adds := c.adds()
	low := int64(-2) // the core's watermark, looked up on first need
	trim := false    // a shadowed write joined adds
	// first: every write to these bytes so far is still in the cell,
	// unshadowed (firstW), and stays so past r.
	first := c.firstW && !after
	var near nearOwn
	for x := range adds {
		if w := &adds[x]; w.shadowed() {
			if (!warred || d.intendedBefore(r, w)) && !near.passed(d, c, w, r) {
				d.offerShadowed(w, r, acc, lo, hi)
			}
			if low == -2 {
				low = d.landed(r, acc)
			}
			if needShadowed(w, low) {
				adds[others] = *w
				others++
			}
		} else if !d.ordered(w, r) {
			if !near.passed(d, c, w, r) {
				d.raceWrite(c, w, r, after, warred, acc, lo, hi)
			}
			adds[others] = *w
			others++
		} else if gm {
			lost = !d.keepOld(c, w, r) || lost
			first = false
		} else if d.shadows(w, r, acc) {
			adds[others] = shadowOf(w, r)
			others++
			trim, first = true, false
		} else {
			lost, first = true, false
		}
	}
	c.setAdds(adds[:others])
	if c.hasW && !after {
		c.setAdds(d.putW(c, c.adds(), &c.w, acc))
		kept := len(c.adds()) == others+1 // putW dropped none
		first = first && kept
		lost = lost || !kept
	} else if c.hasW && gm {
		lost = !d.keepOld(c, &c.w, r) || lost
	} else if c.hasW && d.shadows(&c.w, r, acc) {
		c.setAdds(append(c.adds(), shadowOf(&c.w, r)))
		trim = true
	} else if c.hasW {
		lost = true
	}
	if trim && len(c.adds()) > maxShadowed { // fewer entries than the bound hold fewer shadowed
		c.setAdds(trimShadowed(c.adds()))
		lost = true
	}
	if c.lists != nil {
		c.lists.oldsBefore = oldsBefore // each write keepOld added is before r
	}
	// Every write still here though r follows one (a shadowed write
	// leaving by the watermark counts as kept: no read issued before its
	// overwrite can still land, and only those were meant before it).
	allKept := c.written && !first && !lost && (c.firstW || c.keptAll())
	c.firstW = !c.written || first
	c.setKept(allKept)
	c.w, c.hasW, c.written = *r, true, true
	// Keep the reads r races (marked raced) and the shadowed ones, in
	// their order, read0 first.
	c.reads = c.reads[:kept]
	switch {
	case keep0:
		c.read0.raced = c.read0.raced || !shadow0
	case kept > 0:
		c.read0, c.hasR = c.reads[0], true
		c.reads = c.reads[:copy(c.reads, c.reads[1:])]
	default:
		c.hasR = false
	}
}

// putUninit adds read r of acc to cell c's uninitialised reads, once per
// instance and buffer (one instance may read a cell through two operands).
//
// In local memory a candidate is settled once every op issued before it
// has reached the detector (the core's watermark, landed): only a write
// meant to come first can take its uninit-read back, and on one core that
// is a write issued before it. A full list drops its settled candidates,
// and while some op is still to land it may grow past maxUninit up to
// maxUninitLocal: a slow load meant to fill a tile can be overtaken by
// more reads than maxUninit (corpus Sync/nested_loop_confliect, ten stores
// per load: with a fast MTE3 the 100 stores of a loop nest ran before the
// first load landed, and the 36 past the bound kept their uninit-reads).
// GM is read by other cores, which order by iteration, not issue: it keeps
// maxUninit.
func (d *Detector) putUninit(c *cell, r *rec, acc *machine.Access) []uninitRead {
	list := c.uninit()
	for i := range list {
		u := &list[i]
		if u.r.agent == r.agent && u.r.epoch == r.epoch && u.r.gen == r.gen && u.tile == acc.Tile && u.tensor == acc.Tensor {
			return list
		}
	}
	if len(list) >= maxUninit {
		limit := maxUninit
		if low := d.landed(r, acc); low >= 0 {
			list = slices.DeleteFunc(list, func(u uninitRead) bool { return u.r.serial > 0 && issueOf(u.r.serial) <= low })
			limit = maxUninitLocal
		}
		if len(list) >= limit {
			return list
		}
	}
	return append(list, uninitRead{r: *r, tile: acc.Tile, tensor: acc.Tensor})
}

// explainUninit settles the uninitialised reads of c at write w.
// A read w races and was meant to come after w (the intended order: issue
// order on a core, else iteration and source line) read poison only
// because this run's timing let it overtake w: the race is the report, and
// its fix (order w first) is the read's fix, so its uninit-read is
// retracted (docs/hazards.md, uninit-read). A read ordered before w, or
// meant to come first (a WAR), keeps its finding for now.
//
// w need not be the cell's first write: tquant reads its src and rewrites
// it in place, so when its read overtakes the tload meant to fill src, the
// first write the cell meets is tquant's own, ordered after the read, and
// the tload's comes later. The read stays a candidate after its agent's
// own later write has taken it out of the cell's reads (an op after a
// barrier, or a trowmax writing the tile as scratch after its internal
// one): the load meant to fill the bytes still races it, and when it
// lands later, it takes the uninit-read back and reports the RAW it would
// have met had it landed first (corpus PyPTOIRParser
// paged_attention_example_kernel_softmax_prepare). A candidate leaves when
// it is settled; maxUninit bounds how many wait.
func (d *Detector) explainUninit(c *cell, w *rec, keep0 bool, reads []rec, acc *machine.Access, lo, hi int64) {
	n := 0
	uninit := c.uninit()
	for i := range uninit {
		u := &uninit[i]
		if !d.ordered(&u.r, w) && d.intendedBefore(w, &u.r) {
			if !(keep0 && sameInstance(&c.read0, &u.r)) && !keptInstance(reads, &u.r) {
				// Out of the cell's reads, so raceRead did not
				// meet it.
				d.race(&u.r, w, acc, lo, hi)
			}
			d.retractUninit(u)
			continue
		}
		uninit[n] = *u
		n++
	}
	c.setUninit(uninit[:n])
}

// keptInstance reports whether reads holds access instance r.
func keptInstance(reads []rec, r *rec) bool {
	for x := range reads {
		if sameInstance(&reads[x], r) {
			return true
		}
	}
	return false
}

// gmShadowFor returns the 2-D shadow of the GM tensor acc touches, or nil
// when the tensor is kept in byte ranges.
func (d *Detector) gmShadowFor(acc *machine.Access) *shadow2D {
	if !d.gm2dAny || acc.Space != asm.GM || acc.Tensor == nil {
		return nil
	}
	return d.gm2d.get(acc.Rank, acc.Tensor.Index)
}

// access2d is access on a 2-D tensor shadow, rectangle by rectangle. slot,
// when not nil, is the cache entry of acc in buffer key (number si),
// filled when acc lands on exactly one cell of one band (a column window
// of an L1 tile), or, in a local buffer, on up to maxRun cells of one
// rectangle (a whole L1 tile written by a load).
func (d *Detector) access2d(r *rec, acc *machine.Access, s *shadow2D, key shadowKey, slot *cellSlot, si int) {
	if slot != nil && slot.w < 0 {
		// A run of cells (cellSlot), which hitCached leaves to this.
		if rows, pitch := shape(acc); slot.matches(key, acc, rows, pitch) && d.hitRun(r, acc, &d.cells.runs[si], int(-slot.w)) {
			return
		}
	}
	if acc.ReadOnly && !acc.Write && s.initialised() {
		if checkShortcuts {
			d.checkInitialised(acc, s)
		}
		return // nothing to record, and every byte is initialised
	}
	if acc.Write {
		s.wrote(false)
	}
	uninitLo, uninitHi := int64(-1), int64(-1)
	d.rects = s.rects(acc, d.rects[:0])
	if len(d.rects) != 1 {
		slot = nil
	}
	// The run of cells visited, for an entry over several (local buffers
	// only: a GM view must see its writes, shadow2D.wrote); -1 once they
	// do not fit one.
	nrun := -1
	if slot != nil && acc.Space != asm.GM {
		nrun = 0
		if slot.w < 0 {
			*slot = cellSlot{} // its run is about to be overwritten
		}
	}
	for _, q := range d.rects {
		if acc.ReadOnly && !acc.Write {
			if lo, hi, ok := s.unwritten(q); ok {
				if uninitLo < 0 {
					uninitLo = lo
				}
				uninitHi = hi
			}
			continue
		}
		i, j := s.span(q.r0, q.r1)
		for _, b := range s.bands[i:j] {
			ci, cj := b.cols.span(q.c0, q.c1)
			g := geo{s.base, s.pitch, b.lo, b.hi}
			if slot != nil && j == i+1 && cj == ci+1 {
				d.fillGrid(slot, key, acc, s, b.cols.cells[ci], g)
				nrun = -1
			}
			if nrun >= 0 {
				nrun = d.addRun(si, nrun, s, b, ci, cj)
			}
			d.accessCells(r, acc, &b.cols, ci, cj, g, &uninitLo, &uninitHi)
		}
	}
	if nrun > 1 {
		// accessCells splits and merges nothing in bands of at most
		// maxRun cells, so the cells are still those of the rectangle.
		s.cached = true
		rows, pitch := shape(acc)
		*slot = cellSlot{key: key, rows: int32(rows), lo: acc.Lo, hi: acc.Hi, pitch: pitch, c: d.cells.runs[si].cells[0].c, w: -int32(nrun)}
	}
	d.noteUninit(r, acc, uninitLo, uninitHi)
}

// addRun adds cells [ci, cj) of band b of view s to the run being built
// for entry si, n cells so far, and returns the new count, or -1 when they
// do not fit (more than maxRun, or bounds past int32).
func (d *Detector) addRun(si, n int, s *shadow2D, b *band, ci, cj int) int {
	if n+cj-ci > maxRun || b.lo < 0 || b.hi > math.MaxInt32 {
		return -1
	}
	if d.cells.runs == nil {
		d.cells.runs = make([]gridRun, len(d.cells.slots))
	}
	run := &d.cells.runs[si]
	run.base, run.pitch = s.base, s.pitch
	for _, c := range b.cols.cells[ci:cj] {
		if c.lo < 0 || c.hi > math.MaxInt32 {
			return -1
		}
		run.cells[n] = runCell{c: c, c0: int32(c.lo), w: int32(c.hi - c.lo), r0: int32(b.lo), r1: int32(b.hi)}
		n++
	}
	return n
}

// fillGrid makes slot the cache entry of acc in buffer key, which covers
// exactly cell c of a band of view s of geometry g (access2d).
func (d *Detector) fillGrid(slot *cellSlot, key shadowKey, acc *machine.Access, s *shadow2D, c *cell, g geo) {
	rows, pitch := shape(acc)
	lo, hi := g.bytes(c.lo, c.hi)
	if lo != acc.Lo || hi != acc.Hi+(rows-1)*pitch || c.lo < 0 || c.hi > math.MaxInt32 {
		return // not one rectangle after all: leave it to the view
	}
	s.cached = true
	*slot = cellSlot{key: key, rows: int32(rows), lo: acc.Lo, hi: acc.Hi, pitch: pitch, c: c, c0: int32(c.lo), w: int32(c.hi - c.lo)}
}

// hbOrSame is hb, except that an op never races itself (an in-place tadd
// reads and writes one tile in a single instance).
func (d *Detector) hbOrSame(prev, cur *rec) bool {
	if prev.agent == cur.agent && prev.epoch == cur.epoch && prev.gen == cur.gen {
		return true
	}
	return d.hb(prev, cur.agent)
}

// ordered is hbOrSame(prev, r) for r, the access being checked (access):
// an earlier access of r's own agent is ordered before it when the agent's
// own component, r's epoch less its lag (rec.lag, taken for the event),
// covers it, which needs no clock. On an L0C accumulator each mad's write
// meets up to ten reads of the cube itself.
func (d *Detector) ordered(prev, r *rec) bool {
	if v, told := selfOrdered(prev, r); told {
		if checkShortcuts {
			d.checkOrdered(prev, r, v)
		}
		return v
	}
	return d.hbOrSame(prev, r)
}

// selfOrdered is ordered for an earlier access of r's own agent, told
// from r's lag; told is false for any other.
func selfOrdered(prev, r *rec) (v, told bool) {
	if prev.agent == r.agent && prev.gen == r.gen && prev.epoch < r.epoch && r.lag < math.MaxUint16 {
		return r.epoch-uint32(r.lag) >= prev.epoch, true
	}
	return false, false
}

// raceRead reports that write w races read rd, which is in cell c; after
// says w is ordered after c's last write. A read that raced a write still
// in c (raced: the last write or one kept beside it) and races w under the
// same two sites is already counted: a read arriving after both writes
// would have been one instance too. Its race with each of those writes
// that w is ordered after moves to w (moveRace): a read arriving after w
// would no longer find that write, so the finding names w whichever order
// the three ran in.
func (d *Detector) raceRead(c *cell, rd, w *rec, after bool, acc *machine.Access, lo, hi int64) {
	d.noteRaced(rd, w)
	if !rd.raced {
		d.race(rd, w, acc, lo, hi)
		return
	}
	kw, okNew := d.raceKey(w, rd)
	counted := false
	settle := func(old *rec, later bool) {
		if !d.hasRaced(rd, old) {
			return // rd did not race old
		}
		ko, okOld := d.raceKey(old, rd)
		switch {
		case okOld && okNew && ko == kw:
			counted = true
		case later && okOld && !d.keepsRace(old, rd, w, acc):
			d.moveRace(old, rd, ko)
		}
	}
	if c.hasW {
		settle(&c.w, after)
	}
	for x, adds := 0, c.adds(); x < len(adds); x++ {
		if old := &adds[x]; !old.atomic && !old.shadowed() {
			settle(old, !w.atomic && d.ordered(old, w))
		}
	}
	d.raceNamed(rd, w, counted, acc, lo, hi)
}

// raceWrite reports that plain write r races write w, one of cell c's
// (its last, or one kept beside it); after says r is ordered after c's
// last write, warred that r's race with a read stands for the WAW. As a
// read's race does (raceRead), w's race with a write that r is ordered
// after moves to r: had w run after both, it would have met r alone, the
// earlier write being gone from the cell, so the finding names r whichever
// order the three ran in.
func (d *Detector) raceWrite(c *cell, w, r *rec, after, warred bool, acc *machine.Access, lo, hi int64) {
	kw, okNew := d.raceKey(w, r)
	counted := false
	settle := func(old *rec) {
		// A pair of one agent whose same-pipe races are off has no key
		// (raceKey): nothing to count or move, whether it raced or not.
		// (An L0C mad's write settles the cube's earlier mads.)
		if old == w || d.selfOff(old, w) || !d.racedPair(w, old) {
			return
		}
		ko, okOld := d.raceKey(old, w)
		switch {
		case okOld && okNew && ko == kw:
			counted = true
		case okOld && !d.keepsRace(old, w, r, acc):
			d.moveRace(old, w, ko)
		}
	}
	d.orderedWrites(c, r, after, settle)
	// warred stands for the WAW in which r overwrites w (w meant to come
	// first): the read r races saw w's value or an earlier one. A WAW in
	// which r is meant to come first (w landed before it, an in-place op
	// of a later iteration) is another pair, reported whichever arrived
	// first.
	if !warred || d.intendedBefore(r, w) {
		d.noteRaced(w, r)
		d.raceNamed(w, r, counted, acc, lo, hi)
	}
}

// raceNamed is race for a pair not yet counted; a pair counted already
// under the same two sites (with an earlier write of one of them) is
// offered for the finding's name only: which of the two instances an
// access met first follows timing, the one a finding names must not.
func (d *Detector) raceNamed(prev, cur *rec, counted bool, acc *machine.Access, lo, hi int64) {
	if counted && d.selfOff(prev, cur) {
		return
	}
	d.race(prev, cur, acc, lo, hi)
	if counted {
		d.notes[len(d.notes)-1].named = true
	}
}

// racedPair reports whether writes a and b raced with the race counted
// (noteRaced, either way round).
func (d *Detector) racedPair(a, b *rec) bool {
	return d.hasRaced(a, b) || d.hasRaced(b, a)
}

// hasRaced reports whether noteRaced(rd, w) was called: looked up, or for
// two accesses of one agent whose same-pipe races are off, told from the
// accesses themselves (selfRaced).
func (d *Detector) hasRaced(rd, w *rec) bool {
	if d.selfOff(rd, w) {
		if raced, told := selfRaced(rd, w); told {
			if checkShortcuts && !rd.write {
				// noteRaced kept the pair all the same: compare.
				_, kept := d.racedWith[racePair(rd, w)]
				d.checkSelfRaced(rd, w, raced, kept)
			}
			return raced
		}
	}
	_, ok := d.racedWith[racePair(rd, w)]
	return ok
}

// selfOff reports whether a and b are accesses of one agent whose
// same-pipe races are not reported: the cube's in-place TMATMUL.ACC chain
// races itself once per mad (SamePipe.M), and a pair per race kept in
// racedWith was most of a linted GEMM's memory and a tenth of its time.
func (d *Detector) selfOff(a, b *rec) bool {
	return a.agent == b.agent && d.soff[a.agent]
}

// selfLag is rec.lag for r now.
func (d *Detector) selfLag(r *rec) uint16 {
	own := d.ownComp(r.agent)
	if own >= r.epoch {
		return 0
	}
	return uint16(min(r.epoch-own, math.MaxUint16))
}

// selfRaced reports whether accesses x and y of one agent raced, that is
// whether noteRaced saw them: whichever of the two came later (an agent's
// epochs only grow) was checked against the earlier one, still in its cell,
// and raced it if the agent's own component, its epoch less its lag, was
// below the earlier one's epoch (hb). Accesses of one instance, or of
// different run generations, never race. ok is false when a saturated lag
// cannot tell.
func selfRaced(x, y *rec) (raced, ok bool) {
	if x.gen != y.gen || x.epoch == y.epoch {
		return false, true
	}
	early, late := x, y
	if early.epoch > late.epoch {
		early, late = late, early
	}
	gap := late.epoch - early.epoch
	switch {
	case late.lag < math.MaxUint16:
		return late.lag > uint16(min(gap, math.MaxUint16)), true
	case gap < math.MaxUint16:
		return true, true
	}
	return false, false
}

// noteRaced records that access rd raced plain write w and the race is
// counted, on its own or as one instance with an earlier write of the
// same sites (moveRace takes it back once per instance). Whether an
// access raced a write cannot be asked later: FastTrack keeps its epoch,
// not its clock, and the agent's clock may since have come to cover w (a
// same-pipe round trip), which would hide the race from the move in one
// order of the run and not in another. Only racing pairs are kept, one per
// race instance.
func (d *Detector) noteRaced(rd, w *rec) {
	if w.atomic {
		return // atomic adds are not moved from
	}
	if d.selfOff(rd, w) && !checkShortcuts {
		if _, ok := selfRaced(rd, w); ok {
			return // hasRaced tells it from rd and w
		}
	}
	if d.racedWith == nil {
		d.racedWith = map[moveKey]struct{}{}
	}
	d.racedWith[racePair(rd, w)] = struct{}{}
}

// racePair is the key of read rd and write w.
func racePair(rd, w *rec) moveKey {
	return moveKey{rd.agent, rd.epoch, rd.gen, w.agent, w.epoch, w.gen}
}

// moveRace takes back, at Findings, the count read rd's race with write
// old added to finding ko, once per pair of instances: rd races a write
// ordered after old, and in another order of the run (old, that write,
// then rd) rd would only have met the later one, so its race moves there.
//
// It moves on the cell accessCell visits only (spans): Findings takes the
// count back once per read instance and finding (an instance counts once
// under a pair of sites, flushNotes, however many writes of those sites it
// raced, and each of them may move on), where the moves cover every cell
// the race was counted on.
func (d *Detector) moveRace(old, rd *rec, ko findKey) {
	s, ok := d.cellSpan()
	if !ok {
		s = span{all: true}
	}
	d.moveRaceOn(rd, old.agent, ko, s)
}

// moveRaceOn is moveRace on span s; from is the agent of the access whose
// race with rd moved (movedFrom).
func (d *Detector) moveRaceOn(rd *rec, from int32, ko findKey, s span) {
	mk := movedKey{rd.agent, rd.epoch, rd.gen, ko}
	if _, ok := d.counted[mk]; !ok {
		return // counted under another instance of its site (counted)
	}
	if d.moved == nil {
		d.moved, d.movedFrom = map[movedKey][]span{}, map[movedKey][]int32{}
	}
	if l := d.moved[mk]; len(l) == 0 || l[len(l)-1] != s {
		d.moved[mk] = append(l, s)
	}
	if l := d.movedFrom[mk]; !slices.Contains(l, from) {
		d.movedFrom[mk] = append(l, from)
	}
}

// movedKey names an access instance and a finding it counted under.
type movedKey struct {
	ra     int32
	re, rg uint32
	ko     findKey
}

// moveKey names a pair of instances, a read and a write, by agent, epoch
// and generation.
type moveKey struct {
	ra     int32
	re, rg uint32
	wa     int32
	we, wg uint32
}

// raceKey is the finding key race(prev, cur) counts under, and false when
// race does not report it (a same-pipe race turned off).
func (d *Detector) raceKey(prev, cur *rec) (findKey, bool) {
	if d.selfOff(prev, cur) {
		return findKey{}, false
	}
	kind, first, second := d.raceKind(prev, cur)
	return findKey{kind: kind, first: siteKey(d.site(first)), second: siteKey(d.site(second))}, true
}

// putW adds write r to a cell's other writes. An atomic add replaces the
// same agent's earlier add (they commute, and program order puts r after
// it). A plain write replaces the same agent's earlier plain write of the
// same op site (sameReader), unless a read could be meant to come between
// the two (keepPrior), as putRead keeps reads: the writes of one pipe with
// no barrier between them are not ordered, so a read that lands after all
// of them races each site, and the RAW with each came and went with the
// read's latency when the cell kept one write per agent.
func (d *Detector) putW(c *cell, list []rec, r *rec, acc *machine.Access) []rec {
	if r.atomic {
		for i := range list {
			if list[i].agent == r.agent && list[i].atomic {
				if acc.Space == asm.GM {
					// A read meant between the two adds races each
					// (olds); the add need not be ordered before the
					// cell's last write.
					if !d.keepOld(c, &list[i], r) {
						c.lists.kept = false
					}
					c.lists.oldsBefore = false
				}
				list[i] = *r
				return list
			}
		}
		return append(list, *r)
	}
	return d.putSite(c, list, r, acc)
}

// superseded reports whether read rd, kept in cell c, is of write r's own
// agent and a later read of that agent is kept too. r then meets only the
// agent's latest read, as it did when a cell kept one read per agent: the
// agent's accesses reach the detector in issue order, so that pair does not
// depend on timing, and the earlier reads are kept for other agents' writes
// that land late (sameReader).
func (d *Detector) superseded(c *cell, rd, r *rec) bool {
	if rd.agent != r.agent {
		return false
	}
	if checkShortcuts && d.selfOff(rd, r) && !d.hbOrSame(rd, r) {
		// selfRaced tells this pair raced from the accesses alone;
		// the self-check compares it with the pairs noted.
		d.noteRaced(rd, r)
	}
	return c.anyRead(func(o *rec) bool { return o.agent == rd.agent && o.gen == rd.gen && o.epoch > rd.epoch })
}

// putRead adds read r to cell c's other reads (putSite).
func (d *Detector) putRead(c *cell, list []rec, r *rec, acc *machine.Access) []rec {
	return d.putSite(c, list, r, acc)
}

// putSite adds access r to list, replacing the earlier access of the same
// agent, op and direction (sameReader) unless another agent's access could
// be meant to come between the two (keepPrior): then both stay, up to
// maxPrior earlier ones of the site, the oldest dropped first. In local
// memory the instances that no access still to land can need go at once
// (prunePrior), and the bound is maxPriorLocal.
func (d *Detector) putSite(c *cell, list []rec, r *rec, acc *machine.Access) []rec {
	n, oldest := 0, -1
	for i := range list {
		if !priorOf(&list[i], r) {
			continue
		}
		if !keepPrior(&list[i], r, acc) {
			d.leaves(c, &list[i])
			list[i] = *r
			return list
		}
		if n++; oldest < 0 || list[i].epoch < list[oldest].epoch {
			oldest = i
		}
	}
	limit := maxPrior
	if n == 0 {
		// No earlier instance: nothing to decide.
	} else if low := d.landed(r, acc); low >= 0 {
		// Local memory: drop at once the instances no access still to
		// land can need, so a cell keeps only those (an L0C accumulator
		// the mads whose neighbours are in flight, not maxPrior of them).
		// The commonest case, one such instance, last (a mad's read of
		// its accumulator), is done in place: r takes its slot (within
		// the 64 entries prunePrior prunes).
		last := n == 1 && oldest == len(list)-1 && oldest < 64 && prunable(&list[oldest], r, low)
		if last && !checkShortcuts {
			d.leaves(c, &list[oldest])
			list[oldest] = *r
			return list
		}
		k := len(list)
		list, n = d.prunePrior(c, list, r, low, n)
		if checkShortcuts {
			checkLastPruned(last, k, len(list), n)
		}
		limit = maxPriorLocal
		if n > limit {
			oldest = slices.IndexFunc(list, func(e rec) bool { return priorOf(&e, r) })
		}
	}
	if n > limit {
		d.leaves(c, &list[oldest])
		list = slices.Delete(list, oldest, oldest+1)
	}
	return append(gmReadRoom(list, r, acc), *r)
}

// gmReadRoom returns list, a cell's reads, with room for maxPrior+1 entries
// when r, a GM read, is about to add the second or later entry to a full
// list. A GM cell keeps every earlier instance of a site (keepPrior), so a
// list that takes a second read nearly always fills to maxPrior+1 (an
// 8-rank allgather_gemm's 16 384 gathered-A tiles each do, read once an
// N block); doubling from one entry allocated 64+128+256+512 bytes of
// garbage and a 1 KiB array for the 9 entries (putSite: 36 MB in all), the
// 576-byte array made here once 9.4 MB (putSite: 13.5 MB). A list that
// stays at one read (a ring's chunk, 147 000 at 384 ranks) keeps its 64
// bytes. Only capacity changes: the entries and their order are append's.
func gmReadRoom(list []rec, r *rec, acc *machine.Access) []rec {
	if len(list) != cap(list) || len(list) == 0 || len(list) > maxPrior || r.write || acc.Space != asm.GM {
		return list
	}
	return append(make([]rec, 0, maxPrior+1), list...)
}

// maxPrior bounds how many earlier accesses of one agent and site a cell
// keeps beside the latest (keepPrior): an access landing later than that
// misses the oldest. How late an access of a core can land is bounded by
// its pipe's queue (queue.<pipe>, up to 16 ops): once it is full the scalar
// waits, so another pipe of the core runs ahead by the ops issued beside
// that many of the slow pipe's. With 4, a cube slowed to a 20000-cycle
// head landed its mads after all 8 MTE1 moves of their L0 tiles and lost
// five RAWs (corpus Sync/matmul). 16 would cover every queue
// (qwen3_decode_incore_2 needs 15) but cost 20% more instructions on the
// 8-rank allgather_gemm lint, 8 costs 7% (docs/hazards.md).
const maxPrior = 8

// keepPrior reports whether access prior of a cell must stay when a later
// access r of the same agent, site and direction arrives. An access of
// another agent meant to come between the two (issued between them on the
// core; on another core, by iteration, which any later iteration may be)
// races prior one way round and r the other: a write between two reads
// races the first as a WAR and the second as a RAW. Arriving before r it
// meets prior in the cell; arriving after r, with prior replaced, it met r
// alone, and the WAR with the earlier iteration's read came and went with
// its latency (corpus control_flow_nested_vec). Accesses with no other op
// of the core issued between them (rec.gap) fall on one side of every
// same-core access, and the latest stands for both; a GM cell is also
// reached from other cores, whose intended order is by iteration.
func keepPrior(prior, r *rec, acc *machine.Access) bool {
	return prior.gen == r.gen && prior.epoch != r.epoch && (prior.gap != r.gap || acc.Space == asm.GM)
}

// sameReader reports whether reads a and b are of one agent and one op
// site. A cell keeps an agent's latest read per site, not per agent: a
// write that lands after several of the agent's reads races each site's
// latest one, as it would have raced each of them had it landed first, so
// the pairs of sites reported do not depend on when it landed (FastTrack's
// one read per agent finds that a race exists, not every site it has).
func sameReader(a, b *rec) bool {
	return a.agent == b.agent && a.op == b.op && a.step == b.step
}

func putRec(list []rec, r *rec) []rec {
	for i := range list {
		if list[i].agent == r.agent {
			list[i] = *r
			return list
		}
	}
	return append(list, *r)
}

// signalAccess handles a store, atomic add or read of a signal word. Signal
// words are synchronisation, not data: polling them does not race, but a
// plain store racing an atomic add loses the add (kernels.md §3(d) R5), and a
// read acquires every notify since the last plain store.
func (d *Detector) signalAccess(r *rec, acc *machine.Access, write bool) {
	if d.rmw != nil || !write && r.op != nil && r.op.Info != nil && r.op.Info.Op == asm.OpLd {
		// A read-modify-write's load reads data: it acquires nothing
		// (rmw.go).
		d.dataLoad = d.rmwAccess(r, acc, write)
	}
	sm := d.shadowFor(acc)
	a := r.agent
	if write && !r.atomic && len(d.eqCount) > 0 {
		d.eqCountWrite(r, acc, 0) // a store's value: the word's `==` waits are eqwait.go's
	}
	if write && len(d.eqRunTensors) > 0 && (r.op == nil || r.op.Info == nil || r.op.Info.Op != asm.OpTnotify) {
		d.eqTouch(r, acc, false, 0) // a notify told its value before (notify)
	}
	if write && !r.atomic && len(d.failed) > 0 {
		d.testNotify(r, acc, 0) // a store ends the sum a failed test could read
	}
	var rel *vclock
	// loc, when not nil, is a's lc, the components of its core's agents
	// that rel lags (sigHist.relLoc).
	var loc *pipeVals
	var lc pipeVals
	if write {
		// A scalar's clock holds its own count already (enter): it is its
		// release, and the words take it without a scratch copy first.
		// When the clock lags the scalar's lc (its count and its pipes'
		// since the last flush), the words take it unflushed with lc
		// beside it: the clock is shared with its issue snapshot, so a
		// flush here copied the path to the core's block, and the
		// scalar's next join (its wait) copied it again, the word then
		// sharing the flushed clock. Unflushed, the word shares the
		// snapshot's tree and the wait's flush is the one copy.
		if ag := &d.agents[a]; d.ownComp(a) >= ag.n {
			if ag.dirty {
				lc = ag.lc
				loc = &lc
			}
			rel = &ag.clock
		} else {
			d.tmp = d.release(a, d.tmp)
			rel = &d.tmp
		}
	}
	kind := sigRead
	if write {
		kind = sigWrite
		if !r.atomic {
			kind = sigStore
		}
	}
	uninitLo, uninitHi := int64(-1), int64(-1)
	visit := func(c *cell) {
		if d.wait.words != nil {
			d.wait.word(c)
		}
		d.signalCell(r, acc, c, rel, &loc, &uninitLo, &uninitHi)
		if d.note.on {
			d.wroteHist(c, r, d.note.val)
		}
	}
	for n := range acc.NumRows() { // several: a column of a signal matrix
		lo, end := acc.Run(n)
		d.eachSigCell(sm, lo, end, kind, true, visit)
	}
	d.dataLoad = false
	if uninitLo >= 0 {
		d.notes = append(d.notes, raceNote{kind: KindUninitRead, cur: *r, acc: *acc, lo: uninitLo, hi: uninitHi, single: true})
	}
}

// signalCell handles signal access r to word c; rel is the writer's
// release, nil for a read, with the writer's lc *loc beside it when not nil
// (signalAccess; a join that needs rel whole flushes it and clears *loc).
func (d *Detector) signalCell(r *rec, acc *machine.Access, c *cell, rel *vclock, loc **pipeVals, uninitLo, uninitHi *int64) {
	a, write := r.agent, rel != nil
	if c.sigGen != d.gen {
		c.sig.truncate()
		c.sigFrom = 0
		if c.hist != nil {
			c.hist.hasLoc = false
		}
		c.sigGen = d.gen
		c.sigVer++
	}
	switch {
	case !write:
		if !c.written {
			if *uninitLo < 0 {
				*uninitLo = c.lo
			}
			*uninitHi = c.hi
		}
		if d.dataLoad {
			break
		}
		if d.wait.on && d.wait.cmp == "eq" && c.sigFrom != 0 && d.eqOneMeet(a, c) {
			break // one agent's adds so far: another's may stand in later
		}
		if ent, none := d.prefixFor(c); none || ent != nil {
			if ent != nil {
				d.acquirePrefix(a, c, ent) // the wait needed an earlier add
			}
			break
		}
		if d.meetWait(a, c) {
			break // several notifiers: only the releases every way to pass needs
		}
		// A waiter polling an unchanged word has joined it already.
		id := d.sigID(c)
		if checkShortcuts && d.agents[a].joinedSig(id, c.sigVer, d.gen) {
			d.checkJoinedSig(a, c)
		}
		if !d.agents[a].joinedSig(id, c.sigVer, d.gen) {
			d.acquireSig(a, c)
			ag := &d.agents[a]
			ag.sigs[ag.sigNext] = sigSeen{id, c.sigVer, d.gen}
			ag.sigNext = (ag.sigNext + 1) % sigMemo
		}
	case r.atomic:
		if c.hasW && !d.hbOrSame(&c.w, r) {
			d.resetRace(&c.w, r, acc, c.lo, c.hi)
		}
		d.putSigAdd(c, r)
		watched := len(d.lateWatch) > 0 && d.lateWatch[d.sigID(c)] != nil
		if watched {
			// The add's full release, before rel and loc change below
			// (keepAdders makes the same copy: lateAddTo takes it).
			d.lateRel = d.fullRelease(a, rel, *loc)
		}
		if (c.sig.size() == 0 || c.sigFrom == a+1 || d.addAfterStore(c, r)) && !d.storeRaced(c) {
			// Alone, after its own earlier releases or first after a
			// plain store it is ordered after, a's release is the
			// word's whole clock (a's clock only grows, and holds the
			// store's release): the join of the word and the release
			// is the release. The earlier release stays beside it for
			// a wait that needed only it.
			if c.sigFrom == a+1 {
				d.keepPrefix(c)
			}
			d.relSeq++
			c.sigFrom, c.sigAt = a+1, d.relSeq
			d.keptPrefix(c)
			d.setRelease(c, rel, *loc)
		} else {
			d.keepAdders(c, a, rel, *loc)
			d.wholeRelease(c)
			d.dropPrefix(c)
			c.sigFrom = 0
			if *loc != nil {
				d.flush(a) // rel is a's clock
				*loc = nil
			}
			join(&c.sig, rel)
		}
		c.sigVer++
		if m := d.multiAdd; m != nil {
			m.ver, d.multiAdd = c.sigVer, nil
		}
		if watched {
			d.lateAddTo(d.sigID(c), a, &d.lateRel)
			d.lateRel = vclock{}
		}
		c.written = true
	default:
		for x, adds := 0, c.adds(); x < len(adds); x++ {
			if !d.hbOrSame(&adds[x], r) {
				d.resetRace(r, &adds[x], acc, c.lo, c.hi)
			}
		}
		count := d.storeCount(c, r) // before the word forgets its adds
		chain := d.setChain(c, r)   // before it forgets its earlier release
		c.setAdds(c.adds()[:0])
		c.w, c.hasW, c.written = *r, true, true
		d.dropPrefix(c)
		d.setRelease(c, rel, *loc)
		d.relSeq++
		c.sigFrom, c.sigAt = a+1, d.relSeq
		c.sigVer++
		d.fileStoreCount(c, count)
		d.fileSetChain(c, chain)
	}
}

// addAfterStore says whether add r is the first add to word c since a
// plain store of this run that happens before it (a reset published
// before the peers add: ring_zero_at_entry with the zeroing ordered): the
// word's clock is still the store's release (sigFrom names the storer and
// r is the one add kept since), and r's release holds it. Such a word is
// one agent's counter from there on (sigprefix.go), as a word without the
// store is. It used to take the whole join, and a wait after it was
// ordered after every add that had landed when it polled: a peer running
// a round ahead hid the races of the rounds between (a per-unit skew,
// programs.TestFindingsIgnoreSkew, found it). A store racing the add keeps
// the whole join: the add may be the one the store erased.
func (d *Detector) addAfterStore(c *cell, r *rec) bool {
	return c.hasW && c.w.gen == d.gen && c.w.agent != d.host && c.sigFrom == c.w.agent+1 &&
		len(c.adds()) == 1 && d.hbOrSame(&c.w, r)
}

// setRelease makes word c's clock the writer's release: rel, and the
// writer's lc loc beside it when not nil (sigHist.relLoc).
func (d *Detector) setRelease(c *cell, rel *vclock, loc *pipeVals) {
	c.sig.copyFrom(rel)
	if loc != nil {
		d.sigHistOf(c)
	}
	if h := c.hist; h != nil {
		if h.hasLoc = loc != nil; h.hasLoc {
			h.relLoc = *loc
		}
	}
}

// wholeRelease writes word c's relLoc into its clock, before the word
// stops naming its notifier (cell.sigFrom).
func (d *Detector) wholeRelease(c *cell) {
	if h := c.hist; h != nil && h.hasLoc {
		cs := &d.cores[d.agents[c.sigFrom-1].coreIdx]
		for i, l := range cs.lpos[:cs.nlocals] {
			raise(&c.sig, l, h.relLoc[cs.slots[i]])
		}
		h.hasLoc = false
	}
}

// relSeen is the last release of one agent that an agent joined from a
// signal word: from (agent+1, 0: none) recorded at at (Detector.relSeq),
// generation gen, in the word whose release id is (a cell's or a table
// word's, Detector.sigID).
//
// The release's groups are kept inline too (g, ng), up to relGroups of
// them: a group a word's release holds is never written in place again
// (copyFrom freezes its maker, and the word owns none while it names a
// notifier), so the next wait compares its groups with these directly
// instead of through the old word's cell and root table, two dependent
// cache misses per wait at hundreds of ranks. A longer clock keeps ng 0
// and takes them from c (table).
type relSeen struct {
	id   *sigCore
	at   uint64
	from int32
	gen  uint32
	ng   int32
	g    [relGroups]*vgroup
}

// relGroups is how many groups of a release relSeen keeps inline: clocks
// of up to 2 048 components, 512 cores (a 384-rank ring's has 13 groups
// of 128).
const relGroups = 16

// table returns the blocks of the release m names, or nil when its word no
// longer holds it. A word changes its clock in place only after recording
// a new release (a new sigAt, unique in the detector's life) or dropping
// the claim (sigFrom 0: another agent's add, a host write, a new run, a
// recycled cell), so a word that still names m's release holds its blocks
// as they were. Referring to them instead of keeping a copy saves copying
// a block table per wait: one pointer per 32 agents, the whole clock's
// table at every step of a 384-rank ring. (The word's run generation need
// not be read: the caller takes m only from this run, m.at was recorded in
// it, and a word still naming it has had no new run since.)
func (d *Detector) table(m *relSeen) []*vgroup {
	if c := d.liveSig(m.id); c != nil && c.sigFrom == m.from && c.sigAt == m.at {
		return c.sig.g
	}
	return nil
}

// acquireSig joins signal word c's clock into agent a. A word whose clock is
// one agent's release, later than a release of the same agent that a
// joined before (relSeen), holds at least that release in every component:
// a block a still shares with the earlier release is taken unread. On a
// ring of P ranks each wait brings news of all P ranks, and reading every
// block of both clocks was most of a 384-rank lint.
func (d *Detector) acquireSig(a int32, c *cell) {
	if int(a) >= len(d.relSeen) {
		d.relSeen = append(d.relSeen, make([]relSeen, int(a)+1-len(d.relSeen))...)
	}
	m := &d.relSeen[a]
	var prev []*vgroup
	if c.sigFrom != 0 && m.from == c.sigFrom && m.gen == d.gen && m.at <= c.sigAt {
		if prev = m.g[:m.ng]; m.ng == 0 {
			prev = d.table(m)
		}
	}
	if prev != nil {
		d.acquireCert(a, &c.sig, &cert{kind: certShared, prev: prev})
	} else {
		d.acquire(a, &c.sig)
	}
	if h := c.hist; h != nil && h.hasLoc {
		d.acquireLoc(a, d.coreOf(c.sigFrom-1), &h.relLoc)
	}
	if c.sigFrom != 0 {
		m = &d.relSeen[a]
		m.id, m.from, m.at, m.gen = d.sigID(c), c.sigFrom, c.sigAt, d.gen
		m.ng = 0
		if len(c.sig.g) <= relGroups {
			m.ng = int32(copy(m.g[:], c.sig.g))
		}
	}
}

// acquireLoc raises agent a's components of core c's agents to loc (by
// pipe slot): a word's relLoc, after its sig was joined (setRelease).
func (d *Detector) acquireLoc(a, c int32, loc *pipeVals) {
	cs := &d.cores[c]
	ag := &d.agents[a]
	if ag.coreIdx == c {
		for i, l := range cs.locals[:cs.nlocals] {
			d.raiseIn(a, l, loc[cs.slots[i]])
		}
		return
	}
	// Another core's agents: their positions share a block or two
	// (place), made writable once, as in flushLocal.
	var b *vblock
	for i, l := range cs.lpos[:cs.nlocals] {
		if v := loc[cs.slots[i]]; v > get(ag.clock, l) {
			ag.clock.extend(l + 1)
			if b == nil || b != ag.clock.g[l>>(blkBits+grpBits)].b[(l>>blkBits)&grpMask] {
				b = ag.clock.own(int(l >> blkBits))
			}
			b.v[l&blkMask] = v
		}
	}
	if b != nil {
		ag.ver++
		ag.rver++
	}
}

// sigMemo is how many signal words an agent remembers joining: a consumer
// polls the flags of several chunks round-robin (allgather_gemm's compute
// scalar scans a row group's chunks), and remembering only the last word
// joined every other word's whole clock again at each poll.
const sigMemo = 4

// sigSeen is a signal word (named by its release, Detector.sigID) at
// version ver of run generation gen.
type sigSeen struct {
	id       *sigCore
	ver, gen uint32
}

// joinedSig reports whether the agent has joined the current clock of the
// word id, at version ver.
func (ag *agentState) joinedSig(id *sigCore, ver, gen uint32) bool {
	for _, s := range ag.sigs {
		if s.id == id && s.ver == ver && s.gen == gen {
			return true
		}
	}
	return false
}

func (d *Detector) resetRace(plain, add *rec, acc *machine.Access, lo, hi int64) {
	d.notes = append(d.notes, raceNote{kind: KindResetRacesAtomic, prev: *plain, cur: *add, acc: *acc, lo: lo, hi: hi})
}

// race queues a conflict between an earlier-seen access prev and cur; the
// kind comes from their intended order, not from which one ran first.
func (d *Detector) race(prev, cur *rec, acc *machine.Access, lo, hi int64) {
	if d.selfOff(prev, cur) {
		return
	}
	kind, first, second := d.raceKind(prev, cur)
	same := prev.agent == cur.agent
	sp, hasSp := d.cellSpan()
	d.notes = append(d.notes, raceNote{kind: kind, prev: *first, cur: *second, acc: *acc, lo: lo, hi: hi, samePipe: same, accFirst: first == cur,
		sp: sp, hasSp: hasSp})
}

// raceKind orders a racing pair the way the program means it and names the
// conflict.
func (d *Detector) raceKind(prev, cur *rec) (kind string, first, second *rec) {
	first, second = prev, cur
	if !d.intendedBefore(prev, cur) {
		first, second = cur, prev
	}
	kind = KindWAW
	switch {
	case first.write && !second.write:
		kind = KindRAW
	case !first.write && second.write:
		kind = KindWAR
	}
	return kind, first, second
}

// beforeEveryWrite says whether read r is meant to come before every write
// cell c holds (its last and the racing ones beside it) and ordered after
// none: with firstW, those are every write the launch made to the bytes, so
// r read nothing, whichever of them the run let land first. Checking only the
// last write missed a read that landed after two racing first writes (corpus
// issue454_loop_if_else_loop_carried_sync: a slow tmov from L1 meeting the
// FIX writes of its tile from before and inside the loop).
func (d *Detector) beforeEveryWrite(c *cell, r *rec) bool {
	if d.filled(&c.w, r) || !d.intendedBefore(r, &c.w) {
		return false
	}
	for _, w := range c.adds() {
		if d.filled(&w, r) || !d.intendedBefore(r, &w) {
			return false
		}
	}
	return true
}

// beforeEveryKept is beforeEveryWrite past an ordered overwrite, when
// the cell keeps every write of the launch to its bytes (keptAll): the
// overwritten ones are shadowed among adds (local buffers) or in olds (GM).
// Every write r is ordered after is ordered after one of the launch's first
// writes, which are among them, so r ordered after none read nothing.
func (d *Detector) beforeEveryKept(c *cell, r *rec) bool {
	if !d.beforeEveryWrite(c, r) {
		return false
	}
	for _, o := range c.olds() {
		if w := d.oldRec(c, o.w, &d.oldW); w.write && (w.gen != r.gen || d.filled(w, r) || !d.intendedBefore(r, w)) {
			return false
		}
	}
	return d.runsAfter(c, r)
}

// filled says whether write w is ordered before read r, so that r may read
// what w wrote. An op reads its operands before it writes its results, so
// a write of r's own op (the same agent and epoch: one phase of one op
// instance, an internal barrier starting another) fills none of its reads.
// The machine lists an in-place op's write first when its destination is
// the first operand (`tadds %b, %b, 1.0`: dst written, src read), so the
// read meets its own write in the cell; the same op on bytes nothing wrote
// read poison all the same (hazards/inplace_first_access).
func (d *Detector) filled(w, r *rec) bool {
	if w.agent == r.agent && w.epoch == r.epoch && w.gen == r.gen {
		return false
	}
	return d.ordered(w, r)
}

// intendedBefore orders two accesses the way the program means them: issue
// order on one core; across cores and ranks, the loop iteration, then, for
// two kernels, their places among the grid barriers each kernel's loop body
// is written with (barrierBefore), then the rendezvous of their FFTS flags
// (fftsBefore), then a write before a read; within one kernel the source
// position, and only then a canonical order, never the order they were
// seen. Across two kernels the source position would be the order the
// kernels are written in (docs/hazards.md, "Intended order across kernels").
func (d *Detector) intendedBefore(a, b *rec) bool {
	ca, cb := d.orderCore(a.agent), d.orderCore(b.agent) // an SDMA copy: its issuing core's
	if ca >= 0 && ca == cb && a.serial != b.serial {
		return a.serial < b.serial
	}
	if a.niter == b.niter {
		for i := 0; i < sharedLoops(a, b); i++ {
			if a.iter[i] != b.iter[i] {
				return a.iter[i] < b.iter[i]
			}
		}
		if before, ok := barrierBefore(a.op, b.op); ok {
			return before
		}
	} else if oneKernel(a.op, b.op) {
		// Loops of two depths in one kernel still share the loops
		// around both: a round loop around a nested loop of puts and a
		// load in the round's body (hazards/a2a_grid_no_free: round 0's
		// load before round 1's put, WAR; the source, where the puts
		// are written first, named it RAW `put, ld`). Two kernels'
		// loops match by depth, below (deeper).
		for i := 0; i < min(sharedLoops(a, b), int(b.niter)); i++ {
			if a.iter[i] != b.iter[i] {
				return a.iter[i] < b.iter[i]
			}
		}
	}
	if before, ok := d.fftsBefore(a, b); ok {
		return before
	}
	two := twoKernels(a.op, b.op)
	if two && a.write != b.write && (a.niter == 0 || b.niter == 0) {
		// Nothing relates them, and the source line would say only
		// which kernel is written first. Outside a loop, a buffer one
		// kernel writes and the other reads is a hand-off from the
		// writer to the reader (hazards/cross_core and
		// cross_core_consumer_first): the write first, RAW, whose hint
		// asks for the missing edge. In loops of both, the read comes
		// first, below: a step reads what an earlier step left.
		return a.write
	}
	pa, pb := opPos(a.op), opPos(b.op)
	if pa.File == pb.File && pa.Line != pb.Line && pa.Line > 0 && pb.Line > 0 && !two {
		return pa.Line < pb.Line
	}
	// One site in one iteration on two cores, or two kernels' sites in
	// their loops, not the access the run met first, which followed the
	// latencies: a read comes before a write (a step of a ring reads what
	// an earlier step left while the peer's same step overwrites it: the
	// WARs of allgather_matmul_ring's single_buffer, one of them between
	// the cube's load and the vector kernel's send), and of two writes
	// (both AIVs of a block storing one tile) the lesser rank's, then
	// core's.
	if a.write != b.write {
		if two && a.niter == b.niter {
			// Unless the read has no earlier step of the writer to
			// read from: a hand-off (firststep.go).
			if a.write {
				return d.handOff(b, a)
			}
			return !d.handOff(a, b)
		}
		if deeper(a, b) && samePrefix(a, b) {
			// Loops of different depth (the cube's tile loop, the AIVs'
			// loop over chunks inside theirs), in one step of the
			// levels both have: a read whose first step found nothing
			// written before it means the write (firststep.go
			// freshRead; limits' gemm_rs_fused_early_read was WAR and an
			// uninit-read).
			if a.write {
				return d.freshRead(b)
			}
			return !d.freshRead(a)
		}
		return !a.write
	}
	if ga, gb := &d.agents[a.agent], &d.agents[b.agent]; ga.rank != gb.rank {
		return ga.rank < gb.rank
	} else if ga.core != gb.core {
		return ga.core < gb.core
	}
	return true
}

// deeper says whether a and b are ops of two kernels met in loops of
// different depth, both in some loop.
func deeper(a, b *rec) bool {
	return a.niter != b.niter && a.niter > 0 && b.niter > 0 && twoKernels(a.op, b.op)
}

// samePrefix says whether a and b are in one trip of the loop levels both
// have, outermost first (two kernels' loops match by depth).
func samePrefix(a, b *rec) bool {
	for i := range int(min(a.niter, b.niter)) {
		if a.iter[i] != b.iter[i] {
			return false
		}
	}
	return true
}

// oneKernel says whether a and b are ops of one kernel.
func oneKernel(a, b *asm.COp) bool {
	return a != nil && b != nil && a.Kernel != nil && a.Kernel == b.Kernel
}

// twoKernels says whether a and b are ops of two kernels.
func twoKernels(a, b *asm.COp) bool {
	return a != nil && b != nil && a.Kernel != nil && b.Kernel != nil && a.Kernel != b.Kernel
}

// barrierBefore orders two ops of different kernels, met in one iteration
// of loops as deep, by the grid barriers written before each in its loop's
// body (asm.COp.Barriers): the kernels of a launch pass their barriers
// together, so an op written after more of them is meant to come later,
// whether or not the run passed them all (syncall_rounds_skip: round 1
// skips the second barrier in both kernels, and the cube's store written
// before it is meant to come before the AIV's load written after it). ok is
// false when the kernels are one or the counts are equal: within one kernel
// the source line says as much, and across two it says only the order the
// kernels are written in.
func barrierBefore(a, b *asm.COp) (before, ok bool) {
	if a == nil || b == nil || a.Kernel == b.Kernel || a.Kernel == nil || b.Kernel == nil || a.Barriers == b.Barriers {
		return false, false
	}
	return a.Barriers < b.Barriers, true
}

// sharedLoops is how many leading levels of a's and b's iteration vectors
// (of one depth) count trips of the same loops. Within one kernel that is
// the loops around both ops: the trip counters of two loops one after the
// other say nothing of which access comes first, the source does (a
// rank's own adds into its window in one loop and its left neighbour's
// ring adds in the next raced as WAW own, add or add, own by whether the
// chunk number passed the step number: hazards/rs_ring_accum_plain_store).
// Loops in two arms of one if are two roles' loops over the same trips
// (a producer AIV's and a consumer AIV's: hazards/sdma_land_scale), and
// match by depth, as two kernels' loops do (a cube producer's and its
// vector consumer's), and accesses whose op is unknown.
func sharedLoops(a, b *rec) int {
	n := int(a.niter)
	if a.op == nil || b.op == nil || a.op.Kernel != b.op.Kernel {
		return n
	}
	la, lb := a.op.Loops, b.op.Loops
	for i := range min(n, len(la), len(lb)) {
		if la[i] != lb[i] {
			if la[i].Exclusive(lb[i]) {
				return n
			}
			return i
		}
	}
	return n
}

func opPos(op *asm.COp) asm.Pos {
	if op == nil || op.Instr == nil {
		return asm.Pos{}
	}
	return op.Instr.Pos
}

// racesKept reports whether read rd, ordered before write r, raced a
// write that stays in cell c past r (one r is not ordered after, kept
// beside it). rd then stays too: a later write ordered after that one and
// racing rd takes its race (raceRead), as it does when rd ran after r, and
// dropping rd here would leave the earlier write named in one order of the
// run and the later one in another.
func (d *Detector) racesKept(c *cell, rd, r *rec, after bool) bool {
	if !rd.raced || r.atomic {
		return false
	}
	if c.hasW && !after && d.hasRaced(rd, &c.w) {
		return true
	}
	for x, adds := 0, c.adds(); x < len(adds); x++ {
		if w := &adds[x]; !w.atomic && !w.shadowed() && !d.ordered(w, r) && d.hasRaced(rd, w) {
			return true
		}
	}
	return false
}

// keptWrites is what racesKept asks of cell c's writes for one write r,
// the same for every read r meets: whether c.w stays past r, and which of
// the other writes are plain and not ordered before r (bit x for adds[x]).
// On an L0C accumulator each mad's write meets up to maxPrior+2 raced
// reads of the cube (keepPrior), and asked per read these orderings were
// most of the write's cost.
type keptWrites struct {
	ready bool
	many  bool // more other writes than bits: racesKept asks per read
	w     bool
	adds  uint64
}

// racesKeptBy is racesKept(c, rd, r, after), with c's writes' orderings
// looked up once per write in kw. Nothing a write's check of c's reads does
// changes a clock or c's writes, and which pairs raced (hasRaced) is still
// asked per read, in the same order.
func (d *Detector) racesKeptBy(c *cell, kw *keptWrites, rd, r *rec, after bool) bool {
	if !rd.raced || r.atomic {
		return false
	}
	adds := c.adds()
	if !kw.ready {
		kw.ready, kw.many = true, len(adds) > 64
		kw.w = c.hasW && !after
		if !kw.many {
			for x := range adds {
				if w := &adds[x]; !w.atomic && !w.shadowed() && !d.ordered(w, r) {
					kw.adds |= 1 << x
				}
			}
		}
	}
	if kw.many {
		return d.racesKept(c, rd, r, after)
	}
	if kw.w {
		// hasRaced(rd, &c.w), inline when it is told from the two
		// accesses (an L0C read of the cube and its last mad).
		raced, told := selfRaced(rd, &c.w)
		if !told || checkShortcuts || !d.selfOff(rd, &c.w) {
			raced = d.hasRaced(rd, &c.w)
		}
		if raced {
			return true
		}
	}
	for m := kw.adds; m != 0; m &= m - 1 {
		if d.hasRaced(rd, &adds[bits.TrailingZeros64(m)]) {
			return true
		}
	}
	return false
}

// sameInstance reports whether a and b are one instance of one op (its read
// and its write of a tile it updates in place).
func sameInstance(a, b *rec) bool {
	return a.agent == b.agent && a.epoch == b.epoch && a.gen == b.gen
}
