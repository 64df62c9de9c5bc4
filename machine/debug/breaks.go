package debug

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
)

type bpKind uint8

const (
	bpLine bpKind = iota
	bpFlag
	bpSignal
	bpWrite
	bpCycle
)

type breakpoint struct {
	id   int
	kind bpKind
	text string
	hits int

	// line: the instructions of the line or label; when: 0 issue or start,
	// 1 issue only, 2 start only.
	ops  map[*asm.COp]bool
	when int
	// filters: rank -1 any; cores nil any (else the observer ids of the
	// named core, on rank: several for a block after a first wave, see
	// machine.CoreIDs); iter -1 any (innermost loop index)
	rank  int
	cores []int
	iter  int64

	// flag
	set  bool
	flag machine.Flag

	// signal and GM write: the tensor, its byte ranges within the tensor and
	// (signal) the last values seen per rank.
	gm     *gmRef
	ranges [][2]int64
	last   [][]float64
	// tile write: the space and the byte ranges within it
	space asm.Space

	// cycle
	cycle int64
	fired bool
}

type hit struct {
	bp         *breakpoint
	what       string
	rank, core int
}

const breakUsage = `break LINE | FILE:LINE | LABEL [issue|start] [core=NAME] [iter=N]
break flag set|wait SRC DST ID [core=NAME]
break signal @S[i, ...] [rank=R]
break write @T[i, j] | @T[r0:r1, c0:c1] | %tile | %tile[k] [rank=R] [core=NAME]
break cycle N`

// maxBreakpoints is the most breakpoints a session holds: each is checked
// at every engine step, so a script of a million `break` lines took 580 MB
// and would make every motion a million checks a step.
const maxBreakpoints = 10000

// addBreak parses `break ...` (args without the command word).
func (d *Debugger) addBreak(w io.Writer, args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("usage:\n%s", breakUsage)
	}
	if len(d.bps) >= maxBreakpoints {
		return fmt.Errorf("%d breakpoints already, the most a session holds; delete some first", len(d.bps))
	}
	bp := &breakpoint{rank: -1, iter: -1, text: strings.Join(args, " ")}
	// Qualifiers come last and have a key.
	var pos []string
	for _, a := range args {
		k, v, ok := strings.Cut(a, "=")
		switch {
		case ok && k == "core":
			r, ids, err := d.parseCore(v)
			if err != nil {
				return err
			}
			bp.rank, bp.cores = r, ids
		case ok && k == "rank":
			r, err := strconv.Atoi(v)
			if err != nil || r < 0 || r >= d.m.Ranks() {
				return fmt.Errorf("rank=%s: want 0..%d", v, d.m.Ranks()-1)
			}
			bp.rank = r
		case ok && k == "iter":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 {
				return fmt.Errorf("iter=%s: want a loop iteration index", v)
			}
			bp.iter = n
		case a == "issue" && len(pos) == 1:
			bp.when = 1
		case a == "start" && len(pos) == 1:
			bp.when = 2
		default:
			pos = append(pos, a)
		}
	}
	if len(pos) == 0 {
		return fmt.Errorf("usage:\n%s", breakUsage)
	}
	var err error
	switch pos[0] {
	case "flag":
		err = d.breakFlag(bp, pos[1:])
	case "signal":
		err = d.breakSignal(bp, pos[1:])
	case "write":
		err = d.breakWrite(bp, pos[1:])
	case "cycle":
		err = d.breakCycle(bp, pos[1:])
	default:
		if len(pos) != 1 {
			return fmt.Errorf("usage:\n%s", breakUsage)
		}
		err = d.breakLine(bp, pos[0])
	}
	if err != nil {
		return err
	}
	bp.id = d.nextBP
	d.nextBP++
	d.bps = append(d.bps, bp)
	fmt.Fprintf(w, "breakpoint %d: %s\n", bp.id, d.describeBP(bp))
	return nil
}

