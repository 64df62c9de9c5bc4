package hazard

import (
	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
)

// A read-modify-write of a signal word: `%t = ld @Q[0]` then `st @Q[0],
// %t + 1` by one scalar, a ticket taken without a fetch-and-add (the ISA
// has none that returns the old value). Signal words are synchronisation:
// a read acquires what it read, and two plain stores of one word are no
// race by design (flag-style `tnotify #op=set`, notify_set_two_ranks). But
// another agent's store or add landing between the load and the store is
// lost, whichever value the load happened to read: a race of the load
// with that write, as on a `gm` word, where lint reports RAW and WAR
// between the blocks' `ld` and `st` (hazards/ticket_signal).
//
// So a scalar `ld` of a signal word whose kernel also stores the tensor
// with a plain `st` is kept (rmwWord), and its races with other agents'
// writes of the word are checked as a GM read's would be, but reported
// only once the same agent's `st` of the word shows the load was a
// read-modify-write; a load no store follows (a poll) reports nothing.
// Which value the load read must not decide, so such a load acquires
// nothing: it reads data, as a GM `ld` does. Acquiring the store it read
// ordered it after that store only in the runs where the store landed
// first, and the other block's race with it came and went with the
// timing. A load and a store ordered by anything else (a wait for the
// agent's turn before the load: hazards/ticket_signal_turns) are no race.
// The price: a turn polled with `ld` until the word holds it, then `st`,
// is reported as the ticket race (a `twait ... #cmp=eq` for the turn, as
// in ticket_signal_turns, is a wait).

// rmwWord is one signal word some kernel's `ld` read: the loads kept and
// the other agents' writes of this run.
type rmwWord struct {
	lds    []rmwLoad
	writes []rec
}

// rmwLoad is a kept `ld` of the word: rec and acc, whether its agent's
// `st` of the word followed (closed), and the writes it races met before
// then (pending).
type rmwLoad struct {
	rec     rec
	acc     machine.Access
	closed  bool
	pending []rec
}

// rmwKey names a signal word: its rank's copy and its byte address.
type rmwKey struct {
	rank int32
	lo   int64
}

// rmwLoadOp says whether op is a scalar `ld` of a signal tensor that its
// kernel also writes with a plain `st`: a candidate read-modify-write.
// The answer is kept per op (the last one asked is cached: a poll asks
// again and again).
func (d *Detector) rmwLoadOp(op *asm.COp) bool {
	if op == nil || op.Info == nil || op.Info.Op != asm.OpLd || op.Kernel == nil || len(op.Args) < 2 || op.Args[1].GM == nil {
		return false
	}
	if op == d.rmwLastOp {
		return d.rmwLastIs
	}
	is, ok := d.rmwOps[op]
	if !ok {
		t := op.Args[1].GM
		for _, o := range op.Kernel.Ops {
			if o.Info != nil && o.Info.Op == asm.OpSt && len(o.Args) > 0 && o.Args[0].GM == t {
				is = true
				break
			}
		}
		if d.rmwOps == nil {
			d.rmwOps = map[*asm.COp]bool{}
		}
		d.rmwOps[op] = is
	}
	d.rmwLastOp, d.rmwLastIs = op, is
	return is
}

// rmwAccess checks signal access r of acc against the kept loads of its
// word (signalAccess calls it before the access acquires or releases
// anything), and says whether r is a candidate read-modify-write's load.
func (d *Detector) rmwAccess(r *rec, acc *machine.Access, write bool) bool {
	load := !write && d.rmwLoadOp(r.op)
	if !load && d.rmw == nil || acc.NumRows() > 1 {
		return false // a column of a signal matrix: no scalar ld or st
	}
	k := rmwKey{acc.Rank, acc.Lo}
	w := d.rmw[k]
	if load && w == nil {
		w = &rmwWord{}
		d.seedWrites(w, acc)
		if d.rmw == nil {
			d.rmw = map[rmwKey]*rmwWord{}
		}
		d.rmw[k] = w
	}
	switch {
	case w == nil:
	case load:
		d.rmwLoad(w, r, acc)
	case write:
		d.rmwWrite(w, r, acc)
	}
	return load
}

