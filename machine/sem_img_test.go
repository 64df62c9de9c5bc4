package machine

import (
	"fmt"
	"math"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/memory"
)

// The instructions of sem_img.go, run as programs through the machine and
// checked against references computed here: a gather/scatter by walking the
// index list, a convolution by its definition (img2col + matmul must equal
// it, padding value included), quantisation by the formula in f32 steps.

func readGM(t *testing.T, m *Machine, name string) (vals []float64, ti *asm.TensorInfo) {
	t.Helper()
	buf, ti := m.TensorData(name, 0)
	if buf == nil {
		t.Fatalf("no tensor %s", name)
	}
	n := ti.Elems()
	es := int64(ti.DType.Size())
	for k := int64(0); k < n; k++ {
		bits, err := buf.LoadBits(ti.DType, k*es)
		if err != nil {
			t.Fatal(err)
		}
		if ti.DType.IsFloat() {
			vals = append(vals, decodeF(ti.DType, bits))
		} else {
			vals = append(vals, float64(memory.DecodeInt(ti.DType, bits)))
		}
	}
	return vals, ti
}

// gsCase is one mgather or mscatter run: a table of tr×tc, a data tile of
// r×c, indices by formula.
type gsCase struct {
	name           string
	scatter        bool
	dt             string
	elem           bool
	oob, atomic    string
	tr, tc, r, c   int
	idx            func(r, c int) int64 // the index at (r, c) of the index tile
	err            string
	wantTableStart int // element the table starts at (its GM operand)
}

func (tc gsCase) src() string {
	dt := tc.dt
	es := map[string]int{"f32": 4, "f16": 2, "i8": 1, "i32": 4}[dt]
	per := 32 / es
	pad := func(n, per int) int { return (n + per - 1) / per * per }
	ir, ic := 1, tc.r
	if tc.elem {
		ir, ic = tc.r, tc.c
	}
	attrs := ""
	if tc.elem {
		attrs += " #coalesce=elem"
	}
	if tc.oob != "" {
		attrs += " #oob=" + tc.oob
	}
	if tc.atomic != "" {
		attrs += " #atomic=" + tc.atomic
	}
	sr, sc := tc.wantTableStart/tc.tc, tc.wantTableStart%tc.tc
	var b strings.Builder
	fmt.Fprintf(&b, "gm T : %s [%d, %d] = expr((i * 7 + j) %% 50)\n", dt, tc.tr, tc.tc)
	fmt.Fprintf(&b, "gm S : %s [%d, %d] = expr(i * 3 + j + 60)\n", dt, tc.r, tc.c)
	fmt.Fprintf(&b, "gm O : %s [%d, %d] = fill(99)\n", dt, tc.r, tc.c)
	fmt.Fprintf(&b, "gm I : i32 [%d, %d] = fill(0)\n", ir, ic)
	b.WriteString("kernel k : aiv {\n")
	fmt.Fprintf(&b, "    tile %%i : vec i32 [%d, %d] valid [%d, %d]\n", ir, pad(ic, 8), ir, ic)
	fmt.Fprintf(&b, "    tile %%d : vec %s [%d, %d] valid [%d, %d]\n", dt, tc.r, pad(tc.c, per), tc.r, tc.c)
	b.WriteString("    tload %i, @I[0, 0]\n")
	if tc.scatter {
		b.WriteString("    tload %d, @S[0, 0]\n")
		fmt.Fprintf(&b, "op: mscatter @T[%d, %d], %%d, %%i%s\n", sr, sc, attrs)
	} else {
		fmt.Fprintf(&b, "op: mgather %%d, @T[%d, %d], %%i%s\n", sr, sc, attrs)
		b.WriteString("    tstore @O[0, 0], %d\n")
	}
	b.WriteString("}\nlaunch ranks=1 {\n    run k blocks=1\n}\n")
	return b.String()
}

func TestMGatherMScatter(t *testing.T) {
	perm := func(r, c int) int64 { return int64((5*r + 3) % 8) } // 3, 0, 5, 2, 7, 4, 1, 6
	over := func(r, c int) int64 { return int64([]int{2, 9, 0, 11, 2}[r]) }
	elemIdx := func(r, c int) int64 { return int64((r*13 + c*5) % 70) }
	cases := []gsCase{
		{name: "gather rows f32", dt: "f32", tr: 8, tc: 16, r: 8, c: 16, idx: perm},
		{name: "gather rows f16 narrow", dt: "f16", tr: 8, tc: 32, r: 8, c: 16, idx: perm},
		{name: "gather rows i8", dt: "i8", tr: 8, tc: 32, r: 8, c: 32, idx: perm},
		{name: "gather rows from row 2", dt: "f32", tr: 8, tc: 16, r: 5, c: 8, idx: func(r, c int) int64 { return int64(5 - r) }, wantTableStart: 2*16 + 4},
		{name: "gather clamp", dt: "f32", tr: 8, tc: 16, r: 5, c: 16, idx: over, oob: "clamp"},
		{name: "gather wrap", dt: "f16", tr: 8, tc: 16, r: 5, c: 16, idx: over, oob: "wrap"},
		{name: "gather zero", dt: "i32", tr: 8, tc: 16, r: 5, c: 16, idx: over, oob: "zero"},
		{name: "gather undefined past the table", dt: "f32", tr: 8, tc: 16, r: 5, c: 16, idx: over, err: "index 9 at idx[0, 1] is outside the table"},
		{name: "gather elem f32", dt: "f32", elem: true, tr: 4, tc: 16, r: 3, c: 8, idx: elemIdx, oob: "wrap"},
		{name: "gather elem i8 zero", dt: "i8", elem: true, tr: 2, tc: 32, r: 2, c: 32, idx: elemIdx, oob: "zero"},
		{name: "scatter rows f32", scatter: true, dt: "f32", tr: 8, tc: 16, r: 8, c: 16, idx: perm},
		{name: "scatter rows last write wins", scatter: true, dt: "f16", tr: 8, tc: 16, r: 5, c: 16, idx: over, oob: "skip"},
		{name: "scatter rows atomic add", scatter: true, dt: "f32", tr: 8, tc: 16, r: 5, c: 16, idx: over, oob: "clamp", atomic: "add"},
		{name: "scatter elem i8 atomic wraps", scatter: true, dt: "i8", elem: true, tr: 2, tc: 32, r: 2, c: 32, idx: func(r, c int) int64 { return int64(c % 3) }, atomic: "add"},
		{name: "scatter elem past the table", scatter: true, dt: "f32", elem: true, tr: 2, tc: 16, r: 1, c: 8, idx: func(r, c int) int64 { return int64(c * 5) }, err: "index 35 at idx[0, 7] is outside the table"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { runGS(t, tc) })
	}
}

