package pipes

import (
	_ "embed"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/ptoasm/ptoasm/asm"
)

//go:embed profiles/a2a3.txt
var a2a3Text []byte

// DMAPath names one data-movement route between two buffers; each has its own
// bandwidth and fixed latency in the profile.
type DMAPath uint8

const (
	PathGMUB   DMAPath = iota // MTE2 on an AIV (TLOAD to Vec)
	PathGML1                  // MTE2 on an AIC (TLOAD to Mat)
	PathUBGM                  // MTE3 on an AIV (TSTORE from Vec)
	PathL1GM                  // MTE3 on an AIC (TSTORE from Mat)
	PathUBUB                  // V (TMOV Vec→Vec, copy_ubuf_to_ubuf)
	PathL0CGM                 // FIX (TSTORE from Acc)
	PathL0CL1                 // FIX (TMOV Acc→Mat)
	PathL1L0A                 // MTE1 (TMOV/TEXTRACT Mat→Left)
	PathL1L0B                 // MTE1 (TMOV/TEXTRACT Mat→Right)
	PathL1BT                  // MTE1 (TMOV Mat→Bias)
	PathL1FB                  // MTE1/FIX (TMOV Mat→Scaling)
	PathL1Fill                // MTE2 (create_cbuf_matrix: TFILLPAD/TEXPANDS on Mat)
	NumDMAPaths
)

var dmaPathNames = [NumDMAPaths]string{"gm_ub", "gm_l1", "ub_gm", "l1_gm", "ub_ub", "l0c_gm", "l0c_l1", "l1_l0a", "l1_l0b", "l1_bt", "l1_fb", "l1_fill"}

func (d DMAPath) String() string {
	if d < NumDMAPaths {
		return dmaPathNames[d]
	}
	return "invalid"
}

// DMAPathFor returns the path that moves data from src to dst, if A2/A3 has one.
func DMAPathFor(src, dst asm.Space) (DMAPath, bool) {
	switch {
	case src == asm.GM && dst == asm.UB:
		return PathGMUB, true
	case src == asm.GM && dst == asm.L1:
		return PathGML1, true
	case src == asm.UB && dst == asm.GM:
		return PathUBGM, true
	case src == asm.L1 && dst == asm.GM:
		return PathL1GM, true
	case src == asm.UB && dst == asm.UB:
		return PathUBUB, true
	case src == asm.L0C && dst == asm.GM:
		return PathL0CGM, true
	case src == asm.L0C && dst == asm.L1:
		return PathL0CL1, true
	case src == asm.L1 && dst == asm.L0A:
		return PathL1L0A, true
	case src == asm.L1 && dst == asm.L0B:
		return PathL1L0B, true
	case src == asm.L1 && dst == asm.BT:
		return PathL1BT, true
	case src == asm.L1 && dst == asm.FB:
		return PathL1FB, true
	}
	return NumDMAPaths, false
}

// DMAParams is one path's cost: cycles = Latency + bytes/BW.
type DMAParams struct {
	BW      float64 // bytes per cycle
	Latency int64   // cycles, paid once per transfer
}

// CubeParams is the mad formula (machine-facts §4.4).
type CubeParams struct {
	Head          int64 // paid only when the cube queue is empty
	RepeatF16     int64 // cycles per 16×k×16 step, fp16
	RepeatBF16    int64
	RepeatI8      int64
	RepeatF32     int64
	KGranuleBytes int64 // k per step = KGranuleBytes / sizeof(A)
}

// VecParams is one vector intrinsic's head/slope/tail (machine-facts §4.5).
type VecParams struct {
	Head  int64 // charged when the V queue is empty
	Slope int64 // cycles per 256-byte repeat
	Tail  int64 // drained at the next sync or barrier on V
}

// SyncParams holds the costs of synchronisation instructions.
type SyncParams struct {
	SetFlag     int64
	WaitFlag    int64
	Barrier     int64
	FFTSSet     int64
	FFTSWait    int64
	DSB         int64
	FlagHandoff int64 // set firing → the waiting pipe may proceed
	FFTSLatency int64 // cross-core set → the other core sees the count
}

// ScalarParams holds the scalar unit's costs.
type ScalarParams struct {
	Op      int64 // one scalar instruction (address math, control flow)
	GMLoad  int64 // a load that misses the data cache (after dcci)
	GMStore int64 // a store written back to GM (dcci flush)
	Atomic  int64 // st_atomic to GM
	Dcci    int64 // the cache maintenance instruction itself
}

