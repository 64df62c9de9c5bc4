package pipes

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
)

func TestDefaultProfileValues(t *testing.T) {
	p := DefaultProfile()
	if p.Name != "a2a3" {
		t.Errorf("Name = %q", p.Name)
	}
	checks := []struct {
		key, want string
	}{
		{"clock_hz", "1.85e+09"},
		{"aic_per_rank", "24"},
		{"aiv_per_rank", "48"},
		{"mem.ub", "196608"},
		{"mem.l1", "524288"},
		{"queue.mte2", "8"},
		{"dma.gm_ub.bw", "128"},
		{"dma.gm_ub.latency", "264"},
		{"cube.head", "6"},
		{"cube.repeat.f32", "2"},
		{"vec.vadd.head", "10"},
		{"vec.vexp.tail", "18"},
		{"vec.count_floor", "16"},
		{"link.topology", "mesh"},
		{"remote_visibility", "completion"},
	}
	for _, c := range checks {
		got, ok := p.Get(c.key)
		if !ok || got != c.want {
			t.Errorf("%s = %q, %v; want %q", c.key, got, ok, c.want)
		}
	}
	if p.Mem[asm.UB] != 196608 || p.QueueDepth[asm.PipeV] != 8 || p.DMA[PathUBUB].BW != 32 {
		t.Errorf("typed fields not filled: UB %d, queue.v %d, ub_ub %g", p.Mem[asm.UB], p.QueueDepth[asm.PipeV], p.DMA[PathUBUB].BW)
	}
	// DefaultProfile hands out copies: changing one must not leak into the next.
	p.Cube.Head = 99
	if q := DefaultProfile(); q.Cube.Head != 6 {
		t.Errorf("DefaultProfile shares state: head %d", q.Cube.Head)
	}
}

// The embedded file must list every key once, in table order, each with a source.
func TestEmbeddedFileOrderAndSources(t *testing.T) {
	var keys []string
	for i, line := range strings.Split(string(a2a3Text), "\n") {
		body, comment, _ := strings.Cut(line, "#")
		if strings.TrimSpace(body) == "" {
			continue
		}
		k, _, _ := strings.Cut(body, "=")
		keys = append(keys, strings.TrimSpace(k))
		if !strings.HasPrefix(strings.TrimSpace(comment), "source:") || len(strings.TrimSpace(comment)) < 12 {
			t.Errorf("a2a3.txt:%d: %s has no `# source:` comment", i+1, strings.TrimSpace(k))
		}
	}
	want := DefaultProfile().Keys()
	if strings.Join(keys, "\n") != strings.Join(want, "\n") {
		t.Errorf("a2a3.txt key order differs from the parameter table:\nfile  %v\ntable %v", keys, want)
	}
}

func TestFprintRoundTrip(t *testing.T) {
	p := DefaultProfile()
	if err := p.Set("dma.gm_ub.latency", "300"); err != nil {
		t.Fatal(err)
	}
	var a bytes.Buffer
	if err := p.Fprint(&a); err != nil {
		t.Fatal(err)
	}
	q, err := ParseProfile("dump.txt", a.Bytes())
	if err != nil {
		t.Fatalf("re-parse: %v", err)
	}
	var b bytes.Buffer
	q.Name = p.Name
	if err := q.Fprint(&b); err != nil {
		t.Fatal(err)
	}
	if a.String() != b.String() {
		t.Errorf("Fprint is not a fixed point:\n%s\n---\n%s", a.String(), b.String())
	}
	if q.DMA[PathGMUB].Latency != 300 {
		t.Errorf("latency lost in round trip: %d", q.DMA[PathGMUB].Latency)
	}
	if !strings.Contains(a.String(), "dma.gm_ub.latency            = 300            # [cycles] source: --set") {
		t.Errorf("Fprint line for an override:\n%s", a.String())
	}
	// Deterministic: printing twice gives the same bytes.
	var c bytes.Buffer
	_ = p.Fprint(&c)
	if a.String() != c.String() {
		t.Error("Fprint is not deterministic")
	}
}

