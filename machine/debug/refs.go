package debug

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
	"github.com/ptoasm/ptoasm/memory"
)

// gmRef is a rectangular region of a GM tensor: [lo[d], hi[d]) per dimension.
type gmRef struct {
	t      *asm.TensorInfo
	lo, hi []int64
	text   string
}

// tileRef is a tile, or one element of a tile array (idx -1: every element).
type tileRef struct {
	t    *asm.TileInfo
	idx  int
	text string
}

// splitRef splits "name[a, b:c]" into the name and the index texts.
func splitRef(s string) (name string, idx []string, err error) {
	s = strings.TrimSpace(s)
	open := strings.IndexByte(s, '[')
	if open < 0 {
		return s, nil, nil
	}
	if !strings.HasSuffix(s, "]") {
		return "", nil, fmt.Errorf("%s: missing ]", s)
	}
	name = strings.TrimSpace(s[:open])
	inner := s[open+1 : len(s)-1]
	if strings.TrimSpace(inner) == "" {
		return "", nil, fmt.Errorf("%s: empty index", s)
	}
	for _, p := range strings.Split(inner, ",") {
		idx = append(idx, strings.TrimSpace(p))
	}
	return name, idx, nil
}

// intValue reads an integer literal or a constant of the program.
func (d *Debugger) intValue(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if v, err := strconv.ParseInt(s, 0, 64); err == nil {
		return v, nil
	}
	if v, ok := d.obj.Const(s); ok {
		return v, nil
	}
	return 0, fmt.Errorf("%q is not an integer or a constant of the program", s)
}

// parseGM reads @T, @T[i, j] or @T[r0:r1, c0:c1]; missing trailing indices
// and empty bounds take the whole dimension.
func (d *Debugger) parseGM(s string) (*gmRef, error) {
	if !strings.HasPrefix(s, "@") {
		return nil, fmt.Errorf("%s: want a GM reference such as @T[0:4, 0:8]", s)
	}
	name, idx, err := splitRef(s[1:])
	if err != nil {
		return nil, err
	}
	t := d.obj.Tensor(name)
	if t == nil {
		return nil, fmt.Errorf("no GM tensor @%s", name)
	}
	n := len(t.Shape)
	if len(idx) > n {
		return nil, fmt.Errorf("%s: @%s has %d dimensions", s, name, n)
	}
	r := &gmRef{t: t, lo: make([]int64, n), hi: make([]int64, n), text: s}
	for k := 0; k < n; k++ {
		r.lo[k], r.hi[k] = 0, t.Shape[k]
		if k >= len(idx) {
			continue
		}
		x := idx[k]
		a, b, isRange := strings.Cut(x, ":")
		if a = strings.TrimSpace(a); a != "" {
			if r.lo[k], err = d.intValue(a); err != nil {
				return nil, err
			}
		}
		switch {
		case !isRange:
			r.hi[k] = r.lo[k]
			if r.lo[k] < math.MaxInt64 { // lo + 1 would wrap into the message
				r.hi[k]++
			}
		case strings.TrimSpace(b) != "":
			if r.hi[k], err = d.intValue(b); err != nil {
				return nil, err
			}
		}
		if r.lo[k] < 0 || r.hi[k] > t.Shape[k] || r.lo[k] >= r.hi[k] {
			return nil, fmt.Errorf("%s: index %d range [%d, %d) is outside 0..%d or empty", s, k, r.lo[k], r.hi[k], t.Shape[k])
		}
	}
	return r, nil
}

// elems calls fn for every element of the region in row-major order with its
// index vector and byte offset in the tensor's buffer.
func (r *gmRef) elems(fn func(idx []int64, off int64) error) error {
	n := len(r.lo)
	idx := append([]int64(nil), r.lo...)
	for {
		off, err := machine.GMOffset(r.t, idx)
		if err != nil {
			return err
		}
		if err := fn(idx, off); err != nil {
			return err
		}
		k := n - 1
		for ; k >= 0; k-- {
			idx[k]++
			if idx[k] < r.hi[k] {
				break
			}
			idx[k] = r.lo[k]
		}
		if k < 0 {
			return nil
		}
	}
}

