package machine

import "github.com/ptoasm/ptoasm/pipes"

// links models the inter-rank interconnect as a set of directed links, each
// with a busy-until time: a remote transfer holds every link on its path for
// bytes / link.bw cycles (cut-through: all of them at once), so cores that
// share a link queue behind one another while one stream alone runs at
// link.stream_bw (pipes.RemoteDMACycles).
//
// Topologies (profile link.topology, or `launch topology=`):
//   - mesh: one link per ordered pair (the A2 8-NPU HCCS full mesh); links are
//     created on first use, so a large rank count costs memory only for the
//     pairs that talk;
//   - ring: each rank has a link to each neighbour; a transfer takes the
//     shorter way round and occupies every link on it (pipes.Hops hops);
//   - switch: one port per rank and direction; a transfer holds the sender's
//     egress and the receiver's ingress port.
type links struct {
	topo   pipes.Topology
	n      int
	bw     float64
	mesh   map[int64]int64 // from*n+to -> busy until; looked up, never ranged
	right  []int64         // ring: link r -> r+1
	left   []int64         // ring: link r -> r-1
	egress []int64         // switch
	ingr   []int64         // switch
}

func (l *links) init(p *pipes.Profile, n int) {
	*l = links{topo: p.Link.Topology, n: n, bw: p.Link.BW}
	switch l.topo {
	case pipes.TopoRing:
		l.right, l.left = make([]int64, n), make([]int64, n)
	case pipes.TopoSwitch:
		l.egress, l.ingr = make([]int64, n), make([]int64, n)
	default:
		l.mesh = make(map[int64]int64)
	}
}

// reserve books a transfer of bytes from rank from to rank to that may start
// at start; it returns when the last byte has crossed the busiest link.
func (l *links) reserve(from, to int, start, bytes int64) int64 {
	_, end := l.book(from, to, start, bytes)
	return end
}

// book is reserve that also says when the links were free for the transfer
// (after start when other transfers held them: a link-busy stall).
func (l *links) book(from, to int, start, bytes int64) (begin, end int64) {
	if from == to || bytes <= 0 || from < 0 || to < 0 || from >= l.n || to >= l.n {
		return start, start
	}
	d := ceilDiv(bytes, l.bw)
	switch l.topo {
	case pipes.TopoRing:
		busy, step := l.right, 1
		fwd := (to - from + l.n) % l.n
		if l.n-fwd < fwd {
			busy, step = l.left, -1
			fwd = l.n - fwd
		}
		s := start
		for r, k := from, 0; k < fwd; k++ {
			s = max(s, busy[r])
			r = (r + step + l.n) % l.n
		}
		for r, k := from, 0; k < fwd; k++ {
			busy[r] = s + d
			r = (r + step + l.n) % l.n
		}
		return s, s + d
	case pipes.TopoSwitch:
		s := max(start, l.egress[from], l.ingr[to])
		l.egress[from], l.ingr[to] = s+d, s+d
		return s, s + d
	}
	k := int64(from)*int64(l.n) + int64(to)
	s := max(start, l.mesh[k])
	l.mesh[k] = s + d
	return s, s + d
}
