package machine

import (
	"testing"

	"github.com/ptoasm/ptoasm/asm"
)

// TestControlFlow runs a kernel with nested loops, breaks out of loops from
// inside ifs, empty branches and a 5000-iteration while (longer than the
// scalar budget, so the scalar yields mid-loop). The values and the cycle
// count are those of the statement-tree interpreter the flat code replaced.
func TestControlFlow(t *testing.T) {
	for _, timing := range []bool{false, true} {
		m, r, err := runObj(t, assembleFile(t, "testdata/control_flow.pto"), Options{Profile: bodyProfile(), TimingOnly: timing})
		if err != nil {
			t.Fatal(err)
		}
		if r.Cycles != 16418 {
			t.Errorf("timing-only %v: %d cycles, want 16418", timing, r.Cycles)
		}
		buf, _ := m.TensorData("S", 0)
		if buf == nil {
			t.Fatal("no @S")
		}
		want := map[int64]uint32{0: 23, 1: 5000, 2: 2, 3: 9, 4: 0, 5: 2}
		for i := int64(0); i < 6; i++ {
			v, err := buf.LoadBits(asm.I32, i*4)
			if err != nil {
				t.Fatal(err)
			}
			if uint32(v) != want[i] {
				t.Errorf("timing-only %v: S[%d] = %d, want %d", timing, i, v, want[i])
			}
		}
	}
}

// TestCompileBodyEnds checks that an empty body still ends in a block end
// (one budget step, as the frame's end was) and the halt.
func TestCompileBodyEnds(t *testing.T) {
	code := compileBody(nil)
	if len(code) != 2 || code[0].kind != iJump || code[0].jump != 1 || code[1].kind != iHalt {
		t.Fatalf("empty body: %+v", code)
	}
}
