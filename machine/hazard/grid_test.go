package hazard

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
)

// TestColumnWindows: a local tile read and written in column windows (one
// strided access per textract or tinsert) is tracked exactly, with no cell
// per row: windows that share rows but not bytes do not conflict, ones that
// share bytes do, and what the buffer held before its first strided access
// (when it switches to a 2-D view) survives the switch.
func TestColumnWindows(t *testing.T) {
	// 8 rows of 64 bytes at 0x1020: not a multiple of the row pitch, so the
	// 2-D view must start half a row early to keep every row whole.
	m := &asm.TileInfo{Name: "%m", Space: asm.L1, Addr: []int64{0x1020}, Bytes: 0x200, Count: 1}
	whole := func(write bool) machine.Access { return tileAcc(m, 0, 0, 0, write) }
	// window is columns [c0, c1) of rows [0, rows), as a strided access.
	window := func(c0, c1, rows int64, write bool) machine.Access {
		lo := m.Addr[0] + c0
		return machine.Access{Space: asm.L1, Rank: 0, Core: 0, Lo: lo, Hi: lo + c1 - c0, Rows: rows, Pitch: 64, Write: write, Tile: m}
	}
	type found struct {
		Kind          string
		First, Second int
		Range         [2]int64
	}
	for _, tc := range []struct {
		name   string
		synced bool           // the fill is flagged to MTE1 before the read
		rd     machine.Access // MTE1, line 20
		wr     *machine.Access
		want   []found
	}{
		{name: "windows in the same rows, other bytes", synced: true, rd: window(0, 16, 8, false),
			wr: ptr(window(32, 48, 8, true))},
		{name: "the same window", synced: true, rd: window(0, 16, 8, false), wr: ptr(window(0, 16, 8, true)),
			want: []found{{KindWAR, 20, 21, [2]int64{0x1020, 0x1020 + 7*64 + 16}}}},
		{name: "overlapping columns", synced: true, rd: window(0, 16, 8, false), wr: ptr(window(8, 24, 2, true)),
			want: []found{{KindWAR, 20, 21, [2]int64{0x1028, 0x1020 + 64 + 16}}}},
		{name: "a whole write after the window", synced: true, rd: window(16, 32, 8, false), wr: ptr(whole(true)),
			want: []found{{KindWAR, 20, 21, [2]int64{0x1030, 0x1020 + 7*64 + 32}}}},
		{name: "the fill before the switch is still seen", rd: window(16, 32, 8, false),
			want: []found{{KindRAW, 19, 20, [2]int64{0x1030, 0x1020 + 7*64 + 32}}}},
		{name: "unfilled rows", synced: true, rd: window(0, 16, 9, false),
			want: []found{{KindOutOfBounds, 20, 0, [2]int64{0x1020, 0x1020 + 8*64 + 16}},
				{KindUninitRead, 20, 0, [2]int64{0x1220, 0x1230}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &prog{}
			fill := p.op("tload", 19, MTE2)
			rd := p.op("textract", 20, MTE1)
			wr := p.op("tinsert", 21, MTE2)
			set := p.op("set_flag", 30, S)
			wt := p.op("wait_flag", 31, S)
			// The fill and the tinsert share MTE2: leave its in-order
			// queue to the same-pipe check's own tests.
			s := newSim(Options{SamePipe: SamePipe{MTE2: SevOff}})
			s.issue(0, 0, fill, MTE2)
			if tc.synced {
				s.issue(0, 0, set, MTE2)
				s.issue(0, 0, wt, MTE1)
			}
			s.issue(0, 0, rd, MTE1)
			s.issue(0, 0, wr, MTE2)
			s.exec(ag(0, 0, MTE2), fill, nil, whole(true))
			if tc.synced {
				s.set(0, 0, MTE2, MTE1, 0, set)
				s.wait(0, 0, MTE2, MTE1, 0, wt)
			}
			s.exec(ag(0, 0, MTE1), rd, nil, tc.rd)
			if tc.wr != nil {
				s.exec(ag(0, 0, MTE2), wr, nil, *tc.wr)
			}
			var got []found
			for _, f := range s.d.Findings() {
				got = append(got, found{f.Kind, f.First.Line, f.Second.Line, f.Range})
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("findings (-want +got):\n%s", d)
			}
		})
	}
}

// TestColumnWindowsLowBytes: bytes below the first whole row of the 2-D
// view (a tile at 0 when the windowed tile starts mid-row) keep their state
// through the switch and after it.
func TestColumnWindowsLowBytes(t *testing.T) {
	m := &asm.TileInfo{Name: "%m", Space: asm.L1, Addr: []int64{0x1020}, Bytes: 0x200, Count: 1}
	low := &asm.TileInfo{Name: "%low", Space: asm.L1, Addr: []int64{0}, Bytes: 0x10, Count: 1}
	p := &prog{}
	ld := p.op("tload", 10, MTE2)
	fill := p.op("tload", 11, MTE1)
	rd := p.op("textract", 12, MTE1)
	use := p.op("tmov", 13, MTE1)
	s := newSim(Options{SamePipe: SamePipe{MTE1: SevOff}})
	for _, op := range []*asm.COp{ld, fill, rd, use} {
		s.issue(0, 0, op, op.Pipe)
	}
	s.exec(ag(0, 0, MTE2), ld, nil, tileAcc(low, 0, 0, 0, true))
	s.exec(ag(0, 0, MTE1), fill, nil, tileAcc(m, 0, 0, 0, true))
	s.exec(ag(0, 0, MTE1), rd, nil, machine.Access{Space: asm.L1, Lo: 0x1020, Hi: 0x1030, Rows: 8, Pitch: 64, Tile: m})
	s.exec(ag(0, 0, MTE1), use, nil, tileAcc(low, 0, 0, 0, false))
	fs := s.d.Findings()
	if len(fs) != 1 || fs[0].Kind != KindRAW || fs[0].First.Line != 10 || fs[0].Second.Line != 13 || fs[0].Range != [2]int64{0, 0x10} {
		t.Fatalf("want the RAW on %%low from line 10 to 13, got %+v", fs)
	}
}

// TestColumnWindowsOtherPitch: once a buffer's view has rows of one tile's
// pitch, windows of a tile with another pitch still conflict exactly: only
// where their bytes meet.
func TestColumnWindowsOtherPitch(t *testing.T) {
	m := &asm.TileInfo{Name: "%m", Space: asm.L1, Addr: []int64{0}, Bytes: 0x200, Count: 1}      // rows of 64 bytes
	n := &asm.TileInfo{Name: "%n", Space: asm.L1, Addr: []int64{0x1000}, Bytes: 0x200, Count: 1} // rows of 128 bytes
	win := func(tl *asm.TileInfo, c0, c1, rows, pitch int64, write bool) machine.Access {
		lo := tl.Addr[0] + c0
		return machine.Access{Space: asm.L1, Lo: lo, Hi: lo + c1 - c0, Rows: rows, Pitch: pitch, Write: write, Tile: tl}
	}
	for _, tc := range []struct {
		name string
		wr   machine.Access
		want []string
	}{
		{"other columns", win(n, 32, 48, 4, 128, true), nil},
		{"the same columns", win(n, 8, 24, 4, 128, true), []string{KindWAR}},
		{"a whole row the window crosses", win(n, 0, 128, 1, 0, true), []string{KindWAR}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &prog{}
			fill, set, wait := p.op("tmov", 10, MTE1), p.op("set_flag", 11, S), p.op("wait_flag", 12, S)
			rdM, rdN, wr := p.op("textract", 13, MTE1), p.op("textract", 14, MTE1), p.op("tinsert", 15, MTE2)
			s := newSim(Options{SamePipe: SamePipe{MTE1: SevOff}})
			s.issue(0, 0, fill, MTE1)
			s.issue(0, 0, set, MTE1)
			s.issue(0, 0, wait, MTE2)
			s.issue(0, 0, rdM, MTE1)
			s.issue(0, 0, rdN, MTE1)
			s.issue(0, 0, wr, MTE2)
			// The fill is flagged to MTE2, the reads are not: only they
			// can race the write.
			s.exec(ag(0, 0, MTE1), fill, nil, tileAcc(m, 0, 0, 0, true), tileAcc(n, 0, 0, 0, true))
			s.set(0, 0, MTE1, MTE2, 0, set)
			s.wait(0, 0, MTE1, MTE2, 0, wait)
			s.exec(ag(0, 0, MTE1), rdM, nil, win(m, 0, 16, 8, 64, false)) // the view takes rows of 64 bytes
			s.exec(ag(0, 0, MTE1), rdN, nil, win(n, 0, 24, 4, 128, false))
			s.exec(ag(0, 0, MTE2), wr, nil, tc.wr)
			var got []string
			for _, f := range s.d.Findings() {
				if f.Buffer == "%n" {
					got = append(got, f.Kind)
				}
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("findings on %%n (-want +got):\n%s", d)
			}
		})
	}
}

