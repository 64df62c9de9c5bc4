//go:build race

package machine_test

// raceEnabled: the race detector's own bookkeeping allocates, so
// allocation counts mean nothing under -race.
const raceEnabled = true
