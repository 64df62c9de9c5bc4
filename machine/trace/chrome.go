package trace

import (
	"bufio"
	"io"
	"math"
	"sort"
	"strconv"
	"unicode/utf8"

	"github.com/ptoasm/ptoasm/machine"
)

// jw writes JSON by hand: traces reach millions of events, and going through
// encoding/json per event would allocate for each.
type jw struct {
	w   *bufio.Writer
	buf []byte
	n   int // events written, for commas
}

func (j *jw) str(s string) {
	b := append(j.buf[:0], '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\t':
				b = append(b, '\\', 't')
			case c < 0x20 || c == '<' || c == '>' || c == '&':
				// < > & escaped too, so a trace is safe to inline in HTML.
				b = append(b, '\\', 'u', '0', '0', "0123456789abcdef"[c>>4], "0123456789abcdef"[c&15])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, `\ufffd`...)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	b = append(b, '"')
	j.buf = b
	j.w.Write(b)
}

func (j *jw) raw(s string) { j.w.WriteString(s) }

func (j *jw) int(v int64) {
	j.buf = strconv.AppendInt(j.buf[:0], v, 10)
	j.w.Write(j.buf)
}

// ts writes a cycle as a trace timestamp: one cycle is one trace
// microsecond, an integer. Any importer turns an integer into its own unit
// exactly (Perfetto: ×1000 into int64 ns), so a slice's start plus its
// duration is exactly its end and slices that nest in cycles nest in the
// importer too; a fractional microsecond (the real time of a 0.54 ns cycle)
// is rounded to whole ns separately for start and duration, and Perfetto
// drops the slices that then overlap partly.
func (j *jw) ts(cycle int64) { j.int(cycle) }

// begin opens one event object with its phase, pid and tid.
func (j *jw) begin(ph string, pid, tid int) {
	if j.n > 0 {
		j.raw(",\n")
	}
	j.n++
	j.raw(`{"ph":"`)
	j.raw(ph)
	j.raw(`","pid":`)
	j.int(int64(pid))
	j.raw(`,"tid":`)
	j.int(int64(tid))
}

func (j *jw) key(k string) {
	j.raw(`,"`)
	j.raw(k)
	j.raw(`":`)
}

// places assigns Chrome process ids: one per (rank, core), SDMA (core -1)
// first within a rank, in rank-then-core order.
type places struct {
	keys []placeKey
	pid  map[placeKey]int
}

func (r *Recorder) places() places {
	seen := map[placeKey]bool{}
	var ps places
	for i := range r.recs.n {
		rec := r.recs.at(i)
		if !sliced(rec.kind) {
			continue
		}
		k := placeKey{rec.rank, rec.core}
		if !seen[k] {
			seen[k] = true
			ps.keys = append(ps.keys, k)
		}
	}
	sort.Slice(ps.keys, func(i, j int) bool {
		a, b := ps.keys[i], ps.keys[j]
		if a.rank != b.rank {
			return a.rank < b.rank
		}
		return a.core < b.core
	})
	ps.pid = make(map[placeKey]int, len(ps.keys))
	for i, k := range ps.keys {
		ps.pid[k] = i + 1
	}
	return ps
}

// WriteChrome writes the trace in Chrome trace-event JSON (the object form),
// which ui.perfetto.dev and chrome://tracing open. Timestamps are cycles,
// written as integer microseconds (one cycle = 1 µs in the viewer); clockHz
// (pass Profile.ClockHz) goes into otherData for converting to real time.
// Each rank×core is a process ("r0.aic3"), each pipe a
// thread; every instruction is an X slice; set_flag→wait_flag,
// ffts_set→ffts_wait and tnotify→twait are flow arrows (s/f pairs bound to
// the enclosing slices); stalls are slices named after what they waited for;
// C events count each core's queued entries per pipe and live bytes per
// local buffer (see Counters).
// The output depends only on what was recorded. It is bounded by
// DefaultLimits (see WriteChromeOpts).
func (r *Recorder) WriteChrome(w io.Writer, clockHz float64) error {
	return r.WriteChromeOpts(w, ChromeOptions{ClockHz: clockHz, Limits: DefaultLimits})
}