func TestParseProfilePartialOverride(t *testing.T) {
	src := "# what-if: faster links\nlink.stream_bw = 6.1  # source: guess\nlink.topology = ring\n"
	p, err := ParseProfile("fast/links.txt", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "links" || p.Link.StreamBW != 6.1 || p.Link.Topology != TopoRing || p.Cube.Head != 6 {
		t.Errorf("got name %q stream_bw %g topology %v head %d", p.Name, p.Link.StreamBW, p.Link.Topology, p.Cube.Head)
	}
	if p.Source("link.stream_bw") != "guess" {
		t.Errorf("source = %q", p.Source("link.stream_bw"))
	}
}

func TestParseProfileErrors(t *testing.T) {
	tests := []struct {
		name, src string
		want      []string
	}{
		{"no equals", "clock_hz 1.85e9\n", []string{"p.txt:1:1: error: expected `key = value`"}},
		{"unknown key", "\n  cube.haed = 6\n", []string{`p.txt:2:3: error: unknown profile key "cube.haed" (did you mean cube.head`}},
		{"bad int", "cube.head = six\n", []string{`p.txt:1:13: error: cube.head wants an integer in 0..1073741824 cycles, got "six"`}},
		{"negative", "cube.head = -1\n", []string{"p.txt:1:13: error: cube.head must be in 0..1073741824 cycles, got -1"}},
		{"bad float", "dma.gm_ub.bw = 0\n", []string{"p.txt:1:16: error: dma.gm_ub.bw must be in 0.001..1e+09 B/cycle, got 0"}},
		{"bad enum", "link.topology = torus\n", []string{`p.txt:1:17: error: link.topology must be one of mesh, ring, switch, got "torus"`}},
		{"duplicate", "cube.head = 6\ncube.head = 7\n", []string{`p.txt:2:1: error: duplicate key "cube.head"`}},
		{"missing value", "cube.head =   # nothing\n", []string{`p.txt:1:12: error: missing value for "cube.head"`}},
		{"two words", "cube.head = 6 7\n", []string{`p.txt:1:13: error: value for "cube.head" must be one word, got "6 7"`}},
		{"missing key", "= 6\n", []string{"p.txt:1:1: error: missing key before `=`"}},
		{"every bad line reported", "a = 1\nb = 2\ncube.head = x\n", []string{
			`p.txt:1:1: error: unknown profile key "a"`,
			`p.txt:2:1: error: unknown profile key "b"`,
			`p.txt:3:13: error: cube.head wants an integer`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseProfile("p.txt", []byte(tt.src))
			el, ok := err.(asm.ErrorList)
			if !ok {
				t.Fatalf("err = %v (%T), want asm.ErrorList", err, err)
			}
			if len(el) != len(tt.want) {
				t.Fatalf("got %d errors %v, want %d", len(el), el, len(tt.want))
			}
			for i, w := range tt.want {
				if got := el[i].Error(); !strings.HasPrefix(got, w) {
					t.Errorf("error %d = %q, want prefix %q", i, got, w)
				}
			}
		})
	}
}

func TestSet(t *testing.T) {
	p := DefaultProfile()
	ok := []struct{ key, val string }{
		{"cube.head", "0"},
		{"dma.l1_l0a.bw", "512"},
		{"link.topology", "switch"},
		{"remote_visibility", "dsb"},
		{"twait.max_polls", "1e6"},
		{"vec.vexp.slope", "3"},
		{"queue.mte3", "0x10"},
	}
	for _, s := range ok {
		if err := p.Set(s.key, s.val); err != nil {
			t.Errorf("Set(%s, %s): %v", s.key, s.val, err)
		}
	}
	if p.Cube.Head != 0 || p.DMA[PathL1L0A].BW != 512 || p.Link.Topology != TopoSwitch ||
		p.RemoteVisibility != VisibleAtDSB || p.TWaitMaxPolls != 1000000 || p.Vec[asm.CostVExp].Slope != 3 ||
		p.QueueDepth[asm.PipeMTE3] != 16 {
		t.Errorf("Set did not reach the typed fields: %+v", p.Cube)
	}
	bad := []struct{ key, val, want string }{
		{"vec.vexp.slop", "2", `unknown profile key "vec.vexp.slop" (did you mean vec.vexp.slope`},
		{"clockhz", "1e9", `(did you mean clock_hz`},
		{"gm_ub", "1", `did you mean dma.gm_ub.bw, dma.gm_ub.latency`},
		{"zzzzzzzzzzzz", "1", `unknown profile key "zzzzzzzzzzzz"`},
		{"queue.v", "0", "queue.v must be in 1..4096 entries, got 0"},
		{"twait.max_polls", "1.5", `twait.max_polls wants an integer in 1..1073741824 polls, got "1.5"`},
		// Each of these once ran: a bandwidth this low or a latency this high
		// overflowed the cost arithmetic, a UB this large panicked, a queue
		// this deep ran out of memory.
		{"dma.gm_ub.bw", "1e-9", "dma.gm_ub.bw must be in 0.001..1e+09 B/cycle, got 1e-9"},
		{"dma.gm_ub.latency", "4.6e18", "dma.gm_ub.latency must be in 0..1073741824 cycles, got 4.6e18"},
		{"mem.ub", "1e15", "mem.ub must be in 1..67108864 bytes, got 1e15"},
		{"queue.v", "1e9", "queue.v must be in 1..4096 entries, got 1e9"},
		{"clock_hz", "NaN", "clock_hz must be in 1e+06..1e+12 Hz, got NaN"},
		{"link.bw", "+Inf", "link.bw must be in 0.001..1e+09 B/cycle, got +Inf"},
	}
	for _, b := range bad {
		err := p.Set(b.key, b.val)
		if err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("Set(%s, %s) = %v, want %q", b.key, b.val, err, b.want)
		}
	}
	if err := p.Set("zzzzzzzzzzzz", "1"); strings.Contains(err.Error(), "did you mean") {
		t.Errorf("no suggestion expected for a key unlike any other: %v", err)
	}
}

