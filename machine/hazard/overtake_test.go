package hazard_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/ptoasm/ptoasm/machine"
)

// lineProbe records when the op at one source line started, and when the op
// at another finished, from the machine's own event times.
type lineProbe struct {
	writer, reader     int // source lines
	writerEnd, readerT int64
	// readerStarts holds every instance's start, in run order.
	readerStarts []int64
}

func (p *lineProbe) Observe(e *machine.Event) {
	if e.Kind != machine.EvExec || e.Op == nil || e.Op.Instr == nil {
		return
	}
	switch e.Op.Instr.Pos.Line {
	case p.writer:
		p.writerEnd = max(p.writerEnd, e.End)
	case p.reader:
		if p.readerT == 0 || e.Start < p.readerT {
			p.readerT = e.Start
		}
		p.readerStarts = append(p.readerStarts, e.Start)
	}
}

// TestOvertakingReadRetractedByLaterWrite: tquant reads its src and
// rewrites it in place after its internal barrier, and nothing orders it
// after the tload that fills src. When its read overtakes the load, the
// first write the cell meets is tquant's own, ordered after the read; the
// load's write comes later and still races the read. Every timing must give
// the RAW (and the WAW of the rewrite) and no uninit-read: the detector
// used to settle an overtaking read at the cell's first write only, and
// kept the uninit-read whenever the read ran first.
func TestOvertakingReadRetractedByLaterWrite(t *testing.T) {
	const prog = "hazards/quant_overtakes_load.pto"
	const ld, q = 29, 31 // the tload and the tquant
	want := []string{"RAW 29>31", "WAW 29>31"}
	orders := map[bool]bool{}
	for _, tc := range []struct {
		name string
		set  [][2]string
		// readFirst: the tquant starts before the load has landed.
		readFirst bool
	}{
		{"default", nil, true},
		{"dma latency 0", [][2]string{{"dma.gm_ub.latency", "0"}, {"l2.miss_latency", "0"}}, true},
		{"vector head 20000", [][2]string{{"vec.vconv.head", "20000"}}, true},
		{"flag hand-off 1000", [][2]string{{"sync.flag_handoff", "1000"}}, false},
		{"flag hand-off 100000", [][2]string{{"sync.flag_handoff", "100000"}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			probe := &lineProbe{writer: ld, reader: q}
			det := lintProfile(t, prog, tc.set, probe)
			readFirst := probe.readerT < probe.writerEnd
			if readFirst != tc.readFirst {
				t.Errorf("tquant started at %d, the load ended at %d: want read first %v", probe.readerT, probe.writerEnd, tc.readFirst)
			}
			orders[readFirst] = true
			var got []string
			for _, f := range det.Findings() {
				got = append(got, fmt.Sprintf("%s %d>%d", f.Kind, f.First.Line, f.Second.Line))
			}
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("findings %q, want %q", got, want)
			}
		})
	}
	if len(orders) != 2 {
		t.Errorf("the profiles ran the read and the load in one order only: %v", orders)
	}
}
