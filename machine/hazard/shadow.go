package hazard

import (
	"math"
	"slices"

	"github.com/ptoasm/ptoasm/asm"
)

// maxIter bounds the loop iteration vector kept per access; deeper nests keep
// their outermost levels. Keeping it inline avoids an allocation per access.
// Seven is allgather_gemm's compute nest, and the most that keeps rec in one
// cache line.
const maxIter = 7

// rec is one recorded access (or sync op) instance: FastTrack's epoch plus
// what a report needs to name it.
//
// It is kept to one cache line (64 bytes): cells hold one per last write and
// per reader, and copying and loading them is most of the detector's memory
// traffic. Hence the step's name as an index into Detector.steps and the
// iteration vector as int32 (a loop of more than 2^31 iterations saturates).
type rec struct {
	agent  int32
	epoch  uint32
	gen    uint32
	iter   [maxIter]int32
	serial int64 // intended order on its core (issue order)
	op     *asm.COp
	step   uint8 // index into Detector.steps; 0 for none
	niter  uint8
	write  bool
	atomic bool
	// raced marks a read kept in a cell that races the cell's last write
	// (exec.go, accessCell), and a write kept shadowed past its own
	// agent's ordered overwrite (history.go, rec.shadowed).
	raced bool
	// gap is the agent's gaps when it made the access: two reads of one
	// site with the same gap have no other agent's op of their core
	// issued between them (keepPrior).
	gap uint8
	// lag is epoch less the agent's own component of its clock when the
	// access was checked against the cell, saturated: whether an earlier
	// access of the same agent raced it can then be told later (selfRaced)
	// instead of being recorded as a pair.
	lag uint16
}

func (r *rec) iters() []int64 {
	out := make([]int64, r.niter)
	for i := range out {
		out[i] = int64(r.iter[i])
	}
	return out
}

// setIter keeps the outermost maxIter levels of it, saturated to int32.
func (r *rec) setIter(it []int64) { r.niter = narrowIter(&r.iter, it) }

// narrowIter writes iteration vector it into dst as the detector keeps
// vectors, the outermost maxIter levels saturated to int32, and returns
// how many levels it wrote.
func narrowIter(dst *[maxIter]int32, it []int64) uint8 {
	n := min(len(it), maxIter)
	for i, v := range it[:n] {
		dst[i] = int32(max(min(v, math.MaxInt32), math.MinInt32))
	}
	return uint8(n)
}

// cell is the shadow state of one byte range of one buffer.
type cell struct {
	// The fields are laid out in three lines (192 bytes): what every
	// access reads first (the bounds, the flags, the lists' headers and
	// the signal box's pointer), then w, then read0. Every cell starts on
	// a line (cellSlab's chunks, the slabs' arrays and the heap's 192-byte
	// class all put it there), so a data access touches exactly three;
	// at 200 bytes, cells started 8 bytes into a line and most accesses
	// touched four (docs/performance.md, round 18 at many ranks).
	lo, hi  int64
	written bool // initialised in this launch (host write or any store)
	hasW    bool
	// firstW marks w as the first write of the launch to these bytes, by
	// an instruction: a read meant to come before it read nothing.
	firstW bool
	hasR   bool // read0 holds a read
	// sigGen is the run generation sig belongs to.
	sigGen uint32
	// The reads since the last write, one per agent, in the order each
	// agent first read: read0 (when hasR), then reads. A read that races a
	// write stays past it (marked raced), so a later write it also races
	// finds it whether the read ran before or after the first write. Most
	// cells have one reader (a tile and the pipe that consumes it), and a
	// slice's array is one more cache miss on every access of a cold cell.
	reads []rec
	// lists holds the other writes not ordered before w (adds) and the
	// uninitialised reads (uninit), nil until the cell first has one of
	// either: most cells never do, and two slice headers inline took the
	// room of the first line (one pointer each took 8 bytes more than
	// three lines).
	lists *cellLists
	// sigBox holds what only a signal word's cell uses, nil for data cells
	// (most cells: a 384-rank ring lint makes about 290 000 of them): nil
	// stands for the zero box, which a signal visit makes real
	// (Detector.eachSigCell) before it reads or writes a field of it.
	*sigBox
	w     rec // last plain write
	read0 rec
}

// cellLists is a cell's two rarely used lists (cell.lists).
type cellLists struct {
	adds []rec
	unin []uninitRead
	olds *oldsList // (olds.go)
	// sreads holds the reads of other agents that a later write of their
	// core, ordered after them, took out of local memory while an op
	// issued before it was still to land (history.go, "Reads overwritten
	// in order").
	sreads []rec
	// oldsBefore says every write in olds is ordered before the cell's
	// last: an access ordered after that one is after each of them, and
	// need not meet them (accessCell).
	oldsBefore bool
	// kept says that, though w is not the launch's first write to these
	// bytes (firstW false), every write the launch made to them is still
	// here: w, adds (shadowed ones included) or olds. A read ordered after
	// none of them read poison whatever order they landed in (accessCell,
	// beforeEveryKept); firstW alone, which an ordered overwrite clears,
	// made that verdict follow the timing (docs/hazards.md, uninit-read).
	kept bool
}

