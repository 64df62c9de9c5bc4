package machine

import (
	"math/bits"
	"sort"

	"github.com/ptoasm/ptoasm/asm"
)

// scheduler orders the machine's events: it owns the simulated clock and
// every agent's pending wake-up, and hands them out by (cycle, agent, seq),
// the order that makes a run deterministic. An agent is a pipe, a core's
// scalar or a callback (an SDMA transfer, a wave slot's next block); each
// owns one waker, so rescheduling moves it in place and no queue holds
// stale entries. Four places hold wake-ups (see schedule): front, the
// waker of the event being processed when it rearms itself; nowq, the
// current cycle; the wheel, the next wheelSize cycles; the heap, the far
// future. The scheduler knows nothing of what agents do: Machine.events and
// Machine.Step take the next waker and run it.
type scheduler struct {
	now   int64
	wheel *wheel   // the near future (allocated on first use)
	heap  wakeHeap // wake-ups beyond the wheel
	seq   uint64
	// cur is the waker whose event is being processed; front parks it when it
	// rescheduled itself (see schedule).
	cur, front *waker
	nowq       []*waker // wake-ups at now, by descending (agent, seq)
	// inline is a scalar resumed by its own pipe's wake-up that runs right
	// after it, without a trip through nowq (see core.resume); batch says
	// events, not Step, is processing the wake-ups.
	inline *core
	batch  bool
	// ahead is how a scalar its own pipe resumes ahead of the clock (its
	// time past now) runs: aheadModel, the model's rule (inline only in an
	// otherwise empty cycle), or one that asks nothing outside its core,
	// which TestResumeAheadIsLocal sets to show that the choice changes no
	// output (issue 22, round 18).
	ahead int8
	// l2Fresh makes gmPortsMemo recompute the L2 rectangle from every
	// instance, as gmPorts does: a knob only TestL2RectMemoIsExact sets
	// (in the padding before aheads).
	l2Fresh bool
	// aheads counts those resumes under aheadInline (for the test).
	aheads int64
	// str is the core whose own agents run in a stretch (Machine.stretch):
	// while it is set, schedule keeps every wake-up in pend, and the
	// stretch places them when it ends (issue 22, round 22).
	str  *core
	pend []*waker
}

// The rules for a scalar resumed ahead of the clock (scheduler.ahead).
const (
	aheadModel  int8 = iota
	aheadQueue       // always at its own time, through the schedule
	aheadInline      // always right after the pipe, when it comes next
)

// waker is one agent's pending wake-up. Each agent owns one waker, so no
// queue ever holds stale entries: rescheduling moves the waker in place.
type waker struct {
	at  int64
	ord uint64 // (agent key+1)<<seqBits | seq: the same-cycle order
	// hidx is the waker's heap index while loc == locHeap.
	hidx  int32
	loc   uint8 // locNone, locHeap, locWheel or locNow
	armed bool
	// held says the agent's next wake-up must run in the global order: it
	// met what reaches outside its core in a stretch (strPark). Kept in
	// the waker's padding, where strStart reads it with the waker's line
	// (round 25); core.strHold, a bit mask in a line of the core's own,
	// cost a cache miss per global event.
	held bool
	// The agent: a pipe or a core's scalar, called directly (no closure),
	// or else fn (an SDMA transfer).
	pipe   *pipeState
	scalar *core
	fn     func()
	// next and prev link the waker into its wheel slot while loc ==
	// locWheel. Round 18 made the list singly linked (an add is two stores,
	// a del walks its slot); stretches (round 22) take every wake-up of a
	// core they run out of the wheel, and at 384 ranks a slot holds
	// thousands of polling scalars, so the walk took 40% of a run: del is
	// O(1) again. prev is valid only while the waker is in a slot's list
	// (a slot taken whole leaves it stale; add sets it).
	next, prev *waker
}

// seqBits is the width of the schedule sequence number inside waker.ord; the
// agent key takes the bits above it (keys stay below 2^24: 4096 ranks × 72
// cores × 10 pipes).
const (
	seqBits = 40
	seqMask = 1<<seqBits - 1
)

