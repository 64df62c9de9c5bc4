package hazard

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
)

// flushNotes merges the notes of one event (one instruction instance may hit
// several cells and several accesses) and counts each merged note once.
func (d *Detector) flushNotes() {
	if len(d.notes) == 0 {
		return
	}
	for i := 0; i < len(d.notes); i++ {
		n := &d.notes[i]
		if n.kind == "" {
			continue
		}
		// The cells the merged note's counted parts met (spans).
		d.noteSpans = d.noteSpans[:0]
		if !n.named && n.hasSp {
			d.noteSpans = append(d.noteSpans, n.sp)
		}
		for j := i + 1; j < len(d.notes); j++ {
			m := &d.notes[j]
			if m.kind == n.kind && m.single == n.single && sameSite(&m.prev, &n.prev) && sameSite(&m.cur, &n.cur) &&
				m.acc.Space == n.acc.Space && m.acc.Tile == n.acc.Tile && m.acc.Tensor == n.acc.Tensor {
				if !m.named && m.hasSp {
					d.noteSpans = append(d.noteSpans, m.sp)
				}
				n.lo, n.hi = min(n.lo, m.lo), max(n.hi, m.hi)
				// The merged note names the instance a finding would
				// (instLess: the latest iterations), not the one the
				// cell listed first: which reads a cell lists, and in
				// which order, follows the run's timing.
				if laterPair(&m.prev, &m.cur, &n.prev, &n.cur) {
					n.prev, n.cur = m.prev, m.cur
				}
				n.named = n.named && m.named
				m.kind = ""
			}
		}
		d.recordNote(n)
	}
	d.notes = d.notes[:0]
}

// laterPair reports whether the instance pair (a1, a2) comes after
// (b1, b2) as instLess orders a finding's instances: the first access's
// iteration, then the second's.
func laterPair(a1, a2, b1, b2 *rec) bool {
	if c := slices.Compare(a1.iter[:a1.niter], b1.iter[:b1.niter]); c != 0 {
		return c > 0
	}
	return slices.Compare(a2.iter[:a2.niter], b2.iter[:b2.niter]) > 0
}

func sameSite(a, b *rec) bool {
	return a.op == b.op && a.step == b.step && a.agent == b.agent && a.write == b.write
}

func (d *Detector) recordNote(n *raceNote) {
	buf := bufferName(&n.acc, n.lo)
	rng := fmt.Sprintf("%s 0x%X..0x%X", spaceLabel(&n.acc), n.lo, n.hi)
	switch {
	case n.kind == KindUninitRead:
		msg := fmt.Sprintf("uninitialised read of %s (%s): %s reads it before anything in this launch wrote it", buf, rng, d.site(&n.cur).where())
		f := d.single(n.kind, SevError, &n.cur, msg,
			"initialise it (a tensor init such as `= zero`, a host `reset`, or a store/load that fills it) before this read; reading poison gives garbage on hardware")
		f.setBuffer(buf, n.lo, n.hi)
		f.keepLive(uninitInst{key: retractKey{n.cur.agent, n.cur.epoch, n.acc.Tile, n.acc.Tensor}, site: d.site(&n.cur), msg: msg, buf: buf, rng: [2]int64{n.lo, n.hi}})
	case n.kind == KindOutOfBounds:
		f := d.single(n.kind, SevError, &n.cur, fmt.Sprintf("out-of-bounds access to %s: %s %s", buf, d.site(&n.cur).where(), n.msg),
			"keep the access inside the declared tile or tensor: check the window offset and shape, or enlarge the declaration")
		f.setBuffer(buf, n.lo, n.hi)
	case n.kind == KindResetRacesAtomic:
		f := d.pair(n.kind, SevError, &n.prev, &n.cur,
			fmt.Sprintf("plain store to signal %s (%s) races an atomic add: %s overwrites it and %s adds to it with nothing ordering the two, so the add can be erased and its waiter spins forever (lost wakeup)",
				buf, rng, d.site(&n.prev).where(), d.site(&n.cur).where()),
			"never reset a signal a peer may still add to: use one word per round, or cumulative generations with `twait ... #cmp=ge`, or reset it from the host between runs")
		f.setBuffer(buf, n.lo, n.hi)
	case n.kind == KindWaitOverwritten:
		f := d.pair(n.kind, SevError, &n.prev, &n.cur, fmt.Sprintf("signal %s (%s): %s", buf, rng, n.msg),
			"give each value its own word (a word per step or round), or make the word a monotone count (`#op=add` notifies, `twait ... #cmp=ge` on the running total), or order the write after the wait")
		f.setBuffer(buf, n.lo, n.hi)
	case n.kind == KindStaleSignal:
		f := d.pair(n.kind, SevError, &n.prev, &n.cur,
			fmt.Sprintf("stale signal %s (%s): %s is satisfied by what earlier runs left in it (last written by %s in an earlier run), whatever this run's notifies do; signals keep their values across launches and the host did not reset this one, so the wait passes before its producers have run",
				buf, rng, d.site(&n.cur).where(), d.site(&n.prev).where()),
			"re-initialise the signal between launches (`reset @SIG = zero` in the launch section, before the run), or make the wait count per launch (an epoch that grows every launch, `twait ... #cmp=ge`)")
		f.setBuffer(buf, n.lo, n.hi)
	default:
		d.recordRace(n, d.raceBuffer(n, buf), rng)
	}
}