// keptAll reports whether every write of the launch to c's bytes is in c,
// though not all are first writes (cellLists.kept).
func (c *cell) keptAll() bool { return c.lists != nil && c.lists.kept }

// setKept sets cellLists.kept, making the lists only to set it.
func (c *cell) setKept(v bool) {
	if c.listsFor(v) {
		c.lists.kept = v
	}
}

// listsFor reports whether the cell has its lists to set a field of, making
// them when the value to set is not empty (some): a cell without lists
// already reads every field as empty, and most cells never need them.
func (c *cell) listsFor(some bool) bool {
	if c.lists == nil {
		if !some {
			return false
		}
		c.lists = new(cellLists)
	}
	return true
}

// sigBox is a signal word's part of its cell: its release and history.
// Inline, it was a fourth cache line of every cell (256 bytes), which data
// cells never read; boxed, a cell was 200 bytes (docs/performance.md,
// round 17 at many ranks), 192 since its two rare lists share one
// pointer (cell.lists, round 18).
type sigBox struct {
	// sigCore is a signal word's release, valid while sigGen is the
	// current run generation.
	sigCore
	// hist is what a signal word remembers across runs, for stale-signal;
	// nil for none.
	hist *sigHist
}

// sigCore is the release clock of a signal word: a cell's, or a word's of
// a region's table (sigWord). The agents' memos of the words they joined
// (relSeen, sigSeen) name a word by its sigCore, whichever holds it.
type sigCore struct {
	// sig is the join of the notifies since the last plain store.
	sig vclock
	// sigFrom is agent+1 when sig is that agent's release recorded at
	// sigAt (Detector.relSeq), or the join of its releases up to it, else 0
	// (Detector.acquireSig).
	sigFrom int32
	sigVer  uint32 // counts changes to sig (Detector.signalCell)
	sigAt   uint64
}

// adds returns the other writes not ordered before w, one per agent and
// kind: the atomic adds since w, and earlier plain writes that race w.
// Keeping only w would make a later read race whichever of two racing
// writes ran last, a report that followed the run's timing. The list
// aliases the cell's: writing an element writes the cell's.
func (c *cell) adds() []rec {
	if c.lists == nil {
		return nil
	}
	return c.lists.adds
}

// anyRead reports whether p holds for one of the reads c keeps (read0 and
// the others).
func (c *cell) anyRead(p func(*rec) bool) bool {
	if c.hasR && p(&c.read0) {
		return true
	}
	for x := range c.reads {
		if p(&c.reads[x]) {
			return true
		}
	}
	return false
}

// setAdds makes l the cell's other writes. (It and setUninit are
// written out, not one helper that makes the box: the helper cost
// allgather_gemm 1.7 M instructions at M=1024.)
func (c *cell) setAdds(l []rec) {
	if c.listsFor(len(l) > 0) {
		c.lists.adds = l
	}
}

// putAdd records r in the cell's other writes (putRec). The first one
// makes the box and the list in one object: every signal word a ring
// notifies gets one atomic add, and a list of one and its box were two
// allocations and a growslice per notify.
func (c *cell) putAdd(r *rec) {
	if c.lists == nil {
		b := &recBox{}
		b.one[0] = *r
		b.ls.adds = b.one[:]
		c.lists = &b.ls
		return
	}
	c.setAdds(putRec(c.adds(), r))
}

// recBox is a cell's lists with room for the other writes' first element.
type recBox struct {
	ls  cellLists
	one [1]rec
}

// uninit returns the reads that found the cell unwritten (or written only
// by a write they were meant to precede), for as long as the cell keeps a
// read of their agent: a write meant to come before one of them (it races
// the read and the intended order puts it first) retracts that read's
// uninit-read, since the race is the report and the read only came first
// by timing (Detector.explainUninit). At most maxUninit, one per instance;
// unlike reads, not one per agent, so an agent's earlier uninitialised
// reads are still there to retract. The list aliases the cell's.
func (c *cell) uninit() []uninitRead {
	if c.lists == nil {
		return nil
	}
	return c.lists.unin
}

// setUninit makes l the cell's uninitialised reads.
func (c *cell) setUninit(l []uninitRead) {
	if c.listsFor(len(l) > 0) {
		c.lists.unin = l
	}
}

// hasUninit reports whether the cell keeps an uninitialised read.
func (c *cell) hasUninit() bool { return c.lists != nil && len(c.lists.unin) > 0 }

// sreads returns the reads kept past their ordered overwrite (history.go).
// The list aliases the cell's.
func (c *cell) sreads() []rec {
	if c.lists == nil {
		return nil
	}
	return c.lists.sreads
}

