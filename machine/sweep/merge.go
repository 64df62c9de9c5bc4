package sweep

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/ptoasm/ptoasm/machine"
)

// Merge joins shard reports into the unsharded one: same sweep header,
// every point of the grid exactly once, each where the grid puts it. read
// returns a file's bytes (the caller bounds its size).
func Merge(files []string, read func(string) ([]byte, error)) (*Report, error) {
	if len(files) == 0 {
		return nil, errors.New("sweep merge: no shard files")
	}
	var out *Report
	var first string
	var from []string // from[k] is the file that brought point k
	for _, f := range files {
		b, err := read(f)
		if err != nil {
			return nil, err
		}
		var r Report
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&r); err != nil {
			return nil, fmt.Errorf("%s: not a sweep report: %v", f, err)
		}
		// One report per file: a second one appended (a shard run twice
		// into >>) or garbage after the first was ignored, its points
		// silently dropped.
		if _, err := dec.Token(); err != io.EOF {
			return nil, fmt.Errorf("%s: not a sweep report: more after the report's closing brace (at byte %d)", f, dec.InputOffset())
		}
		if r.Partial != "" {
			return nil, fmt.Errorf("%s: a partial shard (%s): run it again to the end", f, r.Partial)
		}
		if len(r.Grid) != len(r.Values) {
			return nil, fmt.Errorf("%s: %d grid names but %d value lists", f, len(r.Grid), len(r.Values))
		}
		if n, err := GridSize(r.Values); err != nil || n != r.Total {
			return nil, fmt.Errorf("%s: total %d does not match the grid", f, r.Total)
		}
		shardI, shardN := 0, 1
		if r.Shard != "" {
			if shardI, shardN, err = ParseShard(r.Shard); err != nil {
				return nil, fmt.Errorf("%s: %v", f, err)
			}
		}
		if out == nil {
			out = &Report{File: r.File, Profile: r.Profile, TimingOnly: r.TimingOnly,
				Grid: r.Grid, Values: r.Values, Total: r.Total, Points: make([]Point, r.Total)}
			first = f
			from = make([]string, r.Total)
		} else if d := headerDiff(out, &r); d != "" {
			return nil, fmt.Errorf("%s: not the same sweep as %s: %s", f, first, d)
		}
		for _, p := range r.Points {
			switch {
			case p.Index < 0 || p.Index >= r.Total:
				return nil, fmt.Errorf("%s: point #%d is outside the grid of %d points", f, p.Index, r.Total)
			case p.Index%shardN != shardI:
				return nil, fmt.Errorf("%s: point #%d does not belong to shard %s", f, p.Index, r.Shard)
			case from[p.Index] == f:
				return nil, fmt.Errorf("%s: point #%d appears twice (the file given twice?)", f, p.Index)
			case from[p.Index] != "":
				return nil, fmt.Errorf("%s: point #%d is also in %s", f, p.Index, from[p.Index])
			}
			if want := PointParams(r.Grid, r.Values, p.Index); !slices.Equal(p.Params, want) {
				return nil, fmt.Errorf("%s: point #%d has parameters %s, the grid says %s", f, p.Index, p.Params.Text(), want.Text())
			}
			if err := checkPoint(&p); err != nil {
				return nil, fmt.Errorf("%s: point #%d: %v", f, p.Index, err)
			}
			if p.Runs == nil {
				p.Runs = []machine.RunStat{}
			}
			out.Points[p.Index] = p
			from[p.Index] = f
		}
	}
	var missing []string
	for k, f := range from {
		if f == "" {
			missing = append(missing, "#"+strconv.Itoa(k))
		}
	}
	if n := len(missing); n > 0 {
		more := ""
		if n > 8 {
			more = fmt.Sprintf(" and %d more", n-8)
			missing = missing[:8]
		}
		return nil, fmt.Errorf("sweep merge: %d of %d points missing (a shard left out?): %s%s",
			n, out.Total, strings.Join(missing, ", "), more)
	}
	if err := checkClocks(out, from); err != nil {
		return nil, err
	}
	return out, nil
}

// The range profile.go's clock_hz takes (pipes.Profile.Set).
const minClockHz, maxClockHz = 1e6, 1e12

