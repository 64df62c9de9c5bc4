package hazard

import (
	"crypto/sha256"
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestStaticSharedMatchesCopied runs the static pass on every shipped program
// and corpus kernel (staticObjects) with states copied on write and with
// every clone a full copy (cowOff, as before copy on write), and compares the
// findings, what the pass did (work, memo size, symbols, limits) and every
// memo entry's and loop template's states: flags, last sets, registers,
// facts and iterations. A write to a shared part that bypasses writeFlags,
// writeRegs or writeFacts changes the states that share it — a memo entry,
// the other side of a split — and shows here. Every state's kept hash is
// checked when join uses it (checkHashes), and every gc skipped on a state
// it cleaned before (checkGC).
func TestStaticSharedMatchesCopied(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the static pass runs twice on every program and corpus kernel")
	}
	var did []string
	staticDone = func(c *checker) { did = append(did, staticDigest(c)...) }
	checkHashes, checkGC = true, true
	defer func() { staticDone, cowOff, checkHashes, checkGC = nil, false, false, false }()
	for name, obj := range staticObjects(t) {
		did = nil
		cowOff = true
		copied := CheckObject(obj)
		copiedDid := did
		did = nil
		cowOff = false
		shared := CheckObject(obj)
		if d := cmp.Diff(copied, shared); d != "" {
			t.Errorf("%s: findings with shared states differ (-copied +shared):\n%s", name, d)
		}
		if d := cmp.Diff(copiedDid, did); d != "" {
			t.Errorf("%s: the pass's course or memo differs with shared states (-copied +shared):\n%s", name, d)
		}
	}
}

// staticCounts is what a kernel's pass did besides its findings, in one
// line: the statement visits (the work budget), memo entries, symbols and
// whether it gave up or hit a limit.
func staticCounts(c *checker) string {
	return fmt.Sprintf("%s: work %d memo %d symbols %d aborted %v limited %v", c.k.Name, c.work, len(c.memo), len(c.syms), c.aborted, c.limited)
}

// staticDigest describes what a kernel's pass did, one line for its counts
// and one per memo entry (in the order made) and loop template (sorted).
func staticDigest(c *checker) []string {
	out := []string{staticCounts(c)}
	for i, k := range c.memoLog {
		out = append(out, fmt.Sprintf("%s memo %d: %x", c.k.Name, i, sha256.Sum256([]byte(k+statesDigest(c.memo[k].res)))))
	}
	var ts []string
	for k, tl := range c.templates {
		for _, t := range tl {
			d := fmt.Sprint(k, t.frame, t.vals, t.work, statesDigest(t.res))
			for _, e := range t.made {
				d += e.key + statesDigest(e.res)
			}
			ts = append(ts, fmt.Sprintf("%s template: %x", c.k.Name, sha256.Sum256([]byte(d))))
		}
	}
	slices.Sort(ts)
	return append(out, ts...)
}

func statesDigest(states []*sstate) string {
	s := ""
	for _, x := range states {
		s += fmt.Sprint(x.key(), x.last, x.iter, x.regs, x.syms, x.facts)
	}
	return s
}

// TestStaticGCAfterUnpin: a state gc cleaned while a symbol was pinned keeps
// the facts about it; once unpinned, gc must drop them even though the state
// has not changed (the pin epoch, sstate.gcAt).
func TestStaticGCAfterUnpin(t *testing.T) {
	c := &checker{}
	c.initSyms()
	s := c.newSym(negInf, posInf, nil)
	st := &sstate{regs: make([]int64, 2), syms: []int32{symTop, symTop}, own: ownAll}
	st.h = st.partHash()
	c.pin(s)
	if !c.assume(st, s, symZero, rng{0, 5}) || len(st.facts) != 1 {
		t.Fatalf("assume: facts %v", st.facts)
	}
	c.gc(st)
	if len(st.facts) != 1 {
		t.Fatalf("gc dropped a pinned symbol's fact: %v", st.facts)
	}
	c.unpin(s)
	c.gc(st)
	if len(st.facts) != 0 {
		t.Errorf("gc after unpin kept %v", st.facts)
	}
}
