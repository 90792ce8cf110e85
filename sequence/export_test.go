package sequence

// HazardStats returns how many of s's submits carried a prelude with
// barriers, and how many preludes were recorded.
func HazardStats(s *Sequence) (barrierSubmits, records int64) { return s.hz.Stats() }
