package hazard

import (
	"fmt"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
)

// ---- bounds ---------------------------------------------------------------

// tensorAt is where a rank's copy of a tensor lives in GM, once the host
// wrote it whole, and whether every byte of it is initialised (init,
// gmindex.go).
type tensorAt struct {
	base     int64
	ok, init bool
	// hostData says the host's last write of the tensor was data (not
	// poison), in generation hostGen; kernGen is the last generation a
	// kernel wrote it in and kernPrev the one before (hostDataAtStart).
	hostData                   bool
	hostGen, kernGen, kernPrev uint32
}

// hostDataAtStart says the host's data was the last write of tensor t of
// rank when the current run began: the host wrote it as data, and no
// kernel of an earlier run has written it since (this run's writes do not
// count: which lands before a read follows the timing).
func (d *Detector) hostDataAtStart(rank int32, t *asm.TensorInfo) bool {
	at := d.tensorBase.ref(rank, t.Index)
	if at == nil || !at.hostData {
		return false
	}
	before := at.kernGen
	if before == d.gen {
		before = at.kernPrev
	}
	return before == 0 || before < at.hostGen
}

// checkBounds notes an access outside its tile or tensor, and reports
// whether it noted nothing.
func (d *Detector) checkBounds(r *rec, acc *machine.Access) bool {
	// A strided access's runs all lie within its bounds: checking those
	// covers its last row, which Hi alone does not.
	lo, hi := acc.Bounds()
	if t := acc.Tile; t != nil && acc.Space != asm.GM && t.Bytes > 0 {
		// The element the operand named, not the first one holding lo:
		// elements of an array with a step below the tile size overlap on
		// purpose, and element 1's access starts inside element 0.
		el, ok := elemAt(acc)
		if !ok {
			if len(t.Addr) > 0 {
				d.oob(r, acc, fmt.Sprintf("%s %s [%#x, %#x) outside every element of tile %s", verb(acc), acc.Space, lo, hi, tileName(t, -1)))
				return false
			}
			return true
		}
		if base := t.Addr[el]; lo < base || hi > base+t.Bytes {
			where := "past the end of"
			if lo < base {
				where = "before the start of"
			}
			d.oob(r, acc, fmt.Sprintf("%s %s [%#x, %#x), %s tile %s [%#x, %#x)", verb(acc), acc.Space, lo, hi, where, elemName(t, el), base, base+t.Bytes))
			return false
		}
		return true
	}
	if t := acc.Tensor; t != nil && acc.Space == asm.GM {
		at := d.tensorBase.ref(acc.Rank, t.Index)
		if at == nil {
			return true
		}
		if acc.Write && at.kernGen != d.gen {
			at.kernPrev, at.kernGen = at.kernGen, d.gen // hostDataAtStart
		}
		base := at.base
		if at.ok && (lo < base || hi > base+t.Bytes) {
			d.oob(r, acc, fmt.Sprintf("%s bytes [%d, %d) of %s, which has %d bytes", verb(acc), lo-base, hi-base, tensorName(t, acc.Rank), t.Bytes))
			return false
		}
	}
	return true
}

// elemAt is the element of acc's tile array the access went through:
// Access.Elem, which the machine sets from the operand, or, for an access
// whose Elem does not name an element holding its first byte (one built by
// hand), the first element that does.
func elemAt(acc *machine.Access) (int, bool) {
	t := acc.Tile
	if e := int(acc.Elem); e >= 0 && e < len(t.Addr) && acc.Lo >= t.Addr[e] && acc.Lo < t.Addr[e]+t.Bytes {
		return e, true
	}
	for i, base := range t.Addr {
		if acc.Lo >= base && acc.Lo < base+t.Bytes {
			return i, true
		}
	}
	return 0, false
}

// verb is what the access did, for out-of-bounds messages.
func verb(acc *machine.Access) string {
	switch {
	case acc.Atomic && acc.Write:
		return "atomically adds to"
	case acc.Write:
		return "writes"
	}
	return "reads"
}

func (d *Detector) oob(r *rec, acc *machine.Access, msg string) {
	w := *r
	w.write = acc.Write
	lo, hi := acc.Bounds()
	d.notes = append(d.notes, raceNote{kind: KindOutOfBounds, cur: w, acc: *acc, lo: lo, hi: hi, single: true, msg: msg})
}

// WantsKind implements machine.KindFilter: the detector ignores stalls.
func (d *Detector) WantsKind(k machine.EventKind) bool { return k != machine.EvStall }
