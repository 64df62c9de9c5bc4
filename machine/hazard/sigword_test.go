package hazard

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
)

// A slab hands out distinct zero records, as new would, each on its own
// bytes, and cells, signal boxes, histories and table words that start on
// a cache line (slabBytes).
func TestSigSlabRecords(t *testing.T) {
	var s sigSlab
	r := rec{agent: 3, epoch: 7}
	cases := []struct {
		name  string
		get   func() unsafe.Pointer
		size  uintptr
		align uintptr
	}{
		{"cell", func() unsafe.Pointer { return unsafe.Pointer(s.cells.get()) }, unsafe.Sizeof(cell{}), 64},
		{"sigBox", func() unsafe.Pointer { return unsafe.Pointer(s.sigBoxes.get()) }, unsafe.Sizeof(sigBox{}), 64},
		{"sigHist", func() unsafe.Pointer { return unsafe.Pointer(s.hist()) }, unsafe.Sizeof(sigHist{}), 64},
		{"recBox", func() unsafe.Pointer { return unsafe.Pointer(s.boxes.get()) }, unsafe.Sizeof(recBox{}), 8},
		{"sigWord", func() unsafe.Pointer { return unsafe.Pointer(s.words.get()) }, unsafe.Sizeof(sigWord{}), 64},
	}
	// A table word is three lines (sigWord).
	if n := unsafe.Sizeof(sigWord{}); n != 192 {
		t.Errorf("sigWord is %d bytes, want 192", n)
	}
	for _, tc := range cases {
		seen := map[unsafe.Pointer]bool{}
		// More than one array's worth, so a refill is crossed.
		n := 2*slabBytes/int(tc.size) + 3
		for i := range n {
			p := tc.get()
			if seen[p] {
				t.Fatalf("%s %d: handed out twice", tc.name, i)
			}
			seen[p] = true
			b := unsafe.Slice((*byte)(p), tc.size)
			for k, x := range b {
				if x != 0 {
					t.Fatalf("%s %d: byte %d is %d, want a zero record", tc.name, i, k, x)
				}
			}
			if uintptr(p)%tc.align != 0 {
				t.Fatalf("%s %d at %#x: not on a %d-byte boundary", tc.name, i, uintptr(p), tc.align)
			}
			// Dirty it: a later record must not see these bytes.
			for k := range b {
				b[k] = 0xff
			}
		}
	}
	if l := s.addBox(&r); len(l.adds) != 1 || l.adds[0] != r || l.unin != nil {
		t.Fatalf("addBox holds %v, want just %v", l.adds, r)
	}
}

// roomFor leaves a page's free list at least the cells a span can take,
// and newCell hands them out as new cells of the asked bounds.
func TestSigSlabRoomFor(t *testing.T) {
	var s sigSlab
	m := &imap{}
	for w := int64(0); w < 40; w += 4 {
		s.roomFor(m)
		if len(m.free) < sigCellsPerSpan {
			t.Fatalf("word %d: %d free cells, want at least %d", w, len(m.free), sigCellsPerSpan)
		}
		i, j := m.span(w, w+4)
		if j-i != 1 || m.cells[i].lo != w || m.cells[i].hi != w+4 || m.cells[i].written {
			t.Fatalf("word %d: span gave %d cells, the first [%d, %d) written %v", w, j-i, m.cells[i].lo, m.cells[i].hi, m.cells[i].written)
		}
	}
}

