package hazard

import (
	"slices"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
)

// TestGMIndexRefine: an index has granules no longer than the shortest
// access it served, at most 2^gmIndexBits entries a rank whatever the
// tensor's size, and entries for no rank past the budget.
func TestGMIndexRefine(t *testing.T) {
	const G = int64(1) << 30
	for _, tc := range []struct {
		name      string
		size      int64
		lens      []int64 // the accesses' lengths, in order, by rank 0
		ranks     []int   // then one access by each of these ranks
		used      int     // entries other indexes hold
		ok        bool    // the last access has an entry
		shift     uint8
		per       int
		usedAfter int
	}{
		{"a ring's chunks", 12 << 10, []int64{32}, nil, 0, true, 5, 384, 384},
		{"an odd length", 12 << 10, []int64{48}, nil, 0, true, 5, 384, 384},
		{"finer on a shorter access", 12 << 10, []int64{256, 32}, nil, 0, true, 5, 384, 384},
		{"not coarser on a longer one", 12 << 10, []int64{32, 4096}, nil, 0, true, 5, 384, 384},
		{"a 4 GiB tensor", 4 * G, []int64{32}, nil, 0, true, 18, 1 << 14, 1 << 14},
		{"a 512 GiB tensor", 512 * G, []int64{2}, nil, 0, true, 25, 1 << 14, 1 << 14},
		{"one byte", 1, []int64{1}, nil, 0, true, 0, 1, 1},
		{"ranks up to the highest", 12 << 10, []int64{32}, []int{7, 3}, 0, true, 5, 384, 8 * 384},
		{"past the budget", 12 << 10, []int64{32}, nil, gmIndexBudget - 100, false, 5, 384, gmIndexBudget - 100},
		{"a rank past the budget", 12 << 10, []int64{32}, []int{1, 5}, gmIndexBudget - 1000, false, 5, 384, gmIndexBudget - 1000 + 768},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cc := &cellCache{gmEntries: tc.used}
			ix := &gmTensorIx{bytes: tc.size}
			access := func(rank int, n int64) bool {
				if ix.per == 0 || n>>ix.shift == 0 {
					if !cc.refine(ix, n) {
						return false
					}
				}
				return rank*ix.per < len(ix.cells) || cc.grow(ix, rank, 0)
			}
			ok := false
			for _, n := range tc.lens {
				ok = access(0, n)
			}
			for _, r := range tc.ranks {
				ok = access(r, 32)
			}
			if ok != tc.ok || ix.shift != tc.shift || ix.per != tc.per || cc.gmEntries != tc.usedAfter {
				t.Errorf("ok %v, shift %d, %d a rank, %d in all; want %v, %d, %d, %d", ok, ix.shift, ix.per, cc.gmEntries, tc.ok, tc.shift, tc.per, tc.usedAfter)
			}
			if tc.ranks == nil && !tc.ok && (access(0, 32) || !ix.none) {
				t.Error("a tensor the budget refused is asked again")
			}
		})
	}
}

// TestGMIndexReserve: growing an index for a rank makes room for every
// placed rank at once when the budget would let them all in, and otherwise
// grows as append does; either way only the entries made (up to the rank)
// count against the budget, and they are all empty.
func TestGMIndexReserve(t *testing.T) {
	const per = 384
	for _, tc := range []struct {
		name    string
		used    int // entries other indexes hold
		rank    int // the first access's rank
		ranks   int // ranks placed
		reserve bool
	}{
		{"all ranks", 0, 0, 384, true},
		{"from a middle rank", 0, 100, 384, true},
		{"the last rank (all it needs)", 0, 383, 384, true},
		{"no ranks known", 0, 3, 0, false},
		{"all ranks past the budget", gmIndexBudget - 100*per, 0, 384, false},
		{"all ranks just in the budget", gmIndexBudget - 384*per, 0, 384, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cc := &cellCache{gmEntries: tc.used}
			ix := &gmTensorIx{bytes: 12 << 10}
			if !cc.refine(ix, 32) || ix.per != per {
				t.Fatalf("no index of %d a rank: %d", per, ix.per)
			}
			if !cc.grow(ix, tc.rank, tc.ranks) {
				t.Fatal("the budget refused the rank")
			}
			k := (tc.rank + 1) * per
			if len(ix.cells) != k || cc.gmEntries != tc.used+k {
				t.Errorf("%d entries, %d in all; want %d, %d", len(ix.cells), cc.gmEntries, k, tc.used+k)
			}
			if got := cap(ix.cells) == tc.ranks*per; got != tc.reserve {
				t.Errorf("cap %d with %d ranks placed: reserved %v, want %v", cap(ix.cells), tc.ranks, got, tc.reserve)
			}
			if slices.ContainsFunc(ix.cells[:cap(ix.cells)], func(c *cell) bool { return c != nil }) {
				t.Error("a new entry is not empty")
			}
		})
	}
}

