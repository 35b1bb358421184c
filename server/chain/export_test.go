package chain

// SetMaxCallsPerStep lowers the per-step call bound for a test and returns the
// restore. It applies to chains run for the first time after it.
func SetMaxCallsPerStep(n int64) (restore func()) {
	old := maxCallsPerStep
	maxCallsPerStep = n
	return func() { maxCallsPerStep = old }
}