// setSReads makes l the cell's reads kept past their ordered overwrite.
func (c *cell) setSReads(l []rec) {
	if c.listsFor(len(l) > 0) {
		c.lists.sreads = l
	}
}

// hasSReads reports whether the cell keeps a read past its overwrite.
func (c *cell) hasSReads() bool { return c.lists != nil && len(c.lists.sreads) > 0 }

// hasAdds reports whether the cell keeps another write.
func (c *cell) hasAdds() bool { return c.lists != nil && len(c.lists.adds) > 0 }

// uninitRead is a read that found unwritten bytes, with what it read
// through (its uninit-read note is per site and buffer).
type uninitRead struct {
	r      rec
	tile   *asm.TileInfo
	tensor *asm.TensorInfo
}

// maxUninit bounds cell.uninit: a loop polling never-written bytes reads
// them once per iteration. A candidate waits until a write settles it
// (explainUninit), so a slow load meant to fill a tile that a loop of fast
// readers has read more often than this keeps the later reads' findings
// (corpus issue428_cube_sync_regression, where a slow cube's first
// TMATMUL fills an L0C tile FIX had read 9 times, needed more than 8).
const maxUninit = 64

// maxUninitLocal bounds cell.uninit in local memory, where settled
// candidates leave (Detector.putUninit).
const maxUninitLocal = 1 << 12

// sigHist is the write history of a signal word since the last host write,
// and the part of the word's release clock that sig does not hold (relLoc).
//
// It is 128 bytes, a size class of two lines: one per signal word a ring
// notifies (294 000 at 384 ranks). prev is out of line, since only a word
// written in more than one run has one; a record inline made it 192.
type sigHist struct {
	last rec // the latest write
	// prev is the latest write of an earlier run than last's, nil for
	// none. It is never written through (wrote makes a new one), so a
	// copy of the history (cell.copyTo) may share it.
	prev *rec
	// runAdd sums the values this run's atomic notifies added (valid while
	// runGen is the current run generation), so a wait can tell how much of
	// the value it saw is left over from earlier runs.
	runAdd int64
	runGen uint32
	// relLoc, while hasLoc, holds the notifier's components of its own
	// core's agents (its lc, by pipe slot), which the word's release has
	// beside sig: a scalar releases its clock unflushed
	// (Detector.signalAccess). cell.sigFrom names the notifier.
	relLoc          pipeVals
	hasLast, hasLoc bool
}

// wrote records a write of r (a notify or a store) in run generation r.gen.
func (h *sigHist) wrote(r *rec) {
	if h.hasLast && h.last.gen != r.gen {
		prev := h.last
		h.prev = &prev
	}
	h.last, h.hasLast = *r, true
}

// stale returns the latest write of a run before gen, and whether a write of
// run gen came after it.
func (h *sigHist) stale(gen uint32) (*rec, bool) {
	switch {
	case h == nil || !h.hasLast:
		return nil, false
	case h.last.gen != gen:
		return &h.last, false
	case h.prev != nil:
		return h.prev, true
	}
	return nil, true
}

// hostWrite gives c the state a host write (initial contents, reset,
// input) leaves: written by r, or poisoned, and nothing else.
func (c *cell) hostWrite(r *rec, poison bool) {
	c.w, c.hasW, c.written, c.firstW = *r, true, !poison, false
	c.reads, c.hasR = c.reads[:0], false
	c.setAdds(c.adds()[:0])
	c.setUninit(c.uninit()[:0])
	c.clearOlds()
	c.setSReads(c.sreads()[:0])
	c.setKept(false)
	if b := c.sigBox; b != nil {
		b.sig.truncate()
		b.sigFrom = 0
		b.sigVer++
		b.hist = nil
	}
}

// copyTo gives n c's state, reusing n's slices (n comes from the free
// list, so a split allocates nothing in the steady state).
func (c *cell) copyTo(n *cell) {
	lists, reads, box := n.lists, n.reads[:0], n.sigBox
	*n = *c
	// n keeps its own lists and box: c's would be shared.
	n.lists, n.sigBox = lists, box
	n.setAdds(append(n.adds()[:0], c.adds()...))
	n.reads = append(reads, c.reads...)
	n.setUninit(append(n.uninit()[:0], c.uninit()...))
	n.copyOldsFrom(c)
	n.setSReads(append(n.sreads()[:0], c.sreads()...))
	if n.lists != nil {
		n.lists.oldsBefore = c.lists != nil && c.lists.oldsBefore
		n.lists.kept = c.keptAll()
	}
	src := c.sigBox
	if src == nil {
		if box == nil {
			return // both zero boxes
		}
		src = &sigBox{}
	}
	if box == nil {
		box = new(sigBox)
		n.sigBox = box
	}
	sig, ver := box.sig, box.sigVer
	box.sigCore = src.sigCore
	// n is a new word to the agents' memos (sigSeen): its version goes on
	// from its own, not c's, so that no memo of n's earlier life matches.
	box.sigVer = ver + 1
	sig.copyFrom(&src.sig)
	box.sig = sig
	box.hist = nil
	if src.hist != nil {
		h := *src.hist
		box.hist = &h
	}
}

