package debug

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/ptoasm/ptoasm/asm"
	"github.com/ptoasm/ptoasm/machine"
)

// Help lists the commands.
const Help = `motion (each stops early at a breakpoint or the end of the program):
  step [N]               N events on any core (default 1); s
  stepi [N]              N events on the current core (any of its pipes)
  next [N]               until the current core's scalar issues N more instructions
  cycle [N]              N cycles on (default 1)
  until PIPE [CORE]      to the next event on PIPE of CORE (default: current core); next-event too
  continue               to the next breakpoint or the end; c
  back [N]               N events back (default 1), by replaying from the start
breakpoints:
  break LINE | FILE:LINE | LABEL [issue|start] [core=NAME] [iter=N]
                         when an instruction of the line issues or starts on its pipe
  break flag set|wait SRC DST ID [core=NAME]
  break signal @S[i, ...] [rank=R]      when the value changes
  break write @T[i, j] | @T[r0:r1, c0:c1] | %tile[k] [rank=R] [core=NAME]
                         when an instruction writes any byte of the range
  break cycle N          when the clock passes cycle N
  delete [N ...]         delete breakpoints (all without N)
  info breaks            list breakpoints
state:
  where                  every core: the scalar's next statement, what each pipe runs or waits for
  queues [CORE|all]      each pipe's queue with the memory every entry touches
  flags [CORE|all]       set flags
  print %tile [CORE]     tile values (print %buf[1] for one element of an array); p
  print @T[r0:r1, c0:c1] [rank=R]       GM values
  signals @S             a signal's values per rank
  clocks [CORE]          the hazard detector's vector clocks
  findings               hazards found so far
  core [NAME]            show or select the current core
  help, quit             this text; leave (q)
Events: issue (scalar -> queue), start and done (on a pipe), set and wait (flags),
barrier, ffts-set, ffts-wait, notify, twait, syncall, scalar (ld/st).
`

// fields splits a command line on blanks outside brackets, so that
// @T[0:4, 0:8] stays one argument.
func fields(s string) []string {
	var out []string
	depth, start := 0, -1
	for i, r := range s {
		switch {
		case r == '[':
			depth++
		case r == ']' && depth > 0:
			depth--
		}
		blank := (r == ' ' || r == '\t') && depth == 0
		if blank && start >= 0 {
			out = append(out, s[start:i])
			start = -1
		} else if !blank && start < 0 {
			start = i
		}
	}
	if start >= 0 {
		out = append(out, s[start:])
	}
	return out
}

func countArg(args []string, def int64) (int64, error) {
	if len(args) == 0 {
		return def, nil
	}
	n, err := strconv.ParseInt(args[0], 10, 64)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%s: want a positive count", args[0])
	}
	return n, nil
}

// Exec runs one command line, writing its output to w. quit is true after
// `quit`. Errors are printed, not returned: a session goes on after a typo.
func (d *Debugger) Exec(line string, w io.Writer) (quit bool) {
	if i := strings.IndexByte(line, '#'); i >= 0 {
		line = line[:i]
	}
	args := fields(strings.TrimSpace(line))
	if len(args) == 0 {
		return false
	}
	quit, err := d.exec(w, args[0], args[1:])
	if err != nil {
		fmt.Fprintf(w, "error: %v\n", err)
	}
	return quit
}

