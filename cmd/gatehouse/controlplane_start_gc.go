package main

import (
	"os"
	"runtime/debug"
	"sync"
)

// startGCPercent is the garbage collector's GOGC until the first complete state is
// published. A start allocates several times the heap it keeps (every file's bytes and
// YAML nodes, the translation's and serialization's intermediates); at the default 100
// the collector ran a dozen times over a growing heap, ~15 % of a start's CPU at 10,000
// services. Higher settings made the start slower again (the kernel zeroing the
// pages of a larger heap).
const startGCPercent = 400

// startGC lets the heap grow further between collections until done is called after
// the first run, then restores GOGC and returns the start's garbage to the system:
// resident memory after a start at 10,000 services went from ~400 to ~330 MB. A GOGC
// set in the environment is left as it is.
func startGC() (done func()) {
	if os.Getenv("GOGC") != "" {
		return func() {}
	}
	old := debug.SetGCPercent(startGCPercent)
	return sync.OnceFunc(func() {
		go func() {
			// Collected at startGCPercent, the heap is then below the previous GOGC's
			// goal: restoring it first would start a collection of its own, and
			// FreeOSMemory a second one.
			debug.FreeOSMemory()
			debug.SetGCPercent(old)
		}()
	})
}