func runGS(t *testing.T, tc gsCase) {
	noteExecuted(asm.OpMgather)
	noteExecuted(asm.OpMscatter)
	src := tc.src()
	obj := assemble(t, src)
	// The index tensor gets the case's indices.
	rec := &recorder{kinds: map[EventKind]bool{EvExec: true}}
	m, err := New(obj, Options{Observers: []Observer{rec}})
	if err != nil {
		t.Fatal(err)
	}
	ibuf, iti := m.TensorData("I", 0)
	ir, ic := int(iti.Shape[0]), int(iti.Shape[1])
	idx := make([][]int64, ir)
	for r := 0; r < ir; r++ {
		for c := 0; c < ic; c++ {
			x := tc.idx(pick(tc.elem, r, c), pick(tc.elem, c, 0))
			if !tc.elem {
				x = tc.idx(c, 0)
			}
			idx[r] = append(idx[r], x)
			if err := ibuf.StoreI(asm.I32, int64(r*ic+c)*4, x); err != nil {
				t.Fatal(err)
			}
		}
	}
	_, runErr := m.Run()
	if tc.err != "" {
		line := strings.Count(src[:strings.Index(src, "op:")], "\n") + 1
		at := fmt.Sprintf(".pto:%d:", line)
		if runErr == nil || !strings.Contains(runErr.Error(), tc.err) || !strings.Contains(runErr.Error(), at) {
			t.Fatalf("error %v, want one at the op (%s) saying %q", runErr, at, tc.err)
		}
		return
	}
	if runErr != nil {
		t.Fatal(runErr)
	}
	// Reference: the initial tensors by their formulas, then the walk.
	tv, ti := readGM(t, m, "T")
	es := int64(ti.DType.Size())
	dt := ti.DType
	round := func(x float64) float64 {
		if dt.IsFloat() {
			return memory.Round(dt, x, memory.RoundRint)
		}
		return float64(memory.DecodeInt(dt, memory.EncodeInt(dt, int64(x))))
	}
	table := make([]float64, tc.tr*tc.tc)
	for i := 0; i < tc.tr; i++ {
		for j := 0; j < tc.tc; j++ {
			table[i*tc.tc+j] = float64((i*7 + j) % 50)
		}
	}
	sv := func(r, c int) float64 { return float64(r*3 + c + 60) }
	capRows := int64(tc.tr - tc.wantTableStart/tc.tc)
	capEl := int64(tc.tr*tc.tc - tc.wantTableStart)
	remap := func(x, capacity int64) (int64, bool) {
		if x < capacity {
			return x, true
		}
		switch tc.oob {
		case "clamp":
			return capacity - 1, true
		case "wrap":
			return x % capacity, true
		}
		return 0, false
	}
	type span struct{ lo, hi int64 }
	var want []span
	base, _ := m.TensorBase("T", 0)
	out := make([][]float64, tc.r)
	for r := range out {
		out[r] = make([]float64, tc.c)
	}
	for r := 0; r < tc.r; r++ {
		for c := 0; c < tc.c; c++ {
			var el int64
			var ok bool
			if tc.elem {
				el, ok = remap(idx[r][c], capEl)
				el += int64(tc.wantTableStart)
			} else {
				var k int64
				k, ok = remap(idx[0][r], capRows)
				el = int64(tc.wantTableStart) + k*int64(tc.tc) + int64(c)
			}
			if !ok {
				continue // zero (gather) or skip (scatter)
			}
			if tc.elem || c == 0 {
				n := int64(1)
				if !tc.elem {
					n = int64(tc.c)
				}
				want = append(want, span{base + el*es, base + (el+n)*es})
			}
			if tc.scatter {
				if tc.atomic == "add" {
					table[el] = round(table[el] + sv(r, c))
				} else {
					table[el] = sv(r, c)
				}
			} else {
				out[r][c] = table[el]
			}
		}
	}
	if tc.scatter {
		for k := range table {
			if !same(tv[k], round(table[k])) {
				t.Errorf("T[%d] = %v, want %v", k, tv[k], round(table[k]))
			}
		}
	} else {
		ov, _ := readGM(t, m, "O")
		for r := 0; r < tc.r; r++ {
			for c := 0; c < tc.c; c++ {
				if !same(ov[r*tc.c+c], round(out[r][c])) {
					t.Errorf("O[%d, %d] = %v, want %v", r, c, ov[r*tc.c+c], round(out[r][c]))
				}
			}
		}
	}
	// The detector's view: exactly the GM bytes the indices chose.
	var got []span
	for _, ev := range rec.evs {
		if ev.Op == nil || ev.Op.Info == nil || (ev.Op.Info.Op != asm.OpMgather && ev.Op.Info.Op != asm.OpMscatter) {
			continue
		}
		for _, a := range ev.Accesses {
			if a.Space == asm.GM {
				if a.Write != tc.scatter || a.Atomic != (tc.atomic == "add") {
					t.Errorf("GM access %+v: write %v atomic %v", a, a.Write, a.Atomic)
				}
				got = append(got, span{a.Lo, a.Hi})
			}
		}
	}
	norm := func(s []span) []span {
		sort.Slice(s, func(i, j int) bool { return s[i].lo < s[j].lo || s[i].lo == s[j].lo && s[i].hi < s[j].hi })
		var o []span
		for _, x := range s {
			if n := len(o); n > 0 && o[n-1].hi >= x.lo {
				o[n-1].hi = max(o[n-1].hi, x.hi)
				continue
			}
			o = append(o, x)
		}
		return o
	}
	if g, w := norm(got), norm(want); fmt.Sprint(g) != fmt.Sprint(w) {
		t.Errorf("GM ranges %v, want %v", g, w)
	}
}

// mmTail ends the img2col tests' kernels: the weights (%wm) into L0B, the
// matmul of the patches (%a) into %c, its store to @O, and the launch.
const mmTail = `    tmov %b, %wm
    set_flag MTE1, M, 0
    wait_flag MTE1, M, 0
    tmatmul %c, %a, %b
    set_flag M, FIX, 0
    wait_flag M, FIX, 0
    tstore @O[0, 0], %c
}
launch ranks=1 {
    run k blocks=1
}
`

