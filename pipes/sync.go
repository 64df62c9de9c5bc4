package pipes

import "github.com/ptoasm/ptoasm/asm"

// CrossMax is the largest value a 4-bit FFTS counter holds.
const CrossMax = 15

// CrossCounters are one core's FFTS counters: a set adds one, a wait blocks
// while the counter is zero and then subtracts one. They count past CrossMax
// instead of failing, as the event flags count sets (FlagBits): whether a
// counter can overflow is a question of ordering (the hazard detector's
// double-set on FFTS counters), not of how far this run's producer got ahead.
type CrossCounters struct {
	c [asm.NumFFTSIDs]uint32
}

// Inc adds one to id's counter.
func (x *CrossCounters) Inc(id int) { x.c[id&(asm.NumFFTSIDs-1)]++ }

// Value is id's counter.
func (x *CrossCounters) Value(id int) int { return int(x.c[id&(asm.NumFFTSIDs-1)]) }

// TryDec subtracts one when the counter is positive and reports whether it did.
func (x *CrossCounters) TryDec(id int) bool {
	if x.c[id&(asm.NumFFTSIDs-1)] == 0 {
		return false
	}
	x.c[id&(asm.NumFFTSIDs-1)]--
	return true
}

// Reset zeroes every counter.
func (x *CrossCounters) Reset() { x.c = [asm.NumFFTSIDs]uint32{} }

// Arrivals counts participants of a reduction (an FFTS mode-0/1/2 reduce or a
// syncall): Arrive returns true for the arrival that completes a round and
// starts the next one.
type Arrivals struct {
	Want int
	n    int
}

// Arrive records one arrival.
func (a *Arrivals) Arrive() bool {
	a.n++
	if a.n >= a.Want {
		a.n = 0
		return true
	}
	return false
}

// Pending is the number of arrivals in the current round.
func (a *Arrivals) Pending() int { return a.n }
