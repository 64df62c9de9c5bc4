package machine

import (
	"errors"
	"strings"
	"testing"

	"github.com/ptoasm/ptoasm/pipes"
)

// TestIdleGuard: a run in which nothing a waiting core could wait for
// happens (no pipe instruction in flight, no async copy, no GM write) for
// MaxIdleCycles stops with a LimitError of kind LimitIdle, within one scalar
// budget of the limit; work in flight, however long, is not idleness.
func TestIdleGuard(t *testing.T) {
	const idle = 2000
	cases := []struct {
		name string
		src  string
		set  string // a profile override, KEY=VALUE
		stop bool
	}{
		{name: "while 1 {}", stop: true, src: `
kernel k : aiv {
    while 1 {
    }
}
launch ranks=1 { run k blocks=1 }
`},
		{name: "ld poll of a signal no one sets", stop: true, src: `
signal S : [2] = zero
kernel k : aiv {
    if block_idx == 0 {
        let %v = 0
        while %v == 0 {
            ld %v, @S[0]
        }
    } else {
        st @S[1], 1
    }
}
launch ranks=1 { run k blocks=2 }
`},
		// The scalar is resumed by its own pipe each time: flag entries
		// move no data and are not work.
		{name: "set_flag/wait_flag loop", stop: true, src: `
kernel k : aiv {
    while 1 {
        set_flag V, MTE2, 0
        wait_flag V, MTE2, 0
    }
}
launch ranks=1 { run k blocks=1 }
`},
		// Slow flags fill the queue: the scalar waits for a slot and its
		// pipe resumes it straight after the pop, outside the queue of
		// wake-ups.
		{name: "set_flag/wait_flag loop, queue full", stop: true, set: "sync.set_flag=10", src: `
kernel k : aiv {
    while 1 {
        set_flag V, MTE2, 0
        wait_flag V, MTE2, 0
    }
}
launch ranks=1 { run k blocks=1 }
`},
		{name: "syncall loop", stop: true, src: `
kernel k : aiv {
    while 1 {
        syncall
    }
}
launch ranks=1 { run k blocks=3 }
`},
		// Block 1 polls while block 0's loads and stores, each longer than
		// the limit, are in flight.
		{name: "poll while long pipe work is in flight", src: `
gm X : f32 [1024, 128] = zero
gm Y : f32 [1024, 128] = zero
signal S : [1] = zero
kernel k : aiv {
    tile %x : vec f32 [256, 128]
    if block_idx == 0 {
        for %i = 0 to 4 {
            tload %x, @X[%i * 256, 0]
            set_flag MTE2, MTE3, 0
            wait_flag MTE2, MTE3, 0
            tstore @Y[%i * 256, 0], %x
            set_flag MTE3, MTE2, 0
            wait_flag MTE3, MTE2, 0
        }
        pipe_barrier ALL
        st @S[0], 1
    } else {
        let %v = 0
        while %v == 0 {
            ld %v, @S[0]
        }
    }
}
launch ranks=1 { run k blocks=2 }
`},
		// An SDMA copy is work in flight until it completes.
		{name: "poll while an async copy is in flight", src: `
window Src : f32 [1024, 1024] = zero
gm Dst : f32 [1024, 1024] = zero
signal S : [1] = zero
kernel k : aiv {
    if rank == 0 {
        if block_idx == 0 {
            %e = tget_async @Dst[0, 0], @Src[rank=1][0, 0] #rows=1024 #cols=1024
            wait_async %e
            st @S[0], 1
        } else {
            let %v = 0
            while %v == 0 {
                ld %v, @S[0]
            }
        }
    }
}
launch ranks=2 { run k blocks=2 }
`},
		// Scalar stores are work: a long scalar loop over GM is not idle.
		{name: "scalar ld/st loop", src: `
gm A : i32 [64] = expr(i)
kernel k : aiv {
    for %i = 1 to 64 {
        ld %a, @A[%i - 1]
        ld %b, @A[%i]
        st @A[%i], %a + %b
    }
}
launch ranks=1 { run k blocks=1 }
`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			prof := pipes.DefaultProfile()
			if k, v, ok := strings.Cut(tc.set, "="); ok {
				if err := prof.Set(k, v); err != nil {
					t.Fatal(err)
				}
			}
			_, r, err := runObj(t, assemble(t, tc.src), Options{Profile: prof, TimingOnly: true, MaxIdleCycles: idle, MaxCycles: 1 << 26})
			var le *LimitError
			if !tc.stop {
				if err != nil {
					t.Fatal(err)
				}
				if r.Cycles <= idle {
					t.Errorf("the run took %d cycles, not longer than the idle limit %d: the case shows nothing", r.Cycles, idle)
				}
				return
			}
			if !errors.As(err, &le) || le.Kind != LimitIdle {
				t.Fatalf("want an idle-limit stop, got %v", err)
			}
			if d := le.Cycle - le.IdleSince; d <= idle || d > idle+scalarBudget {
				t.Errorf("stopped %d cycles after the last work (cycle %d), want within one scalar budget past %d", d, le.IdleSince, idle)
			}
		})
	}
}

// TestMaxTime: the wall-clock guard stops a loop that keeps a pipe busy,
// which the idle guard does not; a nanosecond stops it at the first check.
func TestMaxTime(t *testing.T) {
	src := `
kernel k : aiv {
    tile %x : vec f32 [16, 64]
    while 1 {
        texpands %x, 1.0
        pipe_barrier V
    }
}
launch ranks=1 { run k blocks=1 }
`
	_, _, err := runObj(t, assemble(t, src), Options{TimingOnly: true, MaxTime: 1, MaxCycles: 1 << 30})
	var le *LimitError
	if !errors.As(err, &le) || le.Kind != LimitTime || le.MaxTime != 1 {
		t.Fatalf("want a time-limit stop, got %v", err)
	}
}

// TestCancel: closing Options.Cancel stops a run that keeps a pipe busy for
// ever with ErrCancelled, not a guard's LimitError.
func TestCancel(t *testing.T) {
	src := `
kernel k : aiv {
    tile %x : vec f32 [16, 64]
    while 1 {
        texpands %x, 1.0
        pipe_barrier V
    }
}
launch ranks=1 { run k blocks=1 }
`
	cancel := make(chan struct{})
	close(cancel)
	_, _, err := runObj(t, assemble(t, src), Options{TimingOnly: true, Cancel: cancel, MaxCycles: 1 << 40})
	if !errors.Is(err, ErrCancelled) {
		t.Fatalf("want ErrCancelled, got %v", err)
	}
}
