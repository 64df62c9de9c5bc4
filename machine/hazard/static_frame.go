package hazard

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/ptoasm/ptoasm/asm"
)

// Loop templates. A loop entered in a state that differs from an earlier
// entry only in registers the loop never reads or writes, holding constants
// (allgather_gemm's compute kernel enters its polling while loop once per
// output column %ni, and nothing in the loop reads %ni but a tile address),
// runs the same way: no condition, flag id or bound sees those registers,
// no store, widening or retirement changes them, and every path of the run
// holds the entry's values, so states meet and part as they did. The memo
// (fixpoint) keys on the whole state, so each such entry ran the loop again;
// that was 90% of the pass on allgather_gemm.
//
// So the first run of a loop from such a state is kept as a template, keyed
// by the state with those registers' values left out (the frame), and a
// later entry that matches takes the template's result with its own values
// put back. It also does what the run would have done to the pass: the run's
// memo entries are made again under the entry's values (so later lookups hit
// and miss as they would have) and its work is counted (static_work.go: so
// the budget runs out at the same statement). The run's findings need no
// replay: a finding is keyed by kind and sites, not by the iteration, and
// the template's run reported them already.
//
// A template is used only when the run would have met the memo as the
// template's did: none of its entries exists yet under the new values, and
// every entry the template's run found (hitLog) does. And only outside
// peeled loops: there the pinned symbols, a peeling attempt's request for
// more peeling and its rollback depend on the context. checkTemplates (tests)
// runs the loop as well at every use and panics when anything differs.

// frameSym stands for a frame register's value in a template's key.
const frameSym = 0xfffffffe

// maxTemplates bounds the templates kept per loop and frame key (the newest).
// A template that does not fit an entry (its run met the memo otherwise) is
// followed by a run, which is kept as another template (in allgather_gemm
// one template per key left 56 of 305 entries of the while loop to run).
const maxTemplates = 8

// checkTemplates makes every template use also run the general path and
// compare (TestStaticTemplatesMatchGeneralPath); templateChecks counts the
// uses compared; templatesOff runs the general path only.
var (
	checkTemplates bool
	templateChecks int
	templatesOff   bool
	// staticDone, when set, sees each kernel's checker at the end.
	staticDone func(*checker)
)

// templateState is the checker's part for templates.
type templateState struct {
	templates map[string][]*template
	touched   map[any][]bool
	// recording counts the template runs under way; hitLog lists the memo
	// entries found meanwhile.
	recording int
	hitLog    []memoKey
	// patchBuf is patchKey's scratch.
	patchBuf []byte
}

// template is one run of a loop: the frame registers and their values at its
// entry, its result, the memo entries it made (in order) and found, and the
// work it counted.
type template struct {
	frame []int
	vals  []int64
	res   []*sstate
	made  []memoEntry
	found []memoKey
	work  int
}

// loopTouch marks the registers the pass reads or writes in a loop: what its
// lets, conditions, loop bounds and flag ids read, and what lets, loops and
// loads write, in body and in exprs (the loop's own condition or bounds).
func (c *checker) loopTouch(loop any, body []asm.CStmt, exprs ...asm.CExpr) []bool {
	if t, ok := c.touched[loop]; ok {
		return t
	}
	t := make([]bool, len(c.k.Regs))
	mark := func(x asm.CExpr) {
		if x.Src != nil {
			for _, s := range c.exprDepsOf(x.Src).slots {
				if s >= 0 && s < len(t) {
					t[s] = true
				}
			}
		}
	}
	write := func(slot int) {
		if slot >= 0 && slot < len(t) {
			t[slot] = true
		}
	}
	for _, x := range exprs {
		mark(x)
	}
	if f, ok := loop.(*asm.CFor); ok {
		write(f.Slot)
	}
	walkStmts(body, func(s asm.CStmt) {
		switch s := s.(type) {
		case *asm.CLet:
			write(s.Slot)
			mark(s.X)
		case *asm.CIf:
			mark(s.Cond)
		case *asm.CWhile:
			mark(s.Cond)
		case *asm.CFor:
			write(s.Slot)
			mark(s.From)
			mark(s.To)
			mark(s.Step)
		case *asm.COp:
			// As op evaluates them: a flag's id; any other op's register
			// operands are written (a load).
			if s.Info != nil && (s.Info.Op == asm.OpSetFlag || s.Info.Op == asm.OpWaitFlag) {
				if len(s.Args) >= 3 {
					mark(s.Args[2].Val)
				}
				return
			}
			for _, a := range s.Args {
				if a.Kind == asm.ArgReg {
					write(a.Slot)
				}
			}
		}
	})
	if c.touched == nil {
		c.touched = map[any][]bool{}
	}
	c.touched[loop] = t
	return t
}