// TestGMReadOnlyInit: a read-only read skips the shadow only while its
// tensor is wholly initialised there; a poison host write over any of its
// bytes, through whatever tensor or none, takes that back. The
// self-checks (checkGMInitialised) run on every skip.
func TestGMReadOnlyInit(t *testing.T) {
	checkShortcuts = true
	defer func() { checkShortcuts = false }()
	ro := &asm.TensorInfo{Name: "R", Index: 0, Class: asm.TensorGM, Bytes: 0x1000}
	alias := &asm.TensorInfo{Name: "Q", Index: 1, Class: asm.TensorGM, Bytes: 0x1000}
	const base = 0x10000
	type hw struct {
		t      *asm.TensorInfo
		lo, hi int64
		poison bool
	}
	for _, tc := range []struct {
		name   string
		writes []hw
		lo, hi int64 // the read
		uninit bool
		skip   bool // the read skips the shadow
	}{
		{"initialised", []hw{{ro, base, base + 0x1000, false}}, base, base + 0x100, false, true},
		{"poisoned whole", []hw{{ro, base, base + 0x1000, true}}, base, base + 0x100, true, false},
		{"poisoned in part, no tensor", []hw{{ro, base, base + 0x1000, false}, {nil, base + 0x80, base + 0x90, true}}, base, base + 0x100, true, false},
		{"poisoned through an alias", []hw{{ro, base, base + 0x1000, false}, {alias, base + 0x800, base + 0x1800, true}}, base + 0xf00, base + 0x1000, true, false},
		{"poison elsewhere", []hw{{ro, base, base + 0x1000, false}, {alias, base + 0x1000, base + 0x2000, true}}, base, base + 0x1000, false, true},
		{"poisoned, then written whole", []hw{{ro, base, base + 0x1000, true}, {ro, base, base + 0x1000, false}}, base, base + 0x1000, false, true},
		{"a read past the end", []hw{{ro, base, base + 0x1000, false}}, base + 0xf00, base + 0x1100, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p prog
			s := newSim(Options{})
			for _, w := range tc.writes {
				e := machine.Event{Kind: machine.EvHostWrite, Agent: machine.Agent{Rank: 0, Core: -1},
					Accesses: []machine.Access{gmAcc(w.t, 0, w.lo, w.hi, true)}}
				if w.poison {
					e.Word = "poison"
				}
				s.ev(e)
			}
			acc := gmAcc(ro, 0, tc.lo, tc.hi, false)
			acc.ReadOnly = true
			before := gmInitChecks
			s.exec(ag(0, 0, asm.PipeMTE2), p.op("tload", 1, asm.PipeMTE2), nil, acc)
			got := false
			for _, f := range s.d.Findings() {
				got = got || f.Kind == KindUninitRead
			}
			if got != tc.uninit || (gmInitChecks > before) != tc.skip {
				t.Errorf("uninit-read %v, skipped %v; want %v, %v", got, gmInitChecks > before, tc.uninit, tc.skip)
			}
		})
	}
}

// TestGMIndexSelfChecked lints every program, and the ring at 40 ranks,
// with every index hit checked against the page's own lookup: with the
// index as shipped, and with granules so coarse that a tensor's accesses
// share two entries and evict each other. Findings are those of a run
// with no index at all.
func TestGMIndexSelfChecked(t *testing.T) {
	objs := map[string]*asm.Object{"ring_final at 40 ranks": assembleProgram(t, "allreduce_ring/ring_final", asm.Define{Name: "RANKS", Value: "40"})}
	eachProgram(t, func(name string, obj *asm.Object) { objs[name] = obj })
	lintAll := func() map[string]string {
		out := map[string]string{}
		for name, obj := range objs {
			out[name] = lintTiming(t, obj, true)
		}
		return out
	}
	oldBits, oldBudget := gmIndexBits, gmIndexBudget
	defer func() { gmIndexBits, gmIndexBudget = oldBits, oldBudget }()
	gmIndexBudget = 0
	want := lintAll()
	checkShortcuts = true
	defer func() { checkShortcuts = false }()
	for _, bits := range []int{oldBits, 1} {
		gmIndexBits, gmIndexBudget, gmIndexChecks, gmInitChecks = bits, oldBudget, 0, 0
		got := lintAll()
		for name := range objs {
			if got[name] != want[name] {
				t.Errorf("%d index bits: %s: findings differ from those without the index:\n%s\nwant\n%s", bits, name, got[name], want[name])
			}
		}
		t.Logf("%d index bits: %d hits and %d initialised reads checked", bits, gmIndexChecks, gmInitChecks)
		if gmIndexChecks < 2000 || gmInitChecks < 1000 {
			t.Errorf("%d index bits: only %d index hits and %d initialised reads checked", bits, gmIndexChecks, gmInitChecks)
		}
	}
}

