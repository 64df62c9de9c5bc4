//go:build !unix

package main

import "time"

// processCPU is unknown off unix: benchmarks then report wall time only.
func processCPU() (time.Duration, bool) { return 0, false }