func (d *Debugger) breakLine(bp *breakpoint, loc string) error {
	bp.kind = bpLine
	bp.ops = map[*asm.COp]bool{}
	file, line := "", 0
	if f, l, ok := strings.Cut(loc, ":"); ok {
		n, err := strconv.Atoi(l)
		if err != nil || n <= 0 {
			return fmt.Errorf("%s: want FILE:LINE", loc)
		}
		file, line = f, n
	} else if n, err := strconv.Atoi(loc); err == nil {
		if n <= 0 {
			return fmt.Errorf("line %d: lines start at 1", n)
		}
		file, line = d.obj.Main, n
	}
	for _, k := range d.obj.Kernels {
		for _, op := range k.Ops {
			if op.Instr == nil {
				continue
			}
			p := op.Instr.Pos
			switch {
			case line == 0 && op.Instr.Label == loc:
				bp.ops[op] = true
			case line > 0 && p.Line == line && (p.File == file || strings.HasSuffix(p.File, "/"+file)):
				bp.ops[op] = true
			}
		}
	}
	if len(bp.ops) == 0 {
		if line == 0 {
			return fmt.Errorf("no label %q and no such line (break LINE, FILE:LINE or LABEL)", loc)
		}
		return fmt.Errorf("no instruction on %s:%d", file, line)
	}
	return nil
}

func parsePipe(s string) (asm.Pipe, error) {
	p, ok := asm.ParsePipe(strings.ToUpper(s))
	if !ok || p == asm.PipeALL {
		return 0, fmt.Errorf("%s: not a pipe (S MTE1 MTE2 MTE3 M V FIX)", s)
	}
	return p, nil
}

func (d *Debugger) breakFlag(bp *breakpoint, args []string) error {
	if len(args) != 4 || (args[0] != "set" && args[0] != "wait") {
		return fmt.Errorf("usage: break flag set|wait SRC DST ID")
	}
	bp.kind, bp.set = bpFlag, args[0] == "set"
	src, err := parsePipe(args[1])
	if err != nil {
		return err
	}
	dst, err := parsePipe(args[2])
	if err != nil {
		return err
	}
	id, err := strconv.Atoi(args[3])
	if err != nil || id < 0 || id >= asm.NumEventIDs {
		return fmt.Errorf("flag id %s: want 0..%d", args[3], asm.NumEventIDs-1)
	}
	bp.flag = machine.Flag{Src: src, Dst: dst, ID: int32(id)}
	return nil
}

func (d *Debugger) breakSignal(bp *breakpoint, args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("usage: break signal @S[i, ...] [rank=R]")
	}
	g, err := d.parseGM(args[0])
	if err != nil {
		return err
	}
	bp.kind, bp.gm = bpSignal, g
	// Its values are read after every engine step, on every rank.
	// (break write, which does not read values, takes any region.)
	if err := g.within(g.count(), maxSignalElems, "elements", "a signal breakpoint watches"); err != nil {
		return err
	}
	if bp.ranges, err = g.byteRanges(); err != nil {
		return err
	}
	bp.last = d.signalValues(bp)
	return nil
}

func (d *Debugger) breakWrite(bp *breakpoint, args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("usage: break write @T[...] | %%tile[k]")
	}
	bp.kind = bpWrite
	if strings.HasPrefix(args[0], "%") {
		var kernel *asm.KernelInfo
		if v, ok := d.m.CoreAt(d.curRank, d.curCore); ok {
			kernel = v.Kernel
		}
		t, err := d.parseTile(args[0], kernel)
		if err != nil {
			return err
		}
		if t.t.Rebound {
			// Its bytes move with each tassign: a fixed range would watch
			// the wrong ones.
			return fmt.Errorf("%%%s is rebound at run time (tassign, tsubview, treshape): break on the instruction instead", t.t.Name)
		}
		bp.space = t.t.Space
		for _, k := range t.elements() {
			bp.ranges = append(bp.ranges, [2]int64{t.t.Addr[k], t.t.Addr[k] + t.t.Bytes})
		}
		return nil
	}
	g, err := d.parseGM(args[0])
	if err != nil {
		return err
	}
	bp.gm, bp.space = g, asm.GM
	bp.ranges, err = g.byteRanges()
	return err
}