// Topology is how ranks are wired.
type Topology uint8

const (
	TopoMesh   Topology = iota // every pair of ranks has its own link (A2 8-NPU HCCS)
	TopoRing                   // neighbours only; hops = ring distance
	TopoSwitch                 // every rank one link to a switch; two hops between ranks
	numTopologies
)

var topologyNames = [numTopologies]string{"mesh", "ring", "switch"}

func (t Topology) String() string {
	if t < numTopologies {
		return topologyNames[t]
	}
	return "invalid"
}

// Visibility says when a remote GM write becomes visible to other ranks.
type Visibility uint8

const (
	VisibleAtCompletion Visibility = iota // when the writing DMA completes
	VisibleAtDSB                          // only after the writer's next dsb
	numVisibilities
)

var visibilityNames = [numVisibilities]string{"completion", "dsb"}

func (v Visibility) String() string {
	if v < numVisibilities {
		return visibilityNames[v]
	}
	return "invalid"
}

// LinkParams describes inter-rank links.
type LinkParams struct {
	Topology Topology
	Latency  int64   // cycles per hop for a remote access
	StreamBW float64 // bytes/cycle one MTE stream reaches against remote GM
	BW       float64 // bytes/cycle a link carries in one direction, shared by all users
	// StreamOverhead is the share of the link each further stream in flight
	// costs: s streams get BW / (1 + StreamOverhead·(s−1)) between them.
	StreamOverhead float64
}

// SDMAParams describes the off-core SDMA engine used by the async comm ops.
type SDMAParams struct {
	Latency int64 // cycles per async op (SQE build, doorbell, completion)
	BW      float64
}

// Profile is every timing parameter of one machine. Fields are typed so the
// simulator reads them directly; Set, Fprint and Keys reach them through the
// static parameter table, never through a map.
type Profile struct {
	Name string

	ClockHz    float64
	AICPerRank int64
	AIVPerRank int64

	// Mem is each buffer's capacity in bytes, indexed by asm.Space (GM = HBM per rank).
	Mem      [asm.NumSpaces]int64
	MemAlign int64

	// QueueDepth bounds each pipe's instruction queue, indexed by asm.Pipe; the
	// scalar unit stalls when it would overfill one.
	QueueDepth [asm.NumPipes]int64

	DMA           [NumDMAPaths]DMAParams
	DMABlockBytes int64   // each row of a transfer is rounded up to whole blocks
	GMBW          float64 // bytes/cycle of HBM per rank, shared by all its cores

	// L2 is each rank's (die's) shared cache in front of HBM; Size 0 turns it off.
	L2 L2Params

	Cube CubeParams

	VecRepeatBytes int64
	VecCountFloor  int64 // extra cycles of count-mode binary ops
	Vec            [NumVecOps]VecParams

	Sync   SyncParams
	Scalar ScalarParams

	TWaitPoll         int64 // cycles between two polls of a TWAIT spin
	TWaitBarrierEvery int64 // a pipe_barrier(ALL) every this many polls
	TWaitMaxPolls     int64 // the library asserts after this many polls

	Link           LinkParams
	SDMA           SDMAParams
	LaunchOverhead int64 // host-timed kernel launch + completion; not part of kernel cycles
	// BlockStart: cycles from a core finishing one block of a launch with more
	// blocks than cores to the next block starting on it (the first wave
	// starts with the launch and does not pay it).
	BlockStart int64
	// KernelStart: cycles from a launch (a run) to its first wave of blocks
	// starting: the device's dispatch of the kernel to its cores. Device-side
	// timers read inside the kernel do not see it.
	KernelStart      int64
	RemoteVisibility Visibility

	// Jitter skews units independently (off while Seed is 0): a test of
	// timing-independence, not a property of any part (JitterParams).
	Jitter JitterParams

	// sources is the `# source:` comment of each parameter, by table index.
	sources []string
}

// JitterParams make a deterministic per-unit skew: every pipe of every core,
// each core's scalar and SDMA, drawn from Seed, runs its ops MaxFactor^u
// times slower (u uniform in [0, 1) per unit), and each core's first block
// starts up to Start cycles late (half by rank, half by core). Profile keys
// move every unit of a kind together; these make one AIV slower than its
// twin, one rank late, which is what a happens-before verdict must not see
// (docs/profile.md, "Jitter"). Seed 0 is off: no cost changes.
type JitterParams struct {
	Seed      int64
	MaxFactor float64
	Start     int64
}

