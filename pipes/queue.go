package pipes

import "unsafe"

// Ring is a bounded in-order queue with a fixed capacity, used for the per-pipe
// instruction queues. Slots are reused in place (PushSlot hands out the next
// free slot to fill), so a steady-state simulation allocates nothing here.
type Ring[T any] struct {
	buf []T
	// hd is the head's slot, nil when the ring is empty: Head is one load
	// (a pipe's wake-up asks for its head several times, and indexing a
	// slot cost a bounds check and a multiply each time; issue 22, round
	// 14). head and n are int32 (capacities are far smaller) so that the
	// ring stays 40 bytes.
	hd   *T
	head int32
	n    int32
}

// NewRing returns an empty ring holding at most capacity entries (at least
// 1, at most 1<<30).
func NewRing[T any](capacity int) *Ring[T] {
	capacity = min(max(capacity, 1), 1<<30)
	return &Ring[T]{buf: make([]T, capacity)}
}

// Len is the number of queued entries.
func (r *Ring[T]) Len() int { return int(r.n) }

// Cap is the capacity.
func (r *Ring[T]) Cap() int { return len(r.buf) }

// Full reports whether a push would fail.
func (r *Ring[T]) Full() bool { return int(r.n) == len(r.buf) }

// Empty reports whether nothing is queued.
func (r *Ring[T]) Empty() bool { return r.n == 0 }

// PushSlot appends an entry and returns a pointer to its slot, which still holds
// whatever the slot held last time (the caller overwrites the fields it uses and
// keeps reusable slices). It returns nil when the ring is full.
func (r *Ring[T]) PushSlot() *T {
	if int(r.n) == len(r.buf) {
		return nil
	}
	i := int(r.head) + int(r.n)
	if i >= len(r.buf) {
		i -= len(r.buf)
	}
	r.n++
	p := &r.buf[i]
	if r.n == 1 {
		r.hd = p
	}
	return p
}

// Head returns the oldest entry, or nil.
func (r *Ring[T]) Head() *T { return r.hd }

// At returns the i-th entry from the head (0 is the head), or nil.
func (r *Ring[T]) At(i int) *T {
	if i < 0 || i >= int(r.n) {
		return nil
	}
	j := int(r.head) + i
	if j >= len(r.buf) {
		j -= len(r.buf)
	}
	return &r.buf[j]
}

// Pop drops the head. Popping an empty ring does nothing.
//
// A ring that Pop empties starts again from the slot it just dropped, not
// the next one: the next push then writes a slot its consumer has just read,
// still in cache, where stepping round the ring walks every slot in turn
// and each is cold by the time it comes back (a pipe queue of 8 or 16 slots
// on each of hundreds of cores; issue 22, round 17). Which slot holds an
// entry is invisible to the queue's users: order, length and capacity are
// the same.
func (r *Ring[T]) Pop() {
	if r.n == 0 {
		return
	}
	r.n--
	if r.n == 0 {
		r.hd = nil
		return
	}
	r.head++
	if int(r.head) == len(r.buf) {
		r.head = 0
	}
	r.hd = &r.buf[r.head]
	if r.n > 1 {
		// Prefetch the entry after the new head: its line is then on its
		// way while the consumer works on the new head, instead of a miss
		// it waits for when it gets there.
		j := int(r.head) + 1
		if j == len(r.buf) {
			j = 0
		}
		prefetch(unsafe.Pointer(&r.buf[j]))
	}
}

// Unpush drops the newest entry, the one the last PushSlot handed out.
// Unpushing an empty ring does nothing.
func (r *Ring[T]) Unpush() {
	if r.n == 0 {
		return
	}
	r.n--
	if r.n == 0 {
		r.hd = nil
	}
}

// Reset empties the ring, keeping its slots for reuse.
func (r *Ring[T]) Reset() { r.head, r.n, r.hd = 0, 0, nil }
