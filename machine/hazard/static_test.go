package hazard

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/parser"
	"github.com/ptoasm/ptoasm/programs"
)

// kb builds a KernelInfo by hand: ops with lines, registers, loops and ifs.
type kb struct {
	k *asm.KernelInfo
}

func newKB() *kb { return &kb{k: &asm.KernelInfo{Name: "k", Kind: asm.CoreAIC}} }

func (b *kb) reg(name string) int {
	b.k.Regs = append(b.k.Regs, name)
	return len(b.k.Regs) - 1
}

func (b *kb) flag(name string, line int, src, dst asm.Pipe, id asm.CExpr) *asm.COp {
	op := &asm.COp{ID: len(b.k.Ops), Info: &asm.OpInfo{Op: asm.LookupOp(name).Op, Name: name, Family: asm.FamSync, Pipe: asm.PipeS}, Pipe: asm.PipeS,
		Instr: &asm.Instr{Span: asm.Span{Pos: asm.Pos{File: "k.pto", Line: line, Col: 5}}, Op: name},
		Args:  []asm.Arg{{Kind: asm.ArgPipe, Pipe: src}, {Kind: asm.ArgPipe, Pipe: dst}, {Kind: asm.ArgScalar, Val: id}}}
	b.k.Ops = append(b.k.Ops, op)
	return op
}

func (b *kb) set(line int, src, dst asm.Pipe, id asm.CExpr) *asm.COp {
	return b.flag("set_flag", line, src, dst, id)
}

func (b *kb) wait(line int, src, dst asm.Pipe, id asm.CExpr) *asm.COp {
	return b.flag("wait_flag", line, src, dst, id)
}

func k(v int64) asm.CExpr { return asm.CExpr{Const: true, Val: v} }

// regExpr is register slot+add, masked with mask when mask > 0: `(%j + add) & mask`.
func regExpr(name string, slot int, add, mask int64) asm.CExpr {
	var src asm.Expr = &asm.Ref{Name: name}
	if add != 0 {
		src = &asm.Binary{Op: "+", X: src, Y: &asm.Num{Int: add}}
	}
	if mask > 0 {
		src = &asm.Binary{Op: "&", X: src, Y: &asm.Num{Int: mask}}
	}
	return asm.CExpr{Src: src, Fn: func(e *asm.Env) int64 {
		v := e.Regs[slot] + add
		if mask > 0 {
			v &= mask
		}
		return v
	}}
}

// lessThan is `%j + add < n`.
func lessThan(name string, slot int, add, n int64) asm.CExpr {
	return asm.CExpr{Src: &asm.Binary{Op: "<", X: &asm.Binary{Op: "+", X: &asm.Ref{Name: name}, Y: &asm.Num{Int: add}}, Y: &asm.Num{Int: n}},
		Fn: func(e *asm.Env) int64 {
			if e.Regs[slot]+add < n {
				return 1
			}
			return 0
		}}
}

// blockIdx is the builtin block_idx: unknown to the static pass.
var blockIdx = asm.CExpr{Src: &asm.Name{Name: "block_idx"}, Fn: func(e *asm.Env) int64 { return e.Block }}

// ffnKernel is the FFN mock's chunk loop (kernels.md §2(c)); fix adds the
// reviewer's MTE1->MTE2 flags and drain the two waits after the loop.
func ffnKernel(fix, drain bool) *asm.KernelInfo {
	b := newKB()
	j := b.reg("%j")
	body := []asm.CStmt{b.set(2, asm.PipeMTE2, asm.PipeMTE1, k(0))}
	if fix {
		body = append(body, b.set(3, asm.PipeMTE1, asm.PipeMTE2, k(1)))
	}
	var then []asm.CStmt
	if fix {
		then = append(then, b.wait(5, asm.PipeMTE1, asm.PipeMTE2, regExpr("%j", j, 1, 1)))
	}
	then = append(then, b.set(7, asm.PipeMTE2, asm.PipeMTE1, regExpr("%j", j, 1, 1)))
	loop := []asm.CStmt{
		&asm.CIf{Cond: lessThan("%j", j, 1, 4), Then: then},
		b.wait(8, asm.PipeMTE2, asm.PipeMTE1, regExpr("%j", j, 0, 1)),
	}
	if fix {
		loop = append(loop, b.set(10, asm.PipeMTE1, asm.PipeMTE2, regExpr("%j", j, 0, 1)))
	}
	body = append(body, &asm.CFor{Slot: j, From: k(0), To: k(4), Step: k(1), Body: loop})
	if fix && drain {
		body = append(body, b.wait(15, asm.PipeMTE1, asm.PipeMTE2, k(0)), b.wait(16, asm.PipeMTE1, asm.PipeMTE2, k(1)))
	}
	b.k.Body = body
	return b.k
}