// raceBuffer names the buffer of race note n: as the second access's
// operand names it. Two tiles may share bytes (a tload into one, an op
// writing the other), and the access that arrived last, whose operand buf
// names, follows the run's timing; the finding and the WAR that stands for
// a WAW (Findings) must not. When the first access arrived last, the
// second's operand is looked up in its op; a rebound tile, whose address
// is known only at run time, keeps buf. A tile whose valid region is read
// from registers (valid [%vr, C]) has its declared addresses, and is looked
// up: keeping buf named the WAW of a load into a slot by whichever tile
// arrived last, and the WAR standing for it missed it under some timings
// (hazards/rmsnorm_overlapping_slots, WAW `sq, ld1` beside WAR `sum, ld1`).
func (d *Detector) raceBuffer(n *raceNote, buf string) string {
	if !n.accFirst || n.acc.Tile == nil || n.cur.op == nil || n.cur.op.Info == nil {
		return buf
	}
	op := n.cur.op
	want := asm.AccRead
	if n.cur.write {
		want = asm.AccWrite
	}
	specs := op.Info.Operands
	for i := range op.Args {
		a := &op.Args[i]
		if a.Kind != asm.ArgTile || a.Tile == nil || a.Tile.Space != n.acc.Space || a.Tile.Rebound {
			continue
		}
		if len(specs) > 0 && specs[min(i, len(specs)-1)].Access&want == 0 {
			continue
		}
		for el, base := range a.Tile.Addr {
			if base < n.hi && n.lo < base+a.Tile.Bytes {
				return elemName(a.Tile, el)
			}
		}
	}
	return buf
}

func (d *Detector) recordRace(n *raceNote, buf, rng string) {
	first, second := &n.prev, &n.cur
	fa, sa := &d.agents[first.agent], &d.agents[second.agent]
	sf, ss := d.site(first), d.site(second)
	verbs := func(r *rec) string {
		switch {
		case r.atomic:
			return "atomically adds to"
		case r.write:
			return "writes"
		}
		return "reads"
	}
	var msg string
	sev := SevError
	scope := scopeCrossRank
	switch {
	case n.samePipe:
		scope = scopeSamePipe
		sev = d.opt.SamePipe.level(fa.pipe, fa.kind == akSDMA)
		msg = fmt.Sprintf("same-pipe %s on %s (%s): %s %s it, then %s %s it, with no pipe_barrier %s between them; ops of one A2/A3 pipe may complete out of order",
			n.kind, buf, rng, sf.where(), verbs(first), ss.where(), verbs(second), sf.Pipe)
	default:
		switch {
		case fa.kind == akSDMA || sa.kind == akSDMA:
			scope = scopeAsync
		case fa.coreIdx == sa.coreIdx:
			scope = scopeCrossPipe
		case fa.rank == sa.rank:
			scope = scopeCrossCore
		}
		what := map[hintScope]string{scopeCrossPipe: "no flag or barrier", scopeCrossCore: "no cross-core flag, fifo or syncall",
			scopeCrossRank: "no signal or collective", scopeAsync: "no wait_async"}[scope]
		msg = fmt.Sprintf("%s race on %s (%s): %s %s it, then %s %s it, and %s orders the two",
			n.kind, buf, rng, sf.where(), verbs(first), ss.where(), verbs(second), what)
	}
	if sev == SevOff {
		return
	}
	var f *finding
	if n.named {
		if f = d.offer(n.kind, sev, sf, ss, msg); f == nil {
			return
		}
	} else {
		f = d.add(n.kind, sev, sf, ss, msg, "")
		if d.counted == nil {
			d.counted = map[movedKey]struct{}{}
		}
		k := findKey{kind: n.kind, first: siteKey(sf), second: siteKey(ss)}
		k1, k2 := movedKey{first.agent, first.epoch, first.gen, k}, movedKey{second.agent, second.epoch, second.gen, k}
		d.counted[k1] = struct{}{}
		d.counted[k2] = struct{}{}
		for _, s := range d.noteSpans {
			d.noteRacedSpan(k1, s)
			d.noteRacedSpan(k2, s)
		}
	}
	pair := [2]int32{first.agent, second.agent}
	if f.pairs == nil {
		f.pairs = map[[2]int32]struct{}{}
	}
	f.pairs[pair] = struct{}{}
	d.notePairArrival(f, pair, first, second, sf, ss)
	if f.canon {
		f.Buffer, f.Range = buf, [2]int64{n.lo, n.hi}
		f.scope, f.src, f.dst, f.coreIdx = scope, fa.pipe, sa.pipe, fa.coreIdx
		f.secondCore, f.run = sa.coreIdx, d.run
	}
}

