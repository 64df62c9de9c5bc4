package machine

import (
	"fmt"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
)

// The L2 model on its own: first touches miss line by line, re-reads hit,
// capacity evicts the least recently used block, and flat tensors work.
func TestL2Cache(t *testing.T) {
	// A 1024 x 1024 f16 tensor: 2 KiB rows, 4 column bands of 512 B.
	a := &asm.TensorInfo{Index: 0, Name: "A", DType: asm.F16, Shape: []int64{1024, 1024}, Bytes: 1024 * 2048}
	b := &asm.TensorInfo{Index: 1, Name: "B", DType: asm.F16, Shape: []int64{1 << 20}, Bytes: 2 << 20}
	type step struct {
		t                      *asm.TensorInfo
		off, pitch, rows, rowB int64
		wantHit                int64
		why                    string
	}
	tests := []struct {
		name  string
		size  int64
		steps []step
	}{
		{"reuse", 1 << 20, []step{
			{a, 0, 2048, 128, 512, 0, "first touch of a 128 x 512 B tile"},
			{a, 0, 2048, 128, 512, 128 * 512, "the same tile again"},
			{a, 512, 2048, 128, 512, 0, "the next column band is a different line per row"},
			{a, 64 * 2048, 2048, 128, 1024, 64 * 1024, "rows 64..191 of both bands: rows 64..127 are there"},
			{a, 256, 2048, 4, 512, 4 * 512, "half of band 0 and half of band 1 on rows 0..3: both valid"},
		}},
		{"partial rows of a block", 1 << 20, []step{
			{a, 0, 2048, 16, 512, 0, "rows 0..15"},
			{a, 16 * 2048, 2048, 16, 512, 0, "rows 16..31 of the same block were never loaded"},
			{a, 0, 2048, 32, 512, 32 * 512, "now the whole block is"},
		}},
		{"capacity", 64 << 10, []step{ // 128 lines: 4 blocks of 32 rows
			{a, 0, 2048, 32, 512, 0, "block 0"},
			{a, 32 * 2048, 2048, 32, 512, 0, "block 1"},
			{a, 64 * 2048, 2048, 32, 512, 0, "block 2"},
			{a, 96 * 2048, 2048, 32, 512, 0, "block 3: the cache is full"},
			{a, 0, 2048, 32, 512, 32 * 512, "block 0 again: most recently used now"},
			{a, 128 * 2048, 2048, 32, 512, 0, "block 4 evicts the least recently used, block 1"},
			{a, 32 * 2048, 2048, 32, 512, 0, "block 1 was evicted (and now evicts block 2)"},
			{a, 0, 2048, 32, 512, 32 * 512, "block 0 survived"},
		}},
		{"flat tensor", 1 << 20, []step{
			{b, 0, 0, 1, 64 << 10, 0, "a 64 KiB run"},
			{b, 1000, 0, 1, 4096, 4096, "inside it"},
			{b, 60 << 10, 0, 1, 8 << 10, 4 << 10, "half inside"},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newL2(tc.size, 512)
			for i, s := range tc.steps {
				if got := c.access(s.t, s.off, s.pitch, s.rows, s.rowB); got != s.wantHit {
					t.Errorf("step %d (%s): %d bytes hit, want %d", i, s.why, got, s.wantHit)
				}
				if c.used > c.capLines {
					t.Errorf("step %d: %d lines valid, capacity %d", i, c.used, c.capLines)
				}
			}
		})
	}
	if newL2(0, 512) != nil {
		t.Errorf("l2.size=0 must turn the L2 off")
	}
}

// In a run, a tile read twice is fetched from HBM once: the second read is
// served from L2 at l2.bw. With HBM made very slow the difference shows in
// the cycles; with the L2 off both reads pay HBM.
func TestL2RereadHits(t *testing.T) {
	src := `gm A : f32 [256, 1024] = zero
kernel k : aiv {
    tile %t : vec f32 [32, 1024] @ 0x0
    tload %t, @A[0, 0]
    pipe_barrier MTE2
    tload %t, @A[0, 0]
}
launch ranks=1 { run k blocks=1 }
`
	cycles := func(set ...string) int64 {
		prof := bodyProfile()
		for i := 0; i+1 < len(set); i += 2 {
			if err := prof.Set(set[i], set[i+1]); err != nil {
				t.Fatal(err)
			}
		}
		_, r, err := runObj(t, assemble(t, src), Options{Profile: prof})
		if err != nil {
			t.Fatal(err)
		}
		return r.Cycles
	}
	// 128 KiB per load; at 4 B/cycle of HBM a miss takes 32768 cycles.
	const miss = 32768
	with, without := cycles("gm.bw", "4"), cycles("gm.bw", "4", "l2.size", "0")
	if without < 2*miss {
		t.Errorf("no L2: %d cycles, want at least %d (two HBM reads)", without, 2*miss)
	}
	if with < miss || with > miss+miss/4 {
		t.Errorf("with L2: %d cycles, without %d: want one HBM read, not two", with, without)
	}
	// An L2 smaller than the tile cannot keep it.
	if small := cycles("gm.bw", "4", "l2.size", fmt.Sprint(64<<10)); small < 2*miss {
		t.Errorf("64 KiB L2: %d cycles, want two HBM reads", small)
	}
}

