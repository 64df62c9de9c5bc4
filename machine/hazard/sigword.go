package hazard

import (
	"fmt"
	"unsafe"
)

// Signal words are made in bulk. Most signal words are a table's (word
// tables, below: one compact record each); a word outside a table (a
// signal tensor the host does not write whole, or whose table an access
// of several words turned into cells) is one cell split
// off its tensor's host-written cell at its first access (a notify or a
// wait, whichever the run brings first; a satisfied wait is one event, so
// polling makes no cell), then one history (sigHist) and one atomic add's
// list box (recBox) at its notify: three objects a word, 294 000 words at
// 384 ranks, 0.88 M of the lint's 2.36 M allocations, each with the
// allocator's per-object work and the clearing of fresh small-object
// spans (docs/performance.md, "Round 11 at many ranks"). sigSlab hands
// them out of arrays instead, which the words then share with their
// neighbours; the tables' words come from a slab too.
//
// Nothing else changes: a record from a slab is the zero value a new one
// was, and a cell is given to a page's free list, which newCell already
// takes from, so every cell, history and list holds what it held.

// sigSlab holds the records not yet handed out.
type sigSlab struct {
	cells slab[cell]
	hists slab[sigHist]
	boxes slab[recBox]
	words slab[sigWord]
	// sigBoxes are the signal parts of cells that became signal words.
	sigBoxes slab[sigBox]
}

// slab hands out zero values of T from arrays of slabBytes.
type slab[T any] struct {
	free []T
}

// slabBytes sizes a slab's arrays: above 32 KiB, an array is a large
// object, which starts on a page. A smaller array of pointerful records
// starts 8 bytes into its object (the allocator's type header), which
// would put every cell across five cache lines instead of four
// (TestCellLayout) and every history across three instead of two.
const slabBytes = 64 << 10

// get returns a new zero T.
func (s *slab[T]) get() *T {
	if len(s.free) == 0 {
		var t T
		s.free = make([]T, max(slabBytes/int(unsafe.Sizeof(t)), 1))
		// The array is fresh memory the records will fill: one call
		// for its pages, not a page fault at each (prefault).
		prefault(unsafe.Pointer(&s.free[0]), uintptr(len(s.free))*unsafe.Sizeof(t))
	}
	p := &s.free[0]
	s.free = s.free[1:]
	return p
}

// hist returns a new, empty signal history.
func (s *sigSlab) hist() *sigHist { return s.hists.get() }

// addBox returns new cell lists whose other writes are r alone
// (cell.putAdd's first).
func (s *sigSlab) addBox(r *rec) *cellLists {
	b := s.boxes.get()
	b.one[0] = *r
	b.ls.adds = b.one[:]
	return &b.ls
}

// sigCellsPerSpan is the most cells one span of a signal access makes:
// one split at each end, or a gap filled between them.
const sigCellsPerSpan = 2

// roomFor gives page m's free list the new cells a span of a signal
// access may make, from the slab, so that newCell need not allocate them
// one by one. A cell left unused stays on the list for a later split.
func (s *sigSlab) roomFor(m *imap) {
	for len(m.free) < sigCellsPerSpan {
		m.free = append(m.free, s.cells.get())
	}
}

// putSigAdd records atomic add r in signal word c's other writes
// (cell.putAdd), the first one's list box from the slab.
func (d *Detector) putSigAdd(c *cell, r *rec) {
	if c.lists == nil {
		c.lists = d.sigSlab.addBox(r)
		return
	}
	c.putAdd(r)
}

// newSigBox gives data cell c a box of its own, the zero box its nil
// stood for, before the signal code reads or writes it (cell.sigBox).
func (d *Detector) newSigBox(c *cell) {
	c.sigBox = d.sigSlab.sigBoxes.get()
}

// sigHistOf returns word c's history, made empty if it has none (a
// table word's own, for the cell that stands for it: wordCell).
func (d *Detector) sigHistOf(c *cell) *sigHist {
	if c.hist == nil {
		if c == &d.wordScratch {
			c.hist = &d.wordCur.hist
		} else {
			c.hist = d.sigSlab.hist()
		}
	}
	return c.hist
}

