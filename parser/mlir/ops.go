package mlir

import (
	"strings"

	"github.com/ptoasm/ptoasm/asm"
)

// Tile ops. Each PTOAS DPS op `pto.X ins(reads) outs(writes)` becomes one
// PTO-AS instruction, destination first, with the same pipe and the same
// read/write sets (ptoas.md §1.6, §1.7). Ops our ISA lacks get a stand-in with
// the same pipe and effects (a vec→vec tmov or tcvt, V pipe) and a comment
// naming the original; their data are not computed faithfully.

type opShape uint8

const (
	shUnary     opShape = iota // op %d, %a
	shBinary                   // op %d, %a, %b
	shScalar                   // op %d, %a, s (the first scalar operand)
	shRed                      // op %d, %a [, %tmp]   (tmp is written)
	shFill                     // texpands %d, s
	shMM                       // tmatmul %c, %a, %b
	shMMAcc                    // ins(acc_in, a, b)
	shMMBias                   // ins(a, b, bias)
	shLoad                     // tload %t, @g[...]
	shStore                    // tstore @g[...], %t
	shMove                     // tmov %d, %s
	shExtract                  // textract %d, %s, r, c
	shExtractFP                // ins(src, fp, r, c)
	shCvt                      // tcvt %d, %a #rnd
	shCmp                      // tcmp %d, %a, %b #cmp
	shCmps                     // tcmps %d, %a, s #cmp
	shSel                      // tsel %d, %mask, %a, %b
	shSels                     // tsels %d, %mask, %a, s
	shIdx                      // tgather/tscatter %d, %a, %idx
	shSort32                   // tsort32 %d, %src, %idx [, %tmp]: ins(src, idx [, tmp]) outs(dst)
	shMrgSort                  // tmrgsort: ins(src, blockLen) outs(dst), or ins(srcs..., tmp) outs(dst, executed)
	shGather                   // tgather: the mask form is tgather.mask; the others stand in
	shGen                      // tci / ttri: ins(s {descending | upperOrLower}) outs(dst)
	shPrint                    // tprint %src: ins(src), no outs
	shQuant                    // tquant: ins(src, fp [, offset]) outs(dst) {quant_type}
	shDequant                  // tdequant: ins(src, scale, offset) outs(dst)
	shArgRed                   // trowargmax & co.: ins(src [, tmp]) outs(dstidx) or outs(dst, dstidx) (the .val form)
	shRem                      // trem %d, %a, %b, %tmp: ins(a, b, tmp) outs(dst)
	shRems                     // trems %d, %a, s, %tmp: ins(a, s, tmp) outs(dst)
	shFillPad                  // tfillpad %d, %s #pad: ins(src) outs(dst), the pad value dst's type's
	shStandIn                  // no equivalent: V-pipe stand-in
)

type opRow struct {
	our string
	sh  opShape
}