type wakeItem struct {
	at  int64
	ord uint64
	w   *waker
}

func (a *wakeItem) before(b *wakeItem) bool {
	return a.at < b.at || (a.at == b.at && a.ord < b.ord)
}

// heapArity is the heap's fan-out: a 4-ary heap is half as deep as a binary
// one, and the four children share a cache line or two.
const heapArity = 4

// wakeHeap is a 4-ary min-heap of wake-ups ordered by (cycle, agent, seq).
// Items keep their keys inline so comparisons touch no other memory; each
// move updates the waker's index so a reschedule can sift it in place.
type wakeHeap []wakeItem

func (h wakeHeap) up(i int) {
	it := h[i]
	for i > 0 {
		p := (i - 1) / heapArity
		if !it.before(&h[p]) {
			break
		}
		h[i] = h[p]
		h[i].w.hidx = int32(i)
		i = p
	}
	h[i] = it
	it.w.hidx = int32(i)
}

func (h wakeHeap) down(i int) {
	n := len(h)
	it := h[i]
	for {
		l := heapArity*i + 1
		if l >= n {
			break
		}
		j := l
		for c, end := l+1, min(l+heapArity, n); c < end; c++ {
			if h[c].before(&h[j]) {
				j = c
			}
		}
		if !h[j].before(&it) {
			break
		}
		h[i] = h[j]
		h[i].w.hidx = int32(i)
		i = j
	}
	h[i] = it
	it.w.hidx = int32(i)
}

func (h *wakeHeap) push(it wakeItem) {
	*h = append(*h, it)
	h.up(len(*h) - 1)
}

// remove takes the item at i out of the heap.
func (h *wakeHeap) remove(i int) *waker {
	s := *h
	w := s[i].w
	n := len(s) - 1
	if i != n {
		s[i] = s[n]
		s[i].w.hidx = int32(i)
	}
	s[n] = wakeItem{}
	s = s[:n]
	*h = s
	if i < n {
		s.down(i)
		s.up(i)
	}
	w.hidx = -1
	return w
}

// Where a waker is queued.
const (
	locNone uint8 = iota
	locHeap
	locNow
	locWheel
	locPend // in scheduler.pend, during a stretch
)

// The timing wheel holds the near future: one slot per cycle for the
// wheelSize cycles after now. Almost every wake-up (an op's end, a queued
// entry's ready time) lands there, so scheduling and taking the next one are
// O(1) list operations plus a scan of two bitmap levels; only wake-ups further
// out go to the heap.
const (
	wheelBits  = 12
	wheelSize  = 1 << wheelBits
	wheelMask  = wheelSize - 1
	wheelWords = wheelSize / 64 // ≤ 64: one summary word covers them
)

// wheel is the near-future part of the schedule. A slot holds the wakers of
// exactly one cycle in (now, now+wheelSize), unordered; taking a cycle sorts
// them by (agent, seq).
type wheel struct {
	slots [wheelSize]*waker
	bits  [wheelWords]uint64 // bit i%64 of word i/64: slot i is non-empty
	sum   uint64             // bit j: bits[j] != 0; 0 when the wheel is empty
}

func (wh *wheel) add(w *waker) {
	i := int(w.at) & wheelMask
	h := wh.slots[i]
	w.next, w.prev = h, nil
	if h != nil {
		h.prev = w
	}
	wh.slots[i] = w
	wh.bits[i>>6] |= 1 << (i & 63)
	wh.sum |= 1 << (i >> 6)
}

func (wh *wheel) del(w *waker) {
	i := int(w.at) & wheelMask
	if w.prev != nil {
		w.prev.next = w.next
	} else {
		wh.slots[i] = w.next
	}
	if w.next != nil {
		w.next.prev = w.prev
	}
	w.next, w.prev = nil, nil
	if wh.slots[i] == nil {
		wh.clearBit(i)
	}
}

func (wh *wheel) clearBit(i int) {
	wh.bits[i>>6] &^= 1 << (i & 63)
	if wh.bits[i>>6] == 0 {
		wh.sum &^= 1 << (i >> 6)
	}
}

