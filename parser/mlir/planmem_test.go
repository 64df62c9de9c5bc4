package mlir

import (
	"fmt"
	"strings"
	"testing"
)

// TestPlanMemory holds the port of PTOAS's PlanMemory (planmem.go) to
// addresses worked out by hand from the algorithm. Buffers are UB memrefs:
// s = 80 KiB (three do not fit in 192 KiB), m = 64 KiB (three fill it
// exactly), l = 128 KiB, k = 1 KiB. `ld x` loads GM into x (x's first
// write: its life starts), `st x` stores it (a read).
func TestPlanMemory(t *testing.T) {
	cases := []struct {
		name string
		body string
		want map[string]int64
		err  string
	}{{
		// They fit side by side, in the order their lives start: %b is
		// written first, so it comes first though %a was allocated first.
		name: "side by side in first-write order",
		body: "%a = k\n%b = k\nld b\nld a\nst a\nst b",
		want: map[string]int64{"a": 1024, "b": 0},
	}, {
		// 3 × 64 KiB is the capacity, not less: PlanMemory plans by
		// liveness (IsEnoughForBuffersNoReuse is strict), and disjoint
		// lives share address 0.
		name: "exactly the capacity reuses",
		body: "%a = m\n%b = m\n%c = m\nld a\nst a\nld b\nst b\nld c\nst c",
		want: map[string]int64{"a": 0, "b": 0, "c": 0},
	}, {
		// ub_reuse_by_liveness.pto: %t2's life starts first, then %t1's
		// after %t2's store (same bytes), %t3's beside %t1's.
		name: "entry order and first fit",
		body: "%t1 = s\n%t2 = s\nld t2\nst t2\n%t3 = s\nld t1\nld t3\nst t1\nst t3",
		want: map[string]int64{"t1": 0, "t2": 0, "t3": 81920},
	}, {
		// %o is allocated before the loop and first written in it: its
		// life starts at the loop's start, before %y's, and ends at the
		// loop's end, so %p after the loop takes its bytes.
		name: "loop start and end",
		body: "%o = s\nscf.for %i = %c0 to %c2 step %c1 {\n%y = s\nld y\nld o\nst y\nst o\n}\n%p = s\nld p\nst p",
		want: map[string]int64{"o": 0, "y": 81920, "p": 0},
	}, {
		// %a is last used inside an scf.while: no op of its own block
		// kills it, its free time stays -1 and it conflicts with nothing,
		// so %b shares its bytes (PTOAS's behaviour, kept).
		name: "never killed",
		body: "%a = s\nld a\n%r = scf.while (%w = %c0) : (index) -> index {\n%cnd = arith.cmpi slt, %w, %c2 : index\nscf.condition(%cnd) %w : index\n} do {\n^bb0(%x: index):\nst a\n%n = arith.addi %x, %c1 : index\nscf.yield %n : index\n}\n%b = s\n%c = s\nld b\nld c\nst b\nst c",
		want: map[string]int64{"a": 0, "b": 0, "c": 81920},
	}, {
		// %a is read by memref.load: planned last, and at level 2 not on
		// bytes a non-scalar buffer has used (VerifyConflictStage2).
		name: "scalar buffers last, apart",
		body: "%a = m\n%b = m\n%c = m\nld a\n%v = memref.load %a[%c0, %c0] : memref<128x128xf32, #pto.address_space<vec>>\nld b\nst b\nld c\nst c",
		want: map[string]int64{"a": 65536, "b": 0, "c": 0},
	}, {
		// %c (128 KiB) fits only if %b moves: first fit fails, the
		// rollback retries %b elsewhere and the split-outline restart
		// fails the same way, so PTOAS rejects the function; a level-0
		// plan would need 256 KiB.
		name: "overflow after rollback",
		body: "%a = m\n%b = m\nld a\nld b\nst a\n%c = l\nld c\nst b\nst c",
		err:  "VEC overflow, requires 2097152 bits while 1572864 bits avaliable! (PTOAS PlanMemory)",
	}, {
		// `rv N` is a pto.reserve_buffer {auto = true} of N bytes in vec,
		// placed after planning (assignAutoReserveBufferBase): %a holds
		// [0, 1024), so the reserve takes 1024, as
		// plan_memory_reserve_buffer_prefix.pto CHECKs it (8192 there).
		name: "reserve after the planned bytes",
		body: "rv 8192\n%a = k\nld a\nst a",
		want: map[string]int64{"a": 0, "fifo": 1024},
	}, {
		// 384-byte buffers side by side at 0 and 384 (32-byte plan):
		// each occupies its size rounded up to 256, [0, 512) and
		// [384, 896), merged; the base rounds 896 up to 1024.
		name: "reserve on a 256-byte grid",
		body: "rv 256\n%a = q\n%b = q\nld a\nld b\nst a\nst b",
		want: map[string]int64{"a": 0, "b": 384, "fifo": 1024},
	}, {
		// Lives do not matter: %t1 and %t2 share 0, %t3 is at 80 KiB, so
		// [0, 160 KiB) is taken whatever is live, and 40000 more bytes
		// do not fit in 192 KiB.
		name: "reserve without a hole",
		body: "rv 40000\n%t1 = s\n%t2 = s\nld t2\nst t2\n%t3 = s\nld t1\nld t3\nst t1\nst t3",
		err:  "pto.reserve_buffer: failed to allocate local memory hole for reserve_buffer (PTOAS PlanMemory)",
	}}
	types := map[string]string{"s": "128x160xf32", "m": "128x128xf32", "l": "256x128xf32", "k": "16x16xf32", "q": "12x8xf32"}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ty := map[string]string{}
			var b strings.Builder
			b.WriteString("module {\n func.func @f(%g: memref<256x160xf32, #pto.address_space<gm>>) {\n")
			b.WriteString("%c0 = arith.constant 0 : index\n%c1 = arith.constant 1 : index\n%c2 = arith.constant 2 : index\n")
			for _, line := range strings.Split(c.body, "\n") {
				f := strings.Fields(line)
				switch {
				case len(f) == 3 && f[1] == "=" && types[f[2]] != "":
					ty[f[0][1:]] = types[f[2]]
					fmt.Fprintf(&b, "%s = memref.alloc() : memref<%s, #pto.address_space<vec>>\n", f[0], types[f[2]])
				case len(f) == 2 && f[0] == "ld":
					fmt.Fprintf(&b, "pto.tload ins(%%g : memref<256x160xf32, #pto.address_space<gm>>) outs(%%%s : memref<%s, #pto.address_space<vec>>)\n", f[1], ty[f[1]])
				case len(f) == 2 && f[0] == "rv":
					fmt.Fprintf(&b, "%%fifo = pto.reserve_buffer {name = \"fifo\", size = %s, location = #pto.address_space<vec>, auto = true} -> i32\n", f[1])
				case len(f) == 2 && f[0] == "st":
					fmt.Fprintf(&b, "pto.tstore ins(%%%s : memref<%s, #pto.address_space<vec>>) outs(%%g : memref<256x160xf32, #pto.address_space<gm>>)\n", f[1], ty[f[1]])
				default:
					b.WriteString(line + "\n")
				}
			}
			b.WriteString("return\n }\n}\n")
			m, errs := Parse("t.pto", []byte(b.String()))
			if errs.HasErrors() {
				t.Fatalf("%v\n%s", errs, b.String())
			}
			var plan *memPlan
			var names map[*Op]string
			for _, op := range m.Ops {
				visitTop(op, func(fn *Op) {
					plan = planMemory(fn.Regions[0])
					names = map[*Op]string{}
					visit(fn.Regions[0], func(o *Op) {
						if allocOps[o.Name] || o.Name == "pto.reserve_buffer" {
							names[o] = strings.TrimPrefix(o.Results[0].Name, "%")
						}
					})
				})
			}
			if plan == nil {
				t.Fatal("no function")
			}
			if plan.err != c.err {
				t.Fatalf("error %q, want %q", plan.err, c.err)
			}
			if c.err != "" {
				return
			}
			got := map[string]int64{}
			for op, n := range names {
				if a, ok := plan.addr[op]; ok {
					got[n] = a
				}
				if a, ok := plan.reserve[op]; ok {
					got[n] = a
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("addresses %v, want %v", got, c.want)
			}
		})
	}
}

// visitTop calls fn on every func.func in op (a module or a function).
func visitTop(op *Op, fn func(*Op)) {
	if op.Name == "func.func" {
		fn(op)
		return
	}
	for _, r := range op.Regions {
		for _, b := range r.Blocks {
			for _, o := range b.Ops {
				visitTop(o, fn)
			}
		}
	}
}
