package asm

import (
	"fmt"
	"io"
	"strings"
)

// ptoISAPages names the instruction pages of pto-isa's docs/isa at commit
// 3186c381 (one NAME.md per instruction, _zh translations, README and
// conventions left out): the list ptoasm's coverage is measured against.
var ptoISAPages = []string{
	"MGATHER", "MSCATTER", "SETFMATRIX", "SET_IMG2COL_PADDING", "SET_IMG2COL_RPT", "SET_QUANT_SCALAR",
	"SET_QUANT_VECTOR", "SYNCALL", "TABS", "TADD", "TADDC", "TADDReluConv", "TADDS", "TADDSC",
	"TALLOC", "TAND", "TANDS", "TASSIGN", "TAXPY", "TAddDeqRelu", "TCI", "TCMP", "TCMPS",
	"TCOLARGMAX", "TCOLARGMIN", "TCOLEXPAND", "TCOLEXPANDADD", "TCOLEXPANDDIV", "TCOLEXPANDEXPDIF",
	"TCOLEXPANDMAX", "TCOLEXPANDMIN", "TCOLEXPANDMUL", "TCOLEXPANDSUB", "TCOLMAX", "TCOLMIN",
	"TCOLPROD", "TCOLSUM", "TCONCAT", "TCVT", "TDEINTERLEAVE", "TDEQUANT", "TDIV", "TDIVS", "TEXP",
	"TEXPANDS", "TEXTRACT", "TEXTRACT_FP", "TFILLPAD", "TFILLPAD_EXPAND", "TFILLPAD_INPLACE", "TFMOD",
	"TFMODS", "TFREE", "TFUSEDMULADD", "TFUSEDMULADDRELU", "TGATHER", "TGATHERB", "TGEMV",
	"TGEMV_ACC", "TGEMV_BIAS", "TGEMV_MX", "TGET_SCALE_ADDR", "THISTOGRAM", "TIMG2COL", "TINSERT",
	"TINSERT_FP", "TINTERLEAVE", "TLOAD", "TLOG", "TLRELU", "TMATMUL", "TMATMUL_ACC", "TMATMUL_BIAS",
	"TMATMUL_MX", "TMATMUL_MX_HIF4", "TMAX", "TMAXS", "TMIN", "TMINS", "TMOV", "TMOV_FP", "TMRGSORT",
	"TMUL", "TMULADDDST", "TMULS", "TNEG", "TNOT", "TOR", "TORS", "TPARTADD", "TPARTARGMAX",
	"TPARTARGMIN", "TPARTMAX", "TPARTMIN", "TPARTMUL", "TPOP", "TPOW", "TPOWS", "TPREFETCH",
	"TPREFETCH_ASYNC", "TPRELU", "TPRINT", "TPUSH", "TPairReduceSum", "TQUANT", "TQUANT_DN",
	"TQUANT_HIF4", "TRANDOM", "TRECIP", "TRELU", "TREM", "TREMS", "TRESHAPE", "TROWARGMAX",
	"TROWARGMIN", "TROWEXPAND", "TROWEXPANDADD", "TROWEXPANDDIV", "TROWEXPANDEXPDIF", "TROWEXPANDMAX",
	"TROWEXPANDMIN", "TROWEXPANDMUL", "TROWEXPANDSUB", "TROWMAX", "TROWMIN", "TROWPROD", "TROWSUM",
	"TRSQRT", "TSCATTER", "TSEL", "TSELS", "TSHL", "TSHLS", "TSHR", "TSHRS", "TSORT32", "TSQRT",
	"TSTORE", "TSTORE_FP", "TSUB", "TSUBC", "TSUBRELU", "TSUBS", "TSUBSC", "TSUBVIEW", "TSYNC",
	"TTRANS", "TTRI", "TXOR", "TXORS",
}

// notYet says, for each pto-isa instruction with an A2/A3 implementation
// that ptoasm does not accept, why not or what expresses it instead.
var notYet = map[string]string{}

// PtoISACoverage classifies one pto-isa page name: the ptoasm instruction
// that accepts it (by its name, or with a variant suffix as `.x`), the
// reason it is rejected (not an A2/A3 instruction), or why it is missing.
func PtoISACoverage(page string) (op *OpInfo, rejected, missing string) {
	low := strings.ToLower(page)
	if op = LookupOp(low); op != nil {
		return op, "", ""
	}
	if i := strings.IndexByte(low, '_'); i > 0 {
		if op = LookupOp(low[:i] + "." + low[i+1:]); op != nil {
			return op, "", ""
		}
	}
	if why, ok := notOnA2A3[low]; ok {
		return nil, why, ""
	}
	if why, ok := notYet[page]; ok {
		return nil, "", why
	}
	return nil, "", "not accepted"
}

// fprintCoverage writes docs/isa.md's coverage table.
func fprintCoverage(w io.Writer) {
	var acc, rej, miss int
	var rows strings.Builder
	for _, p := range ptoISAPages {
		op, rejected, missing := PtoISACoverage(p)
		switch {
		case op != nil:
			acc++
			fmt.Fprintf(&rows, "| %s | `%s` | %s |\n", p, op.Name, op.RouteString())
		case rejected != "":
			rej++
			fmt.Fprintf(&rows, "| %s | rejected | %s |\n", p, rejected)
		default:
			miss++
			fmt.Fprintf(&rows, "| %s | — | %s |\n", p, missing)
		}
	}
	fmt.Fprintf(w, "\n## Coverage of pto-isa\n\n")
	fmt.Fprintf(w, "Against the %d instruction pages of pto-isa's docs/isa at commit 3186c381: %d accepted,\n", len(ptoISAPages), acc)
	fmt.Fprintf(w, "%d rejected with their reason (no A2/A3 implementation in include/pto/npu/a2a3: A5 only or the\n", rej)
	fmt.Fprintf(w, "CPU simulator only; the assembler says so and names the source), %d not accepted (the reason\n", miss)
	fmt.Fprintf(w, "or what expresses it instead). Accepted and rejected together: %d of %d (%.0f%%).\n\n", acc+rej, len(ptoISAPages), 100*float64(acc+rej)/float64(len(ptoISAPages)))
	fmt.Fprintln(w, "| pto-isa | ptoasm | pipe, or why not |")
	fmt.Fprintln(w, "|---|---|---|")
	fmt.Fprint(w, rows.String())
}