// first returns the first non-empty slot at or after slot from, wrapping
// around; -1 when the wheel is empty.
func (wh *wheel) first(from int) int {
	wi := from >> 6
	if b := wh.bits[wi] >> (from & 63); b != 0 {
		return from + bits.TrailingZeros64(b)
	}
	if s := wh.sum >> (wi + 1); s != 0 {
		j := wi + 1 + bits.TrailingZeros64(s)
		return j<<6 + bits.TrailingZeros64(wh.bits[j])
	}
	if wh.sum != 0 {
		j := bits.TrailingZeros64(wh.sum)
		return j<<6 + bits.TrailingZeros64(wh.bits[j])
	}
	return -1
}

// wheelNext is the earliest cycle in the wheel.
func (s *scheduler) wheelNext() (int64, bool) {
	wh := s.wheel
	if wh == nil || wh.sum == 0 {
		return 0, false
	}
	i := wh.first(int(s.now+1) & wheelMask)
	if i < 0 {
		return 0, false
	}
	return s.now + 1 + int64((i-int(s.now+1))&wheelMask), true
}

// schedule (re)arms w to run at cycle at (never before now). Four places
// hold wake-ups, and next takes the earliest of them by (cycle, agent, seq):
//   - front parks the waker of the event being processed when it rearms
//     itself (a pipe that finished an op and starts the next, a scalar that
//     ran ahead): when it is still the earliest afterwards, the next Step
//     takes it without any queue operation;
//   - nowq holds wake-ups for the current cycle, sorted;
//   - the wheel holds the next wheelSize cycles;
//   - the heap holds the far future.
func (s *scheduler) schedule(w *waker, at int64, key int) {
	if at < s.now {
		at = s.now
	}
	s.seq++ // checkSeq keeps it within seqBits
	if s.str != nil {
		s.pendAdd(w, at, key)
		return
	}
	if w == s.cur && w.loc == locNone {
		w.at, w.ord, w.armed = at, uint64(key+1)<<seqBits|s.seq, true
		// In a crowded cycle (lockstep cores) the waker, usually a pipe's
		// next op end, follows what is still due now: next would move it
		// from front to the wheel at once, so it goes there now (issue 22,
		// round 18). Step (the debugger) keeps it in front, where
		// LastStarted looks.
		if len(s.nowq) != 0 && s.batch {
			if d := at - s.now; d > 0 && d < wheelSize && s.wheel != nil {
				// front holds nothing but the current waker: a second
				// reschedule in the same event takes it out of there.
				s.front = nil
				w.loc = locWheel
				s.wheel.add(w)
				return
			}
		}
		s.front = w
		return
	}
	if w.loc != locNone {
		s.unqueue(w)
	}
	w.at, w.ord, w.armed = at, uint64(key+1)<<seqBits|s.seq, true
	s.place(w)
}

// unqueue takes w out of whatever queue holds it (not front).
func (s *scheduler) unqueue(w *waker) {
	switch w.loc {
	case locHeap:
		s.heap.remove(int(w.hidx))
	case locWheel:
		s.wheel.del(w)
	case locNow:
		s.removeNow(w)
	case locPend:
		s.pendDel(w)
	}
	w.loc = locNone
}

// pendAdd is schedule during a stretch: w keeps its wake-up out of the
// queues, whose clock is the stretch's start (loc locPend), and the
// stretch's core notes its time by agent (core.strAt); a wake-up already
// queued leaves its queue. A waker of no agent of the core (none does in
// a stretch) waits in pend for the stretch's end.
func (s *scheduler) pendAdd(w *waker, at int64, key int) {
	c := s.str
	i := key - c.order*int(asm.NumPipes)
	if w.loc == locNone && uint(i) < uint(asm.NumPipes) {
		// The common case: an agent of the core with no wake-up.
		w.loc = locPend
		w.at, w.ord, w.armed = at, uint64(key+1)<<seqBits|s.seq, true
		c.strAt[i&7] = at
		return
	}
	if w.loc != locPend {
		if w.loc != locNone {
			s.unqueue(w)
		}
		w.loc = locPend
		if uint(i) >= uint(asm.NumPipes) {
			s.pend = append(s.pend, w)
		}
	}
	w.at, w.ord, w.armed = at, uint64(key+1)<<seqBits|s.seq, true
	if uint(i) < uint(asm.NumPipes) {
		c.strAt[i&7] = at
	}
}