// single records a one-site finding.
func (d *Detector) single(kind string, sev Severity, r *rec, msg, hint string) *finding {
	return d.add(kind, sev, d.site(r), Site{}, msg, hint)
}

// pair records a two-site finding, a before b.
func (d *Detector) pair(kind string, sev Severity, a, b *rec, msg, hint string) *finding {
	return d.add(kind, sev, d.site(a), d.site(b), msg, hint)
}

func siteKey(s Site) string {
	if s.IsZero() {
		return ""
	}
	return fmt.Sprintf("%s:%d:%d:%s:%s", s.File, s.Line, s.Col, s.Op, s.Pipe)
}

// add counts a finding, deduplicated by kind and the pair of source sites as
// in compute-sanitizer's analysis mode. The finding names one instance of
// the pair: the worst in severity, and among those the first by instLess,
// so which instance the run met first does not show in the report.
// f.canon says whether this call's instance is the one named.
func (d *Detector) add(kind string, sev Severity, first, second Site, msg, hint string) *finding {
	k := findKey{kind: kind, first: siteKey(first), second: siteKey(second)}
	if f := d.byKey[k]; f != nil {
		f.Count++
		f.canon = sev > f.sev || sev == f.sev && instLess(first, second, msg, &f.Finding)
		if f.canon {
			// Instances of one pair may differ in severity (double-set):
			// the pair takes the worst, whichever instance came first.
			f.sev, f.Severity, f.Message, f.Hint = sev, sev.String(), msg, hint
			f.First, f.Second = first, second
		}
		return f
	}
	f := &finding{Finding: Finding{Kind: kind, Severity: sev.String(), Message: msg, First: first, Second: second, Count: 1, Hint: hint},
		sev: sev, coreIdx: -1, secondCore: -1, seq: len(d.findings), canon: true}
	d.findings = append(d.findings, f)
	d.byKey[k] = f
	return f
}

// offer is add for an instance of a pair already counted: the finding
// names it if instLess prefers it, and its count stays. Nil when the pair
// has no finding.
func (d *Detector) offer(kind string, sev Severity, first, second Site, msg string) *finding {
	f := d.byKey[findKey{kind: kind, first: siteKey(first), second: siteKey(second)}]
	if f == nil {
		return nil
	}
	f.canon = sev == f.sev && instLess(first, second, msg, &f.Finding)
	if f.canon {
		f.Message, f.First, f.Second = msg, first, second
	}
	return f
}

