package machine

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
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

// refL2 is the L2 model written plainly, line by line of its definition
// (l2.go): blocks of l2BlockRows rows of one column band, a valid bit per
// row, LRU order over blocks, eviction of the least recently used block
// (never the one just touched) while more lines are valid than fit. l2Cache
// must agree with it on every access (TestL2AgreesWithReference).
type refL2 struct {
	line, capLines, used int64
	lru                  []refBlock // least recently used first
	pending              int64
	keys                 []string // the blocks the access brought lines into
}

type refBlock struct {
	key   string
	valid uint32
	ready int64
}

func (c *refL2) find(key string) int {
	for i := range c.lru {
		if c.lru[i].key == key {
			return i
		}
	}
	return -1
}

func (c *refL2) touch(key string, mask uint32) (hits int) {
	var b refBlock
	if i := c.find(key); i >= 0 {
		b = c.lru[i]
		c.lru = append(c.lru[:i], c.lru[i+1:]...)
		hits = bits.OnesCount32(b.valid & mask)
		if hits > 0 && b.ready > c.pending {
			c.pending = b.ready
		}
		if add := mask &^ b.valid; add != 0 {
			c.keys = append(c.keys, key)
		}
		c.used += int64(bits.OnesCount32(mask &^ b.valid))
		b.valid |= mask
	} else {
		b = refBlock{key: key, valid: mask}
		c.used += int64(bits.OnesCount32(mask))
		c.keys = append(c.keys, key)
	}
	c.lru = append(c.lru, b)
	for c.used > c.capLines && len(c.lru) > 1 {
		c.used -= int64(bits.OnesCount32(c.lru[0].valid))
		c.lru = c.lru[1:]
	}
	return hits
}

// access is l2Cache.access for a tensor kept by rows of pitch bytes.
func (c *refL2) access(t, off, pitch, rows, rowBytes int64) (hit int64) {
	c.pending, c.keys = 0, c.keys[:0]
	// Touch in l2Cache's order: band by band, block by block, each block
	// with the mask of this access's rows in it.
	r0, c0 := off/pitch, off%pitch
	for band := c0 / c.line; band*c.line < c0+rowBytes && band*c.line < pitch; band++ {
		lo, hi := max(c0, band*c.line), min(c0+rowBytes, (band+1)*c.line)
		for blk := r0 / l2BlockRows; blk*l2BlockRows < r0+rows; blk++ {
			var mask uint32
			for r := max(r0, blk*l2BlockRows); r < min(r0+rows, (blk+1)*l2BlockRows); r++ {
				mask |= 1 << (r - blk*l2BlockRows)
			}
			hit += int64(c.touch(fmt.Sprint(t, band, blk), mask)) * (hi - lo)
		}
	}
	return hit
}

func (c *refL2) stamp(ready int64) {
	for _, k := range c.keys {
		if i := c.find(k); i >= 0 && c.lru[i].ready < ready {
			c.lru[i].ready = ready
		}
	}
}

// TestL2AgreesWithReference runs random tile-shaped accesses (whole and
// partial blocks, one to three column bands, two tensors, caches from a few
// blocks to many) through l2Cache and refL2 and compares the bytes hit, the
// wait for lines in flight, the valid lines and the LRU order.
func TestL2AgreesWithReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	ts := []*asm.TensorInfo{
		{Index: 0, Name: "A", DType: asm.F16, Shape: []int64{1024, 1024}, Bytes: 1024 * 2048},
		{Index: 1, Name: "B", DType: asm.F32, Shape: []int64{512, 768}, Bytes: 512 * 3072},
	}
	for _, size := range []int64{16 << 10, 64 << 10, 256 << 10, 4 << 20} {
		c := newL2(size, 512)
		ref := &refL2{line: 512, capLines: size / 512}
		for step := range 3000 {
			tn := rng.IntN(len(ts))
			ti := ts[tn]
			pitch := ti.Bytes / ti.Shape[0]
			rows := []int64{1, 7, 32, 64, 128, 256, 40}[rng.IntN(7)]
			r0 := rng.Int64N(ti.Shape[0] - rows + 1)
			if rng.IntN(2) == 0 {
				r0 = r0 / 32 * 32
			}
			rowBytes := []int64{512, 1024, 256, 1536, 100}[rng.IntN(5)]
			c0 := rng.Int64N(pitch-rowBytes+1) / 256 * 256
			off := r0*pitch + c0
			got, want := c.access(ti, off, pitch, rows, rowBytes), ref.access(int64(tn), off, pitch, rows, rowBytes)
			if got != want || c.pending != ref.pending || c.used != ref.used {
				t.Fatalf("size %d step %d: hit %d pending %d used %d, reference %d %d %d",
					size, step, got, c.pending, c.used, want, ref.pending, ref.used)
			}
			ready := int64(step)
			c.stamp(ready)
			ref.stamp(ready)
			var order []string
			for i := c.blk[0].next; i != 0; i = c.blk[i].next {
				b := &c.blk[i]
				g := &c.grid[b.grid]
				order = append(order, fmt.Sprint(b.grid, int64(b.pos)/g.rowBlocks, int64(b.pos)%g.rowBlocks, b.valid, b.ready))
			}
			var want2 []string
			for _, b := range ref.lru {
				want2 = append(want2, fmt.Sprintf("%s %d %d", b.key, b.valid, b.ready))
			}
			if fmt.Sprint(order) != fmt.Sprint(want2) {
				t.Fatalf("size %d step %d: LRU order\n%v\nreference\n%v", size, step, order, want2)
			}
		}
	}
}