type want struct {
	kind string
	line int
}

func got(fs []Finding) []want {
	var out []want
	for _, f := range fs {
		out = append(out, want{f.Kind, f.First.Line})
	}
	return out
}

func TestCheckFlags(t *testing.T) {
	M2, M1, V := asm.PipeMTE2, asm.PipeMTE1, asm.PipeV
	tests := []struct {
		name  string
		build func() *asm.KernelInfo
		want  []want
	}{
		{"ffn as shipped", func() *asm.KernelInfo { return ffnKernel(false, false) }, nil},
		{"ffn fix without drain", func() *asm.KernelInfo { return ffnKernel(true, false) }, []want{{KindUnpairedSet, 10}}},
		{"ffn fix with drain", func() *asm.KernelInfo { return ffnKernel(true, true) }, nil},
		{"balanced straight line", func() *asm.KernelInfo {
			b := newKB()
			b.k.Body = []asm.CStmt{b.set(1, M2, V, k(0)), b.wait(2, M2, V, k(0))}
			return b.k
		}, nil},
		{"wait with no set", func() *asm.KernelInfo {
			b := newKB()
			b.k.Body = []asm.CStmt{b.wait(1, M2, V, k(0))}
			return b.k
		}, []want{{KindDeadlock, 1}}},
		{"double set", func() *asm.KernelInfo {
			b := newKB()
			b.k.Body = []asm.CStmt{b.set(1, M2, V, k(3)), b.set(2, M2, V, k(3)), b.wait(3, M2, V, k(3))}
			return b.k
		}, []want{{KindDoubleSet, 1}}},
		{"set in else-less if, wait after (PTOAS#1149)", func() *asm.KernelInfo {
			b := newKB()
			b.k.Body = []asm.CStmt{&asm.CIf{Cond: blockIdx, Then: []asm.CStmt{b.set(2, M2, V, k(0))}}, b.wait(4, M2, V, k(0))}
			return b.k
		}, []want{{KindDeadlock, 4}}},
		{"set in both arms", func() *asm.KernelInfo {
			b := newKB()
			b.k.Body = []asm.CStmt{&asm.CIf{Cond: blockIdx, Then: []asm.CStmt{b.set(2, M2, V, k(0))}, Else: []asm.CStmt{b.set(3, M2, V, k(0))}}, b.wait(4, M2, V, k(0))}
			return b.k
		}, nil},
		{"zero-trip loop of unknown bound (PTOAS#533)", func() *asm.KernelInfo {
			b := newKB()
			i := b.reg("%i")
			b.k.Body = []asm.CStmt{
				&asm.CFor{Slot: i, From: k(0), To: blockIdx, Step: k(1), Body: []asm.CStmt{b.set(2, M2, V, k(0)), b.wait(3, M2, V, k(0))}},
				b.set(5, M2, V, k(1)),
				&asm.CFor{Slot: i, From: k(0), To: blockIdx, Step: k(1), Body: []asm.CStmt{b.wait(7, M2, V, k(1))}},
			}
			return b.k
		}, []want{{KindUnpairedSet, 5}, {KindDeadlock, 7}}},
		{"constant zero-trip loop", func() *asm.KernelInfo {
			b := newKB()
			i := b.reg("%i")
			b.k.Body = []asm.CStmt{
				b.set(1, M2, M1, k(2)),
				&asm.CFor{Slot: i, From: k(0), To: k(0), Step: k(1), Body: []asm.CStmt{b.wait(3, M2, M1, k(2))}},
			}
			return b.k
		}, []want{{KindUnpairedSet, 1}}},
		{"preheat and drain around an unknown loop", func() *asm.KernelInfo {
			b := newKB()
			i := b.reg("%i")
			b.k.Body = []asm.CStmt{
				b.set(1, V, M2, k(0)),
				&asm.CFor{Slot: i, From: k(0), To: blockIdx, Step: k(1), Body: []asm.CStmt{b.wait(3, V, M2, k(0)), b.set(4, V, M2, k(0))}},
				b.wait(6, V, M2, k(0)),
			}
			return b.k
		}, nil},
		{"dynamic id that cannot be evaluated", func() *asm.KernelInfo {
			b := newKB()
			b.k.Body = []asm.CStmt{b.set(1, M2, V, blockIdx)}
			return b.k
		}, []want{{KindUnchecked, 1}}},
		{"bad event id", func() *asm.KernelInfo {
			b := newKB()
			b.k.Body = []asm.CStmt{b.set(1, M2, V, k(9))}
			return b.k
		}, []want{{KindBadEventID, 1}}},
		{"break out of an unrolled loop skips the wait", func() *asm.KernelInfo {
			b := newKB()
			i := b.reg("%i")
			b.k.Body = []asm.CStmt{
				&asm.CFor{Slot: i, From: k(0), To: k(3), Step: k(1), Body: []asm.CStmt{
					b.set(2, M2, V, k(0)),
					&asm.CIf{Cond: lessThan("%i", i, 0, 1), Then: []asm.CStmt{&asm.CBreak{}}},
					b.wait(4, M2, V, k(0)),
				}},
			}
			return b.k
		}, []want{{KindUnpairedSet, 2}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fs := CheckFlags(tc.build())
			if d := cmp.Diff(tc.want, got(fs), cmp.AllowUnexported(want{})); d != "" {
				t.Errorf("findings (-want +got):\n%s\n%+v", d, fs)
			}
		})
	}
	if CheckFlags(nil) != nil {
		t.Error("nil kernel")
	}
}

