package hazard

// table maps (rank, slot) to a value through two slice levels, not a hash
// map: agents, buffers and tensors are looked up once per event or access,
// and hashing was a sixth of the detector's time. Ranks and slots are small
// dense numbers (cores, pipes, spaces, tensor indices).
type table[T any] struct {
	rows [][]T
	// odd holds keys outside the dense range (negative or huge, from
	// malformed events), so junk cannot make the table huge or panic.
	odd map[[2]int]*T
}

const maxDenseRank, maxDenseSlot = 1 << 12, 1 << 16

func dense(rank int32, slot int) bool {
	return rank >= 0 && rank < maxDenseRank && slot >= 0 && slot < maxDenseSlot
}

// at returns the entry for (rank, slot), growing the table.
func (t *table[T]) at(rank int32, slot int) *T {
	if !dense(rank, slot) {
		k := [2]int{int(rank), slot}
		p := t.odd[k]
		if p == nil {
			if t.odd == nil {
				t.odd = map[[2]int]*T{}
			}
			p = new(T)
			t.odd[k] = p
		}
		return p
	}
	if int(rank) >= len(t.rows) {
		t.rows = append(t.rows, make([][]T, int(rank)+1-len(t.rows))...)
	}
	row := t.rows[rank]
	if slot >= len(row) {
		row = append(row, make([]T, slot+1-len(row))...)
		t.rows[rank] = row
	}
	return &row[slot]
}

// get returns the entry for (rank, slot), or the zero value without growing.
func (t *table[T]) get(rank int32, slot int) T {
	var zero T
	if !dense(rank, slot) {
		if p := t.odd[[2]int{int(rank), slot}]; p != nil {
			return *p
		}
		return zero
	}
	if int(rank) >= len(t.rows) || slot >= len(t.rows[rank]) {
		return zero
	}
	return t.rows[rank][slot]
}

// ref returns the entry for (rank, slot), or nil when the table has none,
// without growing.
func (t *table[T]) ref(rank int32, slot int) *T {
	if !dense(rank, slot) {
		return t.odd[[2]int{int(rank), slot}]
	}
	if int(rank) >= len(t.rows) || slot >= len(t.rows[rank]) {
		return nil
	}
	return &t.rows[rank][slot]
}

// made returns m's entry for k, making the map and the entry on first use:
// the detector's rare per-key records (FFTS counts, L0C unit hand-offs)
// exist only in the runs that use them.
func made[K comparable, V any](m *map[K]*V, k K) *V {
	if *m == nil {
		*m = map[K]*V{}
	}
	v := (*m)[k]
	if v == nil {
		v = new(V)
		(*m)[k] = v
	}
	return v
}