// TestL2RepeatAgreesWithPlain checks the repeat shortcut (l2Again): random
// accesses, a third of them repeating the one before, some stamped, through
// an l2Cache that takes the shortcut and one that never does (its again is
// cleared before each access), on tensors kept by rows and flat ones, with
// caches small enough to evict, and a few accesses running past a tensor's
// last row. Both must agree on the bytes hit, the wait,
// the valid lines, what stamp raises and the LRU order (the plain walk itself
// is checked against refL2 by TestL2AgreesWithReference).
func TestL2RepeatAgreesWithPlain(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	ts := []*asm.TensorInfo{
		{Index: 0, Name: "A", DType: asm.F16, Shape: []int64{1024, 1024}, Bytes: 1024 * 2048},
		{Index: 1, Name: "B", DType: asm.F32, Shape: []int64{512, 768}, Bytes: 512 * 3072},
		{Index: 2, Name: "F", DType: asm.F32, Shape: []int64{1 << 18}, Bytes: 1 << 20},
	}
	for _, size := range []int64{8 << 10, 16 << 10, 64 << 10, 256 << 10, 4 << 20} {
		fast, plain := newL2(size, 512), newL2(size, 512)
		var tn int
		var off, pitch, rows, rowBytes int64
		repeats := 0
		for step := range 3000 {
			if step == 0 || rng.IntN(3) != 0 {
				tn = rng.IntN(len(ts))
				ti := ts[tn]
				rows = []int64{1, 7, 32, 64, 128, 256, 40}[rng.IntN(7)]
				if tn == 2 {
					rows = 1 + rng.Int64N(8)
					pitch, rowBytes = 0, []int64{512, 4096, 1000, 16384}[rng.IntN(4)]
					off = rng.Int64N(ti.Bytes - rows*rowBytes + 1)
				} else {
					pitch = ti.Bytes / ti.Shape[0]
					r0 := rng.Int64N(ti.Shape[0] - rows + 1)
					if rng.IntN(2) == 0 {
						r0 = r0 / 32 * 32
					}
					if rng.IntN(10) == 0 {
						r0 = ti.Shape[0] - 1 - rng.Int64N(min(rows, 40)) // running past the end, which rect clips
					}
					rowBytes = []int64{512, 1024, 256, 1536, 100}[rng.IntN(5)]
					off = r0*pitch + rng.Int64N(pitch-rowBytes+1)/256*256
				}
			} else if fast.again.ok {
				repeats++
			}
			ti := ts[tn]
			plain.again = l2Again{}
			got, want := fast.access(ti, off, pitch, rows, rowBytes), plain.access(ti, off, pitch, rows, rowBytes)
			if got != want || fast.pending != plain.pending || fast.used != plain.used || len(fast.filled) != len(plain.filled) {
				t.Fatalf("size %d step %d: hit %d pending %d used %d filled %d, plain %d %d %d %d",
					size, step, got, fast.pending, fast.used, len(fast.filled), want, plain.pending, plain.used, len(plain.filled))
			}
			if rng.IntN(2) == 0 {
				fast.stamp(int64(step))
				plain.stamp(int64(step))
			}
			// Both number their blocks alike (the same inserts and evictions
			// in the same order), so their lists compare block by block.
			i, j := fast.blk[0].next, plain.blk[0].next
			for ; i != 0 && i == j; i, j = fast.blk[i].next, plain.blk[j].next {
				if fast.blk[i] != plain.blk[j] {
					t.Fatalf("size %d step %d: block %d is %+v, plain %+v", size, step, i, fast.blk[i], plain.blk[j])
				}
			}
			if i != j {
				t.Fatalf("size %d step %d: LRU order differs at block %d (plain %d)", size, step, i, j)
			}
		}
		if repeats < 100 {
			t.Errorf("size %d: only %d accesses took the shortcut", size, repeats)
		}
	}
}

// TestL2SparseFlatAccess: a tile whose rows lie 8 GiB apart in a flat tensor
// (a damaged kernel's column stride of 2^31 elements) touches its 32 rows'
// lines, not every line from its first byte to its last: that walk made
// 10^7 blocks (and, on a 2 TB tensor, 20 s and 2 GB for one tload).
func TestL2SparseFlatAccess(t *testing.T) {
	c := newL2(192<<20, 512)
	pitch := int64(8 << 30)
	// Not a whole number of rows: the tensor is kept flat.
	ti := &asm.TensorInfo{Index: 0, Name: "A", DType: asm.F32, Shape: []int64{64, 1 << 31}, Bytes: 64*pitch + 4}
	if hit := c.access(ti, 0, pitch, 32, 128); hit != 0 {
		t.Errorf("first access hit %d bytes", hit)
	}
	if n := len(c.blk) - 1; n > 32 {
		t.Errorf("%d blocks for 32 rows of 128 bytes", n)
	}
	if c.used != 32 {
		t.Errorf("%d valid lines, want 32", c.used)
	}
	c.again = l2Again{}
	if hit := c.access(ti, 0, pitch, 32, 128); hit != 32*128 {
		t.Errorf("second access hit %d bytes, want %d", hit, 32*128)
	}
}
