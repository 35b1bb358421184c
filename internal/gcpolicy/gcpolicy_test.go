package gcpolicy

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

// TestStart: the start collects at StartPercent, and once done the control plane
// runs at SteadyPercent; a GOGC from the environment is left alone throughout.
func TestStart(t *testing.T) {
	prev := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(prev) })

	t.Run("default", func(t *testing.T) {
		t.Setenv("GOGC", "") // Start reads it: empty is unset
		done := Start()
		if got := gogc(); got != StartPercent {
			t.Fatalf("GOGC during the start = %d, want %d", got, StartPercent)
		}
		done()
		deadline := time.Now().Add(10 * time.Second)
		for gogc() != SteadyPercent {
			if time.Now().After(deadline) {
				t.Fatalf("GOGC after the start = %d, want %d", gogc(), SteadyPercent)
			}
			time.Sleep(5 * time.Millisecond)
		}
	})
	t.Run("GOGC set", func(t *testing.T) {
		debug.SetGCPercent(100)
		t.Setenv("GOGC", "100")
		done := Start()
		done()
		time.Sleep(50 * time.Millisecond)
		if got := gogc(); got != 100 {
			t.Fatalf("GOGC = %d with GOGC=100 in the environment, want it left at 100", got)
		}
	})
}
