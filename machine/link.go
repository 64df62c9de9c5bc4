package machine

import "github.com/ptoasm/ptoasm/pipes"

// links models the inter-rank interconnect as a set of directed links, each
// with a busy-until time: a remote transfer holds every link on its path for
// bytes / link.bw cycles (cut-through: all of them at once), so cores that
// share a link queue behind one another while one stream alone runs at
// link.stream_bw (pipes.RemoteDMACycles).
//
// A link also loses throughput to every other stream with a transfer on it:
// a transfer that finds s streams in flight on its link (itself included)
// takes bytes × (1 + link.stream_overhead × (s−1)) / link.bw. One stream gets
// the whole link; 43 writers into one peer (pto-isa's 2-rank allgather_gemm)
// get less of it than 6 per peer (8 ranks); docs/profile.md "Links".
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
	topo     pipes.Topology
	n        int
	bw       float64
	overhead float64              // link.stream_overhead
	mesh     map[int64]*linkState // from*n+to; looked up, never ranged
	right    []linkState          // ring: link r -> r+1
	left     []linkState          // ring: link r -> r-1
	egress   []linkState          // switch
	ingr     []linkState          // switch
}

// linkState is one directed link (or switch port): when it is free, and the
// streams (cores, by agent order) that have a transfer on it and when each
// ends, to count the streams in flight.
type linkState struct {
	busy  int64
	users []linkUser
}

type linkUser struct {
	stream int
	end    int64
}

// streams is how many streams have a transfer in flight on the link at start,
// stream's own included.
func (s *linkState) streams(stream int, start int64) int {
	n := 1
	for _, u := range s.users {
		if u.end > start && u.stream != stream {
			n++
		}
	}
	return n
}

// hold marks the link busy until end by stream's transfer, dropping the
// entries of streams whose transfers ended by start.
func (s *linkState) hold(stream int, start, end int64) {
	s.busy = end
	users := s.users[:0]
	for _, u := range s.users {
		if u.end > start && u.stream != stream {
			users = append(users, u)
		}
	}
	s.users = append(users, linkUser{stream, end})
}

func (l *links) init(p *pipes.Profile, n int) {
	*l = links{topo: p.Link.Topology, n: n, bw: p.Link.BW, overhead: p.Link.StreamOverhead}
	switch l.topo {
	case pipes.TopoRing:
		l.right, l.left = make([]linkState, n), make([]linkState, n)
	case pipes.TopoSwitch:
		l.egress, l.ingr = make([]linkState, n), make([]linkState, n)
	default:
		l.mesh = make(map[int64]*linkState)
	}
}

// reserve books a transfer of bytes from rank from to rank to by stream that
// may start at start; it returns when the last byte has crossed the busiest
// link.
func (l *links) reserve(from, to, stream int, start, bytes int64) int64 {
	_, end := l.book(from, to, stream, start, bytes)
	return end
}

// time is how long bytes hold a link that s streams share.
func (l *links) time(bytes int64, s int) int64 {
	return ceilDiv(bytes, l.bw/(1+l.overhead*float64(s-1)))
}

// book is reserve that also says when the links were free for the transfer
// (after start when other transfers held them: a link-busy stall).
func (l *links) book(from, to, stream int, start, bytes int64) (begin, end int64) {
	if from == to || bytes <= 0 || from < 0 || to < 0 || from >= l.n || to >= l.n {
		return start, start
	}
	switch l.topo {
	case pipes.TopoRing:
		busy, step := l.right, 1
		fwd := (to - from + l.n) % l.n
		if l.n-fwd < fwd {
			busy, step = l.left, -1
			fwd = l.n - fwd
		}
		s, ns := start, 1
		for r, k := from, 0; k < fwd; k++ {
			s = max(s, busy[r].busy)
			ns = max(ns, busy[r].streams(stream, start))
			r = (r + step + l.n) % l.n
		}
		d := l.time(bytes, ns)
		for r, k := from, 0; k < fwd; k++ {
			busy[r].hold(stream, start, s+d)
			r = (r + step + l.n) % l.n
		}
		return s, s + d
	case pipes.TopoSwitch:
		e, i := &l.egress[from], &l.ingr[to]
		s := max(start, e.busy, i.busy)
		d := l.time(bytes, max(e.streams(stream, start), i.streams(stream, start)))
		e.hold(stream, start, s+d)
		i.hold(stream, start, s+d)
		return s, s + d
	}
	k := int64(from)*int64(l.n) + int64(to)
	ls := l.mesh[k]
	if ls == nil {
		ls = &linkState{}
		l.mesh[k] = ls
	}
	s := max(start, ls.busy)
	d := l.time(bytes, ls.streams(stream, start))
	ls.hold(stream, start, s+d)
	return s, s + d
}