var tileOps = func() map[string]opRow {
	m := map[string]opRow{
		"tload": {"tload", shLoad}, "tprefetch": {"tprefetch", shLoad}, "tstore": {"tstore", shStore}, "tstore_fp": {"tstore.fp", shStore},
		"tmov": {"tmov", shMove}, "tmov.fp": {"tmov.fp", shMove},
		"textract": {"textract", shExtract}, "tinsert": {"tinsert", shExtract},
		"textract_fp": {"textract.fp", shExtractFP}, "tinsert_fp": {"tinsert.fp", shExtractFP},
		"tmatmul": {"tmatmul", shMM}, "tgemv": {"tgemv", shMM},
		"tmatmul.acc": {"tmatmul.acc", shMMAcc}, "tgemv.acc": {"tgemv.acc", shMMAcc},
		"tmatmul.bias": {"tmatmul.bias", shMMBias}, "tgemv.bias": {"tgemv.bias", shMMBias},
		"tcvt": {"tcvt", shCvt}, "tcmp": {"tcmp", shCmp}, "tcmps": {"tcmps", shCmps},
		"tsel": {"tsel", shSel}, "tsels": {"tsels", shSels}, "texpands": {"texpands", shFill},
		"tscatter": {"tscatter", shIdx}, "tprint": {"tprint", shPrint},
		"tsort32": {"tsort32", shSort32}, "tmrgsort": {"tmrgsort", shMrgSort}, "tgather": {"tgather", shGather},
		"tconcat": {"tconcat", shBinary}, "tgatherb": {"tgatherb", shBinary}, "taxpy": {"taxpy", shScalar},
		"tci": {"tci", shGen}, "ttri": {"ttri", shGen},
		"tlrelu": {"tlrelu", shScalar}, "tprelu": {"tprelu", shBinary},
		"tquant": {"tquant", shQuant}, "tdequant": {"tdequant", shDequant},
		"trem": {"trem", shRem}, "trems": {"trems", shRems},
		// The ISA's own, so that its dtype rule applies: PTOAS's verifier
		// takes i32/i16/f16/f32 on A2/A3 (PTO.cpp TFModOp::verify), pto-isa's
		// TFmod.hpp/TFmodS.hpp static-assert f32 (asm.OpInfo.DTypes). They
		// were tadd stand-ins, which took any dtype.
		"tfmod": {"tfmod", shBinary}, "tfmods": {"tfmods", shScalar},
		// TFillPadOp, TFillPadInplaceOp, TFillPadExpandOp: one TFILLPAD
		// whose pad value is the destination tile type's
		"tfillpad": {"tfillpad", shFillPad}, "tfillpad_inplace": {"tfillpad", shFillPad}, "tfillpad_expand": {"tfillpad", shFillPad},
	}
	for _, n := range strings.Fields("trowargmax trowargmin tcolargmax tcolargmin") {
		m[n] = opRow{n, shArgRed}
	}
	for _, n := range strings.Fields("tpartadd tpartmul tpartmax tpartmin") {
		m[n] = opRow{n, shBinary}
	}
	for _, n := range strings.Fields("tabs texp tlog tneg tnot trecip trelu tsqrt trsqrt trowexpand tcolexpand") {
		m[n] = opRow{n, shUnary}
	}
	for _, n := range strings.Fields("tadd tsub tmul tdiv tmax tmin tand tor txor tshl tshr " +
		"trowexpandadd trowexpandsub trowexpandmul trowexpanddiv trowexpandmax trowexpandmin " +
		"tcolexpandadd tcolexpandsub tcolexpandmul tcolexpanddiv tcolexpandmax tcolexpandmin") {
		m[n] = opRow{n, shBinary}
	}
	// tshls and tshrs, trowprod and tcolprod were stand-ins: the ISA's own
	// carry pto-isa's dtype rules (asm.OpInfo.DTypes).
	for _, n := range strings.Fields("tadds tsubs tmuls tdivs tmaxs tmins tshls tshrs") {
		m[n] = opRow{n, shScalar}
	}
	for _, n := range strings.Fields("trowsum trowmax trowmin tcolsum tcolmax tcolmin ttrans trowprod tcolprod") {
		m[n] = opRow{n, shRed}
	}
	return m
}()

// scratchIns gives, for the ops whose getEffects write an ins operand besides
// the outs (lib/PTO/IR/PTO.cpp at a56b18c3: the `tmp` of the reductions,
// row expands, tsel, tsort32, tmrgsort's format 2, ...), how many ins
// operands (tiles and scalars) come before it: a further ins operand is the
// written scratch tile. Every outs operand is written too (getDpsInits:
// tgather's cdst, tmrgsort's dst and executed); tgather's tmp is read.
// PlanMemory starts a scratch buffer's life there, and a stand-in writes it.
var scratchIns = map[string]int{"tcolargmax": 1, "tcolargmin": 1, "tcolsum": 1, "tcvt": 1, "tprelu": 2,
	"trem": 2, "trems": 2, "trowexpanddiv": 2, "trowexpandmul": 2, "trowexpandsub": 2, "trowexpandexpdif": 2,
	"trowexpandmax": 2, "trowexpandmin": 2, "trowmax": 1, "trowargmax": 1, "trowmin": 1, "trowargmin": 1,
	"trowsum": 1, "trowprod": 1, "trsqrt": 1, "tsel": 3, "tsels": 3, "tsort32": 2, "tmrgsort": 2,
	"txors": 2, "txor": 2, "ttrans": 1}

var cmpWords = map[string]string{"eq": "eq", "ne": "ne", "lt": "lt", "le": "le", "gt": "gt", "ge": "ge"}

