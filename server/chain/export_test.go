package chain

// SetMaxAbandoned lowers the abandoned-call bound for a test and returns the restore.
func SetMaxAbandoned(n int64) (restore func()) {
	old := maxAbandoned
	maxAbandoned = n
	return func() { maxAbandoned = old }
}