// imap is a sorted list of disjoint cells. Gaps are ranges nobody touched.
// Cells are held by pointer: a GM tensor accessed row by row splits into
// thousands of cells, and inserting into a slice of full cells moved them all
// (most of allgather_gemm's detector time); free recycles collapsed cells.
type imap struct {
	cells []*cell
	// bs holds each cell's [lo, hi), in step with cells: searching it
	// touches one contiguous array instead of a cell per probe (a cache
	// miss each on pages with many cells).
	bs   [][2]int64
	free []*cell
	hint int // the cell span returned last
	// slab makes new cells (nil: the heap); the detector's, shared by
	// every list of its shadow (cellslab.go).
	slab *cellSlab
}

// newCell returns an empty cell for [lo, hi), recycled if possible.
func (m *imap) newCell(lo, hi int64) *cell {
	if n := len(m.free); n > 0 {
		p := m.free[n-1]
		m.free = m.free[:n-1]
		p.lo, p.hi = lo, hi
		return p
	}
	return m.slab.newCell(lo, hi)
}

// search returns the first cell ending after lo.
func (m *imap) search(lo int64) int {
	i, j := 0, len(m.cells)
	for i < j {
		h := int(uint(i+j) >> 1)
		if m.bs[h][1] > lo {
			j = h
		} else {
			i = h + 1
		}
	}
	return i
}

// near returns search(lo), looking first at the cell the last span started
// at (h) and the cells beside it (neighbour).
func (m *imap) near(h int, lo int64) int {
	if i := m.neighbour(h, lo); i >= 0 {
		return i
	}
	return m.search(lo)
}

// neighbour returns search(lo) when cell h, the one after it or the one
// before it is that cell, else -1. Accesses walk
// a tensor in order: a ring's notifies and waits take its signal words
// one after another, its chunks are read and stored upwards or
// downwards. A search of a 766-word signal list (384 ranks) reads about
// seven lines of a list the ring's other ranks have long evicted; these
// three cells share one or two.
func (m *imap) neighbour(h int, lo int64) int {
	n := len(m.bs)
	switch {
	case h >= n:
		return -1
	case m.bs[h][1] <= lo: // the cell is after h
		if h+1 == n || m.bs[h+1][1] > lo {
			return h + 1
		}
	case h == 0 || m.bs[h-1][1] <= lo:
		return h
	case h == 1 || m.bs[h-2][1] <= lo: // h-1 ends after lo
		return h - 1
	}
	return -1
}

// span makes cells cover [lo, hi) exactly, splitting at both ends and filling
// gaps with unwritten cells, and returns the index range [i, j) covering it.
func (m *imap) span(lo, hi int64) (int, int) {
	// Most accesses cover exactly a cell the last one made (a tile written
	// and read whole): check the last answer, then search from it (near;
	// these lines keep their count: default.pgo keys calls by line).
	if h := m.hint; h < len(m.bs) && m.bs[h] == [2]int64{lo, hi} {
		return h, h + 1
	}
	i := m.near(m.hint, lo)
	if m.hint = i; i < len(m.bs) && m.bs[i] == [2]int64{lo, hi} {
		return i, i + 1
	}
	pos, idx := lo, i
	for pos < hi {
		if idx < len(m.cells) && m.bs[idx][0] <= pos {
			if m.bs[idx][0] < pos {
				m.splitAt(idx, pos)
				idx++
				i = idx // only the first cell can start before lo
			}
			if m.bs[idx][1] > hi {
				m.splitAt(idx, hi)
			}
			pos = m.bs[idx][1]
			idx++
			continue
		}
		end := hi
		if idx < len(m.cells) && m.bs[idx][0] < hi {
			end = m.bs[idx][0]
		}
		m.insert(idx, m.newCell(pos, end))
		pos = end
		idx++
	}
	return i, idx
}

// unwritten returns the first and last byte of [lo, hi) that no write
// initialised (gaps included), without splitting any cell.
func (m *imap) unwritten(lo, hi int64) (ulo, uhi int64, found bool) {
	i := m.search(lo)
	pos := lo
	note := func(a, b int64) {
		if !found {
			ulo, found = a, true
		}
		uhi = b
	}
	for ; i < len(m.cells) && pos < hi; i++ {
		c := m.cells[i] // written is needed, so the cell is loaded anyway
		if c.lo >= hi {
			break
		}
		if c.lo > pos {
			note(pos, c.lo)
		}
		if !c.written {
			note(max(c.lo, pos), min(c.hi, hi))
		}
		pos = c.hi
	}
	if pos < hi {
		note(pos, hi)
	}
	return ulo, uhi, found
}

