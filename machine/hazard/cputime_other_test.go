//go:build !unix

package hazard

import "time"

// cpuTime is unavailable here (no getrusage): the CPU metrics read 0.
func cpuTime() time.Duration { return 0 }
