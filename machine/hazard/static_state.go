package hazard

import (
	"encoding/binary"
	"slices"
)

// sstate is the flag state of one path: a token count per (src, dst, id)
// channel (0 or 1: the flag is one bit), the last set on it, the scalar
// registers (syms[i] == symZero: the constant regs[i]; symTop: unknown;
// otherwise symbol syms[i] plus regs[i]) and the facts the path has assumed
// about its symbols. Channels are numbered over the pipe pairs the kernel
// uses, so a state is small to copy and to key.
//
// States are copied on write. A clone shares its three parts — the flags
// (counts, last), the registers (regs, syms) and the facts — with its
// original, and own marks the parts a state may write in place: clone takes
// the mark from both, and the first write to a part (writeFlags, writeRegs,
// writeFacts) copies it. Paths split, memo entries are recalled and loops
// return many states that are merged away or written in one part only, so
// most clones never copy anything (issue 28, session 14). Every write to a
// state's slices goes through those three (registers through setReg, flags
// through setFlag); a write that would not change the value is skipped, so
// that it does not copy either.
type sstate struct {
	counts []uint8
	last   []int32
	regs   []int64
	syms   []int32
	facts  []fact
	iter   []int64
	own    uint8
	// h is the hash of the flags and registers (partHash), kept up to date
	// by setReg and setFlag.
	h uint64
	// gcAt is the checker's pin epoch + 1 when gc last ran on this state,
	// or 0. gc drops the facts about symbols no register holds and none is
	// pinned; it has nothing to drop again until a fact is added, a register
	// stops holding a symbol, or a symbol is unpinned (a new epoch).
	gcAt uint32
}

// The parts of a state (sstate.own).
const (
	ownFlags uint8 = 1 << iota
	ownRegs
	ownFacts
	ownAll = ownFlags | ownRegs | ownFacts
)

// cowOff makes clone copy every part at once and a while loop's memo
// entries be copied when recalled, as before copy on write
// (TestStaticSharedMatchesCopied compares the two); checkHashes checks every
// state's kept hash when it is used, checkGC every gc skipped (sstate.gcAt).
var cowOff, checkHashes, checkGC bool

func (s *sstate) clone() *sstate {
	if cowOff {
		return s.copyAll()
	}
	s.own = 0
	x := *s
	return &x
}

// recalledCopy is a clone of a memo entry's state for a path in iteration
// iter.
func (s *sstate) recalledCopy(iter []int64) *sstate {
	x := s.clone()
	x.iter = iter
	return x
}

// fork is a clone for a split: both sides usually assume a fact at once, so
// the clone's facts are copied now, and the original keeps its own.
func (s *sstate) fork() *sstate {
	own := s.own & ownFacts
	x := s.clone()
	s.own |= own
	x.own &^= ownFacts
	x.writeFacts()
	return x
}

// copyAll is a clone that shares nothing.
func (s *sstate) copyAll() *sstate {
	x := *s
	x.own = 0
	x.writeFlags()
	x.writeRegs()
	x.writeFacts()
	x.gcAt = s.gcAt
	return &x
}

// writeFlags makes s's flags its own, to be written (setFlag).
func (s *sstate) writeFlags() {
	if s.own&ownFlags == 0 {
		s.counts = slices.Clone(s.counts)
		s.last = slices.Clone(s.last)
		s.own |= ownFlags
	}
}

// writeRegs makes s's registers its own, to be written (setReg).
func (s *sstate) writeRegs() {
	if s.own&ownRegs == 0 {
		s.regs = slices.Clone(s.regs)
		s.syms = slices.Clone(s.syms)
		s.own |= ownRegs
	}
}

// writeFacts makes s's facts its own, to be written. An empty slice is
// copied too: its spare capacity may be another state's.
func (s *sstate) writeFacts() {
	if s.own&ownFacts == 0 {
		if len(s.facts) > 0 {
			s.facts = append(make([]fact, 0, len(s.facts)+2), s.facts...)
		} else {
			s.facts = nil
		}
		s.own |= ownFacts
	}
}

