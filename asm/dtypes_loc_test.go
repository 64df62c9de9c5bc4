package asm_test

import (
	"strconv"
	"strings"
	"testing"
)

// TestMoreDTypes: the element-type rules session 24 added. tcvt takes the
// pairs TCvt.hpp's GenCastCall converts (another compiled to no
// instruction while the machine converted); tpartargmax's three index
// tiles share one type and tcolargmax's tmp is the source's; tquant's u8
// form needs its offset tile and the i8 form takes none (a data run
// faulted, timing and lint passed); a move's types follow the path its
// tiles' locations select (TMov.hpp, TExtract.hpp, TStore.hpp).
func TestMoreDTypes(t *testing.T) {
	for _, tc := range []struct {
		kind  string // aiv or aic
		decls string // tile and tensor declarations, one a line
		body  string
		want  string // "" accepted; else the message at line 2+len(decls)
	}{
		// tcvt: the pairs TCvt.hpp converts.
		{"aiv", "tile %d : vec f16 [8, 64]\ntile %a : vec f32 [8, 64]", "tcvt %d, %a #rnd=odd", ""},
		{"aiv", "tile %d : vec bf16 [8, 64]\ntile %a : vec f32 [8, 64]", "tcvt %d, %a", ""},
		{"aiv", "tile %d : vec f16 [8, 64]\ntile %a : vec i32 [8, 64]", "tcvt %d, %a", ""},
		{"aiv", "tile %d : vec f16 [8, 64]\ntile %a : vec u8 [8, 64]", "tcvt %d, %a", ""},
		{"aiv", "tile %d : vec i16 [8, 64]\ntile %a : vec i32 [8, 64]", "tcvt %d, %a", ""},
		{"aiv", "tile %d : vec f16 [8, 64]\ntile %a : vec f16 [8, 64]", "tcvt %d, %a",
			"tcvt: %d is f16, %a is f16; a2a3 takes (dst f16|f32|i64|i32|i16|bf16, a f32) or"},
		{"aiv", "tile %d : vec bf16 [8, 64]\ntile %a : vec f16 [8, 64]", "tcvt %d, %a",
			"(pto-isa include/pto/npu/a2a3/TCvt.hpp:757-795, 813-894 at 3186c381 dispatch"},
		{"aiv", "tile %d : vec f32 [8, 64]\ntile %a : vec u16 [8, 64]", "tcvt %d, %a",
			"tcvt: %a is u16; a2a3 takes f32, f16, bf16, i16, i32, i64, u8, i8 only"},
		{"aiv", "tile %d : vec u32 [8, 64]\ntile %a : vec f32 [8, 64]", "tcvt %d, %a", "tcvt: %d is u32"},
		// tpartargmax: dstidx, aidx and bidx of one type.
		{"aiv", "tile %d : vec f32 [8, 64]\ntile %a : vec f32 [8, 64]\ntile %i : vec i32 [8, 64]\ntile %u : vec u32 [8, 64]",
			"tpartargmax %d, %i, %a, %a, %i, %i", ""},
		{"aiv", "tile %d : vec f32 [8, 64]\ntile %a : vec f32 [8, 64]\ntile %i : vec i32 [8, 64]\ntile %u : vec u32 [8, 64]",
			"tpartargmax %d, %i, %a, %a, %i, %u", "tpartargmax: %d is f32, %i is i32, %a is f32, %a is f32, %i is i32, %u is u32; a2a3 takes"},
		{"aiv", "tile %d : vec f16 [8, 64]\ntile %a : vec f16 [8, 64]\ntile %i : vec i16 [8, 64]\ntile %u : vec u32 [8, 64]",
			"tpartargmin %d, %u, %a, %a, %i, %i", "TPartArgOp.hpp:182-194"},
		// tcolargmax: tmp of the source's type, the value too.
		{"aiv", "tile %i : vec i32 [1, 64]\ntile %a : vec f32 [8, 64]\ntile %t : vec f32 [8, 64]", "tcolargmax %i, %a, %t", ""},
		{"aiv", "tile %i : vec i32 [1, 64]\ntile %a : vec f32 [8, 64]\ntile %t : vec u32 [8, 64]", "tcolargmax %i, %a, %t",
			"tcolargmax: %i is i32, %a is f32, %t is u32; a2a3 takes (dstidx i32|u32, a f16, tmp f16) or"},
		{"aiv", "tile %d : vec u16 [1, 64]\ntile %i : vec i16 [1, 64]\ntile %a : vec f16 [8, 64]\ntile %t : vec f16 [8, 64]",
			"tcolargmin.val %d, %i, %a, %t", "tcolargmin.val: %d is u16, %i is i16, %a is f16, %t is f16"},
		// tquant: u8 with the offset, i8 without; scale and offset f32.
		{"aiv", "tile %d : vec i8 [8, 64]\ntile %s : vec f32 [8, 64]\ntile %p : vec f32 [8, 8]\ntile %t : vec i32 [8, 64]",
			"tquant %d, %s, %p, %t", ""},
		{"aiv", "tile %d : vec u8 [8, 64]\ntile %s : vec f32 [8, 64]\ntile %p : vec f32 [8, 8]\ntile %t : vec i32 [8, 64]",
			"tquant %d, %s, %p, %t, %p", ""},
		{"aiv", "tile %d : vec u8 [8, 64]\ntile %s : vec f32 [8, 64]\ntile %p : vec f32 [8, 8]\ntile %t : vec i32 [8, 64]",
			"tquant %d, %s, %p, %t", "tquant: %d is u8, the asymmetric form (INT8_ASYM), which adds an offset tile"},
		{"aiv", "tile %d : vec i8 [8, 64]\ntile %s : vec f32 [8, 64]\ntile %p : vec f32 [8, 8]\ntile %t : vec i32 [8, 64]",
			"tquant %d, %s, %p, %t, %p", "tquant: %d is i8, the symmetric form (INT8_SYM), which takes no offset"},
		{"aiv", "tile %d : vec i8 [8, 64]\ntile %s : vec f32 [8, 64]\ntile %p : vec f16 [8, 16]\ntile %t : vec i32 [8, 64]",
			"tquant %d, %s, %p, %t", "tquant: %p is f16; a2a3 takes f32 only"},
		// Moves: the path the locations select.
		{"aic", "tile %m : mat f16 [1, 64]\ntile %b : bias f32 [1, 64]", "tmov %b, %m", ""},
		{"aic", "tile %m : mat f32 [1, 64]\ntile %b : bias f32 [1, 64]", "tmov.m2b %b, %m", ""},
		{"aic", "tile %m : mat bf16 [1, 64]\ntile %b : bias f32 [1, 64]", "tmov %b, %m",
			"tmov: bias %b is f32, mat %m is bf16; a2a3 takes (dst f32, src f32|f16) or (dst i32, src i32) only (pto-isa include/pto/npu/a2a3/TMov.hpp:27-34"},
		{"aic", "tile %m : mat f16 [1, 64]\ntile %b : bias f16 [1, 64]", "tmov %b, %m", "tmov: bias %b is f16, mat %m is f16"},
		{"aic", "tile %m : mat u64 [1, 64]\ntile %s : scaling u64 [1, 64]", "tmov.m2s %s, %m", ""},
		{"aic", "tile %m : mat f32 [1, 64]\ntile %s : scaling f32 [1, 64]", "tmov %s, %m",
			"tmov: scaling %s is f32, mat %m is f32; a2a3 takes (dst u64, src u64) or (dst i64, src i64) only (pto-isa include/pto/npu/a2a3/TMov.hpp:62-65"},
		{"aic", "tile %c : acc f32 [16, 64]\ntile %m : mat f16 [16, 64]", "textract %m, %c, 0, 0", ""},
		{"aic", "tile %c : acc f32 [16, 64]\ntile %m : mat f32 [16, 64]", "textract %m, %c, 0, 0",
			"textract: mat %m is f32, acc %c is f32; a2a3 takes (dst f16|bf16, src f32) only (pto-isa include/pto/npu/a2a3/common.hpp:107-112"},
		{"aic", "tile %c : acc i32 [16, 64]\ntile %m : mat f16 [16, 64]", "tinsert %m, %c, 0, 0", "tinsert: mat %m is f16, acc %c is i32"},
		// A plain tmov out of L0C casts f32 to f16/bf16 and nothing else
		// (TMov.hpp:160): no f32 copy, no i32 one.
		{"aic", "tile %c : acc f32 [16, 64]\ntile %m : mat bf16 [16, 64]", "tmov %m, %c", ""},
		{"aic", "tile %c : acc f32 [16, 64]\ntile %m : mat f32 [16, 64]", "tmov %m, %c",
			"tmov: mat %m is f32, acc %c is f32; a2a3 takes (dst f16|bf16, src f32) only (pto-isa include/pto/npu/a2a3/common.hpp:107-112 (CheckTMovAccToMat, isCastQuant; TMov.hpp:160"},
		{"aic", "tile %c : acc i32 [16, 64]\ntile %m : mat i32 [16, 64]", "tmov.a2m %m, %c", "tmov.a2m: mat %m is i32, acc %c is i32"},
		{"aic", "tile %c : acc i32 [16, 64]\ntile %m : mat i16 [16, 64]\ntile %fp : scaling u64 [1, 64]", "tmov.fp %m, %c, %fp", ""},
		{"aic", "tile %c : acc f32 [16, 64]\ntile %m : mat f16 [16, 64]\ntile %fp : scaling u64 [1, 64]", "tmov.fp %m, %c, %fp",
			"tmov.fp: mat %m is f16, acc %c is f32; a2a3 takes (dst i8, src f32) or (dst i8|u8|f16|i16, src i32) only"},
		{"aic", "tile %m : mat u16 [16, 64]\ntile %l : left u16 [16, 64]", "textract %l, %m, 0, 0",
			"textract: left %l is u16, mat %m is u16; a2a3 takes i8, f16, bf16, f32 only (pto-isa include/pto/npu/a2a3/TExtract.hpp:24-27"},
		{"aic", "tile %m : mat f16 [16, 64]\ntile %l : left f16 [16, 64]", "textract %l, %m, 0, 0", ""},
		{"aic", "gm C : f16 [16, 64]\ntile %c : acc f32 [16, 64]", "tstore @C[0, 0], %c", ""},
		{"aic", "gm C : i8 [16, 64]\ntile %c : acc f32 [16, 64]", "tstore @C[0, 0], %c",
			"tstore: GM @C is i8, acc %c is f32; a2a3 takes (dst i32|f32|f16|bf16, src i32|f32) only (pto-isa include/pto/npu/a2a3/TStore.hpp:198-207"},
		{"aic", "gm C : i8 [16, 64]\ntile %c : acc f32 [16, 64]", "tstore.q @C[0, 0], %c #quant=scalar", ""},
		// A quantised tstore: f32 into i8/u8, i32 into i8/u8/f16
		// (TStore.hpp:208-220); the i32→i16 shift only into L1.
		{"aic", "gm C : u8 [16, 64]\ntile %c : acc f32 [16, 64]", "tstore.q @C[0, 0], %c", ""},
		{"aic", "gm C : f16 [16, 64]\ntile %c : acc i32 [16, 64]\ntile %fp : scaling u64 [1, 64]", "tstore.fp @C[0, 0], %c, %fp", ""},
		{"aic", "gm C : f16 [16, 64]\ntile %c : acc f32 [16, 64]", "tstore.q @C[0, 0], %c",
			"tstore.q: GM @C is f16, acc %c is f32; a2a3 takes (dst i8|u8, src f32) or (dst i8|u8|f16, src i32) only (pto-isa include/pto/npu/a2a3/TStore.hpp:208-220 (CheckAcc2gm"},
		{"aic", "gm C : i16 [16, 64]\ntile %c : acc i32 [16, 64]\ntile %fp : scaling u64 [1, 64]", "tstore.fp @C[0, 0], %c, %fp", "tstore.fp: GM @C is i16, acc %c is i32"},
		{"aic", "gm C : bf16 [16, 64]\ntile %c : acc f32 [16, 64]", "tstore.q @C[0, 0], %c #atomic=add", "tstore.q: GM @C is bf16, acc %c is f32"},
		{"aiv", "gm C : u32 [16, 64]\ntile %v : vec u32 [16, 64]", "tstore @C[0, 0], %v", ""},
		{"aiv", "gm C : u32 [16, 64]\ntile %v : vec u32 [16, 64]", "tstore @C[0, 0], %v #atomic=add",
			"tstore #atomic=add: GM @C is u32, vec %v is u32; a2a3 takes f16, f32, i16, i32, i8, bf16 only (pto-isa include/pto/common/arch/memory/tstore_common.hpp:151-155"},
		{"aiv", "gm C : i16 [16, 64]\ntile %v : vec i16 [16, 64]", "tstore @C[0, 0], %v #atomic=add", ""},
	} {
		decls := strings.Split(tc.decls, "\n")
		var b strings.Builder
		var tensors, tiles []string
		for _, d := range decls {
			if strings.HasPrefix(d, "gm ") {
				tensors = append(tensors, d)
			} else {
				tiles = append(tiles, d)
			}
		}
		for _, d := range tensors {
			b.WriteString(d + "\n")
		}
		b.WriteString("kernel k : " + tc.kind + " {\n")
		for _, d := range tiles {
			b.WriteString("    " + d + "\n")
		}
		b.WriteString("    " + tc.body + "\n}\n")
		_, errs := assembleText(t, b.String())
		line := len(decls) + 2
		at := "main.pto:" + strconv.Itoa(line) + ":"
		switch {
		case tc.want == "" && errs.HasErrors():
			t.Errorf("%s / %s: %v", tc.decls, tc.body, errs)
		case tc.want != "" && (!strings.Contains(errs.Error(), tc.want) || !strings.Contains(errs.Error(), at)):
			t.Errorf("%s / %s: %v, want %q at line %d", tc.decls, tc.body, errs, tc.want, line)
		}
	}
}