var rndWords = map[string]string{"rint": "rint", "round": "round", "floor": "floor", "ceil": "ceil", "trunc": "trunc",
	"odd": "odd", "none": "none", "cast_rint": "rint", "cast_round": "round", "cast_floor": "floor", "cast_ceil": "ceil",
	"cast_trunc": "trunc", "cast_odd": "odd", "cast_none": "none"}

func (k *kctx) tileOp(op *Op, name string) {
	row, known := tileOps[name]
	if !known {
		row = opRow{sh: shStandIn}
	}
	d := k.dps(op)
	if _, ok := keyGroup(op.Toks, "ins"); !ok && !d.hasOutsType {
		// Neither an op this package reads nor a tile op in PTOAS's
		// destination-passing form (a legacy spelling such as
		// pto.subview is no PTOAS op at all): say what is read.
		k.errf(op.NameTok.Span, "unsupported operation %s: not an op ptoasm reads (PTOAS's tile ops in their ins(...) outs(...) form, and the view, sync, pipe and scalar ops docs/mlir.md lists)", op.Name)
		return
	}
	insT, insTok := d.tiles(d.ins, d.inTok)
	outT, outTok := d.tiles(d.outs, d.outTok)
	for _, v := range append(append([]*val{}, insT...), outT...) {
		if v.tile.skip {
			return // the other core's section of a split function
		}
	}
	if !k.verifyTileOp(op, name, d, insT, outT) {
		return
	}
	if why := notOnA2A3(name); why != "" {
		// PTOAS emits the call on any target; pto-isa cannot build it
		// for A2/A3 (TADDC: CPU simulator only; TGET_SCALE_ADDR and the
		// MX matmuls: A5)
		k.errf(op.NameTok.Span, "%s: %s", op.Name, why)
		return
	}
	if len(op.Results) > 0 {
		// result-producing forms (tgetval ... outs : f32, `-> T` after outs)
		if d.hasOutsType {
			k.define(op, &val{kind: vScalar, x: num(op.Span, 0), static: true, known: true})
			return
		}
		if len(outT) > 0 {
			k.define(op, outT[0])
		}
	}
	need := func(nin, nout int) bool {
		if len(insT) < nin || len(outT) < nout {
			k.errf(op.Span, "%s: expected %d input and %d output tiles, got %d and %d", op.Name, nin, nout, len(insT), len(outT))
			return false
		}
		return true
	}
	ref := func(i int) asm.Expr { return tileRef(insT[i], insTok[i]) }
	dst := func() asm.Expr { return tileRef(outT[0], outTok[0]) }
	sc := d.scalars()
	scalarArg := func() asm.Expr {
		if len(sc) > 0 {
			return floatArg(op.Span, sc[0])
		}
		return fnum(op.Span, DefaultFloatArg)
	}
	switch row.sh {
	case shLoad:
		if len(d.ins) < 1 || d.ins[0].kind != vView || !need(0, 1) {
			k.errf(op.Span, "%s: expected ins(view) outs(tile)", op.Name)
			return
		}
		if k.splitTransfer(op, d.ins[0], d.inTok[0], outT[0], func(t *val, g asm.Expr) { k.instr(op, row.our, tileRef(t, outTok[0]), g) }) {
			return
		}
		k.instr(op, row.our, dst(), k.gmRef(d.ins[0], d.inTok[0], outT[0].tile))
	case shStore:
		if len(d.outs) < 1 || d.outs[0].kind != vView || !need(1, 0) {
			k.errf(op.Span, "%s: expected ins(tile) outs(view)", op.Name)
			return
		}
		if row.our == "tstore.fp" {
			// quantised by the scaling tile (ISA tstore.fp)
			if need(2, 0) {
				k.instr(op, "tstore.fp", k.gmRef(d.outs[0], d.outTok[0], insT[0].tile), ref(0), ref(1))
			}
			return
		}
		quant, relu, ok := k.fixpipeMode(op, d)
		if !ok {
			return
		}
		if _, atomic := d.attrs["atomicType"]; !atomic && quant == nil && relu == nil && k.splitTransfer(op, d.outs[0], d.outTok[0], insT[0], func(t *val, g asm.Expr) { k.instr(op, "tstore", g, tileRef(t, insTok[0])) }) {
			return
		}
		mn := "tstore"
		if quant != nil {
			k.emit(quant)
			mn = "tstore.q" // #quant=scalar: the register quant set
		}
		in := k.instr(op, mn, k.gmRef(d.outs[0], d.outTok[0], insT[0].tile), ref(0))
		if quant != nil {
			in.Attrs = append(in.Attrs, &asm.Attr{Span: quant.Span, Key: "quant", Val: &asm.Name{Span: quant.Span, Name: "scalar"}})
		}
		if relu != nil {
			in.Attrs = append(in.Attrs, relu)
		}
		if a, ok := d.attrs["atomicType"]; ok {
			for _, w := range words(a) {
				if strings.Contains(strings.ToLower(w.Text), "add") {
					in.Attrs = append(in.Attrs, &asm.Attr{Span: w.Span, Key: "atomic", Val: &asm.Name{Span: w.Span, Name: "add"}})
				}
			}
		}
	case shMove:
		// pto.tmov with an fp operand is TMOV(dst, src, fp), the vector
		// quantisation (a2a3/TMov.hpp:201-212): tmov.fp, as pto.tmov.fp.
		withFp := row.our == "tmov" && len(insT) >= 2 && insT[1].tile.loc == "scaling"
		quant, relu, ok := k.fixpipeMode(op, d)
		var in *asm.Instr
		switch {
		case !ok:
		case quant != nil && (row.our == "tmov.fp" || withFp):
			// TMovOp takes fp and preQuantScalar together; pto-isa's TMOV
			// has no overload with both (a2a3/TMov.hpp)
			k.errf(quant.Span, "%s: takes an fp tile or a preQuantScalar, not both (pto-isa TMOV has no overload with both)", op.Name)
		case quant != nil && need(1, 1):
			// TMOV(dst, src, preQuantScalar): tmov.q #quant=scalar
			k.emit(quant)
			in = k.instr(op, "tmov.q", dst(), ref(0))
			in.Attrs = append(in.Attrs, &asm.Attr{Span: quant.Span, Key: "quant", Val: &asm.Name{Span: quant.Span, Name: "scalar"}})
		case quant != nil:
		case (row.our == "tmov.fp" || withFp) && need(2, 1):
			in = k.instr(op, "tmov.fp", dst(), ref(0), ref(1)) // quantised by the scaling tile
		case row.our == "tmov" && need(1, 1):
			in = k.instr(op, "tmov", dst(), ref(0))
		}
		if in != nil && relu != nil {
			in.Attrs = append(in.Attrs, relu)
		}
	case shPrint:
		// pto-isa's a2a3 TPRINT_IMPL drains every pipe (pipe_barrier
		// (PIPE_ALL)) and prints from the scalar (TPrint.hpp): the ISA's
		// tprint, which takes a vec tile; other tiles keep the stand-in.
		if need(1, 0) && insT[0].tile.loc == "vec" {
			k.instr(op, "tprint", ref(0))
		} else if len(insT) > 0 {
			k.note(k.instr(op, "tmov", ref(0), ref(0)), "stand-in for pto.tprint: reads and writes the tile on V")
		}
	case shQuant:
		// TQUANT(dst, src, fp[, &offset]) (PTOQuantToEmitC): INT8_ASYM has
		// the offset (the verifier holds quant_type to it), so the ISA's
		// tquant needs no attribute. PTOAS's op has no tmp: at a56b18c3 it
		// emits the in-place TQUANT of pto-isa before 6506f9ec, which wrote
		// the i32 and f16 steps into src's own bytes (TQuant.hpp), so the
		// tmp is src. A tmp of its own (pto-isa 3186c381's tmp-aware
		// overload) is named by `ptoasm.tmp = "%v"`, which fmt --to mlir
		// prints and ptoas ignores (quantTmp).
		if need(2, 1) {
			tmp := ref(0)
			if v, tok, ok := k.quantTmp(op, d); ok {
				tmp = tileRef(v, tok)
			}
			args := []asm.Expr{dst(), ref(0), ref(1), tmp}
			if len(insT) > 2 {
				args = append(args, ref(2))
			}
			k.instr(op, "tquant", args...)
		}
	case shDequant:
		if need(3, 1) {
			k.instr(op, "tdequant", dst(), ref(0), ref(1), ref(2))
		}
	case shExtract, shExtractFP:
		if !need(1, 1) {
			return
		}
		if len(sc) < 2 {
			k.errf(op.Span, "%s: expected a row and a column", op.Name)
			return
		}
		if row.sh == shExtractFP {
			// the scaling tile quantises (ISA textract.fp / tinsert.fp)
			if need(2, 1) {
				k.instr(op, row.our, dst(), ref(0), ref(1), sc[len(sc)-2].x, sc[len(sc)-1].x)
			}
			return
		}
		k.instr(op, row.our, dst(), ref(0), sc[len(sc)-2].x, sc[len(sc)-1].x)
	case shMM:
		if need(2, 1) {
			k.instr(op, row.our, dst(), ref(0), ref(1))
		}
	case shMMAcc:
		if need(3, 1) {
			in := k.instr(op, row.our, dst(), ref(1), ref(2))
			if insT[0].tile.name != outT[0].tile.name {
				k.note(in, "acc_in %%%s differs from dst; modelled as reading dst", insT[0].tile.name)
			}
		}
	case shMMBias:
		if need(3, 1) {
			k.instr(op, row.our, dst(), ref(0), ref(1), ref(2))
		}
	case shUnary:
		if need(1, 1) {
			k.instr(op, row.our, dst(), ref(0))
		}
	case shBinary:
		if need(2, 1) {
			k.instr(op, row.our, dst(), ref(0), ref(1))
		}
	case shScalar:
		if !need(1, 1) {
			return
		}
		if name == "tdivs" && len(d.ins) > 0 && d.ins[0].kind == vScalar {
			// ins(%scalar, %src): the scalar over each element, pto-isa's
			// TDIVS(dst, scalar, src) (PTOAS's TDivSOp::parse takes both
			// orders, lib/PTO/IR/PTO.cpp at a56b18c3; EmitC keeps it)
			k.instr(op, "tsdivs", dst(), scalarArg(), ref(0))
			return
		}
		k.instr(op, row.our, dst(), ref(0), scalarArg())
	case shRed:
		if need(1, 1) {
			args := []asm.Expr{dst(), ref(0)}
			if len(insT) > 1 {
				args = append(args, ref(1))
			}
			k.instr(op, row.our, args...)
		}
	case shFill:
		if need(0, 1) {
			k.instr(op, row.our, dst(), scalarArg())
		}
	case shCvt:
		if need(1, 1) {
			in := k.instr(op, "tcvt", dst(), ref(0))
			if r, ok := d.attrs["rmode"]; ok {
				for _, w := range words(r) {
					if x, ok := rndWords[strings.ToLower(w.Text)]; ok {
						in.Attrs = append(in.Attrs, &asm.Attr{Span: w.Span, Key: "rnd", Val: &asm.Name{Span: w.Span, Name: x}})
						break
					}
				}
			}
		}
	case shCmp, shCmps:
		var in *asm.Instr
		if row.sh == shCmp && need(2, 1) {
			in = k.instr(op, "tcmp", dst(), ref(0), ref(1))
		} else if row.sh == shCmps && need(1, 1) {
			in = k.instr(op, "tcmps", dst(), ref(0), scalarArg())
		}
		if in == nil {
			return
		}
		mode := "eq"
		if c, ok := d.attrs["cmpMode"]; ok {
			for _, w := range words(c) {
				if x, ok := cmpWords[strings.ToLower(w.Text)]; ok {
					mode = x
				}
			}
		}
		in.Attrs = append(in.Attrs, &asm.Attr{Span: op.Span, Key: "cmp", Val: &asm.Name{Span: op.Span, Name: mode}})
	case shSel:
		if need(3, 1) {
			k.instr(op, "tsel", dst(), ref(0), ref(1), ref(2))
		}
	case shSels:
		if need(2, 1) {
			k.instr(op, "tsels", dst(), ref(0), ref(1), scalarArg())
		}
	case shIdx:
		if len(insT) >= 2 && need(2, 1) {
			k.instr(op, row.our, dst(), ref(0), ref(1))
			return
		}
		k.standIn(op, name, d, insT, insTok, outT, outTok)
	case shSort32:
		if need(2, 1) {
			args := []asm.Expr{dst(), ref(0), ref(1)}
			if len(insT) > 2 {
				args = append(args, ref(2))
			}
			k.instr(op, "tsort32", args...)
		}
	case shMrgSort:
		// PTOAS's two formats (TMrgSortOp::parse, lib/PTO/IR/PTO.cpp at
		// a56b18c3): format1 merges runs of blockLen of one source,
		// format2 2-4 sorted lists through tmp.
		if len(insT) == 1 && len(sc) == 1 && need(1, 1) {
			k.instr(op, "tmrgsort", dst(), ref(0), sc[0].x)
			return
		}
		if len(insT) >= 3 && len(insT) <= 5 && need(3, 1) {
			args := []asm.Expr{dst(), ref(len(insT) - 1)}
			for i := range insT[:len(insT)-1] {
				args = append(args, ref(i))
			}
			in := k.instr(op, "tmrgsort.lists", args...)
			for _, w := range words(d.attrs["exhausted"]) {
				if w.Text == "true" {
					k.note(in, "exhausted = true (stop at the first exhausted list) is not modelled: every element is merged")
				}
			}
			return
		}
		k.standIn(op, name, d, insT, insTok, outT, outTok)
	case shGather:
		// The mask form, ins(src, {maskPattern = #pto.mask_pattern<P0101>}),
		// is tgather.mask; the index and compare forms stand in.
		for _, w := range words(d.attrs["maskPattern"]) {
			if p := strings.ToLower(w.Text); len(insT) == 1 && len(outT) == 1 && len(p) == 5 && p[0] == 'p' && strings.Trim(p[1:], "01") == "" {
				in := k.instr(op, "tgather.mask", dst(), ref(0))
				in.Attrs = append(in.Attrs, &asm.Attr{Span: w.Span, Key: "pattern", Val: &asm.Name{Span: w.Span, Name: p}})
				return
			}
		}
		k.standIn(op, name, d, insT, insTok, outT, outTok)
	case shGen:
		// generators: tci's start (descending = true counts down), ttri's
		// diagonal (upperOrLower = 1 is the upper triangle)
		if len(sc) < 1 || !need(0, 1) {
			k.standIn(op, name, d, insT, insTok, outT, outTok)
			return
		}
		in := k.instr(op, row.our, dst(), sc[0].x)
		key, on := map[string][2]string{"tci": {"descending", "true"}, "ttri": {"upperOrLower", "1"}}[name], false
		for _, t := range d.attrs[key[0]] {
			on = on || t.Text == key[1]
		}
		if on {
			in.Attrs = append(in.Attrs, &asm.Attr{Span: op.Span, Key: map[string]string{"tci": "descending", "ttri": "upper"}[name], Val: num(op.Span, 1)})
		}
	case shArgRed:
		// PTOAS's argmax/argmin write the index tile (outs(dst)), or the
		// value and the index (outs(dst, dstidx)): the ISA's op and its
		// .val form; the tmp operand is written scratch (scratchIns).
		if !need(1, 1) {
			return
		}
		args := []asm.Expr{dst()}
		mn := row.our
		if len(outT) > 1 {
			mn += ".val"
			args = append(args, tileRef(outT[1], outTok[1]))
		}
		args = append(args, ref(0))
		if len(insT) > 1 {
			args = append(args, ref(1))
		}
		k.instr(op, mn, args...)
	case shRem:
		if need(3, 1) {
			k.instr(op, "trem", dst(), ref(0), ref(1), ref(2))
		}
	case shRems:
		if need(2, 1) {
			k.instr(op, "trems", dst(), ref(0), scalarArg(), ref(1))
		}
	case shFillPad:
		if !need(1, 1) {
			return
		}
		pad, sp, ok := outsPad(op)
		if !ok {
			// PadValue::Null: no pad value to fill with
			k.errf(op.NameTok.Span, "%s: the destination tile has no pad value (pad=0, PadValue::Null); TFILLPAD fills with its type's pad=1 (zero), 2 (max) or 3 (min) and pto-isa's TFillPad.hpp static-asserts a non-Null pad", op.Name)
			return
		}
		in := k.instr(op, "tfillpad", dst(), ref(0))
		in.Attrs = append(in.Attrs, &asm.Attr{Span: sp, Key: "pad", Val: &asm.Name{Span: sp, Name: pad}})
	case shStandIn:
		k.standIn(op, name, d, insT, insTok, outT, outTok)
	}
}