// seedWrites gives a word's first kept load the writes of this run the
// word's cell still holds: its last plain store and the adds since.
func (d *Detector) seedWrites(w *rmwWord, acc *machine.Access) {
	d.eachSigCell(d.shadowFor(acc), acc.Lo, acc.Hi, sigRead, false, func(c *cell) {
		if c.sigGen != d.gen {
			return
		}
		if c.hasW && c.w.gen == d.gen && c.w.agent != d.host {
			w.writes = keepRMW(w.writes, &c.w)
		}
		for _, a := range c.adds() {
			if a.gen == d.gen {
				w.writes = keepRMW(w.writes, &a)
			}
		}
	})
}

// rmwLoad keeps load r of word w, with the writes of other agents it is
// not ordered after as its pending races. An earlier load of the agent
// that no store followed was a poll: it is replaced.
func (d *Detector) rmwLoad(w *rmwWord, r *rec, acc *machine.Access) {
	ld := rmwLoad{rec: *r, acc: *acc}
	ld.acc.Write = false
	for i := range w.writes {
		if x := &w.writes[i]; x.agent != r.agent && !d.hbOrSame(x, r) {
			ld.pending = append(ld.pending, *x)
		}
	}
	for i := range w.lds {
		if w.lds[i].rec.agent == r.agent && !w.lds[i].closed {
			w.lds[i] = ld
			return
		}
	}
	w.lds = keepLoad(w.lds, ld)
}

// rmwWrite checks write r of word w against the kept loads of other
// agents: one r is not ordered after races it, reported at once for a
// closed load, kept pending for an open one. A plain `st` closes its own
// agent's open load, which reports the races it kept.
func (d *Detector) rmwWrite(w *rmwWord, r *rec, acc *machine.Access) {
	for i := range w.lds {
		ld := &w.lds[i]
		switch {
		case ld.rec.agent != r.agent:
			if d.hbOrSame(&ld.rec, r) {
				continue
			}
			if ld.closed {
				d.rmwRace(&ld.rec, r, acc)
			} else if len(ld.pending) < maxRMW*4 {
				ld.pending = append(ld.pending, *r)
			}
		case !ld.closed && !r.atomic && r.op != nil && r.op.Info != nil && r.op.Info.Op == asm.OpSt:
			ld.closed = true
			for j := range ld.pending {
				d.rmwRace(&ld.pending[j], &ld.rec, &ld.acc)
			}
			ld.pending = nil
		}
	}
	w.writes = keepRMW(w.writes, r)
}

// rmwRace reports the race of load or write prev, seen first, with cur,
// whose access is acc, named by intended order (raceKind).
func (d *Detector) rmwRace(prev, cur *rec, acc *machine.Access) {
	kind, first, second := d.raceKind(prev, cur)
	d.notes = append(d.notes, raceNote{kind: kind, prev: *first, cur: *second, acc: *acc, lo: acc.Lo, hi: acc.Hi, accFirst: first == cur})
}

// maxRMW bounds the loads and writes a word keeps per agent: as with a GM
// cell's earlier accesses of one site (maxPrior), an access landing later
// than that misses the oldest.
const maxRMW = maxPrior

// keepRMW appends write r to list, dropping its agent's oldest past
// maxRMW.
func keepRMW(list []rec, r *rec) []rec {
	return keepPerAgent(list, *r, func(x *rec) int32 { return x.agent })
}

// keepLoad appends load ld to list, dropping its agent's oldest past
// maxRMW.
func keepLoad(list []rmwLoad, ld rmwLoad) []rmwLoad {
	return keepPerAgent(list, ld, func(x *rmwLoad) int32 { return x.rec.agent })
}

// keepPerAgent appends x to list, first dropping the oldest entry of x's
// agent when the list holds maxRMW of that agent already.
func keepPerAgent[T any](list []T, x T, agent func(*T) int32) []T {
	a, n, oldest := agent(&x), 0, -1
	for i := range list {
		if agent(&list[i]) == a {
			if n++; oldest < 0 {
				oldest = i
			}
		}
	}
	if n >= maxRMW {
		list = append(list[:oldest], list[oldest+1:]...)
	}
	return append(list, x)
}
