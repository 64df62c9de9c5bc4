package asm_test

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/internal/golden"
)

// TestManyPositions pins the exact line:col of every error in many.pto.
func TestManyPositions(t *testing.T) {
	_, errs := asm.Assemble(diskFrontend, "testdata/errors/many.pto", nil)
	var got []string
	for _, d := range errs {
		got = append(got, d.Span.Pos.String())
	}
	want := []string{
		"testdata/errors/many.pto:14:5",  // tile past the end of L0A
		"testdata/errors/many.pto:17:5",  // unknown op
		"testdata/errors/many.pto:18:17", // tmatmul operand location
		"testdata/errors/many.pto:19:23", // event id 9
		"testdata/errors/many.pto:20:24", // undefined register
		"testdata/errors/many.pto:21:21", // type annotation
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("positions:\n got %v\nwant %v", got, want)
	}
	for _, d := range errs {
		if strings.Contains(d.Msg, "tmatmul") || strings.Contains(d.Msg, "annotation") {
			if len(d.Notes) != 1 {
				t.Errorf("%s: want a note at the declaration", d.Msg)
			}
		}
	}
	var b bytes.Buffer
	src, _ := os.ReadFile("testdata/errors/many.pto")
	errs.Fprint(&b, asm.Sources{"testdata/errors/many.pto": src})
	golden.Check(t, "testdata/errors/many.out", b.Bytes())
}

func assembleText(t *testing.T, src string, defs ...asm.Define) (*asm.Object, asm.ErrorList) {
	t.Helper()
	return asm.Assemble(memFrontend(map[string]string{"main.pto": src}), "main.pto", defs)
}

func TestDefines(t *testing.T) {
	src := `const pipelined = 2
const MODE = 1
const N = MODE * 16
`
	tests := []struct {
		defs    []asm.Define
		mode, n int64
		err     string
	}{
		{nil, 1, 16, ""},
		{[]asm.Define{{"MODE", "pipelined"}}, 2, 32, ""},
		{[]asm.Define{{"MODE", "pipelined + 1"}}, 3, 48, ""},
		{[]asm.Define{{"NOPE", "1"}}, 0, 0, "-D NOPE: the program declares no constant NOPE"},
		{[]asm.Define{{"MOD", "1"}}, 0, 0, "did you mean MODE?"},
		{[]asm.Define{{"MODE", "bogus"}}, 0, 0, "-D MODE: undefined: bogus"},
		{[]asm.Define{{"MODE", "N"}}, 0, 0, "depends on itself"},
	}
	for _, tc := range tests {
		obj, errs := assembleText(t, src, tc.defs...)
		if tc.err != "" {
			if !strings.Contains(errs.Error()+errText(errs, nil), tc.err) {
				t.Errorf("%v: errors %q, want %q", tc.defs, errs.Error(), tc.err)
			}
			continue
		}
		if errs.HasErrors() {
			t.Errorf("%v: %v", tc.defs, errs)
			continue
		}
		m, _ := obj.Const("MODE")
		n, _ := obj.Const("N")
		if m != tc.mode || n != tc.n {
			t.Errorf("%v: MODE=%d N=%d, want %d %d", tc.defs, m, n, tc.mode, tc.n)
		}
		if len(tc.defs) > 0 && !obj.Consts[1].Overridden {
			t.Errorf("%v: MODE not marked overridden", tc.defs)
		}
	}
}

func TestIncludes(t *testing.T) {
	files := map[string]string{
		"dir/main.pto":       "include \"lib/shared.pto\"\ninclude \"lib/shared.pto\"\nconst B = A + 1\n",
		"dir/lib/shared.pto": "include \"more.pto\"\nconst A = C * 2\n",
		"dir/lib/more.pto":   "const C = 5\n",
		"cyc/a.pto":          "include \"b.pto\"\n",
		"cyc/b.pto":          "include \"a.pto\"\n",
		"miss/a.pto":         "include \"gone.pto\"\n",
	}
	fe := memFrontend(files)
	obj, errs := asm.Assemble(fe, "dir/main.pto", nil)
	if errs.HasErrors() {
		t.Fatal(errs)
	}
	if b, _ := obj.Const("B"); b != 11 {
		t.Errorf("B = %d, want 11", b)
	}
	if len(obj.Files) != 3 || len(obj.Sources) != 3 {
		t.Errorf("files %d sources %d, want 3 and 3", len(obj.Files), len(obj.Sources))
	}
	_, errs = asm.Assemble(fe, "cyc/a.pto", nil)
	if !strings.Contains(errs.Error(), "include cycle: cyc/a.pto -> cyc/b.pto -> cyc/a.pto") {
		t.Errorf("cycle: %v", errs)
	}
	if errs[0].Span.Pos.File != "cyc/b.pto" || errs[0].Span.Pos.Line != 1 {
		t.Errorf("cycle reported at %s, want cyc/b.pto:1", errs[0].Span.Pos)
	}
	_, errs = asm.Assemble(fe, "miss/a.pto", nil)
	if !strings.Contains(errs.Error(), "cannot read miss/gone.pto") {
		t.Errorf("missing include: %v", errs)
	}
}