// pendDel takes w out of a stretch's keeping: out of pend, where only a
// waker of no agent of the core is listed (the stretch keeps core.strAt).
func (s *scheduler) pendDel(w *waker) {
	for i, x := range s.pend {
		if x == w {
			s.pend = append(s.pend[:i], s.pend[i+1:]...)
			break
		}
	}
	w.loc = locNone
}

// placePend ends a stretch: the clock is back at its start, and every
// wake-up the stretch left goes where schedule would have put it.
func (s *scheduler) placePend() {
	c := s.str
	s.str = nil
	for i := asm.PipeS; i < asm.PipeALL; i++ {
		if c.strAt[i] != noWake {
			if w := c.agentWaker(i); w.loc == locPend {
				w.loc = locNone
				s.place(w)
			}
		}
	}
	for i, w := range s.pend {
		s.pend[i] = nil
		w.loc = locNone
		s.place(w)
	}
	s.pend = s.pend[:0]
}

// place queues an armed waker that is in no queue.
func (s *scheduler) place(w *waker) {
	if d := w.at - s.now; d != 0 {
		if d < wheelSize {
			if s.wheel == nil {
				s.wheel = new(wheel)
			}
			w.loc = locWheel
			s.wheel.add(w)
			return
		}
		w.loc = locHeap
		s.heap.push(wakeItem{at: w.at, ord: w.ord, w: w})
		return
	}
	s.insertNow(w)
}

// insertNow adds a waker for the current cycle to nowq, which is sorted by
// descending ord so the earliest is last. A wake-up during the cycle usually
// belongs after everything still queued (agents run in key order, and a
// resumed scalar or kicked pipe follows the agent that woke it), so the scan
// from the end is short.
func (s *scheduler) insertNow(w *waker) {
	w.loc = locNow
	q := append(s.nowq, nil)
	i := len(q) - 1
	for i > 0 && q[i-1].ord < w.ord {
		q[i] = q[i-1]
		i--
	}
	q[i] = w
	s.nowq = q
}

func (s *scheduler) removeNow(w *waker) {
	q := s.nowq
	for i := len(q) - 1; i >= 0; i-- {
		if q[i] == w {
			copy(q[i:], q[i+1:])
			q[len(q)-1] = nil
			s.nowq = q[:len(q)-1]
			break
		}
	}
	w.loc = locNone
}

// cancel disarms w.
func (s *scheduler) cancel(w *waker) {
	s.unqueue(w)
	if s.front == w {
		s.front = nil
	}
	w.armed = false
}

// earliest reports whether w comes before everything queued.
func (s *scheduler) earliest(w *waker) bool {
	if n := len(s.nowq); n > 0 && (w.at > s.now || s.nowq[n-1].ord < w.ord) {
		return false // nowq items are at now <= w.at
	}
	if w.at > s.now {
		// Anything else at w's cycle sends w through advance too, which moves
		// the whole cycle to nowq: the wheel never holds the current cycle.
		if at, ok := s.wheelNext(); ok && at <= w.at {
			return false
		}
		if len(s.heap) > 0 && s.heap[0].at <= w.at {
			return false
		}
	}
	return true
}

// nextAt is the cycle of the earliest queued wake-up.
func (s *scheduler) nextAt() (int64, bool) {
	at, ok := int64(0), false
	if f := s.front; f != nil {
		at, ok = f.at, true
	}
	if len(s.nowq) > 0 && (!ok || s.now < at) {
		at, ok = s.now, true
	}
	if t, wok := s.wheelNext(); wok && (!ok || t < at) {
		at, ok = t, true
	}
	if len(s.heap) > 0 && (!ok || s.heap[0].at < at) {
		at, ok = s.heap[0].at, true
	}
	return at, ok
}

