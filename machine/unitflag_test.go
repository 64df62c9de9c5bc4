package machine

import (
	"path/filepath"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
)

// TestUnitFlagHandOff: with #unit, FIX starts draining a tile while the
// final mad still runs and ends after it; the next tile's first mad (which
// carries the flag too) starts only after that store has released L0C; and
// the data is right without any M/FIX flag.
func TestUnitFlagHandOff(t *testing.T) {
	obj := assembleFile(t, filepath.Join("..", "programs", "gemm_unit", "gemm_unit.pto"))
	rec := &recorder{kinds: map[EventKind]bool{EvExec: true}}
	_, r, err := runObj(t, obj, Options{Observers: []Observer{rec}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range r.Checks {
		if !c.OK {
			t.Errorf("check %s: %s", c.Name, c.Msg)
		}
	}
	var final *Event
	stores, overlaps := 0, 0
	for i := range rec.evs {
		e := &rec.evs[i]
		if e.Op == nil || e.Op.Unit == asm.UnitNone {
			continue
		}
		switch {
		case e.Agent.Pipe == asm.PipeM && e.Op.Unit == asm.UnitFinal:
			final = e
		case e.Agent.Pipe == asm.PipeFIX:
			stores++
			if final == nil {
				t.Fatal("a unit store before any final mad")
			}
			if e.End <= final.End {
				t.Errorf("store %d ends at %d, before its mad's end %d", stores, e.End, final.End)
			}
			if e.Start < final.End {
				overlaps++
			}
			// The next mad of the tile must start after this store ends.
			for j := i + 1; j < len(rec.evs); j++ {
				if n := &rec.evs[j]; n.Agent.Pipe == asm.PipeM {
					if n.Start < e.End {
						t.Errorf("next mad starts at %d, before the store releasing L0C ends at %d", n.Start, e.End)
					}
					break
				}
			}
		}
	}
	if stores != 4 || overlaps != stores {
		t.Errorf("%d unit stores, %d overlapping their final mad; want 4 and 4", stores, overlaps)
	}
}
