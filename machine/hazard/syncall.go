package hazard

import (
	"fmt"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
)

// ---- syncall, host, runs --------------------------------------------------

func (d *Detector) syncAll(e *machine.Event) {
	if e.Agent.Core < 0 {
		return
	}
	a := d.agent(e.Agent)
	d.enter(a)
	c := d.agents[a].coreIdx
	cs := &d.cores[c]
	rounds := d.syncRounds[cs.rank]
	k := cs.syncCount
	if k >= len(rounds) {
		// Every participant has arrived when the first one passes, so the
		// round's clock is the join of every live core of the rank now.
		var clk vclock
		for i := range d.cores {
			o := &d.cores[i]
			if o.rank != cs.rank || !o.live {
				continue
			}
			if o.scalar >= 0 {
				d.enter(o.scalar)
				d.tmp = d.release(o.scalar, d.tmp)
				join(&clk, &d.tmp)
			}
			for _, p := range o.pipes {
				if p >= 0 {
					d.enter(p)
					d.tmp = d.release(p, d.tmp)
					join(&clk, &d.tmp)
				}
			}
		}
		rounds = append(rounds, clk)
		d.syncRounds[cs.rank] = rounds
	}
	cs.syncCount++
	d.drainCore(c, rounds[k])
}

func (d *Detector) hostWrite(e *machine.Event) {
	h := d.host
	d.agents[h].n++
	r := rec{agent: h, epoch: d.agents[h].n, gen: d.gen, write: true}
	for i := range e.Accesses {
		acc := &e.Accesses[i]
		if acc.Hi <= acc.Lo {
			continue
		}
		if acc.Tensor != nil && acc.Hi-acc.Lo == acc.Tensor.Bytes {
			d.placeTensor(acc)
			if g := d.gm2d.at(acc.Rank, acc.Tensor.Index); *g == nil || (*g).base != acc.Lo {
				if ng := newGMShadow(acc.Tensor, acc.Lo); ng != nil {
					if *g != nil && (*g).cached {
						d.cells.reset() // the old view's cells must match no entry
					}
					*g, d.gm2dAny = ng, true
				}
			}
		}
		poison := e.Word == "poison"
		if acc.Tensor != nil && acc.Space == asm.GM {
			if at := d.tensorBase.ref(acc.Rank, acc.Tensor.Index); at != nil {
				at.hostData, at.hostGen = !poison, d.gen
			}
		}
		if g := d.gmShadowFor(acc); g != nil {
			g.wrote(poison)
			d.rects = g.rects(acc, d.rects[:0])
			for _, q := range d.rects {
				i, j := g.span(q.r0, q.r1)
				for _, b := range g.bands[i:j] {
					ci, cj := b.cols.span(q.c0, q.c1)
					for _, c := range b.cols.cells[ci:cj] {
						c.hostWrite(&r, poison)
					}
					b.cols.collapse(ci, cj)
				}
			}
			continue
		}
		sm := d.shadowFor(acc)
		if acc.Space == asm.GM && acc.Tensor != nil && acc.Hi-acc.Lo == acc.Tensor.Bytes {
			var word int64
			if acc.Tensor.Class == asm.TensorSignal {
				word = int64(acc.Tensor.DType.Size())
			}
			sm.claim(acc.Lo, acc.Hi, word)
			if sm.tableHostWrite(d, acc.Lo, acc.Hi, word, &r, poison) {
				d.gmHostWrite(acc, poison)
				continue
			}
		}
		sm.hostWrite(acc.Lo, acc.Hi, &r, poison, acc.Space == asm.GM)
		if acc.Space == asm.GM {
			d.gmHostWrite(acc, poison)
		}
	}
}

func (d *Detector) runBoundary(start bool) {
	d.runHeld()
	d.resetCopies()
	d.gen++
	d.prefixes = nil // every word's release is of an earlier run now
	d.rmw = nil      // the loads and writes of the run that ended
	d.multi = nil
	for i := range d.cores {
		cs := &d.cores[i]
		for j := range cs.pending {
			d.putBuf(cs.pending[j].steps)
		}
		cs.pending = cs.pending[:0]
		for j := range cs.comp {
			d.putBuf(cs.comp[j].steps)
		}
		cs.comp = cs.comp[:0]
		clear(cs.log)
		cs.log, cs.logTo = cs.log[:0], cs.logTo[:0]
		for _, ch := range cs.chans {
			ch.set, ch.queue = false, nil
		}
		cs.live = false
		cs.syncCount = 0
	}
	clear(d.cross)
	clear(d.crossIncs)
	d.clearPending()
	clear(d.crossCnt)
	clear(d.syncRounds)
	if start {
		// Local buffers do not carry data from one launch to the next.
		for _, row := range d.shadow.rows {
			for i := range row {
				if i >= int(asm.NumSpaces) {
					row[i] = nil
				}
			}
		}
		clear(d.shadow.odd)
		d.lastMem = nil
		d.cells.reset()
	}
}

func (d *Detector) kernelEnd(e *machine.Event) {
	if e.Agent.Core < 0 {
		return
	}
	c := d.core(e.Agent.Rank, e.Agent.Core)
	d.markEnded(c)
	cs := &d.cores[c]
	report := func(ch *flagChan) {
		msg := fmt.Sprintf("set_flag %s, %s, %d is never consumed: the kernel ends with the flag still set, which corrupts the flag state the next kernel on this core sees", ch.src, ch.dst, ch.id)
		hint := fmt.Sprintf("add `wait_flag %s, %s, %d` before the kernel ends (the drain of an INIT/DRAIN pair), or do not set it on the last iteration", ch.src, ch.dst, ch.id)
		if ch.hasLast {
			d.single(KindUnpairedSet, SevWarning, &ch.last, msg, hint)
			return
		}
		var r rec
		r.agent = d.agent(machine.Agent{Rank: cs.rank, Core: cs.core, Pipe: ch.src})
		d.single(KindUnpairedSet, SevWarning, &r, msg, hint)
	}
	for _, f := range e.Flags {
		if !validPipe(f.Src) || !validPipe(f.Dst) {
			continue
		}
		ch := d.chanOf(c, f)
		report(ch) // once per pending set: the machine lists each
		ch.set, ch.queue = false, nil
	}
	for _, ch := range cs.chans {
		for ; ch.set; ch.set = len(ch.queue) > 0 {
			report(ch)
			if len(ch.queue) > 0 {
				ch.queue = ch.queue[1:]
			}
		}
	}
}
