package machine

import (
	"math"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/pipes"
)

// jitter is the profile's per-unit skew (pipes.JitterParams): each unit
// (a pipe of a core, the core's scalar, the SDMA copies it issues) runs its
// ops a factor in 1..jitter.max slower, and each core's first block starts
// up to jitter.start cycles late. Profile keys slow every unit of a kind
// together; a happens-before verdict must not move when one AIV runs
// slower than its twin or one rank starts late either, and this is how the
// tests (programs.TestFindingsIgnoreSkew) and users (--set jitter.seed=N)
// find out. It only stretches durations and start times: no ordering rule,
// no edge, no data path looks at it. Every draw is a hash of the seed and
// the unit, so a run is deterministic for a seed whatever else it does.
type jitter struct {
	seed  uint64
	lnMax float64 // ln(jitter.max)
	start int64
}

// Unit numbers beside the pipes (asm.Pipe) in a draw's key.
const (
	jitScalar = int(asm.NumPipes) + iota // the scalar's charged ops (core.charge)
	jitSDMA                              // the async copies a core issues
	jitCore                              // the core's start delay
	jitRank                              // the rank's start delay (core -1)
	jitUnits
)

// jitScale is a factor's fixed-point unit: 1/256.
const jitScale = 256

func newJitter(p pipes.JitterParams) *jitter {
	if p.Seed == 0 {
		return nil
	}
	return &jitter{seed: uint64(p.Seed), lnMax: math.Log(max(p.MaxFactor, 1)), start: p.Start}
}

// draw is a uniform number in [0, 1) for unit u of core order (a core's
// global order, or a rank for jitRank): splitmix64 of the three.
func (j *jitter) draw(order, u int) float64 {
	x := j.seed*0x9e3779b97f4a7c15 + uint64(order)*uint64(jitUnits) + uint64(u) + 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	x ^= x >> 31
	return float64(x>>11) / (1 << 53)
}

// scale returns d cycles of unit u of core order, slowed by the unit's
// factor (at least d, rounded up; saturated far below overflow).
func (j *jitter) scale(order, u int, d int64) int64 {
	if d <= 0 {
		return d
	}
	k := int64(math.Round(jitScale * math.Exp(j.draw(order, u)*j.lnMax)))
	if d > math.MaxInt64/4/k {
		return max(d, math.MaxInt64/4) // far past any run's cycle guard
	}
	return max((d*k+jitScale-1)/jitScale, d)
}

// startDelay is how much later than the launch says core order of rank r
// starts its first block: half of jitter.start drawn by rank (a late rank),
// half by core (one core late within it).
func (j *jitter) startDelay(r, order int) int64 {
	if j.start == 0 {
		return 0
	}
	half := float64(j.start) / 2
	return int64(j.draw(r, jitRank)*half + j.draw(order, jitCore)*half)
}

// jitScale is d cycles of p's entry under the machine's jitter, which is
// on. Not inlined: the pipe's begin stays as small as it was without the
// jitter (the inliner's budget for the hot path is PGO's).
//
//go:noinline
func (p *pipeState) jitScale(d int64) int64 {
	return p.m.jit.scale(p.c.order, int(p.p), d)
}