// setReg writes register i, copying the registers first when they are
// shared and the value changes.
func (s *sstate) setReg(i int, sym int32, v int64) {
	if s.syms[i] == sym && s.regs[i] == v {
		return
	}
	s.writeRegs()
	s.h += regHash(i, sym, v) - regHash(i, s.syms[i], s.regs[i])
	if old := s.syms[i]; old > numBuiltinSyms && old != sym {
		s.gcAt = 0
	}
	s.syms[i], s.regs[i] = sym, v
}

// setFlag writes channel ch's count and last set, as setReg.
func (s *sstate) setFlag(ch int, n uint8, last int32) {
	if s.counts[ch] == n && s.last[ch] == last {
		return
	}
	s.writeFlags()
	s.h += chanHash(ch, n) - chanHash(ch, s.counts[ch])
	s.counts[ch], s.last[ch] = n, last
}

// partHash is the hash of s's flags and registers: a sum of one term per
// register and per set flag, so that setReg and setFlag update it with two
// terms. Any function of what sameAs compares would do for join; this one
// costs nothing to keep.
func (s *sstate) partHash() uint64 {
	var h uint64
	for ch, n := range s.counts {
		h += chanHash(ch, n)
	}
	for i, v := range s.regs {
		h += regHash(i, s.syms[i], v)
	}
	return h
}

func regHash(i int, sym int32, v int64) uint64 {
	return mix64(uint64(i)<<32|uint64(uint32(sym))) ^ mix64(uint64(v)+0x9e3779b97f4a7c15)
}

func chanHash(ch int, n uint8) uint64 {
	if n == 0 {
		return 0
	}
	return mix64(1<<63 | uint64(ch)<<8 | uint64(n))
}

func (s *sstate) key() string { return string(s.appendKey(nil, nil)) }

// appendKey appends s's key to b: its flags, registers and facts. The
// registers frame marks stand as "a constant" without their value (a loop
// template's key, static_frame.go).
func (s *sstate) appendKey(b []byte, frame []bool) []byte {
	b = slices.Grow(b, len(s.counts)+14*len(s.regs)+26*len(s.facts))
	b = append(b, s.counts...)
	for i, v := range s.regs {
		if frame != nil && frame[i] {
			b = binary.LittleEndian.AppendUint16(b, uint16(i))
			b = binary.LittleEndian.AppendUint32(b, frameSym)
			continue
		}
		if s.syms[i] != symTop {
			b = binary.LittleEndian.AppendUint16(b, uint16(i))
			b = binary.LittleEndian.AppendUint32(b, uint32(s.syms[i]))
			b = binary.LittleEndian.AppendUint64(b, uint64(v))
		}
	}
	for i := range s.facts {
		f := &s.facts[i]
		b = append(b, 0xff, f.kind)
		b = binary.LittleEndian.AppendUint32(b, uint32(f.a))
		b = binary.LittleEndian.AppendUint32(b, uint32(f.b))
		b = binary.LittleEndian.AppendUint64(b, uint64(f.lo))
		b = binary.LittleEndian.AppendUint64(b, uint64(f.hi))
	}
	return b
}

// hash hashes what sameAs compares: flags, registers (an unknown one holds
// 0: store and retire clear it) and the facts keep accepts (none when nil).
func (s *sstate) hash(keep func(*fact) bool) uint64 {
	const prime = 1099511628211
	if checkHashes && s.h != s.partHash() {
		panic("static pass: a state's hash is not that of its flags and registers")
	}
	h := s.h
	if keep == nil {
		return h
	}
	mix := func(v uint64) { h = (h ^ v) * prime }
	for i := range s.facts {
		f := &s.facts[i]
		if !keep(f) {
			continue
		}
		mix(uint64(uint32(f.a))<<32 | uint64(uint32(f.b)) ^ uint64(f.kind)<<60)
		mix(uint64(f.lo))
		mix(uint64(f.hi))
	}
	return h
}

