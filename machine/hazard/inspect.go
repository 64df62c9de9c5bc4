package hazard

import (
	"cmp"
	"slices"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
)

// ClockEntry is one non-zero component of a vector clock: the agent and how
// many of its ops are known to have happened.
type ClockEntry struct {
	// Agent is the component's agent; Core -1 with Rank -1 is the host, and
	// Pipe asm.PipeInvalid with a core the SDMA copies that core issued.
	Agent machine.Agent
	Value uint32
}

// AgentClock is what one agent's next op is known to happen after.
type AgentClock struct {
	Agent machine.Agent
	// Ops is how many ops the agent has run (its own epoch counter).
	Ops   uint32
	Clock []ClockEntry
}

// Clocks returns the vector clocks of a core's agents (scalar first, then
// pipes in pipe order), for debuggers. Components are in agent creation
// order, which follows the event order, so the output is deterministic. A
// clock from an earlier run generation reads as empty: a run boundary orders
// everything before it.
func (d *Detector) Clocks(rank, core int) []AgentClock {
	d.drain()
	ci := d.coreIdx.get(int32(rank), core)
	if ci == 0 {
		return nil
	}
	cs := &d.cores[ci-1]
	var ids []int32
	if cs.scalar >= 0 {
		ids = append(ids, cs.scalar)
	}
	for p := asm.PipeS + 1; p < asm.NumPipes; p++ {
		if a := cs.pipes[p]; a >= 0 {
			ids = append(ids, a)
		}
	}
	out := make([]AgentClock, 0, len(ids))
	for _, a := range ids {
		ag := &d.agents[a]
		ac := AgentClock{Agent: d.agentID(a), Ops: ag.n}
		if ag.gen == d.gen {
			// By agent, in the order agents appeared, not by position.
			type entry struct {
				a int32
				v uint32
			}
			var es []entry
			clk := d.exact(a)
			clk.each(func(i int32, v uint32) { es = append(es, entry{d.pagent[i], v}) })
			slices.SortFunc(es, func(x, y entry) int { return cmp.Compare(x.a, y.a) })
			for _, e := range es {
				ac.Clock = append(ac.Clock, ClockEntry{Agent: d.agentID(e.a), Value: e.v})
			}
		}
		out = append(out, ac)
	}
	return out
}

func (d *Detector) agentID(a int32) machine.Agent {
	ag := &d.agents[a]
	return machine.Agent{Rank: ag.rank, Core: ag.core, Pipe: ag.pipe}
}
