package machine

import (
	"path/filepath"
	"testing"
)

// TestCostModel runs the single-instruction programs of testdata/cost and
// compares the simulated cycles with pto-isa's hardware-profiled numbers:
// exactly for the cube (the formula reproduces them) and within 10% for the
// vector and DMA cases (machine-facts §4.4, §4.5).
func TestCostModel(t *testing.T) {
	for _, tc := range []struct {
		file string
		want int64
		tol  float64 // relative; 0 = exact
		last bool    // compare the last exec's own cycles, not the total
	}{
		{"matmul_f16_40x50x60.pto", 54, 0, false},
		{"matmul_i8_6x7x8.pto", 7, 0, false},
		{"matmul_f32_120x110x50.pto", 902, 0, false},
		{"matmul_acc_chain_f16_128x128x64.pto", 262, 0, true},
		{"tadd_f32_64x64.pto", 160, 0.10, false},
		{"texp_f32_64x64.pto", 159, 0.10, false},
		{"trowsum_f32_64x64.pto", 492, 0.10, false},
		{"tload_f32_128x128.pto", 776, 0.10, true},
	} {
		t.Run(tc.file, func(t *testing.T) {
			obj := assembleFile(t, filepath.Join("testdata", "cost", tc.file))
			rec := &recorder{kinds: map[EventKind]bool{EvExec: true}}
			_, r, err := runObj(t, obj, Options{Profile: bodyProfile(), TimingOnly: true, Observers: []Observer{rec}})
			if err != nil {
				t.Fatal(err)
			}
			got := r.Cycles
			if tc.last {
				if len(rec.evs) == 0 {
					t.Fatal("no exec events")
				}
				e := rec.evs[len(rec.evs)-1]
				got = e.End - e.Start
			}
			for _, c := range r.Checks {
				if !c.OK {
					t.Errorf("check %s: %s", c.Name, c.Msg)
				}
			}
			lim := int64(float64(tc.want) * tc.tol)
			if d := got - tc.want; d > lim || d < -lim {
				t.Errorf("%d cycles, want %d (±%d)", got, tc.want, lim)
			}
		})
	}
}