// splitAt cuts cell k at x (lo < x < hi) into two cells with the same state.
func (m *imap) splitAt(k int, x int64) {
	right := m.newCell(0, 0)
	m.cells[k].copyTo(right)
	right.lo = x
	m.cells[k].hi = x
	m.bs[k][1] = x
	m.insert(k+1, right)
}

func (m *imap) insert(k int, c *cell) {
	m.cells = append(m.cells, nil)
	copy(m.cells[k+1:], m.cells[k:])
	m.cells[k] = c
	m.bs = append(m.bs, [2]int64{})
	copy(m.bs[k+1:], m.bs[k:])
	m.bs[k] = [2]int64{c.lo, c.hi}
}

// collapseSame merges each run of cells in [i, j) whose states agree. A
// plain write over them gave every cell the same last write, but what a cell
// keeps beside it is its own: the writes that race it, the reads that raced
// an earlier write, the uninitialised reads. Merging every cell into the
// first spread the first cell's (a load that raced the write over part of
// the range) over bytes it never touched and dropped the others', and which
// cells there were followed the order the accesses landed in: a kernel whose
// tiles overlap in part reported a load racing a tile it does not write,
// under some timings only.
func (m *imap) collapseSame(i, j int) {
	for k := j - 1; k > i; {
		s := k
		for s > i && m.cells[s-1].sameState(m.cells[k]) {
			s--
		}
		m.collapse(s, k+1)
		k = s - 1
	}
}

// sameState reports whether c and o hold the same accesses (their bounds
// aside), so that one cell can stand for both. Signal words never merge:
// each keeps its own history.
func (c *cell) sameState(o *cell) bool {
	if c.sigBox != nil || o.sigBox != nil || c.written != o.written || c.hasW != o.hasW ||
		c.firstW != o.firstW || c.keptAll() != o.keptAll() || c.hasR != o.hasR || c.hasW && c.w != o.w || c.hasR && c.read0 != o.read0 {
		return false
	}
	return slices.Equal(c.reads, o.reads) && slices.Equal(c.adds(), o.adds()) && slices.Equal(c.uninit(), o.uninit()) &&
		sameOlds([]*cell{c, o}) && slices.Equal(c.sreads(), o.sreads())
}

// collapse merges cells [i, j) into cell i; the caller has just given them
// the same state (a plain write), so keeping the map small keeps lookups fast.
func (m *imap) collapse(i, j int) {
	if j-i <= 1 {
		return
	}
	m.cells[i].hi = m.cells[j-1].hi
	m.bs[i][1] = m.bs[j-1][1]
	for _, c := range m.cells[i+1 : j] {
		c.setAdds(c.adds()[:0])
		c.setUninit(c.uninit()[:0])
		c.clearOlds()
		c.setSReads(c.sreads()[:0])
		c.setKept(false)
		if b := c.sigBox; b != nil {
			b.sig.truncate()
			// The version goes on counting: an agent's memo may still
			// name the cell (sigSeen), and its next life must not match
			// it.
			*b = sigBox{sigCore: sigCore{sig: b.sig, sigVer: b.sigVer + 1}}
		}
		*c = cell{reads: c.reads[:0], lists: c.lists, sigBox: c.sigBox}
		m.free = append(m.free, c)
	}
	n := copy(m.cells[i+1:], m.cells[j:])
	clear(m.cells[i+1+n:])
	m.cells = m.cells[:i+1+n]
	copy(m.bs[i+1:], m.bs[j:])
	m.bs = m.bs[:i+1+n]
}

// pageShift sizes the shadow pages. Each page keeps its own sorted cell list,
// so a split or an insert moves at most one page's cells: a GM tensor read
// row by row holds a cell per row segment, and in one list per buffer the
// inserts made the detector quadratic in the run length (a 24-core GEMM at
// K=65536 took 92 s against 33 ms without the detector).
const pageShift = 16

// localPageShift sizes the pages of local buffers (UB, L1, L0*), which
// are at most a few hundred KiB: a 128 KiB L0C accumulator is then one
// cell, not one per 64 KiB page, and each mad reads and writes it once
// (a GEMM's K step visited six cells, now four).
const localPageShift = 17

// pageShiftOf is the page size of the buffers of space s.
func pageShiftOf(s asm.Space) uint8 {
	if s == asm.GM {
		return pageShift
	}
	return localPageShift
}

// densePages is how many pages (4 GiB of addresses) shadowMem indexes
// directly; pages beyond, only seen with huge shapes, go to a map.
const densePages = 1 << 16