// WriteChromeOpts is WriteChrome with explicit size limits: over
// Limits.MaxSlices slices the trace is aggregated (writeAggregated), and
// otherData says so.
func (r *Recorder) WriteChromeOpts(w io.Writer, opt ChromeOptions) error {
	clockHz, lim := opt.ClockHz, opt.Limits
	bw := bufio.NewWriterSize(w, 1<<16)
	j := &jw{w: bw}
	order := r.order()
	ps := r.places()
	lanes := r.lanes()
	nSlices := r.slicedCount()
	var width int64 // aggregation window; 0: every slice written
	if lim.MaxSlices > 0 && nSlices > lim.MaxSlices {
		width = r.aggWidth(order, len(lanes), lim.MaxSlices)
	}
	var ends []int64
	var fi flowIndex
	if width == 0 {
		ends = r.nestedEnds(order)
		fi = r.flowIndex()
	}

	// No displayTimeUnit: some Perfetto versions read it as the unit of ts,
	// which would make the same file mean different times in different
	// viewers.
	j.raw(`{"otherData":{"generator":"ptoasm trace","time_unit":"1 us in the trace = 1 cycle","clock_hz":`)
	valid := clockHz > 0 && !math.IsInf(clockHz, 0)
	if valid {
		j.buf = strconv.AppendFloat(j.buf[:0], clockHz, 'g', -1, 64)
		j.w.Write(j.buf)
		j.raw(`,"ns_per_cycle":`)
		j.buf = strconv.AppendFloat(j.buf[:0], 1e9/clockHz, 'g', -1, 64)
		j.w.Write(j.buf)
	} else {
		j.raw("null")
	}
	if width > 0 {
		j.raw(`,"aggregated":{"slices":`)
		j.int(int64(nSlices))
		j.raw(`,"max_slices":`)
		j.int(int64(lim.MaxSlices))
		j.raw(`,"window_cycles":`)
		j.int(width)
		j.raw(`,"note":"more slices than the limit: one slice per lane and window (cat aggregate), no flow arrows; narrow the run with ptoasm trace --from/--to/--rank/--core for every instruction"}`)
	}
	j.raw("},\n\"traceEvents\":[\n")

	// Names first: one process per place, one thread per pipe lane.
	prev := placeKey{-1, -2}
	for _, l := range lanes {
		k := placeKey{l.rank, l.core}
		pid := ps.pid[k]
		if k != prev {
			prev = k
			j.begin("M", pid, 0)
			j.raw(`,"name":"process_name","args":{"name":`)
			j.str(r.coreName(l.rank, l.core))
			j.raw("}}")
			j.begin("M", pid, 0)
			j.raw(`,"name":"process_sort_index","args":{"sort_index":`)
			j.int(int64(pid))
			j.raw("}}")
		}
		j.begin("M", pid, int(l.pipe))
		j.raw(`,"name":"thread_name","args":{"name":`)
		j.str(laneName(l.core, l.pipe))
		j.raw("}}")
		j.begin("M", pid, int(l.pipe))
		j.raw(`,"name":"thread_sort_index","args":{"sort_index":`)
		j.int(int64(pipeOrder(l.pipe)))
		j.raw("}}")
	}

	for _, i := range order {
		rec := r.recs.at(int(i))
		switch rec.kind {
		case machine.EvRunStart, machine.EvRunEnd, machine.EvDeadlock:
			j.begin("i", 0, 0)
			j.raw(`,"s":"g","name":`)
			if rec.kind == machine.EvDeadlock {
				j.str(r.str(rec.str))
			} else {
				j.str(r.sliceName(rec))
			}
			j.raw(`,"cat":"run","ts":`)
			j.ts(rec.start)
			j.raw("}")
			continue
		}
		if !sliced(rec.kind) || width > 0 {
			continue
		}
		pid, tid := ps.pid[placeKey{rec.rank, rec.core}], int(rec.pipe)
		j.begin("X", pid, tid)
		j.raw(`,"name":`)
		j.str(r.sliceName(rec))
		j.raw(`,"cat":`)
		j.str(r.category(rec))
		j.raw(`,"ts":`)
		j.ts(rec.start)
		j.raw(`,"dur":`)
		j.int(ends[i] - rec.start)
		r.writeArgs(j, rec, ends[i])
		j.raw("}")
		// Flow ends right after their slice, at its start, so that the
		// importer binds them to it (it is the topmost slice on the lane).
		for _, k := range fi.outs(i) {
			if lim.MaxFlows > 0 && int(k) >= lim.MaxFlows {
				continue // both ends of flow k are left out
			}
			f := &r.flows[k]
			j.begin("s", pid, tid)
			j.raw(`,"id":`)
			j.int(int64(k) + 1)
			j.raw(`,"name":"`)
			j.raw(flowNames[f.kind])
			j.raw(`","cat":"sync","ts":`)
			j.ts(rec.start)
			j.raw("}")
		}
		for _, k := range fi.ins(i) {
			if lim.MaxFlows > 0 && int(k) >= lim.MaxFlows {
				continue
			}
			f := &r.flows[k]
			j.begin("f", pid, tid)
			j.raw(`,"bp":"e","id":`)
			j.int(int64(k) + 1)
			j.raw(`,"name":"`)
			j.raw(flowNames[f.kind])
			j.raw(`","cat":"sync","ts":`)
			j.ts(rec.start)
			j.raw("}")
		}
	}
	if width > 0 {
		r.writeAggregated(j, ps, order, width)
	}
	r.writeCounters(j, ps, lim.MaxCounterSamples)
	j.raw("\n]}\n")
	return bw.Flush()
}