// instLess orders the instances of one pair of sites, the one a finding
// names first: the latest iteration of the first access, then of the
// second, then the least rank and core, and last the message (the buffer
// element and byte range an instance names). The latest iteration, not the
// first met or the least: a cell keeps each agent's latest access per site
// (putRead, putW), so an access that lands late meets the latest instance
// of the other side and may have missed earlier ones, while one that lands
// early meets them all; the latest is met in every order of the run.
func instLess(first, second Site, msg string, f *Finding) bool {
	if c := slices.Compare(first.Iter, f.First.Iter); c != 0 {
		return c > 0
	}
	if c := slices.Compare(second.Iter, f.Second.Iter); c != 0 {
		return c > 0
	}
	for _, p := range [2][2]Site{{first, f.First}, {second, f.Second}} {
		if p[0].Rank != p[1].Rank {
			return p[0].Rank < p[1].Rank
		}
		if c := coreCompare(p[0].Core, p[1].Core); c != 0 {
			return c < 0
		}
	}
	return msg < f.Message
}

// coreCompare orders core names so that r0.aiv2 comes before r0.aiv10: the
// names of one machine differ in their trailing number.
func coreCompare(a, b string) int {
	if len(a) != len(b) {
		return cmpInt(len(a), len(b))
	}
	return strings.Compare(a, b)
}

// setBuffer names the buffer and byte range of the instance the finding
// names (canon).
func (f *finding) setBuffer(buf string, lo, hi int64) {
	if f.canon {
		f.Buffer, f.Range = buf, [2]int64{lo, hi}
	}
}

func (d *Detector) site(r *rec) Site {
	s := Site{Op: "?", Rank: -1}
	if r.op != nil {
		p := r.op.Instr
		if p != nil {
			s.File, s.Line, s.Col = p.Pos.File, p.Pos.Line, p.Pos.Col
		}
		if r.op.Info != nil {
			s.Op = r.op.Info.Name
		} else if p != nil {
			s.Op = p.Op
		}
	}
	if r.step != 0 && int(r.step) < len(d.steps) {
		s.Op = d.steps[r.step]
	}
	if r.agent >= 0 && int(r.agent) < len(d.agents) {
		ag := &d.agents[r.agent]
		s.Pipe = pipeName(ag)
		s.Core = d.coreName(ag)
		s.Rank = int(ag.rank)
	}
	if r.niter > 0 {
		s.Iter = r.iters()
	}
	return s
}

func pipeName(ag *agentState) string {
	switch ag.kind {
	case akSDMA:
		return "SDMA"
	case akHost:
		return "host"
	}
	return ag.pipe.String()
}

func (d *Detector) coreName(ag *agentState) string {
	switch {
	case ag.kind == akHost:
		return "host"
	case ag.kind == akSDMA && ag.core >= 0:
		// The copies of one core's session: named by that core.
		return d.coreName(&agentState{rank: ag.rank, core: ag.core}) + ".sdma"
	case ag.kind == akSDMA:
		return fmt.Sprintf("r%d.sdma", ag.rank) // no issuing core known
	case d.opt.CoreName != nil:
		return d.opt.CoreName(int(ag.rank), int(ag.core))
	}
	return fmt.Sprintf("r%d.c%d", ag.rank, ag.core)
}

func bufferName(acc *machine.Access, lo int64) string {
	switch {
	case acc.Tile != nil:
		if el, ok := elemAt(acc); ok {
			return elemName(acc.Tile, el)
		}
		return tileName(acc.Tile, lo)
	case acc.Tensor != nil:
		return tensorName(acc.Tensor, acc.Rank)
	}
	return acc.Space.String()
}

// tileName names the element of a tile array that holds byte lo ("%chunk[1]").
func tileName(t *asm.TileInfo, lo int64) string {
	name := t.Name
	if !strings.HasPrefix(name, "%") {
		name = "%" + name
	}
	if !t.IsArray {
		return name
	}
	for i, a := range t.Addr {
		if lo >= a && lo < a+t.Bytes {
			return fmt.Sprintf("%s[%d]", name, i)
		}
	}
	return name
}

// elemName names element el of tile t ("%chunk[1]", or "%a" for a tile
// that is not an array).
func elemName(t *asm.TileInfo, el int) string {
	name := t.Name
	if !strings.HasPrefix(name, "%") {
		name = "%" + name
	}
	if !t.IsArray {
		return name
	}
	return fmt.Sprintf("%s[%d]", name, el)
}

func tensorName(t *asm.TensorInfo, rank int32) string {
	name := t.Name
	if !strings.HasPrefix(name, "@") {
		name = "@" + name
	}
	if t.Class == asm.TensorGM {
		return name
	}
	return fmt.Sprintf("%s[rank=%d]", name, rank)
}