// frameOf is the template key of mk's loop entered in st and the frame: the
// registers the loop does not touch that hold constants. ok is false when
// templates do not apply here.
func (c *checker) frameOf(mk memoKey, touched []bool, st *sstate) (string, []int, bool) {
	// Register indices below 255 keep a key's register records apart from
	// its facts (0xff) when patchKey reads it.
	if templatesOff || c.npinned > 0 || len(c.active) > 0 || c.aborted || len(st.regs) >= 255 {
		return "", nil, false
	}
	var frame []int
	var mask []bool
	for i, s := range st.syms {
		if s == symZero && !touched[i] {
			if mask == nil {
				mask = make([]bool, len(st.syms))
			}
			mask[i] = true
			frame = append(frame, i)
		}
	}
	if frame == nil {
		return "", nil, false
	}
	// The loop's number, then the state's key with the frame left out.
	// Not charged: the work must not depend on whether templates are used,
	// and the memo key built with it was.
	return string(st.appendKey([]byte(mk[:4]), mask)), frame, true
}

// memoized runs loop from st (gc'd; run does the work) through the memo and
// the templates. With shared, a memo entry's own states are returned (memo
// true), for the caller to copy (capRecalled).
func (c *checker) memoized(loop memoLoop, touched []bool, st *sstate, shared bool, run func() []*sstate) (res []*sstate, memo bool) {
	b := c.memoKeyOf(loop, st)
	if e, ok := c.memo[string(b)]; ok {
		if shared {
			c.noteHit(e)
			return e.res, true
		}
		return c.recall(e, st), false
	}
	mk := string(b)
	fk, frame, ok := c.frameOf(mk, touched, st)
	if !ok {
		res := run()
		c.remember(mk, res)
		return res, false
	}
	vals := make([]int64, len(frame))
	for j, i := range frame {
		vals[j] = st.regs[i]
	}
	ts := c.templates[fk]
	for i := len(ts) - 1; i >= 0; i-- { // the newest first
		if res, ok := c.useTemplate(ts[i], vals, st, run); ok {
			c.remember(mk, res)
			return res, false
		}
	}
	memo0, hit0, work0 := len(c.memoLog), len(c.hitLog), c.work
	c.recording++
	res = run()
	c.recording--
	t := &template{frame: frame, vals: vals, work: c.work - work0}
	t.found = append(t.found, c.hitLog[hit0:]...)
	if c.recording == 0 {
		c.hitLog = c.hitLog[:0]
	}
	if !c.aborted && c.recordTemplate(t, res, memo0) {
		if c.templates == nil {
			c.templates = map[string][]*template{}
		}
		ts := c.templates[fk]
		if len(ts) == maxTemplates {
			ts = append(ts[:0], ts[1:]...)
		}
		c.templates[fk] = append(ts, t)
	}
	c.remember(mk, res)
	return res, false
}

// recordTemplate fills t from a run's result and the memo entries it made
// since memo0; false when some path changed a frame register after all (a
// template would then be wrong). A key that does not hold the frame values
// is found when the template is used (patchKey).
func (c *checker) recordTemplate(t *template, res []*sstate, memo0 int) bool {
	if !t.holds(res) {
		return false
	}
	t.res = make([]*sstate, len(res))
	for i, x := range res {
		t.res[i] = x.clone()
	}
	for _, k := range c.memoLog[memo0:] {
		saved := c.memo[k].res
		if !t.holds(saved) {
			return false
		}
		t.made = append(t.made, memoEntry{k, saved})
	}
	return true
}

// holds reports whether every state holds the template's frame values.
func (t *template) holds(states []*sstate) bool {
	for _, x := range states {
		for j, i := range t.frame {
			if x.syms[i] != symZero || x.regs[i] != t.vals[j] {
				return false
			}
		}
	}
	return true
}

// useTemplate returns t's result for an entry st whose frame registers hold
// vals, making the memo entries and counting the work of the run it stands
// for; ok is false when that run would not have met the memo as t's did or
// would pass the work budget (then the loop runs).
func (c *checker) useTemplate(t *template, vals []int64, st *sstate, run func() []*sstate) ([]*sstate, bool) {
	if c.work+t.work > maxWork*visitWork {
		return nil, false
	}
	made := make([]memoEntry, len(t.made))
	for i, e := range t.made {
		b, ok := c.patchKey(e.key, t, vals)
		if !ok {
			return nil, false
		}
		if _, ok := c.memo[string(b)]; ok {
			return nil, false
		}
		made[i].key = string(b)
	}
	var found []memoKey
	var mine map[memoKey]bool
	for _, f := range t.found {
		b, ok := c.patchKey(f, t, vals)
		if !ok {
			return nil, false
		}
		// Found in the memo before the run, or made by the run itself
		// before it was found.
		e, ok := c.memo[string(b)]
		if !ok {
			if mine == nil {
				mine = make(map[memoKey]bool, len(made))
				for _, m := range made {
					mine[m.key] = true
				}
			}
			if !mine[string(b)] {
				return nil, false
			}
			e.key = string(b)
		}
		if c.recording > 0 {
			found = append(found, e.key)
		}
	}
	p := &patcher{t: t, vals: vals}
	for i, e := range t.made {
		made[i].res = p.patch(e.res)
	}
	out := p.patch(t.res)
	for _, x := range out {
		x.iter = st.iter
	}
	if checkTemplates {
		// The run stands, with the entries it made; it is compared first.
		return c.checkTemplate(t, made, out, run), true
	}
	for _, e := range made {
		c.memo[e.key] = e
		c.memoLog = append(c.memoLog, e.key)
	}
	if c.recording > 0 {
		// An enclosing template's run found these entries too.
		c.hitLog = append(c.hitLog, found...)
	}
	c.work += t.work
	return out, true
}

