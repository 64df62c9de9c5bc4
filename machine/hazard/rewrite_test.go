package hazard

import (
	"testing"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
)

// TestOwnRewriteMatchesGeneralPath runs every shipped program with the
// shortcuts checked, by default (the cube's L0C chains: SamePipe.M is off)
// and with every pipe's same-pipe races off (in-place vector ops, repeated
// loads, the FIX pipe), so that each write taking rewriteOwn is also run
// through accessCell's general path and the two cells compared
// (checkOwnRewrite panics on a difference, or when the general path
// reported or moved a race), and each earlier instance putSite replaces in
// place is the one prunePrior drops (checkLastPruned).
func TestOwnRewriteMatchesGeneralPath(t *testing.T) {
	runChecked(t, func() { ownRewrites, lastPruned = 0, 0 }, func(t *testing.T, allOff bool) {
		t.Logf("%d rewrites of a cell of the writer's own checked, %d instances replaced in place", ownRewrites, lastPruned)
		if min := map[bool]int{false: 2000, true: 20000}[allOff]; ownRewrites < min || lastPruned < 1000 {
			t.Errorf("only %d rewrites and %d replacements in place checked: the programs no longer exercise rewriteOwn and putSite's shortcut", ownRewrites, lastPruned)
		}
	})
}

// runChecked lints every shipped program with the shortcuts checked, by
// default and with every pipe's same-pipe races off, each set of runs a
// subtest that calls reset before and check after it.
func runChecked(t *testing.T, reset func(), check func(t *testing.T, allOff bool)) {
	checkShortcuts = true
	defer func() { checkShortcuts = false }()
	off := SamePipe{V: SevOff, MTE3: SevOff, MTE2: SevOff, MTE1: SevOff, M: SevOff, FIX: SevOff, SDMA: SevOff}
	for _, tc := range []struct {
		name string
		sp   SamePipe
	}{
		{"default", SamePipe{}},
		{"every pipe off", off},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reset()
			eachProgram(t, func(_ string, obj *asm.Object) {
				runLintWith(t, obj, Options{SamePipe: tc.sp, Serial: true}).Findings()
			})
			check(t, tc.sp == off)
		})
	}
}

// runCheckedAtLeast is runChecked for a shortcut whose self-check counts
// what it compared in *n: it logs the count for each setting and fails
// when fewer than 20 000 were compared, so that a test whose programs no
// longer take shortcut (its name in the message) cannot pass by checking
// nothing.
func runCheckedAtLeast(t *testing.T, n *int, what, shortcut string) {
	t.Helper()
	runChecked(t, func() { *n = 0 }, func(t *testing.T, _ bool) {
		t.Helper()
		t.Logf("%d %s checked", *n, what)
		if *n < 20000 {
			t.Errorf("only %d %s checked: the programs no longer exercise %s", *n, what, shortcut)
		}
	})
}

// TestOwnRewriteChain feeds a cube's accumulator chain by hand: mads with no
// barrier between them, a barrier, then the FIX pipe's read racing the
// chain. The rewrites by the cube take rewriteOwn and the general path
// alike (checked), and the FIX read meets the state they left: the RAW with
// the last mad only, as the general path reports it.
func TestOwnRewriteChain(t *testing.T) {
	for _, check := range []bool{false, true} {
		checkShortcuts, ownRewrites = check, 0
		var p prog
		mm := p.op("tmatmul", 10, asm.PipeM)
		st := p.op("tstore", 20, asm.PipeFIX)
		bar := p.op("pipe_barrier", 15, asm.PipeM)
		s := newSim(Options{Serial: true})
		acc := &asm.TileInfo{Name: "%c", Space: asm.L0C, Addr: []int64{0}, Bytes: 0x1000, Count: 1}
		cube := ag(0, 0, asm.PipeM)
		for i := range 6 {
			if i == 3 {
				s.barrier(0, 0, asm.PipeM, bar)
			}
			accs := []machine.Access{tileAcc(acc, 0, 0, 0, false), tileAcc(acc, 0, 0, 0, true)}
			if i == 0 {
				accs = accs[1:] // #init: the first mad only writes
			}
			s.exec(cube, mm, []int64{int64(i)}, accs...)
		}
		s.exec(ag(0, 0, asm.PipeFIX), st, nil, tileAcc(acc, 0, 0, 0, false))
		fs := s.d.Findings()
		checkShortcuts = false
		if got := kinds(fs); len(got) != 1 || got[0] != KindRAW {
			t.Fatalf("check %v: findings %v, want one RAW", check, got)
		}
		if check && ownRewrites < 4 {
			t.Errorf("only %d of the mads' writes checked", ownRewrites)
		}
	}
}

// TestHandoffMatchesGeneralPath runs every shipped program with the
// shortcuts checked, by default and with every pipe's same-pipe races off,
// so that each access taking handoff (a core-local tile handed between two
// pipes of a core) is also run through accessCell's general path and the
// two cells compared (checkHandoff panics on a difference, when the general
// path noted, moved or found uninitialised anything, or when an ordering
// Detector.before told is not the clock's).
func TestHandoffMatchesGeneralPath(t *testing.T) {
	runCheckedAtLeast(t, &handoffs, "handoffs", "handoff")
}

// TestLocalHitsMatchGeneralDispatch runs every shipped program with the
// shortcuts checked, so that each access hitLocal takes (a contiguous
// access of a core-local tile hitting the cache) is compared with the
// dispatch access's general path would have made (checkLocal), and its
// cell with the page's (checkHitSet, checkCachedCell).
func TestLocalHitsMatchGeneralDispatch(t *testing.T) {
	runCheckedAtLeast(t, &localHits, "local hits", "hitLocal")
}
