package hazard

import (
	"fmt"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
)

// rmwOps returns the ops of a kernel that takes a ticket from word 0 of
// @S: `ld` at line 10, `st` at line 11 (rmw.go).
func rmwOps() (ld, st *asm.COp) {
	p := &prog{}
	ld, st = p.op("ld", 10, asm.PipeS), p.op("st", 11, asm.PipeS)
	ld.Args = []asm.Arg{{Kind: asm.ArgReg}, {Kind: asm.ArgGM, GM: sigCnt}}
	st.Args = []asm.Arg{{Kind: asm.ArgGM, GM: sigCnt}, {Kind: asm.ArgScalar}}
	k := &asm.KernelInfo{Name: "k", Ops: p.ops}
	ld.Kernel, st.Kernel = k, k
	return ld, st
}

// TestSignalReadModifyWrite: two AIVs each take a ticket from one signal
// word, `ld` then `st` of it, nothing ordering them. Whatever the
// interleaving (even one block's load and store wholly before the other's,
// whose load then reads, and acquires, the first one's store), either
// block's store may land between the other's load and store: WAR `ld, st`
// (the same kernel's lines), one pipe pair per block, in every order. A
// load no store of its agent follows is a poll, and two plain stores are
// flag-style signalling: neither is a finding.
func TestSignalReadModifyWrite(t *testing.T) {
	type step struct {
		core  int32
		store bool
	}
	ldX, stX, ldY, stY := step{0, false}, step{0, true}, step{1, false}, step{1, true}
	// Every interleaving of X's ld, st with Y's ld, st.
	orders := [][]step{
		{ldX, stX, ldY, stY}, {ldX, ldY, stX, stY}, {ldX, ldY, stY, stX},
		{ldY, ldX, stX, stY}, {ldY, ldX, stY, stX}, {ldY, stY, ldX, stX},
	}
	cases := []struct {
		name  string
		steps []step
		raced bool
	}{
		{"poll beside a ticket", []step{ldX, ldY, stY}, false},
		{"poll beside a ticket, store first", []step{ldY, stY, ldX}, false},
		{"two plain stores", []step{stX, stY}, false},
	}
	for i, o := range orders {
		cases = append(cases, struct {
			name  string
			steps []step
			raced bool
		}{fmt.Sprint("tickets ", i), o, true})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newSim(Options{})
			ld, st := rmwOps()
			s.hostInit(sigCnt, 0, 0x3000)
			s.ev(machine.Event{Kind: machine.EvRunStart})
			for _, x := range tc.steps {
				op := ld
				if x.store {
					op = st
				}
				s.exec(ag(0, x.core, asm.PipeS), op, nil, gmAcc(sigCnt, 0, 0x3000, 0x3004, x.store))
			}
			s.ev(machine.Event{Kind: machine.EvRunEnd})
			n := 0
			if tc.raced {
				n = 2
			}
			wantRace(t, s.d.Findings(), n, KindWAR, 10, 11)
		})
	}
}
