package hazard

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
)

// Other linearisations of one happens-before order (lint round 31,
// s15-group's core-by-core replay, kept as a check).
//
// The machine emits a batch's events in simulated-time order across all
// cores. Cut into segments that end at every item that carries
// happens-before between cores (every tagWhole item: cross-core flags,
// syncall, SDMA, host writes, run and kernel boundaries, composite steps;
// and every notify and signal wait, tagSync items but a scalar's barrier),
// a segment holds only execs, flag sets and waits between the pipes of one
// core, scalar barriers and iteration notes: two items of different cores
// in it are unordered by happens-before but through edges earlier segments
// made. Replaying each segment core by core, each core's items in their
// own order, is then another linearisation of the same happens-before
// order, one no timing profile need produce, and the findings must not
// change (TestFindingsIgnoreLinearisation).

// coreOrder is the order a segment's cores are replayed in.
type coreOrder int

const (
	inOrder   coreOrder = iota - 1 // the machine's order, not core by core
	firstSeen                      // as each first appears in the segment
	reversed                       // the reverse of that
)

func (o coreOrder) String() string { return [...]string{"in order", "first seen", "reversed"}[o+1] }

// itemAt is where an item's slices start in its batch's arenas: Acc and
// Defs for a compact item, iter for any, and for a tagSync item its Value
// in vals, for a tagNote item its note.
type itemAt struct {
	acc, iter, def, aux int
}

// regrouper replays one detector's batches core by core within segments.
type regrouper struct {
	order coreOrder
	at    []itemAt
	seg   []int         // the current segment's items
	group map[int32]int // a core's group in the segment, by rank<<16|core
	keys  []int32       // the segment's cores, in the order first seen
	items int           // items replayed
}

// regroupers holds the regrouper of each detector a test replays so;
// other detectors replay in order.
var regroupers sync.Map // *Detector → *regrouper

// regroupBatch is regroup for the tests: it replays b itself, and empties
// its items, if d has a regrouper.
func regroupBatch(d *Detector, b *batch) {
	if g, ok := regroupers.Load(d); ok {
		g.(*regrouper).replay(d, b)
		b.Recs = b.Recs[:0]
	}
}

// segmentEnd reports whether item i of b ends a segment (and is replayed
// alone, in its place), and the core it belongs to otherwise; nt is its
// note if it is a tagNote item.
func segmentEnd(it *item, nt *iterNote) (int32, bool) {
	switch it.Tag {
	case tagCompact:
		return int32(it.Rank)<<16 | int32(it.Core), false
	case tagSync:
		return int32(it.Rank)<<16 | int32(it.Core), it.Kind != machine.EvBarrier && !breakSegments.syncs
	case tagNote:
		// A note of no core (logIter ignores it) stays in its place.
		a := nt.agent
		return a.Rank<<16 | a.Core, a.Rank < 0 || a.Core < 0 || a.Rank > 0x7fff || a.Core > 0xffff
	}
	return 0, true
}

// breakSegments, set only to see TestFindingsIgnoreLinearisation fail,
// lets notifies and signal waits stay inside segments.
var breakSegments struct{ syncs bool }

// replay replays b core by core within segments, each core's items in
// their order: one pass finds every item's arena offsets (replay's
// cursors) and the segments' ends.
func (g *regrouper) replay(d *Detector, b *batch) {
	g.at = g.at[:0]
	g.items += len(b.Recs)
	var acc, iter, def, val, note int
	for i := range b.Recs {
		it := &b.Recs[i]
		at := itemAt{acc: acc, iter: iter, def: def}
		var nt *iterNote
		switch it.Tag {
		case tagCompact:
			acc += int(it.NAcc)
			if it.Deferred {
				def++
			}
		case tagSync:
			acc += int(it.NAcc)
			at.aux = val
			if it.Kind != machine.EvBarrier {
				val += 2
			}
		case tagNote:
			at.aux, nt = note, &b.notes[note]
			note++
		}
		iter += int(it.NIter)
		g.at = append(g.at, at)
		key, alone := segmentEnd(it, nt)
		if alone {
			g.flush(d, b)
			g.replayAt(d, b, i)
			continue
		}
		if _, ok := g.group[key]; !ok {
			g.group[key] = len(g.keys)
			g.keys = append(g.keys, key)
		}
		g.seg = append(g.seg, i)
	}
	g.flush(d, b)
}

// flush replays the current segment core by core, in g's order of cores,
// and starts the next.
func (g *regrouper) flush(d *Detector, b *batch) {
	if len(g.keys) > 1 {
		byCore := make([][]int, len(g.keys))
		for _, i := range g.seg {
			it := &b.Recs[i]
			var nt *iterNote
			if it.Tag == tagNote {
				nt = &b.notes[g.at[i].aux]
			}
			key, _ := segmentEnd(it, nt)
			k := g.group[key]
			byCore[k] = append(byCore[k], i)
		}
		g.seg = g.seg[:0]
		for k := range byCore {
			if g.order == reversed {
				k = len(byCore) - 1 - k
			}
			g.seg = append(g.seg, byCore[k]...)
		}
	}
	for _, i := range g.seg {
		g.replayAt(d, b, i)
	}
	g.seg, g.keys = g.seg[:0], g.keys[:0]
	clear(g.group)
}

