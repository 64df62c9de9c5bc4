package machine

import (
	"fmt"
	"slices"
	"testing"
)

// setIssueObs takes EvIssue of composites only (IssueFilter) and keeps, per
// core, the FFTS sets it was told of at issue and the EvCrossSets that fired.
type setIssueObs struct{ issued, fired []string }

func (o *setIssueObs) CompositeIssuesOnly() bool { return true }

func (o *setIssueObs) Observe(e *Event) {
	switch {
	case e.Kind == EvIssue && e.Word == WordFFTSSet:
		o.issued = append(o.issued, fmt.Sprintf("r%d c%d #%d id %d mode %d", e.Agent.Rank, e.Agent.Core, e.Issue, e.ID, e.Mode))
	case e.Kind == EvCrossSet:
		o.fired = append(o.fired, fmt.Sprintf("r%d c%d #%d id %d mode %d", e.Agent.Rank, e.Agent.Core, e.Issue, e.ID, e.Mode))
	}
}

// An observer that takes composites' issues only is told of every FFTS set
// when the scalar issues it, an ffts_set's and a fifo step's alike, with the
// number, id and mode its EvCrossSet carries when it fires: the hazard
// detector pairs sets and waits by issue order (docs/hazards.md, "Intended
// order across kernels"), and a set fired after later ops ran elsewhere
// would count late.
func TestFFTSSetIssuesReachCompositeOnlyObservers(t *testing.T) {
	obj := assemble(t, `
gm X : f32 [16, 64] = zero
gm Y : f32 [16, 64] = zero
fifo F : f32 [16, 64] slots=2 id=2

kernel prod : aic {
    tile %m : mat f32 [16, 64]
    tload %m, @X[0, 0]
    set_flag MTE2, MTE3, 0
    wait_flag MTE2, MTE3, 0
    for %k = 0 to 3 {
        talloc @F
        tstore @F[0, 0], %m
        set_flag MTE3, FIX, 0
        wait_flag MTE3, FIX, 0
        tpush @F
    }
    ffts_set MTE2, 0 #mode=2
}

kernel cons : aiv {
    tile %v : vec f32 [8, 64]
    for %k = 0 to 3 {
        tpop @F
        tload %v, @F[subblock_idx * 8, 0]
        tfree @F
    }
    ffts_wait 0
}

launch ranks=1 {
    run prod + cons blocks=1
}
`)
	o := &setIssueObs{}
	if _, _, err := runObj(t, obj, Options{Observers: []Observer{o}, TimingOnly: true}); err != nil {
		t.Fatal(err)
	}
	// 3 ready sets and 1 ffts_set on the AIC, 3 free sets on each AIV.
	if len(o.issued) != 10 {
		t.Errorf("%d set issues, want 10:\n%v", len(o.issued), o.issued)
	}
	slices.Sort(o.issued)
	slices.Sort(o.fired)
	if !slices.Equal(o.issued, o.fired) {
		t.Errorf("set issues and fired sets differ:\nissued %v\nfired  %v", o.issued, o.fired)
	}
}
