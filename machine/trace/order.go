package trace

import (
	"fmt"
	"sort"
	"strings"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
)

// laneRank orders a core's lanes the way data flows through it: scalar
// first, then loads, cube, fixpipe, vector, stores.
var laneRank = [asm.NumPipes]int{
	asm.PipeInvalid: 0, asm.PipeS: 1, asm.PipeMTE2: 2, asm.PipeMTE1: 3, asm.PipeM: 4,
	asm.PipeFIX: 5, asm.PipeV: 6, asm.PipeMTE3: 7, asm.PipeALL: 8,
}

func pipeOrder(p asm.Pipe) int {
	if int(p) < len(laneRank) {
		return laneRank[p]
	}
	return int(p)
}

// laneName names a pipe lane; rank-level lanes (core -1) are the SDMA engines.
func laneName(core int32, p asm.Pipe) string {
	if core < 0 {
		return "SDMA"
	}
	return p.String()
}

// order returns record indices sorted by time, then place, then longest
// first so that an enclosing slice precedes what it encloses.
func (r *Recorder) order() []int32 {
	ix := make([]int32, r.recs.n)
	for i := range ix {
		ix[i] = int32(i)
	}
	sort.SliceStable(ix, func(i, j int) bool {
		a, b := r.recs.at(int(ix[i])), r.recs.at(int(ix[j]))
		if a.start != b.start {
			return a.start < b.start
		}
		if a.rank != b.rank {
			return a.rank < b.rank
		}
		if a.core != b.core {
			return a.core < b.core
		}
		if a.pipe != b.pipe {
			return pipeOrder(a.pipe) < pipeOrder(b.pipe)
		}
		if a.end != b.end {
			return a.end > b.end
		}
		return ix[i] < ix[j]
	})
	return ix
}

// sliced reports whether a record is drawn as a slice on a pipe lane.
func sliced(k machine.EventKind) bool {
	switch k {
	case machine.EvExec, machine.EvFlagSet, machine.EvFlagWait, machine.EvBarrier, machine.EvCrossSet,
		machine.EvCrossWait, machine.EvNotify, machine.EvSignalWait, machine.EvSyncAll, machine.EvStall,
		machine.EvKernelEnd:
		return true
	}
	return false
}

// kindNames are the short event names of the text trace.
var kindNames = map[machine.EventKind]string{
	machine.EvIssue: "issue", machine.EvExec: "exec", machine.EvFlagSet: "set", machine.EvFlagWait: "wait",
	machine.EvBarrier: "barrier", machine.EvCrossSet: "ffts-set", machine.EvCrossWait: "ffts-wait",
	machine.EvNotify: "notify", machine.EvSignalWait: "sig-wait", machine.EvSyncAll: "syncall",
	machine.EvHostWrite: "host-write", machine.EvRunStart: "run-start", machine.EvRunEnd: "run-end",
	machine.EvKernelEnd: "kernel-end", machine.EvStall: "stall", machine.EvDeadlock: "deadlock",
}

func kindName(k machine.EventKind) string {
	if n, ok := kindNames[k]; ok {
		return n
	}
	return fmt.Sprintf("event%d", k)
}

func flagString(f machine.Flag) string {
	return fmt.Sprintf("%s->%s #%d", f.Src, f.Dst, f.ID)
}

// sliceName is what a record is called on a lane.
func (r *Recorder) sliceName(rec *record) string {
	op := ""
	if rec.op >= 0 {
		op = r.ops[rec.op].name
	}
	switch rec.kind {
	case machine.EvExec:
		if s := r.str(rec.str); s != "" {
			return s
		}
		return op
	case machine.EvFlagSet:
		return "set_flag " + flagString(rec.flag)
	case machine.EvFlagWait:
		return "wait_flag " + flagString(rec.flag)
	case machine.EvBarrier:
		if rec.pipe == asm.PipeS {
			return "pipe_barrier ALL"
		}
		return "pipe_barrier " + rec.pipe.String()
	case machine.EvCrossSet:
		return fmt.Sprintf("ffts_set #%d", rec.id)
	case machine.EvCrossWait:
		return fmt.Sprintf("ffts_wait #%d", rec.id)
	case machine.EvStall:
		return "stall: " + r.stallReason(rec)
	case machine.EvKernelEnd:
		return "kernel end"
	case machine.EvRunStart:
		return "run " + r.str(rec.str)
	case machine.EvRunEnd:
		return "end of run " + r.str(rec.str)
	}
	if op != "" {
		return op
	}
	return kindName(rec.kind)
}