// srcFE assembles programs from the embedded programs and from in-memory
// sources (names starting with "mem:").
func srcFE(mem map[string]string) asm.Frontend {
	return asm.Frontend{ParseFile: parser.ParseFile, ParseExpr: parser.ParseExpr, ReadFile: func(name string) ([]byte, error) {
		if s, ok := mem[name]; ok {
			return []byte(s), nil
		}
		return fs.ReadFile(programs.FS, filepath.ToSlash(name))
	}}
}

// lwant is a finding expected at the instruction with a label.
type lwant struct{ kind, label string }

// staticOf runs the static pass on a program as CheckObject does and names
// each finding's first site by its label ("?" for none).
func staticOf(t *testing.T, fe asm.Frontend, path string, defs []asm.Define) []lwant {
	t.Helper()
	obj, errs := asm.Assemble(fe, path, defs)
	if errs.HasErrors() {
		t.Fatalf("assemble %s: %v", path, errs)
	}
	labels := map[int]string{}
	for _, k := range obj.Kernels {
		for _, op := range k.Ops {
			if op.Instr != nil && op.Instr.Label != "" {
				labels[op.Instr.Pos.Line] = op.Instr.Label
			}
		}
	}
	var out []lwant
	for _, f := range CheckObject(obj) {
		if f.Severity == SevNote.String() {
			if f.Kind == KindUnchecked {
				out = append(out, lwant{f.Kind, labelOr(labels, f.First.Line)})
			}
			continue
		}
		out = append(out, lwant{f.Kind, labelOr(labels, f.First.Line)})
	}
	return out
}

func labelOr(labels map[int]string, line int) string {
	if l, ok := labels[line]; ok {
		return l
	}
	return "?"
}

func kt(v string) []asm.Define { return []asm.Define{{Name: "KT", Value: v}} }

