package main

import (
	"os"
	"syscall"
)

// peakRSS is a finished process's peak resident set in bytes.
func peakRSS(ps *os.ProcessState) int64 {
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return ru.Maxrss << 10 // KiB on Linux
	}
	return -1
}
