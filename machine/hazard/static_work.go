package hazard

// The static pass's work budget. Nested loops with unknown trip counts, and
// conditions it cannot decide, multiply paths: a streaming kernel such as
// allgather_gemm's compute would run for minutes. So the pass counts its
// work and, past maxWork units, stops and says so (an unchecked-flag note).
//
// A unit is a statement visit (one statement on one path), but not all work
// is per visit: what handles a whole state costs its size (sstate.size),
// and states grow with the registers and facts a kernel keeps. Twelve loops
// nested with symbolic bounds (`for %i = 0 to %a + 100 { let %b = %a + %i
// ...`) spent 5 µs a visit keying and widening states at their heads, 150
// spent 36 µs and kept 1.7 GB of memo keys, where grouped_gemm spends 0.1 µs;
// and 3000 tests of 400 loaded values in a row, each splitting 256 paths
// that join then compared pairwise, ran past two minutes. So the work counts
// those too, in bytes of state:
//
//   - at a loop head, a key built (the memo's, a widening's seen set), a
//     state widened or remembered in the memo: 32 bytes a unit. Keys are
//     hashed into maps and the memo keeps them, so the memo holds at most
//     about maxWork·32 bytes of keys;
//   - a split (its facts copied, its sides then cleaned and compared) and a
//     comparison in join: 1024 bytes a unit, what a visit costs in time.
//
// The charges follow from the states and the statements alone, not from
// which parts states share (copy on write) or whether a loop template stood
// in for a run (it replays the run's work), so the budget runs out at the
// same statement either way.
const (
	// maxWork is the budget, in units.
	maxWork = 1 << 20
	// visitWork is a unit of work: checker.work counts in bytes of state
	// keyed at a loop head, 32 to a unit.
	visitWork = 32
	// scanBytes is the bytes of state a split copies or join compares per
	// byte keyed (1024 to a unit).
	scanBytes = 1024 / visitWork
	// factBytes is a fact's size in memory.
	factBytes = 32
)

// charge adds the work of n bytes of state handled at a loop head (or, as
// visitWork, of a statement visit) and gives up past the budget.
func (c *checker) charge(n int) {
	c.work += n
	if c.work > maxWork*visitWork {
		c.aborted = true
	}
}

// scan charges n bytes of state copied or compared (a split, join).
func (c *checker) scan(n int) { c.charge((n + scanBytes - 1) / scanBytes) }

// size is the bytes of s's parts: 5 a channel (count and last set), 12 a
// register (value and symbol), factBytes a fact.
func (s *sstate) size() int { return 5*len(s.counts) + 12*len(s.regs) + factBytes*len(s.facts) }

// fork is s.fork, charged s's size: the facts are copied now, and the two
// sides are cleaned (gc) and compared (join) next.
func (c *checker) fork(s *sstate) *sstate {
	c.scan(s.size())
	return s.fork()
}
