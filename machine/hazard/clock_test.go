package hazard

import (
	"math/rand/v2"
	"testing"
)

// TestClockMatchesDense runs random sequences of clock operations on shared
// (copy-on-write) clocks and on plain slices side by side: sharing blocks
// must never let one clock's write show in another. A block a clock took
// from another must not be written in place (its group's made bit clear,
// vgroup.take), nor one a copy or release still holds (freeze), and the
// joins that take blocks unread (certAllBut, certShared) must give the
// dense join.
func TestClockMatchesDense(t *testing.T) {
	for _, tc := range []struct {
		name  string
		width int32 // components in use: within one block, a few, many
		seed  uint64
	}{
		{"one block", blk / 2, 1},
		{"a few blocks", blk * 5, 2},
		{"many blocks", blk*40 + 3, 3},
		{"many groups", blk*grp*6 + 5, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(tc.seed, 0))
			const nc = 6
			var cs [nc]vclock
			var ref [nc][]uint32
			at := func(r []uint32, i int32) uint32 {
				if int(i) < len(r) {
					return r[i]
				}
				return 0
			}
			grow := func(r []uint32, n int32) []uint32 {
				for int32(len(r)) < n {
					r = append(r, 0)
				}
				return r
			}
			for step := range 20000 {
				x, y := rng.IntN(nc), rng.IntN(nc)
				i := rng.Int32N(tc.width)
				v := rng.Uint32N(50)
				var op string
				switch rng.IntN(10) {
				case 0, 1:
					op = "raise"
					raise(&cs[x], i, v)
					if at(ref[x], i) < v {
						ref[x] = grow(ref[x], i+1)
						ref[x][i] = v
					}
				case 2:
					op = "set"
					cs[x].set(i, v)
					if at(ref[x], i) != v {
						ref[x] = grow(ref[x], i+1)
						ref[x][i] = v
					}
				case 3, 4:
					if x == y {
						continue
					}
					op = "join"
					// Half the joins merge into a home block, written
					// in place when x owns it (an agent's own core's).
					home := -1
					if rng.IntN(2) == 0 {
						home = int(i >> blkBits)
					}
					changed, _ := adoptAbove(&cs[x], &cs[y], nil, home, nil)
					want := false
					ref[x] = grow(ref[x], int32(len(ref[y])))
					for k, w := range ref[y] {
						if w > ref[x][k] {
							ref[x][k], want = w, true
						}
					}
					if changed != want {
						t.Fatalf("step %d: join reported changed=%v, want %v", step, changed, want)
					}
				case 5:
					if x == y {
						continue
					}
					op = "copy"
					cs[x].copyFrom(&cs[y])
					ref[x] = append([]uint32(nil), ref[y]...)
				case 6:
					op = "truncate"
					cs[x].truncate()
					ref[x] = nil
				case 7:
					op = "reset"
					cs[x].reset()
					clear(ref[x])
				case 8:
					// A join from a source known to hold at least the
					// destination outside one block (acquireAbove): y
					// takes x, moves on, and x takes y back unread but
					// for that block.
					if x == y {
						continue
					}
					op = "above"
					join(&cs[y], &cs[x])
					raise(&cs[y], i, v)
					ref[y] = grow(ref[y], max(int32(len(ref[x])), i+1))
					for k, w := range ref[x] {
						ref[y][k] = max(ref[y][k], w)
					}
					ref[y][i] = max(ref[y][i], v)
					ct := cert{kind: certAllBut, nkeep: 1}
					ct.keep[0] = rng.Int32N(tc.width) >> blkBits
					adoptAbove(&cs[x], &cs[y], &ct, int(ct.keep[0]), nil)
					ref[x] = append(ref[x][:0], ref[y]...)
				case 9:
					// A signal wait (acquireSig): x joins a release of
					// y, y grows, and x joins y's next release taking
					// the blocks it still shares with the first unread.
					if x == y {
						continue
					}
					op = "shared"
					rel := cs[y].clone()
					relRef := append([]uint32(nil), ref[y]...)
					join(&cs[x], &rel)
					ref[x] = grow(ref[x], int32(len(relRef)))
					for k, w := range relRef {
						ref[x][k] = max(ref[x][k], w)
					}
					for range 1 + rng.IntN(4) {
						j := rng.Int32N(tc.width)
						w := rng.Uint32N(50)
						raise(&cs[y], j, w)
						ref[y] = grow(ref[y], j+1)
						ref[y][j] = max(ref[y][j], w)
						// x moves on too: writes of its own blocks.
						if rng.IntN(2) == 0 {
							raise(&cs[x], i, w)
							ref[x] = grow(ref[x], i+1)
							ref[x][i] = max(ref[x][i], w)
						}
					}
					home := -1
					if rng.IntN(2) == 0 {
						home = int(i >> blkBits)
					}
					adoptAbove(&cs[x], &cs[y], &cert{kind: certShared, prev: rel.g}, home, nil)
					ref[x] = grow(ref[x], int32(len(ref[y])))
					for k, w := range ref[y] {
						ref[x][k] = max(ref[x][k], w)
					}
				}
				for c := range cs {
					for k := range tc.width + 1 {
						if g, w := get(cs[c], k), at(ref[c], k); g != w {
							t.Fatalf("step %d (%s on clock %d from %d): clock %d component %d is %d, want %d", step, op, x, y, c, k, g, w)
						}
					}
				}
			}
		})
	}
}
