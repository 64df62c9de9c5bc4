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
	// grid is, per GM tensor (TensorInfo.Index), the block geometry and
	// page table of its blocks, made on the tensor's first access.
	grid []l2Grid
	// blk holds the blocks of every page allocated so far, l2PageBlocks a
	// page: block pos of a grid is blk[page<<l2PageBits | pos&(l2PageBlocks-1)]
	// with page = pages[pos>>l2PageBits]. Page 0 is the LRU list's sentinel
	// (only its first block is used). A block is there when it has valid
	// lines: an eviction clears them, and the block keeps its slot.
	//
	// Blocks are kept in place of their tensor, not in a table of present
	// blocks reached through an index, because the walk's cost was its cache
	// misses: the index, then the block, each a line of its own (a CPU
	// profile put 55% of the walk's samples on those two loads). Now an
	// access's blocks (consecutive rows of one band) and their LRU neighbours
	// (usually the blocks walked beside them last time) share lines, and
	// pages are allocated as tensors are touched (issue 22, round 17).
	blk []l2Block
	// pending is, after access, the latest fill time of the blocks whose
	// valid lines it hit (a hit under a miss waits for the fill); filled
	// lists the blocks it brought new lines into, for stamp.
	pending int64
	filled  []int32
}

// l2Grid is one tensor's block geometry and page table.
type l2Grid struct {
	pitch     int64 // bytes per physical row; the line size for a flat tensor
	rowBlocks int64
	bands     int64
	pages     []int32 // block pos is in page pages[pos>>l2PageBits]; 0 before its first touch
}

// l2BlockRows is the number of rows (lines of one column band) a residency
// block covers: one bit each in l2Block.valid.
const l2BlockRows = 32

// l2PageBits sizes the pages of blocks: 512 blocks (12 KiB) cover 8 MiB of a
// tensor, so a page table is small and stays in cache, and a tensor touched
// in one corner costs only that corner's pages.
const (
	l2PageBits   = 9
	l2PageBlocks = 1 << l2PageBits
)

type l2Block struct {
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
	c.blk = make([]l2Block, l2PageBlocks) // page 0: the sentinel
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

// page allocates the page of g's blocks that holds pos and returns its
// number.
func (c *l2Cache) page(g *l2Grid, pos int64) int32 {
	n := int32(len(c.blk) >> l2PageBits)
	c.blk = append(c.blk, make([]l2Block, l2PageBlocks)...)
	g.pages[pos>>l2PageBits] = n
	return n
}

// insert brings block i in with the rows of mask (rect's touch of a block
// that is not there).
func (c *l2Cache) insert(i int32, mask uint32) {
	c.blk[i].valid, c.blk[i].ready = mask, 0
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
		b.valid = 0
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
	if g.pages == nil {
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
		g.pages = make([]int32, (g.bands*g.rowBlocks+l2PageBlocks-1)>>l2PageBits)
	}
	return g
}

// access looks up a rectangle of tensor t: rows rows of rowBytes bytes each,
// pitch bytes apart, starting at byte off, and returns the bytes that hit.
// Every line touched is valid afterwards (read- and write-allocate).
func (c *l2Cache) access(t *asm.TensorInfo, off, pitch, rows, rowBytes int64) (hit int64) {
	c.pending, c.filled = 0, c.filled[:0]
	if rows <= 0 || rowBytes <= 0 {
		return 0
	}
	g := c.geometry(t, pitch)
	if g.pitch != pitch || rowBytes > pitch {
		// The tensor is flat (or the access does not follow its rows): the
		// run's rows are its lines.
		n := rows * rowBytes
		if pitch > 0 && rowBytes <= pitch {
			n = (rows-1)*pitch + rowBytes
		}
		first, last := off/c.line, (off+n-1)/c.line
		lines := last - first + 1
		hit = c.rect(g, first*c.line, c.line, lines, c.line)
		// The partial first and last lines count as whole lines; scale back.
		if tot := lines * c.line; tot != n {
			hit = hit * n / tot
		}
		return hit
	}
	return c.rect(g, off, pitch, rows, rowBytes)
}

// stamp records that the lines the last access brought in arrive at time
// ready (a read's fill from HBM).
func (c *l2Cache) stamp(ready int64) {
	for _, i := range c.filled {
		if c.blk[i].ready < ready {
			c.blk[i].ready = ready
		}
	}
}

func (c *l2Cache) rect(g *l2Grid, off, pitch, rows, rowBytes int64) (hit int64) {
	r0, c0 := off/pitch, off%pitch
	c1 := c0 + rowBytes
	r1 := r0 + rows
	if r0 < 0 {
		return 0 // not a window's: the window checks reject negative offsets
	}
	// Blocks b0..b1 of each band: the first and the last take part of
	// their rows, the ones between all l2BlockRows (a tile of 128 rows is
	// four whole blocks per band); blocks past the tensor are left to the
	// window checks.
	b0, b1 := r0/l2BlockRows, (r1-1)/l2BlockRows
	b1 = min(b1, g.rowBlocks-1)
	for band := c0 / c.line; band*c.line < c1 && band < g.bands; band++ {
		lo, hi := max(c0, band*c.line), min(c1, (band+1)*c.line)
		rowBase := band * g.rowBlocks
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
			pos := rowBase + b
			pg := g.pages[pos>>l2PageBits]
			if pg == 0 {
				pg = c.page(g, pos)
			}
			i := pg<<l2PageBits | int32(pos&(l2PageBlocks-1))
			blk := c.blk
			bk := &blk[i]
			v := bk.valid
			if v == 0 {
				c.insert(i, mask)
				continue
			}
			n := bits.OnesCount32(v & mask)
			if n > 0 && bk.ready > c.pending {
				c.pending = bk.ready
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
	return hit
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
