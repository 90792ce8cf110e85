package opcore

// RecordingStats returns how many calls of s submitted a kept recording as
// recorded (replays) and how many recorded one (records).
func RecordingStats(s *Stream) (replays, records uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.replays, s.records
}