// next takes the earliest wake-up, or nil. When the current cycle has nothing
// left it moves every wake-up of the next cycle into nowq at once.
func (s *scheduler) next() *waker {
	if f := s.front; f != nil {
		s.front = nil
		if len(s.nowq) != 0 && f.at > s.now {
			// The parked waker follows what is still due now (schedule
			// sends it to the wheel itself in the common case).
			s.place(f)
			return s.takeNow()
		}
		if len(s.nowq) == 0 && f.at > s.now {
			// The common case, a pipe's next op end: it is next unless
			// something else is due by then (anything else at its cycle
			// sends it through advance too, which sorts the whole cycle).
			at, ok := s.wheelNext()
			if (!ok || at > f.at) && (len(s.heap) == 0 || s.heap[0].at > f.at) {
				return f
			}
			s.place(f)
			// f went to the wheel or the heap, after at: the wheel's next
			// cycle is still at.
			return s.advanceFrom(at, ok)
		}
		// Due now (f.at == now).
		if s.earliest(f) {
			return f
		}
		s.place(f)
	}
	if len(s.nowq) == 0 {
		return s.advance()
	}
	return s.takeNow()
}

// takeNow takes the earliest wake-up of the current cycle from nowq, which
// is not empty. The slot it leaves keeps its pointer until it is reused:
// every waker lives as long as its agent, so it holds nothing alive.
func (s *scheduler) takeNow() *waker {
	n := len(s.nowq) - 1
	w := s.nowq[n]
	s.nowq = s.nowq[:n]
	w.loc = locNone
	return w
}

// advance makes the next busy cycle current: it takes that cycle's earliest
// wake-up and leaves the others in the empty nowq; nil when nothing is
// scheduled. The caller sets now from the waker (Step, after its cycle
// limit check).
func (s *scheduler) advance() *waker {
	at, ok := s.wheelNext()
	return s.advanceFrom(at, ok)
}

// advanceFrom is advance given the wheel's next cycle (wheelNext).
func (s *scheduler) advanceFrom(at int64, ok bool) *waker {
	if len(s.heap) > 0 && (!ok || s.heap[0].at < at) {
		at, ok = s.heap[0].at, true
	}
	if !ok {
		return nil
	}
	q := s.nowq[:0]
	if s.wheel != nil && at-s.now < wheelSize {
		i := int(at) & wheelMask
		wh := s.wheel
		// Most cycles wake a single agent: take it without going through nowq.
		if w := wh.slots[i]; w != nil && w.next == nil && (len(s.heap) == 0 || s.heap[0].at != at) {
			wh.slots[i] = nil
			wh.clearBit(i)
			w.loc = locNone
			return w
		}
		// next is stale from here on; add sets it again.
		// Each pipe about to run reads its head entry first, and on many
		// cores that line is out of cache: load them all now, so that the
		// misses overlap instead of coming one per event (issue 22, round
		// 12), in the same pass (round 14).
		var sink int64
		for w := wh.slots[i]; w != nil; w = w.next {
			w.loc = locNow
			q = append(q, w)
			if p := w.pipe; p != nil {
				sink ^= p.warm()
			}
		}
		warmSink = sink
		if len(q) != 0 {
			wh.slots[i] = nil
			wh.clearBit(i)
		}
	}
	for len(s.heap) > 0 && s.heap[0].at == at {
		w := s.heap.remove(0)
		w.loc = locNow
		q = append(q, w)
		if p := w.pipe; p != nil {
			warmSink ^= p.warm()
		}
	}
	// Descending ord: the earliest is taken from the end.
	sortWakers(q)
	n := len(q)
	w := q[n-1]
	q[n-1] = nil
	s.nowq = q[:n-1]
	w.loc = locNone
	return w
}

