package main

import (
	"bytes"
	"os"
	"strconv"
)

// peakRSS is a finished process's peak resident set in bytes, as the process
// read it itself (ownPeakRSS, written to rssFile at exit). The kernel's
// rusage figure for a child is no good here: exec carries the parent's
// high-water mark into the child's (the go test process, which by then may
// hold tens of MiB from other tests), so a small child reads as big as its
// parent.
func peakRSS(rssFile string) int64 {
	b, err := os.ReadFile(rssFile)
	if err != nil {
		return -1
	}
	n, err := strconv.ParseInt(string(bytes.TrimSpace(b)), 10, 64)
	if err != nil {
		return -1
	}
	return n
}

// ownPeakRSS is this process's peak resident set in bytes (VmHWM, which
// belongs to the address space exec made), or -1.
func ownPeakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		if rest, ok := bytes.CutPrefix(line, []byte("VmHWM:")); ok {
			f := bytes.Fields(rest)
			if len(f) == 2 && string(f[1]) == "kB" {
				if n, err := strconv.ParseInt(string(f[0]), 10, 64); err == nil {
					return n << 10
				}
			}
		}
	}
	return -1
}
