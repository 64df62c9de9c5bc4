package asm

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// table is a tabwriter whose output lines lose their trailing padding.
type table struct {
	buf bytes.Buffer
	tw  *tabwriter.Writer
	out io.Writer
}

func newTable(w io.Writer) *table {
	t := &table{out: w}
	t.tw = tabwriter.NewWriter(&t.buf, 0, 4, 2, ' ', 0)
	return t
}

func (t *table) Write(p []byte) (int, error) { return t.tw.Write(p) }

func (t *table) Flush() {
	t.tw.Flush()
	for _, line := range strings.SplitAfter(t.buf.String(), "\n") {
		if line == "" {
			continue
		}
		io.WriteString(t.out, strings.TrimRight(line, " \n")+"\n")
	}
	t.buf.Reset()
}

// FprintListing writes what the assembler decided, per kernel: the tile table
// (buffer, byte range, size, how placed, every overlap) and each instruction with
// its index, source line, pipe and resolved operands. Output depends only on the
// Object, so listings are golden-testable.
func (o *Object) FprintListing(w io.Writer) {
	fmt.Fprintf(w, "program %s\n", o.Main)
	if len(o.Consts) > 0 {
		fmt.Fprintln(w, "\nconstants:")
		for _, c := range o.Consts {
			ov := ""
			if c.Overridden {
				ov = "  (-D)"
			}
			if c.IsFloat {
				fmt.Fprintf(w, "  %s = %v%s\n", c.Name, c.F, ov)
				continue
			}
			fmt.Fprintf(w, "  %s = %d%s\n", c.Name, c.Val, ov)
		}
	}
	if len(o.Tensors) > 0 {
		fmt.Fprintln(w, "\ntensors:")
		tw := newTable(w)
		for _, t := range o.Tensors {
			extra := ""
			if t.Class == TensorFIFO {
				extra = fmt.Sprintf("slots=%d id=%d", t.Attrs["slots"], t.Attrs["id"])
			}
			fmt.Fprintf(tw, "  %s\t@%s\t%s %s\t%s\t%d B\t%s\n", t.Class, t.Name, t.DType, dimsString(t.Shape), t.Layout, t.Bytes, extra)
		}
		tw.Flush()
	}
	for _, k := range o.Kernels {
		o.fprintKernel(w, k)
	}
}

func dimsString(ds []int64) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = fmt.Sprint(d)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func rangeString(lo, hi int64) string { return fmt.Sprintf("[%#x,%#x)", lo, hi) }

func (t *TileInfo) elemName(n int) string {
	if t.IsArray {
		return fmt.Sprintf("%%%s[%d]", t.Name, n)
	}
	return "%" + t.Name
}

type elemKey struct {
	t *TileInfo
	n int
}

func (o *Object) fprintKernel(w io.Writer, k *KernelInfo) {
	fmt.Fprintf(w, "\nkernel %s : %s\n", k.Name, k.Kind)
	if len(k.Tiles) > 0 {
		fmt.Fprintln(w, "  tiles:")
		byElem := map[elemKey][]TileOverlap{}
		for _, p := range k.Overlaps() {
			byElem[elemKey{p.A, p.AIdx}] = append(byElem[elemKey{p.A, p.AIdx}], p)
			byElem[elemKey{p.B, p.BIdx}] = append(byElem[elemKey{p.B, p.BIdx}], p)
		}
		tw := newTable(w)
		for _, t := range k.Tiles {
			how := "@"
			if t.Auto {
				how = "auto"
			}
			valid := ""
			if t.VRows != t.Rows || t.VCols != t.Cols {
				valid = fmt.Sprintf(" valid [%d, %d]", t.VRows, t.VCols)
			}
			if t.DynValid() {
				valid = " valid at run time"
			}
			if t.Rebound {
				how += ", rebound at run time"
			}
			for n, x := range t.Addr {
				if t.Unplaced {
					fmt.Fprintf(tw, "    %s\t%s %s [%d, %d]%s\t%s\t-\t%d B\tbound at run time\t\n", t.elemName(n), t.Loc, t.DType, t.Rows, t.Cols,
						valid, t.Space, t.Bytes)
					continue
				}
				var ov []string
				for _, p := range byElem[elemKey{t, n}] {
					if p.A == t && p.AIdx == n {
						ov = append(ov, p.B.elemName(p.BIdx)+" "+rangeString(p.Lo, p.Hi))
					} else {
						ov = append(ov, p.A.elemName(p.AIdx)+" "+rangeString(p.Lo, p.Hi))
					}
				}
				note := ""
				if len(ov) > 0 {
					note = "overlaps " + strings.Join(ov, ", ")
				}
				fmt.Fprintf(tw, "    %s\t%s %s [%d, %d]%s\t%s\t%s\t%d B\t%s\t%s\n", t.elemName(n), t.Loc, t.DType, t.Rows, t.Cols,
					valid, t.Space, rangeString(x, x+t.Bytes), t.Bytes, how, note)
			}
		}
		tw.Flush()
	}
	if len(k.Regs) > 0 {
		fmt.Fprintf(w, "  registers: %s\n", strings.Join(prefixAll("%", k.Regs), " "))
	}
	fmt.Fprintln(w, "  ops:")
	tw := newTable(w)
	for _, op := range k.Ops {
		pos := op.Instr.Span.Pos
		label := ""
		if op.Instr.Label != "" {
			label = op.Instr.Label + ":"
		}
		var attrs []string
		for _, at := range op.Attrs {
			attrs = append(attrs, "#"+at.Key+"="+attrString(at))
		}
		fmt.Fprintf(tw, "    %d\t%s:%d\t%s\t%s\t%s\t%s\n", op.ID, pos.File, pos.Line, op.ExecPipe(), label+op.Info.Name,
			strings.Join(op.argStrings(), ", "), strings.Join(attrs, " "))
	}
	tw.Flush()
}