// TestWordTablesKeepFindings drives one detector with signal tensors in
// word tables (region.tab) and one without through the same random events
// (notifies, waits and stores of single words, which a table serves, and
// accesses of several words, tensorless accesses across the tensor's edge,
// host writes and run boundaries, which turn a table back into cells at
// random points), and requires the same findings and the same reads-from
// fingerprint, with the self-checks on.
func TestWordTablesKeepFindings(t *testing.T) {
	checkShortcuts = true
	defer func() { checkShortcuts = false }()
	kept, turned := 0, 0
	for seed := range uint64(120) {
		on, k, tu := wordTableRun(t, seed, true)
		off, _, _ := wordTableRun(t, seed, false)
		if on != off {
			t.Fatalf("seed %d: with tables\n%s\nwithout\n%s", seed, on, off)
		}
		kept, turned = kept+k, turned+tu
	}
	if kept < 20 || turned < 20 {
		t.Fatalf("%d runs kept a table to the end, %d turned one with words into cells: the test no longer covers both", kept, turned)
	}
	t.Logf("%d runs kept a table to the end, %d turned one with words into cells", kept, turned)
}

// wordTableRun runs seed's events with tables on or off and returns the
// findings and fingerprint as text, how many ranks kept a table to the end
// and how many tables with touched words were turned into cells.
func wordTableRun(t *testing.T, seed uint64, tables bool) (string, int, int) {
	t.Helper()
	defer func(old bool) { useWordTables = old }(useWordTables)
	useWordTables = tables
	rng := rand.New(rand.NewPCG(seed, 99))
	sig := &asm.TensorInfo{Name: "Sg", Index: 3, Class: asm.TensorSignal, DType: asm.I32, Bytes: 64}
	data := &asm.TensorInfo{Name: "Dt", Index: 4, Class: asm.TensorGM, DType: asm.F32, Bytes: 64}
	const base, ranks = 0x3000, 3
	s := newSim(Options{})
	p := &prog{}
	nt := p.op("tnotify", 10, asm.PipeS)
	st := p.op("tstore", 12, asm.PipeMTE3)
	ld := p.op("tload", 13, asm.PipeMTE2)
	host := func(r int32) {
		s.ev(machine.Event{Kind: machine.EvHostWrite, Agent: machine.Agent{Rank: r, Core: -1},
			Accesses: []machine.Access{gmAcc(sig, r, base, base+sig.Bytes, true), gmAcc(data, r, base+sig.Bytes, base+sig.Bytes+data.Bytes, true)}})
	}
	for r := range int32(ranks) {
		host(r)
	}
	s.ev(machine.Event{Kind: machine.EvRunStart})
	word := func(r int32, n int64) machine.Access {
		lo := base + 4*rng.Int64N(16-n+1)
		return gmAcc(sig, r, lo, lo+4*n, false)
	}
	turned := 0
	pure := seed%3 == 0 // single words alone: the tables stay
	for step := range 400 {
		r, q := int32(rng.IntN(ranks)), int32(rng.IntN(ranks))
		core := int32(rng.IntN(2))
		n := int64(1)
		if rng.IntN(12) == 0 && !pure {
			n = 2 + rng.Int64N(3)
		}
		probe := gmAcc(sig, q, base, base+4, false)
		sm := s.d.shadowFor(&probe)
		had := sm.tabs > 0 && slices.ContainsFunc(sm.regions, func(g region) bool {
			return g.tab != nil && g.tab.touched()
		})
		k := rng.IntN(100)
		if pure && k >= 84 && k < 95 {
			k -= 84
		}
		switch {
		case k < 35: // a notify of rank q's words by rank r
			acc := word(q, n)
			w := "add"
			if rng.IntN(6) == 0 {
				w = "set"
			}
			if rng.IntN(15) == 0 && !pure {
				acc.Rows, acc.Pitch = 2, 8
			}
			s.ev(machine.Event{Kind: machine.EvNotify, Agent: ag(r, core, asm.PipeS), Op: nt, Word: w, Value: 1 + rng.Int64N(2), Accesses: []machine.Access{acc}})
		case k < 70: // a satisfied wait of rank q's scalar
			acc := word(q, n)
			s.ev(machine.Event{Kind: machine.EvSignalWait, Agent: ag(q, core, asm.PipeS), Op: twaitGE(p, 11+step%3, 1, false),
				Value: rng.Int64N(4), Want: 1 + rng.Int64N(2), Accesses: []machine.Access{acc}})
		case k < 84: // a store (plain or atomic) or load of signal words by a pipe
			acc := word(q, n)
			acc.Write = rng.IntN(3) > 0
			acc.Atomic = acc.Write && rng.IntN(3) == 0
			op, pipe := st, asm.PipeMTE3
			if !acc.Write {
				op, pipe = ld, asm.PipeMTE2
			}
			s.issue(r, core, op, pipe)
			s.exec(ag(r, core, pipe), op, []int64{int64(step)}, acc)
		case k < 90: // a tensorless access, across the signal tensor's edge or inside it
			lo := base + rng.Int64N(sig.Bytes+data.Bytes-8)
			acc := machine.Access{Space: asm.GM, Rank: q, Core: -1, Lo: lo, Hi: lo + 4 + rng.Int64N(60), Write: rng.IntN(2) == 0}
			s.issue(r, core, st, asm.PipeMTE3)
			s.exec(ag(r, core, asm.PipeMTE3), st, []int64{int64(step)}, acc)
		case k < 95: // a host write between runs
			s.ev(machine.Event{Kind: machine.EvRunEnd})
			if rng.IntN(2) == 0 {
				host(q)
			}
			s.ev(machine.Event{Kind: machine.EvRunStart})
		default: // a barrier between a core's pipes and its scalar
			s.barrier(r, core, asm.PipeALL, p.op("pipe_barrier", 20, asm.PipeS))
		}
		if had && sm.tabs == 0 {
			turned++
		}
	}
	s.ev(machine.Event{Kind: machine.EvRunEnd})
	kept := 0
	for r := range int32(ranks) {
		probe := gmAcc(sig, r, base, base+4, false)
		if s.d.shadowFor(&probe).tabs > 0 {
			kept++
		}
	}
	return fmt.Sprintf("%+v\nreads from %x", s.d.Findings(), s.d.ReadsFrom()), kept, turned
}

