package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/ptoasm/ptoasm/machine"
)

// exitInterrupted is the exit status of a run stopped by Ctrl-C (SIGINT):
// 128 + SIGINT, as a shell reports a command the signal killed, so scripts
// tell it from a finding (1) or bad input (2). The report printed before
// it is partial (docs/cli.md "Interrupting a run").
const exitInterrupted = 130

// progressDelay is how long a run goes before the progress line appears: a
// run that ends sooner leaves stderr alone.
const progressDelay = time.Second

// runUI is what a long run shows and hears while it runs: a progress line
// on stderr when stderr is a terminal, and Ctrl-C, which cancels the run
// (machine.Options.Cancel) instead of killing the process, so the command
// can print what the run measured up to the interruption.
type runUI struct {
	cancel      chan struct{}
	sigs        chan os.Signal
	interrupted bool // set before cancel is closed
	mu          sync.Mutex
	last        machine.Progress
	stopBar     chan struct{}
	barDone     chan struct{}
}

// startRunUI sets opt.Cancel and, on a terminal, opt.Progress. The caller
// must call stop when the run has returned.
func startRunUI(e *env, opt *machine.Options) *runUI {
	u := startInterruptUI()
	opt.Cancel = u.cancel
	if w, ok := terminal(e.stderr); ok {
		opt.Progress = func(p machine.Progress) {
			u.mu.Lock()
			u.last = p
			u.mu.Unlock()
		}
		u.startProgress(w, func(elapsed time.Duration) (string, float64) {
			u.mu.Lock()
			p := u.last
			u.mu.Unlock()
			return progressText(p, elapsed), p.Fraction
		})
	}
	return u
}

// startInterruptUI hears Ctrl-C: the first closes u.cancel (every run that
// shares it stops at its next wall-clock check), a second kills the process.
func startInterruptUI() *runUI {
	u := &runUI{cancel: make(chan struct{}), sigs: make(chan os.Signal, 1)}
	signal.Notify(u.sigs, os.Interrupt)
	go func() {
		if _, ok := <-u.sigs; ok {
			u.mu.Lock()
			u.interrupted = true
			u.mu.Unlock()
			close(u.cancel)
			// A second Ctrl-C kills the process as usual, for a run that
			// does not reach its next wall-clock check (a long golden).
			signal.Reset(os.Interrupt)
		}
	}()
	return u
}

// startProgress draws the progress line on w from status (the line's text
// and the fraction done, 0 to 1) until stop.
func (u *runUI) startProgress(w io.Writer, status func(elapsed time.Duration) (string, float64)) {
	u.stopBar, u.barDone = make(chan struct{}), make(chan struct{})
	go u.drawProgress(w, time.Now(), status)
}

// terminal returns w as a file when it is a terminal.
func terminal(w io.Writer) (*os.File, bool) {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil, false
	}
	return f, true
}

// stop ends the progress line (erasing it) and the Ctrl-C handling; it
// reports whether Ctrl-C interrupted the run.
func (u *runUI) stop() bool {
	signal.Stop(u.sigs)
	close(u.sigs)
	if u.stopBar != nil {
		close(u.stopBar)
		<-u.barDone
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.interrupted
}

// drawProgress redraws the progress line five times a second from status,
// starting progressDelay after start: for a run (progressText) simulated
// cycle, simulation rate (simulated cycles per wall-clock second), the run
// of the launch, the ETA from the estimated fraction done
// (machine.Progress.Fraction); then the bar and the elapsed time.
func (u *runUI) drawProgress(w io.Writer, start time.Time, status func(elapsed time.Duration) (string, float64)) {
	defer close(u.barDone)
	wait := time.NewTimer(progressDelay)
	defer wait.Stop()
	select {
	case <-u.stopBar:
		return
	case <-wait.C:
	}
	const steps = 1000
	bar := progressbar.NewOptions64(steps,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetWidth(20),
		// The ETA is ours (progressText): the bar's would say 0s while
		// the fraction is unknown.
		progressbar.OptionSetPredictTime(false),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionUseANSICodes(true),
		progressbar.OptionSetRenderBlankState(true),
	)
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		text, fraction := status(time.Since(start))
		bar.Describe(text)
		bar.Set64(int64(fraction * steps))
		select {
		case <-u.stopBar:
			bar.Clear()
			return
		case <-tick.C:
		}
	}
}

// progressText is the progress line's description.
func progressText(p machine.Progress, elapsed time.Duration) string {
	s := fmt.Sprintf("cycle %s", siCount(float64(p.Cycle)))
	if sec := elapsed.Seconds(); sec > 0 {
		s += fmt.Sprintf(", %s cycles/s", siCount(float64(p.Cycle)/sec))
	}
	if p.Runs > 1 && p.Run > 0 {
		s += fmt.Sprintf(", run %d/%d %s", p.Run, p.Runs, p.RunName)
	}
	// Below 1% (a while loop has no trip count) the estimate says nothing.
	return s + etaText(p.Fraction, elapsed)
}

// etaText is the ETA part of a progress line from the fraction done.
func etaText(f float64, elapsed time.Duration) string {
	if f >= 0.01 && f < 1 {
		eta := time.Duration(float64(elapsed) * (1 - f) / f).Round(time.Second)
		return fmt.Sprintf(", ETA %s", eta)
	} else if f < 0.01 {
		return ", ETA unknown"
	}
	return ""
}

// siCount writes v with a k, M or G suffix.
func siCount(v float64) string {
	switch {
	case v >= 1e9:
		return fmt.Sprintf("%.2fG", v/1e9)
	case v >= 1e6:
		return fmt.Sprintf("%.2fM", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.1fk", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}

// errInterrupted marks a lint run Ctrl-C stopped.
var errInterrupted = errors.New("interrupted")

// interruptedError is what a command returns after printing the partial
// report of a run Ctrl-C stopped (cycle < 0: not known): the message on
// stderr, exit 130.
func interruptedError(e *env, cycle int64) error {
	at := ""
	if cycle >= 0 {
		at = fmt.Sprintf(" at cycle %d", cycle)
	}
	fmt.Fprintf(e.stderr, "ptoasm: interrupted (Ctrl-C)%s: the report is partial\n", at)
	return exitError{exitInterrupted}
}

// isCancelled reports whether err is the machine's answer to Options.Cancel.
func isCancelled(err error) bool { return errors.Is(err, machine.ErrCancelled) }
