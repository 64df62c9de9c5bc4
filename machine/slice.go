package machine

import "github.com/ptoasm/ptoasm/asm"

// controlSlice is the part of a program's data a timing-only run still
// computes: every value scalar control flow can read (ld sources and signals)
// and every instruction that feeds one, transitively. Without it a timing-only
// run would read zeros where a kernel loads a loop bound, an event id or a
// ready flag from memory, and would take a different path than the real run;
// with it, `ptoasm lint` and `run --timing-only` follow the full run's path
// while skipping the arithmetic no branch depends on (the GEMMs, in practice).
//
// Locations are a whole GM tensor (on every rank) or the address range of a
// tile declaration (all elements of an array) in one kernel's local space;
// tiles that overlap share a location. The slice is static, so it holds for
// any schedule.
type controlSlice struct {
	tensors []bool                           // by TensorInfo.Index: keep a real buffer
	local   map[*asm.KernelInfo]*kernelSlice // nil: the kernel computes nothing
	ops     map[*asm.COp]bool                // instructions whose data effect runs
}

// kernelSlice is what one kernel keeps of its local spaces.
type kernelSlice struct {
	ranges [asm.NumSpaces][][2]int64 // kept [lo, hi) byte ranges, unmerged
}

// hasSpace reports whether a core running k needs a real buffer for space sp.
func (s *controlSlice) hasSpace(k *asm.KernelInfo, sp asm.Space) bool {
	ks := s.local[k]
	return ks != nil && len(ks.ranges[sp]) > 0
}

func tileRange(t *asm.TileInfo) (lo, hi int64) {
	if t.Rebound {
		// Bound at run time: anywhere in its buffer.
		return 0, asm.SpaceCapacity(t.Space)
	}
	if len(t.Addr) == 0 {
		return 0, 0
	}
	lo, hi = t.Addr[0], t.Addr[0]
	for _, a := range t.Addr {
		lo, hi = min(lo, a), max(hi, a)
	}
	return lo, hi + t.Bytes
}

// newControlSlice computes the slice of obj by a fixpoint over its
// instructions: an instruction that writes a kept location is computed, and
// then every location it touches is kept.
func newControlSlice(obj *asm.Object) *controlSlice {
	n := 0
	for _, t := range obj.Tensors {
		n = max(n, t.Index+1)
	}
	s := &controlSlice{tensors: make([]bool, n), local: map[*asm.KernelInfo]*kernelSlice{}, ops: map[*asm.COp]bool{}}
	for _, t := range obj.Tensors {
		if t.Class == asm.TensorSignal {
			s.tensors[t.Index] = true
		}
	}
	for _, k := range obj.Kernels {
		for _, op := range k.Ops {
			if op == nil || op.Info == nil || op.Info.Op != asm.OpLd {
				continue
			}
			for _, a := range op.Args {
				if a.Kind == asm.ArgGM && a.GM != nil && a.GM.Index < n {
					s.tensors[a.GM.Index] = true
				}
			}
		}
	}
	// mgather/mscatter take their GM addresses from the index tile's data,
	// as ld takes a value: the detector must see the bytes the real indices
	// choose (sem_img.go), so they run, with everything they read and write.
	for _, k := range obj.Kernels {
		for _, op := range k.Ops {
			if op != nil && op.Info != nil && (op.Info.Op == asm.OpMgather || op.Info.Op == asm.OpMscatter) {
				s.ops[op] = true
				for i := range op.Args {
					s.keep(k, &op.Args[i])
				}
			}
		}
	}
	for changed := true; changed; {
		changed = false
		for _, k := range obj.Kernels {
			for _, op := range k.Ops {
				// ld and st move values between registers and GM on the
				// scalar path, which always runs.
				if op == nil || op.Info == nil || op.Info.Family == asm.FamScalar || s.ops[op] || !s.writesKept(k, op) {
					continue
				}
				s.ops[op] = true
				changed = true
				for i := range op.Args {
					s.keep(k, &op.Args[i])
				}
			}
		}
	}
	return s
}

// readOnlyTensors marks, by TensorInfo.Index, the GM tensors no instruction
// of obj writes (through any rank's window).
func readOnlyTensors(obj *asm.Object) []bool {
	n := 0
	for _, t := range obj.Tensors {
		n = max(n, t.Index+1)
	}
	ro := make([]bool, n)
	for _, t := range obj.Tensors {
		ro[t.Index] = t.Class != asm.TensorSignal && t.Class != asm.TensorFIFO
	}
	for _, k := range obj.Kernels {
		for _, op := range k.Ops {
			if op == nil || op.Info == nil {
				continue
			}
			for i, a := range op.Args {
				if a.Kind == asm.ArgGM && a.GM != nil && a.GM.Index < n && operandAccess(op.Info, i)&asm.AccWrite != 0 {
					ro[a.GM.Index] = false
				}
			}
		}
	}
	return ro
}

// operandAccess is the declared access of operand i (the last slot repeats
// when it is variadic).
func operandAccess(info *asm.OpInfo, i int) asm.Access {
	ops := info.Operands
	switch {
	case i < len(ops):
		return ops[i].Access
	case len(ops) > 0 && ops[len(ops)-1].Variadic:
		return ops[len(ops)-1].Access
	}
	return asm.AccNone
}

func (s *controlSlice) writesKept(k *asm.KernelInfo, op *asm.COp) bool {
	for i := range op.Args {
		if operandAccess(op.Info, i)&asm.AccWrite != 0 && s.kept(k, &op.Args[i]) {
			return true
		}
	}
	return false
}

func (s *controlSlice) kept(k *asm.KernelInfo, a *asm.Arg) bool {
	switch a.Kind {
	case asm.ArgGM:
		return a.GM != nil && a.GM.Index < len(s.tensors) && s.tensors[a.GM.Index]
	case asm.ArgTile:
		ks := s.local[k]
		if a.Tile == nil || ks == nil || a.Tile.Space >= asm.NumSpaces {
			return false
		}
		lo, hi := tileRange(a.Tile)
		for _, r := range ks.ranges[a.Tile.Space] {
			if lo < r[1] && r[0] < hi {
				return true
			}
		}
	}
	return false
}

func (s *controlSlice) keep(k *asm.KernelInfo, a *asm.Arg) {
	switch a.Kind {
	case asm.ArgGM:
		if a.GM != nil && a.GM.Index < len(s.tensors) {
			s.tensors[a.GM.Index] = true
		}
	case asm.ArgTile:
		if a.Tile == nil || a.Tile.Space >= asm.NumSpaces || s.kept(k, a) && s.covers(k, a.Tile) {
			return
		}
		ks := s.local[k]
		if ks == nil {
			ks = &kernelSlice{}
			s.local[k] = ks
		}
		lo, hi := tileRange(a.Tile)
		ks.ranges[a.Tile.Space] = append(ks.ranges[a.Tile.Space], [2]int64{lo, hi})
	}
}

// covers reports whether t's range is already kept as one piece, so a tile
// used by many instructions is recorded once.
func (s *controlSlice) covers(k *asm.KernelInfo, t *asm.TileInfo) bool {
	lo, hi := tileRange(t)
	for _, r := range s.local[k].ranges[t.Space] {
		if r[0] <= lo && hi <= r[1] {
			return true
		}
	}
	return false
}

// dataOp reports whether op's data effect runs: always in a full run, and in a
// timing-only run only inside the control slice.
func (m *Machine) dataOp(op *asm.COp) bool {
	return !m.opt.TimingOnly || m.slice.ops[op]
}
