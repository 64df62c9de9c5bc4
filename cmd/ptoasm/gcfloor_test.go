package main

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

// TestCollectFrom: the collector is off under the floor, and the first
// collection puts the pace and the process's limit back.
func TestCollectFrom(t *testing.T) {
	percent, limit := debug.SetGCPercent(100), debug.SetMemoryLimit(-1)
	defer func() {
		debug.SetGCPercent(percent)
		debug.SetMemoryLimit(limit)
	}()
	const floor, full = 3 << 30, 5 << 30
	collectFrom(floor, full, 200)
	if p, l := gcSettings(); p != -1 || l != floor {
		t.Errorf("under the floor: GOGC %d, memory limit %d; want -1 (off) and the floor %d", p, l, floor)
	}
	runtime.GC()
	deadline := time.Now().Add(10 * time.Second)
	for { // the cleanup runs on its own goroutine, after the collection
		p, l := gcSettings()
		if p == 200 && l == full {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after a collection: GOGC %d, memory limit %d; want 200 and %d", p, l, full)
		}
		time.Sleep(time.Millisecond)
	}
}

// gcSettings reads GOGC (-1: off) and the memory limit.
func gcSettings() (percent, limit int64) {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}, {Name: "/gc/gomemlimit:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64()), int64(s[1].Value.Uint64()) // off: -1 as a uint64
}

// TestGCFloor: two thirds of the budget, none under minFloor.
func TestGCFloor(t *testing.T) {
	for _, tc := range []struct {
		budget, floor int64
		ok            bool
	}{{768 << 20, 512 << 20, true}, {192 << 20, 128 << 20, true}, {64 << 20, 0, false}, {32 << 20, 0, false}} {
		if floor, ok := gcFloor(tc.budget); ok != tc.ok || ok && floor != tc.floor {
			t.Errorf("gcFloor(%d) = %d, %v; want %d, %v", tc.budget, floor, ok, tc.floor, tc.ok)
		}
	}
}

// TestIsLint: the floor is for lint only.
func TestIsLint(t *testing.T) {
	for _, tc := range []struct {
		cmd  string
		want bool
	}{{"lint <program>", true}, {"lint", true}, {"run <program>", false}, {"lsp", false}, {"linter", false}} {
		if got := isLint(tc.cmd); got != tc.want {
			t.Errorf("isLint(%q) = %v, want %v", tc.cmd, got, tc.want)
		}
	}
}
