package source

import "time"

// SetMaxDelay sets how long a stream of events can hold back a read until the test
// ends.
func SetMaxDelay(t interface{ Cleanup(func()) }, d time.Duration) {
	prev := maxDelay
	maxDelay = d
	t.Cleanup(func() { maxDelay = prev })
}