// replayAt replays item i of b, its slices where replay found them.
func (g *regrouper) replayAt(d *Detector, b *batch, i int) {
	it, at := &b.Recs[i], g.at[i]
	if it.Tag == tagNote {
		d.replayNote(b, it, &at.iter, &at.aux)
		return
	}
	b.vnext = at.aux
	d.observe(b.event(it, &d.scratch, &at.acc, &at.iter, &at.def))
}

// lintOrdered lints obj as lint does with every event through the batches,
// each replayed in order: the findings (kinds, sites, instances, messages,
// counts) and the run's result as text, the verdict alone (kinds,
// severities and sites) and which store each signal wait read
// (Detector.ReadsFrom).
func lintOrdered(t *testing.T, obj *asm.Object, order coreOrder) (all, verdict string, readsFrom uint64) {
	t.Helper()
	d := New(Options{})
	g := &regrouper{order: order, group: map[int32]int{}}
	if order != inOrder {
		regroupers.Store(d, g)
		defer regroupers.Delete(d)
	}
	res, runErr := lintRun(t, obj, d)
	fs := d.Findings()
	b, err := json.MarshalIndent(fs, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	r, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	if order != inOrder && g.items == 0 {
		t.Fatal("no batch was replayed core by core")
	}
	var v []string
	for _, f := range fs {
		v = append(v, fmt.Sprintf("%s %s %s:%d:%d %s:%d:%d", f.Severity, f.Kind,
			f.First.File, f.First.Line, f.First.Col, f.Second.File, f.Second.Line, f.Second.Col))
	}
	slices.Sort(v)
	verdict = fmt.Sprintf("%s\nresult: %s\nerr: %v", strings.Join(slices.Compact(v), "\n"), r, runErr)
	return fmt.Sprintf("%s\n%s", b, verdict), verdict, d.ReadsFrom()
}

// readsOtherStore are the programs where a linearisation may change which
// of two racing plain stores a signal wait reads, and so the instance a
// race names and its count, never its kind or sites (docs/hazards.md,
// "Which store a wait reads"): both AIVs of an ffn_grid/mixed* cell store
// a slot's ready count, and with the cores reversed the next cell's twait
// reads the other AIV's store. The machine's order and the cores as first
// seen read the same stores.
var readsOtherStore = map[string]bool{"ffn_grid/mixed": true, "ffn_grid/mixed_3x3": true}

// TestFindingsIgnoreLinearisation lints every shipped program and every
// PTOAS corpus kernel with each batch of events replayed in the machine's
// order, core by core with the cores as first seen in each segment, and
// core by core with them reversed, and requires the same findings and
// result: the detector must not depend on which linearisation of the
// happens-before order it sees (see the comment at the top of this file).
// Where the signal waits read other stores (readsOtherStore) the run took
// another path, and only the verdict and result must be the same.
func TestFindingsIgnoreLinearisation(t *testing.T) {
	oldPrefix, oldHook := serialPrefix, regroup
	serialPrefix, regroup = 0, regroupBatch
	t.Cleanup(func() { serialPrefix, regroup = oldPrefix, oldHook })
	objs := map[string]*asm.Object{}
	eachProgram(t, func(name string, obj *asm.Object) { objs[name] = obj })
	// More cores per segment than the test sizes have: a ring of 70 ranks
	// (clocks of more than one group, as TestSelfChecks runs it).
	objs["allreduce_ring/ring_final RANKS=70"] = assembleProgram(t, "allreduce_ring/ring_final", asm.Define{Name: "RANKS", Value: "70"})
	if testing.Short() {
		t.Log("-short: shipped programs only")
	} else if corpus := corpusObjects(t); len(corpus) > 0 {
		maps.Copy(objs, corpus)
	} else {
		t.Log("no PTOAS corpus in corpus/: shipped programs only")
	}
	for name, obj := range objs {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			want, wantVerdict, wantRF := lintOrdered(t, obj, inOrder)
			for _, order := range []coreOrder{firstSeen, reversed} {
				got, gotVerdict, gotRF := lintOrdered(t, obj, order)
				switch {
				case gotRF != wantRF && !readsOtherStore[name]:
					t.Errorf("the signal waits read other stores with the cores replayed %s", order)
				case gotRF != wantRF:
					if gotVerdict != wantVerdict {
						t.Errorf("verdict differs with the cores replayed %s (-in order +%s):\n%s", order, order, cmp.Diff(wantVerdict, gotVerdict))
					}
					continue
				}
				if got != want {
					t.Errorf("findings differ with the cores replayed %s (-in order +%s):\n%s", order, order, cmp.Diff(want, got))
				}
			}
		})
	}
}