// sortWakers sorts q by descending ord. Every ord is distinct (its low bits
// are the schedule's sequence number), so any sort gives the one order. A
// cycle usually wakes a few agents (insertion sort), but the cores of 8
// ranks in lockstep make a tenth of the busy cycles wake 25 to hundreds:
// those are checked for order, then quicksorted here with the comparison
// inline, where slices.SortFunc called a closure per comparison (3 % of the
// 8-rank allgather_gemm's instructions; issue 22, round 13).
func sortWakers(q []*waker) {
	if len(q) > 12 {
		// Lockstep cores reschedule in the order they ran, and the wheel's
		// slot lists are LIFO, so a large cycle often comes out sorted.
		i := 1
		for i < len(q) && q[i-1].ord > q[i].ord {
			i++
		}
		if i == len(q) {
			return
		}
	}
	for len(q) > 12 {
		// Median of three: the largest to the front and the median to the
		// end, where it is the pivot; the two bound the scans below.
		m, l := len(q)/2, len(q)-1
		if q[m].ord > q[0].ord {
			q[m], q[0] = q[0], q[m]
		}
		if q[l].ord > q[0].ord {
			q[l], q[0] = q[0], q[l]
		}
		if q[m].ord > q[l].ord {
			q[m], q[l] = q[l], q[m]
		}
		// Partition: ords above the pivot before it, below after it.
		pivot := q[l].ord
		i, j := 0, l
		for {
			for i++; q[i].ord > pivot; i++ {
			}
			for j--; q[j].ord < pivot; j-- {
			}
			if i >= j {
				break
			}
			q[i], q[j] = q[j], q[i]
		}
		q[i], q[l] = q[l], q[i]
		// Recurse into the smaller side, loop on the larger.
		if i < len(q)-1-i {
			sortWakers(q[:i])
			q = q[i+1:]
		} else {
			sortWakers(q[i+1:])
			q = q[:i]
		}
	}
	for i := 1; i < len(q); i++ {
		w := q[i]
		j := i
		for j > 0 && q[j-1].ord < w.ord {
			q[j] = q[j-1]
			j--
		}
		q[j] = w
	}
}

// comesNext reports whether the agent with key, scheduled now at the
// current cycle, would be the next event: nothing queued for this cycle
// comes before it in (agent, seq) order.
func (s *scheduler) comesNext(key int) bool {
	ord := uint64(key+1)<<seqBits | (s.seq + 1)
	if n := len(s.nowq); n > 0 && s.nowq[n-1].ord < ord {
		return false
	}
	if f := s.front; f != nil && f.at == s.now && f.ord < ord {
		return false
	}
	return true
}

// runNow makes w, whose agent comesNext, the event being processed at the
// current cycle, as if schedule had queued it and next taken it: it
// consumes the sequence number schedule would have, and queues the parked
// front where next would have put it (w's agent may park itself). The
// caller runs the agent (events clears cur when it returns).
func (s *scheduler) runNow(w *waker, key int) {
	s.seq++
	if f := s.front; f != nil {
		s.front = nil
		s.place(f)
	}
	w.at, w.ord = s.now, uint64(key+1)<<seqBits|s.seq
	s.cur = w
}

// checkSeq renumbers when the sequence numbers have used half their bits.
// The engine calls it between events (events every wallEvery events, Step
// before each), not schedule on every call (issue 22, round 18): the
// schedules between two checks, a few per scalar step at most, are far
// fewer than the 2^39 left.
func (s *scheduler) checkSeq() {
	if s.seq > seqMask/2 {
		s.renumber()
	}
}

// renumber compacts the sequence numbers, keeping the order of every queued
// wake-up.
func (s *scheduler) renumber() {
	var all []*waker
	if s.front != nil {
		all = append(all, s.front)
		s.front = nil
	}
	all = append(all, s.nowq...)
	s.nowq = s.nowq[:0]
	for _, it := range s.heap {
		all = append(all, it.w)
	}
	s.heap = s.heap[:0]
	if s.wheel != nil {
		for i := range s.wheel.slots {
			for w := s.wheel.slots[i]; w != nil; w = w.next {
				all = append(all, w)
			}
		}
		s.wheel = nil
	}
	sort.Slice(all, func(i, j int) bool {
		a, b := all[i], all[j]
		return a.at < b.at || (a.at == b.at && a.ord < b.ord)
	})
	for i, w := range all {
		w.ord = w.ord&^seqMask | uint64(i)
		w.loc = locNone
		w.next = nil
		s.place(w)
	}
	s.seq = uint64(len(all))
}