// shadowMem is the shadow state of one buffer, in pages.
//
// A GM tensor the host wrote whole gets pages of its own (a region): a page
// list then holds one tensor's cells, not every tensor's on the rank's
// page, and a split moves only the cells of its own tensor after it. The
// 384-rank ring_final keeps its 766 signal words, Scratch and Out on one
// 64 KiB page: every split of an Out chunk moved the signal words' and
// Scratch's 1 150 cells, 169 M list entries in all (docs/performance.md,
// "a page list per tensor").
//
// Regions change no cell. A cell lies wholly inside one region or outside
// all of them: a region is made only over bytes no cell touches yet, and a
// span inside it makes cells inside it. An access that crosses a region's
// edge (an out-of-bounds run, a tensorless range, an alias) first gives the
// region's cells back to the buffer's pages (dissolve), so every span asks
// the same list the single page list would have held for its bytes, and
// gets the same cells.
type shadowMem struct {
	dense  []*imap // by page number, grown on demand
	sparse map[int64]*imap
	// regions are the tensors with pages of their own, sorted and disjoint.
	regions []region
	// The two windows looked up last, the latest first: most accesses stay
	// on one page, and a rank's signal words and data take turns.
	win      [2]window
	negative imap // below address 0 (never from the machine; fuzzed events)
	// grid, once set, holds the whole buffer instead of the pages: a local
	// buffer read in column windows switches to it (Detector.toGrid).
	// Local buffers have no regions.
	grid *shadow2D
	// shift is the page size (pageShiftOf).
	shift uint8
	// pending are host writes over more pages than a region may hold
	// (tensors of more than 4 GiB, from -D), in the order they came: the
	// pages they cover that had no list yet get their cells when first
	// made (mainPage), so a write of a 512 GiB tensor costs the pages the
	// run touches, not 8 M cells before the first instruction (the host
	// write sets every field of a cell, so a page made later holds what it
	// would have held).
	pending []pendingWrite
	// slab makes the cells of every list (imap.slab).
	slab *cellSlab
	// tabs counts the regions with a word table (region.tab); lastTab is
	// the table tableWord found last.
	tabs    int
	lastTab *sigTable
}

// pendingWrite is a host write of bytes [lo, hi) not yet given to the
// pages that had no list when it came (shadowMem.pending).
type pendingWrite struct {
	lo, hi int64
	r      rec
	poison bool
}

// hostWrite gives bytes [lo, hi) of a GM buffer the host write r. A write
// over more than maxRegionPages pages writes the pages that have lists
// now and leaves the rest pending, if lazy (GM: a local buffer may move
// to a grid, which takes the pages' cells as they are).
func (s *shadowMem) hostWrite(lo, hi int64, r *rec, poison, lazy bool) {
	if !lazy || lo < 0 || s.grid != nil || (hi-1)>>s.shift-lo>>s.shift < maxRegionPages {
		for lo < hi {
			m, end := s.page(lo, hi)
			m.hostWrite(lo, end, r, poison)
			lo = end
		}
		return
	}
	// A page of its own would cross the region's edges: give the cells
	// back, as page does for an access crossing a region.
	for k := s.regionAfter(lo); k < len(s.regions) && s.regions[k].lo < hi; {
		s.dissolve(k)
	}
	for _, p := range s.pagesIn(lo, hi) {
		s.mainPage(p, false).hostWrite(max(lo, p<<s.shift), min(hi, (p+1)<<s.shift), r, poison)
	}
	s.pending = append(s.pending, pendingWrite{lo: lo, hi: hi, r: *r, poison: poison})
}

// hostWrite gives the cells of [lo, hi) (on this list's page) the host
// write r, as one cell where they agree.
func (m *imap) hostWrite(lo, hi int64, r *rec, poison bool) {
	i, j := m.span(lo, hi)
	for _, c := range m.cells[i:j] {
		c.hostWrite(r, poison)
	}
	m.collapse(i, j)
}

// newMainPage is a new list for page p, holding what the pending host
// writes over it left.
func (s *shadowMem) newMainPage(p int64) *imap {
	m := &imap{slab: s.slab}
	for k := range s.pending {
		w := &s.pending[k]
		if lo, hi := max(w.lo, p<<s.shift), min(w.hi, (p+1)<<s.shift); lo < hi {
			m.hostWrite(lo, hi, &w.r, w.poison)
		}
	}
	return m
}

// unwrittenWide is imap.unwritten for a read of [lo, hi) over more than
// maxRegionPages pages (the hull of a tile read from a huge nz tensor):
// it reads the pages that have lists and answers for the others from the
// pending host writes, making no page, so the read costs the pages the
// run touched rather than one list per 64 KiB of the range.
func (s *shadowMem) unwrittenWide(lo, hi int64) (ulo, uhi int64, found bool) {
	// page would dissolve these regions (the range crosses their edges);
	// with their cells back in the buffer's pages, those hold every cell.
	for k := s.regionAfter(lo); k < len(s.regions) && s.regions[k].lo < hi; {
		s.dissolve(k)
	}
	note := func(a, b int64, ok bool) {
		if ok {
			if !found {
				ulo, found = a, true
			}
			uhi = b
		}
	}
	pos := lo
	for _, p := range s.pagesIn(lo, hi) {
		plo, phi := max(lo, p<<s.shift), min(hi, (p+1)<<s.shift)
		if pos < plo {
			note(s.pendingUnwritten(pos, plo))
		}
		note(s.mainPage(p, false).unwritten(plo, phi))
		pos = phi
	}
	if pos < hi {
		note(s.pendingUnwritten(pos, hi))
	}
	return ulo, uhi, found
}