// TestGMIndexHits: the ring's chunks are found through the index, all but
// each chunk's first access (a rank's Scratch and Out have 64 chunks each),
// which makes its cell.
func TestGMIndexHits(t *testing.T) {
	const ranks = 64
	d := runLint(t, assembleProgram(t, "allreduce_ring/ring_final", asm.Define{Name: "RANKS", Value: "64"}), true)
	hits, misses := d.cells.gmHits, d.cells.gmMisses
	t.Logf("%d hits, %d misses", hits, misses)
	if hits+misses < 30000 || misses > ranks*2*ranks {
		t.Errorf("%d hits and %d misses of the GM chunk index: want the ring's 32 000 chunk accesses, one miss a chunk", hits, misses)
	}
}

// TestGMIndexSharedEntry: accesses of one tensor that start in one
// granule share its entry and take turns in it; each finds its own cell
// (checked by checkShortcuts against the page's lookup).
func TestGMIndexSharedEntry(t *testing.T) {
	checkShortcuts = true
	defer func() { checkShortcuts = false }()
	for _, tc := range []struct {
		name   string
		ranges [][2]int64 // offsets in the tensor, in order, each accessed twice
	}{
		{"one start, two lengths", [][2]int64{{0, 64}, {0, 32}, {0, 64}, {0, 32}}},
		{"one granule, two starts", [][2]int64{{0, 48}, {16, 48}, {0, 48}, {16, 48}}},
		{"shorter, then longer", [][2]int64{{64, 96}, {64, 192}, {64, 96}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p prog
			s := newSim(Options{})
			const base = 0x10000
			s.hostInit(gmA, 0, base)
			before := gmIndexChecks
			for n, q := range tc.ranges {
				op := p.op("tload", n+1, asm.PipeMTE2)
				for range 2 {
					s.exec(ag(0, 0, asm.PipeMTE2), op, nil, gmAcc(gmA, 0, base+q[0], base+q[1], false))
				}
			}
			if gmIndexChecks == before {
				t.Error("no access hit the index")
			}
		})
	}
}

// gmReadRoom grows a full read list of a GM cell, from its second entry,
// to maxPrior+1 entries at once, keeping every entry in order, and leaves
// any other list (local memory, writes, lists with room or already past
// maxPrior, empty ones) as append would grow it.
func TestGMReadRoom(t *testing.T) {
	full := func(n int) []rec {
		l := make([]rec, n)
		for i := range l {
			l[i] = rec{agent: int32(i + 1), epoch: uint32(10 * i)}
		}
		return l
	}
	read := &rec{agent: 7}
	write := &rec{agent: 7, write: true}
	gm := &machine.Access{Space: asm.GM}
	ub := &machine.Access{Space: asm.UB}
	for _, tc := range []struct {
		name    string
		list    []rec
		r       *rec
		acc     *machine.Access
		wantCap int // 0: the list itself, unchanged
	}{
		{"GM read, second entry", full(1), read, gm, maxPrior + 1},
		{"GM read, fifth entry", full(4), read, gm, maxPrior + 1},
		{"GM read, last prior", full(maxPrior), read, gm, maxPrior + 1},
		{"GM read, past maxPrior", full(maxPrior + 1), read, gm, 0},
		{"GM read, room left", append(make([]rec, 0, 4), full(2)...), read, gm, 0},
		{"GM read, empty", nil, read, gm, 0},
		{"GM write", full(1), write, gm, 0},
		{"local read", full(1), read, ub, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := gmReadRoom(tc.list, tc.r, tc.acc)
			if !slices.Equal(got, tc.list) {
				t.Fatalf("entries %v, want %v", got, tc.list)
			}
			switch {
			case tc.wantCap == 0 && (cap(got) != cap(tc.list) || len(got) > 0 && &got[0] != &tc.list[0]):
				t.Errorf("the list was reallocated (cap %d, was %d)", cap(got), cap(tc.list))
			case tc.wantCap != 0 && cap(got) != tc.wantCap:
				t.Errorf("cap %d, want %d", cap(got), tc.wantCap)
			}
		})
	}
}