func spaceLabel(acc *machine.Access) string {
	if acc.Space == asm.GM {
		return fmt.Sprintf("GM r%d", acc.Rank)
	}
	return acc.Space.String()
}

// Findings returns every finding not suppressed and not turned off, with its
// hint, ordered by first site, then kind, then second site.
func (d *Detector) Findings() []Finding {
	d.drain()
	d.runHeld()
	out := make([]Finding, 0, len(d.findings))
	// A write that races a read of the previous value is reported as that
	// WAR only: the WAW with the earlier writer has the same fix (the flag
	// that orders the write after the read orders it after what the read
	// saw). access() applies this when the read is already in the shadow;
	// a read that runs after the write in time arrives too late for that,
	// so the rule is applied again here, over every instance, and no WAW
	// comes or goes with completion order.
	// A finding names the buffer of its first instance: the element of a
	// tile array may differ between the WAR and the WAW, so they match by
	// the array.
	type warKey struct{ second, buffer string }
	key := func(f *finding) warKey {
		b, _, _ := strings.Cut(f.Buffer, "[")
		return warKey{siteKey(f.Second), b}
	}
	//
	// A WAR also stands for the WAW of the same two sites, whatever the
	// buffers: an op that reads one tile and writes another, both
	// overlapping a later write in part (trowsum %part, %sq, %tmp and a
	// tload over the two), races that write twice, and one flag fixes
	// both. Landing last, the write meets the op's read first (warred);
	// landing first, the op's write meets it as a WAW named on the op's
	// tile, which a name of the read's tile or the write's does not
	// match, and the WAW came and went with the latency
	// (TestWARStandsForWAWOfItsSites).
	// A WAR every count of which moved to a later write (moveRace) is not
	// reported, and stands for nothing.
	unsaid := d.takenBack()
	livePairs := d.livePairs()
	wars := map[warKey]bool{}
	warSites := map[[2]string]bool{}
	for _, f := range d.findings {
		if f.Kind == KindWAR && f.sev != SevOff && f.Count > unsaid[findKey{kind: f.Kind, first: siteKey(f.First), second: siteKey(f.Second)}] {
			wars[key(f)] = true
			warSites[[2]string{siteKey(f.First), siteKey(f.Second)}] = true
		}
	}
	for _, f := range d.findings {
		if f.sev == SevOff || (f.Kind == KindWAW && (wars[key(f)] || warSites[[2]string{siteKey(f.First), siteKey(f.Second)}])) {
			continue
		}
		g := f.Finding
		if n := unsaid[findKey{kind: g.Kind, first: siteKey(g.First), second: siteKey(g.Second)}]; n > 0 {
			// Instances whose race moved to a later write (moveRace).
			if g.Count -= n; g.Count <= 0 {
				continue
			}
		}
		if f.pairs != nil {
			// A race counts its pairs of agents (pipes of cores and
			// ranks, SDMA engines), not its arrivals, and only the
			// pairs with an instance whose race did not move to a later
			// write: a pair whose every instance moved is met in some
			// orders of the run and not in others (livePairs).
			if g.Count = livePairs[f]; g.Count == 0 {
				continue
			}
		}
		if g.Hint == "" {
			g.Hint = d.hint(f)
		}
		if Suppressed(d.opt.Suppress, &g) {
			continue
		}
		out = append(out, g)
	}
	if g, ok := d.keptLimitNote(); ok && !Suppressed(d.opt.Suppress, &g) {
		out = append(out, g)
	}
	if g, ok := d.eqKeptNote(); ok && !Suppressed(d.opt.Suppress, &g) {
		out = append(out, g)
	}
	SortFindings(out)
	return out
}

// keptLimitNote is the report's note that GM ranges dropped overwritten
// accesses an access that landed later was not ordered after (keptMissed),
// so that a race of the two may be missing: the detector did not keep what
// it needed and says so, at the first such access, naming the flag that
// raises the bound.
func (d *Detector) keptLimitNote() (Finding, bool) {
	if d.keptMisses == 0 {
		return Finding{}, false
	}
	return Finding{Kind: KindKeptLimit, Severity: SevNote.String(), First: d.keptMissSite, Buffer: d.keptMissAt, Count: d.keptMisses,
		Message: fmt.Sprintf("%s met %s past the %d overwritten accesses the detector keeps per GM range, not ordered after one it dropped: its race with that access, if any, was not checked (nor those of the other accesses the count includes)",
			d.keptMissSite.Op, d.keptMissAt, d.maxKept()),
		Hint: fmt.Sprintf("lint again with a larger bound: --max-kept N (now %d, at most %d)", d.maxKept(), MaxKeptLimit)}, true
}