// L2Params describe one die's L2 cache (machine-facts §3.1, §4.2).
type L2Params struct {
	Size int64   // capacity in bytes; 0 = no L2, every GM byte at gm.bw
	Line int64   // bytes per line
	BW   float64 // bytes/cycle the die's L2 serves, shared by all its cores
	// Usable is the share of Size the LRU model may fill: a real L2 is
	// set-associative and hashed, so conflict misses start before it is full.
	Usable float64
	// MissLatency is the extra cycles a GM read pays when its lines miss,
	// scaled by the share of its bytes that missed.
	MissLatency int64
}

// param is one row of the parameter table: a key, its unit, the range of
// sane values and typed access to its field.
type param struct {
	key  string
	unit string
	rng  string // "lo..hi", for docs and errors; "" for enums
	get  func(p *Profile) string
	set  func(p *Profile, v string) error
}

// The ranges every value must lie in. They are wide — orders of magnitude
// around any real NPU — but bounded, so that a typo (1e15 bytes of UB, a
// latency of 4.6e18 cycles, a bandwidth of 1e-9) is an error naming the key
// and its range instead of an out-of-memory kill, a panic, or cost
// arithmetic that overflows int64 and reports nonsense that looks plausible.
// With every latency at most maxCycles and every bandwidth at least minBW,
// one operation costs at most a few times 2^40 cycles even on 2^42 bytes.
const (
	maxCycles   = 1 << 30 // any per-operation cost or latency
	maxBufBytes = 1 << 26 // a core-local buffer (UB, L1, L0A/B/C, BT, FB): allocated per core
	maxGMBytes  = 1 << 46 // HBM per rank: only addresses, never allocated
	maxQueue    = 1 << 12 // a pipe's queue: allocated per pipe
	maxCores    = 1 << 8  // AIC or AIV per rank
	minBW       = 1e-3    // bytes/cycle
	maxBW       = 1e9
)

func intParam(key, unit string, min int64, ref func(p *Profile) *int64) param {
	return rangeParam(key, unit, min, maxCycles, ref)
}

func rangeParam(key, unit string, min, max int64, ref func(p *Profile) *int64) param {
	return param{
		key: key, unit: unit, rng: fmt.Sprintf("%d..%d", min, max),
		get: func(p *Profile) string { return strconv.FormatInt(*ref(p), 10) },
		set: func(p *Profile, v string) error {
			n, err := strconv.ParseInt(v, 0, 64)
			if err != nil {
				// Accept integral floats such as 1e6 for large counts.
				f, ferr := strconv.ParseFloat(v, 64)
				if ferr != nil || !(f >= -1<<62 && f <= 1<<62) || f != float64(int64(f)) {
					return fmt.Errorf("%s wants an integer in %d..%d %s, got %q", key, min, max, unit, v)
				}
				n = int64(f)
			}
			if n < min || n > max {
				return fmt.Errorf("%s must be in %d..%d %s, got %s", key, min, max, unit, v)
			}
			*ref(p) = n
			return nil
		},
	}
}

func floatParam(key, unit string, ref func(p *Profile) *float64) param {
	return floatRangeParam(key, unit, minBW, maxBW, ref)
}

func floatRangeParam(key, unit string, lo, hi float64, ref func(p *Profile) *float64) param {
	return param{
		key: key, unit: unit, rng: fmt.Sprintf("%g..%g", lo, hi),
		get: func(p *Profile) string { return strconv.FormatFloat(*ref(p), 'g', -1, 64) },
		set: func(p *Profile, v string) error {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return fmt.Errorf("%s wants a number, got %q", key, v)
			}
			if !(f >= lo && f <= hi) {
				return fmt.Errorf("%s must be in %g..%g %s, got %s", key, lo, hi, unit, v)
			}
			*ref(p) = f
			return nil
		},
	}
}