// checkClocks holds every point's time_us (and each run's) to its cycles at
// one clock: the profile's, which the report does not carry, so it is the
// clock the first point that ran implies, or a point's clock_hz where the
// grid sets it. A damaged shard's time_us (a hand-edited 1e308) was merged
// and printed as is, and a time_us is what the table ranks points by.
func checkClocks(r *Report, from []string) error {
	axis := slices.Index(r.Grid, "clock_hz")
	type ref struct {
		hz float64
		k  int // the point that set it; -1 for a clock_hz value
	}
	refs := map[string]ref{}
	for k := range r.Points {
		p := &r.Points[k]
		if p.Cycles == 0 && p.TimeUS == 0 {
			continue // did not run (or ran no cycle): nothing to hold
		}
		if p.Cycles == 0 || p.TimeUS == 0 {
			return fmt.Errorf("%s: point #%d: %d cycles in %g us", from[k], k, p.Cycles, p.TimeUS)
		}
		hz := float64(p.Cycles) / p.TimeUS * 1e6
		key := ""
		if axis >= 0 && axis < len(p.Params) {
			key = p.Params[axis].Value
			if _, ok := refs[key]; !ok {
				if v, err := strconv.ParseFloat(key, 64); err == nil {
					refs[key] = ref{v, -1}
				}
			}
		}
		if hz < minClockHz || hz > maxClockHz || math.IsNaN(hz) {
			return fmt.Errorf("%s: point #%d: %d cycles in %g us is a clock of %.6g Hz, outside clock_hz's %g to %g", from[k], k, p.Cycles, p.TimeUS, hz, minClockHz, maxClockHz)
		}
		c, ok := refs[key]
		if !ok {
			c = ref{hz, k}
			refs[key] = c
		}
		if !sameClock(hz, c.hz) {
			by := "clock_hz=" + key
			if c.k >= 0 {
				by = fmt.Sprintf("point #%d's clock", c.k)
			}
			return fmt.Errorf("%s: point #%d: time_us %g is not its %d cycles at %s (%.6g Hz: %.6g us)", from[k], k, p.TimeUS, p.Cycles, by, c.hz, float64(p.Cycles)/c.hz*1e6)
		}
		for _, run := range p.Runs {
			if want := float64(run.End-run.Start) / c.hz * 1e6; !sameTime(run.TimeUS, want) {
				return fmt.Errorf("%s: point #%d: run %q from %d to %d takes %g us, not %.6g us at %.6g Hz", from[k], k, run.Name, run.Start, run.End, run.TimeUS, want, c.hz)
			}
		}
	}
	return nil
}

// sameClock: two clocks a run's cycles / time_us give, equal but for the
// rounding of a float64 division and its JSON text.
func sameClock(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(a, b) }

func sameTime(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(a, b) }

// checkPoint refuses figures no run produces (a shard edited by hand, or
// damaged): negative or non-finite cycles and times, runs that end before
// they start, an error on a point marked ok.
func checkPoint(p *Point) error {
	finite := func(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) && f >= 0 }
	switch {
	case p.Cycles < 0:
		return fmt.Errorf("negative cycle count %d", p.Cycles)
	case !finite(p.TimeUS) || !finite(p.TFLOPS):
		return fmt.Errorf("time_us %g and tflops %g must be finite and not negative", p.TimeUS, p.TFLOPS)
	case p.OK && p.Error != "":
		return errors.New("ok, yet with an error")
	case p.Speedup != nil && !finite(*p.Speedup), p.Overlap != nil && (math.IsNaN(*p.Overlap) || math.IsInf(*p.Overlap, 0)):
		return errors.New("speedup or overlap_eff is not a finite number")
	}
	for _, r := range p.Runs {
		if r.Start < 0 || r.End < r.Start || !finite(r.TimeUS) {
			return fmt.Errorf("run %q from %d to %d (%g us) is not a span of time", r.Name, r.Start, r.End, r.TimeUS)
		}
	}
	return nil
}

// headerDiff says how two reports' sweeps differ, or "" when they are the same sweep.
func headerDiff(a, b *Report) string {
	switch {
	case a.File != b.File:
		return fmt.Sprintf("file %q vs %q", a.File, b.File)
	case a.Profile != b.Profile:
		return fmt.Sprintf("profile %q vs %q", a.Profile, b.Profile)
	case a.TimingOnly != b.TimingOnly:
		return fmt.Sprintf("timing_only %v vs %v", a.TimingOnly, b.TimingOnly)
	case !slices.Equal(a.Grid, b.Grid):
		return fmt.Sprintf("grid %s vs %s", strings.Join(a.Grid, ","), strings.Join(b.Grid, ","))
	}
	for i := range a.Values {
		if !slices.Equal(a.Values[i], b.Values[i]) {
			return fmt.Sprintf("%s values %s vs %s", a.Grid[i], strings.Join(a.Values[i], ","), strings.Join(b.Values[i], ","))
		}
	}
	return ""
}
