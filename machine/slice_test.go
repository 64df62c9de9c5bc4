package machine

import (
	"testing"

	"github.com/ptoasm/ptoasm/asm"
)

// TestControlSlice checks that a timing-only run computes exactly the data a
// scalar load depends on: the loop bound N = X + 2 = 5 comes from tile ops,
// so the loop must run 5 times in both modes, while the unrelated texp chain
// is left out of the slice (and Out keeps no buffer).
func TestControlSlice(t *testing.T) {
	obj := assembleFile(t, "testdata/control_slice.pto")
	var cycles [2]int64
	for i, timing := range []bool{false, true} {
		m, r, err := runObj(t, obj, Options{TimingOnly: timing})
		if err != nil {
			t.Fatal(err)
		}
		cycles[i] = r.Cycles
		buf, _ := m.TensorData("S", 0)
		if buf == nil {
			t.Fatal("no @S")
		}
		if v, err := buf.LoadBits(asm.I32, 0); err != nil || v != 5 {
			t.Errorf("timing-only %v: S[0] = %d (%v), want 5 loop trips", timing, v, err)
		}
		out, _ := m.TensorData("Out", 0)
		if timing == (out != nil) {
			t.Errorf("timing-only %v: @Out has a buffer: %v", timing, out != nil)
		}
	}
	if cycles[0] != cycles[1] {
		t.Errorf("cycles: full run %d, timing-only %d; the same path must take the same time", cycles[0], cycles[1])
	}

	s := newControlSlice(obj)
	var got []string
	for _, k := range obj.Kernels {
		for _, op := range k.Ops {
			if s.ops[op] {
				got = append(got, op.Info.Name)
			}
		}
	}
	want := []string{"tload", "tadds", "tstore"}
	if len(got) != len(want) {
		t.Fatalf("slice ops %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("slice op %d = %s, want %s", i, got[i], want[i])
		}
	}
	for _, name := range []string{"X", "N", "S"} {
		if !s.tensors[obj.Tensor(name).Index] {
			t.Errorf("@%s not kept", name)
		}
	}
	for _, name := range []string{"Z", "Out"} {
		if s.tensors[obj.Tensor(name).Index] {
			t.Errorf("@%s kept, but nothing the scalar reads depends on it", name)
		}
	}
}