// notOnA2A3 says why pto-isa has no A2/A3 implementation of a PTOAS tile
// op, or "": PTOAS's dotted variants are the ISA's underscored base
// (tmatmul.mx.acc is tmatmul_mx).
func notOnA2A3(name string) string {
	n := strings.ReplaceAll(name, ".", "_")
	for _, v := range []string{n, strings.TrimSuffix(n, "_acc"), strings.TrimSuffix(n, "_bias")} {
		if why := asm.NotOnA2A3(v); why != "" {
			return why
		}
	}
	return ""
}

// padWords are pto-isa's PadValue (Null, Zero, Max, Min; include/pto/
// common/type.hpp at 3186c381) by the number a tile_buf type's pad= gives.
var padWords = map[string]string{"1": "zero", "2": "max", "3": "min"}

// outsPad reads the pad value of an op's destination tile type (`outs(%d :
// !pto.tile_buf<..., pad=3>)`): the ISA's #pad word, and false for
// PadValue::Null or no pad key.
func outsPad(op *Op) (string, asm.Span, bool) {
	g, ok := keyGroup(op.Toks, "outs")
	if !ok {
		return "", asm.Span{}, false
	}
	for i := 0; i+2 < len(g); i++ {
		if g[i].Kind == KIdent && g[i].Text == "pad" && g[i+1].is("=") {
			w, ok := padWords[g[i+2].Text]
			return w, g[i+2].Span, ok
		}
	}
	return "", asm.Span{}, false
}