// TestRanges: every numeric key takes both ends of its range and refuses
// the values just outside, and at the extremes of every range the cost
// formulas stay non-negative (no int64 overflow).
func TestRanges(t *testing.T) {
	for _, pr := range params() {
		if pr.rng == "" {
			continue // an enum
		}
		lo, hi, ok := strings.Cut(pr.rng, "..")
		if !ok {
			t.Fatalf("%s: range %q", pr.key, pr.rng)
		}
		p := DefaultProfile()
		for _, v := range []string{lo, hi} {
			if err := p.Set(pr.key, v); err != nil {
				t.Errorf("Set(%s, %s): %v", pr.key, v, err)
			}
		}
		lf, _ := strconv.ParseFloat(lo, 64)
		hf, _ := strconv.ParseFloat(hi, 64)
		for _, v := range []float64{lf - 1, lf / 2, hf * 2, hf + 1} {
			if v >= lf && v <= hf {
				continue
			}
			if err := p.Set(pr.key, strconv.FormatFloat(v, 'f', -1, 64)); err == nil || !strings.Contains(err.Error(), pr.rng) {
				t.Errorf("Set(%s, %g) = %v, want an error naming %s", pr.key, v, err, pr.rng)
			}
		}
	}
	// The slowest and the fastest machine the ranges allow.
	for _, end := range []int{0, 1} {
		p := DefaultProfile()
		for _, pr := range params() {
			if pr.rng == "" {
				continue
			}
			lo, hi, _ := strings.Cut(pr.rng, "..")
			v := hi
			if strings.Contains(pr.unit, "B/cycle") == (end == 0) {
				v = lo
			}
			if end == 1 && !strings.Contains(pr.unit, "B/cycle") {
				v = lo
			}
			if err := p.Set(pr.key, v); err != nil {
				t.Fatal(err)
			}
		}
		const huge = int64(1) << 46
		for d := DMAPath(0); d < NumDMAPaths; d++ {
			if c := p.DMACycles(d, huge, 1<<20); c < 0 {
				t.Errorf("end %d: DMACycles(%s) = %d", end, d, c)
			}
			if c := p.RemoteDMACycles(d, huge, 1<<20, 8); c < 0 {
				t.Errorf("end %d: RemoteDMACycles(%s) = %d", end, d, c)
			}
		}
		if c := p.LinkCycles(huge, 8); c < 0 {
			t.Errorf("end %d: LinkCycles = %d", end, c)
		}
		if c := p.SDMACycles(huge, 8); c < 0 {
			t.Errorf("end %d: SDMACycles = %d", end, c)
		}
		if c := p.MatmulCycles(1<<12, 1<<12, 1<<12, asm.F32, true); c < 0 {
			t.Errorf("end %d: MatmulCycles = %d", end, c)
		}
		for v := asm.CostVAdd; v < NumVecOps; v++ {
			if b, tl := p.VectorCycles(v, asm.F32, 1<<12, 1<<12, 1<<12, true); b < 0 || tl < 0 {
				t.Errorf("end %d: VectorCycles(%s) = %d, %d", end, v, b, tl)
			}
		}
	}
}

