package programs_test

import (
	"strings"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/programs"
)

// TestCrossCoreHintLinksTheCores lints programs with races between two cores
// of one rank and requires every such finding's hint to name a
// synchronisation that links those two cores where the run placed them
// (machine.fireCross, syncAll): FFTS mode 2 an AIC with its own block's
// AIVs (both AIVs set toward the AIC), mode 1 a mixed block's two AIVs,
// mode 0 a barrier of one core type, syncall every core of a launch, a GM
// signal between launches or in waves. Until session 20 every one of them
// said mode 2, which links none but the first pair. The *_fixed twins of
// the new kernels apply the hint and lint clean (TestPrograms).
func TestCrossCoreHintLinksTheCores(t *testing.T) {
	tests := []struct {
		name      string
		want, not []string
	}{
		// An AIC and an AIV of its block: the AIC sets alone.
		{"hazards/cross_core", []string{"on r0.aic0 after tstore (line 24): `ffts_set MTE3, 0 #mode=2`", "raises both AIVs of its block"}, []string{"other AIV"}},
		// AIVs to their block's AIC: both AIVs set.
		{"hazards/grid_ffts_skip", []string{"#mode=2`", "on r0.aiv1 (its block's other AIV)", "once both have set"}, []string{"#mode=0", "#mode=1"}},
		// The two AIVs of a mixed block.
		{"hazards/aiv_pair_exchange_one_slot", []string{"#mode=1`", "on r0.aiv1 too, before its wait"}, []string{"#mode=2", "#mode=0"}},
		// AIVs to another block's AIC.
		{"hazards/ffts_mode2_cross_block", []string{"`syncall` on every core of the launch"}, []string{"ffts_set"}},
		// Two AICs, two AIVs of an aiv launch: different blocks.
		{"hazards/aic_blocks_handoff", []string{"#mode=0`", "every other AIC of the launch, r0.aic1 included"}, []string{"#mode=2", "#mode=1"}},
		{"hazards/aiv_blocks_handoff", []string{"#mode=0`", "every other AIV of the launch, r0.aiv1 included"}, []string{"#mode=2", "#mode=1"}},
		// The same in the first of two runs, whose second is mixed: the
		// hint follows the run the accesses were in.
		{"hazards/runs_handoff", []string{"#mode=0`", "every other AIV of the launch, r0.aiv1 included"}, []string{"#mode=2", "#mode=1"}},
		// AIV blocks in waves: no mode 0, no syncall.
		{"hazards/blocks_share_core", []string{"`tnotify @SIG[i], 1 #op=add`", "runs in waves"}, []string{"ffts_set", "syncall`"}},
		// Two launches of one run.
		{"hazards/launches_handoff", []string{"`tnotify @SIG[i], 1 #op=add`", "different launches"}, []string{"ffts_set", "syncall`"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path, ok := programs.Find(tc.name)
			if !ok {
				t.Fatalf("no program %s", tc.name)
			}
			defs, err := testDefines(path)
			if err != nil {
				t.Fatal(err)
			}
			obj, errs := asm.Assemble(embedFrontend, path, defs)
			if errs.HasErrors() || obj == nil {
				t.Fatalf("assemble %s: %v", path, errs)
			}
			o, err := runProgram(obj, true)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, f := range o.findings {
				if !strings.Contains(f.Message, "no cross-core flag, fifo or syncall") {
					continue
				}
				n++
				for _, w := range tc.want {
					if !strings.Contains(f.Hint, w) {
						t.Errorf("%s %s: hint lacks %q:\n%s", f.Kind, f.First.Op, w, f.Hint)
					}
				}
				for _, w := range tc.not {
					if strings.Contains(f.Hint, w) {
						t.Errorf("%s %s: hint has %q:\n%s", f.Kind, f.First.Op, w, f.Hint)
					}
				}
			}
			if n == 0 {
				t.Errorf("no cross-core race found")
			}
		})
	}
}
