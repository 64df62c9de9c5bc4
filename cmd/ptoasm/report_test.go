package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
)

func TestWriteModes(t *testing.T) {
	obj := &asm.Object{Consts: []asm.ConstVal{{Name: "FLOPS", Val: 2_000_000}}}
	tests := []struct {
		name string
		runs []machine.RunStat
		obj  *asm.Object
		want []string // substrings, in order; nil: no report at all
	}{
		{"no mode runs", []machine.RunStat{{Name: "gemm", TimeUS: 1}}, obj, nil},
		{"all modes", []machine.RunStat{
			{Name: "compute_only", TimeUS: 1},
			{Name: "prepare", TimeUS: 9},
			{Name: "seq_comm", TimeUS: 3},
			{Name: "seq_compute", TimeUS: 1},
			{Name: "prepare", TimeUS: 9},
			{Name: "pipelined", TimeUS: 3.5},
		}, obj, []string{
			"FLOPS = 2000000",
			"compute-only         1.000 us     2.000 TFLOPS",
			"sequential           4.000 us     0.500 TFLOPS  (comm 3.000 us + compute 1.000 us)",
			"pipelined            3.500 us     0.571 TFLOPS",
			"speed-up             1.143x",
			"overlap eff           50.0%",
		}},
		{"sequential needs both halves", []machine.RunStat{{Name: "seq_comm", TimeUS: 3}}, obj, nil},
		{"no FLOPS constant", []machine.RunStat{{Name: "pipelined", TimeUS: 2}}, &asm.Object{},
			[]string{"modes:", "pipelined            2.000 us\n"}},
		{"first run of a name counts", []machine.RunStat{{Name: "pipelined", TimeUS: 2}, {Name: "pipelined", TimeUS: 7}}, nil,
			[]string{"pipelined            2.000 us\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			modesOf(&machine.Result{Runs: tt.runs}, tt.obj).WriteText(&b)
			got := b.String()
			if tt.want == nil {
				if got != "" {
					t.Fatalf("want no report, got:\n%s", got)
				}
				return
			}
			rest := got
			for _, w := range tt.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("missing %q (in order) in:\n%s", w, got)
				}
				rest = rest[i+len(w):]
			}
			if strings.Contains(got, "speed-up") && !strings.Contains(strings.Join(tt.want, ""), "speed-up") {
				t.Errorf("unexpected speed-up line:\n%s", got)
			}
		})
	}
}