// SortFindings orders findings deterministically: first site, kind, second
// site, message.
func SortFindings(fs []Finding) {
	sort.SliceStable(fs, func(i, j int) bool {
		a, b := &fs[i], &fs[j]
		if c := siteLess(a.First, b.First); c != 0 {
			return c < 0
		}
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		if c := siteLess(a.Second, b.Second); c != 0 {
			return c < 0
		}
		return a.Message < b.Message
	})
}

func lowestFree(mask uint32, n int) int {
	for i := 0; i < n; i++ {
		if mask&(1<<i) == 0 {
			return i
		}
	}
	return -1
}

func (d *Detector) hint(f *finding) string {
	a, b := f.First, f.Second
	switch f.scope {
	case scopeSamePipe:
		return fmt.Sprintf("insert `pipe_barrier %s` after %s (line %d) and before %s (line %d)", a.Pipe, a.Op, a.Line, b.Op, b.Line)
	case scopeCrossPipe:
		var used uint8
		if f.coreIdx >= 0 && int(f.coreIdx) < len(d.cores) && f.src < asm.NumPipes && f.dst < asm.NumPipes {
			used = d.cores[f.coreIdx].used[f.src][f.dst]
		}
		id := lowestFree(uint32(used), numFlagIDs)
		if id < 0 {
			return fmt.Sprintf("order them with `set_flag %s, %s, ID` after %s (line %d) and `wait_flag %s, %s, ID` before %s (line %d); all 8 ids of %s->%s are in use, so reuse one whose set/wait pair does not overlap this one",
				a.Pipe, b.Pipe, a.Op, a.Line, a.Pipe, b.Pipe, b.Op, b.Line, a.Pipe, b.Pipe)
		}
		return fmt.Sprintf("insert `set_flag %s, %s, %d` after %s (line %d) and `wait_flag %s, %s, %d` before %s (line %d); id %d is unused by %s->%s in this kernel",
			a.Pipe, b.Pipe, id, a.Op, a.Line, a.Pipe, b.Pipe, id, b.Op, b.Line, id, a.Pipe, b.Pipe)
	case scopeCrossCore:
		return d.crossCoreHint(f)
	case scopeCrossRank:
		return fmt.Sprintf("on rank %d after %s (line %d): `pipe_barrier ALL`, `dsb`, then `tnotify @SIG[rank=%d][i], 1 #op=add`; on rank %d before %s (line %d): `twait @SIG[i], 1 #cmp=ge` (use a signal word nobody resets while a notify may be in flight)",
			a.Rank, a.Op, a.Line, b.Rank, b.Rank, b.Op, b.Line)
	case scopeAsync:
		return asyncHint(a, b)
	}
	return ""
}

