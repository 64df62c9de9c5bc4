package machine

// Placement is where an observer's core id (Agent.Core) ran in one run of
// the launch section: which stream of the run, which block, in what
// position. A race's hint needs it to name a synchronisation that can link
// the two cores (FFTS mode 2 links an AIC with its own block's AIVs, mode 1
// a block's two AIVs, mode 0 every core of one type of a stream; syncall
// every core of a stream: fireCross, syncAll).
type Placement struct {
	Stream int  // the stream's index among the run's kernels
	Block  int  // block_idx
	Mixed  bool // an aic + aiv launch, whose blocks are an AIC and two AIVs
	AIV    bool // the core is an AIV (else an AIC or a unified core)
	Sub    int  // subblock_idx: an AIV's place in a mixed block, 0 otherwise
	// Waves says the stream has more blocks than cores: a later wave's
	// blocks have no core while an earlier wave runs, so a mode-0 set
	// faults (waveMode0) and a grid barrier cannot take every block.
	Waves bool
}

// runPlaces is one run's placement: every rank places the same streams on
// the same cores (placeStream starts from free cores on each), so one table
// holds for all of them.
type runPlaces struct {
	// cores holds, by physical core index, the first-wave block each core
	// ran; ok false for a core the run left idle.
	cores []placed
	// waving is, per virtual position, the stream whose later waves take
	// that position (at most one per run: virtualCore), -1 for none.
	waving [numVirtualPos]int32
	mixed  [numVirtualPos]bool // whether waving's stream is mixed
}

type placed struct {
	Placement
	ok bool
}

// Placement says where core (an observer's id, physical or virtual) ran in
// run, the ID of the run's EvRunStart. ok is false when the run did not
// start (it failed to place its streams), the rank or core is not the
// program's, or the run left the core idle. It is meant for after the
// run (a finding's hint), not from another goroutine while it runs.
func (m *Machine) Placement(run, rank, core int) (p Placement, ok bool) {
	if run < 0 || run >= len(m.runPlaces) || rank < 0 || rank >= m.nranks || core < 0 {
		return Placement{}, false
	}
	rp := m.runPlaces[run]
	n := m.nAIC + m.nAIV
	if core < n {
		return rp.cores[core].Placement, rp.cores[core].ok
	}
	b, pos := (core-n)/numVirtualPos, (core-n)%numVirtualPos
	if rp.waving[pos] < 0 {
		return Placement{}, false
	}
	p = Placement{Stream: int(rp.waving[pos]), Block: b, Mixed: rp.mixed[pos], Waves: true}
	switch pos {
	case vpMixedAIV0, vpAIV:
		p.AIV = true
	case vpMixedAIV1:
		p.AIV, p.Sub = true, 1
	}
	return p, true
}

// note records where stream si of a run, just placed on rank 0, put its
// first wave.
func (rp *runPlaces) note(s *stream, si int) {
	sp := s.plan
	mixed := sp.aic != nil && sp.aiv != nil
	waves := s.next[0] < sp.blocks
	for b := range s.next[0] {
		ba := &s.blockArr[0][b]
		if ba.aic != nil {
			rp.cores[ba.aic.idx] = placed{Placement{Stream: si, Block: b, Mixed: mixed, Waves: waves}, true}
		}
		for sub, c := range ba.aivs {
			if c != nil {
				rp.cores[c.idx] = placed{Placement{Stream: si, Block: b, Mixed: mixed, AIV: true, Sub: sub, Waves: waves}, true}
			}
		}
	}
	if !waves {
		return
	}
	pos := []int{vpAIC}
	switch {
	case mixed:
		pos = []int{vpMixedAIC, vpMixedAIV0, vpMixedAIV1}
	case sp.aiv != nil:
		pos = []int{vpAIV}
	}
	for _, p := range pos {
		rp.waving[p], rp.mixed[p] = int32(si), mixed
	}
}

func newRunPlaces(cores int) *runPlaces {
	rp := &runPlaces{cores: make([]placed, cores)}
	for i := range rp.waving {
		rp.waving[i] = -1
	}
	return rp
}
