package machine

import (
	"errors"
	"strings"
	"testing"

	"github.com/ptoasm/ptoasm/pipes"
)

// TestSyncAll runs syncall in the shapes kernels use it: one core alone,
// several blocks, several ranks, inside loops, AIC and AIV kernels of one
// mixed launch. Each case must end well inside a small cycle limit (a
// livelocked syncall shows as a LimitError, not a hung test), every core must
// pass every round, and a round is a barrier: on a rank, every core passes
// round k at one cycle, after the last pipe work any core issued before its
// k-th syncall has ended. Cases that hand data over through GM also check
// it: the reader's data is poison if it ran ahead of the writer.
func TestSyncAll(t *testing.T) {
	cases := []struct {
		name   string
		src    string
		cores  int // cores that run the kernel(s), all ranks
		rounds int // syncall passes per core
	}{
		{name: "one AIV alone", cores: 1, rounds: 1, src: `
kernel k : aiv {
    syncall
}
launch ranks=1 { run k blocks=1 }
`},
		{name: "one AIC alone", cores: 1, rounds: 1, src: `
kernel k : aic {
    syncall
}
launch ranks=1 { run k blocks=1 }
`},
		{name: "one core, pipe work pending", cores: 1, rounds: 1, src: `
gm X : f32 [64, 64] = expr(i + j)
gm Y : f32 [64, 64] = poison
kernel k : aiv {
    tile %x : vec f32 [64, 64]
    tload %x, @X[0, 0]
    syncall
    tstore @Y[0, 0], %x
}
launch ranks=1 { run k blocks=1 }
expect @Y == @X tol 0
`},
		{name: "AIV blocks hand over through GM", cores: 4, rounds: 1, src: `
gm X : f32 [16, 64] = expr(i * 64 + j)
gm T : f32 [16, 64] = poison
gm Y : f32 [16, 64] = poison
kernel k : aiv {
    tile %pad : vec f32 [256, 128]
    tile %x : vec f32 [16, 64]
    if block_idx == 0 {
        texpands %pad, 0.0 // block 0 arrives late
        tload %x, @X[0, 0]
        set_flag MTE2, MTE3, 0
        wait_flag MTE2, MTE3, 0
        tstore @T[0, 0], %x
    }
    syncall
    if block_idx == 3 {
        tload %x, @T[0, 0]
        set_flag MTE2, MTE3, 0
        wait_flag MTE2, MTE3, 0
        tstore @Y[0, 0], %x
    }
}
launch ranks=1 { run k blocks=4 }
expect @Y == @X tol 0
`},
		{name: "in a loop, arrivals staggered", cores: 3, rounds: 5, src: `
kernel k : aiv {
    tile %pad : vec f32 [64, 128]
    for %i = 0 to 5 {
        if (block_idx + %i) % 3 == 0 {
            texpands %pad, 1.0
        }
        syncall
    }
}
launch ranks=1 { run k blocks=3 }
`},
		{name: "loop passes a running sum block to block", cores: 4, rounds: 4, src: `
gm S : f32 [16, 64] = expr(j)
gm S0 : f32 [16, 64] = expr(j)
kernel k : aiv {
    tile %s : vec f32 [16, 64]
    for %i = 0 to 4 {
        if block_idx == %i {
            tload %s, @S[0, 0]
            set_flag MTE2, V, 0
            wait_flag MTE2, V, 0
            tadds %s, %s, 1.0
            set_flag V, MTE3, 0
            wait_flag V, MTE3, 0
            tstore @S[0, 0], %s
        }
        syncall
    }
}
launch ranks=1 { run k blocks=4 }
expect @S == add(@S0, 4) tol 0
`},
		{name: "mixed AIC and AIV kernels", cores: 6, rounds: 2, src: `
gm X : f32 [16, 64] = expr(i - j)
gm T : f32 [16, 64] = poison
gm Y : f32 [16, 64] = poison
kernel cube : aic {
    tile %m : mat f32 [16, 64]
    if block_idx == 1 {
        tload %m, @X[0, 0]
        set_flag MTE2, MTE3, 0
        wait_flag MTE2, MTE3, 0
        tstore @T[0, 0], %m
    }
    syncall
    syncall
}
kernel vec : aiv {
    tile %v : vec f32 [16, 64]
    syncall
    if block_idx == 0 && subblock_idx == 1 {
        tload %v, @T[0, 0]
        set_flag MTE2, MTE3, 0
        wait_flag MTE2, MTE3, 0
        tstore @Y[0, 0], %v
    }
    syncall
}
launch ranks=1 { run cube + vec blocks=2 }
expect @Y == @X tol 0
`},
		{name: "two ranks, each its own barrier", cores: 6, rounds: 3, src: `
kernel k : aiv {
    tile %pad : vec f32 [64, 128]
    for %i = 0 to 3 {
        if rank == 1 && block_idx == %i {
            texpands %pad, 1.0
        }
        syncall
    }
}
launch ranks=2 { run k blocks=3 }
`},
	}
	// The barrier's cost puts the drain's end ahead of the clock; the
	// livelock this guards against needed a positive one.
	for _, tc := range cases {
		for _, bar := range []string{"0", "1", "40"} {
			t.Run(tc.name+"/barrier="+bar, func(t *testing.T) {
				prof := pipes.DefaultProfile()
				if err := prof.Set("sync.pipe_barrier", bar); err != nil {
					t.Fatal(err)
				}
				syncAllCase(t, tc.src, prof, tc.cores, tc.rounds)
			})
		}
	}
}