func TestLayout(t *testing.T) {
	src := `
kernel k : aic {
    tile %x   : mat f16 [16, 16] @ 0x0          // 512 B explicit
    tile %y   : mat f16 [16, 16] @ 0x100        // overlaps %x
    tile %auto: mat f16 [16, 32]                // first fit after explicit tiles: 0x400
    tile %arr[3] : mat f16 [16, 16] @ 0x10000 step 0x1000
    tile %gap : mat f16 [8, 16]                 // fits in the 0x200..0x400 hole? no: 512-aligned, goes after %auto
    tile %l   : left f16 [128, 128]             // 32 KiB auto at 0
    tile %l2  : left f16 [128, 128]             // 32 KiB auto at 0x8000: exactly fills L0A
    tile %v[2] : mat f32 [4, 8]                 // array placed as one block
}
`
	obj, errs := assembleText(t, src)
	if errs.HasErrors() {
		t.Fatal(errs)
	}
	k := obj.Kernel("k")
	addr := map[string][]int64{}
	for _, ti := range k.Tiles {
		addr[ti.Name] = ti.Addr
	}
	want := map[string][]int64{
		"x": {0}, "y": {0x100}, "auto": {0x400}, "arr": {0x10000, 0x11000, 0x12000},
		"gap": {0x800}, "l": {0}, "l2": {0x8000}, "v": {0xa00, 0xa80},
	}
	for n, w := range want {
		if !equal(addr[n], w) {
			t.Errorf("%%%s at %#x, want %#x", n, addr[n], w)
		}
	}
	ov := k.Overlaps()
	if len(ov) != 1 || ov[0].A.Name != "x" || ov[0].B.Name != "y" || ov[0].Lo != 0x100 || ov[0].Hi != 0x200 {
		t.Errorf("overlaps %+v, want x/y [0x100,0x200)", ov)
	}
	var b bytes.Buffer
	obj.FprintListing(&b)
	if !strings.Contains(b.String(), "overlaps %y [0x100,0x200)") || !strings.Contains(b.String(), "overlaps %x [0x100,0x200)") {
		t.Errorf("listing does not flag the overlap:\n%s", b.String())
	}

	bad := []struct{ src, err string }{
		{"kernel k : aic {\n tile %a : left f16 [128, 256]\n tile %b : left f16 [16, 16]\n}", "tile %b [0x10000,0x10200) (512 bytes, placed automatically) runs past the end of L0A"},
		{"kernel k : aiv {\n tile %a : vec f32 [16, 16] @ 0x2FF00\n}", "tile %a [0x2ff00,0x30300) (1024 bytes, at its explicit address) runs past the end of UB (192 KiB"},
		{"kernel k : aic {\n tile %a[4] : bias f32 [1, 64] @ 0 step 256\n}", "tile %a[3] [0x300,0x400)"},
		{"kernel k : aic {\n tile %a[5] : bias f32 [1, 64] @ 0 step 256\n}", "tile %a[4] [0x400,0x500) (256 bytes, at its explicit address) runs past the end of BT (1 KiB"},
		{"kernel k : aiv {\n tile %a : vec f16 [16, 15]\n}", "row of %a is 30 bytes"},
		{"kernel k : aiv {\n tile %a : vec f16 [16, 16] @ 0 step 48\n}", "step 0x30 must be a non-negative multiple of 32"},
		{"kernel k : aiv {\n tile %a : vec f16 [16, 16] valid [17, 16]\n}", "valid rows 17 exceed rows 16"},
	}
	for _, tc := range bad {
		_, errs := assembleText(t, tc.src)
		if tc.err == "tile %a[3] [0x300,0x400)" {
			if errs.HasErrors() {
				t.Errorf("4 bias rows of 256 B fill BT exactly, got %v", errs)
			}
			continue
		}
		if !strings.Contains(errs.Error(), tc.err) {
			t.Errorf("%q: got %v, want %q", tc.src, errs, tc.err)
		}
	}
}

