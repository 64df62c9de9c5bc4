package trace

import (
	"fmt"
	"math"
	"sort"

	"github.com/ptoasm/ptoasm/machine"
)

// Limits bound the size of a Perfetto trace (docs/trace.md "Size"): a run
// with more slices than MaxSlices is written aggregated, one slice per lane
// and time window, every lane still present; more counter samples than
// MaxCounterSamples are thinned to one per track and window; flow arrows
// beyond MaxFlows are left out. A value <= 0 means no limit.
type Limits struct {
	MaxSlices         int
	MaxCounterSamples int
	MaxFlows          int
}

// DefaultLimits keep a trace under 50 MB whatever the run: at most
// 100,000 slices (about 230 bytes each with their arguments, 340
// aggregated), 60,000 counter samples (about 150 bytes) and 50,000 flow
// arrows (two events of about 90 bytes): 34 + 9 + 9 MB at the very most,
// less in practice. The 8-rank allgather_gemm at 2048x2048x1024, 1.36
// million slices in full (613 MB), is written in about 33 MB.
var DefaultLimits = Limits{MaxSlices: 100_000, MaxCounterSamples: 60_000, MaxFlows: 50_000}

// ChromeOptions configure WriteChromeOpts.
type ChromeOptions struct {
	// ClockHz goes into otherData for converting cycles to real time.
	ClockHz float64
	Limits  Limits
}

// agg is one aggregated slice: what one lane did in one time window.
type agg struct {
	lo, hi      int64 // the part of the window its records covered
	ops, stalls int
	busy, stall int64
	top         map[string]int64 // slice name → cycles in the window
	first       int32            // the first record, for its op's place
}

// windowWidth is the aggregation window: lanes × span / budget cycles,
// so that no lane has more than span/width + 1 windows and all lanes
// together at most about budget.
func windowWidth(span int64, lanes, budget int) int64 {
	if budget <= 0 || lanes == 0 {
		return 1
	}
	w := int64(math.Ceil(float64(span) * float64(lanes) / float64(budget)))
	return max(w, 1)
}

// aggWidth is the narrowest window, down from windowWidth by halving, at
// which the aggregated slices stay within budget: lanes idle for most of
// the run leave room for finer windows on the others.
func (r *Recorder) aggWidth(order []int32, lanes, budget int) int64 {
	w := windowWidth(r.maxCycle+1, lanes, budget)
	for w > 1 && r.aggCount(order, w/2) <= budget {
		w /= 2
	}
	return w
}

// aggCount is how many (lane, window) slices width gives.
func (r *Recorder) aggCount(order []int32, width int64) int {
	last := map[lane]int64{}
	n := 0
	for _, i := range order {
		rec := r.recs.at(int(i))
		if !sliced(rec.kind) {
			continue
		}
		l := lane{rec.rank, rec.core, rec.pipe}
		a, b := rec.start/width, (max(rec.end, rec.start+1)-1)/width
		p, ok := last[l]
		if ok {
			a = max(a, p+1)
		}
		if b >= a {
			n += int(b - a + 1)
			last[l] = b
		}
	}
	return n
}

// slicedCount is how many slices a full trace would have.
func (r *Recorder) slicedCount() int {
	n := 0
	for i := range r.recs.n {
		if sliced(r.recs.at(i).kind) {
			n++
		}
	}
	return n
}

// writeAggregated writes the slices of every lane aggregated by window:
// one X slice per lane and window in which the lane ran or stalled, named
// after the op that took most of the window's cycles and how many ops
// shared it, with the window's busy and stall cycles as arguments.
// Windows are disjoint, so the slices of a lane never overlap.
func (r *Recorder) writeAggregated(j *jw, ps places, order []int32, width int64) int {
	type key struct {
		l lane
		w int64
	}
	aggs := map[key]*agg{}
	for _, i := range order {
		rec := r.recs.at(int(i))
		if !sliced(rec.kind) {
			continue
		}
		l := lane{rec.rank, rec.core, rec.pipe}
		end := max(rec.end, rec.start+1)
		name := r.sliceName(rec)
		stall := rec.kind == machine.EvStall
		for w := rec.start / width; w <= (end-1)/width; w++ {
			lo, hi := max(rec.start, w*width), min(end, (w+1)*width)
			k := key{l, w}
			a := aggs[k]
			if a == nil {
				a = &agg{lo: lo, hi: hi, top: map[string]int64{}, first: i}
				aggs[k] = a
			}
			a.lo, a.hi = min(a.lo, lo), max(a.hi, hi)
			if stall {
				a.stalls++
				a.stall += hi - lo
			} else {
				a.ops++
				a.busy += hi - lo
			}
			a.top[name] += hi - lo
		}
	}
	keys := make([]key, 0, len(aggs))
	for k := range aggs {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(x, y int) bool {
		a, b := keys[x], keys[y]
		if a.l != b.l {
			return laneLess(a.l, b.l)
		}
		return a.w < b.w
	})
	for _, k := range keys {
		a := aggs[k]
		names := make([]string, 0, len(a.top))
		for n := range a.top {
			names = append(names, n)
		}
		sort.Slice(names, func(x, y int) bool {
			if a.top[names[x]] != a.top[names[y]] {
				return a.top[names[x]] > a.top[names[y]]
			}
			return names[x] < names[y]
		})
		title := names[0]
		if n := a.ops + a.stalls; n > 1 {
			title = fmt.Sprintf("%s (+%d more)", names[0], n-1)
		}
		j.begin("X", ps.pid[placeKey{k.l.rank, k.l.core}], int(k.l.pipe))
		j.raw(`,"name":`)
		j.str(title)
		j.raw(`,"cat":"aggregate","ts":`)
		j.ts(a.lo)
		j.raw(`,"dur":`)
		j.int(a.hi - a.lo)
		j.raw(`,"args":{"window":[`)
		j.int(k.w * width)
		j.raw(",")
		j.int((k.w + 1) * width)
		j.raw(`],"ops":`)
		j.int(int64(a.ops))
		j.raw(`,"busy_cycles":`)
		j.int(a.busy)
		j.raw(`,"stalls":`)
		j.int(int64(a.stalls))
		j.raw(`,"stall_cycles":`)
		j.int(a.stall)
		j.raw(`,"top":{`)
		for x, n := range names[:min(len(names), 3)] {
			if x > 0 {
				j.raw(",")
			}
			j.str(n)
			j.raw(":")
			j.int(a.top[n])
		}
		j.raw("}}}")
	}
	return len(keys)
}

// thinCounters keeps, per track, the last sample of each window of width
// cycles (and the track's first and last sample), so a counter still shows
// its level over time; width <= 1 keeps every sample.
func thinCounters(tracks []CounterTrack, width int64) {
	if width <= 1 {
		return
	}
	for t := range tracks {
		s := tracks[t].Samples
		if len(s) < 3 {
			continue
		}
		out := s[:1]
		for i := 1; i < len(s); i++ {
			last := i == len(s)-1
			if !last && s[i+1].T/width == s[i].T/width {
				continue // a later sample of the same window replaces it
			}
			out = append(out, s[i])
		}
		tracks[t].Samples = out
	}
}

// thinnedCount is how many samples thinCounters(tracks, width) keeps.
func thinnedCount(tracks []CounterTrack, width int64) int {
	n := 0
	for _, tr := range tracks {
		s := tr.Samples
		if len(s) < 3 {
			n += len(s)
			continue
		}
		n++
		for i := 1; i < len(s); i++ {
			if i == len(s)-1 || s[i+1].T/width != s[i].T/width {
				n++
			}
		}
	}
	return n
}
