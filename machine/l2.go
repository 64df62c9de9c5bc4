package machine

import (
	"math/bits"

	"github.com/ptoasm/ptoasm/asm"
)

// l2Cache is one die's L2 in front of its HBM (machine-facts §3.1: 192 MB per
// 910B1 die), shared by every core of the rank and by remote ranks' accesses
// to its GM. It answers which bytes of a transfer are already on chip: hits
// are served at l2.bw, misses also take HBM bandwidth (gm.bw).
//
// The lines are pto-isa perf-sim's (512 B, LRU, cache_model.hpp), but
// residency is kept per block of l2BlockRows lines, with one valid bit per
// line: a block holds the same 512-byte column band of l2BlockRows
// consecutive rows of one GM tensor, which is exactly what a tile transfer
// touches (a 128-row tile is 4 blocks per band, not 128 lines). Lines are
// validated one by one, so a first touch of a line is always a miss, and
// capacity counts valid lines; only the LRU order and eviction are per block
// (a block leaves whole). This keeps the 8-rank allgather_gemm's L2
// bookkeeping at a few million table lookups, about 8 % of its CPU profile.
//
// Approximations: a line is a 512-byte band of one tensor row, aligned to the
// row's start (a real line may straddle two rows when the row pitch is not a
// multiple of 512); NZ tensors, 1-D tensors and tensors of fewer than
// l2BlockRows rows are one flat run of bytes; the write-back of dirty lines is
// charged to HBM when the write happens; host resets leave the L2 alone.
type l2Cache struct {
	line     int64
	capLines int64
	used     int64
	// grid is, per GM tensor (TensorInfo.Index), the block table of its
	// geometry: grid[t].at[band*rowBlocks+rowBlock] is the block's index in
	// blk, 0 when absent. Dense slices, made on a tensor's first access, cost
	// 4 bytes per 16 KiB of tensor and no hashing.
	grid []l2Grid
	blk  []l2Block // index 0 is the LRU list's sentinel
	free []int32
	// pending is, after access, the latest fill time of the blocks whose
	// valid lines it hit (a hit under a miss waits for the fill); filled
	// lists the blocks it brought new lines into, for stamp.
	pending int64
	filled  []int32
	// evicted counts the blocks evictions dropped (again's test).
	evicted int64
	// again is the last access while the same rectangle, accessed again,
	// would find every line valid and leave the cache as it is.
	again l2Again
}

// l2Again lets an access that repeats the last one on the same L2 skip the
// walk: 21% of the 8-rank allgather_gemm's accesses do (cores loading the
// same tile one after another). After an access that evicted nothing, its
// blocks are valid on every row it touched and are the most recently used
// end of the list, in walk order; the same walk again hits every line, adds
// none (so evicts nothing: an over-full cache of one block stays so), and
// moves each block in turn to the end, which leaves the list as it was. So
// the repeat hits all the bytes the walk touches (all), and waits for the
// latest fill of its blocks (ready, raised by stamp when the first access
// brought lines in); nothing else changes the L2 in between, since every
// access replaces again (issue 22, round 17).
type l2Again struct {
	ok                         bool
	t                          int
	off, pitch, rows, rowBytes int64
	all, ready                 int64
}

// l2Grid is one tensor's block geometry and table.
type l2Grid struct {
	pitch     int64 // bytes per physical row; the line size for a flat tensor
	rowBlocks int64
	bands     int64
	at        []int32
}

// l2MaxRunLines bounds the lines a flat access walks as one run from its
// first byte to its last (512 MiB of 512-byte lines): past it, and past the
// L2's capacity, each row is walked alone. No tile of a real kernel spans
// so much; a small l2.size alone does not change the walk.
const l2MaxRunLines = 1 << 20

// l2BlockRows is the number of rows (lines of one column band) a residency
// block covers: one bit each in l2Block.valid.
const l2BlockRows = 32

type l2Block struct {
	grid       int32 // tensor index
	pos        int32 // index in its grid's table
	valid      uint32
	prev, next int32 // LRU list: blk[0].next is the least recently used
	// ready is when the last read that missed in this block has its lines
	// from HBM: a reader that hits them earlier waits until then.
	ready int64
}

func newL2(size, line int64) *l2Cache {
	if size <= 0 || line <= 0 || size < line {
		return nil
	}
	c := &l2Cache{line: line, capLines: size / line}
	c.blk = append(c.blk, l2Block{})
	return c
}

func (c *l2Cache) unlink(i int32) {
	b := &c.blk[i]
	c.blk[b.prev].next = b.next
	c.blk[b.next].prev = b.prev
}

