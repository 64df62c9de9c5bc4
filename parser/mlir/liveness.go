package mlir

import "github.com/ptoasm/ptoasm/asm"

// Liveness of local buffers, for automatic placement when a function's
// buffers do not all fit in their memory (PTOAS's PlanMemory reuses space
// by liveness too). A buffer is live from its allocation to the last use of
// any value derived from it (subsets, reshapes, bind_tile, scf results and
// iter_args carrying it); a use inside a loop the buffer was allocated
// outside of keeps it live to the loop's end, since the next iteration uses
// it again. The analysis is conservative: any op result that has a buffer
// among its operands derives from it.

// live holds, per allocating op, the pre-order position of the op and of
// the last use of the buffer it allocates.
type live struct {
	pos  map[*Op]int
	last map[*Op]int
}

var allocOps = map[string]bool{"pto.alloc_tile": true, "memref.alloc": true}

func liveness(body *Region) *live {
	lv := &live{pos: map[*Op]int{}, last: map[*Op]int{}}
	if body == nil {
		return lv
	}
	// Pass 1: positions, and each loop's last position.
	loopEnd := map[*Op]int{}
	n := 0
	var number func(r *Region)
	number = func(r *Region) {
		for _, b := range r.Blocks {
			for _, op := range b.Ops {
				lv.pos[op] = n
				n++
				for _, rr := range op.Regions {
					number(rr)
				}
				loopEnd[op] = n - 1
			}
		}
	}
	number(body)
	// Pass 2: roots of every value, and last uses.
	roots := map[string][]*Op{}
	use := func(name string, at int, loops []*Op) {
		for _, r := range roots[name] {
			end := at
			for _, l := range loops {
				if lv.pos[l] > lv.pos[r] {
					end = max(end, loopEnd[l])
				}
			}
			lv.last[r] = max(lv.last[r], end)
		}
	}
	var walk func(r *Region, loops []*Op, parent *Op)
	walk = func(r *Region, loops []*Op, parent *Op) {
		for _, b := range r.Blocks {
			for _, op := range b.Ops {
				at := lv.pos[op]
				var from []*Op
				if allocOps[op.Name] {
					from = []*Op{op}
					lv.last[op] = at
				}
				for _, t := range op.Toks {
					if t.Kind == KValue {
						use(t.Text, at, loops)
						from = append(from, roots[t.Text]...)
					}
				}
				// Values an op binds in its token list (iter_args
				// `%a = %init`) carry their initial value's buffers.
				for i := 0; i+2 < len(op.Toks); i++ {
					if op.Toks[i].Kind == KValue && op.Toks[i+1].is("=") && op.Toks[i+2].Kind == KValue {
						roots[op.Toks[i].Text] = append(roots[op.Toks[i].Text], roots[op.Toks[i+2].Text]...)
					}
				}
				for _, res := range op.Results {
					roots[res.Name] = append(roots[res.Name], from...)
				}
				inner := loops
				if op.Name == "scf.for" || op.Name == "scf.while" {
					inner = append(append([]*Op{}, loops...), op)
				}
				for _, rr := range op.Regions {
					for _, bb := range rr.Blocks {
						for _, a := range bb.Args {
							roots[a.Name] = append(roots[a.Name], from...)
						}
					}
					walk(rr, inner, op)
				}
				// A terminator's operands flow into its parent's results.
				if parent != nil && (op.Name == "scf.yield" || op.Name == "scf.condition") {
					for _, res := range parent.Results {
						roots[res.Name] = append(roots[res.Name], from...)
					}
				}
			}
		}
	}
	walk(body, nil, nil)
	return lv
}

// placed is one automatically placed buffer of a kernel.
type placed struct {
	space  asm.Space
	lo, hi int64
	op     *Op // the allocating op; nil: live throughout
}

// reuse finds an address for an automatic buffer of the given size when
// the bump pointer has run past its space: the lowest aligned gap between
// buffers still live at the allocation. ok is false when no gap fits.
func (k *kctx) reuse(space asm.Space, size int64) (int64, bool) {
	op := k.cur
	at, known := k.live.pos[op]
	if !known {
		return 0, false
	}
	var busy []placed
	for _, p := range k.placed {
		if p.space != space {
			continue
		}
		if p.op != nil {
			if _, ok := k.live.pos[p.op]; ok && k.live.last[p.op] < at {
				continue // dead before this allocation: its space is free
			}
		}
		busy = append(busy, p)
	}
	align := asm.SpaceAlign(space)
	for a := int64(0); a+size <= asm.SpaceCapacity(space); {
		moved := false
		for _, p := range busy {
			if a < p.hi && p.lo < a+size {
				a = alignUp(p.hi, align)
				moved = true
			}
		}
		if !moved {
			return a, true
		}
	}
	return 0, false
}

// overCapacity is, per memory, whether the function's automatically placed
// buffers (alloc_tile without addr, memref.alloc) do not all fit side by
// side. PTOAS's PlanMemory decides so per memory scope: when the aligned
// sizes of all its buffers fit, each gets its own space, one after another
// (MemPlan::IsEnoughForBuffersNoReuse, PlanBuffersWithoutReuse); otherwise
// every buffer is planned by liveness, first fit from address 0 over the
// buffers whose lives overlap its own (MemPlan::PlanMemAddressOfWholeLocalBuffer,
// SpecAlloc), all in lib/PTO/Transforms/PTOPlanMemory.cpp at a56b18c3.
func overCapacity(body *Region) map[asm.Space]bool {
	sum := map[asm.Space]int64{}
	visit(body, func(op *Op) {
		if !allocOps[op.Name] {
			return
		}
		if _, fixed := keyValue(op.Toks, "addr"); fixed {
			return
		}
		ti, ok := parseType(lastType(op.Toks))
		dt, okd := dtypeName(ti.elem)
		if !ok || !okd {
			return
		}
		loc := ti.loc
		if loc == "ub" {
			loc = "vec"
		}
		l, ok := asm.ParseLoc(loc)
		if !ok {
			return
		}
		rows, cols, pad := tileShape(ti, dt)
		space := l.Space()
		sum[space] += alignUp(rows*max(cols, pad)*int64(dtypeSize(dt)), asm.SpaceAlign(space))
	})
	out := map[asm.Space]bool{}
	for sp, n := range sum {
		out[sp] = n > asm.SpaceCapacity(sp)
	}
	return out
}
