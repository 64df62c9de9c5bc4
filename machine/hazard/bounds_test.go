package hazard

import (
	"strings"
	"testing"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
)

// The bounds check takes the element the operand named (Access.Elem), so an
// array whose elements overlap on purpose (step below the tile size) is in
// bounds, and the message's verb is the access's own.
func TestOutOfBoundsElement(t *testing.T) {
	// Three 0x100-byte elements 0x80 apart: each starts inside the one before.
	win := &asm.TileInfo{Name: "%w", Space: asm.UB, Addr: []int64{0, 0x80, 0x100}, Bytes: 0x100, Count: 3, IsArray: true}
	elem := func(el int32, lo, hi int64, write bool) machine.Access {
		return machine.Access{Space: asm.UB, Core: 0, Lo: lo, Hi: hi, Write: write, Tile: win, Elem: el}
	}
	strided := func(a machine.Access, rows, pitch int64) machine.Access {
		a.Rows, a.Pitch = rows, pitch
		return a
	}
	atomic := func(a machine.Access) machine.Access { a.Atomic = true; return a }
	for _, tc := range []struct {
		name string
		acc  machine.Access
		want string // "" for in bounds, else substrings of the message, |-separated
	}{
		{"element 1, whole", elem(1, 0x80, 0x180, true), ""},
		{"element 2, whole, read", elem(2, 0x100, 0x200, false), ""},
		{"element 1, window rows inside it", strided(elem(1, 0x80, 0x90, false), 4, 0x40), ""},
		{"element 1 past its end, write", elem(1, 0x80, 0x1a0, true), "tload (MTE2, r0.c0) writes UB [0x80, 0x1a0), past the end of tile %w[1] [0x80, 0x180)"},
		{"element 0 past its end, read", elem(0, 0, 0x120, false), "reads UB [0x0, 0x120), past the end of tile %w[0] [0x0, 0x100)"},
		{"element 1 window's last row past its end", strided(elem(1, 0x80, 0x90, true), 5, 0x40), "writes UB [0x80, 0x190), past the end of tile %w[1]"},
		{"outside every element", elem(0, 0x400, 0x480, true), "writes UB [0x400, 0x480) outside every element of tile %w"},
		{"GM write past the tensor", gmAcc(gmA, 0, 0x8F00, 0x9010, true), "writes bytes [3840, 4112) of @A"},
		{"GM read past the tensor", gmAcc(gmA, 0, 0x8F00, 0x9010, false), "reads bytes [3840, 4112) of @A"},
		{"GM atomic add past the tensor", atomic(gmAcc(gmA, 0, 0x8F00, 0x9010, true)), "atomically adds to bytes [3840, 4112) of @A"},
		{"GM in bounds", gmAcc(gmA, 0, 0x8F00, 0x9000, true), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &prog{}
			op := p.op("tload", 10, MTE2)
			s := newSim(Options{})
			s.hostInit(gmA, 0, 0x8000)
			s.ev(machine.Event{Kind: machine.EvRunStart})
			// An earlier write of the opposite kind, so a verb taken from
			// anything but this access shows.
			prev := elem(0, 0, 0x100, !tc.acc.Write)
			s.exec(ag(0, 0, MTE2), p.op("tload", 9, MTE2), nil, prev)
			s.exec(ag(0, 0, MTE2), op, nil, tc.acc)
			var got []Finding
			for _, f := range s.d.Findings() {
				if f.Kind == KindOutOfBounds {
					got = append(got, f)
				}
			}
			if tc.want == "" {
				if len(got) != 0 {
					t.Fatalf("got %+v, want in bounds", got)
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("got %+v, want one out-of-bounds", got)
			}
			for _, w := range strings.Split(tc.want, "|") {
				if !strings.Contains(got[0].Message, w) {
					t.Errorf("message %q lacks %q", got[0].Message, w)
				}
			}
		})
	}
}