// stallReason names what a stalled agent waited for: the engine's reason,
// sharpened with the blocked instruction's operands.
func (r *Recorder) stallReason(rec *record) string {
	reason := r.str(rec.str)
	if rec.op < 0 {
		return reason
	}
	oi := &r.ops[rec.op]
	switch {
	case reason == "":
		return oi.text
	case strings.HasPrefix(oi.text, reason), oi.op.Info != nil && oi.op.Info.Op == asm.OpPipeBarrier && strings.Contains(reason, "pipe_barrier"):
		return oi.text
	}
	return reason + " (" + oi.text + ")"
}

func (r *Recorder) iter(rec *record) []int64 {
	return r.iters[rec.iterOff : rec.iterOff+int32(rec.iterLen)]
}

func (r *Recorder) src(rec *record) string {
	if rec.op < 0 || r.ops[rec.op].file == "" {
		return ""
	}
	oi := &r.ops[rec.op]
	return fmt.Sprintf("%s:%d", oi.file, oi.line)
}

// flowIndex lists, per record, the flows leaving it and the flows entering it.
type flowIndex struct {
	outStart, inStart []int32 // CSR offsets, len(recs)+1
	out, in           []int32 // flow indices
}

func (r *Recorder) flowIndex() flowIndex {
	n := r.recs.n
	fi := flowIndex{outStart: make([]int32, n+1), inStart: make([]int32, n+1),
		out: make([]int32, len(r.flows)), in: make([]int32, len(r.flows))}
	for _, f := range r.flows {
		fi.outStart[f.from+1]++
		fi.inStart[f.to+1]++
	}
	for i := 0; i < n; i++ {
		fi.outStart[i+1] += fi.outStart[i]
		fi.inStart[i+1] += fi.inStart[i]
	}
	po := append([]int32(nil), fi.outStart[:n]...)
	pi := append([]int32(nil), fi.inStart[:n]...)
	for k, f := range r.flows {
		fi.out[po[f.from]] = int32(k)
		po[f.from]++
		fi.in[pi[f.to]] = int32(k)
		pi[f.to]++
	}
	return fi
}

func (fi *flowIndex) outs(rec int32) []int32 { return fi.out[fi.outStart[rec]:fi.outStart[rec+1]] }
func (fi *flowIndex) ins(rec int32) []int32  { return fi.in[fi.inStart[rec]:fi.inStart[rec+1]] }

// lane identifies one pipe lane of one place.
type lane struct {
	rank, core int32
	pipe       asm.Pipe
}

func laneLess(a, b lane) bool {
	if a.rank != b.rank {
		return a.rank < b.rank
	}
	if a.core != b.core {
		return a.core < b.core
	}
	return pipeOrder(a.pipe) < pipeOrder(b.pipe)
}

// lanes lists every lane that has a slice, in display order.
func (r *Recorder) lanes() []lane {
	seen := map[lane]bool{}
	var out []lane
	for i := range r.recs.n {
		rec := r.recs.at(i)
		if !sliced(rec.kind) {
			continue
		}
		l := lane{rec.rank, rec.core, rec.pipe}
		if !seen[l] {
			seen[l] = true
			out = append(out, l)
		}
	}
	sort.Slice(out, func(i, j int) bool { return laneLess(out[i], out[j]) })
	return out
}

// nestedEnds returns each record's end clipped so that slices on one lane
// nest properly (Perfetto drops slices that overlap partially). order must
// come from Recorder.order.
func (r *Recorder) nestedEnds(order []int32) []int64 {
	ends := make([]int64, r.recs.n)
	stacks := map[lane][]int64{}
	for _, i := range order {
		rec := r.recs.at(int(i))
		ends[i] = rec.end
		if !sliced(rec.kind) {
			continue
		}
		l := lane{rec.rank, rec.core, rec.pipe}
		st := stacks[l]
		for len(st) > 0 && st[len(st)-1] <= rec.start {
			st = st[:len(st)-1]
		}
		if len(st) > 0 && ends[i] > st[len(st)-1] {
			ends[i] = st[len(st)-1]
		}
		stacks[l] = append(st, ends[i])
	}
	return ends
}