// TestCheckFlagsGuardedLoops: the static pass decides the guards of a K loop
// on every trip at any trip count, constant or read from memory, and still
// finds the bugs of the guards' buggy twins.
func TestCheckFlagsGuardedLoops(t *testing.T) {
	fe := srcFE(nil)
	type tc struct {
		prog string
		defs []asm.Define
		want []lwant
	}
	var tests []tc
	for _, n := range []string{"1", "2", "3", "4", "5", "63", "64", "65", "128", "4096", "4352", "6144"} {
		tests = append(tests, tc{"hazards/gemm_k_guards.pto", kt(n), nil})
	}
	for _, n := range []string{"1", "2", "3", "64", "65", "256"} {
		tests = append(tests, tc{"hazards/gemm_k_guards_gm.pto", kt(n), nil})
	}
	// KT = 2: trip 0 sets and no trip 2 waits; KT = 1 sets nothing.
	tests = append(tests, tc{"hazards/gemm_k_guard_off_by_one.pto", kt("1"), nil})
	for _, n := range []string{"2", "3", "63", "65", "100", "4096"} {
		tests = append(tests, tc{"hazards/gemm_k_guard_off_by_one.pto", kt(n), []lwant{{KindUnpairedSet, "free"}}})
	}
	for _, n := range []string{"1", "65", "4096"} {
		tests = append(tests, tc{"hazards/gemm_k_missing_prime.pto", kt(n), []lwant{{KindDeadlock, "tile0"}}})
	}
	tests = append(tests, tc{"hazards/correlated_conditions.pto", nil, nil})
	for _, tc := range tests {
		name := tc.prog
		if len(tc.defs) > 0 {
			name += "/KT=" + tc.defs[0].Value
		}
		t.Run(name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, staticOf(t, fe, tc.prog, tc.defs), cmp.AllowUnexported(lwant{})); d != "" {
				t.Errorf("findings (-want +got):\n%s", d)
			}
		})
	}
}

// gemmPerf is pto-isa's gemm_performance kernel (RunGemmE2E and
// ProcessKIteration) with its flags and guards as written there: an L1 load
// every STEPKA K iterations (`%k % STEPKA == 0`), its buffer freed after the
// last extract from it (`(%k + 1) % STEPKA == 0`), toggled buffer flags,
// INIT/DRAIN around the whole M x N x K nest. The port used to fail with 7
// false errors at K = 4352 and 6144 (kLoop = 68 and 96 trips).
const gemmPerf = `
const K = 4096
const BASEK = 64
const STEPKA = 4
const MLOOP = 2
const NLOOP = 2
const KLOOP = K / BASEK
gm A : f16 [128, 256] = zero
gm B : f16 [256, 256] = zero
gm C : f32 [128, 256] = poison
kernel gemm : aic {
    tile %aMat[2] : mat f16 [128, 256]
    tile %bMat[2] : mat f16 [256, 256]
    tile %a[2] : left f16 [128, 64]
    tile %b[2] : right f16 [64, 256]
    tile %c : acc f32 [128, 256]
    let %mte2 = 0
    let %mte1 = 0
    set_flag MTE1, MTE2, 0
    set_flag MTE1, MTE2, 1
    set_flag M, MTE1, 0
    set_flag M, MTE1, 1
    for %i = 0 to MLOOP {
        for %j = 0 to NLOOP {
            for %k = 0 to KLOOP {
                let %kmod = %k % STEPKA
                if %kmod == 0 {
                    wait_flag MTE1, MTE2, %mte2
                    tload %aMat[%mte2], @A[0, 0]
                    set_flag MTE2, MTE1, 0
                    tload %bMat[%mte2], @B[0, 0]
                    set_flag MTE2, MTE1, 1
                    let %mte2 = 1 - %mte2
                }
                let %cur = 1 - %mte2
                wait_flag M, MTE1, %mte1
                if %kmod == 0 {
                    wait_flag MTE2, MTE1, 0
                }
                textract %a[%mte1], %aMat[%cur], 0, %kmod * 64
                if %kmod == 0 {
                    wait_flag MTE2, MTE1, 1
                }
                textract %b[%mte1], %bMat[%cur], %kmod * 64, 0
                if (%k + 1) % STEPKA == 0 {
                    set_flag MTE1, MTE2, %cur
                }
                set_flag MTE1, M, %mte1
                wait_flag MTE1, M, %mte1
                tmatmul.acc %c, %a[%mte1], %b[%mte1] #init=(%k == 0)
                set_flag M, MTE1, %mte1
                let %mte1 = 1 - %mte1
            }
            set_flag M, FIX, 0
            wait_flag M, FIX, 0
            tstore @C[0, 0], %c
            set_flag FIX, M, 0
            wait_flag FIX, M, 0
        }
    }
    wait_flag M, MTE1, 0
    wait_flag M, MTE1, 1
    wait_flag MTE1, MTE2, 0
    wait_flag MTE1, MTE2, 1
}
launch ranks=1 {
    run gemm blocks=1
}
`