// quantTmp resolves a tquant's `ptoasm.tmp = "%v"`: the tile value %v,
// named as a string because an attribute holds no SSA operand. ok is false
// without the attribute (or after an error).
func (k *kctx) quantTmp(op *Op, d dps) (*val, Tok, bool) {
	a, ok := d.attrs["ptoasm.tmp"]
	if !ok {
		return nil, Tok{}, false
	}
	if len(a) != 1 || a[0].Kind != KString {
		k.errf(spanOf(a), "ptoasm.tmp: expected the tmp tile's SSA name as a string (\"%%v\")")
		return nil, Tok{}, false
	}
	t := Tok{Kind: KValue, Text: strings.Trim(a[0].Text, `"`), Span: a[0].Span}
	if !strings.HasPrefix(t.Text, "%") {
		k.errf(t.Span, "ptoasm.tmp: expected the tmp tile's SSA name as a string (\"%%v\"), found %s", a[0].Text)
		return nil, Tok{}, false
	}
	v := k.use(t) // reports an undefined value
	if v.kind != vTile {
		if k.vals[t.Text] != nil {
			k.errf(t.Span, "ptoasm.tmp: %s is not a tile", t.Text)
		}
		return nil, Tok{}, false
	}
	return v, t, true
}

// standIn lowers an op our ISA lacks to V-pipe instructions with its effects
// (PTO.cpp's getEffects): every tile it reads is read and every tile it
// writes written, so hazards are found as PTOAS would see them. A vec→vec
// tmov keeps dtypes, a tcvt changes them; a binary stand-in uses tadd when
// shapes and dtypes agree. The written scratch operand (scratchIns) and the
// outputs after the first (tgather's cdst) are written by a texpands each:
// reading them, as a plain source would be, reported the op's own output as
// an uninitialised read.
func (k *kctx) standIn(op *Op, name string, d dps, insT []*val, insTok []Tok, outT []*val, outTok []Tok) {
	var written []*val
	var writtenTok []Tok
	if base, ok := scratchIns[name]; ok && len(d.ins) > base && len(insT) > 0 && d.ins[len(d.ins)-1] == insT[len(insT)-1] {
		written, writtenTok = append(written, insT[len(insT)-1]), append(writtenTok, insTok[len(insT)-1])
		insT, insTok = insT[:len(insT)-1], insTok[:len(insTok)-1]
	}
	if len(outT) > 1 {
		written, writtenTok = append(written, outT[1:]...), append(writtenTok, outTok[1:]...)
	}
	k.standInMain(op, insT, insTok, outT, outTok)
	for i, t := range written {
		if t.tile.loc == "vec" && len(outT) > 0 {
			k.note(k.instr(op, "texpands", tileRef(t, writtenTok[i]), fnum(op.Span, 0)), "stand-in for %s: the %%%s it writes", op.Name, t.tile.name)
		}
	}
}