// ---- word tables ------------------------------------------------------------
//
// A signal tensor the host writes whole (a ring's Sig) gets a table of
// its words instead of page lists (region.tab): each word's record
// (sigWord) holds only what a signal access reads and writes, and a word
// the run never touches is a nil pointer. As cells, each word a ring
// notifies was split off the host write's cell (a 256-byte cell, a copy
// of the host write's record in it, the list entries), then given a
// 128-byte history and an 88-byte box for its one add: 472 bytes and a
// split. A table word is 288 bytes, its host write shared, and no list
// changes.
//
// A table serves exactly the accesses that, as cells, would visit one
// word's cell alone: a single-row access of one aligned word. For those
// the cell path's cells are one per word (a span splits a cell only at
// the bounds of the words accessed) holding the host write's state until
// their first access, which is what a new table word holds. A word's
// record is handed to the existing signal code as a cell (wordCell, into
// d.wordScratch) and taken back after (putWord), so the code that decides
// races, releases and histories is the cells' own. Any other access of
// the region's bytes (a run of several words, a multi-row access, an
// access crossing the region's edge, a data access, a second host write)
// turns the table into the page lists the cells would have had
// (unTable: the host write's cells, each touched word's cell split off
// and given its record) before it is served, and the region keeps its
// lists from then on. The agents' memos of joined words name a word by
// its release (sigCore), which unTable moves to the word's cell.

// sigWord is one word of a table: the fields of a cell a signal access
// uses (signalCell, wroteHist, staleCell, noteReadsFrom). It is 192
// bytes, three lines, 341 to a slab's array: its last plain write and
// its list of other writes, when it has its own (a plain store, two
// adds), are the table's (wordExt); inline as two pointers they made it
// 208 bytes, and a ring's words have neither (docs/performance.md, round
// 18 at many ranks).
type sigWord struct {
	sc                     sigCore
	sigGen                 uint32
	written, hasW, hasHist bool
	// adds is what the word's other writes are (addsNone...), and
	// wordOwnW whether its last plain write is its own (else the
	// table's host write).
	adds uint8
	hist sigHist
}

// A table word's other writes (cell.adds): none; one, the history's last
// write (a notify's add: the list's element and the history's record are
// the same, kept once); or the list in the word's wordExt.
const (
	addsNone = iota
	addsLast
	addsOwn
	addsMask = 3
	// wordOwnW, beside the adds, says the word's last plain write is
	// wordExt.w.
	wordOwnW = 4
)

// wordExt is what a table word keeps beside its record once it has it
// (sigTable.ext): its own last plain write and its other writes' list.
type wordExt struct {
	w    rec
	addx []rec
}

// sigTable is the words of a region of word size word (region.tab).
type sigTable struct {
	lo, hi, word int64
	host         rec  // the host write of the region
	poison       bool // it poisoned the bytes
	// chunks holds the touched words, wordChunk to a chunk made on first
	// need: a table costs its touched words, not 8 bytes a word of a
	// large signal matrix that a program uses a column of.
	chunks []*[wordChunk]*sigWord
	// ext holds, by word, the words' own last plain writes and lists of
	// other writes (wordExt), for the few words that have one.
	ext  map[int]*wordExt
	d    *Detector
	gone bool // unTable has turned it into page lists
}

// wordW returns word i's last plain write: its own or the host write.
func (t *sigTable) wordW(i int, sw *sigWord) *rec {
	if sw.adds&wordOwnW != 0 {
		return &t.ext[i].w
	}
	return &t.host
}

// extOf returns word i's wordExt, made on first need.
func (t *sigTable) extOf(i int) *wordExt {
	x := t.ext[i]
	if x == nil {
		if t.ext == nil {
			t.ext = map[int]*wordExt{}
		}
		x = new(wordExt)
		t.ext[i] = x
	}
	return x
}

