package hazard_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
	"github.com/ptoasm/ptoasm/machine/hazard"
)

// TestInPlaceOperandWrites: the sources pto-isa's a2a3 code uses as scratch
// are writes the detector sees. An MTE3 store of b still reading it when
// the V op starts races the op only where the op writes b: trem and trems
// on i32 (in-place f32 conversions, TRem.hpp, TRemS.hpp), tadddeqrelu
// always (its relu lands in b, TAddDeqRelu.hpp); not trem on f32.
func TestInPlaceOperandWrites(t *testing.T) {
	const kernel = `const N = 64
gm X : %[1]s [1, N] = random(seed=2, lo=1, hi=8)
gm O : %[1]s [1, N]

kernel k : aiv {
    tile %%a : vec %[1]s [1, N]
    tile %%b : vec %[1]s [1, N]
    tile %%d : vec %[2]s [1, N]
    tile %%w : vec %[1]s [1, 128]
    tload %%a, @X[0, 0]
    tload %%b, @X[0, 0]
    set_flag MTE2, V, 0
    wait_flag MTE2, V, 0
    set_flag MTE2, MTE3, 0
    wait_flag MTE2, MTE3, 0
    tstore @O[0, 0], %%b
    %[3]s
}
launch ranks=1 {
    run k blocks=1
}
`
	for _, tc := range []struct {
		dt, dst, op string
		want        []string
	}{
		{"i32", "i32", "trem %d, %a, %b, %w", []string{hazard.KindWAR}},
		{"f32", "f32", "trem %d, %a, %b, %w", nil},
		{"i32", "i32", "trems %d, %b, 3, %w", []string{hazard.KindWAR}},
		{"f32", "f32", "trems %d, %b, 3.0, %w", nil},
		{"i32", "f16", "tadddeqrelu %d, %a, %b, 0.5, %w", []string{hazard.KindWAR}},
	} {
		t.Run(tc.dt+" "+tc.op, func(t *testing.T) {
			checkKinds(t, fmt.Sprintf(kernel, tc.dt, tc.dst, tc.op), tc.want)
		})
	}
}

// checkKinds lints src timing-only and compares the kinds of its findings
// above note severity, in order, with want.
func checkKinds(t *testing.T, src string, want []string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "k.pto")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	obj, errs := asm.Assemble(fe, path, nil)
	if errs.HasErrors() {
		t.Fatalf("assemble: %v", errs)
	}
	d := runDetector(t, obj, machine.Options{TimingOnly: true})
	var got []string
	for _, f := range d.Findings() {
		if f.Severity != hazard.SevNote.String() {
			got = append(got, f.Kind)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("findings %v, want %v\n%+v", got, want, d.Findings())
	}
}
