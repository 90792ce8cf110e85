package core

// admit is Schedule's check and accept for one submit, without draining:
// the scheduler tests drive the held list by hand. Called with mu held.
func (sc *scheduler) admit(d *Device, s *Submission) error {
	if err := sc.check(d, []*Submission{s}); err != nil {
		return err
	}
	var done []*Submission
	sc.accept(s, &done)
	return nil
}