func (d *Debugger) exec(w io.Writer, cmd string, args []string) (bool, error) {
	switch cmd {
	case "help", "h", "?":
		io.WriteString(w, Help)
	case "quit", "q", "exit":
		return true, nil
	case "step", "s":
		n, err := countArg(args, 1)
		if err != nil {
			return false, err
		}
		d.motion(w, func() bool { return d.passed >= n })
	case "stepi", "next":
		n, err := countArg(args, 1)
		if err != nil {
			return false, err
		}
		r, c := int32(d.curRank), int32(d.curCore)
		issuesOnly := cmd == "next"
		var seen int64
		d.motion(w, func() bool {
			for i := range d.cur {
				e := &d.cur[i]
				if !e.kind.counted() || e.agent.Rank != r || e.agent.Core != c {
					continue
				}
				if issuesOnly && (e.agent.Pipe != asm.PipeS || e.kind == kStart) {
					continue
				}
				seen++
			}
			return seen >= n
		})
	case "cycle":
		n, err := countArg(args, 1)
		if err != nil {
			return false, err
		}
		target := d.cycle + n
		d.motion(w, func() bool {
			at, ok := d.m.NextAt()
			if !ok || at > target {
				d.cycle = max(d.cycle, target)
				return true
			}
			return false
		})
	case "until", "next-event":
		if len(args) == 0 || len(args) > 2 {
			return false, fmt.Errorf("usage: %s PIPE [CORE]", cmd)
		}
		p, err := parsePipe(args[0])
		if err != nil {
			return false, err
		}
		// A named core may be a block of a later wave that has no core
		// yet (parseCore): the motion runs until it starts and has the event.
		var r int
		var ids []int
		if len(args) > 1 {
			if r, ids, err = d.parseCore(args[1]); err != nil {
				return false, err
			}
		} else {
			v, err := d.coreArg(nil)
			if err != nil {
				return false, err
			}
			r, ids = v.Rank, []int{v.Core}
		}
		d.motion(w, func() bool {
			for i := range d.cur {
				e := &d.cur[i]
				if e.kind.counted() && int(e.agent.Rank) == r && slices.Contains(ids, int(e.agent.Core)) && e.agent.Pipe == p {
					return true
				}
			}
			return false
		})
	case "continue", "c", "cont":
		d.motion(w, func() bool { return false })
	case "back":
		n, err := countArg(args, 1)
		if err != nil {
			return false, err
		}
		return false, d.back(w, n)
	case "break", "b":
		return false, d.addBreak(w, args)
	case "delete", "d":
		return false, d.deleteBreak(w, args)
	case "info":
		if len(args) == 1 && (args[0] == "breaks" || args[0] == "break" || args[0] == "breakpoints") {
			d.infoBreaks(w)
			return false, nil
		}
		return false, fmt.Errorf("usage: info breaks")
	case "core":
		if len(args) > 1 {
			return false, fmt.Errorf("usage: core [NAME]")
		}
		v, err := d.coreArg(args)
		if err != nil {
			return false, err
		}
		d.curRank, d.curCore = v.Rank, v.Core
		fmt.Fprintf(w, "current core: %s\n", v.Name)
	case "where", "w", "bt":
		d.where(w)
	case "queues", "flags":
		views, err := d.coreList(args)
		if err != nil {
			return false, err
		}
		for i := range views {
			if cmd == "queues" {
				d.queues(w, &views[i])
			} else {
				d.flags(w, &views[i])
			}
		}
	case "clocks":
		v, err := d.coreArg(args)
		if err != nil {
			return false, err
		}
		d.clocks(w, &v)
	case "print", "p":
		return false, d.print(w, args)
	case "signals":
		if len(args) != 1 {
			return false, fmt.Errorf("usage: signals @S")
		}
		return false, d.signals(w, args[0])
	case "findings":
		d.findings(w)
	default:
		return false, fmt.Errorf("unknown command %q (help lists them)", cmd)
	}
	return false, nil
}

func (d *Debugger) coreList(args []string) ([]machine.CoreView, error) {
	if len(args) == 1 && args[0] == "all" {
		return d.m.Cores(), nil
	}
	if len(args) > 1 {
		return nil, fmt.Errorf("want one core name or all")
	}
	v, err := d.coreArg(args)
	if err != nil {
		return nil, err
	}
	return []machine.CoreView{v}, nil
}