func enumParam(key string, names []string, get func(p *Profile) int, set func(p *Profile, i int)) param {
	return param{
		key: key, unit: strings.Join(names, "|"),
		get: func(p *Profile) string {
			if i := get(p); i >= 0 && i < len(names) {
				return names[i]
			}
			return "invalid"
		},
		set: func(p *Profile, v string) error {
			for i, n := range names {
				if n == v {
					set(p, i)
					return nil
				}
			}
			return fmt.Errorf("%s must be one of %s, got %q", key, strings.Join(names, ", "), v)
		},
	}
}

var (
	paramsOnce  sync.Once
	paramsTable []param
)

// params is the table in file order; a2a3.txt lists the keys in the same order
// (checked by a test) so Fprint reproduces the file's layout.
func params() []param {
	paramsOnce.Do(func() { paramsTable = buildParams() })
	return paramsTable
}

func buildParams() []param {
	var t []param
	t = append(t,
		floatRangeParam("clock_hz", "Hz", 1e6, 1e12, func(p *Profile) *float64 { return &p.ClockHz }),
		rangeParam("aic_per_rank", "cores", 1, maxCores, func(p *Profile) *int64 { return &p.AICPerRank }),
		rangeParam("aiv_per_rank", "cores", 1, 2*maxCores, func(p *Profile) *int64 { return &p.AIVPerRank }),
	)
	for _, s := range []asm.Space{asm.GM, asm.UB, asm.L1, asm.L0A, asm.L0B, asm.L0C, asm.BT, asm.FB} {
		s := s
		hi := int64(maxBufBytes)
		if s == asm.GM {
			hi = maxGMBytes
		}
		t = append(t, rangeParam("mem."+strings.ToLower(s.String()), "bytes", 1, hi, func(p *Profile) *int64 { return &p.Mem[s] }))
	}
	t = append(t, rangeParam("mem.align", "bytes", 1, 1<<16, func(p *Profile) *int64 { return &p.MemAlign }))
	for _, q := range []asm.Pipe{asm.PipeV, asm.PipeM, asm.PipeMTE1, asm.PipeMTE2, asm.PipeMTE3, asm.PipeFIX} {
		q := q
		t = append(t, rangeParam("queue."+strings.ToLower(q.String()), "entries", 1, maxQueue, func(p *Profile) *int64 { return &p.QueueDepth[q] }))
	}
	for d := DMAPath(0); d < NumDMAPaths; d++ {
		d := d
		t = append(t,
			floatParam("dma."+d.String()+".bw", "B/cycle", func(p *Profile) *float64 { return &p.DMA[d].BW }),
			intParam("dma."+d.String()+".latency", "cycles", 0, func(p *Profile) *int64 { return &p.DMA[d].Latency }),
		)
	}
	t = append(t,
		rangeParam("dma.block_bytes", "bytes", 1, 1<<16, func(p *Profile) *int64 { return &p.DMABlockBytes }),
		floatParam("gm.bw", "B/cycle", func(p *Profile) *float64 { return &p.GMBW }),
		rangeParam("l2.size", "bytes", 0, maxGMBytes, func(p *Profile) *int64 { return &p.L2.Size }),
		// The residency grid holds an int32 per 32 lines of every tensor
		// touched (machine/l2.go): lines under 64 bytes would make it a
		// memory bomb on a large tensor.
		rangeParam("l2.line", "bytes", 64, 1<<16, func(p *Profile) *int64 { return &p.L2.Line }),
		floatParam("l2.bw", "B/cycle", func(p *Profile) *float64 { return &p.L2.BW }),
		floatRangeParam("l2.usable", "fraction", 0.01, 1, func(p *Profile) *float64 { return &p.L2.Usable }),
		intParam("l2.miss_latency", "cycles", 0, func(p *Profile) *int64 { return &p.L2.MissLatency }),
		intParam("cube.head", "cycles", 0, func(p *Profile) *int64 { return &p.Cube.Head }),
		intParam("cube.repeat.f16", "cycles", 0, func(p *Profile) *int64 { return &p.Cube.RepeatF16 }),
		intParam("cube.repeat.bf16", "cycles", 0, func(p *Profile) *int64 { return &p.Cube.RepeatBF16 }),
		intParam("cube.repeat.i8", "cycles", 0, func(p *Profile) *int64 { return &p.Cube.RepeatI8 }),
		intParam("cube.repeat.f32", "cycles", 0, func(p *Profile) *int64 { return &p.Cube.RepeatF32 }),
		rangeParam("cube.k_granule_bytes", "bytes", 1, 1<<16, func(p *Profile) *int64 { return &p.Cube.KGranuleBytes }),
		rangeParam("vec.repeat_bytes", "bytes", 1, 1<<16, func(p *Profile) *int64 { return &p.VecRepeatBytes }),
		intParam("vec.count_floor", "cycles", 0, func(p *Profile) *int64 { return &p.VecCountFloor }),
	)
	for v := asm.CostVAdd; v < NumVecOps; v++ {
		if vecOps[v].kind == vkUBCopy {
			continue // costed on dma.ub_ub
		}
		v := v
		n := "vec." + v.String()
		t = append(t,
			intParam(n+".head", "cycles", 0, func(p *Profile) *int64 { return &p.Vec[v].Head }),
			intParam(n+".slope", "cycles/repeat", 0, func(p *Profile) *int64 { return &p.Vec[v].Slope }),
			intParam(n+".tail", "cycles", 0, func(p *Profile) *int64 { return &p.Vec[v].Tail }),
		)
	}
	t = append(t,
		intParam("sync.set_flag", "cycles", 0, func(p *Profile) *int64 { return &p.Sync.SetFlag }),
		intParam("sync.wait_flag", "cycles", 0, func(p *Profile) *int64 { return &p.Sync.WaitFlag }),
		intParam("sync.pipe_barrier", "cycles", 0, func(p *Profile) *int64 { return &p.Sync.Barrier }),
		intParam("sync.ffts_set", "cycles", 0, func(p *Profile) *int64 { return &p.Sync.FFTSSet }),
		intParam("sync.ffts_wait", "cycles", 0, func(p *Profile) *int64 { return &p.Sync.FFTSWait }),
		intParam("sync.dsb", "cycles", 0, func(p *Profile) *int64 { return &p.Sync.DSB }),
		intParam("sync.flag_handoff", "cycles", 0, func(p *Profile) *int64 { return &p.Sync.FlagHandoff }),
		intParam("sync.ffts_latency", "cycles", 0, func(p *Profile) *int64 { return &p.Sync.FFTSLatency }),
		intParam("scalar.op", "cycles", 0, func(p *Profile) *int64 { return &p.Scalar.Op }),
		intParam("scalar.gm_load", "cycles", 0, func(p *Profile) *int64 { return &p.Scalar.GMLoad }),
		intParam("scalar.gm_store", "cycles", 0, func(p *Profile) *int64 { return &p.Scalar.GMStore }),
		intParam("scalar.atomic", "cycles", 0, func(p *Profile) *int64 { return &p.Scalar.Atomic }),
		intParam("scalar.dcci", "cycles", 0, func(p *Profile) *int64 { return &p.Scalar.Dcci }),
		intParam("twait.poll_interval", "cycles", 1, func(p *Profile) *int64 { return &p.TWaitPoll }),
		intParam("twait.barrier_every", "polls", 1, func(p *Profile) *int64 { return &p.TWaitBarrierEvery }),
		intParam("twait.max_polls", "polls", 1, func(p *Profile) *int64 { return &p.TWaitMaxPolls }),
		enumParam("link.topology", topologyNames[:],
			func(p *Profile) int { return int(p.Link.Topology) },
			func(p *Profile, i int) { p.Link.Topology = Topology(i) }),
		intParam("link.latency", "cycles/hop", 0, func(p *Profile) *int64 { return &p.Link.Latency }),
		floatParam("link.stream_bw", "B/cycle", func(p *Profile) *float64 { return &p.Link.StreamBW }),
		floatParam("link.bw", "B/cycle", func(p *Profile) *float64 { return &p.Link.BW }),
		floatRangeParam("link.stream_overhead", "fraction/stream", 0, 1, func(p *Profile) *float64 { return &p.Link.StreamOverhead }),
		intParam("sdma.latency", "cycles", 0, func(p *Profile) *int64 { return &p.SDMA.Latency }),
		floatParam("sdma.bw", "B/cycle", func(p *Profile) *float64 { return &p.SDMA.BW }),
		intParam("host.launch_overhead", "cycles", 0, func(p *Profile) *int64 { return &p.LaunchOverhead }),
		intParam("block.start", "cycles", 0, func(p *Profile) *int64 { return &p.BlockStart }),
		intParam("kernel.start", "cycles", 0, func(p *Profile) *int64 { return &p.KernelStart }),
		enumParam("remote_visibility", visibilityNames[:],
			func(p *Profile) int { return int(p.RemoteVisibility) },
			func(p *Profile, i int) { p.RemoteVisibility = Visibility(i) }),
		rangeParam("jitter.seed", "(0 = off)", 0, 1<<62, func(p *Profile) *int64 { return &p.Jitter.Seed }),
		floatRangeParam("jitter.max", "x", 1, 1000, func(p *Profile) *float64 { return &p.Jitter.MaxFactor }),
		intParam("jitter.start", "cycles", 0, func(p *Profile) *int64 { return &p.Jitter.Start }),
	)
	return t
}