// writeCounters writes each core's queue depth and live bytes as C events on
// the core's process: Perfetto draws one track per series ("queue depth
// MTE2", "live bytes L1").
//
// Over max samples (max > 0) each track keeps one sample per window
// (thinCounters).
func (r *Recorder) writeCounters(j *jw, ps places, max int) {
	tracks := r.Counters(r.opt.Filter)
	n := 0
	for _, tr := range tracks {
		n += len(tr.Samples)
	}
	if max > 0 && n > max {
		w := windowWidth(r.maxCycle+1, len(tracks), max)
		for w > 1 && thinnedCount(tracks, w/2) <= max {
			w /= 2
		}
		thinCounters(tracks, w)
	}
	for _, tr := range tracks {
		pid, ok := ps.pid[placeKey{tr.Rank, tr.Core}]
		if !ok {
			continue // nothing of the core is drawn
		}
		for _, c := range tr.Samples {
			j.begin("C", pid, 0)
			j.raw(`,"name":`)
			j.str(tr.Name)
			j.raw(`,"cat":"counter","ts":`)
			j.ts(c.T)
			j.raw(`,"args":{`)
			for k, v := range c.Values {
				if k > 0 {
					j.raw(",")
				}
				j.str(tr.Series[k])
				j.raw(":")
				j.int(v)
			}
			j.raw("}}")
		}
	}
}

func (r *Recorder) category(rec *record) string {
	switch rec.kind {
	case machine.EvStall:
		return "stall"
	case machine.EvExec:
		if rec.op >= 0 && r.ops[rec.op].family != "" {
			return r.ops[rec.op].family
		}
		return "exec"
	case machine.EvKernelEnd:
		return "kernel"
	}
	return "sync"
}

func (r *Recorder) writeArgs(j *jw, rec *record, end int64) {
	j.raw(`,"args":{"cycles":`)
	j.int(rec.start)
	if end != rec.start {
		j.raw(`,"end_cycle":`)
		j.int(end)
	}
	if rec.op >= 0 {
		oi := &r.ops[rec.op]
		if src := r.src(rec); src != "" {
			j.key("src")
			j.str(src)
		}
		j.key("op")
		j.str(oi.text)
		if rec.kind == machine.EvExec && oi.flops > 0 && r.str(rec.str) == "" {
			j.key("flops")
			j.int(oi.flops)
		}
	}
	if rec.bytes > 0 {
		j.key("bytes")
		j.int(rec.bytes)
	}
	if s := r.str(rec.str); s != "" {
		switch rec.kind {
		case machine.EvExec:
			j.key("step")
		case machine.EvStall:
			j.key("reason")
		case machine.EvNotify, machine.EvSignalWait:
			j.key("word")
		default:
			j.key("note")
		}
		j.str(s)
	}
	switch rec.kind {
	case machine.EvFlagSet, machine.EvFlagWait:
		j.key("flag")
		j.str(flagString(rec.flag))
	case machine.EvNotify, machine.EvSignalWait:
		j.key("value")
		j.int(int64(rec.id))
	}
	if rec.iterLen > 0 {
		j.key("iter")
		j.raw("[")
		for k, v := range r.iter(rec) {
			if k > 0 {
				j.raw(",")
			}
			j.int(v)
		}
		j.raw("]")
	}
	j.raw("}")
}