func TestKeysCoverAllVectorOps(t *testing.T) {
	keys := strings.Join(DefaultProfile().Keys(), " ")
	for v := asm.CostVAdd; v < NumVecOps; v++ {
		if v == asm.CostUBCopy {
			continue
		}
		for _, f := range []string{"head", "slope", "tail"} {
			if !strings.Contains(keys, "vec."+v.String()+"."+f+" ") {
				t.Errorf("missing key vec.%s.%s", v, f)
			}
		}
	}
}

// Any input must give a profile or positioned errors, never a panic.
func FuzzParseProfile(f *testing.F) {
	f.Add([]byte("cube.head = 6\n"))
	f.Add([]byte("= =\n#\n\r\nlink.topology=ring # x"))
	f.Add(a2a3Text)
	f.Fuzz(func(t *testing.T, src []byte) {
		p, err := ParseProfile("f.txt", src)
		if err == nil && p == nil {
			t.Fatal("nil profile without error")
		}
		if err != nil {
			// Every error is positioned in the file, so the CLI prints
			// f.txt:LINE:COL: error: (the rule for bad input).
			var el asm.ErrorList
			if !errors.As(err, &el) || len(el) == 0 {
				t.Fatalf("an error that is not a positioned list: %v", err)
			}
			for _, d := range el {
				if p := d.Span.Pos; p.File != "f.txt" || p.Line < 1 || p.Col < 1 {
					t.Fatalf("an error without a position in the file: %v (%q)", p, d.Msg)
				}
			}
			return
		}
		// What was read prints to a profile that reads back the same.
		var b1, b2 bytes.Buffer
		if err := p.Fprint(&b1); err != nil {
			t.Fatal(err)
		}
		q, err := ParseProfile("f.txt", b1.Bytes())
		if err != nil {
			t.Fatalf("the printed profile does not read back: %v\n%s", err, b1.String())
		}
		q.Fprint(&b2)
		if !bytes.Equal(b1.Bytes(), b2.Bytes()) {
			t.Fatalf("the profile does not round-trip:\n%s\n---\n%s", b1.String(), b2.String())
		}
	})
}

// FuzzProfileSet is `--set KEY=VALUE`: a value Set accepts is printed by Get
// in a form Set accepts again, to the same value; a refusal names the key.
func FuzzProfileSet(f *testing.F) {
	keys := DefaultProfile().Keys()
	for i, v := range []string{"6", "1e9", "-1", "ring", "0x10", "1.5", "", "NaN", "Inf", "4.6e18", "1_000", "0.001"} {
		f.Add(uint16(i*7), v)
	}
	f.Fuzz(func(t *testing.T, k uint16, value string) {
		key := keys[int(k)%len(keys)]
		p := DefaultProfile()
		if err := p.Set(key, value); err != nil {
			if !strings.Contains(err.Error(), key) {
				t.Fatalf("--set %s=%q: the error does not name the key: %v", key, value, err)
			}
			return
		}
		got, ok := p.Get(key)
		if !ok {
			t.Fatalf("Get(%s) after a Set", key)
		}
		q := DefaultProfile()
		if err := q.Set(key, got); err != nil {
			t.Fatalf("--set %s=%q gives %q, which Set refuses: %v", key, value, got, err)
		}
		if again, _ := q.Get(key); again != got {
			t.Fatalf("--set %s=%q: %q, then %q", key, value, got, again)
		}
	})
}
