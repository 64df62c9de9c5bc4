//go:build unix

package main

import (
	"syscall"
	"time"
)

// processCPU is the user and system CPU time this process has used: a
// benchmark's figure that a loaded machine does not inflate the way it
// inflates wall-clock time.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