func findParam(key string) int {
	for i, pr := range params() {
		if pr.key == key {
			return i
		}
	}
	return -1
}

var (
	defaultOnce sync.Once
	defaultProf *Profile
	defaultErr  error
)

// DefaultProfile returns a fresh copy of the embedded a2a3 profile (910B1).
// The embedded file is parsed once; callers may modify their copy freely.
func DefaultProfile() *Profile {
	defaultOnce.Do(func() {
		defaultProf = &Profile{}
		defaultErr = parseInto(defaultProf, "a2a3.txt", a2a3Text, true)
		defaultProf.Name = "a2a3"
	})
	if defaultErr != nil {
		// The embedded file is checked by tests; reaching this is a build defect.
		panic("pipes: embedded profile a2a3.txt: " + defaultErr.Error())
	}
	return defaultProf.Clone()
}

// Clone returns a deep copy of p.
func (p *Profile) Clone() *Profile {
	q := *p
	q.sources = append([]string(nil), p.sources...)
	return &q
}

// ParseProfile reads a profile file. Keys it does not mention keep the default
// a2a3 values, so a what-if file may list only what it changes. Errors have the
// form `file:line:col: error: msg`, one per bad line.
func ParseProfile(name string, src []byte) (*Profile, error) {
	p := DefaultProfile()
	p.Name = strings.TrimSuffix(baseName(name), ".txt")
	if err := parseInto(p, name, src, false); err != nil {
		return nil, err
	}
	return p, nil
}

