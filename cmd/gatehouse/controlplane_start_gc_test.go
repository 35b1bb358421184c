package main

import (
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

// gogc is the collector's current GOGC, read without changing it.
func gogc() uint64 {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// TestStartGC: the start collects at startGCPercent, and once done the control plane
// runs at steadyGCPercent; a GOGC from the environment is left alone throughout.
func TestStartGC(t *testing.T) {
	prev := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(prev) })

	t.Run("default", func(t *testing.T) {
		t.Setenv("GOGC", "") // startGC reads it: empty is unset
		done := startGC()
		if got := gogc(); got != startGCPercent {
			t.Fatalf("GOGC during the start = %d, want %d", got, startGCPercent)
		}
		done()
		deadline := time.Now().Add(10 * time.Second)
		for gogc() != steadyGCPercent {
			if time.Now().After(deadline) {
				t.Fatalf("GOGC after the start = %d, want %d", gogc(), steadyGCPercent)
			}
			time.Sleep(5 * time.Millisecond)
		}
	})
	t.Run("GOGC set", func(t *testing.T) {
		debug.SetGCPercent(100)
		t.Setenv("GOGC", "100")
		done := startGC()
		done()
		time.Sleep(50 * time.Millisecond)
		if got := gogc(); got != 100 {
			t.Fatalf("GOGC = %d with GOGC=100 in the environment, want it left at 100", got)
		}
	})
}
