package hazard_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
	"github.com/ptoasm/ptoasm/machine/hazard"
)

// vbarKernel is a one-core V kernel whose inputs are loaded and ordered
// before body, so that body's findings are the body's own.
const vbarKernel = `const N = 64
gm X : f32 [1, N] = random(seed=1, lo=-1, hi=1)
gm I : i32 [1, N] = random(seed=2, lo=0, hi=8)
gm U : u32 [1, N] = random(seed=3, lo=0, hi=64)
kernel k : aiv {
    tile %x : vec f32 [1, N]
    tile %y : vec f32 [1, N]
    tile %z : vec f32 [1, N]
    tile %a : vec i32 [1, N]
    tile %b : vec i32 [1, N]
    tile %d : vec i32 [1, N]
    tile %ix : vec u32 [1, N]
    tile %mk : vec u8 [1, N]
    tload %x, @X[0, 0]
    tload %y, @X[0, 0]
    tload %a, @I[0, 0]
    tload %b, @I[0, 0]
    tload %ix, @U[0, 0]
    set_flag MTE2, V, 0
    wait_flag MTE2, V, 0
    tcmps %mk, %x, 0.0 #cmp=gt
    tmuls %z, %x, 1.0
    tadd %d, %a, %b
    pipe_barrier V
BODY
}
launch ranks=1 {
    run k blocks=1
}
`

// The internal pipe_barrier(PIPE_V) of composite ops (asm.VBarrier, docs/isa.md
// "Internal barriers") orders exactly the accesses on its far side: per class
// of row (a barrier before every access, after every access, in between, and
// one taken only on a condition) a dependence it covers needs no manual
// barrier and one it does not cover is still reported.
func TestInternalBarrierClasses(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       []string // finding kinds
	}{
		// tsel: every access after its first barrier.
		{"tsel reads what the op before wrote", "tadds %y, %x, 1.0\ntsel %z, %mk, %x, %y", nil},
		{"tsel's accesses are not ordered before later ops", "tsel %z, %mk, %x, %y\ntadds %y, %z, 1.0", []string{hazard.KindRAW, hazard.KindWAR}},
		// tcolmax: a barrier after every access.
		{"tcolmax's read is ordered before a later write", "tcolmax %z, %x\ntadds %x, %y, 1.0", nil},
		{"tcolmax's result is ordered before a later reader", "tcolmax %z, %x\ntadds %y, %z, 1.0", nil},
		{"tcolmax reads what the op before wrote", "tadds %x, %y, 1.0\ntcolmax %z, %x", []string{hazard.KindRAW}},
		// txor: a and b before the last barrier, dst after the first.
		{"txor's reads are ordered before a later write", "txor %d, %a, %b\ntadd %a, %b, %b", nil},
		{"txor's dst write is ordered after an earlier reader", "tadd %a, %d, %b\ntxor %d, %a, %b", []string{hazard.KindRAW}},
		{"txor's dst is not ordered before a later reader", "txor %d, %a, %b\ntadd %b, %d, %d", []string{hazard.KindRAW}},
		// tgather: idx read before the barrier, a read after it.
		{"tgather reads a written just before", "tadds %y, %x, 1.0\ntgather %z, %y, %ix", nil},
		{"tgather reads idx before its barrier", "tmov.v2v %ix, %ix\ntgather %z, %y, %ix", []string{hazard.KindRAW}},
		// tcmps: the barrier only for #cmp=ne.
		{"tcmps ne: a later write of a is ordered", "tcmps %mk, %y, 0.0 #cmp=ne\ntadds %y, %x, 1.0", nil},
		{"tcmps eq: no barrier inside", "tcmps %mk, %y, 0.0 #cmp=eq\ntadds %y, %x, 1.0", []string{hazard.KindWAR}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := "    " + strings.ReplaceAll(tc.body, "\n", "\n    ")
			path := filepath.Join(t.TempDir(), "k.pto")
			if err := os.WriteFile(path, []byte(strings.Replace(vbarKernel, "BODY", body, 1)), 0o644); err != nil {
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
			if !slices.Equal(got, tc.want) {
				t.Errorf("findings %v, want %v\n%+v", got, tc.want, d.Findings())
			}
		})
	}
}