// patcher sets a template's frame registers to one entry's values (vals)
// in clones of the template's states. States that share their registers
// (interned memo states, intern) share the patched copy too: done lists the
// copies made, by the registers they were made from, and the change of the
// hash. The copies have no owner: they go into the memo, and the result
// states are cloned into it at once (remember).
type patcher struct {
	t    *template
	vals []int64
	done []patched
}

type patched struct {
	from *int64
	regs []int64
	syms []int32
	dh   uint64
}

// patch clones states with the frame registers set to p.vals.
func (p *patcher) patch(states []*sstate) []*sstate {
	out := make([]*sstate, len(states))
	for i, x := range states {
		y := x.clone()
		p.setFrame(y)
		out[i] = y
	}
	return out
}

func (p *patcher) setFrame(y *sstate) {
	if len(y.regs) == 0 {
		return
	}
	from := &y.regs[0]
	for _, d := range p.done {
		if d.from == from {
			// The frame registers hold constants before and after, so no
			// symbol is let go of (gcAt stands).
			y.regs, y.syms, y.h = d.regs, d.syms, y.h+d.dh
			return
		}
	}
	h0 := y.h
	for j, r := range p.t.frame {
		y.setReg(r, symZero, p.vals[j])
	}
	y.own &^= ownRegs
	p.done = append(p.done, patched{from, y.regs, y.syms, y.h - h0})
}

// patchKey is memo key k (made during t's run) with t's frame registers'
// values replaced by vals, in a scratch buffer (valid until the next call);
// false when k does not hold them as expected.
func (c *checker) patchKey(k memoKey, t *template, vals []int64) ([]byte, bool) {
	c.patchBuf = append(c.patchBuf[:0], k...)
	b := c.patchBuf
	pos, j := 4+len(c.pairs)*numFlagIDs, 0 // past the loop's number and the flags
	for pos+14 <= len(b) && j < len(t.frame) {
		i := int(binary.LittleEndian.Uint16(b[pos:]))
		if i >= len(c.k.Regs) {
			break // the facts
		}
		if i == t.frame[j] {
			if binary.LittleEndian.Uint32(b[pos+2:]) != uint32(symZero) || int64(binary.LittleEndian.Uint64(b[pos+6:])) != t.vals[j] {
				return nil, false
			}
			binary.LittleEndian.PutUint64(b[pos+6:], uint64(vals[j]))
			j++
		}
		pos += 14
	}
	if j < len(t.frame) {
		return nil, false
	}
	return b, true
}

// checkTemplate runs the loop (the general path) where t would stand for it
// and panics unless the run made the same memo entries, counted the same
// work, reported no new finding, made no new symbol and returned the same
// states as the template's result out.
func (c *checker) checkTemplate(t *template, made []memoEntry, out []*sstate, run func() []*sstate) []*sstate {
	templateChecks++
	memo0, work0, nout, nsyms, limited := len(c.memoLog), c.work, len(c.out), len(c.syms), c.limited
	unchecked := append([]bool(nil), c.unchecked...)
	res := run()
	fail := func(what string, a, b any) {
		panic(fmt.Sprintf("static pass: loop template of kernel %s differs from the general path: %s %v, general path %v", c.k.Name, what, a, b))
	}
	if c.work-work0 != t.work {
		fail("work", t.work, c.work-work0)
	}
	if len(c.out) != nout || len(c.syms) != nsyms || c.limited != limited || !slices.Equal(c.unchecked, unchecked) || c.aborted {
		fail("findings/symbols/limits", []any{nout, nsyms, limited, unchecked}, []any{len(c.out), len(c.syms), c.limited, c.unchecked})
	}
	got := c.memoLog[memo0:]
	if len(got) != len(made) {
		fail("memo entries", len(made), len(got))
	}
	for i, e := range made {
		if got[i] != e.key || !sameStates(c.memo[got[i]].res, e.res) {
			fail("memo entry", i, "differs")
		}
	}
	if !sameStates(res, out) {
		fail("result", len(out), len(res))
	}
	for i := range res {
		if !slices.Equal(res[i].iter, out[i].iter) {
			fail("iteration", out[i].iter, res[i].iter)
		}
	}
	return res
}

func sameStates(a, b []*sstate) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].key() != b[i].key() {
			return false
		}
	}
	return true
}