// TestTableHostWrite: a table is made only for a whole signal tensor whose
// words each lie on one page and are served one to a span, of bounded size,
// over a region just claimed.
func TestTableHostWrite(t *testing.T) {
	r := rec{agent: 1, write: true}
	for _, tc := range []struct {
		name       string
		lo, hi     int64
		word       int64
		paged, off bool
		want       bool
	}{
		{"ring's words", 0x3000, 0x3000 + 766*4, 4, false, false, true},
		{"8-byte words", 0x10000, 0x10100, 8, false, false, true},
		{"not a signal tensor", 0x3000, 0x3100, 0, false, false, false},
		{"unaligned base", 0x3002, 0x3102, 4, false, false, false},
		{"part of a word", 0x3000, 0x3102, 4, false, false, false},
		{"too many words", 0, 4 * (maxTableWords + 1), 4, false, false, false},
		{"region with pages", 0x3000, 0x3100, 4, true, false, false},
		{"tables off", 0x3000, 0x3100, 4, false, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func(old bool) { useWordTables = old }(useWordTables)
			useWordTables = !tc.off
			s := newShadowMem(pageShift, nil)
			s.claim(tc.lo, tc.hi, tc.word)
			if tc.paged {
				s.page(tc.lo, tc.hi)
			}
			if got := s.tableHostWrite(nil, tc.lo, tc.hi, tc.word, &r, false); got != tc.want || (s.tabs > 0) != tc.want {
				t.Fatalf("table made: %v (%d tables), want %v", got, s.tabs, tc.want)
			}
			if tc.want {
				if tw, i := s.tableWord(tc.hi-tc.word, tc.hi); tw == nil || i != int((tc.hi-tc.lo)/tc.word)-1 {
					t.Fatalf("the last word is not the table's last (%v, %d)", tw, i)
				}
				if tw, _ := s.tableWord(tc.lo, tc.lo+2*tc.word); tw != nil {
					t.Fatal("two words served as one")
				}
			}
		})
	}
}
