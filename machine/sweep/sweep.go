// Package sweep runs one program over a grid of profile parameters and
// constants and compares the points (docs/sweep.md): it expands the grid,
// picks a shard's points, runs them on a pool of jobs that share one memory
// budget, merges shard reports, chooses the best points and renders the
// table and the HTML page. cmd/ptoasm only parses flags, assembles a point's
// program (it resolves program names and standard input) and writes output.
//
// Output must not depend on how many jobs ran the grid or in which order the
// points finished: every point is computed into its slot by index, and the
// table and the JSON are written only from those slots. The text table is
// always rendered from exactly what the JSON carries, so a merge of shard
// files prints the same bytes as the unsharded run.
package sweep

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/ptoasm/ptoasm/machine"
	"github.com/ptoasm/ptoasm/pipes"
)

// MaxPoints bounds the grid: beyond it a typo (an extra value list) would
// queue hours of work before printing anything.
const MaxPoints = 1 << 20

// Axis is one dimension of the grid: a profile key (--set) or a constant (-D).
type Axis struct {
	Name   string
	Define bool
	Values []string
}

// Param is one coordinate of a point.
type Param struct {
	Name, Value string
}

// Params is a point's coordinates in grid order. It is a JSON object whose
// keys keep that order, so the report reads like the table and stays byte-stable.
type Params []Param

func (ps Params) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, p := range ps {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(p.Name)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(p.Value)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func (ps *Params) UnmarshalJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return errors.New("params: want an object")
	}
	out := Params{}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return err
		}
		v, err := dec.Token()
		if err != nil {
			return err
		}
		ks, ok1 := k.(string)
		vs, ok2 := v.(string)
		if !ok1 || !ok2 {
			return errors.New("params: want string values")
		}
		out = append(out, Param{ks, vs})
	}
	*ps = out
	return nil
}

// Text is the coordinates as NAME=VALUE words.
func (ps Params) Text() string {
	var s []string
	for _, p := range ps {
		s = append(s, p.Name+"="+p.Value)
	}
	return strings.Join(s, " ")
}

// Point is one point's outcome. Metrics are zero when the point did not
// run to the end (Error says why); a failed check keeps its metrics.
type Point struct {
	Index  int               `json:"index"`
	Params Params            `json:"params"`
	Cycles int64             `json:"cycles"`
	TimeUS float64           `json:"time_us"`
	TFLOPS float64           `json:"tflops"`
	Runs   []machine.RunStat `json:"runs"`
	// Speedup and Overlap are the mode report's figures (report.FindModes),
	// present when the program has the sequential pair and the pipelined run.
	Speedup *float64 `json:"speedup,omitempty"`
	Overlap *float64 `json:"overlap_eff,omitempty"`
	OK      bool     `json:"ok"`
	// Skipped: the point's output checks did not run (--timing-only), so
	// ok says only that nothing failed.
	Skipped bool `json:"skipped,omitempty"`
	// overBudget: the point stopped on --max-memory while sharing it with
	// the other jobs; it is run again alone with the whole budget.
	overBudget bool
	Error      string `json:"error,omitempty"`
}

// Report is the JSON of a sweep, a shard or a merge. Everything that
// decides what a point computes is in the header, so merge can refuse shards of
// different sweeps.
type Report struct {
	File       string     `json:"file"`
	Profile    string     `json:"profile"`
	TimingOnly bool       `json:"timing_only"`
	Grid       []string   `json:"grid"`
	Values     [][]string `json:"values"`
	Total      int        `json:"total"`
	Shard      string     `json:"shard,omitempty"`
	// Partial says why the report lacks points (Ctrl-C stopped the sweep);
	// points then holds only the points that ran to the end. Absent in a
	// whole report, so readers of the older shape see no change; sweep
	// merge refuses a partial shard.
	Partial string  `json:"partial,omitempty"`
	Points  []Point `json:"points"`
}

