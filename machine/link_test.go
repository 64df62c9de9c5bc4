package machine

import (
	"testing"

	"github.com/ptoasm/ptoasm/pipes"
)

// Each topology books the links a transfer really crosses: two transfers
// that share a link queue, transfers on disjoint links overlap.
func TestLinksReserve(t *testing.T) {
	type xfer struct {
		from, to int
		start    int64
		wantEnd  int64
	}
	tests := []struct {
		topo  string
		xfers []xfer
	}{
		// link.bw is set to 1 B/cycle and every transfer moves 100 bytes.
		{"mesh", []xfer{{0, 1, 0, 100}, {0, 1, 0, 200}, {1, 0, 0, 100}, {0, 2, 50, 150}, {2, 3, 0, 100}}},
		// 0->2 crosses links 0->1 and 1->2; 1->2 then queues behind it, 2->1
		// goes the other way, and 0->7 on 8 ranks goes left over one hop.
		{"ring", []xfer{{0, 2, 0, 100}, {1, 2, 0, 200}, {2, 1, 0, 100}, {0, 7, 0, 100}, {7, 6, 0, 100}, {6, 7, 0, 100}}},
		// one egress per sender and one ingress per receiver.
		{"switch", []xfer{{0, 1, 0, 100}, {0, 2, 0, 200}, {3, 2, 0, 300}, {3, 1, 0, 400}, {4, 5, 0, 100}}},
	}
	for _, tt := range tests {
		t.Run(tt.topo, func(t *testing.T) {
			p := pipes.DefaultProfile()
			if err := p.Set("link.topology", tt.topo); err != nil {
				t.Fatal(err)
			}
			p.Link.BW = 1
			var l links
			l.init(p, 8)
			for i, x := range tt.xfers {
				if got := l.reserve(x.from, x.to, 0, x.start, 100); got != x.wantEnd {
					t.Errorf("transfer %d (%d->%d at %d): ends at %d, want %d", i, x.from, x.to, x.start, got, x.wantEnd)
				}
			}
			if got := l.reserve(3, 3, 0, 7, 100); got != 7 {
				t.Errorf("local transfer booked a link: %d", got)
			}
		})
	}
}

// Two AIVs of one rank pulling from the same peer share the mesh link: with a
// starved link.bw the pair takes about twice as long as one core alone.
func TestLinkSharedByCores(t *testing.T) {
	src := func(blocks int) string {
		return `
window W : f32 [8, 1024] = expr(1)
gm D : f32 [8, 1024] = zero
kernel k : aiv {
    tile %t : vec f32 [1, 1024]
    if rank == 0 {
        tget @D[block_idx, 0], @W[rank=1][block_idx, 0], %t
    }
}
launch ranks=2 {
    run k blocks=` + string(rune('0'+blocks)) + `
}
`
	}
	cycles := func(blocks int) int64 {
		p := pipes.DefaultProfile()
		p.Link.BW = 0.5
		_, r, err := runObj(t, assemble(t, src(blocks)), Options{Profile: p})
		if err != nil {
			t.Fatal(err)
		}
		return r.Cycles
	}
	one, two := cycles(1), cycles(2)
	// 4 KiB at 0.5 B/cycle is 8192 cycles of link time per core.
	if two-one < 7000 {
		t.Errorf("two cores sharing the link: %d cycles, one core: %d; want about 8192 more", two, one)
	}
}

// Streams in flight on a link cost it link.stream_overhead each: a second
// stream's transfer takes (1 + overhead) times as long while the first is
// still on the link, and a lone stream, or a stream following only itself,
// gets the whole link.
func TestLinkStreamOverhead(t *testing.T) {
	p := pipes.DefaultProfile()
	if err := p.Set("link.topology", "mesh"); err != nil {
		t.Fatal(err)
	}
	p.Link.BW, p.Link.StreamOverhead = 1, 0.5
	var l links
	l.init(p, 2)
	steps := []struct {
		stream  int
		start   int64
		wantEnd int64
	}{
		{1, 0, 100},   // alone: 100 bytes at 1 B/cycle
		{2, 0, 250},   // stream 1 in flight: waits for the link, then 150
		{1, 300, 400}, // both done: alone again
		{1, 350, 500}, // its own earlier transfer does not count
		{3, 450, 650}, // 1 in flight until 500: two streams, 150 after 500
	}
	for i, s := range steps {
		if got := l.reserve(0, 1, s.stream, s.start, 100); got != s.wantEnd {
			t.Errorf("transfer %d (stream %d at %d): ends at %d, want %d", i, s.stream, s.start, got, s.wantEnd)
		}
	}
}
