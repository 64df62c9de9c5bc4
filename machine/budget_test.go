package machine

import (
	"errors"
	"strings"
	"testing"
)

// TestMemoryBudget: storage past Options.MaxMemory is a *BudgetError naming
// the declaration (or the instruction), the size and the flag, before it is
// allocated: dense GM and declarations past MaxDeclaredGM at New, a sparse
// tensor's pages when they are first touched, a core's buffers when the core
// first runs; within budget the run goes on.
func TestMemoryBudget(t *testing.T) {
	const kernel = `
kernel k : aiv {
    tile %x : vec f32 [16, 16]
    tload %x, @A[0, 0]
    tstore @A[0, 0], %x
}
`
	tests := []struct {
		name    string
		src     string
		max     int64
		timing  bool
		atNew   bool   // refused by New, not by Run
		want    string // prefix of the error after the position; "" for none
		wantPos string
	}{
		{"gm within", "gm A : f32 [256, 1024] = zero\n" + kernel + "launch ranks=1 { run k blocks=1 }\n", 8 << 20, false, false, "", ""},
		// Large tensors are sparse: only the pages of the touched tile count.
		{"gm sparse", "gm A : f32 [1024, 1024] = zero\n" + kernel + "launch ranks=4 { run k blocks=1 }\n", 2 << 20, false, false, "", ""},
		{"gm declared over", "gm A : f32 [1048576, 1024]\n" + kernel + "launch ranks=1 { run k blocks=1 }\n", 2 << 20, false, true,
			"@A f32 [1048576, 1024] takes 4GiB: the run would declare 4GiB of GM, over 1024 x the memory budget of 2MiB (--max-memory)", "t.pto:1:1"},
		{"gm declared over by ranks", "gm A : f32 [262144, 1024]\ngm B : f32 [16, 16] = zero\n" + kernel + "launch ranks=4 { run k blocks=1 }\n", 2 << 20, false, true,
			"@A f32 [262144, 1024] takes 1GiB on each of 4 ranks: the run would declare 4194308KiB of GM", "t.pto:1:1"},
		// Small tensors are dense and charged whole.
		{"gm dense over by ranks", "gm A : f32 [128, 256] = zero\n" + kernel + "launch ranks=32 { run k blocks=1 }\n", 2 << 20, false, true,
			"@A f32 [128, 256] takes 128KiB on each of 32 ranks: the run would need", "t.pto:1:1"},
		{"gm touched over", "gm A : f32 [65536, 1024] = zero\n" + `
kernel k : aiv {
    tile %x : vec f32 [16, 16]
    tload %x, @A[0, 0]
    set_flag MTE2, MTE3, 0
    wait_flag MTE2, MTE3, 0
    for %i = 0 to 64 {
        tstore @A[%i * 16, 0], %x
    }
}
` + "launch ranks=1 { run k blocks=1 }\n", 2 << 20, false, false,
			"tstore: @A f32 [65536, 1024] takes 256MiB: the pages rank 0 has touched bring the run to ", "t.pto:9:9"},
		{"gm init over", "gm A : f32 [1024, 1024] = random(seed=1)\n" + kernel + "launch ranks=1 { run k blocks=1 }\n", 2 << 20, false, true,
			"initialising @A f32 [1024, 1024] takes 4MiB: the pages rank 0 has touched bring the run to ", "t.pto:1:1"},
		// An expr init's values stored on each rank: the store's page
		// error lost its type on the way (%v), and the run ended in
		// "ptoasm: t.pto:1:25: GM @A[rank=3]: touching its pages ..."
		// without the flag (hazards/decode_pair in FuzzRunLint).
		{"gm expr init over", "gm A : f32 [256, 1024] = expr(i + j)\n" + kernel + "launch ranks=4 { run k blocks=1 }\n", 7 << 19, false, true,
			"initialising @A f32 [256, 1024] takes 1MiB", "t.pto:1:1"},
		{"init scratch", "gm A : f32 [256, 1024] = expr(i + j)\n" + kernel + "launch ranks=1 { run k blocks=1 }\n", 5 << 19, false, true,
			"initialising @A f32 [256, 1024] takes 1MiB uses 2MiB of float64 values: the run would need 3MiB", "t.pto:1:1"},
		// A check compares the output with the expected values a band of
		// rows at a time: 8 MiB of @A checked against @A + 0 holds a few
		// bands, where it was refused before the run for three whole
		// float64 copies (48 MiB).
		{"check by bands", "gm A : f32 [2048, 1024] = random(seed=1)\n" + kernel + "launch ranks=1 { run k blocks=1 }\nexpect @A == @A + 0\n", 24 << 20, false, false, "", ""},
		// What a golden holds whole is charged as it evaluates: the run
		// stops at the value that does not fit.
		{"check over", "gm A : f32 [2048, 1024] = random(seed=1)\n" + kernel + "launch ranks=1 { run k blocks=1 }\nexpect @A == @A * 0 + sum(transpose(@A))\n", 24 << 20, false, false,
			"checking @A: @A takes 16MiB of float64 values: the run would need ", "t.pto:9:37"},
		// Timing-only allocates only what control flow reads: nothing here.
		{"timing-only skips data", "gm A : f32 [1048576, 1024]\n" + kernel + "launch ranks=1 { run k blocks=1 }\n", 2 << 20, true, false, "", ""},
		// 4096 ranks x 48 AIV x a 192 KiB UB is 36 GiB of core buffers.
		{"core buffers", "gm A : f32 [16, 16] = zero\n" + kernel + "launch ranks=4096 { run k blocks=48 }\n", 64 << 20, false, false,
			"the UB of r", "t.pto:4:5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := assemble(t, tt.src)
			m, err := New(obj, Options{MaxMemory: tt.max, TimingOnly: tt.timing})
			if err == nil {
				if tt.atNew && tt.want != "" {
					t.Fatalf("New succeeded, want %q", tt.want)
				}
				_, err = m.Run()
			} else if !tt.atNew {
				t.Fatalf("New: %v", err)
			}
			if tt.want == "" {
				if err != nil {
					t.Fatalf("run: %v", err)
				}
				return
			}
			var be *BudgetError
			if !errors.As(err, &be) {
				t.Fatalf("error %v (%T), want a *BudgetError", err, err)
			}
			if msg := strings.TrimPrefix(be.Error(), be.Pos.String()+": error: "); !strings.HasPrefix(msg, tt.want) || !strings.HasSuffix(msg, "(--max-memory)") {
				t.Errorf("message %q, want prefix %q and the flag", msg, tt.want)
			}
			if !strings.HasSuffix(be.Pos.String(), tt.wantPos) {
				t.Errorf("position %s, want %s", be.Pos, tt.wantPos)
			}
		})
	}
}