// Bounds on the work one GM region may cost a command. A region is walked
// element by element (its values, or its byte ranges in a blocked layout)
// and, for a signal breakpoint, again after every engine step: a whole
// 4 GiB tensor made `break signal` run for minutes and past 5 GB before.
const (
	// maxRegionWalk is the most elements a command walks, or byte ranges a
	// write breakpoint holds.
	maxRegionWalk = 1 << 20
	// maxSignalElems is the most elements a signal breakpoint watches.
	maxSignalElems = 4096
)

// count is the number of elements in the region, saturating.
func (r *gmRef) count() int64 {
	return spanProduct(r.lo, r.hi)
}

// spanProduct is the product of hi[i]-lo[i], saturating at MaxInt64.
func spanProduct(lo, hi []int64) int64 {
	n := int64(1)
	for i := range lo {
		w := hi[i] - lo[i]
		if w != 0 && n > math.MaxInt64/w {
			return math.MaxInt64
		}
		n *= w
	}
	return n
}

// within refuses a region of n units (what: "elements", ...) over limit,
// the most that who (the command) takes.
func (r *gmRef) within(n, limit int64, what, who string) error {
	if n > limit {
		return fmt.Errorf("%s: %d %s, more than the %d %s; name a smaller region", r.text, n, what, limit, who)
	}
	return nil
}

// byteRanges is the region as sorted, merged byte ranges of the buffer.
func (r *gmRef) byteRanges() ([][2]int64, error) {
	if r.t.Layout == asm.LayoutND || len(r.lo) < 2 {
		return r.rowMajorRanges()
	}
	if err := r.within(r.count(), maxRegionWalk, "elements", "a write breakpoint walks"); err != nil {
		return nil, err
	}
	return r.elementRanges()
}

// elementRanges is byteRanges by a walk of every element, for any layout.
func (r *gmRef) elementRanges() ([][2]int64, error) {
	var out [][2]int64
	esz := int64(r.t.DType.Size())
	err := r.elems(func(_ []int64, off int64) error {
		if n := len(out); n > 0 && out[n-1][1] == off {
			out[n-1][1] = off + esz
			return nil
		}
		out = append(out, [2]int64{off, off + esz})
		return nil
	})
	return out, err
}

// rowMajorRanges is byteRanges of a row-major (ND) tensor, one range per
// run: the trailing dimensions the region covers whole, with its span of the
// one before them, are contiguous, so only the dimensions before those are
// walked (a whole tensor is one range, not a walk of its elements).
func (r *gmRef) rowMajorRanges() ([][2]int64, error) {
	shape := r.t.Shape
	k := len(shape) - 1
	block := int64(r.t.DType.Size()) // bytes of one index step in dimension k
	for k > 0 && r.lo[k] == 0 && r.hi[k] == shape[k] {
		block *= shape[k]
		k--
	}
	if err := r.within(spanProduct(r.lo[:k], r.hi[:k]), maxRegionWalk, "separate byte ranges", "a write breakpoint holds"); err != nil {
		return nil, err
	}
	var out [][2]int64
	outer := append([]int64(nil), r.lo[:k]...)
	for {
		var lin int64
		for i, x := range outer {
			lin = lin*shape[i] + x
		}
		lo := (lin*shape[k] + r.lo[k]) * block
		hi := lo + (r.hi[k]-r.lo[k])*block
		if n := len(out); n > 0 && out[n-1][1] == lo {
			out[n-1][1] = hi
		} else {
			out = append(out, [2]int64{lo, hi})
		}
		i := k - 1
		for ; i >= 0; i-- {
			if outer[i]++; outer[i] < r.hi[i] {
				break
			}
			outer[i] = r.lo[i]
		}
		if i < 0 {
			return out, nil
		}
	}
}

