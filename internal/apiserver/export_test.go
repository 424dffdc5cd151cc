package apiserver

// SnapshotCount is how many paginated lists in progress the server keeps.
func (s *Server) SnapshotCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.snapshots)
}