// TestWindowedL1StaysSmall runs allgather_gemm at its default BASE_M=64,
// whose K loop reads each L1 tile in four column windows of 64 rows, and
// requires the compute cores' L1 shadows to end small. In a byte map each
// window was a cell per row, split off a page of hundreds of cells and merged
// again by the next load: the 8-rank lint took 29 s against 2.3 s of
// simulation.
func TestWindowedL1StaysSmall(t *testing.T) {
	obj := assembleProgram(t, "allgather_gemm", asm.Define{Name: "RANKS", Value: "2"}, asm.Define{Name: "MODE", Value: "pipelined"})
	d := runLint(t, obj, true)
	grids, most := 0, 0
	for _, row := range d.shadow.rows {
		for i, sm := range row {
			if sm == nil || i < int(asm.NumSpaces) || asm.Space(i%int(asm.NumSpaces)) != asm.L1 {
				continue
			}
			for _, pg := range sm.dense {
				if pg != nil {
					most = max(most, len(pg.cells))
				}
			}
			if sm.grid != nil {
				grids++
				for _, b := range sm.grid.bands {
					most = max(most, len(b.cols.cells))
				}
			}
		}
	}
	if grids == 0 {
		t.Fatal("no L1 buffer switched to the 2-D view: the test no longer covers column windows")
	}
	if most > 16 {
		t.Errorf("an L1 shadow list holds %d cells; column windows should keep a tile a few cells wide", most)
	}
	t.Logf("%d L1 buffers in 2-D, at most %d cells in a list", grids, most)
}