// pushMRU puts block i at the most recently used end.
func (c *l2Cache) pushMRU(i int32) {
	last := c.blk[0].prev
	c.blk[i].prev, c.blk[i].next = last, 0
	c.blk[last].next = i
	c.blk[0].prev = i
}

// insert brings block pos of tensor t's grid g in with the rows of mask
// (rect's touch of a block that is not there).
func (c *l2Cache) insert(t int, g *l2Grid, pos int64, mask uint32) {
	var i int32
	if n := len(c.free); n > 0 {
		i = c.free[n-1]
		c.free = c.free[:n-1]
	} else {
		c.blk = append(c.blk, l2Block{})
		i = int32(len(c.blk) - 1)
	}
	c.blk[i].grid, c.blk[i].pos, c.blk[i].valid, c.blk[i].ready = int32(t), int32(pos), mask, 0
	g.at[pos] = i
	c.filled = append(c.filled, i)
	c.pushMRU(i)
	c.used += int64(bits.OnesCount32(mask))
	if c.used > c.capLines {
		c.evict(i)
	}
}

// evict drops least recently used blocks until the valid lines fit, but
// never block i, the one just touched.
func (c *l2Cache) evict(i int32) {
	for c.used > c.capLines {
		v := c.blk[0].next
		if v == i {
			break // the block just touched is all there is
		}
		c.unlink(v)
		b := &c.blk[v]
		c.used -= int64(bits.OnesCount32(b.valid))
		c.grid[b.grid].at[b.pos] = 0
		c.free = append(c.free, v)
		c.evicted++
	}
}

// geometry is tensor t's grid, made on first use. A tensor is kept as rows
// of its physical pitch when it has at least a block's worth of them, and
// otherwise (1-D tensors, NZ, very wide rows) as a flat run whose rows are
// its lines.
func (c *l2Cache) geometry(t *asm.TensorInfo, pitch int64) *l2Grid {
	if t.Index >= len(c.grid) {
		c.grid = append(c.grid, make([]l2Grid, t.Index+1-len(c.grid))...)
	}
	g := &c.grid[t.Index]
	if g.at == nil {
		size := max(t.Bytes, 1)
		if pitch <= 0 || size/pitch < l2BlockRows || size%pitch != 0 {
			pitch = 0
		}
		if pitch == 0 {
			g.pitch, g.bands = c.line, 1
		} else {
			g.pitch, g.bands = pitch, (pitch+c.line-1)/c.line
		}
		rows := (size + g.pitch - 1) / g.pitch
		g.rowBlocks = (rows + l2BlockRows - 1) / l2BlockRows
		g.at = make([]int32, g.bands*g.rowBlocks)
	}
	return g
}

// access looks up a rectangle of tensor t: rows rows of rowBytes bytes each,
// pitch bytes apart, starting at byte off, and returns the bytes that hit.
// Every line touched is valid afterwards (read- and write-allocate).
func (c *l2Cache) access(t *asm.TensorInfo, off, pitch, rows, rowBytes int64) (hit int64) {
	c.filled = c.filled[:0]
	if a := &c.again; a.ok && a.off == off && a.t == t.Index && a.pitch == pitch && a.rows == rows && a.rowBytes == rowBytes {
		c.pending = a.ready
		return a.all
	}
	c.pending = 0
	if rows <= 0 || rowBytes <= 0 {
		return 0
	}
	g := c.geometry(t, pitch)
	ev := c.evicted
	var all, ready int64
	if g.pitch != pitch || rowBytes > pitch {
		// The tensor is flat (or the access does not follow its rows): the
		// run's rows are its lines, the access one run from its first
		// byte to its last.
		n := rows * rowBytes
		if pitch > 0 && rowBytes <= pitch {
			n = (rows-1)*pitch + rowBytes
		}
		if (n-1)/c.line+2 > max(c.capLines, l2MaxRunLines) && pitch > 0 && rowBytes <= pitch {
			// A run longer than the whole L2 and than l2MaxRunLines
			// (rows far apart: a column of a tensor with a 2^31-element
			// stride) would walk and evict every block of it, 20 s and
			// 2 GB for one 4 KiB tload of a damaged kernel; its rows
			// are what it touches.
			for i := range rows {
				h, a, r := c.flatRun(t.Index, g, off+i*pitch, rowBytes)
				hit, all, ready = hit+h, all+a, max(ready, r)
			}
		} else {
			hit, all, ready = c.flatRun(t.Index, g, off, n)
		}
	} else {
		hit, all, ready = c.rect(t.Index, g, off, pitch, rows, rowBytes)
	}
	c.again = l2Again{ok: c.evicted == ev, t: t.Index, off: off, pitch: pitch, rows: rows, rowBytes: rowBytes, all: all, ready: ready}
	return hit
}