// sameAs reports whether s and o have the same flags, registers and the
// facts keep accepts (none when nil). Parts still shared are the same.
func (s *sstate) sameAs(o *sstate, keep func(*fact) bool) bool {
	if !sameSlice(s.counts, o.counts) && string(s.counts) != string(o.counts) {
		return false
	}
	if !sameSlice(s.regs, o.regs) && (!slices.Equal(s.syms, o.syms) || !slices.Equal(s.regs, o.regs)) {
		return false
	}
	if keep == nil {
		return true
	}
	i, j := 0, 0
	for {
		for i < len(s.facts) && !keep(&s.facts[i]) {
			i++
		}
		for j < len(o.facts) && !keep(&o.facts[j]) {
			j++
		}
		if i == len(s.facts) || j == len(o.facts) {
			return i == len(s.facts) && j == len(o.facts)
		}
		if s.facts[i] != o.facts[j] {
			return false
		}
		i, j = i+1, j+1
	}
}

// sameSlice reports whether a and b are the same memory: a part two states
// share.
func sameSlice[T any](a, b []T) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// intern makes a new memo state's parts those of an earlier memo state when
// they are equal, so that the memo keeps one copy of each (allgather_gemm's
// 8 000 memo states hold a few hundred distinct register files) and join's
// sameAs and joinFacts find recalled states alike by their pointers. Memo
// states are never written (recall copies them), so their parts are shared
// with no owner.
func (c *checker) intern(x *sstate) {
	x.own = 0
	if cowOff {
		return
	}
	if c.interned == nil {
		c.interned = map[uint64][]*sstate{}
	}
	share, lasts := x.flagsHash()
	c.internPart(x, share+lasts, (*sstate).sameFlags, func(y *sstate) { x.counts, x.last = y.counts, y.last })
	c.internPart(x, x.h-share, (*sstate).sameRegs, func(y *sstate) { x.regs, x.syms = y.regs, y.syms })
	if len(x.facts) > 0 {
		c.internPart(x, x.factsHash(), (*sstate).sameFacts, func(y *sstate) { x.facts = y.facts })
	}
}

// internPart finds an interned state whose part (hashed h) equals x's
// (same) and takes it (take); else x's part is interned.
func (c *checker) internPart(x *sstate, h uint64, same func(x, y *sstate) bool, take func(y *sstate)) {
	for _, y := range c.interned[h] {
		if same(x, y) {
			take(y)
			return
		}
	}
	c.interned[h] = append(c.interned[h], x)
}

// flagsHash is the flags' share of s.h (s.h - share is the registers'),
// and a hash of the last sets of the channels with a token. A part's hash
// need only be equal for equal parts: the last sets of the others are
// compared, not hashed.
func (s *sstate) flagsHash() (share, lasts uint64) {
	for i := 0; i < len(s.counts); i += 8 {
		if i+8 <= len(s.counts) && binary.LittleEndian.Uint64(s.counts[i:]) == 0 {
			continue // eight channels with no token
		}
		for ch := i; ch < min(i+8, len(s.counts)); ch++ {
			if n := s.counts[ch]; n != 0 {
				share += chanHash(ch, n)
				lasts += mix64(uint64(ch)<<32 | uint64(uint32(s.last[ch])))
			}
		}
	}
	return share, lasts
}

func (s *sstate) factsHash() uint64 {
	h := uint64(fnvBasis)
	for _, f := range s.facts {
		h = fnvWord(fnvWord(fnvWord(h, uint64(uint32(f.a))<<32|uint64(uint32(f.b))^uint64(f.kind)<<60), uint64(f.lo)), uint64(f.hi))
	}
	return h
}

const fnvBasis = 14695981039346656037

func fnvWord(h, w uint64) uint64 { return (h ^ w) * 1099511628211 }

func (s *sstate) sameFlags(o *sstate) bool {
	return string(s.counts) == string(o.counts) && slices.Equal(s.last, o.last)
}

func (s *sstate) sameRegs(o *sstate) bool {
	return slices.Equal(s.regs, o.regs) && slices.Equal(s.syms, o.syms)
}

func (s *sstate) sameFacts(o *sstate) bool { return slices.Equal(s.facts, o.facts) }
