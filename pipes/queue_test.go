package pipes

import (
	"testing"

	"github.com/ptoasm/ptoasm/asm"
)

func TestRing(t *testing.T) {
	r := NewRing[int](3)
	for i := 0; i < 3; i++ {
		*r.PushSlot() = i
	}
	if !r.Full() || r.PushSlot() != nil {
		t.Fatal("a full ring accepted a push")
	}
	r.Pop()
	*r.PushSlot() = 3 // wraps
	for want := 1; want <= 3; want++ {
		if got := *r.Head(); got != want {
			t.Fatalf("head %d, want %d", got, want)
		}
		r.Pop()
	}
	if !r.Empty() || r.Head() != nil {
		t.Fatal("ring not empty")
	}
}

// TestRingHead checks the cached head slot (Ring.hd) against the slot
// arithmetic it replaces, over pushes, pops and resets that wrap the ring
// many times, for each capacity a pipe queue might have.
func TestRingHead(t *testing.T) {
	for _, capacity := range []int{1, 2, 3, 8, 16} {
		r := NewRing[int](capacity)
		var model []int // the queued values, oldest first
		next := 0
		for step := 0; step < 2000; step++ {
			switch op := (step*7 + step/5) % 11; {
			case op < 6: // push
				if p := r.PushSlot(); p != nil {
					*p = next
					model = append(model, next)
					next++
				} else if len(model) != capacity {
					t.Fatalf("cap %d step %d: push refused at %d of %d", capacity, step, len(model), capacity)
				}
			case op < 10:
				r.Pop()
				if len(model) > 0 {
					model = model[1:]
				}
			default:
				if step%3 == 0 {
					r.Reset()
					model = model[:0]
				}
			}
			if r.Len() != len(model) {
				t.Fatalf("cap %d step %d: Len %d, want %d", capacity, step, r.Len(), len(model))
			}
			h := r.Head()
			if len(model) == 0 {
				if h != nil || !r.Empty() {
					t.Fatalf("cap %d step %d: empty ring has a head", capacity, step)
				}
				continue
			}
			if h == nil || *h != model[0] || h != r.At(0) {
				t.Fatalf("cap %d step %d: head %v, want %d", capacity, step, h, model[0])
			}
			if last := r.At(len(model) - 1); *last != model[len(model)-1] {
				t.Fatalf("cap %d step %d: At(last) %d, want %d", capacity, step, *last, model[len(model)-1])
			}
		}
	}
}

func TestFlagsAndCounters(t *testing.T) {
	var f FlagBits
	if !f.Set(asm.PipeMTE2, asm.PipeV, 7) || f.Set(asm.PipeMTE2, asm.PipeV, 7) {
		t.Fatal("second set of a set flag must report a double set")
	}
	var got []int
	f.Each(func(s, d asm.Pipe, id int) { got = append(got, id) })
	if len(got) != 1 || got[0] != 7 {
		t.Fatalf("Each: %v", got)
	}
	if n := f.Count(asm.PipeMTE2, asm.PipeV, 7); n != 2 {
		t.Fatalf("Count after a double set: %d, want 2 (sets are counted)", n)
	}
	f.Clear(asm.PipeMTE2, asm.PipeV, 7)
	if !f.Test(asm.PipeMTE2, asm.PipeV, 7) {
		t.Fatal("the second set must survive the first wait")
	}
	f.Clear(asm.PipeMTE2, asm.PipeV, 7)
	if f.Any() {
		t.Fatal("flag still set")
	}
	var x CrossCounters
	for range CrossMax + 1 {
		x.Inc(4) // past 15 too: the detector decides overflow by ordering
	}
	if !x.TryDec(4) || x.Value(4) != CrossMax || x.TryDec(5) {
		t.Fatal("counter decrement")
	}
	a := Arrivals{Want: 2}
	if a.Arrive() || !a.Arrive() || a.Pending() != 0 {
		t.Fatal("arrivals")
	}
}

// TestRingRefillsDroppedSlot: a ring that Pop empties takes its next push in
// the slot just dropped (still in cache), and otherwise keeps stepping round.
func TestRingRefillsDroppedSlot(t *testing.T) {
	r := NewRing[int](4)
	a, b := r.PushSlot(), r.PushSlot()
	r.Pop()
	c := r.PushSlot()
	if r.Head() != b || c == a || c == b {
		t.Fatalf("a ring that is not empty must step round: head %p, slots %p %p %p", r.Head(), a, b, c)
	}
	r.Pop()
	r.Pop()
	if d := r.PushSlot(); d != c || r.Head() != c {
		t.Fatalf("the push into the emptied ring went to slot %p, want the one just dropped, %p", d, c)
	}
}