// wordChunk is how many words' pointers a chunk of a table holds.
const wordChunk = 64

// maxTableWords bounds the words of a table: its chunk list is 8 bytes a
// chunk from the start (128 KiB here), which a signal tensor sized by -D
// in gigabytes would make large. Larger ones keep their cells.
const maxTableWords = 1 << 20

// at returns word i, nil while untouched.
func (t *sigTable) at(i int) *sigWord {
	if ch := t.chunks[i/wordChunk]; ch != nil {
		return ch[i%wordChunk]
	}
	return nil
}

// slot returns where word i's pointer goes, making its chunk.
func (t *sigTable) slot(i int) **sigWord {
	ch := t.chunks[i/wordChunk]
	if ch == nil {
		ch = new([wordChunk]*sigWord)
		t.chunks[i/wordChunk] = ch
	}
	return &ch[i%wordChunk]
}

// touched reports whether a word of t has a record.
func (t *sigTable) touched() bool {
	for _, ch := range t.chunks {
		if ch != nil {
			return true
		}
	}
	return false
}

// useWordTables lets tests run the detector without tables.
var useWordTables = true

// tableHostWrite gives the region that claim has just made over [lo, hi)
// (a signal tensor of word size word, no page yet) a table holding host
// write r, instead of page lists, and reports whether it did.
func (s *shadowMem) tableHostWrite(d *Detector, lo, hi, word int64, r *rec, poison bool) bool {
	if !useWordTables || word <= 0 || lo%word != 0 || (hi-lo)%word != 0 || 1<<s.shift%word != 0 || (hi-lo)/word > maxTableWords {
		return false
	}
	k := s.regionAfter(lo)
	if k == len(s.regions) || s.regions[k].lo != lo || s.regions[k].hi != hi || s.regions[k].tab != nil {
		return false
	}
	rg := &s.regions[k]
	for _, m := range rg.pages {
		if m != nil {
			return false
		}
	}
	rg.tab = &sigTable{lo: lo, hi: hi, word: word, host: *r, poison: poison, chunks: make([]*[wordChunk]*sigWord, ((hi-lo)/word+wordChunk-1)/wordChunk), d: d}
	s.tabs++
	return true
}

// tableWord returns the table and index of the word [lo, hi) is, when it
// is exactly one word of a table; else nil.
func (s *shadowMem) tableWord(lo, hi int64) (*sigTable, int) {
	if s.tabs == 0 {
		return nil, 0
	}
	t := s.lastTab
	if t == nil || t.gone || lo < t.lo || lo >= t.hi {
		k := s.regionAfter(lo)
		if k == len(s.regions) || s.regions[k].lo > lo || s.regions[k].tab == nil {
			return nil, 0
		}
		t = s.regions[k].tab
		s.lastTab = t
	}
	if hi-lo != t.word || (lo-t.lo)%t.word != 0 || hi > t.hi {
		return nil, 0
	}
	return t, int((lo - t.lo) / t.word)
}

// wordCell returns word i of table t as a cell (d.wordScratch) for the
// signal code; putWord takes it back.
func (d *Detector) wordCell(t *sigTable, i int, v sigVisit) *cell {
	sw := t.at(i)
	if sw == nil {
		// The state the host write's cell had, which a split copies.
		sw = d.sigSlab.words.get()
		sw.hasW, sw.written = true, !t.poison
		sw.sc.sigVer = 1 // cell.hostWrite's count on a new cell
		*t.slot(i) = sw
	}
	lo := t.lo + int64(i)*t.word
	c := &d.wordScratch
	// The fields the signal code leaves alone (the reads, the uninit list,
	// firstW) stay as the detector made them: empty (putWord checks).
	c.lo, c.hi, c.written, c.hasW, c.sigGen = lo, lo+t.word, sw.written, sw.hasW, sw.sigGen
	c.lists, c.w, c.sigCore, c.hist = &d.wordLists, *t.wordW(i, sw), sw.sc, nil
	switch {
	case v == sigRead:
		d.wordLists.adds = nil // a read does not look at them
	case sw.adds&addsMask == addsNone:
		d.wordLists.adds = d.wordAdd1[:0]
	case sw.adds&addsMask == addsLast:
		d.wordAdd1[0] = sw.hist.last
		d.wordLists.adds = d.wordAdd1[:1]
	default:
		d.wordLists.adds = t.ext[i].addx
	}
	if sw.hasHist {
		c.hist = &sw.hist
	}
	d.wordCur = sw
	return c
}