// TestConvImg2col runs a 3×3 convolution with padding as img2col + matmul
// and checks it against the convolution's definition; the padding value is
// not zero, so every padded tap shows.
func TestConvImg2col(t *testing.T) {
	const H, W, C, N = 6, 5, 16, 16
	for _, tc := range []struct {
		name                   string
		sh, sw, dh, dw, pl, pt int
		pad                    float64
	}{
		{"stride 1 pad 1", 1, 1, 1, 1, 1, 1, 0.5},
		{"stride 2 dilation 2 pad 2", 2, 1, 2, 1, 2, 1, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kh, kw := 3, 3
			outH := (H+2*tc.pt-tc.dh*(kh-1)-1)/tc.sh + 1
			outW := (W+2*tc.pl-tc.dw*(kw-1)-1)/tc.sw + 1
			M := outH * outW
			Mp := (M + 15) / 16 * 16
			K := kh * kw * C
			src := fmt.Sprintf(`
gm F : f16 [%[1]d, %[2]d] = expr((i * 5 + j * 3) %% 17 - 8)
gm Wt : f16 [%[3]d, %[4]d] = expr((i * 7 + j) %% 13 - 6)
gm O : f32 [%[5]d, %[4]d] = poison
kernel k : aic {
    tile %%fm : mat f16 [%[1]d, %[2]d]
    tile %%wm : mat f16 [%[3]d, %[4]d]
    tile %%a : left f16 [%[6]d, %[3]d] valid [%[5]d, %[3]d]
    tile %%b : right f16 [%[3]d, %[4]d]
    tile %%c : acc f32 [%[6]d, %[4]d] valid [%[5]d, %[4]d]
    tload %%fm, @F[0, 0]
    tload %%wm, @Wt[0, 0]
    setfmatrix %[7]d, %[8]d, %[9]d, %[9]d, %[10]d, %[10]d
    set_img2col_padding %[11]v
    set_flag MTE2, MTE1, 0
    wait_flag MTE2, MTE1, 0
    timg2col %%a, %%fm, 0, 0 #kh=3 #kw=3 #sh=%[12]d #sw=%[13]d #dh=%[14]d #dw=%[15]d
`, H*W, C, K, N, M, Mp, H, W, tc.pl, tc.pt, tc.pad, tc.sh, tc.sw, tc.dh, tc.dw) + mmTail
			noteExecuted(asm.OpTimg2col)
			m, _, err := runObj(t, assemble(t, src), Options{})
			if err != nil {
				t.Fatal(err)
			}
			f16v := func(x float64) float64 { return memory.Round(asm.F16, x, memory.RoundRint) }
			x := func(h, w, c int) float64 { return f16v(float64(((h*W+w)*5+c*3)%17 - 8)) }
			wt := func(k, n int) float64 { return f16v(float64((k*7+n)%13 - 6)) }
			ov, _ := readGM(t, m, "O")
			for oh := 0; oh < outH; oh++ {
				for ow := 0; ow < outW; ow++ {
					for n := 0; n < N; n++ {
						sum := 0.0
						for i := 0; i < kh; i++ {
							for j := 0; j < kw; j++ {
								ih, iw := oh*tc.sh+i*tc.dh-tc.pt, ow*tc.sw+j*tc.dw-tc.pl
								for c := 0; c < C; c++ {
									v := tc.pad
									if ih >= 0 && ih < H && iw >= 0 && iw < W {
										v = x(ih, iw, c)
									}
									sum += v * wt((i*kw+j)*C+c, n)
								}
							}
						}
						got := ov[(oh*outW+ow)*N+n]
						if math.Abs(got-sum) > 1e-3*math.Max(1, math.Abs(sum)) {
							t.Fatalf("O[(%d, %d), %d] = %v, want %v", oh, ow, n, got, sum)
						}
					}
				}
			}
		})
	}
}

