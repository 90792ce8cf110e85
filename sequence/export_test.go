package sequence

// HazardStats returns how many of s's submits carried a prelude with
// barriers, and how many preludes were recorded.
func HazardStats(s *Sequence) (barrierSubmits, records int64) { return s.hz.Stats() }

// PreludeSubmits returns how many of s's submits carried a prelude command
// buffer (a second command buffer in the batch).
func PreludeSubmits(s *Sequence) int64 { return s.hz.PreludeSubmits() }