// putWord takes back into word i of t what the signal code left in c
// (wordCell) on a visit of kind v.
func (d *Detector) putWord(t *sigTable, i int, c *cell, v sigVisit) {
	sw := t.at(i)
	if checkShortcuts {
		d.checkPutWord(t, i, sw, c, v)
	}
	sw.sc, sw.sigGen = c.sigCore, c.sigGen
	if v == sigRead {
		d.wordCur = nil
		return
	}
	sw.written, sw.hasW, sw.hasHist = c.written, c.hasW, c.hist != nil
	if v == sigStore && c.w != *t.wordW(i, sw) {
		t.extOf(i).w = c.w
		sw.adds |= wordOwnW
	}
	own := sw.adds & wordOwnW
	switch l := d.wordLists.adds; {
	case len(l) == 0:
		sw.adds = own // addsNone
	case len(l) == 1 && sw.hasHist && sw.hist.hasLast && l[0] == sw.hist.last:
		sw.adds = own | addsLast
	default:
		x := t.extOf(i)
		if &l[0] == &d.wordAdd1[0] {
			l = append(x.addx[:0], l...) // off the scratch array
		}
		x.addx, sw.adds = l, own|addsOwn
	}
	d.wordCur = nil
}

// sigVisit is what a visit of a table word may change (putWord).
type sigVisit uint8

const (
	sigRead  sigVisit = iota // its release alone (a wait, a stale check)
	sigWrite                 // its other writes and history too (a notify's add)
	sigStore                 // its last plain write too (a plain store)
)

// checkPutWord panics unless the visit of kind v left in c no state that
// putWord would not take back into sw.
func (d *Detector) checkPutWord(t *sigTable, i int, sw *sigWord, c *cell, v sigVisit) {
	shortcuts++
	bad := c.lists != &d.wordLists || c.hist != nil && c.hist != &sw.hist || len(c.reads) > 0 || c.hasR ||
		len(d.wordLists.unin) > 0 || c.firstW || c.read0 != (rec{}) || v != sigStore && c.w != *t.wordW(i, sw)
	if v == sigRead {
		bad = bad || c.written != sw.written || c.hasW != sw.hasW || (c.hist != nil) != sw.hasHist || len(d.wordLists.adds) > 0
	}
	if bad {
		panic(fmt.Sprintf("hazard: signal word [%d, %d) holds state its table word does not after a visit of kind %d", c.lo, c.hi, v))
	}
}

// sigID names the word whose cell c is in the agents' memos: its
// table word's release while c stands for one (wordCell), else its own.
func (d *Detector) sigID(c *cell) *sigCore {
	if c == &d.wordScratch {
		return &d.wordCur.sc
	}
	return &c.sigCore
}

// liveSig is the release id names now: the cell standing for its table
// word while the signal code has it (wordCell), else id itself.
func (d *Detector) liveSig(id *sigCore) *sigCore {
	if w := d.wordCur; w != nil && id == &w.sc {
		return &d.wordScratch.sigCore
	}
	return id
}

// eachSigCell calls f on each cell of bytes [lo, hi) of sm, spanned as a
// signal access spans them: a table's word as a cell (wordCell), else the
// page lists' cells (which turns a table the bytes meet into lists
// first). v says what f may change (putWord); room gives each list the
// cells a span may make (roomFor).
func (d *Detector) eachSigCell(sm *shadowMem, lo, hi int64, v sigVisit, room bool, f func(*cell)) {
	if t, i := sm.tableWord(lo, hi); t != nil {
		c := d.wordCell(t, i, v)
		f(c)
		d.putWord(t, i, c, v)
		return
	}
	for lo < hi {
		m, end := sm.page(lo, hi)
		if room {
			d.sigSlab.roomFor(m)
		}
		i, j := m.span(lo, end)
		lo = end
		for k := i; k < j; k++ {
			c := m.cells[k]
			if c.sigBox == nil {
				d.newSigBox(c)
			}
			f(c)
		}
	}
}

