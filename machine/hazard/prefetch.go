package hazard

import (
	"unsafe"

	"github.com/ptoasm/ptoasm/machine"
	"github.com/ptoasm/ptoasm/pipes"
)

// ---- lookahead ------------------------------------------------------------

// The machine interleaves hundreds of cores, so the state a flag set or
// wait reads (its agent, its core, the core's channel table, the channel,
// the scalar whose issue state it joins) was last touched hundreds of
// events ago and is cold: at full size the first line of the channel alone
// was 4.6% of a lint's CPU (issue 28). Where that state lives does not
// depend on the events in between, only what it holds, so replay asks for
// its lines some items ahead of the event, in two steps: preFar items
// ahead the agent's lines, the core's first line and the core's slot of
// its channel table (agent and core from their index tables, small and
// warm), preNear items ahead the channel's lines and the scalar's (read
// from the slot and the core's line the first step asked for). A prefetch
// changes nothing the detector computes: these steps only read, and an
// address that is stale when the event runs (an agent or channel made, or
// a slot retaken, in between) costs a wasted request, never a different
// answer.
const (
	preFar  = 4
	preNear = 2
)

// preItems is how far ahead warm asks for the batch's own items: the
// machine wrote them up to a batch (2 048 events) ago, and at full size
// their lines are as cold as the state they name (the loop's read of an
// item's tag was 4% of the last-level read misses of a lint at M=2048).
// Two items share a line.
const preItems = 12

// warmRing carries each flag item's core from the first step to the
// second, by item index mod its length; -1: nothing to warm. The first
// preFar items of a batch are not warmed (warm resets the ring).
type warmRing [4]int32

// noPrefetch turns the lookahead off (measurements; TestLookahead compares
// the findings with it on and off).
var noPrefetch bool

// numPipes is asm.NumPipes as an int.
const numPipes = len(pipeVals{})

// warm runs the lookahead after item i of recs.
func (d *Detector) warm(recs []item, i int) {
	r := &d.warmRing
	if i == 0 {
		*r = warmRing{-1, -1, -1, -1}
	}
	if checkWarm && i >= preNear {
		d.checkWarmed(&recs[i], i)
	}
	if j := i + preItems; j < len(recs) && j%2 == 0 {
		pipes.Prefetch(unsafe.Pointer(&recs[j]))
	}
	if j := i + preFar; j < len(recs) {
		r[j%len(r)] = -1
		if it := &recs[j]; it.Tag == tagCompact && (it.Kind == machine.EvFlagSet || it.Kind == machine.EvFlagWait) {
			r[j%len(r)] = d.warmFar(it)
		}
	}
	if j := i + preNear; j < len(recs) {
		if checkWarm {
			warmPred[j%len(warmPred)] = nil
		}
		if c := r[j%len(r)]; c >= 0 {
			d.warmNear(&recs[j], c, j)
		}
	}
}

// warmFar asks for the lines of flag item it's agent and core, and the
// core's channel slot, and returns the core (-1 for none known).
func (d *Detector) warmFar(it *item) int32 {
	rows, crows := d.agentIdx.rows, d.coreIdx.rows
	if int(it.Rank) >= len(rows) || int(it.Rank) >= len(crows) {
		return -1
	}
	row, crow := rows[it.Rank], crows[it.Rank]
	k := (int(it.Core)+1)*numPipes + int(it.Pipe)
	if k >= len(row) || row[k] <= 0 || int(it.Core) >= len(crow) || crow[it.Core] <= 0 {
		return -1
	}
	ag := unsafe.Pointer(&d.agents[row[k]-1])
	pipes.Prefetch(ag)
	pipes.Prefetch(unsafe.Add(ag, 64)) // rver, rem, the clock's header
	c := crow[it.Core] - 1
	cs := &d.cores[c]
	pipes.Prefetch(unsafe.Pointer(cs))
	pipes.Prefetch(unsafe.Pointer(&cs.chanHash[chanSlot(itemKey(it))]))
	return c
}

// warmNear asks for the lines of flag item it's channel, when the slot of
// its core c holds one, and of the core's scalar; j is the item's index in
// its batch (checkWarm).
func (d *Detector) warmNear(it *item, c int32, j int) {
	cs := &d.cores[c]
	ch := cs.chanHash[chanSlot(itemKey(it))]
	if checkWarm {
		warmPred[j%len(warmPred)] = ch
	}
	if ch != nil {
		p := unsafe.Pointer(ch)
		pipes.Prefetch(p)
		pipes.Prefetch(unsafe.Add(p, 64))
		if it.Kind == machine.EvFlagSet {
			pipes.Prefetch(unsafe.Pointer(&ch.last))
		}
	}
	if s := cs.scalar; uint32(s) < uint32(len(d.agents)) {
		pipes.Prefetch(unsafe.Pointer(&d.agents[s]))
		pipes.Prefetch(unsafe.Pointer(&d.agents[s].snapID))
	}
}

// itemKey is flag item it's chanKey.
func itemKey(it *item) uint32 {
	return chanKey(machine.Flag{Src: it.Src, Dst: it.Dst, ID: int32(it.ID)})
}

// checkWarm makes the lookahead note the channel it asked for, and warm
// compare it, after the event, with the channel the event used: warmHits
// counts the flag events whose channel it named, warmMisses those whose
// channel existed then and it named another or none (tests: a lookahead
// that reads the wrong lines changes no finding, only the time).
var (
	checkWarm            bool
	warmHits, warmMisses int
	warmPred             [8]*flagChan // by item index, preChan ahead
)

// checkWarmed counts flag item it, number i of its batch, just observed,
// as a hit or miss of warmChan's prediction.
func (d *Detector) checkWarmed(it *item, i int) {
	a := d.agentOf(it)
	if a < 0 || uint32(d.agents[a].coreIdx) >= uint32(len(d.cores)) {
		return
	}
	// The event's own key, not itemKey's: the check must not share what
	// it checks.
	k := chanKey(machine.Flag{Src: it.Src, Dst: it.Dst, ID: int32(it.ID)})
	cs := &d.cores[d.agents[a].coreIdx]
	for n, x := range cs.chanKeys {
		if x != k {
			continue
		}
		switch pred := warmPred[i%len(warmPred)]; {
		case pred == cs.chans[n]:
			warmHits++
		case pred != nil || n < len(cs.chans)-1:
			// Named another channel (its slot's), or none while this one
			// existed (the newest may be new with this event).
			warmMisses++
		}
		return
	}
}

// agentOf is flag item it's agent, -1 if none (checkWarmed).
func (d *Detector) agentOf(it *item) int32 {
	if it.Tag != tagCompact || (it.Kind != machine.EvFlagSet && it.Kind != machine.EvFlagWait) {
		return -1
	}
	return d.agent(machine.Agent{Rank: int32(it.Rank), Core: int32(it.Core), Pipe: it.Pipe})
}