// TestWindowCellsCached runs allgather_gemm's column windows with the
// shortcuts checked: an L1 window that hits its cell through the cell cache
// must be the cell the 2-D view's own lookup finds, and report the bytes
// the view would (checkCachedCell). The default BASE_M=64 splits the L1
// bands between the loads and the windows, so stale cells are met too.
func TestWindowCellsCached(t *testing.T) {
	checkShortcuts, gridShortcuts, runShortcuts = true, 0, 0
	defer func() { checkShortcuts = false }()
	for _, defs := range [][]asm.Define{
		{{Name: "RANKS", Value: "2"}, {Name: "MODE", Value: "pipelined"}},
		{{Name: "RANKS", Value: "2"}, {Name: "MODE", Value: "pipelined"}, {Name: "BASE_M", Value: "128"}},
	} {
		runLint(t, assembleProgram(t, "allgather_gemm", defs...), true)
	}
	if gridShortcuts < 100 {
		t.Errorf("only %d L1 windows hit the cell cache: the test no longer covers it", gridShortcuts)
	}
	// The whole-tile loads of the L1 tiles cover several cells (four
	// windows of A in one band, one cell in each of four bands of B).
	if runShortcuts < 40 {
		t.Errorf("only %d whole L1 tiles hit the cell cache as runs of cells", runShortcuts)
	}
	t.Logf("%d L1 windows and %d whole L1 tiles hit the cell cache", gridShortcuts, runShortcuts)
}

func ptr[T any](v T) *T { return &v }
