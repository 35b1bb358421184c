package kube

// StatusesCompared is how many resources the status writer of s has compared with
// their stored status entries so far; 0 before WriteStatuses.
func StatusesCompared(s *Source) int {
	s.mu.Lock()
	w := s.writer
	s.mu.Unlock()
	if w == nil {
		return 0
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.compared
}

// IncrementalInputs is how many Inputs s made from the last one rather than anew.
func IncrementalInputs(s *Source) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.incremental
}
