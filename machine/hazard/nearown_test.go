package hazard

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/parser"
	"github.com/ptoasm/ptoasm/parser/mlir"
)

// nearPTO is a one-core vector kernel whose body is body: %x is loaded and
// handed to V first, %y is stored after V.
func nearPTO(body string) string {
	return `gm X : f32 [16, 64] = random(seed=1, lo=-1, hi=1)
gm Y : f32 [16, 64] = zero
kernel k : aiv {
    tile %x : vec f32 [16, 64]
    tile %y : vec f32 [16, 64]
    tile %z : vec f32 [16, 64]
    tload %x, @X[0, 0]
    set_flag MTE2, V, 0
    wait_flag MTE2, V, 0
` + body + `    set_flag V, MTE3, 0
    wait_flag V, MTE3, 0
    tstore @Y[0, 0], %y
}
launch ranks=1 { run k blocks=1 }
`
}

// repeat is n copies of line.
func repeat(n int, line ...string) string {
	return strings.Repeat(strings.Join(line, ""), n)
}

// TestSamePipeNearest: n dependent ops of one pipe with no pipe_barrier
// between them are reported as each access against its pipe's nearest
// conflicting access before it (the pair a barrier between them fixes),
// not as every pair: n(n-1)/2 WAWs and RAWs before (seen failing on
// 494d256: 190 WAWs for 20 writes). A barrier between two of them leaves
// no pair across it. Other pipes' races with each site stay.
func TestSamePipeNearest(t *testing.T) {
	const n = 20
	const first = 10 // the body's first line
	tests := []struct {
		name string
		body string
		// want counts the same-pipe findings by kind; cross the others.
		want  map[string]int
		cross int
		// step is the lines from an access to its nearest conflicting one
		// of the same kind (0: not checked).
		step map[string]int
	}{
		{"waw", repeat(n, "    tadds %y, %x, 1.0\n"),
			map[string]int{KindWAW: n - 1}, 0, map[string]int{KindWAW: 1}},
		{"in place", repeat(n, "    tadds %x, %x, 1.0\n"),
			map[string]int{KindRAW: n - 1, KindWAR: n - 1}, 0, map[string]int{KindRAW: 1, KindWAR: 1}},
		{"write then read", repeat(n, "    tadds %y, %x, 1.0\n", "    tadds %z, %y, 1.0\n"),
			// %y's WAWs are its WARs (the read between two writes),
			// so the WAWs are %z's.
			map[string]int{KindWAW: n - 1, KindRAW: n, KindWAR: n - 1}, 0, map[string]int{KindWAW: 2, KindRAW: 1, KindWAR: 1}},
		{"one write, n reads", "    tadds %y, %x, 1.0\n" + repeat(n, "    tadds %z, %y, 1.0\n"),
			map[string]int{KindWAW: n - 1, KindRAW: n}, 0, map[string]int{KindWAW: 1}},
		// A barrier after the tenth write: the WAW across it is gone,
		// and no write before it pairs with one after.
		{"barrier", repeat(n/2, "    tadds %y, %x, 1.0\n") + "    pipe_barrier V\n" + repeat(n/2, "    tadds %y, %x, 1.0\n"),
			map[string]int{KindWAW: n - 2}, 0, map[string]int{KindWAW: 1}},
		// MTE2's loads of one tile: n-1 same-pipe WAWs (a note), and V's
		// read after a flag from the first, and MTE3's store, race every
		// later load (a cross-pipe RAW per load site and reader: another
		// agent's nearest would follow timing).
		{"loads", "    tload %y, @X[0, 0]\n    set_flag MTE2, V, 1\n    wait_flag MTE2, V, 1\n" + repeat(n-1, "    tload %y, @X[0, 0]\n") + "    tadds %z, %y, 1.0\n",
			map[string]int{KindWAW: n - 1}, 2 * (n - 1), nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			obj, errs := asm.Assemble(srcFE(map[string]string{"t.pto": nearPTO(tc.body)}), "t.pto", nil)
			if errs.HasErrors() {
				t.Fatal(errs)
			}
			got, cross := map[string]int{}, 0
			for _, f := range runLint(t, obj, true).Findings() {
				if !IsRace(f.Kind) || f.First.Line < first {
					continue // the store's races with the last writes, etc.
				}
				if !strings.HasPrefix(f.Message, "same-pipe") {
					cross++
					continue
				}
				got[f.Kind]++
				if s := tc.step[f.Kind]; s > 0 && f.Second.Line-f.First.Line != s {
					t.Errorf("%s %d, %d: not the nearest pair (%d lines apart, want %d)", f.Kind, f.First.Line, f.Second.Line, f.Second.Line-f.First.Line, s)
				}
				if f.Count != 1 {
					t.Errorf("%s %d, %d: count %d, want 1 (one pipe)", f.Kind, f.First.Line, f.Second.Line, f.Count)
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) || cross != tc.cross {
				t.Errorf("same-pipe %v, cross-pipe %d; want %v, %d", got, cross, tc.want, tc.cross)
			}
		})
	}
}

