package hazard

import (
	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
)

// prog hands out COp stubs with distinct source lines, the way an assembled
// kernel's ops carry Instr spans.
type prog struct {
	ops []*asm.COp
}

func (p *prog) op(name string, line int, pipe asm.Pipe) *asm.COp {
	info := &asm.OpInfo{Name: name, Family: asm.FamTile, Pipe: pipe}
	if real := asm.LookupOp(name); real != nil {
		info.Op, info.Family = real.Op, real.Family // the detector dispatches on both
	}
	op := &asm.COp{ID: len(p.ops), Info: info, Pipe: pipe,
		Instr: &asm.Instr{Span: asm.Span{Pos: asm.Pos{File: "t.pto", Line: line, Col: 5}}, Op: name}}
	p.ops = append(p.ops, op)
	return op
}

// sim feeds hand-built events to a detector.
type sim struct {
	d *Detector
}

func newSim(opt Options) *sim { return &sim{d: New(opt)} }

func ag(rank, core int32, p asm.Pipe) machine.Agent {
	return machine.Agent{Rank: rank, Core: core, Pipe: p}
}

func (s *sim) ev(e machine.Event) { s.d.Observe(&e) }

func (s *sim) issue(rank, core int32, op *asm.COp, target asm.Pipe) {
	s.ev(machine.Event{Kind: machine.EvIssue, Agent: ag(rank, core, asm.PipeS), Target: target, Op: op})
}

func (s *sim) exec(a machine.Agent, op *asm.COp, iter []int64, acc ...machine.Access) {
	s.ev(machine.Event{Kind: machine.EvExec, Agent: a, Op: op, Iter: iter, Accesses: acc})
}

func (s *sim) set(rank, core int32, src, dst asm.Pipe, id int32, op *asm.COp) {
	s.ev(machine.Event{Kind: machine.EvFlagSet, Agent: ag(rank, core, src), Op: op, Flag: machine.Flag{Src: src, Dst: dst, ID: id}})
}

func (s *sim) wait(rank, core int32, src, dst asm.Pipe, id int32, op *asm.COp) {
	s.ev(machine.Event{Kind: machine.EvFlagWait, Agent: ag(rank, core, dst), Op: op, Flag: machine.Flag{Src: src, Dst: dst, ID: id}})
}

func (s *sim) barrier(rank, core int32, target asm.Pipe, op *asm.COp) {
	a := ag(rank, core, target)
	if target == asm.PipeALL {
		a.Pipe = asm.PipeS
	}
	s.ev(machine.Event{Kind: machine.EvBarrier, Agent: a, Target: target, Op: op})
}

var (
	tileA = &asm.TileInfo{Name: "%a", Space: asm.L1, Addr: []int64{0}, Bytes: 0x400, Count: 1}
	chunk = &asm.TileInfo{Name: "%chunk", Space: asm.L1, Addr: []int64{0xB000, 0xC000}, Bytes: 0x400, Count: 2, IsArray: true}
	ubX   = &asm.TileInfo{Name: "%x", Space: asm.UB, Addr: []int64{0x100}, Bytes: 0x100, Count: 1}
	gmA   = &asm.TensorInfo{Name: "A", Index: 0, Class: asm.TensorGM, Bytes: 0x1000}
	winW  = &asm.TensorInfo{Name: "W", Index: 1, Class: asm.TensorWindow, Bytes: 0x1000}
	sigS  = &asm.TensorInfo{Name: "S", Index: 2, Class: asm.TensorSignal, Bytes: 64}
)

func tileAcc(t *asm.TileInfo, rank, core int32, elem int, write bool) machine.Access {
	lo := t.Addr[elem]
	return machine.Access{Space: t.Space, Rank: rank, Core: core, Lo: lo, Hi: lo + t.Bytes, Write: write, Tile: t, Elem: int32(elem)}
}

func gmAcc(t *asm.TensorInfo, rank int32, lo, hi int64, write bool) machine.Access {
	return machine.Access{Space: asm.GM, Rank: rank, Core: -1, Lo: lo, Hi: hi, Write: write, Tensor: t}
}

// hostInit marks the whole of t on rank as initialised, at base.
func (s *sim) hostInit(t *asm.TensorInfo, rank int32, base int64) {
	s.ev(machine.Event{Kind: machine.EvHostWrite, Agent: machine.Agent{Rank: rank, Core: -1},
		Accesses: []machine.Access{gmAcc(t, rank, base, base+t.Bytes, true)}})
}

func kinds(fs []Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Kind)
	}
	return out
}
