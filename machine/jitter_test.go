package machine

import (
	"bytes"
	"math"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/pipes"
)

// TestJitterScale: seed 0 is off; a unit's factor is in 1..jitter.max,
// the same on every call and not the same for every unit; start delays
// stay under jitter.start; durations never shrink and never overflow.
func TestJitterScale(t *testing.T) {
	if newJitter(pipes.JitterParams{Seed: 0, MaxFactor: 8, Start: 100}) != nil {
		t.Fatal("seed 0 made a jitter")
	}
	for _, tc := range []struct {
		max   float64
		start int64
	}{{1, 0}, {8, 10000}, {50, 0}, {1000, 1 << 30}} {
		j := newJitter(pipes.JitterParams{Seed: 7, MaxFactor: tc.max, Start: tc.start})
		seen := map[int64]bool{}
		for order := range 64 {
			for u := range jitUnits {
				got := j.scale(order, u, 1000)
				if got < 1000 || float64(got) > 1000*tc.max+1 {
					t.Fatalf("max %g: unit (%d, %d) scales 1000 to %d", tc.max, order, u, got)
				}
				if again := j.scale(order, u, 1000); again != got {
					t.Fatalf("max %g: unit (%d, %d) scales 1000 to %d, then %d", tc.max, order, u, got, again)
				}
				seen[got] = true
			}
			if d := j.startDelay(order%4, order); d < 0 || d > tc.start {
				t.Fatalf("start %d: core %d starts %d late", tc.start, order, d)
			}
		}
		if tc.max > 1 && len(seen) < 32 {
			t.Errorf("max %g: %d distinct factors over 64 cores' units", tc.max, len(seen))
		}
		if got := j.scale(3, 1, 0); got != 0 {
			t.Errorf("a zero duration scaled to %d", got)
		}
		if got := j.scale(3, 1, math.MaxInt64/2); got < math.MaxInt64/2 {
			t.Errorf("a huge duration scaled to %d", got)
		}
	}
}

// TestJitterRuns: under a skew every program's outputs are the
// unperturbed run's, byte for byte (the skew moves only when things
// happen), the cycles differ, and a seed gives the same run twice. The
// programs cover pipes of twin AIVs (cvc_pipeline), ranks (ring_final)
// and SDMA (sdma_other_core_fixed).
func TestJitterRuns(t *testing.T) {
	for _, tc := range []struct {
		path string
		out  string
		defs []asm.Define
	}{
		{"../programs/hazards/cvc_pipeline.pto", "Y", nil},
		{"../programs/allreduce_ring/ring_final.pto", "Out", []asm.Define{{Name: "RANKS", Value: "4"}}},
		{"../programs/hazards/sdma_other_core_fixed.pto", "", nil},
	} {
		t.Run(tc.path, func(t *testing.T) {
			obj := assembleFile(t, tc.path, tc.defs...)
			run := func(seed int64) (int64, []byte) {
				prof := pipes.DefaultProfile()
				prof.Jitter.Seed = seed
				m, r, err := runObj(t, obj, Options{Profile: prof})
				if err != nil {
					t.Fatalf("seed %d: %v", seed, err)
				}
				for _, c := range r.Checks {
					if !c.OK {
						t.Errorf("seed %d: %s: %s", seed, c.Name, c.Msg)
					}
				}
				var out []byte
				if tc.out != "" {
					for rank := range m.nranks {
						b, _ := m.TensorData(tc.out, rank)
						out = append(out, b.Data...)
					}
				}
				return r.Cycles, out
			}
			c0, out0 := run(0)
			for _, seed := range []int64{1, 2, 3} {
				c, out := run(seed)
				if c == c0 {
					t.Errorf("seed %d: %d cycles, as without a skew", seed, c)
				}
				if !bytes.Equal(out, out0) {
					t.Errorf("seed %d: the output %s differs from the unperturbed run's", seed, tc.out)
				}
				if again, _ := run(seed); again != c {
					t.Errorf("seed %d: %d cycles, then %d", seed, c, again)
				}
			}
		})
	}
}
