package machine

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
)

const gemmDB = "../programs/gemm_db/gemm_db.pto"

func TestGemmDBReference(t *testing.T) {
	obj := assembleFile(t, gemmDB)
	m, r, err := runObj(t, obj, Options{})
	if err != nil {
		t.Fatal(err)
	}
	a, err := m.loadArray("A", 0)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := m.loadArray("B", 0)
	c, _ := m.loadArray("C", 0)
	M, K, N := a.Shape[0], a.Shape[1], b.Shape[1]
	for i := 0; i < M; i++ {
		for j := 0; j < N; j++ {
			var s float32
			for k := 0; k < K; k++ {
				s += float32(a.Data[i*K+k]) * float32(b.Data[k*N+j])
			}
			got := c.Data[i*N+j]
			if math.Abs(got-float64(s)) > 1e-6*math.Max(1, math.Abs(float64(s)))*float64(K) {
				t.Fatalf("C[%d,%d] = %g, reference %g", i, j, got, s)
			}
		}
	}
	// Overlap: the pipes of the AIC together were busy longer than the
	// kernel ran (the run less its start-up).
	var busy int64
	for _, p := range r.Pipes {
		if p.Core == "r0.aic0" && p.Pipe != "S" {
			busy += p.BusyCycles
		}
	}
	if ran := r.Cycles - m.Profile().KernelStart; busy <= ran {
		t.Errorf("no overlap: pipes busy %d cycles in a %d-cycle kernel", busy, ran)
	}
	if r.FLOPs != int64(2*M*K*N) {
		t.Errorf("flops %d, want %d", r.FLOPs, 2*M*K*N)
	}
}

func TestDeterministic(t *testing.T) {
	for _, p := range []string{gemmDB, "../programs/vec_add/vec_add.pto"} {
		var outs [2][]byte
		for i := range outs {
			obj := assembleFile(t, p)
			_, r, err := runObj(t, obj, Options{})
			if err != nil {
				t.Fatal(err)
			}
			outs[i], err = json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			var text bytes.Buffer
			r.Fprint(&text)
			outs[i] = append(outs[i], text.Bytes()...)
		}
		if !bytes.Equal(outs[0], outs[1]) {
			t.Errorf("%s: two runs differ:\n%s\n%s", p, outs[0], outs[1])
		}
	}
}

func TestResultJSONFields(t *testing.T) {
	obj := assembleFile(t, "../programs/vec_add/vec_add.pto")
	_, r, err := runObj(t, obj, Options{})
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"cycles", "time_us", "flops", "tflops", "runs", "pipes", "bytes", "checks", "findings"} {
		if _, ok := v[k]; !ok {
			t.Errorf("JSON has no %q: %s", k, data)
		}
	}
	p := v["pipes"].([]any)[0].(map[string]any)
	for _, k := range []string{"rank", "core", "pipe", "busy_cycles", "instructions"} {
		if _, ok := p[k]; !ok {
			t.Errorf("pipe entry has no %q", k)
		}
	}
}

// gemm24 is gemm_db spread over blocks: each AIC computes its own 128-row band.
func gemm24(t testing.TB, blocks int, defs ...asm.Define) *asm.Object {
	return assembleFile(t, gemmDB, append(defs, asm.Define{Name: "BLOCKS", Value: itoa(blocks)})...)
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

func TestGemm24Blocks(t *testing.T) {
	_, r, err := runObj(t, gemm24(t, 24), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Checks) != 1 || !r.Checks[0].OK {
		t.Fatalf("checks %+v", r.Checks)
	}
	cores := map[string]bool{}
	for _, p := range r.Pipes {
		cores[p.Core] = true
	}
	if len(cores) != 24 {
		t.Errorf("%d cores ran, want 24", len(cores))
	}
	// More blocks than cores run in waves on the same 24 cores
	// (TestBlocksBeyondCores).
	_, r, err = runObj(t, gemm24(t, 25, asm.Define{Name: "K", Value: "256"}), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Checks) != 1 || !r.Checks[0].OK {
		t.Fatalf("25 blocks: checks %+v", r.Checks)
	}
	clear(cores)
	for _, p := range r.Pipes {
		cores[p.Core] = true
	}
	if len(cores) != 24 {
		t.Errorf("25 blocks: %d cores ran, want 24", len(cores))
	}
}
