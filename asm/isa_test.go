package asm

import (
	"bytes"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ptoasm/ptoasm/internal/golden"
)

func TestLookupOp(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"tadd", "tadd"},
		{"pto.tadd", "tadd"},
		{"TMATMUL.ACC", "tmatmul.acc"},
		{"set_cross_core", "ffts_set"},
		{"wait_flag_dev", "ffts_wait"},
		{"pto.barrier", "pipe_barrier"},
		{"tgather", "tgather"},
		{"tgather.comm", "tgather.comm"},
		{"nosuch", ""},
	}
	for _, tc := range tests {
		op := LookupOp(tc.in)
		got := ""
		if op != nil {
			got = op.Name
		}
		if got != tc.want {
			t.Errorf("LookupOp(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if n := len(lookupAll("tgather")); n != 2 {
		t.Errorf("tgather has %d candidates, want 2 (tile op and collective)", n)
	}
}

func TestSuggestOp(t *testing.T) {
	for in, want := range map[string]string{"tadx": "tadd", "tmatmull": "tmatmul", "set_flga": "set_flag", "zzzzzzzzzz": ""} {
		if got := suggestOp(in); got != want {
			t.Errorf("suggestOp(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestEditDistanceWithin: the banded distance is the full one when that is
// at most k and k+1 otherwise, on short strings over a small alphabet
// (where edits collide) of every length pair up to 6 and k up to 7; and an
// unknown mnemonic of half a megabyte gets no suggestion (it took seconds).
func TestEditDistanceWithin(t *testing.T) {
	full := func(a, b string) int {
		d := make([][]int, len(a)+1)
		for i := range d {
			d[i] = make([]int, len(b)+1)
			d[i][0] = i
		}
		for j := range d[0] {
			d[0][j] = j
		}
		for i := 1; i <= len(a); i++ {
			for j := 1; j <= len(b); j++ {
				c := d[i-1][j-1]
				if a[i-1] != b[j-1] {
					c++
				}
				d[i][j] = min(c, d[i-1][j]+1, d[i][j-1]+1)
			}
		}
		return d[len(a)][len(b)]
	}
	var words []string
	for n := 0; n <= 6; n++ {
		for x := 0; x < 1<<n; x += 1 + n/2 {
			w := make([]byte, n)
			for i := range w {
				w[i] = "ab"[x>>i&1]
			}
			words = append(words, string(w))
		}
	}
	words = append(words, "tadd", "tadds", "tmatmul", "set_flag", "wait_flag", "tsub")
	for _, a := range words {
		for _, b := range words {
			want := full(a, b)
			if got := EditDistance(a, b); got != want {
				t.Fatalf("EditDistance(%q, %q) = %d, want %d", a, b, got, want)
			}
			for k := 0; k <= 7; k++ {
				if got := EditDistanceWithin(a, b, k); got != min(want, k+1) {
					t.Fatalf("EditDistanceWithin(%q, %q, %d) = %d, want %d", a, b, k, got, min(want, k+1))
				}
			}
		}
	}
	if got := suggestOp(strings.Repeat("x", 500_000)); got != "" {
		t.Errorf("a 500 KB name: suggested %q", got)
	}
}

func TestRouting(t *testing.T) {
	tile := func(l Loc) Arg { return Arg{Kind: ArgTile, Tile: &TileInfo{Loc: l}} }
	gm := Arg{Kind: ArgGM}
	tests := []struct {
		op   string
		args []Arg
		want Pipe
	}{
		{"tload", []Arg{tile(LocVec), gm}, PipeMTE2},
		{"tload", []Arg{tile(LocMat), gm}, PipeMTE2},
		{"tload", []Arg{tile(LocLeft), gm}, PipeInvalid},
		{"tstore", []Arg{gm, tile(LocVec)}, PipeMTE3},
		{"tstore", []Arg{gm, tile(LocMat)}, PipeMTE3},
		{"tstore", []Arg{gm, tile(LocAcc)}, PipeFIX},
		{"tmov", []Arg{tile(LocLeft), tile(LocMat)}, PipeMTE1},
		{"tmov", []Arg{tile(LocRight), tile(LocMat)}, PipeMTE1},
		{"tmov", []Arg{tile(LocBias), tile(LocMat)}, PipeMTE1},
		{"tmov", []Arg{tile(LocScaling), tile(LocMat)}, PipeFIX},
		{"tmov", []Arg{tile(LocMat), tile(LocAcc)}, PipeFIX},
		{"tmov", []Arg{tile(LocVec), tile(LocVec)}, PipeV},
		{"tmov", []Arg{tile(LocVec), tile(LocAcc)}, PipeInvalid},
		{"textract", []Arg{tile(LocLeft), tile(LocMat)}, PipeMTE1},
		{"textract", []Arg{tile(LocMat), tile(LocAcc)}, PipeFIX},
		{"textract", []Arg{tile(LocVec), tile(LocVec)}, PipeV},
		{"tinsert", []Arg{tile(LocVec), tile(LocVec)}, PipeV},
		{"tpush", []Arg{gm, tile(LocAcc)}, PipeFIX},
		{"tpush", []Arg{gm, tile(LocVec)}, PipeMTE3},
	}
	for _, tc := range tests {
		op := LookupOp(tc.op)
		if op.Route == nil {
			t.Fatalf("%s has no route", tc.op)
		}
		if got := op.Route(tc.args); got != tc.want {
			t.Errorf("%s route = %v, want %v", tc.op, got, tc.want)
		}
	}
	for _, n := range []string{"tmatmul", "tmatmul.acc", "tgemv.bias"} {
		if p := LookupOp(n).Pipe; p != PipeM {
			t.Errorf("%s pipe %v, want M", n, p)
		}
	}
	for _, n := range []string{"tadd", "texp", "tcvt", "trowsum", "tcmp", "tsel", "tgather"} {
		if p := LookupOp(n).Pipe; p != PipeV {
			t.Errorf("%s pipe %v, want V", n, p)
		}
	}
	for _, n := range []string{"set_flag", "wait_flag", "pipe_barrier", "ffts_set", "ffts_wait", "ld", "st", "tnotify", "twait", "ttest", "tput", "tget", "treduce"} {
		if p := LookupOp(n).Pipe; p != PipeS {
			t.Errorf("%s pipe %v, want S", n, p)
		}
	}
}

func TestISATableSane(t *testing.T) {
	seen := map[string]bool{}
	for i, op := range ISA {
		if i > 0 && ISA[i-1].Name >= op.Name {
			t.Errorf("ISA not sorted at %s", op.Name)
		}
		if op.Pipe == PipeInvalid && op.Route == nil {
			t.Errorf("%s: no pipe and no route", op.Name)
		}
		if op.Cost == CostNone || op.Family == FamNone || op.Doc == "" {
			t.Errorf("%s: missing cost, family or doc", op.Name)
		}
		for _, a := range op.Aliases {
			if seen[a] {
				t.Errorf("alias %s used twice", a)
			}
			seen[a] = true
		}
		for j, s := range op.Operands {
			if s.Optional && j+1 < len(op.Operands) && !op.Operands[j+1].Optional {
				t.Errorf("%s: required operand after an optional one", op.Name)
			}
		}
	}
}

// TestVBarRowsSane: an internal barrier's masks name tile operands of its
// op only, every tile operand's access is placed on some side, a closing
// barrier follows accesses after the first one, and the row cites its
// pto-isa file. A slip here silently orders accesses the hardware does not.
func TestVBarRowsSane(t *testing.T) {
	for _, op := range ISA {
		vb := op.VBar
		if vb == nil {
			continue
		}
		if vb.Source == "" {
			t.Errorf("%s: VBar without a source", op.Name)
		}
		if vb.Tail && vb.Post == 0 {
			t.Errorf("%s: a closing barrier with nothing after the first (Post is empty)", op.Name)
		}
		for i := 0; i < 8; i++ {
			bit := uint8(1) << i
			if (vb.Pre|vb.Post)&bit == 0 {
				if i < len(op.Operands) && slices.Contains(op.Operands[i].Kinds, ArgTile) {
					t.Errorf("%s: tile operand %s is on neither side of the barrier", op.Name, op.Operands[i].Name)
				}
				continue
			}
			if i >= len(op.Operands) || !slices.Contains(op.Operands[i].Kinds, ArgTile) {
				t.Errorf("%s: VBar bit %d names no tile operand", op.Name, i)
			}
		}
	}
}

// TestISADoc keeps docs/isa.md in sync with the table.
func TestISADoc(t *testing.T) {
	var b bytes.Buffer
	FprintISAMarkdown(&b)
	golden.Check(t, filepath.Join("..", "docs", "isa.md"), b.Bytes())
	b.Reset()
	FprintISA(&b)
	golden.Check(t, filepath.Join("testdata", "ops.golden"), b.Bytes())
}

// A reduction's or transpose's scratch tile is written before it is read
// (pto-isa's TRowReduceOps/TColSum/TTrans fill tmp from src first), so the
// operand is a write: never an uninitialised read, never a RAW with the
// scratch's previous writer.
func TestScratchOperandIsWrite(t *testing.T) {
	for _, tc := range []struct {
		op   string
		want Access
	}{
		{"trowsum", AccWrite}, {"trowmax", AccWrite}, {"trowmin", AccWrite},
		{"tcolsum", AccWrite}, {"tcolmax", AccWrite}, {"tcolmin", AccWrite},
		{"ttrans", AccWrite},
	} {
		op := LookupOp(tc.op)
		if op == nil {
			t.Fatalf("%s: not in the ISA", tc.op)
		}
		found := false
		for _, s := range op.Operands {
			if s.Name == "tmp" {
				found = true
				if s.Access != tc.want || !s.Optional {
					t.Errorf("%s tmp: access %v optional %v, want %v, optional", tc.op, s.Access, s.Optional, tc.want)
				}
			}
		}
		if !found {
			t.Errorf("%s: no tmp operand", tc.op)
		}
	}
}

// TestOpcodesCoverISA: every table row has its own opcode and every opcode a row.
func TestOpcodesCoverISA(t *testing.T) {
	seen := map[Opcode]string{}
	for _, op := range ISA {
		if op.Op == OpNone || op.Op >= NumOpcodes {
			t.Errorf("%s: no opcode (add it to opcode.go)", op.Name)
			continue
		}
		if prev, dup := seen[op.Op]; dup {
			t.Errorf("%s and %s share opcode %d", prev, op.Name, op.Op)
		}
		seen[op.Op] = op.Name
		if op.Op.String() != op.Name {
			t.Errorf("%s: opcode names %s", op.Name, op.Op)
		}
	}
	for o := OpNone + 1; o < NumOpcodes; o++ {
		if _, ok := seen[o]; !ok {
			t.Errorf("opcode %s (%d) has no table row", o, o)
		}
	}
}