// TestCheckFlagsSymbolic: table of the static pass's symbolic mechanisms on
// small kernels: correlated conditions on launch values and loaded values,
// flag ids the facts bound to a few values, residues other than parity,
// trip counts read from memory, and pairs with an unknown id.
func TestCheckFlagsSymbolic(t *testing.T) {
	kernel := func(kind, body string) string {
		return "gm G : i32 [4] = zero\nkernel k : " + kind + " {\n" + body + "\n}\nlaunch ranks=1 {\n    run k blocks=1\n}\n"
	}
	tests := []struct {
		name string
		src  string
		defs []asm.Define
		want []lwant
	}{
		{"gemm_performance K=4096", gemmPerf, nil, nil},
		{"gemm_performance K=4352", gemmPerf, []asm.Define{{Name: "K", Value: "4352"}}, nil},
		{"gemm_performance 6144^3", gemmPerf, []asm.Define{{Name: "K", Value: "6144"}, {Name: "MLOOP", Value: "12"}, {Name: "NLOOP", Value: "4"}}, nil},
		{"gemm_performance K=4352 STEPKA=2", gemmPerf, []asm.Define{{Name: "K", Value: "4352"}, {Name: "STEPKA", Value: "2"}}, nil},
		{"gemm_performance K=4352, L1 freed on every trip", strings.Replace(gemmPerf, "if (%k + 1) % STEPKA == 0 {", "if %k >= 0 {", 1),
			[]asm.Define{{Name: "K", Value: "4352"}}, []lwant{{KindDoubleSet, "?"}}},
		{"set and wait under two subblock tests", kernel("aiv", `
    if subblock_idx == 0 {
        set_flag MTE2, V, 0
    }
    if subblock_idx == 0 {
        wait_flag MTE2, V, 0
    }`), nil, nil},
		{"set under subblock 0, wait under subblock 1", kernel("aiv", `
    if subblock_idx == 0 {
    s: set_flag MTE2, V, 0
    }
    if subblock_idx == 1 {
    w: wait_flag MTE2, V, 0
    }`), nil, []lwant{{KindUnpairedSet, "s"}, {KindDeadlock, "w"}}},
		{"subblock else arm", kernel("aiv", `
    if subblock_idx != 0 {
        set_flag MTE2, V, 0
    }
    if subblock_idx == 1 {
        wait_flag MTE2, V, 0
    }`), nil, nil},
		{"block_idx and rank tests", kernel("aiv", `
    if block_idx < 2 && rank == 0 {
        set_flag MTE2, V, 0
    }
    if rank == 0 {
        if block_idx <= 1 {
            wait_flag MTE2, V, 0
        }
    }`), nil, nil},
		{"loaded value and a let of its test", kernel("aiv", `
    %f = ld @G[0]
    let %go = %f >= 3
    if %go {
        set_flag MTE2, V, 0
    }
    if %f > 2 {
        wait_flag MTE2, V, 0
    }`), nil, nil},
		{"a second load is a new value", kernel("aiv", `
    %f = ld @G[0]
    if %f == 1 {
    s: set_flag MTE2, V, 0
    }
    %f = ld @G[0]
    if %f == 1 {
    w: wait_flag MTE2, V, 0
    }`), nil, []lwant{{KindUnpairedSet, "s"}, {KindDeadlock, "w"}}},
		{"subblock_idx as the flag id", kernel("aiv", `
    set_flag MTE2, V, subblock_idx
    wait_flag MTE2, V, subblock_idx`), nil, nil},
		{"subblock_idx id against a constant id", kernel("aiv", `
    set_flag MTE2, V, subblock_idx
    w: wait_flag MTE2, V, 0`), nil, []lwant{{KindUnpairedSet, "?"}, {KindDeadlock, "w"}}},
		{"an unknown id makes its pair unchecked", kernel("aiv", `
    %id = ld @G[0]
    set_flag MTE2, V, 0
    u: wait_flag MTE2, V, %id
    set_flag V, MTE3, 1`), nil, []lwant{{KindUnchecked, "u"}, {KindUnpairedSet, "?"}}},
		{"trip count from GM, guards against it", kernel("aic", `
    %n = ld @G[0]
    for %k = 0 to %n {
        if %k > 0 {
            wait_flag M, MTE1, (%k - 1) & 1
        }
        if %k < %n - 1 {
            set_flag M, MTE1, %k & 1
        }
        if %k != %n - 1 {
            set_flag MTE1, M, 0
            wait_flag MTE1, M, 0
        }
    }`), nil, nil},
		{"bounds from GM, parity ids from the first trip", kernel("aic", `
    %lo = ld @G[0]
    %hi = ld @G[1]
    set_flag M, MTE1, 0
    set_flag M, MTE1, 1
    for %k = %lo to %hi {
        wait_flag M, MTE1, %k & 1
        if %k == %lo {
            set_flag MTE1, M, 0
            wait_flag MTE1, M, 0
        }
        set_flag M, MTE1, %k & 1
    }
    wait_flag M, MTE1, 0
    wait_flag M, MTE1, 1`), nil, nil},
		{"global first/last guards over a 100 x 100 nest", "const NI = 100\nconst NK = 100\n" + kernel("aic", `
    for %i = 0 to NI {
        for %k = 0 to NK {
            if %i * NK + %k > 0 {
                wait_flag M, MTE1, 0
            }
            if %i * NK + %k + 1 < NI * NK {
                set_flag M, MTE1, 0
            }
        }
    }`), nil, nil},
		{"scaled guards: the first and last two trips", kernel("aic", `
    for %k = 0 to 1000 {
        if %k * 4 > 4 {
            wait_flag M, MTE1, %k & 1
        }
        if %k * 2 + 4 < 2000 {
            set_flag M, MTE1, %k & 1
        }
    }`), nil, nil},
		{"global last guard off by one over a 3 x 100 nest", "const NI = 3\nconst NK = 100\n" + kernel("aic", `
    for %i = 0 to NI {
        for %k = 0 to NK {
            if %i > 0 || %k > 0 {
                wait_flag M, MTE1, 0
            }
            if %i * NK + %k < NI * NK {
            s: set_flag M, MTE1, 0
            }
        }
    }`), nil, []lwant{{KindUnpairedSet, "s"}}},
		{"trip count from GM, zero trips correlated", kernel("aic", `
    %n = ld @G[0]
    for %k = 0 to %n {
        if %k == 0 {
            set_flag M, MTE1, 0
        }
    }
    if %n > 0 {
        wait_flag M, MTE1, 0
    }`), nil, nil},
		{"trip count from GM, wait with no zero-trip guard", kernel("aic", `
    %n = ld @G[0]
    for %k = 0 to %n {
        if %k == 0 {
            set_flag M, MTE1, 0
        }
    }
    w: wait_flag M, MTE1, 0`), nil, []lwant{{KindDeadlock, "w"}}},
		{"triple buffer, ids k % 3", kernel("aic", `
    set_flag M, MTE1, 0
    set_flag M, MTE1, 1
    set_flag M, MTE1, 2
    for %k = 0 to 1000 {
        wait_flag M, MTE1, %k % 3
        set_flag M, MTE1, %k % 3
    }
    wait_flag M, MTE1, 0
    wait_flag M, MTE1, 1
    wait_flag M, MTE1, 2`), nil, nil},
		{"step 2, ids from k / 2", kernel("aic", `
    for %k = 0 to 1000 step 2 {
        if %k > 0 {
            wait_flag M, MTE1, (%k / 2 + 1) & 1
        }
        if %k + 2 < 1000 {
            set_flag M, MTE1, (%k / 2) & 1
        }
    }`), nil, nil},
		{"flat K loop, L1 buffer (k / 4) & 1 freed after its last sub-step", kernel("aic", `
    set_flag MTE1, MTE2, 0
    set_flag MTE1, MTE2, 1
    for %k = 0 to 400 {
        let %l = (%k / 4) & 1
        if %k % 4 == 0 {
            wait_flag MTE1, MTE2, %l
        }
        if %k % 4 == 3 {
            set_flag MTE1, MTE2, %l
        }
    }
    wait_flag MTE1, MTE2, 0
    wait_flag MTE1, MTE2, 1`), nil, nil},
		{"ids from a quotient the residues do not give", kernel("aic", `
    for %k = 0 to 1000 {
        set_flag M, MTE1, (%k / 16) & 1
        wait_flag M, MTE1, (%k / 16) & 1
    }`), nil, []lwant{{KindUnchecked, "?"}, {KindUnchecked, "?"}}},
		{"polling while: the body sees its condition true", kernel("aic", `
    %n = ld @G[0]
    let %i = 0
    while %i < %n {
        if %i < %n {
            set_flag M, MTE1, 0
        }
        wait_flag M, MTE1, 0
        let %i = %i + 1
    }`), nil, nil},
		{"polling while: a set on the last trip only is unpaired", kernel("aic", `
    %n = ld @G[0]
    %i = ld @G[1]
    while %i < %n {
        if %i + 1 >= %n {
        s: set_flag M, MTE1, 0
        }
        let %i = %i + 1
    }`), nil, []lwant{{KindUnpairedSet, "s"}}},
		{"polling while from zero: a set on the last trip only is unpaired", kernel("aic", `
    %n = ld @G[0]
    let %i = 0
    while %i < %n {
        if %i + 1 >= %n {
        s: set_flag M, MTE1, 0
        }
        let %i = %i + 1
    }`), nil, []lwant{{KindUnpairedSet, "s"}}},
		{"polling while from zero, guarded drain", kernel("aic", `
    %n = ld @G[0]
    let %i = 0
    while %i < %n {
        if %i > 0 {
            wait_flag M, MTE1, 0
        }
        if %i + 1 < %n {
            set_flag M, MTE1, 0
        }
        let %i = %i + 1
    }`), nil, nil},
		{"guard off by one at an unknown trip count", kernel("aic", `
    %n = ld @G[0]
    for %k = 0 to %n {
        if %k > 0 {
            wait_flag M, MTE1, 0
        }
        if %k < %n {
        s: set_flag M, MTE1, 0
        }
    }`), nil, []lwant{{KindUnpairedSet, "s"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fe := srcFE(map[string]string{"mem:k.pto": tc.src})
			if d := cmp.Diff(tc.want, staticOf(t, fe, "mem:k.pto", tc.defs), cmp.AllowUnexported(lwant{})); d != "" {
				t.Errorf("findings (-want +got):\n%s", d)
			}
		})
	}
}

// countedRows nests loops whose test of rank the pass cannot decide, with
// a sum it sends, not a flag id or a condition, added to under the test, and
// a set nothing waits for after the loops. The sums kept the paths apart
// until the pass gave up and checked no unpaired set (an unchecked-flag
// note only).
const countedRows = `const T = 64
signal S : [1]
kernel k : aiv {
    let %n = 0
    for %u = 0 to 4 {
        for %t = 0 to T {
            if (%t + %u * 3 + rank) % 8 == 3 {
                let %n = %n + %t
                set_flag V, MTE3, 0
                wait_flag V, MTE3, 0
            }
        }
    }
    tnotify @S[0], %n #op=add
bad: set_flag MTE2, V, 1
}
launch ranks=8 { run k blocks=1 }
`

// TestCheckFlagsCountersNobodyReads: a register only a notify reads,
// incremented under tests the pass cannot decide, keeps no paths apart.
// They multiplied with every routed token of moe_combine until the pass
// gave up (an unchecked-flag note at 8 ranks and 16 tokens, at both
// kernels from 64), and then checked no unpaired set.
func TestCheckFlagsCountersNobodyReads(t *testing.T) {
	fe := srcFE(map[string]string{"counted.pto": countedRows})
	tests := []struct {
		prog string
		defs []asm.Define
		want []lwant
	}{
		{"counted.pto", nil, []lwant{{KindUnpairedSet, "bad"}}},
		{"hazards/moe_combine.pto", []asm.Define{{Name: "RANKS", Value: "8"}, {Name: "T", Value: "16"}}, nil},
		{"hazards/moe_combine.pto", []asm.Define{{Name: "RANKS", Value: "8"}, {Name: "T", Value: "64"}}, nil},
		{"hazards/moe_combine_slot1_last.pto", []asm.Define{{Name: "RANKS", Value: "8"}, {Name: "T", Value: "64"}}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.prog, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, staticOf(t, fe, tc.prog, tc.defs), cmp.AllowUnexported(lwant{})); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
		})
	}
}