func (d *Debugger) breakCycle(bp *breakpoint, args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("usage: break cycle N")
	}
	n, err := strconv.ParseInt(args[0], 10, 64)
	if err != nil || n < 0 {
		return fmt.Errorf("cycle %s: want a cycle number", args[0])
	}
	bp.kind, bp.cycle = bpCycle, n
	if n < d.cycle {
		bp.fired = true
	}
	return nil
}

func (d *Debugger) describeBP(bp *breakpoint) string {
	s := bp.text
	switch bp.kind {
	case bpLine:
		s = fmt.Sprintf("%s (%d instruction", bp.text, len(bp.ops))
		if len(bp.ops) != 1 {
			s += "s"
		}
		// One position per breakpoint is enough to show where it is.
		var first *asm.COp
		for op := range bp.ops {
			if first == nil || op.Instr.Pos.Offset < first.Instr.Pos.Offset ||
				(op.Instr.Pos.Offset == first.Instr.Pos.Offset && op.ID < first.ID) {
				first = op
			}
		}
		s += fmt.Sprintf(" at %s:%d)", first.Instr.Pos.File, first.Instr.Pos.Line)
	case bpSignal:
		s = fmt.Sprintf("signal %s changes", bp.gm.text)
	case bpWrite:
		s = fmt.Sprintf("a write to %s", strings.TrimPrefix(bp.text, "write "))
	case bpCycle:
		s = fmt.Sprintf("cycle %d", bp.cycle)
		if bp.fired {
			s += " (passed)"
		}
	}
	if bp.hits > 0 {
		s += fmt.Sprintf(", hit %d time", bp.hits)
		if bp.hits > 1 {
			s += "s"
		}
	}
	return s
}

// checkEvent matches the event-driven breakpoints.
func (d *Debugger) checkEvent(ev *event, acc []machine.Access) {
	for _, bp := range d.bps {
		if bp.kind == bpSignal || bp.kind == bpCycle {
			continue
		}
		if bp.cores != nil && (!slices.Contains(bp.cores, int(ev.agent.Core)) || int(ev.agent.Rank) != bp.rank) {
			continue
		}
		if bp.rank >= 0 && bp.kind != bpWrite && int(ev.agent.Rank) != bp.rank {
			continue
		}
		if bp.iter >= 0 && (ev.niter == 0 || ev.iter[ev.niter-1] != bp.iter) {
			continue
		}
		what := ""
		switch bp.kind {
		case bpLine:
			if ev.op == nil || !bp.ops[ev.op] {
				continue
			}
			issue := ev.kind == kIssue || (ev.agent.Pipe == asm.PipeS && ev.kind.counted() && ev.kind != kStart)
			if !(ev.kind == kStart && bp.when != 1) && !(issue && bp.when != 2) {
				continue
			}
			what = fmt.Sprintf("%s %s", bp.text, d.eventBrief(ev))
		case bpFlag:
			if (bp.set && ev.kind != kSet) || (!bp.set && ev.kind != kWait) || ev.flag != bp.flag {
				continue
			}
			what = fmt.Sprintf("flag %s %s", bp.text[len("flag "):], d.eventBrief(ev))
		case bpWrite:
			r := d.writeHit(bp, ev, acc)
			if r == "" {
				continue
			}
			what = fmt.Sprintf("%s written %s%s", bp.text[len("write "):], d.eventBrief(ev), r)
		}
		bp.hits++
		d.hits = append(d.hits, hit{bp: bp, what: what, rank: int(ev.agent.Rank), core: int(ev.agent.Core)})
	}
}