// Two cores read the same tile at once: the first misses and fetches it, the
// second finds the lines allocated but still in flight and waits for the
// fill (a hit under a miss), so both loads take the HBM time, while HBM
// carries the tile once.
func TestL2HitUnderMiss(t *testing.T) {
	src := `gm A : f32 [256, 1024] = zero
kernel k : aiv {
    tile %t : vec f32 [32, 1024] @ 0x0
    tload %t, @A[0, 0]
}
launch ranks=1 { run k blocks=2 }
`
	prof := bodyProfile()
	if err := prof.Set("gm.bw", "4"); err != nil {
		t.Fatal(err)
	}
	_, r, err := runObj(t, assemble(t, src), Options{Profile: prof})
	if err != nil {
		t.Fatal(err)
	}
	const miss = 32768 // 128 KiB at 4 B/cycle
	n := 0
	for _, p := range r.Pipes {
		if p.Pipe != "MTE2" {
			continue
		}
		n++
		if p.BusyCycles < miss {
			t.Errorf("%s MTE2 busy %d cycles: the load did not wait for the fill (%d)", p.Core, p.BusyCycles, miss)
		}
	}
	if n != 2 {
		t.Fatalf("%d MTE2 pipes ran, want 2", n)
	}
	if r.Cycles > miss+miss/4 {
		t.Errorf("%d cycles: HBM carried the tile twice", r.Cycles)
	}
}

// TPREFETCH_ASYNC warms L2: after wait_async a TLOAD of the window hits,
// while the prefetch itself paid the HBM read; without an L2 it warms
// nothing. The SDMA step reads the window and writes nothing.
func TestPrefetchAsyncWarmsL2(t *testing.T) {
	const prefetch = `gm A : f32 [256, 1024] = zero
kernel k : aiv {
    tile %t : vec f32 [32, 1024] @ 0x0
    %e = tprefetch_async @A[0, 0] #rows=32 #cols=1024
    wait_async %e
    tload %t, @A[0, 0]
}
launch ranks=1 { run k blocks=1 }
`
	const cold = `gm A : f32 [256, 1024] = zero
kernel k : aiv {
    tile %t : vec f32 [32, 1024] @ 0x0
    tload %t, @A[0, 0]
}
launch ranks=1 { run k blocks=1 }
`
	// 128 KiB per window; at 4 B/cycle of HBM a miss takes 32768 cycles.
	const miss = 32768
	tests := []struct {
		name, src string
		l2        string
		loadMiss  bool // the tload waits for HBM
		addSDMA   bool // the total adds the SDMA submission to the miss
	}{
		{"prefetched", prefetch, "", false, false},
		{"cold", cold, "", true, false},
		// Nothing to warm: the submission, then the tload's own miss.
		{"prefetch without L2", prefetch, "0", true, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			prof := bodyProfile()
			if err := prof.Set("gm.bw", "4"); err != nil {
				t.Fatal(err)
			}
			if tc.l2 != "" {
				if err := prof.Set("l2.size", tc.l2); err != nil {
					t.Fatal(err)
				}
			}
			rec := &recorder{kinds: map[EventKind]bool{EvExec: true}}
			_, r, err := runObj(t, assemble(t, tc.src), Options{Profile: prof, Observers: []Observer{rec}})
			if err != nil {
				t.Fatal(err)
			}
			var load, sdma []*Event
			for i := range rec.evs {
				e := &rec.evs[i]
				switch {
				case e.Op != nil && e.Op.Info.Op == asm.OpTload:
					load = append(load, e)
				case e.Step == "sdma":
					sdma = append(sdma, e)
				}
			}
			if len(load) != 1 {
				t.Fatalf("%d tload events, want 1", len(load))
			}
			if d := load[0].End - load[0].Start; (d >= miss) != tc.loadMiss {
				t.Errorf("tload took %d cycles; want a miss (≥ %d): %v", d, miss, tc.loadMiss)
			}
			total := int64(miss)
			if tc.addSDMA {
				total += prof.SDMACycles(128<<10, 0)
			}
			if r.Cycles < total || r.Cycles > total+total/4 {
				t.Errorf("%d cycles, want one HBM read of the window (%d)", r.Cycles, total)
			}
			if tc.src == prefetch {
				if len(sdma) != 1 || len(sdma[0].Accesses) == 0 {
					t.Fatalf("sdma events %v, want one with its accesses", sdma)
				}
				for _, a := range sdma[0].Accesses {
					if a.Write || a.Tensor == nil || a.Tensor.Name != "A" {
						t.Errorf("prefetch access %+v, want reads of A only", a)
					}
				}
			}
		})
	}
}