// raggedTiles is grouped_gemm's flag skeleton (programs/hazards): experts
// whose row counts are read from GM, their tiles dealt round-robin to the
// blocks, a full or a ragged K loop per tile, and the slot id from the
// block's tile count %q. The drain of M>MTE1 #1 is missing. By hand: the
// prime pm1 sets it, every K trip with %s = 1 waits for it and sets it
// again, so it is still set at the end of every path; its last set is pm1
// on a block that ran no tile, else the K loop's set (the pass merges paths
// that differ only in which set was last, so the ragged loop's mmt folds
// into mm, as it does on main at E = 1 to 4, where main finished).
const raggedTiles = `const E = 8
const BM = 128
const KT = 16
const NB = 4
gm Cnt : i32 [E] = expr(100 * i)
kernel k : aic {
    set_flag MTE1, MTE2, 0
    set_flag MTE1, MTE2, 1
    set_flag M, MTE1, 0
pm1: set_flag M, MTE1, 1
    set_flag FIX, M, 0
    let %g = 0
    let %q = 0
    for %e = 0 to E {
        %cnt = ld @Cnt[%e]
        let %nt = ceildiv(%cnt, BM)
        for %t = 0 to %nt {
            if (%g + %t) % NB == block_idx {
                let %vr = min(BM, %cnt - %t * BM)
                if %vr == BM {
                    for %k = 0 to KT {
                        let %s = (%q * KT + %k) & 1
                        wait_flag MTE1, MTE2, %s
                        set_flag MTE2, MTE1, %s
                        wait_flag MTE2, MTE1, %s
                        wait_flag M, MTE1, %s
                        set_flag MTE1, MTE2, %s
                        set_flag MTE1, M, %s
                        wait_flag MTE1, M, %s
                        if %k == 0 {
                            wait_flag FIX, M, 0
                        }
                    mm: set_flag M, MTE1, %s
                    }
                } else {
                    for %k = 0 to KT {
                        let %s = (%q * KT + %k) & 1
                        wait_flag MTE1, MTE2, %s
                        set_flag MTE2, MTE1, %s
                        wait_flag MTE2, MTE1, %s
                        wait_flag M, MTE1, %s
                        set_flag MTE1, MTE2, %s
                        set_flag MTE1, M, %s
                        wait_flag MTE1, M, %s
                        if %k == 0 {
                            wait_flag FIX, M, 0
                        }
                    mmt: set_flag M, MTE1, %s
                    }
                }
                set_flag M, FIX, 0
                wait_flag M, FIX, 0
                set_flag FIX, M, 0
                let %q = %q + 1
            }
        }
        let %g = %g + %nt
    }
    wait_flag MTE1, MTE2, 0
    wait_flag MTE1, MTE2, 1
    wait_flag M, MTE1, 0
    wait_flag FIX, M, 0
}
launch ranks=1 { run k blocks=NB }
`

