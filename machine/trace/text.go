package trace

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/ptoasm/ptoasm/machine"
)

// match applies an output filter to a record.
func (r *Recorder) match(f *Filter, rec *record) bool {
	if !f.window(rec.start, rec.end) {
		return false
	}
	switch rec.kind {
	case machine.EvRunStart, machine.EvRunEnd, machine.EvDeadlock:
		return true
	case machine.EvIssue:
		if !f.Issues {
			return false
		}
	case machine.EvHostWrite:
		return len(f.Pipes) == 0 && len(f.Cores) == 0 && r.rankIn(f, int(rec.rank))
	}
	if rec.core < 0 && len(f.Pipes) > 0 {
		return false
	}
	if rec.core >= 0 && !f.pipe(rec.pipe) {
		return false
	}
	return f.place(int(rec.rank), r.coreName(rec.rank, rec.core))
}

func (r *Recorder) rankIn(f *Filter, rank int) bool {
	if len(f.Ranks) == 0 {
		return true
	}
	for _, x := range f.Ranks {
		if x == rank {
			return true
		}
	}
	return false
}

// WriteText writes one line per recorded event that f selects, in time order:
//
//	cycle  end  place  pipe  event  instruction  file:line  details
//
// Details name the flag, the stall reason, the composite step, the loop
// iteration, and for an acquire the release that satisfied it.
func (r *Recorder) WriteText(w io.Writer, f Filter) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	order := r.order()
	fi := r.flowIndex()
	fmt.Fprintf(bw, "%10s %10s  %-10s %-5s %-10s %-44s %s\n", "cycle", "end", "place", "pipe", "event", "instruction", "source")
	var line []byte
	for _, i := range order {
		rec := r.recs.at(int(i))
		if !r.match(&f, rec) {
			continue
		}
		place, pipe := "-", "-"
		switch {
		case rec.kind == machine.EvRunStart || rec.kind == machine.EvRunEnd || rec.kind == machine.EvDeadlock:
		case rec.kind == machine.EvHostWrite:
			place = fmt.Sprintf("r%d.host", rec.rank)
		default:
			place = r.coreName(rec.rank, rec.core)
			pipe = laneName(rec.core, rec.pipe)
		}
		instr := ""
		if rec.op >= 0 {
			instr = r.ops[rec.op].text
		}
		line = line[:0]
		line = appendPad(line, strconv.FormatInt(rec.start, 10), 10, true)
		line = append(line, ' ')
		line = appendPad(line, strconv.FormatInt(rec.end, 10), 10, true)
		line = append(line, ' ', ' ')
		line = appendPad(line, place, 10, false)
		line = append(line, ' ')
		line = appendPad(line, pipe, 5, false)
		line = append(line, ' ')
		line = appendPad(line, kindName(rec.kind), 10, false)
		line = append(line, ' ')
		line = appendPad(line, instr, 44, false)
		line = append(line, ' ')
		line = append(line, r.src(rec)...)
		if d := r.details(i, &fi); d != "" {
			line = append(line, "  "...)
			line = append(line, d...)
		}
		line = append(trimRight(line), '\n')
		if _, err := bw.Write(line); err != nil {
			return err
		}
	}
	return bw.Flush()
}

func appendPad(b []byte, s string, n int, right bool) []byte {
	pad := n - len(s)
	if right {
		for ; pad > 0; pad-- {
			b = append(b, ' ')
		}
		return append(b, s...)
	}
	b = append(b, s...)
	for ; pad > 0; pad-- {
		b = append(b, ' ')
	}
	return b
}

func trimRight(b []byte) []byte {
	for len(b) > 0 && b[len(b)-1] == ' ' {
		b = b[:len(b)-1]
	}
	return b
}

func (r *Recorder) details(i int32, fi *flowIndex) string {
	rec := r.recs.at(int(i))
	var parts []string
	switch rec.kind {
	case machine.EvFlagSet, machine.EvFlagWait:
		parts = append(parts, "flag "+flagString(rec.flag))
	case machine.EvCrossSet, machine.EvCrossWait:
		parts = append(parts, fmt.Sprintf("ffts #%d", rec.id))
	case machine.EvNotify, machine.EvSignalWait:
		parts = append(parts, strings.TrimSpace(fmt.Sprintf("%s value %d", r.str(rec.str), rec.id)))
	case machine.EvStall:
		parts = append(parts, "waiting: "+r.stallReason(rec))
	case machine.EvRunStart, machine.EvRunEnd:
		parts = append(parts, "run "+r.str(rec.str))
	default:
		if s := r.str(rec.str); s != "" {
			parts = append(parts, s)
		}
	}
	if rec.bytes > 0 && rec.kind == machine.EvExec {
		parts = append(parts, fmt.Sprintf("%dB", rec.bytes))
	}
	if rec.iterLen > 0 {
		parts = append(parts, fmt.Sprintf("iter=%v", r.iter(rec)))
	}
	for _, k := range fi.ins(i) {
		from := r.recs.at(int(r.flows[k].from))
		parts = append(parts, fmt.Sprintf("<- %s %s %s @%d", r.coreName(from.rank, from.core),
			laneName(from.core, from.pipe), kindName(from.kind), from.start))
	}
	return strings.Join(parts, "  ")
}