// Failed counts the points that did not pass.
func (r *Report) Failed() int {
	n := 0
	for _, p := range r.Points {
		if !p.OK {
			n++
		}
	}
	return n
}

// SplitList splits a value list at commas outside parentheses and brackets,
// so a define value such as min(K,512) stays one value.
func SplitList(s string) ([]string, error) {
	var out []string
	depth, start := 0, 0
	add := func(v string) error {
		v = strings.TrimSpace(v)
		if v == "" {
			return fmt.Errorf("empty value in list %q", s)
		}
		out = append(out, v)
		return nil
	}
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(', '[':
			depth++
		case ')', ']':
			depth--
		case ',':
			if depth == 0 {
				if err := add(s[start:i]); err != nil {
					return nil, err
				}
				start = i + 1
			}
		}
	}
	if depth != 0 {
		return nil, fmt.Errorf("unbalanced parentheses in %q", s)
	}
	if err := add(s[start:]); err != nil {
		return nil, err
	}
	return out, nil
}

// Axes builds the grid from the --set and -D lists (each NAME=V1,V2,...):
// --set axes in command-line order, then -D axes. The first axis is
// outermost (varies slowest), the last varies fastest. An unknown profile key
// is an error for the whole grid; a bad value fails only its own points.
func Axes(set, define []string, base *pipes.Profile) ([]Axis, error) {
	var out []Axis
	seen := map[string]bool{}
	add := func(flag, kv string, define bool) error {
		name, list, ok := strings.Cut(kv, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			//lint:ignore ST1005 the message ends with the syntax it asks for, ellipsis included
			return fmt.Errorf("%s %s: want NAME=V1,V2,...", flag, kv)
		}
		vals, err := SplitList(list)
		if err != nil {
			return fmt.Errorf("%s %s: %v", flag, kv, err)
		}
		if seen[name] {
			return fmt.Errorf("%s %s: %s is already an axis of the grid", flag, kv, name)
		}
		seen[name] = true
		if !define {
			if _, known := base.Get(name); !known {
				return fmt.Errorf("%s %s: %w", flag, kv, base.Clone().Set(name, vals[0]))
			}
		}
		out = append(out, Axis{Name: name, Define: define, Values: vals})
		return nil
	}
	for _, kv := range set {
		if err := add("--set", kv, false); err != nil {
			return nil, err
		}
	}
	for _, kv := range define {
		if err := add("-D", kv, true); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// GridSize is the number of points, or an error when it passes MaxPoints.
func GridSize(values [][]string) (int, error) {
	n := 1
	for _, v := range values {
		if len(v) == 0 {
			return 0, errors.New("an axis has no values")
		}
		n *= len(v)
		if n > MaxPoints {
			return 0, fmt.Errorf("the grid has more than %d points", MaxPoints)
		}
	}
	return n, nil
}

// PointParams returns point idx's coordinates: mixed radix, last axis fastest.
func PointParams(grid []string, values [][]string, idx int) Params {
	ps := make(Params, len(grid))
	for a := len(grid) - 1; a >= 0; a-- {
		n := len(values[a])
		ps[a] = Param{grid[a], values[a][idx%n]}
		idx /= n
	}
	return ps
}

// ParseShard reads I/N (0-based I, as SLURM_ARRAY_TASK_ID and JOB_COMPLETION_INDEX are).
func ParseShard(s string) (i, n int, err error) {
	a, b, ok := strings.Cut(s, "/")
	if ok {
		i, err = strconv.Atoi(strings.TrimSpace(a))
		if err == nil {
			n, err = strconv.Atoi(strings.TrimSpace(b))
		}
	}
	if !ok || err != nil || n < 1 || i < 0 || i >= n {
		return 0, 0, fmt.Errorf("--shard %s: want I/N with 0 <= I < N", s)
	}
	return i, n, nil
}

// isDefine says whether an axis is a -D axis: it is no profile key.
func isDefine(axis string) bool {
	_, known := pipes.DefaultProfile().Get(axis)
	return !known
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}
