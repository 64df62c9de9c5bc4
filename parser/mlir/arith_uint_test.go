package mlir

import (
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
)

// refArith is MLIR's arith.<name> on w-bit two's complement operands (w 8,
// 16, 32 or 64), the result read signed; ok false where MLIR has no value.
func refArith(name string, w int, x, y int64) (int64, bool) {
	u := func(v int64) uint64 { return uint64(v) & (math.MaxUint64 >> (64 - w)) }
	s := func(r uint64) int64 { return int64(r<<(64-w)) >> (64 - w) }
	ux, uy := u(x), u(y)
	switch name {
	case "shrui":
		if y < 0 || y >= int64(w) {
			return 0, false
		}
		return s(ux >> y), true
	case "floordivsi":
		if y == 0 || (x == math.MinInt64 && y == -1) {
			return 0, false
		}
		q := math.Floor(float64(x) / float64(y))
		if w < 53 {
			return int64(q), true
		}
		// float64 is exact only below 2^53: truncate, then step down.
		t := x / y
		if t*y != x && (x < 0) != (y < 0) {
			t--
		}
		return t, true
	case "divui", "remui", "ceildivui":
		if uy == 0 {
			return 0, false
		}
		switch name {
		case "divui":
			return s(ux / uy), true
		case "remui":
			return s(ux % uy), true
		}
		q := ux / uy
		if ux%uy != 0 {
			q++
		}
		return s(q), true
	case "maxui":
		return s(max(ux, uy)), true
	case "minui":
		return s(min(ux, uy)), true
	case "ult":
		return map[bool]int64{true: 1}[ux < uy], true
	case "uge":
		return map[bool]int64{true: 1}[ux >= uy], true
	}
	panic(name)
}

// evalExpr evaluates a lowered expression as the machine does (asm's
// int64 operators, wrapping), with x and y bound.
func evalExpr(t *testing.T, e asm.Expr, env map[string]int64) int64 {
	switch e := e.(type) {
	case *asm.Num:
		return e.Int
	case *asm.Name:
		v, ok := env[e.Name]
		if !ok {
			t.Fatalf("unbound %s", e.Name)
		}
		return v
	case *asm.Paren:
		return evalExpr(t, e.X, env)
	case *asm.Unary:
		x := evalExpr(t, e.X, env)
		switch e.Op {
		case "-":
			return -x
		case "~":
			return ^x
		}
	case *asm.Binary:
		v, _ := asm.EvalBinop(e.Op, evalExpr(t, e.X, env), evalExpr(t, e.Y, env))
		return v
	case *asm.Call:
		var xs []int64
		for _, a := range e.Args {
			xs = append(xs, evalExpr(t, a, env))
		}
		v, _ := asm.FoldCall(e.Fn, xs)
		return v
	}
	t.Fatalf("unexpected %T", e)
	return 0
}

