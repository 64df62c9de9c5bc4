package pipes

import "github.com/ptoasm/ptoasm/asm"

// NumEventIDs is the number of set_flag/wait_flag ids per pipe pair on A2/A3
// (a 3-bit field; machine-facts §2.1).
const NumEventIDs = 8

// FlagBits is one core's intra-core event flags: one bit per (src, dst, id).
// A bit cannot count, so a second set before the wait is a fault the caller
// reports (Set returns false).
type FlagBits struct {
	bits [asm.NumPipes][asm.NumPipes]uint8
}

// Set sets (src, dst, id); it returns false, leaving the bit set, when the bit
// was already set. Ids outside 0..7 are the caller's to reject.
func (f *FlagBits) Set(src, dst asm.Pipe, id int) bool {
	if src >= asm.NumPipes || dst >= asm.NumPipes {
		return true // no such pipe: the assembler rejects it first
	}
	m := uint8(1) << uint(id&7)
	b := &f.bits[src][dst]
	if *b&m != 0 {
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
	return f.bits[src][dst]&(uint8(1)<<uint(id&7)) != 0
}

// Clear clears (src, dst, id).
func (f *FlagBits) Clear(src, dst asm.Pipe, id int) {
	if src >= asm.NumPipes || dst >= asm.NumPipes {
		return
	}
	f.bits[src][dst] &^= uint8(1) << uint(id&7)
}

// Reset clears every flag.
func (f *FlagBits) Reset() { f.bits = [asm.NumPipes][asm.NumPipes]uint8{} }

// Each calls fn for every set flag in (src, dst, id) order, so reports of
// unconsumed flags are deterministic.
func (f *FlagBits) Each(fn func(src, dst asm.Pipe, id int)) {
	for s := range f.bits {
		for d := range f.bits[s] {
			b := f.bits[s][d]
			for id := 0; b != 0 && id < NumEventIDs; id++ {
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