func equal(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestUnified: the FFN mock's PE does vector math in its L1 and stores mat tiles.
func TestUnified(t *testing.T) {
	src := `
gm Y : f32 [16, 64] = poison
kernel cell : unified {
    tile %g : mat f32 [16, 64]
    tile %u : mat f32 [16, 64]
    tile %h : mat f16 [16, 64]
    tmul %g, %g, %u
    tlrelu %g, %g, 0.1
    tcvt %h, %g #rnd=rint
    tmov %u, %g
    set_flag V, MTE3, 0
    wait_flag V, MTE3, 0
    tstore @Y[0, 0], %g
}`
	obj, errs := assembleText(t, src)
	if errs.HasErrors() {
		t.Fatal(errs)
	}
	pipes := ""
	for _, op := range obj.Kernel("cell").Ops {
		pipes += op.Pipe.String() + " "
	}
	if pipes != "V V V V S S MTE3 " {
		t.Errorf("pipes %q", pipes)
	}
	_, errs = assembleText(t, "kernel c : aic {\n tile %g : mat f32 [16, 64]\n tmul %g, %g, %g\n}")
	if !strings.Contains(errs.Error(), "tmul is not available on a aic core") {
		t.Errorf("aic vector op: %v", errs)
	}
}

func TestCompiledExprs(t *testing.T) {
	src := `
const K = 8
signal S : [4, 16]
kernel k : aiv {
    let %a = rank * 100 + block_idx * 10 + subblock_idx
    let %b = ceildiv(%a, K) + align(%a, 16) + min(%a, 3) + max(%a, nranks, block_num)
    let %c = (%a / 0) + (%a % 0) + (1 << %a) + abs(0 - %a)
    st @S[rank, 0], %a
}`
	obj, errs := assembleText(t, src)
	if errs.HasErrors() {
		t.Fatal(errs)
	}
	k := obj.Kernel("k")
	env := &asm.Env{Regs: make([]int64, len(k.Regs)), Rank: 1, NRanks: 4, Block: 2, SubBlock: 1, BlockNum: 24}
	for _, s := range k.Body {
		if l, ok := s.(*asm.CLet); ok {
			env.Regs[l.Slot] = l.X.Eval(env)
		}
	}
	a := int64(121)
	wantB := (a+7)/8 + 128 + 3 + 121
	wantC := int64(0) + 0 + 0 + 121 // 1<<121 is 0: shifts past 63 give 0, division by zero gives 0
	if env.Regs[0] != a || env.Regs[1] != wantB || env.Regs[2] != wantC {
		t.Errorf("regs %v, want %d %d %d", env.Regs, a, wantB, wantC)
	}
	st := k.Ops[0]
	if st.Args[0].Idx[0].Eval(env) != 1 || st.Args[1].Val.Eval(env) != a {
		t.Errorf("st operands wrong")
	}
}

// "Did you mean" guesses only what is plausibly a typo: at most two edits,
// and no more than one per two characters of the name.
func TestSuggestions(t *testing.T) {
	for _, tc := range []struct{ ref, want string }{
		{"zz", ""}, // two edits from h3: no guess
		{"h4", "h3"},
		{"RANSK", "RANKS"},
		{"ranks", "RANKS"},
		{"MOD", "MODE"},
		{"BOGUS", ""},
	} {
		src := "const h3 = 1\nconst RANKS = 2\nconst MODE = 3\nconst X = " + tc.ref + "\n"
		_, errs := assembleText(t, src)
		msg := errs.Error()
		if !strings.Contains(msg, "undefined: "+tc.ref) {
			t.Fatalf("%s: %q", tc.ref, msg)
		}
		got := ""
		if _, after, ok := strings.Cut(msg, "(did you mean "); ok {
			got, _, _ = strings.Cut(after, "?)")
		}
		if got != tc.want {
			t.Errorf("%s: suggested %q, want %q", tc.ref, got, tc.want)
		}
	}
}