// unTable turns region k's table into the page lists its words would have
// had as cells: the host write's, each touched word's cell split off and
// given its record. The agents' memos move to the cells' releases.
func (s *shadowMem) unTable(k int) {
	rg := &s.regions[k]
	t := rg.tab
	rg.tab, t.gone = nil, true
	s.tabs--
	for lo := t.lo; lo < t.hi; {
		p := lo >> s.shift
		m := rg.newPage(p, s.shift)
		m.slab = s.slab
		rg.pages[p-rg.p0] = m
		end := min(t.hi, (p+1)<<s.shift)
		m.hostWrite(lo, end, &t.host, t.poison)
		lo = end
	}
	moved := map[*sigCore]movedSig{}
	for ci, ch := range t.chunks {
		if ch == nil {
			continue
		}
		for j, sw := range ch {
			if sw != nil {
				t.d.cellOf(s, rg, t, ci*wordChunk+j, sw, moved)
			}
		}
	}
	t.chunks, t.ext = nil, nil
	t.d.moveSigs(moved)
}

// cellOf splits word i of t, sw, off region rg's host write cell and gives
// the cell the word's state (unTable), noting its release's move in moved.
// The cell keeps its own version (cell.copyTo): the memos' move says which
// of its versions stands for the word's.
func (d *Detector) cellOf(s *shadowMem, rg *region, t *sigTable, i int, sw *sigWord, moved map[*sigCore]movedSig) {
	lo := t.lo + int64(i)*t.word
	m := rg.pages[lo>>s.shift-rg.p0]
	a, _ := m.span(lo, lo+t.word)
	c := m.cells[a]
	if c.sigBox == nil {
		d.newSigBox(c)
	}
	ver := c.sigVer
	c.written, c.hasW, c.w, c.sigGen, c.sigCore = sw.written, sw.hasW, *t.wordW(i, sw), sw.sigGen, sw.sc
	c.sigVer = ver
	switch sw.adds & addsMask {
	case addsLast:
		c.setAdds(append(c.adds()[:0], sw.hist.last))
	case addsOwn:
		c.setAdds(append(c.adds()[:0], t.ext[i].addx...))
	}
	if sw.hasHist {
		h := d.sigSlab.hist()
		*h = sw.hist
		c.hist = h
	}
	moved[&sw.sc] = movedSig{&c.sigCore, sw.sc.sigVer, ver}
}

// movedSig is a table word's release moved to cell release id, whose
// version to stands for the word's version from (unTable): the cell
// keeps a version of its own (cell.copyTo).
type movedSig struct {
	id       *sigCore
	from, to uint32
}

// moveSigs renames the words the agents' memos hold (sigSeen, relSeen) by
// moved. A memo of a word's earlier version matched nothing and is
// dropped.
func (d *Detector) moveSigs(moved map[*sigCore]movedSig) {
	for a := range d.agents {
		for k := range d.agents[a].sigs {
			s := &d.agents[a].sigs[k]
			if n, ok := moved[s.id]; ok {
				if s.ver == n.from {
					s.id, s.ver = n.id, n.to
				} else {
					*s = sigSeen{}
				}
			}
		}
	}
	for a := range d.relSeen {
		if n, ok := moved[d.relSeen[a].id]; ok {
			d.relSeen[a].id = n.id
		}
	}
	// A word several agents add to keeps its releases (sigprefix.go).
	for id, n := range moved {
		if m := d.multi[id]; m != nil {
			delete(d.multi, id)
			if m.ver == n.from {
				m.ver = n.to
				d.multi[n.id] = m
			}
		}
	}
}