// syncAllCase runs src under prof and checks that every one of cores passes
// rounds syncalls, and that each round is a barrier.
func syncAllCase(t *testing.T, src string, prof *pipes.Profile, cores, rounds int) {
	t.Helper()
	rec := &recorder{kinds: map[EventKind]bool{EvSyncAll: true, EvExec: true}}
	_, r, err := runObj(t, assemble(t, src), Options{Profile: prof, Observers: []Observer{rec}, MaxCycles: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range r.Checks {
		if !c.OK {
			t.Errorf("%s: %s", c.Name, c.Msg)
		}
	}
	type coreKey struct{ rank, core int32 }
	passes := map[coreKey][]Event{}
	for _, e := range rec.evs {
		if e.Kind == EvSyncAll {
			k := coreKey{e.Agent.Rank, e.Agent.Core}
			passes[k] = append(passes[k], e)
		}
	}
	if len(passes) != cores {
		t.Fatalf("%d cores passed a syncall, want %d", len(passes), cores)
	}
	// at[rank][k] is the cycle every core of rank passes round k.
	at := map[int32][]int64{}
	for k, ps := range passes {
		if len(ps) != rounds {
			t.Fatalf("r%d core %d passed %d syncalls, want %d", k.rank, k.core, len(ps), rounds)
		}
		if at[k.rank] == nil {
			at[k.rank] = make([]int64, rounds)
			for i := range ps {
				at[k.rank][i] = ps[i].Cycle
			}
		}
		for i := range ps {
			if ps[i].Cycle != at[k.rank][i] {
				t.Errorf("r%d core %d passed round %d at %d, another core at %d", k.rank, k.core, i, ps[i].Cycle, at[k.rank][i])
			}
		}
	}
	for _, e := range rec.evs {
		if e.Kind != EvExec {
			continue
		}
		ps := passes[coreKey{e.Agent.Rank, e.Agent.Core}]
		for i := range ps {
			// ps[i].Issued counts the ops the core issued before
			// its i-th syncall.
			if e.Issue <= ps[i].Issued && e.End > at[e.Agent.Rank][i] {
				t.Errorf("%s (r%d core %d) issued before syncall round %d ends at %d, after the round passed at %d",
					e.Op.Info.Name, e.Agent.Rank, e.Agent.Core, i, e.End, at[e.Agent.Rank][i])
			}
		}
	}
}

// TestSyncAllMissingArrivalDeadlocks: a syncall some core never reaches is a
// deadlock that says how many arrived, not a hang.
func TestSyncAllMissingArrivalDeadlocks(t *testing.T) {
	for _, tc := range []struct {
		name, src, want string
	}{
		{name: "one block skips it", want: "syncall: 2 of 3 cores of the stream arrived on rank 0", src: `
kernel k : aiv {
    if block_idx != 1 {
        syncall
    }
    ffts_wait 0
}
launch ranks=1 { run k blocks=3 }
`},
		{name: "the AIC kernel has none", want: "syncall: 2 of 3 cores of the stream arrived on rank 0", src: `
kernel cube : aic {
    ffts_wait 1
}
kernel vec : aiv {
    syncall
}
launch ranks=1 { run cube + vec blocks=1 }
`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := runObj(t, assemble(t, tc.src), Options{MaxCycles: 1 << 20})
			var d *DeadlockError
			if !errors.As(err, &d) {
				t.Fatalf("want a deadlock, got %v", err)
			}
			if !strings.Contains(d.Error(), tc.want) {
				t.Errorf("explanation:\n%s\nwant it to contain %q", d.Error(), tc.want)
			}
		})
	}
}