// crossCoreHint is the hint for a race between two cores of one rank. It
// names a synchronisation that links the two cores where the run placed
// them (machine.fireCross, syncAll): FFTS mode 2 links an AIC with its own
// block's AIVs (theirs reaches it once both have set), mode 1 the two AIVs
// of a mixed block (once both have set), mode 0 every core of one type of
// the launch (a barrier, refused in waves), syncall every core of the
// launch; nothing FFTS links cores of different launches, and in waves a
// grid barrier cannot gather every block, so a GM signal hands over there.
func (d *Detector) crossCoreHint(f *finding) string {
	a, b := f.First, f.Second
	var used uint16
	for _, c := range []int32{f.coreIdx, f.secondCore} {
		if c >= 0 && int(c) < len(d.cores) {
			used |= d.cores[c].crossUsed
		}
	}
	id := max(lowestFree(uint32(used), userCrossID), 0)
	pipe := a.Pipe
	if pipe == "S" {
		pipe = "MTE3"
	}
	const publish = "a GM hand-off also needs `pipe_barrier ALL` and `dsb` before the set"
	setWait := func(mode int, also, why string) string {
		return fmt.Sprintf("on %s after %s (line %d)%s: `ffts_set %s, %d #mode=%d`; on %s before %s (line %d): `ffts_wait %d` (%s; %s)",
			a.Core, a.Op, a.Line, also, pipe, id, mode, b.Core, b.Op, b.Line, id, why, publish)
	}
	signal := func(why string) string {
		return fmt.Sprintf("on %s after %s (line %d): `pipe_barrier ALL`, `dsb`, then `tnotify @SIG[i], 1 #op=add`; on %s before %s (line %d): `twait @SIG[i], 1 #cmp=ge` (%s; use a signal word nobody resets while a notify may be in flight)",
			a.Core, a.Op, a.Line, b.Core, b.Op, b.Line, why)
	}
	pa, okA := d.placement(f.run, f.coreIdx)
	pb, okB := d.placement(f.run, f.secondCore)
	sameBlock := okA && okB && pa.Stream == pb.Stream && pa.Mixed && pa.Block == pb.Block
	kind := "AIC"
	if pa.AIV {
		kind = "AIV"
	}
	switch {
	case !okA || !okB:
		return setWait(2, "", "mode 2 links an AIC with its AIVs, 1 the two AIVs of a block, 0 every core of one type")
	case pa.Stream != pb.Stream:
		return signal("the two cores run different launches of the run, which no FFTS mode or syncall links")
	case sameBlock && !pa.AIV:
		return setWait(2, "", "mode 2 from an AIC raises both AIVs of its block")
	case sameBlock && !pb.AIV:
		return setWait(2, " and on "+d.partnerName(f.coreIdx, pa.Sub)+" (its block's other AIV)",
			"mode 2 from the AIVs raises their block's AIC once both have set")
	case sameBlock:
		return setWait(1, " and on "+b.Core+" too, before its wait",
			"mode 1 raises both AIVs of the block once both have set")
	case pa.AIV == pb.AIV && !pa.Waves:
		return setWait(0, " and on every other "+kind+" of the launch, "+b.Core+" included, each before its wait",
			"mode 0 is a barrier: it raises every "+kind+" of the launch once all of them have set; mode 2 links an AIC only with its own block's AIVs, mode 1 the two AIVs of one mixed block")
	case !pa.Waves:
		return fmt.Sprintf("`syncall` on every core of the launch, on %s after %s (line %d) and on %s before %s (line %d) (syncall waits for every core of the launch on the rank; FFTS mode 2 links an AIC only with its own block's AIVs, mode 0 only cores of one type; a GM hand-off also needs `pipe_barrier ALL` and `dsb` before it)",
			a.Core, a.Op, a.Line, b.Core, b.Op, b.Line)
	}
	return signal("the launch runs in waves: a later block has no core until an earlier one ends, so mode 0 faults and syncall cannot gather every block, and mode 1 or 2 links only cores of one block; let a block wait only for an earlier one")
}

// placement is where core index c ran in run (Options.Placement).
func (d *Detector) placement(run, c int32) (machine.Placement, bool) {
	if d.opt.Placement == nil || c < 0 || int(c) >= len(d.cores) {
		return machine.Placement{}, false
	}
	cs := &d.cores[c]
	return d.opt.Placement(int(run), int(cs.rank), int(cs.core))
}

// partnerName names the other AIV of a mixed block, given one of them,
// core index c with subblock sub: the two AIVs' ids are adjacent, the
// physical ones (placeStream) and the virtual ones (virtualCore) alike.
func (d *Detector) partnerName(c int32, sub int) string {
	cs := &d.cores[c]
	return d.coreName(&agentState{rank: cs.rank, core: cs.core + 1 - 2*int32(sub)})
}