// writeHit reports which bytes of bp's range a write event touched ("" for none).
func (d *Debugger) writeHit(bp *breakpoint, ev *event, acc []machine.Access) string {
	if ev.kind != kDone && ev.kind != kScalar && ev.kind != kNotify {
		return ""
	}
	for i := range acc {
		a := &acc[i]
		if !a.Write || a.Space != bp.space {
			continue
		}
		var base int64
		if bp.space == asm.GM {
			if a.Tensor != bp.gm.t || (bp.rank >= 0 && int(a.Rank) != bp.rank) {
				continue
			}
			var ok bool
			if base, ok = d.m.TensorBase(a.Tensor.Name, int(a.Rank)); !ok {
				continue
			}
		}
		for k := range a.NumRows() {
			lo, hi := a.Run(k)
			lo, hi = lo-base, hi-base
			for _, r := range bp.ranges {
				if lo < r[1] && r[0] < hi {
					if bp.space == asm.GM {
						return fmt.Sprintf(" (bytes %#x..%#x of @%s on rank %d)", max(lo, r[0]), min(hi, r[1]), a.Tensor.Name, a.Rank)
					}
					return fmt.Sprintf(" (%s bytes %#x..%#x)", bp.space, max(lo, r[0]), min(hi, r[1]))
				}
			}
		}
	}
	return ""
}

// signalValues reads a signal breakpoint's elements on every rank it watches.
func (d *Debugger) signalValues(bp *breakpoint) [][]float64 {
	out := make([][]float64, d.m.Ranks())
	for r := range out {
		if bp.rank >= 0 && r != bp.rank {
			continue
		}
		buf, _ := d.m.TensorData(bp.gm.t.Name, r)
		if buf == nil {
			continue
		}
		bp.gm.elems(func(_ []int64, off int64) error {
			v, _, _ := loadElem(buf, bp.gm.t.DType, off)
			out[r] = append(out[r], v)
			return nil
		})
	}
	return out
}

// checkSignals compares every signal breakpoint's values after an engine step.
func (d *Debugger) checkSignals() {
	for _, bp := range d.bps {
		if bp.kind != bpSignal {
			continue
		}
		now := d.signalValues(bp)
		for r := range now {
			for i := range now[r] {
				if i < len(bp.last[r]) && now[r][i] != bp.last[r][i] {
					bp.hits++
					d.hits = append(d.hits, hit{bp: bp, rank: -1, core: -1,
						what: fmt.Sprintf("signal %s changed on rank %d: %s -> %s", bp.gm.text, r,
							fmtNum(bp.last[r][i]), fmtNum(now[r][i]))})
					break
				}
			}
		}
		bp.last = now
	}
}

// cycleBreak stops before an engine step that would move past a cycle
// breakpoint.
func (d *Debugger) cycleBreak() bool {
	at, ok := d.m.NextAt()
	if !ok {
		return false
	}
	stop := false
	for _, bp := range d.bps {
		if bp.kind == bpCycle && !bp.fired && at > bp.cycle {
			bp.fired = true
			bp.hits++
			d.cycle = max(d.cycle, bp.cycle)
			d.hits = append(d.hits, hit{bp: bp, rank: -1, core: -1, what: fmt.Sprintf("cycle %d reached (next event at cycle %d)", bp.cycle, at)})
			stop = true
		}
	}
	return stop
}

// rearm refreshes breakpoint state after a replay.
func (d *Debugger) rearm() {
	for _, bp := range d.bps {
		switch bp.kind {
		case bpSignal:
			bp.last = d.signalValues(bp)
		case bpCycle:
			bp.fired = bp.cycle < d.cycle
		}
	}
}

func (d *Debugger) deleteBreak(w io.Writer, args []string) error {
	if len(args) == 0 {
		fmt.Fprintf(w, "deleted %d breakpoints\n", len(d.bps))
		d.bps = d.bps[:0]
		return nil
	}
	for _, a := range args {
		n, err := strconv.Atoi(a)
		if err != nil {
			return fmt.Errorf("delete %s: want a breakpoint number", a)
		}
		found := false
		for i, bp := range d.bps {
			if bp.id == n {
				d.bps = append(d.bps[:i], d.bps[i+1:]...)
				found = true
				break
			}
		}
		if !found {
			return fmt.Errorf("no breakpoint %d", n)
		}
		fmt.Fprintf(w, "deleted breakpoint %d\n", n)
	}
	return nil
}

func (d *Debugger) infoBreaks(w io.Writer) {
	if len(d.bps) == 0 {
		fmt.Fprintln(w, "no breakpoints")
		return
	}
	for _, bp := range d.bps {
		fmt.Fprintf(w, "%3d  %s\n", bp.id, d.describeBP(bp))
	}
}
