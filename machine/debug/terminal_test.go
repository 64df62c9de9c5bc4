package debug

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"golang.org/x/term"

	"github.com/ptoasm/ptoasm/machine"
)

// keyboard is an in-memory terminal: keystrokes in, screen bytes out.
type keyboard struct {
	io.Reader
	io.Writer
}

// TestTerminalLineEditing drives the debugger through a term.Terminal as
// `ptoasm step` does on a terminal: a command typed with a correction made
// with the arrow keys, then up-arrow and Enter to run it again from history.
func TestTerminalLineEditing(t *testing.T) {
	const (
		enter = "\r"
		up    = "\x1b[A"
		left  = "\x1b[D"
		right = "\x1b[C"
	)
	for _, tc := range []struct {
		name string
		keys string
		want []string // output lines, in order
		bps  int
	}{
		{
			name: "edit then repeat from history",
			// "break cycle 10", two steps left, insert 2: "break cycle 210".
			keys: "break cycle 10" + left + left + "2" + enter + up + enter,
			want: []string{"breakpoint 1: cycle 210", "breakpoint 2: cycle 210"},
			bps:  2,
		},
		{
			name: "history walks back past the last line",
			keys: "break cycle 5" + enter + "info breaks" + enter + up + up + left + right + "0" + enter,
			want: []string{"breakpoint 1: cycle 5", "breakpoint 2: cycle 50"},
			bps:  2,
		},
		{
			name: "ctrl-d ends the session",
			keys: "break cycle 7" + enter + "\x04" + "break cycle 8" + enter,
			want: []string{"breakpoint 1: cycle 7"},
			bps:  1,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := New(load(t, "gemm_db/gemm_db.pto"), Options{Machine: machine.Options{}})
			if err != nil {
				t.Fatal(err)
			}
			var screen bytes.Buffer
			tm := term.NewTerminal(keyboard{strings.NewReader(tc.keys), &screen}, Prompt)
			if err := d.Loop(tm, tm, false); err != nil {
				t.Fatal(err)
			}
			if len(d.bps) != tc.bps {
				t.Errorf("%d breakpoints, want %d", len(d.bps), tc.bps)
			}
			out := screen.String()
			pos := 0
			for _, w := range tc.want {
				i := strings.Index(out[pos:], w)
				if i < 0 {
					t.Fatalf("screen lacks %q after offset %d:\n%q", w, pos, out)
				}
				pos += i + len(w)
			}
			if !strings.Contains(out, Prompt) {
				t.Errorf("no prompt on the screen: %q", out)
			}
			if strings.Contains(strings.ReplaceAll(out, "\r\n", ""), "\n") {
				t.Errorf("a bare newline reached the raw terminal: %q", out)
			}
		})
	}
}