// taddTakes reports whether pto-isa's TADD takes the MLIR element type dt.
func taddTakes(dt string) bool {
	t, ok := asm.ParseDType(dt)
	return ok && asm.LookupOp("tadd").AllowsDType(0, t)
}

func (k *kctx) standInMain(op *Op, insT []*val, insTok []Tok, outT []*val, outTok []Tok) {
	if len(outT) == 0 || len(insT) == 0 {
		if len(outT) > 0 && len(insT) == 0 {
			k.note(k.instr(op, "texpands", tileRef(outT[0], outTok[0]), fnum(op.Span, 0)), "stand-in for %s", op.Name)
			return
		}
		k.errf(op.NameTok.Span, "unsupported operation %s", op.Name)
		return
	}
	d := outT[0].tile
	for _, t := range append(append([]*val{}, insT...), outT...) {
		if t.tile.loc != "vec" {
			k.errf(op.NameTok.Span, "unsupported operation %s on %s tiles", op.Name, t.tile.loc)
			return
		}
	}
	same := func(t *tileVal) bool { return t.dtype == d.dtype && t.rows == d.rows && t.cols == d.cols }
	// tadd only on the element types pto-isa's TADD takes; other stand-ins
	// copy (the stand-in must not refuse what the op it models accepts).
	if len(insT) >= 2 && same(insT[0].tile) && same(insT[1].tile) && taddTakes(d.dtype) {
		k.note(k.instr(op, "tadd", tileRef(outT[0], outTok[0]), tileRef(insT[0], insTok[0]), tileRef(insT[1], insTok[1])),
			"stand-in for %s (V pipe, same reads and writes)", op.Name)
		return
	}
	first := true
	for i, s := range insT {
		mn := ""
		switch {
		case s.tile.dtype == d.dtype:
			mn = "tmov" // shapes may differ
		case s.tile.rows == d.rows && s.tile.cols == d.cols:
			mn = "tcvt"
		default:
			continue
		}
		if !first {
			// One op, several V instructions writing its destination:
			// ordered, as the internal barriers of pto-isa's composite V
			// ops order theirs, so the detector does not report the op
			// against itself (tgather's compare form gave a same-pipe WAW
			// on its own dst).
			k.instr(op, "pipe_barrier", &asm.Name{Span: op.Span, Name: "V"})
		}
		in := k.instr(op, mn, tileRef(outT[0], outTok[0]), tileRef(s, insTok[i]))
		// A tcvt of a pair TCvt.hpp has no conversion for still carries
		// the read (#standin: asm.Instr.StandIn, printed with the text).
		in.Attrs = append(in.Attrs, &asm.Attr{Span: in.OpSpan, Key: "standin"})
		if first {
			k.note(in, "stand-in for %s (V pipe, same reads and writes)", op.Name)
			first = false
		}
	}
	if first {
		// No V op reads a tile of another dtype and shape: the write alone.
		k.note(k.instr(op, "texpands", tileRef(outT[0], outTok[0]), fnum(op.Span, 0)),
			"stand-in for %s: its reads are not modelled", op.Name)
	}
}

