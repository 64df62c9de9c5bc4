package hazard

import (
	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
)

// Which step a read of two kernels' loops means (docs/hazards.md,
// "Intended order across kernels").
//
// A read and a write of two kernels in one iteration of their loops, which
// nothing relates (no grid barrier between them, no FFTS rendezvous), were
// taken read first: a step reads what an earlier step of the other kernel
// left while that kernel's same step overwrites it
// (fa_cv_preload_no_p_credit: in iteration t the cube loads the P tile the
// AIVs stored in t - 2, which their store of tile t overwrites). That needs
// an earlier step to have written: a read whose first step on its core
// comes no later than the writer's first step on its own has nothing of an
// earlier step to read there, and means the write of its own step, one
// kernel handing its result to the other (result_handoff_behind: the AIVs
// load in their iteration t the result the cube, one tile behind, stores in
// its iteration t; both loops start their work at 1). So the first step of
// each op on each core is kept, and such a pair is a hand-off, the write
// first (RAW), as a write and a read of two kernels outside loops are.
//
// Unless that first step read the host's data: a double buffer the host
// preloaded (host_preload_refill: the cube reads slot t % 2 from step 0
// while the AIVs refill it from step 0 for step t + 2) means the preload
// in its first steps and what an earlier step left in later ones, never
// the write that overwrites it: read first (WAR), as in any two loops.
// Whether the bytes held the host's data is taken from when the run began
// (hostDataAtStart), not from the cell the read met, whose last write
// follows the timing.
//
// A counter cannot tell the two: in a double buffer each kernel's step t
// waits for the other's step t - 1 (ready one way, free credits the
// other), so the same step of both is concurrent by every flag, and only
// which data the read can mean decides. The first step is a fact of the
// path each core takes, not of the timing, and an instance is checked only
// after its core's first of the same op (a pipe runs its ops in order).

// firstSteps is one core's first iteration vector of each op of the kernel
// it runs, by op ID, in run generation gen.
type firstSteps struct {
	gen    uint32
	kernel *asm.KernelInfo
	at     []firstStep
}

// firstStep is an op's first iteration vector on a core (set: seen), and
// whether that first instance read bytes some write ordered before it had
// written (filled: it had something to read).
type firstStep struct {
	iter   [maxIter]int32
	n      uint8
	set    bool
	filled bool
	// host says the step read a GM tensor whose last write, when the run
	// began, was the host's data (hostDataAtStart): a step that means
	// the host's preload, not a write of the other kernel's same step.
	host bool
}

// noteStep keeps r's iteration vector if r is the first instance of its op
// on its core in this run. The first seen is the first: a pipe's ops come
// in issue order, and an op's steps on two pipes (a tput's load and store)
// start with its first step, which comes before the next instance's.
func (d *Detector) noteStep(r *rec, accs []machine.Access) {
	d.firstNow = nil
	if r.niter == 0 || r.op == nil {
		return
	}
	ag := &d.agents[r.agent]
	c := ag.coreIdx
	if ag.kind == akSDMA {
		c = d.orderCore(r.agent)
	}
	if c < 0 || r.op.Kernel == nil {
		return
	}
	if int(c) >= len(d.firsts) {
		d.firsts = append(d.firsts, make([]firstSteps, int(c)+1-len(d.firsts))...)
	}
	fs := &d.firsts[c]
	if fs.gen != r.gen || fs.kernel != r.op.Kernel {
		fs.gen, fs.kernel = r.gen, r.op.Kernel
		fs.at = append(fs.at[:0], make([]firstStep, len(r.op.Kernel.Ops))...)
	}
	if id := r.op.ID; id >= 0 && id < len(fs.at) && !fs.at[id].set {
		fs.at[id] = firstStep{iter: r.iter, n: r.niter, set: true, host: d.readsHostData(accs)}
		d.firstNow = &fs.at[id]
	}
}

// noteFilled marks the first instance in hand as having read GM bytes of
// cell c that a write ordered before it wrote (firstStep.filled; GM reads
// always come here, never through handoff's shortcut). The writes
// looked at are the cell's last, those kept beside it and the GM writes
// kept past their ordered overwrites: a write ordered before r and
// overwritten by one also ordered before r leaves that one.
func (d *Detector) noteFilled(c *cell, r *rec) {
	f := d.firstNow
	if f == nil || f.filled || !c.written {
		return
	}
	if c.hasW && d.filled(&c.w, r) {
		f.filled = true
		return
	}
	for i := range c.adds() {
		if w := &c.adds()[i]; w.write && d.filled(w, r) {
			f.filled = true
			return
		}
	}
	for _, o := range c.olds() {
		if w := d.oldRec(c, o.w, &d.oldW); w.write && w.gen == r.gen && d.filled(w, r) {
			f.filled = true
			return
		}
	}
}

// freshRead says whether read rd, in loops of another depth than the write
// it races in the other kernel, is a hand-off from that write: its op's
// first instance on its core read bytes no write ordered before it had
// written, so its steps mean the other kernel's writes, not data left
// before the loop (allgather_matmul_ring/single_buffer's load, whose first
// step reads the shard copied in before the loop, is read first: WAR).
func (d *Detector) freshRead(rd *rec) bool {
	f := d.firstOf(rd)
	return f != nil && !f.filled
}

// readsHostData says whether one of accs reads a GM tensor (not a signal)
// that held the host's data when the run began.
func (d *Detector) readsHostData(accs []machine.Access) bool {
	for i := range accs {
		acc := &accs[i]
		if !acc.Write && acc.Space == asm.GM && acc.Tensor != nil && !isSignal(acc) && d.hostDataAtStart(acc.Rank, acc.Tensor) {
			return true
		}
	}
	return false
}

// firstOf is the first step of r's op on r's core, nil when not kept.
func (d *Detector) firstOf(r *rec) *firstStep {
	if r.op == nil || r.op.Kernel == nil {
		return nil
	}
	c := d.orderCore(r.agent)
	if c < 0 || int(c) >= len(d.firsts) {
		return nil
	}
	fs := &d.firsts[c]
	if fs.gen != r.gen || fs.kernel != r.op.Kernel || r.op.ID < 0 || r.op.ID >= len(fs.at) || !fs.at[r.op.ID].set {
		return nil
	}
	return &fs.at[r.op.ID]
}

// handOff says whether read rd and write w, of two kernels, in loops of
// one depth and one iteration that nothing else orders, are a hand-off:
// rd's op starts on its core no later than w's on its own, so no earlier
// step of w's op left rd's first step anything to read, and that first
// step read no data the host had put there.
func (d *Detector) handOff(rd, w *rec) bool {
	fr, fw := d.firstOf(rd), d.firstOf(w)
	if fr == nil || fw == nil || fr.n != fw.n || fr.host {
		return false
	}
	for i := 0; i < int(fr.n); i++ {
		if fr.iter[i] != fw.iter[i] {
			return fr.iter[i] < fw.iter[i]
		}
	}
	return true
}