// parseTile reads %t or %t[k] in the kernel of the given core (or any kernel
// when that core has no tile of the name).
func (d *Debugger) parseTile(s string, kernel *asm.KernelInfo) (*tileRef, error) {
	if !strings.HasPrefix(s, "%") {
		return nil, fmt.Errorf("%s: want a tile such as %%acc or %%buf[1]", s)
	}
	name, idx, err := splitRef(s[1:])
	if err != nil {
		return nil, err
	}
	var t *asm.TileInfo
	find := func(k *asm.KernelInfo) {
		for _, x := range k.Tiles {
			if t == nil && x.Name == name {
				t = x
			}
		}
	}
	if kernel != nil {
		find(kernel)
	}
	for _, k := range d.obj.Kernels {
		if t == nil {
			find(k)
		}
	}
	if t == nil {
		return nil, fmt.Errorf("no tile %%%s", name)
	}
	r := &tileRef{t: t, idx: -1, text: s}
	switch {
	case len(idx) > 1:
		return nil, fmt.Errorf("%s: a tile array takes one index", s)
	case len(idx) == 1:
		v, err := d.intValue(idx[0])
		if err != nil {
			return nil, err
		}
		if v < 0 || v >= int64(len(t.Addr)) {
			return nil, fmt.Errorf("%s: index %d outside 0..%d", s, v, len(t.Addr)-1)
		}
		r.idx = int(v)
	case !t.IsArray:
		r.idx = 0
	}
	return r, nil
}

func (r *tileRef) elements() []int {
	if r.idx >= 0 {
		return []int{r.idx}
	}
	out := make([]int, len(r.t.Addr))
	for i := range out {
		out[i] = i
	}
	return out
}

// loadElem reads one element; poisoned elements report ok false.
func loadElem(b *memory.Buffer, dt asm.DType, off int64) (v float64, ok bool, err error) {
	if b.IsPoisoned(off, int64(dt.Size())) {
		return 0, false, nil
	}
	if dt.IsFloat() {
		v, err = b.LoadF(dt, off)
		return v, err == nil, err
	}
	i, err := b.LoadI(dt, off)
	return float64(i), err == nil, err
}

// parseCore reads a core name ("r1.aic0", or "aic0" on the current rank)
// and returns its rank and observer ids: a core of the run, or a block of a
// later wave by its block ("r0.b30.aic", as findings name it), which has no
// core until it starts.
func (d *Debugger) parseCore(s string) (rank int, ids []int, err error) {
	cs := d.m.Cores()
	for _, c := range cs {
		if c.Name == s {
			return c.Rank, []int{c.Core}, nil
		}
	}
	for _, c := range cs {
		if c.Rank == d.curRank && strings.TrimPrefix(c.Name, fmt.Sprintf("r%d.", c.Rank)) == s {
			return c.Rank, []int{c.Core}, nil
		}
	}
	for _, n := range []string{s, fmt.Sprintf("r%d.%s", d.curRank, s)} {
		if r, ids, ok := d.m.CoreIDs(n); ok {
			return r, ids, nil
		}
	}
	if strings.HasPrefix(s, "b") || strings.Contains(s, ".b") {
		return 0, nil, fmt.Errorf("no block %q in this program: a block after the first wave is rR.bB.aic, .aiv0 or .aiv1 (a mixed block) or .aiv, with B below the launch's blocks", s)
	}
	var names []string
	for _, c := range cs {
		names = append(names, c.Name)
	}
	return 0, nil, fmt.Errorf("no core %q in this run (cores: %s)", s, strings.Join(names, " "))
}

// coreArg is the core named by the optional argument, or the current core.
func (d *Debugger) coreArg(args []string) (machine.CoreView, error) {
	if len(args) == 0 {
		v, ok := d.m.CoreAt(d.curRank, d.curCore)
		if !ok {
			return v, fmt.Errorf("core %s has not run a kernel", d.m.CoreName(d.curRank, d.curCore))
		}
		return v, nil
	}
	r, ids, err := d.parseCore(args[0])
	if err != nil {
		return machine.CoreView{}, err
	}
	for _, c := range ids {
		if v, ok := d.m.CoreAt(r, c); ok {
			return v, nil
		}
	}
	name := d.m.CoreName(r, ids[0])
	if strings.Contains(name, ".b") {
		return machine.CoreView{}, fmt.Errorf("block %s is not running now (a block after the first wave has a core only while it runs)", name)
	}
	return machine.CoreView{}, fmt.Errorf("core %s has not run a kernel", name)
}