func prefixAll(p string, xs []string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = p + x
	}
	return out
}

func attrString(at CAttr) string {
	switch {
	case at.IsWord:
		return at.Word
	case at.IsFloat:
		return fmt.Sprint(at.F)
	}
	return cexprString(at.Val)
}

func cexprString(c CExpr) string {
	if c.Const {
		return fmt.Sprint(c.Val)
	}
	if c.Src != nil {
		return ExprString(c.Src)
	}
	return "?"
}

func (op *COp) argStrings() []string {
	out := make([]string, len(op.Args))
	for i, a := range op.Args {
		out[i] = a.String()
	}
	return out
}

// String describes a resolved operand for listings and traces.
func (a Arg) String() string {
	switch a.Kind {
	case ArgTile:
		t := a.Tile
		if t == nil {
			return "?"
		}
		if t.Rebound {
			// The address is the binding at issue (docs/language.md "Tile views").
			if t.IsArray {
				return fmt.Sprintf("%%%s[%s] %s bound at run time %dB", t.Name, cexprString(a.TileIdx), t.Space, t.Bytes)
			}
			return fmt.Sprintf("%%%s %s bound at run time %dB", t.Name, t.Space, t.Bytes)
		}
		if !t.IsArray {
			if len(t.Addr) == 0 {
				return "%" + t.Name
			}
			return fmt.Sprintf("%%%s %s%s %dB", t.Name, t.Space, rangeString(t.Addr[0], t.Addr[0]+t.Bytes), t.Bytes)
		}
		if a.TileIdx.Const && a.TileIdx.Val >= 0 && int(a.TileIdx.Val) < len(t.Addr) {
			x := t.Addr[a.TileIdx.Val]
			return fmt.Sprintf("%%%s[%d] %s%s %dB", t.Name, a.TileIdx.Val, t.Space, rangeString(x, x+t.Bytes), t.Bytes)
		}
		var rs []string
		for _, x := range t.Addr {
			rs = append(rs, rangeString(x, x+t.Bytes))
		}
		return fmt.Sprintf("%%%s[%s] %s{%s} %dB", t.Name, cexprString(a.TileIdx), t.Space, strings.Join(rs, " "), t.Bytes)
	case ArgGM:
		if a.GM == nil {
			return "@?"
		}
		var b strings.Builder
		b.WriteString("@" + a.GM.Name)
		if a.HasRank {
			b.WriteString("[rank=" + cexprString(a.Rank) + "]")
		}
		if len(a.Idx) > 0 {
			parts := make([]string, len(a.Idx))
			for i, c := range a.Idx {
				parts[i] = cexprString(c)
			}
			b.WriteString("[" + strings.Join(parts, ", ") + "]")
		}
		fmt.Fprintf(&b, " %s %s", a.GM.DType, dimsString(a.GM.Shape))
		return b.String()
	case ArgScalar:
		return cexprString(a.Val)
	case ArgFloat:
		return fmt.Sprint(a.F)
	case ArgPipe:
		return a.Pipe.String()
	case ArgWord:
		return a.Word
	case ArgReg:
		return fmt.Sprintf("r%d", a.Slot)
	}
	return "-"
}