// asyncHint is the hint for a race with an SDMA copy. A copy is ordered
// after what its issuing core's scalar knew complete when it issued it, and
// before what comes after that core's wait_async: a wait on any other core
// orders nothing of it (sdmaAgent).
func asyncHint(a, b Site) string {
	issuer := func(s Site) (string, bool) {
		if s.Pipe != "SDMA" {
			return "", false
		}
		return strings.TrimSuffix(s.Core, ".sdma"), true
	}
	ia, aSDMA := issuer(a)
	ib, bSDMA := issuer(b)
	switch {
	case aSDMA && !bSDMA && ia == b.Core:
		return fmt.Sprintf("`wait_async` on the transfer's event between %s (line %d) and %s (line %d): an SDMA copy is ordered with nothing else until it is waited for", a.Op, a.Line, b.Op, b.Line)
	case aSDMA:
		return fmt.Sprintf("on %s, `wait_async` on the transfer's event after %s (line %d), then hand over to %s before %s (line %d) (an FFTS flag within a rank, a signal across ranks): a core's wait_async orders only its own copies",
			ia, a.Op, a.Line, cmp.Or(ib, b.Core), b.Op, b.Line)
	case a.Core == ib:
		return fmt.Sprintf("make %s (line %d) complete before the copy is issued: `pipe_barrier ALL` (or `set_flag %s, S, ID` and `wait_flag %s, S, ID`) before %s (line %d); an SDMA copy is ordered only after what its core's scalar knows is done",
			a.Op, a.Line, a.Pipe, a.Pipe, b.Op, b.Line)
	}
	return fmt.Sprintf("hand over from %s after %s (line %d) to %s before it issues %s (line %d) (an FFTS flag within a rank, a signal across ranks; a GM hand-off needs `pipe_barrier ALL` and `dsb` first): an SDMA copy is ordered only after what its core's scalar knows is done",
		a.Core, a.Op, a.Line, ib, b.Op, b.Line)
}

// retractUninit takes back one count of the uninit-read reported for read r.
func (d *Detector) retractUninit(u *uninitRead) {
	// A read that spans several cells sits in each of them: retract its
	// note once.
	if d.retractedGen != d.gen || d.retracted == nil {
		d.retracted, d.retractedGen = map[retractKey]struct{}{}, d.gen
	}
	rk := retractKey{u.r.agent, u.r.epoch, u.tile, u.tensor}
	if _, ok := d.retracted[rk]; ok {
		return
	}
	d.retracted[rk] = struct{}{}
	r := &u.r
	k := findKey{kind: KindUninitRead, first: siteKey(d.site(r))}
	f := d.byKey[k]
	if f == nil {
		return
	}
	f.Count--
	if f.Count <= 0 {
		f.sev = SevOff
		delete(d.byKey, k)
		return
	}
	f.dropLive(rk)
}

// maxLiveUninit bounds the instances an uninit-read keeps to rename it
// (finding.live): past it the finding may go on naming an instance taken
// back, as before.
const maxLiveUninit = 256

// uninitInst is one counted instance of an uninit-read: its note's key
// (retractKey), the site, message and buffer it would be named by.
type uninitInst struct {
	key  retractKey
	site Site
	msg  string
	buf  string
	rng  [2]int64
}

// keepLive records instance in of uninit-read f.
func (f *finding) keepLive(in uninitInst) {
	if len(f.live) == maxLiveUninit {
		f.liveLost = true
		return
	}
	f.live = append(f.live, in)
}

// dropLive forgets the instance of uninit-read f whose note is key, taken
// back (retractUninit), and names the first by instLess of those left if
// it was the one named. An instance is taken back when its read races the
// write meant to fill it, which it meets only where the read landed first:
// on another timing the read finds the bytes written and no note is made,
// so keeping the name of a taken-back instance made the instance the
// finding names follow the timing (hazards/pp_1f1b_prev_round under a
// per-unit skew).
func (f *finding) dropLive(key retractKey) {
	i := slices.IndexFunc(f.live, func(in uninitInst) bool { return in.key == key })
	if i < 0 {
		return
	}
	gone := f.live[i]
	f.live = slices.Delete(f.live, i, i+1)
	named := slices.Equal(gone.site.Iter, f.First.Iter) && gone.site.Rank == f.First.Rank && gone.site.Core == f.First.Core && gone.msg == f.Message
	if !named || len(f.live) == 0 || f.liveLost {
		return
	}
	best := &f.live[0]
	for k := 1; k < len(f.live); k++ {
		if in := &f.live[k]; instLess(in.site, Site{}, in.msg, &Finding{First: best.site, Message: best.msg}) {
			best = in
		}
	}
	f.First, f.Message, f.Buffer, f.Range = best.site, best.msg, best.buf, best.rng
}

// retractKey names one uninit-read note: an instance and the buffer it
// read through, in the current run generation.
type retractKey struct {
	agent  int32
	epoch  uint32
	tile   *asm.TileInfo
	tensor *asm.TensorInfo
}