// tmovMLIR is a PTOAS cube kernel in the corpus's style whose first
// pto.tmov (L1 to L0A) is repeated n times, as a fuzzed corpus kernel was.
func tmovMLIR(n int) string {
	const mat = `!pto.tile_buf<loc=mat, dtype=bf16, rows=16, cols=128, v_row=16, v_col=128, blayout=col_major, slayout=row_major, fractal=512, pad=0>`
	const left = `!pto.tile_buf<loc=left, dtype=bf16, rows=16, cols=128, v_row=16, v_col=128, blayout=col_major, slayout=row_major, fractal=512, pad=0>`
	var b strings.Builder
	b.WriteString(`module {
  func.func @k(%arg0: !pto.ptr<bf16>) {
  %c16 = arith.constant 16 : index
  %c128 = arith.constant 128 : index
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %5 = pto.make_tensor_view %arg0, shape = [%c16, %c128], strides = [%c128, %c1] : !pto.tensor_view<?x?xbf16>
  %0 = pto.alloc_tile : ` + mat + `
  %2 = pto.alloc_tile : ` + left + `
  %8 = pto.partition_view %5, offsets = [%c0, %c0], sizes = [%c16, %c128] : !pto.tensor_view<?x?xbf16> -> !pto.partition_tensor_view<16x128xbf16>
  pto.tload ins(%8 : !pto.partition_tensor_view<16x128xbf16>) outs(%0 : ` + mat + `)
`)
	for range n {
		b.WriteString("  pto.tmov ins(%0 : " + mat + ") outs(%2 : " + left + ")\n")
	}
	b.WriteString("  return\n  }\n}\n")
	return b.String()
}

// mlirFE reads the files of mem as PTOAS MLIR.
func mlirFE(mem map[string]string) asm.Frontend {
	fe := mlir.Frontend(mlir.Options{Arch: "a3"})
	fe.ParseExpr = parser.ParseExpr
	fe.ReadFile = func(name string) ([]byte, error) { return []byte(mem[name]), nil }
	return fe
}

// lintTmov lints tmovMLIR(n) and returns its findings' kinds and messages.
func lintTmov(t *testing.T, n int) []Finding {
	obj, errs := asm.Assemble(mlirFE(map[string]string{"t.pto": tmovMLIR(n)}), "t.pto", nil)
	if errs.HasErrors() {
		t.Fatal(errs)
	}
	d := New(Options{Serial: true})
	lintRun(t, obj, d)
	return d.Findings()
}

// TestSamePipeNearestMLIR: the MLIR kernel of n repeated tmovs reports
// n-1 same-pipe WAWs (each tmov and the one before it) and a RAW of the
// load per tmov; 4 950 WAWs at n = 100 on 494d256.
func TestSamePipeNearestMLIR(t *testing.T) {
	const n = 100
	waw, raw := 0, 0
	for _, f := range lintTmov(t, n) {
		switch {
		case f.Kind == KindWAW && strings.HasPrefix(f.Message, "same-pipe"):
			waw++
			if f.Second.Line != f.First.Line+1 {
				t.Errorf("WAW %d, %d: not neighbours", f.First.Line, f.Second.Line)
			}
		case f.Kind == KindRAW:
			raw++
		}
	}
	if waw != n-1 || raw != n {
		t.Errorf("%d same-pipe WAWs and %d RAWs, want %d and %d", waw, raw, n-1, n)
	}
}