// memref lowers the memref ops the corpus uses on local buffers.
func (k *kctx) memref(op *Op) {
	name, sp := k.result(op)
	switch op.Name {
	case "memref.alloc":
		ti, ok := parseType(lastType(op.Toks))
		if !ok || ti.kind != "memref" {
			k.errf(op.Span, "memref.alloc: cannot read the type")
			return
		}
		if k.manualReserve {
			k.errf(op.Span, "memref.alloc: cannot use pto.reserve_buffer with auto = false when local memref.alloc still requires PlanMemory allocation (PTOAS's PlanMemory places either every local buffer or none)")
			return
		}
		k.define(op, k.declTile(sp, name, ti, nil, nil, nil))
	case "memref.dealloc":
	case "memref.reinterpret_cast", "memref.subview", "memref.cast", "memref.collapse_shape", "memref.expand_shape":
		if len(op.Toks) == 0 || op.Toks[0].Kind != KValue {
			k.errf(op.Span, "%s needs an operand", op.Name)
			return
		}
		src := k.use(op.Toks[0])
		if src.kind == vTile {
			ti, _ := parseType(afterArrow(op.Toks))
			if ti.kind != "memref" {
				ti = typeInfo{}
			}
			k.define(op, k.alias(op, src, ti, nil))
			return
		}
		k.define(op, src) // GM views keep their tensor
	default:
		k.errf(op.NameTok.Span, "unsupported operation %s", op.Name)
	}
}
