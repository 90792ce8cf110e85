package opcore

// RecordingStats returns how many calls of s submitted a kept recording as
// recorded (replays) and how many recorded one (records).
func RecordingStats(s *Stream) (replays, records uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.replays, s.records
}

// InFlight returns how many calls of s are in its ring: submitted and not
// taken back yet.
func InFlight(s *Stream) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.ring)
}