// TestCheckFlagsDataDependentTiles: a kernel whose tiles depend on counts
// read from GM is analysed to the end. The block's tile count, read only
// as `(%q * KT + %k) & 1`, kept one path per count (static_demand.go), and
// the last expert's counts and ragged row count, dead at the next expert,
// kept paths apart at every expert head (static_live.go): main gave up on
// grouped_gemm and on raggedTiles (an unchecked-flag note at the kernel, no
// unpaired set checked), and with the first fix alone on raggedTiles at 32
// experts.
func TestCheckFlagsDataDependentTiles(t *testing.T) {
	fe := srcFE(map[string]string{"ragged.pto": raggedTiles})
	unpaired := []lwant{{KindUnpairedSet, "pm1"}, {KindUnpairedSet, "mm"}}
	tests := []struct {
		prog string
		defs []asm.Define
		want []lwant
	}{
		{"ragged.pto", nil, unpaired},
		{"ragged.pto", []asm.Define{{Name: "E", Value: "32"}}, unpaired},
		{"hazards/grouped_gemm.pto", nil, nil},
		{"hazards/grouped_gemm_tail_no_reverse.pto", nil, nil},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.prog, tc.defs), func(t *testing.T) {
			if diff := cmp.Diff(tc.want, staticOf(t, fe, tc.prog, tc.defs), cmp.AllowUnexported(lwant{})); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
		})
	}
}