// TestUnsignedArith: arith's unsigned ops and floordivsi on negative
// operands, folded (both known) and as the machine evaluates the lowered
// expression (x and y in registers, or only x), at 8 to 64 bits. shrui was
// an arithmetic shift, floordivsi truncated, divui/remui/ceildivui/maxui/
// minui and cmpi ult/uge compared and divided signed.
func TestUnsignedArith(t *testing.T) {
	vals := []int64{0, 1, 2, 3, 7, -1, -2, -7, -16, 100, -100, 127, -128, 255, 32767, -32768, 65535,
		math.MaxInt32, math.MinInt32, 1 << 32, math.MaxInt64, math.MinInt64, math.MinInt64 + 1, 1 << 62}
	sp := asm.Span{}
	dyn := func(n string) *val { return &val{kind: vScalar, x: &asm.Name{Span: sp, Name: n}} }
	for _, name := range []string{"shrui", "floordivsi", "divui", "remui", "ceildivui", "maxui", "minui", "ult", "uge"} {
		for _, w := range []int{8, 16, 32, 64} {
			for _, x := range vals {
				for _, y := range vals {
					if w < 64 {
						// An operand of w bits: its signed reading.
						x, y = int64(uint64(x)<<(64-w))>>(64-w), int64(uint64(y)<<(64-w))>>(64-w)
					}
					if name == "shrui" {
						y = (y%int64(w) + int64(w)) % int64(w)
					}
					want, ok := refArith(name, w, x, y)
					if !ok {
						continue
					}
					lower := func(a, b *val) *val {
						if name == "ult" || name == "uge" {
							p, q := unsignedOrder(sp, w, a, b)
							return binVal(sp, map[string]string{"ult": "<", "uge": ">="}[name], p, q)
						}
						return uintArith(sp, name, w, a, b)
					}
					env := map[string]int64{"x": x, "y": y}
					if v := lower(lit(sp, x), lit(sp, y)); !v.known || v.v != want {
						t.Errorf("%s i%d %d, %d folded: %v %d, want %d", name, w, x, y, v.known, v.v, want)
					}
					if got := evalExpr(t, lower(dyn("x"), dyn("y")).x, env); got != want {
						t.Errorf("%s i%d %d, %d in registers: %d, want %d", name, w, x, y, got, want)
					}
					if got := evalExpr(t, lower(dyn("x"), lit(sp, y)).x, env); got != want {
						t.Errorf("%s i%d %d, %d (x in a register): %d, want %d", name, w, x, y, got, want)
					}
				}
			}
		}
	}
}

// TestArithNegative: a kernel's arith on negative constants, as the PTO-AS
// translation reads it (a loop bound).
func TestArithNegative(t *testing.T) {
	for _, c := range []struct {
		op, ty string
		a, b   int64
		want   string
	}{
		{"shrui", "i32", -16, 2, "1073741820"}, // was -4
		{"shrui", "i8", -16, 2, "60"},
		{"shrui", "index", -16, 60, "15"},
		{"shrsi", "i32", -16, 2, "-4"},
		{"floordivsi", "i32", -7, 2, "-4"}, // was -3
		{"floordivsi", "index", 7, -2, "-4"},
		{"floordivsi", "index", -8, 2, "-4"},
		{"ceildivsi", "index", -7, 2, "-3"},
		{"ceildivsi", "index", 7, 2, "4"},
		{"divsi", "index", -7, 2, "-3"},
		{"remsi", "index", -7, 2, "-1"},
		{"remui", "i32", -7, 5, "4"},     // 4294967289 % 5; was -2
		{"divui", "i16", -2, 2, "32767"}, // 65534 / 2; was -1
		{"divui", "index", -2, 2, "9223372036854775807"},
		{"ceildivui", "i32", -1, 1 << 30, "4"},
		{"maxui", "i32", -1, 5, "-1"}, // 0xFFFFFFFF; was 5
		{"minui", "i32", -1, 5, "5"},  // was -1
	} {
		src := "module {\n  func.func @k() {\n    %c0 = arith.constant 0 : index\n    %c1 = arith.constant 1 : index\n" +
			"    %a = arith.constant " + strconv.FormatInt(c.a, 10) + " : " + c.ty + "\n    %b = arith.constant " + strconv.FormatInt(c.b, 10) + " : " + c.ty + "\n" +
			"    %r = arith." + c.op + " %a, %b : " + c.ty + "\n"
		if c.ty != "index" {
			src += "    %ri = arith.index_cast %r : " + c.ty + " to index\n"
		} else {
			src += "    %ri = arith.addi %r, %c0 : index\n"
		}
		src += "    scf.for %i = %ri to %c1 step %c1 {\n    }\n    return\n  }\n}\n"
		f, errs := ParseFile("n.pto", []byte(src))
		if errs.HasErrors() || f == nil {
			t.Fatalf("%s %s: %v", c.op, c.ty, errs)
		}
		var out strings.Builder
		asm.Fprint(&out, f)
		if want := "for %i = " + c.want + " to 1"; !strings.Contains(out.String(), want) {
			t.Errorf("arith.%s %d, %d : %s: no %q in\n%s", c.op, c.a, c.b, c.ty, want, out.String())
		}
	}
}
