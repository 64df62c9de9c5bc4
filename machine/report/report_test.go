package report

import (
	"math"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
	"github.com/ptoasm/ptoasm/parser"
	"github.com/ptoasm/ptoasm/pipes"
)

func TestCoreSetLabel(t *testing.T) {
	for _, tt := range []struct {
		names []string
		want  string
	}{
		{[]string{"r0.aic0"}, "r0.aic0"},
		{[]string{"r0.aic0", "r1.aic0", "r0.aic1", "r1.aic1"}, "r0-1.aic0-1 (4 cores)"},
		{[]string{"r3.aiv2", "r3.aiv3", "r3.aiv4"}, "r3.aiv2-4 (3 cores)"},
		{[]string{"r0.aiv0", "r0.aiv2"}, "r0.aiv0 +1 more (2 cores)"},            // not contiguous
		{[]string{"r0.aic0", "r1.aic0", "r1.aic1"}, "r0.aic0 +2 more (3 cores)"}, // not a rectangle
		{[]string{"r0.aic0", "r0.aiv0"}, "r0.aic0 +1 more (2 cores)"},            // two kinds
	} {
		if got := CoreSetLabel(tt.names); got != tt.want {
			t.Errorf("%v: %q, want %q", tt.names, got, tt.want)
		}
	}
}

// TestGroupsAndSummary: cores that ran the same instructions are one group
// whatever their busy cycles; the summary is per core kind and pipe.
func TestGroupsAndSummary(t *testing.T) {
	ps := []machine.PipeStat{
		{Core: "r0.aic0", Pipe: "M", BusyCycles: 100, Instructions: 4, Utilisation: 0.5},
		{Core: "r1.aic0", Pipe: "M", BusyCycles: 120, Instructions: 4, Utilisation: 0.6},
		{Core: "r0.aiv0", Pipe: "V", BusyCycles: 10, Instructions: 2, Utilisation: 0.05},
		{Core: "r1.aiv0", Pipe: "V", BusyCycles: 10, Instructions: 3, Utilisation: 0.05},
	}
	g := groupCores(ps)
	if len(g) != 3 || g[0].Label != "r0-1.aic0 (2 cores)" || g[0].Pipes[0].BusyCycles != 110 ||
		g[0].Pipes[0].MinBusy != 100 || g[0].Pipes[0].MaxBusy != 120 {
		t.Errorf("groups %+v", g)
	}
	s := summarise(ps)
	if len(s) != 2 || s[0].CoreKind != "aic" || s[0].Cores != 2 || s[0].BusyCycles != 220 || s[0].MeanUtil != 0.55 ||
		s[1].CoreKind != "aiv" || s[1].Instructions != 5 {
		t.Errorf("summary %+v", s)
	}
}

// TestBusBandwidth: a broadcast over 4 ranks is reported at its site with
// nccl-tests' factor 1, busbw the busiest rank's link bytes over the
// instance's time, and the links it used.
func TestBusBandwidth(t *testing.T) {
	src := `
window A : f32 [4, 8] = expr(i * 8 + j + 100 * rank)
window W : f32 [4, 8] = zero
kernel k : aiv {
    tile %s : vec f32 [2, 8]
    tbroadcast @W[0, 0], @A[0, 0], %s #root=2 #rows=4
}
launch ranks=4 {
    run k blocks=1
}
`
	fe := asm.Frontend{ParseFile: parser.ParseFile, ParseExpr: parser.ParseExpr,
		ReadFile: func(string) ([]byte, error) { return []byte(src), nil }}
	obj, errs := asm.Assemble(fe, "b.pto", nil)
	if errs.HasErrors() {
		t.Fatal(errs)
	}
	col := NewCollector(obj)
	m, err := machine.New(obj, machine.Options{Observers: []machine.Observer{col}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := m.Run()
	if err != nil {
		t.Fatal(err)
	}
	prof := pipes.DefaultProfile()
	r := Build(Input{Program: "b.pto", Result: res, Collector: col, Profile: prof, Ranks: 4})
	var c *Collective
	for i := range r.Collectives {
		if r.Collectives[i].Kind == "tbroadcast" {
			c = &r.Collectives[i]
		}
	}
	if c == nil {
		t.Fatalf("no broadcast in %+v", r.Collectives)
	}
	if c.Ranks != 4 || c.Instances != 1 || c.Factor != 1 || c.Bytes < 128 || c.TimeUS <= 0 {
		t.Errorf("broadcast %+v", *c)
	}
	if want := float64(c.Bytes) / (c.TimeUS * 1e-6) / 1e9; math.Abs(c.BusGBps-want) > 1e-6*want || c.AlgGBps != c.BusGBps {
		t.Errorf("bus %g GB/s, want %g; alg %g", c.BusGBps, want, c.AlgGBps)
	}
	// 3 ranks get the root's 4x8 f32 rows: 3 links of 128 bytes.
	var linkBytes int64
	for _, l := range r.Links {
		linkBytes += l.Bytes
	}
	if len(r.Links) != 3 || linkBytes != 3*128 {
		t.Errorf("links %+v", r.Links)
	}
}