// TestFixQuant stores one f32 accumulator three ways: scalar-quantised to
// i8 (set_quant_scalar + tstore.q), vector-quantised to i8 with per-column
// parameters carrying offsets and the unsigned range (tstore.fp). (A scaled
// f32→f16 has no quantised op on A2/A3: TestQuantPairs.) The reference applies the
// formula in f32 steps: x·scale, + offset, round half to even, clamp.
func TestFixQuant(t *testing.T) {
	obj := assembleFile(t, "testdata/quant.pto")
	m, err := New(obj, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Column n: scale 0.25·(n+1) (bits 13..31 keep it exact), offset 3n,
	// signed for even columns, unsigned for odd ones.
	pbuf, _ := m.TensorData("P", 0)
	for n := 0; n < 16; n++ {
		w := uint64(math.Float32bits(0.25*float32(n+1))) | uint64(3*n)<<37
		if n%2 == 0 {
			w |= 1 << 46
		}
		if err := pbuf.StoreBits(asm.U64, int64(n)*8, w); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := m.Run(); err != nil {
		t.Fatal(err)
	}
	q1, _ := readGM(t, m, "Q1")
	q2, _ := readGM(t, m, "Q2")
	a := func(i, k int) float64 { return float64((i*5+k*3)%17 - 8) }
	b := func(k, j int) float64 { return float64((k*7+j)%13 - 6) }
	clamp := func(x, lo, hi float64) float64 { return math.Max(lo, math.Min(hi, x)) }
	for i := 0; i < 16; i++ {
		for j := 0; j < 16; j++ {
			acc := 0.0
			for k := 0; k < 16; k++ {
				acc += a(i, k) * b(k, j)
			}
			// Scalar i8: scale 0.37 as an f32, product rounded to f32.
			p := float64(float32(acc * float64(float32(0.37))))
			if want := clamp(math.RoundToEven(p), -128, 127); q1[i*32+j] != want {
				t.Errorf("scalar i8 (%d, %d): %v, want %v (acc %v)", i, j, q1[i*32+j], want, acc)
			}
			// Vector i8: column j's scale, offset and range; an unsigned
			// result lands in the i8 tensor as its bit pattern.
			v := math.RoundToEven(float64(float32(acc*0.25*float64(j+1))) + float64(3*j))
			want := clamp(v, -128, 127)
			if j%2 == 1 {
				want = float64(int8(uint8(clamp(v, 0, 255))))
			}
			if q2[i*32+j] != want {
				t.Errorf("vector i8 (%d, %d): %v, want %v (acc %v)", i, j, q2[i*32+j], want, acc)
			}
		}
	}
	// The same parameters through the vector register and into L1: Q4
	// and Q5 (tmov.fp) equal Q2, Q6 is textract.fp's window from column 8,
	// Q7 holds tinsert.fp's copy at column 8 (fp[j] for source column j, so
	// equal to Q2 there too), Q8 (tmov.q after set_quant_scalar 0.37) is Q1.
	q4, _ := readGM(t, m, "Q4")
	q5, _ := readGM(t, m, "Q5")
	q6, _ := readGM(t, m, "Q6")
	q7, _ := readGM(t, m, "Q7")
	q8, _ := readGM(t, m, "Q8")
	for i := 0; i < 16; i++ {
		for j := 0; j < 16; j++ {
			k := i*32 + j
			if q4[k] != q2[k] || q5[k] != q2[k] || q7[k+8] != q2[k] || q8[k] != q1[k] {
				t.Errorf("(%d, %d): tstore.q vector %v, tmov.fp %v, tinsert.fp %v, want %v; tmov.q %v, want %v", i, j, q4[k], q5[k], q7[k+8], q2[k], q8[k], q1[k])
			}
			if j < 8 && q6[k] != q2[k+8] {
				t.Errorf("textract.fp (%d, %d): %v, want %v", i, j, q6[k], q2[k+8])
			}
		}
	}
	for _, o := range []asm.Opcode{asm.OpTstoreQ, asm.OpTstoreFp, asm.OpTmovFp, asm.OpTmovQ, asm.OpTextractFp, asm.OpTinsertFp} {
		noteExecuted(o)
	}
}

// TestFixQuantEdges checks the element formula's edges directly: NaN into
// an 8-bit integer, infinities into f16, ties to even, the vector scale's
// truncated mantissa, the pairs A2/A3 has no mode for.
func TestFixQuantEdges(t *testing.T) {
	sc := func(s float32, sign bool) uint64 {
		w := uint64(math.Float32bits(s))
		if sign {
			w |= 1 << 46
		}
		return w
	}
	for _, tc := range []struct {
		name     string
		x        float64
		from, to asm.DType
		w        uint64
		vector   bool
		want     float64
		err      string
	}{
		{"nan to i8 is 0", math.NaN(), asm.F32, asm.I8, sc(1, true), false, 0, ""},
		{"tie to even", 2.5, asm.F32, asm.I8, sc(1, true), false, 2, ""},
		{"tie to even odd", -3.5, asm.F32, asm.I8, sc(1, true), false, -4, ""},
		{"i8 saturates", 1e9, asm.F32, asm.I8, sc(1, true), false, 127, ""},
		{"u8 saturates low", -5, asm.F32, asm.U8, sc(1, false), false, 0, ""},
		{"i32 to u8 with offset", 100, asm.I32, asm.U8, sc(2, false) | 60<<37, false, 255, ""},
		{"i32 to f16 saturates", 1 << 30, asm.I32, asm.F16, sc(1, false), false, 65504, ""},
		{"f32 inf to f16 stays inf", math.Inf(1), asm.F32, asm.F16, sc(1, false), false, math.Inf(1), ""},
		{"f32 nan to f16 stays nan", math.NaN(), asm.F32, asm.F16, sc(1, false), false, math.NaN(), ""},
		{"f32 to bf16", 1.00390625, asm.F32, asm.BF16, sc(1, false), false, 1, ""},
		// 64·(1 + 2^-7 + 2^-11) = 64.53 rounds to 65 with the full f32 scale
		// (scalar), but the vector parameter's 10-bit M1 mantissa drops 2^-11:
		// 64.5, a tie, goes to 64.
		{"scalar scale full precision", 64, asm.F32, asm.I8, sc(1+1.0/128+1.0/2048, true), false, 65, ""},
		{"vector scale truncated", 64, asm.F32, asm.I8, sc(1+1.0/128+1.0/2048, true), true, 64, ""},
		{"no vector f32 to f16", 1, asm.F32, asm.F16, sc(1, false), true, 0, "no vector quantisation"},
		{"no f32 to i16", 1, asm.F32, asm.I16, sc(1, false), false, 0, "no scalar quantisation"},
		// i32→i16: the scale is not used; shift right by bits 32..35 plus one,
		// arithmetic (floor), then saturate.
		{"i32 to i16 shift 1", 1001, asm.I32, asm.I16, sc(7, false), false, 500, ""},
		{"i32 to i16 negative floors", -1001, asm.I32, asm.I16, sc(1, false), false, -501, ""},
		{"i32 to i16 field 15 shifts 16", 1<<20 + 5, asm.I32, asm.I16, sc(1, false) | 15<<32, false, 16, ""},
		{"i32 to i16 saturates high", 1 << 30, asm.I32, asm.I16, sc(1, false) | 2<<32, false, 32767, ""},
		{"i32 to i16 saturates low", -(1 << 30), asm.I32, asm.I16, sc(1, false) | 2<<32, true, -32768, ""},
		{"i32 to i16 max int", math.MaxInt32, asm.I32, asm.I16, sc(1, false) | 15<<32, true, 32767, ""},
		{"i32 to i16 min int", math.MinInt32, asm.I32, asm.I16, sc(1, false) | 15<<32, true, -32768, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := fixQuant(tc.x, tc.from, tc.to, tc.w, tc.vector)
			switch {
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Fatalf("err %v, want %q", err, tc.err)
			case tc.err != "":
				return
			case err != nil:
				t.Fatal(err)
			}
			got := float64(memory.DecodeInt(tc.to, b))
			if tc.to.IsFloat() {
				got = decodeF(tc.to, b)
			}
			if !same(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// TestFixQuantShift runs the i32→i16 shift modes end to end: an int8 GEMM's
// accumulator (sums past ±2^15, both signs) moved into L1 through the scalar
// register (#shift absent: field 0; #shift=9) and the scaling tile (field
// j%16 for column j, with scale and offset bits that must not matter), each
// checked against the sum computed here, shifted and clamped as pto-isa's
// reference generator does (textract_quant/gen_data.py). The assembler
// refuses a quantised tstore to i16, as a2a3/TStore.hpp's CheckAcc2gm does.
func TestFixQuantShift(t *testing.T) {
	obj := assembleFile(t, "testdata/quant_shift.pto")
	m, err := New(obj, Options{})
	if err != nil {
		t.Fatal(err)
	}
	pbuf, _ := m.TensorData("P", 0)
	for n := 0; n < 32; n++ {
		w := uint64(n%16)<<32 | uint64(math.Float32bits(3)) | uint64(n)<<37 | 1<<46
		if err := pbuf.StoreBits(asm.U64, int64(n)*8, w); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := m.Run(); err != nil {
		t.Fatal(err)
	}
	s1, _ := readGM(t, m, "S1")
	s2, _ := readGM(t, m, "S2")
	s3, _ := readGM(t, m, "S3")
	a := func(i, k int) int64 { return int64((i*37+k*11)%255 - 127) }
	b := func(k, j int) int64 { return int64((k*13+j*29)%255 - 127) }
	shift := func(x int64, n uint) float64 {
		v := x >> n // Go's >> on a signed integer is arithmetic
		if v > 32767 {
			v = 32767
		}
		if v < -32768 {
			v = -32768
		}
		return float64(v)
	}
	sat := 0
	for i := 0; i < 16; i++ {
		for j := 0; j < 32; j++ {
			var acc int64
			for k := 0; k < 32; k++ {
				acc += a(i, k) * b(k, j)
			}
			if acc>>1 > 32767 || acc>>1 < -32768 {
				sat++
			}
			k := i*32 + j
			if want := shift(acc, 1); s1[k] != want {
				t.Errorf("scalar shift 1 (%d, %d): %v, want %v (acc %d)", i, j, s1[k], want, acc)
			}
			if want := shift(acc, 10); s2[k] != want {
				t.Errorf("scalar shift 10 (%d, %d): %v, want %v (acc %d)", i, j, s2[k], want, acc)
			}
			if want := shift(acc, uint(j%16)+1); s3[k] != want {
				t.Errorf("vector shift %d (%d, %d): %v, want %v (acc %d)", j%16+1, i, j, s3[k], want, acc)
			}
		}
	}
	if sat == 0 {
		t.Error("no accumulator saturates at shift 1: the case does not test saturation")
	}
	// tstore.q from i32 to an i16 tensor: the assembler refuses it.
	src := strings.Replace(string(readTestdata(t, "testdata/quant_shift.pto")), "tmov.q %m1, %c", "tstore.q @S1[0, 0], %c", 1)
	if errs := assembleErrs(t, src); !strings.Contains(errs, "CheckAcc2gm") {
		t.Errorf("tstore.q i32→i16: %q, want the CheckAcc2gm refusal", errs)
	}
	noteExecuted(asm.OpTmovQ)
	noteExecuted(asm.OpTmovFp)
}

// TestImg2colDtypes reads timg2col's L0A tile back through a matmul by the
// identity, for each dtype A2/A3 takes, with asymmetric padding, a stride,
// a dilation, a non-zero posm and posk (reaching the second channel block),
// and M rows past the output pixels (they get the padding value). The
// reference walks TImg2col's formula (include/pto/cpu/TImg2col.hpp) pixel
// by pixel.
func TestImg2colDtypes(t *testing.T) {
	const H, W, kh, kw, sh, sw, dh, dw = 5, 6, 2, 3, 2, 1, 1, 2
	pl, pr, pt, pb := 1, 0, 2, 1
	outH := (H+pt+pb-dh*(kh-1)-1)/sh + 1
	outW := (W+pl+pr-dw*(kw-1)-1)/sw + 1
	for _, tc := range []struct {
		dt, acc string
		pad     float64
	}{
		{"f16", "f32", -2.5}, {"bf16", "f32", 3}, {"f32", "f32", 0.25}, {"i8", "i32", -7},
	} {
		t.Run(tc.dt, func(t *testing.T) {
			dt, _ := asm.ParseDType(tc.dt)
			c0 := 32 / dt.Size()
			C1 := 2
			K := kh * kw * c0
			posm, posk := 3, c0
			rows := outH*outW - posm + 2
			src := fmt.Sprintf(`
gm F : %[1]s [%[2]d, %[3]d] = expr((i * 5 + j * 3) %% 23 - 11)
gm Id : %[1]s [%[4]d, %[4]d] = expr(i == j)
gm O : %[5]s [%[6]d, %[4]d] = poison
kernel k : aic {
    tile %%fm : mat %[1]s [%[2]d, %[3]d]
    tile %%wm : mat %[1]s [%[4]d, %[4]d]
    tile %%a : left %[1]s [32, %[4]d] valid [%[6]d, %[4]d]
    tile %%b : right %[1]s [%[4]d, %[4]d]
    tile %%c : acc %[5]s [32, %[4]d] valid [%[6]d, %[4]d]
    tload %%fm, @F[0, 0]
    tload %%wm, @Id[0, 0]
    setfmatrix %[7]d, %[8]d, %[9]d, %[10]d, %[11]d, %[12]d
    set_img2col_padding %[13]v
    set_img2col_rpt 0, 1, 0
    set_flag MTE2, MTE1, 0
    wait_flag MTE2, MTE1, 0
    timg2col %%a, %%fm, %[14]d, %[15]d #kh=%[16]d #kw=%[17]d #sh=%[18]d #sw=%[19]d #dh=%[20]d #dw=%[21]d
`, tc.dt, C1*H*W, c0, K, tc.acc, rows, H, W, pl, pr, pt, pb, tc.pad, posm, posk, kh, kw, sh, sw, dh, dw) + mmTail
			noteExecuted(asm.OpTimg2col)
			m, _, err := runObj(t, assemble(t, src), Options{})
			if err != nil {
				t.Fatal(err)
			}
			round := func(x float64) float64 { return memory.Round(dt, x, memory.RoundRint) }
			pix := func(c1, h, w, c int) float64 { return round(float64((((c1*H+h)*W+w)*5+c*3)%23 - 11)) }
			ov, _ := readGM(t, m, "O")
			for r := 0; r < rows; r++ {
				for c := 0; c < K; c++ {
					mi, k := posm+r, posk+c
					want := round(tc.pad)
					if c1 := k / (c0 * kh * kw); mi < outH*outW && c1 < C1 {
						tap := (k % (c0 * kh * kw)) / c0
						i, j := tap/kw, tap%kw
						ih, iw := (mi/outW)*sh+i*dh-pt, (mi%outW)*sw+j*dw-pl
						if ih >= 0 && ih < H && iw >= 0 && iw < W {
							want = pix(c1, ih, iw, k%c0)
						}
					}
					if got := ov[r*K+c]; got != want {
						t.Fatalf("dst[%d, %d] (m %d, k %d) = %v, want %v", r, c, mi, k, got, want)
					}
				}
			}
		})
	}
}

func readTestdata(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestImg2colRepeatRefused: a set_img2col_rpt repeat time above 1 is
// refused at the timg2col that would use it, with the sources that leave
// the later repeats' placement undefined on A2/A3; 0 and 1 run.
func TestImg2colRepeatRefused(t *testing.T) {
	src := func(rpt int) string {
		return fmt.Sprintf(`gm F : f16 [16, 16] = expr(i + j)
kernel k : aic {
    tile %%fm : mat f16 [16, 16]
    tile %%a : left f16 [16, 16]
    tload %%fm, @F[0, 0]
    setfmatrix 4, 4, 0, 0, 0, 0
    set_img2col_rpt 0, %d, 0
    set_flag MTE2, MTE1, 0
    wait_flag MTE2, MTE1, 0
    timg2col %%a, %%fm, 0, 0
}
launch ranks=1 { run k blocks=1 }
`, rpt)
	}
	for _, rpt := range []int{0, 1, 2, 255} {
		_, _, err := runObj(t, assemble(t, src(rpt)), Options{})
		switch {
		case rpt <= 1 && err != nil:
			t.Errorf("repeat %d: %v", rpt, err)
		case rpt > 1 && (err == nil || !strings.Contains(err.Error(), "a2a3/TImg2col.hpp") || !strings.Contains(err.Error(), "dstStride")):
			t.Errorf("repeat %d: err %v, want the refusal citing its sources", rpt, err)
		}
	}
}

// TestMGatherMScatterNZ: NZ tables with NZ data tiles (MGatherRowNzImpl,
// MGatherElemNzImpl and the MScatter twins), per dtype. The reference reads
// and writes the table by logical (row, column), applies a scatter's writes
// in the header's order (Elem: column block of C0, then row, then column,
// which decides the survivor of colliding indices), and checks that the
// detector's GM accesses are exactly the bytes of the chosen elements.
func TestMGatherMScatterNZ(t *testing.T) {
	const TR, TC, R = 32, 64, 16
	for _, dt := range []string{"f32", "f16", "i8"} {
		for _, tc := range []struct {
			name          string
			scatter, elem bool
			oob           string
			idx           func(r, c int) int64
		}{
			{name: "gather rows", idx: func(r, c int) int64 { return int64((r*5 + 3) % TR) }},
			{name: "gather rows zero", oob: "zero", idx: func(r, c int) int64 { return int64(r*3 - 8) }},
			{name: "gather elem wrap", elem: true, oob: "wrap", idx: func(r, c int) int64 { return int64((r*67 + c*29) % (TR*TC + 100)) }},
			{name: "scatter rows", scatter: true, idx: func(r, c int) int64 { return int64((r*7 + 1) % TR) }},
			{name: "scatter elem collide", scatter: true, elem: true, idx: func(r, c int) int64 { return int64((r + c) % 37 * 3) }},
		} {
			t.Run(dt+"/"+tc.name, func(t *testing.T) { runGSNZ(t, dt, tc.scatter, tc.elem, tc.oob, tc.idx) })
		}
	}
}

func runGSNZ(t *testing.T, dt string, scatter, elem bool, oob string, idxOf func(r, c int) int64) {
	const TR, TC, R = 32, 64, 16
	es := map[string]int{"f32": 4, "f16": 2, "i8": 1}[dt]
	c0 := 32 / es
	ir, ic := 1, R
	if elem {
		ir, ic = R, TC
	}
	attrs := ""
	if elem {
		attrs += " #coalesce=elem"
	}
	if oob != "" {
		attrs += " #oob=" + oob
	}
	var b strings.Builder
	fmt.Fprintf(&b, "gm T : %s [%d, %d] nz = expr((i * 7 + j) %% 50)\n", dt, TR, TC)
	fmt.Fprintf(&b, "gm S : %s [%d, %d] nz = expr((i * 3 + j) %% 60 + 60)\n", dt, R, TC)
	fmt.Fprintf(&b, "gm O : %s [%d, %d] nz = fill(99)\n", dt, R, TC)
	fmt.Fprintf(&b, "gm I : i32 [%d, %d] = fill(0)\n", ir, ic)
	b.WriteString("kernel k : aiv {\n")
	fmt.Fprintf(&b, "    tile %%i : vec i32 [%d, %d]\n", ir, ic)
	fmt.Fprintf(&b, "    tile %%d : vec %s [%d, %d] layout(blayout=col, slayout=row)\n", dt, R, TC)
	b.WriteString("    tload %i, @I[0, 0]\n    tload %d, @S[0, 0]\n    set_flag MTE2, S, 0\n    wait_flag MTE2, S, 0\n")
	if scatter {
		fmt.Fprintf(&b, "op: mscatter @T[0, 0], %%d, %%i%s\n", attrs)
	} else {
		fmt.Fprintf(&b, "op: mgather %%d, @T[0, 0], %%i%s\n", attrs)
		b.WriteString("    tstore @O[0, 0], %d\n")
	}
	b.WriteString("}\nlaunch ranks=1 {\n    run k blocks=1\n}\n")
	rec := &recorder{kinds: map[EventKind]bool{EvExec: true}}
	m, err := New(assemble(t, b.String()), Options{Observers: []Observer{rec}})
	if err != nil {
		t.Fatal(err)
	}
	ibuf, _ := m.TensorData("I", 0)
	idx := make([][]int64, ir)
	for r := range idx {
		for c := 0; c < ic; c++ {
			x := idxOf(c, 0) // Row: idx[0, r] for data row r
			if elem {
				x = idxOf(r, c)
			}
			idx[r] = append(idx[r], x)
			if err := ibuf.StoreI(asm.I32, int64(r*ic+c)*4, x); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := m.Run(); err != nil {
		t.Fatal(err)
	}
	// Logical views of the tensors through their layouts.
	logical := func(name string) ([][]float64, func(r, c int) int64) {
		buf, ti := m.TensorData(name, 0)
		l := memory.GMLayout(ti)
		out := make([][]float64, l.Rows)
		for r := range out {
			for c := 0; c < l.Cols; c++ {
				bits, err := buf.LoadBits(ti.DType, l.Offset(r, c))
				if err != nil {
					t.Fatal(err)
				}
				v := float64(memory.DecodeInt(ti.DType, bits))
				if ti.DType.IsFloat() {
					v = decodeF(ti.DType, bits)
				}
				out[r] = append(out[r], v)
			}
		}
		return out, func(r, c int) int64 { return l.Offset(r, c) }
	}
	table := make([][]float64, TR)
	for i := range table {
		for j := 0; j < TC; j++ {
			table[i] = append(table[i], float64((i*7+j)%50))
		}
	}
	sv := func(r, c int) float64 { return float64((r*3+c)%60 + 60) }
	got, off := logical("T")
	base, _ := m.TensorBase("T", 0)
	wantBytes := map[int64]bool{}
	touch := func(r, c int) {
		for k := int64(0); k < int64(es); k++ {
			wantBytes[base+off(r, c)+k] = true
		}
	}
	out := make([][]float64, R)
	for r := range out {
		out[r] = make([]float64, TC)
	}
	remap := func(x, capacity int64) (int64, bool) {
		x = int64(uint32(x)) // pto-isa reads indices as uint32
		switch {
		case x < capacity:
			return x, true
		case oob == "wrap":
			return x % capacity, true
		}
		return 0, false
	}
	// The header's order: Row by row; Elem by column block, row, column.
	bw := TC
	if elem {
		bw = c0
	}
	for cb := 0; cb < TC; cb += bw {
		for r := 0; r < R; r++ {
			if elem {
				for c := cb; c < cb+bw; c++ {
					k, ok := remap(idx[r][c], TR*TC)
					if !ok {
						continue
					}
					tr, tcol := int(k/TC), int(k%TC)
					touch(tr, tcol)
					if scatter {
						table[tr][tcol] = sv(r, c)
					} else {
						out[r][c] = table[tr][tcol]
					}
				}
				continue
			}
			k, ok := remap(idx[0][r], TR)
			for c := 0; c < TC; c++ {
				switch {
				case !ok:
					out[r][c] = 0
				case scatter:
					table[k][c] = sv(r, c)
					touch(int(k), c)
				default:
					out[r][c] = table[k][c]
					touch(int(k), c)
				}
			}
		}
	}
	if scatter {
		for i := range table {
			for j := range table[i] {
				if got[i][j] != table[i][j] {
					t.Fatalf("T[%d, %d] = %v, want %v", i, j, got[i][j], table[i][j])
				}
			}
		}
	} else {
		o, _ := logical("O")
		for r := range out {
			for c := range out[r] {
				if o[r][c] != out[r][c] {
					t.Fatalf("O[%d, %d] = %v, want %v", r, c, o[r][c], out[r][c])
				}
			}
		}
	}
	gotBytes := map[int64]bool{}
	for _, e := range rec.evs {
		if e.Op == nil || e.Op.Info == nil || (e.Op.Info.Op != asm.OpMgather && e.Op.Info.Op != asm.OpMscatter) {
			continue
		}
		for _, a := range e.Accesses {
			if a.Space == asm.GM && a.Tensor != nil && a.Tensor.Name == "T" {
				for x := a.Lo; x < a.Hi; x++ {
					gotBytes[x] = true
				}
			}
		}
	}
	if len(gotBytes) != len(wantBytes) {
		t.Errorf("detector sees %d table bytes, want %d", len(gotBytes), len(wantBytes))
	}
	for x := range wantBytes {
		if !gotBytes[x] {
			t.Fatalf("table byte %#x not among the detector's accesses", x)
		}
	}
}

// TestMGatherNZRefusals: MGatherCheck's layout rules for NZ tables, each
// at the instruction.
func TestMGatherNZRefusals(t *testing.T) {
	for _, tc := range []struct{ name, table, tile, at, want string }{
		{"nz table, nd tile", "nz", "", "[0, 0]", "pairs an NZ table with an NZ tile"},
		{"nd table, nz tile", "", " layout(blayout=col, slayout=row)", "[0, 0]", "pairs an ND table with a row-major tile"},
		{"dn table", "dn", "", "[0, 0]", "takes ND or NZ tables"},
		{"nz table from column 16", "nz", " layout(blayout=col, slayout=row)", "[0, 16]", "must start at column 0"},
		{"nz row narrower than the table", "nz", " valid [16, 32] layout(blayout=col, slayout=row)", "[0, 0]", "moves whole rows"},
		{"nz index tile", "nz", " layout(blayout=col, slayout=row)", "[0, 0] #coalesce=elem nzidx", "row-major (ND) index tile"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := fmt.Sprintf(`gm T : f16 [32, 64] %s = fill(1)
gm I : i32 [1, 16] = fill(0)
kernel k : aiv {
    tile %%i : vec i32 [1, 16]
    tile %%d : vec f16 [16, 64]%s
    tload %%i, @I[0, 0]
    set_flag MTE2, S, 0
    wait_flag MTE2, S, 0
    mgather %%d, @T%s, %%i
}
launch ranks=1 { run k blocks=1 }
`, tc.table, tc.tile, tc.at)
			if strings.HasSuffix(tc.at, " nzidx") {
				// An Elem gather whose [16, 64] index tile is NZ.
				src = strings.NewReplacer(" #coalesce=elem nzidx, %i", ", %i #coalesce=elem", "tile %i : vec i32 [1, 16]", "tile %i : vec i32 [16, 64] layout(blayout=col, slayout=row)",
					"gm I : i32 [1, 16]", "gm I : i32 [16, 64] nz").Replace(src)
			}
			_, _, err := runObj(t, assemble(t, src), Options{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err %v, want %q", err, tc.want)
			}
		})
	}
}

// TestQuantPairs walks every accumulator and destination dtype through the
// op-level check of a quantised store to GM and a quantised move into L1,
// against the lists a2a3/TStore.hpp CheckAcc2gm and a2a3/common.hpp
// CheckTMovAccToMat (isCastQuant false) give at 3186c381, and has the
// assembler refuse one pair, naming the check.
func TestQuantPairs(t *testing.T) {
	gm := map[asm.DType][]asm.DType{asm.F32: {asm.I8, asm.U8}, asm.I32: {asm.I8, asm.U8, asm.F16}}
	l1 := map[asm.DType][]asm.DType{asm.F32: {asm.I8}, asm.I32: {asm.I8, asm.U8, asm.F16, asm.I16}}
	all := []asm.DType{asm.I8, asm.U8, asm.I16, asm.F16, asm.BF16, asm.I32, asm.F32}
	for _, src := range []asm.DType{asm.F32, asm.I32, asm.F16} {
		for _, dst := range all {
			for _, toGM := range []bool{true, false} {
				want := gm[src]
				if !toGM {
					want = l1[src]
				}
				err := checkQuantPair(src, dst, toGM)
				if ok := slices.Contains(want, dst); ok != (err == nil) {
					t.Errorf("%v→%v toGM=%v: err %v, want ok=%v", src, dst, toGM, err, ok)
				}
			}
		}
	}
	src := strings.Replace(string(readTestdata(t, "testdata/quant.pto")), "gm Q1 : i8 [16, 32]", "gm Q1 : f16 [16, 32]", 1)
	if errs := assembleErrs(t, src); !strings.Contains(errs, "CheckAcc2gm") {
		t.Errorf("tstore.q f32→f16: %q, want the CheckAcc2gm refusal", errs)
	}
}

// TestQuantScalarWord runs set_quant_scalar with a negative scale through
// tstore.q. SET_QUANT_SCALAR_IMPL widens the f32's bits through int32_t
// (include/pto/npu/a2a3/SetQuantScalar.hpp at 3186c381), so a negative
// scale also sets bits 32..63 and with them the offset field, bits 37..45
// (511): quantize_element (include/pto/cpu/common.hpp) then adds 511 before
// rounding and every i8 result saturates to 127. A u8 output the same way
// saturates to 255; a positive scale leaves the high bits clear.
func TestQuantScalarWord(t *testing.T) {
	for _, tc := range []struct {
		set  string
		want func(acc float64) float64
	}{
		{"set_quant_scalar -0.5 #out=i8", func(float64) float64 { return 127 }},
		{"set_quant_scalar -0.5 #out=u8", func(float64) float64 { return -1 }}, // 255 as i8 bits
		{"set_quant_scalar 0.5 #out=i8", func(a float64) float64 { return math.Max(-128, math.Min(127, math.RoundToEven(a*0.5))) }},
	} {
		t.Run(tc.set, func(t *testing.T) {
			obj := assemble(t, `gm A : f16 [16, 16] = expr((i * 5 + j * 3) % 17 - 8)
gm B : f16 [16, 16] = expr((i * 7 + j) % 13 - 6)
gm Q : i8 [16, 32] = fill(0)
kernel q : aic {
    tile %am : mat f16 [16, 16]
    tile %bm : mat f16 [16, 16]
    tile %a : left f16 [16, 16]
    tile %b : right f16 [16, 16]
    tile %c : acc f32 [16, 16]
    tload %am, @A[0, 0]
    tload %bm, @B[0, 0]
    set_flag MTE2, MTE1, 0
    wait_flag MTE2, MTE1, 0
    tmov %a, %am
    tmov %b, %bm
    set_flag MTE1, M, 0
    wait_flag MTE1, M, 0
    tmatmul %c, %a, %b
    set_flag M, FIX, 0
    wait_flag M, FIX, 0
    `+tc.set+`
    tstore.q @Q[0, 0], %c
}
launch ranks=1 {
    run q blocks=1
}
`)
			m, err := New(obj, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := m.Run(); err != nil {
				t.Fatal(err)
			}
			q, _ := readGM(t, m, "Q")
			for i := 0; i < 16; i++ {
				for j := 0; j < 16; j++ {
					acc := 0.0
					for k := 0; k < 16; k++ {
						acc += float64(((i*5+k*3)%17 - 8) * ((k*7+j)%13 - 6))
					}
					if want := tc.want(acc); q[i*32+j] != want {
						t.Fatalf("(%d, %d): %v, want %v (acc %v)", i, j, q[i*32+j], want, acc)
					}
				}
			}
		})
	}
}

// TestFixpipeRelu: #relu=normal (pto-isa ReluPreMode::NormalRelu) zeroes
// the non-positive results of a move out of L0C after its quantisation or
// cast (quantize_element, ConvertStoreValue in include/pto/cpu/common.hpp
// at 3186c381); an atomic store adds the relu'd value. PTOAS's tstore and
// tmov carry it (reluPreMode) and the importer dropped it.
func TestFixpipeRelu(t *testing.T) {
	obj := assemble(t, `gm A : f16 [16, 16] = expr((i * 5 + j * 3) % 17 - 8)
gm B : f16 [16, 16] = expr((i * 7 + j) % 13 - 6)
gm R1 : f32 [16, 16] = fill(0)
gm R2 : f32 [16, 16] = fill(1)
gm R3 : f16 [16, 16] = fill(0)
gm Q : i8 [16, 32] = fill(0)
kernel q : aic {
    tile %am : mat f16 [16, 16]
    tile %bm : mat f16 [16, 16]
    tile %a : left f16 [16, 16]
    tile %b : right f16 [16, 16]
    tile %c : acc f32 [16, 16]
    tile %m : mat f16 [16, 16]
    tload %am, @A[0, 0]
    tload %bm, @B[0, 0]
    set_flag MTE2, MTE1, 0
    wait_flag MTE2, MTE1, 0
    tmov %a, %am
    tmov %b, %bm
    set_flag MTE1, M, 0
    wait_flag MTE1, M, 0
    tmatmul %c, %a, %b
    set_flag M, FIX, 0
    wait_flag M, FIX, 0
    tstore @R1[0, 0], %c #relu=normal
    tstore @R2[0, 0], %c #relu=normal #atomic=add
    set_quant_scalar 0.5 #out=i8
    tstore.q @Q[0, 0], %c #relu=normal
    tmov %m, %c #relu=normal
    set_flag FIX, MTE3, 0
    wait_flag FIX, MTE3, 0
    tstore @R3[0, 0], %m
}
launch ranks=1 {
    run q blocks=1
}
`)
	m, err := New(obj, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Run(); err != nil {
		t.Fatal(err)
	}
	r1, _ := readGM(t, m, "R1")
	r2, _ := readGM(t, m, "R2")
	r3, _ := readGM(t, m, "R3")
	q, _ := readGM(t, m, "Q")
	neg := 0
	for i := 0; i < 16; i++ {
		for j := 0; j < 16; j++ {
			acc := 0.0
			for k := 0; k < 16; k++ {
				acc += float64(((i*5+k*3)%17 - 8) * ((k*7+j)%13 - 6))
			}
			if acc < 0 {
				neg++
			}
			relu := math.Max(acc, 0)
			k := i*16 + j
			wantQ := math.Max(0, math.Max(-128, math.Min(127, math.RoundToEven(acc*0.5))))
			if r1[k] != relu || r2[k] != 1+relu || r3[k] != relu || q[i*32+j] != wantQ {
				t.Fatalf("(%d, %d) acc %v: tstore %v, atomic %v (want %v), tmov %v, tstore.q %v (want %v)", i, j, acc, r1[k], r2[k], 1+relu, r3[k], q[i*32+j], wantQ)
			}
		}
	}
	if neg == 0 {
		t.Fatal("no negative accumulator: the test checks nothing")
	}
	// Only an acc source has the fixpipe's relu.
	msg := assembleErrs(t, "gm G : f32 [16, 16] = fill(0)\nkernel k : aiv {\n    tile %v : vec f32 [16, 16]\n    tstore @G[0, 0], %v #relu=normal\n}\nlaunch ranks=1 {\n    run k blocks=1\n}\n")
	if want := "tstore #relu=normal: the fixpipe's relu applies to a move out of L0C; %v is vec"; !strings.Contains(msg, want) {
		t.Errorf("vec tstore #relu: got %q, want %q", msg, want)
	}
}
