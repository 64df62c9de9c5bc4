package machine

import "time"

// Progress is a snapshot of a run under way, for a progress line: where the
// simulation is and an estimate of how much of the launch is done.
type Progress struct {
	// Cycle is the simulated cycle the run has reached.
	Cycle int64
	// Run is the number of `run`s of the launch started so far (1-based
	// while one is under way); Runs is how many the launch has; RunName
	// names the current one.
	Run, Runs int
	RunName   string
	// Fraction estimates how much of the launch is done, in [0, 1]: runs
	// finished, plus the current run's share, the mean over its cores of
	// how far each is through its loops (iterations done of the trip count
	// each `for` computed on entry; a `while` has no count and adds
	// nothing below it), outside every loop how far through its code, and
	// 1 once it has ended. Every run counts as the same share, so the
	// estimate is coarse when runs differ in length.
	Fraction float64
}

// progressEvery is the least wall-clock time between two calls of
// Options.Progress.
const progressEvery = 100 * time.Millisecond

// reportProgress calls Options.Progress when progressEvery has passed since
// the last call; the caller checks the wall clock every wallEvery events.
func (m *Machine) reportProgress() {
	now := time.Now()
	if now.Sub(m.progressAt) < progressEvery {
		return
	}
	m.progressAt = now
	m.opt.Progress(m.progress())
}

// progress is the run's Progress now.
func (m *Machine) progress() Progress {
	p := Progress{Cycle: m.now}
	done := 0
	for i, st := range m.steps {
		if st.run == nil {
			continue
		}
		p.Runs++
		if i < m.stepIdx {
			p.Run++
			p.RunName = st.name
			if i < m.stepIdx-1 || !m.running {
				done++
			}
		}
	}
	if p.Runs == 0 {
		return p
	}
	cur := 0.0
	if m.running && len(m.active) > 0 {
		sum := 0.0
		for _, c := range m.active {
			sum += c.progress()
		}
		cur = sum / float64(len(m.active))
	}
	p.Fraction = min(1, (float64(done)+cur)/float64(p.Runs))
	return p
}

// progress estimates how far the core is through its kernel (see
// Progress.Fraction).
func (c *core) progress() float64 {
	if c.state == scDone {
		return 1
	}
	if len(c.loops) == 0 {
		if len(c.code) == 0 {
			return 0
		}
		return float64(c.pc) / float64(len(c.code))
	}
	f := 0.0
	for i := len(c.loops) - 1; i >= 0; i-- {
		n := c.loops[i].trips
		if n <= 0 || i >= len(c.iter) {
			f = 0 // a while loop: no count to measure against
			continue
		}
		f = min(1, (float64(c.iter[i])+f)/float64(n))
	}
	return f
}
