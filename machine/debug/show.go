package debug

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
	"github.com/ptoasm/ptoasm/machine/hazard"
	"github.com/ptoasm/ptoasm/memory"
)

// opText is an instruction as written: label, mnemonic and operands.
func opText(op *asm.COp) string {
	if op == nil {
		return ""
	}
	var b strings.Builder
	if op.Instr != nil && op.Instr.Label != "" {
		b.WriteString(op.Instr.Label + ": ")
	}
	if op.Info != nil {
		b.WriteString(op.Info.Name)
	} else if op.Instr != nil {
		b.WriteString(op.Instr.Op)
	}
	if op.Instr != nil {
		for k, e := range op.Instr.Operands() {
			if k == 0 {
				b.WriteByte(' ')
			} else {
				b.WriteString(", ")
			}
			b.WriteString(asm.ExprString(e))
		}
	}
	return b.String()
}

func opLine(op *asm.COp) string {
	if op == nil || op.Instr == nil {
		return ""
	}
	return fmt.Sprintf("%s:%d", op.Instr.Pos.File, op.Instr.Pos.Line)
}

func iterText(it []int64) string {
	if len(it) == 0 {
		return ""
	}
	parts := make([]string, len(it))
	for i, v := range it {
		parts[i] = strconv.FormatInt(v, 10)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func flagText(f machine.Flag) string { return fmt.Sprintf("%s->%s #%d", f.Src, f.Dst, f.ID) }

func (d *Debugger) place(a machine.Agent) (string, string) {
	switch {
	case a.Core >= 0:
		return d.m.CoreName(int(a.Rank), int(a.Core)), a.Pipe.String()
	case a.Rank >= 0:
		return fmt.Sprintf("r%d.sdma", a.Rank), "-"
	}
	return "-", "-"
}

// writeEvent prints one event line.
func (d *Debugger) writeEvent(w io.Writer, ev *event) {
	num := "      "
	if ev.n > 0 {
		num = fmt.Sprintf("#%-5d", ev.n)
	}
	place, pipe := d.place(ev.agent)
	if ev.kind == kRunStart || ev.kind == kRunEnd || ev.kind == kDeadlock {
		place, pipe = "-", "-"
	}
	var det []string
	switch ev.kind {
	case kIssue:
		det = append(det, "-> "+ev.target.String())
	case kStart:
		det = append(det, fmt.Sprintf("runs %d..%d", ev.start, ev.end))
	case kDone:
		det = append(det, fmt.Sprintf("ran %d..%d", ev.start, ev.end))
	case kSet, kWait:
		det = append(det, "flag "+flagText(ev.flag))
	case kStall:
		det = append(det, fmt.Sprintf("stalled %d..%d: %s", ev.start, ev.end, ev.reason))
	case kNotify:
		det = append(det, fmt.Sprintf("%s %d", ev.word, ev.value))
	case kSignal:
		det = append(det, fmt.Sprintf("value %d", ev.value))
	case kRunStart, kRunEnd:
		det = append(det, "run "+ev.word)
	}
	if ev.step != "" {
		det = append(det, "step "+ev.step)
	}
	if it := iterText(ev.iterSlice()); it != "" {
		det = append(det, "iter "+it)
	}
	if l := opLine(ev.op); l != "" {
		det = append(det, l)
	}
	// A done event happens when the op ends; its line shows that cycle.
	at := ev.start
	if ev.kind == kDone || ev.kind == kStall {
		at = ev.end
	}
	line := fmt.Sprintf("  %s %7d  %-9s %-4s %-10s %s", num, at, place, pipe, kindNames[ev.kind], opText(ev.op))
	line = strings.TrimRight(line, " ")
	if len(det) > 0 {
		line += "  (" + strings.Join(det, ", ") + ")"
	}
	fmt.Fprintln(w, line)
}

// eventBrief says where a breakpoint hit.
func (d *Debugger) eventBrief(ev *event) string {
	place, pipe := d.place(ev.agent)
	at := ev.start
	if ev.kind == kDone {
		at = ev.end
	}
	s := fmt.Sprintf("(%s on %s %s at cycle %d", kindNames[ev.kind], place, pipe, at)
	if it := iterText(ev.iterSlice()); it != "" {
		s += ", iter " + it
	}
	return s + ")"
}

// accText names an access: the tile element or the GM tensor and bytes.
func (d *Debugger) accText(a *machine.Access) string {
	rw := "reads"
	if a.Write {
		rw = "writes"
	}
	switch {
	case a.Tile != nil:
		name := "%" + a.Tile.Name
		if a.Tile.IsArray {
			// The element the operand named: elements may overlap.
			name = fmt.Sprintf("%%%s[%d]", a.Tile.Name, a.Elem)
		}
		lo, hi := a.Bounds()
		rows := ""
		if a.NumRows() > 1 {
			rows = fmt.Sprintf(", %d rows of %d bytes, %d apart", a.Rows, a.Hi-a.Lo, a.Pitch)
		}
		return fmt.Sprintf("%s %s (%s %#x..%#x%s)", rw, name, a.Space, lo, hi, rows)
	case a.Tensor != nil:
		base, _ := d.m.TensorBase(a.Tensor.Name, int(a.Rank))
		lo, hi := a.Bounds()
		rows := ""
		if a.NumRows() > 1 {
			rows = fmt.Sprintf(" (%d rows of %d bytes, %d apart)", a.Rows, a.Hi-a.Lo, a.Pitch)
		}
		return fmt.Sprintf("%s @%s bytes %#x..%#x%s on rank %d", rw, a.Tensor.Name, lo-base, hi-base, rows, a.Rank)
	}
	return fmt.Sprintf("%s %s %#x..%#x", rw, a.Space, a.Lo, a.Hi)
}

// mergeAcc folds the per-row GM accesses of one operand into one line each.
func mergeAcc(acc []machine.Access) []machine.Access {
	var out []machine.Access
	for _, a := range acc {
		if n := len(out); n > 0 {
			p := &out[n-1]
			if p.Tensor != nil && p.Tensor == a.Tensor && p.Rank == a.Rank && p.Write == a.Write && a.Lo >= p.Lo &&
				p.NumRows() == 1 && a.NumRows() == 1 {
				p.Hi = max(p.Hi, a.Hi)
				continue
			}
		}
		out = append(out, a)
	}
	return out
}

// overlaps compares bounding ranges: `where` only points at candidates, the
// detector decides.
func overlaps(a, b *machine.Access) bool {
	alo, ahi := a.Bounds()
	blo, bhi := b.Bounds()
	if a.Space != b.Space || alo >= bhi || blo >= ahi {
		return false
	}
	if a.Space == asm.GM {
		return a.Rank == b.Rank
	}
	return a.Rank == b.Rank && a.Core == b.Core
}

// where prints every core's position.
func (d *Debugger) where(w io.Writer) {
	fmt.Fprintf(w, "cycle %d, event #%d\n", d.cycle, d.count)
	for _, c := range d.m.Cores() {
		d.writeCore(w, &c)
	}
}

func (d *Debugger) writeCore(w io.Writer, c *machine.CoreView) {
	mark := " "
	if c.Rank == d.curRank && c.Core == d.curCore {
		mark = "*"
	}
	kname := ""
	if c.Kernel != nil {
		kname = c.Kernel.Name
	}
	fmt.Fprintf(w, "%s %s  kernel %s block %d\n", mark, c.Name, kname, c.Block)
	switch {
	case c.Done:
		fmt.Fprintf(w, "    S     done at cycle %d\n", c.T)
	case c.Next == nil:
		fmt.Fprintf(w, "    S     at the end of the kernel")
	default:
		text := ""
		if op, ok := c.Next.(*asm.COp); ok {
			text = opText(op)
		} else {
			text = stmtWord(c.Next)
		}
		fmt.Fprintf(w, "    S     next %s:%d %s", c.NextPos.File, c.NextPos.Line, text)
		if it := iterText(c.Iter); it != "" {
			fmt.Fprintf(w, "  iter %s", it)
		}
	}
	if !c.Done {
		if c.Waiting != "" {
			fmt.Fprintf(w, "; blocked: %s\n", c.Waiting)
		} else if c.T > d.m.Now() {
			fmt.Fprintf(w, "; ran ahead to cycle %d\n", c.T)
		} else {
			fmt.Fprintln(w)
		}
	}
	for _, p := range c.Pipes {
		var s string
		switch {
		case p.Busy && len(p.Queue) > 0:
			h := &p.Queue[0]
			s = fmt.Sprintf("running %s (%s", entryText(h), opLine(h.Op))
			if it := iterText(h.Iter); it != "" {
				s += ", iter " + it
			}
			s += fmt.Sprintf(") %d..%d", p.Start, p.End)
		case len(p.Queue) > 0 && p.Waiting != "":
			s = "waits: " + p.Waiting
		case len(p.Queue) > 0:
			s = "ready: " + entryText(&p.Queue[0])
		default:
			s = "idle"
		}
		if n := len(p.Queue); n > 1 {
			s += fmt.Sprintf("; %d more queued", n-1)
		}
		fmt.Fprintf(w, "    %-5s %s\n", p.Pipe, s)
	}
}

func stmtWord(s asm.CStmt) string {
	switch s.(type) {
	case *asm.CLet:
		return "let"
	case *asm.CFor:
		return "for"
	case *asm.CIf:
		return "if"
	case *asm.CWhile:
		return "while"
	case *asm.CBreak:
		return "break"
	}
	return "?"
}

func entryText(e *machine.QueueEntry) string {
	t := opText(e.Op)
	if t == "" {
		t = e.Kind
	}
	if e.Step != "" {
		t += " [" + e.Step + "]"
	}
	return t
}

// queues prints each pipe's queue of a core, marking entries whose memory
// overlaps what an op running on another pipe writes (or reads, when the
// entry writes): the accesses the hazard detector compares.
func (d *Debugger) queues(w io.Writer, c *machine.CoreView) {
	fmt.Fprintf(w, "%s at cycle %d\n", c.Name, d.cycle)
	for _, p := range c.Pipes {
		fmt.Fprintf(w, "  %-5s %d/%d", p.Pipe, len(p.Queue), p.Cap)
		switch {
		case p.Busy:
			fmt.Fprintf(w, "  running %d..%d", p.Start, p.End)
		case p.Waiting != "":
			fmt.Fprintf(w, "  head waits: %s", p.Waiting)
		}
		fmt.Fprintln(w)
		for i := range p.Queue {
			e := &p.Queue[i]
			mark := " "
			if i == 0 && p.Busy {
				mark = "*"
			}
			fmt.Fprintf(w, "   %s %d. %s  (%s", mark, i, entryText(e), opLine(e.Op))
			if it := iterText(e.Iter); it != "" {
				fmt.Fprintf(w, ", iter %s", it)
			}
			if e.Kind == "set_flag" || e.Kind == "wait_flag" {
				fmt.Fprintf(w, ", flag %s", flagText(e.Flag))
			}
			fmt.Fprintln(w, ")")
			running := i == 0 && p.Busy
			guarded := false
			for j := 0; j < i; j++ {
				guarded = guarded || p.Queue[j].Kind == "wait_flag"
			}
			for _, a := range mergeAcc(e.Accesses) {
				fmt.Fprintf(w, "         %s%s\n", d.accText(&a), conflicts(c, p.Pipe, &a, running, guarded))
			}
		}
	}
}

// conflicts names the ops running on other pipes of the core that write what
// a reads, or touch what a writes. Both in flight is a conflict happening
// now; a queued entry behind a wait_flag may well be ordered by it, and the
// hazard detector (findings) is the judge of whether it is.
func conflicts(c *machine.CoreView, self asm.Pipe, a *machine.Access, running, guarded bool) string {
	var out []string
	for _, q := range c.Pipes {
		if q.Pipe == self || !q.Busy || len(q.Queue) == 0 {
			continue
		}
		h := &q.Queue[0]
		for i := range h.Accesses {
			b := &h.Accesses[i]
			if (a.Write || b.Write) && overlaps(a, b) {
				verb := "reads"
				if b.Write {
					verb = "writes"
				}
				out = append(out, fmt.Sprintf("%s on %s %s it", opName(h.Op), q.Pipe, verb))
				break
			}
		}
	}
	if len(out) == 0 {
		return ""
	}
	switch {
	case running:
		return "  <- CONFLICT, both in flight: " + strings.Join(out, "; ")
	case guarded:
		return "  <- overlaps the running " + strings.Join(out, "; ") + " (a wait_flag is ahead in this queue)"
	}
	return "  <- overlaps the running " + strings.Join(out, "; ") + " (nothing ahead in this queue waits)"
}

func opName(op *asm.COp) string {
	if op == nil || op.Info == nil {
		return "?"
	}
	if op.Instr != nil && op.Instr.Label != "" {
		return op.Instr.Label + ": " + op.Info.Name
	}
	return op.Info.Name
}

func (d *Debugger) flags(w io.Writer, c *machine.CoreView) {
	fs, at := d.m.SetFlags(c.Rank, c.Core)
	if len(fs) == 0 {
		fmt.Fprintf(w, "%s: no flag is set\n", c.Name)
		return
	}
	fmt.Fprintf(w, "%s: %d set\n", c.Name, len(fs))
	for i, f := range fs {
		fmt.Fprintf(w, "  %s  set at cycle %d\n", flagText(f), at[i])
	}
}

// maxSignalsShown is how many elements that are not 0 `signals` lists per
// rank; it counts the rest (a line per rank, not a megabyte).
const maxSignalsShown = 64

func (d *Debugger) signals(w io.Writer, arg string) error {
	g, err := d.parseGM(arg)
	if err != nil {
		return err
	}
	if err := g.within(g.count(), maxRegionWalk, "elements", "signals reads"); err != nil {
		return err
	}
	for r := 0; r < d.m.Ranks(); r++ {
		buf, _ := d.m.TensorData(g.t.Name, r)
		if buf == nil {
			return fmt.Errorf("@%s has no data (timing-only run)", g.t.Name)
		}
		var nz []string
		zeros, more := 0, 0
		err := g.elems(func(idx []int64, off int64) error {
			v, ok, err := loadElem(buf, g.t.DType, off)
			if err != nil {
				return err
			}
			switch {
			case ok && v == 0:
				zeros++
			case len(nz) == maxSignalsShown:
				more++
			case !ok:
				nz = append(nz, fmt.Sprintf("%s=poison", idxText(idx)))
			default:
				nz = append(nz, fmt.Sprintf("%s=%s", idxText(idx), fmtNum(v)))
			}
			return nil
		})
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "rank %d:", r)
		if len(nz) > 0 {
			fmt.Fprintf(w, " %s", strings.Join(nz, " "))
		}
		if more > 0 {
			fmt.Fprintf(w, " (and %d more not 0)", more)
		}
		if zeros > 0 {
			fmt.Fprintf(w, " (%d other elements 0)", zeros)
		}
		fmt.Fprintln(w)
	}
	return nil
}

func idxText(idx []int64) string {
	parts := make([]string, len(idx))
	for i, v := range idx {
		parts[i] = strconv.FormatInt(v, 10)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

func (d *Debugger) agentName(a machine.Agent) string {
	switch {
	case a.Core >= 0 && a.Pipe == asm.PipeInvalid:
		return d.m.CoreName(int(a.Rank), int(a.Core)) + ".sdma" // its SDMA copies
	case a.Core >= 0:
		return d.m.CoreName(int(a.Rank), int(a.Core)) + "." + a.Pipe.String()
	case a.Rank >= 0:
		return fmt.Sprintf("r%d.sdma", a.Rank)
	}
	return "host"
}

func (d *Debugger) clocks(w io.Writer, c *machine.CoreView) {
	cl := d.det.Clocks(c.Rank, c.Core)
	if len(cl) == 0 {
		fmt.Fprintf(w, "%s: the detector has seen nothing of this core yet\n", c.Name)
		return
	}
	fmt.Fprintf(w, "%s: what each agent's next op is known to happen after (agent:ops)\n", c.Name)
	for _, a := range cl {
		parts := make([]string, 0, len(a.Clock))
		for _, e := range a.Clock {
			parts = append(parts, fmt.Sprintf("%s:%d", d.agentName(e.Agent), e.Value))
		}
		fmt.Fprintf(w, "  %-5s ran %d; after {%s}\n", a.Agent.Pipe, a.Ops, strings.Join(parts, " "))
	}
}

func (d *Debugger) findings(w io.Writer) {
	fs := d.det.Findings()
	if len(fs) == 0 {
		fmt.Fprintln(w, "no findings so far")
		return
	}
	fmt.Fprintf(w, "%d findings so far:\n", len(fs))
	hazard.WriteText(w, fs, d.obj.Sources)
}

// ---- values ----

const (
	maxRows = 16
	maxCols = 12
)

func fmtNum(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }

// table prints a rows×cols grid of values, truncated to maxRows×maxCols.
func table(w io.Writer, rows, cols int, rowLabel func(int) string, colLabel func(int) string,
	val func(r, c int) (string, error)) error {
	rs, cs := min(rows, maxRows), min(cols, maxCols)
	cells := make([][]string, rs+1)
	cells[0] = make([]string, cs+1)
	for c := 0; c < cs; c++ {
		cells[0][c+1] = colLabel(c)
	}
	for r := 0; r < rs; r++ {
		cells[r+1] = make([]string, cs+1)
		cells[r+1][0] = rowLabel(r)
		for c := 0; c < cs; c++ {
			s, err := val(r, c)
			if err != nil {
				return err
			}
			cells[r+1][c+1] = s
		}
	}
	width := make([]int, cs+1)
	for _, row := range cells {
		for c, s := range row {
			width[c] = max(width[c], len(s))
		}
	}
	for _, row := range cells {
		var b strings.Builder
		for c, s := range row {
			if c > 0 {
				b.WriteString("  ")
			}
			b.WriteString(strings.Repeat(" ", width[c]-len(s)))
			b.WriteString(s)
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
	if rows > rs || cols > cs {
		fmt.Fprintf(w, "(showing %d of %d rows and %d of %d columns)\n", rs, rows, cs, cols)
	}
	return nil
}

func cellText(b *memory.Buffer, dt asm.DType, off int64) (string, error) {
	v, ok, err := loadElem(b, dt, off)
	if err != nil {
		return "", err
	}
	if !ok {
		return "?", nil
	}
	return fmtNum(v), nil
}

func (d *Debugger) printTile(w io.Writer, ref string, c *machine.CoreView) error {
	t, err := d.parseTile(ref, c.Kernel)
	if err != nil {
		return err
	}
	buf := d.m.LocalBuffer(c.Rank, c.Core, t.t.Space)
	if buf == nil {
		return fmt.Errorf("%s has no %s data (timing-only run, or the kernel does not use it)", c.Name, t.t.Space)
	}
	l := memory.TileLayout(t.t)
	for _, k := range t.elements() {
		name := "%" + t.t.Name
		if t.t.IsArray {
			name = fmt.Sprintf("%%%s[%d]", t.t.Name, k)
		}
		// A rebound tile lives where the core last bound it (tassign).
		base, bound := d.m.TileAddr(c.Rank, c.Core, t.t, k)
		if !bound {
			fmt.Fprintf(w, "%s on %s: not bound yet (declared without an address; tassign binds it)\n", name, c.Name)
			continue
		}
		fmt.Fprintf(w, "%s on %s: %s %s [%d, %d] at %s %#x", name, c.Name, t.t.Loc, t.t.DType, t.t.Rows, t.t.Cols, t.t.Space, base)
		if t.t.DynValid() {
			fmt.Fprintf(w, ", valid from registers (the declared shape is shown)")
		} else if t.t.VRows != t.t.Rows || t.t.VCols != t.t.Cols {
			fmt.Fprintf(w, ", valid [%d, %d]", t.t.VRows, t.t.VCols)
		}
		fmt.Fprintln(w, "; ? = poisoned (never written)")
		err := table(w, t.t.VRows, t.t.VCols, strconv.Itoa, strconv.Itoa, func(r, col int) (string, error) {
			return cellText(buf, t.t.DType, base+l.Offset(r, col))
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func (d *Debugger) printGM(w io.Writer, ref string, rank int) error {
	g, err := d.parseGM(ref)
	if err != nil {
		return err
	}
	buf, _ := d.m.TensorData(g.t.Name, rank)
	if buf == nil {
		return fmt.Errorf("@%s has no data on rank %d (timing-only run?)", g.t.Name, rank)
	}
	n := len(g.lo)
	// The last two dimensions form the table; leading ones are printed one
	// table each (first only, with a note, past the first few).
	rd, cd := n-2, n-1
	if n == 1 {
		rd = -1
	}
	rows, cols := 1, int(g.hi[cd]-g.lo[cd])
	if rd >= 0 {
		rows = int(g.hi[rd] - g.lo[rd])
	}
	outer := append([]int64(nil), g.lo...)
	tables := 0
	for {
		head := fmt.Sprintf("@%s", g.t.Name)
		if n > 2 {
			head += idxText(outer[:n-2])
		}
		fmt.Fprintf(w, "%s on rank %d: %s %v; ? = poisoned\n", head, rank, g.t.DType, g.t.Shape)
		idx := append([]int64(nil), outer...)
		rowLabel := func(r int) string {
			if rd < 0 {
				return ""
			}
			return strconv.FormatInt(g.lo[rd]+int64(r), 10)
		}
		colLabel := func(c int) string { return strconv.FormatInt(g.lo[cd]+int64(c), 10) }
		err := table(w, rows, cols, rowLabel, colLabel, func(r, c int) (string, error) {
			if rd >= 0 {
				idx[rd] = g.lo[rd] + int64(r)
			}
			idx[cd] = g.lo[cd] + int64(c)
			off, err := machine.GMOffset(g.t, idx)
			if err != nil {
				return "", err
			}
			return cellText(buf, g.t.DType, off)
		})
		if err != nil {
			return err
		}
		tables++
		k := n - 3
		for ; k >= 0; k-- {
			outer[k]++
			if outer[k] < g.hi[k] {
				break
			}
			outer[k] = g.lo[k]
		}
		if k < 0 {
			return nil
		}
		if tables == 4 {
			fmt.Fprintln(w, "(more leading indices not shown: narrow the reference)")
			return nil
		}
	}
}
