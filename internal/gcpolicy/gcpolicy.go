// Package gcpolicy is the control plane's garbage-collector policy: a start that
// allocates several times the heap it keeps, then a steady state of long-lived data.
package gcpolicy

import (
	"os"
	"runtime/debug"
	"sync"
)

// StartPercent is the garbage collector's GOGC until the first complete state is
// published. A start allocates several times the heap it keeps (every file's bytes and
// YAML nodes, the translation's and serialization's intermediates), so a higher GOGC
// collects less often while it runs; higher than this saved little more and left a
// larger heap until FreeOSMemory (BENCHMARKS.md, the control-plane section).
const StartPercent = 200

// SteadyPercent is GOGC once the start is over. Nearly all of the control plane's heap
// is long-lived state (the stages of every resource) and an edit allocates little next
// to it, so the default 100 (collect when the heap is twice what is live) mostly holds
// memory that is never needed: collecting at 1.5 times trades a little CPU per edit for
// less resident memory (BENCHMARKS.md has the figures).
const SteadyPercent = 50

// Start lets the heap grow further between collections until done is called after
// the first run, then returns the start's garbage to the system and sets
// SteadyPercent. A GOGC set in the environment is left as it is, throughout.
func Start() (done func()) {
	if os.Getenv("GOGC") != "" {
		return func() {}
	}
	debug.SetGCPercent(StartPercent)
	return sync.OnceFunc(func() {
		go func() {
			// Collected at StartPercent, the heap is then below the steady goal:
			// setting it first would start a collection of its own, and FreeOSMemory
			// a second one.
			debug.FreeOSMemory()
			debug.SetGCPercent(SteadyPercent)
		}()
	})
}