// pagesIn returns, in order, the pages of [lo, hi) that have a list in
// the buffer's pages.
func (s *shadowMem) pagesIn(lo, hi int64) []int64 {
	p0, p1 := lo>>s.shift, (hi-1)>>s.shift
	var ps []int64
	for p := p0; p <= p1 && p < int64(len(s.dense)); p++ {
		if s.dense[p] != nil {
			ps = append(ps, p)
		}
	}
	for p := range s.sparse {
		if p >= p0 && p <= p1 {
			ps = append(ps, p)
		}
	}
	slices.Sort(ps)
	return ps
}

// pendingUnwritten is imap.unwritten for bytes [lo, hi) on pages with no
// list: a byte is initialised if the last pending write over it was not a
// poison.
func (s *shadowMem) pendingUnwritten(lo, hi int64) (ulo, uhi int64, found bool) {
	cuts := []int64{lo, hi}
	for _, w := range s.pending {
		if w.lo > lo && w.lo < hi {
			cuts = append(cuts, w.lo)
		}
		if w.hi > lo && w.hi < hi {
			cuts = append(cuts, w.hi)
		}
	}
	slices.Sort(cuts)
	cuts = slices.Compact(cuts)
	for k := 0; k+1 < len(cuts); k++ {
		a, b := cuts[k], cuts[k+1]
		written := false
		for n := len(s.pending) - 1; n >= 0; n-- {
			if w := &s.pending[n]; w.lo <= a && b <= w.hi {
				written = !w.poison
				break
			}
		}
		if !written {
			if !found {
				ulo, found = a, true
			}
			uhi = b
		}
	}
	return ulo, uhi, found
}

// pendingIn reports whether a pending host write has bytes in [lo, hi).
func (s *shadowMem) pendingIn(lo, hi int64) bool {
	for _, w := range s.pending {
		if w.lo < hi && lo < w.hi {
			return true
		}
	}
	return false
}

// window is bytes [lo, hi) whose cells are all in m's list; edge says hi is
// a region's edge, which an access may not cross without a look at the
// regions. The zero window holds no byte.
type window struct {
	lo, hi int64
	m      *imap
	edge   bool
}

// holds reports whether w serves an access of [lo, hi) from lo.
func (w *window) holds(lo, hi int64) bool {
	return lo >= w.lo && lo < w.hi && (hi <= w.hi || !w.edge)
}

// region is bytes [lo, hi) of a buffer (one GM tensor) with page lists of
// their own, from page p0 on.
type region struct {
	lo, hi int64
	p0     int64
	pages  []*imap
	// word, when not 0, is the word size of a signal tensor: each word
	// becomes a cell of its own (one notify or wait each), so a page's
	// list is made with room for its words (at most maxWordCells)
	// instead of growing by doubling to them. A 384-rank ring's 766
	// signal words a rank grew lists through ten sizes (docs/performance.md,
	// round 9 at many ranks).
	word int64
	// tab, when not nil, holds the region's signal words instead of
	// pages (sigword.go): pages is all nil until unTable.
	tab *sigTable
}

// maxWordCells bounds the room a signal tensor's page list is made with:
// a large signal matrix of which a program uses a column keeps growing its
// lists on demand.
const maxWordCells = 1024

// newPage returns an empty list for page p of the region.
func (r *region) newPage(p int64, shift uint8) *imap {
	m := &imap{}
	if r.word > 0 {
		lo, hi := max(r.lo, p<<shift), min(r.hi, (p+1)<<shift)
		n := min((hi-lo)/r.word, maxWordCells)
		m.cells, m.bs = make([]*cell, 0, n), make([][2]int64, 0, n)
	}
	return m
}

// maxRegionPages bounds a region's page table: a tensor of more than 4 GiB
// (fuzzed sizes) stays in the buffer's pages.
const maxRegionPages = 1 << 16

// newShadowMem returns an empty shadow whose lists make their cells from
// slab (nil: the heap).
func newShadowMem(shift uint8, slab *cellSlab) *shadowMem {
	return &shadowMem{shift: shift, slab: slab, negative: imap{slab: slab}}
}

