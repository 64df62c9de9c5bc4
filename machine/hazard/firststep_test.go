package hazard_test

import (
	"fmt"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
	"github.com/ptoasm/ptoasm/machine/hazard"
)

// A read and a write of two kernels in one iteration of their loops, which
// no grid barrier or FFTS rendezvous relates, are named by the step the
// read can mean (firststep.go): a load that starts no later than the store
// it races has no earlier step of it to read and is a hand-off, RAW with
// no uninit-read (result_handoff_behind: both start at step 1; it was WAR
// `ldr, str` plus an uninit-read); one that starts later reads an earlier
// step's data, WAR (fa_cv_preload_no_p_credit: the cube's P load starts at
// step 2, the AIVs' store at 0). A load whose first step read the host's
// data is no hand-off, wherever it starts: it means the host's preload, and
// later steps what an earlier step left (host_preload_refill: the cube reads
// a host-filled double buffer from step 0 while the AIVs refill it from step
// 0, credit missing: WAR `rd, fill`, which the step rule alone named RAW
// `fill, rd`). N moves the loops' length, not the steps.
func TestHandOffByFirstStep(t *testing.T) {
	for _, tc := range []struct {
		file    string
		defines []asm.Define
	}{
		{"result_handoff_behind", nil},
		{"result_handoff_behind", []asm.Define{{Name: "N", Value: "2"}}},
		{"result_handoff_behind", []asm.Define{{Name: "N", Value: "9"}}},
		{"result_handoff_behind_fixed", nil},
		{"fa_cv_preload_no_p_credit", nil},
		{"host_preload_refill", nil},
		{"host_preload_refill", []asm.Define{{Name: "N", Value: "3"}}},
		{"host_preload_refill", []asm.Define{{Name: "N", Value: "9"}}},
		{"host_preload_refill_fixed", nil},
	} {
		t.Run(fmt.Sprint(tc.file, tc.defines), func(t *testing.T) {
			obj, errs := asm.Assemble(fe, "../../programs/hazards/"+tc.file+".pto", tc.defines)
			if errs.HasErrors() {
				t.Fatalf("assemble: %v", errs)
			}
			d := runDetector(t, obj, machine.Options{TimingOnly: true})
			fs := d.Findings()
			// The program's `expect finding` lines: RAW `str, ldr` count
			// 2 and nothing else; clean; WAR `ldp, stp` beside its
			// unpaired-set; WAR `rd, fill` count 2 and nothing else.
			for _, p := range hazard.CheckExpectations(obj, fs) {
				t.Error(p)
			}
			for _, f := range fs {
				if f.Kind == hazard.KindUninitRead {
					t.Errorf("uninit-read at line %d: the load means the store it races", f.First.Line)
				}
			}
		})
	}
}