func (d *Debugger) print(w io.Writer, args []string) error {
	if len(args) == 0 || len(args) > 2 {
		return fmt.Errorf("usage: print %%tile [CORE] | print @T[...] [rank=R]")
	}
	switch {
	case strings.HasPrefix(args[0], "%"):
		v, err := d.coreArg(args[1:])
		if err != nil {
			return err
		}
		return d.printTile(w, args[0], &v)
	case strings.HasPrefix(args[0], "@"):
		rank := d.curRank
		if len(args) == 2 {
			v, ok := strings.CutPrefix(args[1], "rank=")
			r, err := strconv.Atoi(v)
			if !ok || err != nil || r < 0 || r >= d.m.Ranks() {
				return fmt.Errorf("%s: want rank=0..%d", args[1], d.m.Ranks()-1)
			}
			rank = r
		}
		return d.printGM(w, args[0], rank)
	}
	return fmt.Errorf("print %s: want a tile (%%name) or a GM reference (@name[...])", args[0])
}

// Banner describes the session's start.
func (d *Debugger) Banner(w io.Writer) {
	cs := d.m.Cores()
	names := make([]string, len(cs))
	for i, c := range cs {
		names[i] = c.Name
	}
	fmt.Fprintf(w, "%s: %d ranks; cores of the first run: %s\n", d.obj.Main, d.m.Ranks(), strings.Join(names, " "))
	if len(cs) > 0 {
		fmt.Fprintf(w, "current core: %s; `help` lists the commands\n", d.m.CoreName(d.curRank, d.curCore))
	}
}

// LineReader supplies command lines to Loop; ReadLine returns io.EOF at the
// end of input. A *term.Terminal (golang.org/x/term) is one: `ptoasm step`
// reads from it when stdin is a terminal, for line editing and history.
type LineReader interface {
	ReadLine() (string, error)
}

// scanLines reads lines from an io.Reader, printing a prompt before each
// read when prompt is not nil.
type scanLines struct {
	sc     *bufio.Scanner
	prompt io.Writer
	n      int // lines read
}

// maxLine is the longest command line a script or pipe may hold.
const maxLine = 1 << 20

// NewScanLines reads command lines from r (a script, a pipe). With a
// non-nil prompt, "(ptoasm) " is written to it before each line is read.
func NewScanLines(r io.Reader, prompt io.Writer) LineReader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	return &scanLines{sc: sc, prompt: prompt}
}

func (s *scanLines) ReadLine() (string, error) {
	if s.prompt != nil {
		io.WriteString(s.prompt, Prompt)
	}
	if !s.sc.Scan() {
		if err := s.sc.Err(); err == bufio.ErrTooLong {
			// The scanner's own words ("token too long") name neither
			// the line nor the limit.
			return "", fmt.Errorf("line %d is longer than the %dMiB limit on a command line", s.n+1, maxLine>>20)
		} else if err != nil {
			return "", err
		}
		return "", io.EOF
	}
	s.n++
	return s.sc.Text(), nil
}

// Prompt is what the debugger prints before reading a command.
const Prompt = "(ptoasm) "

// Loop runs commands read from lr until quit or the end of input, writing
// their output to w. With echo, each command is printed after a prompt
// before its output, so that a transcript of a script reads like a session;
// a reader that shows its own prompt (a terminal) wants echo off.
func (d *Debugger) Loop(lr LineReader, w io.Writer, echo bool) error {
	for {
		line, err := lr.ReadLine()
		if err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			if echo && strings.HasPrefix(line, "#") {
				fmt.Fprintln(w, line)
			}
			continue
		}
		if echo {
			fmt.Fprintf(w, "%s%s\n", Prompt, line)
		}
		if d.Exec(line, w) {
			return nil
		}
	}
}

// Session reads commands from r until quit or the end of input (see Loop).
// With prompt, the prompt is printed before each read instead of echoing
// the command (a terminal without line editing echoes the typing itself).
func (d *Debugger) Session(r io.Reader, w io.Writer, echo, prompt bool) error {
	var pw io.Writer
	if prompt {
		pw = w
	}
	err := d.Loop(NewScanLines(r, pw), w, echo)
	if prompt {
		fmt.Fprintln(w)
	}
	return err
}