// flatRun is rect over the lines of the n bytes from off in flat grid g;
// the partial first and last lines count in part.
func (c *l2Cache) flatRun(t int, g *l2Grid, off, n int64) (hit, all, ready int64) {
	first, last := off/c.line, (off+n-1)/c.line
	lines := last - first + 1
	hit, all, ready = c.rect(t, g, first*c.line, c.line, lines, c.line)
	if tot := lines * c.line; tot != n {
		hit = hit * n / tot
		all = all * n / tot
	}
	return hit, all, ready
}

// stamp records that the lines the last access brought in arrive at time
// ready (a read's fill from HBM).
func (c *l2Cache) stamp(ready int64) {
	if len(c.filled) > 0 && c.again.ready < ready {
		c.again.ready = ready // the latest fill of again's blocks
	}
	for _, i := range c.filled {
		if c.blk[i].ready < ready {
			c.blk[i].ready = ready
		}
	}
}

// rect walks a rectangle of g's rows (access). It returns the bytes that
// hit, the bytes it touched (all of which the same walk again would hit), and
// the latest fill time of the blocks that were there already.
func (c *l2Cache) rect(t int, g *l2Grid, off, pitch, rows, rowBytes int64) (hit, all, ready int64) {
	r0, c0 := off/pitch, off%pitch
	c1 := c0 + rowBytes
	r1 := r0 + rows
	if r0 < 0 {
		return 0, 0, 0 // not a window's: the window checks reject negative offsets
	}
	// Blocks b0..b1 of each band: the first and the last take part of
	// their rows, the ones between all l2BlockRows (a tile of 128 rows is
	// four whole blocks per band); blocks past the tensor are left to the
	// window checks.
	b0, b1 := r0/l2BlockRows, (r1-1)/l2BlockRows
	b1 = min(b1, g.rowBlocks-1)
	// The rows the walk touches: r0..r1-1 within the tensor's blocks.
	touched := max(min(r1, g.rowBlocks*l2BlockRows)-r0, 0)
	for band := c0 / c.line; band*c.line < c1 && band < g.bands; band++ {
		lo, hi := max(c0, band*c.line), min(c1, (band+1)*c.line)
		all += touched * (hi - lo)
		at := g.at[band*g.rowBlocks : (band+1)*g.rowBlocks]
		hits := 0
		for b := b0; b <= b1; b++ {
			mask := ^uint32(0)
			if b == b0 {
				mask <<= uint(r0-b*l2BlockRows) & (l2BlockRows - 1)
			}
			if b == b1 {
				if end := r1 - b*l2BlockRows; end < l2BlockRows {
					mask &= ^uint32(0) >> (uint(l2BlockRows-end) & (l2BlockRows - 1))
				}
			}
			// Touch the block: mark the rows of mask read or written and
			// count those already valid. This is the model's innermost
			// step, so a hit moves its block to the most recently used
			// end with the list's pointers read once, and only a block
			// that gained lines can be over capacity.
			i := at[b]
			if i == 0 {
				c.insert(t, g, band*g.rowBlocks+b, mask)
				continue
			}
			blk := c.blk
			bk := &blk[i]
			v := bk.valid
			n := bits.OnesCount32(v & mask)
			r := bk.ready
			ready = max(ready, r)
			if n > 0 && r > c.pending {
				c.pending = r
			}
			hits += n
			if add := mask &^ v; add != 0 {
				bk.valid = v | mask
				c.used += int64(bits.OnesCount32(add))
				c.filled = append(c.filled, i)
			}
			if last := blk[0].prev; last != i {
				// unlink(i), pushMRU(i)
				prev, next := bk.prev, bk.next
				blk[prev].next = next
				blk[next].prev = prev
				bk.prev, bk.next = last, 0
				blk[last].next = i
				blk[0].prev = i
			}
			if c.used > c.capLines {
				c.evict(i)
			}
		}
		hit += int64(hits) * (hi - lo)
	}
	return hit, all, ready
}

// gmRect is the physical rectangle of a GM window: rows of rowBytes bytes,
// pitch apart, from byte off of the tensor's buffer.
func gmRect(a *Operand, winR, winC int64) (off, pitch, rows, rowBytes int64) {
	t := a.GM
	esz := int64(t.DType.Size())
	switch {
	case t.Layout == asm.LayoutDN && len(t.Shape) >= 2:
		// Column-major: a window column is a physical row of the tensor's rows.
		return a.Off, t.Shape[len(t.Shape)-2] * esz, winC, winR * esz
	case t.Layout == asm.LayoutND:
		return a.Off, a.RowStride, winR, winC * esz
	}
	return a.Off, 0, 1, winR * winC * esz
}