func baseName(s string) string {
	if i := strings.LastIndexAny(s, `/\`); i >= 0 {
		return s[i+1:]
	}
	return s
}

func parseInto(p *Profile, name string, src []byte, requireAll bool) error {
	tab := params()
	if len(p.sources) != len(tab) {
		p.sources = make([]string, len(tab))
	}
	seen := make([]bool, len(tab))
	var errs asm.ErrorList
	at := func(line, col, off int) asm.Span {
		pos := asm.Pos{File: name, Line: line, Col: col, Offset: off}
		return asm.Span{Pos: pos, End: pos}
	}
	lines := strings.Split(string(src), "\n")
	lineNo, off := 0, 0
	for _, line := range lines {
		lineNo++
		lineOff := off
		off += len(line) + 1
		line = strings.TrimSuffix(line, "\r")
		body, comment := line, ""
		if i := strings.IndexByte(line, '#'); i >= 0 {
			body, comment = line[:i], strings.TrimSpace(line[i+1:])
		}
		if strings.TrimSpace(body) == "" {
			continue
		}
		keyCol := len(body) - len(strings.TrimLeft(body, " \t")) + 1
		eq := strings.IndexByte(body, '=')
		if eq < 0 {
			errs.Add(at(lineNo, keyCol, lineOff+keyCol-1), "expected `key = value`")
			continue
		}
		key := strings.TrimSpace(body[:eq])
		rest := body[eq+1:]
		val := strings.TrimSpace(rest)
		valCol := eq + 2 + len(rest) - len(strings.TrimLeft(rest, " \t"))
		if key == "" {
			errs.Add(at(lineNo, eq+1, lineOff+eq), "missing key before `=`")
			continue
		}
		idx := findParam(key)
		if idx < 0 {
			errs.Add(at(lineNo, keyCol, lineOff+keyCol-1), "%s", unknownKeyMsg(key))
			continue
		}
		if seen[idx] {
			errs.Add(at(lineNo, keyCol, lineOff+keyCol-1), "duplicate key %q", key)
			continue
		}
		seen[idx] = true
		if val == "" {
			errs.Add(at(lineNo, eq+2, lineOff+eq+1), "missing value for %q", key)
			continue
		}
		if strings.ContainsAny(val, " \t") {
			errs.Add(at(lineNo, valCol, lineOff+valCol-1), "value for %q must be one word, got %q", key, val)
			continue
		}
		if err := tab[idx].set(p, val); err != nil {
			errs.Add(at(lineNo, valCol, lineOff+valCol-1), "%v", err)
			continue
		}
		p.sources[idx] = cleanSource(comment)
	}
	if requireAll {
		for i, ok := range seen {
			if !ok {
				errs.Add(at(lineNo, 1, len(src)), "missing key %q", tab[i].key)
			}
		}
	}
	return errs.Err()
}

// cleanSource strips the `[unit]` tag Fprint writes and the `source:` label, so
// a printed profile parses back to the same sources.
func cleanSource(c string) string {
	c = strings.TrimSpace(c)
	if strings.HasPrefix(c, "[") {
		if i := strings.IndexByte(c, ']'); i >= 0 {
			c = strings.TrimSpace(c[i+1:])
		}
	}
	return strings.TrimSpace(strings.TrimPrefix(c, "source:"))
}

// Set overrides one parameter, as `--set key=value` does.
func (p *Profile) Set(key, value string) error {
	key, value = strings.TrimSpace(key), strings.TrimSpace(value)
	idx := findParam(key)
	if idx < 0 {
		return fmt.Errorf("%s", unknownKeyMsg(key))
	}
	if err := params()[idx].set(p, value); err != nil {
		return err
	}
	if len(p.sources) == len(params()) {
		p.sources[idx] = "--set"
	}
	return nil
}

// Get returns one parameter's value as Fprint would print it.
func (p *Profile) Get(key string) (string, bool) {
	idx := findParam(key)
	if idx < 0 {
		return "", false
	}
	return params()[idx].get(p), true
}

// Keys lists every parameter key in file order.
func (p *Profile) Keys() []string {
	tab := params()
	out := make([]string, len(tab))
	for i, pr := range tab {
		out[i] = pr.key
	}
	return out
}

// Fprint writes every parameter in file order as a profile file that
// ParseProfile reads back unchanged.
func (p *Profile) Fprint(w io.Writer) error {
	name := p.Name
	if name == "" {
		name = "profile"
	}
	if _, err := fmt.Fprintf(w, "# profile %s (ptoasm); cycles at clock_hz, bandwidths in bytes/cycle\n", name); err != nil {
		return err
	}
	for i, pr := range params() {
		src := ""
		if i < len(p.sources) {
			src = p.sources[i]
		}
		line := fmt.Sprintf("%-28s = %-14s # [%s]", pr.key, pr.get(p), pr.unit)
		if src != "" {
			line += " source: " + src
		}
		if _, err := fmt.Fprintln(w, strings.TrimRight(line, " ")); err != nil {
			return err
		}
	}
	return nil
}

// Source returns the `# source:` comment recorded for key.
func (p *Profile) Source(key string) string {
	idx := findParam(key)
	if idx < 0 || idx >= len(p.sources) {
		return ""
	}
	return p.sources[idx]
}

// unknownKeyMsg names the closest keys so a typo in --set is easy to fix.
func unknownKeyMsg(key string) string {
	type cand struct {
		key  string
		dist int
	}
	var cs []cand
	for _, pr := range params() {
		limit := len(key)/3 + 1
		d := asm.EditDistanceWithin(key, pr.key, limit)
		if d > limit && len(key) >= 3 && strings.Contains(pr.key, key) {
			d = asm.EditDistance(key, pr.key) // a key no longer than pr.key
		}
		if d <= limit || (len(key) >= 3 && strings.Contains(pr.key, key)) {
			cs = append(cs, cand{pr.key, d})
		}
	}
	sort.SliceStable(cs, func(i, j int) bool {
		if cs[i].dist != cs[j].dist {
			return cs[i].dist < cs[j].dist
		}
		return cs[i].key < cs[j].key
	})
	if len(cs) > 5 {
		cs = cs[:5]
	}
	msg := fmt.Sprintf("unknown profile key %q", key)
	if len(cs) > 0 {
		names := make([]string, len(cs))
		for i, c := range cs {
			names[i] = c.key
		}
		msg += " (did you mean " + strings.Join(names, ", ") + "?)"
	}
	return msg
}
