package pipes

import "github.com/ptoasm/ptoasm/asm"

// FlagBits is one core's intra-core event flags: one bit per (src, dst, id),
// and a count of the sets that arrived while the bit was already set.
//
// On hardware the flag is one bit and a second set before its wait is
// illegal (machine-facts §2.1). The model still counts such sets, as pto-isa's
// perf-sim EventChannel does (a counter per channel), so the k-th wait_flag of
// a channel always consumes its k-th set_flag: the pairing is program order,
// whatever the timing, and every finding after a double set is the same on
// every profile. The double set itself is the hazard detector's to report,
// from happens-before (a set not ordered after the wait that consumed the
// previous one), not from the flag's state at one moment.
type FlagBits struct {
	bits [asm.NumPipes][asm.NumPipes]uint8
	// extra counts the sets beyond the first still pending per channel; it
	// is empty unless the program double-sets, so the common path touches
	// only bits.
	extra map[flagKey]uint32
}

// A pipe pair's flags are one uint8 and ids are masked with NumEventIDs-1:
// this fails to compile if the event range outgrows either.
var _ [8 - asm.NumEventIDs]struct{}
var _ [0]struct{} = [asm.NumEventIDs & (asm.NumEventIDs - 1)]struct{}{}

type flagKey struct {
	src, dst asm.Pipe
	id       uint8
}

// Set sets (src, dst, id); it returns false when the flag was already set,
// counting the extra set. Ids outside 0..asm.NumEventIDs-1 are the caller's to reject.
func (f *FlagBits) Set(src, dst asm.Pipe, id int) bool {
	if src >= asm.NumPipes || dst >= asm.NumPipes {
		return true // no such pipe: the assembler rejects it first
	}
	m := uint8(1) << uint(id&(asm.NumEventIDs-1))
	b := &f.bits[src][dst]
	if *b&m != 0 {
		if f.extra == nil {
			f.extra = map[flagKey]uint32{}
		}
		f.extra[flagKey{src, dst, uint8(id & (asm.NumEventIDs - 1))}]++
		return false
	}
	*b |= m
	return true
}

// Test reports whether (src, dst, id) is set.
func (f *FlagBits) Test(src, dst asm.Pipe, id int) bool {
	// Compares, not the modulo this once used: this runs for every flag op.
	if src >= asm.NumPipes || dst >= asm.NumPipes {
		return false
	}
	return f.bits[src][dst]&(uint8(1)<<uint(id&(asm.NumEventIDs-1))) != 0
}

// Clear consumes one set of (src, dst, id): the flag stays set while extra
// sets are pending.
func (f *FlagBits) Clear(src, dst asm.Pipe, id int) {
	if src >= asm.NumPipes || dst >= asm.NumPipes {
		return
	}
	if len(f.extra) > 0 {
		k := flagKey{src, dst, uint8(id & (asm.NumEventIDs - 1))}
		if n := f.extra[k]; n > 0 {
			if n == 1 {
				delete(f.extra, k)
			} else {
				f.extra[k] = n - 1
			}
			return
		}
	}
	f.bits[src][dst] &^= uint8(1) << uint(id&(asm.NumEventIDs-1))
}

// Reset clears every flag.
func (f *FlagBits) Reset() {
	f.bits = [asm.NumPipes][asm.NumPipes]uint8{}
	clear(f.extra)
}

// Count is how many sets of (src, dst, id) are pending.
func (f *FlagBits) Count(src, dst asm.Pipe, id int) int {
	if !f.Test(src, dst, id) {
		return 0
	}
	return 1 + int(f.extra[flagKey{src, dst, uint8(id & (asm.NumEventIDs - 1))}])
}

// Each calls fn for every set flag in (src, dst, id) order, so reports of
// unconsumed flags are deterministic.
func (f *FlagBits) Each(fn func(src, dst asm.Pipe, id int)) {
	for s := range f.bits {
		for d := range f.bits[s] {
			b := f.bits[s][d]
			for id := 0; b != 0 && id < asm.NumEventIDs; id++ {
				if b&(1<<uint(id)) != 0 {
					fn(asm.Pipe(s), asm.Pipe(d), id)
				}
			}
		}
	}
}

// Any reports whether some flag is set.
func (f *FlagBits) Any() bool {
	for s := range f.bits {
		for d := range f.bits[s] {
			if f.bits[s][d] != 0 {
				return true
			}
		}
	}
	return false
}