// page returns the cells of the page holding lo and where the part of
// [lo, hi) on that page ends.
func (s *shadowMem) page(lo, hi int64) (*imap, int64) {
	if lo < 0 {
		return &s.negative, min(hi, 0)
	}
	if w := &s.win[0]; w.holds(lo, hi) {
		return w.m, min(hi, w.hi)
	}
	if w := s.win[1]; w.holds(lo, hi) {
		s.win[0], s.win[1] = w, s.win[0]
		return w.m, min(hi, w.hi)
	}
	return s.pageSlow(lo, hi)
}

// pageSlow is page outside the last windows: it finds the region holding
// lo, dissolving every region [lo, hi) crosses an edge of, or else the
// buffer's page, and makes that the latest window.
func (s *shadowMem) pageSlow(lo, hi int64) (*imap, int64) {
	p := lo >> s.shift
	w := window{lo: p << s.shift, hi: (p + 1) << s.shift}
	k := s.regionAfter(lo)
	for k < len(s.regions) && s.regions[k].lo < hi && (lo < s.regions[k].lo || hi > s.regions[k].hi) {
		s.dissolve(k)
	}
	if k < len(s.regions) && s.regions[k].lo <= lo {
		if s.regions[k].tab != nil {
			s.unTable(k)
		}
		r := &s.regions[k]
		n := p - r.p0
		if w.m = r.pages[n]; w.m == nil {
			w.m = r.newPage(p, s.shift)
			w.m.slab = s.slab
			r.pages[n] = w.m
		}
		w.lo, w.hi = max(w.lo, r.lo), min(w.hi, r.hi)
		w.edge = w.hi == r.hi
	} else {
		w.m = s.mainPage(p, true)
		if k > 0 {
			w.lo = max(w.lo, s.regions[k-1].hi)
		}
		if k < len(s.regions) && s.regions[k].lo <= w.hi {
			w.hi, w.edge = s.regions[k].lo, true
		}
	}
	s.win[0], s.win[1] = w, s.win[0]
	return w.m, min(hi, w.hi)
}

// regionAfter returns the first region ending after lo.
func (s *shadowMem) regionAfter(lo int64) int {
	i, j := 0, len(s.regions)
	for i < j {
		h := int(uint(i+j) >> 1)
		if s.regions[h].hi > lo {
			j = h
		} else {
			i = h + 1
		}
	}
	return i
}

// mainPage returns the buffer's own list of page p, made if create is set
// (else nil when there is none yet).
func (s *shadowMem) mainPage(p int64, create bool) *imap {
	var m *imap
	if p < densePages {
		if p < int64(len(s.dense)) {
			m = s.dense[p]
		}
		if m == nil && create {
			if p >= int64(len(s.dense)) {
				s.dense = append(s.dense, make([]*imap, int(p)+1-len(s.dense))...)
			}
			m = s.newMainPage(p)
			s.dense[p] = m
		}
		return m
	}
	if m = s.sparse[p]; m == nil && create {
		if s.sparse == nil {
			s.sparse = map[int64]*imap{}
		}
		m = s.newMainPage(p)
		s.sparse[p] = m
	}
	return m
}

// claim gives bytes [lo, hi) (a GM tensor the host writes whole) pages of
// their own, unless a cell or another region already has some of them;
// word is the tensor's word size if it is a signal tensor, else 0
// (region.word).
func (s *shadowMem) claim(lo, hi, word int64) {
	if lo < 0 || hi <= lo || (hi-1)>>s.shift-lo>>s.shift >= maxRegionPages || s.grid != nil {
		return
	}
	k := s.regionAfter(lo)
	if k < len(s.regions) && s.regions[k].lo < hi || s.pendingIn(lo, hi) {
		return
	}
	p0, p1 := lo>>s.shift, (hi-1)>>s.shift
	for p := p0; p <= p1; p++ {
		if m := s.mainPage(p, false); m != nil {
			if i := m.search(lo); i < len(m.cells) && m.bs[i][0] < hi {
				return
			}
		}
	}
	s.regions = slices.Insert(s.regions, k, region{lo: lo, hi: hi, p0: p0, pages: make([]*imap, p1-p0+1), word: word})
	s.win = [2]window{} // a window may hold the region's bytes
}

// dissolve gives region k's cells back to the buffer's pages, where they
// fall between the cells before and after the region's bytes.
func (s *shadowMem) dissolve(k int) {
	if s.regions[k].tab != nil {
		s.unTable(k)
	}
	r := &s.regions[k]
	for n, rm := range r.pages {
		if rm == nil {
			continue
		}
		m := s.mainPage(r.p0+int64(n), true)
		i := m.search(r.lo)
		m.cells = slices.Insert(m.cells, i, rm.cells...)
		m.bs = slices.Insert(m.bs, i, rm.bs...)
		m.free = append(m.free, rm.free...)
	}
	s.regions = slices.Delete(s.regions, k, k+1)
	s.win = [2]window{}
}

// shadowKey names one buffer: a rank's GM (core -1) or one core's local space.
type shadowKey struct {
	space asm.Space
	rank  int32
	core  int32
}
